//! Calls of helpers that write into an output buffer, `step(&x, &mut buf);`
//! (`outputs.rs` gives such a helper `step_outputs`, returning the buffer),
//! as the value and a copy back:
//!
//! ```text
//! let io: Vec<f64> = step_outputs(&x, &buf);
//! for k in 0..buf.len() { buf[k] = io[k]; }
//! ```
//!
//! `&mut buf[a..b]` writes back into that range. Writes into a buffer by
//! method are element loops too: `buf.copy_from_slice(src)` (lengths
//! checked, as the method does) and `buf.fill(v)`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::visit_mut::VisitMut;
use syn::{Expr, Stmt};

/// The hidden names of the rewritten calls (a user's function cannot mention
/// them: they start with `__gm_`).
const IO: &str = "__gm_io";
const K: &str = "__gm_k";

/// The buffer of `&mut buf` or `&mut buf[a..b]`.
fn lent(e: &Expr) -> Option<(syn::Ident, Option<syn::ExprRange>)> {
    let Expr::Reference(r) = super::strip(e) else {
        return None;
    };
    r.mutability?;
    match super::strip(&r.expr) {
        Expr::Path(p) => Some((p.path.get_ident()?.clone(), None)),
        Expr::Index(ix) => {
            let Expr::Path(p) = super::strip(&ix.expr) else {
                return None;
            };
            let Expr::Range(range) = super::strip(&ix.index) else {
                return None;
            };
            Some((p.path.get_ident()?.clone(), Some(range.clone())))
        }
        _ => None,
    }
}

/// `buf.copy_from_slice(src);` and `buf.fill(v);` on a local buffer as
/// element loops.
fn method_write(st: &Stmt) -> Option<Vec<Stmt>> {
    let Stmt::Expr(Expr::MethodCall(m), Some(_)) = st else {
        return None;
    };
    let Expr::Path(p) = super::strip(&m.receiver) else {
        return None;
    };
    let buf = p.path.get_ident()?;
    let k = syn::Ident::new(K, buf.span());
    match (m.method.to_string().as_str(), m.args.len()) {
        ("copy_from_slice", 1) => {
            let src = &m.args[0];
            let s = syn::Ident::new("__gm_src", buf.span());
            Some(vec![
                syn::parse_quote!(::core::assert_eq!(#buf.len(), (#src).len(), "source slice length does not match destination slice length");),
                syn::parse_quote!(let #s = #src;),
                syn::parse_quote!(for #k in 0..#buf.len() { #buf[#k] = #s[#k]; }),
            ])
        }
        ("fill", 1) => {
            let v = &m.args[0];
            Some(vec![
                syn::parse_quote!(for #k in 0..#buf.len() { #buf[#k] = #v; }),
            ])
        }
        _ => None,
    }
}

/// `g(.., &mut buf, ..);` as the statements above; `None` for any other
/// statement.
fn rewrite(st: &Stmt, ty: &TokenStream) -> Option<Vec<Stmt>> {
    if let Some(stmts) = method_write(st) {
        return Some(stmts);
    }
    let Stmt::Expr(Expr::Call(call), Some(_)) = st else {
        return None;
    };
    let Expr::Path(func) = &*call.func else {
        return None;
    };
    let lent_args: Vec<usize> = (0..call.args.len())
        .filter(|&i| lent(&call.args[i]).is_some())
        .collect();
    let [at] = lent_args[..] else { return None };
    let (buf, range) = lent(&call.args[at])?;
    let mut path = func.clone();
    let last = path.path.segments.last_mut()?;
    last.ident = format_ident!("{}_{}", last.ident, crate::outputs::SUFFIX);
    let mut args = call.args.clone();
    let (io, k) = (
        syn::Ident::new(IO, buf.span()),
        syn::Ident::new(K, buf.span()),
    );
    let (read, store) = match &range {
        None => (quote!(&#buf), quote!(#buf[#k])),
        Some(r) => {
            let start = r.start.as_deref().map_or(quote!(0), |s| quote!(#s));
            (quote!(&#buf[#r]), quote!(#buf[#start + #k]))
        }
    };
    args[at] = syn::parse_quote!(#read);
    Some(vec![
        syn::parse_quote!(let #io: ::std::vec::Vec<#ty> = #path(#args);),
        syn::parse_quote!(for #k in 0..#io.len() { #store = #io[#k]; }),
    ])
}

struct Calls<'a>(&'a TokenStream);

impl VisitMut for Calls<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        let mut out = Vec::with_capacity(b.stmts.len());
        for st in b.stmts.drain(..) {
            match rewrite(&st, self.0) {
                Some(stmts) => out.extend(stmts),
                None => out.push(st),
            }
        }
        b.stmts = out;
        syn::visit_mut::visit_block_mut(self, b);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Rewrites every call lending a buffer mutably in `block`; `ty` is the
/// function's float type.
pub(crate) fn desugar(block: &mut syn::Block, ty: &TokenStream) {
    Calls(ty).visit_block_mut(block);
}
