//! The generated functions of a function differentiated with respect to a
//! struct: thin wrappers over the core of the rewritten function, lending it
//! the struct gradient's fields as slots.

use super::{Leaf, Root, ZERO};
use crate::emit;
use crate::ir::{Func, Shape};
use crate::names::Names;
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{FnArg, Pat};

/// What the generated functions are made from.
pub(super) struct Parts<'a> {
    pub(super) user: &'a syn::ItemFn,
    pub(super) roots: &'a [Root],
    pub(super) leaves: &'a [Leaf],
    pub(super) params: &'a [Option<Ident>],
    pub(super) func: &'a Func,
    pub(super) receiver: Option<&'a syn::Receiver>,
}

impl Parts<'_> {
    fn kind(&self, p: &crate::ir::Param) -> Arg<'_> {
        let id = p.ident.to_string();
        if let Some(r) = self.roots.iter().find(|r| r.name == id) {
            return Arg::Struct(r);
        }
        for (l, q) in self.leaves.iter().zip(self.params) {
            if q.as_ref().is_some_and(|q| *q == p.ident) {
                let r = self
                    .roots
                    .iter()
                    .find(|r| r.name == l.root)
                    .expect("a root");
                return Arg::Field(r, l);
            }
        }
        Arg::Plain
    }

    /// The user's parameters as the wrappers declare them (the plain ones
    /// under the names the lowering gave them), the receiver first.
    fn declared(&self) -> Vec<TokenStream> {
        let mut out: Vec<TokenStream> = self.receiver.iter().map(|r| r.to_token_stream()).collect();
        for p in &self.func.params {
            match self.kind(p) {
                Arg::Struct(r) => {
                    let declared = self.user.sig.inputs.iter().find_map(|i| match i {
                        FnArg::Typed(pt) if matches!(&*pt.pat, Pat::Ident(pi) if pi.ident == r.name) => {
                            Some(&pt.ty)
                        }
                        _ => None,
                    });
                    let x = r.ident();
                    out.push(quote!(#x: #declared));
                }
                Arg::Field(..) => {}
                Arg::Plain => {
                    let (x, t) = (&p.ident, &p.ty);
                    out.push(quote!(#x: #t));
                }
            }
        }
        out
    }

    /// What the core is given for each parameter: the struct, a field of it,
    /// or the argument.
    fn args(&self) -> Vec<TokenStream> {
        let mut out: Vec<TokenStream> = self.receiver.iter().map(|_| quote!(self)).collect();
        for p in &self.func.params {
            out.push(match self.kind(p) {
                Arg::Struct(r) => r.as_ref(),
                Arg::Field(r, l) => {
                    let place = l.place(&r.ident());
                    if l.array {
                        quote!(&#place)
                    } else {
                        place
                    }
                }
                Arg::Plain => p.ident.to_token_stream(),
            });
        }
        out
    }
}

/// `f_tangent(args.., t_p: &S, t_x: f64, ..) -> (f64, f64)`: a struct's
/// tangent is a value of its type, read at the float fields the body uses.
pub(super) fn tangent(parts: &Parts, names: Names) -> TokenStream {
    let (user, func, receiver) = (parts.user, parts.func, parts.receiver);
    let (vis, name) = (&user.vis, &user.sig.ident);
    let ty = emit::float_ty(&func.float);
    let this = receiver.map(|_| quote!(Self::));
    let user_fn = quote!(#this #name);
    let core_name = format_ident!("__{}_tangent_core", name);
    let core = emit::jvp_core(
        func,
        names,
        &core_name,
        (&user_fn, receiver),
        (func.output, &ty),
        false,
    );
    let mut n = Names::avoiding(user.to_token_stream());
    let mut t_params = Vec::new();
    let mut t_of_root = std::collections::HashMap::new();
    if let Some(r) = parts.roots.iter().find(|r| r.name == "self") {
        let t = n.fresh("t_self");
        let rt = &r.ty;
        t_params.push(quote!(#t: &#rt));
        t_of_root.insert(r.name.clone(), t);
    }
    let mut t_args = Vec::new();
    let mut checks = Vec::new();
    for p in &func.params {
        match parts.kind(p) {
            Arg::Struct(r) => {
                let t = n.fresh(&format!("t_{}", r.name));
                let rt = &r.ty;
                t_params.push(quote!(#t: &#rt));
                t_of_root.insert(r.name.clone(), t);
                t_args.push(quote!(()));
            }
            Arg::Field(r, l) => {
                let t = l.place(&t_of_root[&r.name].to_token_stream());
                t_args.push(match (p.var.is_some(), l.array) {
                    (false, _) => quote!(()),
                    (true, true) => {
                        let x = l.place(&r.ident());
                        let msg = format!(
                            "{name}_tangent: the tangent's `{}` has length {{}} but `{}` has length {{}}",
                            l.dotted().replacen(&r.name, &t_of_root[&r.name].to_string(), 1),
                            l.dotted()
                        );
                        checks.push(quote!(::core::assert!(#t.len() == #x.len(), #msg, #t.len(), #x.len());));
                        quote!(&#t)
                    }
                    (true, false) => t,
                });
            }
            Arg::Plain if p.var.is_some() => {
                let x = &p.ident;
                let t = n.fresh(&format!("t_{x}"));
                if p.shape.is_array() {
                    t_params.push(quote!(#t: &[#ty]));
                    let msg = format!("{name}_tangent: the tangent `{t}` has length {{}} but the parameter `{x}` has length {{}}");
                    checks.push(
                        quote!(::core::assert!(#t.len() == #x.len(), #msg, #t.len(), #x.len());),
                    );
                } else {
                    t_params.push(quote!(#t: #ty));
                }
                t_args.push(quote!(#t));
            }
            Arg::Plain => t_args.push(quote!(())),
        }
    }
    let declared = parts.declared();
    let args = parts.args();
    let link = emit::doc_link(name, receiver);
    let doc = format!(" Value and directional derivative of {link} (forward mode): one tangent per differentiable parameter, a struct's a value of its type whose float fields give the direction. Panics if a tangent's length differs from its parameter's.");
    let tangent_name = format_ident!("{name}_tangent");
    let many = emit::many_args(declared.len() + t_params.len());
    let ptr = emit::vec_refs(func);
    let core_path = quote!(#this #core_name);
    quote! {
        #[doc = #doc]
        #[doc = " Generated by `#[differentiate(tangent)]`."]
        #[inline]
        #many
        #ptr
        #vis fn #tangent_name(#(#declared,)* #(#t_params),*) -> (#ty, #ty) {
            #(#checks)*
            #core_path(#(#args,)* #(#t_args),*)
        }
        #core
    }
}

/// What one parameter of the rewritten function is.
enum Arg<'a> {
    Struct(&'a Root),
    Field(&'a Root, &'a Leaf),
    Plain,
}

/// `f_grad`, `f_adjoint`, `f_adjoint_acc` over the core of the rewritten
/// function, with the structs' gradients as values of their own types.
pub(super) fn generate(parts: &Parts, lowered_names: Names) -> TokenStream {
    let (user, roots, leaves, func, receiver) = (
        parts.user,
        parts.roots,
        parts.leaves,
        parts.func,
        parts.receiver,
    );
    let (vis, name) = (&user.vis, &user.sig.ident);
    let ty = emit::float_ty(&func.float);
    let this = receiver.map(|_| quote!(Self::));
    let user_fn = quote!(#this #name);
    let core_name = format_ident!("__{}_core", name);
    let core = emit::private_core(func, lowered_names, &core_name, (&user_fn, receiver));
    let mut n = Names::avoiding(user.to_token_stream());
    let (seed, value) = (n.fresh("d_out"), n.fresh("value"));
    let kind = |p: &crate::ir::Param| parts.kind(p);

    // The gradient's entries, in the user's parameter order.
    struct Entry {
        d: Ident,
        ty: TokenStream,
        zero: TokenStream,
        buffer: TokenStream,
        checks: Vec<TokenStream>,
    }
    let mut entries: Vec<Entry> = Vec::new();
    let mut d_of_root = std::collections::HashMap::new();
    let mut d_of_param = std::collections::HashMap::new();
    let struct_entry = |r: &Root, n: &mut Names| -> Entry {
        let d = n.fresh(&format!("d_{}", r.name));
        let t = &r.ty;
        let src = r.as_ref();
        let zero_fn = Ident::new(ZERO, t.span());
        let mut checks = Vec::new();
        for l in leaves
            .iter()
            .filter(|l| l.float && l.array && l.root == r.name)
        {
            let (x, b) = (l.place(&r.ident()), l.place(&d.to_token_stream()));
            let msg = format!(
                "{name}_adjoint_acc: the buffer's `{}` has length {{}} but `{}` has length {{}}",
                l.dotted().replacen(&r.name, &d.to_string(), 1),
                l.dotted()
            );
            checks.push(quote!(::core::assert!(#b.len() == #x.len(), #msg, #b.len(), #x.len());));
        }
        Entry {
            ty: t.to_token_stream(),
            zero: quote_spanned!(t.span()=> let mut #d: #t = <#t>::#zero_fn(#src);),
            buffer: quote!(#d: &mut #t),
            checks,
            d,
        }
    };
    if let Some(r) = roots.iter().find(|r| r.name == "self") {
        let e = struct_entry(r, &mut n);
        d_of_root.insert(r.name.clone(), e.d.clone());
        entries.push(e);
    }
    for p in &func.params {
        match kind(p) {
            Arg::Struct(r) => {
                let e = struct_entry(r, &mut n);
                d_of_root.insert(r.name.clone(), e.d.clone());
                entries.push(e);
            }
            Arg::Plain if p.var.is_some() => {
                let x = &p.ident;
                let d = n.adjoint(x);
                let (zero, buffer, checks) = match &p.shape {
                    Shape::Scalar => (quote!(let mut #d: #ty = 0.0;), quote!(#d: &mut #ty), vec![]),
                    Shape::Array { len } => {
                        let msg = format!("{name}_adjoint_acc: the buffer `{d}` has length {{}} but the parameter `{x}` has length {{}}");
                        (
                            match len {
                                Some(k) => quote!(let mut #d: [#ty; #k] = [0.0; #k];),
                                None => {
                                    quote!(let mut #d: ::std::vec::Vec<#ty> = ::std::vec![0.0; #x.len()];)
                                }
                            },
                            quote!(#d: &mut [#ty]),
                            vec![
                                quote!(::core::assert!(#d.len() == #x.len(), #msg, #d.len(), #x.len());),
                            ],
                        )
                    }
                };
                d_of_param.insert(x.to_string(), d.clone());
                entries.push(Entry {
                    ty: emit::entry_ty(&p.shape, &ty),
                    d,
                    zero,
                    buffer,
                    checks,
                });
            }
            _ => {}
        }
    }

    // What the core is given: the arguments, and a slot per parameter.
    let args = parts.args();
    let mut own_slots = Vec::new();
    let mut acc_slots = Vec::new();
    for p in &func.params {
        let x = &p.ident;
        match kind(p) {
            Arg::Struct(_) => {
                own_slots.push(quote!(()));
                acc_slots.push(quote!(()));
            }
            Arg::Field(r, l) => {
                let d = l.place(&d_of_root[&r.name].to_token_stream());
                let slot = match (p.var.is_some(), l.array) {
                    (false, _) => quote!(()),
                    (true, true) => quote!(::core::option::Option::Some(&mut #d[..])),
                    (true, false) => quote!(::core::option::Option::Some(&mut #d)),
                };
                own_slots.push(slot.clone());
                acc_slots.push(slot);
            }
            Arg::Plain => match d_of_param.get(&x.to_string()) {
                Some(d) if p.shape.is_array() => {
                    own_slots.push(quote!(::core::option::Option::Some(&mut #d[..])));
                    acc_slots.push(quote!(::core::option::Option::Some(#d)));
                }
                Some(d) => {
                    own_slots.push(quote!(::core::option::Option::Some(&mut #d)));
                    acc_slots.push(quote!(::core::option::Option::Some(#d)));
                }
                None => {
                    own_slots.push(quote!(()));
                    acc_slots.push(quote!(()));
                }
            },
        }
    }

    let witnesses = witnesses(roots, leaves);
    let user_params = parts.declared();
    let zeros: Vec<&TokenStream> = entries.iter().map(|e| &e.zero).collect();
    let buffers: Vec<&TokenStream> = entries.iter().map(|e| &e.buffer).collect();
    let checks: Vec<&TokenStream> = entries.iter().flat_map(|e| &e.checks).collect();
    let ds: Vec<&Ident> = entries.iter().map(|e| &e.d).collect();
    let tys: Vec<&TokenStream> = entries.iter().map(|e| &e.ty).collect();
    let (grad, grad_ty) = if ds.len() == 1 {
        (quote!(#(#ds)*), quote!(#(#tys)*))
    } else {
        (quote!((#(#ds),*)), quote!((#(#tys),*)))
    };
    let link = emit::doc_link(name, receiver);
    let (grad_name, adjoint_name, acc_name) = (
        format_ident!("{name}_grad"),
        format_ident!("{name}_adjoint"),
        format_ident!("{name}_adjoint_acc"),
    );
    let grad_doc = format!(" Value and gradient of {link}: returns `({name}(..), gradient)`. A struct's entry is a value of its own type holding, in each float field, the derivative with respect to that field (other fields are copies). The value is bit-identical to `{name}`'s; the gradient is fresh on every call.");
    let adjoint_doc =
        format!(" Pullback of {link}: `d_out` times the gradient, shaped as `{grad_name}`'s.");
    let acc_doc = format!(" Pullback of {link}, accumulated: ADDS `d_out` times the gradient into the buffers (a struct's into its float fields), one per differentiable parameter. Panics if a buffer's length differs from its parameter's.");
    let generated = " Generated by `#[differentiate]`.";
    let many = emit::many_args(user_params.len());
    let many_1 = emit::many_args(user_params.len() + 1);
    let many_acc = emit::many_args(user_params.len() + 1 + buffers.len());
    let ptr = emit::vec_refs(func);
    let core_path = quote!(#this #core_name);
    let core_doc = format!(" The forward and the reverse sweep of {link}, once, over its float fields as parameters of their own.");
    let message = format!(
        "`{name}` differentiates with respect to a struct: a differentiated function cannot call it yet; call it with the struct's fields as `f64`/`&[f64]` parameters"
    );
    let placeholders = emit::placeholders(
        user,
        receiver,
        "differentiates_a_struct",
        (&message, "called here by a differentiated function"),
        &[("pullback", (2, 1), quote!())],
    );
    quote! {
        #[doc = #grad_doc]
        #[doc = #generated]
        #[inline]
        #many
        #ptr
        #vis fn #grad_name(#(#user_params),*) -> (#ty, #grad_ty) {
            #witnesses
            #(#zeros)*
            let #value = #core_path(#(#args,)* 1.0, #(#own_slots),*);
            (#value, #grad)
        }
        #[doc = #adjoint_doc]
        #[doc = #generated]
        #[inline]
        #many_1
        #ptr
        #vis fn #adjoint_name(#(#user_params,)* #seed: #ty) -> #grad_ty {
            #(#zeros)*
            #core_path(#(#args,)* #seed, #(#own_slots),*);
            #grad
        }
        #[doc = #acc_doc]
        #[doc = #generated]
        #[inline]
        #many_acc
        #ptr
        #vis fn #acc_name(#(#user_params,)* #seed: #ty, #(#buffers),*) {
            #(#checks)*
            #core_path(#(#args,)* #seed, #(#acc_slots),*);
        }
        #[doc = #core_doc]
        #core
        #placeholders
    }
}

/// Field paths taken for data but also read as values are checked to be
/// integers or `bool`s: a float taken for data would lose its derivative.
fn witnesses(roots: &[Root], leaves: &[Leaf]) -> TokenStream {
    let reads: Vec<TokenStream> = leaves
        .iter()
        .filter(|l| l.needs_witness)
        .map(|l| {
            let r = roots.iter().find(|r| r.name == l.root).expect("a root");
            let place = l.place(&r.ident());
            if l.array {
                quote_spanned!(l.span=> data(&#place[..]);)
            } else {
                quote_spanned!(l.span=> data(&[#place][..]);)
            }
        })
        .collect();
    if reads.is_empty() {
        return quote!();
    }
    let data_types = crate::signature::INTEGERS
        .iter()
        .map(|t| Ident::new(t, proc_macro2::Span::call_site()));
    quote! {
        {
            #[diagnostic::on_unimplemented(
                message = "a field read as data (an integer or `bool`) is `{Self}`",
                label = "read as data: the macro cannot tell a float passed whole to a function, or only cast, from an integer",
                note = "to differentiate with respect to it, bind it with its type first: `let b: f64 = p.b;`"
            )]
            trait Data {}
            #(impl Data for #data_types {})*
            fn data<T: Data>(_: &[T]) {}
            #(#reads)*
        }
    }
}
