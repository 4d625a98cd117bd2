//! syn → IR for statements: `let`s, assignments, expression statements and
//! the macros kept on values, each lowered into the current block.

use super::rename::{self, Binding, Resolve};
use super::{array, extrema, strip, Assigned, Lowerer, Val, VALUE_MACROS};
use crate::ir::*;
use crate::rules::Prim;
use quote::ToTokens;

impl Lowerer<'_> {
    pub(super) fn stmt(&mut self, s: &syn::Stmt) {
        match s {
            syn::Stmt::Local(local) => self.local(local),
            syn::Stmt::Item(item) => self
                .cur
                .push(Stmt::Verbatim(item.to_token_stream(), Vec::new())),
            syn::Stmt::Expr(e, _) => self.expr_stmt(e),
            syn::Stmt::Macro(m) => self.value_macro(m),
        }
    }

    /// `assert!(..)`, `println!(..)` and their kin: kept, and evaluated on
    /// values (they have no derivative). Other macros are an error.
    fn value_macro(&mut self, m: &syn::StmtMacro) {
        let path = &m.mac.path;
        let kept = path
            .segments
            .last()
            .is_some_and(|s| VALUE_MACROS.contains(&s.ident.to_string().as_str()));
        if !kept {
            self.cx.error(
                m,
                "this macro is not supported in a differentiated function body: write the computation out \
                 (`assert!`, `assert_eq!`, `debug_assert!`, `println!` and `eprintln!` of values are kept)",
            );
            return;
        }
        let parser = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        let Ok(args) = syn::parse::Parser::parse2(parser, m.mac.tokens.clone()) else {
            self.cx.error(
                &m.mac.tokens,
                "could not read this macro's arguments as expressions",
            );
            return;
        };
        let mut parts = Vec::new();
        let mut reads = Vec::new();
        for a in &args {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = a
            {
                // `{x}` inside a format string names `x` where the generated
                // code cannot rename it.
                let text = s.value().replace("{{", "");
                let inline = text
                    .split('{')
                    .skip(1)
                    .any(|t| t.starts_with(|c: char| c.is_alphabetic() || c == '_'));
                if inline {
                    self.cx.error(s, "name the values as arguments (`\"{}\", x`), not inside the format string (`\"{x}\"`)");
                    return;
                }
            }
            let Some(p) = self.passive(a) else { return };
            reads.extend(p.reads);
            parts.push(p.tokens);
        }
        let bang = &m.mac.bang_token;
        self.cur.push(Stmt::Verbatim(
            quote::quote!(#path #bang (#(#parts),*);),
            reads,
        ));
    }

    fn local(&mut self, local: &syn::Local) {
        if let Some(init) = &local.init {
            if let Some((else_token, _)) = &init.diverge {
                self.cx.error(
                    else_token,
                    "`let ... else` is not supported: test the value with `if` instead",
                );
                return;
            }
        }
        let (pat, ty) = match &local.pat {
            syn::Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            p => (p, None),
        };
        let name = match pat {
            syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => &p.ident,
            syn::Pat::Wild(_) => {
                // `let _ = label.len();` keeps its `let _`: without it, a
                // `#[must_use]` value would warn.
                match &local.init {
                    Some(init) if !rename::mentions_active(&init.expr, self) => {
                        if let Some(p) = self.passive(&init.expr) {
                            let tokens = p.tokens;
                            self.cur
                                .push(Stmt::Verbatim(quote::quote!(let _ = #tokens;), p.reads));
                        }
                    }
                    Some(init) => self.expr_stmt(&init.expr),
                    None => {}
                }
                return;
            }
            syn::Pat::Tuple(t) => {
                self.cx.error(
                    t,
                    "a tuple pattern needs a tuple of values (`let (a, b) = (x * 2.0, y.sin());`): bind one name per `let` otherwise",
                );
                return;
            }
            other => {
                self.cx.error(
                    other,
                    "destructuring `let` patterns are not supported: bind one name per `let`",
                );
                return;
            }
        };
        let Some(init) = &local.init else {
            let v = self.declare(name, VarKind::Passive, name.span());
            self.vars[v.0].ty = ty.map(ToTokens::to_token_stream);
            self.cur.push(Stmt::Declare(v));
            return;
        };
        if let Some((else_token, _)) = &init.diverge {
            self.cx.error(
                else_token,
                "`let ... else` is not supported: use `if` instead",
            );
            return;
        }
        let e = &*init.expr;
        if let syn::Expr::Closure(_) = strip(e) {
            // Its calls were written out before lowering (`sugar/mod.rs`).
            self.scopes.insert(name.to_string(), Binding::Closure);
            return;
        }
        if self.collected(name, ty, e) {
            return;
        }
        if self.array_call(name, ty, e) {
            return;
        }
        if let Some(a) = self.array_init(e) {
            let kind = if a.elements.is_empty() && a.fill.is_none() {
                VarKind::Passive
            } else {
                VarKind::Active
            };
            let v = self.declare(name, kind, name.span());
            self.vars[v.0].shape = Shape::Array { len: a.len.clone() };
            self.vars[v.0].ty = self.declared_type(ty, e);
            self.array_def(v, a);
            return;
        }
        if matches!(strip(e), syn::Expr::If(_) | syn::Expr::Block(_))
            && (rename::mentions_active(e, self) || holds_vec(e))
        {
            let ty = self.declared_type(ty, e);
            let v = self.declare_unbound(name, VarKind::Passive, name.span());
            self.vars[v.0].ty = ty;
            self.cur.push(Stmt::Declare(v));
            self.assign_expr(v, e);
            self.bind(name, v);
            return;
        }
        let val = self.expr(e);
        let kind = match val {
            Val::Const(_) => VarKind::Passive,
            _ => VarKind::Active,
        };
        let ty = self.declared_type(ty, e);
        let v = self.declare(name, kind, name.span());
        self.vars[v.0].ty = ty;
        // `let m = x.iter().max_by(..).unwrap();` is a `&f64` to the user,
        // who reads it as `*m`.
        self.vars[v.0].deref_transparent = kind == VarKind::Active && extrema::yields_reference(e);
        self.write(v, val, e);
    }

    /// `let p: [f64; 2] = g(x, ..);` (or `Vec<f64>`): a call of a
    /// differentiated function with a vector output, its array the call's
    /// destination. The annotation says the call returns an array.
    fn array_call(&mut self, name: &syn::Ident, ty: Option<&syn::Type>, e: &syn::Expr) -> bool {
        let shape = match ty {
            Some(ty) => match crate::signature::param_shape(ty, self.float.generic()) {
                Ok(Some(shape @ Shape::Array { .. })) if !matches!(ty, syn::Type::Reference(_)) => {
                    shape
                }
                _ => return false,
            },
            // Unwritten, the type is told by the uses: `let c = cross(&a,
            // &b);` then `c[i]` (or `&c`, `c.iter()`) is an array whatever
            // its length.
            None if self.indexed.contains(&name.to_string())
                && matches!(strip(e), syn::Expr::Call(_)) =>
            {
                Shape::Array { len: None }
            }
            None => return false,
        };
        if !matches!(strip(e), syn::Expr::Call(_) | syn::Expr::MethodCall(_))
            || !rename::mentions_active(e, self)
        {
            return false;
        }
        let Val::Call(call) = self.expr(e) else {
            return false;
        };
        // Unwritten, its placeholder before the call would be `Default`,
        // which a generic `T` (so `[T; N]`) is not.
        if let (None, Some(g)) = (ty, self.float.generic()) {
            let msg = format!("in a generic function, write the type of an array a call returns: `let {name}: [{g}; N] = ..;` (or `Vec<{g}>`)");
            self.cx.error(name, msg);
        }
        let v = self.declare(name, VarKind::Active, name.span());
        self.vars[v.0].ty = ty.map(ToTokens::to_token_stream);
        self.vars[v.0].float_elems = true;
        self.vars[v.0].owned_vec = ty.is_some() && matches!(shape, Shape::Array { len: None });
        self.vars[v.0].shape = shape;
        self.assigned[v.0] = Assigned::Yes;
        self.cur.push(Stmt::Call(Call {
            dst: v,
            write: Write::Def,
            ctx: self.ctx,
            ..call
        }));
        true
    }

    /// `target = e`, where `e` may be an `if`/block expression whose branches
    /// each assign `target`.
    pub(crate) fn assign_expr(&mut self, target: VarId, e: &syn::Expr) {
        match e {
            syn::Expr::Paren(p) => self.assign_expr(target, &p.expr),
            syn::Expr::Group(g) => self.assign_expr(target, &g.expr),
            // The cheap test first: an active target needs no walk of `e`
            // (which, for nested `if`s, would walk every level again).
            syn::Expr::If(i)
                if self.is_active(target) || rename::mentions_active(e, self) || holds_vec(e) =>
            {
                self.if_(i, Some(target))
            }
            syn::Expr::Block(b) if b.label.is_none() => {
                self.scoped(|l| l.stmts(&b.block.stmts, Some(target)))
            }
            syn::Expr::Return(_)
            | syn::Expr::Break(_)
            | syn::Expr::Continue(_)
            | syn::Expr::Loop(_)
            | syn::Expr::While(_)
            | syn::Expr::ForLoop(_) => self.expr_stmt(e),
            _ => {
                let val = self.expr(e);
                self.write(target, val, e);
            }
        }
    }

    pub(super) fn expr_stmt(&mut self, e: &syn::Expr) {
        match e {
            syn::Expr::Assign(a) => self.assign(&a.left, None, &a.right, e),
            syn::Expr::Binary(b) if rename::is_compound_assign(&b.op) => {
                self.assign(&b.left, Some(&b.op), &b.right, e)
            }
            syn::Expr::If(i) => self.if_(i, None),
            syn::Expr::ForLoop(f) => self.for_(f),
            syn::Expr::While(w) => self.while_(w),
            syn::Expr::Loop(l) => self.loop_(l),
            syn::Expr::Block(b) if b.label.is_none() => {
                self.scoped(|l| l.stmts(&b.block.stmts, None))
            }
            syn::Expr::Paren(p) => self.expr_stmt(&p.expr),
            syn::Expr::Return(r) => self.return_(r),
            syn::Expr::Break(b) => self.exit(b.label.as_ref(), b.expr.is_some(), Exit::Break, e),
            syn::Expr::Continue(c) => self.exit(c.label.as_ref(), false, Exit::Continue, e),
            syn::Expr::MethodCall(m) if self.push(m) => {}
            syn::Expr::MethodCall(m) if m.method != "push" && self.other_array_method(m) => {}
            _ => {
                if rename::mentions_active(e, self) {
                    // Evaluated for nothing: a pure expression has no effect.
                    let _ = self.expr(e);
                } else if let Some(p) = self.passive(e) {
                    let tokens = p.tokens;
                    self.cur
                        .push(Stmt::Verbatim(quote::quote!(#tokens;), p.reads));
                }
            }
        }
    }

    fn assign(
        &mut self,
        lhs: &syn::Expr,
        op: Option<&syn::BinOp>,
        rhs: &syn::Expr,
        whole: &syn::Expr,
    ) {
        if let syn::Expr::Index(ix) = strip(lhs) {
            self.store(ix, op, rhs, whole);
            return;
        }
        let Some(name) = rename::local_name(lhs) else {
            self.cx.error(lhs, "only local variables and array elements can be assigned to in a differentiated function");
            return;
        };
        let Some(v) = self.resolve(&name.to_string()) else {
            self.cx.error(lhs, format!("`{name}` is not a local variable of this function (loop elements cannot be assigned)"));
            return;
        };
        if matches!(self.vars[v.0].shape, Shape::Array { .. }) {
            match (op, self.array_init(rhs)) {
                (None, Some(a)) if !self.is_param(v) => self.array_def(v, a),
                _ => self.cx.error(whole, "an array can only be re-created (`v = vec![0.0; n];`, `v = x[a..b].to_vec();`, `v = Vec::from(&w[..]);`) or written element by element (`v.copy_from_slice(&w)`, `v[i] = ..`)"),
            }
            return;
        }
        if op.is_none() && array::creates_array(rhs) {
            let msg = format!("`{name}` was declared without a value, so it is not known as an array here: declare it with its array (`let mut {name} = [0.0; 2];`, `let mut {name} = vec![0.0; n];`), then assign");
            self.cx.error(whole, msg);
            // Reported: its uses as an array add no second error.
            self.vars[v.0].shape = Shape::Array { len: None };
            return;
        }
        if self.is_active(v) {
            let val = match op {
                None => self.expr(rhs),
                Some(op) => {
                    let prim = match op {
                        syn::BinOp::AddAssign(_) => Prim::Add,
                        syn::BinOp::SubAssign(_) => Prim::Sub,
                        syn::BinOp::MulAssign(_) => Prim::Mul,
                        syn::BinOp::DivAssign(_) => Prim::Div,
                        syn::BinOp::RemAssign(_) => Prim::Rem,
                        other => {
                            self.cx
                                .error(other, "this operator is not defined for floats");
                            return;
                        }
                    };
                    let r = self.expr(rhs);
                    let r = self.operand(r);
                    Val::Pending(
                        prim,
                        vec![Operand::Var(v), r],
                        syn::spanned::Spanned::span(whole),
                    )
                }
            };
            self.write(v, val, rhs);
            return;
        }
        if rename::mentions_active(rhs, self) {
            let val = self.expr(rhs);
            if !matches!(val, Val::Const(_)) {
                self.promote_var(v);
                return;
            }
        }
        // Code kept as written cannot hold a macro: a block or an `if`
        // holding a `vec![..]` is lowered statement by statement.
        if matches!(strip(rhs), syn::Expr::If(_) | syn::Expr::Block(_)) && holds_vec(rhs) {
            let Some(op) = op else {
                self.assign_expr(v, rhs);
                return;
            };
            let span = syn::spanned::Spanned::span(rhs);
            let t = self.new_var("value", VarKind::Passive, span);
            self.vars[t.0].ty = self.vars[v.0].ty.clone();
            self.cur.push(Stmt::Declare(t));
            self.assign_expr(t, rhs);
            let name = &self.vars[t.0].ident;
            let value = Passive {
                tokens: quote::quote!(#name),
                primary: true,
                reads: vec![t],
            };
            let write = self.write_kind(v);
            self.cur.push(Stmt::Assign(PassiveAssign {
                id: StmtId::default(),
                dst: v,
                op: Some(op.to_token_stream()),
                value,
                write,
                ctx: self.ctx,
            }));
            return;
        }
        let Some(value) = self.passive(rhs) else {
            return;
        };
        let op = op.map(|o| o.to_token_stream());
        let write = self.write_kind(v);
        self.cur.push(Stmt::Assign(PassiveAssign {
            id: StmtId::default(),
            dst: v,
            op,
            value,
            write,
            ctx: self.ctx,
        }));
    }
}

/// Whether `e` holds a `vec![..]` anywhere.
fn holds_vec(e: &syn::Expr) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            self.0 |= m.path.is_ident("vec");
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut f = Finder(false);
    syn::visit::Visit::visit_expr(&mut f, e);
    f.0
}
