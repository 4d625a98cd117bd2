//! The programs the differential test generates, as a small syntax tree over
//! exactly the language `#[differentiate]` supports, and their printing as
//! Rust source.
//!
//! The printer puts parentheses only where Rust's precedence needs them (or
//! where `as` would be misread), so the source compiles without
//! `unused_parens` warnings; `tidy` removes what would trigger the other
//! warnings. The generated source is the only thing the macro and the dual
//! number oracle ever see: the oracle's version is derived from the text.

use std::fmt::Write as _;

/// A variable as written, and the declaration it resolves to (filled in by
/// `tidy::resolve`; `0` before that).
#[derive(Clone, Debug, PartialEq)]
pub struct Name {
    pub s: String,
    pub id: usize,
}

impl Name {
    pub fn new(s: &str) -> Name {
        Name {
            s: s.to_string(),
            id: 0,
        }
    }
}

/// The type of a local: float, integer or `bool`; a float array (a
/// parameter or a local buffer); an index into arrays (`usize`, kept apart
/// from the integers, which may be `i32`); a `&f64` element of an array walk;
/// a struct of constants (`cfg`, `self`), read only by field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    F,
    I,
    B,
    A,
    U,
    R,
    D,
}

/// The fields of the settings struct `Cfg`, passed as `cfg`, with the type
/// each is read as: a factor, a loop bound, an array of `DATA_LEN` floats.
pub const CFG_FIELDS: [(&str, Ty); 3] = [("scale", Ty::F), ("n", Ty::I), ("w", Ty::A)];
/// The fields of `Model`, the receiver `self` of a method.
pub const MODEL_FIELDS: [(&str, Ty); 3] = [("k", Ty::F), ("m", Ty::I), ("c", Ty::A)];
/// The length of the structs' array fields.
pub const DATA_LEN: usize = 3;

/// The fields of what `owner` (`cfg` or `self`) names, if it is a struct.
pub fn fields_of(owner: &str) -> Option<&'static [(&'static str, Ty)]> {
    match owner {
        "cfg" => Some(&CFG_FIELDS),
        "self" => Some(&MODEL_FIELDS),
        _ => None,
    }
}

/// `cfg.scale` as (`cfg`, `scale`): a field read is a name with a dot.
pub fn split_field(name: &str) -> Option<(&str, &str)> {
    name.split_once('.')
}

/// How the program's structs are defined and passed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Data {
    /// `#[derive(Clone, Copy)]` with a `[f64; 3]` array field, passed by
    /// value (`cfg: Cfg`, `self`); else a `Vec<f64>`, `&Cfg`, `&self`.
    pub copy: bool,
    /// The integer field is an `i32` (else a `usize`).
    pub i32: bool,
}

/// How an array parameter is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrTy {
    /// `&[f64]`
    Slice,
    /// `&Vec<f64>`
    VecRef,
    /// `[f64; N]`
    Array,
    /// `&[f64; N]`
    ArrayRef,
}

/// Parameter types. An array's length is the one the harness passes: part
/// of the type for `[f64; N]`, stated in the doc comment otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PTy {
    F64,
    Usize,
    I32,
    Bool,
    Arr(ArrTy, usize),
    /// The settings struct: `Cfg` by value when `true`, else `&Cfg`.
    Cfg(bool),
    /// `out: &mut [f64]`, the output buffer of a helper that returns
    /// nothing (at least `n` long).
    Out(usize),
}

impl PTy {
    pub fn ty(self) -> Ty {
        match self {
            PTy::F64 => Ty::F,
            PTy::Usize | PTy::I32 => Ty::I,
            PTy::Bool => Ty::B,
            PTy::Arr(..) | PTy::Out(_) => Ty::A,
            PTy::Cfg(_) => Ty::D,
        }
    }
    pub fn rust(self) -> String {
        match self {
            PTy::F64 => "f64".into(),
            PTy::Usize => "usize".into(),
            PTy::I32 => "i32".into(),
            PTy::Bool => "bool".into(),
            PTy::Arr(ArrTy::Slice, _) => "&[f64]".into(),
            PTy::Arr(ArrTy::VecRef, _) => "&Vec<f64>".into(),
            PTy::Arr(ArrTy::Array, n) => format!("[f64; {n}]"),
            PTy::Arr(ArrTy::ArrayRef, n) => format!("&[f64; {n}]"),
            PTy::Cfg(true) => "Cfg".into(),
            PTy::Cfg(false) => "&Cfg".into(),
            PTy::Out(_) => "&mut [f64]".into(),
        }
    }
    /// A float or an array of floats: what can have a gradient.
    pub fn floats(self) -> bool {
        matches!(self, PTy::F64 | PTy::Arr(..))
    }
    /// Its length, for an array whose type does not state it.
    pub fn stated_len(self) -> Option<usize> {
        match self {
            PTy::Arr(ArrTy::Slice | ArrTy::VecRef, n) => Some(n),
            _ => None,
        }
    }
    /// An array that is not a reference: passed and walked as `&w`.
    pub fn owned_array(self) -> bool {
        matches!(self, PTy::Arr(ArrTy::Array, _))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Name,
    pub ty: PTy,
    /// `mut x: f64` (set by `tidy` when the body writes the parameter).
    pub mutable: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// `#[differentiate]` functions the body calls, printed before it (a
    /// helper has no helpers of its own).
    pub helpers: Vec<Program>,
    pub name: String,
    /// `#[differentiate(wrt(..))]`, when present.
    pub wrt: Option<Vec<String>>,
    /// A method of `Model` (`&self`, or `self` when `data.copy`): the name
    /// `self`, resolved like a parameter.
    pub receiver: Option<Name>,
    /// How the structs `Cfg` and `Model` are defined and passed.
    pub data: Data,
    pub params: Vec<Param>,
    pub body: Vec<Stmt>,
    /// The tail expression; `None` only when the body ends by `return`.
    pub tail: Option<FExpr>,
}

/// Float-valued expressions.
#[derive(Clone, Debug, PartialEq)]
pub enum FExpr {
    Var(Name),
    /// A float literal as printed, e.g. `0.5` (never negative).
    Lit(String),
    /// `std::f64::consts::PI`.
    Pi,
    /// `i as f64`.
    Cast(IExpr),
    Neg(Box<FExpr>),
    Bin(FOp, Box<FExpr>, Box<FExpr>),
    /// A float method; `path` selects `f64::m(a, b)` over `a.m(b)`.
    Call(Fun, bool, Vec<FExpr>),
    /// `a.powi(n)` (or `f64::powi(a, n)` when the flag is set).
    Powi(bool, Box<FExpr>, i32),
    If(Box<Cond>, Box<FBlock>, Box<FBlock>),
    Block(Box<FBlock>),
    /// `w[i]`, the index always in bounds.
    Index(Name, IExpr),
    /// `*wi`, an element bound by reference (`wi` as a method receiver).
    Deref(Name),
    /// `w.len() as f64`.
    Len(Name),
    /// `w.iter().sum::<f64>()`.
    Sum(Name),
    /// A call of a helper, `g1(a, &v)`.
    Apply(String, Vec<Arg>),
    /// `v`, a `&f64` closure parameter: bare as an operand of arithmetic
    /// (`v * y`, as users write it), `*v` where an `f64` is needed.
    Elem(Name),
    /// `w.iter().product::<f64>()`.
    Product(Name),
    /// A reduction through a closure: `w.iter().map(|v| ..).sum::<f64>()`,
    /// `.fold(..)`...
    Reduce(Box<Source>, Box<Reduce>),
    /// `w.iter().filter(|v| **v > e).count() as f64`: piecewise constant.
    Count(Box<Pred>),
}

/// What a closure walks, and the names its parameter pattern binds.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// `w.iter()` (`.rev()`, `.copied()`); `pat` binds `&v` instead of `v`.
    Iter {
        arr: Name,
        rev: bool,
        copied: bool,
        pat: bool,
        elem: Name,
        /// `.filter(|fv| **fv > 0.5)` after `.iter()` (`.rev()`): the
        /// elements compared with a literal, which the dual numbers watch.
        filter: Option<(CmpOp, String)>,
    },
    /// `a.iter().zip(b.iter())`, or `.zip(b)` (`direct`, `b` a reference).
    Zip {
        a: Name,
        b: Name,
        direct: bool,
        p: Name,
        q: Name,
    },
    /// `w.iter().enumerate()`.
    Enumerate { arr: Name, idx: Name, elem: Name },
    /// `(0..n)`, `n` no longer than the arrays the closure indexes by `idx`.
    Range { n: usize, idx: Name },
}

