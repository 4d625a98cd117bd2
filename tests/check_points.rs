//! `#[differentiate(check(..))]`: each point becomes a `#[test]` named after
//! the function and the point's position, which compares `f_grad` and
//! `f_adjoint` with central differences of `f`. The tests generated here run
//! with this file's; every parameter form appears at least once, and the
//! expansion must be clean under `#![deny(warnings)]` (and clippy's
//! `-D warnings` in CI).
#![deny(warnings)]

use gradmacro::{custom_adjoint, differentiate};

#[differentiate(check(x = 1.5), check(x = -0.7))]
fn scalar(x: f64) -> f64 {
    x.sin() * x.exp()
}

#[differentiate(
    check(x = 0.3, w = [1.0, -2.0], v = [0.5, 0.25, 2.0], n = 2),
    check(x = -1.25, w = [0.1, 0.2], v = [3.0, -1.0, 0.5], n = 1)
)]
fn forms(x: f64, w: &[f64], v: Vec<f64>, n: usize) -> f64 {
    let mut s = x * x;
    for i in 0..n {
        s += w[i] * (x * v[i]).tanh();
    }
    s + v[2].ln() * w[0]
}

#[differentiate(check(a = [0.5, -1.5, 2.0], b = [1.0, 2.0], c = [0.25, 0.75], scale = 3.0))]
// `&Vec<f64>` is one of the forms covered here.
#[allow(clippy::ptr_arg)]
fn more_forms(a: [f64; 3], b: &[f64; 2], c: &Vec<f64>, scale: f64) -> f64 {
    scale * (a[0] * b[0] + a[1] * b[1]) + a[2].powi(3) * c[0] + c[1].sqrt()
}

/// `scale` is data (`wrt` leaves it out) and `idx` an integer slice: both
/// constants, still given a value at every point.
#[differentiate(wrt(x), check(x = [1.0, 2.0, 3.0], scale = 10.0, idx = [2, 0]))]
fn constants(x: &[f64], scale: f64, idx: &[usize]) -> f64 {
    let mut s = 0.0;
    for &i in idx {
        s += scale * x[i] * x[i];
    }
    s
}

#[differentiate(check(x = 0.5f32, y = -2.0f32))]
fn single(x: f32, y: f32) -> f32 {
    (x * y).cos() + x * x
}

fn softplus(x: f64) -> f64 {
    x.exp().ln_1p()
}

/// Right: d/dx ln(1 + e^x) = 1 / (1 + e^-x).
#[custom_adjoint(softplus)]
fn softplus_adjoint(x: f64, d_out: f64) -> f64 {
    d_out / (1.0 + (-x).exp())
}

#[differentiate(check(x = 0.8, y = -0.4))]
fn uses_custom(x: f64, y: f64) -> f64 {
    softplus(2.0 * x * y) + y
}

/// The generated tests are ordinary functions: a test can call them too.
#[test]
fn generated_checks_can_be_called() {
    scalar_check_0();
    scalar_check_1();
    forms_check_1();
    uses_custom_check_0();
}
