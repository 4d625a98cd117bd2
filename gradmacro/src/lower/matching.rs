//! `match` as the `if` chain it stands for, before lowering: each arm's
//! pattern becomes a test on the scrutinee (computed once into a local unless
//! it is a place such as `n` or `cfg.kind`),
//!
//! ```text
//! match n { 0 => a, 1 | 2 => b, k if k > 5 => c, _ => d }
//! ```
//! becomes
//! ```text
//! if match n { 0 => true, _ => false } { a }
//! else if match n { 1 | 2 => true, _ => false } { b }
//! else if match n { k if k > 5 => true, _ => false } { let k = n; c }
//! else { d }
//! ```
//! so the lowering sees only `if`s (an exhaustive `match` reaches its last
//! arm when no other matched). An arm binding parts of the value (`Some(n)
//! =>`, `(a, _) =>`) reads each part it uses, once taken, with a `match` of
//! its own (`let n = match o { Some(n) => n, _ => unreachable!() };`): parts
//! are data, never differentiated. `if let P = e { a } else { b }` is `match
//! e { P => a, _ => b }`, `let P = e else { d }; rest` is `match e { P =>
//! { rest }, _ => d }`, and `while let P = e { body }` is `loop { if let P
//! = e { body } else { break } }`.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat};

/// Rewrites every `match` in `block` (outside nested items); returns the
/// patterns it cannot rewrite, with what to write instead.
pub(crate) fn desugar(block: &mut syn::Block) -> Vec<(TokenStream, String)> {
    let mut d = Desugar { errors: Vec::new() };
    d.visit_block_mut(block);
    d.errors
}

struct Desugar {
    errors: Vec<(TokenStream, String)>,
}

