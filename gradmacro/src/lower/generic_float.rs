//! Constants of a generic float type `T`: which expressions are one, and the
//! type a declaration of one writes (`T` has no `Default` to stand in for
//! its value).

use super::rename::{self, Binding, Resolve};
use super::{strip, Lowerer};
use crate::ir::Operand;
use crate::rules::Prim;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{BinOp, Expr, UnOp};

impl Lowerer<'_> {
    /// The type a `let` writes, or for a generic float constant, `T` (and
    /// `[T; N]` for an array literal of them): a declaration placed before
    /// its value needs it (`T` has no `Default` to stand in for it).
    pub(super) fn declared_type(
        &self,
        ty: Option<&syn::Type>,
        e: &syn::Expr,
    ) -> Option<TokenStream> {
        ty.map(ToTokens::to_token_stream)
            .or_else(|| self.generic_float_type(e))
    }

    fn generic_float_type(&self, e: &syn::Expr) -> Option<TokenStream> {
        let g = self.float.generic()?;
        match strip(e) {
            syn::Expr::Array(a) if a.elems.iter().any(|x| self.generic_float_constant(x)) => {
                let n = proc_macro2::Literal::usize_unsuffixed(a.elems.len());
                Some(quote::quote!([#g; #n]))
            }
            syn::Expr::Repeat(r) if self.generic_float_constant(&r.expr) => {
                let n = &r.len;
                Some(quote::quote!([#g; #n]))
            }
            e => self.generic_float_constant(e).then(|| quote::quote!(#g)),
        }
    }

    /// `T::from(e).unwrap()` in a function generic over `T`: `e`.
    pub(super) fn generic_conversion<'m>(&self, m: &'m syn::ExprMethodCall) -> Option<&'m Expr> {
        let g = self.float.generic()?;
        if m.method != "unwrap" || !m.args.is_empty() {
            return None;
        }
        let Expr::Call(c) = crate::lower::strip(&m.receiver) else {
            return None;
        };
        let Expr::Path(p) = &*c.func else { return None };
        let segs = &p.path.segments;
        let from = segs.len() == 2 && segs[0].ident == *g && segs[1].ident == "from";
        (from && c.args.len() == 1).then(|| &c.args[0])
    }

    /// In a function generic over `T`, a constant whose type is `T`: a
    /// float literal, `T::zero()`, `T::from(c).unwrap()`, a float method of
    /// one, arithmetic on them, an element of a float array, or a local
    /// annotated `T`.
    pub(crate) fn generic_float_constant(&self, e: &Expr) -> bool {
        let Some(g) = self.float.generic() else {
            return false;
        };
        match crate::lower::strip(e) {
            Expr::Lit(l) => matches!(l.lit, syn::Lit::Float(_)),
            // `-c`, and `*c` for an element an adaptor binds by reference.
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_) | UnOp::Deref(_)) => {
                self.generic_float_constant(&u.expr)
            }
            Expr::Binary(b)
                if matches!(
                    b.op,
                    BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_)
                ) =>
            {
                self.generic_float_constant(&b.left) || self.generic_float_constant(&b.right)
            }
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) if p.path.segments.len() == 2 && p.path.segments[0].ident == *g => {
                    true
                }
                // `g(T::from(2.5).unwrap())`: a function of a generic float
                // constant, taken to give one (a wrong guess is a type
                // error, where `Default` would be one for certain).
                _ => c.args.iter().any(|a| self.generic_float_constant(a)),
            },
            Expr::MethodCall(m)
                if m.method == "unwrap" || Prim::from_method(&m.method.to_string()).is_some() =>
            {
                self.generic_float_constant(&m.receiver)
            }
            // `w.iter().sum::<T>()`
            Expr::MethodCall(m) if m.method == "sum" || m.method == "product" => {
                m.turbofish.as_ref().is_some_and(|t| {
                    matches!(t.args.first(), Some(syn::GenericArgument::Type(syn::Type::Path(p))) if p.path.is_ident(g))
                })
            }
            // `(0..n).map(|_| T::one()).min_by(..).unwrap_or(T::zero())`:
            // an element of an iterator of generic float constants.
            Expr::MethodCall(m) if m.method == "unwrap_or" || m.method == "fold" => {
                self.generic_float_constant(&m.receiver)
                    || m.args.first().is_some_and(|a| self.generic_float_constant(a))
            }
            Expr::MethodCall(m) if ["min_by", "max_by", "next", "last"].iter().any(|n| m.method == n) => {
                self.generic_float_constant(&m.receiver)
            }
            Expr::MethodCall(m) if m.method == "map" => match m.args.first() {
                Some(Expr::Closure(c)) => self.generic_float_constant(&c.body),
                _ => false,
            },
            Expr::Block(b) => self.generic_float_block(&b.block),
            // `if c { T::zero() } else { .. }`, `match`: what a branch gives.
            Expr::If(i) => {
                self.generic_float_block(&i.then_branch)
                    || i.else_branch.as_ref().is_some_and(|(_, e)| self.generic_float_constant(e))
            }
            Expr::Match(m) => m.arms.iter().any(|a| self.generic_float_constant(&a.body)),
            // An element of an array of floats (`buf[0]`).
            Expr::Index(ix) if !matches!(crate::lower::strip(&ix.index), Expr::Range(_)) => {
                rename::local_name(&ix.expr)
                    .and_then(|n| self.resolve(&n.to_string()))
                    .is_some_and(|v| self.vars[v.0].shape.is_array() && self.vars[v.0].float_elems)
            }
            Expr::Path(p) => {
                let Some(name) = p.path.get_ident().map(ToString::to_string) else {
                    return false;
                };
                let annotated = |v: crate::ir::VarId| {
                    self.vars[v.0].ty.as_ref().is_some_and(|t| *g == t.to_string())
                };
                match self.lookup(&name) {
                    Some(Binding::Var(v)) => annotated(v),
                    // `buf.iter().map(|c| ..)`: `c` is an element of `buf`.
                    Some(Binding::Alias(a)) => match a.operand {
                        Operand::Elem(arr, _) => self.vars[arr.0].float_elems,
                        Operand::Var(v) => annotated(v),
                        Operand::Const(_) => false,
                    },
                    _ => false,
                }
            }
            _ => false,
        }
    }

    fn generic_float_block(&self, b: &syn::Block) -> bool {
        match b.stmts.last() {
            Some(syn::Stmt::Expr(tail, None)) => {
                // `{ let (a,) = (T::one(),); -a.fract() }`: a float method of
                // a value the block binds, or its negation, gives a float.
                let mut root = crate::lower::strip(tail);
                loop {
                    root = crate::lower::strip(match root {
                        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => &u.expr,
                        Expr::MethodCall(m)
                            if m.method == "unwrap"
                                || Prim::from_method(&m.method.to_string()).is_some() =>
                        {
                            &m.receiver
                        }
                        _ => break,
                    });
                }
                self.generic_float_constant(tail) || self.bound_in_block(b, root)
            }
            _ => false,
        }
    }

    /// `{ let (a,) = (T::from(2).unwrap(),); a }`: the tail names a value
    /// the block binds, from a generic float constant.
    fn bound_in_block(&self, b: &syn::Block, tail: &Expr) -> bool {
        let Some(name) = rename::local_name(tail) else {
            return false;
        };
        let is_name = |p: &syn::Pat| matches!(p, syn::Pat::Ident(i) if i.ident == *name);
        b.stmts
            .iter()
            .rev()
            .find_map(|s| {
                let syn::Stmt::Local(l) = s else { return None };
                let pat = match &l.pat {
                    syn::Pat::Type(t) => &*t.pat,
                    p => p,
                };
                let init = l.init.as_ref().map(|i| crate::lower::strip(&i.expr));
                match (pat, init) {
                    (p, Some(e)) if is_name(p) => Some(self.generic_float_constant(e)),
                    (syn::Pat::Tuple(p), Some(Expr::Tuple(t))) if p.elems.iter().any(is_name) => {
                        Some(
                            p.elems
                                .iter()
                                .zip(&t.elems)
                                .any(|(p, e)| is_name(p) && self.generic_float_constant(e)),
                        )
                    }
                    (p, _) if is_name(p) => Some(false),
                    _ => None,
                }
            })
            .unwrap_or(false)
    }
}
