//! What is declared before the forward sweep: hoisted variables with a
//! placeholder value, and every record kept outside a plain `let`.

use crate::emit::records::Keep;
use crate::emit::Emitter;
use crate::ir::*;
use proc_macro2::TokenStream;
use quote::quote;

impl Emitter<'_> {
    /// `let mut v = <a placeholder value>;`
    pub(super) fn default_decl(&self, id: VarId) -> TokenStream {
        let ty = &self.ty;
        let v = self.f.var(id);
        let ident = &v.ident;
        let zero = self.lit("0.0");
        match &v.shape {
            Shape::Array { len } if v.kind == VarKind::Active => match len {
                Some(n) => quote!(let mut #ident: [#ty; #n] = [#zero; #n];),
                // A callee's array whose type was not written (`let c =
                // cross(&a, &b);`): the assignment tells the compiler. (A
                // generic function must write it: see `Lowerer::array_call`.)
                None if v.ty.is_none() && !v.owned_vec => {
                    quote!(let mut #ident = ::core::default::Default::default();)
                }
                None => quote!(let mut #ident: ::std::vec::Vec<#ty> = ::std::vec::Vec::new();),
            },
            Shape::Array { len: Some(n) } if v.float_elems => {
                quote!(let mut #ident: [#ty; #n] = [#zero; #n];)
            }
            // A float needs no `Default` (a generic `T` has none).
            Shape::Scalar if v.kind == VarKind::Active || self.a.floats[id.0] => {
                quote!(let mut #ident: #ty = #zero;)
            }
            _ => match (&v.ty, v.ty.as_ref().and_then(|t| self.float_array_len(t))) {
                // `[T; N]` written by the user (a constant a call returns).
                (Some(t), Some(n)) => quote!(let mut #ident: #t = [#zero; #n];),
                (Some(t), None) => {
                    quote!(let mut #ident: #t = ::core::default::Default::default();)
                }
                (None, _) => quote!(let mut #ident = ::core::default::Default::default();),
            },
        }
    }

    /// `N` of a type `[F; N]`, `F` the function's float type.
    fn float_array_len(&self, ty: &TokenStream) -> Option<syn::Expr> {
        match syn::parse2::<syn::Type>(ty.clone()).ok()? {
            syn::Type::Array(a)
                if quote::ToTokens::to_token_stream(&a.elem).to_string() == self.ty.to_string() =>
            {
                Some(a.len)
            }
            _ => None,
        }
    }

    /// Declarations that must precede the forward sweep: hoisted variables and
    /// every record kept outside a plain `let`.
    pub(crate) fn hoisted_decls(&mut self) -> TokenStream {
        let ty = self.ty.clone();
        let zero = self.lit("0.0");
        let mut out = TokenStream::new();
        for i in 0..self.f.vars.len() {
            if !self.a.hoisted[i] || !self.live(VarId(i)) {
                continue;
            }
            out.extend(self.default_decl(VarId(i)));
        }
        let mut slots: Vec<(String, TokenStream)> = Vec::new();
        for s in self.rec.branch.values() {
            let i = &s.ident;
            match s.store {
                Keep::Once => slots.push((i.to_string(), quote!(let mut #i = false;))),
                Keep::Tape => slots.push((
                    i.to_string(),
                    quote!(let mut #i: ::std::vec::Vec<bool> = ::std::vec::Vec::new();),
                )),
                Keep::Top => {}
            }
        }
        let counts = self.rec.count.values().map(|s| {
            if s.typed {
                (s, quote!(0usize), quote!(usize))
            } else {
                (s, quote!(0), quote!(_))
            }
        });
        let exits = self
            .rec
            .exit
            .values()
            .map(|s| (s, quote!(false), quote!(bool)));
        for (s, init, elem) in counts.chain(exits) {
            let i = &s.ident;
            match s.store {
                Keep::Once => slots.push((i.to_string(), quote!(let mut #i = #init;))),
                Keep::Tape => slots.push((
                    i.to_string(),
                    quote!(let mut #i: ::std::vec::Vec<#elem> = ::std::vec::Vec::new();),
                )),
                Keep::Top => {}
            }
        }
        for (s, v, whole) in self.rec.saves.values() {
            if s.store != Keep::Once {
                continue;
            }
            let i = &s.ident;
            let var = self.f.var(*v);
            slots.push((
                i.to_string(),
                match (&var.shape, whole) {
                    (Shape::Array { len: Some(n) }, true) => quote!(let mut #i = [#zero; #n];),
                    (Shape::Array { len: None }, true) => {
                        quote!(let mut #i = ::std::vec::Vec::new();)
                    }
                    // An element of a float array, or a float.
                    _ if var.kind == VarKind::Active
                        || self.a.floats[v.0]
                        || (var.shape.is_array() && var.float_elems) =>
                    {
                        quote!(let mut #i: #ty = #zero;)
                    }
                    _ => quote!(let mut #i = ::core::default::Default::default();),
                },
            ));
        }
        for t in &self.rec.scratch {
            slots.push((
                t.to_string(),
                quote!(let mut #t: ::std::vec::Vec<#ty> = ::std::vec::Vec::new();),
            ));
        }
        for t in self.rec.array_tapes.values() {
            slots.push((
                t.to_string(),
                quote!(let mut #t: ::std::vec::Vec<_> = ::std::vec::Vec::new();),
            ));
        }
        for (v, t) in &self.rec.tapes {
            if let Some((cap, len)) = self.rec.stack.get(v) {
                let cap = proc_macro2::Literal::usize_unsuffixed(*cap as usize);
                slots.push((
                    t.to_string(),
                    quote!(let mut #t: [#ty; #cap] = [#zero; #cap]; let mut #len = 0usize;),
                ));
                continue;
            }
            let elem = if self.f.is_active(*v) && !self.f.var(*v).shape.is_array() {
                quote!(#ty)
            } else {
                quote!(_)
            };
            slots.push((
                t.to_string(),
                quote!(let mut #t: ::std::vec::Vec<#elem> = ::std::vec::Vec::new();),
            ));
        }
        // Hash-map order would make the expansion vary from build to build.
        slots.sort_by(|a, b| a.0.cmp(&b.0));
        out.extend(slots.into_iter().map(|(_, t)| t));
        out
    }
}
