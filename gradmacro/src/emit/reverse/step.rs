//! A primitive step and an element store backwards: the adjoint of what they
//! wrote, times each partial, into each operand's adjoint.

use crate::emit::Emitter;
use crate::ir::*;
use crate::rules::Partial;
use proc_macro2::TokenStream;
use quote::quote;

impl Emitter<'_> {
    pub(super) fn rev_step(&mut self, st: &Step) -> Vec<TokenStream> {
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
    pub(super) fn contribution_target(&mut self, a: &Operand) -> Option<TokenStream> {
        if !a.var().is_some_and(|v| self.a.adj[v.0]) {
            return None;
        }
        self.adj_place(a)
    }

    /// `arr[i] op= value` backwards: the value's adjoint takes the element's;
    /// a plain store also clears it and puts the old element back.
    pub(super) fn rev_store(&mut self, st: &Store) -> Vec<TokenStream> {
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
        if self.a.saves_element(st) {
            let key = st.id;
            let old = self.restore_value(st.arr, key, st.ctx);
            out.push(quote!(#arr[#i] = #old;));
        }
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
}
