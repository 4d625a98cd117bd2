//! The primitives of `#[differentiate]` on `f32`: every unary function in
//! method form, a few in path form, every binary one in both forms, `powi`,
//! constants, and a composite, each checked against the derivative written
//! out by hand and against finite differences computed in `f32`.
//!
//! Tolerances (see `support`): the generated and hand-written derivatives,
//! both evaluated in `f32`, must agree to a relative `1e-5` (a few ulps);
//! the finite-difference check uses `1e-3`, above the `~2e-5` noise of an
//! `f32` centered difference. The points keep the third derivative moderate
//! (no `x` close to a pole or the edge of the domain), since the `f32`
//! difference step is about `5e-3 * max(1, |x|)`.

mod support;

use std::f32::consts::{LN_10, LN_2, PI};

use gradmacro::differentiate;
use support::{check_binary, check_ternary, check_unary};

const ANY: [f32; 5] = [-2.3, -0.6, 0.35, 1.1, 2.9];
/// For tanh: away from the flat tails, where `1 - tanh^2` cancels in `f32`.
const TANH_AT: [f32; 4] = [-1.5, -0.4, 0.3, 1.2];
const TAN_AT: [f32; 4] = [-1.2, -0.3, 0.5, 1.1];
const UNIT: [f32; 4] = [-0.8, -0.45, 0.2, 0.75];
const POS: [f32; 4] = [0.3, 0.7, 2.5, 40.0];
const ABOVE_ONE: [f32; 4] = [1.2, 1.5, 2.0, 7.5];
const ABOVE_MINUS_ONE: [f32; 4] = [-0.6, -1e-3, 0.5, 9.0];
const PAIRS: [(f32, f32); 4] = [(1.0, 2.0), (-0.5, 1.5), (2.0, -1.0), (-1.2, -0.7)];
const POS_PAIRS: [(f32, f32); 4] = [(0.5, 2.3), (1.7, -0.8), (3.0, 0.5), (2.2, 3.1)];

// ---------------------------------------------------------------------------
// Unary primitives, method form.
// ---------------------------------------------------------------------------

#[differentiate]
fn sin_m(x: f32) -> f32 {
    x.sin()
}
#[test]
fn sin() {
    check_unary(
        "x.sin()",
        sin_m,
        sin_m_grad,
        sin_m_adjoint,
        |x: f32| x.cos(),
        &ANY,
    );
}

#[differentiate]
fn cos_m(x: f32) -> f32 {
    x.cos()
}
#[test]
fn cos() {
    check_unary(
        "x.cos()",
        cos_m,
        cos_m_grad,
        cos_m_adjoint,
        |x: f32| -x.sin(),
        &ANY,
    );
}

#[differentiate]
fn tan_m(x: f32) -> f32 {
    x.tan()
}
#[test]
fn tan() {
    check_unary(
        "x.tan()",
        tan_m,
        tan_m_grad,
        tan_m_adjoint,
        |x: f32| 1.0 / (x.cos() * x.cos()),
        &TAN_AT,
    );
}

#[differentiate]
fn asin_m(x: f32) -> f32 {
    x.asin()
}
#[test]
fn asin() {
    check_unary(
        "x.asin()",
        asin_m,
        asin_m_grad,
        asin_m_adjoint,
        |x: f32| 1.0 / (1.0 - x * x).sqrt(),
        &UNIT,
    );
}

#[differentiate]
fn acos_m(x: f32) -> f32 {
    x.acos()
}
#[test]
fn acos() {
    check_unary(
        "x.acos()",
        acos_m,
        acos_m_grad,
        acos_m_adjoint,
        |x: f32| -1.0 / (1.0 - x * x).sqrt(),
        &UNIT,
    );
}

#[differentiate]
fn atan_m(x: f32) -> f32 {
    x.atan()
}
#[test]
fn atan() {
    check_unary(
        "x.atan()",
        atan_m,
        atan_m_grad,
        atan_m_adjoint,
        |x: f32| 1.0 / (1.0 + x * x),
        &ANY,
    );
}

#[differentiate]
fn sinh_m(x: f32) -> f32 {
    x.sinh()
}
#[test]
fn sinh() {
    check_unary(
        "x.sinh()",
        sinh_m,
        sinh_m_grad,
        sinh_m_adjoint,
        |x: f32| x.cosh(),
        &ANY,
    );
}

