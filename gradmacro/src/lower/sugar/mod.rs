//! Local tuples and closures as the plain `let`s and blocks they stand for,
//! rewritten once before lowering (so every lowering attempt sees the same
//! syntax tree, whose nodes key what the attempts learn):
//!
//! - `let (a, b) = (e0, e1);` becomes `let a = e0; let b = e1;`, through
//!   temporaries when an element reads a name the pattern binds (so
//!   `let (a, b) = (b, a);` swaps); `let (s, c) = x.sin_cos();` is
//!   `(x.sin(), x.cos())`, std's own definition;
//! - after `let sq = |v: f64| v * v;`, each call `sq(e)` becomes
//!   `{ let v: f64 = e; v * v }`. A closure whose captured names are bound
//!   again before a call (the copy would read the new ones) is an error;
//! - `for v in buf.iter_mut() { *v += t; }` (also `.enumerate()`) becomes
//!   `for k in 0..buf.len() { buf[k] += t; }`;
//! - `for c in x.chunks(k) { .. }` (`chunks_exact`, `windows`, with
//!   `.enumerate()`; also `.map(|c| ..)` and `.fold(init, |acc, c| ..)` of
//!   them) becomes a loop over the chunks' indices `j` whose body starts with
//!   the view `let c = &x[j * k..(j * k + k).min(x.len())];`;
//! - after `let v = &x[a..b];` (`&x[a..]`, `&x[..b]`, `&x[..]`, `&x`,
//!   `x.split_at(k)`), `v[i]` reads `x[a + i]`, `v.len()` is `b - a`,
//!   `&v[c..d]` is `&x[a + c..a + d]` and `v` elsewhere `&x[a..b]`, while
//!   nothing they name is bound or assigned again;
//! - `r.map(f).map(g)` becomes one map, `for v in r.map(f)` a loop over
//!   `r`, and `r.map(f64::exp)` a map of a closure (`maps.rs`);
//! - `*x.last().unwrap()` is `x[x.len() - 1]`, `*x.first().unwrap()` is
//!   `x[0]` (`ends.rs`).

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use std::collections::{HashMap, HashSet};
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat, Stmt};
// The rewrites in this module's children read these as `super::strip` too.
use super::{collect_expr_idents, rename, strip};

mod chunks;
mod ends;
mod iter_mut;
mod maps;
mod tuples;
mod views;

use chunks::chunked;
use iter_mut::in_place;
use tuples::{block_tuple, tuple_lets};
use views::views;

pub(crate) fn desugar(block: &mut syn::Block) -> Vec<(TokenStream, String)> {
    let mut d = Sugar {
        scopes: vec![HashMap::new()],
        loops: 0,
        errors: Vec::new(),
    };
    d.visit_block_mut(block);
    d.errors
}

struct Closure {
    params: Vec<Pat>,
    body: Expr,
    captures: HashSet<String>,
    /// A captured name was bound again since the definition.
    stale: bool,
}

struct Sugar {
    scopes: Vec<HashMap<String, Closure>>,
    /// Loops seen, to name each rewritten loop's index apart.
    loops: usize,
    errors: Vec<(TokenStream, String)>,
}

impl Sugar {
    fn closure(&self, name: &str) -> Option<&Closure> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    /// A `let` binds `names`: a closure of that name is shadowed; one that
    /// captures it would now read the new binding.
    fn bound(&mut self, names: &HashSet<String>) {
        for scope in &mut self.scopes {
            scope.retain(|n, _| !names.contains(n));
            for c in scope.values_mut() {
                if c.captures.iter().any(|n| names.contains(n)) {
                    c.stale = true;
                }
            }
        }
    }
}