impl VisitMut for Desugar {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        if let Some(k) = b.stmts.iter().position(|s| {
            matches!(s, syn::Stmt::Local(l) if l.init.as_ref().is_some_and(|i| i.diverge.is_some()))
        }) {
            let rest: Vec<syn::Stmt> = b.stmts.drain(k + 1..).collect();
            let Some(syn::Stmt::Local(l)) = b.stmts.pop() else {
                unreachable!("the `let` found above")
            };
            let init = l.init.expect("a `let ... else`");
            let (value, diverge) = (init.expr, init.diverge.expect("an `else`").1);
            let pat = &l.pat;
            b.stmts.push(syn::Stmt::Expr(
                syn::parse_quote!(match #value { #pat => { #(#rest)* } _ => #diverge }),
                None,
            ));
        }
        syn::visit_mut::visit_block_mut(self, b);
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        // `while let P = e { body }` is `loop { if let P = e { body } else
        // { break } }`: `e` is evaluated before each iteration, as there.
        if let Expr::While(w) = e {
            if let Expr::Let(l) = &*w.cond {
                let (attrs, label, pat, value, body) =
                    (&w.attrs, &w.label, &l.pat, &l.expr, &w.body);
                *e = syn::parse_quote!(#(#attrs)* #label loop { if let #pat = #value #body else { break; } });
            }
        }
        if let Expr::If(i) = e {
            if let Expr::Let(l) = &*i.cond {
                let (pat, value, then) = (&l.pat, &l.expr, &i.then_branch);
                let els = match &i.else_branch {
                    Some((_, els)) => quote!(#els),
                    None => quote!({}),
                };
                *e = syn::parse_quote!(match #value { #pat => #then _ => #els });
            }
        }
        // Inner matches first: the tests built below are not visited again.
        syn::visit_mut::visit_expr_mut(self, e);
        if let Expr::Macro(m) = e {
            super::sugar::in_vec_macro(&mut m.mac, |x| self.visit_expr_mut(x));
            return;
        }
        if let Expr::Match(m) = e {
            // Reported: a placeholder keeps the lowering from reporting it again.
            *e = self.chain(m).unwrap_or_else(|| syn::parse_quote!(0.0));
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

impl Desugar {
    fn chain(&mut self, m: &syn::ExprMatch) -> Option<Expr> {
        let s = syn::Ident::new("__gm_scrutinee", Span::mixed_site());
        let scrutinee = &m.expr;
        // A place (`n`, `cfg.kind`) is read where it is, so matching moves
        // nothing; a value (`x > 0.0`, `f(n)`) is computed once, held.
        let place = matches!(&**scrutinee, Expr::Path(_) | Expr::Field(_));
        let read = if place {
            quote!(#scrutinee)
        } else {
            quote!(#s)
        };
        let mut tests = Vec::new();
        for arm in &m.arms {
            let pat = &arm.pat;
            let guard = arm.guard.as_ref().map(|(_, g)| quote!(if #g));
            let body = &arm.body;
            let mut mentioned = std::collections::HashSet::new();
            super::collect_expr_idents(body, &mut mentioned);
            // The test keeps only the bindings the guard reads.
            let mut in_guard = std::collections::HashSet::new();
            if let Some((_, g)) = &arm.guard {
                super::collect_expr_idents(g, &mut in_guard);
            }
            let test = keeping(pat, |i| in_guard.contains(&i.to_string()));
            let (pat, body): (Pat, Expr) = match whole_binding(pat) {
                Ok(Some(name)) if mentioned.contains(&name.to_string()) => {
                    let body = inner(body);
                    (test, syn::parse_quote!({ let #name = #read; #(#body)* }))
                }
                Ok(_) => {
                    let body = inner(body);
                    (test, syn::parse_quote!({ #(#body)* }))
                }
                Err(()) => {
                    // The body reads each part it uses out of the value.
                    let parts: Vec<syn::Stmt> = bound_names(pat)
                        .into_iter()
                        .filter(|(n, _)| mentioned.contains(&n.to_string()))
                        .map(|(n, m)| {
                            let only = keeping(pat, |i| *i == n);
                            syn::parse_quote!(let #m #n = match #read { #only => #n, _ => ::core::unreachable!() };)
                        })
                        .collect();
                    let body = inner(body);
                    (test, syn::parse_quote!({ #(#parts)* #(#body)* }))
                }
            };
            let unconditional = matches!(pat, Pat::Wild(_)) && guard.is_none();
            let pat = &pat;
            tests.push((
                quote!(match #read { #pat #guard => true, _ => false }),
                body,
                unconditional,
            ));
        }
        let mut rest: Option<Expr> = None;
        for (test, body, unconditional) in tests.into_iter().rev() {
            let last = rest.is_none();
            rest = Some(if last || unconditional {
                // The last arm, or an arm that always matches: what is left.
                body
            } else {
                let els = rest.take();
                syn::parse_quote!(if #test #body else #els)
            });
        }
        let chain = rest?;
        if place {
            return Some(chain);
        }
        Some(syn::parse_quote!({ let #s = #scrutinee; #chain }))
    }
}

/// The name a pattern binds the whole value to (`k`, `k @ ..`), `None` if it
/// binds nothing, `Err` if it binds a part of it.
fn whole_binding(p: &Pat) -> Result<Option<syn::Ident>, ()> {
    match p {
        Pat::Ident(i) => {
            if let Some((_, sub)) = &i.subpat {
                if binds_anything(sub) {
                    return Err(());
                }
            }
            // An identifier pattern can also name a constant or a unit
            // variant; those are upper-case by convention.
            let name = i.ident.to_string();
            if name.starts_with(|c: char| c.is_uppercase()) {
                Ok(None)
            } else {
                Ok(Some(i.ident.clone()))
            }
        }
        p if binds_anything(p) => Err(()),
        _ => Ok(None),
    }
}

fn binds_anything(p: &Pat) -> bool {
    struct Finder(bool);
    impl<'a> syn::visit::Visit<'a> for Finder {
        fn visit_pat_ident(&mut self, i: &'a syn::PatIdent) {
            if !i.ident.to_string().starts_with(|c: char| c.is_uppercase()) {
                self.0 = true;
            }
            syn::visit::visit_pat_ident(self, i);
        }
    }
    let mut f = Finder(false);
    syn::visit::Visit::visit_pat(&mut f, p);
    f.0
}

/// The names a pattern binds (not constants or unit variants, upper-case),
/// each with its `mut`.
fn bound_names(p: &Pat) -> Vec<(syn::Ident, Option<syn::Token![mut]>)> {
    struct Names(Vec<(syn::Ident, Option<syn::Token![mut]>)>);
    impl<'a> syn::visit::Visit<'a> for Names {
        fn visit_pat_ident(&mut self, i: &'a syn::PatIdent) {
            if !i.ident.to_string().starts_with(|c: char| c.is_uppercase()) {
                self.0.push((i.ident.clone(), i.mutability));
            }
            syn::visit::visit_pat_ident(self, i);
        }
    }
    let mut n = Names(Vec::new());
    syn::visit::Visit::visit_pat(&mut n, p);
    n.0
}

/// `p` with every binding `keep` rejects replaced by `_`.
fn keeping(p: &Pat, keep: impl Fn(&syn::Ident) -> bool) -> Pat {
    struct Wild<F>(F);
    impl<F: Fn(&syn::Ident) -> bool> VisitMut for Wild<F> {
        fn visit_pat_mut(&mut self, p: &mut Pat) {
            if let Pat::Ident(i) = p {
                // A part is read by value, `mut` where it is bound.
                i.mutability = None;
                let binding = !i.ident.to_string().starts_with(|c: char| c.is_uppercase());
                if binding && !(self.0)(&i.ident) {
                    *p = match i.subpat.take() {
                        Some((_, sub)) => *sub,
                        None => syn::parse_quote!(_),
                    };
                    self.visit_pat_mut(p);
                    return;
                }
            }
            syn::visit_mut::visit_pat_mut(self, p);
        }
    }
    let mut p = p.clone();
    Wild(keep).visit_pat_mut(&mut p);
    p
}

/// An arm's body as the statements of the block it becomes: a braced body's
/// own (braces around braces are linted, `unused_braces`, where a match is
/// written on one line).
fn inner(body: &Expr) -> Vec<syn::Stmt> {
    match body {
        Expr::Block(b) if b.label.is_none() && b.attrs.is_empty() => b.block.stmts.clone(),
        _ => vec![syn::Stmt::Expr(body.clone(), None)],
    }
}
