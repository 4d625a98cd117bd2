//! syn → IR for arrays: parameters and local buffers, element reads and
//! writes, `push`, reductions, and loops over elements (desugared to index
//! loops whose bindings read the element in place).

use super::rename::{self, Resolve};
use super::vec_macros::VecBody;
use super::{Lowerer, Val};
use crate::ir::*;
use crate::rules::Reduction;
use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::Expr;

/// A recognised array-creating expression.
pub(crate) struct ArrayInit<'e> {
    /// Passive code creating the array (zeros where elements are active).
    pub init: Passive,
    pub len: Option<TokenStream>,
    /// Active elements of a literal, stored after creation: the syntax
    /// itself, whose declarations every attempt knows by their address.
    pub elements: Vec<(usize, &'e Expr)>,
    /// `Vec::new()` or `Vec::with_capacity(n)`: `init` makes an empty
    /// vector, of the capacity a vector of tangents filled beside it needs.
    pub empty: bool,
    /// `vec![v; n]` or `[v; N]` of an active `v`: `init` makes zeros, and
    /// `v`, evaluated once, is stored into every element.
    pub fill: Option<&'e Expr>,
}

/// `[a, b]`, `[v; N]` or `vec![..]`: syntax that makes an array.
pub(crate) fn creates_array(e: &Expr) -> bool {
    match crate::lower::strip(e) {
        Expr::Array(_) | Expr::Repeat(_) => true,
        Expr::Macro(m) => m.mac.path.is_ident("vec"),
        _ => false,
    }
}

/// Methods that change the elements of an array where they are.
const REARRANGING: &[&str] = &[
    "swap",
    "sort",
    "sort_by",
    "sort_by_key",
    "sort_unstable",
    "sort_unstable_by",
    "reverse",
    "rotate_left",
    "rotate_right",
    "dedup",
    "dedup_by",
    "dedup_by_key",
    "retain",
    "insert",
    "remove",
    "swap_remove",
    "drain",
    "fill_with",
    "clone_from_slice",
    "swap_with_slice",
    "iter_mut",
];

/// The other methods that change an array (besides `push`): at its end, or
/// written out as element loops before lowering (`fill`, `copy_from_slice`).
const RESIZING: &[&str] = &[
    "pop",
    "clear",
    "truncate",
    "resize",
    "resize_with",
    "extend",
    "extend_from_slice",
    "append",
    "split_off",
    "fill",
    "copy_from_slice",
];

/// Whether `method` changes an array in place (other than `push`).
pub(crate) fn changes_in_place(method: &str) -> bool {
    REARRANGING.contains(&method) || RESIZING.contains(&method)
}

