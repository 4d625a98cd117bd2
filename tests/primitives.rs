//! Every primitive `#[differentiate]` supports on `f64`, in method form
//! (`x.sin()`) and path form (`f64::sin(x)`), checked at several points
//! against the derivative written out by hand and against finite
//! differences; then composite expressions, the statement forms (`let`,
//! shadowing, compound assignment, nested blocks, `return`), constants,
//! integer parameters, and the documented conventions at kinks.
//!
//! Each `d_*` function is the textbook derivative of one primitive, written
//! independently of the macro. The checks themselves are in `support`.

mod support;

use std::f64::consts::{LN_10, LN_2, PI};

use gradmacro::differentiate;
use support::{check_binary, check_ternary, check_unary};

// Point sets, each inside the domain of the functions that use it and away
// from kinks, integers and half-integers (for floor, ceil, round, trunc).

/// Anywhere on the real line.
const ANY: [f64; 5] = [-2.3, -0.6, 0.35, 1.1, 2.9];
/// Inside (-pi/2, pi/2), for tan.
const TAN_AT: [f64; 4] = [-1.2, -0.3, 0.5, 1.1];
/// Inside (-1, 1), for asin, acos, atanh.
const UNIT: [f64; 4] = [-0.9, -0.45, 0.2, 0.75];
/// Positive, for ln, log2, log10, sqrt.
const POS: [f64; 4] = [0.05, 0.7, 2.5, 40.0];
/// Above 1, for acosh.
const ABOVE_ONE: [f64; 4] = [1.1, 1.5, 2.0, 7.5];
/// Above -1, for ln_1p; includes a small argument, where ln_1p and exp_m1
/// matter.
const ABOVE_MINUS_ONE: [f64; 4] = [-0.6, -1e-3, 0.5, 9.0];
/// Pairs with x > 0, for powf and log.
const POS_PAIRS: [(f64, f64); 4] = [(0.5, 2.3), (1.7, -0.8), (3.0, 0.5), (2.2, 3.1)];
/// Pairs in all four quadrants, none on an axis.
const PAIRS: [(f64, f64); 4] = [(1.0, 2.0), (-0.5, 1.5), (2.0, -1.0), (-1.2, -0.7)];

// ---------------------------------------------------------------------------
// Unary primitives. For each: the method form, the path form, the
// hand-written derivative and one test per form.
// ---------------------------------------------------------------------------

#[differentiate]
fn sin_m(x: f64) -> f64 {
    x.sin()
}
#[differentiate]
fn sin_p(x: f64) -> f64 {
    f64::sin(x)
}
fn d_sin(x: f64) -> f64 {
    x.cos()
}
#[test]
fn sin_method() {
    check_unary("x.sin()", sin_m, sin_m_grad, sin_m_adjoint, d_sin, &ANY);
}
#[test]
fn sin_path() {
    check_unary("f64::sin(x)", sin_p, sin_p_grad, sin_p_adjoint, d_sin, &ANY);
}

#[differentiate]
fn cos_m(x: f64) -> f64 {
    x.cos()
}
#[differentiate]
fn cos_p(x: f64) -> f64 {
    f64::cos(x)
}
fn d_cos(x: f64) -> f64 {
    -x.sin()
}
#[test]
fn cos_method() {
    check_unary("x.cos()", cos_m, cos_m_grad, cos_m_adjoint, d_cos, &ANY);
}
#[test]
fn cos_path() {
    check_unary("f64::cos(x)", cos_p, cos_p_grad, cos_p_adjoint, d_cos, &ANY);
}

#[differentiate]
fn tan_m(x: f64) -> f64 {
    x.tan()
}
#[differentiate]
fn tan_p(x: f64) -> f64 {
    f64::tan(x)
}
fn d_tan(x: f64) -> f64 {
    1.0 / (x.cos() * x.cos())
}
#[test]
fn tan_method() {
    check_unary("x.tan()", tan_m, tan_m_grad, tan_m_adjoint, d_tan, &TAN_AT);
}
#[test]
fn tan_path() {
    check_unary(
        "f64::tan(x)",
        tan_p,
        tan_p_grad,
        tan_p_adjoint,
        d_tan,
        &TAN_AT,
    );
}

#[differentiate]
fn asin_m(x: f64) -> f64 {
    x.asin()
}
#[differentiate]
fn asin_p(x: f64) -> f64 {
    f64::asin(x)
}
fn d_asin(x: f64) -> f64 {
    1.0 / (1.0 - x * x).sqrt()
}
#[test]
fn asin_method() {
    check_unary(
        "x.asin()",
        asin_m,
        asin_m_grad,
        asin_m_adjoint,
        d_asin,
        &UNIT,
    );
}
#[test]
fn asin_path() {
    check_unary(
        "f64::asin(x)",
        asin_p,
        asin_p_grad,
        asin_p_adjoint,
        d_asin,
        &UNIT,
    );
}

#[differentiate]
fn acos_m(x: f64) -> f64 {
    x.acos()
}
#[differentiate]
fn acos_p(x: f64) -> f64 {
    f64::acos(x)
}
fn d_acos(x: f64) -> f64 {
    -1.0 / (1.0 - x * x).sqrt()
}
#[test]
fn acos_method() {
    check_unary(
        "x.acos()",
        acos_m,
        acos_m_grad,
        acos_m_adjoint,
        d_acos,
        &UNIT,
    );
}
#[test]
fn acos_path() {
    check_unary(
        "f64::acos(x)",
        acos_p,
        acos_p_grad,
        acos_p_adjoint,
        d_acos,
        &UNIT,
    );
}

#[differentiate]
fn atan_m(x: f64) -> f64 {
    x.atan()
}
#[differentiate]
fn atan_p(x: f64) -> f64 {
    f64::atan(x)
}
fn d_atan(x: f64) -> f64 {
    1.0 / (1.0 + x * x)
}
#[test]
fn atan_method() {
    check_unary(
        "x.atan()",
        atan_m,
        atan_m_grad,
        atan_m_adjoint,
        d_atan,
        &ANY,
    );
}
#[test]
fn atan_path() {
    check_unary(
        "f64::atan(x)",
        atan_p,
        atan_p_grad,
        atan_p_adjoint,
        d_atan,
        &ANY,
    );
}

#[differentiate]
fn sinh_m(x: f64) -> f64 {
    x.sinh()
}
#[differentiate]
fn sinh_p(x: f64) -> f64 {
    f64::sinh(x)
}
fn d_sinh(x: f64) -> f64 {
    x.cosh()
}
#[test]
fn sinh_method() {
    check_unary(
        "x.sinh()",
        sinh_m,
        sinh_m_grad,
        sinh_m_adjoint,
        d_sinh,
        &ANY,
    );
}
#[test]
fn sinh_path() {
    check_unary(
        "f64::sinh(x)",
        sinh_p,
        sinh_p_grad,
        sinh_p_adjoint,
        d_sinh,
        &ANY,
    );
}

