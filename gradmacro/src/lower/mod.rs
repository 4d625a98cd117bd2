//! syn → IR: statements, scopes and control flow. Expressions are in
//! `expr.rs`. Every error is spanned and collected; lowering goes on after
//! an error so one compile reports as much as possible.

use crate::ctxt::Ctxt;
use crate::ir::*;
use crate::names::Names;
mod array;
mod chain;
pub(crate) mod chained;
pub(crate) mod data_loops;
mod expr;
mod extrema;
pub(crate) mod filters;
mod iter;
pub(crate) mod matching;
pub(crate) mod outputs;
pub(crate) mod recopy;
mod reject;
pub mod rename;
pub(crate) mod reslice;
mod scopes;
pub(crate) mod sugar;
pub(crate) mod tuple_fields;
pub(crate) mod vec_macros;

pub(crate) use array::has_float_literal;

/// The accumulator a rewritten filtered or chained sum adds into: its
/// prefix tells such a block apart from one the user wrote.
const ACC: &str = "__gm_acc";

use crate::rules::Prim;
use crate::signature::{ParamKind, Signature_};
use proc_macro2::{Ident, Span, TokenStream};
use quote::ToTokens;
use rename::{Alias, Binding, Resolve};
use std::collections::HashSet;

/// Is a variable assigned at this point of the program (for `let v;` and writes)?
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Assigned {
    No,
    Maybe,
    Yes,
}

/// A `for` loop, written by the user or desugared from an iterator
/// reduction (`xs.iter().map(|x| ..).sum()`).
pub(crate) struct ForLoop<'a> {
    pub label: Option<&'a syn::Label>,
    pub pat: &'a syn::Pat,
    pub iter: &'a syn::Expr,
    pub span: Span,
    pub body: LoopBody<'a>,
}

#[derive(Clone, Copy)]
pub(crate) enum LoopBody<'a> {
    Stmts(&'a [syn::Stmt]),
    /// `acc = value` (`fold`, reading `acc` under the closure's name for it)
    /// or `acc = acc <prim> value` (`sum`, `product`) each iteration.
    Fold {
        acc: VarId,
        acc_name: Option<&'a syn::Ident>,
        prim: Option<Prim>,
        value: &'a syn::Expr,
        /// `fold` over `.map(..)`: the name of the fold's element, and the
        /// map closure's body that computes it.
        mapped: Option<(&'a syn::Ident, &'a syn::Expr)>,
    },
    /// `arr.push(value)` each iteration (`.map(..).collect()`).
    Push {
        arr: VarId,
        value: &'a syn::Expr,
    },
    /// Lowered by the function, in the loop's scope (`max_by`, `extrema.rs`).
    Lowered(&'a dyn Fn(&mut Lowerer<'_>)),
}

/// The result of lowering an expression.
pub(crate) enum Val {
    /// An active variable.
    Var(VarId),
    /// A passive value.
    Const(Passive),
    /// A primitive whose destination is not chosen yet.
    Pending(Prim, Vec<Operand>, Span),
    /// An element of an array, read in place.
    Elem(VarId, Passive),
    /// A reduction of an active array whose destination is not chosen yet.
    Reduce(VarId, crate::rules::Reduction),
    /// A call whose destination is not chosen yet (`dst` is a placeholder).
    Call(Call),
}

pub(crate) struct Lowerer<'a> {
    pub(crate) cx: &'a mut Ctxt,
    pub(crate) names: Names,
    pub(crate) float: Float,
    pub(crate) vars: Vec<Var>,
    /// User spelling of each variable (versions derive their names from it).
    user_name: Vec<String>,
    /// Construct block each variable is declared in.
    var_block: Vec<usize>,
    /// Declaration key (see `decl_key`) of each user-declared variable.
    var_decl: Vec<Option<usize>>,
    pub(crate) assigned: Vec<Assigned>,
    scopes: scopes::Scopes,
    /// Declarations known to be active (from earlier attempts).
    promoted: &'a HashSet<usize>,
    /// Declarations found to need promotion in this attempt.
    pub(crate) promote: HashSet<usize>,
    /// The bodies of the function's `vec![..]`s, parsed before the attempts.
    vecs: &'a vec_macros::VecMacros,
    pub(crate) ctx: Ctx,
    block: usize,
    next_block: usize,
    loop_depth: usize,
    pub(crate) cur: Vec<Stmt>,
    /// The rest of the current block is unreachable.
    diverged: bool,
    sites: usize,
    temps: usize,
    out: Option<VarId>,
    params: Vec<VarId>,
    /// Names indexed somewhere in the body (`c[i]`): an unannotated `let`
    /// of a call's value under such a name holds an array.
    indexed: HashSet<String>,
}

