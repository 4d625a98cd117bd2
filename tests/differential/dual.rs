//! Forward-mode dual numbers: the oracle of the differential test.
//!
//! `D { v, d, m }` carries a value `v`, its derivative `d` along one input
//! direction, and `m`, the same derivative computed with the absolute value
//! of every partial: `m >= |d|`, and `m` is the size of the largest terms
//! that cancelled into `d`. Two correct derivatives computed in different
//! orders differ by a few ulps of `m`, not of `d`, so `m` scales the
//! tolerance of the comparison.
//!
//! Every operation computes `v` with exactly the `f64` operation the program
//! wrote, so a program evaluated on `D` gives the bit-identical value; the
//! derivatives are written here from the textbook, sharing nothing with the
//! macro's rules table.
//!
//! Evaluating also watches the point: every comparison records how close its
//! two sides were (`margin`), every kink (`abs`, `max`, `floor`, a clamp
//! bound...) how close its argument was to it, and every function with a
//! restricted domain whether its argument was comfortably inside
//! (`domain_ok`). A point where a branch could flip, a kink could be crossed
//! by a finite-difference step, or a derivative is near a singularity is
//! rejected before anything is compared.
//!
//! This file is compiled into the generated test crate and into the test
//! harness itself.
#![allow(dead_code)]

use std::cell::Cell;
use std::cmp::Ordering;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

#[derive(Clone, Copy, Debug)]
pub struct D {
    pub v: f64,
    pub d: f64,
    pub m: f64,
}

thread_local! {
    static MARGIN: Cell<f64> = const { Cell::new(f64::INFINITY) };
    static DOMAIN_OK: Cell<bool> = const { Cell::new(true) };
    static LARGEST: Cell<f64> = const { Cell::new(0.0) };
}

/// Starts watching a new evaluation.
pub fn reset() {
    MARGIN.with(|c| c.set(f64::INFINITY));
    DOMAIN_OK.with(|c| c.set(true));
    LARGEST.with(|c| c.set(0.0));
}

/// The smallest relative distance of a comparison or a kink since `reset`.
pub fn margin() -> f64 {
    MARGIN.with(|c| c.get())
}

/// No argument came near the edge of its function's domain since `reset`.
pub fn domain_ok() -> bool {
    DOMAIN_OK.with(|c| c.get())
}

/// The largest `|v|` or `m` of any intermediate since `reset`.
pub fn largest() -> f64 {
    LARGEST.with(|c| c.get())
}

/// Records how close `a` and `b` are, when `x` (one of them, or the
/// argument of a kink) varies with the input: a tie between constants
/// cannot flip.
fn near(x: D, a: f64, b: f64) {
    if x.m == 0.0 {
        return;
    }
    let r = (a - b).abs() / 1f64.max(a.abs()).max(b.abs());
    MARGIN.with(|c| c.set(c.get().min(r)));
}

fn require(ok: bool) {
    if !ok {
        DOMAIN_OK.with(|c| c.set(false));
    }
}

fn mk(v: f64, d: f64, m: f64) -> D {
    if !(v.is_finite() && d.is_finite() && m.is_finite()) {
        require(false);
    }
    LARGEST.with(|c| c.set(c.get().max(v.abs()).max(m)));
    D { v, d, m }
}

/// A constant.
fn k(v: f64) -> D {
    D { v, d: 0.0, m: 0.0 }
}

/// An input: the direction of differentiation when `seed`.
pub fn input(v: f64, seed: bool) -> D {
    let s = if seed { 1.0 } else { 0.0 };
    D { v, d: s, m: s }
}

/// `f(a)` with `f'(a) = da`. A constant operand contributes nothing, even
/// where `da` is not finite.
fn un(a: D, v: f64, da: f64) -> D {
    if a.m == 0.0 {
        return mk(v, 0.0, 0.0);
    }
    mk(v, a.d * da, a.m * da.abs())
}

