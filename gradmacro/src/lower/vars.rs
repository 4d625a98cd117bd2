//! Variables and writes: declared and bound to names in scope; written as a
//! definition, an overwrite, or a new version when rewritten in the block that
//! declared them (so straight-line code needs no tape); a value made an
//! operand through a temporary.

use super::rename::{Alias, Binding, Resolve};
use super::{Assigned, Lowerer, Val};
use crate::ir::*;
use crate::rules::Prim;
use proc_macro2::{Ident, Span};

impl Lowerer<'_> {
    pub(crate) fn new_var(&mut self, name: &str, kind: VarKind, span: Span) -> VarId {
        let ident = self.names.user_var(name);
        self.push_var(ident, name, kind, span)
    }

    pub(crate) fn temp(&mut self, span: Span) -> VarId {
        self.temps += 1;
        let ident = self.names.fresh(&format!("t{}", self.temps));
        let v = self.push_var(ident, "t", VarKind::Active, span);
        self.vars[v.0].temp = true;
        v
    }

    pub(super) fn push_var(
        &mut self,
        ident: Ident,
        name: &str,
        kind: VarKind,
        span: Span,
    ) -> VarId {
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
            on_stack: false,
            ty: None,
            temp: false,
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
    pub(super) fn declare(&mut self, name: &syn::Ident, kind: VarKind, span: Span) -> VarId {
        let id = self.declare_unbound(name, kind, span);
        self.bind(name, id);
        id
    }

    /// A new variable for `name`, not yet visible: `let x = if .. { x } ..`
    /// reads the old `x` in its initialiser.
    pub(super) fn declare_unbound(
        &mut self,
        name: &syn::Ident,
        kind: VarKind,
        span: Span,
    ) -> VarId {
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

    pub(super) fn bind(&mut self, name: &syn::Ident, id: VarId) {
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

    pub(crate) fn is_param(&self, v: VarId) -> bool {
        self.params.contains(&v)
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
        if let Val::Call(mut call) = val {
            let dst = self.version_for_write(v);
            let write = self.write_kind(dst);
            if !super::outputs::holds_outputs(&self.vars[dst.0].ident) {
                call.into = None;
            }
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
                    into: None,
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
}

/// Identifies a declaration across lowering attempts by the address of its
/// name in the function's syntax tree, which every attempt borrows unchanged.
/// A counter of declarations would not do: a block lowered structurally only
/// once its target turns active declares more names, shifting the count of
/// every later one.
fn decl_key(name: &syn::Ident) -> usize {
    std::ptr::from_ref(name) as usize
}
