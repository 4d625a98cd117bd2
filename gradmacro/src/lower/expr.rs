//! syn → IR for expressions: arithmetic and method calls on active values
//! become primitive steps; everything that does not depend on an active value is
//! kept verbatim as passive code.

use super::reject::Unsupported;
use super::rename::{self, Binding, Resolve};
use super::{Lowerer, Val};
use crate::ir::{CallArg, Float, Operand, Passive, Share};
use crate::rules::Prim;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, UnOp};

/// Float methods whose result carries no derivative (it is not a float, or it
/// is piecewise constant by nature): allowed on active values, evaluated passively.
const PASSIVE_METHODS: &[&str] = &[
    "is_nan",
    "is_infinite",
    "is_finite",
    "is_normal",
    "is_subnormal",
    "is_sign_positive",
    "is_sign_negative",
    "classify",
    "to_bits",
    "partial_cmp",
    "total_cmp",
    "len",
    "is_empty",
    // Iterator methods with integer or `bool` results, evaluated on values.
    "count",
    "any",
    "all",
    "position",
];

impl Lowerer<'_> {
    /// Passive code as written, locals renamed; reports forbidden syntax.
    pub(crate) fn passive(&mut self, e: &Expr) -> Option<Passive> {
        let bad = rename::forbidden(e);
        if !bad.is_empty() {
            for (tokens, msg) in bad {
                self.cx.error(tokens, msg);
            }
            return None;
        }
        let (renamed, reads) = rename::rename(e, self);
        Some(Passive {
            tokens: renamed.to_token_stream(),
            primary: rename::is_primary(e),
            reads,
        })
    }

    fn passive_val(&mut self, e: &Expr) -> Val {
        // A block with statements is lowered statement by statement even
        // when nothing in it is differentiated: code kept as written is one
        // expression, where statements have no place.
        if holds_statements(e) {
            return self.active_expr(super::strip(e));
        }
        match self.passive(e) {
            Some(p) => Val::Const(p),
            None => Val::Const(Passive {
                tokens: quote::quote!(0.0),
                primary: true,
                reads: Vec::new(),
            }),
        }
    }

    pub(crate) fn expr(&mut self, e: &Expr) -> Val {
        if !rename::mentions_active(e, self) {
            return self.passive_val(e);
        }
        self.active_expr(e)
    }

    /// `e`, known to read a differentiated value. Where a parent knows which
    /// child makes it active, the child is not searched again: a chain of
    /// 10,000 operations lowers in linear time.
    fn active_expr(&mut self, e: &Expr) -> Val {
        match e {
            Expr::Path(_) => {
                let name = rename::local_name(e).map(|i| i.to_string());
                match name.and_then(|n| self.lookup(&n)) {
                    Some(Binding::Var(v)) => Val::Var(v),
                    Some(Binding::Alias(a)) => match a.operand.clone() {
                        Operand::Var(v) => Val::Var(v),
                        Operand::Elem(arr, i) => Val::Elem(arr, i),
                        Operand::Const(c) => Val::Const(c),
                    },
                    Some(Binding::Closure) => {
                        self.cx.error(e, "a local closure can only be called here (`sq(x)`): it is written out at each call");
                        self.passive_val_silent()
                    }
                    None => self.passive_val(e),
                }
            }
            Expr::Paren(p) => self.active_expr(&p.expr),
            Expr::Group(g) => self.active_expr(&g.expr),
            Expr::Unary(u) => match u.op {
                // The operator's span, as for binary operators (and not
                // `e.span()`, which prints all of `e`: quadratic for `- - - x`).
                UnOp::Neg(minus) => {
                    let a = self.active_expr(&u.expr);
                    let a = self.operand(a);
                    Val::Pending(Prim::Neg, vec![a], minus.span)
                }
                UnOp::Not(_) => self.passive_val(e),
                UnOp::Deref(_) if rename::local_name(&u.expr).is_some_and(|n| self.transparent(&n.to_string())) => {
                    self.expr(&u.expr)
                }
                // `*x.iter().max_by(..).unwrap()`: the element itself.
                UnOp::Deref(_) if super::extrema::is_extremum(&u.expr) => self.active_expr(&u.expr),
                _ => self.unsupported(e, "dereferencing is not supported here: parameters are passed by value (`x: f64`)"),
            },
            Expr::Binary(b) => self.binary(b, e),
            Expr::Cast(c) => self.cast(c, e),
            Expr::MethodCall(m) => self.method_call(m, e),
            Expr::Call(c) => self.call(c, e),
            Expr::Block(b) if b.label.is_none() => {
                let mut result = None;
                self.scoped_block(|l| {
                    let (body, tail) = match b.block.stmts.split_last() {
                        Some((syn::Stmt::Expr(t, None), body)) => (body, Some(t)),
                        _ => (&b.block.stmts[..], None),
                    };
                    for s in body {
                        l.stmt_public(s);
                    }
                    result = tail.map(|t| l.expr(t));
                });
                result.unwrap_or_else(|| self.unsupported(e, "this block has no value: end it with an expression without `;`"))
            }
            Expr::If(_) => {
                let t = self.temp(e.span());
                self.declare_stmt(t);
                self.assign_expr(t, e);
                Val::Var(t)
            }
            Expr::Match(_) => self.unsupported(e, "`match` is not supported on differentiated values: use `if` / `else if` with comparisons"),
            Expr::Index(ix) => self.index_read(ix, e),
            // `x.iter().enumerate().max_by(..).unwrap().0`: an index.
            Expr::Field(_) if super::extrema::is_position(e) => self.passive_val(e),
            Expr::Field(f) if matches!(&*f.base, Expr::MethodCall(m) if Prim::from_method(&m.method.to_string()).is_none()) => {
                // `x.sin_cos().0`: the method is the thing to explain.
                self.expr(&f.base)
            }
            Expr::Field(_) | Expr::Struct(_) | Expr::Tuple(_) => {
                self.unsupported(e, "tuples and structs of differentiated values are not supported: use separate `f64` variables")
            }
            Expr::Array(_) | Expr::Repeat(_) => {
                self.unsupported(e, "an array of differentiated values must be a variable: `let v = [a, b];` then use `v[i]`")
            }
            Expr::Reference(_) => self.unsupported(e, "references to differentiated values are not supported: pass and use the `f64` by value"),
            Expr::Closure(_) => self.unsupported(e, "closures are not supported in a differentiated function: write the computation inline or in a separate function"),
            Expr::Macro(_) => self.unsupported(e, Unsupported::Macro.message()),
            Expr::Loop(_) => self.unsupported(e, "a `loop` used as a value (`break value`) is not supported: declare the variable before the loop, assign it inside, then `break`"),
            Expr::While(_) | Expr::ForLoop(_) => self.unsupported(e, "a loop has no float value: assign to a variable inside the loop and use it afterwards"),
            Expr::Assign(_) => self.unsupported(e, Unsupported::Assign.message()),
            Expr::Return(_) | Expr::Break(_) | Expr::Continue(_) => self.unsupported(e, Unsupported::ExitInExpression.message()),
            Expr::Unsafe(_) => self.unsupported(e, Unsupported::Unsafe.message()),
            Expr::Try(_) => self.unsupported(e, Unsupported::Try.message()),
            _ => self.unsupported(e, "this expression is not supported in a differentiated function"),
        }
    }

    fn unsupported(&mut self, e: &Expr, msg: &str) -> Val {
        self.cx.error(e, msg);
        Val::Const(Passive {
            tokens: quote::quote!(0.0),
            primary: true,
            reads: Vec::new(),
        })
    }

    fn binary(&mut self, b: &syn::ExprBinary, e: &Expr) -> Val {
        let prim = match b.op {
            BinOp::Add(_) => Prim::Add,
            BinOp::Sub(_) => Prim::Sub,
            BinOp::Mul(_) => Prim::Mul,
            BinOp::Div(_) => Prim::Div,
            BinOp::Rem(_) => Prim::Rem,
            BinOp::Eq(_)
            | BinOp::Ne(_)
            | BinOp::Lt(_)
            | BinOp::Le(_)
            | BinOp::Gt(_)
            | BinOp::Ge(_)
            | BinOp::And(_)
            | BinOp::Or(_) => {
                // A comparison has no derivative: evaluate it on the primal values.
                return self.passive_val(e);
            }
            op if rename::is_compound_assign(&op) => {
                return self.unsupported(e, Unsupported::CompoundAssign.message())
            }
            _ => return self.unsupported(e, "bitwise operators are not defined for floats"),
        };
        // The right operand of a left-deep chain (`x * a * b * ..`) is small:
        // look there first; if it is passive, the left one is active.
        let right_active = rename::mentions_active(&b.right, self);
        let l = if right_active {
            self.expr(&b.left)
        } else {
            self.active_expr(&b.left)
        };
        let l = self.operand(l);
        let r = if right_active {
            self.active_expr(&b.right)
        } else {
            self.passive_val(&b.right)
        };
        let r = self.operand(r);
        Val::Pending(prim, vec![l, r], b.op.span())
    }

    fn cast(&mut self, c: &syn::ExprCast, e: &Expr) -> Val {
        let target = match &*c.ty {
            syn::Type::Path(p) => p.path.get_ident().map(|i| i.to_string()),
            _ => None,
        };
        let own = crate::emit::float_ty(&self.float).to_string();
        let own = own.as_str();
        match target.as_deref() {
            Some(t @ ("f64" | "f32")) => match self.expr(&c.expr) {
                // `v.iter().count() as f64`: an integer made a float.
                Val::Const(p) => {
                    let (tokens, ty) = (&p.tokens, &c.ty);
                    let tokens = if p.primary {
                        quote::quote!(#tokens as #ty)
                    } else {
                        quote::quote!((#tokens) as #ty)
                    };
                    Val::Const(Passive {
                        tokens,
                        primary: false,
                        reads: p.reads,
                    })
                }
                v if t == own => v,
                _ => self.unsupported(e, format!("casting a differentiated value to another float type is not supported: this function computes in `{own}`").as_str()),
            },
            // A float-to-integer cast is piecewise constant: derivative 0.
            _ => self.passive_val(e),
        }
    }

    fn method_call(&mut self, m: &syn::ExprMethodCall, e: &Expr) -> Val {
        let name = m.method.to_string();
        if let Some(arg) = self.generic_conversion(m) {
            return match self.expr(arg) {
                // `T::from(v.iter().count()).unwrap()`: an integer made a
                // float, as `count() as f64` is.
                Val::Const(p) => {
                    let (g, tokens) = (self.float.generic(), &p.tokens);
                    Val::Const(Passive {
                        tokens: quote::quote!(#g::from(#tokens).unwrap()),
                        primary: true,
                        reads: p.reads,
                    })
                }
                // Of a `T` already: the value itself.
                v => v,
            };
        }
        if let Some(val) = self.extremum(e) {
            return val;
        }
        if let Some(val) = self.reduction(m) {
            return val;
        }
        if let Some(val) = self.iter_reduction(m, e) {
            return val;
        }
        if PASSIVE_METHODS.contains(&name.as_str()) {
            return self.passive_val(e);
        }
        // `x.iter().copied().max_by(..).unwrap()` too: the adaptor is named.
        let adaptor =
            unsupported_adaptor(e).filter(|c| ITERATOR_METHODS.contains(&c.to_string().as_str()));
        if ITERATOR_METHODS.contains(&name.as_str()) || adaptor.is_some() {
            let culprit = adaptor.unwrap_or(&m.method);
            self.cx.error(culprit, adaptor_message(culprit));
            return self.passive_val_silent();
        }
        if m.turbofish.is_some() {
            return self.unsupported(
                e,
                "turbofish method calls are not supported on differentiated values",
            );
        }
        let receiver_is_self =
            matches!(super::strip(&m.receiver), Expr::Path(p) if p.path.is_ident("self"));
        if Prim::from_method(&name).is_none() && receiver_is_self && m.turbofish.is_none() {
            return self.self_method_call(m);
        }
        let Some(prim) = Prim::from_method(&name) else {
            let msg = match name.as_str() {
                "sin_cos" => "`sin_cos` is not supported: call `x.sin()` and `x.cos()` separately"
                    .to_string(),
                "pop" => {
                    "`.pop()` of differentiated values is not supported: read the elements by \
                          index (`for i in (0..v.len()).rev() { .. v[i] .. }`), or keep a `Vec` of \
                          indices and pop those"
                        .to_string()
                }
                _ => format!(
                    "`{name}` is not a differentiable float method; supported: {}",
                    supported_methods()
                ),
            };
            self.cx.error(&m.method, msg);
            return self.passive_val_silent();
        };
        let args: Vec<&Expr> = std::iter::once(&*m.receiver).chain(m.args.iter()).collect();
        self.prim_call(prim, &args, m.method.span(), e)
    }

    fn call(&mut self, c: &syn::ExprCall, e: &Expr) -> Val {
        // `f64::sin(x)`: the path form of a method.
        if let Expr::Path(p) = &*c.func {
            let segs = crate::lower::path_names(&p.path);
            let generic = matches!(&self.float, Float::Generic(t) if *t == segs[0]);
            if p.qself.is_none()
                && segs.len() == 2
                && (segs[0] == "f64" || segs[0] == "f32" || generic)
            {
                if let Some(prim) = Prim::from_method(&segs[1]) {
                    let args: Vec<&Expr> = c.args.iter().collect();
                    return self.prim_call(prim, &args, p.path.segments[1].ident.span(), e);
                }
                if PASSIVE_METHODS.contains(&segs[1].as_str()) {
                    return self.passive_val(e);
                }
                self.cx.error(
                    &c.func,
                    format!(
                        "`{}` is not a differentiable float function; supported: {}",
                        segs.join("::"),
                        supported_methods()
                    ),
                );
                return self.passive_val_silent();
            }
        }
        self.user_call(c, e)
    }

    /// A call to the user's own function with an active argument: its value
    /// from the function itself, its adjoint from `<path>_pullback`.
    fn user_call(&mut self, c: &syn::ExprCall, e: &Expr) -> Val {
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

    /// `T::from(e).unwrap()` in a function generic over `T`: `e`.
    fn generic_conversion<'m>(&self, m: &'m syn::ExprMethodCall) -> Option<&'m Expr> {
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
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => self.generic_float_constant(&u.expr),
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
            Expr::Path(p) => p
                .path
                .get_ident()
                .and_then(|i| self.resolve(&i.to_string()))
                .and_then(|v| self.vars[v.0].ty.as_ref())
                .is_some_and(|t| *g == t.to_string()),
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

    /// `self.h(x)` where `h` is a differentiated method of the same type: its
    /// value from the method itself, its adjoint from `self.h_pullback`.
    fn self_method_call(&mut self, m: &syn::ExprMethodCall) -> Val {
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

    fn prim_call(&mut self, prim: Prim, args: &[&Expr], span: proc_macro2::Span, e: &Expr) -> Val {
        if args.len() != prim.arity() {
            let name = prim.method().unwrap_or("?");
            self.cx.error(
                e,
                format!(
                    "`{name}` takes {} argument(s) besides the receiver, {} given",
                    prim.arity() - 1,
                    args.len().saturating_sub(1)
                ),
            );
            return self.passive_val_silent();
        }
        // With every argument after the first passive (`x.sin()`,
        // `x.powi(2)`), the first is what makes the call active: a method
        // chain is not searched again at every link.
        let rest_active: Vec<bool> = args[1..]
            .iter()
            .map(|a| rename::mentions_active(a, self))
            .collect();
        let mut ops: Vec<Operand> = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let v = match i {
                0 if !rest_active.contains(&true) => self.active_expr(a),
                0 => self.expr(a),
                _ if rest_active[i - 1] => self.active_expr(a),
                _ => self.passive_val(a),
            };
            ops.push(self.operand(v));
        }
        if prim == Prim::Powi && matches!(ops.get(1), Some(Operand::Var(_))) {
            self.cx.error(
                args[1],
                "the exponent of `powi` must be an integer; use `powf` for a float exponent",
            );
        }
        Val::Pending(prim, ops, span)
    }

    pub(crate) fn passive_val_silent(&mut self) -> Val {
        Val::Const(Passive {
            tokens: quote::quote!(0.0),
            primary: true,
            reads: Vec::new(),
        })
    }
}

/// A block with statements (or holding one that has), or an `if` with a
/// branch holding the loop a filtered sum was made (`v[4] = if c { 1.0 }
/// else { .. };`; an integer `if` is kept as written).
fn holds_statements(e: &Expr) -> bool {
    // The sum's loop may sit deeper than the tail: `{ let t = <sum>; t }`.
    fn summed(b: &syn::Block) -> bool {
        b.stmts.len() > 1 && mentions_prefix(b.to_token_stream(), super::ACC)
    }
    fn mentions_prefix(tokens: proc_macro2::TokenStream, prefix: &str) -> bool {
        tokens.into_iter().any(|t| match t {
            proc_macro2::TokenTree::Ident(i) => i.to_string().starts_with(prefix),
            proc_macro2::TokenTree::Group(g) => mentions_prefix(g.stream(), prefix),
            _ => false,
        })
    }
    fn branches(e: &Expr) -> bool {
        match super::strip(e) {
            Expr::If(i) => {
                summed(&i.then_branch) || i.else_branch.as_ref().is_some_and(|(_, e)| branches(e))
            }
            Expr::Block(b) => summed(&b.block),
            _ => false,
        }
    }
    match super::strip(e) {
        // `{ { ..; v } }`, as a closure's block body written out at its call.
        Expr::Block(b) => {
            b.label.is_none()
                && match b.block.stmts.as_slice() {
                    [syn::Stmt::Expr(inner, None)] => holds_statements(inner),
                    stmts => stmts.len() > 1,
                }
        }
        Expr::If(_) => branches(e),
        _ => false,
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

fn supported_methods() -> String {
    crate::rules::ALL
        .iter()
        .filter_map(|p| p.method())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Iterator methods: named in their own error, since the list of float
/// methods would not help.
const ITERATOR_METHODS: &[&str] = &[
    "map",
    "fold",
    "sum",
    "product",
    "filter",
    "filter_map",
    "flat_map",
    "for_each",
    "reduce",
    "scan",
    "max_by",
    "min_by",
    "max_by_key",
    "min_by_key",
    "take",
    "skip",
    "step_by",
    "chain",
    "rev",
    "zip",
    "enumerate",
    "collect",
    "last",
    "nth",
    "windows",
    "chunks",
    "chunks_exact",
    "iter",
    "into_iter",
    "copied",
    "cloned",
    "try_fold",
    "take_while",
    "skip_while",
    "map_while",
    "inspect",
    "peekable",
    "flatten",
    "cycle",
];

/// The iterator method in the chain `e` that keeps it from being a
/// supported loop or reduction (`filter` in `x.iter().filter(..).sum()`).
pub(crate) fn unsupported_adaptor(e: &Expr) -> Option<&syn::Ident> {
    const LOOP_FORMS: &[&str] = &[
        "iter",
        "into_iter",
        "copied",
        "cloned",
        "zip",
        "enumerate",
        "rev",
        "skip",
        "take",
        "step_by",
        "map",
        "sum",
        "product",
        "fold",
        "collect",
    ];
    let mut culprit = None;
    let mut e = e;
    let mut top = true;
    while let Expr::MethodCall(inner) = crate::lower::strip(e) {
        // `x.iter().max_by(..).unwrap()` inside is lowered on its own.
        if super::extrema::is_extremum(e) {
            break;
        }
        let method = inner.method.to_string();
        // So is the receiver of a float method (`.sum::<f64>().sin()`), and
        // its chain looked at then: walking `x.sin().sin()..` at each
        // level was quadratic.
        if !top
            && Prim::from_method(&method).is_some()
            && !ITERATOR_METHODS.contains(&method.as_str())
        {
            break;
        }
        if !LOOP_FORMS.contains(&method.as_str()) {
            culprit = Some(&inner.method);
        }
        e = &inner.receiver;
        top = false;
    }
    culprit
}

/// Why the iterator method `culprit` cannot be differentiated, and what to
/// write instead.
pub(crate) fn adaptor_message(culprit: &syn::Ident) -> String {
    match culprit.to_string().as_str() {
        "max_by" | "min_by" | "reduce" => format!(
            "`.{culprit}(..)` is supported opened at once, as a value: \
             `x.iter().{culprit}(..).unwrap()`, `.expect(..)`, `.unwrap_or(d)`, `.copied().unwrap()`; \
             `if let`/`match` on its `Option` is not: test the iterator's length first"
        ),
        "max" | "min" | "max_by_key" | "min_by_key" => format!(
            "`.{culprit}` on an iterator of differentiated values is not supported: write the \
             maximum as `.copied().fold(f64::NEG_INFINITY, f64::max)` (the minimum with \
             `f64::INFINITY, f64::min`), whose derivative goes to the element chosen"
        ),
        "chain" => "`.chain(..)` is supported right in a `for` loop (`for v in a.iter().chain(b)`, \
             also followed by `.copied()`) and before `.sum()`, `.product()`, `.fold(..)` or \
             `.map(..).sum()`; other adaptors after it (`enumerate`, `zip`, `skip`, ...) are not: \
             write one loop for each part"
            .to_string(),
        "chunks" | "chunks_exact" | "windows" => format!(
            "`.{culprit}(k)` is supported on a slice named by a plain name, in a `for` loop \
             (`for c in x.{culprit}(2)`, also after `.enumerate()`) or before `.map(|c| ..)` \
             or `.fold(..)`: bind a sub-slice to a name first (`let v = &x[1..];`)"
        ),
        _ => format!(
            "`.{culprit}` on an iterator is not supported here; supported are `for` loops, \
             `.map(|x| ..).sum()`, `.map(|x| ..).product()`, `.fold(init, |acc, x| ..)` and \
             `let v: Vec<f64> = .. .map(|x| ..).collect();` over `v.iter()`, sub-slices \
             `&v[a..b]` and ranges, with `.copied()`, `.cloned()`, `.zip(..)`, `.enumerate()`, \
             `.rev()`, `.skip(n)`, `.take(n)` and `.step_by(k)`, and `v.iter().sum()`, \
             `.filter(|v| ..)` or `.take_while(|v| ..)` just before `.sum()`, `.map(..).sum()` or \
             `.product()` and in `for` loops; otherwise write a `for` loop over the indices"
        ),
    }
}
