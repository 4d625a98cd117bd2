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
//!   nothing they name is bound or assigned again.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use std::collections::{HashMap, HashSet};
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat, Stmt};

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
        syn::visit_mut::visit_expr_mut(self, e);
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
        *e = syn::parse_quote!({ #(#lets)* #body });
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
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

/// `let (a, b) = { stmts; (e0, e1) };` as the block's statements, its names
/// renamed apart (`__gm_b{n}_tmp`), then `let (a, b) = (e0, e1);`: the
/// statements run where the block did, and nothing after sees their names.
fn block_tuple(l: &syn::Local, n: usize) -> Option<Vec<Stmt>> {
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

/// `let (a, b) = (e0, e1);` (or `x.sin_cos()`) as one `let` per name.
fn tuple_lets(l: &syn::Local) -> Option<Vec<Stmt>> {
    let (pat, ty) = match &l.pat {
        Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
        p => (p, None),
    };
    let Pat::Tuple(t) = pat else { return None };
    let init = super::strip(&l.init.as_ref()?.expr);
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
    let Expr::Tuple(values) = sin_cos.as_ref().unwrap_or(init) else {
        return None;
    };
    let tys: Vec<Option<&syn::Type>> = match ty {
        Some(syn::Type::Tuple(tt)) => tt.elems.iter().map(Some).collect(),
        _ => vec![None; t.elems.len()],
    };
    if values.elems.len() != t.elems.len() || tys.len() != t.elems.len() {
        return None;
    }
    let mut bound = HashSet::new();
    pat_names(pat, &mut bound);
    let reads_bound = values.elems.iter().any(|v| {
        let mut found = HashSet::new();
        super::collect_expr_idents(v, &mut found);
        !found.is_disjoint(&bound)
    });
    let mut lets: Vec<Stmt> = Vec::new();
    let temps: Vec<syn::Ident> = (0..t.elems.len())
        .map(|k| format_ident!("__gm_tuple_{}", k))
        .collect();
    for (k, ((p, v), ty)) in t.elems.iter().zip(&values.elems).zip(&tys).enumerate() {
        let ty = ty.map(|t| quote!(: #t));
        if reads_bound {
            let tmp = &temps[k];
            lets.push(syn::parse_quote!(let #tmp #ty = #v;));
        } else {
            lets.push(syn::parse_quote!(let #p #ty = #v;));
        }
    }
    if reads_bound {
        for (p, tmp) in t.elems.iter().zip(&temps) {
            lets.push(syn::parse_quote!(let #p = #tmp;));
        }
    }
    Some(lets)
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

/// `for v in buf.iter_mut() { .. *v .. }` and `for (i, v) in
/// buf.iter_mut().enumerate() { .. }` as loops over the indices, `*v` (or `v`)
/// read and written as `buf[k]`.
fn in_place(f: &syn::ExprForLoop, n: usize) -> Option<Expr> {
    let (call, enumerate) = match &*f.expr {
        Expr::MethodCall(m) if m.method == "enumerate" && m.args.is_empty() => (&*m.receiver, true),
        other => (other, false),
    };
    let Expr::MethodCall(m) = call else {
        return None;
    };
    if m.method == "zip" && m.args.len() == 1 {
        return zipped_in_place(f, n, m, enumerate);
    }
    let buf = iter_mut_of(call)?;
    let (index, elem) = match (&*f.pat, enumerate) {
        (Pat::Ident(v), false) => (None, v.ident.clone()),
        (Pat::Tuple(t), true) if t.elems.len() == 2 => match (&t.elems[0], &t.elems[1]) {
            (i, Pat::Ident(v)) => (Some(i.clone()), v.ident.clone()),
            _ => return None,
        },
        _ => return None,
    };
    let k = match &index {
        Some(Pat::Ident(i)) => i.ident.clone(),
        _ => format_ident!("__gm_k{}", n),
    };
    let place: Expr = syn::parse_quote!(#buf[#k]);
    let len: Expr = syn::parse_quote!(#buf.len());
    indexed_loop(f, index.as_ref(), &k, &len, elem.to_string(), place)
}

/// The buffer `buf` of `buf.iter_mut()`.
fn iter_mut_of(e: &Expr) -> Option<syn::Ident> {
    let Expr::MethodCall(m) = e else {
        return None;
    };
    if m.method != "iter_mut" || !m.args.is_empty() {
        return None;
    }
    let Expr::Path(buf) = &*m.receiver else {
        return None;
    };
    buf.path.get_ident().cloned()
}

/// `for (v, w) in buf.iter_mut().zip(other)`, `for (w, v) in
/// other.zip(buf.iter_mut())`, each also `.enumerate()`d, as a `zip` of the
/// other side with the indices, `for (k, w) in (0..buf.len()).zip(other)`,
/// `*v` read and written as `buf[k]`: the zip of a range with any iterable
/// but a range is lowered already.
fn zipped_in_place(
    f: &syn::ExprForLoop,
    n: usize,
    zip: &syn::ExprMethodCall,
    enumerate: bool,
) -> Option<Expr> {
    let (index, pair) = match (&*f.pat, enumerate) {
        (Pat::Tuple(t), true) if t.elems.len() == 2 => (Some(&t.elems[0]), &t.elems[1]),
        (p, false) => (None, p),
        _ => return None,
    };
    let Pat::Tuple(pair) = pair else {
        return None;
    };
    if pair.elems.len() != 2 {
        return None;
    }
    let left = iter_mut_of(&zip.receiver);
    let (buf, elem, other_pat, mut_first) = match (left, iter_mut_of(&zip.args[0])) {
        (Some(buf), None) => (buf, &pair.elems[0], &pair.elems[1], true),
        (None, Some(buf)) => (buf, &pair.elems[1], &pair.elems[0], false),
        _ => return None,
    };
    let other = if mut_first {
        &zip.args[0]
    } else {
        &*zip.receiver
    };
    // A range zipped with the indices is a loop over two ranges, which the
    // lowering does not take.
    if matches!(super::strip(other), Expr::Range(_)) {
        return None;
    }
    let Pat::Ident(elem) = elem else {
        return None;
    };
    let k = match index {
        Some(Pat::Ident(i)) => i.ident.clone(),
        _ => format_ident!("__gm_k{}", n),
    };
    let mut body = f.body.clone();
    let mut sub = Substitute {
        name: elem.ident.to_string(),
        by: syn::parse_quote!(#buf[#k]),
        shadowed: false,
    };
    sub.visit_block_mut(&mut body);
    if sub.shadowed {
        return None;
    }
    let label = &f.label;
    let indices: Expr = syn::parse_quote!((0..#buf.len()));
    Some(if mut_first {
        syn::parse_quote!(#label for (#k, #other_pat) in #indices.zip(#other) #body)
    } else {
        syn::parse_quote!(#label for (#other_pat, #k) in #other.zip(0..#buf.len()) #body)
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

/// `for c in x.chunks(k) { body }` as `for j in 0..n { let c = &x[..]; body }`,
/// and `x.chunks(k).map(|c| e)` (`.fold(init, |acc, c| e)`) as
/// `(0..n).map(|j| { let c = &x[..]; e })`; also `chunks_exact` and
/// `windows`, and after `.enumerate()` with the index bound to `j`. The view
/// is then rewritten like one the user wrote.
fn chunked(e: &Expr, n: usize) -> Option<Expr> {
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

/// A view `let v = &x[a..b];` (or `&mut x[a..b]`): what `v` stands for.
struct View {
    name: String,
    arr: syn::Ident,
    start: Option<Expr>,
    end: Option<Expr>,
    /// `&mut`: written through (`v[i] = ..`), lent to helpers writing into it.
    mutable: bool,
    /// Written `&x[..]` (not `&x`).
    indexed: bool,
}

/// Rewrites the uses of each view of `stmts` in the statements after it and
/// drops its `let`, unless something it names is bound or assigned again.
/// Bounds that read names bound again later (`let v = &x[i..];` then `for i
/// in ..`) are first bound to names of their own, as the view fixes them
/// when it is made.
fn views(mut stmts: Vec<Stmt>) -> Vec<Stmt> {
    let mut k = 0;
    while k < stmts.len() {
        let Some(mut view) = view_of(&stmts[k]) else {
            k += 1;
            continue;
        };
        let bounds = fix_bounds(&mut view, &stmts[k + 1..]);
        let mut rest: Vec<Stmt> = stmts[k + 1..].to_vec();
        let mut sub = ViewSub {
            view: &view,
            bail: false,
        };
        sub.visit_stmts(&mut rest);
        if sub.bail {
            k += 1;
            continue;
        }
        stmts.truncate(k);
        k += bounds.len();
        stmts.extend(bounds);
        stmts.extend(rest);
    }
    stmts
}

/// `let __gm_v_lo: usize = a;` (and `_hi`) for the bounds of `view` that
/// read a name `rest` binds or assigns again; the view then reads those.
fn fix_bounds(view: &mut View, rest: &[Stmt]) -> Vec<Stmt> {
    let mut names = HashSet::new();
    for e in view.start.iter().chain(&view.end) {
        super::collect_expr_idents(e, &mut names);
    }
    names.remove(&view.arr.to_string());
    let mut rebound = Rebound {
        names: &names,
        found: false,
    };
    for st in rest {
        syn::visit::Visit::visit_stmt(&mut rebound, st);
    }
    if !rebound.found {
        return Vec::new();
    }
    let mut lets = Vec::new();
    for (bound, suffix) in [(&mut view.start, "lo"), (&mut view.end, "hi")] {
        let Some(e) = bound.as_ref() else { continue };
        if matches!(e, Expr::Lit(_)) {
            continue;
        }
        let name = format_ident!("__gm_{}_{}", view.name, suffix);
        lets.push(syn::parse_quote!(let #name: usize = #e;));
        *bound = Some(syn::parse_quote!(#name));
    }
    lets
}

/// Whether any of `names` is bound (by `let`, a loop, a closure or a `match`
/// arm) or assigned.
struct Rebound<'a> {
    names: &'a HashSet<String>,
    found: bool,
}

impl<'ast> syn::visit::Visit<'ast> for Rebound<'_> {
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        self.found |= self.names.contains(&p.ident.to_string());
        syn::visit::visit_pat_ident(self, p);
    }
    fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
        self.found |= assigned(&a.left).is_some_and(|n| self.names.contains(&n));
        syn::visit::visit_expr_assign(self, a);
    }
    fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
        if super::rename::is_compound_assign(&b.op) {
            self.found |= assigned(&b.left).is_some_and(|n| self.names.contains(&n));
        }
        syn::visit::visit_expr_binary(self, b);
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

fn view_of(st: &Stmt) -> Option<View> {
    let Stmt::Local(l) = st else { return None };
    let Pat::Ident(p) = &l.pat else { return None };
    if p.mutability.is_some() || p.by_ref.is_some() {
        return None;
    }
    let Expr::Reference(r) = super::strip(&l.init.as_ref()?.expr) else {
        return None;
    };
    let indexed = matches!(super::strip(&r.expr), Expr::Index(_));
    let (arr, start, end) = match super::strip(&r.expr) {
        Expr::Path(x) => (x.path.get_ident()?.clone(), None, None),
        Expr::Index(ix) => {
            let Expr::Path(x) = &*ix.expr else {
                return None;
            };
            let Expr::Range(range) = super::strip(&ix.index) else {
                return None;
            };
            if matches!(range.limits, syn::RangeLimits::Closed(_)) {
                return None;
            }
            // `&x[0..b]` is `&x[..b]`: no `0 + i` to write.
            let start = range.start.as_deref().filter(|a| {
                !matches!(a, Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) if i.base10_digits() == "0")
            });
            (
                x.path.get_ident()?.clone(),
                start.cloned(),
                range.end.as_deref().cloned(),
            )
        }
        _ => return None,
    };
    Some(View {
        name: p.ident.to_string(),
        arr,
        start,
        end,
        mutable: r.mutability.is_some(),
        indexed,
    })
}

struct ViewSub<'a> {
    view: &'a View,
    bail: bool,
}

impl ViewSub<'_> {
    /// The names the view depends on.
    fn depends(&self) -> HashSet<String> {
        let mut names = HashSet::new();
        names.insert(self.view.name.clone());
        names.insert(self.view.arr.to_string());
        for e in self.view.start.iter().chain(&self.view.end) {
            super::collect_expr_idents(e, &mut names);
        }
        names
    }

    /// Whether assigning `name` changes what the view stands for: writing
    /// through a mutable view (`v[i] = ..`) does not.
    fn rebinds(&self, name: &str) -> bool {
        if self.view.mutable && (name == self.view.name || self.view.arr == name) {
            return false;
        }
        self.depends().contains(name)
    }

    /// `start + i`, or `i` for a view from the start.
    fn offset(&self, i: &Expr) -> Expr {
        match &self.view.start {
            None => i.clone(),
            Some(a) => {
                let (a, i) = (operand(a), operand(i));
                syn::parse_quote!(#a + #i)
            }
        }
    }

    /// `for e in v.iter() { .. }` (`for &e in v`, `for (i, e) in
    /// v.iter().enumerate()`) as a loop over the view's indices, the element
    /// read in place.
    fn view_loop(&mut self, f: &syn::ExprForLoop) -> Option<Expr> {
        let name = &self.view.name;
        let (src, enumerate) = match &*f.expr {
            Expr::MethodCall(m) if m.method == "enumerate" && m.args.is_empty() => {
                (&*m.receiver, true)
            }
            other => (other, false),
        };
        let src = match src {
            Expr::MethodCall(m) if m.method == "iter" && m.args.is_empty() => &*m.receiver,
            Expr::Reference(r) => &*r.expr,
            other => other,
        };
        if !is_name(src, name) {
            return None;
        }
        let (index, elem) = match (&*f.pat, enumerate) {
            (p, false) => (None, p),
            (Pat::Tuple(t), true) if t.elems.len() == 2 => (Some(&t.elems[0]), &t.elems[1]),
            _ => return None,
        };
        let elem = match elem {
            Pat::Ident(i) => i.ident.to_string(),
            Pat::Reference(r) => match &*r.pat {
                Pat::Ident(i) => i.ident.to_string(),
                _ => return None,
            },
            _ => return None,
        };
        let j = match index {
            Some(Pat::Ident(i)) => i.ident.clone(),
            _ => format_ident!("__gm_j{}", name),
        };
        let len = self.len();
        let place = {
            let arr = &self.view.arr;
            let i = self.offset(&syn::parse_quote!(#j));
            syn::parse_quote!(#arr[#i])
        };
        indexed_loop(f, index, &j, &len, elem, place)
    }

    /// Over the view's indices, as the range reductions the lowering reads:
    /// `v.iter().sum()` is `(0..n).map(|j| x[a + j]).sum()`,
    /// `v.iter().map(|e| ..)` is `(0..n).map(|j| ..)` with the element read
    /// in place, and `v.iter().zip(w).map(|(e, u)| ..)` reads `w[j]` too.
    fn view_reduction(&mut self, e: &Expr) -> Option<Expr> {
        let Expr::MethodCall(m) = e else { return None };
        let method = m.method.to_string();
        let name = self.view.name.clone();
        // `v.iter()` (`.copied()`, `.cloned()`) alone, the view's elements.
        let elements = |r: &Expr| -> bool {
            let r = match r {
                Expr::MethodCall(c)
                    if (c.method == "copied" || c.method == "cloned") && c.args.is_empty() =>
                {
                    &*c.receiver
                }
                other => other,
            };
            matches!(r, Expr::MethodCall(i) if i.method == "iter" && i.args.is_empty() && is_name(&i.receiver, &name))
        };
        let j = format_ident!("__gm_j{}", name);
        if !matches!(method.as_str(), "sum" | "product" | "map") {
            return None;
        }
        let len = self.len();
        let arr = self.view.arr.clone();
        let at = self.offset(&syn::parse_quote!(#j));
        let elem: Expr = syn::parse_quote!(#arr[#at]);
        match method.as_str() {
            "sum" | "product" if m.args.is_empty() && elements(&m.receiver) => {
                let turbofish = &m.turbofish;
                let method = &m.method;
                Some(syn::parse_quote!((0..#len).map(|#j| #elem).#method #turbofish()))
            }
            "map" if m.args.len() == 1 => {
                let Expr::Closure(c) = &m.args[0] else {
                    return None;
                };
                if c.inputs.len() != 1 {
                    return None;
                }
                let mut body = (*c.body).clone();
                let subst = |body: &mut Expr, pat: &Pat, by: Expr| -> bool {
                    let name = match pat {
                        Pat::Ident(i) => i.ident.to_string(),
                        Pat::Reference(r) => match &*r.pat {
                            Pat::Ident(i) => i.ident.to_string(),
                            _ => return false,
                        },
                        Pat::Type(t) => match &*t.pat {
                            Pat::Ident(i) => i.ident.to_string(),
                            _ => return false,
                        },
                        _ => return false,
                    };
                    let mut sub = Substitute {
                        name,
                        by,
                        shadowed: false,
                    };
                    sub.visit_expr_mut(body);
                    !sub.shadowed
                };
                if elements(&m.receiver) {
                    if !subst(&mut body, &c.inputs[0], elem) {
                        return None;
                    }
                } else {
                    // `v.iter().zip(w)` / `.zip(w.iter())` / `.zip(&w)`.
                    let Expr::MethodCall(z) = &*m.receiver else {
                        return None;
                    };
                    if z.method != "zip" || z.args.len() != 1 || !elements(&z.receiver) {
                        return None;
                    }
                    let partner = match &z.args[0] {
                        Expr::MethodCall(i) if i.method == "iter" && i.args.is_empty() => {
                            &*i.receiver
                        }
                        Expr::Reference(r) => &*r.expr,
                        other => other,
                    };
                    let Expr::Path(_) = partner else { return None };
                    let Pat::Tuple(t) = &c.inputs[0] else {
                        return None;
                    };
                    if t.elems.len() != 2 {
                        return None;
                    }
                    let other: Expr = syn::parse_quote!(#partner[#j]);
                    if !subst(&mut body, &t.elems[0], elem) || !subst(&mut body, &t.elems[1], other)
                    {
                        return None;
                    }
                }
                Some(syn::parse_quote!((0..#len).map(|#j| #body)))
            }
            _ => None,
        }
    }

    /// The view's length.
    fn len(&self) -> Expr {
        let arr = &self.view.arr;
        match (&self.view.start, &self.view.end) {
            (None, None) => syn::parse_quote!(#arr.len()),
            (None, Some(b)) => syn::parse_quote!((#b)),
            (Some(a), None) => {
                let a = operand(a);
                syn::parse_quote!((#arr.len() - #a))
            }
            (Some(a), Some(b)) => {
                let (a, b) = (operand(a), operand(b));
                syn::parse_quote!((#b - #a))
            }
        }
    }

    fn whole(&self) -> Expr {
        let arr = &self.view.arr;
        let (a, b) = (&self.view.start, &self.view.end);
        match (a, b) {
            // `&x` stands for `x` (a slice, or a float read by method);
            // `&x[..]` of an owned array must stay a reference.
            (None, None) if !self.view.indexed => syn::parse_quote!(#arr),
            _ => syn::parse_quote!((&#arr[#a..#b])),
        }
    }

    /// A mutable view lent to a call that is a statement of its own (a
    /// helper writing into it): `&mut x[a..b]`.
    fn lent(&self) -> Expr {
        let arr = &self.view.arr;
        let (a, b) = (&self.view.start, &self.view.end);
        syn::parse_quote!(&mut #arr[#a..#b])
    }

    /// As an argument the callee may only read: parenthesised, so the call's
    /// rewrite (`lower/outputs.rs`) asks the callee whether it writes it.
    fn lent_maybe_read(&self) -> Expr {
        let lent = self.lent();
        syn::parse_quote!((#lent))
    }
}

impl ViewSub<'_> {
    /// The statements of one block in order, up to a `let` that binds the
    /// view's name again (its initialiser still sees the view; what follows
    /// does not).
    fn visit_stmts(&mut self, stmts: &mut [Stmt]) {
        for st in stmts {
            if let Stmt::Local(l) = st {
                let mut names = HashSet::new();
                pat_names(&l.pat, &mut names);
                if names.contains(&self.view.name) {
                    if let Some(init) = &mut l.init {
                        self.visit_expr_mut(&mut init.expr);
                    }
                    return;
                }
            }
            self.visit_stmt_mut(st);
        }
    }
}

impl VisitMut for ViewSub<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        self.visit_stmts(&mut b.stmts);
    }
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        in_vec_macro(m, |x| self.visit_expr_mut(x));
        in_value_macro(m, |x| self.visit_expr_mut(x));
    }
    fn visit_stmt_mut(&mut self, st: &mut Stmt) {
        if let (Stmt::Expr(Expr::Call(c), Some(_)), true) = (&mut *st, self.view.mutable) {
            for a in c.args.iter_mut() {
                if is_name(a, &self.view.name) {
                    *a = self.lent_maybe_read();
                }
            }
        }
        syn::visit_mut::visit_stmt_mut(self, st);
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if self.bail {
            return;
        }
        let name = self.view.name.clone();
        let arr = self.view.arr.clone();
        if let Expr::ForLoop(f) = e {
            if let Some(rewritten) = self.view_loop(f) {
                *e = rewritten;
                return self.visit_expr_mut(e);
            }
        }
        if let Some(rewritten) = self.view_reduction(e) {
            *e = rewritten;
            return self.visit_expr_mut(e);
        }
        match e {
            Expr::Index(ix) if is_name(&ix.expr, &name) => {
                self.visit_expr_mut(&mut ix.index);
                if let Expr::Range(r) = super::strip(&ix.index) {
                    if matches!(r.limits, syn::RangeLimits::Closed(_)) {
                        self.bail = true;
                        return;
                    }
                    let lo = match &r.start {
                        Some(c) => Some(self.offset(c)),
                        None => self.view.start.clone(),
                    };
                    let hi = match &r.end {
                        Some(d) => Some(self.offset(d)),
                        None => self.view.end.clone(),
                    };
                    *e = syn::parse_quote!(#arr[#lo..#hi]);
                } else {
                    let i = self.offset(&ix.index);
                    *e = syn::parse_quote!(#arr[#i]);
                }
                return;
            }
            Expr::MethodCall(m)
                if m.method == "len" && m.args.is_empty() && is_name(&m.receiver, &name) =>
            {
                *e = self.len();
                return;
            }
            // `let r = &x; *r` reads `x` (a scalar too).
            Expr::Unary(u)
                if matches!(u.op, syn::UnOp::Deref(_))
                    && is_name(&u.expr, &name)
                    && self.view.start.is_none()
                    && self.view.end.is_none() =>
            {
                *e = syn::parse_quote!(#arr);
                return;
            }
            _ if is_name(e, &name) => {
                *e = self.whole();
                return;
            }
            Expr::Assign(a) => {
                self.bail |= assigned(&a.left).is_some_and(|n| self.rebinds(&n));
            }
            Expr::Binary(b) if super::rename::is_compound_assign(&b.op) => {
                self.bail |= assigned(&b.left).is_some_and(|n| self.rebinds(&n));
            }
            _ => {}
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        let mut names = HashSet::new();
        pat_names(&l.pat, &mut names);
        // The initialiser still sees the view; what follows would not.
        if let Some(init) = &mut l.init {
            if self.view.mutable && is_name(&init.expr, &self.view.name) {
                // `let w = v;` moves the mutable view: `w` is one too.
                *init.expr = self.lent();
            } else {
                self.visit_expr_mut(&mut init.expr);
            }
        }
        self.bail |= !names.is_disjoint(&self.depends());
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// The variable an assignment writes: `h` of `h[j] = ..` (its index `j`
/// is only read).
fn assigned(left: &Expr) -> Option<String> {
    match super::strip(left) {
        Expr::Index(ix) => assigned(&ix.expr),
        Expr::Field(f) => assigned(&f.base),
        Expr::Unary(u) => assigned(&u.expr),
        Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
        _ => None,
    }
}

/// `e` as an operand of `+`/`-`: parenthesised unless it is already primary.
fn operand(e: &Expr) -> Expr {
    match e {
        Expr::Path(_)
        | Expr::Lit(_)
        | Expr::MethodCall(_)
        | Expr::Call(_)
        | Expr::Index(_)
        | Expr::Field(_)
        | Expr::Paren(_) => e.clone(),
        _ => syn::parse_quote!((#e)),
    }
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
    let repeat = |input: syn::parse::ParseStream| -> syn::Result<(Expr, Expr)> {
        let value: Expr = input.parse()?;
        input.parse::<syn::Token![;]>()?;
        Ok((value, input.parse()?))
    };
    if let Ok((mut value, mut n)) = syn::parse::Parser::parse2(repeat, m.tokens.clone()) {
        f(&mut value);
        f(&mut n);
        m.tokens = quote!(#value; #n);
        return;
    }
    in_list(m, f);
}
