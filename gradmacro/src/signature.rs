//! Validates the signature and classifies the parameters.

use crate::args::Args;
use crate::ctxt::Ctxt;
use crate::ir::{Float, Shape};
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{FnArg, Pat, ReturnType, Signature, Type};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ParamKind {
    /// A float that gets a gradient entry.
    Differentiable,
    /// A float excluded by `wrt(...)`.
    ConstFloat,
    /// An integer or `bool`.
    Passive,
}

pub struct ParamSpec {
    pub ident: syn::Ident,
    pub ty: Type,
    pub kind: ParamKind,
    pub shape: Shape,
}

pub struct Signature_ {
    pub float: Float,
    pub params: Vec<ParamSpec>,
    /// `&self` or `self` of a method: constant data, read by field.
    pub receiver: Option<syn::Receiver>,
}

/// The integer and `bool` types: constants, never differentiated.
pub(crate) const INTEGERS: &[&str] = &[
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "bool",
];

/// `f64`, `f32` or an integer/bool name, seen through groups and parentheses.
fn simple_type(ty: &Type) -> Option<String> {
    match ty {
        Type::Group(g) => simple_type(&g.elem),
        Type::Paren(p) => simple_type(&p.elem),
        Type::Path(p) if p.qself.is_none() => {
            let ident = p.path.get_ident()?;
            Some(ident.to_string())
        }
        _ => None,
    }
}

/// A vector output: `[f64; M]` or `Vec<f64>` (or `f32`), owned.
pub fn vector_output(sig: &Signature) -> Option<Float> {
    let generic = generic_float(&sig.generics).ok().flatten();
    let generic = generic.as_ref();
    let ReturnType::Type(_, ty) = &sig.output else {
        return None;
    };
    if matches!(**ty, Type::Reference(_)) {
        return None;
    }
    match shape_of(ty, generic) {
        Ok(Some((name, Shape::Array { .. }))) => float_of(&name, generic),
        _ => None,
    }
}

/// The element type name and shape of `T`, `&[T]`, `&Vec<T>`, `Vec<T>`,
/// `[T; N]`, `&[T; N]`; `Err` explains a type that is close but unsupported.
fn shape_of(
    ty: &Type,
    generic: Option<&syn::Ident>,
) -> Result<Option<(String, Shape)>, &'static str> {
    if let Some(n) = simple_type(ty) {
        return Ok(Some((n, Shape::Scalar)));
    }
    let (inner, by_ref) = match ty {
        Type::Reference(r) if r.mutability.is_some() => {
            return Err("a function returning a value cannot write into its parameters: take `&[f64]` and return values instead (a helper returning nothing may write into `&mut [f64]` output buffers and `&mut f64` floats, for its differentiated callers)")
        }
        Type::Reference(r)
            if simple_type(&r.elem)
                .is_some_and(|n| float_of(&n, generic).is_some() || INTEGERS.contains(&n.as_str())) =>
        {
            return Err("pass scalars by value: `x: f64` rather than `x: &f64`")
        }
        Type::Reference(r) => (&*r.elem, true),
        other => (other, false),
    };
    match inner {
        Type::Slice(s) if by_ref => {
            Ok(elem_name(&s.elem)?.map(|n| (n, Shape::Array { len: None })))
        }
        Type::Array(a) => Ok(elem_name(&a.elem)?.map(|n| {
            (
                n,
                Shape::Array {
                    len: Some(a.len.to_token_stream()),
                },
            )
        })),
        Type::Path(p) if p.qself.is_none() => {
            let last = match p.path.segments.last() {
                Some(l) if l.ident == "Vec" => l,
                _ => return Ok(None),
            };
            match &last.arguments {
                syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => match &a.args[0] {
                    syn::GenericArgument::Type(t) => {
                        Ok(elem_name(t)?.map(|n| (n, Shape::Array { len: None })))
                    }
                    _ => Ok(None),
                },
                _ => Ok(None),
            }
        }
        _ => Ok(None),
    }
}

const NESTED_ARRAYS: &str =
    "arrays of arrays are not supported: flatten them into one slice and index it with `i * cols + j`";

fn elem_name(ty: &Type) -> Result<Option<String>, &'static str> {
    match simple_type(ty) {
        Some(n) => Ok(Some(n)),
        None => match ty {
            Type::Slice(_) | Type::Array(_) | Type::Reference(_) => Err(NESTED_ARRAYS),
            Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Vec") => {
                Err(NESTED_ARRAYS)
            }
            _ => Ok(None),
        },
    }
}

