//! `chunks`, `chunks_exact` and `windows` as loops over the chunks' indices,
//! each chunk a view the rewrite of views then reads in place.

use quote::format_ident;
use syn::{Expr, Pat, Stmt};

/// `for c in x.chunks(k) { body }` as `for j in 0..n { let c = &x[..]; body }`,
/// and `x.chunks(k).map(|c| e)` (`.fold(init, |acc, c| e)`) as
/// `(0..n).map(|j| { let c = &x[..]; e })`; also `chunks_exact` and
/// `windows`, and after `.enumerate()` with the index bound to `j`. The view
/// is then rewritten like one the user wrote.
pub(super) fn chunked(e: &Expr, n: usize) -> Option<Expr> {
    // The source of the chunks, their count and their index (its pattern).
    let split = |iter: &Expr| -> Option<(Expr, Expr, bool)> {
        let (iter, enumerate) = match iter {
            Expr::MethodCall(m) if m.method == "enumerate" && m.args.is_empty() => {
                (&*m.receiver, true)
            }
            other => (other, false),
        };
        let Expr::MethodCall(m) = super::strip(iter) else {
            return None;
        };
        let Expr::Path(x) = super::strip(&m.receiver) else {
            return None;
        };
        let x = x.path.get_ident()?;
        if m.args.len() != 1 {
            return None;
        }
        let k = &m.args[0];
        let k: Expr = match super::strip(k) {
            k @ (Expr::Lit(_) | Expr::Path(_)) => k.clone(),
            k => syn::parse_quote!((#k)),
        };
        let j = format_ident!("__gm_c{}", n);
        let (count, lo, hi): (Expr, Expr, Expr) = match m.method.to_string().as_str() {
            "chunks" => (
                syn::parse_quote!(usize::div_ceil(#x.len(), #k)),
                syn::parse_quote!(#j * #k),
                syn::parse_quote!(usize::min(#j * #k + #k, #x.len())),
            ),
            "chunks_exact" => (
                syn::parse_quote!(#x.len() / #k),
                syn::parse_quote!(#j * #k),
                syn::parse_quote!(#j * #k + #k),
            ),
            "windows" => (
                syn::parse_quote!(usize::saturating_sub(#x.len() + 1, #k)),
                syn::parse_quote!(#j),
                syn::parse_quote!(#j + #k),
            ),
            _ => return None,
        };
        let view: Expr = syn::parse_quote!(&#x[#lo..#hi]);
        Some((view, count, enumerate))
    };
    // The chunk's pattern, and the index's after `enumerate`.
    let pats = |p: &Pat, enumerate: bool| -> Option<(Pat, Option<Pat>)> {
        let p = match p {
            Pat::Type(t) => &*t.pat,
            p => p,
        };
        match (p, enumerate) {
            (Pat::Ident(_) | Pat::Wild(_), false) => Some((p.clone(), None)),
            (Pat::Tuple(t), true) if t.elems.len() == 2 => {
                Some((t.elems[1].clone(), Some(t.elems[0].clone())))
            }
            _ => None,
        }
    };
    let j = format_ident!("__gm_c{}", n);
    // `let c = view;` (`c` renamed after `enumerate` binds `(i, c)`).
    let head = |chunk: &Pat, index: &Option<Pat>, view: &Expr| -> (Pat, Vec<Stmt>) {
        let mut lets: Vec<Stmt> = Vec::new();
        let bound: Pat = syn::parse_quote!(#j);
        if let Some(i) = index {
            lets.push(syn::parse_quote!(let #i = #j;));
        }
        if !matches!(chunk, Pat::Wild(_)) {
            lets.push(syn::parse_quote!(let #chunk = #view;));
        }
        (bound, lets)
    };
    match e {
        Expr::ForLoop(f) => {
            let (view, count, enumerate) = split(&f.expr)?;
            let (chunk, index) = pats(&f.pat, enumerate)?;
            let (bound, lets) = head(&chunk, &index, &view);
            let label = &f.label;
            let body = &f.body.stmts;
            Some(syn::parse_quote!(#label for #bound in 0..#count { #(#lets)* #(#body)* }))
        }
        Expr::MethodCall(m) if m.method == "map" && m.args.len() == 1 => {
            let (view, count, enumerate) = split(&m.receiver)?;
            let Expr::Closure(c) = super::strip(&m.args[0]) else {
                return None;
            };
            if c.inputs.len() != 1 {
                return None;
            }
            let (chunk, index) = pats(&c.inputs[0], enumerate)?;
            let (bound, lets) = head(&chunk, &index, &view);
            let body = &c.body;
            Some(syn::parse_quote!((0..#count).map(|#bound| { #(#lets)* #body })))
        }
        Expr::MethodCall(m) if m.method == "fold" && m.args.len() == 2 => {
            let (view, count, enumerate) = split(&m.receiver)?;
            let Expr::Closure(c) = super::strip(&m.args[1]) else {
                return None;
            };
            if c.inputs.len() != 2 {
                return None;
            }
            let (chunk, index) = pats(&c.inputs[1], enumerate)?;
            let (bound, lets) = head(&chunk, &index, &view);
            let (acc, init, body) = (&c.inputs[0], &m.args[0], &c.body);
            Some(syn::parse_quote!((0..#count).fold(#init, |#acc, #bound| { #(#lets)* #body })))
        }
        _ => None,
    }
}
