//! The core: one function holding the forward and the reverse sweep, with a
//! slot per parameter for its share of the gradient; every reverse-mode entry
//! point is a thin wrapper over it.

use super::{fuse, many_args, vec_refs, wrappers, Emitter};
use proc_macro2::{Ident, TokenStream, TokenTree};
use quote::{format_ident, quote};
use std::collections::HashMap;

impl Emitter<'_> {
    /// The core: the user's parameters, the seed, then one slot per parameter
    /// (`Option<&mut f64>`, `Option<&mut [f64]>`, or `()` for a constant, so
    /// a caller can pass `Default::default()` for any argument it needs
    /// nothing from). Returns the value.
    pub(super) fn core(
        mut self,
        name: &Ident,
        vis: &syn::Visibility,
        (user_fn, receiver): (&TokenStream, Option<&syn::Receiver>),
    ) -> TokenStream {
        let ty = self.ty.clone();
        let mut slot_names = HashMap::new();
        for v in self.f.wrt().collect::<Vec<_>>() {
            let d = if v == self.f.output {
                self.names.adjoint(&self.f.var(v).ident)
            } else {
                self.adj(v)
            };
            slot_names.insert(v, d.clone());
            // Arrays, and scalars the reverse sweep never rewinds, accumulate
            // straight into the lent slot; the others into a local, added to
            // the slot at the end.
            let var = self.f.var(v);
            let direct = var.shape.is_array()
                || !var.reassigned && !self.a.restored[v.0] && v != self.f.output;
            if direct {
                self.buffers.insert(v);
            } else {
                let local = self.names.fresh(&format!("{d}_local"));
                self.adjoints.insert(v, local);
            }
        }
        self.fused = fuse::fused_loop(self.f, self.a, &self.buffers);
        // Reverse first: it decides what the forward sweep must record.
        let reverse = self.reverse_function();
        let forward = self.forward_function();
        let mut hoisted = self.hoisted_decls();
        if self.compact {
            let values: Vec<(Ident, bool)> = self
                .compact_values
                .iter()
                .map(|&v| (self.var(v), self.a.mutable(self.f, v)))
                .collect();
            let adjoints: Vec<(Ident, bool)> = self
                .compact_adjoints
                .clone()
                .into_iter()
                .map(|v| (self.adj(v), self.written.contains(&v)))
                .collect();
            hoisted.extend(grouped_lets(&values, &ty, false));
            hoisted.extend(grouped_lets(&adjoints, &ty, true));
        }
        let seed = self.seed.clone();
        let seed_param = if self.a.adj[self.f.output.0] {
            let m = if self.written.contains(&self.f.output) {
                quote!(mut)
            } else {
                quote!()
            };
            quote!(#m #seed: #ty)
        } else {
            let i = format_ident!("_{}", seed);
            quote!(#i: #ty)
        };
        let mut out = self.var(self.f.output);
        let mut capture = quote!();
        if self.a.restored[self.f.output.0] {
            // The reverse sweep rewinds the output variable: keep the value.
            let value = self.names.fresh("value");
            capture = quote!(let #value = #out;);
            out = value;
        }

        let mut slots = Vec::new();
        let mut bind = Vec::new();
        let mut finish = Vec::new();
        let zero = self.lit("0.0");
        for p in &self.f.params {
            let Some(v) = p.var else {
                slots.push(quote!(_: ()));
                continue;
            };
            let d = slot_names[&v].clone();
            let slot_ty = wrappers::slot_ty(&p.shape, &ty);
            if !self.a.adj[v.0] {
                let i = format_ident!("_{}", d);
                slots.push(quote!(#i: #slot_ty));
                continue;
            }
            slots.push(quote!(#d: #slot_ty));
            if p.shape.is_array() {
                // expands to something like
                //     let mut d_w_own: Vec<f64>;
                //     let d_w: &mut [f64] = match d_w { Some(b) => b, None => { .. } };
                let own = self.names.fresh(&format!("{d}_own"));
                let x = self.var(v);
                // Sliced to the parameter's length, so that the optimiser
                // knows both lengths are equal and drops bounds checks.
                // The binding is named afresh: a parameter may be `b`.
                let lent = self.names.fresh("lent");
                bind.push(quote! {
                    let mut #own: ::std::vec::Vec<#ty>;
                    let #d: &mut [#ty] = match #d {
                        ::core::option::Option::Some(#lent) => &mut #lent[..#x.len()],
                        ::core::option::Option::None => {
                            #own = ::std::vec![#zero; #x.len()];
                            &mut #own
                        }
                    };
                });
            } else if self.buffers.contains(&v) {
                let own = self.names.fresh(&format!("{d}_own"));
                bind.push(quote! {
                    let mut #own: #ty = #zero;
                    let #d: &mut #ty = #d.unwrap_or(&mut #own);
                });
            } else {
                let local = self.adj(v);
                let add = self.update(quote!(*b), "+=", &local);
                finish.push(quote! {
                    if let ::core::option::Option::Some(b) = #d {
                        #add
                    }
                });
            }
        }
        let (ret, out, capture) = if self.f.value_unused {
            (quote!(), quote!(), quote!())
        } else {
            (quote!(-> #ty), quote!(#out), capture)
        };
        // The forward sweep first: it names the parameters early, so the
        // search for unmentioned ones usually stops within its first lines.
        let mut body = vec![forward, hoisted, capture, reverse, out];
        let mut params = self.params(&mut body);
        if let Some(r) = receiver {
            params.insert(0, quote!(#r));
        }
        let allow = many_args(params.len() + 1 + slots.len());
        let ptr = vec_refs(self.f);
        let (gp, wc) = (&self.f.generics.params, &self.f.generics.where_clause);
        let [forward, hoisted, capture, reverse, out]: [TokenStream; 5] =
            body.try_into().expect("five parts");
        // What uses the generated functions uses the function too.
        let head = quote!(let _ = #user_fn;);
        let body = super::operands::braced(
            std::iter::once(head)
                .chain(bind)
                .chain([hoisted, forward, capture, reverse])
                .chain(finish)
                .chain([out]),
        );
        quote! {
            #[inline]
            #allow
            #ptr
            #vis fn #name #gp(#(#params,)* #seed_param, #(#slots),*) #ret #wc #body
        }
    }

    /// The user's parameters, renamed `_x` where the body does not mention
    /// them and `mut` where the reverse sweep rewinds them.
    fn params(&self, body: &mut [TokenStream]) -> Vec<TokenStream> {
        let mut unseen: Vec<String> = self.f.params.iter().map(|p| p.ident.to_string()).collect();
        for part in body {
            *part = strike_mentioned(std::mem::take(part), &mut unseen);
        }
        let mut out = Vec::new();
        for p in &self.f.params {
            let ident = &p.ident;
            let ty = &p.ty;
            let used = !unseen.contains(&ident.to_string())
                || p.shape.is_array() && p.var.is_some_and(|v| self.a.adj[v.0]);
            let mutable = self.f.var(p.id).reassigned || self.a.restored[p.id.0];
            out.push(match (used, mutable) {
                (false, _) => {
                    let i = format_ident!("_{}", ident);
                    quote!(#i: #ty)
                }
                (true, true) => quote!(mut #ident: #ty),
                (true, false) => quote!(#ident: #ty),
            });
        }
        out
    }
}

/// Removes from `unseen` the names `ts` mentions, and gives `ts` back; looks
/// no further once none is left (usually within the first statements: the
/// body is long). Takes the tokens by value: walking a copy would copy them
/// all first.
pub(super) fn strike_mentioned(ts: TokenStream, unseen: &mut Vec<String>) -> TokenStream {
    if unseen.is_empty() {
        return ts;
    }
    let mut seen = Vec::new();
    let mut rest = ts.into_iter();
    for tt in rest.by_ref() {
        match &tt {
            TokenTree::Ident(i) => unseen.retain(|n| i != n),
            TokenTree::Group(g) => {
                strike_mentioned(g.stream(), unseen);
            }
            _ => {}
        }
        seen.push(tt);
        if unseen.is_empty() {
            break;
        }
    }
    seen.into_iter().chain(rest).collect()
}

/// Declares `vars` a few dozen to a `let`: `let (a, mut b): (f64, f64);`, or
/// with `= (0.0, 0.0)` when `zero`.
fn grouped_lets(vars: &[(Ident, bool)], ty: &TokenStream, zero: bool) -> TokenStream {
    vars.chunks(32)
        .map(|chunk| {
            let pats = chunk
                .iter()
                .map(|(i, m)| if *m { quote!(mut #i) } else { quote!(#i) });
            let tys = chunk.iter().map(|_| ty);
            if zero {
                let zeros = chunk.iter().map(|_| crate::generic::lit(ty, "0.0"));
                quote!(let (#(#pats,)*): (#(#tys,)*) = (#(#zeros,)*);)
            } else {
                quote!(let (#(#pats,)*): (#(#tys,)*);)
            }
        })
        .collect()
}
