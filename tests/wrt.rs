//! Which parameters get a gradient entry, and what the generated functions
//! look like from outside:
//!
//! - `#[differentiate(wrt(a, c))]` restricts the differentiable parameters to
//!   a subset; the others are constants and get no entry;
//! - with exactly one differentiable parameter the gradient is a bare float;
//! - integer, `usize` and `bool` parameters are constants and get no entry;
//! - `f_grad` and `f_adjoint` have the visibility of `f`;
//! - doc comments and attributes on `f` are kept.
//!
//! The exact signatures are pinned by coercing the generated functions to
//! function pointer types.

mod support;

use gradmacro::differentiate;
use support::{check_binary, check_point, check_unary, D_OUT};

/// `f_grad` of a function of three `f64` with a gradient of two entries.
type Grad3To2 = fn(f64, f64, f64) -> (f64, (f64, f64));
/// `f_grad` of a function of three `f64` with a gradient of three entries.
type Grad3To3 = fn(f64, f64, f64) -> (f64, (f64, f64, f64));
/// `f_grad` of `mixed`: two entries, for `x` and `y` only.
type MixedGrad = fn(f64, i32, bool, usize, f64, u32) -> (f64, (f64, f64));
/// `f_adjoint` of `mixed`: the parameters, then `d_out`.
type MixedAdjoint = fn(f64, i32, bool, usize, f64, u32, f64) -> (f64, f64);

// ---------------------------------------------------------------------------
// wrt(a, c): two of three float parameters.
// ---------------------------------------------------------------------------

#[differentiate(wrt(a, c))]
fn g(a: f64, b: f64, c: f64) -> f64 {
    a * b + b.sin() * c + c * c * a
}

#[test]
fn wrt_two_of_three_has_a_pair_gradient() {
    let grad: Grad3To2 = g_grad;
    let adjoint: fn(f64, f64, f64, f64) -> (f64, f64) = g_adjoint;
    for (a, b, c) in [(0.5, 1.2, -0.7), (-1.5, 0.3, 2.0), (2.0, -2.5, 0.4)] {
        let (value, (ga, gc)) = grad(a, b, c);
        let (aa, ac) = adjoint(a, b, c, D_OUT);
        check_point(
            "g wrt (a, c)",
            &[a, c],
            |p| g(p[0], b, p[1]),
            value,
            &[ga, gc],
            &[aa, ac],
            &[b + c * c, b.sin() + 2.0 * c * a],
        );
    }
}

#[test]
fn wrt_subset_is_the_restriction_of_the_full_gradient() {
    // The entries kept by wrt(a, c) are those of the full gradient.
    for (a, b, c) in [(0.5, 1.2, -0.7), (-1.5, 0.3, 2.0)] {
        let (v_sub, (ga, gc)) = g_grad(a, b, c);
        let (v_full, (fa, _fb, fc)) = g_all_grad(a, b, c);
        assert_eq!(v_sub.to_bits(), v_full.to_bits());
        approx::assert_relative_eq!(ga, fa, max_relative = 1e-15);
        approx::assert_relative_eq!(gc, fc, max_relative = 1e-15);
    }
}

#[differentiate]
fn g_all(a: f64, b: f64, c: f64) -> f64 {
    a * b + b.sin() * c + c * c * a
}

#[test]
fn without_wrt_every_float_parameter_has_an_entry() {
    let grad: Grad3To3 = g_all_grad;
    let adjoint: fn(f64, f64, f64, f64) -> (f64, f64, f64) = g_all_adjoint;
    let (a, b, c) = (0.5, 1.2, -0.7);
    let (value, (ga, gb, gc)) = grad(a, b, c);
    let (aa, ab, ac) = adjoint(a, b, c, D_OUT);
    check_point(
        "g_all",
        &[a, b, c],
        |p| g_all(p[0], p[1], p[2]),
        value,
        &[ga, gb, gc],
        &[aa, ab, ac],
        &[b + c * c, a + b.cos() * c, b.sin() + 2.0 * c * a],
    );
}

// ---------------------------------------------------------------------------
// wrt(b): one parameter, so the gradient is a bare f64.
// ---------------------------------------------------------------------------

#[differentiate(wrt(b))]
fn g_b(a: f64, b: f64, c: f64) -> f64 {
    a * b + b.sin() * c + c * c * a
}

