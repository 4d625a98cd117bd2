//! Forward mode: the user's computation in the user's order (so the value is
//! bit-identical), each differentiated value's tangent computed beside it from
//! the same partial derivatives the reverse sweep uses ([`Prim::tangent`]).
//! Nothing is recorded: a tangent is gone once its value is.

use super::Emitter;
use crate::analysis::walk;
use crate::ir::*;
use crate::rules::{sum_terms, Prim, Term};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use std::collections::HashMap;

impl Emitter<'_> {
    /// `fn name(params.., slots..) -> (value, tangent)`: one slot per
    /// parameter, `f64` for a differentiable scalar, `&[f64]` for an array,
    /// `()` for the rest.
    /// `output`: another variable to return with its tangent, and its type
    /// (the array a vector-output function returns), instead of the output.
    pub(super) fn tangent_core(
        mut self,
        name: &Ident,
        (user_fn, receiver): (&TokenStream, Option<&syn::Receiver>),
        output: Option<(VarId, &TokenStream)>,
    ) -> TokenStream {
        let ty = self.ty.clone();
        let out_var = output.map_or(self.f.output, |o| o.0);
        let out_ty = output.map_or_else(|| ty.clone(), |o| o.1.clone());
        let t_ty = self.tan_ty();
        let out_t_ty = match (&self.lanes, &self.f.var(out_var).shape) {
            (None, _) => out_ty.clone(),
            (Some(_), shape) => super::entry_ty(shape, &t_ty),
        };
        let need = tangent_needs(self.f, out_var);
        let mut t = Tangents {
            dots: HashMap::new(),
            need,
        };
        let mut slots = Vec::new();
        let mut reslice = Vec::new();
        let zero_tangents = self.constant_params_tangents(&mut t);
        for p in &self.f.params {
            let Some(v) = p.var else {
                slots.push(quote!(_: ()));
                continue;
            };
            let d = self.names.fresh(&format!("t_{}", p.ident));
            t.dots.insert(v, d.clone());
            let slot_ty = if p.shape.is_array() {
                quote!(&[#t_ty])
            } else {
                quote!(#t_ty)
            };
            if t.need[v.0] {
                let m = self.tan_mut(v);
                slots.push(quote!(#m #d: #slot_ty));
                if p.shape.is_array() {
                    // Sliced to the parameter's length, so that the optimiser
                    // knows both lengths are equal and drops bounds checks.
                    let x = &p.ident;
                    reslice.push(quote!(let #d = &#d[..#x.len()];));
                }
            } else {
                let unused = format_ident!("_{}", d);
                slots.push(quote!(#unused: #slot_ty));
            }
        }
        let body = self.tan_block(&self.f.body, &mut t);
        let body = quote!(#(#reslice)* #(#zero_tangents)* #body);
        let out = self.var(out_var);
        let mut zeros = quote!();
        let out_dot = if t.need[out_var.0] {
            let d = t.dot(&mut self, out_var);
            quote!(#d)
        } else {
            let zero = self.tan_zero();
            match &self.f.var(out_var).shape {
                Shape::Scalar => zero,
                Shape::Array { len: Some(n) } => quote!([#zero; #n]),
                // Made before `out` moves into the result.
                Shape::Array { len: None } => {
                    let z = self.names.fresh(&format!("t_{out}"));
                    zeros = quote!(let #z = ::std::vec![#zero; #out.len()];);
                    quote!(#z)
                }
            }
        };
        let body = if self.f.has_return {
            let label = &self.label;
            let decl_dot = if t.need[self.f.output.0] {
                quote!(let #out_dot: #ty;)
            } else {
                quote!()
            };
            quote! {
                let #out: #ty;
                #decl_dot
                #label: { #body }
            }
        } else {
            body
        };
        let mut params = Vec::new();
        if let Some(r) = receiver {
            params.push(quote!(#r));
        }
        let mut unseen: Vec<String> = self.f.params.iter().map(|p| p.ident.to_string()).collect();
        super::strike_mentioned(body.clone(), &mut unseen);
        for p in &self.f.params {
            let (ident, pty) = (&p.ident, &p.ty);
            let m = self.tan_mut(p.id);
            params.push(if !unseen.contains(&ident.to_string()) || *ident == out {
                quote!(#m #ident: #pty)
            } else {
                let i = format_ident!("_{}", ident);
                quote!(#i: #pty)
            });
        }
        let allow = super::many_args(params.len() + slots.len());
        let ptr = super::vec_refs(self.f);
        let (gp, wc) = (&self.f.generics.params, &self.f.generics.where_clause);
        quote! {
            #[inline]
            #allow
            #ptr
            fn #name #gp(#(#params,)* #(#slots),*) -> (#out_ty, #out_t_ty) #wc {
                let _ = #user_fn;
                #body
                #zeros
                (#out, #out_dot)
            }
        }
    }

    /// The tangent program as a function of its own, in the language the
    /// macro differentiates: `fn name(params.., t_a, t_b, ..) -> f64`
    /// returning the output's tangent alone. Differentiating it again in
    /// reverse mode gives second derivatives: with respect to the tangents,
    /// the gradient; with respect to the parameters, the Hessian times the
    /// tangents. Also returns the tangent parameters' names.
    pub(super) fn dot_program(
        mut self,
        name: &Ident,
        receiver: Option<&syn::Receiver>,
    ) -> (TokenStream, Vec<Ident>) {
        self.dot_program = true;
        let ty = self.ty.clone();
        let need = tangent_needs(self.f, self.f.output);
        let mut t = Tangents {
            dots: HashMap::new(),
            need,
        };
        let mut params: Vec<TokenStream> = receiver.iter().map(|r| quote!(#r)).collect();
        let mut t_params = Vec::new();
        let mut t_names = Vec::new();
        let zero_tangents = self.constant_params_tangents(&mut t);
        for p in &self.f.params {
            let (ident, pty) = (&p.ident, &p.ty);
            let m = self.tan_mut(p.id);
            params.push(quote!(#m #ident: #pty));
            let Some(v) = p.var else { continue };
            let d = self.names.fresh(&format!("t_{}", p.ident));
            t.dots.insert(v, d.clone());
            t_params.push(if p.shape.is_array() {
                quote!(#d: &[#ty])
            } else {
                quote!(#m #d: #ty)
            });
            t_names.push(d);
        }
        let body = self.tan_block(&self.f.body, &mut t);
        let out = Operand::Var(self.f.output);
        let ends_in_return = matches!(self.f.body.stmts.last(), Some(Stmt::Exit(Exit::Return)));
        let out_dot = if ends_in_return {
            quote!()
        } else {
            let zero = self.lit("0.0");
            t.operand(&mut self, &out).unwrap_or(zero)
        };
        // The macro reads `vec![..]` by that name only.
        let body = plain_vec(quote!(#(#zero_tangents)* #body));
        let (gp, wc) = (&self.f.generics.params, &self.f.generics.where_clause);
        let item = quote! {
            fn #name #gp(#(#params,)* #(#t_params),*) -> #ty #wc {
                #body
                #out_dot
            }
        };
        (item, t_names)
    }

    /// A scalar parameter without a tangent of its own (excluded by
    /// `wrt(..)`) that is overwritten with a differentiated value: its
    /// tangent starts at zero.
    fn constant_params_tangents(&mut self, t: &mut Tangents) -> Vec<TokenStream> {
        let mut out = Vec::new();
        for p in &self.f.params {
            if p.var.is_none() && t.need[p.id.0] && !p.shape.is_array() {
                let d = t.dot(self, p.id);
                let (t_ty, zero) = (self.tan_ty(), self.tan_zero());
                out.push(quote!(let mut #d: #t_ty = #zero;));
            }
        }
        out
    }

    /// The type of a scalar's tangent: the float, or `[float; L]`.
    fn tan_ty(&self) -> TokenStream {
        let ty = &self.ty;
        match &self.lanes {
            Some((n, _)) => quote!([#ty; #n]),
            None => ty.clone(),
        }
    }

    /// A zero tangent.
    fn tan_zero(&self) -> TokenStream {
        let zero = self.lit("0.0");
        match &self.lanes {
            Some((n, _)) => quote!([#zero; #n]),
            None => zero,
        }
    }

    /// A tangent from `lane`, the expression of one lane's.
    fn tan_value(&self, lane: TokenStream) -> TokenStream {
        match &self.lanes {
            Some((_, l)) => quote!(::core::array::from_fn(|#l| #lane)),
            None => lane,
        }
    }

    /// `tangent op lane;` in every lane.
    fn tan_update(&self, tangent: TokenStream, op: &str, lane: TokenStream) -> TokenStream {
        match &self.lanes {
            Some((n, l)) => {
                let update = self.update(quote!(#tangent[#l]), op, lane);
                quote!(for #l in 0..#n { #update })
            }
            None => self.update(tangent, op, lane),
        }
    }

    fn tan_block(&mut self, b: &Block, t: &mut Tangents) -> TokenStream {
        b.stmts.iter().map(|s| self.tan_stmt(s, t)).collect()
    }

    /// A variable's first assignment in its scope, made by a `let` here.
    fn tan_declares(&self, v: VarId, write: Write) -> bool {
        let up_front = v == self.f.output && self.f.has_return && !self.dot_program;
        write == Write::Def && !self.a.declared[v.0] && !self.is_param(v) && !up_front
    }

    fn tan_mut(&self, v: VarId) -> TokenStream {
        if self.f.var(v).reassigned {
            quote!(mut)
        } else {
            quote!()
        }
    }

    /// `let [mut] v = value;` or `v = value;`.
    fn assign(
        &self,
        v: VarId,
        write: Write,
        annot: TokenStream,
        value: TokenStream,
    ) -> TokenStream {
        let dst = self.var(v);
        if self.tan_declares(v, write) {
            let m = self.tan_mut(v);
            quote!(let #m #dst #annot = #value;)
        } else {
            quote!(#dst = #value;)
        }
    }

    /// A step's primal assignment; `s = s * x` written `s *= x`, the same
    /// operation, as the forward sweep writes it.
    fn step_set(&mut self, st: &Step, annot: TokenStream, value: TokenStream) -> TokenStream {
        if !self.tan_declares(st.dst, st.write) {
            if let Some(op) = st.prim.compound() {
                let is_dst = |a: &Operand| matches!(a, Operand::Var(v) if *v == st.dst);
                let other = if is_dst(&st.args[0]) {
                    Some(&st.args[1])
                } else if st.prim.commutative() && is_dst(&st.args[1]) {
                    Some(&st.args[0])
                } else {
                    None
                };
                if let Some(other) = other {
                    let dst = self.var(st.dst);
                    let rhs = super::unparen(self.operand(other, false));
                    return self.update(&dst, &op.to_string(), rhs);
                }
            }
        }
        self.assign(st.dst, st.write, annot, value)
    }

    fn assign_dot(
        &mut self,
        v: VarId,
        write: Write,
        value: TokenStream,
        t: &mut Tangents,
    ) -> TokenStream {
        let d = t.dot(self, v);
        let ty = self.tan_ty();
        let value = self.tan_value(value);
        if self.tan_declares(v, write) {
            let m = self.tan_mut(v);
            quote!(let #m #d: #ty = #value;)
        } else {
            quote!(#d = #value;)
        }
    }

    fn tan_stmt(&mut self, s: &Stmt, t: &mut Tangents) -> TokenStream {
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
                    if !super::forward::mentions(&dot, &dst) {
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
                        None if super::forward::float_literal(&p.value.tokens) => quote!(: #ty),
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
                    None if self.f.is_active(d.dst) => super::entry_ty(&var.shape, &ty),
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
                    let entry = super::entry_ty(&self.f.var(d.dst).shape, &self.tan_ty());
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
                            Some(v) if super::forward::mentions(&body, &self.f.var(*v).ident) => {
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

    /// `dst = g(args)`: value and tangent from `g_pushforward`, which takes a
    /// tangent for every float argument (`Default::default()`: zero).
    fn tan_call(&mut self, c: &Call, t: &mut Tangents) -> TokenStream {
        let func = &c.func;
        let args: Vec<TokenStream> = c.args.iter().map(|a| a.value.tokens.clone()).collect();
        if !t.need[c.dst.0] {
            let value = quote!(#func(#(#args),*));
            return self.assign(c.dst, c.write, quote!(), value);
        }
        if self.dot_program {
            return self.dot_call(c, t);
        }
        let slots = self.call_tangents(c, t, |d, range| match range {
            Some(r) => quote!(::core::option::Option::Some(&#d[#r])),
            None => quote!(::core::option::Option::Some(&#d[..])),
        });
        let pushforward = &c.pushforward;
        let call = quote!(#pushforward(#(#args,)* #(#slots),*));
        let dst = self.var(c.dst);
        let d = t.dot(self, c.dst);
        if self.tan_declares(c.dst, c.write) {
            let m = self.tan_mut(c.dst);
            let var = self.f.var(c.dst);
            let ty = match &var.shape {
                Shape::Scalar => self.ty.clone(),
                // A callee's array bound without its type (`let c = g(..);`):
                // the pushforward's own type.
                Shape::Array { len: None } if var.ty.is_none() && !var.owned_vec => {
                    return quote!(let (#m #dst, #m #d) = #call;);
                }
                shape => super::entry_ty(shape, &self.ty),
            };
            quote!(let (#m #dst, #m #d): (#ty, #ty) = #call;)
        } else {
            quote!((#dst, #d) = #call;)
        }
    }
}

impl Emitter<'_> {
    /// Each argument's tangent for a call: a scalar's or element's tangent,
    /// `wrap(t_w, range)` for an array or a part of one, `Default::default()`
    /// (zero, `()`, `None` or an empty slice) where there is none.
    fn call_tangents(
        &mut self,
        c: &Call,
        t: &mut Tangents,
        wrap: impl Fn(&Ident, Option<&TokenStream>) -> TokenStream,
    ) -> Vec<TokenStream> {
        let none = quote!(::core::default::Default::default());
        c.args
            .iter()
            .map(|a| match &a.share {
                // Zero, spelled for the float type: a generic `T` need not
                // be `Default`.
                Share::Scalar(op) => t.operand(self, op).unwrap_or_else(|| self.lit("0.0")),
                Share::Array(v) if t.need[v.0] => {
                    let d = t.dot(self, *v);
                    wrap(&d, None)
                }
                Share::Slice(v, range) if t.need[v.0] => {
                    let d = t.dot(self, *v);
                    wrap(&d, Some(&range.tokens))
                }
                _ => none.clone(),
            })
            .collect()
    }

    /// In the tangent program: `dst = g(args); t_dst = g_dot(args, tangents)`,
    /// two calls of differentiated functions, as the lowering reads them. A
    /// tangent that is zero (or an argument that has none) is
    /// `Default::default()`: `0.0`, `()`, or an empty slice, which `g_dot`
    /// reads as zeros.
    fn dot_call(&mut self, c: &Call, t: &mut Tangents) -> TokenStream {
        let (func, dot) = (&c.func, &c.dot);
        let args: Vec<TokenStream> = c.args.iter().map(|a| a.value.tokens.clone()).collect();
        let tangents = self.call_tangents(c, t, |d, range| match range {
            Some(r) => quote!(&#d[#r]),
            None => quote!(&#d),
        });
        let set = self.assign(c.dst, c.write, quote!(), quote!(#func(#(#args),*)));
        let set_dot = self.assign_dot(c.dst, c.write, quote!(#dot(#(#args,)* #(#tangents),*)), t);
        quote!(#set #set_dot)
    }
}

/// The tangents of one function: their names, and which are needed at all.
struct Tangents {
    dots: HashMap<VarId, Ident>,
    need: Vec<bool>,
}

impl Tangents {
    fn dot(&mut self, e: &mut Emitter, v: VarId) -> Ident {
        if let Some(d) = self.dots.get(&v) {
            return d.clone();
        }
        let d = e.names.fresh(&format!("t_{}", e.f.var(v).ident));
        self.dots.insert(v, d.clone());
        d
    }

    /// An operand's tangent; `None` for a constant.
    /// With lanes, the tangent of the lane being computed.
    fn operand(&mut self, e: &mut Emitter, a: &Operand) -> Option<TokenStream> {
        let whole = self.whole(e, a)?;
        Some(match &e.lanes {
            Some((_, l)) => quote!(#whole[#l]),
            None => whole,
        })
    }

    /// An operand's tangent, every lane of it.
    fn whole(&mut self, e: &mut Emitter, a: &Operand) -> Option<TokenStream> {
        Some(match a {
            Operand::Var(v) if self.need[v.0] => {
                let d = self.dot(e, *v);
                quote!(#d)
            }
            Operand::Elem(arr, i) if self.need[arr.0] => {
                let d = self.dot(e, *arr);
                let i = &i.tokens;
                quote!(#d[#i])
            }
            _ => return None,
        })
    }
}

/// Which variables' tangents the tangent of `out` depends on: from `out`
/// backwards along every flow, until nothing changes.
fn tangent_needs(f: &Func, out: VarId) -> Vec<bool> {
    let mut need = vec![false; f.vars.len()];
    if f.is_active(out) {
        need[out.0] = true;
    }
    loop {
        let mut changed = false;
        let mut mark = |v: Option<VarId>, need: &mut Vec<bool>| {
            if let Some(v) = v {
                if f.is_active(v) && !need[v.0] {
                    need[v.0] = true;
                    changed = true;
                }
            }
        };
        walk(&f.body, &mut |s| match s {
            Stmt::Step(st) if need[st.dst.0] => {
                for a in &st.args {
                    mark(a.var(), &mut need);
                }
            }
            Stmt::Store(st) if need[st.arr.0] => mark(st.value.var(), &mut need),
            Stmt::Push(p) if need[p.arr.0] => mark(p.value.var(), &mut need),
            Stmt::Reduce(r) if need[r.dst.0] => mark(Some(r.arr), &mut need),
            Stmt::Call(c) if need[c.dst.0] => {
                for a in &c.args {
                    mark(a.target(), &mut need);
                }
            }
            _ => {}
        });
        if !changed {
            return need;
        }
    }
}

/// `f_tangent(args.., t_a, t_b, ..)` over the tangent core of `f`, and
/// `f_pushforward`, what differentiated callers in forward mode call, over
/// the core of `all` (every float parameter differentiable; where that could
/// not be lowered, `f`'s, and a nonzero tangent for a parameter whose
/// derivatives are unavailable gives a NaN tangent).
pub(super) fn tangent_wrappers(
    f: &Func,
    (all, unavailable): (&Func, &[bool]),
    names: &crate::names::Names,
    user: &syn::ItemFn,
    receiver: Option<&syn::Receiver>,
    (core, all_core): (&TokenStream, &TokenStream),
) -> TokenStream {
    let vis = &user.vis;
    let name = &user.sig.ident;
    let ty = super::float_ty(&f.float);
    let link = super::wrappers::doc_link(name, receiver);
    let (params, args) = super::wrappers::params_and_args(f, receiver);

    let mut own = names.clone();
    let mut t_params = Vec::new();
    let mut checks = Vec::new();
    let mut slots = Vec::new();
    let mut listed = Vec::new();
    for p in &f.params {
        if p.var.is_none() {
            slots.push(quote!(()));
            continue;
        }
        let x = &p.ident;
        let d = own.fresh(&format!("t_{x}"));
        listed.push(format!("`{d}`"));
        if p.shape.is_array() {
            t_params.push(quote!(#d: &[#ty]));
            let msg = format!(
                "{name}_tangent: the tangent `{d}` has length {{}} but the parameter `{x}` has length {{}}"
            );
            checks.push(quote!(::core::assert!(#d.len() == #x.len(), #msg, #d.len(), #x.len());));
        } else {
            t_params.push(quote!(#d: #ty));
        }
        slots.push(quote!(#d));
    }

    let mut pf = names.clone();
    let (all_params, all_args) = super::wrappers::params_and_args(all, receiver);
    let mut pf_slots = Vec::new();
    let mut pf_args = Vec::new();
    let mut bind = Vec::new();
    let mut poison = Vec::new();
    for (i, p) in all.params.iter().enumerate() {
        let x = &p.ident;
        let lost = unavailable.get(i) == Some(&true);
        if p.var.is_none() && !lost {
            pf_slots.push(quote!(_: ()));
            pf_args.push(quote!(()));
            continue;
        }
        let d = pf.fresh(&format!("t_{x}"));
        if p.shape.is_array() {
            pf_slots.push(quote!(#d: ::core::option::Option<&[#ty]>));
        } else {
            pf_slots.push(quote!(#d: #ty));
        }
        if lost {
            pf_args.push(quote!(()));
            let zero = crate::generic::lit(&ty, "0.0");
            poison.push(if p.shape.is_array() {
                quote!(#d.is_some_and(|t| t.iter().any(|&v| v != #zero)))
            } else {
                quote!(#d != #zero)
            });
            continue;
        }
        if p.shape.is_array() {
            let zeros = pf.fresh(&format!("{d}_zeros"));
            bind.push(zeros_for_none(&d, &zeros, x, &ty));
        }
        pf_args.push(quote!(#d));
    }
    let result = pf.fresh("result");
    let nan = crate::generic::nan(&ty);
    let finish = if poison.is_empty() {
        quote!(#all_core(#(#all_args,)* #(#pf_args),*))
    } else {
        quote! {
            let #result = #all_core(#(#all_args,)* #(#pf_args),*);
            if #(#poison)||* {
                (#result.0, #nan)
            } else {
                #result
            }
        }
    };

    let tangent_name = format_ident!("{name}_tangent");
    let pushforward_name = format_ident!("{name}_pushforward");
    let doc = format!(
        " Value and directional derivative of {link} (forward mode): returns `({name}(..), d)`, `d` being the derivative along the tangents {} (one per differentiable parameter).",
        listed.join(", ")
    );
    let doc_panics = " Panics if a tangent's length differs from its parameter's.";
    let pf_doc = format!(
        " Pushforward of {link} for differentiated callers in forward mode: a tangent for every float parameter (`None` or `0.0`: zero)."
    );
    let many = super::many_args(params.len() + t_params.len());
    let many_pf = super::many_args(all_params.len() + pf_slots.len());
    let ptr = super::vec_refs(f);
    let ptr_all = super::vec_refs(all);
    let generated = " Generated by `#[differentiate(tangent)]`.";
    let (gp, wc) = (&f.generics.params, &f.generics.where_clause);
    quote! {
        #[doc = #doc]
        #[doc = ""]
        #[doc = " The value is bit-identical to the function's."]
        #[doc = #doc_panics]
        #[doc = #generated]
        #[inline]
        #many
        #ptr
        #vis fn #tangent_name #gp(#(#params,)* #(#t_params),*) -> (#ty, #ty) #wc {
            #(#checks)*
            #core(#(#args,)* #(#slots),*)
        }
        #[doc = #pf_doc]
        #[doc(hidden)]
        #[inline]
        #many_pf
        #ptr_all
        #vis fn #pushforward_name #gp(#(#all_params,)* #(#pf_slots),*) -> (#ty, #ty) #wc {
            #(#bind)*
            #finish
        }
    }
}

/// `::std::vec![..]` written `vec![..]` and `::std::vec::Vec` written `Vec`,
/// the spellings the lowering reads.
fn plain_vec(tokens: TokenStream) -> TokenStream {
    use proc_macro2::TokenTree;
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::with_capacity(tts.len());
    let mut i = 0;
    while i < tts.len() {
        let is = |k: usize, s: &str| match tts.get(i + k) {
            Some(TokenTree::Punct(p)) => {
                s.len() == 1 && p.as_char() == s.chars().next().unwrap_or(' ')
            }
            Some(TokenTree::Ident(id)) => *id == s,
            _ => false,
        };
        // `::std::vec!` is `:` `:` `std` `:` `:` `vec` `!`
        let std_vec =
            is(0, ":") && is(1, ":") && is(2, "std") && is(3, ":") && is(4, ":") && is(5, "vec");
        if std_vec && is(6, "!") {
            out.push(tts[i + 5].clone());
            i += 6;
            continue;
        }
        // `::std::vec::Vec` is `Vec`, the type the lowering knows as an array.
        if std_vec && is(6, ":") && is(7, ":") && is(8, "Vec") {
            out.push(tts[i + 8].clone());
            i += 9;
            continue;
        }
        out.push(match &tts[i] {
            TokenTree::Group(g) => {
                let mut ng = proc_macro2::Group::new(g.delimiter(), plain_vec(g.stream()));
                ng.set_span(g.span());
                TokenTree::Group(ng)
            }
            other => other.clone(),
        });
        i += 1;
    }
    out.into_iter().collect()
}

/// Binds `t: &[ty]` from a slot `t: Option<&[ty]>`, zeros (as long as `x`)
/// for `None`: a caller without a tangent for that argument.
pub(crate) fn zeros_for_none(t: &Ident, zeros: &Ident, x: &Ident, ty: &TokenStream) -> TokenStream {
    let zero = crate::generic::lit(ty, "0.0");
    quote! {
        let #zeros: ::std::vec::Vec<#ty>;
        let #t: &[#ty] = match #t {
            ::core::option::Option::Some(t) => t,
            ::core::option::Option::None => {
                #zeros = ::std::vec![#zero; #x.len()];
                &#zeros
            }
        };
    }
}
