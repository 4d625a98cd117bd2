//! What differentiated callers of a function returning an array call:
//! `f_pullback` (`Jᵀ·d_out` into their slots) and, with `tangent`,
//! `f_pushforward` (`J·t`). Callers need every float argument's share, so
//! with `wrt(..)` these run over cores of their own.

use super::{named, Named};
use crate::emit;
use crate::ir::{Func, VarId};
use crate::names::Names;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};

/// `f_pullback(args.., d_out: &[f64], slots..)` and `f_pushforward(args..,
/// tangents..) -> (out, J·t)`, what differentiated callers of `f` call, over
/// cores of `g` (every float parameter differentiable): new ones made from
/// `own`, else those of `generate`. Without `tangent`, no forward mode:
/// its cores would call the forward mode of every function `f` calls.
pub(super) fn for_callers(
    user: &syn::ItemFn,
    g: &Func,
    own: Option<(Names, VarId)>,
    receiver: Option<&syn::Receiver>,
    tangent: bool,
) -> TokenStream {
    let (vis, name) = (&user.vis, &user.sig.ident);
    let ty = emit::float_ty(&g.float);
    let Named { ret, this, user_fn } = named(user, g, receiver);
    let (one, gp, wc) = (
        crate::generic::lit(&ty, "1.0"),
        &g.generics.params,
        &g.generics.where_clause,
    );
    let suffix = if own.is_some() { "_all" } else { "" };
    let (vjp_name, jvp_name) = (
        format_ident!("__{name}_vjp_core{suffix}"),
        format_ident!("__{name}_jvp_core{suffix}"),
    );
    let cores = match own {
        Some((names, out)) => {
            // The pullback returns nothing: its core computes only what the
            // reverse sweep reads.
            let mut quiet = g.clone();
            quiet.value_unused = true;
            let vjp = emit::private_core(&quiet, names.clone(), &vjp_name, (&user_fn, receiver));
            if tangent {
                let jvp = emit::jvp_core(
                    g,
                    names,
                    &jvp_name,
                    (&user_fn, receiver),
                    (out, &ret),
                    false,
                );
                quote!(#vjp #jvp)
            } else {
                vjp
            }
        }
        None => quote!(),
    };
    let (vjp, jvp) = (quote!(#this #vjp_name), quote!(#this #jvp_name));
    let mut n = Names::avoiding(user.to_token_stream());
    let d_out = n.fresh("d_out");
    let mut params: Vec<TokenStream> = receiver.iter().map(|r| quote!(#r)).collect();
    let self_arg: Vec<TokenStream> = receiver.iter().map(|_| quote!(self)).collect();
    let (mut xs, mut slots, mut slot_args, mut t_slots, mut t_args, mut bind) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for p in &g.params[..g.params.len() - 2] {
        let (x, pt) = (&p.ident, &p.ty);
        params.push(quote!(#x: #pt));
        xs.push(quote!(#x));
        if p.var.is_none() {
            slots.push(quote!(_: ()));
            slot_args.push(quote!(()));
            t_slots.push(quote!(_: ()));
            t_args.push(quote!(()));
            continue;
        }
        let (d, t) = (n.fresh(&format!("d_{x}")), n.fresh(&format!("t_{x}")));
        let slot = emit::slot_ty(&p.shape, &ty);
        slots.push(quote!(#d: #slot));
        slot_args.push(quote!(#d));
        if p.shape.is_array() {
            t_slots.push(quote!(#t: ::core::option::Option<&[#ty]>));
            let zeros = n.fresh(&format!("{t}_zeros"));
            bind.push(crate::emit::zeros_for_none(&t, &zeros, x, &ty));
        } else {
            t_slots.push(quote!(#t: #ty));
        }
        t_args.push(quote!(#t));
    }
    let many = emit::many_args(params.len() * 2 + 1);
    let (pullback, pushforward) = (
        format_ident!("{name}_pullback"),
        format_ident!("{name}_pushforward"),
    );
    let pushforward = if tangent {
        quote! {
            #[doc = " Value and Jacobian-vector product for differentiated callers in forward mode (`None` or `0.0`: a zero tangent)."]
            #[doc(hidden)]
            #[inline]
            #many
            #vis fn #pushforward #gp(#(#params,)* #(#t_slots),*) -> (#ret, #ret) #wc {
                #(#bind)*
                #jvp(#(#self_arg,)* #(#xs,)* &[], false, #(#t_args,)* (), ())
            }
        }
    } else {
        quote!()
    };
    quote! {
        #[doc = " Vector-Jacobian product for differentiated callers: adds `Jᵀ·d_out` into the slots lent for the arguments."]
        #[doc(hidden)]
        #[inline]
        #many
        #vis fn #pullback #gp(#(#params,)* #d_out: &[#ty], #(#slots),*) #wc {
            #vjp(#(#self_arg,)* #(#xs,)* #d_out, true, #one, #(#slot_args,)* (), ());
        }
        #pushforward
        #cores
    }
}
