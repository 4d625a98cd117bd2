//! The intermediate representation: a structured Wengert list.
//!
//! Every active value is produced by exactly one primitive [`Step`]; control flow
//! stays structured (`If`, `Loop`, `Exit`) so both sweeps can be emitted as plain
//! Rust. Nothing here knows about `syn`: passive code (integers, conditions,
//! constants) is carried as already-renamed tokens plus the variables it reads.

use crate::rules::Prim;
use proc_macro2::{Ident, Span, TokenStream};

/// Index into [`Func::vars`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub usize);

/// Identifies one `if` or loop; used to name its recorded control state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SiteId(pub usize);

/// Identifies one statement that writes a variable or an element (or a loop,
/// which writes its binding): keys what the forward sweep records for the
/// reverse sweep. Numbered once lowering is done (`Func::number`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct StmtId(pub usize);

/// Where a statement runs: decides how a value it records is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Ctx {
    /// Inside an `if` branch or a loop body (not directly in the function body).
    pub nested: bool,
    /// Number of enclosing loops: above 0, may run many times per call.
    pub loop_depth: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// A float that carries a derivative.
    Active,
    /// Anything else: integers, bools, floats that do not depend on the inputs.
    Passive,
}

/// Whether a variable holds one value or a sequence of them.
#[derive(Clone, Debug)]
pub enum Shape {
    Scalar,
    /// A `Vec`, slice or array, indexed by `usize`. `len` is `N` for `[T; N]`.
    Array {
        len: Option<TokenStream>,
    },
}

#[derive(Clone, Debug)]
pub struct Var {
    pub ident: Ident,
    pub kind: VarKind,
    pub shape: Shape,
    /// Bound by a desugared `for x in v.iter()`: the user's code sees a
    /// reference, so `*x` must read as `x`.
    pub deref_transparent: bool,
    /// An array known to hold floats (`&[f64]`, `vec![0.0; n]`).
    pub float_elems: bool,
    /// An owned `Vec` (a local buffer or a `Vec<f64>` parameter): passed to a
    /// call by value, it is cloned, since the reverse sweep passes it again.
    pub owned_vec: bool,
    /// Context of the block that declares it.
    pub decl: Ctx,
    /// Written after its first assignment (needs `let mut`).
    pub reassigned: bool,
    /// Declared without a value and assigned in a loop or on one path of an
    /// `if` only: rustc cannot tell that it holds a value afterwards.
    pub maybe_unassigned: bool,
    /// The user's type annotation, kept for passive variables.
    pub ty: Option<TokenStream>,
    /// A temporary of the lowering (one primitive of a user's expression).
    pub temp: bool,
    /// A buffer of run-time length, defined once by `vec![0.0; n]` and used
    /// as a slice (a helper's copy of its output buffer): it and its adjoint
    /// live in an inline array when short, not on the heap.
    pub on_stack: bool,
    pub span: Span,
}

/// A passive expression already rewritten to generated names.
#[derive(Clone, Debug)]
pub struct Passive {
    pub tokens: TokenStream,
    /// Needs no parentheses as an operand or method receiver.
    pub primary: bool,
    pub reads: Vec<VarId>,
}

#[derive(Clone, Debug)]
pub enum Operand {
    Var(VarId),
    Const(Passive),
    /// `arr[index]` read in place.
    Elem(VarId, Passive),
}

/// How a store combines with the element it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreOp {
    /// `v[i] = value`
    Set,
    /// `v[i] += value`
    Add,
    /// `v[i] -= value`
    Sub,
}

/// A write to one element of an array: `arr[index] op value`.
#[derive(Clone, Debug)]
pub struct Store {
    pub id: StmtId,
    pub arr: VarId,
    pub index: Passive,
    pub op: StoreOp,
    pub value: Operand,
    pub ctx: Ctx,
}

/// `arr.push(value)`.
#[derive(Clone, Debug)]
pub struct Push {
    pub arr: VarId,
    pub value: Operand,
}

/// A new array: `vec![init; n]`, `[init; N]`, `Vec::with_capacity(n)`, ...
#[derive(Clone, Debug)]
pub struct ArrayDef {
    pub id: StmtId,
    pub dst: VarId,
    pub init: Passive,
    /// `init` makes an empty `Vec` (`Vec::new()`, `Vec::with_capacity(n)`).
    pub empty: bool,
    pub write: Write,
    pub ctx: Ctx,
}

/// `dst = arr.iter().sum()` and friends.
#[derive(Clone, Debug)]
pub struct Reduce {
    pub id: StmtId,
    pub dst: VarId,
    pub arr: VarId,
    pub op: crate::rules::Reduction,
    pub write: Write,
    pub ctx: Ctx,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    /// The first assignment of the variable in its scope.
    Def,
    /// Replaces a value the variable already held.
    Overwrite,
}

