//! A buffer re-created from a copy, `v = x[a..b].to_vec();` (also
//! `.to_owned()` of a sub-slice, `Vec::from(..)`, `.collect::<Vec<_>>()`),
//! as the copy the lowering knows from `let`, then the buffer re-created
//! empty and filled from it:
//!
//! ```text
//! let copy = x[a..b].to_vec();
//! v = Vec::new();
//! for k in 0..copy.len() { v.push(copy[k]); }
//! ```
//!
//! The copy comes first, so a source reading `v` itself (`v = v[1..].to_vec()`)
//! reads the old elements, and the new length may differ from the old one.

use syn::visit_mut::VisitMut;
use syn::{Expr, Stmt};

const COPY: &str = "__gm_copy";
const K: &str = "__gm_k";

/// Whether `e` always makes a new `Vec` of a slice's elements.
fn is_copy(e: &Expr) -> bool {
    match super::strip(e) {
        Expr::MethodCall(m) if m.args.is_empty() => match m.method.to_string().as_str() {
            "to_vec" => true,
            // Of a sub-slice only: `to_owned` of a name may be a `String`.
            "to_owned" => {
                let recv = match super::strip(&m.receiver) {
                    Expr::Reference(r) => super::strip(&r.expr),
                    other => other,
                };
                matches!(recv, Expr::Index(ix) if matches!(super::strip(&ix.index), Expr::Range(_)))
            }
            "collect" => m.turbofish.as_ref().is_some_and(|t| {
                matches!(t.args.first(), Some(syn::GenericArgument::Type(syn::Type::Path(p)))
                    if p.path.segments.last().is_some_and(|s| s.ident == "Vec"))
            }),
            _ => false,
        },
        Expr::Call(c) if c.args.len() == 1 => match super::strip(&c.func) {
            Expr::Path(p) => {
                let segs = super::path_names(&p.path);
                segs.len() >= 2 && segs[segs.len() - 2..] == ["Vec", "from"]
            }
            _ => false,
        },
        _ => false,
    }
}

/// The statements `v = src;` stands for, if it re-creates `v` from a copy.
fn rewrite(st: &Stmt, count: &mut usize) -> Option<Vec<Stmt>> {
    let Stmt::Expr(Expr::Assign(a), Some(_)) = st else {
        return None;
    };
    let v = super::rename::local_name(&a.left)?;
    if !is_copy(&a.right) {
        return None;
    }
    *count += 1;
    let copy = quote::format_ident!("{}_{}", COPY, *count, span = v.span());
    let k = syn::Ident::new(K, v.span());
    let src = &a.right;
    Some(vec![
        syn::parse_quote!(let #copy = #src;),
        syn::parse_quote!(#v = ::std::vec::Vec::new();),
        syn::parse_quote!(for #k in 0..#copy.len() { #v.push(#copy[#k]); }),
    ])
}

struct Recopy {
    count: usize,
}

impl VisitMut for Recopy {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        syn::visit_mut::visit_block_mut(self, b);
        let mut out = Vec::with_capacity(b.stmts.len());
        for st in b.stmts.drain(..) {
            match rewrite(&st, &mut self.count) {
                Some(stmts) => out.extend(stmts),
                None => out.push(st),
            }
        }
        b.stmts = out;
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Rewrites every `v = src;` re-creating a buffer from a copy in `block`.
pub(crate) fn desugar(block: &mut syn::Block) {
    Recopy { count: 0 }.visit_block_mut(block);
}
