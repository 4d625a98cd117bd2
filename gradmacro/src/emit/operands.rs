//! How both sweeps spell the pieces of a statement: a variable, its adjoint
//! and where contributions to it go, an operand, a constant or an update in
//! the function's float type.

use super::Emitter;
use crate::ir::*;
use crate::rules::Prim;
use proc_macro2::{Ident, TokenStream, TokenTree};
use quote::quote;

impl Emitter<'_> {
    /// A float constant in the function's type: `0.0`, or `T::zero()`.
    pub fn lit(&self, c: &str) -> TokenStream {
        crate::generic::lit(&self.ty, c)
    }

    /// `lhs op rhs;` for a compound assignment `op` (`+=`), in the
    /// function's type (see [`crate::generic::update`]).
    pub fn update(
        &self,
        lhs: impl quote::ToTokens,
        op: &str,
        rhs: impl quote::ToTokens,
    ) -> TokenStream {
        crate::generic::update(
            &self.ty,
            lhs.into_token_stream(),
            op,
            rhs.into_token_stream(),
        )
    }

    /// `elem = value;`, `elem += value;` or `elem -= value;`. In generic
    /// code an element of the array `value` reads (`v[k] += v[1 + k] * c`,
    /// a view of the same buffer) would be borrowed mutably before `value`
    /// is evaluated: written `elem = elem + (value);` (see `update`).
    pub fn store(&self, elem: TokenStream, op: StoreOp, value: TokenStream) -> TokenStream {
        match op {
            StoreOp::Set => quote!(#elem = #value;),
            StoreOp::Add => self.update(elem, "+=", value),
            StoreOp::Sub => self.update(elem, "-=", value),
        }
    }

    /// The core returns the value, so every primal value it reads is live.
    pub fn live(&self, v: VarId) -> bool {
        self.a.live[v.0]
    }

    pub fn var(&self, v: VarId) -> Ident {
        self.f.var(v).ident.clone()
    }

    pub fn adj(&mut self, v: VarId) -> Ident {
        if v == self.f.output {
            return self.seed.clone();
        }
        if let Some(i) = self.adjoints.get(&v) {
            return i.clone();
        }
        let i = self.names.adjoint(&self.f.var(v).ident);
        self.adjoints.insert(v, i.clone());
        i
    }

    /// Where contributions to an operand's adjoint go: `d_x`, `*d_x` (a
    /// caller's buffer) or `d_v[i]`.
    pub fn adj_place(&mut self, a: &Operand) -> Option<TokenStream> {
        match a {
            Operand::Var(v) => {
                let d = self.adj(*v);
                self.written.insert(*v);
                Some(
                    if self.buffers.contains(v) && !self.f.var(*v).shape.is_array() {
                        quote!(*#d)
                    } else {
                        quote!(#d)
                    },
                )
            }
            Operand::Elem(arr, i) => {
                let d = self.adj(*arr);
                self.written.insert(*arr);
                let i = &i.tokens;
                Some(quote!(#d[#i]))
            }
            Operand::Const(_) => None,
        }
    }

    /// An operand as tokens; `wrap` parenthesises non-primary passive code for
    /// use as a method receiver or a binary operand.
    pub fn operand(&mut self, a: &Operand, wrap: bool) -> TokenStream {
        match a {
            Operand::Var(v) => match self.folded(*v) {
                Some((e, binds)) if wrap && binds != Binds::Primary => quote!((#e)),
                Some((e, _)) => e,
                None => {
                    let i = self.var(*v);
                    quote!(#i)
                }
            },
            Operand::Elem(arr, i) => {
                let a = self.var(*arr);
                let i = &i.tokens;
                quote!(#a[#i])
            }
            Operand::Const(c) => {
                let t = &c.tokens;
                if wrap && !c.primary {
                    quote!((#t))
                } else {
                    t.clone()
                }
            }
        }
    }

    /// A folded temporary's expression and how tightly it binds, while the
    /// forward sweep is printed.
    fn folded(&self, v: VarId) -> Option<(TokenStream, Binds)> {
        self.folds.as_ref()?.get(&v).cloned()
    }

    /// Keeps `value`, what step `st` computes, to be written inside the step
    /// that reads it (see `Analysis::folded`) instead of with a `let`.
    pub fn fold_into_reader(&mut self, st: &Step, value: TokenStream) {
        let binds = self.binds(st);
        if let Some(folds) = &mut self.folds {
            folds.insert(st.dst, (value, binds));
        }
    }

    /// How tightly a step's expression binds, as printed: a folded
    /// temporary's own, through a copy.
    fn binds(&self, st: &Step) -> Binds {
        match (st.prim, &st.args[0]) {
            (Prim::Copy, Operand::Var(v)) => self.folded(*v).map_or(Binds::Primary, |f| f.1),
            (Prim::Copy, Operand::Const(c)) if !c.primary => Binds::Sum,
            (prim, _) => Binds::of(prim),
        }
    }

    /// The operands of a step, ready for its rule's `eval`.
    pub fn step_args(&mut self, st: &Step) -> Vec<TokenStream> {
        let wrap = |i: usize| i == 0 || st.args.len() == 2;
        st.args
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let folded = match a {
                    Operand::Var(v) => self.folded(*v),
                    _ => None,
                };
                if let Some((e, binds)) = folded {
                    return if binds.needs_parens(st.prim, i) {
                        quote!((#e))
                    } else {
                        e
                    };
                }
                if i == 0 && st.prim.method().is_some() {
                    // `f64::max(3.0, y)` becomes `3.0f64.max(y)`: a bare
                    // literal receiver would be an ambiguous float.
                    self.partial_operand(a)
                } else {
                    self.operand(a, st.prim != crate::rules::Prim::Copy && wrap(i))
                }
            })
            .collect()
    }

    /// An operand inside a partial derivative: literals get the float type,
    /// since `3.0.ln()` is ambiguous to rustc.
    pub fn partial_operand(&mut self, a: &Operand) -> TokenStream {
        match a {
            Operand::Const(c) => {
                if let Some(lit) = suffixed(&c.tokens, &self.ty) {
                    return lit;
                }
                if crate::lower::has_float_literal(&c.tokens) {
                    // `(0.3 * 0.3 + 1.0).ln()` is ambiguous too: name the type.
                    let (t, ty) = (unparen(c.tokens.clone()), &self.ty);
                    return quote!(::core::convert::identity::<#ty>(#t));
                }
                self.operand(a, true)
            }
            _ => self.operand(a, true),
        }
    }

    pub fn passive(&mut self, p: &Passive) -> TokenStream {
        p.tokens.clone()
    }

    /// A fresh, zeroed adjoint for `v`.
    pub fn zero_adjoint(&mut self, v: VarId) -> TokenStream {
        let ty = self.ty.clone();
        let d = self.adj(v);
        let m = if self.written.contains(&v) {
            quote!(mut)
        } else {
            quote!()
        };
        let var = self.var(v);
        let zero = self.lit("0.0");
        match &self.f.var(v).shape {
            Shape::Scalar => quote!(let #m #d: #ty = #zero;),
            Shape::Array { len: Some(n) } => quote!(let #m #d: [#ty; #n] = [#zero; #n];),
            Shape::Array { len: None } if self.f.var(v).decl.loop_depth > 0 => {
                self.reused_adjoints
                    .push(quote!(let mut #d: ::std::vec::Vec<#ty> = ::std::vec::Vec::new();));
                quote!(#d.clear(); #d.resize(#var.len(), #zero);)
            }
            Shape::Array { len: None } => match self.inline_adjoint(v) {
                Some(inline) => inline,
                None => quote!(let #m #d: ::std::vec::Vec<#ty> = ::std::vec![#zero; #var.len()];),
            },
        }
    }
}

/// An unsuffixed float literal with the function's float type attached.
fn suffixed(tokens: &TokenStream, ty: &TokenStream) -> Option<TokenStream> {
    let mut it = tokens.clone().into_iter();
    let (Some(TokenTree::Literal(l)), None) = (it.next(), it.next()) else {
        return None;
    };
    let text = l.to_string();
    let float = text.contains('.') || text.contains('e') || text.contains('E');
    if !float || text.ends_with("f64") || text.ends_with("f32") || text.starts_with("0x") {
        return None;
    }
    let mut lit: proc_macro2::Literal = format!("{text}{ty}").parse().ok()?;
    lit.set_span(l.span());
    Some(quote!(#lit))
}

/// `(a + b)` as `a + b`: after a compound assignment the parentheses are
/// redundant (and rustc says so).
pub(super) fn unparen(tokens: TokenStream) -> TokenStream {
    let mut it = tokens.clone().into_iter();
    match (it.next(), it.next()) {
        (Some(proc_macro2::TokenTree::Group(g)), None)
            if g.delimiter() == proc_macro2::Delimiter::Parenthesis && !is_tuple(&g.stream()) =>
        {
            g.stream()
        }
        _ => tokens,
    }
}

/// The inside of `()` or `(a, b)`: without its parentheses it is no longer
/// the same expression.
fn is_tuple(inner: &TokenStream) -> bool {
    inner.is_empty()
        || inner
            .clone()
            .into_iter()
            .any(|t| matches!(t, proc_macro2::TokenTree::Punct(p) if p.as_char() == ','))
}

/// Statements in braces, moved in: interpolating a finished block as one
/// group copies a handle, where `{ #(#stmts)* }` copies every token of it.
pub(crate) fn braced(stmts: impl IntoIterator<Item = TokenStream>) -> proc_macro2::Group {
    proc_macro2::Group::new(proc_macro2::Delimiter::Brace, stmts.into_iter().collect())
}

/// Whether `ident` occurs in `tokens`.
pub(crate) fn mentions(tokens: &TokenStream, ident: &Ident) -> bool {
    tokens.clone().into_iter().any(|tt| match tt {
        TokenTree::Ident(i) => i == *ident,
        TokenTree::Group(g) => mentions(&g.stream(), ident),
        _ => false,
    })
}

/// How tightly an expression binds, loosest first: what decides whether a
/// folded temporary needs parentheses where it is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Binds {
    /// `a + b`, `a - b`
    Sum,
    /// `a * b`, `a / b`, `a % b`
    Product,
    /// `-a`
    Unary,
    /// A method call, a name, an element, a literal.
    Primary,
}

impl Binds {
    fn of(prim: Prim) -> Binds {
        match prim {
            Prim::Add | Prim::Sub => Binds::Sum,
            Prim::Mul | Prim::Div | Prim::Rem => Binds::Product,
            Prim::Neg => Binds::Unary,
            _ => Binds::Primary,
        }
    }

    /// Whether an expression binding this tightly needs parentheses as
    /// operand `i` of `prim`, to stay the same tree: floating-point
    /// arithmetic is not associative, so `a - (b - c)` and `a * (b * c)`
    /// keep theirs. A negation inside another is parenthesised too (`--x`
    /// reads as a mistake).
    fn needs_parens(self, prim: Prim, i: usize) -> bool {
        match prim {
            Prim::Copy => false,
            Prim::Neg => self < Binds::Primary,
            Prim::Add | Prim::Sub => i > 0 && self <= Binds::Unary && self != Binds::Product,
            Prim::Mul | Prim::Div | Prim::Rem => {
                if i == 0 {
                    self == Binds::Sum
                } else {
                    self <= Binds::Unary
                }
            }
            // A receiver; the other operands are arguments of the call.
            _ => i == 0 && self < Binds::Primary,
        }
    }
}
