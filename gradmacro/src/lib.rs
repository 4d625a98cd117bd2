//! Compile-time, source-to-source reverse-mode automatic differentiation.
//!
//! Put `#[differentiate]` on an ordinary function over `f64` (or `f32`) and get
//! its exact gradient as plain generated Rust, next to it:
//!
//! ```
//! use gradmacro::differentiate;
//!
//! #[differentiate]
//! fn f(x: f64) -> f64 {
//!     let q = x * x;
//!     q + x
//! }
//!
//! assert_eq!(f(3.0), 12.0);
//! assert_eq!(f_grad(3.0), (12.0, 7.0)); // (value, df/dx)
//! assert_eq!(f_adjoint(3.0, 2.0), 14.0); // d_out * df/dx
//! ```
//!
//! For `fn f(x: f64, y: f64) -> f64` the macro keeps `f` unchanged and adds,
//! with the same visibility:
//!
//! - `f_grad(x, y) -> (f64, (f64, f64))`: the value (bit-identical to `f`'s) and
//!   the gradient, fresh on every call;
//! - `f_adjoint(x, y, d_out: f64) -> (f64, f64)`: `d_out` times the gradient.
//!
//! The gradient has one entry per differentiable parameter, in order; with one
//! such parameter the entry is bare. Every float parameter is differentiable
//! unless `#[differentiate(wrt(a, b))]` names a subset; integer and `bool`
//! parameters are constants.
//!
//! Anything the macro cannot differentiate is a compile error at the offending
//! syntax, saying what to write instead. See the crate README for the supported
//! syntax and `ARCHITECTURE.md` for how it works.

mod analysis;
mod args;
#[cfg(test)]
mod bench_expand;
mod ctxt;
mod custom;
mod emit;
mod expand;
#[cfg(test)]
mod fuzz;
mod ir;
mod lower;
mod lower_array;
mod lower_expr;
mod lower_iter;
mod names;
mod rename;
mod rules;
mod signature;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;

use proc_macro::TokenStream;

/// Differentiates the function it is placed on; see the [crate docs](crate).
#[proc_macro_attribute]
pub fn differentiate(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::differentiate(attr.into(), item.into()).into()
}

/// Supplies the adjoint of a function the macro cannot see into.
///
/// Write `f`'s adjoint by hand, with the signature `#[differentiate]` would
/// give it (`f`'s parameters, then the output's adjoint; one gradient entry per
/// float parameter, bare if there is one), and mark it:
///
/// ```
/// use gradmacro::{custom_adjoint, differentiate};
///
/// fn softplus(x: f64) -> f64 {
///     x.exp().ln_1p()
/// }
///
/// #[custom_adjoint(softplus)]
/// fn softplus_adjoint(x: f64, d_out: f64) -> f64 {
///     d_out / (1.0 + (-x).exp())
/// }
///
/// #[differentiate]
/// fn loss(x: f64) -> f64 {
///     softplus(2.0 * x)
/// }
///
/// let (_, g) = loss_grad(0.5);
/// assert!((g - 2.0 / (1.0 + (-1.0f64).exp())).abs() < 1e-15);
/// ```
///
/// The compiler checks that `f` takes the same parameters and returns the
/// float type. It generates `f_pullback`, which differentiated functions
/// calling `f(..)` use: call `f` through its module path (`m::f(x)`), or
/// import `f_pullback` along with `f`.
#[proc_macro_attribute]
pub fn custom_adjoint(attr: TokenStream, item: TokenStream) -> TokenStream {
    custom::custom_adjoint(attr.into(), item.into()).into()
}