#[differentiate]
fn cosh_m(x: f64) -> f64 {
    x.cosh()
}
#[differentiate]
fn cosh_p(x: f64) -> f64 {
    f64::cosh(x)
}
fn d_cosh(x: f64) -> f64 {
    x.sinh()
}
#[test]
fn cosh_method() {
    check_unary(
        "x.cosh()",
        cosh_m,
        cosh_m_grad,
        cosh_m_adjoint,
        d_cosh,
        &ANY,
    );
}
#[test]
fn cosh_path() {
    check_unary(
        "f64::cosh(x)",
        cosh_p,
        cosh_p_grad,
        cosh_p_adjoint,
        d_cosh,
        &ANY,
    );
}

#[differentiate]
fn tanh_m(x: f64) -> f64 {
    x.tanh()
}
#[differentiate]
fn tanh_p(x: f64) -> f64 {
    f64::tanh(x)
}
fn d_tanh(x: f64) -> f64 {
    1.0 / (x.cosh() * x.cosh())
}
#[test]
fn tanh_method() {
    check_unary(
        "x.tanh()",
        tanh_m,
        tanh_m_grad,
        tanh_m_adjoint,
        d_tanh,
        &ANY,
    );
}
#[test]
fn tanh_path() {
    check_unary(
        "f64::tanh(x)",
        tanh_p,
        tanh_p_grad,
        tanh_p_adjoint,
        d_tanh,
        &ANY,
    );
}

#[differentiate]
fn asinh_m(x: f64) -> f64 {
    x.asinh()
}
#[differentiate]
fn asinh_p(x: f64) -> f64 {
    f64::asinh(x)
}
fn d_asinh(x: f64) -> f64 {
    1.0 / (x * x + 1.0).sqrt()
}
#[test]
fn asinh_method() {
    check_unary(
        "x.asinh()",
        asinh_m,
        asinh_m_grad,
        asinh_m_adjoint,
        d_asinh,
        &ANY,
    );
}
#[test]
fn asinh_path() {
    check_unary(
        "f64::asinh(x)",
        asinh_p,
        asinh_p_grad,
        asinh_p_adjoint,
        d_asinh,
        &ANY,
    );
}

#[differentiate]
fn acosh_m(x: f64) -> f64 {
    x.acosh()
}
#[differentiate]
fn acosh_p(x: f64) -> f64 {
    f64::acosh(x)
}
fn d_acosh(x: f64) -> f64 {
    1.0 / (x * x - 1.0).sqrt()
}
#[test]
fn acosh_method() {
    check_unary(
        "x.acosh()",
        acosh_m,
        acosh_m_grad,
        acosh_m_adjoint,
        d_acosh,
        &ABOVE_ONE,
    );
}
#[test]
fn acosh_path() {
    check_unary(
        "f64::acosh(x)",
        acosh_p,
        acosh_p_grad,
        acosh_p_adjoint,
        d_acosh,
        &ABOVE_ONE,
    );
}

#[differentiate]
fn atanh_m(x: f64) -> f64 {
    x.atanh()
}
#[differentiate]
fn atanh_p(x: f64) -> f64 {
    f64::atanh(x)
}
fn d_atanh(x: f64) -> f64 {
    1.0 / (1.0 - x * x)
}
#[test]
fn atanh_method() {
    check_unary(
        "x.atanh()",
        atanh_m,
        atanh_m_grad,
        atanh_m_adjoint,
        d_atanh,
        &UNIT,
    );
}
#[test]
fn atanh_path() {
    check_unary(
        "f64::atanh(x)",
        atanh_p,
        atanh_p_grad,
        atanh_p_adjoint,
        d_atanh,
        &UNIT,
    );
}

#[differentiate]
fn exp_m(x: f64) -> f64 {
    x.exp()
}
#[differentiate]
fn exp_p(x: f64) -> f64 {
    f64::exp(x)
}
fn d_exp(x: f64) -> f64 {
    x.exp()
}
#[test]
fn exp_method() {
    check_unary("x.exp()", exp_m, exp_m_grad, exp_m_adjoint, d_exp, &ANY);
}
#[test]
fn exp_path() {
    check_unary("f64::exp(x)", exp_p, exp_p_grad, exp_p_adjoint, d_exp, &ANY);
}

#[differentiate]
fn exp2_m(x: f64) -> f64 {
    x.exp2()
}
#[differentiate]
fn exp2_p(x: f64) -> f64 {
    f64::exp2(x)
}
fn d_exp2(x: f64) -> f64 {
    x.exp2() * LN_2
}
#[test]
fn exp2_method() {
    check_unary(
        "x.exp2()",
        exp2_m,
        exp2_m_grad,
        exp2_m_adjoint,
        d_exp2,
        &ANY,
    );
}
#[test]
fn exp2_path() {
    check_unary(
        "f64::exp2(x)",
        exp2_p,
        exp2_p_grad,
        exp2_p_adjoint,
        d_exp2,
        &ANY,
    );
}

#[differentiate]
fn exp_m1_m(x: f64) -> f64 {
    x.exp_m1()
}
#[differentiate]
fn exp_m1_p(x: f64) -> f64 {
    f64::exp_m1(x)
}
fn d_exp_m1(x: f64) -> f64 {
    x.exp()
}
#[test]
fn exp_m1_method() {
    check_unary(
        "x.exp_m1()",
        exp_m1_m,
        exp_m1_m_grad,
        exp_m1_m_adjoint,
        d_exp_m1,
        &ANY,
    );
    check_unary(
        "x.exp_m1()",
        exp_m1_m,
        exp_m1_m_grad,
        exp_m1_m_adjoint,
        d_exp_m1,
        &[1e-3],
    );
}
#[test]
fn exp_m1_path() {
    check_unary(
        "f64::exp_m1(x)",
        exp_m1_p,
        exp_m1_p_grad,
        exp_m1_p_adjoint,
        d_exp_m1,
        &ANY,
    );
}

#[differentiate]
fn ln_m(x: f64) -> f64 {
    x.ln()
}
#[differentiate]
fn ln_p(x: f64) -> f64 {
    f64::ln(x)
}
fn d_ln(x: f64) -> f64 {
    1.0 / x
}
#[test]
fn ln_method() {
    check_unary("x.ln()", ln_m, ln_m_grad, ln_m_adjoint, d_ln, &POS);
}
#[test]
fn ln_path() {
    check_unary("f64::ln(x)", ln_p, ln_p_grad, ln_p_adjoint, d_ln, &POS);
}

#[differentiate]
fn ln_1p_m(x: f64) -> f64 {
    x.ln_1p()
}
#[differentiate]
fn ln_1p_p(x: f64) -> f64 {
    f64::ln_1p(x)
}
fn d_ln_1p(x: f64) -> f64 {
    1.0 / (1.0 + x)
}
#[test]
fn ln_1p_method() {
    check_unary(
        "x.ln_1p()",
        ln_1p_m,
        ln_1p_m_grad,
        ln_1p_m_adjoint,
        d_ln_1p,
        &ABOVE_MINUS_ONE,
    );
}
#[test]
fn ln_1p_path() {
    check_unary(
        "f64::ln_1p(x)",
        ln_1p_p,
        ln_1p_p_grad,
        ln_1p_p_adjoint,
        d_ln_1p,
        &ABOVE_MINUS_ONE,
    );
}

