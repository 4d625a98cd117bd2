//! Helpers used inside differentiated functions.

/// Stops the gradient: returns `x` unchanged, and `#[differentiate]` treats
/// the result as a constant, so nothing flows back through it.
///
/// For straight-through estimators, target networks, or a quantity that must
/// stay fixed during one step (e.g. a moving average used as a baseline):
///
/// ```
/// use gradmacro::differentiate;
/// use gradmacro_runtime::no_grad;
///
/// // A "stop-gradient" baseline: the value is x·x - x·x = 0, but the
/// // gradient only sees the first term.
/// #[differentiate]
/// fn centered(x: f64) -> f64 {
///     x * x - no_grad(x * x)
/// }
///
/// assert_eq!(centered_grad(3.0), (0.0, 6.0));
/// ```
#[inline(always)]
pub fn no_grad<T>(x: T) -> T {
    x
}

/// The same as [`no_grad`], under the name other frameworks use.
///
/// ```
/// use gradmacro::differentiate;
/// use gradmacro_runtime::detach;
///
/// // A straight-through estimator: valued round(x), derivative 1.
/// #[differentiate]
/// fn rounded(x: f64) -> f64 {
///     x + detach(x.round() - x)
/// }
///
/// assert_eq!(rounded_grad(2.3), (2.0, 1.0));
/// ```
#[inline(always)]
pub fn detach<T>(x: T) -> T {
    x
}
