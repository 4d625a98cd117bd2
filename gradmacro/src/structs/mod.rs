//! Differentiating with respect to a struct: `wrt(self)` on a method, or
//! `wrt(p)` for a parameter whose type derives `gradmacro::Differentiable`.
//!
//! The body's float field paths (`fields.rs`) become parameters of their own
//! in a rewritten function (`p.l1.w[i]` reads `p_l1_w[i]`, a `&[f64]`), which
//! the ordinary pipeline lowers and gives a core; the struct stays a constant
//! parameter for the data it holds (`p.n_in`). The gradient entry is a value
//! of the struct's own type, made by the derive (floats zeroed, the rest
//! copied), and the core's slots point into its fields.

mod fields;

use crate::args::Args;
use crate::ctxt::Ctxt;
use crate::ir::{Func, Shape};
use crate::names::Names;
use crate::{emit, expand, signature};
use fields::Leaf;
use proc_macro2::{Delimiter, Group, Ident, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{FnArg, Pat, Type};

/// The name of what `#[derive(Differentiable)]` generates: a copy of the
/// value with every float zeroed. Its name is what a user who forgot the
/// derive reads in the compiler's error.
pub const ZERO: &str = "__gradmacro_Differentiable_zero";

/// A struct named in `wrt(..)`.
struct Root {
    name: String,
    /// `Self`, or the parameter's type without its reference.
    ty: Type,
    by_value: bool,
}

impl Root {
    fn ident(&self) -> TokenStream {
        if self.name == "self" {
            quote!(self)
        } else {
            Ident::new(&self.name, proc_macro2::Span::call_site()).to_token_stream()
        }
    }

    /// The struct as a reference, whatever the parameter is.
    fn as_ref(&self) -> TokenStream {
        let r = self.ident();
        if self.by_value {
            quote!(&#r)
        } else {
            r
        }
    }
}

/// A type that is neither a float, an integer nor an array of them.
fn struct_type(ty: &Type) -> Option<(Type, bool)> {
    let (inner, by_value) = match ty {
        Type::Reference(r) if r.mutability.is_none() => (&*r.elem, false),
        Type::Reference(_) => return None,
        t => (t, true),
    };
    match inner {
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            let scalar = p.path.get_ident().is_some_and(|i| {
                signature::float_name(inner).is_some()
                    || [
                        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64",
                        "u128", "usize", "bool",
                    ]
                    .contains(&i.to_string().as_str())
            });
            (!scalar && last.ident != "Vec").then(|| (inner.clone(), by_value))
        }
        _ => None,
    }
}

/// Whether `wrt(..)` names `self` or a struct parameter.
pub fn wanted(f: &syn::ItemFn, args: &Args) -> bool {
    !roots(f, args).is_empty()
}

fn roots(f: &syn::ItemFn, args: &Args) -> Vec<Root> {
    let Some(wrt) = &args.wrt else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for input in &f.sig.inputs {
        match input {
            FnArg::Receiver(r) if wrt.iter().any(|w| w == "self") => out.push(Root {
                name: "self".into(),
                ty: syn::parse_quote!(Self),
                by_value: r.reference.is_none(),
            }),
            FnArg::Typed(pt) => {
                let Pat::Ident(pi) = &*pt.pat else { continue };
                if !wrt.contains(&pi.ident) {
                    continue;
                }
                if let Some((ty, by_value)) = struct_type(&pt.ty) {
                    out.push(Root {
                        name: pi.ident.to_string(),
                        ty,
                        by_value,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

pub fn expand(f: &syn::ItemFn, args: &Args, cx: &mut Ctxt) -> Option<TokenStream> {
    let roots = roots(f, args);
    for flag in [args.tangent_flag.as_ref(), args.hessian_flag.as_ref()]
        .into_iter()
        .flatten()
    {
        cx.error(flag, format!("`{flag}` with a struct in `wrt(..)` is not supported yet: differentiate with respect to the struct's fields passed as `f64`/`&[f64]` parameters"));
    }
    if signature::vector_output(&f.sig).is_some() {
        cx.error(&f.sig.output, "a vector output with a struct in `wrt(..)` is not supported yet: return the scalar loss, or pass the struct's fields as `&[f64]` parameters");
    }
    if let Some(FnArg::Receiver(r)) = f.sig.inputs.first() {
        if r.mutability.is_some() || r.colon_token.is_some() {
            cx.error(r, "a differentiated method takes `&self` (or `self` of a `Copy` type): it reads its fields and cannot write to them");
        }
    }
    let names: Vec<String> = roots.iter().map(|r| r.name.clone()).collect();
    let (leaves, errors) = fields::leaves(&f.block, &names);
    for (at, msg) in errors {
        cx.error(at, msg);
    }
    let float = match &f.sig.output {
        syn::ReturnType::Type(_, t) => signature::float_name(t),
        syn::ReturnType::Default => None,
    };
    let Some(float) = float else {
        // The ordinary checks say what the return type must be.
        signature::check(&f.sig, &Args::default(), cx);
        return None;
    };
    let ty = Ident::new(float, proc_macro2::Span::call_site());

    // One parameter per float field path, named after it.
    let mut taken = Names::avoiding(f.to_token_stream());
    let params: Vec<Option<Ident>> = leaves
        .iter()
        .map(|l| {
            l.float.then(|| {
                let base = l.dotted().replace('.', "_");
                Ident::new(&taken.fresh(&base).to_string(), l.span)
            })
        })
        .collect();
    for r in &roots {
        if !leaves.iter().any(|l| l.float && l.root == r.name) {
            let at = args
                .wrt
                .iter()
                .flatten()
                .find(|w| *w == &r.name)
                .map(|w| w.to_token_stream());
            cx.error(at, format!("`{}`: the body reads no float field of it, so there is nothing to differentiate (fields read only as integers, conditions or lengths are data)", r.name));
        }
    }
    let mut unknown = Vec::new();
    let body = rewrite(
        f.block.to_token_stream(),
        &names,
        &leaves,
        &params,
        &mut unknown,
    );
    for (at, msg) in unknown {
        cx.error(at, msg);
    }
    if cx.has_errors() {
        return None;
    }
    let flat = flatten(f, args, &roots, &leaves, &params, &ty, body)?;
    let flat_args = Args {
        wrt: Some(flat_wrt(args, &roots, &leaves, &params)),
        ..Args::default()
    };
    let sig = signature::check(&flat.sig, &flat_args, cx)?;
    if cx.has_errors() {
        return None;
    }
    let (func, lowered_names) = expand::lower_until_stable(&flat, &sig, cx)?;
    if cx.has_errors() {
        return None;
    }
    Some(generate(
        f,
        &roots,
        &leaves,
        &params,
        &func,
        lowered_names,
        sig.receiver.as_ref(),
    ))
}

/// The body with every float field path replaced by its parameter; a path
/// the analysis did not see (inside a macro it could not read) is an error.
fn rewrite(
    ts: TokenStream,
    roots: &[String],
    leaves: &[Leaf],
    params: &[Option<Ident>],
    unknown: &mut Vec<(TokenStream, String)>,
) -> TokenStream {
    let toks: Vec<TokenTree> = ts.into_iter().collect();
    let dot = |t: Option<&TokenTree>| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == '.');
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            TokenTree::Group(g) => {
                let inner = rewrite(g.stream(), roots, leaves, params, unknown);
                let mut ng = Group::new(g.delimiter(), inner);
                ng.set_span(g.span());
                out.push(TokenTree::Group(ng));
                i += 1;
            }
            TokenTree::Ident(id)
                if roots.contains(&id.to_string()) && !(i > 0 && dot(toks.get(i - 1))) =>
            {
                let mut j = i + 1;
                let mut path = Vec::new();
                // `.field`, but not `..`, `.method(` or `.method::<`.
                while dot(toks.get(j)) && !dot(toks.get(j + 1)) {
                    let Some(TokenTree::Ident(field)) = toks.get(j + 1) else {
                        break;
                    };
                    match toks.get(j + 2) {
                        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                            break
                        }
                        Some(TokenTree::Punct(p)) if p.as_char() == ':' => break,
                        _ => {}
                    }
                    path.push(field.to_string());
                    j += 2;
                }
                let found = leaves.iter().position(|l| {
                    *id == l.root
                        && l.path.len() == path.len()
                        && l.path.iter().zip(&path).all(|(a, b)| a == b)
                });
                match (path.is_empty(), found) {
                    (false, Some(k)) if params[k].is_some() => {
                        out.push(TokenTree::Ident(params[k].clone().expect("a float field")));
                    }
                    (false, None) => {
                        let tokens: TokenStream = toks[i..j].iter().cloned().collect();
                        let msg = format!("cannot follow how `{}.{}` is read here (inside a macro?): read it into a local first (`let v = {}.{};`) and use that", id, path.join("."), id, path.join("."));
                        unknown.push((tokens.clone(), msg));
                        out.extend(tokens);
                    }
                    _ => out.extend(toks[i..j].iter().cloned()),
                }
                i = j;
            }
            t => {
                out.push(t.clone());
                i += 1;
            }
        }
    }
    out.into_iter().collect()
}

/// The user's function with each struct followed by its float fields as
/// parameters, and the struct itself a constant reference.
fn flatten(
    f: &syn::ItemFn,
    _args: &Args,
    roots: &[Root],
    leaves: &[Leaf],
    params: &[Option<Ident>],
    ty: &Ident,
    body: TokenStream,
) -> Option<syn::ItemFn> {
    let fields_of = |root: &str| -> Vec<TokenStream> {
        leaves
            .iter()
            .zip(params)
            .filter(|(l, _)| l.root == root)
            .filter_map(|(l, p)| {
                let p = p.as_ref()?;
                Some(if l.array {
                    quote!(#p: &[#ty])
                } else {
                    quote!(#p: #ty)
                })
            })
            .collect()
    };
    let mut inputs: Vec<TokenStream> = Vec::new();
    for input in &f.sig.inputs {
        match input {
            FnArg::Receiver(r) => {
                inputs.push(r.to_token_stream());
                inputs.extend(fields_of("self"));
            }
            FnArg::Typed(pt) => {
                let name = match &*pt.pat {
                    Pat::Ident(pi) => pi.ident.to_string(),
                    _ => String::new(),
                };
                match roots.iter().find(|r| r.name == name) {
                    Some(r) => {
                        let (pat, t) = (&pt.pat, &r.ty);
                        inputs.push(quote!(#pat: &#t));
                        inputs.extend(fields_of(&name));
                    }
                    None => inputs.push(pt.to_token_stream()),
                }
            }
        }
    }
    let mut flat = f.clone();
    flat.attrs.clear();
    flat.sig.inputs = syn::parse_quote!(#(#inputs),*);
    flat.block = syn::parse2(body).ok()?;
    Some(flat)
}

/// `wrt(..)` of the rewritten function: each struct replaced by its float
/// fields' parameters.
fn flat_wrt(args: &Args, roots: &[Root], leaves: &[Leaf], params: &[Option<Ident>]) -> Vec<Ident> {
    let mut out = Vec::new();
    for w in args.wrt.iter().flatten() {
        if roots.iter().any(|r| w == &r.name) {
            for (l, p) in leaves.iter().zip(params) {
                if let (true, Some(p)) = (w == &l.root, p) {
                    out.push(p.clone());
                }
            }
        } else {
            out.push(w.clone());
        }
    }
    out
}

/// What one parameter of the rewritten function is.
enum Arg<'a> {
    Struct(&'a Root),
    Field(&'a Root, &'a Leaf),
    Plain,
}

/// `f_grad`, `f_adjoint`, `f_adjoint_acc` over the core of the rewritten
/// function, with the structs' gradients as values of their own types.
fn generate(
    user: &syn::ItemFn,
    roots: &[Root],
    leaves: &[Leaf],
    params: &[Option<Ident>],
    func: &Func,
    lowered_names: Names,
    receiver: Option<&syn::Receiver>,
) -> TokenStream {
    let (vis, name) = (&user.vis, &user.sig.ident);
    let ty = emit::float_ty(func.float);
    let this = receiver.map(|_| quote!(Self::));
    let user_fn = quote!(#this #name);
    let core_name = format_ident!("__{}_core", name);
    let core = emit::private_core(func, lowered_names, &core_name, (&user_fn, receiver));
    let mut n = Names::avoiding(user.to_token_stream());
    let (seed, value) = (n.fresh("d_out"), n.fresh("value"));

    let kind = |p: &crate::ir::Param| -> Arg {
        let id = p.ident.to_string();
        if let Some(r) = roots.iter().find(|r| r.name == id) {
            return Arg::Struct(r);
        }
        for (k, (l, q)) in leaves.iter().zip(params).enumerate() {
            if q.as_ref().is_some_and(|q| *q == p.ident) {
                let r = roots.iter().find(|r| r.name == l.root).expect("a root");
                return Arg::Field(r, &leaves[k]);
            }
        }
        Arg::Plain
    };

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
    let mut args: Vec<TokenStream> = receiver.iter().map(|_| quote!(self)).collect();
    let mut own_slots = Vec::new();
    let mut acc_slots = Vec::new();
    for p in &func.params {
        let x = &p.ident;
        match kind(p) {
            Arg::Struct(r) => {
                args.push(r.as_ref());
                own_slots.push(quote!(()));
                acc_slots.push(quote!(()));
            }
            Arg::Field(r, l) => {
                let place = l.place(&r.ident());
                args.push(if l.array { quote!(&#place) } else { place });
                let d = l.place(&d_of_root[&r.name].to_token_stream());
                let slot = match (p.var.is_some(), l.array) {
                    (false, _) => quote!(()),
                    (true, true) => quote!(::core::option::Option::Some(&mut #d[..])),
                    (true, false) => quote!(::core::option::Option::Some(&mut #d)),
                };
                own_slots.push(slot.clone());
                acc_slots.push(slot);
            }
            Arg::Plain => {
                args.push(quote!(#x));
                match d_of_param.get(&x.to_string()) {
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
                }
            }
        }
    }

    let witnesses = witnesses(roots, leaves);
    // The user's parameters (under the names the core's lowering gave the
    // plain ones), a struct as declared.
    let mut user_params: Vec<TokenStream> = receiver.iter().map(|r| r.to_token_stream()).collect();
    for p in &func.params {
        match kind(p) {
            Arg::Struct(r) => {
                let declared = user.sig.inputs.iter().find_map(|i| match i {
                    FnArg::Typed(pt) if matches!(&*pt.pat, Pat::Ident(pi) if pi.ident == r.name) => {
                        Some(&pt.ty)
                    }
                    _ => None,
                });
                let x = r.ident();
                user_params.push(quote!(#x: #declared));
            }
            Arg::Field(..) => {}
            Arg::Plain => {
                let (x, t) = (&p.ident, &p.ty);
                user_params.push(quote!(#x: #t));
            }
        }
    }
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
    let data_types = [
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
        "bool",
    ]
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