#[differentiate]
fn log2_m(x: f64) -> f64 {
    x.log2()
}
#[differentiate]
fn log2_p(x: f64) -> f64 {
    f64::log2(x)
}
fn d_log2(x: f64) -> f64 {
    1.0 / (x * LN_2)
}
#[test]
fn log2_method() {
    check_unary(
        "x.log2()",
        log2_m,
        log2_m_grad,
        log2_m_adjoint,
        d_log2,
        &POS,
    );
}
#[test]
fn log2_path() {
    check_unary(
        "f64::log2(x)",
        log2_p,
        log2_p_grad,
        log2_p_adjoint,
        d_log2,
        &POS,
    );
}

#[differentiate]
fn log10_m(x: f64) -> f64 {
    x.log10()
}
#[differentiate]
fn log10_p(x: f64) -> f64 {
    f64::log10(x)
}
fn d_log10(x: f64) -> f64 {
    1.0 / (x * LN_10)
}
#[test]
fn log10_method() {
    check_unary(
        "x.log10()",
        log10_m,
        log10_m_grad,
        log10_m_adjoint,
        d_log10,
        &POS,
    );
}
#[test]
fn log10_path() {
    check_unary(
        "f64::log10(x)",
        log10_p,
        log10_p_grad,
        log10_p_adjoint,
        d_log10,
        &POS,
    );
}

#[differentiate]
fn sqrt_m(x: f64) -> f64 {
    x.sqrt()
}
#[differentiate]
fn sqrt_p(x: f64) -> f64 {
    f64::sqrt(x)
}
fn d_sqrt(x: f64) -> f64 {
    0.5 / x.sqrt()
}
#[test]
fn sqrt_method() {
    check_unary(
        "x.sqrt()",
        sqrt_m,
        sqrt_m_grad,
        sqrt_m_adjoint,
        d_sqrt,
        &POS,
    );
}
#[test]
fn sqrt_path() {
    check_unary(
        "f64::sqrt(x)",
        sqrt_p,
        sqrt_p_grad,
        sqrt_p_adjoint,
        d_sqrt,
        &POS,
    );
}

#[differentiate]
fn cbrt_m(x: f64) -> f64 {
    x.cbrt()
}
#[differentiate]
fn cbrt_p(x: f64) -> f64 {
    f64::cbrt(x)
}
fn d_cbrt(x: f64) -> f64 {
    1.0 / (3.0 * x.cbrt() * x.cbrt())
}
#[test]
fn cbrt_method() {
    // cbrt is defined for negative x as well.
    check_unary(
        "x.cbrt()",
        cbrt_m,
        cbrt_m_grad,
        cbrt_m_adjoint,
        d_cbrt,
        &ANY,
    );
}
#[test]
fn cbrt_path() {
    check_unary(
        "f64::cbrt(x)",
        cbrt_p,
        cbrt_p_grad,
        cbrt_p_adjoint,
        d_cbrt,
        &ANY,
    );
}

#[differentiate]
fn abs_m(x: f64) -> f64 {
    x.abs()
}
#[differentiate]
fn abs_p(x: f64) -> f64 {
    f64::abs(x)
}
fn d_abs(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else {
        -1.0
    }
}
#[test]
fn abs_method() {
    check_unary("x.abs()", abs_m, abs_m_grad, abs_m_adjoint, d_abs, &ANY);
}
#[test]
fn abs_path() {
    check_unary("f64::abs(x)", abs_p, abs_p_grad, abs_p_adjoint, d_abs, &ANY);
}

#[differentiate]
fn recip_m(x: f64) -> f64 {
    x.recip()
}
#[differentiate]
fn recip_p(x: f64) -> f64 {
    f64::recip(x)
}
fn d_recip(x: f64) -> f64 {
    -1.0 / (x * x)
}
#[test]
fn recip_method() {
    check_unary(
        "x.recip()",
        recip_m,
        recip_m_grad,
        recip_m_adjoint,
        d_recip,
        &ANY,
    );
}
#[test]
fn recip_path() {
    check_unary(
        "f64::recip(x)",
        recip_p,
        recip_p_grad,
        recip_p_adjoint,
        d_recip,
        &ANY,
    );
}

#[differentiate]
fn to_degrees_m(x: f64) -> f64 {
    x.to_degrees()
}
#[differentiate]
fn to_degrees_p(x: f64) -> f64 {
    f64::to_degrees(x)
}
fn d_to_degrees(_x: f64) -> f64 {
    180.0 / PI
}
#[test]
fn to_degrees_method() {
    check_unary(
        "x.to_degrees()",
        to_degrees_m,
        to_degrees_m_grad,
        to_degrees_m_adjoint,
        d_to_degrees,
        &ANY,
    );
}
#[test]
fn to_degrees_path() {
    check_unary(
        "f64::to_degrees(x)",
        to_degrees_p,
        to_degrees_p_grad,
        to_degrees_p_adjoint,
        d_to_degrees,
        &ANY,
    );
}

#[differentiate]
fn to_radians_m(x: f64) -> f64 {
    x.to_radians()
}
#[differentiate]
fn to_radians_p(x: f64) -> f64 {
    f64::to_radians(x)
}
fn d_to_radians(_x: f64) -> f64 {
    PI / 180.0
}
#[test]
fn to_radians_method() {
    let at = [-100.0, 30.0, 271.5];
    check_unary(
        "x.to_radians()",
        to_radians_m,
        to_radians_m_grad,
        to_radians_m_adjoint,
        d_to_radians,
        &at,
    );
}
#[test]
fn to_radians_path() {
    let at = [-100.0, 30.0, 271.5];
    check_unary(
        "f64::to_radians(x)",
        to_radians_p,
        to_radians_p_grad,
        to_radians_p_adjoint,
        d_to_radians,
        &at,
    );
}

// Piecewise-constant primitives: derivative 0 everywhere (at the jumps too,
// by convention).

fn d_piecewise_constant(_x: f64) -> f64 {
    0.0
}

#[differentiate]
fn signum_m(x: f64) -> f64 {
    x.signum()
}
#[differentiate]
fn signum_p(x: f64) -> f64 {
    f64::signum(x)
}
#[test]
fn signum_method() {
    check_unary(
        "x.signum()",
        signum_m,
        signum_m_grad,
        signum_m_adjoint,
        d_piecewise_constant,
        &ANY,
    );
}
#[test]
fn signum_path() {
    check_unary(
        "f64::signum(x)",
        signum_p,
        signum_p_grad,
        signum_p_adjoint,
        d_piecewise_constant,
        &ANY,
    );
}

#[differentiate]
fn floor_m(x: f64) -> f64 {
    x.floor()
}
#[differentiate]
fn floor_p(x: f64) -> f64 {
    f64::floor(x)
}
#[test]
fn floor_method() {
    check_unary(
        "x.floor()",
        floor_m,
        floor_m_grad,
        floor_m_adjoint,
        d_piecewise_constant,
        &ANY,
    );
}
#[test]
fn floor_path() {
    check_unary(
        "f64::floor(x)",
        floor_p,
        floor_p_grad,
        floor_p_adjoint,
        d_piecewise_constant,
        &ANY,
    );
}

