//! Iterator reductions with a closure, lowered as the `for` loop they stand
//! for: `xs.iter().map(|x| e).sum()` is `let mut s = -0.0; for x in xs.iter()
//! { s += e; }`, `.product()` the same with `*=`,
//! `.fold(init, |acc, x| e)` is `let mut acc = init; for x in .. { acc = e; }`
//! (`.fold(init, f)` is `.fold(init, |acc, x| f(acc, x))`)
//! and `let v: Vec<f64> = xs.iter().map(|x| e).collect();` is
//! `let mut v = Vec::new(); for x in .. { v.push(e); }`.
//! The loop then goes through the same lowering as one the user wrote, so
//! arrays are read in place and ranges replayed backwards.

use super::{strip, ForLoop, LoopBody, Lowerer, Val};
use crate::ir::*;
use crate::rules::Prim;
use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::Expr;

/// What an iterator reduction starts from and how it combines.
enum Start<'a> {
    /// `sum` (from -0, with `+`) or `product` (from 1, with `*`).
    Reduce(Prim),
    /// `fold(init, |acc, x| value)`, over `iter.map(|y| ..)` if `Some`.
    Fold(&'a Expr, Option<&'a syn::ExprClosure>),
}

impl Lowerer<'_> {
    /// Lowers `iter.map(|x| e).sum()`, `.product()` or `iter.fold(init, |a, x| e)`;
    /// `None` if `m` is none of them.
    pub(crate) fn iter_reduction(&mut self, m: &syn::ExprMethodCall, whole: &Expr) -> Option<Val> {
        let by_path: syn::ExprClosure;
        let (iter, closure, start) = match (m.method.to_string().as_str(), m.args.len()) {
            (method @ ("sum" | "product"), 0) => {
                // `x.iter().skip(1).sum()`: the elements themselves.
                let (iter, c) = match mapped(&m.receiver) {
                    Some(found) => found,
                    None if self.walks_array(&m.receiver) => {
                        let e = self.names.fresh("elem");
                        by_path = syn::parse_quote!(|#e| #e);
                        (strip(&m.receiver), &by_path)
                    }
                    None => return None,
                };
                let start = if method == "sum" {
                    Start::Reduce(Prim::Add)
                } else {
                    Start::Reduce(Prim::Mul)
                };
                (iter, c, start)
            }
            ("fold", 2) => {
                let c = match strip(&m.args[1]) {
                    Expr::Closure(c) => c,
                    // `fold(f64::NEG_INFINITY, f64::max)`: the closure it stands for.
                    Expr::Path(p) => {
                        let (acc, x) = (self.names.fresh("acc"), self.names.fresh("x"));
                        by_path = syn::parse_quote!(|#acc, #x| #p(#acc, #x));
                        &by_path
                    }
                    _ => return None,
                };
                match mapped(&m.receiver) {
                    Some((iter, map)) => (iter, c, Start::Fold(&m.args[0], Some(map))),
                    None => (strip(&m.receiver), c, Start::Fold(&m.args[0], None)),
                }
            }
            _ => return None,
        };
        if !self.closure_supported(closure, &start) {
            return Some(self.passive_val_silent());
        }
        let span = whole.span();
        let acc = self.fresh_var("acc", VarKind::Active, span);
        let init = match start {
            Start::Reduce(prim) => {
                // `Sum for f64` starts from -0.0 (the empty sum is -0.0, and
                // -0.0 + x is x for every x, +0.0 included).
                let ty = crate::emit::float_ty(&self.float);
                let (tokens, primary) = if prim == Prim::Add {
                    (crate::generic::lit(&ty, "-0.0"), false)
                } else {
                    (crate::generic::lit(&ty, "1.0"), true)
                };
                Val::Const(Passive {
                    tokens,
                    primary,
                    reads: Vec::new(),
                })
            }
            Start::Fold(init, _) => self.expr(init),
        };
        self.write(acc, init, whole);
        let inputs: Vec<&syn::Pat> = closure.inputs.iter().map(untyped).collect();
        let body = match start {
            Start::Reduce(prim) => LoopBody::Fold {
                acc,
                acc_name: None,
                prim: Some(prim),
                value: &closure.body,
                mapped: None,
            },
            Start::Fold(_, map) => LoopBody::Fold {
                acc,
                acc_name: crate::lower::pat_ident(inputs[0]),
                prim: None,
                value: &closure.body,
                mapped: map.and_then(|c| Some((crate::lower::pat_ident(inputs[1])?, &*c.body))),
            },
        };
        let pat = match start {
            Start::Fold(_, Some(map)) => untyped(&map.inputs[0]),
            _ => inputs[inputs.len() - 1],
        };
        self.for_loop(ForLoop {
            label: None,
            pat,
            iter,
            span,
            body,
        });
        Some(Val::Var(acc))
    }

    /// `let name = iter.map(|x| e).collect();` with a differentiated `e`:
    /// returns false if `e` is not that.
    pub(crate) fn collected(
        &mut self,
        name: &syn::Ident,
        ty: Option<&syn::Type>,
        e: &Expr,
    ) -> bool {
        if !super::rename::mentions_active(e, self) {
            return self.constant_array(name, ty, e);
        }
        // `let a: &[f64] = x;` (a closure's parameter written out at its
        // call) becomes an owned copy: the reference type is not its type.
        let ty = ty.filter(|t| !matches!(t, syn::Type::Reference(_)));
        let src = match strip(e) {
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => strip(&u.expr),
            other => other,
        };
        if super::rename::local_name(src).is_some() {
            return self.copied(name, ty, src);
        }
        if let Expr::Call(c) = strip(e) {
            let from = match &*c.func {
                Expr::Path(p) => {
                    let segs = super::path_names(&p.path);
                    segs.len() >= 2 && segs[segs.len() - 2..] == ["Vec", "from"]
                }
                _ => false,
            };
            return from && c.args.len() == 1 && self.copied_slice(name, ty, &c.args[0], true);
        }
        let Expr::MethodCall(m) = strip(e) else {
            return false;
        };
        if !m.args.is_empty() {
            return false;
        }
        match m.method.to_string().as_str() {
            "collect" => {
                let Some((iter, closure)) = mapped(&m.receiver) else {
                    return false;
                };
                if self.closure_supported(closure, &Start::Reduce(Prim::Add)) {
                    let pat = untyped(&closure.inputs[0]);
                    self.collect_into(name, ty, iter, pat, &closure.body);
                }
                true
            }
            // A copy of a differentiated array into a local `Vec`.
            "to_vec" | "to_owned" | "clone" => {
                let recv = strip(&m.receiver);
                if self.array_var(recv).is_none() {
                    return self.copied_slice(name, ty, recv, m.method != "clone");
                }
                if m.method != "to_vec" {
                    return self.copied(name, ty, recv);
                }
                self.collect_copy(name, ty, recv);
                true
            }
            _ => false,
        }
    }

    /// `x[a..b].to_vec()`, `(&x[a..b]).to_owned()`, `Vec::from(&x[a..b])`:
    /// a `Vec` of the sub-slice's elements. Returns false if `src` is not a
    /// sub-slice of an array.
    fn copied_slice(
        &mut self,
        name: &syn::Ident,
        ty: Option<&syn::Type>,
        src: &Expr,
        owned: bool,
    ) -> bool {
        let slice = match strip(src) {
            Expr::Reference(r) if r.mutability.is_none() => strip(&r.expr),
            other => other,
        };
        let Expr::Index(ix) = slice else {
            return false;
        };
        if !owned
            || !matches!(strip(&ix.index), Expr::Range(_))
            || self.array_var(&ix.expr).is_none()
        {
            return false;
        }
        self.collect_copy(name, ty, slice);
        true
    }

    /// `let v: Vec<f64> = (0..n).map(|i| ..).collect();`, `data.to_vec()`,
    /// `data` (an array): a constant array, which later stores may make
    /// differentiated. Returns false if `e` is none of them.
    fn constant_array(&mut self, name: &syn::Ident, ty: Option<&syn::Type>, e: &Expr) -> bool {
        let is_vec = |t: Option<String>| {
            t.is_none_or(|t| t.starts_with("Vec") || t.starts_with("::std::vec::Vec"))
        };
        let copied = match strip(e) {
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => strip(&u.expr),
            other => other,
        };
        // The array copied: a copy of floats holds floats.
        let mut source = None;
        let len = match copied {
            Expr::MethodCall(m) if m.args.is_empty() => match m.method.to_string().as_str() {
                "collect" => {
                    let fish = m
                        .turbofish
                        .as_ref()
                        .map(|t| t.args.to_token_stream().to_string().replace(' ', ""));
                    if !is_vec(fish) || !is_vec(ty.map(|t| t.to_token_stream().to_string())) {
                        return false;
                    }
                    None
                }
                "to_vec" | "to_owned" | "clone" => {
                    let Some(arr) = self.array_var(strip(&m.receiver)) else {
                        return false;
                    };
                    source = Some(arr);
                    match &self.vars[arr.0].shape {
                        Shape::Array { len: Some(n) } if m.method != "to_vec" => Some(n.clone()),
                        _ => None,
                    }
                }
                _ => return false,
            },
            // A fixed array is copied; a slice would only be borrowed again.
            src @ Expr::Path(_) => match self.array_var(src) {
                Some(arr) => {
                    source = Some(arr);
                    match &self.vars[arr.0].shape {
                        Shape::Array { len: Some(n) } => Some(n.clone()),
                        _ => return false,
                    }
                }
                None => return false,
            },
            _ => return false,
        };
        let Some(init) = self.passive(e) else {
            return true;
        };
        let v = self.declare_unbound(name, VarKind::Passive, name.span());
        self.vars[v.0].ty = ty.map(quote::ToTokens::to_token_stream);
        // Before `array_def`, which reads it: a generic `[T; N]` of
        // floats is declared as zeros (it is not `Default`).
        // So is one typed `Vec<T>` or `[f64; N]`, by its annotation or
        // by `collect::<Vec<T>>()`.
        let fish = match copied {
            Expr::MethodCall(m) => m.turbofish.as_ref().and_then(|t| match t.args.first() {
                Some(syn::GenericArgument::Type(t)) => Some(t),
                _ => None,
            }),
            _ => None,
        };
        let annotated = ty.or(fish).is_some_and(|t| {
            matches!(
                crate::signature::param_shape(t, self.float.generic()),
                Ok(Some(Shape::Array { .. }))
            )
        });
        self.vars[v.0].float_elems =
            annotated || source.is_some_and(|a| self.vars[a.0].float_elems);
        self.array_def(
            v,
            super::array::ArrayInit {
                init,
                len,
                elements: Vec::new(),
                empty: false,
                fill: None,
            },
        );
        self.bind(name, v);
        true
    }

    /// `let name = src;` for a differentiated array `src`: a copy the same
    /// shape (a `[T; N]` stays one, a `Vec` or slice becomes a `Vec`).
    fn copied(&mut self, name: &syn::Ident, ty: Option<&syn::Type>, src: &Expr) -> bool {
        let Some(arr) = self.array_var(src) else {
            return false;
        };
        match &self.vars[arr.0].shape {
            Shape::Array { len: Some(n) } => {
                let n = n.clone();
                self.copy_fixed(name, ty, arr, n);
            }
            _ => self.collect_copy(name, ty, src),
        }
        true
    }

    /// A `Vec` of `src`'s elements.
    fn collect_copy(&mut self, name: &syn::Ident, ty: Option<&syn::Type>, src: &Expr) {
        let elem = self.names.fresh("elem");
        let (pat, value): (syn::Pat, Expr) = (syn::parse_quote!(#elem), syn::parse_quote!(#elem));
        self.collect_into(name, ty, src, &pat, &value);
    }

    /// `let mut name = [0.0; n]; for k in 0..n { name[k] = src[k]; }`, the
    /// loop reading both through fresh names, since `name` may shadow `src`.
    fn copy_fixed(
        &mut self,
        name: &syn::Ident,
        ty: Option<&syn::Type>,
        src: VarId,
        n: TokenStream,
    ) {
        let v = self.declare_unbound(name, VarKind::Active, name.span());
        self.vars[v.0].ty = ty.map(quote::ToTokens::to_token_stream);
        self.array_def(
            v,
            super::array::ArrayInit {
                init: Passive {
                    tokens: {
                        let zero = crate::generic::lit(&crate::emit::float_ty(&self.float), "0.0");
                        quote!([#zero; #n])
                    },
                    primary: true,
                    reads: Vec::new(),
                },
                len: Some(n.clone()),
                elements: Vec::new(),
                empty: false,
                fill: None,
            },
        );
        let (dst_name, src_name, k) = (
            self.names.fresh("copy"),
            self.names.fresh("source"),
            self.names.fresh("k"),
        );
        self.bind(&dst_name, v);
        self.bind(&src_name, src);
        let pat: syn::Pat = syn::parse_quote!(#k);
        let iter: Expr = syn::parse_quote!(0..#n);
        let body: Vec<syn::Stmt> = vec![syn::parse_quote!(#dst_name[#k] = #src_name[#k];)];
        self.for_loop(ForLoop {
            label: None,
            pat: &pat,
            iter: &iter,
            span: name.span(),
            body: LoopBody::Stmts(&body),
        });
        self.bind(name, v);
    }

    /// `let mut name = Vec::new(); for pat in iter { name.push(value); }`;
    /// `name` becomes visible after the loop (`let x = x.to_vec();`).
    fn collect_into(
        &mut self,
        name: &syn::Ident,
        ty: Option<&syn::Type>,
        iter: &Expr,
        pat: &syn::Pat,
        value: &Expr,
    ) {
        let v = self.declare_unbound(name, VarKind::Active, name.span());
        self.vars[v.0].ty = ty.map(quote::ToTokens::to_token_stream);
        self.array_def(
            v,
            super::array::ArrayInit {
                init: Passive {
                    tokens: quote!(::std::vec::Vec::new()),
                    primary: true,
                    reads: Vec::new(),
                },
                len: None,
                elements: Vec::new(),
                empty: true,
                fill: None,
            },
        );
        self.for_loop(ForLoop {
            label: None,
            pat,
            iter,
            span: iter.span(),
            body: LoopBody::Push { arr: v, value },
        });
        self.bind(name, v);
    }

    /// Reports what the loop form could not express.
    fn closure_supported(&mut self, c: &syn::ExprClosure, start: &Start<'_>) -> bool {
        if let Start::Fold(_, Some(map)) = start {
            if !self.closure_supported(map, &Start::Reduce(Prim::Add)) {
                return false;
            }
            if let Some(x) = c.inputs.iter().nth(1) {
                if crate::lower::pat_ident(untyped(x)).is_none() {
                    self.cx
                        .error(x, "bind the element of `fold` after `map` to a plain name");
                    return false;
                }
            }
        }
        let (want, msg) = match start {
            Start::Reduce(..) => (1, "the closure of `.map(..)` takes one argument (a tuple `|(a, b)|` after `zip` or `enumerate`)"),
            Start::Fold(..) => (2, "the closure of `.fold(..)` takes two arguments: `|acc, x|`"),
        };
        if c.inputs.len() != want {
            self.cx.error(&c.inputs, msg);
            return false;
        }
        if let Some(a) = &c.asyncness {
            self.cx
                .error(a, super::reject::Unsupported::AsyncClosure.message());
            return false;
        }
        if let Start::Fold(..) = start {
            if crate::lower::pat_ident(untyped(&c.inputs[0])).is_none() {
                self.cx.error(
                    &c.inputs[0],
                    "bind the accumulator of `fold` to a plain name (`|acc, x| ..`)",
                );
                return false;
            }
        }
        let mut finder = ReturnFinder(None);
        finder.visit_expr(&c.body);
        if let Some(span) = finder.0 {
            self.cx.error_at(
                span,
                "`return` inside a closure is not supported: write the reduction as a `for` loop",
            );
            return false;
        }
        true
    }

    /// A variable named by the macro, never colliding with the user's names.
    pub(crate) fn fresh_var(
        &mut self,
        base: &str,
        kind: VarKind,
        span: proc_macro2::Span,
    ) -> VarId {
        let ident = self.names.fresh(base);
        self.push_var(ident, base, kind, span)
    }
}

/// `iter.map(|x| ..)`: the iterator (parentheses dropped) and the closure.
fn mapped(e: &Expr) -> Option<(&Expr, &syn::ExprClosure)> {
    let Expr::MethodCall(map) = strip(e) else {
        return None;
    };
    if map.method != "map" || map.args.len() != 1 {
        return None;
    }
    let Expr::Closure(c) = strip(&map.args[0]) else {
        return None;
    };
    Some((strip(&map.receiver), c))
}

/// `x: &f64` as a closure parameter is the pattern `x`.
pub(crate) fn untyped(p: &syn::Pat) -> &syn::Pat {
    match p {
        syn::Pat::Type(t) => &t.pat,
        _ => p,
    }
}

/// The first `return` in a closure body, outside nested closures and items.
struct ReturnFinder(Option<proc_macro2::Span>);

impl<'ast> Visit<'ast> for ReturnFinder {
    fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
        self.0.get_or_insert(r.return_token.span);
    }
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}
