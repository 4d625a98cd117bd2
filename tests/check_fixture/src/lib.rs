//! Two copies of one loss, one built on a right `#[custom_adjoint]` and one
//! on a wrong one, two calls below the checked function. `cargo test` here
//! must report `right_check_0 ... ok` and `wrong_check_0 ... FAILED`.
#![deny(warnings)]

use gradmacro::{custom_adjoint, differentiate};

pub fn softplus(x: f64) -> f64 {
    x.exp().ln_1p()
}

/// d/dx ln(1 + e^x) = 1 / (1 + e^-x).
#[custom_adjoint(softplus)]
pub fn softplus_adjoint(x: f64, d_out: f64) -> f64 {
    d_out / (1.0 + (-x).exp())
}

pub fn softplus_bad(x: f64) -> f64 {
    x.exp().ln_1p()
}

/// Wrong: the sign of the exponent is flipped.
#[custom_adjoint(softplus_bad)]
pub fn softplus_bad_adjoint(x: f64, d_out: f64) -> f64 {
    d_out / (1.0 + x.exp())
}

#[differentiate]
pub fn inner(x: f64, w: &[f64]) -> f64 {
    softplus(x * w[0]) + w[1] * x
}

#[differentiate]
pub fn inner_bad(x: f64, w: &[f64]) -> f64 {
    softplus_bad(x * w[0]) + w[1] * x
}

#[differentiate(check(x = 0.7, w = [1.5, -0.5]))]
pub fn right(x: f64, w: &[f64]) -> f64 {
    inner(x, w) * x
}

#[differentiate(check(x = 0.7, w = [1.5, -0.5]))]
pub fn wrong(x: f64, w: &[f64]) -> f64 {
    inner_bad(x, w) * x
}
