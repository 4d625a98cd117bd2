//! Centered finite differences.

use crate::{default_step, Float};

/// Estimates the gradient of `f` at `x` by centered differences:
/// `(f(x + h e_i) - f(x - h e_i)) / (2h)` for every coordinate `i`, with
/// `h = default_step(x_i)`.
///
/// `f` is called twice per coordinate, always with a slice of the same length
/// as `x`, and only one coordinate differs from `x` in each call. The
/// perturbed points are rounded to `T`, so the denominator is the distance
/// actually travelled, `(x_i + h) - (x_i - h)`, rather than `2h`: otherwise the
/// rounding of `x_i ± h` would add an error of order `eps * |x_i| / h`.
///
/// The result is an estimate with error of order `eps^(2/3)` for smooth `f`
/// (see [`default_step`]), not an exact derivative. Near a kink (`abs` at 0, a
/// `max` at a tie) it returns the average of the one-sided slopes, and near
/// the edge of `f`'s domain (`ln` of a tiny positive `x`) the step can leave
/// the domain and produce NaN.
///
/// ```
/// use gradmacro_runtime::central_difference;
///
/// let g = central_difference(|p: &[f64]| p[0] * p[0] * p[1], &[3.0, 2.0]);
/// assert!((g[0] - 12.0).abs() < 1e-6);
/// assert!((g[1] - 9.0).abs() < 1e-6);
/// ```
pub fn central_difference<T: Float, F: Fn(&[T]) -> T>(f: F, x: &[T]) -> Vec<T> {
    // One scratch buffer, restored after each coordinate, instead of two
    // fresh copies of `x` per coordinate.
    let mut point = x.to_vec();
    x.iter()
        .enumerate()
        .map(|(i, &xi)| {
            let h = default_step(xi).to_f64();
            // Adding in f64 and narrowing rounds `x_i ± h` exactly as adding
            // in `T` would (f64 has more than twice f32's precision), so one
            // code path serves both types.
            let plus = T::from_f64(xi.to_f64() + h);
            let minus = T::from_f64(xi.to_f64() - h);
            point[i] = plus;
            let f_plus = f(&point).to_f64();
            point[i] = minus;
            let f_minus = f(&point).to_f64();
            point[i] = xi;
            T::from_f64((f_plus - f_minus) / (plus.to_f64() - minus.to_f64()))
        })
        .collect()
}
