//! Each statement in forward mode: the primal as the forward sweep writes it,
//! its tangent beside it from the same partials.

use super::Tangents;
use crate::emit::Emitter;
use crate::ir::*;
use crate::rules::{sum_terms, Prim, Term};
use proc_macro2::TokenStream;
use quote::quote;

impl Emitter<'_> {
    pub(super) fn tan_stmt(&mut self, s: &Stmt, t: &mut Tangents) -> TokenStream {
        let ty = self.ty.clone();
        match s {
            Stmt::Step(st) => {
                let args = self.step_args(st);
                let value = st.prim.eval(&args, st.span);
                let annot = match (&st.prim, &st.args[0]) {
                    (Prim::Copy, Operand::Const(_)) => quote!(: #ty),
                    _ => quote!(),
                };
                if !t.need[st.dst.0] {
                    return self.step_set(st, annot, value);
                }
                let operands: Vec<TokenStream> =
                    st.args.iter().map(|a| self.partial_operand(a)).collect();
                let dots: Vec<Option<TokenStream>> =
                    st.args.iter().map(|a| t.operand(self, a)).collect();
                let reads_dst = st.args.iter().any(|a| a.reads().contains(&st.dst));
                let dst = self.var(st.dst);
                let terms = st.prim.tangent_terms(&operands, &quote!(#dst), &ty, &dots);
                let dot = sum_terms(&terms, &ty);
                if reads_dst && !self.tan_declares(st.dst, st.write) {
                    let d = t.dot(self, st.dst);
                    let own = t
                        .operand(self, &Operand::Var(st.dst))
                        .unwrap_or_default()
                        .to_string();
                    let own_term = |term: &Term| term.expr.to_string() == own;
                    if let Some(k) = terms.iter().position(|term| own_term(term) && !term.neg) {
                        // `s = s + t`: `t_s += t_t`, before `s` changes (the
                        // other terms read the old operands, never the result).
                        let mut rest = terms.clone();
                        rest.remove(k);
                        let update = match rest.as_slice() {
                            [] => quote!(),
                            [one] if one.neg => self.tan_update(quote!(#d), "-=", one.expr.clone()),
                            _ => {
                                let r = sum_terms(&rest, &ty);
                                self.tan_update(quote!(#d), "+=", r)
                            }
                        };
                        let set = self.step_set(st, annot, value);
                        return quote!(#update #set);
                    }
                    if !crate::emit::operands::mentions(&dot, &dst) {
                        // The tangent reads the old operands only.
                        let set_dot = self.assign_dot(st.dst, st.write, dot, t);
                        let set = self.step_set(st, annot, value);
                        return quote!(#set_dot #set);
                    }
                    // The partials read the old value and the new: the new
                    // one waits until the tangent is made.
                    let next = self.names.fresh("next");
                    let dot = sum_terms(
                        &st.prim.tangent_terms(&operands, &quote!(#next), &ty, &dots),
                        &ty,
                    );
                    let set_dot = self.assign_dot(st.dst, st.write, dot, t);
                    return quote!(let #next = #value; #set_dot #dst = #next;);
                }
                let set = self.step_set(st, annot, value);
                let set_dot = self.assign_dot(st.dst, st.write, dot, t);
                quote!(#set #set_dot)
            }
            Stmt::Assign(p) => {
                let value = p.value.tokens.clone();
                let dst = self.var(p.dst);
                if self.tan_declares(p.dst, p.write) {
                    let m = self.tan_mut(p.dst);
                    let annot = match &self.f.var(p.dst).ty {
                        Some(t) => quote!(: #t),
                        None if crate::emit::forward::float_literal(&p.value.tokens) => {
                            quote!(: #ty)
                        }
                        None => quote!(),
                    };
                    quote!(let #m #dst #annot = #value;)
                } else {
                    let op = p.op.clone().unwrap_or_else(|| quote!(=));
                    quote!(#dst #op #value;)
                }
            }
            Stmt::Verbatim(ts, _) => ts.clone(),
            Stmt::Store(st) => {
                let arr = self.var(st.arr);
                let i = st.index.tokens.clone();
                let value = self.operand(&st.value, false);
                let primal = self.store(quote!(#arr[#i]), st.op, value);
                if !t.need[st.arr.0] {
                    return primal;
                }
                let d = t.dot(self, st.arr);
                match (t.operand(self, &st.value), st.op) {
                    (Some(dot), op) => match self.lanes.clone() {
                        Some((n, l)) => {
                            let store = self.store(quote!(#d[#i][#l]), op, dot);
                            quote!(#primal for #l in 0..#n { #store })
                        }
                        None => {
                            let store = self.store(quote!(#d[#i]), op, dot);
                            quote!(#primal #store)
                        }
                    },
                    (None, StoreOp::Set) => {
                        let zero = self.tan_zero();
                        quote!(#primal #d[#i] = #zero;)
                    }
                    (None, _) => primal,
                }
            }
            Stmt::Push(p) => {
                let arr = self.var(p.arr);
                let value = self.operand(&p.value, false);
                if !t.need[p.arr.0] {
                    return quote!(#arr.push(#value););
                }
                let d = t.dot(self, p.arr);
                let dot = t.whole(self, &p.value).unwrap_or_else(|| self.tan_zero());
                quote!(#arr.push(#value); #d.push(#dot);)
            }
            Stmt::ArrayDef(d) => {
                let init = d.init.tokens.clone();
                let var = self.f.var(d.dst);
                let annot = match &var.ty {
                    Some(t) => quote!(: #t),
                    None if self.f.is_active(d.dst) => crate::emit::entry_ty(&var.shape, &ty),
                    None => quote!(),
                };
                let annot = if annot.is_empty() || var.ty.is_some() {
                    annot
                } else {
                    quote!(: #annot)
                };
                let primal = self.assign(d.dst, d.write, annot, init);
                if !t.need[d.dst.0] {
                    return primal;
                }
                let arr = self.var(d.dst);
                let zero = self.tan_zero();
                let zeros = match &self.f.var(d.dst).shape {
                    Shape::Array { len: Some(n) } => quote!([#zero; #n]),
                    // Filled by pushes beside the values: as much room.
                    _ if d.empty => d.init.tokens.clone(),
                    _ => quote!(::std::vec![#zero; #arr.len()]),
                };
                let dot = t.dot(self, d.dst);
                if self.tan_declares(d.dst, d.write) {
                    let m = self.tan_mut(d.dst);
                    let entry = crate::emit::entry_ty(&self.f.var(d.dst).shape, &self.tan_ty());
                    quote!(#primal let #m #dot: #entry = #zeros;)
                } else {
                    quote!(#primal #dot = #zeros;)
                }
            }
            Stmt::Reduce(r) => {
                let arr = self.var(r.arr);
                let value = r.op.eval(&quote!(#arr), &ty);
                let primal = self.assign(r.dst, r.write, quote!(), value);
                if !t.need[r.dst.0] {
                    return primal;
                }
                let t_arr = t.dot(self, r.arr);
                let dot = match &self.lanes {
                    // One lane's tangents gathered, for the rule written
                    // for a slice of them.
                    Some((_, l)) => {
                        let lane = self.names.fresh(&format!("{t_arr}_lane"));
                        let rule = r.op.tangent(&quote!(#arr), &quote!(#lane), &ty);
                        quote!({
                            let #lane: ::std::vec::Vec<#ty> = #t_arr.iter().map(|v| v[#l]).collect();
                            #rule
                        })
                    }
                    None => r.op.tangent(&quote!(#arr), &quote!(#t_arr), &ty),
                };
                // Lanes (Jacobians by columns) read the lane inside the
                // assignment, and are never lowered again.
                let block = self.lanes.is_none() && r.op == crate::rules::Reduction::Product;
                if block && !self.tan_declares(r.dst, r.write) {
                    // A block assigned (`t_p = { .. };`, in a branch) would
                    // not lower again, for second derivatives: bound first.
                    let fresh = self.names.fresh(&format!("{t_arr}_reduced"));
                    let set_dot = self.assign_dot(r.dst, r.write, quote!(#fresh), t);
                    return quote!(#primal let #fresh: #ty = #dot; #set_dot);
                }
                let set_dot = self.assign_dot(r.dst, r.write, dot, t);
                quote!(#primal #set_dot)
            }
            Stmt::Call(c) => self.tan_call(c, t),
            Stmt::Declare(v) => {
                let v = *v;
                if v == self.f.output && self.f.has_return && !self.dot_program {
                    return quote!();
                }
                let var = self.f.var(v);
                let m = self.tan_mut(v);
                let ident = var.ident.clone();
                let annot = if self.f.is_active(v) {
                    quote!(: #ty)
                } else {
                    match &var.ty {
                        Some(t) => quote!(: #t),
                        None => quote!(),
                    }
                };
                if !t.need[v.0] {
                    return quote!(let #m #ident #annot;);
                }
                let d = t.dot(self, v);
                let t_ty = self.tan_ty();
                quote!(let #m #ident #annot; let #m #d: #t_ty;)
            }
            Stmt::If(i) => {
                let cond = i.cond.tokens.clone();
                let then = self.tan_block(&i.then, t);
                let els = self.tan_block(&i.els, t);
                if els.is_empty() {
                    quote!(if #cond { #then })
                } else {
                    quote!(if #cond { #then } else { #els })
                }
            }
            Stmt::Loop(l) => {
                let body = self.tan_block(&l.body, t);
                let header = match &l.kind {
                    LoopKind::For { binding, iter, .. } => {
                        let iter = &iter.tokens;
                        match binding {
                            Some(v)
                                if crate::emit::operands::mentions(
                                    &body,
                                    &self.f.var(*v).ident,
                                ) =>
                            {
                                let var = self.var(*v);
                                quote!(for #var in #iter)
                            }
                            _ => quote!(for _ in #iter),
                        }
                    }
                    LoopKind::While { cond } => {
                        let c = &cond.tokens;
                        quote!(while #c)
                    }
                    LoopKind::Infinite => quote!(loop),
                };
                quote!(#header { #body })
            }
            Stmt::Exit(Exit::Break) => quote!(break;),
            Stmt::Exit(Exit::Continue) => quote!(continue;),
            Stmt::Exit(Exit::Return) if self.dot_program => {
                let out = self.f.output;
                match t.operand(self, &Operand::Var(out)) {
                    Some(d) => quote!(return #d;),
                    None => {
                        let zero = self.lit("0.0");
                        quote!(return #zero;)
                    }
                }
            }
            Stmt::Exit(Exit::Return) => {
                let label = &self.label;
                quote!(break #label;)
            }
        }
    }
}
