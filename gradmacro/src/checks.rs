//! `#[differentiate(check(x = 1.5, w = [1.0, -2.0]))]`: beside the function,
//! one `#[cfg(test)] #[test] fn f_check_0()` per point, comparing `f_grad`
//! and `f_adjoint` with central differences of `f` through
//! `gradmacro_runtime::FunctionCheck`.
//!
//! The pipeline in `expand.rs` reports every problem with the attribute's
//! arguments and the signature; this module adds only its own errors (a
//! point that misses or misnames a parameter), and generates nothing for a
//! function whose signature is in error.

use crate::args::{Args, CheckPoint};
use crate::ctxt::Ctxt;
use crate::ir::Shape;
use crate::signature::{self, ParamKind, ParamSpec, Signature_};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Ident, Type};

/// The tests for every `check(...)` in `attr`, or their errors; nothing when
/// there are none or when the pipeline reports the function's own errors.
pub fn generate(attr: &TokenStream, item: &TokenStream) -> TokenStream {
    let Ok(args) = syn::parse2::<Args>(attr.clone()) else {
        return TokenStream::new();
    };
    if args.checks.is_empty() {
        return TokenStream::new();
    }
    let Ok(f) = syn::parse2::<syn::ItemFn>(item.clone()) else {
        return TokenStream::new();
    };
    if signature::vector_output(&f.sig).is_some() {
        let mut cx = Ctxt::default();
        for point in &args.checks {
            cx.error(
                &point.keyword,
                "`check(..)` points need a scalar output: check `f_jacobian` against \
                 `gradmacro_runtime::central_difference` of each output in a test of your own",
            );
        }
        return cx.into_compile_errors();
    }
    let mut quiet = Ctxt::default();
    let sig = match signature::check(&f.sig, &args, &mut quiet) {
        Some(sig) if !quiet.has_errors() && sig.params.len() == f.sig.inputs.len() => sig,
        // A point must never be dropped without a word: a method has no
        // value of `Self` to check at.
        Some(sig) if !quiet.has_errors() && sig.receiver.is_some() => {
            let mut cx = Ctxt::default();
            for point in &args.checks {
                cx.error(
                    &point.keyword,
                    "`check(..)` points are not supported on methods (there is no receiver to call them on): \
                     check a free function, or call `gradmacro_runtime::check_gradient` in a test of your own",
                );
            }
            return cx.into_compile_errors();
        }
        _ => return TokenStream::new(),
    };
    let mut cx = Ctxt::default();
    let tests: Vec<TokenStream> = args
        .checks
        .iter()
        .enumerate()
        .filter_map(|(i, point)| {
            let values = values_in_order(point, &sig, &f.sig.ident, &mut cx)?;
            Some(test(&f.sig.ident, i, &sig, &values))
        })
        .collect();
    let errors = cx.into_compile_errors();
    quote!(#(#tests)* #errors)
}

/// The point's values in parameter order, or `None` after reporting a
/// parameter named twice, a name that is no parameter, or a parameter left
/// out (every one needs a value, constants included, to call `f`).
fn values_in_order<'a>(
    point: &'a CheckPoint,
    sig: &Signature_,
    function: &Ident,
    cx: &mut Ctxt,
) -> Option<Vec<&'a syn::Expr>> {
    let mark = cx.len();
    for (k, (name, _)) in point.values.iter().enumerate() {
        if point.values[..k].iter().any(|(n, _)| n == name) {
            cx.error(
                name,
                format!("`{name}` is given twice in this `check(...)`"),
            );
        } else if !sig.params.iter().any(|p| p.ident == *name) {
            let names: Vec<String> = sig
                .params
                .iter()
                .map(|p| format!("`{}`", p.ident))
                .collect();
            cx.error(
                name,
                format!(
                    "`{name}` is not a parameter of `{function}`: `check(...)` gives a value to \
                     each of {}",
                    names.join(", ")
                ),
            );
        }
    }
    let missing: Vec<String> = sig
        .params
        .iter()
        .filter(|p| !point.values.iter().any(|(n, _)| *n == p.ident))
        .map(|p| format!("`{}`", p.ident))
        .collect();
    if !missing.is_empty() {
        cx.error(
            &point.keyword,
            format!(
                "this `check(...)` gives no value for {}: name every parameter of `{function}`, \
                 constants included (arrays as `[1.0, 2.0]`)",
                missing.join(", ")
            ),
        );
    }
    if cx.len() > mark {
        return None;
    }
    sig.params
        .iter()
        .map(|p| {
            let (_, value) = point.values.iter().find(|(n, _)| *n == p.ident)?;
            Some(value)
        })
        .collect()
}

/// How a parameter's type holds its values, which decides how a value is
/// stored and how an argument is rebuilt from the flattened point.
#[derive(Clone, Copy, PartialEq)]
enum Form {
    /// `f64`, `usize`, `bool`
    Scalar,
    /// `&[T]`
    SliceRef,
    /// `&Vec<T>`
    VecRef,
    /// `Vec<T>`
    Vec,
    /// `[T; N]`
    Array,
    /// `&[T; N]`
    ArrayRef,
}

