//! Buffers of run-time length held in an inline array when short: a
//! helper's copy of its output buffer and that copy's adjoint, which its
//! pullback would otherwise allocate on every call.

use super::Emitter;
use crate::ir::*;
use proc_macro2::{Delimiter, Ident, TokenStream, TokenTree};
use quote::quote;

/// The longest buffer held inline.
const INLINE: usize = 16;

/// `n` of `vec![x; n]` (any path to `vec!`).
fn vec_len(init: &TokenStream) -> Option<TokenStream> {
    let tokens: Vec<TokenTree> = init.clone().into_iter().collect();
    let [.., TokenTree::Ident(name), TokenTree::Punct(bang), TokenTree::Group(g)] = &tokens[..]
    else {
        return None;
    };
    if name != "vec" || bang.as_char() != '!' || g.delimiter() != Delimiter::Bracket {
        return None;
    }
    let mut parts = g.stream().into_iter();
    parts
        .by_ref()
        .find(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ';'))?;
    Some(parts.collect())
}

/// Whether `v` can live inline: of one definition (see
/// `analysis::sole_definitions`), `vec![x; n]`.
pub(crate) fn eligible(f: &Func, v: VarId) -> bool {
    matches!(f.var(v).shape, Shape::Array { len: None }) && definition_len(f, v).is_some()
}

/// `n` of the one definition `vec![x; n]` of `v`.
fn definition_len(f: &Func, v: VarId) -> Option<TokenStream> {
    let d = crate::analysis::sole_definitions(f)[v.0]?;
    if d.empty {
        return None;
    }
    vec_len(&d.init.tokens)
}

impl Emitter<'_> {
    /// `let name: &mut [T] = ..;`: a slice of `len` zeros, inline when short.
    fn inline_zeros(&mut self, name: &Ident, len: TokenStream) -> TokenStream {
        let (ty, zero) = (self.ty.clone(), self.lit("0.0"));
        let inline = self.names.fresh(&format!("{name}_inline"));
        let heap = self.names.fresh(&format!("{name}_heap"));
        let n = self.names.fresh("n");
        let most = proc_macro2::Literal::usize_unsuffixed(INLINE);
        quote! {
            let mut #inline: [#ty; #most] = [#zero; #most];
            let mut #heap: ::std::vec::Vec<#ty>;
            let #name: &mut [#ty] = match #len {
                #n if #n <= #most => &mut #inline[..#n],
                #n => {
                    #heap = ::std::vec![#zero; #n];
                    &mut #heap
                }
            };
        }
    }

    /// The definition of an inline buffer, if `d` is one.
    pub(super) fn inline_def(&mut self, d: &ArrayDef) -> Option<TokenStream> {
        if !self.f.var(d.dst).on_stack {
            return None;
        }
        let len = vec_len(&d.init.tokens)?;
        let name = self.var(d.dst);
        Some(self.inline_zeros(&name, len))
    }

    /// The adjoint of an inline buffer, if `v` is one: as long as its
    /// definition says (the buffer itself may not be computed, when the
    /// reverse sweep reads none of its values).
    pub(super) fn inline_adjoint(&mut self, v: VarId) -> Option<TokenStream> {
        if !self.f.var(v).on_stack {
            return None;
        }
        let len = definition_len(self.f, v)?;
        let d = self.adj(v);
        Some(self.inline_zeros(&d, len))
    }
}
