//! The reverse sweep: statements in reverse order, each adding (`+=`) its
//! output's adjoint times one partial into each active operand's adjoint,
//! restoring overwritten values and replaying recorded control flow.

use super::records::{Keep, Slot, WriteKey};
use super::Emitter;
use crate::analysis::stmt_ctx;
use crate::ir::*;
use crate::rules::Partial;
use proc_macro2::{Ident, TokenStream, TokenTree};
use quote::quote;

impl Emitter<'_> {
    pub(super) fn reverse_function(&mut self) -> TokenStream {
        let body = self.rev_block(&self.f.body);
        let mut decls: TokenStream = std::mem::take(&mut self.reused_adjoints)
            .into_iter()
            .collect();
        let params: Vec<VarId> = self.f.params.iter().map(|p| p.id).collect();
        for v in params {
            if self.a.adj[v.0] && v != self.f.output && !self.buffers.contains(&v) {
                decls.extend(self.zero_adjoint(v));
            }
        }
        quote!(#decls #(#body)*)
    }

    /// A block's reverse: fresh adjoints for what it declares, then its
    /// statements backwards; statements after one that may leave the block run
    /// only if it did not.
    fn rev_block(&mut self, b: &Block) -> Vec<TokenStream> {
        let in_scope = std::mem::take(&mut self.in_scope);
        let mut out: Vec<TokenStream> = Vec::new();
        let mut fused_at = None;
        for s in b.stmts.iter().rev() {
            if let (Some(site), false) = (self.a.escapes(s), out.is_empty()) {
                let ctx = stmt_ctx(s);
                let test = self.exit_test(site, ctx);
                out = vec![quote!(if !#test { #(#out)* })];
            }
            if matches!(s, Stmt::Loop(l) if self.fused == Some(l.id)) {
                fused_at = Some(out.len());
                self.rev_stmt(s);
                // In place while the adjoints are declared, so that none is
                // declared by its first write after the loop, which adds to it.
                let body = self.fused_body.clone();
                out.push(quote!({ #body }));
                continue;
            }
            out.extend(self.rev_stmt(s));
        }
        let mut decls = Vec::new();
        let mut seen = Vec::new();
        for s in &b.stmts {
            let v = match s {
                Stmt::Step(Step {
                    dst,
                    write: Write::Def,
                    ..
                })
                | Stmt::Reduce(Reduce {
                    dst,
                    write: Write::Def,
                    ..
                })
                | Stmt::ArrayDef(ArrayDef {
                    dst,
                    write: Write::Def,
                    ..
                })
                | Stmt::Call(Call {
                    dst,
                    write: Write::Def,
                    ..
                }) if !self.a.declared[dst.0] => *dst,
                Stmt::Declare(v) => *v,
                _ => continue,
            };
            if self.a.adj[v.0] && v != self.f.output && !seen.contains(&v) && !self.is_param(v) {
                seen.push(v);
                let top = std::ptr::eq(b, &self.f.body);
                if self.compact && top && !self.f.var(v).shape.is_array() {
                    self.compact_adjoints.push(v);
                } else if !self.fold_first_write(v, &mut out) {
                    decls.push(self.zero_adjoint(v));
                }
            }
        }
        // Values computed again rather than recorded, in forward order; a
        // passive one (an index) only where this block's reverse reads it.
        let mut prologue: Vec<(Option<Ident>, TokenStream)> = Vec::new();
        for s in b.stmts.iter().filter(|_| !in_scope) {
            if let Stmt::Assign(pa) = s {
                if self.a.recomputed[pa.dst.0] {
                    let (dst, value) = (self.var(pa.dst), &pa.value.tokens);
                    let annot = self.f.var(pa.dst).ty.as_ref().map(|t| quote!(: #t));
                    prologue.push((Some(dst.clone()), quote!(let #dst #annot = #value;)));
                }
            }
            if let Stmt::Step(st) = s {
                if self.a.recomputed[st.dst.0] {
                    let args = self.step_args(st);
                    let value = st.prim.eval(&args, st.span);
                    let dst = self.var(st.dst);
                    // A copied literal (`let took: f64 = 2.91;`) needs its type.
                    let annot = (st.prim == crate::rules::Prim::Copy).then(|| {
                        let ty = &self.ty;
                        quote!(: #ty)
                    });
                    prologue.push((None, quote!(let #dst #annot = #value;)));
                }
            }
        }
        let mut kept: Vec<TokenStream> = Vec::new();
        for (passive, tokens) in prologue.into_iter().rev() {
            let read = |d: &Ident| kept.iter().chain(out.iter()).any(|t| mentions(t, d));
            if passive.as_ref().is_none_or(read) {
                kept.push(tokens);
            }
        }
        if let Some(at) = fused_at {
            // The adjoints declared and the statements after the loop
            // reversed before the loop, which reads the sum's adjoint.
            let after: Vec<TokenStream> = out.drain(..at).collect();
            out.remove(0);
            self.fused_prelude = Some(quote!(#(#decls)* #(#after)*));
            decls.clear();
        }
        decls.extend(kept.into_iter().rev());
        decls.extend(out);
        decls
    }

    /// `let mut d_t: f64 = 0.0;` whose first use, at the top level of the
    /// block, is `d_t += e;` becomes `let d_t: f64 = e;` there: `0.0 + e` is
    /// an addition LLVM may not drop (it turns -0.0 into 0.0).
    fn fold_first_write(&mut self, v: VarId, out: &mut [TokenStream]) -> bool {
        if self.f.var(v).shape.is_array() {
            return false;
        }
        let d = self.adj(v);
        let Some(j) = out.iter().position(|s| mentions(s, &d)) else {
            return false;
        };
        let tokens: Vec<TokenTree> = out[j].clone().into_iter().collect();
        let neg = match tokens.as_slice() {
            [TokenTree::Ident(i), TokenTree::Punct(op), TokenTree::Punct(eq), .., TokenTree::Punct(semi)]
                if *i == d
                    && (op.as_char() == '+' || op.as_char() == '-')
                    && op.spacing() == proc_macro2::Spacing::Joint
                    && eq.as_char() == '='
                    && semi.as_char() == ';' =>
            {
                op.as_char() == '-'
            }
            _ => return false,
        };
        let rest: TokenStream = tokens[3..tokens.len() - 1].iter().cloned().collect();
        if mentions(&rest, &d) {
            return false;
        }
        let m = if out[j + 1..].iter().any(|s| assigns(s, &d)) {
            self.written.insert(v);
            quote!(mut)
        } else {
            quote!()
        };
        let ty = &self.ty;
        out[j] = if neg && rest.clone().into_iter().count() == 1 {
            quote!(let #m #d: #ty = -#rest;)
        } else if neg {
            quote!(let #m #d: #ty = -(#rest);)
        } else {
            quote!(let #m #d: #ty = #rest;)
        };
        true
    }

    pub(super) fn is_param(&self, v: VarId) -> bool {
        self.f.is_param(v)
    }

    fn rev_stmt(&mut self, s: &Stmt) -> Vec<TokenStream> {
        match s {
            Stmt::Step(st) => self.rev_step(st),
            Stmt::Assign(p) => {
                if self.a.saves_at(self.f, p.dst, p.write, p.id) {
                    vec![self.restore(p.dst, p.id, p.ctx)]
                } else if let Some(inverse) = self.a.inverted.get(&p.id) {
                    // `at += 1` undone: `at -= 1`.
                    let inverse: TokenStream = inverse.parse().unwrap_or_default();
                    let (dst, value) = (self.var(p.dst), &p.value.tokens);
                    vec![quote!(#dst #inverse #value;)]
                } else {
                    vec![]
                }
            }
            Stmt::If(i) => {
                let then = self.rev_block(&i.then);
                let els = self.rev_block(&i.els);
                if then.is_empty() && els.is_empty() {
                    return vec![];
                }
                if self.a.recomputed_cond.contains(&i.site) {
                    // The condition again, on the same values: no record.
                    let cond = self.passive(&i.cond);
                    return vec![quote!(if #cond { #(#then)* } else { #(#els)* })];
                }
                let test = self.branch_test(i.site, i.ctx);
                if els.is_empty() {
                    vec![quote!(if #test { #(#then)* })]
                } else if then.is_empty() {
                    vec![quote!(if !#test { #(#els)* })]
                } else {
                    vec![quote!(if #test { #(#then)* } else { #(#els)* })]
                }
            }
            Stmt::Loop(l) if self.fused == Some(l.id) => {
                self.in_scope = true;
                let body = self.rev_block(&l.body);
                self.fused_body = Some(quote!(#(#body)*));
                vec![]
            }
            Stmt::Loop(l) => {
                let mut body = self.rev_block(&l.body);
                let mut replay = None;
                if let LoopKind::For {
                    binding: Some(v),
                    replay: r,
                    ..
                } = &l.kind
                {
                    if self.a.saves(self.f, *v, Write::Def) {
                        let key = l.id;
                        body.push(self.restore(*v, key, l.body_ctx()));
                    }
                    if let Some(r) = r {
                        replay = Some((*v, r.clone()));
                    }
                }
                if body.is_empty() {
                    return vec![];
                }
                if let (
                    true,
                    LoopKind::For {
                        reversed: Some(r),
                        binding,
                        ..
                    },
                ) = (self.a.reversible.contains(&l.site), &l.kind)
                {
                    let pat = match binding {
                        Some(v) => {
                            let i = self.var(*v);
                            quote!(#i)
                        }
                        None => quote!(_),
                    };
                    let r = &r.tokens;
                    return vec![quote!(for #pat in #r { #(#body)* })];
                }
                let typed = replay.is_none();
                let count = self.count_read(l.site, l.ctx, typed);
                match replay {
                    None => vec![quote!(for _ in 0..#count { #(#body)* })],
                    Some((v, r)) => {
                        let i = self.var(v);
                        let range = match r {
                            Replay::UpFromZero => quote!((0..#count).rev()),
                            Replay::Up(start) => quote!((#start..#start + #count).rev()),
                            Replay::Down(end) => quote!(#end - #count..#end),
                        };
                        vec![quote!(for #i in #range { #(#body)* })]
                    }
                }
            }
            Stmt::Store(st) => self.rev_store(st),
            Stmt::Push(p) => {
                if !self.a.adj[p.arr.0] {
                    return vec![];
                }
                let arr = self.var(p.arr);
                let d_arr = self.adj(p.arr);
                let mut out = vec![quote!(#arr.pop();)];
                if let Some(target) = self.contribution_target(&p.value) {
                    out.push(self.update(&target, "+=", quote!(#d_arr[#arr.len()])));
                }
                out
            }
            Stmt::ArrayDef(d) => {
                if !self.a.saves_array(self.f, d.dst, d.write) {
                    return vec![];
                }
                let var = self.var(d.dst);
                let key = d.id;
                let old = match Keep::of(d.ctx) {
                    Keep::Tape => {
                        let tape = self.array_tape(d.dst);
                        quote!(#tape.pop().unwrap())
                    }
                    store => {
                        let slot = self.save_slot(d.dst, key, store, true);
                        quote!(#slot)
                    }
                };
                let mut out = vec![quote!(#var = #old;)];
                if self.a.resets_adjoint(d.dst, d.write) {
                    let d_var = self.adj(d.dst);
                    let zero = self.lit("0.0");
                    out.push(match &self.f.var(d.dst).shape {
                        Shape::Array { len: Some(n) } => quote!(#d_var = [#zero; #n];),
                        _ => quote!(#d_var = ::std::vec![#zero; #var.len()];),
                    });
                    self.written.insert(d.dst);
                }
                out
            }
            Stmt::Reduce(r) => {
                let mut out = Vec::new();
                if self.a.adj[r.dst.0] && self.a.adj[r.arr.0] {
                    let arr = self.var(r.arr);
                    let d_arr = self.adj(r.arr);
                    self.written.insert(r.arr);
                    let seed = self.adj(r.dst);
                    out.push(r.op.pullback(
                        &quote!(#arr),
                        &quote!(#d_arr),
                        &quote!(#seed),
                        &self.ty,
                    ));
                    if r.write == Write::Overwrite {
                        let zero = self.lit("0.0");
                        out.push(quote!(#seed = #zero;));
                        self.written.insert(r.dst);
                    }
                }
                if self.a.saves_at(self.f, r.dst, r.write, r.id) {
                    out.push(self.restore(r.dst, r.id, r.ctx));
                }
                out
            }
            Stmt::Call(c) => self.rev_call(c),
            Stmt::Exit(_) | Stmt::Declare(_) | Stmt::Verbatim(..) => vec![],
        }
    }

    fn rev_step(&mut self, st: &Step) -> Vec<TokenStream> {
        let dst = st.dst;
        let saved = self.a.saves_at(self.f, dst, st.write, st.id);
        let key = st.id;
        if !self.a.adj[dst.0] {
            return if saved {
                vec![self.restore(dst, key, st.ctx)]
            } else {
                vec![]
            };
        }
        let args: Vec<TokenStream> = st.args.iter().map(|a| self.partial_operand(a)).collect();
        let dst_ident = self.f.var(dst).ident.clone();
        let uses = crate::analysis::partial_uses(st.prim);
        let contributing: Vec<usize> = (0..st.args.len())
            .filter(|&i| uses[i].nonzero && st.args[i].var().is_some_and(|v| self.a.adj[v.0]))
            .collect();
        let self_pos: Vec<usize> = contributing
            .iter()
            .copied()
            .filter(|&i| matches!(st.args[i], Operand::Var(v) if v == dst))
            .collect();
        let d_dst = self.adj(dst);
        let mut out = Vec::new();

        let reads_dst = |i: usize| {
            uses[i].out
                || uses[i]
                    .args
                    .iter()
                    .any(|&j| matches!(st.args[j], Operand::Var(v) if v == dst))
        };
        let others: Vec<usize> = contributing
            .iter()
            .copied()
            .filter(|i| !self_pos.contains(i))
            .collect();
        let simple_accumulate = self_pos.len() == 1
            && matches!(
                self.partial(st, &args, &quote!(#dst_ident), self_pos[0]),
                Partial::Unit { neg: false }
            )
            && !(saved && others.iter().any(|&i| reads_dst(i)));

        if self_pos.is_empty() || simple_accumulate {
            // `y = g(a, b)` (or `s += t`): the adjoint of `y` is final here.
            let y = quote!(#dst_ident);
            for i in others {
                let p = self.partial(st, &args, &y, i);
                out.extend(self.accumulate(&st.args[i], &d_dst, p));
            }
            if self_pos.is_empty() && st.write == Write::Overwrite && self.a.zero_needed(self.f, st)
            {
                let zero = self.lit("0.0");
                out.push(quote!(#d_dst = #zero;));
                self.written.insert(dst);
            }
            if saved {
                out.push(self.restore(dst, key, st.ctx));
            }
            return out;
        }

        // `s = g(s, ..)`: take the incoming adjoint, restore `s`, then give the
        // old `s` its own share.
        let base = dst_ident.to_string();
        let d_new = self.names.fresh(&format!("d_{base}_new"));
        out.push(quote!(let #d_new = #d_dst;));
        let mut y = quote!(#dst_ident);
        if saved {
            if (0..st.args.len()).any(|i| uses[i].out) {
                let y_new = self.names.fresh(&format!("{base}_new"));
                out.push(quote!(let #y_new = #dst_ident;));
                y = quote!(#y_new);
            }
            out.push(self.restore(dst, key, st.ctx));
        }
        self.written.insert(dst);
        let single = if self_pos.len() == 1 {
            match self.partial(st, &args, &y, self_pos[0]) {
                Partial::Unit { neg: false } => Some(quote!(#d_new)),
                Partial::Times { neg: false, expr } => Some(quote!(#d_new * #expr)),
                Partial::Over { neg: false, expr } => Some(quote!(#d_new / #expr)),
                _ => None,
            }
        } else {
            None
        };
        match single {
            Some(value) => out.push(quote!(#d_dst = #value;)),
            None => {
                let zero = self.lit("0.0");
                out.push(quote!(#d_dst = #zero;));
                for &i in &self_pos {
                    let p = self.partial(st, &args, &y, i);
                    out.extend(self.accumulate(&st.args[i], &d_new, p));
                }
            }
        }
        for i in others {
            let p = self.partial(st, &args, &y, i);
            out.extend(self.accumulate(&st.args[i], &d_new, p));
        }
        out
    }

    fn partial(&self, st: &Step, args: &[TokenStream], y: &TokenStream, i: usize) -> Partial {
        st.prim.partials(args, y, &self.ty).swap_remove(i)
    }

    /// Where an operand's adjoint contributions go, if it has an adjoint.
    fn contribution_target(&mut self, a: &Operand) -> Option<TokenStream> {
        if !a.var().is_some_and(|v| self.a.adj[v.0]) {
            return None;
        }
        self.adj_place(a)
    }

    /// `arr[i] op= value` backwards: the value's adjoint takes the element's;
    /// a plain store also clears it and puts the old element back.
    fn rev_store(&mut self, st: &Store) -> Vec<TokenStream> {
        let mut out = Vec::new();
        let arr = self.var(st.arr);
        let i = st.index.tokens.clone();
        if self.a.adj[st.arr.0] {
            let d_arr = self.adj(st.arr);
            self.written.insert(st.arr);
            let target = self.contribution_target(&st.value);
            // `v[i] = v[j]` may be `v[i] = v[i]`: take the element's adjoint
            // before clearing it.
            let same_array = matches!(&st.value, Operand::Elem(a, _) if *a == st.arr);
            match (target, st.op) {
                (Some(target), StoreOp::Set) if same_array => {
                    let d = self.names.fresh("d_elem");
                    let ty = &self.ty;
                    let (zero, add) = (self.lit("0.0"), self.update(&target, "+=", &d));
                    out.push(quote!(let #d: #ty = #d_arr[#i]; #d_arr[#i] = #zero; #add));
                }
                (target, op) => {
                    if let Some(target) = target {
                        let op = match op {
                            StoreOp::Set | StoreOp::Add => "+=",
                            StoreOp::Sub => "-=",
                        };
                        out.push(self.update(&target, op, quote!(#d_arr[#i])));
                    }
                    if op == StoreOp::Set {
                        let zero = self.lit("0.0");
                        out.push(quote!(#d_arr[#i] = #zero;));
                    }
                }
            }
        }
        if self.a.saves_element(st.arr) {
            let key = st.id;
            let old = self.restore_value(st.arr, key, st.ctx);
            out.push(quote!(#arr[#i] = #old;));
        }
        out
    }

    /// `y = g(a, b)` backwards: `g_pullback` adds each argument's share into
    /// the slot the caller passes for it (`Some(&mut ..)`, or
    /// `Default::default()` where the caller needs nothing).
    fn rev_call(&mut self, c: &Call) -> Vec<TokenStream> {
        let dst = c.dst;
        let saved = self.a.saves_at(self.f, dst, c.write, c.id);
        let key = c.id;
        let mut out = Vec::new();
        if !self.a.adj[dst.0] {
            if saved {
                out.push(self.restore(dst, key, c.ctx));
            }
            return out;
        }
        let d_dst = self.adj(dst);
        let self_arg = c.args.iter().any(|a| a.target() == Some(dst));
        let seed = if self.f.var(dst).shape.is_array() {
            // A vector output (always a new array): its adjoint is the seed.
            quote!(&#d_dst[..])
        } else if self_arg || c.write == Write::Overwrite {
            // The adjoint of the old value starts afresh.
            let d_new = self.names.fresh(&format!("{d_dst}_new"));
            let zero = self.lit("0.0");
            out.push(quote!(let #d_new = #d_dst; #d_dst = #zero;));
            self.written.insert(dst);
            quote!(#d_new)
        } else {
            quote!(#d_dst)
        };
        if saved {
            out.push(self.restore(dst, key, c.ctx));
        }
        let ty = self.ty.clone();
        let none = quote!(::core::default::Default::default());
        let mut slots = Vec::new();
        let mut after = Vec::new();
        let mut lent: Vec<VarId> = Vec::new();
        for a in &c.args {
            let active = a.target().is_some_and(|v| self.a.adj[v.0]);
            let slot = match &a.share {
                Share::Scalar(op) if active => {
                    // A fresh scalar per argument: `g(x, x)` must not lend
                    // `d_x` twice.
                    let g = self.names.fresh("g");
                    let zero = self.lit("0.0");
                    out.push(quote!(let mut #g: #ty = #zero;));
                    let place = self.adj_place(op).expect("an active operand");
                    after.push(self.update(&place, "+=", &g));
                    quote!(::core::option::Option::Some(&mut #g))
                }
                Share::Array(v) | Share::Slice(v, _) if active => {
                    let d = self.adj(*v);
                    self.written.insert(*v);
                    let part = match &a.share {
                        Share::Slice(_, r) => {
                            let r = &r.tokens;
                            quote!(#d[#r])
                        }
                        _ => quote!(#d[..]),
                    };
                    if lent.contains(v) {
                        // The same array twice: the second share goes
                        // through a buffer of its own.
                        let g = self.names.fresh("g");
                        let zero = self.lit("0.0");
                        out.push(quote!(let mut #g: ::std::vec::Vec<#ty> = ::std::vec![#zero; #part.len()];));
                        let add = self.update(quote!(*d), "+=", quote!(*g));
                        after.push(quote!(for (d, g) in #part.iter_mut().zip(#g.iter()) { #add }));
                        quote!(::core::option::Option::Some(&mut #g[..]))
                    } else {
                        lent.push(*v);
                        quote!(::core::option::Option::Some(&mut #part))
                    }
                }
                Share::Scratch(len) => {
                    let scratch = self.names.fresh("scratch");
                    self.rec.scratch.push(scratch.clone());
                    let n = self.names.fresh("n");
                    let zero = self.lit("0.0");
                    out.push(quote! {
                        let #n = #len;
                        if #scratch.len() < #n {
                            #scratch.resize(#n, #zero);
                        }
                    });
                    quote!(::core::option::Option::Some(&mut #scratch[..#n]))
                }
                _ => none.clone(),
            };
            slots.push(slot);
        }
        let pullback = &c.pullback;
        let args: Vec<TokenStream> = c.args.iter().map(|a| a.value.tokens.clone()).collect();
        out.push(quote!(#pullback(#(#args,)* #seed, #(#slots),*);));
        out.extend(after);
        out
    }

    /// `d_arg += seed * partial`, in the form the partial asks for.
    fn accumulate(
        &mut self,
        arg: &Operand,
        seed: &proc_macro2::Ident,
        p: Partial,
    ) -> Option<TokenStream> {
        let d = self.contribution_target(arg)?;
        let op = |neg: bool| if neg { "-=" } else { "+=" };
        Some(match p {
            Partial::Zero => return None,
            Partial::Unit { neg } => self.update(&d, op(neg), seed),
            Partial::Times { neg, expr } => self.update(&d, op(neg), quote!(#seed * #expr)),
            Partial::Over { neg, expr } => self.update(&d, op(neg), quote!(#seed / #expr)),
            Partial::When { cond } => {
                let add = self.update(&d, "+=", seed);
                quote!(if #cond { #add })
            }
        })
    }

    /// Puts back the value a write destroyed.
    fn restore(&mut self, v: VarId, key: WriteKey, ctx: Ctx) -> TokenStream {
        let var = self.f.var(v).ident.clone();
        let old = self.restore_value(v, key, ctx);
        quote!(#var = #old;)
    }

    /// The saved value (or element) that a write of `v` destroyed.
    fn restore_value(&mut self, v: VarId, key: WriteKey, ctx: Ctx) -> TokenStream {
        match Keep::of(ctx) {
            Keep::Tape => {
                let tape = self.value_tape(v);
                match self.rec.stack.get(&v) {
                    Some((_, len)) => quote!({ #len -= 1; #tape[#len] }),
                    None => quote!(#tape.pop().unwrap()),
                }
            }
            store => {
                let slot = self.save_slot(v, key, store, false);
                quote!(#slot)
            }
        }
    }

    pub(super) fn value_tape(&mut self, v: VarId) -> proc_macro2::Ident {
        if let Some(t) = self.rec.tapes.get(&v) {
            return t.clone();
        }
        let t = self.names.fresh(&format!("tape_{}", self.f.var(v).ident));
        self.rec.tapes.insert(v, t.clone());
        if let Some(&cap) = self.stack_caps.get(&v) {
            let len = self.names.fresh(&format!("{t}_len"));
            self.rec.stack.insert(v, (cap, len));
        }
        t
    }

    /// Pushes `value` onto `v`'s value tape.
    pub(super) fn push_value(&mut self, v: VarId, value: TokenStream) -> TokenStream {
        let tape = self.value_tape(v);
        match self.rec.stack.get(&v) {
            Some((_, len)) => quote!(#tape[#len] = #value; #len += 1;),
            None => {
                self.note_push(&tape);
                quote!(#tape.push(#value);)
            }
        }
    }

    fn save_slot(
        &mut self,
        v: VarId,
        key: WriteKey,
        store: Keep,
        whole: bool,
    ) -> proc_macro2::Ident {
        if let Some((s, _, _)) = self.rec.saves.get(&key) {
            return s.ident.clone();
        }
        let ident = self.names.fresh(&format!("{}_old", self.f.var(v).ident));
        self.rec.saves.insert(
            key,
            (
                Slot {
                    ident: ident.clone(),
                    store,
                    counter: None,
                    typed: true,
                },
                v,
                whole,
            ),
        );
        ident
    }

    /// The tape of whole arrays that re-creating `v` in a loop moves onto.
    pub(super) fn array_tape(&mut self, v: VarId) -> proc_macro2::Ident {
        if let Some(t) = self.rec.array_tapes.get(&v) {
            return t.clone();
        }
        let t = self
            .names
            .fresh(&format!("tape_{}_arrays", self.f.var(v).ident));
        self.rec.array_tapes.insert(v, t.clone());
        t
    }

    fn slot(&mut self, kind: &str, site: SiteId, ctx: Ctx) -> Slot {
        let store = Keep::of(ctx);
        let base = format!("{kind}{}", site.0 + 1);
        let ident = match store {
            Keep::Tape => self.names.fresh(&format!("tape_{base}")),
            _ => self.names.fresh(&base),
        };
        let counter = (kind == "iters" && store == Keep::Tape).then(|| self.names.fresh(&base));
        Slot {
            ident,
            store,
            counter,
            typed: true,
        }
    }

    fn read_slot(slot: &Slot) -> TokenStream {
        let i = &slot.ident;
        match slot.store {
            Keep::Tape => quote!(#i.pop().unwrap()),
            _ => quote!(#i),
        }
    }

    fn branch_test(&mut self, site: SiteId, ctx: Ctx) -> TokenStream {
        let slot = self.slot("took", site, ctx);
        let t = Self::read_slot(&slot);
        self.rec.branch.insert(site, slot);
        t
    }

    /// A loop count; untyped where it must unify with a replayed binding's type.
    fn count_read(&mut self, site: SiteId, ctx: Ctx, typed: bool) -> TokenStream {
        let mut slot = self.slot("iters", site, ctx);
        slot.typed = typed;
        let t = Self::read_slot(&slot);
        self.rec.count.insert(site, slot);
        t
    }

    fn exit_test(&mut self, site: SiteId, ctx: Ctx) -> TokenStream {
        let slot = self.slot("left", site, ctx);
        let t = Self::read_slot(&slot);
        self.rec.exit.insert(site, slot);
        t
    }
}

/// Whether `ident` occurs in `tokens`.
fn mentions(tokens: &TokenStream, ident: &proc_macro2::Ident) -> bool {
    tokens.clone().into_iter().any(|tt| match tt {
        TokenTree::Ident(i) => i == *ident,
        TokenTree::Group(g) => mentions(&g.stream(), ident),
        _ => false,
    })
}

/// Whether `tokens` assign `ident` (`d = ..`, `d += ..`, `d -= ..`, ...).
fn assigns(tokens: &TokenStream, ident: &proc_macro2::Ident) -> bool {
    let tts: Vec<TokenTree> = tokens.clone().into_iter().collect();
    tts.iter().enumerate().any(|(k, tt)| match tt {
        TokenTree::Ident(i) if i == ident => match (tts.get(k + 1), tts.get(k + 2)) {
            (Some(TokenTree::Punct(p)), _)
                if p.as_char() == '=' && p.spacing() == proc_macro2::Spacing::Alone =>
            {
                true
            }
            (Some(TokenTree::Punct(p)), Some(TokenTree::Punct(q))) => {
                "+-*/".contains(p.as_char())
                    && p.spacing() == proc_macro2::Spacing::Joint
                    && q.as_char() == '='
            }
            _ => false,
        },
        TokenTree::Group(g) => assigns(&g.stream(), ident),
        _ => false,
    })
}