#[differentiate]
fn cosh_m(x: f32) -> f32 {
    x.cosh()
}
#[test]
fn cosh() {
    check_unary(
        "x.cosh()",
        cosh_m,
        cosh_m_grad,
        cosh_m_adjoint,
        |x: f32| x.sinh(),
        &ANY,
    );
}

#[differentiate]
fn tanh_m(x: f32) -> f32 {
    x.tanh()
}
#[test]
fn tanh() {
    check_unary(
        "x.tanh()",
        tanh_m,
        tanh_m_grad,
        tanh_m_adjoint,
        |x: f32| 1.0 / (x.cosh() * x.cosh()),
        &TANH_AT,
    );
}

#[differentiate]
fn asinh_m(x: f32) -> f32 {
    x.asinh()
}
#[test]
fn asinh() {
    check_unary(
        "x.asinh()",
        asinh_m,
        asinh_m_grad,
        asinh_m_adjoint,
        |x: f32| 1.0 / (x * x + 1.0).sqrt(),
        &ANY,
    );
}

#[differentiate]
fn acosh_m(x: f32) -> f32 {
    x.acosh()
}
#[test]
fn acosh() {
    check_unary(
        "x.acosh()",
        acosh_m,
        acosh_m_grad,
        acosh_m_adjoint,
        |x: f32| 1.0 / (x * x - 1.0).sqrt(),
        &ABOVE_ONE,
    );
}

#[differentiate]
fn atanh_m(x: f32) -> f32 {
    x.atanh()
}
#[test]
fn atanh() {
    check_unary(
        "x.atanh()",
        atanh_m,
        atanh_m_grad,
        atanh_m_adjoint,
        |x: f32| 1.0 / (1.0 - x * x),
        &UNIT,
    );
}

#[differentiate]
fn exp_m(x: f32) -> f32 {
    x.exp()
}
#[test]
fn exp() {
    check_unary(
        "x.exp()",
        exp_m,
        exp_m_grad,
        exp_m_adjoint,
        |x: f32| x.exp(),
        &ANY,
    );
}

#[differentiate]
fn exp2_m(x: f32) -> f32 {
    x.exp2()
}
#[test]
fn exp2() {
    check_unary(
        "x.exp2()",
        exp2_m,
        exp2_m_grad,
        exp2_m_adjoint,
        |x: f32| x.exp2() * LN_2,
        &ANY,
    );
}

#[differentiate]
fn exp_m1_m(x: f32) -> f32 {
    x.exp_m1()
}
#[test]
fn exp_m1() {
    check_unary(
        "x.exp_m1()",
        exp_m1_m,
        exp_m1_m_grad,
        exp_m1_m_adjoint,
        |x: f32| x.exp(),
        &[-2.3, -0.6, -1e-3, 0.35, 1.1, 2.9],
    );
}

#[differentiate]
fn ln_m(x: f32) -> f32 {
    x.ln()
}
#[test]
fn ln() {
    check_unary(
        "x.ln()",
        ln_m,
        ln_m_grad,
        ln_m_adjoint,
        |x: f32| 1.0 / x,
        &POS,
    );
}

#[differentiate]
fn ln_1p_m(x: f32) -> f32 {
    x.ln_1p()
}
#[test]
fn ln_1p() {
    check_unary(
        "x.ln_1p()",
        ln_1p_m,
        ln_1p_m_grad,
        ln_1p_m_adjoint,
        |x: f32| 1.0 / (1.0 + x),
        &ABOVE_MINUS_ONE,
    );
}

#[differentiate]
fn log2_m(x: f32) -> f32 {
    x.log2()
}
#[test]
fn log2() {
    check_unary(
        "x.log2()",
        log2_m,
        log2_m_grad,
        log2_m_adjoint,
        |x: f32| 1.0 / (x * LN_2),
        &POS,
    );
}

#[differentiate]
fn log10_m(x: f32) -> f32 {
    x.log10()
}
#[test]
fn log10() {
    check_unary(
        "x.log10()",
        log10_m,
        log10_m_grad,
        log10_m_adjoint,
        |x: f32| 1.0 / (x * LN_10),
        &POS,
    );
}