impl Resolve for Lowerer<'_> {
    fn lookup(&self, name: &str) -> Option<Binding> {
        self.scopes.get(name).cloned()
    }
    fn deref_transparent(&self, var: VarId) -> bool {
        self.vars[var.0].deref_transparent
    }
    fn ident_of(&self, var: VarId) -> Ident {
        self.vars[var.0].ident.clone()
    }
    fn is_active(&self, var: VarId) -> bool {
        self.vars[var.0].kind == VarKind::Active
    }
}

/// Lowers one function. `promoted` lists `let` declarations that an earlier
/// attempt found to receive active values; the caller repeats until stable.
/// The macros kept in a differentiated body and evaluated on values.
pub(crate) const VALUE_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "println",
    "eprintln",
    "print",
    "eprint",
];

/// Every name used somewhere in `block` as only an array can be: indexed
/// (`c[i]`, `c[a..b]`), lent (`&c`: a float is passed by value, but compared
/// by reference) or iterated (`c.iter()`, `c.len()`).
fn indexed_names(block: &syn::Block) -> HashSet<String> {
    struct Indexed(HashSet<String>);
    impl Indexed {
        fn note(&mut self, e: &syn::Expr) {
            if let syn::Expr::Path(p) = strip(e) {
                if let Some(i) = p.path.get_ident() {
                    self.0.insert(i.to_string());
                }
            }
        }
    }
    impl<'ast> syn::visit::Visit<'ast> for Indexed {
        fn visit_expr_index(&mut self, ix: &'ast syn::ExprIndex) {
            self.note(&ix.expr);
            syn::visit::visit_expr_index(self, ix);
        }
        fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
            if r.mutability.is_none() {
                self.note(&r.expr);
            }
            syn::visit::visit_expr_reference(self, r);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            if ["iter", "len", "to_vec"].iter().any(|n| m.method == n) {
                self.note(&m.receiver);
            }
            // `(&best).partial_cmp(&item)`: floats are compared by reference.
            if ["partial_cmp", "total_cmp"].iter().any(|n| m.method == n) {
                for e in std::iter::once(&*m.receiver).chain(&m.args) {
                    match strip(e) {
                        syn::Expr::Reference(r) => syn::visit::Visit::visit_expr(self, &r.expr),
                        e => syn::visit::Visit::visit_expr(self, e),
                    }
                }
                return;
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut v = Indexed(HashSet::new());
    syn::visit::Visit::visit_block(&mut v, block);
    v.0
}

/// One attempt; `names` avoids every identifier of `f` (made once for all
/// attempts: it prints the whole function).
pub(crate) fn lower(
    f: &syn::ItemFn,
    sig: &Signature_,
    promoted: &HashSet<usize>,
    vecs: &vec_macros::VecMacros,
    names: Names,
    cx: &mut Ctxt,
) -> (Option<Func>, HashSet<usize>, Names, usize) {
    let mut l = Lowerer {
        cx,
        names,
        float: sig.float.clone(),
        vars: Vec::new(),
        user_name: Vec::new(),
        var_block: Vec::new(),
        var_decl: Vec::new(),
        assigned: Vec::new(),
        scopes: scopes::Scopes::new(),
        promoted,
        promote: HashSet::new(),
        vecs,
        ctx: Ctx::default(),
        block: 0,
        next_block: 1,
        loop_depth: 0,
        cur: Vec::new(),
        diverged: false,
        sites: 0,
        temps: 0,
        out: None,
        params: Vec::new(),
        indexed: indexed_names(&f.block),
    };
    let mut params = Vec::new();
    for p in &sig.params {
        let kind = match p.kind {
            ParamKind::Differentiable => VarKind::Active,
            _ => VarKind::Passive,
        };
        let v = l.declare(&p.ident, kind, p.ident.span());
        l.assigned[v.0] = Assigned::Yes;
        l.vars[v.0].shape = p.shape.clone();
        l.vars[v.0].float_elems = p.kind != ParamKind::Passive;
        // A float excluded by `wrt(..)` is a constant of the float type.
        if p.kind == ParamKind::ConstFloat && !p.shape.is_array() {
            l.vars[v.0].ty = Some(p.ty.to_token_stream());
        }
        l.vars[v.0].owned_vec = p.ty.to_token_stream().to_string().starts_with("Vec");
        l.params.push(v);
        params.push(Param {
            ident: l.vars[v.0].ident.clone(),
            ty: p.ty.to_token_stream(),
            var: (p.kind == ParamKind::Differentiable).then_some(v),
            id: v,
            shape: p.shape.clone(),
        });
    }
    let has_return = contains_return(&f.block);
    if has_return {
        let out = l.new_var("out", VarKind::Active, Span::call_site());
        l.assigned[out.0] = Assigned::No;
        l.out = Some(out);
        l.cur.push(Stmt::Declare(out));
        // The forward sweep becomes a labelled block that `return` leaves, so
        // whatever the reverse sweep reads must be declared before it.
        l.ctx.nested = true;
    }
    let output = l.function_body(&f.block.stmts);
    let promote = std::mem::take(&mut l.promote);
    let declared = l.var_decl.iter().flatten().count();
    let names = l.names.clone();
    let func = output.map(|output| {
        let mut func = Func {
            float: sig.float.clone(),
            generics: crate::generic::Generics::of(&f.sig),
            params,
            vars: l.vars,
            body: Block { stmts: l.cur },
            output,
            has_return,
            value_unused: false,
        };
        func.number();
        func
    });
    (func, promote, names, declared)
}

/// Every identifier the user wrote: generated names must differ from all of them.
fn contains_return(b: &syn::Block) -> bool {
    use syn::visit::Visit;
    struct Finder(bool);
    impl<'ast> Visit<'ast> for Finder {
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut f = Finder(false);
    f.visit_block(b);
    f.0
}

impl<'a> Lowerer<'a> {
    pub(crate) fn new_var(&mut self, name: &str, kind: VarKind, span: Span) -> VarId {
        let ident = self.names.user_var(name);
        self.push_var(ident, name, kind, span)
    }

    pub(crate) fn temp(&mut self, span: Span) -> VarId {
        self.temps += 1;
        let ident = self.names.fresh(&format!("t{}", self.temps));
        self.push_var(ident, "t", VarKind::Active, span)
    }

    fn push_var(&mut self, ident: Ident, name: &str, kind: VarKind, span: Span) -> VarId {
        let id = VarId(self.vars.len());
        self.vars.push(Var {
            ident,
            kind,
            shape: Shape::Scalar,
            deref_transparent: false,
            float_elems: false,
            owned_vec: false,
            decl: self.ctx,
            reassigned: false,
            maybe_unassigned: false,
            ty: None,
            span,
        });
        self.user_name.push(name.to_string());
        self.var_block.push(self.block);
        self.var_decl.push(None);
        self.assigned.push(Assigned::No);
        id
    }

    /// Declares a user variable in the current scope. Its activity is `kind`
    /// unless an earlier attempt promoted this declaration.
    fn declare(&mut self, name: &syn::Ident, kind: VarKind, span: Span) -> VarId {
        let id = self.declare_unbound(name, kind, span);
        self.bind(name, id);
        id
    }

    /// A new variable for `name`, not yet visible: `let x = if .. { x } ..`
    /// reads the old `x` in its initialiser.
    fn declare_unbound(&mut self, name: &syn::Ident, kind: VarKind, span: Span) -> VarId {
        let key = decl_key(name);
        let kind = if self.promoted.contains(&key) {
            VarKind::Active
        } else {
            kind
        };
        let id = self.new_var(&name.to_string(), kind, span);
        self.var_decl[id.0] = Some(key);
        id
    }

    fn bind(&mut self, name: &syn::Ident, id: VarId) {
        let key = name.to_string();
        self.scopes.insert(key, Binding::Var(id));
    }

    pub(crate) fn bind_alias(&mut self, name: &syn::Ident, alias: Alias) {
        let key = name.to_string();
        self.scopes.insert(key, Binding::Alias(Box::new(alias)));
    }

    /// Points `name` at a new version, in the scope that declared it.
    fn rebind(&mut self, old: VarId, new: VarId) {
        let name = &self.user_name[old.0];
        for scope in self.scopes.frames_mut() {
            // Looked up under its own name first: scanning a scope of
            // thousands of `let`s for every `s += x` would be quadratic.
            if let Some(slot) = scope.get_mut(name) {
                if matches!(slot, Binding::Var(v) if *v == old) {
                    *slot = Binding::Var(new);
                    return;
                }
            }
            if let Some(slot) = scope
                .values_mut()
                .find(|b| matches!(b, Binding::Var(v) if *v == old))
            {
                *slot = Binding::Var(new);
                return;
            }
        }
    }

    fn function_body(&mut self, stmts: &[syn::Stmt]) -> Option<VarId> {
        let (body, tail) = split_tail(stmts);
        for s in body {
            self.stmt(s);
        }
        if let Some(out) = self.out {
            if let Some(tail) = tail {
                self.assign_expr(out, tail);
            } else if !self.diverged {
                self.missing_value(stmts);
            }
            return Some(out);
        }
        let Some(tail) = tail else {
            self.missing_value(stmts);
            return None;
        };
        if self.diverged {
            return None;
        }
        match tail {
            syn::Expr::If(_) | syn::Expr::Block(_) | syn::Expr::Loop(_) => {
                let out = self.new_var("out", VarKind::Active, Span::call_site());
                self.cur.push(Stmt::Declare(out));
                self.assign_expr(out, tail);
                Some(out)
            }
            _ => match self.expr(tail) {
                Val::Var(v) => Some(v),
                val => {
                    let out = self.new_var("out", VarKind::Active, Span::call_site());
                    self.write(out, val, tail);
                    Some(out)
                }
            },
        }
    }

    fn missing_value(&mut self, stmts: &[syn::Stmt]) {
        let span = stmts
            .last()
            .map(syn::spanned::Spanned::span)
            .unwrap_or_else(Span::call_site);
        self.cx.error_at(
            span,
            "the function must end with its value: add a tail expression (without `;`) of type f64",
        );
    }

    /// Runs `f` in a nested scope (names declared inside are not visible after).
    fn scoped<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        self.scopes.push();
        let r = f(self);
        self.scopes.pop();
        r
    }

    /// Lowers a construct's block into its own statement list, in context `ctx`.
    fn construct_block(&mut self, ctx: Ctx, f: impl FnOnce(&mut Self)) -> (Block, bool) {
        let saved_cur = std::mem::take(&mut self.cur);
        let saved_ctx = std::mem::replace(&mut self.ctx, ctx);
        let saved_block = self.block;
        let saved_div = std::mem::replace(&mut self.diverged, false);
        self.block = self.next_block;
        self.next_block += 1;
        self.scoped(f);
        let diverged = std::mem::replace(&mut self.diverged, saved_div);
        self.block = saved_block;
        self.ctx = saved_ctx;
        let stmts = std::mem::replace(&mut self.cur, saved_cur);
        (Block { stmts }, diverged)
    }

    fn stmts(&mut self, stmts: &[syn::Stmt], target: Option<VarId>) {
        let (body, tail) = split_tail(stmts);
        for s in body {
            if self.diverged {
                return;
            }
            self.stmt(s);
        }
        if let Some(tail) = tail {
            if self.diverged {
                return;
            }
            match target {
                Some(t) => self.assign_expr(t, tail),
                None => self.expr_stmt(tail),
            }
        }
    }

    pub(crate) fn is_param(&self, v: VarId) -> bool {
        self.params.contains(&v)
    }

    pub(crate) fn enter_loop(&mut self) {
        self.loop_depth += 1;
    }

    /// After a loop: a write in its body may or may not have happened.
    pub(crate) fn leave_loop(&mut self, before: Vec<Assigned>) {
        self.loop_depth -= 1;
        let after = std::mem::replace(&mut self.assigned, before);
        for (i, a) in after.iter().enumerate().take(self.assigned.len()) {
            if self.assigned[i] == Assigned::No && *a != Assigned::No {
                self.assigned[i] = Assigned::Maybe;
                self.vars[i].maybe_unassigned = true;
            }
        }
        self.assigned
            .extend_from_slice(&after[self.assigned.len()..]);
        self.diverged = false;
    }

    /// Marks the variables that an `if` assigned on one path only.
    fn note_maybe_assigned(&mut self, then: &[Assigned], els: &[Assigned]) {
        for (i, a) in self.assigned.iter().enumerate() {
            let differs = then.get(i) != els.get(i);
            if *a == Assigned::Maybe && differs {
                self.vars[i].maybe_unassigned = true;
            }
        }
    }

    pub(crate) fn stmt_public(&mut self, s: &syn::Stmt) {
        self.stmt(s)
    }

    pub(crate) fn scoped_block(&mut self, f: impl FnOnce(&mut Self)) {
        self.scoped(f)
    }

    pub(crate) fn declare_stmt(&mut self, v: VarId) {
        self.cur.push(Stmt::Declare(v));
    }

    fn stmt(&mut self, s: &syn::Stmt) {
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
            // Its calls were written out before lowering (`sugar.rs`).
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
            let kind = if a.elements.is_empty() {
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
            && rename::mentions_active(e, self)
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

    /// The type a `let` writes, or for a generic float constant, `T` (and
    /// `[T; N]` for an array literal of them): a declaration placed before
    /// its value needs it (`T` has no `Default` to stand in for it).
    fn declared_type(&self, ty: Option<&syn::Type>, e: &syn::Expr) -> Option<TokenStream> {
        ty.map(ToTokens::to_token_stream)
            .or_else(|| self.generic_float_type(e))
    }

    fn generic_float_type(&self, e: &syn::Expr) -> Option<TokenStream> {
        let g = self.float.generic()?;
        match strip(e) {
            syn::Expr::Array(a) if a.elems.iter().any(|x| self.generic_float_constant(x)) => {
                let n = proc_macro2::Literal::usize_unsuffixed(a.elems.len());
                Some(quote::quote!([#g; #n]))
            }
            syn::Expr::Repeat(r) if self.generic_float_constant(&r.expr) => {
                let n = &r.len;
                Some(quote::quote!([#g; #n]))
            }
            e => self.generic_float_constant(e).then(|| quote::quote!(#g)),
        }
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
            syn::Expr::If(i) if self.is_active(target) || rename::mentions_active(e, self) => {
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

    fn expr_stmt(&mut self, e: &syn::Expr) {
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

    pub(crate) fn promote_var(&mut self, v: VarId) {
        match self.var_decl[v.0] {
            Some(key) => {
                self.promote.insert(key);
            }
            None => self.cx.error_at(
                self.vars[v.0].span,
                "internal: cannot promote this variable",
            ),
        }
    }

    /// Classifies a write to `v` here and records it.
    pub(crate) fn write_kind(&mut self, v: VarId) -> Write {
        // A write inside a loop that the variable's declaration is outside of
        // may run again: it overwrites, and the variable needs `mut`. A
        // `return` leaves the loop.
        let in_inner_loop =
            self.ctx.loop_depth > self.vars[v.0].decl.loop_depth && Some(v) != self.out;
        let w = match self.assigned[v.0] {
            Assigned::No if !in_inner_loop => Write::Def,
            _ => Write::Overwrite,
        };
        if w == Write::Overwrite {
            self.vars[v.0].reassigned = true;
        }
        self.assigned[v.0] = Assigned::Yes;
        w
    }

    /// `v = val`. Rewriting an active variable in the block that declared it
    /// makes a new version (`s_1`) instead, so straight-line code needs no tape.
    pub(crate) fn write(&mut self, v: VarId, val: Val, e: &syn::Expr) {
        if !self.is_active(v) {
            match val {
                Val::Const(value) => {
                    let write = self.write_kind(v);
                    self.cur.push(Stmt::Assign(PassiveAssign {
                        id: StmtId::default(),
                        dst: v,
                        op: None,
                        value,
                        write,
                        ctx: self.ctx,
                    }));
                }
                _ => self.promote_var(v),
            }
            return;
        }
        if let Val::Reduce(arr, op) = val {
            let dst = self.version_for_write(v);
            let write = self.write_kind(dst);
            self.cur.push(Stmt::Reduce(Reduce {
                id: StmtId::default(),
                dst,
                arr,
                op,
                write,
                ctx: self.ctx,
            }));
            return;
        }
        if let Val::Call(call) = val {
            let dst = self.version_for_write(v);
            let write = self.write_kind(dst);
            self.cur.push(Stmt::Call(Call {
                dst,
                write,
                ctx: self.ctx,
                ..call
            }));
            return;
        }
        let (prim, args, span) = match val {
            Val::Pending(p, a, s) => (p, a, s),
            Val::Elem(a, i) => (
                Prim::Copy,
                vec![Operand::Elem(a, i)],
                syn::spanned::Spanned::span(e),
            ),
            Val::Reduce(..) | Val::Call(_) => unreachable!("handled above"),
            Val::Var(u) => (
                Prim::Copy,
                vec![Operand::Var(u)],
                syn::spanned::Spanned::span(e),
            ),
            Val::Const(c) => (
                Prim::Copy,
                vec![Operand::Const(c)],
                syn::spanned::Spanned::span(e),
            ),
        };
        let dst = self.version_for_write(v);
        let write = self.write_kind(dst);
        self.cur.push(Stmt::Step(Step {
            id: StmtId::default(),
            dst,
            prim,
            args,
            write,
            ctx: self.ctx,
            span,
        }));
    }

    /// The variable a write of `v` goes to: a new version (`s_1`) when `v` is
    /// rewritten in the block that declared it, so straight-line code needs no tape.
    fn version_for_write(&mut self, v: VarId) -> VarId {
        let same_block = self.var_block[v.0] == self.block;
        if self.assigned[v.0] == Assigned::Yes && same_block {
            let name = self.user_name[v.0].clone();
            let span = self.vars[v.0].span;
            let new = self.new_var(&name, VarKind::Active, span);
            self.var_decl[new.0] = self.var_decl[v.0];
            self.rebind(v, new);
            new
        } else {
            v
        }
    }

    /// Materialises a value as an operand, emitting a temporary if needed.
    pub(crate) fn operand(&mut self, val: Val) -> Operand {
        match val {
            Val::Var(v) => Operand::Var(v),
            Val::Const(c) => Operand::Const(c),
            Val::Elem(a, i) => Operand::Elem(a, i),
            Val::Reduce(arr, op) => {
                let t = self.temp(Span::call_site());
                self.assigned[t.0] = Assigned::Yes;
                self.cur.push(Stmt::Reduce(Reduce {
                    id: StmtId::default(),
                    dst: t,
                    arr,
                    op,
                    write: Write::Def,
                    ctx: self.ctx,
                }));
                Operand::Var(t)
            }
            Val::Call(call) => {
                let t = self.temp(Span::call_site());
                self.assigned[t.0] = Assigned::Yes;
                self.cur.push(Stmt::Call(Call {
                    dst: t,
                    write: Write::Def,
                    ctx: self.ctx,
                    ..call
                }));
                Operand::Var(t)
            }
            Val::Pending(prim, args, span) => {
                let t = self.temp(span);
                self.assigned[t.0] = Assigned::Yes;
                self.cur.push(Stmt::Step(Step {
                    id: StmtId::default(),
                    dst: t,
                    prim,
                    args,
                    write: Write::Def,
                    ctx: self.ctx,
                    span,
                }));
                Operand::Var(t)
            }
        }
    }

    fn cond(&mut self, e: &syn::Expr) -> Option<Passive> {
        match self.expr(e) {
            Val::Const(c) => Some(c),
            _ => {
                self.cx.error(
                    e,
                    "a condition must be a `bool` (e.g. `x > 0.0`), not a float",
                );
                None
            }
        }
    }

    fn next_site(&mut self) -> SiteId {
        self.sites += 1;
        SiteId(self.sites - 1)
    }

    fn if_(&mut self, i: &syn::ExprIf, target: Option<VarId>) {
        let cond = self.cond(&i.cond);
        let site = self.next_site();
        let ctx = Ctx {
            nested: true,
            ..self.ctx
        };
        let before = self.assigned.clone();
        let (then, then_div) = self.construct_block(ctx, |l| l.stmts(&i.then_branch.stmts, target));
        let mut before = before;
        // Variables declared in the `then` branch keep their slots.
        before.resize(self.assigned.len(), Assigned::No);
        let after_then = std::mem::replace(&mut self.assigned, before);
        let (els, els_div) = match &i.else_branch {
            None => (Block::default(), false),
            Some((_, e)) => self.construct_block(ctx, |l| match &**e {
                syn::Expr::If(inner) => l.if_(inner, target),
                syn::Expr::Block(b) => l.stmts(&b.block.stmts, target),
                other => l.expr_stmt(other),
            }),
        };
        let after_else = std::mem::take(&mut self.assigned);
        self.assigned = join(&after_then, then_div, &after_else, els_div);
        self.note_maybe_assigned(&after_then, &after_else);
        self.diverged |= then_div && els_div;
        if let Some(cond) = cond {
            self.cur.push(Stmt::If(If {
                site,
                cond,
                then,
                els,
                ctx: self.ctx,
            }));
        }
    }

    fn loop_body(
        &mut self,
        label: Option<&syn::Label>,
        body: LoopBody<'_>,
        binding: Option<&syn::Pat>,
    ) -> (Block, Option<VarId>) {
        if let Some(label) = label {
            self.cx.error(label, "labelled loops are not supported: use a `bool` flag, or move the inner loop into its own `#[differentiate]` function");
        }
        let ctx = Ctx {
            nested: true,
            loop_depth: self.ctx.loop_depth + 1,
        };
        let before = self.assigned.clone();
        self.enter_loop();
        let mut bound = None;
        let (block, _) = self.construct_block(ctx, |l| {
            if let Some(pat) = binding {
                bound = l.loop_binding(pat);
            }
            l.loop_body_stmts(body)
        });
        self.leave_loop(before);
        (block, bound)
    }

    /// Lowers a loop's body into the current (loop) block.
    pub(crate) fn loop_body_stmts(&mut self, body: LoopBody<'_>) {
        match body {
            LoopBody::Stmts(stmts) => self.stmts(stmts, None),
            LoopBody::Fold {
                acc,
                acc_name,
                prim,
                value,
                mapped,
            } => {
                if let Some((name, map_body)) = mapped {
                    let val = self.expr(map_body);
                    let span = syn::spanned::Spanned::span(map_body);
                    let elem = self.fresh_var("mapped", VarKind::Active, span);
                    self.write(elem, val, map_body);
                    self.bind(name, elem);
                }
                if let Some(name) = acc_name {
                    self.bind(name, acc);
                }
                let val = self.expr(value);
                let val = match prim {
                    Some(prim) => {
                        let operand = self.operand(val);
                        let args = vec![Operand::Var(acc), operand];
                        Val::Pending(prim, args, syn::spanned::Spanned::span(value))
                    }
                    None => val,
                };
                self.write(acc, val, value);
            }
            LoopBody::Lowered(lower) => lower(self),
            LoopBody::Push { arr, value } => {
                let val = self.expr(value);
                let value = self.operand(val);
                self.vars[arr.0].reassigned = true;
                self.cur.push(Stmt::Push(Push { arr, value }));
            }
        }
    }

    fn loop_binding(&mut self, pat: &syn::Pat) -> Option<VarId> {
        match pat {
            syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                let v = self.declare(&p.ident, VarKind::Passive, p.ident.span());
                self.assigned[v.0] = Assigned::Yes;
                Some(v)
            }
            syn::Pat::Wild(_) => None,
            other => {
                self.cx.error(other, "this loop pattern is not supported: loop over an integer range with a plain name, `for i in 0..n`");
                None
            }
        }
    }

    fn for_(&mut self, f: &syn::ExprForLoop) {
        self.for_loop(ForLoop {
            label: f.label.as_ref(),
            pat: &f.pat,
            iter: &f.expr,
            span: loop_span(f),
            body: LoopBody::Stmts(&f.body.stmts),
        });
    }

    pub(crate) fn for_loop(&mut self, f: ForLoop<'_>) {
        if self.array_loop(&f) {
            return;
        }
        let iter = if rename::mentions_active(f.iter, self) {
            match expr::unsupported_adaptor(f.iter) {
                Some(culprit) => self.cx.error(culprit, expr::adaptor_message(culprit)),
                None => self.cx.error(f.iter, "a `for` loop must run over integers (`0..n`, `(a..b).rev()`, `(a..=b).step_by(k)`) or over arrays (`x.iter()`, `&x[a..b]`, with `.zip(..)`, `.enumerate()`, `.rev()`, `.skip(n)`, `.take(n)`, `.step_by(k)`); the range cannot depend on a differentiated value"),
            }
            None
        } else {
            self.passive(f.iter)
        };
        let site = self.next_site();
        // A loop already reported for its iterator is not reported again for
        // a pattern only that iterator could have bound (`(i, v)`).
        let pat = match (&iter, f.pat) {
            (None, p) if !matches!(p, syn::Pat::Ident(_) | syn::Pat::Wild(_)) => None,
            (_, p) => Some(p),
        };
        let (body, binding) = self.loop_body(f.label, f.body, pat);
        if let Some(iter) = iter {
            let replay = match binding {
                Some(v) if !self.vars[v.0].reassigned => replay_of(f.iter),
                _ => None,
            };
            let reversed = match binding {
                Some(v) if self.vars[v.0].reassigned => None,
                _ => syn::parse2::<syn::Expr>(iter.tokens.clone())
                    .ok()
                    .and_then(|e| reversed_range(&e))
                    .map(|tokens| Passive {
                        tokens,
                        primary: true,
                        reads: iter.reads.clone(),
                    }),
            };
            self.cur.push(Stmt::Loop(Loop {
                id: StmtId::default(),
                site,
                kind: LoopKind::For {
                    binding,
                    iter,
                    replay,
                    reversed,
                    trips: literal_trips(f.iter),
                },
                body,
                ctx: self.ctx,
            }));
        }
    }

    fn while_(&mut self, w: &syn::ExprWhile) {
        let site = self.next_site();
        let cond = self.cond(&w.cond);
        let (body, _) = self.loop_body(w.label.as_ref(), LoopBody::Stmts(&w.body.stmts), None);
        if let Some(cond) = cond {
            self.cur.push(Stmt::Loop(Loop {
                id: StmtId::default(),
                site,
                kind: LoopKind::While { cond },
                body,
                ctx: self.ctx,
            }));
        }
    }

    fn loop_(&mut self, l: &syn::ExprLoop) {
        let site = self.next_site();
        let (body, _) = self.loop_body(l.label.as_ref(), LoopBody::Stmts(&l.body.stmts), None);
        self.cur.push(Stmt::Loop(Loop {
            id: StmtId::default(),
            site,
            kind: LoopKind::Infinite,
            body,
            ctx: self.ctx,
        }));
    }

    fn return_(&mut self, r: &syn::ExprReturn) {
        let (Some(e), Some(out)) = (&r.expr, self.out) else {
            self.cx
                .error(r, "`return` needs a value: `return <f64 expression>;`");
            return;
        };
        // The path that writes `out` here leaves the function: later code
        // never sees this write.
        let before = self.assigned[out.0];
        self.assign_expr(out, e);
        self.assigned[out.0] = before;
        self.cur.push(Stmt::Exit(Exit::Return));
        self.diverged = true;
    }

    fn exit(&mut self, label: Option<&syn::Lifetime>, has_value: bool, kind: Exit, e: &syn::Expr) {
        if let Some(label) = label {
            self.cx.error(label, "labelled `break`/`continue` are not supported: use a `bool` flag checked by the outer loop");
            return;
        }
        if has_value {
            self.cx.error(e, "`break` with a value is not supported: assign the value to a variable declared before the loop, then `break`");
            return;
        }
        if self.loop_depth == 0 {
            self.cx.error(e, "`break`/`continue` outside of a loop");
            return;
        }
        self.cur.push(Stmt::Exit(kind));
        self.diverged = true;
    }
}

/// `a..b` and `a..=b` run backwards as `(a..b).rev()`, and `(a..b).rev()` as
/// `a..b` (the tokens are already renamed).
/// The span of a `for` loop, as `Spanned::span` gives it on a stable
/// compiler (its first token), without printing the whole loop to find it:
/// for loops nested n deep that printing was quadratic.
fn loop_span(f: &syn::ExprForLoop) -> Span {
    if f.attrs.is_empty() && f.label.is_none() {
        f.for_token
            .span
            .join(f.body.brace_token.span.close())
            .unwrap_or(f.for_token.span)
    } else {
        syn::spanned::Spanned::span(f)
    }
}

fn reversed_range(e: &syn::Expr) -> Option<TokenStream> {
    let full = |r: &syn::ExprRange| r.start.is_some() && r.end.is_some();
    match strip(e) {
        syn::Expr::Range(r) if full(r) => {
            let r = r.to_token_stream();
            Some(quote::quote!((#r).rev()))
        }
        syn::Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() => {
            match strip(&m.receiver) {
                syn::Expr::Range(r) if full(r) => Some(r.to_token_stream()),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `a..b` with a literal start counts up from it; nothing else is replayed.
fn replay_of(e: &syn::Expr) -> Option<Replay> {
    match strip(e) {
        syn::Expr::Range(r) => match r.start.as_deref().map(strip) {
            Some(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            })) if i.base10_digits() == "0" => Some(Replay::UpFromZero),
            Some(syn::Expr::Lit(l)) if matches!(l.lit, syn::Lit::Int(_)) => {
                Some(Replay::Up(l.to_token_stream()))
            }
            _ => None,
        },
        _ => None,
    }
}

/// The length of `a..b`, `a..=b` or `(a..b).rev()` with integer literals.
fn literal_trips(e: &syn::Expr) -> Option<u64> {
    let r = match strip(e) {
        syn::Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() => strip(&m.receiver),
        other => other,
    };
    let syn::Expr::Range(r) = r else { return None };
    let int = |e: &Option<Box<syn::Expr>>| -> Option<u64> {
        match strip(e.as_deref()?) {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => i.base10_parse().ok(),
            _ => None,
        }
    };
    let (start, end) = (int(&r.start)?, int(&r.end)?);
    match r.limits {
        syn::RangeLimits::HalfOpen(_) => Some(end.saturating_sub(start)),
        syn::RangeLimits::Closed(_) => Some((end + 1).saturating_sub(start)),
    }
}

fn join(a: &[Assigned], a_div: bool, b: &[Assigned], b_div: bool) -> Vec<Assigned> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let x = a.get(i).copied().unwrap_or(Assigned::No);
            let y = b.get(i).copied().unwrap_or(Assigned::No);
            match (a_div, b_div) {
                (true, false) => y,
                (false, true) => x,
                _ if x == y => x,
                _ => Assigned::Maybe,
            }
        })
        .collect()
}

/// The segments of a path, as strings (`f64::sin` -> `["f64", "sin"]`).
pub(crate) fn path_names(p: &syn::Path) -> Vec<String> {
    p.segments.iter().map(|s| s.ident.to_string()).collect()
}

/// The name a pattern binds, if it is a plain name.
pub(crate) fn pat_ident(p: &syn::Pat) -> Option<&syn::Ident> {
    match p {
        syn::Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => Some(&i.ident),
        _ => None,
    }
}

/// Identifies a declaration across lowering attempts by the address of its
/// name in the function's syntax tree, which every attempt borrows unchanged.
/// A counter of declarations would not do: a block lowered structurally only
/// once its target turns active declares more names, shifting the count of
/// every later one.
fn decl_key(name: &syn::Ident) -> usize {
    std::ptr::from_ref(name) as usize
}

pub(crate) fn strip(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => strip(&p.expr),
        syn::Expr::Group(g) => strip(&g.expr),
        _ => e,
    }
}

/// Splits off the tail expression (the last statement, without `;`).
fn split_tail(stmts: &[syn::Stmt]) -> (&[syn::Stmt], Option<&syn::Expr>) {
    match stmts.last() {
        Some(syn::Stmt::Expr(e, None)) => (&stmts[..stmts.len() - 1], Some(e)),
        _ => (stmts, None),
    }
}

/// Every identifier an expression mentions.
pub(crate) fn collect_expr_idents(e: &syn::Expr, out: &mut std::collections::HashSet<String>) {
    use proc_macro2::TokenTree;
    fn dot(t: Option<&TokenTree>) -> bool {
        matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == '.')
    }
    fn walk(ts: proc_macro2::TokenStream, out: &mut std::collections::HashSet<String>) {
        let (mut before, mut prev): (Option<TokenTree>, Option<TokenTree>) = (None, None);
        for tt in ts {
            match &tt {
                // A field or a method (`self.m`, `x.m()`) is no name read;
                // a range's end (`1..m`) is.
                TokenTree::Ident(_) if dot(prev.as_ref()) && !dot(before.as_ref()) => {}
                TokenTree::Ident(i) => {
                    out.insert(i.to_string());
                }
                TokenTree::Group(g) => walk(g.stream(), out),
                _ => {}
            }
            before = prev.replace(tt);
        }
    }
    walk(e.to_token_stream(), out);
}