#[differentiate]
fn ceil_m(x: f64) -> f64 {
    x.ceil()
}
#[differentiate]
fn ceil_p(x: f64) -> f64 {
    f64::ceil(x)
}
#[test]
fn ceil_method() {
    check_unary(
        "x.ceil()",
        ceil_m,
        ceil_m_grad,
        ceil_m_adjoint,
        d_piecewise_constant,
        &ANY,
    );
}
#[test]
fn ceil_path() {
    check_unary(
        "f64::ceil(x)",
        ceil_p,
        ceil_p_grad,
        ceil_p_adjoint,
        d_piecewise_constant,
        &ANY,
    );
}

#[differentiate]
fn round_m(x: f64) -> f64 {
    x.round()
}
#[differentiate]
fn round_p(x: f64) -> f64 {
    f64::round(x)
}
#[test]
fn round_method() {
    check_unary(
        "x.round()",
        round_m,
        round_m_grad,
        round_m_adjoint,
        d_piecewise_constant,
        &ANY,
    );
}
#[test]
fn round_path() {
    check_unary(
        "f64::round(x)",
        round_p,
        round_p_grad,
        round_p_adjoint,
        d_piecewise_constant,
        &ANY,
    );
}

#[differentiate]
fn trunc_m(x: f64) -> f64 {
    x.trunc()
}
#[differentiate]
fn trunc_p(x: f64) -> f64 {
    f64::trunc(x)
}
#[test]
fn trunc_method() {
    check_unary(
        "x.trunc()",
        trunc_m,
        trunc_m_grad,
        trunc_m_adjoint,
        d_piecewise_constant,
        &ANY,
    );
}
#[test]
fn trunc_path() {
    check_unary(
        "f64::trunc(x)",
        trunc_p,
        trunc_p_grad,
        trunc_p_adjoint,
        d_piecewise_constant,
        &ANY,
    );
}

#[test]
fn piecewise_constant_at_their_jumps() {
    // The derivative is 0 at the jumps too, not NaN or infinite.
    for x in [-2.0, -0.5, 0.0, 0.5, 1.0, 2.5] {
        assert_eq!(floor_m_grad(x), (x.floor(), 0.0), "floor at {x}");
        assert_eq!(ceil_m_grad(x), (x.ceil(), 0.0), "ceil at {x}");
        assert_eq!(round_m_grad(x), (x.round(), 0.0), "round at {x}");
        assert_eq!(trunc_m_grad(x), (x.trunc(), 0.0), "trunc at {x}");
    }
    assert_eq!(signum_m_grad(0.0).1, 0.0, "signum at 0");
    assert_eq!(signum_m_grad(-0.0).1, 0.0, "signum at -0");
}

// ---------------------------------------------------------------------------
// powi: integer exponent, as a literal or an i32 parameter.
// ---------------------------------------------------------------------------

#[differentiate]
fn powi_3(x: f64) -> f64 {
    x.powi(3)
}
#[differentiate]
fn powi_3_p(x: f64) -> f64 {
    f64::powi(x, 3)
}
fn d_powi_3(x: f64) -> f64 {
    3.0 * x * x
}
#[test]
fn powi_literal_method() {
    check_unary(
        "x.powi(3)",
        powi_3,
        powi_3_grad,
        powi_3_adjoint,
        d_powi_3,
        &ANY,
    );
}
#[test]
fn powi_literal_path() {
    check_unary(
        "f64::powi(x, 3)",
        powi_3_p,
        powi_3_p_grad,
        powi_3_p_adjoint,
        d_powi_3,
        &ANY,
    );
}

#[differentiate]
fn powi_minus_2(x: f64) -> f64 {
    x.powi(-2)
}
#[test]
fn powi_negative_literal() {
    check_unary(
        "x.powi(-2)",
        powi_minus_2,
        powi_minus_2_grad,
        powi_minus_2_adjoint,
        |x: f64| -2.0 / (x * x * x),
        &ANY,
    );
}

#[differentiate]
fn powi_0_and_1(x: f64) -> f64 {
    x.powi(0) + x.powi(1)
}
#[test]
fn powi_zero_and_one() {
    check_unary(
        "x.powi(0) + x.powi(1)",
        powi_0_and_1,
        powi_0_and_1_grad,
        powi_0_and_1_adjoint,
        |_x: f64| 1.0,
        &ANY,
    );
}

#[differentiate]
fn powi_n(x: f64, n: i32) -> f64 {
    x.powi(n)
}
#[test]
fn powi_parameter() {
    for n in [-3, -1, 0, 1, 2, 5] {
        check_unary(
            &format!("x.powi(n) with n = {n}"),
            |x| powi_n(x, n),
            |x| powi_n_grad(x, n),
            |x, d| powi_n_adjoint(x, n, d),
            |x: f64| n as f64 * x.powi(n - 1),
            &ANY,
        );
    }
}

// ---------------------------------------------------------------------------
// Binary primitives, differentiated with respect to both arguments.
// ---------------------------------------------------------------------------

#[differentiate]
fn atan2_m(y: f64, x: f64) -> f64 {
    y.atan2(x)
}
#[differentiate]
fn atan2_p(y: f64, x: f64) -> f64 {
    f64::atan2(y, x)
}
/// d/dy and d/dx of atan2(y, x), the angle of the point (x, y).
fn d_atan2(y: f64, x: f64) -> (f64, f64) {
    let r2 = x * x + y * y;
    (x / r2, -y / r2)
}
#[test]
fn atan2_method() {
    check_binary(
        "y.atan2(x)",
        atan2_m,
        atan2_m_grad,
        atan2_m_adjoint,
        d_atan2,
        &PAIRS,
    );
}
#[test]
fn atan2_path() {
    check_binary(
        "f64::atan2(y, x)",
        atan2_p,
        atan2_p_grad,
        atan2_p_adjoint,
        d_atan2,
        &PAIRS,
    );
}

#[differentiate]
fn powf_m(x: f64, y: f64) -> f64 {
    x.powf(y)
}
#[differentiate]
fn powf_p(x: f64, y: f64) -> f64 {
    f64::powf(x, y)
}
fn d_powf(x: f64, y: f64) -> (f64, f64) {
    (y * x.powf(y - 1.0), x.powf(y) * x.ln())
}
#[test]
fn powf_method() {
    check_binary(
        "x.powf(y)",
        powf_m,
        powf_m_grad,
        powf_m_adjoint,
        d_powf,
        &POS_PAIRS,
    );
}
#[test]
fn powf_path() {
    check_binary(
        "f64::powf(x, y)",
        powf_p,
        powf_p_grad,
        powf_p_adjoint,
        d_powf,
        &POS_PAIRS,
    );
}

#[differentiate]
fn hypot_m(x: f64, y: f64) -> f64 {
    x.hypot(y)
}
#[differentiate]
fn hypot_p(x: f64, y: f64) -> f64 {
    f64::hypot(x, y)
}
fn d_hypot(x: f64, y: f64) -> (f64, f64) {
    let r = (x * x + y * y).sqrt();
    (x / r, y / r)
}
#[test]
fn hypot_method() {
    check_binary(
        "x.hypot(y)",
        hypot_m,
        hypot_m_grad,
        hypot_m_adjoint,
        d_hypot,
        &PAIRS,
    );
    check_binary(
        "x.hypot(y)",
        hypot_m,
        hypot_m_grad,
        hypot_m_adjoint,
        d_hypot,
        &[(3.0, 4.0)],
    );
}
#[test]
fn hypot_path() {
    check_binary(
        "f64::hypot(x, y)",
        hypot_p,
        hypot_p_grad,
        hypot_p_adjoint,
        d_hypot,
        &PAIRS,
    );
}

