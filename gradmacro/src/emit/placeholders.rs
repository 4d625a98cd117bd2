//! Placeholders for the generated functions a differentiated caller would
//! call but this function does not provide (a mode without its flag, a form
//! not supported yet): the caller gets an error at the call saying what to do,
//! instead of "cannot find function".

use super::Modes;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// Without `tangent` (or `hessian`), placeholders for what a caller with
/// the flag calls (`f_pushforward`, `f_dot`, `f_dot_pullback`) whose first
/// argument cannot satisfy its bound: the caller gets an error at the call,
/// naming `f` and the flag to add, instead of "cannot find function".
pub(super) fn missing_modes(
    user: &syn::ItemFn,
    receiver: Option<&syn::Receiver>,
    modes: Modes,
    ty: &TokenStream,
) -> TokenStream {
    let name = &user.sig.ident;
    let dot = [
        ("dot", (2, 0), quote!(#ty)),
        ("dot_pullback", (4, 1), quote!()),
    ];
    let (marker, flag, fns) = match (modes.tangent, modes.hessian) {
        (_, true) => return quote!(),
        (true, false) => ("has_no_hessian", "hessian", dot.to_vec()),
        // A caller with `hessian` calls `f_pushforward` too: the first error
        // asks for `tangent`, and then (below) for `hessian`.
        (false, false) => (
            "has_no_tangent",
            "tangent",
            vec![("pushforward", (2, 0), quote!((#ty, #ty)))],
        ),
    };
    let message = format!(
        "`{name}` is called by a function with `{flag}` but does not have it: write `#[differentiate({flag})]` on `{name}` (keeping any `wrt(..)`)"
    );
    let label = "called here by a function with `tangent` or `hessian`";
    placeholders(user, receiver, marker, (&message, label), &fns)
}

/// Placeholder functions `f_<suffix>` that differentiated callers would
/// call, each taking `per_param` × the parameter count + `extra` arguments
/// (the arguments, a slot for each, a seed), whose
/// first argument cannot satisfy a bound that reports `message` at the call.
/// (Not for methods: a trait cannot be declared in an `impl` block.)
pub(crate) fn placeholders(
    user: &syn::ItemFn,
    receiver: Option<&syn::Receiver>,
    marker: &str,
    (message, label): (&str, &str),
    fns: &[(&str, (usize, usize), TokenStream)],
) -> TokenStream {
    let n = user.sig.inputs.len();
    if receiver.is_some() || n == 0 {
        return quote!();
    }
    let (vis, name) = (&user.vis, &user.sig.ident);
    let generics = crate::generic::Generics::of(&user.sig);
    let (gp, wc) = (&generics.params, &generics.where_clause);
    let marker = format_ident!("__{}_{}", name, marker);
    let fns = fns.iter().map(|(suffix, (per_param, extra), ret)| {
        let f = format_ident!("{}_{}", name, suffix);
        let rest = (1..per_param * n + extra).map(|_| quote!(_: impl ::core::marker::Sized));
        let ret = if ret.is_empty() {
            quote!()
        } else {
            quote!(-> #ret)
        };
        quote! {
            #[doc(hidden)]
            #[allow(dead_code, clippy::too_many_arguments)]
            #vis fn #f #gp(_: impl #marker, #(#rest),*) #ret #wc {
                ::core::unreachable!()
            }
        }
    });
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #[diagnostic::on_unimplemented(message = #message, label = #label)]
        #vis trait #marker {}
        #(#fns)*
    }
}
