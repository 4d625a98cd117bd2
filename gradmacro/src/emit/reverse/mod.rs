//! The reverse sweep: statements in reverse order, each adding (`+=`) its
//! output's adjoint times one partial into each active operand's adjoint,
//! restoring overwritten values and replaying recorded control flow.
//!
//! This file walks the blocks and dispatches the statements; the longer
//! cases are its children: steps and stores, calls, and the records read back.

mod call;
mod names;
mod restore;
mod step;

use super::operands::{braced, mentions};
use super::records::Keep;
use super::Emitter;
use crate::analysis::stmt_ctx;
use crate::ir::*;
use names::{BlockNames, Mentioned};
use proc_macro2::{Ident, TokenStream, TokenTree};
use quote::quote;
use std::collections::HashMap;

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
        decls.extend(body);
        decls
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
                let rest = braced(std::mem::take(&mut out));
                out = vec![quote!(if !#test #rest)];
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
        let zero = self.lit("0.0");
        fold_cleared(&mut out, &zero);
        let mut names = BlockNames::new(&out);
        let mut decls = Vec::new();
        // Indexed by variable: a block of thousands of statements declares
        // thousands of adjoints, and a list searched each time is quadratic.
        let mut seen = vec![false; self.f.vars.len()];
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
            if self.a.adj[v.0] && v != self.f.output && !seen[v.0] && !self.is_param(v) {
                seen[v.0] = true;
                let top = std::ptr::eq(b, &self.f.body);
                if self.compact && top && !self.f.var(v).shape.is_array() {
                    self.compact_adjoints.push(v);
                } else if !self.fold_first_write(v, &mut out, &mut names) {
                    decls.push(self.zero_adjoint(v));
                }
            }
        }
        // Values computed again rather than recorded, in forward order; a
        // passive one (an index) only where this block's reverse reads it.
        // A temporary the reverse reads only through its reader is written
        // inside it, as in the forward sweep.
        let mut read = Mentioned::new(&out);
        self.folds = Some(HashMap::new());
        let prologue = if in_scope {
            Vec::new()
        } else {
            self.recomputations(b, &read, false)
        };
        self.folds = None;
        let mut kept: Vec<TokenStream> = Vec::new();
        for (passive, tokens) in prologue.into_iter().rev() {
            if passive.as_ref().is_none_or(|d| read.contains(d)) {
                read.add(&tokens);
                kept.push(tokens);
            }
        }
        if let Some(at) = fused_at {
            // The adjoints declared and the statements after the loop
            // reversed before the loop, which reads the sum's adjoint.
            let after: Vec<TokenStream> = out.drain(..at).collect();
            out.remove(0);
            self.fused_prelude = Some(decls.drain(..).chain(after).collect());
        }
        decls.extend(kept.into_iter().rev());
        decls.extend(out);
        decls
    }

    /// The values of `b` computed again, in forward order, each with its name
    /// if it is passive (kept only where read). Those an `if` chooses (see
    /// `recompute::chosen`) are assigned by replaying the `if`, where it
    /// stands: `chosen` prints one of its branches, which holds only them.
    fn recomputations(
        &mut self,
        b: &Block,
        read: &Mentioned,
        chosen: bool,
    ) -> Vec<(Option<Ident>, TokenStream)> {
        let mut prologue = Vec::new();
        for (i, s) in b.stmts.iter().enumerate() {
            match s {
                Stmt::Declare(v) if self.a.recomputed[v.0] => {
                    let dst = self.var(*v);
                    let annot = match &self.f.var(*v).ty {
                        Some(t) => quote!(: #t),
                        None if self.a.floats[v.0] => {
                            let ty = &self.ty;
                            quote!(: #ty)
                        }
                        None => quote!(),
                    };
                    prologue.push((None, quote!(let #dst #annot;)));
                }
                Stmt::If(c) if chooses(c, self.a) => {
                    let [then, els] = [&c.then, &c.els].map(|branch| {
                        let parts = self.recomputations(branch, read, true);
                        parts.into_iter().map(|(_, t)| t).collect::<TokenStream>()
                    });
                    let cond = &c.cond.tokens;
                    prologue.push((None, quote!(if #cond { #then } else { #els })));
                }
                Stmt::Assign(pa) if self.a.recomputed[pa.dst.0] => {
                    let (dst, value) = (self.var(pa.dst), &pa.value.tokens);
                    if chosen {
                        prologue.push((None, quote!(#dst = #value;)));
                    } else if !self.a.declared[pa.dst.0] {
                        let annot = self.f.var(pa.dst).ty.as_ref().map(|t| quote!(: #t));
                        prologue.push((Some(dst.clone()), quote!(let #dst #annot = #value;)));
                    }
                }
                Stmt::Step(st) if self.a.recomputed[st.dst.0] => {
                    if !chosen && self.a.declared[st.dst.0] {
                        continue;
                    }
                    let args = self.step_args(st);
                    let value = st.prim.eval(&args, st.span);
                    let dst = self.var(st.dst);
                    if chosen {
                        prologue.push((None, quote!(#dst = #value;)));
                        continue;
                    }
                    if self.replay_folds(b, i, read) {
                        self.fold_into_reader(st, value);
                        continue;
                    }
                    // A copied literal (`let took: f64 = 2.91;`) needs its type.
                    let annot = (st.prim == crate::rules::Prim::Copy).then(|| {
                        let ty = &self.ty;
                        quote!(: #ty)
                    });
                    prologue.push((None, quote!(let #dst #annot = #value;)));
                }
                _ => {}
            }
        }
        prologue
    }

    /// Whether the step at `i` of `b`, computed again, is written inside its
    /// reader: a folded temporary (see `Analysis::folded`) whose reader is
    /// computed again too, and that nothing of the block's reverse reads.
    fn replay_folds(&self, b: &Block, i: usize, read: &Mentioned) -> bool {
        let Stmt::Step(st) = &b.stmts[i] else {
            return false;
        };
        if !self.a.folded[st.dst.0] {
            return false;
        }
        let reader = b.stmts[i + 1..].iter().find_map(|s| match s {
            Stmt::Step(r)
                if r.args
                    .iter()
                    .any(|a| matches!(a, Operand::Var(v) if *v == st.dst)) =>
            {
                Some(r.dst)
            }
            _ => None,
        });
        let ident = &self.f.var(st.dst).ident;
        reader.is_some_and(|r| self.a.recomputed[r.0]) && !read.contains(ident)
    }

    /// `let mut d_t: f64 = 0.0;` whose first use, at the top level of the
    /// block, is `d_t += e;` becomes `let d_t: f64 = e;` there: `0.0 + e` is
    /// an addition LLVM may not drop (it turns -0.0 into 0.0).
    fn fold_first_write(
        &mut self,
        v: VarId,
        out: &mut [TokenStream],
        names: &mut BlockNames,
    ) -> bool {
        if self.f.var(v).shape.is_array() {
            return false;
        }
        let d = self.adj(v);
        let name = d.to_string();
        let Some(j) = names.first_mention(out, &name) else {
            return false;
        };
        let Some((op, rest)) = accumulation(&out[j], &d) else {
            return false;
        };
        let neg = op == '-';
        let m = if names.assigned_after(out, j, &name) {
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
        names.rewritten(j);
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
                    let (then, els) = (braced(then), braced(els));
                    return vec![quote!(if #cond #then else #els)];
                }
                let test = self.branch_test(i.site, i.ctx);
                let (no_else, no_then) = (els.is_empty(), then.is_empty());
                let (then, els) = (braced(then), braced(els));
                if no_else {
                    vec![quote!(if #test #then)]
                } else if no_then {
                    vec![quote!(if !#test #els)]
                } else {
                    vec![quote!(if #test #then else #els)]
                }
            }
            Stmt::Loop(l) if self.fused == Some(l.id) => {
                self.in_scope = true;
                let body = self.rev_block(&l.body);
                self.fused_body = Some(body.into_iter().collect());
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
                    let body = braced(body);
                    return vec![quote!(for #pat in #r #body)];
                }
                let typed = replay.is_none();
                let count = self.count_read(l.site, l.ctx, typed);
                let body = braced(body);
                match replay {
                    None => vec![quote!(for _ in 0..#count #body)],
                    Some((v, r)) => {
                        let i = self.var(v);
                        let range = match r {
                            Replay::UpFromZero => quote!((0..#count).rev()),
                            Replay::Up(start) => quote!((#start..#start + #count).rev()),
                            Replay::Down(end) => quote!(#end - #count..#end),
                        };
                        vec![quote!(for #i in #range #body)]
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
}

/// An `if` that chooses values the reverse sweep computes again: its
/// branches assign variables declared before it (`let v;`), and nothing else
/// (see `recompute::chosen`).
fn chooses(c: &If, a: &crate::analysis::Analysis) -> bool {
    let writes_recomputed = |b: &Block| {
        b.stmts.iter().any(|s| match s {
            Stmt::Step(st) => a.declared[st.dst.0] && a.recomputed[st.dst.0],
            Stmt::Assign(pa) => a.declared[pa.dst.0] && a.recomputed[pa.dst.0],
            _ => false,
        })
    };
    writes_recomputed(&c.then) || writes_recomputed(&c.els)
}

/// `d = 0.0;` followed, with nothing reading or writing `d` in between, by
/// `d += e;` becomes `d = e;`: `0.0 + e` is an addition LLVM may not drop (it
/// turns -0.0 into 0.0), and in a loop it lengthens the chain every
/// iteration waits on (Horner's rule: `d_p = 0.0; .. d_p += d_t * x;`).
fn fold_cleared(out: &mut Vec<TokenStream>, zero: &TokenStream) {
    let zero = zero.to_string();
    let mut j = 0;
    while j < out.len() {
        let cleared = match out[j].clone().into_iter().collect::<Vec<_>>().as_slice() {
            [TokenTree::Ident(d), TokenTree::Punct(eq), value @ .., TokenTree::Punct(semi)]
                if eq.as_char() == '='
                    && eq.spacing() == proc_macro2::Spacing::Alone
                    && semi.as_char() == ';'
                    && value.iter().cloned().collect::<TokenStream>().to_string() == zero =>
            {
                Some(d.clone())
            }
            _ => None,
        };
        let Some(d) = cleared else {
            j += 1;
            continue;
        };
        let Some(k) = (j + 1..out.len()).find(|&k| mentions(&out[k], &d)) else {
            j += 1;
            continue;
        };
        let one_statement = |rest: &TokenStream| {
            !rest
                .clone()
                .into_iter()
                .any(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ';'))
        };
        let Some(('+', rest)) = accumulation(&out[k], &d).filter(|(_, r)| one_statement(r)) else {
            j += 1;
            continue;
        };
        out[k] = quote!(#d = #rest;);
        out.remove(j);
    }
}

/// `d += e;` or `d -= e;` where `e` does not read `d`: the operator's first
/// character and `e`.
fn accumulation(tokens: &TokenStream, d: &Ident) -> Option<(char, TokenStream)> {
    let tokens: Vec<TokenTree> = tokens.clone().into_iter().collect();
    match tokens.as_slice() {
        [TokenTree::Ident(i), TokenTree::Punct(op), TokenTree::Punct(eq), rest @ .., TokenTree::Punct(semi)]
            if i == d
                && (op.as_char() == '+' || op.as_char() == '-')
                && op.spacing() == proc_macro2::Spacing::Joint
                && eq.as_char() == '='
                && semi.as_char() == ';' =>
        {
            let rest: TokenStream = rest.iter().cloned().collect();
            (!mentions(&rest, d)).then_some((op.as_char(), rest))
        }
        _ => None,
    }
}