#[differentiate]
fn log_m(x: f64, b: f64) -> f64 {
    x.log(b)
}
#[differentiate]
fn log_p(x: f64, b: f64) -> f64 {
    f64::log(x, b)
}
/// log_b(x) = ln(x) / ln(b).
fn d_log(x: f64, b: f64) -> (f64, f64) {
    let lb = b.ln();
    (1.0 / (x * lb), -x.ln() / (b * lb * lb))
}
#[test]
fn log_method() {
    let at = [(2.0, 10.0), (0.3, 2.5), (7.0, 0.5), (5.5, 1.7)];
    check_binary("x.log(b)", log_m, log_m_grad, log_m_adjoint, d_log, &at);
}
#[test]
fn log_path() {
    let at = [(2.0, 10.0), (0.3, 2.5), (7.0, 0.5), (5.5, 1.7)];
    check_binary(
        "f64::log(x, b)",
        log_p,
        log_p_grad,
        log_p_adjoint,
        d_log,
        &at,
    );
}

#[differentiate]
fn max_m(x: f64, y: f64) -> f64 {
    x.max(y)
}
#[differentiate]
fn max_p(x: f64, y: f64) -> f64 {
    f64::max(x, y)
}
fn d_max(x: f64, y: f64) -> (f64, f64) {
    if x > y {
        (1.0, 0.0)
    } else {
        (0.0, 1.0)
    }
}
/// No ties; each order of the two arguments, both signs.
const UNTIED: [(f64, f64); 4] = [(1.0, 2.0), (3.0, -1.0), (-0.5, -2.0), (-4.0, 0.5)];
#[test]
fn max_method() {
    check_binary("x.max(y)", max_m, max_m_grad, max_m_adjoint, d_max, &UNTIED);
}
#[test]
fn max_path() {
    check_binary(
        "f64::max(x, y)",
        max_p,
        max_p_grad,
        max_p_adjoint,
        d_max,
        &UNTIED,
    );
}

#[differentiate]
fn min_m(x: f64, y: f64) -> f64 {
    x.min(y)
}
#[differentiate]
fn min_p(x: f64, y: f64) -> f64 {
    f64::min(x, y)
}
fn d_min(x: f64, y: f64) -> (f64, f64) {
    if x < y {
        (1.0, 0.0)
    } else {
        (0.0, 1.0)
    }
}
#[test]
fn min_method() {
    check_binary("x.min(y)", min_m, min_m_grad, min_m_adjoint, d_min, &UNTIED);
}
#[test]
fn min_path() {
    check_binary(
        "f64::min(x, y)",
        min_p,
        min_p_grad,
        min_p_adjoint,
        d_min,
        &UNTIED,
    );
}

#[differentiate]
fn mul_add_m(x: f64, a: f64, b: f64) -> f64 {
    x.mul_add(a, b)
}
#[differentiate]
fn mul_add_p(x: f64, a: f64, b: f64) -> f64 {
    f64::mul_add(x, a, b)
}
fn d_mul_add(x: f64, a: f64, _b: f64) -> (f64, f64, f64) {
    (a, x, 1.0)
}
const MUL_ADD_AT: [(f64, f64, f64); 3] = [(1.5, -2.0, 0.25), (-0.3, 4.0, 7.0), (2.2, 0.7, -1.1)];
#[test]
fn mul_add_method() {
    check_ternary(
        "x.mul_add(a, b)",
        mul_add_m,
        mul_add_m_grad,
        mul_add_m_adjoint,
        d_mul_add,
        &MUL_ADD_AT,
    );
}
#[test]
fn mul_add_path() {
    check_ternary(
        "f64::mul_add(x, a, b)",
        mul_add_p,
        mul_add_p_grad,
        mul_add_p_adjoint,
        d_mul_add,
        &MUL_ADD_AT,
    );
}

// Binary primitives with one constant argument, including a literal receiver.

#[differentiate]
fn with_constant_arguments(x: f64) -> f64 {
    x.powf(2.5)
        + 2.0_f64.powf(x)
        + 3.0_f64.log(x)
        + x.hypot(1.0)
        + x.mul_add(2.0, 1.0)
        + 0.5_f64.atan2(x)
        + x.atan2(2.0)
        + x.min(10.0)
}
#[test]
fn binary_primitives_with_a_constant_argument() {
    check_unary(
        "x^2.5 + 2^x + log_x(3) + hypot(x, 1) + (2x + 1) + atan2(0.5, x) + atan2(x, 2) + min(x, 10)",
        with_constant_arguments,
        with_constant_arguments_grad,
        with_constant_arguments_adjoint,
        |x: f64| {
            let ln_x = x.ln();
            2.5 * x.powf(1.5) + 2.0_f64.powf(x) * LN_2 - 3.0_f64.ln() / (x * ln_x * ln_x)
                + x / (x * x + 1.0).sqrt()
                + 2.0
                - 0.5 / (x * x + 0.25)
                + 2.0 / (x * x + 4.0)
                + if x < 10.0 { 1.0 } else { 0.0 }
        },
        &POS,
    );
}

#[differentiate]
fn log_literal_base(x: f64) -> f64 {
    x.log(3.0)
}
#[test]
fn log_with_an_unsuffixed_literal_base() {
    check_unary(
        "x.log(3.0)",
        log_literal_base,
        log_literal_base_grad,
        log_literal_base_adjoint,
        |x: f64| 1.0 / (x * 3.0_f64.ln()),
        &POS,
    );
}

// ---------------------------------------------------------------------------
// Conventions at kinks and ties.
// ---------------------------------------------------------------------------

#[test]
fn abs_at_zero_has_derivative_zero() {
    for x in [0.0, -0.0] {
        assert_eq!(abs_m_grad(x), (0.0, 0.0), "x.abs() at {x:?}");
        assert_eq!(abs_p_grad(x), (0.0, 0.0), "f64::abs(x) at {x:?}");
        assert_eq!(abs_m_adjoint(x, 2.5), 0.0, "x.abs() adjoint at {x:?}");
    }
}

#[test]
fn max_tie_gives_the_derivative_to_the_first_argument() {
    for t in [-2.0, 0.0, 1.5] {
        assert_eq!(max_m_grad(t, t), (t, (1.0, 0.0)), "x.max(y) at x = y = {t}");
        assert_eq!(
            max_p_grad(t, t),
            (t, (1.0, 0.0)),
            "f64::max(x, y) at x = y = {t}"
        );
        assert_eq!(
            max_m_adjoint(t, t, 2.5),
            (2.5, 0.0),
            "x.max(y) adjoint at x = y = {t}"
        );
    }
}