#[test]
fn wrt_one_parameter_has_a_bare_gradient() {
    let grad: fn(f64, f64, f64) -> (f64, f64) = g_b_grad;
    let adjoint: fn(f64, f64, f64, f64) -> f64 = g_b_adjoint;
    for (a, b, c) in [(0.5, 1.2, -0.7), (-1.5, 0.3, 2.0), (2.0, -2.5, 0.4)] {
        let (value, gb) = grad(a, b, c);
        check_point(
            "g wrt b",
            &[b],
            |p| g_b(a, p[0], c),
            value,
            &[gb],
            &[adjoint(a, b, c, D_OUT)],
            &[a + b.cos() * c],
        );
    }
}

#[differentiate(wrt(x, y))]
fn all_listed(x: f64, y: f64) -> f64 {
    x.exp() * y - y * y
}

#[test]
fn wrt_listing_every_parameter_is_the_default() {
    let grad: fn(f64, f64) -> (f64, (f64, f64)) = all_listed_grad;
    let adjoint: fn(f64, f64, f64) -> (f64, f64) = all_listed_adjoint;
    check_binary(
        "wrt(x, y)",
        all_listed,
        grad,
        adjoint,
        |x: f64, y: f64| (x.exp() * y, x.exp() - 2.0 * y),
        &[(0.3, 1.5), (-1.0, -0.4)],
    );
}

#[differentiate(wrt(y))]
fn wrt_with_integer(x: f64, n: i32, y: f64) -> f64 {
    x.powi(n) * y.sin() + n as f64 * y
}

#[test]
fn wrt_alongside_an_integer_parameter() {
    let grad: fn(f64, i32, f64) -> (f64, f64) = wrt_with_integer_grad;
    let adjoint: fn(f64, i32, f64, f64) -> f64 = wrt_with_integer_adjoint;
    for n in [-1, 2] {
        check_unary(
            &format!("wrt(y) with n = {n}"),
            |y| wrt_with_integer(1.7, n, y),
            |y| grad(1.7, n, y),
            |y, d| adjoint(1.7, n, y, d),
            |y: f64| 1.7_f64.powi(n) * y.cos() + n as f64,
            &[-0.8, 0.6, 2.1],
        );
    }
}

#[differentiate(wrt(x))]
fn wrt_f32(x: f32, y: f32) -> f32 {
    x * y.exp() + x.sin()
}

#[test]
fn wrt_in_f32() {
    let grad: fn(f32, f32) -> (f32, f32) = wrt_f32_grad;
    let adjoint: fn(f32, f32, f32) -> f32 = wrt_f32_adjoint;
    check_unary(
        "f32 wrt(x)",
        |x| wrt_f32(x, 0.5),
        |x| grad(x, 0.5),
        |x, d| adjoint(x, 0.5, d),
        |x: f32| 0.5_f32.exp() + x.cos(),
        &[-1.0, 0.25, 2.0],
    );
}

// ---------------------------------------------------------------------------
// Integer, usize and bool parameters get no gradient entry.
// ---------------------------------------------------------------------------

#[differentiate]
fn mixed(x: f64, n: i32, _flag: bool, k: usize, y: f64, m: u32) -> f64 {
    x.powi(n) * k as f64 + y * m as f64
}

#[test]
fn non_float_parameters_get_no_entry() {
    let grad: MixedGrad = mixed_grad;
    let adjoint: MixedAdjoint = mixed_adjoint;
    let (n, k, m) = (3, 4_usize, 7_u32);
    for flag in [false, true] {
        check_binary(
            "x^n k + y m",
            |x, y| mixed(x, n, flag, k, y, m),
            |x, y| grad(x, n, flag, k, y, m),
            |x, y, d| adjoint(x, n, flag, k, y, m, d),
            |x: f64, _y: f64| (3.0 * x * x * 4.0, 7.0),
            &[(0.5, 1.0), (-1.2, 3.0)],
        );
    }
}

#[differentiate]
fn one_float_among_integers(n: i32, x: f64, k: usize) -> f64 {
    x * n as f64 + (k as f64) * x * x
}

