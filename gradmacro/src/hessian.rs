//! `#[differentiate(hessian)]`: `f_hvp` and `f_hessian`, from the tangent
//! program of `f` differentiated once more, at compile time.
//!
//! The tangent program `dot(x, t) = ∇f(x)·t` is emitted as an ordinary Rust
//! function (`emit::dot_program`) and lowered and differentiated in reverse
//! mode like any user function: its gradient with respect to `t` is `∇f(x)`,
//! with respect to `x` it is `H(x)·t`. One sweep gives both, exactly (no
//! finite differences, no dual numbers at run time).

use crate::args::Args;
use crate::ctxt::Ctxt;
use crate::ir::{Func, Shape, Stmt};
use crate::names::Names;
use crate::{emit, expand, signature};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

pub fn generate(
    f: &Func,
    names: Names,
    receiver: Option<&syn::Receiver>,
    user: &syn::ItemFn,
) -> Result<TokenStream, syn::Error> {
    reject_calls(&f.body)?;
    let name = &user.sig.ident;
    let dot_name = format_ident!("__{}_dot", name);
    let (dot_tokens, t_names) = emit::dot_program(f, names, &dot_name, receiver);
    let internal = |what: String| {
        syn::Error::new(
            name.span(),
            format!("`hessian`: the tangent program of `{name}` could not be differentiated again ({what}); please report this"),
        )
    };
    let dot: syn::ItemFn =
        syn::parse2(dot_tokens).map_err(|e| internal(format!("it does not parse: {e}")))?;
    let wrt: Vec<Ident> = f
        .params
        .iter()
        .filter(|p| p.var.is_some())
        .map(|p| p.ident.clone())
        .chain(t_names.iter().cloned())
        .collect();
    let args = Args {
        wrt: Some(wrt),
        ..Args::default()
    };
    let mut cx = Ctxt::default();
    let lowered = signature::check(&dot.sig, &args, &mut cx)
        .and_then(|sig| expand::lower_until_stable(&dot, &sig, &mut cx))
        .filter(|_| !cx.has_errors());
    let Some((g, g_names)) = lowered else {
        let first = cx.first().map(|e| e.to_string()).unwrap_or_default();
        return Err(internal(first));
    };
    let this = receiver.map(|_| quote!(Self::));
    let user_fn = quote!(#this #name);
    let core_name = format_ident!("__{}_hvp_core", name);
    let core = emit::private_core(&g, g_names, &core_name, (&user_fn, receiver));
    let wrappers = wrappers(f, user, receiver, quote!(#this #core_name));
    Ok(quote!(#wrappers #core))
}

/// Calls would need their callees' tangent programs differentiated too.
fn reject_calls(b: &crate::ir::Block) -> Result<(), syn::Error> {
    for s in &b.stmts {
        match s {
            Stmt::Call(c) => {
                return Err(syn::Error::new_spanned(
                    &c.func,
                    "`hessian` does not reach into calls to other differentiated functions yet: \
                     write the callee's body here, or use `f_tangent` and `f_grad`",
                ))
            }
            Stmt::If(i) => {
                reject_calls(&i.then)?;
                reject_calls(&i.els)?;
            }
            Stmt::Loop(l) => reject_calls(&l.body)?,
            _ => {}
        }
    }
    Ok(())
}

/// `f_hvp`, `f_hessian`, and the private `__f_hvp_into` both use: it splits
/// the direction and the output buffers by parameter and runs the core once.
fn wrappers(
    f: &Func,
    user: &syn::ItemFn,
    receiver: Option<&syn::Receiver>,
    core: TokenStream,
) -> TokenStream {
    let vis = &user.vis;
    let name = &user.sig.ident;
    let ty = emit::float_ty(f.float);
    let mut names = Names::avoiding(quote!(#user));
    let (v, grad, hv, rest_g, rest_h) = (
        names.fresh("v"),
        names.fresh("grad"),
        names.fresh("hv"),
        names.fresh("grad_rest"),
        names.fresh("hv_rest"),
    );
    let mut params: Vec<TokenStream> = receiver.iter().map(|r| quote!(#r)).collect();
    let receiver_arg: Vec<TokenStream> = receiver.iter().map(|_| quote!(self)).collect();
    let mut xs = Vec::new();
    let mut sizes = Vec::new();
    // Splits `v`, `grad` and `hv` by parameter: tangents, then the slots.
    let mut split = Vec::new();
    let mut t_args = Vec::new();
    let mut x_slots = Vec::new();
    let mut t_slots = Vec::new();
    let mut offset: Option<TokenStream> = None;
    for p in &f.params {
        let (x, t) = (&p.ident, &p.ty);
        params.push(quote!(#x: #t));
        xs.push(quote!(#x));
        let Some(_) = p.var else {
            x_slots.push(quote!(()));
            continue;
        };
        let (g_part, h_part) = (
            names.fresh(&format!("grad_{x}")),
            names.fresh(&format!("hv_{x}")),
        );
        let len = match p.shape {
            Shape::Scalar => quote!(1),
            Shape::Array { .. } => quote!(#x.len()),
        };
        sizes.push(len.clone());
        split.push(quote! {
            let (#g_part, #rest_g) = #rest_g.split_at_mut(#len);
            let (#h_part, #rest_h) = #rest_h.split_at_mut(#len);
        });
        let start = offset.clone().unwrap_or_else(|| quote!(0));
        let end = match &offset {
            Some(o) => quote!(#o + #len),
            None => len.clone(),
        };
        match p.shape {
            Shape::Scalar => {
                t_args.push(quote!(#v[#start]));
                x_slots.push(quote!(::core::option::Option::Some(&mut #h_part[0])));
                t_slots.push(quote!(::core::option::Option::Some(&mut #g_part[0])));
            }
            Shape::Array { .. } => {
                t_args.push(quote!(&#v[#start..#end]));
                x_slots.push(quote!(::core::option::Option::Some(#h_part)));
                t_slots.push(quote!(::core::option::Option::Some(#g_part)));
            }
        }
        offset = Some(end);
    }
    let total = if sizes.is_empty() {
        quote!(0)
    } else {
        quote!(#(#sizes)+*)
    };
    let into = format_ident!("__{name}_hvp_into");
    let hvp = format_ident!("{name}_hvp");
    let hessian = format_ident!("{name}_hessian");
    let into_call = match receiver {
        Some(_) => quote!(self.#into),
        None => quote!(#into),
    };
    let link = emit::doc_link(name, receiver);
    let n = names.fresh("n");
    let (h, col, scratch, j, g) = (
        names.fresh("hessian"),
        names.fresh("column"),
        names.fresh("scratch"),
        names.fresh("j"),
        names.fresh("g"),
    );
    let value_call = match receiver {
        Some(_) => quote!(self.#name(#(#xs),*)),
        None => quote!(#name(#(#xs),*)),
    };
    let len_msg = format!(
        "{name}_hvp: `v` has length {{}} but the differentiable parameters have {{}} elements in all"
    );
    let hvp_doc = format!(
        " Value, gradient and Hessian-vector product of {link}: returns `({name}(..), g, H·v)`, `g` and `v` flattened over the differentiable parameters in order (a scalar is one element, an array its elements)."
    );
    let hessian_doc = format!(
        " Value, gradient and Hessian of {link}: returns `({name}(..), g, H)`, `H[i][j]` the second derivative with respect to the flattened differentiable parameters `i` and `j`."
    );
    let many = emit::many_args(params.len() + 3);
    let many_hvp = emit::many_args(params.len() + 1);
    let many_hessian = emit::many_args(params.len());
    let ptr = emit::vec_refs(f);
    quote! {
        #[inline]
        #many
        #ptr
        fn #into(#(#params,)* #v: &[#ty], #grad: &mut [#ty], #hv: &mut [#ty]) {
            let #rest_g = #grad;
            let #rest_h = #hv;
            #(#split)*
            let _ = (#rest_g, #rest_h);
            #core(#(#receiver_arg,)* #(#xs,)* #(#t_args,)* 1.0, #(#x_slots,)* #(#t_slots),*);
        }
        #[doc = #hvp_doc]
        #[doc = ""]
        #[doc = " The value is bit-identical to the function's. Panics if `v`'s length is not the number of differentiable elements."]
        #[doc = " Generated by `#[differentiate(hessian)]`."]
        #many_hvp
        #ptr
        #vis fn #hvp(#(#params,)* #v: &[#ty]) -> (#ty, ::std::vec::Vec<#ty>, ::std::vec::Vec<#ty>) {
            let #n = #total;
            ::core::assert!(#v.len() == #n, #len_msg, #v.len(), #n);
            let mut #grad = ::std::vec![0.0; #n];
            let mut #hv = ::std::vec![0.0; #n];
            #into_call(#(#xs,)* #v, &mut #grad, &mut #hv);
            (#value_call, #grad, #hv)
        }
        #[doc = #hessian_doc]
        #[doc = ""]
        #[doc = " One Hessian-vector product per column; the value is bit-identical to the function's."]
        #[doc = " Generated by `#[differentiate(hessian)]`."]
        #many_hessian
        #ptr
        #vis fn #hessian(#(#params),*) -> (#ty, ::std::vec::Vec<#ty>, ::std::vec::Vec<::std::vec::Vec<#ty>>) {
            let #n = #total;
            let mut #grad = ::std::vec![0.0; #n];
            let mut #scratch = ::std::vec![0.0; #n];
            let mut #v = ::std::vec![0.0; #n];
            let mut #h = ::std::vec::Vec::with_capacity(#n);
            for #j in 0..#n {
                #v[#j] = 1.0;
                let mut #col = ::std::vec![0.0; #n];
                let #g = if #j == 0 { &mut #grad } else { &mut #scratch };
                #into_call(#(#xs,)* &#v, #g, &mut #col);
                #v[#j] = 0.0;
                #h.push(#col);
            }
            (#value_call, #grad, #h)
        }
    }
}