#[test]
fn min_tie_gives_the_derivative_to_the_first_argument() {
    for t in [-2.0, 0.0, 1.5] {
        assert_eq!(min_m_grad(t, t), (t, (1.0, 0.0)), "x.min(y) at x = y = {t}");
        assert_eq!(
            min_p_grad(t, t),
            (t, (1.0, 0.0)),
            "f64::min(x, y) at x = y = {t}"
        );
        assert_eq!(
            min_m_adjoint(t, t, 2.5),
            (2.5, 0.0),
            "x.min(y) adjoint at x = y = {t}"
        );
    }
}

#[differentiate]
fn max_with_itself(x: f64) -> f64 {
    x.max(x) + x.min(x)
}
#[test]
fn max_and_min_of_a_variable_with_itself() {
    // Whichever argument receives the derivative, the total is 1 for each.
    for x in [-1.5, 0.0, 2.0] {
        assert_eq!(max_with_itself(x), 2.0 * x);
        assert_eq!(max_with_itself_grad(x), (2.0 * x, 2.0), "at {x}");
    }
}

#[differentiate]
fn relu_times(x: f64, y: f64) -> f64 {
    x.max(0.0) * y
}
#[test]
fn relu() {
    check_binary(
        "x.max(0.0) * y",
        relu_times,
        relu_times_grad,
        relu_times_adjoint,
        |x: f64, y: f64| if x > 0.0 { (y, x) } else { (0.0, 0.0) },
        &[(1.5, 2.0), (-0.7, 3.0), (0.2, -1.0)],
    );
}

// ---------------------------------------------------------------------------
// Composite expressions: several primitives and the chain rule at once.
// ---------------------------------------------------------------------------

#[differentiate]
fn composite(x: f64, y: f64) -> f64 {
    (x.sin() * y.exp()).ln_1p() / x.hypot(y)
}
#[test]
fn composite_ln_1p_sin_exp_over_hypot() {
    check_binary(
        "(x.sin() * y.exp()).ln_1p() / x.hypot(y)",
        composite,
        composite_grad,
        composite_adjoint,
        |x: f64, y: f64| {
            let u = x.sin() * y.exp();
            let l = (1.0 + u).ln();
            let h = (x * x + y * y).sqrt();
            let h3 = h * h * h;
            (
                x.cos() * y.exp() / (1.0 + u) / h - l * x / h3,
                u / (1.0 + u) / h - l * y / h3,
            )
        },
        &[(0.7, 0.3), (1.9, -1.2), (2.5, 0.8)],
    );
}

#[differentiate]
fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}
#[test]
fn composite_logistic() {
    check_unary(
        "1 / (1 + exp(-x))",
        logistic,
        logistic_grad,
        logistic_adjoint,
        |x: f64| {
            let s = 1.0 / (1.0 + (-x).exp());
            s * (1.0 - s)
        },
        &ANY,
    );
}

#[differentiate]
fn softplus(x: f64) -> f64 {
    (1.0 + x.exp()).ln()
}
#[test]
fn composite_softplus() {
    check_unary(
        "ln(1 + exp(x))",
        softplus,
        softplus_grad,
        softplus_adjoint,
        |x: f64| x.exp() / (1.0 + x.exp()),
        &ANY,
    );
}

#[differentiate]
fn powf_atan_cos(x: f64, y: f64) -> f64 {
    x.powf(y).sqrt() * y.atan() - (x * y).cos() / (1.0 + x * x)
}
#[test]
fn composite_powf_sqrt_atan_cos() {
    check_binary(
        "x.powf(y).sqrt() * y.atan() - (x * y).cos() / (1 + x^2)",
        powf_atan_cos,
        powf_atan_cos_grad,
        powf_atan_cos_adjoint,
        |x: f64, y: f64| {
            let r = x.powf(y).sqrt();
            let q = 1.0 + x * x;
            let dr_dx = 0.5 * y * x.powf(0.5 * y - 1.0);
            let dr_dy = 0.5 * r * x.ln();
            (
                dr_dx * y.atan() - (-(x * y).sin() * y * q - (x * y).cos() * 2.0 * x) / (q * q),
                dr_dy * y.atan() + r / (1.0 + y * y) + (x * y).sin() * x / q,
            )
        },
        &[(0.8, 1.3), (2.1, -0.7), (3.5, 2.2)],
    );
}

#[differentiate]
fn normal_pdf(x: f64, mu: f64, s: f64) -> f64 {
    (-(x - mu) * (x - mu) / (2.0 * s * s)).exp() / (s * (2.0 * PI).sqrt())
}
#[test]
fn composite_normal_density() {
    check_ternary(
        "normal density in x, mean and standard deviation",
        normal_pdf,
        normal_pdf_grad,
        normal_pdf_adjoint,
        |x: f64, mu: f64, s: f64| {
            let z = (x - mu) / s;
            let p = (-0.5 * z * z).exp() / (s * (2.0 * PI).sqrt());
            (-p * z / s, p * z / s, p * (z * z - 1.0) / s)
        },
        &[(0.3, -0.2, 1.5), (2.0, 1.0, 0.7), (-1.0, 0.5, 2.0)],
    );
}

#[differentiate]
fn hyperbolic_mix(x: f64, y: f64) -> f64 {
    x.tanh() * y.cosh() + (x / y).atan() - y.log2() * x.cbrt()
}
#[test]
fn composite_tanh_cosh_atan_log2_cbrt() {
    check_binary(
        "tanh(x) cosh(y) + atan(x / y) - log2(y) cbrt(x)",
        hyperbolic_mix,
        hyperbolic_mix_grad,
        hyperbolic_mix_adjoint,
        |x: f64, y: f64| {
            let r2 = x * x + y * y;
            (
                y.cosh() / (x.cosh() * x.cosh()) + y / r2 - y.log2() / (3.0 * x.cbrt() * x.cbrt()),
                x.tanh() * y.sinh() - x / r2 - x.cbrt() / (y * LN_2),
            )
        },
        &[(0.6, 1.4), (-1.3, 0.4), (2.2, 3.0)],
    );
}

#[differentiate]
fn floor_times(x: f64) -> f64 {
    x.floor() * x + x.signum() * x.round()
}
#[test]
fn composite_with_piecewise_constant_factors() {
    // Only the smooth factor x contributes: d/dx = floor(x).
    check_unary(
        "x.floor() * x + x.signum() * x.round()",
        floor_times,
        floor_times_grad,
        floor_times_adjoint,
        |x: f64| x.floor(),
        &ANY,
    );
}

// ---------------------------------------------------------------------------
// Statements: let, shadowing, reassignment, compound assignment.
// ---------------------------------------------------------------------------

#[differentiate]
fn lets(x: f64, y: f64) -> f64 {
    let a = x * y;
    let b = a.sin() + y;
    let c: f64 = b * b - x;
    c.exp2() / (1.0 + c * c)
}
#[test]
fn let_chain() {
    check_binary(
        "let chain",
        lets,
        lets_grad,
        lets_adjoint,
        |x: f64, y: f64| {
            let b = (x * y).sin() + y;
            let c = b * b - x;
            let df_dc = c.exp2() * LN_2 / (1.0 + c * c)
                - c.exp2() * 2.0 * c / ((1.0 + c * c) * (1.0 + c * c));
            let dc_dx = 2.0 * b * (x * y).cos() * y - 1.0;
            let dc_dy = 2.0 * b * ((x * y).cos() * x + 1.0);
            (df_dc * dc_dx, df_dc * dc_dy)
        },
        &[(0.4, 0.9), (-0.8, 0.3), (1.3, -0.6)],
    );
}

