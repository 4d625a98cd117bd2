//! The generic twin of a program: every function generic over its float
//! type, `fn f<T>(x: T, w: &[T]) -> T where T: num_traits::Float + ..`, with
//! `T` wherever the program wrote `f64`, literals as `T::from(c).unwrap()`,
//! `f64::sin` as `T::sin`, `k as f64` as `T::from(k).unwrap()`. The harness
//! calls it at `f64`, where its values and derivatives must be exactly those
//! of the program (the oracle's copy is made from the program, not from the
//! twin). The copy without the macro is the twin too: a program the
//! transformation cannot express generically shows as the generator's error,
//! not the macro's.

use super::dualize::{in_vec_macro, is_f64};
use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, Expr, Lit, Type};

/// `T`'s bound: `Float` for the macro, and what the function itself needs to
/// compile as written (`+=` on floats, `.sum::<T>()` over values and
/// references, `total_cmp`, arithmetic on the references a closure over
/// `w.iter()` receives).
fn bound() -> syn::WhereClause {
    parse_quote! {
        where
            T: num_traits::Float
                + num_traits::NumAssign
                + std::iter::Sum
                + for<'a> std::iter::Sum<&'a T>
                + std::iter::Product
                + for<'a> std::iter::Product<&'a T>
                + num_traits::float::TotalOrder
                + for<'a> std::ops::Add<&'a T, Output = T>
                + for<'a> std::ops::Sub<&'a T, Output = T>
                + for<'a> std::ops::Mul<&'a T, Output = T>
                + for<'a> std::ops::Div<&'a T, Output = T>,
            for<'a> &'a T: std::ops::Add<&'a T, Output = T>
                + std::ops::Sub<&'a T, Output = T>
                + std::ops::Mul<&'a T, Output = T>
                + std::ops::Div<&'a T, Output = T>
                + std::ops::Add<T, Output = T>
                + std::ops::Sub<T, Output = T>
                + std::ops::Mul<T, Output = T>
                + std::ops::Div<T, Output = T>
                + std::ops::Neg<Output = T>,
    }
}