#[differentiate]
fn sqrt_m(x: f32) -> f32 {
    x.sqrt()
}
#[test]
fn sqrt() {
    check_unary(
        "x.sqrt()",
        sqrt_m,
        sqrt_m_grad,
        sqrt_m_adjoint,
        |x: f32| 0.5 / x.sqrt(),
        &POS,
    );
}

#[differentiate]
fn cbrt_m(x: f32) -> f32 {
    x.cbrt()
}
#[test]
fn cbrt() {
    check_unary(
        "x.cbrt()",
        cbrt_m,
        cbrt_m_grad,
        cbrt_m_adjoint,
        |x: f32| 1.0 / (3.0 * x.cbrt() * x.cbrt()),
        &ANY,
    );
}

#[differentiate]
fn abs_m(x: f32) -> f32 {
    x.abs()
}
#[test]
fn abs() {
    check_unary(
        "x.abs()",
        abs_m,
        abs_m_grad,
        abs_m_adjoint,
        |x: f32| if x > 0.0 { 1.0 } else { -1.0 },
        &ANY,
    );
}
#[test]
fn abs_at_zero_has_derivative_zero() {
    assert_eq!(abs_m_grad(0.0), (0.0, 0.0));
    assert_eq!(abs_m_grad(-0.0), (0.0, 0.0));
}

#[differentiate]
fn recip_m(x: f32) -> f32 {
    x.recip()
}
#[test]
fn recip() {
    check_unary(
        "x.recip()",
        recip_m,
        recip_m_grad,
        recip_m_adjoint,
        |x: f32| -1.0 / (x * x),
        &ANY,
    );
}

#[differentiate]
fn to_degrees_m(x: f32) -> f32 {
    x.to_degrees()
}
#[test]
fn to_degrees() {
    check_unary(
        "x.to_degrees()",
        to_degrees_m,
        to_degrees_m_grad,
        to_degrees_m_adjoint,
        |_x: f32| 180.0 / PI,
        &ANY,
    );
}

#[differentiate]
fn to_radians_m(x: f32) -> f32 {
    x.to_radians()
}
#[test]
fn to_radians() {
    check_unary(
        "x.to_radians()",
        to_radians_m,
        to_radians_m_grad,
        to_radians_m_adjoint,
        |_x: f32| PI / 180.0,
        &[-100.0, 30.0, 271.5],
    );
}

#[differentiate]
fn piecewise_constant(x: f32) -> f32 {
    x.floor() + x.ceil() + x.round() + x.trunc() + x.signum()
}
#[test]
fn floor_ceil_round_trunc_signum() {
    check_unary(
        "x.floor() + x.ceil() + x.round() + x.trunc() + x.signum()",
        piecewise_constant,
        piecewise_constant_grad,
        piecewise_constant_adjoint,
        |_x: f32| 0.0,
        &ANY,
    );
}

// A few unary primitives in path form.

#[differentiate]
fn path_forms(x: f32) -> f32 {
    f32::sin(x) + f32::exp(x) * f32::sqrt(x) - f32::ln(x) / f32::tanh(x)
}
#[test]
fn unary_path_forms() {
    check_unary(
        "f32::sin(x) + f32::exp(x) * f32::sqrt(x) - f32::ln(x) / f32::tanh(x)",
        path_forms,
        path_forms_grad,
        path_forms_adjoint,
        |x: f32| {
            let t = x.tanh();
            x.cos() + x.exp() * x.sqrt() + x.exp() * 0.5 / x.sqrt()
                - (t / x - x.ln() / (x.cosh() * x.cosh())) / (t * t)
        },
        &[0.3, 0.7, 1.3, 2.1],
    );
}

// ---------------------------------------------------------------------------
// powi.
// ---------------------------------------------------------------------------

#[differentiate]
fn powi_3(x: f32) -> f32 {
    x.powi(3)
}
#[test]
fn powi_literal() {
    check_unary(
        "x.powi(3)",
        powi_3,
        powi_3_grad,
        powi_3_adjoint,
        |x: f32| 3.0 * x * x,
        &ANY,
    );
}

