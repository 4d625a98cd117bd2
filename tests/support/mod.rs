//! Checks shared by the integration tests of `#[differentiate]`.
//!
//! Every `check_*` function takes a differentiated function `f`, the
//! generated `f_grad` and `f_adjoint`, the derivative written out by hand and
//! a list of points. At each point it asserts that
//!
//! 1. the point is inside `f`'s domain (`f` is finite there), so that a bad
//!    test point is reported as such;
//! 2. the value returned by `f_grad` is bit-for-bit the value of `f`;
//! 3. the gradient of `f_grad` agrees with a centered finite difference of `f`
//!    (`gradmacro_runtime::check_gradient`);
//! 4. the gradient agrees with the hand-written derivative;
//! 5. `f_adjoint(.., D_OUT)` is `D_OUT` times the gradient.
//!
//! Failures name the function, the point, and the finite-difference estimate
//! next to the two derivatives, so that a wrong hand-written derivative (the
//! generated gradient matches the finite difference) is told apart from a
//! wrong generated one.
//!
//! Each test file uses only some of these helpers. Besides them:
//!
//! - `close` and `assert_close`: the one tolerance comparison of the tests;
//! - `dual`: forward-mode dual numbers, an independent oracle;
//! - `rng`: SplitMix64, the seeded generator of every random point.
#![allow(dead_code)]

pub mod dual;
pub mod rng;

use gradmacro_runtime::{central_difference, check_gradient, Float};

/// The `d_out` passed to every `f_adjoint`: not a power of two, so that an
/// adjoint that ignores or mis-scales it cannot pass by accident.
pub const D_OUT: f64 = 2.5;

/// A float type with the tolerances its tests use.
pub trait Real: Float {
    /// Relative tolerance between the generated and the hand-written
    /// derivative. Both are evaluated in `Self`, by formulas that may differ
    /// (say `1 - tanh(x)^2` against `1 / cosh(x)^2`), so they agree to a few
    /// units in the last place at the points used, not exactly.
    const ANALYTIC_REL: f64;
    /// Absolute tolerance for the same comparison, for derivatives that are
    /// zero or close to it.
    const ANALYTIC_ABS: f64;
    /// Tolerance of the finite-difference check (absolute or relative, see
    /// `GradientCheck::passes`). The difference has an error of order
    /// `eps^(2/3)`: about `4e-11` for `f64` and `2e-5` for `f32`, relative to
    /// the scale of `f` and of its third derivative.
    const FD_TOL: f64;
    /// Relative tolerance between `f_adjoint(.., D_OUT)` and `D_OUT` times the
    /// gradient: the seed is propagated through the same operations, so only
    /// rounding separates the two.
    const ADJOINT_REL: f64;
}

impl Real for f64 {
    const ANALYTIC_REL: f64 = 1e-12;
    const ANALYTIC_ABS: f64 = f64::EPSILON;
    const FD_TOL: f64 = 1e-6;
    const ADJOINT_REL: f64 = 1e-13;
}

impl Real for f32 {
    const ANALYTIC_REL: f64 = 1e-5;
    const ANALYTIC_ABS: f64 = 1e-6;
    const FD_TOL: f64 = 1e-3;
    const ADJOINT_REL: f64 = 1e-5;
}

/// Whether `got` and `want` agree to `abs` absolutely or `rel` relatively
/// (relative to the larger of the two); equal values always agree, an
/// infinite one agrees only with itself.
pub fn close(got: f64, want: f64, abs: f64, rel: f64) -> bool {
    approx::relative_eq!(got, want, epsilon = abs, max_relative = rel)
}

/// Asserts `close(got, want, abs, rel)`, naming `what`.
#[track_caller]
pub fn assert_close(what: &str, got: f64, want: f64, abs: f64, rel: f64) {
    assert!(
        close(got, want, abs, rel),
        "{what}: got {got:e}, want {want:e} (|diff| {:e}; tolerance {abs:e} absolute \
         or {rel:e} relative)",
        (got - want).abs()
    );
}

/// Asserts `close` entry by entry, and that the lengths agree.
#[track_caller]
pub fn assert_all_close(what: &str, got: &[f64], want: &[f64], abs: f64, rel: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert_close(&format!("{what}[{i}]"), g, w, abs, rel);
    }
}

/// Asserts that `got` is bit-for-bit `want` (so `-0.0` differs from `0.0`).
#[track_caller]
pub fn assert_bits<T: Real>(what: &str, got: T, want: T) {
    assert!(
        got.to_f64().to_bits() == want.to_f64().to_bits(),
        "{what}: got {got:?}, expected exactly {want:?}"
    );
}