/// `f(a, b)` with partials `da`, `db`.
fn bin(a: D, b: D, v: f64, da: f64, db: f64) -> D {
    let (mut d, mut m) = (0.0, 0.0);
    if a.m != 0.0 {
        d += a.d * da;
        m += a.m * da.abs();
    }
    if b.m != 0.0 {
        d += b.d * db;
        m += b.m * db.abs();
    }
    mk(v, d, m)
}

impl Add for D {
    type Output = D;
    fn add(self, b: D) -> D {
        bin(self, b, self.v + b.v, 1.0, 1.0)
    }
}

impl Sub for D {
    type Output = D;
    fn sub(self, b: D) -> D {
        bin(self, b, self.v - b.v, 1.0, -1.0)
    }
}

impl Mul for D {
    type Output = D;
    fn mul(self, b: D) -> D {
        bin(self, b, self.v * b.v, b.v, self.v)
    }
}

impl Div for D {
    type Output = D;
    fn div(self, b: D) -> D {
        require(b.v.abs() > 1e-3);
        bin(self, b, self.v / b.v, 1.0 / b.v, -self.v / (b.v * b.v))
    }
}

impl Neg for D {
    type Output = D;
    fn neg(self) -> D {
        un(self, -self.v, -1.0)
    }
}

impl AddAssign for D {
    fn add_assign(&mut self, b: D) {
        *self = *self + b;
    }
}

impl SubAssign for D {
    fn sub_assign(&mut self, b: D) {
        *self = *self - b;
    }
}

impl MulAssign for D {
    fn mul_assign(&mut self, b: D) {
        *self = *self * b;
    }
}

impl DivAssign for D {
    fn div_assign(&mut self, b: D) {
        *self = *self / b;
    }
}

/// `iter().sum::<D>()`: the value summed exactly as `f64`'s `sum` does it
/// (its starting value included), so that it stays bit-identical.
impl std::iter::Sum for D {
    fn sum<I: Iterator<Item = D>>(iter: I) -> D {
        let items: Vec<D> = iter.collect();
        let v = items.iter().map(|x| x.v).sum::<f64>();
        let d = items.iter().map(|x| x.d).sum::<f64>();
        let m = items.iter().map(|x| x.m).sum::<f64>();
        mk(v, d, m)
    }
}

impl<'a> std::iter::Sum<&'a D> for D {
    fn sum<I: Iterator<Item = &'a D>>(iter: I) -> D {
        iter.copied().sum()
    }
}

/// `iter().product::<D>()`: from one, in order, as `f64`'s `product`.
impl std::iter::Product for D {
    fn product<I: Iterator<Item = D>>(iter: I) -> D {
        iter.fold(k(1.0), |p, x| p * x)
    }
}

impl<'a> std::iter::Product<&'a D> for D {
    fn product<I: Iterator<Item = &'a D>>(iter: I) -> D {
        iter.copied().product()
    }
}

/// Arithmetic on `&D`, as `f64` has it on `&f64`: closures over
/// `w.iter()` write `v * y` with `v: &D`.
macro_rules! by_ref {
    ($($tr:ident $m:ident,)*) => {$(
        impl $tr<D> for &D {
            type Output = D;
            fn $m(self, b: D) -> D {
                (*self).$m(b)
            }
        }
        impl $tr<&D> for D {
            type Output = D;
            fn $m(self, b: &D) -> D {
                self.$m(*b)
            }
        }
        impl $tr<&D> for &D {
            type Output = D;
            fn $m(self, b: &D) -> D {
                (*self).$m(*b)
            }
        }
    )*};
}

by_ref! {
    Add add,
    Sub sub,
    Mul mul,
    Div div,
}

impl Neg for &D {
    type Output = D;
    fn neg(self) -> D {
        -*self
    }
}

/// The two sides of a comparison, active if either is.
fn either(a: D, b: D) -> D {
    D {
        v: 0.0,
        d: 0.0,
        m: a.m + b.m,
    }
}

impl PartialEq for D {
    fn eq(&self, b: &D) -> bool {
        near(either(*self, *b), self.v, b.v);
        self.v == b.v
    }
}

impl PartialOrd for D {
    fn partial_cmp(&self, b: &D) -> Option<Ordering> {
        near(either(*self, *b), self.v, b.v);
        self.v.partial_cmp(&b.v)
    }
}

