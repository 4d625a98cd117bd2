//! Vector outputs: `fn f(..) -> [f64; M]` or `-> Vec<f64>`.
//!
//! There is no single gradient. The function is rewritten, as source, into
//! the scalar function `w · f(args)` of one more constant parameter `w`, which
//! the ordinary pipeline differentiates: its gradient is `Jᵀw`, the
//! vector-Jacobian product (`f_adjoint`), and its forward mode, read at the
//! output array rather than at the scalar, is `J·t` (`f_jacobian` by columns
//! when there are fewer inputs than outputs, `f_tangent`).

mod callers;
mod rewrite;
mod wrappers;

use crate::args::Args;
use crate::ctxt::Ctxt;
use crate::emit;
use crate::ir::{Float, Func, VarId};
use crate::names::Names;
use crate::{expand, signature};
use callers::for_callers;
use proc_macro2::{Ident, TokenStream};
use quote::quote;
use rewrite::rewrite;
use wrappers::generate;

/// The hidden names the rewritten function uses (a user's function cannot
/// mention them: they start with `__gm_`).
const W: &str = "__gm_w";
const CHECK: &str = "__gm_check";
const OUT: &str = "__gm_out";

pub fn expand(f: &syn::ItemFn, args: &Args, float: Float, cx: &mut Ctxt) -> Option<TokenStream> {
    let vjp = rewrite(f, float, None, cx)?;
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

/// What the generated functions of `f` say about it: its return type, the
/// `Self::` a method's functions are reached through, and the path naming
/// the user's function (turbofish included).
struct Named {
    ret: TokenStream,
    this: Option<TokenStream>,
    user_fn: TokenStream,
}

fn named(user: &syn::ItemFn, g: &Func, receiver: Option<&syn::Receiver>) -> Named {
    let ret = match &user.sig.output {
        syn::ReturnType::Type(_, t) => quote::ToTokens::to_token_stream(t),
        syn::ReturnType::Default => quote!(()),
    };
    let this = receiver.map(|_| quote!(Self::));
    let (name, turbofish) = (&user.sig.ident, &g.generics.turbofish);
    let user_fn = quote!(#this #name #turbofish);
    Named { ret, this, user_fn }
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
/// helpers that have no public gradient (`outputs.rs`). `inline`: the
/// parameter copied into the output, a local `vec![..]` used as a slice,
/// which may then live inline.
pub fn for_callers_only(
    f: &syn::ItemFn,
    tangent: bool,
    inline: Option<&Ident>,
    cx: &mut Ctxt,
) -> Option<TokenStream> {
    let float = signature::vector_output(&f.sig)?;
    let vjp = rewrite(f, float, inline, cx)?;
    let mut quiet = Ctxt::default();
    let all = signature::check(&vjp.sig, &Args::default(), &mut quiet)?;
    let floats: Vec<Ident> = all
        .params
        .iter()
        .filter(|p| p.kind == signature::ParamKind::Differentiable && p.ident != W)
        .map(|p| p.ident.clone())
        .collect();
    let (mut g, names, out, receiver) = lower(&vjp, floats, cx)?;
    g.vars[out.0].on_stack = inline.is_some() && emit::inline_eligible(&g, out);
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
