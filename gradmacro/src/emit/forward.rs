//! The forward sweep: the user's computation, one primitive step per line in
//! the user's order (so the value is bit-identical), recording along the way
//! exactly what the reverse sweep asked for.

use super::records::{Keep, WriteKey};
use super::{unparen, Emitter};
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
        let body = self.fwd_block(&self.f.body, &mut frames);
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
                    // leave their registers for the whole loop.
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
                let save = if self.a.saves_element(st.arr) {
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

    fn with_exit_flag(
        &mut self,
        site: SiteId,
        frames: &mut Vec<Frame>,
        body: impl FnOnce(&mut Self, &mut Vec<Frame>) -> TokenStream,
    ) -> TokenStream {
        let flagged = self.rec.exit.contains_key(&site);
        if flagged {
            frames.push(Frame::Flag(site));
        }
        let tokens = body(self, frames);
        if !flagged {
            return tokens;
        }
        frames.pop();
        let slot = self.rec.exit[&site].clone();
        let i = &slot.ident;
        match slot.store {
            Keep::Tape => {
                self.note_push(i);
                quote!(#tokens #i.push(false);)
            }
            _ => tokens,
        }
    }

    fn fwd_if(&mut self, i: &If, frames: &mut Vec<Frame>) -> TokenStream {
        self.with_exit_flag(i.site, frames, |e, frames| {
            let then = e.fwd_block(&i.then, frames);
            let els = e.fwd_block(&i.els, frames);
            let cond = e.passive(&i.cond);
            let els = if els.is_empty() {
                quote!()
            } else {
                quote!(else { #els })
            };
            let Some(slot) = e.rec.branch.get(&i.site) else {
                if then.is_empty() && els.is_empty() {
                    if crate::analysis::evaluated(e.f, &i.cond.reads, &e.a.live) {
                        return quote!(let _ = #cond;);
                    }
                    return quote!();
                }
                return quote!(if #cond { #then } #els);
            };
            let flag = &slot.ident;
            match slot.store {
                Keep::Top => quote!(let #flag = #cond; if #flag { #then } #els),
                Keep::Once => quote!(#flag = #cond; if #flag { #then } #els),
                Keep::Tape => {
                    let local = e.names.fresh("took");
                    let flag = flag.clone();
                    e.note_push(&flag);
                    quote!(let #local = #cond; #flag.push(#local); if #local { #then } #els)
                }
            }
        })
    }

    fn fwd_loop(&mut self, l: &Loop, frames: &mut Vec<Frame>) -> TokenStream {
        self.with_exit_flag(l.site, frames, |e, frames| {
            frames.push(Frame::Loop(l.site));
            e.pushed.push(Vec::new());
            let mut body = e.fwd_block(&l.body, frames);
            let mut prelude = quote!();
            if e.fused == Some(l.id) {
                body.extend(e.fused_body.take());
                prelude.extend(e.fused_prelude.take());
            }
            let tapes = e.pushed.pop().unwrap_or_default();
            frames.pop();
            // A range's length is known before it runs: room for every push.
            let reserve = match &l.kind {
                LoopKind::For {
                    iter,
                    reversed: Some(_),
                    ..
                } if !tapes.is_empty() => {
                    let n = e.names.fresh("len");
                    let it = &iter.tokens;
                    let it = if is_range(it) {
                        quote!((#it))
                    } else {
                        quote!(#it)
                    };
                    quote!(let #n = #it.size_hint().0; #(#tapes.reserve(#n);)*)
                }
                _ => quote!(),
            };
            let slot = e.rec.count.get(&l.site).cloned();
            let (before, tick, after) = match &slot {
                None => (quote!(), quote!(), quote!()),
                Some(s) => {
                    let i = &s.ident;
                    match (s.store, &s.counter) {
                        (Keep::Tape, Some(c)) if s.typed => (
                            quote!(let mut #c = 0usize;),
                            quote!(#c += 1;),
                            quote!(#i.push(#c);),
                        ),
                        (Keep::Tape, Some(c)) => (
                            quote!(let mut #c = 0;),
                            quote!(#c += 1;),
                            quote!(#i.push(#c);),
                        ),
                        (Keep::Top, _) if s.typed => {
                            (quote!(let mut #i = 0usize;), quote!(#i += 1;), quote!())
                        }
                        (Keep::Top, _) => (quote!(let mut #i = 0;), quote!(#i += 1;), quote!()),
                        _ => (quote!(), quote!(#i += 1;), quote!()),
                    }
                }
            };
            let header = match &l.kind {
                LoopKind::For { binding, iter, .. } => {
                    let iter = e.passive(iter);
                    match binding {
                        Some(v) if e.a.hoisted[v.0] => {
                            let var = e.f.var(*v).ident.clone();
                            let fresh = e.names.fresh(&format!("{var}_next"));
                            let key = l.id;
                            let save = if e.a.saves(e.f, *v, Write::Def) {
                                let tape = e.value_tape(*v);
                                let _ = key;
                                quote!(#tape.push(#var);)
                            } else {
                                quote!()
                            };
                            return quote! {
                                #reserve #before
                                for #fresh in #iter { #tick #save #var = #fresh; #body }
                                #after
                            };
                        }
                        Some(v) if e.live(*v) && mentions(&body, &e.f.var(*v).ident) => {
                            let var = e.f.var(*v).ident.clone();
                            quote!(for #var in #iter)
                        }
                        _ => quote!(for _ in #iter),
                    }
                }
                LoopKind::While { cond } => {
                    let c = e.passive(cond);
                    quote!(while #c)
                }
                LoopKind::Infinite => quote!(loop),
            };
            if body.is_empty() && slot.is_none() {
                let evaluated = match &l.kind {
                    LoopKind::For { iter, .. } => Some(iter),
                    LoopKind::While { cond } => Some(cond),
                    LoopKind::Infinite => None,
                };
                if let Some(h) = evaluated {
                    if !crate::analysis::evaluated(e.f, &h.reads, &e.a.live) {
                        return prelude;
                    }
                    let h = e.passive(h);
                    return quote!(#prelude let _ = #h;);
                }
            }
            quote!(#prelude #reserve #before #header { #tick #body } #after)
        })
    }

    fn fwd_exit(&mut self, exit: Exit, frames: &[Frame]) -> TokenStream {
        let mut actions = TokenStream::new();
        for frame in frames.iter().rev() {
            match frame {
                Frame::Loop(_) if exit != Exit::Return => break,
                Frame::Loop(site) => {
                    if let Some(s) = self.rec.count.get(site) {
                        if let (Keep::Tape, Some(c)) = (s.store, &s.counter) {
                            let i = &s.ident;
                            actions.extend(quote!(#i.push(#c);));
                        }
                    }
                }
                Frame::Flag(site) => {
                    let s = &self.rec.exit[site];
                    let i = &s.ident;
                    actions.extend(match s.store {
                        Keep::Tape => quote!(#i.push(true);),
                        _ => quote!(#i = true;),
                    });
                }
            }
        }
        let label = self.label.clone();
        let jump = match exit {
            Exit::Break => quote!(break;),
            Exit::Continue => quote!(continue;),
            Exit::Return => quote!(break #label;),
        };
        quote!(#actions #jump)
    }

    /// `let mut v = <a placeholder value>;`
    fn default_decl(&self, id: VarId) -> TokenStream {
        let ty = &self.ty;
        let v = self.f.var(id);
        let ident = &v.ident;
        let zero = self.lit("0.0");
        match &v.shape {
            Shape::Array { len } if v.kind == VarKind::Active => match len {
                Some(n) => quote!(let mut #ident: [#ty; #n] = [#zero; #n];),
                // A callee's array whose type was not written (`let c =
                // cross(&a, &b);`): the assignment tells the compiler. (A
                // generic function must write it: see `Lowerer::array_call`.)
                None if v.ty.is_none() && !v.owned_vec => {
                    quote!(let mut #ident = ::core::default::Default::default();)
                }
                None => quote!(let mut #ident: ::std::vec::Vec<#ty> = ::std::vec::Vec::new();),
            },
            Shape::Array { len: Some(n) } if v.float_elems => {
                quote!(let mut #ident: [#ty; #n] = [#zero; #n];)
            }
            // A float needs no `Default` (a generic `T` has none).
            Shape::Scalar if v.kind == VarKind::Active || self.a.floats[id.0] => {
                quote!(let mut #ident: #ty = #zero;)
            }
            _ => match (&v.ty, v.ty.as_ref().and_then(|t| self.float_array_len(t))) {
                // `[T; N]` written by the user (a constant a call returns).
                (Some(t), Some(n)) => quote!(let mut #ident: #t = [#zero; #n];),
                (Some(t), None) => {
                    quote!(let mut #ident: #t = ::core::default::Default::default();)
                }
                (None, _) => quote!(let mut #ident = ::core::default::Default::default();),
            },
        }
    }

    /// `N` of a type `[F; N]`, `F` the function's float type.
    fn float_array_len(&self, ty: &TokenStream) -> Option<syn::Expr> {
        match syn::parse2::<syn::Type>(ty.clone()).ok()? {
            syn::Type::Array(a)
                if quote::ToTokens::to_token_stream(&a.elem).to_string() == self.ty.to_string() =>
            {
                Some(a.len)
            }
            _ => None,
        }
    }

    /// Declarations that must precede the forward sweep: hoisted variables and
    /// every record kept outside a plain `let`.
    pub(super) fn hoisted_decls(&mut self) -> TokenStream {
        let ty = self.ty.clone();
        let zero = self.lit("0.0");
        let mut out = TokenStream::new();
        for i in 0..self.f.vars.len() {
            if !self.a.hoisted[i] || !self.live(VarId(i)) {
                continue;
            }
            out.extend(self.default_decl(VarId(i)));
        }
        let mut slots: Vec<(String, TokenStream)> = Vec::new();
        for s in self.rec.branch.values() {
            let i = &s.ident;
            match s.store {
                Keep::Once => slots.push((i.to_string(), quote!(let mut #i = false;))),
                Keep::Tape => slots.push((
                    i.to_string(),
                    quote!(let mut #i: ::std::vec::Vec<bool> = ::std::vec::Vec::new();),
                )),
                Keep::Top => {}
            }
        }
        let counts = self.rec.count.values().map(|s| {
            if s.typed {
                (s, quote!(0usize), quote!(usize))
            } else {
                (s, quote!(0), quote!(_))
            }
        });
        let exits = self
            .rec
            .exit
            .values()
            .map(|s| (s, quote!(false), quote!(bool)));
        for (s, init, elem) in counts.chain(exits) {
            let i = &s.ident;
            match s.store {
                Keep::Once => slots.push((i.to_string(), quote!(let mut #i = #init;))),
                Keep::Tape => slots.push((
                    i.to_string(),
                    quote!(let mut #i: ::std::vec::Vec<#elem> = ::std::vec::Vec::new();),
                )),
                Keep::Top => {}
            }
        }
        for (s, v, whole) in self.rec.saves.values() {
            if s.store != Keep::Once {
                continue;
            }
            let i = &s.ident;
            let var = self.f.var(*v);
            slots.push((
                i.to_string(),
                match (&var.shape, whole) {
                    (Shape::Array { len: Some(n) }, true) => quote!(let mut #i = [#zero; #n];),
                    (Shape::Array { len: None }, true) => {
                        quote!(let mut #i = ::std::vec::Vec::new();)
                    }
                    // An element of a float array, or a float.
                    _ if var.kind == VarKind::Active
                        || self.a.floats[v.0]
                        || (var.shape.is_array() && var.float_elems) =>
                    {
                        quote!(let mut #i: #ty = #zero;)
                    }
                    _ => quote!(let mut #i = ::core::default::Default::default();),
                },
            ));
        }
        for t in &self.rec.scratch {
            slots.push((
                t.to_string(),
                quote!(let mut #t: ::std::vec::Vec<#ty> = ::std::vec::Vec::new();),
            ));
        }
        for t in self.rec.array_tapes.values() {
            slots.push((
                t.to_string(),
                quote!(let mut #t: ::std::vec::Vec<_> = ::std::vec::Vec::new();),
            ));
        }
        for (v, t) in &self.rec.tapes {
            if let Some((cap, len)) = self.rec.stack.get(v) {
                let cap = proc_macro2::Literal::usize_unsuffixed(*cap as usize);
                slots.push((
                    t.to_string(),
                    quote!(let mut #t: [#ty; #cap] = [#zero; #cap]; let mut #len = 0usize;),
                ));
                continue;
            }
            let elem = if self.f.is_active(*v) && !self.f.var(*v).shape.is_array() {
                quote!(#ty)
            } else {
                quote!(_)
            };
            slots.push((
                t.to_string(),
                quote!(let mut #t: ::std::vec::Vec<#elem> = ::std::vec::Vec::new();),
            ));
        }
        // Hash-map order would make the expansion vary from build to build.
        slots.sort_by(|a, b| a.0.cmp(&b.0));
        out.extend(slots.into_iter().map(|(_, t)| t));
        out
    }
}

/// Whether `ident` occurs in `tokens`.
pub(super) fn mentions(tokens: &TokenStream, ident: &proc_macro2::Ident) -> bool {
    tokens.clone().into_iter().any(|tt| match tt {
        proc_macro2::TokenTree::Ident(i) => i == *ident,
        proc_macro2::TokenTree::Group(g) => mentions(&g.stream(), ident),
        _ => false,
    })
}

/// Whether `tokens` are a bare range (`a..b`), which needs parentheses to take
/// a method call.
fn is_range(tokens: &TokenStream) -> bool {
    let tts: Vec<proc_macro2::TokenTree> = tokens.clone().into_iter().collect();
    tts.windows(2).any(|w| match (&w[0], &w[1]) {
        (proc_macro2::TokenTree::Punct(a), proc_macro2::TokenTree::Punct(b)) => {
            a.as_char() == '.' && b.as_char() == '.'
        }
        _ => false,
    })
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
