//! syn → IR for expressions: arithmetic and method calls on active values
//! become primitive steps; everything that does not depend on an active value is
//! kept verbatim as passive code.

use super::adaptors::{adaptor_message, unsupported_adaptor, ITERATOR_METHODS};
use super::reject::Unsupported;
use super::rename::{self, Binding, Resolve};
use super::{Lowerer, Val};
use crate::ir::{Float, Operand, Passive};
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

    pub(super) fn passive_val(&mut self, e: &Expr) -> Val {
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
                _ if super::array::changes_in_place(&name) => super::array::mutating_message(&name),
                "unwrap" | "expect" if reads_an_end(&m.receiver) => {
                    let call = if name == "unwrap" {
                        "unwrap()"
                    } else {
                        "expect(..)"
                    };
                    format!(
                        "`.{call}` here gives a reference to the element: read it by value, \
                         `*x.first().{call}`, `x.first().copied().{call}`, or index it \
                         (`x[0]`, `x[x.len() - 1]`)"
                    )
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

fn supported_methods() -> String {
    crate::rules::ALL
        .iter()
        .filter_map(|p| p.method())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `x.first()`, `x.last()` or `x.get(i)`: an `Option` of a reference.
fn reads_an_end(e: &Expr) -> bool {
    matches!(super::strip(e), Expr::MethodCall(m) if matches!(m.method.to_string().as_str(), "first" | "last" | "get"))
}
