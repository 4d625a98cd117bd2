//! Numerical checking for gradients produced by `gradmacro`.
//!
//! `#[differentiate]` turns `fn f(x: f64, y: f64) -> f64` into, among others,
//! `f_grad(x, y) -> (f64, (f64, f64))`. This crate compares such an analytic
//! gradient with a centered finite-difference estimate, parameter by
//! parameter, and reports the absolute and relative disagreement.
//!
//! # Usage
//!
//! The function is passed as a closure over a slice of parameters. Here the
//! gradient is written by hand, standing in for a generated `f_grad`:
//!
//! ```
//! fn f(x: f64, y: f64) -> f64 {
//!     x.sin() * y + x * y * y
//! }
//!
//! // What `#[differentiate]` would generate, written out by hand.
//! fn f_grad(x: f64, y: f64) -> (f64, (f64, f64)) {
//!     (f(x, y), (x.cos() * y + y * y, x.sin() + 2.0 * x * y))
//! }
//!
//! let (_, (gx, gy)) = f_grad(1.0, 2.0);
//! gradmacro_runtime::check_gradient(|p| f(p[0], p[1]), &[1.0, 2.0], &[gx, gy]).assert_within(1e-6);
//!
//! // A wrong rule (d/dx sin x = -cos x) is caught at this point.
//! let bad_gx = -(1.0_f64.cos()) * 2.0 + 4.0;
//! let check = gradmacro_runtime::check_gradient(|p| f(p[0], p[1]), &[1.0, 2.0], &[bad_gx, gy]);
//! assert!(!check.passes(1e-6));
//! println!("{check}"); // one row per parameter, plus the worst errors
//! ```
//!
//! On failure, [`GradientCheck::assert_within`] panics with a table of every
//! parameter (point, analytic and numeric derivative, absolute and relative
//! error), the failing rows marked, and the tolerance.
//!
//! Everything works for `f32` as well as `f64` through the [`Float`] trait.
//!
//! # A diagnostic, not a proof
//!
//! A finite difference only estimates a derivative, so a check can only say
//! that two numbers agree to a tolerance at the points tried:
//!
//! - A centered difference with step `h` has truncation error `O(h^2)` (from
//!   the third derivative of `f`) and rounding error `O(eps / h)` (from
//!   evaluating `f` in floating point). [`default_step`] balances the two at
//!   `h ~ cbrt(eps)`, leaving an error of order `eps^(2/3)` times the scale of
//!   `f`: about `4e-11` for `f64` and `2e-5` for `f32`. The analytic and
//!   numeric derivatives therefore never agree exactly, and the tolerance must
//!   sit above this noise: `1e-6` is usually comfortable for `f64`, `1e-3`
//!   for `f32`. Badly scaled or rapidly varying functions need more.
//! - Agreement at a point does not make a derivative rule right. A wrong rule
//!   that happens to give the right value there (a missing term that vanishes
//!   at `x = 0`, a factor that equals 1 at the point chosen) passes. Check
//!   several points, away from special values such as 0 and 1.
//! - At a kink (`abs` at 0, `max` at a tie) the difference averages the two
//!   one-sided slopes, and near the edge of `f`'s domain the step can leave
//!   it (`ln` of a tiny positive number) and produce NaN. A NaN in either
//!   gradient always fails the check.
#![warn(missing_docs)]

#[cfg(feature = "argmin")]
pub mod argmin;
mod check;
mod fd;
mod float;
mod function;
mod grad;
#[cfg(feature = "libm")]
pub mod special;
mod step;

pub use check::{check_gradient, GradientCheck, ParamCheck};
pub use fd::central_difference;
pub use float::Float;
pub use function::{FunctionCheck, FunctionReport};
pub use grad::{detach, no_grad};
pub use step::default_step;