/// An integer or `bool` type: a constant that is not data of the user's own.
pub(crate) fn integer(ty: &Type) -> bool {
    simple_type(ty).is_some_and(|n| INTEGERS.contains(&n.as_str()))
}

/// The float type named `name`: `f64`, `f32`, or the function's generic
/// float parameter.
fn float_of(name: &str, generic: Option<&syn::Ident>) -> Option<Float> {
    match name {
        "f64" => Some(Float::F64),
        "f32" => Some(Float::F32),
        _ => generic
            .filter(|g| *g == name)
            .map(|g| Float::Generic(g.clone())),
    }
}

/// Whether `bounds` name a trait called `Float` (`num_traits::Float`).
fn has_float_bound<'a>(mut bounds: impl Iterator<Item = &'a syn::TypeParamBound>) -> bool {
    bounds.any(|b| {
        matches!(b, syn::TypeParamBound::Trait(t)
            if t.path.segments.last().is_some_and(|s| s.ident == "Float"))
    })
}

/// The function's generic float parameter `T: num_traits::Float` (bounded
/// inline or in the `where` clause), if it has one; `Err` for generics that
/// cannot be differentiated.
pub fn generic_float(
    generics: &syn::Generics,
) -> Result<Option<syn::Ident>, (TokenStream, String)> {
    let mut float = None;
    for p in &generics.params {
        match p {
            syn::GenericParam::Lifetime(l) => {
                return Err((l.to_token_stream(), "lifetime parameters are not supported on a differentiated function: take slices with elided lifetimes (`w: &[T]`)".into()))
            }
            syn::GenericParam::Const(c) => {
                return Err((c.to_token_stream(), "const generic parameters are not supported on a differentiated function: take a slice (`w: &[T]`) instead of an array `[T; N]`".into()))
            }
            syn::GenericParam::Type(t) => {
                let in_where = generics.where_clause.iter().flat_map(|w| &w.predicates).any(|pr| {
                    matches!(pr, syn::WherePredicate::Type(pt)
                        if matches!(&pt.bounded_ty, Type::Path(tp) if tp.qself.is_none() && tp.path.is_ident(&t.ident))
                            && has_float_bound(pt.bounds.iter()))
                });
                if !(has_float_bound(t.bounds.iter()) || in_where) {
                    let name = &t.ident;
                    return Err((t.to_token_stream(), format!("`{name}` is not bounded by `Float`: a differentiated function can be generic over its float type only; write `{name}: num_traits::Float`")));
                }
                if float.is_some() {
                    return Err((t.to_token_stream(), "a differentiated function can be generic over one float type only: use the same `T` for every float".into()));
                }
                float = Some(t.ident.clone());
            }
        }
    }
    Ok(float)
}

