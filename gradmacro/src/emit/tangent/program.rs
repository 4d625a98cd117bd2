//! The tangent program: forward mode written back in the language the macro
//! differentiates, so that `hessian` can take its reverse.

use super::{tangent_needs, Tangents};
use crate::emit::Emitter;
use crate::ir::*;
use proc_macro2::{Ident, TokenStream};
use quote::quote;
use std::collections::HashMap;

impl Emitter<'_> {
    /// The tangent program as a function of its own, in the language the
    /// macro differentiates: `fn name(params.., t_a, t_b, ..) -> f64`
    /// returning the output's tangent alone. Differentiating it again in
    /// reverse mode gives second derivatives: with respect to the tangents,
    /// the gradient; with respect to the parameters, the Hessian times the
    /// tangents. Also returns the tangent parameters' names.
    pub(crate) fn dot_program(
        mut self,
        name: &Ident,
        receiver: Option<&syn::Receiver>,
    ) -> (TokenStream, Vec<Ident>) {
        self.dot_program = true;
        let ty = self.ty.clone();
        let need = tangent_needs(self.f, self.f.output);
        let mut t = Tangents {
            dots: HashMap::new(),
            need,
        };
        let mut params: Vec<TokenStream> = receiver.iter().map(|r| quote!(#r)).collect();
        let mut t_params = Vec::new();
        let mut t_names = Vec::new();
        let zero_tangents = self.constant_params_tangents(&mut t);
        for p in &self.f.params {
            let (ident, pty) = (&p.ident, &p.ty);
            let m = self.tan_mut(p.id);
            params.push(quote!(#m #ident: #pty));
            let Some(v) = p.var else { continue };
            let d = self.names.fresh(&format!("t_{}", p.ident));
            t.dots.insert(v, d.clone());
            t_params.push(if p.shape.is_array() {
                quote!(#d: &[#ty])
            } else {
                quote!(#m #d: #ty)
            });
            t_names.push(d);
        }
        let body = self.tan_block(&self.f.body, &mut t);
        let out = Operand::Var(self.f.output);
        let ends_in_return = matches!(self.f.body.stmts.last(), Some(Stmt::Exit(Exit::Return)));
        let out_dot = if ends_in_return {
            quote!()
        } else {
            let zero = self.lit("0.0");
            t.operand(&mut self, &out).unwrap_or(zero)
        };
        // The macro reads `vec![..]` by that name only.
        let body = plain_vec(quote!(#(#zero_tangents)* #body));
        let (gp, wc) = (&self.f.generics.params, &self.f.generics.where_clause);
        let item = quote! {
            fn #name #gp(#(#params,)* #(#t_params),*) -> #ty #wc {
                #body
                #out_dot
            }
        };
        (item, t_names)
    }
}

/// `::std::vec![..]` written `vec![..]` and `::std::vec::Vec` written `Vec`,
/// the spellings the lowering reads.
fn plain_vec(tokens: TokenStream) -> TokenStream {
    use proc_macro2::TokenTree;
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::with_capacity(tts.len());
    let mut i = 0;
    while i < tts.len() {
        let is = |k: usize, s: &str| match tts.get(i + k) {
            Some(TokenTree::Punct(p)) => {
                s.len() == 1 && p.as_char() == s.chars().next().unwrap_or(' ')
            }
            Some(TokenTree::Ident(id)) => *id == s,
            _ => false,
        };
        // `::std::vec!` is `:` `:` `std` `:` `:` `vec` `!`
        let std_vec =
            is(0, ":") && is(1, ":") && is(2, "std") && is(3, ":") && is(4, ":") && is(5, "vec");
        if std_vec && is(6, "!") {
            out.push(tts[i + 5].clone());
            i += 6;
            continue;
        }
        // `::std::vec::Vec` is `Vec`, the type the lowering knows as an array.
        if std_vec && is(6, ":") && is(7, ":") && is(8, "Vec") {
            out.push(tts[i + 8].clone());
            i += 9;
            continue;
        }
        out.push(match &tts[i] {
            TokenTree::Group(g) => {
                let mut ng = proc_macro2::Group::new(g.delimiter(), plain_vec(g.stream()));
                ng.set_span(g.span());
                TokenTree::Group(ng)
            }
            other => other.clone(),
        });
        i += 1;
    }
    out.into_iter().collect()
}