#[differentiate]
fn powi_n(x: f32, n: i32) -> f32 {
    x.powi(n)
}
#[test]
fn powi_parameter() {
    for n in [-2, 0, 1, 4] {
        check_unary(
            &format!("x.powi(n) with n = {n}"),
            |x| powi_n(x, n),
            |x| powi_n_grad(x, n),
            |x, d| powi_n_adjoint(x, n, d),
            |x: f32| n as f32 * x.powi(n - 1),
            &ANY,
        );
    }
}

// ---------------------------------------------------------------------------
// Binary primitives, method and path form, with respect to both arguments.
// ---------------------------------------------------------------------------

#[differentiate]
fn atan2_m(y: f32, x: f32) -> f32 {
    y.atan2(x)
}
#[differentiate]
fn atan2_p(y: f32, x: f32) -> f32 {
    f32::atan2(y, x)
}
fn d_atan2(y: f32, x: f32) -> (f32, f32) {
    let r2 = x * x + y * y;
    (x / r2, -y / r2)
}
#[test]
fn atan2() {
    check_binary(
        "y.atan2(x)",
        atan2_m,
        atan2_m_grad,
        atan2_m_adjoint,
        d_atan2,
        &PAIRS,
    );
    check_binary(
        "f32::atan2(y, x)",
        atan2_p,
        atan2_p_grad,
        atan2_p_adjoint,
        d_atan2,
        &PAIRS,
    );
}

#[differentiate]
fn powf_m(x: f32, y: f32) -> f32 {
    x.powf(y)
}
#[differentiate]
fn powf_p(x: f32, y: f32) -> f32 {
    f32::powf(x, y)
}
fn d_powf(x: f32, y: f32) -> (f32, f32) {
    (y * x.powf(y - 1.0), x.powf(y) * x.ln())
}
#[test]
fn powf() {
    check_binary(
        "x.powf(y)",
        powf_m,
        powf_m_grad,
        powf_m_adjoint,
        d_powf,
        &POS_PAIRS,
    );
    check_binary(
        "f32::powf(x, y)",
        powf_p,
        powf_p_grad,
        powf_p_adjoint,
        d_powf,
        &POS_PAIRS,
    );
}

#[differentiate]
fn hypot_m(x: f32, y: f32) -> f32 {
    x.hypot(y)
}
#[differentiate]
fn hypot_p(x: f32, y: f32) -> f32 {
    f32::hypot(x, y)
}
fn d_hypot(x: f32, y: f32) -> (f32, f32) {
    let r = (x * x + y * y).sqrt();
    (x / r, y / r)
}
#[test]
fn hypot() {
    check_binary(
        "x.hypot(y)",
        hypot_m,
        hypot_m_grad,
        hypot_m_adjoint,
        d_hypot,
        &PAIRS,
    );
    check_binary(
        "f32::hypot(x, y)",
        hypot_p,
        hypot_p_grad,
        hypot_p_adjoint,
        d_hypot,
        &PAIRS,
    );
}

#[differentiate]
fn log_m(x: f32, b: f32) -> f32 {
    x.log(b)
}
#[differentiate]
fn log_p(x: f32, b: f32) -> f32 {
    f32::log(x, b)
}
fn d_log(x: f32, b: f32) -> (f32, f32) {
    let lb = b.ln();
    (1.0 / (x * lb), -x.ln() / (b * lb * lb))
}
const LOG_AT: [(f32, f32); 4] = [(2.0, 10.0), (0.3, 2.5), (7.0, 0.5), (5.5, 1.7)];
#[test]
fn log() {
    check_binary("x.log(b)", log_m, log_m_grad, log_m_adjoint, d_log, &LOG_AT);
    check_binary(
        "f32::log(x, b)",
        log_p,
        log_p_grad,
        log_p_adjoint,
        d_log,
        &LOG_AT,
    );
}

