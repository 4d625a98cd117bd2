//! The public entry points, `f_grad`, `f_adjoint` and `f_adjoint_acc`: thin
//! wrappers that lend the core fresh (or the caller's) adjoint buffers and
//! the seed. The work is generated once, in the core; the optimiser inlines
//! the wrappers.

use super::{many_args, vec_refs};
use crate::ir::*;
use crate::names::Names;
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// A differentiable parameter seen from the wrappers.
struct Entry {
    /// The user's parameter.
    x: Ident,
    /// Its adjoint's name: a local of `f_grad`, a buffer of `f_adjoint_acc`.
    d: Ident,
    shape: Shape,
}

/// `f_grad`, `f_adjoint`, `f_adjoint_acc` over the core of `f`, and
/// `f_pullback` over the core of `all` (`f` with every float parameter
/// differentiable; where that could not be lowered, `f` and the parameters
/// whose derivatives are unavailable).
pub fn wrappers(
    f: &Func,
    all: (&Func, &[bool]),
    mut names: Names,
    user: &syn::ItemFn,
    receiver: Option<&syn::Receiver>,
    (core, all_core): (&TokenStream, &TokenStream),
) -> TokenStream {
    let vis = &user.vis;
    let name = &user.sig.ident;
    // Each generated function is a scope of its own: names start afresh.
    let mut pullback_names = names.clone();
    let ty = float_ty(&f.float);
    let entries: Vec<Entry> = f
        .params
        .iter()
        .filter(|p| p.var.is_some())
        .map(|p| Entry {
            x: p.ident.clone(),
            d: names.adjoint(&p.ident),
            shape: p.shape.clone(),
        })
        .collect();
    let seed = names.fresh("d_out");
    let value = names.fresh("value");
    let (params, args) = params_and_args(f, receiver);
    // The slots lent to the core: this function's own adjoints.
    let mut own_slots = Vec::new();
    let mut e = entries.iter();
    for p in &f.params {
        own_slots.push(match p.var {
            None => quote!(()),
            Some(_) => {
                let en = e.next().expect("an entry per differentiable parameter");
                let d = &en.d;
                if en.shape.is_array() {
                    quote!(::core::option::Option::Some(&mut #d[..]))
                } else {
                    quote!(::core::option::Option::Some(&mut #d))
                }
            }
        });
    }
    let zeros: Vec<TokenStream> = entries
        .iter()
        .map(|en| {
            let (x, d) = (&en.x, &en.d);
            let zero = crate::generic::lit(&ty, "0.0");
            match &en.shape {
                Shape::Scalar => quote!(let mut #d: #ty = #zero;),
                Shape::Array { len: Some(n) } => quote!(let mut #d: [#ty; #n] = [#zero; #n];),
                Shape::Array { len: None } => {
                    quote!(let mut #d: ::std::vec::Vec<#ty> = ::std::vec![#zero; #x.len()];)
                }
            }
        })
        .collect();
    let ds: Vec<&Ident> = entries.iter().map(|en| &en.d).collect();
    let grad = if ds.len() == 1 {
        quote!(#(#ds)*)
    } else {
        quote!((#(#ds),*))
    };
    let tys: Vec<TokenStream> = entries.iter().map(|en| entry_ty(&en.shape, &ty)).collect();
    let grad_ty = if tys.len() == 1 {
        quote!(#(#tys)*)
    } else {
        quote!((#(#tys),*))
    };
    // `f_adjoint_acc` lends the caller's buffers, checked against the
    // parameters' lengths.
    let mut buffers = Vec::new();
    let mut checks = Vec::new();
    let mut acc_slots = Vec::new();
    let mut e = entries.iter();
    for p in &f.params {
        if p.var.is_none() {
            acc_slots.push(quote!(()));
            continue;
        }
        let en = e.next().expect("an entry per differentiable parameter");
        let (x, d) = (&en.x, &en.d);
        if en.shape.is_array() {
            buffers.push(quote!(#d: &mut [#ty]));
            let msg = format!(
                "{name}: the buffer `{d}` has length {{}} but the parameter `{x}` has length {{}}"
            );
            checks.push(quote!(::core::assert!(#d.len() == #x.len(), #msg, #d.len(), #x.len());));
        } else {
            buffers.push(quote!(#d: &mut #ty));
        }
        acc_slots.push(quote!(::core::option::Option::Some(#d)));
    }

    let pullback = pullback(all, &mut pullback_names, user, receiver, all_core, &ty);
    let link = doc_link(name, receiver);
    let docs = Docs::new(name, &link, &entries);
    let (grad_doc, adjoint_doc, acc_doc) = (&docs.grad, &docs.adjoint, &docs.acc);
    let grad_name = format_ident!("{}_grad", name);
    let adjoint_name = format_ident!("{}_adjoint", name);
    let acc_name = format_ident!("{}_adjoint_acc", name);
    let ptr = vec_refs(f);
    let one = crate::generic::lit(&ty, "1.0");
    let (gp, wc) = (&f.generics.params, &f.generics.where_clause);
    let many = many_args(params.len());
    let many_1 = many_args(params.len() + 1);
    let many_acc = many_args(params.len() + 1 + buffers.len());
    // expands to something like
    //     fn f_grad(x: f64) -> (f64, f64) {
    //         let mut d_x: f64 = 0.0;
    //         let value = f_pullback(x, 1.0, Some(&mut d_x));
    //         (value, d_x)
    //     }
    // and the same for `f_adjoint` (the seed given) and `f_adjoint_acc`.
    quote! {
        #(#[doc = #grad_doc])*
        #[inline]
        #many
        #ptr
        #vis fn #grad_name #gp(#(#params),*) -> (#ty, #grad_ty) #wc {
            #(#zeros)*
            let #value = #core(#(#args,)* #one, #(#own_slots),*);
            (#value, #grad)
        }
        #(#[doc = #adjoint_doc])*
        #[inline]
        #many_1
        #ptr
        #vis fn #adjoint_name #gp(#(#params,)* #seed: #ty) -> #grad_ty #wc {
            #(#zeros)*
            #core(#(#args,)* #seed, #(#own_slots),*);
            #grad
        }
        #(#[doc = #acc_doc])*
        #[inline]
        #many_acc
        #ptr
        #vis fn #acc_name #gp(#(#params,)* #seed: #ty, #(#buffers),*) #wc {
            #(#checks)*
            #core(#(#args,)* #seed, #(#acc_slots),*);
        }
        #pullback
    }
}

/// `f_pullback`, what differentiated callers call: the core without the value.
/// A slot for a parameter whose derivatives are unavailable is filled with
/// NaN, so a caller that needs them sees it.
fn pullback(
    (all, unavailable): (&Func, &[bool]),
    names: &mut Names,
    user: &syn::ItemFn,
    receiver: Option<&syn::Receiver>,
    core: &TokenStream,
    ty: &TokenStream,
) -> TokenStream {
    let vis = &user.vis;
    let name = &user.sig.ident;
    let seed = names.fresh("d_out");
    let (params, args) = params_and_args(all, receiver);
    let mut slots = Vec::new();
    let mut slot_args = Vec::new();
    let mut poison = Vec::new();
    let nan = crate::generic::nan(ty);
    for (i, p) in all.params.iter().enumerate() {
        let x = &p.ident;
        if unavailable.get(i) == Some(&true) {
            let d = names.adjoint(x);
            slot_args.push(quote!(()));
            let slot = slot_ty(&p.shape, ty);
            slots.push(quote!(#d: #slot));
            if p.shape.is_array() {
                poison.push(quote! {
                    if let ::core::option::Option::Some(b) = #d {
                        b.fill(#nan);
                    }
                });
            } else {
                poison.push(quote! {
                    if let ::core::option::Option::Some(b) = #d {
                        *b = #nan;
                    }
                });
            }
            continue;
        }
        if p.var.is_none() {
            slots.push(quote!(_: ()));
            slot_args.push(quote!(()));
            continue;
        }
        let d = names.adjoint(x);
        let slot = slot_ty(&p.shape, ty);
        slots.push(quote!(#d: #slot));
        slot_args.push(quote!(#d));
    }
    let link = doc_link(name, receiver);
    let doc = format!(
        " Pullback of {link} for differentiated callers: adds `d_out` times each argument's share of the gradient into the slot lent for it (`None`: not wanted; `()`: a constant)."
    );
    let name = format_ident!("{}_pullback", name);
    let many = many_args(params.len() + 1 + slots.len());
    let ptr = vec_refs(all);
    let (gp, wc) = (&all.generics.params, &all.generics.where_clause);
    quote! {
        #[doc = #doc]
        #[doc(hidden)]
        #[inline]
        #many
        #ptr
        #vis fn #name #gp(#(#params,)* #seed: #ty, #(#slots),*) #wc {
            #(#poison)*
            #core(#(#args,)* #seed, #(#slot_args),*);
        }
    }
}

/// The wrappers' documentation, naming the user's function and parameters.
struct Docs {
    grad: Vec<String>,
    adjoint: Vec<String>,
    acc: Vec<String>,
}

impl Docs {
    fn new(name: &Ident, link: &str, entries: &[Entry]) -> Docs {
        let shape = if let [one] = entries {
            format!("`d{name}/d{}`", one.x)
        } else {
            let parts: Vec<String> = entries
                .iter()
                .map(|e| format!("d{name}/d{}", e.x))
                .collect();
            format!("the tuple `({})`", parts.join(", "))
        };
        let buffers: Vec<String> = entries.iter().map(|e| format!("`{}`", e.d)).collect();
        let generated = " Generated by `#[differentiate]`.".to_string();
        Docs {
            grad: vec![
                format!(" Value and gradient of {link}: returns `({name}(..), gradient)`, the gradient being {shape}."),
                String::new(),
                format!(" The value is bit-identical to `{name}`'s; the gradient is computed afresh on every call."),
                generated.clone(),
            ],
            adjoint: vec![
                format!(" Pullback of {link}: returns `d_out` times the gradient ({shape})."),
                String::new(),
                generated.clone(),
            ],
            acc: vec![
                format!(
                    " Pullback of {link}, accumulated: ADDS `d_out` times the gradient into {},",
                    buffers.join(", ")
                ),
                " one buffer per differentiable parameter, allocating nothing for them.".to_string(),
                String::new(),
                " Use it to sum gradients over a minibatch on purpose; zero the buffers between steps."
                    .to_string(),
                " Panics if a buffer's length differs from its parameter's.".to_string(),
                String::new(),
                generated,
            ],
        }
    }
}

/// The user's parameters as declared by a wrapper, and as passed on to the
/// core; a method's receiver first.
pub(super) fn params_and_args(
    f: &Func,
    receiver: Option<&syn::Receiver>,
) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let mut params = Vec::new();
    let mut args = Vec::new();
    if let Some(r) = receiver {
        params.push(quote!(#r));
        args.push(quote!(self));
    }
    for p in &f.params {
        let (i, t) = (&p.ident, &p.ty);
        params.push(quote!(#i: #t));
        args.push(quote!(#i));
    }
    (params, args)
}

/// A link to the user's function in generated docs: a method is reached
/// through `Self`.
pub fn doc_link(name: &Ident, receiver: Option<&syn::Receiver>) -> String {
    match receiver {
        Some(_) => format!("[`{name}`](Self::{name})"),
        None => format!("[`{name}`]"),
    }
}

/// The type of a gradient entry: the parameter's shape, holding floats.
pub fn entry_ty(shape: &Shape, ty: &TokenStream) -> TokenStream {
    match shape {
        Shape::Scalar => quote!(#ty),
        Shape::Array { len: None } => quote!(::std::vec::Vec<#ty>),
        Shape::Array { len: Some(n) } => quote!([#ty; #n]),
    }
}

/// The slot a differentiated caller lends for a float parameter's share of
/// the adjoint (`None`: not wanted).
pub fn slot_ty(shape: &Shape, ty: &TokenStream) -> TokenStream {
    if shape.is_array() {
        quote!(::core::option::Option<&mut [#ty]>)
    } else {
        quote!(::core::option::Option<&mut #ty>)
    }
}

/// The float type's name, as generated code writes it.
pub fn float_ty(float: &Float) -> TokenStream {
    match float {
        Float::F64 => quote!(f64),
        Float::F32 => quote!(f32),
        Float::Generic(t) => quote!(#t),
    }
}
