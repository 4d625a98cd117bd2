//! syn → IR: the lowerer's state, one attempt at a function, blocks and
//! scopes. Statements are in `stmt.rs`, control flow in `control.rs` and
//! `loops.rs`, expressions in `expr.rs`. Every error is spanned and
//! collected; lowering goes on after an error so one compile reports as much
//! as possible.

use crate::ctxt::Ctxt;
use crate::ir::*;
use crate::names::Names;
mod adaptors;
mod array;
mod calls;
mod chain;
pub(crate) mod chained;
mod control;
pub(crate) mod data_loops;
mod expr;
mod extrema;
pub(crate) mod filters;
mod generic_float;
mod iter;
mod loops;
pub(crate) mod matching;
pub(crate) mod outputs;
pub(crate) mod recopy;
mod reject;
pub mod rename;
pub(crate) mod reslice;
mod scopes;
mod stmt;
pub(crate) mod sugar;
pub(crate) mod tuple_fields;
mod vars;
pub(crate) mod vec_macros;

pub(crate) use array::has_float_literal;

/// The accumulator a rewritten filtered or chained sum adds into: its
/// prefix tells such a block apart from one the user wrote.
const ACC: &str = "__gm_acc";

use crate::rules::Prim;
use crate::signature::{ParamKind, Signature_};
use proc_macro2::{Ident, Span};
use quote::ToTokens;
use rename::{Binding, Resolve};
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

/// Lowers one function, one attempt: `promoted` lists `let` declarations
/// that an earlier attempt found to receive active values; the caller repeats
/// until stable. `names` avoids every identifier of `f` (made once for all
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

/// Whether the body returns early anywhere (not counting closures and
/// nested items, whose `return` leaves only themselves).
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

    pub(crate) fn stmt_public(&mut self, s: &syn::Stmt) {
        self.stmt(s)
    }

    pub(crate) fn scoped_block(&mut self, f: impl FnOnce(&mut Self)) {
        self.scoped(f)
    }

    pub(crate) fn declare_stmt(&mut self, v: VarId) {
        self.cur.push(Stmt::Declare(v));
    }
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