impl Source {
    /// The names the closure's pattern binds, with their types.
    pub fn bound(&mut self) -> Vec<(&mut Name, Ty)> {
        match self {
            Source::Iter {
                copied, pat, elem, ..
            } => {
                let ty = if *copied || *pat { Ty::F } else { Ty::R };
                vec![(elem, ty)]
            }
            Source::Zip { p, q, .. } => vec![(p, Ty::R), (q, Ty::R)],
            Source::Enumerate { idx, elem, .. } => vec![(idx, Ty::U), (elem, Ty::R)],
            Source::Range { idx, .. } => vec![(idx, Ty::U)],
        }
    }

    /// The arrays it walks.
    pub fn arrays(&mut self) -> Vec<&mut Name> {
        match self {
            Source::Iter { arr, .. } | Source::Enumerate { arr, .. } => vec![arr],
            Source::Zip { a, b, .. } => vec![a, b],
            Source::Range { .. } => Vec::new(),
        }
    }
}

/// What is done with the closure's values.
#[derive(Clone, Debug, PartialEq)]
pub enum Reduce {
    /// `.map(|..| body).sum::<f64>()`, or `.product::<f64>()`.
    Map { prod: bool, body: FBlock },
    /// `.fold(init, |acc, ..| body)`.
    Fold {
        init: FExpr,
        acc: Name,
        body: FBlock,
    },
    /// `.map(|..| body).fold(f64::NEG_INFINITY, f64::max)` (`INFINITY` and
    /// `min` when `min`), or from the literal `init`.
    Extreme {
        min: bool,
        init: Option<String>,
        body: FBlock,
    },
    /// `.map(|..| body).max_by(|p, q| p.partial_cmp(q).unwrap())
    /// .unwrap_or(0.0f64)` (`min_by` when `min`).
    By { min: bool, body: FBlock },
}

impl Reduce {
    pub fn body(&self) -> &FBlock {
        match self {
            Reduce::Map { body, .. }
            | Reduce::Fold { body, .. }
            | Reduce::Extreme { body, .. }
            | Reduce::By { body, .. } => body,
        }
    }
    pub fn body_mut(&mut self) -> &mut FBlock {
        match self {
            Reduce::Map { body, .. }
            | Reduce::Fold { body, .. }
            | Reduce::Extreme { body, .. }
            | Reduce::By { body, .. } => body,
        }
    }
}

/// `|v| *v > rhs` on the elements of `arr`, for `any` and `filter`.
#[derive(Clone, Debug, PartialEq)]
pub struct Pred {
    pub arr: Name,
    pub elem: Name,
    pub op: CmpOp,
    pub rhs: FExpr,
}

/// How a copy of an array is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyHow {
    /// `x` (a `[f64; N]`, which is `Copy`).
    Plain,
    /// `*x` (a `&[f64; N]`).
    Deref,
    ToVec,
    Clone,
    ToOwned,
}

/// An argument of a helper call.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    F(FExpr),
    /// An array, printed `&v` when `amp` (it is not a reference already).
    A(Name, bool),
    /// The settings struct, passed on as it was received (`cfg`).
    D(Name),
}

/// How a local buffer starts.
#[derive(Clone, Debug, PartialEq)]
pub enum ArrInit {
    /// `vec![0.0; len]`, `vec![0.0; of.len()]` or `[0.0; len]`.
    Zeros {
        vec: bool,
        len: usize,
        of: Option<Name>,
    },
    /// `vec![a, b]` or `[a, b]`.
    List { vec: bool, elems: Vec<FExpr> },
    /// `src.map(|..| body).collect()` (`collect::<Vec<f64>>()` when
    /// `turbofish`), of `len` elements.
    Collect {
        src: Source,
        body: FBlock,
        turbofish: bool,
        len: usize,
    },
    /// A copy of `of`: a `Vec` or a fixed array (`vec`) of `len` elements.
    Copy {
        of: Name,
        how: CopyHow,
        vec: bool,
        len: usize,
    },
}

impl ArrInit {
    pub fn len(&self) -> usize {
        match self {
            ArrInit::Zeros { len, .. } => *len,
            ArrInit::List { elems, .. } => elems.len(),
            ArrInit::Collect { len, .. } | ArrInit::Copy { len, .. } => *len,
        }
    }
    pub fn is_vec(&self) -> bool {
        match self {
            ArrInit::Zeros { vec, .. } | ArrInit::List { vec, .. } | ArrInit::Copy { vec, .. } => {
                *vec
            }
            ArrInit::Collect { .. } => true,
        }
    }
}

/// The ways a loop walks an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// `for i in 0..n`, `n` no longer than the arrays indexed by `i`.
    Upto(usize),
    /// `for i in 0..w.len()`.
    Indices,
    /// `for wi in w.iter()`: `wi` is a `&f64`.
    Iter,
    /// `for wi in w.iter().filter(|fv| **fv < 0.5)`.
    Filter(CmpOp, &'static str),
    /// `for &wi in w` (`&w` when `w` is not a reference), or in `w.iter()`.
    RefPat { iter: bool },
    /// `for (i, wi) in w.iter().enumerate()`.
    Enumerate,
}

/// A block with a float value: statements, then the tail expression.
#[derive(Clone, Debug, PartialEq)]
pub struct FBlock {
    pub stmts: Vec<Stmt>,
    pub tail: FExpr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FOp {
    Add,
    Sub,
    Mul,
    Div,
}

macro_rules! funs {
    ($($v:ident $name:literal $arity:literal,)*) => {
        /// The float methods the programs call.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Fun { $($v,)* }
        impl Fun {
            pub fn name(self) -> &'static str {
                match self { $(Fun::$v => $name,)* }
            }
            /// Operands, the receiver included.
            pub fn arity(self) -> usize {
                match self { $(Fun::$v => $arity,)* }
            }
        }
    };
}

funs! {
    Sin "sin" 1, Cos "cos" 1, Tan "tan" 1, Asin "asin" 1, Acos "acos" 1, Atan "atan" 1,
    Atan2 "atan2" 2, Sinh "sinh" 1, Cosh "cosh" 1, Tanh "tanh" 1, Asinh "asinh" 1,
    Acosh "acosh" 1, Atanh "atanh" 1, Exp "exp" 1, Exp2 "exp2" 1, ExpM1 "exp_m1" 1,
    Ln "ln" 1, Ln1p "ln_1p" 1, Log "log" 2, Log2 "log2" 1, Log10 "log10" 1,
    Sqrt "sqrt" 1, Cbrt "cbrt" 1, Powf "powf" 2, Hypot "hypot" 2, Abs "abs" 1,
    Recip "recip" 1, MulAdd "mul_add" 3, Max "max" 2, Min "min" 2, Clamp "clamp" 3,
    Signum "signum" 1, Floor "floor" 1, Ceil "ceil" 1, Round "round" 1, Trunc "trunc" 1,
    Fract "fract" 1, ToDegrees "to_degrees" 1, ToRadians "to_radians" 1,
}

