//! Checks run before anything is timed: every hand-written gradient against
//! central finite differences, and every other column against the
//! hand-written one, so that a fast wrong answer cannot win.

use nalgebra::{DVector, SVector};

/// SplitMix64: seeded, so every run draws the same points.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }

    pub fn vec(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f64> {
        (0..n).map(|_| self.uniform(lo, hi)).collect()
    }
}

/// A value and gradient in any of the shapes the columns return, flattened to
/// `(value, [entries in parameter order])` for comparison.
pub trait Flat {
    fn flat(&self) -> (f64, Vec<f64>);
}

impl Flat for (f64, f64) {
    fn flat(&self) -> (f64, Vec<f64>) {
        (self.0, vec![self.1])
    }
}

impl Flat for (f64, (f64, f64)) {
    fn flat(&self) -> (f64, Vec<f64>) {
        (self.0, vec![self.1 .0, self.1 .1])
    }
}

impl<const N: usize> Flat for (f64, [f64; N]) {
    fn flat(&self) -> (f64, Vec<f64>) {
        (self.0, self.1.to_vec())
    }
}

impl Flat for (f64, Vec<f64>) {
    fn flat(&self) -> (f64, Vec<f64>) {
        (self.0, self.1.clone())
    }
}

impl Flat for (f64, (Vec<f64>, Vec<f64>)) {
    fn flat(&self) -> (f64, Vec<f64>) {
        (self.0, [&self.1 .0[..], &self.1 .1[..]].concat())
    }
}

impl Flat for (f64, (Vec<f64>, Vec<f64>, Vec<f64>)) {
    fn flat(&self) -> (f64, Vec<f64>) {
        (
            self.0,
            [&self.1 .0[..], &self.1 .1[..], &self.1 .2[..]].concat(),
        )
    }
}

impl Flat for (f64, (Vec<f64>, f64)) {
    fn flat(&self) -> (f64, Vec<f64>) {
        let mut g = self.1 .0.clone();
        g.push(self.1 .1);
        (self.0, g)
    }
}

impl<const N: usize> Flat for (f64, SVector<f64, N>) {
    fn flat(&self) -> (f64, Vec<f64>) {
        (self.0, self.1.as_slice().to_vec())
    }
}

impl Flat for (f64, DVector<f64>) {
    fn flat(&self) -> (f64, Vec<f64>) {
        (self.0, self.1.as_slice().to_vec())
    }
}

/// Centered differences of `f` at `p`, Richardson-extrapolated: with
/// `D(h)` the centered difference of step `h = cbrt(eps) max(1, |p_i|)`
/// (divided by the distance actually travelled), `(4 D(h/2) - D(h)) / 3`
/// cancels the `h^2` term of the error, which matters for functions with
/// large third derivatives such as a polynomial of degree 999 near `x = 1`.
pub fn central_difference(f: &dyn Fn(&[f64]) -> f64, p: &[f64]) -> Vec<f64> {
    let mut q = p.to_vec();
    let mut diff = |i: usize, h: f64| {
        let (plus, minus) = (p[i] + h, p[i] - h);
        q[i] = plus;
        let fp = f(&q);
        q[i] = minus;
        let fm = f(&q);
        q[i] = p[i];
        (fp - fm) / (plus - minus)
    };
    (0..p.len())
        .map(|i| {
            let h = f64::EPSILON.cbrt() * p[i].abs().max(1.0);
            (4.0 * diff(i, h / 2.0) - diff(i, h)) / 3.0
        })
        .collect()
}

/// The hand-written gradient agrees with finite differences of the function.
///
/// The tolerance sits well above the differences' own error (of order
/// `eps^(2/3)` times the scale of `f` and of its derivatives) and far below
/// the error of a wrong derivative term.
pub fn hand_matches_fd(what: &str, f: &dyn Fn(&[f64]) -> f64, p: &[f64], hand: &(f64, Vec<f64>)) {
    let (value, grad) = hand;
    let fd = central_difference(f, p);
    assert_eq!(fd.len(), grad.len(), "{what}: gradient length");
    let v = f(p);
    assert!(
        (v - value).abs() <= 1e-12 * (1.0 + v.abs()),
        "{what}: hand-written value {value:e}, function {v:e}"
    );
    let scale = grad.iter().fold(1.0f64, |m, g| m.max(g.abs())).max(v.abs());
    for (i, (&g, &d)) in grad.iter().zip(&fd).enumerate() {
        assert!(
            (g - d).abs() <= 1e-6 * scale,
            "{what}: d/dp[{i}]: hand-written {g:e}, finite differences {d:e}"
        );
    }
}

/// A column agrees with the hand-written value and gradient: relative
/// `1e-9`, with an absolute floor of `1e-12` times the largest entry for
/// entries that cancel to nearly nothing. All columns compute the same
/// formulas in `f64` and differ only in rounding, so a wrong term is off by
/// far more.
pub fn agrees(what: &str, column: &str, got: &(f64, Vec<f64>), hand: &(f64, Vec<f64>)) {
    let close = |a: f64, b: f64, floor: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + floor;
    assert!(
        close(got.0, hand.0, 1e-12),
        "{what}: {column} value {:e}, hand-written {:e}",
        got.0,
        hand.0
    );
    assert_eq!(
        got.1.len(),
        hand.1.len(),
        "{what}: {column} gradient length"
    );
    let scale = hand.1.iter().fold(0.0f64, |m, g| m.max(g.abs()));
    for (i, (&g, &h)) in got.1.iter().zip(&hand.1).enumerate() {
        assert!(
            close(g, h, 1e-12 * scale),
            "{what}: {column} d/dp[{i}] = {g:e}, hand-written {h:e}"
        );
    }
}
