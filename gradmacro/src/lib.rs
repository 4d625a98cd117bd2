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
//! parameters are constants, and so are struct parameters unless `wrt(..)`
//! names them (or `self`): a struct whose type derives
//! [`Differentiable`](derive@Differentiable) gets a gradient entry of its
//! own type.
//!
//! # Forward mode, Hessians, vector outputs
//!
//! The flags `tangent` and `hessian` add `f_tangent` (value and directional
//! derivative: one tangent per differentiable parameter, after the
//! arguments), `f_hvp` and `f_hessian` (value, gradient and Hessian-vector
//! product or Hessian, over the differentiable parameters flattened in
//! order). A function returning `[f64; M]` or `Vec<f64>` gets `f_jacobian`
//! (rows are outputs), and `f_adjoint(.., d_out: &[f64])` gives `Jᵀ·d_out`:
//!
//! ```
//! use gradmacro::differentiate;
//!
//! #[differentiate(tangent, hessian)]
//! fn g(x: f64, y: f64) -> f64 {
//!     x * x * y + y.sin()
//! }
//!
//! #[differentiate]
//! fn polar(r: f64, theta: f64) -> [f64; 2] {
//!     [r * theta.cos(), r * theta.sin()]
//! }
//!
//! assert_eq!(g_tangent(1.5, 0.5, 1.0, 0.0), (g(1.5, 0.5), 1.5));
//! let (_, grad, h) = g_hessian(1.5, 0.5);
//! assert_eq!(grad[0], 1.5);
//! assert_eq!(h[0], vec![1.0, 3.0]);
//! let (_, jac) = polar_jacobian(2.0, 0.0);
//! assert_eq!(jac, vec![vec![1.0, 0.0], vec![0.0, 2.0]]);
//! ```
//!
//! # Generic floats
//!
//! A function generic over one type `T: num_traits::Float` (inline or in a
//! `where` clause, extra bounds allowed) gets generic `f_grad::<T>` and the
//! rest, called at `f64` or `f32`; constants are written as generic code
//! writes them (`T::one()`, `T::from(2.5).unwrap()`):
//!
//! ```
//! use gradmacro::differentiate;
//! use num_traits::Float;
//!
//! #[differentiate]
//! fn h<T: Float>(x: T) -> T {
//!     x * x * T::from(2.5).unwrap() + T::one()
//! }
//!
//! assert_eq!(h_grad(2.0f64), (11.0, 10.0));
//! assert_eq!(h_grad::<f32>(2.0), (11.0, 10.0));
//! ```
//!
//! # Checking the gradient at given points
//!
//! Each `check(...)` names a value for every parameter, constants included
//! (arrays as literals `[..]`), and becomes a `#[cfg(test)] #[test]` beside
//! the function, named after it and the point's position (`loss_check_0`,
//! `loss_check_1`, ...):
//!
//! ```
//! use gradmacro::differentiate;
//!
//! #[differentiate(check(x = 1.5, w = [1.0, -2.0], n = 2), check(x = -0.7, w = [0.5, 3.0], n = 1))]
//! fn loss(x: f64, w: &[f64], n: usize) -> f64 {
//!     let mut s = 0.0;
//!     for i in 0..n {
//!         s += (w[i] * x).sin();
//!     }
//!     s
//! }
//! # fn main() {}
//! ```
//!
//! `cargo test` then runs `loss_check_0` and `loss_check_1`: each compares
//! `loss_grad` and `loss_adjoint` with central differences of `loss`, per
//! parameter and along a few random directions, and fails with a table of
//! every parameter, the failing ones marked. Since `f_grad` runs the
//! pullbacks of the functions `loss` calls, a wrong `#[custom_adjoint]`
//! anywhere below it fails the check too. The generated test calls
//! `::gradmacro_runtime::FunctionCheck`, so the crate needs `gradmacro-runtime`,
//! as a dev-dependency at least. A point that leaves out a parameter, or names
//! one the function does not have, is a compile error at the point.
//!
//! Anything the macro cannot differentiate is a compile error at the offending
//! syntax, saying what to write instead. See the crate README for the supported
//! syntax and `ARCHITECTURE.md` for how it works.

#![warn(missing_docs)]

mod analysis;
mod args;
#[cfg(test)]
mod bench_expand;
mod checks;
mod ctxt;
mod custom;
mod custom_tangent;
mod derive;
mod emit;
mod expand;
#[cfg(test)]
mod fuzz;
mod generic;
mod hessian;
mod ir;
mod lower;
mod names;
mod outputs;
mod rules;
mod signature;
mod structs;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
mod vector;

use proc_macro::TokenStream;

