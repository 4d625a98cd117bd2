//! The attribute's own arguments: `#[differentiate]` or `#[differentiate(wrt(a, b))]`.

use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, Token};

#[derive(Default)]
pub struct Args {
    /// `Some` when `wrt(...)` restricts the differentiable parameters.
    pub wrt: Option<Vec<Ident>>,
}

impl Parse for Args {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut args = Args::default();
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            if key != "wrt" {
                return Err(syn::Error::new(
                    key.span(),
                    format!(
                        "unknown argument `{key}`: the only argument is `wrt(a, b)`, \
                         naming the parameters to differentiate with respect to"
                    ),
                ));
            }
            if args.wrt.is_some() {
                return Err(syn::Error::new(
                    key.span(),
                    "`wrt` given twice: list every parameter in one `wrt(...)`",
                ));
            }
            let content;
            syn::parenthesized!(content in input);
            let names = Punctuated::<Ident, Token![,]>::parse_terminated(&content)?;
            if names.is_empty() {
                return Err(syn::Error::new(
                    key.span(),
                    "`wrt()` is empty: name at least one parameter, e.g. `wrt(x)`",
                ));
            }
            args.wrt = Some(names.into_iter().collect());
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(args)
    }
}