#[test]
fn one_float_parameter_among_integers_has_a_bare_gradient() {
    let grad: fn(i32, f64, usize) -> (f64, f64) = one_float_among_integers_grad;
    let adjoint: fn(i32, f64, usize, f64) -> f64 = one_float_among_integers_adjoint;
    check_unary(
        "x n + k x^2",
        |x| one_float_among_integers(-3, x, 2),
        |x| grad(-3, x, 2),
        |x, d| adjoint(-3, x, 2, d),
        |x: f64| -3.0 + 4.0 * x,
        &[-0.5, 1.5, 4.0],
    );
}

// ---------------------------------------------------------------------------
// Visibility: the generated functions share the visibility of `f`.
// ---------------------------------------------------------------------------

mod m {
    use gradmacro::differentiate;

    #[differentiate]
    pub fn h(x: f64) -> f64 {
        x * x.exp()
    }

    #[differentiate]
    pub(crate) fn h_crate(x: f64, y: f64) -> f64 {
        x * y
    }

    pub mod inner {
        use gradmacro::differentiate;

        #[differentiate]
        pub fn deep(x: f64) -> f64 {
            x.sin()
        }
    }
}

#[test]
fn pub_fn_in_a_module_is_callable_from_outside() {
    let grad: fn(f64) -> (f64, f64) = m::h_grad;
    let adjoint: fn(f64, f64) -> f64 = m::h_adjoint;
    check_unary(
        "m::h",
        m::h,
        grad,
        adjoint,
        |x: f64| (1.0 + x) * x.exp(),
        &[-1.5, 0.2, 1.3],
    );
}

#[test]
fn pub_crate_fn_in_a_module_is_callable_from_outside() {
    let grad: fn(f64, f64) -> (f64, (f64, f64)) = m::h_crate_grad;
    let adjoint: fn(f64, f64, f64) -> (f64, f64) = m::h_crate_adjoint;
    check_binary(
        "m::h_crate",
        m::h_crate,
        grad,
        adjoint,
        |x: f64, y: f64| (y, x),
        &[(0.5, -2.0), (3.0, 1.5)],
    );
}

#[test]
fn pub_fn_in_a_nested_module_is_callable_from_outside() {
    check_unary(
        "m::inner::deep",
        m::inner::deep,
        m::inner::deep_grad,
        m::inner::deep_adjoint,
        |x: f64| x.cos(),
        &[-1.0, 0.5, 2.0],
    );
}

// ---------------------------------------------------------------------------
// Doc comments and attributes on `f` are kept.
// ---------------------------------------------------------------------------

/// Squares its argument and adds it: `x^2 + x`.
///
/// The doc comment and the attributes around `#[differentiate]` stay on this
/// function.
#[inline]
#[differentiate]
#[must_use]
fn documented(x: f64) -> f64 {
    x * x + x
}

#[test]
fn documented_function_with_attributes_still_works() {
    check_unary(
        "documented",
        documented,
        documented_grad,
        documented_adjoint,
        |x: f64| 2.0 * x + 1.0,
        &[-1.5, 0.2, 1.3],
    );
}

#[differentiate(wrt(y))]
#[inline(always)]
/// A doc comment after the macro attribute.
fn documented_wrt(x: f64, y: f64) -> f64 {
    x * y.cos()
}

#[test]
fn attributes_after_the_macro_are_kept_with_wrt() {
    check_unary(
        "documented_wrt",
        |y| documented_wrt(2.0, y),
        |y| documented_wrt_grad(2.0, y),
        |y, d| documented_wrt_adjoint(2.0, y, d),
        |y: f64| -2.0 * y.sin(),
        &[-1.5, 0.2, 1.3],
    );
}

/// Only the generated functions are called here, so `f` itself is used only
/// if `f_grad` calls it. If the `allow` on `f` were dropped, `deny(dead_code)`
/// would turn that into a compile error.
#[deny(dead_code)]
mod lint_attributes {
    use gradmacro::differentiate;

    #[allow(dead_code)]
    #[differentiate]
    fn only_derivatives_used(x: f64) -> f64 {
        x * 3.0
    }

    #[test]
    fn allow_attribute_on_f_is_kept() {
        assert_eq!(only_derivatives_used_grad(2.0), (6.0, 3.0));
        assert_eq!(only_derivatives_used_adjoint(2.0, 2.5), 7.5);
    }
}