/// Differentiates the function it is placed on; see the [crate docs](crate).
///
/// `#[differentiate]` differentiates with respect to every float parameter,
/// `#[differentiate(wrt(a, b))]` with respect to those named; any number of
/// `check(x = 1.5, ..)` points add tests (see the crate docs).
///
/// ```
/// use gradmacro::differentiate;
///
/// /// `scale` is data: `wrt(x)` leaves it out of the gradient.
/// #[differentiate(wrt(x))]
/// fn energy(x: &[f64], scale: f64) -> f64 {
///     let mut s = 0.0;
///     for i in 0..x.len() {
///         s += scale * x[i] * x[i];
///     }
///     s
/// }
///
/// let (value, grad) = energy_grad(&[1.0, -2.0], 0.5);
/// assert_eq!((value, grad), (2.5, vec![1.0, -2.0]));
///
/// let mut d_x = vec![0.0; 2];
/// energy_adjoint_acc(&[1.0, -2.0], 0.5, 2.0, &mut d_x);
/// energy_adjoint_acc(&[1.0, -2.0], 0.5, 2.0, &mut d_x); // adds
/// assert_eq!(d_x, vec![4.0, -8.0]);
/// ```
///
/// On a method, the generated functions are methods too, and the receiver's
/// fields are constants; so is any struct parameter:
///
/// ```
/// use gradmacro::differentiate;
///
/// pub struct Spring {
///     pub k: f64,
///     pub rest: f64,
/// }
///
/// impl Spring {
///     #[differentiate]
///     pub fn energy(&self, x: f64) -> f64 {
///         let d = x - self.rest;
///         0.5 * self.k * d * d
///     }
/// }
///
/// let s = Spring { k: 3.0, rest: 0.5 };
/// assert_eq!(s.energy_grad(1.5), (1.5, 3.0));
/// ```
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

/// Supplies the forward mode (tangent rule) of a function the macro cannot
/// see into, for callers with `#[differentiate(tangent)]`.
///
/// Write a function taking `f`'s parameters, then one tangent per float
/// parameter (`f64` for a scalar, `&[f64]` for an array), in order, and
/// returning `(f(..), derivative along the tangents)`:
///
/// ```
/// use gradmacro::{custom_adjoint, custom_tangent, differentiate};
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
/// #[custom_tangent(softplus)]
/// fn softplus_tangent_rule(x: f64, t_x: f64) -> (f64, f64) {
///     (softplus(x), t_x / (1.0 + (-x).exp()))
/// }
///
/// #[differentiate(tangent)]
/// fn loss(x: f64) -> f64 {
///     softplus(2.0 * x)
/// }
///
/// let (_, d) = loss_tangent(0.5, 1.0);
/// assert!((d - 2.0 / (1.0 + (-1.0f64).exp())).abs() < 1e-15);
/// ```
///
/// It generates `f_pushforward`, which forward-mode callers of `f(..)` use
/// (import it along with `f`). The compiler checks that `f` takes the same
/// parameters. A rule gives first derivatives only: callers with `hessian`
/// cannot call `f`.
#[proc_macro_attribute]
pub fn custom_tangent(attr: TokenStream, item: TokenStream) -> TokenStream {
    custom_tangent::custom_tangent(attr.into(), item.into()).into()
}

/// Lets a struct be differentiated: named in `wrt(..)` of a function taking
/// it, or as `wrt(self)` of its methods. The gradient is a value of the same
/// type: each float field (`f64`, `[f64; N]`, `Vec<f64>`, or a nested struct
/// that derives `Differentiable` too) holds the derivative with respect to
/// that field; integer and `bool` fields are copies of the input's.
///
/// ```
/// use gradmacro::{differentiate, Differentiable};
///
/// #[derive(Differentiable)]
/// pub struct Line {
///     pub w: Vec<f64>,
///     pub b: f64,
///     pub n: usize,
/// }
///
/// impl Line {
///     /// Squared error of the prediction `w · x + b` against `y`.
///     #[differentiate(wrt(self))]
///     pub fn loss(&self, x: &[f64], y: f64) -> f64 {
///         let mut p = self.b;
///         for i in 0..self.n {
///             p += self.w[i] * x[i];
///         }
///         (p - y) * (p - y)
///     }
/// }
///
/// let line = Line { w: vec![2.0, -1.0], b: 0.5, n: 2 };
/// let (loss, g) = line.loss_grad(&[1.0, 3.0], 0.0);
/// // p = 2 - 3 + 0.5 = -0.5: loss = 0.25, dloss/dp = -1
/// assert_eq!(loss, 0.25);
/// assert_eq!((g.w, g.b, g.n), (vec![-1.0, -3.0], -1.0, 2));
/// ```
#[proc_macro_derive(Differentiable)]
pub fn derive_differentiable(item: TokenStream) -> TokenStream {
    derive::derive(item.into()).into()
}
