//! The forward sweep: the user's computation, its primitive steps in the
//! user's order (so the value is bit-identical), a temporary that only its
//! reader reads written inside that reader (see `analysis/fold.rs`),
//! recording along the way exactly what the reverse sweep asked for.
//!
//! This file holds the statements; control flow and the declarations made
//! up front are its children.

mod control;
mod decls;
mod reserve;

use super::operands::unparen;
use super::records::{Keep, WriteKey};
use super::Emitter;
use crate::ir::*;
use proc_macro2::TokenStream;
use quote::quote;

/// An enclosing construct, seen from an exit (`break`, `continue`, `return`).
enum Frame {
    /// A statement whose "left early" flag an exit must set.
    Flag(SiteId),
    /// A loop; `return` leaving it must still record its iteration count.
    Loop(SiteId),
}

impl Emitter<'_> {
    pub(super) fn forward_function(&mut self) -> TokenStream {
        let mut frames = Vec::new();
        self.folds = Some(Default::default());
        let body = self.fwd_block(&self.f.body, &mut frames);
        self.folds = None;
        if !self.f.has_return {
            return body;
        }
        let out = self.f.var(self.f.output).ident.clone();
        let ty = self.ty.clone();
        let label = self.label.clone();
        quote! {
            let #out: #ty;
            #label: { #body }
        }
    }

    fn fwd_block(&mut self, b: &Block, frames: &mut Vec<Frame>) -> TokenStream {
        b.stmts.iter().map(|s| self.fwd_stmt(s, frames)).collect()
    }

    /// A temporary written inside the expression of the step that reads it.
    /// In a fused loop the reverse reads the forward sweep's values even
    /// where it could compute them again.
    fn may_fold(&self, v: VarId) -> bool {
        self.folds.is_some() && self.a.folded[v.0] && !(self.fused.is_some() && self.a.needed[v.0])
    }

    fn declares_here(&self, v: VarId, write: Write) -> bool {
        write == Write::Def && !self.a.hoisted[v.0] && !self.a.declared[v.0] && !self.is_param(v)
    }

    /// Whether this definition gets its own `let`: in a long function, a
    /// top-level float is declared in a group instead (see `compact`).
    fn own_let(&mut self, v: VarId, write: Write, ctx: Ctx) -> bool {
        if !self.declares_here(v, write) {
            return false;
        }
        let var = self.f.var(v);
        if self.compact
            && ctx == Ctx::default()
            && var.kind == VarKind::Active
            && !var.shape.is_array()
        {
            self.compact_values.push(v);
            return false;
        }
        true
    }

    fn let_mut(&self, v: VarId) -> TokenStream {
        if self.a.mutable(self.f, v) {
            quote!(mut)
        } else {
            quote!()
        }
    }

    /// A write nothing reads (see `Analysis::unread`): left out, but a first
    /// one still declares the variable, without the value, unless a grouped
    /// declaration covers it or no write of it is left. `annot` is a passive
    /// value's type, if known.
    fn declare_only(
        &mut self,
        v: VarId,
        write: Write,
        ctx: Ctx,
        annot: Option<TokenStream>,
    ) -> TokenStream {
        if !self.own_let(v, write, ctx) || self.a.undeclared[v.0] {
            return quote!();
        }
        let m = self.let_mut(v);
        let dst = self.var(v);
        let ty = &self.ty;
        let annot = annot.unwrap_or_else(|| quote!(: #ty));
        quote!(let #m #dst #annot;)
    }

    fn fwd_stmt(&mut self, s: &Stmt, frames: &mut Vec<Frame>) -> TokenStream {
        match s {
            Stmt::Step(st) => {
                if !self.live(st.dst) {
                    return quote!();
                }
                if self.a.unread.contains(&st.id) {
                    return self.declare_only(st.dst, st.write, st.ctx, None);
                }
                let save = self.save(st.dst, st.id, st.ctx, st.write);
                let args = self.step_args(st);
                let value = st.prim.eval(&args, st.span);
                if save.is_empty() && self.may_fold(st.dst) {
                    self.fold_into_reader(st, value);
                    return quote!();
                }
                let dst = self.f.var(st.dst).ident.clone();
                let own_let = self.own_let(st.dst, st.write, st.ctx);
                let assigned_here = !self.declares_here(st.dst, st.write);
                if let (Some(op), true) = (st.prim.compound(), assigned_here) {
                    if matches!(st.args[0], Operand::Var(v) if v == st.dst) {
                        // `s = s * x` is written `s *= x`: the same operation.
                        let rhs = unparen(self.operand(&st.args[1], false));
                        let update = self.update(&dst, &op.to_string(), rhs);
                        return quote!(#save #update);
                    }
                    if st.prim.commutative() && matches!(st.args[1], Operand::Var(v) if v == st.dst)
                    {
                        // `s = t + s` is `s += t`: IEEE addition and
                        // multiplication are commutative, bit for bit.
                        let rhs = unparen(self.operand(&st.args[0], false));
                        let update = self.update(&dst, &op.to_string(), rhs);
                        return quote!(#save #update);
                    }
                }
                if own_let {
                    let m = self.let_mut(st.dst);
                    let ty = &self.ty;
                    let annot = match (&st.prim, &st.args[0]) {
                        (crate::rules::Prim::Copy, Operand::Const(_)) => quote!(: #ty),
                        _ => quote!(),
                    };
                    quote!(#save let #m #dst #annot = #value;)
                } else if Keep::of(st.ctx) == Keep::Tape
                    && !save.is_empty()
                    && !st.args.iter().any(|a| a.reads().contains(&st.dst))
                {
                    // The new value first, then the push: a push that grows
                    // the tape is a call, and values live across it would
                    // leave their registers for the whole loop. A value
                    // that reads the old one (through a folded temporary)
                    // is computed before the borrow.
                    if super::operands::mentions(&value, &dst) {
                        let next = self.names.fresh("next");
                        let push =
                            self.push_value(st.dst, quote!(::core::mem::replace(&mut #dst, #next)));
                        return quote!(let #next = #value; #push);
                    }
                    self.push_value(st.dst, quote!(::core::mem::replace(&mut #dst, #value)))
                } else {
                    quote!(#save #dst = #value;)
                }
            }
            Stmt::Assign(p) => {
                if !self.live(p.dst) {
                    return quote!();
                }
                let ty = &self.ty;
                let annot = match &self.f.var(p.dst).ty {
                    Some(t) => quote!(: #t),
                    // `let g = 0.5;`: the user's code may fix its type by a
                    // use the generated code does not repeat.
                    None if float_literal(&p.value.tokens) => quote!(: #ty),
                    None => quote!(),
                };
                if self.a.unread.contains(&p.id) {
                    return self.declare_only(p.dst, p.write, p.ctx, Some(annot));
                }
                let save = self.save(p.dst, p.id, p.ctx, p.write);
                let value = self.passive(&p.value);
                let dst = self.f.var(p.dst).ident.clone();
                if self.declares_here(p.dst, p.write) {
                    let m = self.let_mut(p.dst);
                    quote!(#save let #m #dst #annot = #value;)
                } else {
                    let op = p.op.clone().unwrap_or_else(|| quote!(=));
                    quote!(#save #dst #op #value;)
                }
            }
            Stmt::Verbatim(ts, _) => ts.clone(),
            Stmt::Store(st) => {
                if !self.live(st.arr) {
                    return quote!();
                }
                let arr = self.var(st.arr);
                let i = st.index.tokens.clone();
                let save = if self.a.saves_element(st) {
                    let key = st.id;
                    self.save_value(st.arr, key, st.ctx, quote!(#arr[#i]), false)
                } else {
                    quote!()
                };
                let value = self.operand(&st.value, false);
                let store = self.store(quote!(#arr[#i]), st.op, value);
                quote!(#save #store)
            }
            Stmt::Push(p) => {
                if !self.live(p.arr) {
                    return quote!();
                }
                let arr = self.var(p.arr);
                let value = self.operand(&p.value, false);
                quote!(#arr.push(#value);)
            }
            Stmt::ArrayDef(d) => {
                if !self.live(d.dst) {
                    return quote!();
                }
                let dst = self.var(d.dst);
                let init = self.passive(&d.init);
                if self.declares_here(d.dst, d.write) {
                    if let Some(inline) = self.inline_def(d) {
                        return inline;
                    }
                    let m = self.let_mut(d.dst);
                    let annot = match &self.f.var(d.dst).ty {
                        Some(t) => quote!(: #t),
                        None if self.f.is_active(d.dst) => {
                            let ty = &self.ty;
                            match &self.f.var(d.dst).shape {
                                Shape::Array { len: Some(n) } => quote!(: [#ty; #n]),
                                _ => quote!(: ::std::vec::Vec<#ty>),
                            }
                        }
                        None => quote!(),
                    };
                    return quote!(let #m #dst #annot = #init;);
                }
                if self.a.saves_array(self.f, d.dst, d.write) {
                    // The old array moves onto the tape; nothing is copied.
                    let replaced = quote!(::core::mem::replace(&mut #dst, #init));
                    let key = d.id;
                    let saved = self.save_value(d.dst, key, d.ctx, replaced, true);
                    if !saved.is_empty() {
                        return saved;
                    }
                }
                quote!(#dst = #init;)
            }
            Stmt::Call(c) => {
                if !self.live(c.dst) {
                    return quote!();
                }
                let save = self.save(c.dst, c.id, c.ctx, c.write);
                let func = &c.func;
                let args: Vec<TokenStream> =
                    c.args.iter().map(|a| a.value.tokens.clone()).collect();
                let dst = self.var(c.dst);
                if self.own_let(c.dst, c.write, c.ctx) {
                    let m = self.let_mut(c.dst);
                    quote!(#save let #m #dst = #func(#(#args),*);)
                } else if let Some(into) = &c.into {
                    // Declared once, outside the loop: its storage is reused.
                    quote!(#save #into(#(#args,)* &mut #dst);)
                } else {
                    quote!(#save #dst = #func(#(#args),*);)
                }
            }
            Stmt::Reduce(r) => {
                if !self.live(r.dst) {
                    return quote!();
                }
                let save = self.save(r.dst, r.id, r.ctx, r.write);
                let arr = self.var(r.arr);
                let value = r.op.eval(&quote!(#arr), &self.ty);
                let dst = self.var(r.dst);
                if self.own_let(r.dst, r.write, r.ctx) {
                    let m = self.let_mut(r.dst);
                    quote!(#save let #m #dst = #value;)
                } else {
                    quote!(#save #dst = #value;)
                }
            }
            Stmt::Declare(v) => {
                let v = *v;
                if (v == self.f.output && self.f.has_return) || self.a.hoisted[v.0] || !self.live(v)
                {
                    return quote!();
                }
                let var = self.f.var(v);
                // Assigned only on some paths, yet read by the reverse sweep
                // or saved before an overwrite: rustc needs a value on the
                // paths that did not assign it. Those paths never read it, so
                // rustc may find the value unused.
                if var.maybe_unassigned && (self.a.needed[v.0] || self.a.restored[v.0]) {
                    let decl = self.default_decl(v);
                    return quote!(#[allow(unused_assignments)] #decl);
                }
                let m = self.let_mut(v);
                let ident = var.ident.clone();
                let annot = if self.f.is_active(v) {
                    let ty = &self.ty;
                    quote!(: #ty)
                } else {
                    match &var.ty {
                        Some(t) => quote!(: #t),
                        None => quote!(),
                    }
                };
                quote!(let #m #ident #annot;)
            }
            Stmt::If(i) => self.fwd_if(i, frames),
            Stmt::Loop(l) => self.fwd_loop(l, frames),
            Stmt::Exit(e) => self.fwd_exit(*e, frames),
        }
    }

    /// Records the value about to be overwritten, if the reverse sweep restores it.
    fn save(&mut self, v: VarId, key: WriteKey, ctx: Ctx, write: Write) -> TokenStream {
        if !self.a.saves_at(self.f, v, write, key) {
            return quote!();
        }
        let var = self.var(v);
        self.save_value(v, key, ctx, quote!(#var), false)
    }

    /// Records `value` (the old value of `v`, or of one of its elements) where
    /// the reverse sweep will look for it.
    /// `whole`: `value` is a whole array (moved out by `mem::replace`).
    fn save_value(
        &mut self,
        v: VarId,
        key: WriteKey,
        ctx: Ctx,
        value: TokenStream,
        whole: bool,
    ) -> TokenStream {
        if Keep::of(ctx) == Keep::Tape {
            if !whole {
                return self.push_value(v, value);
            }
            let tape = self.array_tape(v);
            self.note_push(&tape);
            return quote!(#tape.push(#value););
        }
        match self.rec.saves.get(&key) {
            Some((slot, _, _)) if slot.store == Keep::Top => {
                let s = &slot.ident;
                quote!(let #s = #value;)
            }
            Some((slot, _, _)) => {
                let s = &slot.ident;
                quote!(#s = #value;)
            }
            None => quote!(),
        }
    }
}

/// A lone unsuffixed float literal, possibly negated: `0.5`, `-2.0`.
pub(super) fn float_literal(tokens: &TokenStream) -> bool {
    let tts: Vec<proc_macro2::TokenTree> = tokens.clone().into_iter().collect();
    let lit = match tts.as_slice() {
        [proc_macro2::TokenTree::Literal(l)] => l,
        [proc_macro2::TokenTree::Punct(p), proc_macro2::TokenTree::Literal(l)]
            if p.as_char() == '-' =>
        {
            l
        }
        _ => return false,
    };
    let s = lit.to_string();
    s.contains('.')
        && s.chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == '_')
}