#[differentiate]
fn max_m(x: f32, y: f32) -> f32 {
    x.max(y)
}
#[differentiate]
fn max_p(x: f32, y: f32) -> f32 {
    f32::max(x, y)
}
#[differentiate]
fn min_m(x: f32, y: f32) -> f32 {
    x.min(y)
}
#[differentiate]
fn min_p(x: f32, y: f32) -> f32 {
    f32::min(x, y)
}
const UNTIED: [(f32, f32); 4] = [(1.0, 2.0), (3.0, -1.0), (-0.5, -2.0), (-4.0, 0.5)];
fn d_max(x: f32, y: f32) -> (f32, f32) {
    if x > y {
        (1.0, 0.0)
    } else {
        (0.0, 1.0)
    }
}
fn d_min(x: f32, y: f32) -> (f32, f32) {
    if x < y {
        (1.0, 0.0)
    } else {
        (0.0, 1.0)
    }
}
#[test]
fn max() {
    check_binary("x.max(y)", max_m, max_m_grad, max_m_adjoint, d_max, &UNTIED);
    check_binary(
        "f32::max(x, y)",
        max_p,
        max_p_grad,
        max_p_adjoint,
        d_max,
        &UNTIED,
    );
}
#[test]
fn min() {
    check_binary("x.min(y)", min_m, min_m_grad, min_m_adjoint, d_min, &UNTIED);
    check_binary(
        "f32::min(x, y)",
        min_p,
        min_p_grad,
        min_p_adjoint,
        d_min,
        &UNTIED,
    );
}
#[test]
fn max_and_min_ties_give_the_derivative_to_the_first_argument() {
    for t in [-2.0_f32, 0.0, 1.5] {
        assert_eq!(max_m_grad(t, t), (t, (1.0, 0.0)), "x.max(y) at x = y = {t}");
        assert_eq!(min_m_grad(t, t), (t, (1.0, 0.0)), "x.min(y) at x = y = {t}");
    }
}

#[differentiate]
fn mul_add_m(x: f32, a: f32, b: f32) -> f32 {
    x.mul_add(a, b)
}
#[differentiate]
fn mul_add_p(x: f32, a: f32, b: f32) -> f32 {
    f32::mul_add(x, a, b)
}
fn d_mul_add(x: f32, a: f32, _b: f32) -> (f32, f32, f32) {
    (a, x, 1.0)
}
const MUL_ADD_AT: [(f32, f32, f32); 3] = [(1.5, -2.0, 0.25), (-0.3, 4.0, 7.0), (2.2, 0.7, -1.1)];
#[test]
fn mul_add() {
    check_ternary(
        "x.mul_add(a, b)",
        mul_add_m,
        mul_add_m_grad,
        mul_add_m_adjoint,
        d_mul_add,
        &MUL_ADD_AT,
    );
    check_ternary(
        "f32::mul_add(x, a, b)",
        mul_add_p,
        mul_add_p_grad,
        mul_add_p_adjoint,
        d_mul_add,
        &MUL_ADD_AT,
    );
}

// ---------------------------------------------------------------------------
// Constants, statements and a composite in f32.
// ---------------------------------------------------------------------------

const SCALE: f32 = 0.75;

#[differentiate]
fn constants(x: f32, n: i32) -> f32 {
    let mut s: f32 = SCALE * x;
    s *= std::f32::consts::PI;
    s += n as f32 * x * x;
    s
}
#[test]
fn f32_constants_and_integer_cast() {
    for n in [-1, 0, 3] {
        check_unary(
            &format!("0.75 PI x + n x^2 with n = {n}"),
            |x| constants(x, n),
            |x| constants_grad(x, n),
            |x, d| constants_adjoint(x, n, d),
            |x: f32| SCALE * PI + 2.0 * n as f32 * x,
            &ANY,
        );
    }
}

#[differentiate]
fn composite(x: f32, y: f32) -> f32 {
    let u = x.sin() * y.exp();
    let r = x.hypot(y);
    u.ln_1p() / r
}
#[test]
fn composite_ln_1p_sin_exp_over_hypot() {
    check_binary(
        "(x.sin() * y.exp()).ln_1p() / x.hypot(y)",
        composite,
        composite_grad,
        composite_adjoint,
        |x: f32, y: f32| {
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
fn polynomial(x: f32, y: f32) -> f32 {
    x * x * y - 3.0 * x * y * y + -x + 2.0
}
#[test]
fn polynomial_with_repeated_operands() {
    check_binary(
        "x^2 y - 3 x y^2 - x + 2",
        polynomial,
        polynomial_grad,
        polynomial_adjoint,
        |x: f32, y: f32| (2.0 * x * y - 3.0 * y * y - 1.0, x * x - 6.0 * x * y),
        &PAIRS,
    );
}
