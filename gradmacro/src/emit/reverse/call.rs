//! A call of a differentiated function backwards: through the callee's
//! pullback, each argument's adjoint lent to it as a slot.

use crate::emit::Emitter;
use crate::ir::*;
use proc_macro2::TokenStream;
use quote::quote;

impl Emitter<'_> {
    /// `y = g(a, b)` backwards: `g_pullback` adds each argument's share into
    /// the slot the caller passes for it (`Some(&mut ..)`, or
    /// `Default::default()` where the caller needs nothing).
    pub(super) fn rev_call(&mut self, c: &Call) -> Vec<TokenStream> {
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
}
