//! The attribute's own arguments: `#[differentiate]`,
//! `#[differentiate(wrt(a, b))]`, `#[differentiate(check(x = 1.5, w = [1.0]))]`,
//! the flags `tangent` and `hessian`,
//! in any combination.

use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, Token};

#[derive(Default)]
pub struct Args {
    /// `Some` when `wrt(...)` restricts the differentiable parameters.
    pub wrt: Option<Vec<Ident>>,
    /// One per `check(...)`, in order: points at which a test compares the
    /// generated functions with central differences.
    pub checks: Vec<CheckPoint>,
    /// `tangent`: also generate `f_tangent`, the forward mode.
    pub tangent: bool,
    /// `hessian`: also generate `f_hessian` and `f_hvp`.
    pub hessian: bool,
    /// The `hessian` keyword, where an error about it points.
    pub hessian_flag: Option<Ident>,
    /// The `tangent` keyword, likewise.
    pub tangent_flag: Option<Ident>,
}

/// `check(x = 1.5, w = [1.0, -2.0], n = 3)`: a value for every parameter.
pub struct CheckPoint {
    /// The `check` keyword, where a missing parameter is reported.
    pub keyword: Ident,
    pub values: Vec<(Ident, Expr)>,
}

/// `name = value`
struct Assignment(Ident, Expr);

impl Parse for Assignment {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        Ok(Assignment(name, input.parse()?))
    }
}

impl Parse for Args {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut args = Args::default();
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            let content;
            if key == "tangent" || key == "hessian" {
                let flag = if key == "tangent" {
                    &mut args.tangent
                } else {
                    &mut args.hessian
                };
                if *flag {
                    return Err(syn::Error::new(key.span(), format!("`{key}` given twice")));
                }
                *flag = true;
                if key == "hessian" {
                    args.hessian_flag = Some(key.clone());
                } else {
                    args.tangent_flag = Some(key.clone());
                }
            } else if key == "wrt" {
                if args.wrt.is_some() {
                    return Err(syn::Error::new(
                        key.span(),
                        "`wrt` given twice: list every parameter in one `wrt(...)`",
                    ));
                }
                syn::parenthesized!(content in input);
                // `self` too, for a method differentiated with respect to its
                // receiver.
                let names = Punctuated::<Ident, Token![,]>::parse_terminated_with(
                    &content,
                    syn::ext::IdentExt::parse_any,
                )?;
                if names.is_empty() {
                    return Err(syn::Error::new(
                        key.span(),
                        "`wrt()` is empty: name at least one parameter, e.g. `wrt(x)`",
                    ));
                }
                args.wrt = Some(names.into_iter().collect());
            } else if key == "check" {
                syn::parenthesized!(content in input);
                let values = Punctuated::<Assignment, Token![,]>::parse_terminated(&content)?;
                args.checks.push(CheckPoint {
                    keyword: key,
                    values: values.into_iter().map(|a| (a.0, a.1)).collect(),
                });
            } else {
                return Err(syn::Error::new(
                    key.span(),
                    format!(
                        "unknown argument `{key}`: the arguments are `wrt(a, b)`, naming the \
                         parameters to differentiate with respect to, `check(x = 1.5, ..)`, \
                         a point at which a test checks the gradient, and the flags `tangent` \
                         (forward mode: `f_tangent`) and `hessian` (`f_hessian`, `f_hvp`)"
                    ),
                ));
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(args)
    }
}
