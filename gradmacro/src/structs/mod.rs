//! Differentiating with respect to a struct: `wrt(self)` on a method, or
//! `wrt(p)` for a parameter whose type derives `gradmacro::Differentiable`.
//!
//! The body's float field paths (`fields/`) become parameters of their own
//! in a rewritten function (`p.l1.w[i]` reads `p_l1_w[i]`, a `&[f64]`), which
//! the ordinary pipeline lowers and gives a core; the struct stays a constant
//! parameter for the data it holds (`p.n_in`). The gradient entry is a value
//! of the struct's own type, made by the derive (floats zeroed, the rest
//! copied), and the core's slots point into its fields.

mod fields;
mod wrappers;

use wrappers::{generate, tangent, Parts};

use crate::args::Args;
use crate::ctxt::Ctxt;
use crate::names::Names;
use crate::{expand, signature};
use fields::Leaf;
use proc_macro2::{Delimiter, Group, Ident, TokenStream, TokenTree};
use quote::{quote, ToTokens};
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
            let scalar = signature::float_name(inner).is_some() || signature::integer(inner);
            (!scalar && last.ident != "Vec").then(|| (inner.clone(), by_value))
        }
        _ => None,
    }
}

/// A type parameter of the function: a generic float, not a struct.
fn generic(f: &syn::ItemFn, ty: &Type) -> bool {
    let Type::Path(p) = ty else { return false };
    f.sig
        .generics
        .type_params()
        .any(|t| p.path.is_ident(&t.ident))
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
                if let Some((ty, by_value)) = struct_type(&pt.ty).filter(|(t, _)| !generic(f, t)) {
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
    if let Some(flag) = &args.hessian_flag {
        cx.error(flag, "`hessian` with a struct in `wrt(..)` is not supported yet: pass the fields to differentiate as `f64`/`&[f64]` parameters");
    }
    if signature::vector_output(&f.sig).is_some() {
        cx.error(&f.sig.output, "a vector output with a struct in `wrt(..)` is not supported yet: return the scalar loss, or pass the struct's fields as `&[f64]` parameters");
        return None;
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
    let flat = flatten(f, &roots, &leaves, &params, &ty, body)?;
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
    let parts = Parts {
        user: f,
        roots: &roots,
        leaves: &leaves,
        params: &params,
        func: &func,
        receiver: sig.receiver.as_ref(),
    };
    let tangent = if args.tangent {
        tangent(&parts, lowered_names.clone())
    } else {
        quote!()
    };
    let reverse = generate(&parts, lowered_names);
    Some(quote!(#reverse #tangent))
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