/// The form and element type of an array parameter's type (already accepted
/// by `signature::check`).
fn form(p: &ParamSpec) -> (Form, Option<Type>) {
    fn strip(ty: &Type) -> &Type {
        match ty {
            Type::Group(g) => strip(&g.elem),
            Type::Paren(p) => strip(&p.elem),
            other => other,
        }
    }
    fn vec_elem(ty: &Type) -> Option<Type> {
        let Type::Path(p) = strip(ty) else {
            return None;
        };
        let last = p.path.segments.last()?;
        match &last.arguments {
            syn::PathArguments::AngleBracketed(a) if last.ident == "Vec" => match a.args.first()? {
                syn::GenericArgument::Type(t) => Some(t.clone()),
                _ => None,
            },
            _ => None,
        }
    }
    if matches!(p.shape, Shape::Scalar) {
        return (Form::Scalar, None);
    }
    match strip(&p.ty) {
        Type::Reference(r) => match strip(&r.elem) {
            Type::Slice(s) => (Form::SliceRef, Some((*s.elem).clone())),
            Type::Array(a) => (Form::ArrayRef, Some((*a.elem).clone())),
            other => (Form::VecRef, vec_elem(other)),
        },
        Type::Array(a) => (Form::Array, Some((*a.elem).clone())),
        other => (Form::Vec, vec_elem(other)),
    }
}

/// One test, in the spirit of:
///
/// ```text
/// #[cfg(test)]
/// #[test]
/// fn f_check_0() {
///     let v0: f64 = 1.5;
///     let v1: Vec<f64> = Vec::from([1.0, -2.0]);
///     let v2: usize = 3;
///     let check = FunctionCheck::<f64>::new("f").scalar("x", v0).array("w", &v1);
///     let r = [check.range(0), check.range(1)];
///     check.run(
///         |p: &[f64]| f(p[r[0].start], &p[r[1].clone()], v2),
///         |p: &[f64]| { let (value, g) = f_grad(..); let (g0, g1) = g; (value, [from_ref(&g0), &g1[..]].concat()) },
///         |p: &[f64], d: f64| { let (g0, g1) = f_adjoint(.., d); [..].concat() },
///     ).assert_passes();
/// }
/// ```
fn test(function: &Ident, index: usize, sig: &Signature_, values: &[&syn::Expr]) -> TokenStream {
    let local = |name: String| Ident::new(&name, Span::mixed_site());
    let (p, r, d, check, value, g, a) = (
        local("p".into()),
        local("r".into()),
        local("d".into()),
        local("check".into()),
        local("value".into()),
        local("g".into()),
        local("a".into()),
    );
    let float = crate::emit::float_ty(&sig.float);
    let name = function.to_string();
    let test_name = format_ident!("{}_check_{}", function, index, span = function.span());
    let (grad, adjoint) = (
        format_ident!("{}_grad", function),
        format_ident!("{}_adjoint", function),
    );

    let mut stores = Vec::new();
    let mut adds = Vec::new();
    let mut args = Vec::new();
    let mut parts = Vec::new();
    let mut slots = Vec::new();
    let mut k = 0usize;
    for (i, (param, value_expr)) in sig.params.iter().zip(values).enumerate() {
        let v = local(format!("v{i}"));
        let ty = &param.ty;
        let (form, elem) = form(param);
        stores.push(match (form, &elem, &param.shape) {
            (Form::Scalar, _, _) => quote!(let #v: #ty = #value_expr;),
            (Form::Array | Form::ArrayRef, Some(e), Shape::Array { len: Some(n) }) => {
                quote!(let #v: [#e; #n] = #value_expr;)
            }
            (_, Some(e), _) => {
                quote!(let #v: ::std::vec::Vec<#e> = ::std::vec::Vec::from(#value_expr);)
            }
            (_, None, _) => quote!(let #v: #ty = #value_expr;),
        });
        if param.kind != ParamKind::Differentiable {
            args.push(match form {
                Form::Scalar | Form::Array => quote!(#v),
                Form::SliceRef | Form::VecRef | Form::ArrayRef => quote!(&#v),
                Form::Vec => quote!(#v.clone()),
            });
            continue;
        }
        let label = param.ident.to_string();
        let slot = local(format!("g{k}"));
        let at = quote!(#p[#r[#k].clone()]);
        args.push(match form {
            Form::Scalar => quote!(#p[#r[#k].start]),
            Form::SliceRef => quote!(&#at),
            Form::VecRef => quote!(&#at.to_vec()),
            Form::Vec => quote!(#at.to_vec()),
            Form::Array => quote!({ let mut #a = #v; #a.copy_from_slice(&#at); #a }),
            Form::ArrayRef => quote!(&{ let mut #a = #v; #a.copy_from_slice(&#at); #a }),
        });
        if form == Form::Scalar {
            adds.push(quote!(.scalar(#label, #v)));
            parts.push(quote!(::core::slice::from_ref(&#slot)));
        } else {
            adds.push(quote!(.array(#label, &#v)));
            parts.push(quote!(&#slot[..]));
        }
        slots.push(slot);
        k += 1;
    }
    let ranges = (0..k).map(|k| quote!(#check.range(#k)));
    let unpack = if slots.len() == 1 {
        quote!(#(#slots)*)
    } else {
        quote!((#(#slots),*))
    };
    let flat = quote!([#(#parts),*].concat());
    quote! {
        #[cfg(test)]
        #[test]
        fn #test_name() {
            #(#stores)*
            let #check = ::gradmacro_runtime::FunctionCheck::<#float>::new(#name) #(#adds)*;
            let #r = [#(#ranges),*];
            #check
                .run(
                    |#p: &[#float]| #function(#(#args),*),
                    |#p: &[#float]| {
                        let (#value, #g) = #grad(#(#args),*);
                        let #unpack = #g;
                        (#value, #flat)
                    },
                    |#p: &[#float], #d: #float| {
                        let #unpack = #adjoint(#(#args,)* #d);
                        #flat
                    },
                )
                .assert_passes();
        }
    }
}
