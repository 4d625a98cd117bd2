//! The pipeline, on one screen: arguments → signature → lower → emit.

use crate::args::Args;
use crate::ctxt::Ctxt;
use crate::{emit, lower, signature};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use std::collections::HashSet;

/// Room for the recursion of deeply nested expressions: address space only,
/// touched pages alone are committed.
const STACK: usize = 1 << 30;

pub fn differentiate(attr: TokenStream, item: TokenStream) -> TokenStream {
    let checks = crate::checks::generate(&attr, &item);
    let expanded = stacker::grow(STACK, || expand(attr, item));
    quote!(#expanded #checks)
}

fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut cx = Ctxt::default();
    let args = match syn::parse2::<Args>(attr) {
        Ok(a) => a,
        Err(e) => {
            cx.push(e);
            Args::default()
        }
    };
    // The function is emitted as its own tokens, `item`: printing the parsed
    // tree again would cost as much as parsing it.
    let f: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let e = syn::Error::new_spanned(
                &item,
                "`#[differentiate]` applies to a free function `fn f(x: f64, ...) -> f64`",
            )
            .to_compile_error();
            return quote!(#item #e);
        }
    };
    // Functions of shapes of their own: a struct in `wrt(..)` (checked first:
    // it says what it does not support), a vector output, a helper writing
    // into a buffer.
    let special = if crate::structs::wanted(&f, &args) {
        Some(crate::structs::expand(&f, &args, &mut cx))
    } else if let Some(float) = signature::vector_output(&f.sig) {
        if let (true, Some(flag)) = (args.hessian, &args.hessian_flag) {
            cx.error(flag, "`hessian` needs a scalar output: a Hessian of a vector output would be a tensor; take the Hessian of each output's function, or of a weighted sum");
        }
        Some(crate::vector::expand(&f, &args, float, &mut cx))
    } else if crate::outputs::wanted(&f) {
        Some(crate::outputs::expand(&f, &args, &mut cx))
    } else {
        None
    };
    if let Some(generated) = special {
        return match generated {
            Some(g) if !cx.has_errors() => quote!(#item #g),
            _ => {
                // Nothing generated must never pass in silence.
                if !cx.has_errors() {
                    cx.error_at(
                        f.sig.ident.span(),
                        "internal: nothing could be generated for this function; please report this",
                    );
                }
                let errors = cx.into_compile_errors();
                quote!(#item #errors)
            }
        };
    }
    let sig = signature::check(&f.sig, &args, &mut cx);
    let lowered = match &sig {
        Some(sig) if !cx.has_errors() => lower_until_stable(&f, sig, &mut cx),
        _ => None,
    };
    match lowered {
        Some((func, names)) if !cx.has_errors() => {
            // Callers need the adjoint of every float parameter, whatever
            // `wrt` says: lower once more with all of them differentiable.
            // Where that fails (the body does with a parameter excluded by
            // `wrt` what only constants allow), its derivatives are not
            // available: a caller that asks for them gets NaN, never a
            // plausible wrong number.
            let all_floats = match (&args.wrt, &sig) {
                (Some(_), Some(_)) => {
                    let mut quiet = Ctxt::default();
                    signature::check(&f.sig, &Args::default(), &mut quiet)
                        .and_then(|s| lower_until_stable(&f, &s, &mut quiet))
                        .filter(|_| !quiet.has_errors())
                }
                _ => None,
            };
            let all = all_floats.as_ref().map(|(g, n)| (g, n.clone()));
            let unavailable: Vec<bool> = match (&all, &sig) {
                (None, Some(sig)) => sig
                    .params
                    .iter()
                    .map(|p| p.kind == signature::ParamKind::ConstFloat)
                    .collect(),
                _ => Vec::new(),
            };
            let receiver = sig.as_ref().and_then(|s| s.receiver.as_ref());
            let modes = emit::Modes {
                tangent: args.tangent || args.hessian,
                hessian: args.hessian,
            };
            let hessian = if modes.hessian {
                let all = all_floats.as_ref().map(|(g, n)| (g, n.clone()));
                crate::hessian::generate(&func, names.clone(), all, receiver, &f)
                    .unwrap_or_else(|e| e.to_compile_error())
            } else {
                quote!()
            };
            let generated = emit::generate(&func, all, &unavailable, receiver, names, &f, modes);
            quote!(#item #generated #hessian)
        }
        _ => {
            let stubs = sig.map(|s| stubs(&f, &s)).unwrap_or_default();
            let errors = cx.into_compile_errors();
            quote!(#item #errors #stubs)
        }
    }
}

/// Lowers, promoting to active every `let` that an attempt found receiving an
/// active value (`let mut s = 0.0;` before `s += x;`), until nothing changes.
pub(crate) fn lower_until_stable(
    f: &syn::ItemFn,
    sig: &signature::Signature_,
    cx: &mut Ctxt,
) -> Option<(crate::ir::Func, crate::names::Names)> {
    // Local tuples, closures and `match` become `let`s, blocks and `if`s
    // once, before the attempts: they key what they learn by the syntax
    // tree's nodes.
    let mut f = f.clone();
    lower::reslice::desugar(&mut f.block);
    lower::chained::desugar(&mut f.block);
    lower::tuple_fields::desugar(&mut f.block);
    lower::data_loops::desugar(&mut f.block);
    lower::recopy::desugar(&mut f.block);
    // Before the views: its copies read sources through views.
    lower::outputs::desugar_methods(&mut f.block);
    let mut errors = lower::sugar::desugar(&mut f.block);
    // Once local closures are written out at their calls: a reduction in a
    // closure's body becomes a loop where it is computed.
    lower::filters::desugar(&mut f.block, &crate::emit::float_ty(&sig.float));
    errors.extend(lower::matching::desugar(&mut f.block));
    // After the views: a mutable view lent whole (`h(x, v)`) is then `h(x,
    // &mut buf[a..b])`.
    lower::outputs::desugar_calls(&f.sig, &mut f.block, &crate::emit::float_ty(&sig.float));
    for (tokens, msg) in errors {
        cx.error(tokens, msg);
    }
    let f = &f;
    let vecs = lower::vec_macros::VecMacros::of(&f.block);
    let user_names = crate::names::Names::avoiding(f.to_token_stream());
    let mut promoted = HashSet::new();
    loop {
        let mark = cx.len();
        let (func, promote, names, declared) =
            lower::lower(f, sig, &promoted, &vecs, user_names.clone(), cx);
        if promote.is_subset(&promoted) {
            return func.map(|func| (func, names));
        }
        cx.truncate(mark);
        promoted.extend(promote);
        // Each attempt promotes at least one more declaration, so a function
        // settles before more are promoted than it declares.
        if promoted.len() > declared {
            break;
        }
    }
    cx.error_at(
        f.sig.ident.span(),
        "internal: cannot settle which variables carry derivatives",
    );
    None
}

/// Placeholders with the right signatures, so that after an error the user sees
/// only that error and not a cascade of "cannot find `f_grad`".
fn stubs(f: &syn::ItemFn, sig: &signature::Signature_) -> TokenStream {
    // With a parameter rejected, any placeholder would itself be wrong.
    if sig.params.len() + usize::from(sig.receiver.is_some()) != f.sig.inputs.len() {
        return TokenStream::new();
    }
    let vis = &f.vis;
    let name = &f.sig.ident;
    let (grad, adjoint, acc, pullback) = (
        format_ident!("{name}_grad"),
        format_ident!("{name}_adjoint"),
        format_ident!("{name}_adjoint_acc"),
        format_ident!("{name}_pullback"),
    );
    let ty = emit::float_ty(&sig.float);
    let generics = crate::generic::Generics::of(&f.sig);
    let (gp, wc) = (&generics.params, &generics.where_clause);
    let receiver = sig.receiver.iter().map(|r| quote!(#r));
    let params: Vec<_> = receiver
        .chain(sig.params.iter().map(|p| {
            let t = &p.ty;
            quote!(_: #t)
        }))
        .collect();
    let diff: Vec<&signature::ParamSpec> = sig
        .params
        .iter()
        .filter(|p| p.kind == signature::ParamKind::Differentiable)
        .collect();
    let entries: Vec<TokenStream> = diff.iter().map(|p| emit::entry_ty(&p.shape, &ty)).collect();
    let g = if entries.len() == 1 {
        entries[0].clone()
    } else {
        quote!((#(#entries),*))
    };
    let buffers: Vec<TokenStream> = diff
        .iter()
        .map(|p| match p.shape {
            crate::ir::Shape::Scalar => quote!(_: &mut #ty),
            _ => quote!(_: &mut [#ty]),
        })
        .collect();
    // Differentiated callers lend a slot for every float argument.
    let slots: Vec<TokenStream> = sig
        .params
        .iter()
        .map(|p| match p.kind {
            signature::ParamKind::Passive => quote!(_: ()),
            _ => {
                let slot = emit::slot_ty(&p.shape, &ty);
                quote!(_: #slot)
            }
        })
        .collect();
    quote! {
        #[allow(unused, clippy::too_many_arguments)]
        #[doc(hidden)]
        #vis fn #pullback #gp(#(#params,)* _: #ty, #(#slots),*) #wc { ::core::unimplemented!() }
        #[allow(unused, clippy::too_many_arguments)]
        #vis fn #grad #gp(#(#params),*) -> (#ty, #g) #wc { ::core::unimplemented!() }
        #[allow(unused, clippy::too_many_arguments)]
        #vis fn #adjoint #gp(#(#params,)* _: #ty) -> #g #wc { ::core::unimplemented!() }
        #[allow(unused, clippy::too_many_arguments)]
        #vis fn #acc #gp(#(#params,)* _: #ty, #(#buffers),*) #wc { ::core::unimplemented!() }
    }
}