/// The twin of `src` (one or more functions, each `#[differentiate]`), or
/// `None` where the program has anything else (structs, their methods).
pub fn twin(src: &str) -> Option<String> {
    let file: syn::File = syn::parse_str(src).ok()?;
    // What each function returning an array returns, to write the type of
    // a `let` bound to its call (which generic code needs: see below).
    let arrays: Vec<(String, Type)> = file
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Fn(f) => match &f.sig.output {
                syn::ReturnType::Type(_, t) if matches!(&**t, Type::Array(_)) => {
                    Some((f.sig.ident.to_string(), (**t).clone()))
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    let mut out = String::new();
    for item in file.items {
        let syn::Item::Fn(mut f) = item else {
            return None;
        };
        let differentiated = f.attrs.iter().any(|a| a.path().is_ident("differentiate"));
        if !differentiated || !f.sig.generics.params.is_empty() {
            return None;
        }
        let mut g = Generic {
            failed: false,
            arrays: &arrays,
        };
        g.visit_signature_mut(&mut f.sig);
        g.visit_block_mut(&mut f.block);
        if g.failed {
            return None;
        }
        f.sig.generics = parse_quote!(<T>);
        f.sig.generics.where_clause = Some(bound());
        // Each attribute on a line of its own: the copy without the macro
        // drops the lines that start with `#[differentiate`.
        for a in std::mem::take(&mut f.attrs) {
            out.push_str(&format!("#[{}]\n", a.meta.to_token_stream()));
        }
        // Printed on one line from tokens, a block the program spread over
        // several lines reads as unnecessary braces to the lint.
        out.push_str("#[allow(unused_braces)]\n");
        out.push_str(&f.to_token_stream().to_string());
        out.push_str("\n\n");
    }
    Some(out)
}

struct Generic<'a> {
    /// Something the twin cannot write generically (a macro it cannot read).
    failed: bool,
    /// The functions returning arrays, with their return types.
    arrays: &'a [(String, Type)],
}

/// `c` as `T::from(c).unwrap()`, for a float literal (or an integer one
/// with the suffix `f64`).
fn constant(lit: &Lit) -> Option<Expr> {
    let digits = match lit {
        Lit::Float(f) if matches!(f.suffix(), "" | "f64") => f.base10_digits().to_string(),
        Lit::Int(i) if i.suffix() == "f64" => format!("{}.0", i.base10_digits()),
        _ => return None,
    };
    let c: TokenStream = digits.parse().ok()?;
    Some(parse_quote!(T::from(#c).unwrap()))
}

/// `f64::NAME` as `T`'s: its constants as functions, its methods as `T`'s.
fn f64_path(p: &syn::ExprPath) -> Option<Expr> {
    let segs: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let names: Vec<&str> = segs.iter().map(String::as_str).collect();
    let constant =
        |c: &syn::Ident| -> Expr { parse_quote!(T::from(std::f64::consts::#c).unwrap()) };
    let last = &p.path.segments.last()?.ident;
    match names.as_slice() {
        ["std" | "core", "f64", "consts", _] | ["f64", "consts", _] => Some(constant(last)),
        ["f64", name] => Some(match *name {
            "EPSILON" => parse_quote!(T::epsilon()),
            "INFINITY" => parse_quote!(T::infinity()),
            "NEG_INFINITY" => parse_quote!(T::neg_infinity()),
            "MAX" => parse_quote!(T::max_value()),
            "MIN" => parse_quote!(T::min_value()),
            "MIN_POSITIVE" => parse_quote!(T::min_positive_value()),
            "NAN" => parse_quote!(T::nan()),
            _ => parse_quote!(T::#last),
        }),
        _ => None,
    }
}

impl Generic<'_> {
    /// The arguments of `vec![..]`, made generic; anything else in a macro
    /// that names a float fails the twin.
    fn macro_tokens(&mut self, m: &mut syn::Macro) {
        let floats = m.tokens.clone().into_iter().any(|t| match t {
            proc_macro2::TokenTree::Literal(l) => {
                let s = l.to_string();
                s.contains('.') || s.ends_with("f64")
            }
            proc_macro2::TokenTree::Ident(i) => i == "f64",
            proc_macro2::TokenTree::Group(_) => true,
            proc_macro2::TokenTree::Punct(_) => false,
        });
        if !floats {
            return;
        }
        if !m.path.is_ident("vec") || !in_vec_macro(m, |e| self.visit_expr_mut(e)) {
            self.failed = true;
        }
    }
}

impl VisitMut for Generic<'_> {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if is_f64(ty) {
            *ty = parse_quote!(T);
            return;
        }
        visit_mut::visit_type_mut(self, ty);
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::Lit(l) => {
                if let Some(c) = constant(&l.lit) {
                    *e = c;
                }
            }
            // `(k as f64)` as `T::from(k).unwrap()`, without the parentheses
            // the lint would find unnecessary around a call.
            Expr::Paren(p) if matches!(&*p.expr, Expr::Cast(c) if is_f64(&c.ty)) => {
                let mut inner = (*p.expr).clone();
                self.visit_expr_mut(&mut inner);
                *e = inner;
            }
            Expr::Cast(c) if is_f64(&c.ty) => {
                self.visit_expr_mut(&mut c.expr);
                // `(n + 1) as f64`: an argument needs no parentheses.
                let inner = match &*c.expr {
                    Expr::Paren(p) => &p.expr,
                    other => other,
                };
                *e = parse_quote!(T::from(#inner).unwrap());
            }
            Expr::Path(p) => {
                if let Some(t) = f64_path(p) {
                    *e = t;
                }
            }
            Expr::Macro(m) => self.macro_tokens(&mut m.mac),
            // `v[i] += v[j]` on a generic `T` is a call of `add_assign`,
            // which borrows `v` mutably while its argument reads it: written
            // `v[i] = v[i] + (v[j])`, the same value.
            Expr::Binary(b) if matches!(&*b.left, Expr::Index(_)) => {
                visit_mut::visit_expr_binary_mut(self, b);
                let op = match b.op {
                    syn::BinOp::AddAssign(_) => quote!(+),
                    syn::BinOp::SubAssign(_) => quote!(-),
                    syn::BinOp::MulAssign(_) => quote!(*),
                    syn::BinOp::DivAssign(_) => quote!(/),
                    _ => return,
                };
                let (place, value) = (&b.left, &b.right);
                *e = parse_quote!(#place = #place #op (#value));
            }
            _ => visit_mut::visit_expr_mut(self, e),
        }
    }

    /// `let c = g(..);` with `g` returning `[f64; N]`: `let c: [T; N] = ..`.
    /// Without the type, the macro asks for it in generic code (its
    /// placeholder for the array cannot be `Default`).
    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        let callee = l.init.as_ref().and_then(|i| match &*i.expr {
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
                _ => None,
            },
            _ => None,
        });
        let ret = callee.and_then(|c| self.arrays.iter().find(|(n, _)| *n == c));
        if let (syn::Pat::Ident(pi), Some((_, ty))) = (&l.pat, ret) {
            l.pat = syn::Pat::Type(syn::PatType {
                attrs: Vec::new(),
                pat: Box::new(syn::Pat::Ident(pi.clone())),
                colon_token: Default::default(),
                ty: Box::new(ty.clone()),
            });
        }
        visit_mut::visit_local_mut(self, l);
    }

    fn visit_stmt_macro_mut(&mut self, m: &mut syn::StmtMacro) {
        self.macro_tokens(&mut m.mac);
    }
}