impl<'a> Lowerer<'a> {
    /// `vec![init; n]`, `vec![a, b]`, `[init; N]`, `[a, b]`, `Vec::new()`,
    /// `Vec::with_capacity(n)`.
    pub(crate) fn array_init<'e>(&mut self, e: &'e Expr) -> Option<ArrayInit<'e>>
    where
        'a: 'e,
    {
        let e = crate::lower::strip(e);
        let (elems, repeat, is_vec): (Vec<&'e Expr>, Option<(&'e Expr, &'e Expr)>, bool) = match e {
            Expr::Macro(m) if m.mac.path.is_ident("vec") => match self.vecs.get(&m.mac)? {
                VecBody::Repeat(r) => (Vec::new(), Some((&r.0, &r.1)), true),
                VecBody::List(items) => (items.iter().collect(), None, true),
            },
            Expr::Repeat(r) => (Vec::new(), Some((&*r.expr, &*r.len)), false),
            Expr::Array(a) => (a.elems.iter().collect(), None, false),
            Expr::Call(c) => {
                let Expr::Path(p) = &*c.func else { return None };
                let segs = crate::lower::path_names(&p.path);
                let ctor = segs.len() >= 2 && segs[segs.len() - 2] == "Vec";
                if !ctor || !matches!(segs.last()?.as_str(), "new" | "with_capacity") {
                    return None;
                }
                let init = self.passive(e)?;
                return Some(ArrayInit {
                    init,
                    len: None,
                    elements: Vec::new(),
                    empty: true,
                    fill: None,
                });
            }
            _ => return None,
        };
        if let Some((value, len)) = repeat {
            if rename::mentions_active(len, self) {
                self.cx.error(len, "the length of an array cannot depend on a differentiated value: compute it from lengths and integers");
                // Reported: go on as if it were empty, so no second error follows.
                let init = Passive {
                    tokens: quote!(::std::vec::Vec::new()),
                    primary: true,
                    reads: Vec::new(),
                };
                return Some(ArrayInit {
                    init,
                    len: None,
                    elements: Vec::new(),
                    empty: false,
                    fill: None,
                });
            }
            // An active value is stored after zeros (see `array_def`).
            let fill = rename::mentions_active(value, self).then_some(value);
            let (vt, mut reads) = match fill {
                Some(_) => (
                    crate::generic::lit(&crate::emit::float_ty(&self.float), "0.0"),
                    Vec::new(),
                ),
                None => {
                    let v = self.passive(value)?;
                    (v.tokens, v.reads)
                }
            };
            let n = self.passive(len)?;
            let nt = n.tokens;
            reads.extend(n.reads);
            let tokens = if is_vec {
                quote!(::std::vec![#vt; #nt])
            } else {
                quote!([#vt; #nt])
            };
            return Some(ArrayInit {
                init: Passive {
                    tokens,
                    primary: true,
                    reads,
                },
                len: (!is_vec).then_some(nt),
                elements: Vec::new(),
                empty: false,
                fill,
            });
        }
        let mut parts = Vec::new();
        let mut reads = Vec::new();
        let mut elements = Vec::new();
        for (i, el) in elems.iter().enumerate() {
            if rename::mentions_active(el, self) {
                parts.push(crate::generic::lit(
                    &crate::emit::float_ty(&self.float),
                    "0.0",
                ));
                elements.push((i, *el));
            } else {
                let p = self.passive(el)?;
                reads.extend(p.reads);
                parts.push(p.tokens);
            }
        }
        let n = elems.len();
        let tokens = if is_vec {
            quote!(::std::vec![#(#parts),*])
        } else {
            quote!([#(#parts),*])
        };
        Some(ArrayInit {
            init: Passive {
                tokens,
                primary: true,
                reads,
            },
            len: (!is_vec).then(|| quote!(#n)),
            elements,
            empty: false,
            fill: None,
        })
    }

    /// `let v = <array>;` or `v = <array>;`.
    pub(crate) fn array_def(&mut self, v: VarId, a: ArrayInit<'_>) {
        if (!a.elements.is_empty() || a.fill.is_some()) && !self.is_active(v) {
            self.promote_var(v);
            return;
        }
        // Evaluated once, before the array is made, as `vec!` does.
        let fill = a.fill.map(|value| {
            let val = self.expr(value);
            match self.operand(val) {
                // Read in place, it could read the array being replaced.
                Operand::Elem(arr, i) => {
                    let t = self.temp(value.span());
                    self.assigned[t.0] = super::Assigned::Yes;
                    self.cur.push(Stmt::Step(Step {
                        id: StmtId::default(),
                        dst: t,
                        prim: crate::rules::Prim::Copy,
                        args: vec![Operand::Elem(arr, i)],
                        write: Write::Def,
                        ctx: self.ctx,
                        span: value.span(),
                    }));
                    (Operand::Var(t), value.span())
                }
                op => (op, value.span()),
            }
        });
        let write = self.write_kind(v);
        self.vars[v.0].owned_vec = a.len.is_none();
        // In generic code, `vec![T::zero(); n]` holds floats too.
        let generic = self
            .float
            .generic()
            .is_some_and(|g| super::sugar::mentions(a.init.tokens.clone(), &g.to_string()));
        self.vars[v.0].float_elems |=
            self.is_active(v) || has_float_literal(&a.init.tokens) || generic;
        self.vars[v.0].shape = Shape::Array { len: a.len };
        // Active elements are stored after the definition, into a `mut` array.
        self.vars[v.0].reassigned |= !a.elements.is_empty() || fill.is_some();
        self.cur.push(Stmt::ArrayDef(ArrayDef {
            id: StmtId::default(),
            dst: v,
            init: a.init,
            empty: a.empty,
            write,
            ctx: self.ctx,
        }));
        for (i, el) in a.elements {
            let val = self.expr(el);
            let value = self.operand(val);
            let index = Passive {
                tokens: quote!(#i),
                primary: true,
                reads: Vec::new(),
            };
            self.cur.push(Stmt::Store(Store {
                id: StmtId::default(),
                arr: v,
                index,
                op: StoreOp::Set,
                value,
                ctx: self.ctx,
            }));
        }
        if let Some((value, span)) = fill {
            self.fill_loop(v, value, span);
        }
    }

    /// `for k in 0..arr.len() { arr[k] = value; }`: the stores of an array
    /// made by repeating an active value.
    fn fill_loop(&mut self, arr: VarId, value: Operand, span: proc_macro2::Span) {
        let site = self.next_site();
        let mut binding = None;
        let body = self.in_loop_body(|l| {
            let k = l.new_var("k", VarKind::Passive, span);
            l.assigned[k.0] = super::Assigned::Yes;
            binding = Some(k);
            let index = &l.vars[k.0].ident;
            l.cur.push(Stmt::Store(Store {
                id: StmtId::default(),
                arr,
                index: Passive {
                    tokens: quote!(#index),
                    primary: true,
                    reads: vec![k],
                },
                op: StoreOp::Set,
                value,
                ctx: l.ctx,
            }));
        });
        let name = &self.vars[arr.0].ident;
        let len = quote!(#name.len());
        self.cur.push(Stmt::Loop(Loop {
            id: StmtId::default(),
            site,
            kind: LoopKind::For {
                binding,
                iter: Passive {
                    tokens: quote!(0..#len),
                    primary: false,
                    reads: vec![arr],
                },
                replay: Some(Replay::UpFromZero),
                reversed: Some(Passive {
                    tokens: quote!((0..#len).rev()),
                    primary: false,
                    reads: vec![arr],
                }),
                trips: None,
            },
            body,
            ctx: self.ctx,
        }));
    }

    pub(super) fn array_var(&mut self, e: &Expr) -> Option<VarId> {
        let name = rename::local_name(e)?;
        let v = self.resolve(&name.to_string())?;
        matches!(self.vars[v.0].shape, Shape::Array { .. }).then_some(v)
    }

    fn index(&mut self, e: &Expr) -> Option<Passive> {
        if rename::mentions_active(e, self) {
            self.cx.error(
                e,
                "an index must be an integer that does not depend on a differentiated value",
            );
            return None;
        }
        self.passive(e)
    }

    /// `arr[i]` where `arr` is active.
    pub(crate) fn index_read(&mut self, ix: &syn::ExprIndex, e: &Expr) -> Val {
        let Some(arr) = self.array_var(&ix.expr) else {
            self.cx.error(
                &ix.expr,
                "only local arrays, `Vec`s and slice parameters can be indexed (a call that returns an array needs its type written: `let p: [f64; 2] = g(..);`)",
            );
            return self.zero();
        };
        match self.index(&ix.index) {
            Some(i) => Val::Elem(arr, i),
            None => {
                let _ = e;
                self.zero()
            }
        }
    }

    /// `arr[i] = rhs`, `arr[i] += rhs`, ...
    pub(crate) fn store(
        &mut self,
        ix: &syn::ExprIndex,
        op: Option<&syn::BinOp>,
        rhs: &Expr,
        whole: &Expr,
    ) {
        let Some(arr) = self.array_var(&ix.expr) else {
            self.cx.error(
                &ix.expr,
                "only local arrays and `Vec`s can be assigned to by index",
            );
            return;
        };
        if self.is_param(arr) {
            self.cx.error(&ix.expr, "a differentiated function cannot write into its parameters: copy the values into a local `Vec` first");
            return;
        }
        let Some(index) = self.index(&ix.index) else {
            return;
        };
        let active_rhs = rename::mentions_active(rhs, self);
        if !self.is_active(arr) && active_rhs {
            let val = self.expr(rhs);
            if !matches!(val, Val::Const(_)) {
                self.promote_var(arr);
                return;
            }
        }
        use syn::BinOp::*;
        let (op, val) = match op {
            None => (StoreOp::Set, self.expr(rhs)),
            Some(AddAssign(_)) => (StoreOp::Add, self.expr(rhs)),
            Some(SubAssign(_)) => (StoreOp::Sub, self.expr(rhs)),
            Some(o @ (MulAssign(_) | DivAssign(_))) => {
                let prim = if matches!(o, MulAssign(_)) {
                    crate::rules::Prim::Mul
                } else {
                    crate::rules::Prim::Div
                };
                let r = self.expr(rhs);
                let r = self.operand(r);
                let cur = Operand::Elem(arr, index.clone());
                (StoreOp::Set, Val::Pending(prim, vec![cur, r], whole.span()))
            }
            Some(other) => {
                self.cx
                    .error(other, "this operator is not supported on array elements");
                return;
            }
        };
        let value = self.operand(val);
        self.vars[arr.0].reassigned = true;
        self.cur.push(Stmt::Store(Store {
            id: StmtId::default(),
            arr,
            index,
            op,
            value,
            ctx: self.ctx,
        }));
    }

    /// `arr.push(value)`; returns false if `m` is not a push onto a local array.
    pub(crate) fn push(&mut self, m: &syn::ExprMethodCall) -> bool {
        if m.method != "push" || m.args.len() != 1 {
            return false;
        }
        let Some(arr) = self.array_var(&m.receiver) else {
            return false;
        };
        let arg = &m.args[0];
        if !self.is_active(arr) {
            if rename::mentions_active(arg, self) {
                self.promote_var(arr);
                return true;
            }
            // Copied as it is; the array still needs `mut`. Pushed generic
            // floats make it a float array: its records are zeros of `T`.
            self.vars[arr.0].reassigned = true;
            self.vars[arr.0].float_elems |= self.generic_float_constant(arg);
            return false;
        }
        let val = self.expr(arg);
        let value = self.operand(val);
        self.vars[arr.0].reassigned = true;
        self.cur.push(Stmt::Push(Push { arr, value }));
        true
    }

    /// Mutating array methods other than `push` cannot be differentiated.
    pub(crate) fn other_array_method(&mut self, m: &syn::ExprMethodCall) -> bool {
        let Some(arr) = self.array_var(&m.receiver) else {
            return false;
        };

        let method = m.method.to_string();
        if !self.is_active(arr) {
            // Growing or shrinking a constant array at its end (a stack of
            // indices) keeps the elements the reverse sweep reads again;
            // these change them where they are.
            if !REARRANGING.contains(&method.as_str()) {
                return false;
            }
            self.cx.error(&m.method, format!("`{method}` changes a constant array's elements in place, which the reverse sweep cannot undo (it reads them again): build the array in its final order before using it, or do this outside the differentiated function"));
            return true;
        }
        if !changes_in_place(&method) {
            return false;
        }
        self.cx.error(&m.method, mutating_message(&method));
        true
    }

    /// `arr.iter().sum::<f64>()`, `.product()`, also through `.copied()`.
    pub(crate) fn reduction(&mut self, m: &syn::ExprMethodCall) -> Option<Val> {
        let op = Reduction::from_method(&m.method.to_string())?;
        let mut recv = &*m.receiver;
        loop {
            match recv {
                Expr::MethodCall(inner)
                    if matches!(
                        inner.method.to_string().as_str(),
                        "iter" | "into_iter" | "copied" | "cloned"
                    ) =>
                {
                    recv = &inner.receiver;
                }
                _ => break,
            }
        }
        let arr = self.array_var(recv)?;
        if !self.is_active(arr) {
            return None;
        }
        Some(Val::Reduce(arr, op))
    }

    pub(crate) fn zero(&mut self) -> Val {
        Val::Const(Passive {
            tokens: quote!(0.0),
            primary: true,
            reads: Vec::new(),
        })
    }
}

/// Whether passive code contains a float literal (`vec![0.0; n]` holds floats).
pub(crate) fn has_float_literal(ts: &TokenStream) -> bool {
    ts.clone().into_iter().any(|tt| match tt {
        proc_macro2::TokenTree::Literal(l) => {
            let s = l.to_string();
            s.contains('.') || s.ends_with("f64") || s.ends_with("f32")
        }
        proc_macro2::TokenTree::Group(g) => has_float_literal(&g.stream()),
        _ => false,
    })
}

/// What to write instead of a method that changes an array in place.
pub(crate) fn mutating_message(method: &str) -> String {
    format!("`{method}` on a differentiated array is not supported: build arrays with `vec![0.0; n]`, index assignment and `push`")
}
