//! Choice of the finite-difference step.

use crate::Float;

/// The step `h = cbrt(eps) * max(1, |x|)` for a centered difference at `x`,
/// where `eps` is the machine epsilon of `T`.
///
/// A centered difference has truncation error `O(h^2)` and rounding error
/// `O(eps / h)`; the two balance when `h` is of order `cbrt(eps)`, which
/// leaves a total error of order `eps^(2/3)` (about `4e-11` for `f64`,
/// `2e-5` for `f32`, relative to the scale of the function and its third
/// derivative). The factor `max(1, |x|)` keeps the step meaningful for large
/// `|x|`, where a fixed absolute step would vanish below the spacing of
/// representable numbers around `x`.
///
/// A NaN `x` gives a NaN step and an infinite `x` an infinite one; the
/// resulting difference is then NaN, which makes a check fail.
///
/// ```
/// use gradmacro_runtime::default_step;
///
/// let h = default_step(0.5_f64);
/// assert!((h - f64::EPSILON.cbrt()).abs() < 1e-20);
/// // Proportional to |x| once |x| > 1.
/// assert!((default_step(-1e6_f64) / h - 1e6).abs() < 1e-3);
/// ```
pub fn default_step<T: Float>(x: T) -> T {
    let magnitude = x.to_f64().abs();
    // Not `f64::max`, which would turn a NaN `x` into a plausible step.
    let scale = if magnitude < 1.0 { 1.0 } else { magnitude };
    T::from_f64(T::EPSILON.to_f64().cbrt() * scale)
}
