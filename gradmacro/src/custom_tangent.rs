//! `#[custom_tangent(f)]`: the user writes `f`'s forward mode by hand,
//! `fn rule(args.., t_a, ..) -> (value, derivative)` (one tangent per float
//! parameter, `f64` or `&[f64]`, after all the arguments), and callers with
//! `tangent` use it through the `f_pushforward` generated here.

use crate::ctxt::Ctxt;
use crate::ir::Shape;
use crate::names::Names;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::spanned::Spanned;

pub fn custom_tangent(attr: TokenStream, item: TokenStream) -> TokenStream {
    let usage = "`#[custom_tangent]` applies to a function `fn rule(x: f64, ..., t_x: f64, ...) -> (f64, f64)`";
    crate::custom::hand_written_rule(attr, item, usage, pushforward)
}

/// A parameter of the rule: its name, type and float shape (`None`: passive).
type Param = (syn::Ident, syn::Type, Option<Shape>);

fn pushforward(target: &syn::Path, f: &syn::ItemFn, cx: &mut Ctxt) -> TokenStream {
    let mut ps: Vec<Param> = Vec::new();
    for a in &f.sig.inputs {
        let syn::FnArg::Typed(t) = a else {
            cx.error(a, "a custom tangent rule is a free function, not a method");
            continue;
        };
        let syn::Pat::Ident(i) = &*t.pat else {
            cx.error(&t.pat, "bind each parameter to a plain name");
            continue;
        };
        match crate::signature::param_shape(&t.ty, None) {
            Ok(shape) => ps.push((i.ident.clone(), (*t.ty).clone(), shape)),
            Err(msg) => cx.error(&t.ty, msg),
        }
    }
    if cx.has_errors() {
        return TokenStream::new();
    }
    // The function's parameters come first, then one tangent per float one,
    // in order and of the same shape: find where the tangents start.
    let split = (0..=ps.len()).find(|&k| {
        let floats: Vec<&Shape> = ps[..k].iter().filter_map(|p| p.2.as_ref()).collect();
        floats.len() == ps.len() - k
            && !floats.is_empty()
            && floats
                .iter()
                .zip(&ps[k..])
                .all(|(s, t)| t.2.as_ref().is_some_and(|u| u.is_array() == s.is_array()))
    });
    let Some(k) = split else {
        cx.error(
            &f.sig.inputs,
            "a tangent rule takes the function's parameters, then one tangent per float parameter \
             (`f64` for a scalar, `&[f64]` for an array), in order: `fn rule(x: f64, w: &[f64], t_x: f64, t_w: &[f64]) -> (f64, f64)`",
        );
        return TokenStream::new();
    };
    let (params, tangents) = ps.split_at(k);
    let ty = match tangents
        .iter()
        .find(|t| !t.2.as_ref().is_some_and(Shape::is_array))
    {
        Some(t) => t.1.to_token_stream(),
        None => {
            let t = tangents[0].1.to_token_stream().to_string();
            if t.contains("f32") {
                quote!(f32)
            } else {
                quote!(f64)
            }
        }
    };
    let mut fresh = Names::avoiding(quote!(#target #f));
    let mut slots = Vec::new();
    let mut bind = Vec::new();
    let mut rule_ts = Vec::new();
    for (x, _, shape) in params {
        let Some(shape) = shape else {
            slots.push(quote!(_: ()));
            continue;
        };
        let t = fresh.fresh(&format!("t_{}", x.unraw()));
        if shape.is_array() {
            slots.push(quote!(#t: ::core::option::Option<&[#ty]>));
            let zeros = fresh.fresh(&format!("{t}_zeros"));
            bind.push(crate::emit::zeros_for_none(&t, &zeros, x, &ty));
        } else {
            slots.push(quote!(#t: #ty));
        }
        rule_ts.push(t);
    }
    let xs: Vec<&syn::Ident> = params.iter().map(|p| &p.0).collect();
    let tys: Vec<&syn::Type> = params.iter().map(|p| &p.1).collect();
    let Some(last) = target.segments.last() else {
        return TokenStream::new();
    };
    let name = quote::format_ident!("{}_pushforward", last.ident);
    let rule = &f.sig.ident;
    let vis = &f.vis;
    // The primal must take the same parameters and return the float.
    let check = quote_spanned!(target.span()=> const _: fn(#(#tys),*) -> #ty = #target;);
    let doc = format!(
        " Pushforward of [`{}`] for differentiated callers in forward mode, from [`{rule}`].",
        target.to_token_stream()
    );
    quote! {
        #check
        #[doc = #doc]
        #[doc(hidden)]
        #[allow(clippy::too_many_arguments)]
        #vis fn #name(#(#xs: #tys,)* #(#slots),*) -> (#ty, #ty) {
            #(#bind)*
            #rule(#(#xs,)* #(#rule_ts),*)
        }
    }
}
