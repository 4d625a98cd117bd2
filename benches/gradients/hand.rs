//! The fastest value-and-gradient functions of the optimisation test
//! functions that we could write by hand: the `hand` column they are timed
//! against. Each is one fused pass that computes the value and the gradient
//! together (two passes for Ackley, whose every entry needs the sums over all
//! of `x` first), allocates nothing but the returned gradient, and shares
//! every subexpression between the value and the derivative.
//!
//! The sums run in the same order as in the functions under
//! `#[differentiate]` (`functions.rs`), so the values agree to rounding.

use std::f64::consts::PI;

/// Rosenbrock's function in two dimensions, `(1 - x)² + 100 (y - x²)²`, and
/// its gradient.
pub fn rosenbrock2_hand(x: f64, y: f64) -> (f64, (f64, f64)) {
    let a = 1.0 - x;
    let b = y - x * x;
    let db = 200.0 * b;
    (a * a + 100.0 * b * b, (-2.0 * a - 2.0 * x * db, db))
}

/// Rosenbrock's function `Σ (1 - x_i)² + 100 (x_{i+1} - x_i²)²` and its
/// gradient.
///
/// The term of pair `i` feeds entries `i` and `i + 1`; carrying the second
/// part to the next iteration in a register writes each entry once instead
/// of reading it back from memory.
pub fn rosenbrock_hand(x: &[f64]) -> (f64, Vec<f64>) {
    let mut g = vec![0.0; x.len()];
    let mut s = 0.0;
    let mut carry = 0.0;
    for (gi, w) in g.iter_mut().zip(x.windows(2)) {
        let (xi, next) = (w[0], w[1]);
        let a = 1.0 - xi;
        let b = next - xi * xi;
        s += a * a + 100.0 * b * b;
        let db = 200.0 * b;
        *gi = carry - 2.0 * a - 2.0 * xi * db;
        carry = db;
    }
    if let Some(last) = g.last_mut() {
        *last = carry;
    }
    (s, g)
}

/// Rastrigin's function `10 n + Σ (x_i² - 10 cos(2π x_i))` and its gradient
/// `2 x_i + 20π sin(2π x_i)`.
pub fn rastrigin_hand(x: &[f64]) -> (f64, Vec<f64>) {
    let a = 10.0;
    let mut g = vec![0.0; x.len()];
    let mut s = 0.0;
    for (gi, &xi) in g.iter_mut().zip(x) {
        let (sin, cos) = (2.0 * PI * xi).sin_cos();
        s += xi * xi - a * cos;
        *gi = 2.0 * xi + 2.0 * PI * a * sin;
    }
    (a * x.len() as f64 + s, g)
}

/// Ackley's function
/// `-20 exp(-0.2 sqrt(Σ x_i² / n)) - exp(Σ cos(2π x_i) / n) + 20 + e` and its
/// gradient.
///
/// Every entry needs both sums, so the first pass computes them and parks
/// `sin(2π x_i)` in the gradient; the second scales it in place, with no
/// transcendental left to compute.
pub fn ackley_hand(x: &[f64]) -> (f64, Vec<f64>) {
    let n = x.len() as f64;
    let mut g = vec![0.0; x.len()];
    let mut squares = 0.0;
    let mut cosines = 0.0;
    for (gi, &xi) in g.iter_mut().zip(x) {
        let (sin, cos) = (2.0 * PI * xi).sin_cos();
        squares += xi * xi;
        cosines += cos;
        *gi = sin;
    }
    let rms = (squares / n).sqrt();
    let e_rms = (-0.2 * rms).exp();
    let e_cos = (cosines / n).exp();
    let value = -20.0 * e_rms - e_cos + 20.0 + 1.0f64.exp();
    // d/dx_i of the two exponentials: 4 e_rms x_i / (n rms) and
    // 2π e_cos sin(2π x_i) / n.
    let per_x = 4.0 * e_rms / (n * rms);
    let per_sin = 2.0 * PI * e_cos / n;
    for (gi, &xi) in g.iter_mut().zip(x) {
        *gi = per_x * xi + per_sin * *gi;
    }
    (value, g)
}

/// Beale's function
/// `(1.5 - x + xy)² + (2.25 - x + xy²)² + (2.625 - x + xy³)²` and its
/// gradient.
pub fn beale_hand(x: f64, y: f64) -> (f64, (f64, f64)) {
    let y2 = y * y;
    let y3 = y2 * y;
    let t1 = 1.5 - x + x * y;
    let t2 = 2.25 - x + x * y2;
    let t3 = 2.625 - x + x * y3;
    let value = t1 * t1 + t2 * t2 + t3 * t3;
    let dx = 2.0 * (t1 * (y - 1.0) + t2 * (y2 - 1.0) + t3 * (y3 - 1.0));
    let dy = 2.0 * x * (t1 + 2.0 * t2 * y + 3.0 * t3 * y2);
    (value, (dx, dy))
}
