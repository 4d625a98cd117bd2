//! `#[derive(Differentiable)]`: makes a struct's gradient, a value of the
//! same type with every float field zeroed and every other field copied.

use crate::structs::ZERO;
use proc_macro2::{Ident, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Type};

use crate::signature::INTEGERS;

/// The last segment's name of a plain path type, and the type inside its
/// single angle-bracketed argument, if any.
fn path_parts(ty: &Type) -> Option<(String, Option<&Type>)> {
    let Type::Path(p) = ty else { return None };
    if p.qself.is_some() {
        return None;
    }
    let last = p.path.segments.last()?;
    let arg = match &last.arguments {
        syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => match &a.args[0] {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        },
        _ => None,
    };
    Some((last.ident.to_string(), arg))
}

fn scalar(ty: &Type) -> Option<&'static str> {
    let (name, arg) = path_parts(ty)?;
    if arg.is_some() {
        return None;
    }
    match name.as_str() {
        "f64" | "f32" => Some("float"),
        n if INTEGERS.contains(&n) => Some("data"),
        _ => None,
    }
}

const WHAT_FITS: &str = "a `Differentiable` struct holds `f64`/`f32` fields, arrays `[f64; N]` and `Vec<f64>` of them, integer and `bool` fields (copied into the gradient, as data), integer arrays, and structs that derive `Differentiable` themselves";

/// The field's value in the gradient, or why the field cannot be there.
fn zero_of(field: &Ident, ty: &Type) -> Result<TokenStream, String> {
    let unsupported = |what: &str| Err(format!("{what}; {WHAT_FITS}"));
    match ty {
        Type::Paren(p) => zero_of(field, &p.elem),
        Type::Group(g) => zero_of(field, &g.elem),
        Type::Reference(_) => unsupported("references cannot be fields: own the data (`Vec<f64>`, `[f64; N]`), or pass it to the function as a separate parameter"),
        Type::Array(a) => match scalar(&a.elem) {
            Some("float") => {
                let n = &a.len;
                Ok(quote!([0.0; #n]))
            }
            Some(_) => Ok(quote!(::core::clone::Clone::clone(&self.#field))),
            None => unsupported("arrays of arrays or of structs cannot be fields yet (flatten them into one `Vec<f64>`)"),
        },
        _ => match path_parts(ty) {
            Some((v, Some(elem))) if v == "Vec" => match scalar(elem) {
                Some("float") => Ok(quote!(::std::vec![0.0; self.#field.len()])),
                Some(_) => Ok(quote!(::core::clone::Clone::clone(&self.#field))),
                None => unsupported("a `Vec` of anything but floats or integers cannot be a field yet (flatten it into one `Vec<f64>`, or keep it in a separate parameter)"),
            },
            Some((name, None)) => match scalar(ty) {
                Some("float") => Ok(quote!(0.0)),
                Some(_) => Ok(quote!(self.#field)),
                _ if ["String", "str", "PathBuf"].contains(&name.as_str()) => {
                    unsupported("text cannot be a field (keep it in a separate parameter)")
                }
                // Another struct: it must derive `Differentiable` too.
                _ => {
                    let zero = Ident::new(ZERO, ty.span());
                    Ok(quote_spanned!(ty.span()=> <#ty>::#zero(&self.#field)))
                }
            },
            _ => unsupported("this type cannot be a field"),
        },
    }
}

pub fn derive(input: TokenStream) -> TokenStream {
    let item: DeriveInput = match syn::parse2(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let name = &item.ident;
    let fields = match &item.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(n) => &n.named,
            other => {
                return syn::Error::new_spanned(other, "`Differentiable` is derived for structs with named fields (`struct P { w: Vec<f64>, b: f64 }`): the gradient names each field").to_compile_error()
            }
        },
        Data::Enum(e) => {
            return syn::Error::new_spanned(e.enum_token, "`Differentiable` is derived for structs with named fields, not enums").to_compile_error()
        }
        Data::Union(u) => {
            return syn::Error::new_spanned(u.union_token, "`Differentiable` is derived for structs with named fields, not unions").to_compile_error()
        }
    };
    let typed = item
        .generics
        .params
        .iter()
        .any(|p| !matches!(p, syn::GenericParam::Lifetime(_)));
    if typed {
        return syn::Error::new_spanned(&item.generics, "`Differentiable` cannot be derived for a generic struct yet: write the struct for `f64` (or `f32`)").to_compile_error();
    }
    let mut errors = TokenStream::new();
    let mut inits = Vec::new();
    for f in fields {
        let ident = f.ident.as_ref().expect("named fields");
        match zero_of(ident, &f.ty) {
            Ok(v) => inits.push(quote!(#ident: #v)),
            Err(msg) => errors.extend(
                syn::Error::new_spanned(&f.ty, format!("field `{ident}`: {msg}"))
                    .to_compile_error(),
            ),
        }
    }
    if !errors.is_empty() {
        return errors;
    }
    let zero = Ident::new(ZERO, proc_macro2::Span::call_site());
    let doc = format!(" A `{name}` with every float zeroed and every other field copied: the gradient that `#[differentiate]` fills in.");
    let (generics, ty_generics, where_clause) = item.generics.split_for_impl();
    quote! {
        impl #generics #name #ty_generics #where_clause {
            #[doc = #doc]
            #[doc(hidden)]
            #[allow(dead_code, non_snake_case)]
            #[inline]
            pub fn #zero(&self) -> Self {
                Self { #(#inits),* }
            }
        }
    }
}
