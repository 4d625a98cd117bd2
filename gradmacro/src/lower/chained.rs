//! Two iterators one after the other, `a.chain(b)`, as the two loops they
//! stand for, before lowering:
//!
//! ```text
//! for p in a.chain(b) { body }   →  for p in a { body }  for p in b { body }
//! a.chain(b).map(f).sum()        →  b.map(f).fold(a.map(f).sum(), |acc, v| acc + v)
//! a.chain(b).fold(init, g)       →  b.fold(a.fold(init, g), g)
//! ```
//!
//! (`product` alike, `.copied()`/`.cloned()` between). The reductions run
//! over the same elements in the same order from the same start (`Sum` for
//! floats is `fold(-0.0, +)`), so the value is bit-identical. A `break` in
//! the loop's body sets a flag that skips the second loop. `b` given as a
//! slice (`y`, `&y[1..]`) is read as `y.iter()`.

use super::ACC;
use proc_macro2::Span;
use syn::visit_mut::VisitMut;
use syn::Expr;

const BROKE: &str = "__gm_broke";
const ITEM: &str = "__gm_item";

/// `a.chain(b)` followed by per-element adaptors (`copied`, `cloned`):
/// the two iterators with those adaptors applied to each.
fn split(e: &Expr) -> Option<(Expr, Expr)> {
    let Expr::MethodCall(m) = super::strip(e) else {
        return None;
    };
    match (m.method.to_string().as_str(), m.args.len()) {
        ("chain", 1) => Some(((*m.receiver).clone(), as_iterator(&m.args[0]))),
        ("copied" | "cloned" | "map", _) => {
            let (a, b) = split(&m.receiver)?;
            let (mut ma, mut mb) = (m.clone(), m.clone());
            *ma.receiver = receiver(a);
            *mb.receiver = receiver(b);
            Some((Expr::MethodCall(ma), Expr::MethodCall(mb)))
        }
        _ => None,
    }
}

/// `chain`'s argument as an iterator: a slice (`y`, `&y[1..]`, `&w`) is
/// `y.iter()`, anything else (`y.iter()`, `0..n`) stays.
fn as_iterator(b: &Expr) -> Expr {
    let slice = match super::strip(b) {
        Expr::Reference(r) if r.mutability.is_none() => super::strip(&r.expr),
        other => other,
    };
    match slice {
        Expr::Path(_) | Expr::Index(_) | Expr::Field(_) => syn::parse_quote!(#slice.iter()),
        _ => b.clone(),
    }
}

/// `e` where a method may be called on it: `(0..n)` keeps its parentheses.
fn receiver(e: Expr) -> Expr {
    match e {
        Expr::MethodCall(_) | Expr::Path(_) | Expr::Call(_) | Expr::Paren(_) => e,
        other => syn::parse_quote!((#other)),
    }
}

/// The reduction `e` stands for if it is one over a chain.
fn reduction(e: &Expr) -> Option<Expr> {
    let Expr::MethodCall(r) = super::strip(e) else {
        return None;
    };
    let (a, b) = split(&r.receiver)?;
    let (a, b) = (receiver(a), receiver(b));
    let (acc, item) = (
        syn::Ident::new(ACC, Span::mixed_site()),
        syn::Ident::new(ITEM, Span::mixed_site()),
    );
    let fish = &r.turbofish;
    match (r.method.to_string().as_str(), r.args.len()) {
        ("sum", 0) => Some(syn::parse_quote!(
            #b.fold(#a.sum #fish(), |#acc, #item| #acc + #item)
        )),
        ("product", 0) => Some(syn::parse_quote!(
            #b.fold(#a.product #fish(), |#acc, #item| #acc * #item)
        )),
        ("fold", 2) => {
            let (init, g) = (&r.args[0], &r.args[1]);
            Some(syn::parse_quote!(#b.fold(#a.fold(#init, #g), #g)))
        }
        _ => None,
    }
}

/// `break` for the loop being rewritten (not for loops nested in it, nor
/// inside closures) as `{ broke = true; break; }`; whether there was one.
struct Breaks {
    flag: syn::Ident,
    found: bool,
}

impl VisitMut for Breaks {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::Break(b) if b.label.is_none() && b.expr.is_none() => {
                self.found = true;
                let flag = &self.flag;
                *e = syn::parse_quote!({ #flag = true; break; });
            }
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) | Expr::Closure(_) => {}
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

struct Chained {
    count: usize,
}

impl VisitMut for Chained {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        if let Expr::ForLoop(f) = e {
            if f.label.is_some() {
                return;
            }
            let Some((a, b)) = split(&f.expr) else {
                return;
            };
            self.count += 1;
            let flag = quote::format_ident!("{}_{}", BROKE, self.count, span = Span::mixed_site());
            let mut body = f.body.clone();
            let mut breaks = Breaks {
                flag: flag.clone(),
                found: false,
            };
            breaks.visit_block_mut(&mut body);
            let (pat, attrs) = (&f.pat, &f.attrs);
            *e = if breaks.found {
                syn::parse_quote!({
                    let mut #flag = false;
                    #(#attrs)* for #pat in #a #body
                    if !#flag {
                        for #pat in #b #body
                    }
                })
            } else {
                let body = &f.body;
                syn::parse_quote!({
                    #(#attrs)* for #pat in #a #body
                    for #pat in #b #body
                })
            };
            return;
        }
        if let Some(r) = reduction(e) {
            *e = r;
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Rewrites every loop and reduction over `a.chain(b)` in `block`.
pub(crate) fn desugar(block: &mut syn::Block) {
    Chained { count: 0 }.visit_block_mut(block);
}