#[differentiate]
fn shadowing(x: f64) -> f64 {
    let x = x * 2.0;
    let x = x.sin();
    x * x
}
#[test]
fn shadowed_parameter() {
    // sin(2x)^2, whose derivative is 4 sin(2x) cos(2x) = 2 sin(4x).
    check_unary(
        "let x = x * 2.0; let x = x.sin(); x * x",
        shadowing,
        shadowing_grad,
        shadowing_adjoint,
        |x: f64| 2.0 * (4.0 * x).sin(),
        &ANY,
    );
}

#[differentiate]
fn shadowing_two(x: f64, y: f64) -> f64 {
    let y: f64 = y + x;
    let x = x * y;
    let y = x - y;
    x * y
}
#[test]
fn shadowing_both_parameters_in_turn() {
    // With s = x + y: x1 = x s, y2 = x1 - s, f = x1 y2 = (x^2 - x) s^2.
    check_binary(
        "interleaved shadowing of x and y",
        shadowing_two,
        shadowing_two_grad,
        shadowing_two_adjoint,
        |x: f64, y: f64| {
            let s = x + y;
            (
                (2.0 * x - 1.0) * s * s + (x * x - x) * 2.0 * s,
                (x * x - x) * 2.0 * s,
            )
        },
        &[(0.4, 0.9), (-0.8, 0.3), (1.3, -2.6)],
    );
}

#[differentiate]
fn square_plus(x: f64) -> f64 {
    let mut s = x;
    s *= s;
    s += x;
    s
}
#[test]
fn compound_assignment_with_aliasing() {
    check_unary(
        "let mut s = x; s *= s; s += x; s",
        square_plus,
        square_plus_grad,
        square_plus_adjoint,
        |x: f64| 2.0 * x + 1.0,
        &ANY,
    );
}

#[differentiate]
fn sub_div_assign(x: f64, y: f64) -> f64 {
    let mut t = x * y;
    t -= y;
    t /= x + 1.0;
    t
}
#[test]
fn compound_subtract_and_divide() {
    // t = y (x - 1) / (x + 1).
    check_binary(
        "t = x * y; t -= y; t /= x + 1",
        sub_div_assign,
        sub_div_assign_grad,
        sub_div_assign_adjoint,
        |x: f64, y: f64| (2.0 * y / ((x + 1.0) * (x + 1.0)), (x - 1.0) / (x + 1.0)),
        &[(0.4, 0.9), (-0.3, 2.0), (3.0, -1.5)],
    );
}

#[differentiate]
fn accumulate(x: f64, y: f64) -> f64 {
    let mut acc = 0.0;
    acc += x;
    acc *= y;
    acc -= x * x;
    acc /= 2.0;
    acc
}
#[test]
fn compound_assignment_chain_from_zero() {
    // acc = (x y - x^2) / 2.
    check_binary(
        "acc = 0; acc += x; acc *= y; acc -= x * x; acc /= 2",
        accumulate,
        accumulate_grad,
        accumulate_adjoint,
        |x: f64, y: f64| ((y - 2.0 * x) / 2.0, x / 2.0),
        &PAIRS,
    );
}

#[differentiate]
fn doubled(x: f64, y: f64) -> f64 {
    let mut s = x * y;
    s += s;
    s
}
#[test]
fn compound_add_to_itself() {
    check_binary(
        "s = x * y; s += s",
        doubled,
        doubled_grad,
        doubled_adjoint,
        |x: f64, y: f64| (2.0 * y, 2.0 * x),
        &PAIRS,
    );
}

#[differentiate]
fn reassign(x: f64, y: f64) -> f64 {
    let mut a = x;
    a = a * y + 1.0;
    a = a.sin();
    a
}
#[test]
fn plain_reassignment() {
    check_binary(
        "a = x; a = a * y + 1; a = a.sin()",
        reassign,
        reassign_grad,
        reassign_adjoint,
        |x: f64, y: f64| {
            let c = (x * y + 1.0).cos();
            (y * c, x * c)
        },
        &PAIRS,
    );
}

// ---------------------------------------------------------------------------
// Constants and literals.
// ---------------------------------------------------------------------------

const GAIN: f64 = 1.75;

#[differentiate]
fn constants(x: f64) -> f64 {
    GAIN * x * PI + std::f64::consts::E - x / GAIN
}
#[test]
fn user_const_and_std_consts() {
    check_unary(
        "GAIN * x * PI + E - x / GAIN",
        constants,
        constants_grad,
        constants_adjoint,
        |_x: f64| GAIN * PI - 1.0 / GAIN,
        &ANY,
    );
}

#[differentiate]
fn full_path_constants(x: f64) -> f64 {
    (x * std::f64::consts::PI).sin() * std::f64::consts::FRAC_1_SQRT_2
}
#[test]
fn constants_by_full_path() {
    check_unary(
        "sin(PI x) / sqrt(2)",
        full_path_constants,
        full_path_constants_grad,
        full_path_constants_adjoint,
        |x: f64| PI * (PI * x).cos() * std::f64::consts::FRAC_1_SQRT_2,
        &ANY,
    );
}

#[differentiate]
fn literals(x: f64) -> f64 {
    2.0_f64 * x + 1e-1 * x * x - 3. * x + 0.5f64
}
#[test]
fn float_literal_forms() {
    check_unary(
        "2.0_f64 * x + 1e-1 * x * x - 3. * x + 0.5f64",
        literals,
        literals_grad,
        literals_adjoint,
        |x: f64| 2.0 + 0.2 * x - 3.0,
        &ANY,
    );
}

#[differentiate]
fn constant_function(x: f64) -> f64 {
    let _unused = x;
    GAIN * 2.0
}
#[test]
fn constant_result_has_zero_gradient() {
    assert_eq!(constant_function(1.3), 3.5);
    assert_eq!(constant_function_grad(1.3), (3.5, 0.0));
    assert_eq!(constant_function_adjoint(1.3, 2.5), 0.0);
}

// ---------------------------------------------------------------------------
// Integer parameters: constants, usable in `as f64` casts and powi.
// ---------------------------------------------------------------------------

#[differentiate]
fn scaled_power(x: f64, n: i32) -> f64 {
    (n as f64) * x.powi(n)
}
#[test]
fn i32_parameter_in_cast_and_powi() {
    for n in [-2, 0, 1, 3, 5] {
        check_unary(
            &format!("n * x^n with n = {n}"),
            |x| scaled_power(x, n),
            |x| scaled_power_grad(x, n),
            |x, d| scaled_power_adjoint(x, n, d),
            |x: f64| (n * n) as f64 * x.powi(n - 1),
            &ANY,
        );
    }
}

