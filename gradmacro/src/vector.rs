//! Vector outputs: `fn f(..) -> [f64; M]` or `-> Vec<f64>`.
//!
//! There is no single gradient. The function is rewritten, as source, into
//! the scalar function `w · f(args)` of one more constant parameter `w`, which
//! the ordinary pipeline differentiates: its gradient is `Jᵀw`, the
//! vector-Jacobian product (`f_adjoint`), and its forward mode, read at the
//! output array rather than at the scalar, is `J·t` (`f_jacobian` by columns
//! when there are fewer inputs than outputs, `f_tangent`).

use crate::args::Args;
use crate::ctxt::Ctxt;
use crate::ir::{Float, Func, Shape, VarId};
use crate::names::Names;
use crate::{emit, expand, signature};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use syn::visit::Visit;

/// The hidden names the rewritten function uses (a user's function cannot
/// mention them: they start with `__gm_`).
const W: &str = "__gm_w";
const CHECK: &str = "__gm_check";
const OUT: &str = "__gm_out";

pub fn expand(f: &syn::ItemFn, args: &Args, float: Float, cx: &mut Ctxt) -> Option<TokenStream> {
    let vjp = rewrite(f, float, cx)?;
    // Which parameters are differentiable: those of `wrt`, else every float
    // one; never the added ones.
    let mut quiet = Ctxt::default();
    let all = signature::check(&vjp.sig, &Args::default(), &mut quiet)?;
    if let Some(wrt) = &args.wrt {
        for name in wrt {
            if !all.params.iter().any(|p| p.ident == *name) || *name == W || *name == CHECK {
                cx.error(name, format!("`wrt({name})`: there is no such parameter"));
            }
        }
    }
    let floats = |only: Option<&Vec<Ident>>| -> Vec<Ident> {
        all.params
            .iter()
            .filter(|p| p.kind == signature::ParamKind::Differentiable && p.ident != W)
            .filter(|p| only.is_none_or(|w| w.contains(&p.ident)))
            .map(|p| p.ident.clone())
            .collect()
    };
    let (func, names, out, receiver) = lower(&vjp, floats(args.wrt.as_ref()), cx)?;
    // Differentiated callers need every float argument's share: with
    // `wrt(..)`, a second lowering (if the body allows it).
    let callers = match &args.wrt {
        None => None,
        Some(_) => {
            let mut quiet = Ctxt::default();
            lower(&vjp, floats(None), &mut quiet)
                .filter(|_| !quiet.has_errors())
                .map(|(g, n, o, _)| (g, n, o))
        }
    };
    let forward = |g: &Func| args.tangent || !calls_any(g);
    let for_callers = match callers {
        Some((g, n, o)) => {
            let forward = forward(&g);
            for_callers(f, &g, Some((n, o)), receiver.as_ref(), forward)
        }
        // Without `wrt(..)` the cores below serve callers too.
        None if args.wrt.is_none() => {
            for_callers(f, &func, None, receiver.as_ref(), forward(&func))
        }
        None => quote!(),
    };
    let generated = generate(f, &func, names, out, receiver.as_ref(), args.tangent);
    Some(quote!(#generated #for_callers))
}

/// Whether `g` calls a differentiated function. Forward mode through a call
/// needs the callee's pushforward, which only `tangent` promises: without
/// it, no forward mode (the Jacobian is taken by rows).
fn calls_any(g: &Func) -> bool {
    let mut calls = false;
    crate::analysis::walk(&g.body, &mut |s| {
        calls |= matches!(s, crate::ir::Stmt::Call(_))
    });
    calls
}

/// Only what differentiated callers of `f` call (`f_pullback`, and with
/// `tangent` `f_pushforward`), every float parameter differentiable: for
/// helpers that have no public gradient (`outputs.rs`).
pub fn for_callers_only(f: &syn::ItemFn, tangent: bool, cx: &mut Ctxt) -> Option<TokenStream> {
    let float = signature::vector_output(&f.sig)?;
    let vjp = rewrite(f, float, cx)?;
    let mut quiet = Ctxt::default();
    let all = signature::check(&vjp.sig, &Args::default(), &mut quiet)?;
    let floats: Vec<Ident> = all
        .params
        .iter()
        .filter(|p| p.kind == signature::ParamKind::Differentiable && p.ident != W)
        .map(|p| p.ident.clone())
        .collect();
    let (g, names, out, receiver) = lower(&vjp, floats, cx)?;
    Some(for_callers(
        f,
        &g,
        Some((names, out)),
        receiver.as_ref(),
        tangent,
    ))
}

/// The rewritten function lowered with `wrt` differentiable, and the
/// variable holding the output array.
fn lower(
    vjp: &syn::ItemFn,
    wrt: Vec<Ident>,
    cx: &mut Ctxt,
) -> Option<(Func, Names, VarId, Option<syn::Receiver>)> {
    let args = Args {
        wrt: Some(wrt),
        ..Args::default()
    };
    let sig = signature::check(&vjp.sig, &args, cx)?;
    if cx.has_errors() {
        return None;
    }
    let (func, names) = expand::lower_until_stable(vjp, &sig, cx)?;
    if cx.has_errors() {
        return None;
    }
    let out = match func.vars.iter().position(|v| v.ident == OUT) {
        Some(i) => VarId(i),
        None => summed(&func)?,
    };
    Some((func, names, out, sig.receiver))
}

/// The array the final `Σ out[i] * w[i]` loop reads, when the function's
/// value is a local array named as it is (no copy into `__gm_out`).
fn summed(func: &Func) -> Option<VarId> {
    // The last loop: a copy of the sum into the output may follow it.
    let l = func.body.stmts.iter().rev().find_map(|s| match s {
        crate::ir::Stmt::Loop(l) => Some(l),
        _ => None,
    })?;
    l.body.stmts.iter().find_map(|st| match st {
        crate::ir::Stmt::Step(step) => step.args.iter().find_map(|a| match a {
            crate::ir::Operand::Elem(v, _) if func.vars[v.0].ident != W => Some(*v),
            _ => None,
        }),
        // An output that does not depend on the differentiated parameters:
        // the sum is kept as written (its Jacobian is zero).
        crate::ir::Stmt::Assign(a) => a.value.reads.iter().copied().find(|v| {
            let var = &func.vars[v.0];
            var.ident != W && var.shape.is_array()
        }),
        _ => None,
    })
}

/// `f_pullback(args.., d_out: &[f64], slots..)` and `f_pushforward(args..,
/// tangents..) -> (out, J·t)`, what differentiated callers of `f` call, over
/// cores of `g` (every float parameter differentiable): new ones made from
/// `own`, else those of `generate`. Without `tangent`, no forward mode:
/// its cores would call the forward mode of every function `f` calls.
fn for_callers(
    user: &syn::ItemFn,
    g: &Func,
    own: Option<(Names, VarId)>,
    receiver: Option<&syn::Receiver>,
    tangent: bool,
) -> TokenStream {
    let (vis, name) = (&user.vis, &user.sig.ident);
    let ty = emit::float_ty(&g.float);
    let ret = match &user.sig.output {
        syn::ReturnType::Type(_, t) => t.to_token_stream(),
        syn::ReturnType::Default => quote!(()),
    };
    let this = receiver.map(|_| quote!(Self::));
    let turbofish = &g.generics.turbofish;
    let user_fn = quote!(#this #name #turbofish);
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
            let vjp = emit::private_core(g, names.clone(), &vjp_name, (&user_fn, receiver));
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

/// `fn __f_vjp(args.., __gm_w: &[f64], __gm_check: bool) -> f64`: the body,
/// its value into `__gm_out`, then `Σ __gm_out[i] * __gm_w[i]`.
fn rewrite(f: &syn::ItemFn, float: Float, cx: &mut Ctxt) -> Option<syn::ItemFn> {
    let ty = emit::float_ty(&float);
    let name = &f.sig.ident;
    let mut returns = Returns(Vec::new());
    returns.visit_block(&f.block);
    for r in returns.0 {
        cx.error(
            r,
            "`return` is not supported in a function returning an array yet: end the function with its value",
        );
    }
    let mut stmts = f.block.stmts.clone();
    let tail = match stmts.pop() {
        Some(syn::Stmt::Expr(e, None)) => e,
        other => {
            let span = other.map_or(name.span(), |s| syn::spanned::Spanned::span(&s));
            cx.error_at(
                span,
                "the function must end with its value: add a tail expression (without `;`)",
            );
            return None;
        }
    };
    if cx.has_errors() {
        return None;
    }
    let generic = crate::signature::generic_float(&f.sig.generics)
        .ok()
        .flatten();
    let ret = match &f.sig.output {
        syn::ReturnType::Type(_, t) => t.clone(),
        syn::ReturnType::Default => return None,
    };
    let (w, check, out) = (ident(W), ident(CHECK), ident(OUT));
    let msg = format!("{name}_adjoint: `d_out` has length {{}} but the output has length {{}}");
    let mut sig = f.sig.clone();
    sig.ident = format_ident!("__{}_vjp", name);
    sig.output = syn::parse_quote!(-> #ty);
    sig.inputs.push(syn::parse_quote!(#w: &[#ty]));
    sig.inputs.push(syn::parse_quote!(#check: bool));
    let zero = crate::generic::lit(&ty, "0.0");
    // A local `Vec` returned by name is read in place: binding it to
    // `__gm_out` would copy it, and its adjoint, on every call.
    let (out, bind) = match (&tail, crate::signature::param_shape(&ret, generic.as_ref())) {
        (syn::Expr::Path(p), Ok(Some(Shape::Array { len: None })))
            if p.path.get_ident().is_some_and(|i| is_local(&stmts, i)) =>
        {
            (p.path.get_ident()?.clone(), quote!())
        }
        _ => {
            let bind = quote!(let #out: #ret = #tail;);
            (out, bind)
        }
    };
    let add = crate::generic::update(
        &ty,
        &quote!(__gm_sum),
        "+=",
        &quote!(#out[__gm_i] * #w[__gm_i]),
    );
    let block: syn::Block = syn::parse_quote!({
        #(#stmts)*
        #bind
        fn __gm_len(check: bool, w: usize, out: usize) -> usize {
            if check {
                ::core::assert!(w == out, #msg, w, out);
            }
            w
        }
        let mut __gm_sum: #ty = #zero;
        for __gm_i in 0..__gm_len(#check, #w.len(), #out.len()) {
            #add
        }
        __gm_sum
    });
    Some(syn::ItemFn {
        attrs: Vec::new(),
        vis: syn::Visibility::Inherited,
        sig,
        block: Box::new(block),
    })
}

/// Whether `name` is bound by a `let` among the body's top-level statements
/// (a parameter, or a name bound only inside a block, is not read in place).
fn is_local(stmts: &[syn::Stmt], name: &Ident) -> bool {
    stmts.iter().any(|s| match s {
        syn::Stmt::Local(l) => {
            let pat = match &l.pat {
                syn::Pat::Type(pt) => &*pt.pat,
                p => p,
            };
            matches!(pat, syn::Pat::Ident(pi) if pi.ident == *name)
        }
        _ => false,
    })
}

fn ident(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

/// Every `return` of the body, outside closures and nested items.
struct Returns(Vec<syn::ExprReturn>);

impl<'a> Visit<'a> for Returns {
    fn visit_expr_return(&mut self, r: &'a syn::ExprReturn) {
        self.0.push(r.clone());
    }
    fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'a syn::Item) {}
}

/// `f_adjoint`, `f_adjoint_acc`, `f_jacobian` (and `f_tangent`) over the
/// cores of the rewritten function.
fn generate(
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
    let ret = match &user.sig.output {
        syn::ReturnType::Type(_, t) => t.to_token_stream(),
        syn::ReturnType::Default => quote!(()),
    };
    let this = receiver.map(|_| quote!(Self::));
    let turbofish = &g.generics.turbofish;
    let user_fn = quote!(#this #name #turbofish);
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