impl VisitMut for Sugar {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        self.scopes.push(HashMap::new());
        let mut out = Vec::with_capacity(b.stmts.len());
        let mut todo: std::collections::VecDeque<Stmt> = std::mem::take(&mut b.stmts).into();
        while let Some(mut s) = todo.pop_front() {
            if let Stmt::Local(l) = &s {
                if let Some(lets) = block_tuple(l, self.loops) {
                    self.loops += 1;
                    for l in lets.into_iter().rev() {
                        todo.push_front(l);
                    }
                    continue;
                }
            }
            self.visit_stmt_mut(&mut s);
            if let Stmt::Local(l) = &s {
                let mut names = HashSet::new();
                pat_names(&l.pat, &mut names);
                self.bound(&names);
                if let Some((name, c)) = local_closure(l) {
                    self.scopes.last_mut().expect("a scope").insert(name, c);
                }
                if let Some(lets) = tuple_lets(l) {
                    out.extend(lets);
                    continue;
                }
            }
            out.push(s);
        }
        let mut out = views(out);
        // A closure whose every call was written out is dropped: kept, it
        // would be an unused variable in passive code copied as written.
        let mut keep = vec![true; out.len()];
        for (k, st) in out.iter().enumerate() {
            let Stmt::Local(l) = st else { continue };
            let (Pat::Ident(name), Some(init)) = (&l.pat, &l.init) else {
                continue;
            };
            if !matches!(super::strip(&init.expr), Expr::Closure(_)) {
                continue;
            }
            let used = out[k + 1..]
                .iter()
                .any(|later| mentions(later.to_token_stream(), &name.ident.to_string()));
            keep[k] = used;
        }
        let mut keep = keep.into_iter();
        out.retain(|_| keep.next().unwrap_or(true));
        b.stmts = out;
        self.scopes.pop();
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        // Before the body is visited, so its view is rewritten with it.
        if let Some(indexed) = chunked(e, self.loops) {
            self.loops += 1;
            *e = indexed;
        }
        if let Some(closure) = maps::called(e) {
            *e = closure;
        }
        if let Some(element) = ends::end_element(e) {
            *e = element;
        }
        self.rewrite_all(e, maps::looped);
        syn::visit_mut::visit_expr_mut(self, e);
        self.rewrite_all(e, maps::fused);
        if let Expr::Macro(m) = e {
            in_vec_macro(&mut m.mac, |x| self.visit_expr_mut(x));
            return;
        }
        if let Expr::ForLoop(f) = e {
            self.loops += 1;
            if let Some(indexed) = in_place(f, self.loops) {
                *e = indexed;
            }
            return;
        }
        let Expr::Call(c) = e else { return };
        let Expr::Path(p) = &*c.func else { return };
        let Some(name) = p.path.get_ident().map(|i| i.to_string()) else {
            return;
        };
        let Some(closure) = self.closure(&name) else {
            return;
        };
        let problem = if closure.stale {
            Some(format!("`{name}` reads a name bound again since the closure was defined, which a copy of its body here would read instead: define the closure after it, or write the computation inline"))
        } else if closure.params.len() != c.args.len() {
            Some(format!("`{name}` takes {} arguments", closure.params.len()))
        } else {
            None
        };
        if let Some(msg) = problem {
            self.errors.push((c.to_token_stream(), msg));
            // Reported: a placeholder keeps the lowering from reporting it again.
            *e = syn::parse_quote!(0.0);
            return;
        }
        let lets = closure
            .params
            .iter()
            .zip(&c.args)
            .map(|(p, a)| quote!(let #p = #a;));
        let body = &closure.body;
        let mut block: syn::Block = syn::parse_quote!({ #(#lets)* #body });
        // Its parameters are `let`s now: `let w: &[f64] = &x[1..];` is a view.
        block.stmts = views(std::mem::take(&mut block.stmts));
        *e = Expr::Block(syn::ExprBlock {
            attrs: Vec::new(),
            label: None,
            block,
        });
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

impl Sugar {
    /// `rewrite` applied to `e` while it applies; where it cannot be, the
    /// error is kept and its stand-in replaces `e`.
    fn rewrite_all(&mut self, e: &mut Expr, rewrite: fn(&Expr) -> Option<maps::Rewrite>) {
        while let Some(r) = rewrite(e) {
            match r {
                Ok(new) => *e = new,
                Err((tokens, msg, instead)) => {
                    self.errors.push((tokens, msg));
                    *e = instead;
                    return;
                }
            }
        }
    }
}

/// `let name = |params| body;` with plain parameters and no `return`.
fn local_closure(l: &syn::Local) -> Option<(String, Closure)> {
    let Pat::Ident(name) = &l.pat else {
        return None;
    };
    let Expr::Closure(c) = super::strip(&l.init.as_ref()?.expr) else {
        return None;
    };
    let plain = |p: &Pat| match p {
        Pat::Ident(_) => true,
        Pat::Type(t) => matches!(*t.pat, Pat::Ident(_)),
        _ => false,
    };
    if c.asyncness.is_some() || !c.inputs.iter().all(plain) {
        return None;
    }
    let mut mentioned = HashSet::new();
    super::collect_expr_idents(&c.body, &mut mentioned);
    // `return` in the body would leave the function it is written into.
    if mentioned.contains("return") {
        return None;
    }
    let mut params = HashSet::new();
    for p in &c.inputs {
        pat_names(p, &mut params);
    }
    Some((
        name.ident.to_string(),
        Closure {
            params: c.inputs.iter().cloned().collect(),
            body: (*c.body).clone(),
            captures: mentioned.difference(&params).cloned().collect(),
            stale: false,
        },
    ))
}

/// The names a pattern binds.
fn pat_names(p: &Pat, out: &mut HashSet<String>) {
    struct Finder<'a>(&'a mut HashSet<String>);
    impl<'a> syn::visit::Visit<'a> for Finder<'_> {
        fn visit_pat_ident(&mut self, i: &'a syn::PatIdent) {
            self.0.insert(i.ident.to_string());
            syn::visit::visit_pat_ident(self, i);
        }
    }
    syn::visit::Visit::visit_pat(&mut Finder(out), p);
}

/// Whether `name` occurs in `tokens`.
pub(crate) fn mentions(tokens: TokenStream, name: &str) -> bool {
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => i == name,
        proc_macro2::TokenTree::Group(g) => mentions(g.stream(), name),
        _ => false,
    })
}

/// `f` as `for k in 0..len { body }`, the element's name in its body read
/// as `place`; `None` if the body binds that name again.
fn indexed_loop(
    f: &syn::ExprForLoop,
    index: Option<&Pat>,
    k: &syn::Ident,
    len: &Expr,
    elem: String,
    place: Expr,
) -> Option<Expr> {
    let mut body = f.body.clone();
    let mut sub = Substitute {
        name: elem,
        by: place,
        shadowed: false,
    };
    sub.visit_block_mut(&mut body);
    if sub.shadowed {
        return None;
    }
    let label = &f.label;
    let k_pat: Pat = match index {
        Some(p @ Pat::Wild(_)) => p.clone(),
        _ => syn::parse_quote!(#k),
    };
    Some(syn::parse_quote!(#label for #k_pat in 0..#len #body))
}

/// Replaces `*name` and `name` by a place, unless a `let` binds `name` again.
struct Substitute {
    name: String,
    by: Expr,
    shadowed: bool,
}

impl VisitMut for Substitute {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Unary(u) = e {
            if matches!(u.op, syn::UnOp::Deref(_)) && is_name(&u.expr, &self.name) {
                *e = self.by.clone();
                return;
            }
        }
        if is_name(e, &self.name) {
            *e = self.by.clone();
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        let mut names = HashSet::new();
        pat_names(&l.pat, &mut names);
        self.shadowed |= names.contains(&self.name);
        syn::visit_mut::visit_local_mut(self, l);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

fn is_name(e: &Expr, name: &str) -> bool {
    matches!(e, Expr::Path(p) if p.path.is_ident(name))
}

/// Applies `f` to the arguments of the macros kept on values (`assert!`,
/// `assert_eq!`, `println!`, ...; `format!` too), whose tokens syn leaves
/// unparsed.
pub(crate) fn in_value_macro(m: &mut syn::Macro, f: impl FnMut(&mut Expr)) {
    let Some(name) = m.path.get_ident() else {
        return;
    };
    if super::VALUE_MACROS.contains(&name.to_string().as_str()) || name == "format" {
        in_list(m, f);
    }
}

/// Applies `f` to each of a macro's comma-separated expressions, if they are.
fn in_list(m: &mut syn::Macro, mut f: impl FnMut(&mut Expr)) {
    let list = syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated;
    if let Ok(mut items) = syn::parse::Parser::parse2(list, m.tokens.clone()) {
        for item in items.iter_mut() {
            f(item);
        }
        m.tokens = quote!(#items);
    }
}

/// Applies `f` to the expressions inside `vec![a, b]` or `vec![a; n]`, whose
/// tokens syn leaves unparsed (the lowering reads them as expressions).
pub(crate) fn in_vec_macro(m: &mut syn::Macro, mut f: impl FnMut(&mut Expr)) {
    if !m.path.is_ident("vec") {
        return;
    }
    let repeat = super::vec_macros::repeat;
    if let Ok((mut value, mut n)) = syn::parse::Parser::parse2(repeat, m.tokens.clone()) {
        f(&mut value);
        f(&mut n);
        m.tokens = quote!(#value; #n);
        return;
    }
    in_list(m, f);
}
