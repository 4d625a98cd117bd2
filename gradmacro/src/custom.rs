//! `#[custom_adjoint(f)]`: the user writes `f`'s adjoint by hand, with the
//! signature `#[differentiate]` would give it, and differentiated callers of
//! `f` use it through the `f_pullback` generated here.

use crate::ctxt::Ctxt;
use crate::ir::Shape;
use crate::names::Names;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;

/// `f` or `for = f`.
struct Target(syn::Path);

impl Parse for Target {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(syn::Token![for]) {
            input.parse::<syn::Token![for]>()?;
            input.parse::<syn::Token![=]>()?;
        }
        let path: syn::Path = input.parse()?;
        if !input.is_empty() {
            return Err(input.error("expected one function path: `#[custom_adjoint(softplus)]`"));
        }
        Ok(Target(path))
    }
}

pub fn custom_adjoint(attr: TokenStream, item: TokenStream) -> TokenStream {
    stacker::grow(1 << 28, || expand(attr, item))
}

fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let usage =
        "`#[custom_adjoint]` applies to a function `fn f_adjoint(x: f64, ..., d_out: f64) -> ...`";
    hand_written_rule(attr, item, usage, pullback)
}

/// The frame of `#[custom_adjoint(f)]` and `#[custom_tangent(f)]`: reads the
/// target `f` (`f` or `for = f`) and the rule, and emits the rule with what
/// `generate` makes of it, or with its errors.
pub(crate) fn hand_written_rule(
    attr: TokenStream,
    item: TokenStream,
    usage: &str,
    generate: impl FnOnce(&syn::Path, &syn::ItemFn, &mut Ctxt) -> TokenStream,
) -> TokenStream {
    let target = match syn::parse2::<Target>(attr) {
        Ok(t) => t.0,
        Err(e) => {
            let e = e.to_compile_error();
            return quote!(#item #e);
        }
    };
    let f: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let e = syn::Error::new_spanned(&item, usage).to_compile_error();
            return quote!(#item #e);
        }
    };
    let mut cx = Ctxt::default();
    let generated = generate(&target, &f, &mut cx);
    if cx.has_errors() {
        let errors = cx.into_compile_errors();
        return quote!(#f #errors);
    }
    quote!(#f #generated)
}

/// One parameter of the primal function, as the adjoint's signature shows it.
struct Param {
    ident: syn::Ident,
    ty: syn::Type,
    /// Float (scalar or array): it has a gradient entry.
    float: Option<Shape>,
}

fn pullback(target: &syn::Path, f: &syn::ItemFn, cx: &mut Ctxt) -> TokenStream {
    let inputs: Vec<&syn::PatType> = f
        .sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(t) => Some(t),
            syn::FnArg::Receiver(r) => {
                cx.error(r, "a custom adjoint is a free function, not a method");
                None
            }
        })
        .collect();
    let Some((seed, params)) = inputs.split_last() else {
        cx.error(&f.sig, "a custom adjoint takes the function's parameters followed by the output's adjoint: `fn f_adjoint(x: f64, d_out: f64) -> f64`");
        return TokenStream::new();
    };
    let seed_ty = &seed.ty;
    let float = match crate::signature::float_name(seed_ty) {
        Some(t) => t,
        None => {
            cx.error(
                seed_ty,
                "the last parameter is the output's adjoint: it must be `f64` or `f32`",
            );
            return TokenStream::new();
        }
    };
    let mut ps = Vec::new();
    for p in params {
        let ident = match &*p.pat {
            syn::Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => i.ident.clone(),
            other => {
                cx.error(other, "bind each parameter to a plain name");
                continue;
            }
        };
        match crate::signature::param_shape(&p.ty, None) {
            Ok(shape) => ps.push(Param {
                ident,
                ty: (*p.ty).clone(),
                float: shape,
            }),
            Err(msg) => cx.error(&p.ty, msg),
        }
    }
    if cx.has_errors() {
        return TokenStream::new();
    }
    let ty = format_ident!("{}", float);
    let floats: Vec<&Param> = ps.iter().filter(|p| p.float.is_some()).collect();
    if floats.is_empty() {
        cx.error(
            &f.sig.ident,
            "the function has no float parameter: there is nothing to differentiate",
        );
        return TokenStream::new();
    }
    let entry_ty = |s: &Shape| match s {
        Shape::Scalar => quote!(#ty),
        Shape::Array { len: None } => quote!(::std::vec::Vec<#ty>),
        Shape::Array { len: Some(n) } => quote!([#ty; #n]),
    };
    // Every name the pullback adds to the user's parameters comes from
    // `Names`: textually distinct from anything in the adjoint or the target,
    // and hygienic, so parameters called `d_out`, `g1` or `b` capture nothing.
    let mut fresh = Names::avoiding(quote!(#target #f));
    let seed_name = fresh.fresh("d_out");
    let (b, g) = (fresh.fresh("b"), fresh.fresh("g"));
    let names: Vec<syn::Ident> = floats
        .iter()
        .map(|p| fresh.fresh(&format!("d_{}_local", p.ident.unraw())))
        .collect();
    let grad_tys: Vec<TokenStream> = floats
        .iter()
        .map(|p| entry_ty(p.float.as_ref().expect("float")))
        .collect();
    let (pattern, annotation) = if floats.len() == 1 {
        let (n, t) = (&names[0], &grad_tys[0]);
        (quote!(#n), quote!(#t))
    } else {
        (quote!((#(#names),*)), quote!((#(#grad_tys),*)))
    };
    // One slot per parameter, as `#[differentiate]`'s pullbacks take them.
    let mut names_iter = names.iter();
    let mut slots = Vec::new();
    let mut adds = Vec::new();
    for p in &ps {
        let Some(shape) = &p.float else {
            slots.push(quote!(_: ()));
            continue;
        };
        let slot = fresh.adjoint(&p.ident);
        match shape {
            Shape::Scalar => {
                let n = names_iter.next().expect("one name per float");
                slots.push(quote!(#slot: ::core::option::Option<&mut #ty>));
                adds.push(quote! {
                    if let ::core::option::Option::Some(#b) = #slot {
                        *#b += #n;
                    }
                });
            }
            Shape::Array { .. } => {
                let n = names_iter.next().expect("one name per float");
                slots.push(quote!(#slot: ::core::option::Option<&mut [#ty]>));
                adds.push(quote! {
                    if let ::core::option::Option::Some(#b) = #slot {
                        for (#b, #g) in #b.iter_mut().zip(#n.iter()) {
                            *#b += *#g;
                        }
                    }
                });
            }
        }
    }
    let vis = &f.vis;
    let adjoint = &f.sig.ident;
    let Some(last) = target.segments.last() else {
        return TokenStream::new();
    };
    let pullback = format_ident!("{}_pullback", last.ident);
    let idents: Vec<&syn::Ident> = ps.iter().map(|p| &p.ident).collect();
    let tys: Vec<&syn::Type> = ps.iter().map(|p| &p.ty).collect();
    // The primal must take the same parameters and return the float: checked
    // by the compiler, at the attribute's argument.
    let check = quote_spanned!(target.span()=> const _: fn(#(#tys),*) -> #ty = #target;);
    let ret_span = match &f.sig.output {
        syn::ReturnType::Type(_, t) => t.span(),
        syn::ReturnType::Default => f.sig.ident.span(),
    };
    let bind =
        quote_spanned!(ret_span=> let #pattern: #annotation = #adjoint(#(#idents,)* #seed_name););
    let doc = format!(
        " Pullback of [`{}`] for differentiated callers, from [`{adjoint}`].",
        target.to_token_stream()
    );
    quote! {
        #check
        #[doc = #doc]
        #[doc(hidden)]
        #[allow(clippy::too_many_arguments)]
        #vis fn #pullback(#(#idents: #tys,)* #seed_name: #ty, #(#slots),*) {
            #bind
            #(#adds)*
        }
    }
}
