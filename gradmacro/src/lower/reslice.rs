//! Slices of slices as the one slice they are: `&x[a..][..p]` is
//! `&x[a..a + p]`, `x[a..][i]` is `x[a + i]`, and `&*v` (a reborrow of a
//! buffer) is `&v`, so that the rest of the lowering sees plain views.

use syn::visit_mut::VisitMut;
use syn::{Expr, ExprRange, RangeLimits};

/// `a + b`, or whichever is there.
fn plus(a: Option<&Expr>, b: Option<&Expr>) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(syn::parse_quote!((#a) + (#b))),
        (Some(e), None) | (None, Some(e)) => Some(e.clone()),
        (None, None) => None,
    }
}

fn half_open(e: &Expr) -> Option<&ExprRange> {
    match super::strip(e) {
        Expr::Range(r) if matches!(r.limits, RangeLimits::HalfOpen(_)) => Some(r),
        _ => None,
    }
}

struct Reslice;

impl VisitMut for Reslice {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let replacement = match e {
            Expr::Index(outer) => match super::strip(&outer.expr) {
                Expr::Index(inner) => {
                    let Some(r1) = half_open(&inner.index) else {
                        return;
                    };
                    let base = &inner.expr;
                    let start1 = r1.start.as_deref();
                    match half_open(&outer.index) {
                        Some(r2) => {
                            let start = plus(start1, r2.start.as_deref());
                            let end = match r2.end.as_deref() {
                                Some(e2) => plus(start1, Some(e2)),
                                None => r1.end.as_deref().cloned(),
                            };
                            let start = start.map(|s| quote::quote!(#s));
                            let end = end.map(|s| quote::quote!(#s));
                            syn::parse_quote!(#base[#start..#end])
                        }
                        None if !matches!(super::strip(&outer.index), Expr::Range(_)) => {
                            let i = plus(start1, Some(&outer.index)).expect("an index");
                            syn::parse_quote!(#base[#i])
                        }
                        None => return,
                    }
                }
                _ => return,
            },
            Expr::Reference(r) if r.mutability.is_none() => match super::strip(&r.expr) {
                Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                    match super::strip(&u.expr) {
                        inner @ Expr::Path(_) => syn::parse_quote!(&#inner),
                        _ => return,
                    }
                }
                _ => return,
            },
            _ => return,
        };
        *e = replacement;
    }
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        super::sugar::in_vec_macro(m, |e| self.visit_expr_mut(e));
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Rewrites every slice of a slice in `block`.
pub(crate) fn desugar(block: &mut syn::Block) {
    Reslice.visit_block_mut(block);
}
