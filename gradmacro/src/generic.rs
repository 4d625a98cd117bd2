//! How generated code spells floats, for `f64`/`f32` and for a generic float
//! `T: num_traits::Float`: every constant, cast and in-place update the
//! emitter and the rules write goes through here. For `f64`/`f32` the output
//! is the plain literal (`0.0`, `x as f64`, `d += e`); for `T` it is what
//! `T`'s own bound offers (`T::zero()`, `T::from(c).unwrap()`, `d = d + e`),
//! so the generated code needs nothing the user's bound does not give.

use proc_macro2::{TokenStream, TokenTree};
use quote::{quote, ToTokens};

/// Whether `ty` (as returned by `float_ty`) is a generic float parameter.
/// Called for every constant the emitter writes: it looks at the one
/// identifier instead of printing the stream.
pub fn is_generic(ty: &TokenStream) -> bool {
    let mut tokens = ty.clone().into_iter();
    match (tokens.next(), tokens.next()) {
        (Some(TokenTree::Ident(i)), None) => i != "f64" && i != "f32",
        _ => true,
    }
}

/// The float constant `c` (a literal as written, `"0.0"`, `"-0.0"`, `"2.0"`)
/// in the type `ty`.
pub fn lit(ty: &TokenStream, c: &str) -> TokenStream {
    if !is_generic(ty) {
        return plain_lit(c);
    }
    match c {
        "0.0" => quote!(#ty::zero()),
        "1.0" => quote!(#ty::one()),
        "-0.0" => quote!(-#ty::zero()),
        "-1.0" => quote!(-#ty::one()),
        _ => {
            let c = plain_lit(c);
            quote!(#ty::from(#c).unwrap())
        }
    }
}

/// The constant `c` in `ty`, built only where it is written out: most rules
/// name several constants and use one, or none.
pub struct LazyLit<'a> {
    pub ty: &'a TokenStream,
    pub c: &'static str,
}

impl ToTokens for LazyLit<'_> {
    fn to_tokens(&self, out: &mut TokenStream) {
        out.extend(lit(self.ty, self.c));
    }
}

/// `c` as tokens. The few constants the rules write are built directly:
/// lexing a string is the costliest way to make a token.
fn plain_lit(c: &str) -> TokenStream {
    let (minus, digits) = match c.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, c),
    };
    let lit = match digits {
        "0.0" | "0.5" | "1.0" | "2.0" | "3.0" => {
            proc_macro2::Literal::f64_unsuffixed(digits.parse().expect("a float"))
        }
        _ => return c.parse().expect("a float literal"),
    };
    if minus {
        quote!(-#lit)
    } else {
        lit.into_token_stream()
    }
}

/// NaN in the type `ty`.
pub fn nan(ty: &TokenStream) -> TokenStream {
    if is_generic(ty) {
        quote!(#ty::nan())
    } else {
        quote!(#ty::NAN)
    }
}

/// The constant `core::f64::consts::<name>` (`LN_2`, `PI`, ...) in `ty`.
pub fn consts(ty: &TokenStream, name: &str) -> TokenStream {
    let name = proc_macro2::Ident::new(name, proc_macro2::Span::call_site());
    if is_generic(ty) {
        quote!(#ty::from(::core::f64::consts::#name).unwrap())
    } else {
        quote!(::core::#ty::consts::#name)
    }
}

/// An integer expression (primary) converted to `ty`.
pub fn from_int(ty: &TokenStream, e: &TokenStream) -> TokenStream {
    if is_generic(ty) {
        quote!(#ty::from(#e).unwrap())
    } else {
        quote!(#e as #ty)
    }
}

/// The statement `lhs op rhs;` for a compound assignment `op` (`+=`, `-=`,
/// `*=`): `num_traits::Float` has no `AddAssign`, so for a generic float it
/// is written `lhs = lhs + (rhs);`.
pub fn update(ty: &TokenStream, lhs: TokenStream, op: &str, rhs: TokenStream) -> TokenStream {
    use proc_macro2::{Punct, Spacing};
    // `+=`, `-=`, `*=`, `/=`: one operator character and `=`. Built by
    // moving the parts in: `quote!(#lhs ..)` would copy every token.
    let ch = op.chars().next().expect("a compound assignment");
    let semi = TokenTree::Punct(Punct::new(';', Spacing::Alone));
    if !is_generic(ty) {
        let (bin, eq) = (
            Punct::new(ch, Spacing::Joint),
            Punct::new('=', Spacing::Alone),
        );
        let mut out = lhs;
        out.extend([TokenTree::Punct(bin), TokenTree::Punct(eq)]);
        out.extend(rhs);
        out.extend([semi]);
        return out;
    }
    let bin = Punct::new(ch, Spacing::Alone);
    let simple = rhs.clone().into_iter().count() == 1
        && !matches!(rhs.clone().into_iter().next(), Some(TokenTree::Group(g)) if g.delimiter() == proc_macro2::Delimiter::None);
    if simple {
        quote!(#lhs = #lhs #bin #rhs;)
    } else {
        quote!(#lhs = #lhs #bin (#rhs);)
    }
}

/// The user's generics, re-emitted verbatim on every generated function.
#[derive(Clone, Debug, Default)]
pub struct Generics {
    /// `<T: Float>`, empty for a non-generic function.
    pub params: TokenStream,
    /// `where T: Float`, or empty.
    pub where_clause: TokenStream,
    /// `::<T>`, or empty.
    pub turbofish: TokenStream,
}

impl Generics {
    pub fn of(sig: &syn::Signature) -> Generics {
        if sig.generics.params.is_empty() && sig.generics.where_clause.is_none() {
            return Generics::default();
        }
        let (params, args, where_clause) = sig.generics.split_for_impl();
        Generics {
            params: params.to_token_stream(),
            where_clause: where_clause.to_token_stream(),
            turbofish: args.as_turbofish().to_token_stream(),
        }
    }
}
