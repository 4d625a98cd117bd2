//! Forward-mode dual numbers `v + d·e` (`e² = 0`) with `N` directions: an
//! oracle for derivatives that has nothing in common with the macro's rules
//! table. Each operation computes its value exactly as `f64` does, so a
//! function written over `Dual` in the same order as the differentiated one
//! takes the same path and has a bit-identical value.
//!
//! (The differential test has its own, `tests/differential/dual.rs`: it also
//! watches how close a point is to a branch flip or a kink.)

use std::iter::Sum;
use std::ops::{Add, Div, Mul, Neg, Sub};

#[derive(Clone, Copy, Debug)]
pub struct Dual<const N: usize> {
    pub v: f64,
    pub d: [f64; N],
}

impl<const N: usize> Dual<N> {
    /// The `i`-th input, with value `v`.
    pub fn var(v: f64, i: usize) -> Self {
        let mut d = [0.0; N];
        d[i] = 1.0;
        Dual { v, d }
    }

    /// A constant.
    pub fn cst(v: f64) -> Self {
        Dual { v, d: [0.0; N] }
    }

    /// `g(self)`, where `g` has value `v` and derivative `dv` at `self.v`.
    pub fn chain(self, v: f64, dv: f64) -> Self {
        Dual {
            v,
            d: self.d.map(|d| d * dv),
        }
    }

    pub fn sin(self) -> Self {
        self.chain(self.v.sin(), self.v.cos())
    }

    pub fn exp(self) -> Self {
        let e = self.v.exp();
        self.chain(e, e)
    }

    pub fn ln(self) -> Self {
        self.chain(self.v.ln(), 1.0 / self.v)
    }

    pub fn abs(self) -> Self {
        self.chain(self.v.abs(), if self.v < 0.0 { -1.0 } else { 1.0 })
    }
}

impl<const N: usize> Add for Dual<N> {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        Dual {
            v: self.v + o.v,
            d: std::array::from_fn(|i| self.d[i] + o.d[i]),
        }
    }
}

impl<const N: usize> Sub for Dual<N> {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        Dual {
            v: self.v - o.v,
            d: std::array::from_fn(|i| self.d[i] - o.d[i]),
        }
    }
}

#[allow(clippy::suspicious_arithmetic_impl)] // the product rule
impl<const N: usize> Mul for Dual<N> {
    type Output = Self;
    fn mul(self, o: Self) -> Self {
        Dual {
            v: self.v * o.v,
            d: std::array::from_fn(|i| self.d[i] * o.v + self.v * o.d[i]),
        }
    }
}

#[allow(clippy::suspicious_arithmetic_impl)] // the quotient rule
impl<const N: usize> Div for Dual<N> {
    type Output = Self;
    fn div(self, o: Self) -> Self {
        Dual {
            v: self.v / o.v,
            d: std::array::from_fn(|i| (self.d[i] * o.v - self.v * o.d[i]) / (o.v * o.v)),
        }
    }
}

impl<const N: usize> Neg for Dual<N> {
    type Output = Self;
    fn neg(self) -> Self {
        Dual {
            v: -self.v,
            d: self.d.map(|d| -d),
        }
    }
}

impl<const N: usize> Add<f64> for Dual<N> {
    type Output = Self;
    fn add(self, c: f64) -> Self {
        self + Dual::cst(c)
    }
}

impl<const N: usize> Sub<f64> for Dual<N> {
    type Output = Self;
    fn sub(self, c: f64) -> Self {
        self - Dual::cst(c)
    }
}

impl<const N: usize> Mul<f64> for Dual<N> {
    type Output = Self;
    fn mul(self, c: f64) -> Self {
        self * Dual::cst(c)
    }
}

impl<const N: usize> Mul<Dual<N>> for f64 {
    type Output = Dual<N>;
    fn mul(self, o: Dual<N>) -> Dual<N> {
        Dual::cst(self) * o
    }
}

impl<const N: usize> Add<Dual<N>> for f64 {
    type Output = Dual<N>;
    fn add(self, o: Dual<N>) -> Dual<N> {
        Dual::cst(self) + o
    }
}

impl<const N: usize> Sub<Dual<N>> for f64 {
    type Output = Dual<N>;
    fn sub(self, o: Dual<N>) -> Dual<N> {
        Dual::cst(self) - o
    }
}

/// Summed in order from `-0.0`, as `Iterator::sum` sums `f64`s.
impl<const N: usize> Sum for Dual<N> {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Dual::cst(-0.0), |a, b| a + b)
    }
}

/// The gradient of `f` at `x`, one forward pass per coordinate (for functions
/// of a slice, whose length is not known when the test is written).
pub fn forward_gradient(f: impl Fn(&[Dual<1>]) -> Dual<1>, x: &[f64]) -> Vec<f64> {
    (0..x.len())
        .map(|j| {
            let seeded: Vec<Dual<1>> = x
                .iter()
                .enumerate()
                .map(|(i, &v)| {
                    if i == j {
                        Dual::var(v, 0)
                    } else {
                        Dual::cst(v)
                    }
                })
                .collect();
            f(&seeded).d[0]
        })
        .collect()
}