/// The checks 1-5 above at one point `x` of a function `f` of several
/// parameters, given what `f_grad` and `f_adjoint` returned there and the
/// hand-written gradient.
#[track_caller]
pub fn check_point<T: Real>(
    name: &str,
    x: &[T],
    f: impl Fn(&[T]) -> T,
    value: T,
    grad: &[T],
    adjoint: &[T],
    analytic: &[T],
) {
    let primal = f(x);
    assert!(
        primal.to_f64().is_finite(),
        "{name}: the test point {x:?} is outside the domain (f = {primal:?})"
    );
    assert_bits(&format!("{name}: value of _grad at {x:?}"), value, primal);

    let check = check_gradient(&f, x, grad);
    assert!(
        check.passes(T::FD_TOL),
        "{name}: gradient at {x:?} disagrees with finite differences \
         (tolerance {:e}):\n{check}",
        T::FD_TOL
    );

    let numeric = central_difference(&f, x);
    for i in 0..x.len() {
        let (got, want) = (grad[i].to_f64(), analytic[i].to_f64());
        assert!(
            close(got, want, T::ANALYTIC_ABS, T::ANALYTIC_REL),
            "{name}: derivative {i} at {x:?}: generated {got:e}, hand-written {want:e} \
             (finite difference {:e}; max relative error {:e})",
            numeric[i].to_f64(),
            T::ANALYTIC_REL
        );
    }

    for i in 0..x.len() {
        let (got, want) = (adjoint[i].to_f64(), D_OUT * grad[i].to_f64());
        assert!(
            close(got, want, T::ANALYTIC_ABS, T::ADJOINT_REL),
            "{name}: adjoint {i} at {x:?} with d_out = {D_OUT}: got {got:e}, \
             expected {D_OUT} * {:e} = {want:e}",
            grad[i].to_f64()
        );
    }
}

/// The checks for `f(x)`, with `f_grad(x) -> (T, T)` and
/// `f_adjoint(x, d_out) -> T`, at every point.
#[track_caller]
pub fn check_unary<T: Real>(
    name: &str,
    f: impl Fn(T) -> T,
    grad: impl Fn(T) -> (T, T),
    adjoint: impl Fn(T, T) -> T,
    analytic: impl Fn(T) -> T,
    points: &[T],
) {
    assert!(!points.is_empty());
    let d_out = T::from_f64(D_OUT);
    for &x in points {
        let (value, g) = grad(x);
        check_point(
            name,
            &[x],
            |p| f(p[0]),
            value,
            &[g],
            &[adjoint(x, d_out)],
            &[analytic(x)],
        );
    }
}

/// The checks for `f(x, y)`, with `f_grad(x, y) -> (T, (T, T))` and
/// `f_adjoint(x, y, d_out) -> (T, T)`, at every point `(x, y)`.
#[track_caller]
pub fn check_binary<T: Real>(
    name: &str,
    f: impl Fn(T, T) -> T,
    grad: impl Fn(T, T) -> (T, (T, T)),
    adjoint: impl Fn(T, T, T) -> (T, T),
    analytic: impl Fn(T, T) -> (T, T),
    points: &[(T, T)],
) {
    assert!(!points.is_empty());
    let d_out = T::from_f64(D_OUT);
    for &(x, y) in points {
        let (value, (gx, gy)) = grad(x, y);
        let (ax, ay) = adjoint(x, y, d_out);
        let (dx, dy) = analytic(x, y);
        check_point(
            name,
            &[x, y],
            |p| f(p[0], p[1]),
            value,
            &[gx, gy],
            &[ax, ay],
            &[dx, dy],
        );
    }
}

/// The checks for `f(x, y, z)`, with `f_grad(x, y, z) -> (T, (T, T, T))` and
/// `f_adjoint(x, y, z, d_out) -> (T, T, T)`, at every point `(x, y, z)`.
#[track_caller]
pub fn check_ternary<T: Real>(
    name: &str,
    f: impl Fn(T, T, T) -> T,
    grad: impl Fn(T, T, T) -> (T, (T, T, T)),
    adjoint: impl Fn(T, T, T, T) -> (T, T, T),
    analytic: impl Fn(T, T, T) -> (T, T, T),
    points: &[(T, T, T)],
) {
    assert!(!points.is_empty());
    let d_out = T::from_f64(D_OUT);
    for &(x, y, z) in points {
        let (value, (gx, gy, gz)) = grad(x, y, z);
        let (ax, ay, az) = adjoint(x, y, z, d_out);
        let (dx, dy, dz) = analytic(x, y, z);
        check_point(
            name,
            &[x, y, z],
            |p| f(p[0], p[1], p[2]),
            value,
            &[gx, gy, gz],
            &[ax, ay, az],
            &[dx, dy, dz],
        );
    }
}

/// A generated gradient of a function of one slice, `(value, gradient)`.
pub type SliceGrad<'a> = &'a dyn Fn(&[f64]) -> (f64, Vec<f64>);

/// For a function of one slice: the value bits, the gradient against `want`
/// and against central differences (`gradmacro_runtime::central_difference`), and `adjoint(x, d_out)`
/// against `d_out * want`.
#[track_caller]
pub fn check_slice_fn(
    name: &str,
    x: &[f64],
    f: &dyn Fn(&[f64]) -> f64,
    grad: SliceGrad<'_>,
    adjoint: &dyn Fn(&[f64], f64) -> Vec<f64>,
    want: &[f64],
    d_out: f64,
) {
    let (v, g) = grad(x);
    assert_eq!(v.to_bits(), f(x).to_bits(), "{name}: value at {x:?}");
    assert_all_close(name, &g, want, 1e-12, 1e-12);
    let fd = central_difference(f, x);
    assert_all_close(&format!("{name} (finite differences)"), &g, &fd, 1e-6, 1e-6);
    let a = adjoint(x, d_out);
    let scaled: Vec<f64> = want.iter().map(|w| d_out * w).collect();
    assert_all_close(&format!("{name} (adjoint)"), &a, &scaled, 1e-12, 1e-12);
}
