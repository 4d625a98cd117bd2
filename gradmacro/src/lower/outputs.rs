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
use quote::{format_ident, quote, ToTokens};
use std::collections::HashSet;
use syn::visit_mut::VisitMut;
use syn::{Expr, Stmt};

/// The hidden names of the rewritten calls (a user's function cannot mention
/// them: they start with `__gm_`).
const IO: &str = "__gm_io";
const K: &str = "__gm_k";
const AT: &str = "__gm_at";

/// Whether `v` is a value this rewrite made of a helper's output buffers
/// (`io` above), not one of the user's.
pub(crate) fn holds_outputs(v: &syn::Ident) -> bool {
    v.to_string().starts_with(IO)
}

/// What a call lends mutably: a buffer whole (`&mut buf`), a range of one
/// (`&mut buf[a..b]`), a float (`&mut s`) or an element (`&mut buf[i]`).
enum Lent {
    Whole(syn::Ident),
    Range(syn::Ident, syn::ExprRange),
    Scalar(syn::Ident),
    Elem(syn::Ident, Expr),
}

fn lent(e: &Expr, buffers: &HashSet<String>) -> Option<Lent> {
    let e = super::strip(e);
    // `(&mut buf[a..b]).try_into().unwrap()`, for a `&mut [f64; N]`.
    let e = match e {
        Expr::MethodCall(u) if u.method == "unwrap" && u.args.is_empty() => {
            match super::strip(&u.receiver) {
                Expr::MethodCall(t) if t.method == "try_into" && t.args.is_empty() => {
                    super::strip(&t.receiver)
                }
                _ => e,
            }
        }
        _ => e,
    };
    let Expr::Reference(r) = e else {
        return None;
    };
    r.mutability?;
    match super::strip(&r.expr) {
        Expr::Path(p) => {
            let name = p.path.get_ident()?.clone();
            Some(if buffers.contains(&name.to_string()) {
                Lent::Whole(name)
            } else {
                Lent::Scalar(name)
            })
        }
        Expr::Index(ix) => {
            let Expr::Path(p) = super::strip(&ix.expr) else {
                return None;
            };
            let name = p.path.get_ident()?.clone();
            Some(match super::strip(&ix.index) {
                Expr::Range(range) => Lent::Range(name, range.clone()),
                i => Lent::Elem(name, i.clone()),
            })
        }
        _ => None,
    }
}

/// Names that hold buffers rather than one float: indexed, measured,
/// iterated, or bound to an array (by type or by value) somewhere. Only
/// these tell `&mut buf` from `&mut s`; a wrong guess is a type error at
/// the call, never a wrong number.
struct Buffers<'a>(&'a mut HashSet<String>);

impl Buffers<'_> {
    fn note(&mut self, e: &Expr) {
        if let Expr::Path(p) = super::strip(e) {
            if let Some(i) = p.path.get_ident() {
                self.0.insert(i.to_string());
            }
        }
    }
}

fn array_like(e: &Expr) -> bool {
    match super::strip(e) {
        Expr::Macro(_) | Expr::Array(_) | Expr::Repeat(_) => true,
        Expr::MethodCall(m) => {
            ["to_vec", "to_owned", "collect", "clone"].contains(&m.method.to_string().as_str())
        }
        Expr::Call(c) => matches!(&*c.func, Expr::Path(p) if p.path.segments.len() > 1),
        _ => false,
    }
}

