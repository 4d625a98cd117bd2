//! The public functions of a function returning an array: `f_adjoint`,
//! `f_adjoint_acc`, `f_jacobian` (by columns in forward mode or by rows in
//! reverse mode) and, with `tangent`, `f_tangent`.

use super::{calls_any, named, Named};
use crate::emit;
use crate::ir::{Func, Shape, VarId};
use crate::names::Names;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};

/// `f_adjoint`, `f_adjoint_acc`, `f_jacobian` (and `f_tangent`) over the
/// cores of the rewritten function.
pub(super) fn generate(
    user: &syn::ItemFn,
    g: &Func,
    names: Names,
    out: VarId,
    receiver: Option<&syn::Receiver>,
    tangent: bool,
) -> TokenStream {
    let name = &user.sig.ident;
    let vis = &user.vis;
    let ty = emit::float_ty(&g.float);
    let Named { ret, this, user_fn } = named(user, g, receiver);
    let (zero, one) = (
        crate::generic::lit(&ty, "0.0"),
        crate::generic::lit(&ty, "1.0"),
    );
    let (gp, wc) = (&g.generics.params, &g.generics.where_clause);
    let (vjp_name, jvp_name) = (
        format_ident!("__{name}_vjp_core"),
        format_ident!("__{name}_jvp_core"),
    );
    let vjp_core = emit::private_core(g, names.clone(), &vjp_name, (&user_fn, receiver));
    let calls = calls_any(g);
    let forward = tangent || !calls;
    let jvp_core = forward.then(|| {
        emit::jvp_core(
            g,
            names.clone(),
            &jvp_name,
            (&user_fn, receiver),
            (out, &ret),
            false,
        )
    });
    let (vjp, jvp) = (quote!(#this #vjp_name), quote!(#this #jvp_name));
    // The Jacobian's columns, `LANES` to a pass; a callee's pushforward
    // carries one tangent, so a function with calls takes one per pass.
    let lanes_name = format_ident!("__{name}_jvp_lanes_core");
    let (lanes_core, lanes) = if !forward || calls {
        (quote!(), None)
    } else {
        let core = emit::jvp_core(
            g,
            names,
            &lanes_name,
            (&user_fn, receiver),
            (out, &ret),
            true,
        );
        (core, Some(quote!(#this #lanes_name)))
    };

    let mut n = Names::avoiding(user.to_token_stream());
    let (d_out, value, jac, t, wv, m, cols, j, i, col, row) = (
        n.fresh("d_out"),
        n.fresh("value"),
        n.fresh("jacobian"),
        n.fresh("t"),
        n.fresh("w"),
        n.fresh("m"),
        n.fresh("n"),
        n.fresh("j"),
        n.fresh("i"),
        n.fresh("column"),
        n.fresh("row"),
    );
    let user_params: Vec<&crate::ir::Param> = g.params[..g.params.len() - 2].iter().collect();
    let mut params: Vec<TokenStream> = receiver.iter().map(|r| quote!(#r)).collect();
    let self_arg: Vec<TokenStream> = receiver.iter().map(|_| quote!(self)).collect();
    let mut xs = Vec::new();
    for p in &user_params {
        let (x, pt) = (&p.ident, &p.ty);
        params.push(quote!(#x: #pt));
        xs.push(quote!(#x));
    }
    let value_call = match receiver {
        Some(_) => quote!(self.#name(#(#xs),*)),
        None => quote!(#name(#(#xs),*)),
    };

    // Per differentiable parameter: its gradient entry, buffer, tangent and
    // place in the flattened columns.
    let mut zeros = Vec::new();
    let mut own_slots = Vec::new();
    let mut acc_slots = Vec::new();
    let mut buffers = Vec::new();
    let mut checks = Vec::new();
    let mut grads = Vec::new();
    let mut grad_tys = Vec::new();
    let mut t_params = Vec::new();
    let mut t_checks = Vec::new();
    let mut t_slots = Vec::new();
    let mut col_t = Vec::new();
    let mut row_split = Vec::new();
    let mut row_slots = Vec::new();
    let mut sizes = Vec::new();
    let mut offset: Option<TokenStream> = None;
    let rest = n.fresh("rest");
    for p in &user_params {
        let x = &p.ident;
        if p.var.is_none() {
            for s in [
                &mut own_slots,
                &mut acc_slots,
                &mut t_slots,
                &mut col_t,
                &mut row_slots,
            ] {
                s.push(quote!(()));
            }
            continue;
        }
        let d = n.fresh(&format!("d_{x}"));
        let tx = n.fresh(&format!("t_{x}"));
        let part = n.fresh(&format!("row_{x}"));
        let len = match p.shape {
            Shape::Scalar => quote!(1),
            Shape::Array { .. } => quote!(#x.len()),
        };
        sizes.push(len.clone());
        let start = offset.clone().unwrap_or_else(|| quote!(0));
        let end = match &offset {
            Some(o) => quote!(#o + #len),
            None => len.clone(),
        };
        row_split.push(quote!(let (#part, #rest) = #rest.split_at_mut(#len);));
        grad_tys.push(emit::entry_ty(&p.shape, &ty));
        grads.push(quote!(#d));
        match &p.shape {
            Shape::Scalar => {
                zeros.push(quote!(let mut #d: #ty = #zero;));
                own_slots.push(quote!(::core::option::Option::Some(&mut #d)));
                buffers.push(quote!(#d: &mut #ty));
                t_params.push(quote!(#tx: #ty));
                col_t.push(quote!(#t[#start]));
                row_slots.push(quote!(::core::option::Option::Some(&mut #part[0])));
            }
            Shape::Array { len: fixed } => {
                zeros.push(match fixed {
                    Some(k) => quote!(let mut #d: [#ty; #k] = [#zero; #k];),
                    None => {
                        quote!(let mut #d: ::std::vec::Vec<#ty> = ::std::vec![#zero; #x.len()];)
                    }
                });
                own_slots.push(quote!(::core::option::Option::Some(&mut #d[..])));
                buffers.push(quote!(#d: &mut [#ty]));
                let msg = format!("{name}_adjoint_acc: the buffer `{d}` has length {{}} but the parameter `{x}` has length {{}}");
                checks
                    .push(quote!(::core::assert!(#d.len() == #x.len(), #msg, #d.len(), #x.len());));
                t_params.push(quote!(#tx: &[#ty]));
                let msg = format!("{name}_tangent: the tangent `{tx}` has length {{}} but the parameter `{x}` has length {{}}");
                t_checks.push(
                    quote!(::core::assert!(#tx.len() == #x.len(), #msg, #tx.len(), #x.len());),
                );
                col_t.push(quote!(&#t[#start..#end]));
                row_slots.push(quote!(::core::option::Option::Some(#part)));
            }
        }
        acc_slots.push(quote!(::core::option::Option::Some(#d)));
        t_slots.push(quote!(#tx));
        offset = Some(end);
    }
    let (grad, grad_ty) = if grads.len() == 1 {
        (quote!(#(#grads)*), quote!(#(#grad_tys)*))
    } else {
        (quote!((#(#grads),*)), quote!((#(#grad_tys),*)))
    };
    let total = if sizes.is_empty() {
        quote!(0)
    } else {
        quote!(#(#sizes)+*)
    };
    let link = emit::doc_link(name, receiver);
    let many = |k: usize| emit::many_args(k);
    let (many_adj, many_acc, many_jac, many_t) = (
        many(params.len() + 1),
        many(params.len() + 1 + buffers.len()),
        many(params.len()),
        many(params.len() + t_params.len()),
    );
    let adjoint = format_ident!("{name}_adjoint");
    let acc = format_ident!("{name}_adjoint_acc");
    let jacobian = format_ident!("{name}_jacobian");
    let tangent_name = format_ident!("{name}_tangent");
    let adj_doc = format!(" Vector-Jacobian product of {link}: returns `Jᵀ·d_out`, shaped as the differentiable parameters (one entry each). Panics if `d_out`'s length is not the output's.");
    let acc_doc = format!(" Vector-Jacobian product of {link}, accumulated: ADDS `Jᵀ·d_out` into the buffers, one per differentiable parameter. Panics if a length differs.");
    let jac_doc = format!(" Value and Jacobian of {link}: `jacobian[i][j]` is the derivative of output `i` with respect to the `j`-th differentiable parameter, flattened in order (a scalar is one column, an array its elements). {}", if forward { "Computed by columns in forward mode when there are no more columns than outputs, else by rows in reverse mode." } else { "Computed by rows in reverse mode (forward mode through its calls needs `tangent`)." });
    let tangent_fn = if tangent {
        let doc = format!(" Value and Jacobian-vector product of {link} (forward mode): returns `({name}(..), J·t)`, one tangent per differentiable parameter. Panics if a tangent's length differs from its parameter's.");
        quote! {
            #[doc = #doc]
            #[doc = " Generated by `#[differentiate(tangent)]`."]
            #[inline]
            #many_t
            #vis fn #tangent_name #gp(#(#params,)* #(#t_params),*) -> (#ret, #ret) #wc {
                #(#t_checks)*
                #jvp(#(#self_arg,)* #(#xs,)* &[], false, #(#t_slots,)* (), ())
            }
        }
    } else {
        quote!()
    };
    let by_columns = match &lanes {
        Some(core) => {
            let (width, lane, k) = (
                n.fresh("width"),
                n.fresh("lane"),
                proc_macro2::Literal::usize_unsuffixed(emit::LANES),
            );
            let seed = |x: &TokenStream| {
                quote! {
                    for #lane in 0..#width {
                        #t[#j + #lane][#lane] = #x;
                    }
                }
            };
            let (seed, unseed) = (seed(&one), seed(&zero));
            let by_columns = quote! {
                let mut #t = ::std::vec![[#zero; #k]; #cols];
                for #j in (0..#cols).step_by(#k) {
                    let #width = #k.min(#cols - #j);
                    #seed
                    let (_, #col) = #core(#(#self_arg,)* #(#xs,)* &[], false, #(#col_t,)* (), ());
                    for (#row, #i) in #jac.iter_mut().zip(#col.iter()) {
                        #row[#j..#j + #width].copy_from_slice(&#i[..#width]);
                    }
                    #unseed
                }
            };
            by_columns
        }
        None => quote! {
            let mut #t = ::std::vec![#zero; #cols];
            for #j in 0..#cols {
                #t[#j] = #one;
                let (_, #col) = #jvp(#(#self_arg,)* #(#xs,)* &[], false, #(#col_t,)* (), ());
                for (#row, #i) in #jac.iter_mut().zip(#col.iter()) {
                    #row[#j] = *#i;
                }
                #t[#j] = #zero;
            }
        },
    };
    let by_rows = quote! {
        let mut #wv = ::std::vec![#zero; #m];
        for (#i, #row) in #jac.iter_mut().enumerate() {
            #wv[#i] = #one;
            let #rest = &mut #row[..];
            #(#row_split)*
            let _ = #rest;
            #vjp(#(#self_arg,)* #(#xs,)* &#wv, true, #one, #(#row_slots,)* (), ());
            #wv[#i] = #zero;
        }
    };
    let fill = if forward {
        quote! {
            if #cols <= #m {
                #by_columns
            } else {
                #by_rows
            }
        }
    } else {
        by_rows
    };
    let generated = " Generated by `#[differentiate]`.";
    let message = format!(
        "`{name}` returns an array: a function with `hessian` cannot call it yet; compute its outputs inline"
    );
    let placeholders = emit::placeholders(
        user,
        receiver,
        "returns_an_array",
        (&message, "called here by a function with `hessian`"),
        &[
            ("dot", (2, 0), quote!(#ty)),
            ("dot_pullback", (4, 1), quote!()),
        ],
    );
    quote! {
        #placeholders
        #[doc = #adj_doc]
        #[doc = #generated]
        #[inline]
        #many_adj
        #vis fn #adjoint #gp(#(#params,)* #d_out: &[#ty]) -> #grad_ty #wc {
            #(#zeros)*
            #vjp(#(#self_arg,)* #(#xs,)* #d_out, true, #one, #(#own_slots,)* (), ());
            #grad
        }
        #[doc = #acc_doc]
        #[doc = #generated]
        #[inline]
        #many_acc
        #vis fn #acc #gp(#(#params,)* #d_out: &[#ty], #(#buffers),*) #wc {
            #(#checks)*
            #vjp(#(#self_arg,)* #(#xs,)* #d_out, true, #one, #(#acc_slots,)* (), ());
        }
        #[doc = #jac_doc]
        #[doc = #generated]
        #many_jac
        #vis fn #jacobian #gp(#(#params),*) -> (#ret, ::std::vec::Vec<::std::vec::Vec<#ty>>) #wc {
            let #value = #value_call;
            let #m = #value.len();
            let #cols = #total;
            let mut #jac = ::std::vec![::std::vec![#zero; #cols]; #m];
            #fill
            (#value, #jac)
        }
        #tangent_fn
        #vjp_core
        #jvp_core
        #lanes_core
    }
}
