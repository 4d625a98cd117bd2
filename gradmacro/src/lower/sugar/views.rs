//! Views `let v = &x[a..b];` (also `&mut`, `&x`) as the part of `x` they
//! stand for: each later use of `v` rewritten to read `x` in place and the
//! `let` dropped, unless something the view names is bound or assigned again.

use super::{in_value_macro, in_vec_macro, indexed_loop, is_name, pat_names, Substitute};
use quote::format_ident;
use std::collections::HashSet;
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat, Stmt};

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
pub(super) fn views(mut stmts: Vec<Stmt>) -> Vec<Stmt> {
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
    let p = match &l.pat {
        Pat::Ident(p) => p,
        // `let w: &[f64] = &x[1..];`, a closure's parameter written out at
        // its call: the view replaces the name, annotation and all.
        Pat::Type(t) if matches!(&*t.ty, syn::Type::Reference(r) if r.mutability.is_none()) => {
            let Pat::Ident(p) = &*t.pat else { return None };
            p
        }
        _ => return None,
    };
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
