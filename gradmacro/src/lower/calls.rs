//! Calls of the user's differentiated functions and methods: each argument
//! passed as written, with where its share of the adjoint goes (a scalar, an
//! array, a part of one, or scratch).

use super::rename::{self, Binding, Resolve};
use super::{Lowerer, Val};
use crate::ir::{CallArg, Operand, Passive, Share};
use quote::ToTokens;
use syn::Expr;

impl Lowerer<'_> {
    /// A call to the user's own function with an active argument: its value
    /// from the function itself, its adjoint from `<path>_pullback`.
    pub(super) fn user_call(&mut self, c: &syn::ExprCall, e: &Expr) -> Val {
        let Expr::Path(p) = &*c.func else {
            self.cx.error(
                &c.func,
                "only functions named by a path can be called with a differentiated argument",
            );
            return self.passive_val_silent();
        };
        let Some(last) = p.path.segments.last() else {
            return self.passive_val_silent();
        };
        let name = last.ident.to_string();
        if super::reject::is_mem_move(c) {
            self.cx
                .error(e, super::reject::Unsupported::MemMove.message());
            return self.passive_val_silent();
        }
        if let (Some(Binding::Closure), 1) = (self.lookup(&name), p.path.segments.len()) {
            // Calls that could be written out were, before lowering.
            self.cx.error(e, "this call of a local closure cannot be written out (a `return` in its body, or a pattern parameter): write the computation inline");
            return self.passive_val_silent();
        }
        let segs = &p.path.segments;
        if name == "identity" && segs.len() >= 2 && segs[segs.len() - 2].ident == "convert" {
            // `::core::convert::identity::<f64>(e)` only names `e`'s type (the
            // tangent program writes it so): it is `e`.
            if let [arg] = &c.args.iter().collect::<Vec<_>>()[..] {
                return self.expr(arg);
            }
        }
        if self.resolve(&name).is_some() && p.path.segments.len() == 1 {
            self.cx.error(&c.func, format!("`{name}` is a local variable (a closure?): only functions can be called with a differentiated argument; write the computation inline, or make it a `#[differentiate]` function"));
            return self.passive_val_silent();
        }
        // `g::<T>(x)` keeps its turbofish: `g_pullback::<T>`.
        if p.qself.is_some()
            || matches!(last.arguments, syn::PathArguments::Parenthesized(_))
            || self.resolve(&name).is_some() && p.path.segments.len() == 1
        {
            self.cx.error(&c.func, "only plain function paths (`f(x)`, `module::f(x)`) can be called with a differentiated argument");
            return self.passive_val_silent();
        }
        let segs = &p.path.segments;
        let stop = matches!(name.as_str(), "no_grad" | "detach")
            && (segs.len() == 1 || segs[segs.len() - 2].ident == "gradmacro_runtime");
        if stop && c.args.len() == 1 {
            // The gradient stops here on purpose: the value is a constant.
            return self.passive_val(e);
        }
        let Some(args) = self.call_args(c.args.iter()) else {
            return self.passive_val_silent();
        };
        let suffixed = |suffix: &str| {
            let mut path = p.path.clone();
            if let Some(seg) = path.segments.last_mut() {
                seg.ident = syn::Ident::new(&format!("{}{suffix}", seg.ident), seg.ident.span());
            }
            path.to_token_stream()
        };
        let _ = e;
        Val::Call(crate::ir::Call {
            id: crate::ir::StmtId::default(),
            dst: crate::ir::VarId(usize::MAX),
            func: p.path.to_token_stream(),
            pullback: suffixed("_pullback"),
            pushforward: suffixed("_pushforward"),
            dot: suffixed("_dot"),
            into: name
                .ends_with(crate::outputs::SUFFIX)
                .then(|| suffixed(&format!("_{}", crate::outputs::INTO))),
            args,
            write: crate::ir::Write::Def,
            ctx: self.ctx,
        })
    }

    /// The arguments of a call to a differentiated function: each passed as
    /// written, with where its share of the adjoint goes.
    fn call_args<'e>(&mut self, exprs: impl Iterator<Item = &'e Expr>) -> Option<Vec<CallArg>> {
        let mut args = Vec::new();
        for a in exprs {
            if let Some(arg) = self.array_arg(a) {
                args.push(arg);
                continue;
            }
            if !rename::mentions_active(a, self) {
                let value = self.passive(a)?;
                // A generic float constant's tangent is `T::zero()`: the
                // `Default::default()` passed for other constants needs a
                // bound `T` does not have.
                let share = if self.generic_float_constant(a) {
                    Share::Scalar(Operand::Const(value.clone()))
                } else {
                    Share::None
                };
                args.push(CallArg { value, share });
                continue;
            }
            let val = self.expr(a);
            let op = self.operand(val);
            let tokens = match &op {
                Operand::Var(v) => {
                    let i = &self.vars[v.0].ident;
                    quote::quote!(#i)
                }
                Operand::Elem(arr, i) => {
                    let a = &self.vars[arr.0].ident;
                    let i = &i.tokens;
                    quote::quote!(#a[#i])
                }
                Operand::Const(c) => c.tokens.clone(),
            };
            args.push(CallArg {
                value: Passive {
                    tokens,
                    primary: true,
                    reads: op.reads(),
                },
                share: Share::Scalar(op),
            });
        }
        Some(args)
    }

    /// `self.h(x)` where `h` is a differentiated method of the same type: its
    /// value from the method itself, its adjoint from `self.h_pullback`.
    pub(super) fn self_method_call(&mut self, m: &syn::ExprMethodCall) -> Val {
        let Some(args) = self.call_args(m.args.iter()) else {
            return self.passive_val_silent();
        };
        let method = &m.method;
        let pullback = syn::Ident::new(&format!("{method}_pullback"), method.span());
        let pushforward = syn::Ident::new(&format!("{method}_pushforward"), method.span());
        let dot = syn::Ident::new(&format!("{method}_dot"), method.span());
        Val::Call(crate::ir::Call {
            id: crate::ir::StmtId::default(),
            dst: crate::ir::VarId(usize::MAX),
            func: quote::quote!(self.#method),
            pullback: quote::quote!(self.#pullback),
            pushforward: quote::quote!(self.#pushforward),
            dot: quote::quote!(self.#dot),
            into: None,
            args,
            write: crate::ir::Write::Def,
            ctx: self.ctx,
        })
    }

    /// An array argument: `w`, `&w`, or a part of one, `&w[a..b]`.
    fn array_arg(&mut self, a: &Expr) -> Option<CallArg> {
        let (inner, by_ref) = match crate::lower::strip(a) {
            Expr::Reference(r) if r.mutability.is_none() => (crate::lower::strip(&r.expr), true),
            other => (other, false),
        };
        let (base, range, by_ref) = match (inner, fixed_view(inner)) {
            (_, Some((base, range))) => (base, Some(range), true),
            (Expr::Index(ix), _) if matches!(crate::lower::strip(&ix.index), Expr::Range(_)) => {
                (&*ix.expr, Some((*ix.index).clone()), by_ref)
            }
            (other, _) => (other, None, by_ref),
        };
        let range = range.as_ref();
        let arr = rename::local_name(base).and_then(|n| self.resolve(&n.to_string()))?;
        let var = &self.vars[arr.0];
        if !var.shape.is_array() || by_ref != (range.is_some() || by_ref) {
            return None;
        }
        let (float_elems, owned_vec) = (var.float_elems, var.owned_vec);
        let range = match range {
            Some(r) if rename::mentions_active(r, self) => {
                self.cx.error(r, "a slice's bounds must be integers that do not depend on a differentiated value");
                return None;
            }
            Some(r) => Some(self.passive(r)?),
            None => None,
        };
        let (renamed, reads) = rename::rename(a, self);
        let ident = self.vars[arr.0].ident.clone();
        // By value, an owned `Vec` would be moved by the forward call and
        // again by the reverse sweep's: both get a clone.
        let tokens = if !by_ref && owned_vec {
            quote::quote!(#ident.clone())
        } else {
            renamed.to_token_stream()
        };
        let value = Passive {
            tokens,
            primary: true,
            reads,
        };
        let share = match (self.is_active(arr), range) {
            (true, None) => Share::Array(arr),
            (true, Some(r)) => Share::Slice(arr, r),
            (false, r) if float_elems => Share::Scratch(match r {
                Some(r) => {
                    let r = &r.tokens;
                    quote::quote!(#ident[#r].len())
                }
                None => quote::quote!(#ident.len()),
            }),
            (false, _) => Share::None,
        };
        Some(CallArg { value, share })
    }
}

/// A fixed-size view of an array, passed where `&[f64; N]` is wanted:
/// `x.first_chunk::<N>().unwrap()`, `x.last_chunk::<N>().unwrap()`,
/// `x[a..b].try_into().unwrap()`. The argument is passed as written; the
/// range is where its adjoint goes.
fn fixed_view(e: &Expr) -> Option<(&Expr, Expr)> {
    let Expr::MethodCall(unwrap) = e else {
        return None;
    };
    if unwrap.method != "unwrap" || !unwrap.args.is_empty() {
        return None;
    }
    let Expr::MethodCall(m) = crate::lower::strip(&unwrap.receiver) else {
        return None;
    };
    if !m.args.is_empty() {
        return None;
    }
    let len = || -> Option<proc_macro2::TokenStream> {
        match m.turbofish.as_ref()?.args.first()? {
            syn::GenericArgument::Type(t) => Some(t.to_token_stream()),
            syn::GenericArgument::Const(c) => Some(c.to_token_stream()),
            _ => None,
        }
    };
    let base = crate::lower::strip(&m.receiver);
    match m.method.to_string().as_str() {
        "first_chunk" => {
            let n = len()?;
            Some((base, syn::parse_quote!(..#n)))
        }
        "last_chunk" => {
            let n = len()?;
            Some((base, syn::parse_quote!(#base.len() - #n..)))
        }
        "try_into" if m.turbofish.is_none() => match base {
            Expr::Index(ix) if matches!(crate::lower::strip(&ix.index), Expr::Range(_)) => {
                Some((&*ix.expr, (*ix.index).clone()))
            }
            _ => None,
        },
        _ => None,
    }
}