impl<'ast> syn::visit::Visit<'ast> for Buffers<'_> {
    fn visit_expr_index(&mut self, ix: &'ast syn::ExprIndex) {
        self.note(&ix.expr);
        syn::visit::visit_expr_index(self, ix);
    }
    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let method = m.method.to_string();
        if method == "len" || method.starts_with("iter") || method == "fill" {
            self.note(&m.receiver);
        }
        syn::visit::visit_expr_method_call(self, m);
    }
    fn visit_local(&mut self, l: &'ast syn::Local) {
        let (pat, ty) = match &l.pat {
            syn::Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            p => (p, None),
        };
        let arrays = ty.is_some_and(|t| crate::signature::float_name(t).is_none())
            || l.init.as_ref().is_some_and(|i| array_like(&i.expr));
        if let (syn::Pat::Ident(pi), true) = (pat, arrays) {
            self.0.insert(pi.ident.to_string());
        }
        syn::visit::visit_local(self, l);
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
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
/// statement. Several lent buffers (or floats) come back one after another.
/// A buffer that may be lent to be read only (a mutable view passed whole,
/// `(&mut buf[a..b])`) is copied back if the callee's `__g_OUTPUTS` says that
/// parameter is an output.
fn rewrite(st: &Stmt, ty: &TokenStream, buffers: &HashSet<String>) -> Option<Vec<Stmt>> {
    let Stmt::Expr(Expr::Call(call), Some(_)) = st else {
        return None;
    };
    let Expr::Path(func) = &*call.func else {
        return None;
    };
    // `mem::swap(&mut a, &mut b)` is no helper: the lowering rejects it.
    if super::reject::is_mem_move(call) {
        return None;
    }
    let lent: Vec<(usize, Lent, bool)> = (0..call.args.len())
        .filter_map(|i| {
            let a = &call.args[i];
            let maybe = matches!(a, Expr::Paren(_));
            Some((i, lent(a, buffers)?, maybe))
        })
        .collect();
    let span = syn::spanned::Spanned::span(&call.args[lent.first()?.0]);
    let mut path = func.clone();
    let last = path.path.segments.last_mut()?;
    let outputs_flags = format_ident!("__{}_{}", last.ident, crate::outputs::FLAGS);
    last.ident = format_ident!("{}_{}", last.ident, crate::outputs::SUFFIX);
    let mut flags = path.clone();
    if let Some(last) = flags.path.segments.last_mut() {
        last.ident = outputs_flags;
    }
    let mut args = call.args.clone();
    let (io, k) = (syn::Ident::new(IO, span), syn::Ident::new(K, span));
    let at = syn::Ident::new(AT, span);
    let dynamic = lent.iter().any(|(_, _, maybe)| *maybe);
    let mut offsets: Vec<TokenStream> = vec![quote!(0)];
    let mut stores: Vec<Stmt> = Vec::new();
    let only = lent.len() == 1;
    for (i, l, maybe) in &lent {
        let off = match (&offsets[..], dynamic) {
            (_, true) => quote!(#at +),
            ([_], false) => quote!(),
            (_, false) => quote!(#(#offsets)+* +),
        };
        let (read, store, len): (TokenStream, Stmt, TokenStream) = match l {
            Lent::Whole(buf) if only && !dynamic => (
                quote!(&#buf),
                syn::parse_quote!(for #k in 0..#buf.len() { #buf[#k] = #io[#k]; }),
                quote!(#buf.len()),
            ),
            Lent::Whole(buf) => (
                quote!(&#buf),
                syn::parse_quote!(for #k in 0..#buf.len() { #buf[#k] = #io[#off #k]; }),
                quote!(#buf.len()),
            ),
            Lent::Range(buf, r) => {
                let start = r.start.as_deref().map_or(quote!(0), |s| quote!(#s));
                let end = r.end.as_deref().map_or(quote!(#buf.len()), |e| quote!(#e));
                let len = match &r.limits {
                    syn::RangeLimits::Closed(_) => quote!((#end + 1 - (#start))),
                    syn::RangeLimits::HalfOpen(_) => quote!((#end - (#start))),
                };
                (
                    quote!(&#buf[#r]),
                    syn::parse_quote!(for #k in 0..#len { #buf[#start + #k] = #io[#off #k]; }),
                    len,
                )
            }
            Lent::Scalar(s) => (quote!(#s), syn::parse_quote!(#s = #io[#off 0];), quote!(1)),
            Lent::Elem(buf, ix) => (
                quote!(#buf[#ix]),
                syn::parse_quote!(#buf[#ix] = #io[#off 0];),
                quote!(1),
            ),
        };
        args[*i] = syn::parse_quote!(#read);
        match (dynamic, maybe) {
            (false, _) => stores.push(store),
            (true, false) => {
                stores.push(store);
                stores.push(syn::parse_quote!(#at += #len;));
            }
            (true, true) => stores.push(syn::parse_quote!(if #flags[#i] { #store #at += #len; })),
        }
        offsets.push(len);
    }
    // A lent buffer this rewrite does not recognise (`b.as_mut()`) would
    // shift every copy back: the lengths must agree.
    let total = if dynamic {
        quote!(#at)
    } else {
        let lens = &offsets[1..];
        quote!(#(#lens)+*)
    };
    let message = format!(
        "`{}` returns more outputs than this call lends: lend each buffer as `&mut buf`, `&mut buf[a..b]` or `&mut x`",
        func.to_token_stream()
    );
    let mut out = vec![syn::parse_quote!(let #io: ::std::vec::Vec<#ty> = #path(#args);)];
    let check: Stmt = syn::parse_quote!(::core::assert_eq!(#io.len(), #total, #message););
    if dynamic {
        out.push(syn::parse_quote!(let mut #at: usize = 0;));
        out.extend(stores);
        out.push(check);
    } else {
        // Checked first: the copies then run over the lent buffers' own
        // lengths, which a loop's reverse can run again.
        out.push(check);
        out.extend(stores);
    }
    Some(out)
}

/// Rewrites calls lending buffers (with the float type and the buffers'
/// names), or with `None` the writes by method.
struct Calls<'a>(Option<(&'a TokenStream, HashSet<String>)>);

impl VisitMut for Calls<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        let mut out = Vec::with_capacity(b.stmts.len());
        for st in b.stmts.drain(..) {
            let rewritten = match &self.0 {
                Some((ty, buffers)) => rewrite(&st, ty, buffers),
                None => method_write(&st),
            };
            match rewritten {
                Some(stmts) => out.extend(stmts),
                None => out.push(st),
            }
        }
        b.stmts = out;
        syn::visit_mut::visit_block_mut(self, b);
    }
    fn visit_expr_call_mut(&mut self, c: &mut syn::ExprCall) {
        // `x.as_mut()` passed where a callee reads a slice is `&x` (a buffer
        // lent to be written is written `&mut x`).
        if self.0.is_none() {
            for a in c.args.iter_mut() {
                let Expr::MethodCall(m) = &*a else { continue };
                let conversion = ["as_mut", "as_mut_slice", "as_ref", "as_slice"]
                    .contains(&m.method.to_string().as_str());
                if conversion && m.args.is_empty() && matches!(&*m.receiver, Expr::Path(_)) {
                    let r = &m.receiver;
                    *a = syn::parse_quote!(&#r);
                }
            }
        }
        syn::visit_mut::visit_expr_call_mut(self, c);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Rewrites the writes into a buffer by method (`buf.fill(v)`), before the
/// views are written out: their copies read sources through views.
pub(crate) fn desugar_methods(block: &mut syn::Block) {
    Calls(None).visit_block_mut(block);
}

/// Rewrites every call lending a buffer mutably in `block`, after the views
/// are written out (a mutable view lent whole, `h(x, v)`, is then `h(x,
/// &mut buf[a..b])`); `ty` is the function's float type.
pub(crate) fn desugar_calls(sig: &syn::Signature, block: &mut syn::Block, ty: &TokenStream) {
    let mut buffers = HashSet::new();
    for input in &sig.inputs {
        if let syn::FnArg::Typed(pt) = input {
            if let (syn::Pat::Ident(pi), None) = (&*pt.pat, crate::signature::float_name(&pt.ty)) {
                buffers.insert(pi.ident.to_string());
            }
        }
    }
    syn::visit::Visit::visit_block(&mut Buffers(&mut buffers), block);
    Calls(Some((ty, buffers))).visit_block_mut(block);
}
