//! Collects every error found in one expansion so the user sees them all at once.

use proc_macro2::TokenStream;
use std::fmt::Display;

#[derive(Default)]
pub struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    pub fn error(&mut self, spanned: impl quote::ToTokens, message: impl Display) {
        self.errors.push(syn::Error::new_spanned(spanned, message));
    }

    pub fn error_at(&mut self, span: proc_macro2::Span, message: impl Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    pub fn push(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// Drops errors recorded after `len` (from an abandoned attempt).
    pub fn truncate(&mut self, len: usize) {
        self.errors.truncate(len);
    }

    /// The first error recorded, if any.
    pub fn first(&self) -> Option<&syn::Error> {
        self.errors.first()
    }

    /// `compile_error!` invocations, one per error, each at its own span.
    pub fn into_compile_errors(self) -> TokenStream {
        self.errors
            .iter()
            .map(syn::Error::to_compile_error)
            .collect()
    }
}