/// Distance to the nearest integer, for the piecewise-constant functions.
fn near_integer(x: D) {
    near(x, x.v, x.v.round());
}

impl D {
    /// A constant (the oracle's spelling of a float literal).
    pub fn c(v: f64) -> D {
        k(v)
    }
    pub fn sin(self) -> D {
        un(self, self.v.sin(), self.v.cos())
    }
    pub fn cos(self) -> D {
        un(self, self.v.cos(), -self.v.sin())
    }
    pub fn tan(self) -> D {
        let c = self.v.cos();
        require(c.abs() > 1e-2);
        un(self, self.v.tan(), 1.0 / (c * c))
    }
    pub fn asin(self) -> D {
        require(self.v.abs() < 1.0 - 1e-3);
        un(self, self.v.asin(), 1.0 / (1.0 - self.v * self.v).sqrt())
    }
    pub fn acos(self) -> D {
        require(self.v.abs() < 1.0 - 1e-3);
        un(self, self.v.acos(), -1.0 / (1.0 - self.v * self.v).sqrt())
    }
    pub fn atan(self) -> D {
        un(self, self.v.atan(), 1.0 / (1.0 + self.v * self.v))
    }
    /// `self.atan2(x)` is the angle of the point `(x, self)`.
    pub fn atan2(self, x: D) -> D {
        let y = self;
        let r2 = x.v * x.v + y.v * y.v;
        require(r2 > 1e-6);
        if x.v < 0.0 {
            // The branch cut along the negative x axis.
            near(either(x, y), y.v, 0.0);
        }
        bin(y, x, y.v.atan2(x.v), x.v / r2, -y.v / r2)
    }
    pub fn sinh(self) -> D {
        un(self, self.v.sinh(), self.v.cosh())
    }
    pub fn cosh(self) -> D {
        un(self, self.v.cosh(), self.v.sinh())
    }
    pub fn tanh(self) -> D {
        let c = self.v.cosh();
        un(self, self.v.tanh(), 1.0 / (c * c))
    }
    pub fn asinh(self) -> D {
        un(self, self.v.asinh(), 1.0 / (self.v * self.v + 1.0).sqrt())
    }
    pub fn acosh(self) -> D {
        require(self.v > 1.0 + 1e-3);
        un(self, self.v.acosh(), 1.0 / (self.v * self.v - 1.0).sqrt())
    }
    pub fn atanh(self) -> D {
        require(self.v.abs() < 1.0 - 1e-3);
        un(self, self.v.atanh(), 1.0 / (1.0 - self.v * self.v))
    }
    pub fn exp(self) -> D {
        un(self, self.v.exp(), self.v.exp())
    }
    pub fn exp2(self) -> D {
        un(self, self.v.exp2(), self.v.exp2() * std::f64::consts::LN_2)
    }
    pub fn exp_m1(self) -> D {
        un(self, self.v.exp_m1(), self.v.exp())
    }
    pub fn ln(self) -> D {
        require(self.v > 1e-3);
        un(self, self.v.ln(), 1.0 / self.v)
    }
    pub fn ln_1p(self) -> D {
        require(self.v > -1.0 + 1e-3);
        un(self, self.v.ln_1p(), 1.0 / (1.0 + self.v))
    }
    /// `log_b(self) = ln(self) / ln(b)`.
    pub fn log(self, b: D) -> D {
        require(self.v > 1e-3 && b.v > 1e-3 && b.v.ln().abs() > 1e-2);
        let lb = b.v.ln();
        bin(
            self,
            b,
            self.v.log(b.v),
            1.0 / (self.v * lb),
            -self.v.ln() / (b.v * lb * lb),
        )
    }
    pub fn log2(self) -> D {
        require(self.v > 1e-3);
        un(self, self.v.log2(), 1.0 / (self.v * std::f64::consts::LN_2))
    }
    pub fn log10(self) -> D {
        require(self.v > 1e-3);
        un(
            self,
            self.v.log10(),
            1.0 / (self.v * std::f64::consts::LN_10),
        )
    }
    pub fn sqrt(self) -> D {
        require(self.v > 1e-3);
        un(self, self.v.sqrt(), 0.5 / self.v.sqrt())
    }
    pub fn cbrt(self) -> D {
        require(self.v.abs() > 1e-3);
        let c = self.v.cbrt();
        un(self, c, 1.0 / (3.0 * c * c))
    }
    pub fn powi(self, n: i32) -> D {
        if n <= 0 {
            require(self.v.abs() > 1e-3);
        }
        let da = if n == 0 {
            0.0
        } else {
            f64::from(n) * self.v.powi(n - 1)
        };
        un(self, self.v.powi(n), da)
    }
    /// `self^b = exp(b ln self)`: the exponent's partial needs `self > 0`.
    pub fn powf(self, b: D) -> D {
        require(self.v > 1e-3);
        let v = self.v.powf(b.v);
        bin(self, b, v, b.v * self.v.powf(b.v - 1.0), v * self.v.ln())
    }
    pub fn hypot(self, b: D) -> D {
        let h = self.v.hypot(b.v);
        require(h > 1e-3);
        bin(self, b, h, self.v / h, b.v / h)
    }
    pub fn abs(self) -> D {
        near(self, self.v, 0.0);
        un(self, self.v.abs(), if self.v < 0.0 { -1.0 } else { 1.0 })
    }
    pub fn recip(self) -> D {
        require(self.v.abs() > 1e-3);
        un(self, self.v.recip(), -1.0 / (self.v * self.v))
    }
    /// `self * a + b`, rounded once.
    pub fn mul_add(self, a: D, b: D) -> D {
        let v = self.v.mul_add(a.v, b.v);
        let (mut d, mut m) = (0.0, 0.0);
        for (x, p) in [(self, a.v), (a, self.v), (b, 1.0)] {
            if x.m != 0.0 {
                d += x.d * p;
                m += x.m * p.abs();
            }
        }
        mk(v, d, m)
    }
    pub fn max(self, b: D) -> D {
        near(either(self, b), self.v, b.v);
        let v = self.v.max(b.v);
        // At a tie the receiver takes the derivative, as in the macro (the
        // point is rejected anyway: `near` saw the tie).
        if self.v >= b.v {
            bin(self, b, v, 1.0, 0.0)
        } else {
            bin(self, b, v, 0.0, 1.0)
        }
    }
    pub fn min(self, b: D) -> D {
        near(either(self, b), self.v, b.v);
        let v = self.v.min(b.v);
        if self.v <= b.v {
            bin(self, b, v, 1.0, 0.0)
        } else {
            bin(self, b, v, 0.0, 1.0)
        }
    }
    pub fn clamp(self, lo: D, hi: D) -> D {
        near(either(self, lo), self.v, lo.v);
        near(either(self, hi), self.v, hi.v);
        let v = self.v.clamp(lo.v, hi.v);
        let (which, p) = if self.v < lo.v {
            (lo, 1.0)
        } else if self.v > hi.v {
            (hi, 1.0)
        } else {
            (self, 1.0)
        };
        if which.m == 0.0 {
            mk(v, 0.0, 0.0)
        } else {
            mk(v, which.d * p, which.m)
        }
    }
    pub fn signum(self) -> D {
        near(self, self.v, 0.0);
        k(self.v.signum())
    }
    pub fn floor(self) -> D {
        near_integer(self);
        k(self.v.floor())
    }
    pub fn ceil(self) -> D {
        near_integer(self);
        k(self.v.ceil())
    }
    pub fn round(self) -> D {
        near(self, self.v, self.v.floor() + 0.5);
        k(self.v.round())
    }
    pub fn trunc(self) -> D {
        near_integer(self);
        k(self.v.trunc())
    }
    pub fn fract(self) -> D {
        near_integer(self);
        un(self, self.v.fract(), 1.0)
    }
    pub fn to_degrees(self) -> D {
        un(self, self.v.to_degrees(), 180.0 / std::f64::consts::PI)
    }
    pub fn to_radians(self) -> D {
        un(self, self.v.to_radians(), std::f64::consts::PI / 180.0)
    }
}
