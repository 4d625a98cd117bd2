//! Calls of differentiated functions in forward mode: through the callee's
//! pushforward, or in the tangent program through its `dot`.

use super::Tangents;
use crate::emit::Emitter;
use crate::ir::*;
use proc_macro2::{Ident, TokenStream};
use quote::quote;

impl Emitter<'_> {
    /// `dst = g(args)`: value and tangent from `g_pushforward`, which takes a
    /// tangent for every float argument (`Default::default()`: zero).
    pub(super) fn tan_call(&mut self, c: &Call, t: &mut Tangents) -> TokenStream {
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
                shape => crate::emit::entry_ty(shape, &self.ty),
            };
            quote!(let (#m #dst, #m #d): (#ty, #ty) = #call;)
        } else {
            quote!((#dst, #d) = #call;)
        }
    }

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