/// Integer-valued expressions (no subtraction or division: nothing can
/// underflow a `usize` or divide by zero).
#[derive(Clone, Debug, PartialEq)]
pub enum IExpr {
    Var(Name),
    Lit(i64),
    Add(Box<IExpr>, Box<IExpr>),
    Mul(Box<IExpr>, i64),
    Rem(Box<IExpr>, i64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl CmpOp {
    fn text(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Cond {
    F(CmpOp, FExpr, FExpr),
    I(CmpOp, IExpr, IExpr),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
    Not(Box<Cond>),
    Var(Name),
    /// `w.iter().any(|v| *v > e)`.
    Any(Box<Pred>),
    /// `let Some(m) = n.checked_sub(1)`, the condition of an `if let` (or
    /// of a `match`): only ever the whole condition of an `if`, whose
    /// `then` block sees `m`.
    Some(Box<SomePat>),
}

/// `Some(m)` matched against `of.checked_sub(sub)` (`of.len()` when `len`):
/// `m` an integer of `of`'s type, or a `usize` below the array's length.
#[derive(Clone, Debug, PartialEq)]
pub struct SomePat {
    /// Printed `_` when unread.
    pub bind: Name,
    pub of: Name,
    pub len: bool,
    pub sub: i64,
    /// Printed as `match of.checked_sub(sub) { Some(m) [if m > guard] =>
    /// then, None | _ => els }`.
    pub matched: bool,
    pub guard: Option<i64>,
}

impl SomePat {
    /// The type of what it binds.
    pub fn ty(&self) -> Ty {
        if self.len {
            Ty::U
        } else {
            Ty::I
        }
    }
    pub fn scrutinee(&self) -> String {
        let len = if self.len { ".len()" } else { "" };
        format!("{}{len}.checked_sub({})", self.of.s, self.sub)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AOp {
    Set,
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    F(FExpr),
    I(IExpr),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Range {
    pub lo: IExpr,
    pub hi: IExpr,
    pub inclusive: bool,
    pub rev: bool,
    pub step: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Let {
        name: Name,
        ty: Ty,
        /// Print `: f64`.
        annot: bool,
        mutable: bool,
        init: Option<Val>,
    },
    Assign {
        name: Name,
        op: AOp,
        val: Val,
    },
    If {
        cond: Cond,
        then: Vec<Stmt>,
        els: Option<Vec<Stmt>>,
    },
    /// `for var in range { body }`; `var` is printed `_` when unused.
    For {
        var: Name,
        range: Range,
        body: Vec<Stmt>,
    },
    /// `let mut g = 0; while g < limit && cond { g += 1; body }`: the guard
    /// bounds the trip count whatever the body does.
    While {
        guard: Name,
        limit: i64,
        cond: Cond,
        body: Vec<Stmt>,
    },
    /// `let mut g = 0; loop { g += 1; if g > limit { break; } body }`.
    Loop {
        guard: Name,
        limit: i64,
        body: Vec<Stmt>,
    },
    Block(Vec<Stmt>),
    Break,
    Continue,
    Return(FExpr),
    /// `let mut v = vec![0.0; 3];`; `annot` prints `: Vec<f64>` or `: [f64; N]`.
    LetArr {
        name: Name,
        mutable: bool,
        annot: bool,
        init: ArrInit,
    },
    /// `v[i] = e;`, `v[i] += e;`...
    Store {
        name: Name,
        index: IExpr,
        op: AOp,
        val: FExpr,
    },
    /// A loop over an array's elements or indices: `idx` is the index
    /// variable (`Upto`, `Indices`, `Enumerate`), `elem` the element's
    /// (`Iter`, `RefPat`, `Enumerate`); the other is unused. `arr` is
    /// unused by `Upto`. `amp` walks `&arr`; `rev` appends `.rev()`.
    ForArr {
        walk: Walk,
        idx: Name,
        elem: Name,
        arr: Name,
        amp: bool,
        rev: bool,
        body: Vec<Stmt>,
    },
    /// `let mut v = Vec::with_capacity(n); for idx in 0..n { v.push(val); }`.
    LetPush {
        name: Name,
        annot: bool,
        n: usize,
        idx: Name,
        val: FExpr,
    },
    /// `h1(x, &w, &mut buf);` or `h1(x, &w, &mut buf[lo..hi]);`: `call`
    /// (an `Apply`) with the buffer `name` appended, which the helper reads
    /// and writes.
    CallOut {
        name: Name,
        range: Option<(usize, usize)>,
        call: FExpr,
    },
    /// `let Some(m) = n.checked_sub(1) else { return ret; };`: `m` is seen
    /// by the rest of the block (`pat.matched` and `pat.guard` unused).
    LetElse {
        pat: SomePat,
        ret: FExpr,
    },
    /// Views of arrays, buffers written through mutable views, helpers with
    /// several outputs (`views.rs`): declares the float `out` of `ViewUse`,
    /// reading only the parameters it names.
    Views(Box<super::views::ViewUse>),
}

// ---------------------------------------------------------------------------
// Printing.
// ---------------------------------------------------------------------------

/// Precedence levels, Rust's, highest binding last.
const P_OR: u8 = 3;
const P_AND: u8 = 4;
const P_CMP: u8 = 5;
const P_ADD: u8 = 10;
const P_MUL: u8 = 11;
const P_CAST: u8 = 12;
const P_UNARY: u8 = 13;
const P_POSTFIX: u8 = 14;

/// Where an expression is printed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    /// A whole `let` initialiser, argument, condition, tail...: no parentheses.
    Top,
    /// An operand needing at least this precedence.
    Operand(u8),
    /// The receiver of a method call.
    Receiver,
}

fn wrap(s: String, own: u8, at: At) -> String {
    let need = match at {
        At::Top => false,
        At::Operand(p) => own < p,
        At::Receiver => own < P_POSTFIX,
    };
    if need {
        format!("({s})")
    } else {
        s
    }
}

fn pad(ind: usize) -> String {
    "    ".repeat(ind)
}

impl Program {
    /// The program as Rust source: the structs it reads, its helpers, then
    /// the function itself, `#[differentiate]` attributes included.
    pub fn source(&self) -> String {
        let mut code = String::new();
        for h in &self.helpers {
            code.push_str(&h.function());
            code.push('\n');
        }
        for st in &self.body {
            if let Stmt::Views(v) = st {
                code.push_str(&v.helpers());
            }
        }
        code.push_str(&self.function());
        let mut s = String::new();
        let all = || std::iter::once(self).chain(&self.helpers);
        let cfg = all().any(|p| p.params.iter().any(|q| matches!(q.ty, PTy::Cfg(_))));
        let model = all().any(|p| p.receiver.is_some());
        for (used, name, owner, fields) in [
            (cfg, "Cfg", "cfg", &CFG_FIELDS),
            (model, "Model", "self", &MODEL_FIELDS),
        ] {
            if used {
                // Differentiated with respect to: `#[derive(Differentiable)]`.
                let wrt = self.wrt.iter().flatten().any(|w| w == owner);
                s.push_str(&self.data.struct_text(name, owner, fields, &code, wrt));
                s.push('\n');
            }
        }
        s.push_str(&code);
        s
    }

    /// The function alone (in an `impl Model` block when it is a method).
    fn function(&self) -> String {
        let mut s = String::new();
        for p in &self.params {
            if let Some(n) = p.ty.stated_len() {
                // The harness reads the lengths to pass from here.
                writeln!(s, "/// `{}.len() == {n}`", p.name.s).unwrap();
            }
        }
        match &self.wrt {
            Some(w) => writeln!(s, "#[differentiate(wrt({}))]", w.join(", ")).unwrap(),
            None => s.push_str("#[differentiate]\n"),
        }
        let mut params: Vec<String> = self
            .params
            .iter()
            .map(|p| {
                format!(
                    "{}{}: {}",
                    if p.mutable { "mut " } else { "" },
                    p.name.s,
                    p.ty.rust()
                )
            })
            .collect();
        if self.receiver.is_some() {
            let me = if self.data.copy { "self" } else { "&self" };
            params.insert(0, me.to_string());
        }
        let ret = if self.params.iter().any(|p| matches!(p.ty, PTy::Out(_))) {
            ""
        } else {
            " -> f64"
        };
        writeln!(s, "fn {}({}){ret} {{", self.name, params.join(", ")).unwrap();
        stmts(&mut s, &self.body, 1);
        if let Some(t) = &self.tail {
            writeln!(s, "    {}", fexpr(t, At::Top, 1)).unwrap();
        }
        s.push_str("}\n");
        if self.receiver.is_none() {
            return s;
        }
        let mut m = String::from("impl Model {\n");
        for l in s.lines() {
            if !l.is_empty() {
                m.push_str("    ");
            }
            m.push_str(l);
            m.push('\n');
        }
        m.push_str("}\n");
        m
    }

    /// Number of syntax nodes: the measure the shrinker decreases.
    pub fn size(&self) -> usize {
        self.helpers.iter().map(Program::size).sum::<usize>()
            + self.params.len()
            + usize::from(self.receiver.is_some())
            + self.wrt.as_ref().map_or(0, |w| w.len() + 1)
            + self.body.iter().map(stmt_size).sum::<usize>()
            + self.tail.as_ref().map_or(0, fexpr_size)
    }
}

impl Data {
    /// `struct Cfg { .. }` with the fields `code` reads (an unread field is
    /// `dead_code`), deriving `Differentiable` when `wrt` names it.
    fn struct_text(
        self,
        name: &str,
        owner: &str,
        fields: &[(&str, Ty)],
        code: &str,
        wrt: bool,
    ) -> String {
        let mut s = String::new();
        match (self.copy, wrt) {
            (true, true) => s.push_str("#[derive(Clone, Copy, gradmacro::Differentiable)]\n"),
            (true, false) => s.push_str("#[derive(Clone, Copy)]\n"),
            (false, true) => s.push_str("#[derive(gradmacro::Differentiable)]\n"),
            (false, false) => {}
        }
        writeln!(s, "struct {name} {{").unwrap();
        for (field, ty) in fields {
            if !reads_field(code, owner, field) {
                continue;
            }
            let t = match ty {
                Ty::F => "f64".to_string(),
                Ty::I if self.i32 => "i32".to_string(),
                Ty::I => "usize".to_string(),
                _ if self.copy => format!("[f64; {DATA_LEN}]"),
                _ => "Vec<f64>".to_string(),
            };
            writeln!(s, "    {field}: {t},").unwrap();
        }
        s.push_str("}\n");
        s
    }
}

/// Whether `code` reads `owner.field` (and not a longer name).
fn reads_field(code: &str, owner: &str, field: &str) -> bool {
    let pat = format!("{owner}.{field}");
    code.match_indices(&pat).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + pat.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

fn stmts(s: &mut String, list: &[Stmt], ind: usize) {
    for st in list {
        stmt(s, st, ind);
    }
}

fn block(s: &mut String, list: &[Stmt], ind: usize) {
    s.push_str("{\n");
    stmts(s, list, ind + 1);
    s.push_str(&pad(ind));
    s.push('}');
}

fn stmt(s: &mut String, st: &Stmt, ind: usize) {
    let p = pad(ind);
    match st {
        Stmt::Let {
            name,
            ty,
            annot,
            mutable,
            init,
        } => {
            let m = if *mutable { "mut " } else { "" };
            let a = if *annot && *ty == Ty::F { ": f64" } else { "" };
            match init {
                // Some float `let`s are written as a one-element tuple or
                // through a local closure, which the macro supports too;
                // which ones depends only on the name (deterministic).
                Some(v) if *ty == Ty::F && spelling(&name.s) == 1 => {
                    let a = if a.is_empty() { "" } else { ": (f64,)" };
                    writeln!(s, "{p}let ({m}{},){a} = ({},);", name.s, val(v, ind)).unwrap()
                }
                Some(v) if *ty == Ty::F && spelling(&name.s) == 2 => {
                    writeln!(s, "{p}let mk_{} = || {};", name.s, val(v, ind)).unwrap();
                    writeln!(s, "{p}let {m}{}{a} = mk_{}();", name.s, name.s).unwrap()
                }
                // A tuple read by its fields: doubled and halved, exactly.
                Some(v) if *ty == Ty::F && spelling(&name.s) == 3 => {
                    let t = if a.is_empty() { "" } else { ": (f64, f64)" };
                    let n = &name.s;
                    writeln!(s, "{p}let pair_{n}{t} = ({}, 2.0);", val(v, ind)).unwrap();
                    writeln!(s, "{p}let {m}{n}{a} = pair_{n}.0 * pair_{n}.1 * 0.5;").unwrap()
                }
                Some(v) => writeln!(s, "{p}let {m}{}{a} = {};", name.s, val(v, ind)).unwrap(),
                None => writeln!(s, "{p}let {m}{}{a};", name.s).unwrap(),
            }
        }
        Stmt::Assign { name, op, val: v } => {
            writeln!(s, "{p}{} {} {};", name.s, aop_text(*op), val(v, ind)).unwrap();
        }
        Stmt::If { .. } => {
            s.push_str(&p);
            if_chain(s, st, ind);
            s.push('\n');
        }
        Stmt::For { var, range, body } => {
            write!(s, "{p}for {} in {} ", var.s, range_text(range)).unwrap();
            block(s, body, ind);
            s.push('\n');
        }
        Stmt::While {
            guard,
            limit,
            cond: c,
            body,
        } => {
            let g = &guard.s;
            writeln!(s, "{p}let mut {g} = 0;").unwrap();
            writeln!(
                s,
                "{p}while {g} < {limit} && {} {{",
                cond(c, At::Operand(P_AND + 1), ind)
            )
            .unwrap();
            writeln!(s, "{p}    {g} += 1;").unwrap();
            stmts(s, body, ind + 1);
            writeln!(s, "{p}}}").unwrap();
        }
        Stmt::Loop { guard, limit, body } => {
            let g = &guard.s;
            writeln!(s, "{p}let mut {g} = 0;").unwrap();
            writeln!(s, "{p}loop {{").unwrap();
            writeln!(s, "{p}    {g} += 1;").unwrap();
            writeln!(s, "{p}    if {g} > {limit} {{").unwrap();
            writeln!(s, "{p}        break;").unwrap();
            writeln!(s, "{p}    }}").unwrap();
            stmts(s, body, ind + 1);
            writeln!(s, "{p}}}").unwrap();
        }
        Stmt::Block(b) => {
            s.push_str(&p);
            block(s, b, ind);
            s.push('\n');
        }
        Stmt::Break => writeln!(s, "{p}break;").unwrap(),
        Stmt::Continue => writeln!(s, "{p}continue;").unwrap(),
        Stmt::Return(e) => writeln!(s, "{p}return {};", fexpr(e, At::Top, ind)).unwrap(),
        Stmt::LetArr {
            name,
            mutable,
            annot,
            init,
        } => {
            let m = if *mutable { "mut " } else { "" };
            // `.collect()` needs the type it collects into.
            let annot = *annot
                || matches!(
                    init,
                    ArrInit::Collect {
                        turbofish: false,
                        ..
                    }
                );
            let a = match (annot, init.is_vec()) {
                (false, _) => String::new(),
                (true, true) => ": Vec<f64>".into(),
                (true, false) => format!(": [f64; {}]", init.len()),
            };
            let mut init_text = arr_init(init, ind);
            if !annot && matches!(init, ArrInit::Zeros { .. }) {
                // An element's method may be called before anything else
                // fixes the float type (`v.iter().map(|e| e.atan2(z))`).
                init_text = init_text.replacen("0.0;", "0.0_f64;", 1);
            }
            writeln!(s, "{p}let {m}{}{a} = {};", name.s, init_text).unwrap();
        }
        Stmt::Store {
            name,
            index,
            op,
            val,
        } => {
            writeln!(
                s,
                "{p}{}[{}] {} {};",
                name.s,
                iexpr(index, At::Top),
                aop_text(*op),
                fexpr(val, At::Top, ind)
            )
            .unwrap();
        }
        Stmt::ForArr {
            walk,
            idx,
            elem,
            arr,
            amp,
            rev,
            body,
        } => {
            write!(
                s,
                "{p}for {} ",
                walk_text(*walk, idx, elem, arr, *amp, *rev)
            )
            .unwrap();
            block(s, body, ind);
            s.push('\n');
        }
        Stmt::LetPush {
            name,
            annot,
            n,
            idx,
            val,
        } => {
            // A `Vec<{float}>` would not take `v[0].sin()`.
            let a = if *annot || !typed(val) {
                ": Vec<f64>"
            } else {
                ""
            };
            let v = &name.s;
            writeln!(s, "{p}let mut {v}{a} = Vec::with_capacity({n});").unwrap();
            writeln!(s, "{p}for {} in 0..{n} {{", idx.s).unwrap();
            writeln!(s, "{p}    {v}.push({});", fexpr(val, At::Top, ind + 1)).unwrap();
            writeln!(s, "{p}}}").unwrap();
        }
        Stmt::LetElse { pat, ret } => {
            writeln!(
                s,
                "{p}let Some({}) = {} else {{",
                pat.bind.s,
                pat.scrutinee()
            )
            .unwrap();
            writeln!(s, "{p}    return {};", fexpr(ret, At::Top, ind + 1)).unwrap();
            writeln!(s, "{p}}};").unwrap();
        }
        Stmt::CallOut { name, range, call } => {
            let c = fexpr(call, At::Top, ind);
            let c = c.strip_suffix(')').unwrap_or(&c);
            let sep = if c.ends_with('(') { "" } else { ", " };
            let r = match range {
                Some((lo, hi)) => format!("[{lo}..{hi}]"),
                None => String::new(),
            };
            writeln!(s, "{p}{c}{sep}&mut {}{r});", name.s).unwrap();
        }
        Stmt::Views(v) => s.push_str(&v.text(ind)),
    }
}

fn aop_text(op: AOp) -> &'static str {
    match op {
        AOp::Set => "=",
        AOp::Add => "+=",
        AOp::Sub => "-=",
        AOp::Mul => "*=",
        AOp::Div => "/=",
    }
}

fn arr_init(init: &ArrInit, ind: usize) -> String {
    match init {
        ArrInit::Zeros { vec, len, of } => {
            let n = match of {
                Some(w) if *vec => format!("{}.len()", w.s),
                _ => len.to_string(),
            };
            if *vec {
                format!("vec![0.0; {n}]")
            } else {
                format!("[0.0; {n}]")
            }
        }
        ArrInit::List { vec, elems } => {
            let e: Vec<String> = elems.iter().map(|e| fexpr(e, At::Top, ind)).collect();
            let bang = if *vec { "vec!" } else { "" };
            format!("{bang}[{}]", e.join(", "))
        }
        ArrInit::Collect {
            src,
            body,
            turbofish,
            ..
        } => {
            let t = if *turbofish { "::<Vec<f64>>" } else { "" };
            format!(
                "{}.map(|{}| {}).collect{t}()",
                source_text(src),
                pattern(src),
                closure_body(body, ind)
            )
        }
        ArrInit::Copy { of, how, .. } => {
            let w = &of.s;
            match how {
                CopyHow::Plain => w.clone(),
                CopyHow::Deref => format!("*{w}"),
                CopyHow::ToVec => format!("{w}.to_vec()"),
                CopyHow::Clone => format!("{w}.clone()"),
                CopyHow::ToOwned => format!("{w}.to_owned()"),
            }
        }
    }
}

/// `w.iter().rev()`, `a.iter().zip(b)`, `(0..3)`...
fn source_text(src: &Source) -> String {
    match src {
        Source::Iter {
            arr,
            rev,
            copied,
            filter,
            ..
        } => {
            let rev = if *rev { ".rev()" } else { "" };
            let copied = if *copied { ".copied()" } else { "" };
            // Just before the `map`, as the macro wants it: after `.copied()`,
            // whose items are `f64`s.
            let stars = if copied.is_empty() { "**" } else { "*" };
            let filter = match filter {
                Some((op, lit)) => format!(".filter(|fv| {stars}fv {} {lit})", op.text()),
                None => String::new(),
            };
            format!("{}.iter(){rev}{copied}{filter}", arr.s)
        }
        Source::Zip { a, b, direct, .. } => {
            if *direct {
                format!("{}.iter().zip({})", a.s, b.s)
            } else {
                format!("{}.iter().zip({}.iter())", a.s, b.s)
            }
        }
        Source::Enumerate { arr, .. } => format!("{}.iter().enumerate()", arr.s),
        Source::Range { n, .. } => format!("(0..{n})"),
    }
}

/// The closure's parameter pattern for `src`'s items.
fn pattern(src: &Source) -> String {
    match src {
        Source::Iter {
            pat: true, elem, ..
        } => format!("&{}", elem.s),
        Source::Iter { elem, .. } => elem.s.clone(),
        Source::Zip { p, q, .. } => format!("({}, {})", p.s, q.s),
        Source::Enumerate { idx, elem, .. } => format!("({}, {})", idx.s, elem.s),
        Source::Range { idx, .. } => idx.s.clone(),
    }
}

fn closure_body(b: &FBlock, ind: usize) -> String {
    if b.stmts.is_empty() {
        fexpr(&b.tail, At::Top, ind)
    } else {
        fblock(b, ind)
    }
}

/// `src.map(..).sum::<f64>()`, `src.fold(init, |acc, v| ..)`...
fn reduce_text(src: &Source, r: &Reduce, ind: usize) -> String {
    let (it, pat) = (source_text(src), pattern(src));
    match r {
        Reduce::Map { prod, body } => {
            let how = if *prod { "product" } else { "sum" };
            format!(
                "{it}.map(|{pat}| {}).{how}::<f64>()",
                closure_body(body, ind)
            )
        }
        Reduce::Fold { init, acc, body } => {
            // A `{float}` accumulator takes no method call, nor does the
            // fold's value.
            let mut init = init.clone();
            if !typed(&init) && !plain_arith(body) {
                suffix_literals(&mut init);
            }
            format!(
                "{it}.fold({}, |{}, {pat}| {})",
                fexpr(&init, At::Top, ind),
                acc.s,
                closure_body(body, ind)
            )
        }
        Reduce::Extreme { min, init, body } => {
            let (f, inf) = if *min {
                ("min", "f64::INFINITY")
            } else {
                ("max", "f64::NEG_INFINITY")
            };
            let init = init.as_deref().unwrap_or(inf);
            format!(
                "{it}.map(|{pat}| {}).fold({init}, f64::{f})",
                closure_body(body, ind)
            )
        }
        Reduce::By { min, body } => {
            let by = if *min { "min_by" } else { "max_by" };
            format!(
                "{it}.map(|{pat}| {}).{by}(|p, q| p.partial_cmp(q).unwrap()).unwrap_or(0.0f64)",
                closure_body(body, ind)
            )
        }
    }
}

/// A block without statements whose value is only arithmetic on variables
/// and literals: an untyped accumulator stays fine there.
fn plain_arith(b: &FBlock) -> bool {
    fn arith(e: &FExpr) -> bool {
        match e {
            FExpr::Var(_) | FExpr::Lit(_) | FExpr::Elem(_) | FExpr::Deref(_) => true,
            FExpr::Index(..) | FExpr::Cast(_) | FExpr::Pi => true,
            FExpr::Neg(a) => arith(a),
            FExpr::Bin(_, a, b) => arith(a) && arith(b),
            _ => false,
        }
    }
    b.stmts.is_empty() && arith(&b.tail)
}

/// `|v| *v > e` (`**v` when `twice`: `filter` passes `&&f64`).
fn pred_text(pr: &Pred, twice: bool, ind: usize) -> String {
    let stars = if twice { "**" } else { "*" };
    format!(
        "|{v}| {stars}{v} {} {}",
        pr.op.text(),
        fexpr(&pr.rhs, At::Operand(P_CMP + 1), ind),
        v = pr.elem.s
    )
}

/// `i in 0..w.len()`, `&wi in &w`, `(i, wi) in w.iter().enumerate()`...
fn walk_text(walk: Walk, idx: &Name, elem: &Name, arr: &Name, amp: bool, rev: bool) -> String {
    let w = &arr.s;
    let rev = if rev { ".rev()" } else { "" };
    match walk {
        Walk::Upto(n) if rev.is_empty() => format!("{} in 0..{n}", idx.s),
        Walk::Upto(n) => format!("{} in (0..{n}).rev()", idx.s),
        Walk::Indices if rev.is_empty() => format!("{} in 0..{w}.len()", idx.s),
        Walk::Indices => format!("{} in (0..{w}.len()).rev()", idx.s),
        Walk::Iter => format!("{} in {w}.iter(){rev}", elem.s),
        // `for _ in w.iter().filter(..)` is refused by the macro: an unused
        // element is `_fv`.
        Walk::Filter(op, lit) => format!(
            "{} in {w}.iter(){rev}.filter(|fv| **fv {} {lit})",
            if elem.s == "_" { "_fv" } else { &elem.s },
            op.text()
        ),
        Walk::RefPat { iter } => {
            let pat = if elem.s == "_" {
                "_".to_string()
            } else {
                format!("&{}", elem.s)
            };
            match (iter, amp) {
                (true, _) => format!("{pat} in {w}.iter(){rev}"),
                (false, true) => format!("{pat} in &{w}"),
                (false, false) => format!("{pat} in {w}"),
            }
        }
        Walk::Enumerate => format!("({}, {}) in {w}.iter().enumerate(){rev}", idx.s, elem.s),
    }
}

/// `if c { .. } else if d { .. } else { .. }`, without the final newline.
fn if_chain(s: &mut String, st: &Stmt, ind: usize) {
    let Stmt::If { cond: c, then, els } = st else {
        unreachable!()
    };
    if let Cond::Some(sp) = c {
        if sp.matched {
            let p = pad(ind + 1);
            writeln!(s, "match {} {{", sp.scrutinee()).unwrap();
            match sp.guard {
                Some(g) => write!(s, "{p}Some({}) if {} > {g} => ", sp.bind.s, sp.bind.s),
                None => write!(s, "{p}Some({}) => ", sp.bind.s),
            }
            .unwrap();
            block(s, then, ind + 1);
            s.push('\n');
            let other = if sp.guard.is_some() { "_" } else { "None" };
            write!(s, "{p}{other} => ").unwrap();
            block(s, els.as_deref().unwrap_or(&[]), ind + 1);
            s.push('\n');
            s.push_str(&pad(ind));
            s.push('}');
            return;
        }
    }
    write!(s, "if {} ", cond(c, At::Top, ind)).unwrap();
    block(s, then, ind);
    match els.as_deref() {
        None => {}
        Some([inner @ Stmt::If { cond: c, .. }]) if !matches!(c, Cond::Some(sp) if sp.matched) => {
            s.push_str(" else ");
            if_chain(s, inner, ind);
        }
        Some(e) => {
            s.push_str(" else ");
            block(s, e, ind);
        }
    }
}

fn range_text(r: &Range) -> String {
    let dots = if r.inclusive { "..=" } else { ".." };
    let base = format!(
        "{}{dots}{}",
        iexpr(&r.lo, At::Operand(P_OR)),
        iexpr(&r.hi, At::Operand(P_OR))
    );
    match (r.rev, r.step) {
        (true, _) => format!("({base}).rev()"),
        (false, Some(k)) => format!("({base}).step_by({k})"),
        (false, None) => base,
    }
}

fn val(v: &Val, ind: usize) -> String {
    match v {
        Val::F(e) => fexpr(e, At::Top, ind),
        Val::I(e) => iexpr(e, At::Top),
    }
}

fn fblock(b: &FBlock, ind: usize) -> String {
    let mut s = String::from("{\n");
    stmts(&mut s, &b.stmts, ind + 1);
    writeln!(s, "{}{}", pad(ind + 1), fexpr(&b.tail, At::Top, ind + 1)).unwrap();
    s.push_str(&pad(ind));
    s.push('}');
    s
}

fn fexpr(e: &FExpr, at: At, ind: usize) -> String {
    match e {
        FExpr::Var(n) => n.s.clone(),
        FExpr::Lit(l) => {
            if at == At::Receiver && !l.ends_with("_f64") {
                format!("{l}_f64")
            } else {
                l.clone()
            }
        }
        FExpr::Pi => "std::f64::consts::PI".to_string(),
        FExpr::Cast(i) => {
            let s = format!("{} as f64", iexpr(i, At::Operand(P_CAST)));
            // Always parenthesised as an operand: `i as f64 < x` would parse
            // `f64<` as generics.
            if at == At::Top {
                s
            } else {
                format!("({s})")
            }
        }
        FExpr::Neg(a) => {
            let mut inner = fexpr(a, At::Operand(P_UNARY), ind);
            if inner.starts_with('-') {
                // `--x` is a lint (and not a decrement).
                inner = format!("({inner})");
            }
            wrap(format!("-{inner}"), P_UNARY, at)
        }
        FExpr::Bin(op, l, r) => {
            let (p, o) = match op {
                FOp::Add => (P_ADD, "+"),
                FOp::Sub => (P_ADD, "-"),
                FOp::Mul => (P_MUL, "*"),
                FOp::Div => (P_MUL, "/"),
            };
            let s = format!(
                "{} {o} {}",
                fexpr(l, At::Operand(p), ind),
                fexpr(r, At::Operand(p + 1), ind)
            );
            wrap(s, p, at)
        }
        FExpr::Call(f, path, args) => {
            if *path {
                let a: Vec<String> = args.iter().map(|a| fexpr(a, At::Top, ind)).collect();
                format!("f64::{}({})", f.name(), a.join(", "))
            } else {
                let recv = receiver(&args[0], ind);
                let a: Vec<String> = args[1..].iter().map(|a| fexpr(a, At::Top, ind)).collect();
                format!("{recv}.{}({})", f.name(), a.join(", "))
            }
        }
        FExpr::Powi(path, a, n) => {
            if *path {
                format!("f64::powi({}, {n})", fexpr(a, At::Top, ind))
            } else {
                format!("{}.powi({n})", receiver(a, ind))
            }
        }
        FExpr::If(c, t, e) if spelling(&cond(c, At::Top, ind)) == 1 => {
            // Now and then `match c { true => .., false => .. }`.
            let s = format!(
                "match {} {{ true => {}, false => {} }}",
                cond(c, At::Top, ind),
                fblock(t, ind),
                fblock(e, ind)
            );
            if at == At::Top {
                s
            } else {
                format!("({s})")
            }
        }
        FExpr::If(c, t, e) => {
            let mut s = format!("if {} {}", cond(c, At::Top, ind), fblock(t, ind));
            let inner = match (&e.stmts[..], &e.tail) {
                ([], inner @ FExpr::If(..)) => Some(fexpr(inner, At::Top, ind)),
                _ => None,
            };
            match inner {
                // (Unless the inner `if` is spelled as a `match`.)
                Some(inner) if !inner.starts_with("match") => write!(s, " else {inner}").unwrap(),
                _ => write!(s, " else {}", fblock(e, ind)).unwrap(),
            }
            if at == At::Top {
                s
            } else {
                format!("({s})")
            }
        }
        FExpr::Block(b) => {
            if b.stmts.is_empty() {
                // `{ e }` would draw `unused_braces`.
                return fexpr(&b.tail, at, ind);
            }
            let s = fblock(b, ind);
            // Parenthesised as an operand: a function's tail `{ .. } + x`
            // would otherwise parse as a block statement.
            if at == At::Top {
                s
            } else {
                format!("({s})")
            }
        }
        FExpr::Index(n, i) => format!("{}[{}]", n.s, iexpr(i, At::Top)),
        // A receiver derefs itself: `wi.sin()`.
        FExpr::Deref(n) if at == At::Receiver => n.s.clone(),
        FExpr::Deref(n) => wrap(format!("*{}", n.s), P_UNARY, at),
        FExpr::Len(n) => {
            let s = format!("{}.len() as f64", n.s);
            if at == At::Top {
                s
            } else {
                format!("({s})")
            }
        }
        FExpr::Sum(n) => format!("{}.iter().sum::<f64>()", n.s),
        FExpr::Product(n) => format!("{}.iter().product::<f64>()", n.s),
        FExpr::Elem(n) => match at {
            At::Receiver => n.s.clone(),
            At::Operand(p) if (P_ADD..=P_UNARY).contains(&p) => n.s.clone(),
            _ => wrap(format!("*{}", n.s), P_UNARY, at),
        },
        FExpr::Reduce(src, r) => reduce_text(src, r, ind),
        FExpr::Count(pr) => {
            let s = format!(
                "{}.iter().filter({}).count() as f64",
                pr.arr.s,
                pred_text(pr, true, ind)
            );
            if at == At::Top {
                s
            } else {
                format!("({s})")
            }
        }
        FExpr::Apply(f, args) => {
            let a: Vec<String> = args
                .iter()
                .map(|a| match a {
                    Arg::F(e) => fexpr(e, At::Top, ind),
                    Arg::A(n, true) => format!("&{}", n.s),
                    Arg::A(n, false) | Arg::D(n) => n.s.clone(),
                })
                .collect();
            format!("{f}({})", a.join(", "))
        }
    }
}

/// A method receiver. One without variables gets `_f64` on its literals:
/// `(2.0 * 0.5).sin()` does not compile, its type being unknown.
fn receiver(e: &FExpr, ind: usize) -> String {
    if typed(e) {
        return fexpr(e, At::Receiver, ind);
    }
    let mut e = e.clone();
    suffix_literals(&mut e);
    fexpr(&e, At::Receiver, ind)
}

/// Whether Rust knows `e` is an `f64` without looking at its context: it
/// reads a variable (every float variable is typed: `tidy` annotates the
/// `let`s of untyped values), a cast, a constant, or calls a path-form
/// method. A method called on an untyped `{float}` does not compile.
pub fn typed(e: &FExpr) -> bool {
    match e {
        FExpr::Var(_) | FExpr::Pi | FExpr::Cast(_) => true,
        FExpr::Lit(l) => l.ends_with("_f64"),
        FExpr::Neg(a) => typed(a),
        FExpr::Powi(path, a, _) => *path || typed(a),
        // `1.0 + v` with `v: &f64` picks its `Add` impl too late for a
        // method call on the sum: a bare `&f64` does not type its operand.
        FExpr::Bin(_, a, b) => {
            let types = |e: &FExpr| typed(e) && !matches!(e, FExpr::Elem(_));
            types(a) || types(b)
        }
        FExpr::Call(_, path, args) => *path || typed(&args[0]),
        FExpr::If(_, t, e) => typed(&t.tail) || typed(&e.tail),
        FExpr::Block(b) => typed(&b.tail),
        // Buffers whose elements are read are annotated when their
        // initialiser is untyped (`tidy`).
        FExpr::Index(..)
        | FExpr::Deref(_)
        | FExpr::Len(_)
        | FExpr::Sum(_)
        | FExpr::Apply(..)
        | FExpr::Elem(_)
        | FExpr::Product(_)
        | FExpr::Reduce(..)
        | FExpr::Count(_) => true,
    }
}

fn suffix_literals(e: &mut FExpr) {
    match e {
        FExpr::Lit(l) if !l.ends_with("_f64") => l.push_str("_f64"),
        FExpr::Neg(a) | FExpr::Powi(_, a, _) => suffix_literals(a),
        FExpr::Bin(_, a, b) => {
            suffix_literals(a);
            suffix_literals(b);
        }
        FExpr::Call(_, _, args) => args.iter_mut().for_each(suffix_literals),
        // `(if c { 0.5 } else { 3.0 }).max(x)`: the value of either branch.
        FExpr::If(_, t, e) => {
            suffix_literals(&mut t.tail);
            suffix_literals(&mut e.tail);
        }
        FExpr::Block(b) => suffix_literals(&mut b.tail),
        _ => {}
    }
}

fn iexpr(e: &IExpr, at: At) -> String {
    match e {
        IExpr::Var(n) => n.s.clone(),
        IExpr::Lit(v) => v.to_string(),
        IExpr::Add(a, b) => wrap(
            format!(
                "{} + {}",
                iexpr(a, At::Operand(P_ADD)),
                iexpr(b, At::Operand(P_ADD + 1))
            ),
            P_ADD,
            at,
        ),
        IExpr::Mul(a, k) => wrap(format!("{} * {k}", iexpr(a, At::Operand(P_MUL))), P_MUL, at),
        IExpr::Rem(a, k) => wrap(format!("{} % {k}", iexpr(a, At::Operand(P_MUL))), P_MUL, at),
    }
}

fn cond(c: &Cond, at: At, ind: usize) -> String {
    match c {
        Cond::F(op, a, b) => wrap(
            format!(
                "{} {} {}",
                fexpr(a, At::Operand(P_CMP + 1), ind),
                op.text(),
                fexpr(b, At::Operand(P_CMP + 1), ind)
            ),
            P_CMP,
            at,
        ),
        Cond::I(op, a, b) => wrap(
            format!(
                "{} {} {}",
                iexpr(a, At::Operand(P_CMP + 1)),
                op.text(),
                iexpr(b, At::Operand(P_CMP + 1))
            ),
            P_CMP,
            at,
        ),
        // Mixed `&&` / `||` are parenthesised for the reader.
        Cond::And(a, b) => wrap(
            format!(
                "{} && {}",
                cond(a, At::Operand(P_AND + 1), ind),
                cond(b, At::Operand(P_AND + 1), ind)
            ),
            P_AND,
            at,
        ),
        Cond::Or(a, b) => wrap(
            format!(
                "{} || {}",
                cond(a, At::Operand(P_AND + 1), ind),
                cond(b, At::Operand(P_AND + 1), ind)
            ),
            P_OR,
            at,
        ),
        Cond::Not(a) => wrap(
            format!("!{}", cond(a, At::Operand(P_UNARY), ind)),
            P_UNARY,
            at,
        ),
        Cond::Var(n) => n.s.clone(),
        Cond::Any(pr) => format!("{}.iter().any({})", pr.arr.s, pred_text(pr, false, ind)),
        Cond::Some(sp) => format!("let Some({}) = {}", sp.bind.s, sp.scrutinee()),
    }
}

// ---------------------------------------------------------------------------
// Sizes.
// ---------------------------------------------------------------------------

pub fn stmt_size(s: &Stmt) -> usize {
    let list = |l: &[Stmt]| l.iter().map(stmt_size).sum::<usize>();
    match s {
        Stmt::Let { init, annot, .. } => {
            1 + usize::from(*annot) + init.as_ref().map_or(0, val_size)
        }
        Stmt::Assign { val, op, .. } => 1 + usize::from(*op != AOp::Set) + val_size(val),
        Stmt::If { cond, then, els } => {
            1 + cond_size(cond) + list(then) + els.as_ref().map_or(0, |e| 1 + list(e))
        }
        Stmt::For { range, body, .. } => {
            1 + iexpr_size(&range.lo)
                + iexpr_size(&range.hi)
                + usize::from(range.rev)
                + usize::from(range.step.is_some())
                + usize::from(range.inclusive)
                + list(body)
        }
        Stmt::While { cond, body, .. } => 2 + cond_size(cond) + list(body),
        Stmt::Loop { body, .. } => 2 + list(body),
        Stmt::Block(b) => 1 + list(b),
        Stmt::Break | Stmt::Continue => 1,
        Stmt::Return(e) => 1 + fexpr_size(e),
        Stmt::LetArr { init, annot, .. } => {
            1 + usize::from(*annot)
                + match init {
                    ArrInit::Zeros { of, .. } => 1 + usize::from(of.is_some()),
                    ArrInit::List { elems, .. } => elems.iter().map(fexpr_size).sum(),
                    ArrInit::Collect { body, .. } => 3 + fblock_size(body),
                    ArrInit::Copy { .. } => 2,
                }
        }
        Stmt::Store { index, op, val, .. } => {
            1 + usize::from(*op != AOp::Set) + iexpr_size(index) + fexpr_size(val)
        }
        Stmt::ForArr { rev, body, .. } => 2 + usize::from(*rev) + list(body),
        Stmt::LetPush { val, .. } => 3 + fexpr_size(val),
        Stmt::CallOut { range, call, .. } => 1 + usize::from(range.is_some()) + fexpr_size(call),
        Stmt::LetElse { ret, .. } => 3 + fexpr_size(ret),
        Stmt::Views(v) => v.size(),
    }
}

fn val_size(v: &Val) -> usize {
    match v {
        Val::F(e) => fexpr_size(e),
        Val::I(e) => iexpr_size(e),
    }
}

pub fn fexpr_size(e: &FExpr) -> usize {
    match e {
        // A variable weighs more than a literal: replacing one by the other
        // is a reduction.
        FExpr::Var(_) => 2,
        FExpr::Lit(_) | FExpr::Pi => 1,
        FExpr::Cast(i) => 1 + iexpr_size(i),
        FExpr::Neg(a) => 1 + fexpr_size(a),
        FExpr::Bin(_, a, b) => 1 + fexpr_size(a) + fexpr_size(b),
        FExpr::Call(_, path, args) => {
            1 + usize::from(*path) + args.iter().map(fexpr_size).sum::<usize>()
        }
        FExpr::Powi(path, a, _) => 2 + usize::from(*path) + fexpr_size(a),
        FExpr::If(c, t, e) => 1 + cond_size(c) + fblock_size(t) + fblock_size(e),
        FExpr::Block(b) => 1 + fblock_size(b),
        FExpr::Index(_, i) => 2 + iexpr_size(i),
        FExpr::Deref(_) => 2,
        FExpr::Len(_) | FExpr::Sum(_) | FExpr::Product(_) => 3,
        FExpr::Elem(_) => 2,
        FExpr::Reduce(_, r) => {
            3 + fblock_size(r.body())
                + match &**r {
                    Reduce::Fold { init, .. } => fexpr_size(init),
                    _ => 0,
                }
        }
        FExpr::Count(pr) => 3 + fexpr_size(&pr.rhs),
        FExpr::Apply(_, args) => {
            2 + args
                .iter()
                .map(|a| match a {
                    Arg::F(e) => fexpr_size(e),
                    Arg::A(..) | Arg::D(_) => 2,
                })
                .sum::<usize>()
        }
    }
}

fn fblock_size(b: &FBlock) -> usize {
    b.stmts.iter().map(stmt_size).sum::<usize>() + fexpr_size(&b.tail)
}

pub fn iexpr_size(e: &IExpr) -> usize {
    match e {
        IExpr::Var(_) => 2,
        IExpr::Lit(_) => 1,
        IExpr::Add(a, b) => 1 + iexpr_size(a) + iexpr_size(b),
        IExpr::Mul(a, _) | IExpr::Rem(a, _) => 2 + iexpr_size(a),
    }
}

pub fn cond_size(c: &Cond) -> usize {
    match c {
        Cond::F(_, a, b) => 1 + fexpr_size(a) + fexpr_size(b),
        Cond::I(_, a, b) => 1 + iexpr_size(a) + iexpr_size(b),
        Cond::And(a, b) | Cond::Or(a, b) => 1 + cond_size(a) + cond_size(b),
        Cond::Not(a) => 1 + cond_size(a),
        Cond::Var(_) => 1,
        Cond::Any(pr) => 3 + fexpr_size(&pr.rhs),
        Cond::Some(sp) => 3 + usize::from(sp.guard.is_some()),
    }
}

// ---------------------------------------------------------------------------
// Visiting every float expression.
// ---------------------------------------------------------------------------

/// Calls `f` on every float expression of the program, outermost first.
pub fn visit_fexprs(p: &mut Program, f: &mut dyn FnMut(&mut FExpr)) {
    visit_stmts(&mut p.body, f);
    if let Some(t) = &mut p.tail {
        visit_fexpr(t, f);
    }
}

fn visit_stmts(list: &mut [Stmt], f: &mut dyn FnMut(&mut FExpr)) {
    for s in list {
        match s {
            Stmt::Let {
                init: Some(Val::F(e)),
                ..
            }
            | Stmt::Assign { val: Val::F(e), .. }
            | Stmt::Store { val: e, .. }
            | Stmt::LetElse { ret: e, .. }
            | Stmt::Return(e) => visit_fexpr(e, f),
            // The call itself stays a call: only its arguments are visited.
            Stmt::CallOut {
                call: FExpr::Apply(_, args),
                ..
            } => {
                for a in args {
                    if let Arg::F(e) = a {
                        visit_fexpr(e, f);
                    }
                }
            }
            Stmt::LetArr {
                init: ArrInit::List { elems, .. },
                ..
            } => elems.iter_mut().for_each(|e| visit_fexpr(e, f)),
            Stmt::LetArr {
                init: ArrInit::Collect { body, .. },
                ..
            } => visit_fblock(body, f),
            Stmt::LetPush { val, .. } => visit_fexpr(val, f),
            Stmt::If { cond, then, els } => {
                visit_cond(cond, f);
                visit_stmts(then, f);
                if let Some(e) = els {
                    visit_stmts(e, f);
                }
            }
            Stmt::While { cond, body, .. } => {
                visit_cond(cond, f);
                visit_stmts(body, f);
            }
            Stmt::For { body, .. }
            | Stmt::ForArr { body, .. }
            | Stmt::Loop { body, .. }
            | Stmt::Block(body) => visit_stmts(body, f),
            _ => {}
        }
    }
}

fn visit_cond(c: &mut Cond, f: &mut dyn FnMut(&mut FExpr)) {
    match c {
        Cond::F(_, a, b) => {
            visit_fexpr(a, f);
            visit_fexpr(b, f);
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            visit_cond(a, f);
            visit_cond(b, f);
        }
        Cond::Not(a) => visit_cond(a, f),
        Cond::Any(pr) => visit_fexpr(&mut pr.rhs, f),
        Cond::Some(_) => {}
        Cond::I(..) | Cond::Var(_) => {}
    }
}

fn visit_fblock(b: &mut FBlock, f: &mut dyn FnMut(&mut FExpr)) {
    visit_stmts(&mut b.stmts, f);
    visit_fexpr(&mut b.tail, f);
}

fn visit_fexpr(e: &mut FExpr, f: &mut dyn FnMut(&mut FExpr)) {
    f(e);
    match e {
        FExpr::Neg(a) | FExpr::Powi(_, a, _) => visit_fexpr(a, f),
        FExpr::Bin(_, a, b) => {
            visit_fexpr(a, f);
            visit_fexpr(b, f);
        }
        FExpr::Call(_, _, args) => args.iter_mut().for_each(|a| visit_fexpr(a, f)),
        FExpr::If(c, t, e) => {
            visit_cond(c, f);
            visit_stmts(&mut t.stmts, f);
            visit_fexpr(&mut t.tail, f);
            visit_stmts(&mut e.stmts, f);
            visit_fexpr(&mut e.tail, f);
        }
        FExpr::Block(b) => {
            visit_stmts(&mut b.stmts, f);
            visit_fexpr(&mut b.tail, f);
        }
        FExpr::Apply(_, args) => {
            for a in args {
                if let Arg::F(e) = a {
                    visit_fexpr(e, f);
                }
            }
        }
        FExpr::Reduce(_, r) => {
            if let Reduce::Fold { init, .. } = &mut **r {
                visit_fexpr(init, f);
            }
            visit_fblock(r.body_mut(), f);
        }
        FExpr::Count(pr) => visit_fexpr(&mut pr.rhs, f),
        FExpr::Elem(_) | FExpr::Product(_) => {}
        FExpr::Var(_)
        | FExpr::Lit(_)
        | FExpr::Pi
        | FExpr::Cast(_)
        | FExpr::Index(..)
        | FExpr::Deref(_)
        | FExpr::Len(_)
        | FExpr::Sum(_) => {}
    }
}

/// Calls `f` on every statement list of `list`, inner lists first, the
/// lists inside block expressions excepted.
pub fn visit_stmt_lists(list: &mut Vec<Stmt>, f: &mut dyn FnMut(&mut Vec<Stmt>)) {
    for s in list.iter_mut() {
        match s {
            Stmt::If { then, els, .. } => {
                visit_stmt_lists(then, f);
                if let Some(e) = els {
                    visit_stmt_lists(e, f);
                }
            }
            Stmt::For { body, .. }
            | Stmt::ForArr { body, .. }
            | Stmt::While { body, .. }
            | Stmt::Loop { body, .. }
            | Stmt::Block(body) => visit_stmt_lists(body, f),
            _ => {}
        }
    }
    f(list);
}

/// Picks an alternative spelling for some constructs from their text alone:
/// 1 or 2 for about one in eight each, 0 otherwise.
fn spelling(text: &str) -> u32 {
    let h = text
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    match h % 8 {
        1 => 1,
        2 => 2,
        3 => 3,
        _ => 0,
    }
}