pub fn check(sig: &Signature, args: &Args, cx: &mut Ctxt) -> Option<Signature_> {
    if let Some(t) = &sig.asyncness {
        cx.error(t, "`async fn` cannot be differentiated: remove `async`; the gradient of a plain `fn` is computed synchronously");
    }
    if let Some(t) = &sig.unsafety {
        cx.error(t, "`unsafe fn` cannot be differentiated: move the unsafe part into a helper and differentiate a safe `fn`");
    }
    let generic = match generic_float(&sig.generics) {
        Ok(g) => g,
        Err((tokens, msg)) => {
            cx.error(tokens, msg);
            // Its parameter and return types name the generics: no more to say.
            return None;
        }
    };
    let generic = generic.as_ref();
    if let Some(v) = &sig.variadic {
        cx.error(v, "variadic functions cannot be differentiated");
    }

    let float = match &sig.output {
        ReturnType::Type(_, ty) => match simple_type(ty).and_then(|n| float_of(&n, generic)) {
            Some(f) => Some(f),
            None => {
                cx.error(ty, format!("cannot differentiate a function returning `{}`: the return type must be `f64` or `f32`", ty.to_token_stream()));
                None
            }
        },
        ReturnType::Default => {
            cx.error(
                &sig.ident,
                "a differentiated function must return `f64` or `f32`: add `-> f64`",
            );
            None
        }
    };

    let mut params = Vec::new();
    let mut receiver = None;
    for input in &sig.inputs {
        let pt = match input {
            FnArg::Receiver(r) => {
                if r.mutability.is_some() || r.colon_token.is_some() {
                    cx.error(r, "a differentiated method takes `&self` (or `self` of a `Copy` type): it reads its fields as constants and cannot write to them");
                } else {
                    receiver = Some(r.clone());
                }
                continue;
            }
            FnArg::Typed(pt) => pt,
        };
        let ident = match &*pt.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
            other => {
                cx.error(other, "patterns in parameters are not supported: bind the parameter to a plain name (`x: f64`) and destructure it in the body");
                continue;
            }
        };
        let (name, shape) = match shape_of(&pt.ty, generic) {
            Ok(Some((n, s))) => (Some(n), s),
            Ok(None) => (None, Shape::Scalar),
            Err(msg) => {
                cx.error(&pt.ty, msg);
                continue;
            }
        };
        let kind = match name.as_deref() {
            Some(n) if float_of(n, generic).is_some() => {
                if let Some(f) = float
                    .as_ref()
                    .filter(|&f| float_of(n, generic).as_ref() != Some(f))
                {
                    cx.error(&pt.ty, format!("`{ident}` is `{n}` but the function returns `{}`: use one float type throughout", crate::emit::float_ty(f)));
                }
                ParamKind::Differentiable
            }
            // Integers, `bool`, structs, strings, ...: constants, read as
            // data (`cfg.steps`, `w.gamma`).
            _ => ParamKind::Passive,
        };
        params.push(ParamSpec {
            ident,
            ty: (*pt.ty).clone(),
            kind,
            shape,
        });
    }

    if let Some(wrt) = &args.wrt {
        let mut seen: Vec<&syn::Ident> = Vec::new();
        for name in wrt {
            if seen.contains(&name) {
                cx.error(name, format!("`{name}` is listed twice in `wrt(...)`"));
                continue;
            }
            seen.push(name);
            match params.iter().find(|p| p.ident == *name) {
                None => cx.error(name, format!("`wrt({name})` names no parameter of this function")),
                Some(p) if p.kind == ParamKind::Passive && (p.shape.is_array() || integer(&p.ty)) => cx.error(name, format!("`{name}` is not a float parameter: only `f64`/`f32` parameters can be differentiated")),
                Some(p) if p.kind == ParamKind::Passive => cx.error(name, format!("`{name}` cannot be differentiated: `wrt(..)` takes float parameters, arrays of them, and structs (`p: S` or `p: &S` with `#[derive(gradmacro::Differentiable)]` on `S`)")),
                Some(_) => {}
            }
        }
        for p in &mut params {
            if p.kind == ParamKind::Differentiable && !wrt.contains(&p.ident) {
                p.kind = ParamKind::ConstFloat;
            }
        }
    }
    if float.is_some()
        && !cx.has_errors()
        && !params.iter().any(|p| p.kind == ParamKind::Differentiable)
    {
        let data = params
            .iter()
            .any(|p| !p.shape.is_array() && !integer(&p.ty));
        cx.error(
            &sig.ident,
            if data {
                "nothing to differentiate: the function has no `f64`/`f32` parameter (a struct parameter is a constant unless `wrt(..)` names it, and its type derives `gradmacro::Differentiable`)"
            } else {
                "nothing to differentiate: the function has no `f64`/`f32` parameter"
            },
        );
    }
    Some(Signature_ {
        float: float?,
        params,
        receiver,
    })
}

/// `Some("f64")`/`Some("f32")` for a float type.
/// Whether `ty` is `f64`, `f32` or the function's generic float `T`.
pub(crate) fn is_float(ty: &Type, generic: Option<&syn::Ident>) -> bool {
    simple_type(ty)
        .and_then(|n| float_of(&n, generic))
        .is_some()
}

pub fn float_name(ty: &Type) -> Option<&'static str> {
    match simple_type(ty)?.as_str() {
        "f64" => Some("f64"),
        "f32" => Some("f32"),
        _ => None,
    }
}

/// For a custom adjoint's parameter or a local's annotation: `Some(shape)`
/// for floats and float arrays (of `generic` too, the function's `T`),
/// `None` for integer and `bool` constants, `Err` for anything else.
pub fn param_shape(ty: &Type, generic: Option<&syn::Ident>) -> Result<Option<Shape>, String> {
    match shape_of(ty, generic) {
        Ok(Some((n, s))) if float_of(&n, generic).is_some() => Ok(Some(s)),
        Ok(Some((n, _))) if INTEGERS.contains(&n.as_str()) => Ok(None),
        Err(msg) => Err(msg.to_string()),
        _ => Err(format!(
            "parameters of type `{}` are not supported",
            ty.to_token_stream()
        )),
    }
}
