//! Local tuples: `let (a, b) = (e0, e1);` (also of a block ending in a
//! tuple, and `sin_cos`, `split_at`) as one `let` per name.

use super::pat_names;
use quote::{format_ident, quote};
use std::collections::HashSet;
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat, Stmt};

/// `let (a, b) = { stmts; (e0, e1) };` as the block's statements, its names
/// renamed apart (`__gm_b{n}_tmp`), then `let (a, b) = (e0, e1);`: the
/// statements run where the block did, and nothing after sees their names.
pub(super) fn block_tuple(l: &syn::Local, n: usize) -> Option<Vec<Stmt>> {
    let pat = match &l.pat {
        Pat::Type(pt) => &*pt.pat,
        p => p,
    };
    let Pat::Tuple(t) = pat else { return None };
    let Expr::Block(b) = super::strip(&l.init.as_ref()?.expr) else {
        return None;
    };
    if b.label.is_some() || l.init.as_ref()?.diverge.is_some() {
        return None;
    }
    let mut stmts = b.block.stmts.clone();
    let Some(Stmt::Expr(Expr::Tuple(values), None)) = stmts.pop() else {
        return None;
    };
    if values.elems.len() != t.elems.len() {
        return None;
    }
    let mut names = HashSet::new();
    for st in &stmts {
        match st {
            Stmt::Local(l) => pat_names(&l.pat, &mut names),
            Stmt::Item(_) | Stmt::Macro(_) => return None,
            Stmt::Expr(..) => {}
        }
    }
    let mut block: syn::Block = syn::parse_quote!({ #(#stmts)* #values });
    let mut rename = RenameApart { names: &names, n };
    rename.visit_block_mut(&mut block);
    let Some(Stmt::Expr(values, None)) = block.stmts.pop() else {
        return None;
    };
    let mut l = l.clone();
    if let Some(init) = &mut l.init {
        *init.expr = values;
    }
    block.stmts.push(Stmt::Local(l));
    Some(block.stmts)
}

/// Renames the names a block binds to `__gm_b{n}_{name}`, in patterns and
/// in plain paths (never fields or methods).
struct RenameApart<'a> {
    names: &'a HashSet<String>,
    n: usize,
}

impl RenameApart<'_> {
    fn fresh(&self, i: &syn::Ident) -> Option<syn::Ident> {
        self.names
            .contains(&i.to_string())
            .then(|| format_ident!("__gm_b{}_{}", self.n, i))
    }
}

impl VisitMut for RenameApart<'_> {
    fn visit_pat_ident_mut(&mut self, p: &mut syn::PatIdent) {
        if let Some(f) = self.fresh(&p.ident) {
            p.ident = f;
        }
        syn::visit_mut::visit_pat_ident_mut(self, p);
    }
    fn visit_expr_path_mut(&mut self, p: &mut syn::ExprPath) {
        if p.qself.is_none() && p.path.segments.len() == 1 {
            if let Some(f) = self.fresh(&p.path.segments[0].ident) {
                p.path.segments[0].ident = f;
            }
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `let (a, b) = (e0, e1);` (or `x.sin_cos()`), `let [a, b] = [e0, e1];`
/// and `let [a, b] = x;` (`*x`) as one `let` per name.
pub(super) fn tuple_lets(l: &syn::Local) -> Option<Vec<Stmt>> {
    let (pat, ty) = match &l.pat {
        Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
        p => (p, None),
    };
    let init = super::strip(&l.init.as_ref()?.expr);
    let (elems, values, tys): (Vec<&Pat>, Vec<Expr>, Vec<Option<&syn::Type>>) = match pat {
        Pat::Tuple(t) => {
            let values = tuple_values(init)?;
            let tys = match ty {
                Some(syn::Type::Tuple(tt)) => tt.elems.iter().map(Some).collect(),
                _ => vec![None; t.elems.len()],
            };
            (t.elems.iter().collect(), values, tys)
        }
        Pat::Slice(sl) => {
            let elems: Vec<&Pat> = sl.elems.iter().collect();
            if elems.iter().any(|p| matches!(p, Pat::Rest(_))) {
                return None;
            }
            let values: Vec<Expr> = match init {
                Expr::Array(a) => a.elems.iter().cloned().collect(),
                _ => {
                    let arr = match init {
                        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                            super::strip(&u.expr)
                        }
                        e => e,
                    };
                    let Expr::Path(p) = arr else { return None };
                    p.path.get_ident()?;
                    (0..elems.len())
                        .map(|k| {
                            let k = proc_macro2::Literal::usize_unsuffixed(k);
                            syn::parse_quote!(#p[#k])
                        })
                        .collect()
                }
            };
            let n = elems.len();
            (elems, values, vec![None; n])
        }
        _ => return None,
    };
    if values.len() != elems.len() || tys.len() != elems.len() {
        return None;
    }
    let mut bound = HashSet::new();
    pat_names(pat, &mut bound);
    let reads_bound = values.iter().any(|v| {
        let mut found = HashSet::new();
        super::collect_expr_idents(v, &mut found);
        !found.is_disjoint(&bound)
    });
    let mut lets: Vec<Stmt> = Vec::new();
    let temps: Vec<syn::Ident> = (0..elems.len())
        .map(|k| format_ident!("__gm_tuple_{}", k))
        .collect();
    for (k, ((p, v), ty)) in elems.iter().zip(&values).zip(&tys).enumerate() {
        let ty = ty.map(|t| quote!(: #t));
        if reads_bound {
            let tmp = &temps[k];
            lets.push(syn::parse_quote!(let #tmp #ty = #v;));
        } else {
            lets.push(syn::parse_quote!(let #p #ty = #v;));
        }
    }
    if reads_bound {
        for (p, tmp) in elems.iter().zip(&temps) {
            lets.push(syn::parse_quote!(let #p = #tmp;));
        }
    }
    Some(lets)
}

/// The values of a tuple expression; `x.sin_cos()` and `x.split_at(k)`
/// (`split_at_mut`) are the tuples std defines them as.
fn tuple_values(init: &Expr) -> Option<Vec<Expr>> {
    let sin_cos: Option<Expr> = match init {
        Expr::MethodCall(m) if m.method == "sin_cos" && m.args.is_empty() => {
            let r = &m.receiver;
            Some(syn::parse_quote!((#r.sin(), #r.cos())))
        }
        Expr::MethodCall(m) if m.method == "split_at" && m.args.len() == 1 => {
            let (r, k) = (&m.receiver, &m.args[0]);
            Some(syn::parse_quote!((&#r[..#k], &#r[#k..])))
        }
        // Two views that are written through: the `let`s go once every use
        // reads the buffer in place.
        Expr::MethodCall(m) if m.method == "split_at_mut" && m.args.len() == 1 => {
            let (r, k) = (&m.receiver, &m.args[0]);
            Some(syn::parse_quote!((&mut #r[..#k], &mut #r[#k..])))
        }
        _ => None,
    };
    match sin_cos.as_ref().unwrap_or(init) {
        Expr::Tuple(values) => Some(values.elems.iter().cloned().collect()),
        _ => None,
    }
}
