//! Forward mode: the user's computation in the user's order (so the value is
//! bit-identical), each differentiated value's tangent computed beside it from
//! the same partial derivatives the reverse sweep uses
//! ([`Prim::tangent_terms`](crate::rules::Prim::tangent_terms)).
//! Nothing is recorded: a tangent is gone once its value is.
//!
//! This file holds the tangent core and what every statement's tangent is
//! made with; the statements, the calls, the tangent program and the public
//! wrappers are its children.

mod calls;
mod program;
mod stmt;
mod wrappers;

pub(super) use wrappers::tangent_wrappers;
pub(crate) use wrappers::zeros_for_none;

use super::Emitter;
use crate::analysis::walk;
use crate::ir::*;
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
        let body = super::core_fn::strike_mentioned(body, &mut unseen);
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
                    let rhs = super::operands::unparen(self.operand(other, false));
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