#[differentiate]
fn usize_param(x: f64, k: usize) -> f64 {
    x * k as f64 + (k as f64).sqrt() * x.sin()
}
#[test]
fn usize_parameter() {
    for k in [0_usize, 1, 4, 9] {
        check_unary(
            &format!("x k + sqrt(k) sin(x) with k = {k}"),
            |x| usize_param(x, k),
            |x| usize_param_grad(x, k),
            |x, d| usize_param_adjoint(x, k, d),
            |x: f64| k as f64 + (k as f64).sqrt() * x.cos(),
            &ANY,
        );
    }
}

#[differentiate]
fn mixed_params(x: f64, n: i32, y: f64, m: i64) -> f64 {
    x * n as f64 + y.powi(n) * m as f64
}
#[test]
fn integer_parameters_between_float_parameters() {
    let (n, m) = (3, -2_i64);
    check_binary(
        "x n + y^n m",
        |x, y| mixed_params(x, n, y, m),
        |x, y| mixed_params_grad(x, n, y, m),
        |x, y, d| mixed_params_adjoint(x, n, y, m, d),
        |_x: f64, y: f64| (n as f64, (n as f64) * y.powi(n - 1) * m as f64),
        &PAIRS,
    );
}

// ---------------------------------------------------------------------------
// Nested blocks and return.
// ---------------------------------------------------------------------------

#[differentiate]
fn block_value(x: f64, y: f64) -> f64 {
    let z = {
        let t = x * y;
        t + x.sin()
    };
    z * 2.0
}
#[test]
fn block_as_a_value() {
    check_binary(
        "let z = { let t = x * y; t + sin(x) }; 2 z",
        block_value,
        block_value_grad,
        block_value_adjoint,
        |x: f64, y: f64| (2.0 * (y + x.cos()), 2.0 * x),
        &PAIRS,
    );
}

#[differentiate]
fn block_scoping(x: f64) -> f64 {
    let r = {
        let x = x * 3.0;
        x * x
    };
    r + x
}
#[test]
fn shadowing_inside_a_block_does_not_leak() {
    // 9 x^2 + x: the x after the block is the parameter again.
    check_unary(
        "let r = { let x = 3 x; x * x }; r + x",
        block_scoping,
        block_scoping_grad,
        block_scoping_adjoint,
        |x: f64| 18.0 * x + 1.0,
        &ANY,
    );
}

#[differentiate]
fn block_mutates_outer(x: f64, y: f64) -> f64 {
    let mut s = x;
    {
        s *= y;
        s += 1.0;
    }
    s * x
}
#[test]
fn block_statement_updates_an_outer_variable() {
    // (x y + 1) x.
    check_binary(
        "s = x; { s *= y; s += 1 } s * x",
        block_mutates_outer,
        block_mutates_outer_grad,
        block_mutates_outer_adjoint,
        |x: f64, y: f64| (2.0 * x * y + 1.0, x * x),
        &PAIRS,
    );
}

#[differentiate]
fn nested_blocks(x: f64, y: f64) -> f64 {
    let a = {
        let b = { x.exp() };
        b * y
    };
    a - y
}
#[test]
fn blocks_nested_two_deep() {
    check_binary(
        "{ { e^x } * y } - y",
        nested_blocks,
        nested_blocks_grad,
        nested_blocks_adjoint,
        |x: f64, y: f64| (x.exp() * y, x.exp() - 1.0),
        &PAIRS,
    );
}

#[differentiate]
#[allow(clippy::needless_return)]
fn return_statement(x: f64, y: f64) -> f64 {
    let a = x * y;
    return a.sin() + y;
}
#[test]
fn return_at_top_level() {
    check_binary(
        "let a = x y; return sin(a) + y;",
        return_statement,
        return_statement_grad,
        return_statement_adjoint,
        |x: f64, y: f64| ((x * y).cos() * y, (x * y).cos() * x + 1.0),
        &PAIRS,
    );
}

#[differentiate]
#[allow(clippy::needless_return)]
fn return_tail(x: f64) -> f64 {
    let a = x - 1.0;
    return a.exp() * x;
}
#[test]
fn return_as_the_tail_expression() {
    check_unary(
        "return exp(x - 1) x",
        return_tail,
        return_tail_grad,
        return_tail_adjoint,
        |x: f64| (x - 1.0).exp() * (x + 1.0),
        &ANY,
    );
}

// ---------------------------------------------------------------------------
// Unary minus, parentheses and repeated operands.
// ---------------------------------------------------------------------------

#[differentiate]
fn negations(x: f64, y: f64) -> f64 {
    -x * y + -(x.sin()) - -(x * -y) - x.powi(2)
}
#[test]
fn unary_minus() {
    // (-x) y - sin x - x y - x^2, as `-x.powi(2)` is -(x^2).
    check_binary(
        "-x * y + -(x.sin()) - -(x * -y) - x.powi(2)",
        negations,
        negations_grad,
        negations_adjoint,
        |x: f64, y: f64| (-2.0 * y - x.cos() - 2.0 * x, -2.0 * x),
        &PAIRS,
    );
}

#[differentiate]
fn neg_method_precedence(x: f64) -> f64 {
    -x.exp() + (-x).exp()
}
#[test]
fn unary_minus_binds_looser_than_a_method_call() {
    check_unary(
        "-x.exp() + (-x).exp()",
        neg_method_precedence,
        neg_method_precedence_grad,
        neg_method_precedence_adjoint,
        |x: f64| -x.exp() - (-x).exp(),
        &ANY,
    );
}

#[differentiate]
fn cube(x: f64) -> f64 {
    x * x * x
}
#[test]
fn repeated_operand_cube() {
    check_unary(
        "x * x * x",
        cube,
        cube_grad,
        cube_adjoint,
        |x: f64| 3.0 * x * x,
        &ANY,
    );
}

#[differentiate]
fn repeated_pairs(x: f64, y: f64) -> f64 {
    x * y * x * y + (x + x + x) - x / 2.0 + (y + y) * x
}
#[test]
fn repeated_operands() {
    check_binary(
        "x y x y + (x + x + x) - x / 2 + (y + y) x",
        repeated_pairs,
        repeated_pairs_grad,
        repeated_pairs_adjoint,
        |x: f64, y: f64| (2.0 * x * y * y + 2.5 + 2.0 * y, 2.0 * x * x * y + 2.0 * x),
        &PAIRS,
    );
}

#[differentiate]
fn parenthesised(x: f64, y: f64) -> f64 {
    ((x + y) * (x - y)) / ((x * y) + 1.0)
}
#[test]
fn parentheses_and_quotient() {
    // (x^2 - y^2) / (x y + 1).
    check_binary(
        "((x + y) * (x - y)) / ((x * y) + 1)",
        parenthesised,
        parenthesised_grad,
        parenthesised_adjoint,
        |x: f64, y: f64| {
            let (n, d) = (x * x - y * y, x * y + 1.0);
            (
                (2.0 * x * d - n * y) / (d * d),
                (-2.0 * y * d - n * x) / (d * d),
            )
        },
        &[(0.4, 0.9), (-0.3, 2.0), (3.0, 1.5)],
    );
}

#[differentiate]
fn identity(x: f64) -> f64 {
    x
}
#[test]
fn identity_function() {
    check_unary(
        "x",
        identity,
        identity_grad,
        identity_adjoint,
        |_x: f64| 1.0,
        &ANY,
    );
}