/// `dst = prim(args)`.
#[derive(Clone, Debug)]
pub struct Step {
    pub id: StmtId,
    pub dst: VarId,
    pub prim: Prim,
    pub args: Vec<Operand>,
    pub write: Write,
    pub ctx: Ctx,
    pub span: Span,
}

/// A write to a passive variable: `dst = value` or `dst op= value`.
#[derive(Clone, Debug)]
pub struct PassiveAssign {
    pub id: StmtId,
    pub dst: VarId,
    /// `+=`, `-=`, ... ; `None` for a plain assignment.
    pub op: Option<TokenStream>,
    pub value: Passive,
    pub write: Write,
    pub ctx: Ctx,
}

#[derive(Clone, Debug)]
pub struct If {
    pub site: SiteId,
    pub cond: Passive,
    pub then: Block,
    pub els: Block,
    pub ctx: Ctx,
}

#[derive(Clone, Debug)]
pub enum LoopKind {
    /// `for binding in iter`; `binding` is `None` for `_`.
    For {
        binding: Option<VarId>,
        iter: Passive,
        /// When the binding takes consecutive values from a start (or down
        /// from an end) that cannot change, the reverse sweep rebuilds it from
        /// the iteration count instead of recording it.
        replay: Option<Replay>,
        /// The same values in reverse order (`(a..b).rev()` for `a..b`): used
        /// by the reverse sweep when the loop never breaks and the range
        /// cannot change, so not even the count is recorded.
        reversed: Option<Passive>,
        /// The number of iterations, where the range is made of integer
        /// literals (`0..20`, `(1..=8).rev()`).
        trips: Option<u64>,
    },
    While {
        cond: Passive,
    },
    Infinite,
}

#[derive(Clone, Debug)]
pub struct Loop {
    pub id: StmtId,
    pub site: SiteId,
    pub kind: LoopKind,
    pub body: Block,
    pub ctx: Ctx,
}

impl Loop {
    /// The context of the loop's body.
    pub fn body_ctx(&self) -> Ctx {
        Ctx {
            nested: true,
            loop_depth: self.ctx.loop_depth + 1,
        }
    }
}

/// `dst = func(args)`: a call to a function that has a pullback
/// (`func_pullback`, generated by `#[differentiate]` or `#[custom_adjoint]`).
#[derive(Clone, Debug)]
pub struct Call {
    pub id: StmtId,
    pub dst: VarId,
    /// The callee's path as written.
    pub func: TokenStream,
    /// The same path ending in `_pullback`.
    pub pullback: TokenStream,
    /// The same path ending in `_pushforward` (forward mode).
    pub pushforward: TokenStream,
    /// The same path ending in `_dot`: the callee's tangent as a function of
    /// its own, which a caller's tangent program calls (second derivatives).
    pub dot: TokenStream,
    /// For the value of a helper's output buffers (`io = g_outputs(..)`),
    /// the same path ending in `_outputs_into`, which writes it into `io`'s
    /// storage.
    pub into: Option<TokenStream>,
    pub args: Vec<CallArg>,
    pub write: Write,
    pub ctx: Ctx,
}

#[derive(Clone, Debug)]
pub struct CallArg {
    /// The argument as passed (`x`, `&w`, `&x[1..]`, `2.0 * n as f64`).
    pub value: Passive,
    pub share: Share,
}

/// Where an argument's share of the adjoint goes.
#[derive(Clone, Debug)]
pub enum Share {
    /// Nowhere: the caller passes `Default::default()` for its slot.
    None,
    /// A scalar or an element (`d_x`, `d_v[i]`).
    Scalar(Operand),
    /// A whole array (`d_w`).
    Array(VarId),
    /// Part of an array, `&w[range]` (`d_w[range]`).
    Slice(VarId, Passive),
    /// Nowhere, but the callee expects a float slice of this length: the
    /// caller lends a scratch buffer instead of making it allocate one.
    Scratch(TokenStream),
}

impl CallArg {
    /// The variable whose adjoint receives this argument's share.
    pub fn target(&self) -> Option<VarId> {
        match &self.share {
            Share::Scalar(op) => op.var(),
            Share::Array(v) | Share::Slice(v, _) => Some(*v),
            Share::None | Share::Scratch(_) => None,
        }
    }
}

/// How the reverse sweep rebuilds a `for` loop's binding.
#[derive(Clone, Debug)]
pub enum Replay {
    /// `0, 1, ...`
    UpFromZero,
    /// `start, start + 1, ...`
    Up(TokenStream),
    /// `end - 1, end - 2, ...`
    Down(TokenStream),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Break,
    Continue,
    Return,
}

