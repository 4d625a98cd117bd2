//! The functions under `#[differentiate]`, written the way a user writes them
//! for the macro, and the hand-written gradients of the workloads other than
//! the optimisation test functions (theirs are in `hand.rs`, the
//! Moré–Garbow–Hillstrom problems' in `mgh.rs`).
//!
//! No trait with a `powi` method is in scope here (num-dual's `DualNum` and
//! RustQuant_autodiff's `Powi` both implement one for `f64`), so `xi.powi(2)`
//! on a `&f64` means `f64::powi` as it does in a user's crate.

use gradmacro::differentiate;
use std::f64::consts::PI;

#[differentiate]
pub fn seed_fn(x: f64) -> f64 {
    let q = x * x;
    q + x
}

#[differentiate]
pub fn beale_fn(x: f64, y: f64) -> f64 {
    (1.5 - x + x * y).powi(2)
        + (2.25 - x + x * y.powi(2)).powi(2)
        + (2.625 - x + x * y.powi(3)).powi(2)
}

#[differentiate]
pub fn rosenbrock2_fn(x: f64, y: f64) -> f64 {
    (1.0 - x).powi(2) + 100.0 * (y - x * x).powi(2)
}

#[differentiate]
pub fn rosenbrock(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        s += (1.0 - x[i]).powi(2) + 100.0 * (x[i + 1] - x[i].powi(2)).powi(2);
    }
    s
}

#[differentiate]
pub fn rastrigin(x: &[f64]) -> f64 {
    let a = 10.0;
    let mut s = 0.0;
    for &xi in x {
        s += xi.powi(2) - a * (2.0 * PI * xi).cos();
    }
    a * x.len() as f64 + s
}

#[differentiate]
pub fn ackley(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let mut squares = 0.0;
    let mut cosines = 0.0;
    for xi in x.iter() {
        squares += xi.powi(2);
        cosines += (2.0 * PI * xi).cos();
    }
    -20.0 * (-0.2 * (squares / n).sqrt()).exp() - (cosines / n).exp() + 20.0 + 1.0f64.exp()
}

/// `mean_{s,j} (tanh(b_j + sum_k w_jk x_sk) - y_sj)^2` over a batch of
/// `y.len() / n_out` samples; `w` is row-major `n_out x n_in`.
#[differentiate(wrt(w, b))]
pub fn dense_mse(w: &[f64], b: &[f64], x: &[f64], y: &[f64], n_in: usize, n_out: usize) -> f64 {
    let batch = y.len() / n_out;
    let mut loss = 0.0;
    for s in 0..batch {
        for j in 0..n_out {
            let mut z = b[j];
            for k in 0..n_in {
                z += w[j * n_in + k] * x[s * n_in + k];
            }
            let e = z.tanh() - y[s * n_out + j];
            loss += e * e;
        }
    }
    loss / (batch * n_out) as f64
}

/// The loss and its gradient, by hand: one forward pass per output unit,
/// and the chain rule `dL/dz = 2 e (1 - tanh^2 z) / (batch n_out)` applied
/// on the spot.
pub fn dense_mse_hand(
    w: &[f64],
    b: &[f64],
    x: &[f64],
    y: &[f64],
    n_in: usize,
    n_out: usize,
) -> (f64, (Vec<f64>, Vec<f64>)) {
    let batch = y.len() / n_out;
    let scale = 1.0 / (batch * n_out) as f64;
    let mut dw = vec![0.0; w.len()];
    let mut db = vec![0.0; b.len()];
    let mut loss = 0.0;
    for (xs, ys) in x.chunks_exact(n_in).zip(y.chunks_exact(n_out)) {
        for j in 0..n_out {
            let wj = &w[j * n_in..(j + 1) * n_in];
            let z = b[j] + wj.iter().zip(xs).map(|(wk, xk)| wk * xk).sum::<f64>();
            let a = z.tanh();
            let e = a - ys[j];
            loss += e * e;
            let dz = 2.0 * e * (1.0 - a * a) * scale;
            db[j] += dz;
            for (dwk, xk) in dw[j * n_in..(j + 1) * n_in].iter_mut().zip(xs) {
                *dwk += dz * xk;
            }
        }
    }
    (loss * scale, (dw, db))
}

/// The square root of `a` by 20 Newton steps from `a` (the derivative, through
/// every step, tends to `1 / (2 sqrt(a))`).
#[differentiate]
pub fn newton_sqrt(a: f64) -> f64 {
    let mut r = a;
    for _ in 0..20 {
        r = 0.5 * (r + a / r);
    }
    r
}

/// By hand: the derivative rides along each step,
/// `r' <- (r' + (1 - (a / r) r') / r) / 2`.
pub fn newton_sqrt_hand(a: f64) -> (f64, f64) {
    let mut r = a;
    let mut dr = 1.0;
    for _ in 0..20 {
        let q = a / r;
        dr = 0.5 * (dr + (1.0 - q * dr) / r);
        r = 0.5 * (r + q);
    }
    (r, dr)
}

/// `sum_i c_i x^i` by Horner's rule.
#[differentiate]
pub fn horner(c: &[f64], x: f64) -> f64 {
    let mut p = 0.0;
    for i in (0..c.len()).rev() {
        p = p * x + c[i];
    }
    p
}

/// By hand: the derivative in `x` rides along Horner's rule
/// (`p' <- p' x + p`), and `dp/dc_i = x^i`. The powers are written from the
/// front in the same loop that runs Horner's rule from the back, so the two
/// dependency chains overlap instead of running one after the other.
pub fn horner_hand(c: &[f64], x: f64) -> (f64, (Vec<f64>, f64)) {
    let mut dc = vec![0.0; c.len()];
    let mut p = 0.0;
    let mut dp = 0.0;
    let mut xi = 1.0;
    for (dci, &ci) in dc.iter_mut().zip(c.iter().rev()) {
        dp = dp * x + p;
        p = p * x + ci;
        *dci = xi;
        xi *= x;
    }
    (p, (dc, dp))
}

// ---------------------------------------------------------------------------
// Forward mode, Jacobians and Hessians (the `modes` section of the table).
// ---------------------------------------------------------------------------

/// A scalar chain of transcendental functions, for the first derivative.
#[differentiate(tangent)]
pub fn chain(x: f64) -> f64 {
    let a = (x * x + 1.0).ln();
    let b = (a.sin() * x).exp();
    let c = (b + x.cos()).sqrt();
    c * a.atan() + b.tanh()
}

/// Rosenbrock again, with forward mode and second derivatives.
#[differentiate(tangent, hessian)]
pub fn rosenbrock_h(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        let a = 1.0 - x[i];
        let b = x[i + 1] - x[i] * x[i];
        s += a * a + 100.0 * b * b;
    }
    s
}

/// Rosenbrock's residuals: `rosenbrock_h(x) = Σ r_k²`.
#[differentiate(tangent)]
pub fn residuals(x: &[f64]) -> Vec<f64> {
    let mut r = Vec::with_capacity(2 * x.len());
    for i in 0..x.len() - 1 {
        r.push(1.0 - x[i]);
        r.push(10.0 * (x[i + 1] - x[i] * x[i]));
    }
    r
}
