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
use crate::ir::{Func, Shape};
use crate::names::Names;
use crate::{emit, expand, signature};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

pub fn generate(
    f: &Func,
    names: Names,
    all: Option<(&Func, Names)>,
    receiver: Option<&syn::Receiver>,
    user: &syn::ItemFn,
) -> Result<TokenStream, syn::Error> {
    let name = &user.sig.ident;
    let this = receiver.map(|_| quote!(Self::));
    let turbofish = &f.generics.turbofish;
    let user_fn = quote!(#this #name #turbofish);
    let (mut g, g_names) = lower_dot(f, names, receiver, user)?;
    // `f_hvp` and `f_hessian` take the value from `f` itself, callers from
    // `f_dot`: the cores compute only what the reverse sweep needs.
    g.value_unused = true;
    let core_name = format_ident!("__{}_hvp_core", name);
    let core = emit::private_core(&g, g_names, &core_name, (&user_fn, receiver));
    let wrappers = wrappers(f, user, receiver, quote!(#this #core_name));
    // Callers' tangent programs call `f_dot` and, in their reverse sweep,
    // `f_dot_pullback`: over every float parameter, as `f_pullback`.
    let callable = match &all {
        Some((all_f, all_names)) => {
            let (mut d, d_names) = lower_dot(all_f, all_names.clone(), receiver, user)?;
            d.value_unused = true;
            let dot_core = format_ident!("__{}_dot_core", name);
            let core = emit::private_core(&d, d_names, &dot_core, (&user_fn, receiver));
            let w = callable(all_f, user, receiver, quote!(#this #dot_core));
            quote!(#w #core)
        }
        // Without `wrt(..)` every float parameter is differentiable: the
        // same core serves.
        None if !excludes_floats(f, user) => callable(f, user, receiver, quote!(#this #core_name)),
        // `wrt(..)` excludes a float parameter that only constants allow:
        // callers cannot have its second derivatives.
        None => quote!(),
    };
    Ok(quote!(#wrappers #callable #core))
}

/// Whether `f`'s lowering leaves out a float parameter of the user's.
fn excludes_floats(f: &Func, user: &syn::ItemFn) -> bool {
    let floats = user
        .sig
        .inputs
        .iter()
        .filter(|a| {
            let t = quote!(#a).to_string();
            // A generic float `T` is a whole word of the type.
            let ty = emit::float_ty(&f.float).to_string();
            let generic = t
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|w| w == ty);
            matches!(a, syn::FnArg::Typed(_)) && (t.contains("f64") || t.contains("f32") || generic)
        })
        .count();
    f.wrt().count() < floats
}

/// The tangent program of `f`, lowered for the reverse mode with respect to
/// `f`'s differentiable parameters and their tangents.
fn lower_dot(
    f: &Func,
    names: Names,
    receiver: Option<&syn::Receiver>,
    user: &syn::ItemFn,
) -> Result<(Func, Names), syn::Error> {
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
        .chain(t_names)
        .collect();
    let args = Args {
        wrt: Some(wrt),
        ..Args::default()
    };
    let mut cx = Ctxt::default();
    let lowered = signature::check(&dot.sig, &args, &mut cx)
        .and_then(|sig| expand::lower_until_stable(&dot, &sig, &mut cx))
        .filter(|_| !cx.has_errors());
    lowered.ok_or_else(|| internal(cx.first().map(|e| e.to_string()).unwrap_or_default()))
}

/// `f_dot(args.., t..)`, the directional derivative (a tangent per parameter:
/// `()` for a passive one, an empty slice for a zero array), from
/// `f_pushforward`; and `f_dot_pullback`, its reverse mode over `core`.
fn callable(
    all: &Func,
    user: &syn::ItemFn,
    receiver: Option<&syn::Receiver>,
    core: TokenStream,
) -> TokenStream {
    let (vis, name) = (&user.vis, &user.sig.ident);
    let ty = emit::float_ty(&all.float);
    let zero = crate::generic::lit(&ty, "0.0");
    let (gp, wc) = (&all.generics.params, &all.generics.where_clause);
    let mut names = Names::avoiding(quote!(#user));
    let mut params: Vec<TokenStream> = receiver.iter().map(|r| quote!(#r)).collect();
    let self_arg: Vec<TokenStream> = receiver.iter().map(|_| quote!(self)).collect();
    let mut xs = Vec::new();
    let mut t_params = Vec::new();
    let mut pf_args = Vec::new();
    let mut zeros = Vec::new();
    let mut core_ts = Vec::new();
    let mut x_slots = Vec::new();
    let mut t_slots = Vec::new();
    let mut x_slot_args = Vec::new();
    let mut t_slot_args = Vec::new();
    for p in &all.params {
        let (x, pt) = (&p.ident, &p.ty);
        params.push(quote!(#x: #pt));
        xs.push(quote!(#x));
        if p.var.is_none() {
            t_params.push(quote!(_: ()));
            pf_args.push(quote!(()));
            x_slots.push(quote!(_: ()));
            t_slots.push(quote!(_: ()));
            x_slot_args.push(quote!(()));
            continue;
        }
        let t = names.fresh(&format!("t_{x}"));
        let (dx, dt) = (
            names.fresh(&format!("d_{x}")),
            names.fresh(&format!("d_t_{x}")),
        );
        let slot = emit::slot_ty(&p.shape, &ty);
        x_slots.push(quote!(#dx: #slot));
        t_slots.push(quote!(#dt: #slot));
        x_slot_args.push(quote!(#dx));
        t_slot_args.push(quote!(#dt));
        if p.shape.is_array() {
            t_params.push(quote!(#t: &[#ty]));
            pf_args.push(quote! {
                if #t.is_empty() { ::core::option::Option::None } else { ::core::option::Option::Some(#t) }
            });
            let own = names.fresh(&format!("{t}_zeros"));
            zeros.push(quote! {
                let #own: ::std::vec::Vec<#ty>;
                let #t: &[#ty] = if #t.is_empty() && !#x.is_empty() {
                    #own = ::std::vec![#zero; #x.len()];
                    &#own
                } else {
                    #t
                };
            });
        } else {
            t_params.push(quote!(#t: #ty));
            pf_args.push(quote!(#t));
        }
        core_ts.push(quote!(#t));
    }
    let (dot, pullback, pushforward) = (
        format_ident!("{name}_dot"),
        format_ident!("{name}_dot_pullback"),
        format_ident!("{name}_pushforward"),
    );
    let pushforward = match receiver {
        Some(_) => quote!(self.#pushforward),
        None => quote!(#pushforward),
    };
    let seed = names.fresh("d_out");
    let many = emit::many_args(params.len() * 2);
    let many_pb = emit::many_args(params.len() * 4 + 1);
    let ptr = emit::vec_refs(all);
    quote! {
        #[doc = " The derivative along the tangents (one per parameter, `()` for a passive one; an empty slice is zero), for differentiated callers' second derivatives."]
        #[doc(hidden)]
        #[inline]
        #many
        #ptr
        #vis fn #dot #gp(#(#params,)* #(#t_params),*) -> #ty #wc {
            #pushforward(#(#xs,)* #(#pf_args),*).1
        }
        #[doc = " The pullback of the derivative along the tangents, for differentiated callers' second derivatives."]
        #[doc(hidden)]
        #[inline]
        #many_pb
        #ptr
        #vis fn #pullback #gp(#(#params,)* #(#t_params,)* #seed: #ty, #(#x_slots,)* #(#t_slots),*) #wc {
            #(#zeros)*
            #core(#(#self_arg,)* #(#xs,)* #(#core_ts,)* #seed, #(#x_slot_args,)* #(#t_slot_args),*);
        }
    }
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
    let ty = emit::float_ty(&f.float);
    let (zero, one) = (
        crate::generic::lit(&ty, "0.0"),
        crate::generic::lit(&ty, "1.0"),
    );
    let (gp, wc) = (&f.generics.params, &f.generics.where_clause);
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
        fn #into #gp(#(#params,)* #v: &[#ty], #grad: &mut [#ty], #hv: &mut [#ty]) #wc {
            let #rest_g = #grad;
            let #rest_h = #hv;
            #(#split)*
            let _ = (#rest_g, #rest_h);
            #core(#(#receiver_arg,)* #(#xs,)* #(#t_args,)* #one, #(#x_slots,)* #(#t_slots),*);
        }
        #[doc = #hvp_doc]
        #[doc = ""]
        #[doc = " The value is bit-identical to the function's. Panics if `v`'s length is not the number of differentiable elements."]
        #[doc = " Generated by `#[differentiate(hessian)]`."]
        #many_hvp
        #ptr
        #vis fn #hvp #gp(#(#params,)* #v: &[#ty]) -> (#ty, ::std::vec::Vec<#ty>, ::std::vec::Vec<#ty>) #wc {
            let #n = #total;
            ::core::assert!(#v.len() == #n, #len_msg, #v.len(), #n);
            let mut #grad = ::std::vec![#zero; #n];
            let mut #hv = ::std::vec![#zero; #n];
            #into_call(#(#xs,)* #v, &mut #grad, &mut #hv);
            (#value_call, #grad, #hv)
        }
        #[doc = #hessian_doc]
        #[doc = ""]
        #[doc = " One Hessian-vector product per column; the value is bit-identical to the function's."]
        #[doc = " Generated by `#[differentiate(hessian)]`."]
        #many_hessian
        #ptr
        #vis fn #hessian #gp(#(#params),*) -> (#ty, ::std::vec::Vec<#ty>, ::std::vec::Vec<::std::vec::Vec<#ty>>) #wc {
            let #n = #total;
            let mut #grad = ::std::vec![#zero; #n];
            let mut #scratch = ::std::vec![#zero; #n];
            let mut #v = ::std::vec![#zero; #n];
            let mut #h = ::std::vec::Vec::with_capacity(#n);
            for #j in 0..#n {
                #v[#j] = #one;
                let mut #col = ::std::vec![#zero; #n];
                let #g = if #j == 0 { &mut #grad } else { &mut #scratch };
                #into_call(#(#xs,)* &#v, #g, &mut #col);
                #v[#j] = #zero;
                #h.push(#col);
            }
            (#value_call, #grad, #h)
        }
    }
}