#[derive(Clone, Debug)]
pub enum Stmt {
    Step(Step),
    Assign(PassiveAssign),
    Store(Store),
    Push(Push),
    ArrayDef(ArrayDef),
    Reduce(Reduce),
    Call(Call),
    /// A passive statement kept verbatim (a nested item, a passive call), with
    /// the variables it reads.
    Verbatim(TokenStream, Vec<VarId>),
    /// `let v;` of a variable assigned later on every path.
    Declare(VarId),
    If(If),
    Loop(Loop),
    Exit(Exit),
}

#[derive(Clone, Debug, Default)]
pub struct Block {
    pub stmts: Vec<Stmt>,
}

/// The float type the function is written in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Float {
    F32,
    F64,
    /// The function's type parameter `T: num_traits::Float`.
    Generic(Ident),
}

#[derive(Clone, Debug)]
pub struct Param {
    /// The parameter's name in generated functions.
    pub ident: Ident,
    /// The user's type, re-emitted as written.
    pub ty: TokenStream,
    /// Set for float parameters that are differentiated.
    pub var: Option<VarId>,
    /// The parameter's variable, differentiated or not.
    pub id: VarId,
    pub shape: Shape,
}

/// One lowered function.
#[derive(Clone, Debug)]
pub struct Func {
    pub float: Float,
    /// The user's generics (`<T: Float>` and its `where` clause), re-emitted
    /// on every generated function; empty for a function over `f64`/`f32`.
    pub generics: crate::generic::Generics,
    pub params: Vec<Param>,
    pub vars: Vec<Var>,
    pub body: Block,
    /// The variable holding the returned value.
    pub output: VarId,
    /// `return` occurs somewhere: the forward sweep is a labelled block.
    pub has_return: bool,
    /// The caller discards the value (second derivatives' cores): nothing is
    /// computed for it alone, and the core returns `()`.
    pub value_unused: bool,
}

impl Float {
    /// The type parameter, for a generic function.
    pub fn generic(&self) -> Option<&Ident> {
        match self {
            Float::Generic(g) => Some(g),
            _ => None,
        }
    }
}

impl Shape {
    pub fn is_array(&self) -> bool {
        matches!(self, Shape::Array { .. })
    }
}

impl Operand {
    /// The variable whose adjoint receives this operand's contributions.
    pub fn var(&self) -> Option<VarId> {
        match self {
            Operand::Var(v) | Operand::Elem(v, _) => Some(*v),
            Operand::Const(_) => None,
        }
    }

    /// Every variable reading this operand touches: itself, its index, its constant.
    pub fn reads(&self) -> Vec<VarId> {
        match self {
            Operand::Var(v) => vec![*v],
            Operand::Elem(a, i) => std::iter::once(*a).chain(i.reads.iter().copied()).collect(),
            Operand::Const(c) => c.reads.clone(),
        }
    }
}

impl Func {
    /// Gives every writing statement and loop its own [`StmtId`], in one walk.
    pub fn number(&mut self) {
        fn block(b: &mut Block, next: &mut usize) {
            for s in &mut b.stmts {
                let mut give = |id: &mut StmtId| {
                    *id = StmtId(*next);
                    *next += 1;
                };
                match s {
                    Stmt::Step(st) => give(&mut st.id),
                    Stmt::Assign(a) => give(&mut a.id),
                    Stmt::Store(st) => give(&mut st.id),
                    Stmt::ArrayDef(d) => give(&mut d.id),
                    Stmt::Reduce(r) => give(&mut r.id),
                    Stmt::Call(c) => give(&mut c.id),
                    Stmt::Loop(l) => {
                        give(&mut l.id);
                        block(&mut l.body, next);
                    }
                    Stmt::If(i) => {
                        block(&mut i.then, next);
                        block(&mut i.els, next);
                    }
                    Stmt::Push(_) | Stmt::Verbatim(..) | Stmt::Declare(_) | Stmt::Exit(_) => {}
                }
            }
        }
        let mut next = 0;
        block(&mut self.body, &mut next);
    }

    pub fn var(&self, id: VarId) -> &Var {
        &self.vars[id.0]
    }
    pub fn is_param(&self, id: VarId) -> bool {
        self.params.iter().any(|p| p.id == id)
    }
    pub fn is_active(&self, id: VarId) -> bool {
        self.vars[id.0].kind == VarKind::Active
    }
    /// Differentiable parameters, in order.
    pub fn wrt(&self) -> impl Iterator<Item = VarId> + '_ {
        self.params.iter().filter_map(|p| p.var)
    }
}
