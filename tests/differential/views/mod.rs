//! Views of arrays and helpers with several outputs, for the programs that
//! use them: one top-level statement (`Stmt::Views`) spliced in before the
//! value, whose parts each bind views and buffers of their own and whose
//! float the value then reads.
//!
//! - `let row0 = &w[1..3];` (`&w[1..]`, `&w[..2]`, `&w[1..][..2]`, `let
//!   (lh0, rh0) = w.split_at(1);`) of an array parameter or a local array,
//!   read by `row0[k]`, `row0.len()`, summed, walked, mapped and passed to a
//!   helper (a view of a parameter; of a local array with `gaps()` only);
//!   a bound held in a name that a later loop binds again (`let vk0 = 1;
//!   let row0 = &w[vk0..];` then `for vk0 in 0..row0.len()`);
//! - walks adding up `c[0] * t` over `row0.chunks(k)` (`c[k - 1]` over
//!   `chunks_exact(k)`), `(c[1] - c[0]) * t` over `row0.windows(2)`, and
//!   `a * b * t` over `row0.iter().zip(w.iter())` with an array parameter
//!   or another view (itself when there is none), the lengths unequal or
//!   not;
//! - `let pa0 = &mut vb0[1..3];` (`&mut vb0[1..][..2]`) and `let (pa0, pb0)
//!   = vb0.split_at_mut(2);` of a local buffer, written through (`pa0[0] =
//!   ..`, `pa0[1] += ..`, a loop, `for e in pa0.iter_mut() { *e += t; *e *=
//!   0.5; }`, `for (i, e) in pa0.iter_mut().enumerate() { *e = *e * t + i as
//!   f64 * 0.25; }`, `for (e, z) in pa0.iter_mut().zip(w.iter()) { *e +=
//!   *z * t; }` with an array parameter or the other half of a split), read
//!   by the same walks, lent whole to a helper writing
//!   into it (and, with `gaps()`, to one only reading it), the buffer read
//!   afterwards;
//! - a helper with several outputs, `fn hm0(xs: &[f64], y: f64, a: &mut
//!   [f64], b: &mut [f64], e: &mut f64)`, called with `&mut vb0`, `&mut
//!   vo0[1..3]`, the halves of a `split_at_mut`, `&mut ve0` (a local float)
//!   and `&mut vq0[1]`;
//! - fixed-size views as `&[f64; N]` arguments (`w.first_chunk::<2>()
//!   .unwrap()`, `w.last_chunk::<2>().unwrap()`, `w[1..3].try_into()
//!   .unwrap()`), and a callee's `[f64; N]` bound without its type (`let
//!   fc0 = hc0(..);`, then `fc0[1]`).
//!
//! Views of views, the walks and `iter_mut` come from draws of their own
//! (`splice`), so that the programs without them are the ones their seeds
//! gave before. (They found the counts of `chunks` and `windows` over a
//! view of known length, `4.div_ceil(3)`, not compiling: program 201013,
//! now in `tests/regressions.rs`.)
//!
//! Every name a part binds is its own (`row0`, `vb1`...: no pool of the
//! generator holds them), so a part reads nothing of the program but the
//! parameters it names, which `tidy` sees as its reads. The helpers of a
//! part are printed with it, before `f`. The dual copy is the same text over
//! `D`: slicing, `split_at`, `first_chunk` and `try_into` are Rust's own
//! there, so the oracle computes the views' meaning without the macro.

use super::ast::{Name, Ty};

pub mod coverage;
mod draw;
mod print;

pub use draw::splice;

/// Whether to generate the forms the macro does not support yet, which
/// the default run leaves out (`GRADMACRO_DIFFTEST_VIEW_GAPS=1`), each
/// printed otherwise from the same draws:
///
/// - the statement as a block expression, `let vw = { .. };`: a block
///   whose value is constant is rejected if it assigns anything ("assignment
///   inside an expression"); printed as plain statements instead;
/// - `vec![..]` inside a block expression (rejected as a macro);
/// - a half of a split ignored by `_` (rejected as "references to
///   differentiated values"); printed `_pb0`;
/// - a view of a local array lent whole to a helper that only reads it,
///   `vread0(pa0, ..)`, `vread0(row0, ..)` (E0308 in the expansion: a
///   `Vec<f64>` or `[f64; 3]` where `&[f64]` is expected; `vread0(&*pa0,
///   ..)` is rejected as "references to differentiated values"; with
///   `hessian`, "the tangent program could not be differentiated again");
///   printed `pa0.iter().sum::<f64>() * t`;
/// - a view of an array parameter that a later `let` declares again (`let
///   w = w.to_vec();`: "references to differentiated values"); such
///   parameters are not viewed;
/// - forward mode through a callee's `[f64; N]` bound without its type
///   (E0308 in the tangent); nor `hessian`, which the macro refuses for a
///   vector output by design (or silently leaves `f_hvp` out): no `tangent`
///   nor `hessian` for those programs (`dualize::module`).
pub fn gaps() -> bool {
    std::env::var_os("GRADMACRO_DIFFTEST_VIEW_GAPS").is_some_and(|v| v == "1")
}

/// Literals the parts scale by: moderate, so values stay tame.
const SCALES: &[&str] = &["0.5", "1.5", "0.25", "0.75", "1.25", "2.0", "0.3"];

/// `x * 0.5`, `x.sin() * 0.5` or `0.5`: a float parameter read, or a
/// constant.
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    pub var: Option<Name>,
    pub fun: Option<&'static str>,
    pub lit: &'static str,
}

impl Term {
    fn text(&self) -> String {
        match (&self.var, self.fun) {
            (None, _) => self.lit.to_string(),
            (Some(v), None) => format!("{} * {}", v.s, self.lit),
            (Some(v), Some(f)) => format!("{}.{f}() * {}", v.s, self.lit),
        }
    }
}

/// What a part views: an array parameter (`amp` when it is passed as `&w`:
/// an owned array, or a local copy shadowing the parameter), or a local
/// array of its own (`let vb0: Vec<f64> = vec![..];`).
#[derive(Clone, Debug, PartialEq)]
pub enum Base {
    Param { name: Name, len: usize, amp: bool },
    Local { vec: bool, elems: Vec<Term> },
}

impl Base {
    fn len(&self) -> usize {
        match self {
            Base::Param { len, .. } => *len,
            Base::Local { elems, .. } => elems.len(),
        }
    }
}

/// How the views are made from the base, of length `len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `&b[lo..hi]`.
    Range(usize, usize),
    /// `&b[lo..]`.
    From(usize),
    /// `&b[..hi]`.
    To(usize),
    /// `let vk0 = lo; .. &b[vk0..]`, every index loop over the view then
    /// binding `vk0` again.
    FromVar(usize),
    /// `b.split_at(m)`: two views.
    Split(usize),
    /// `&b[lo..][..p]`, a view of a view.
    Reslice(usize, usize),
}

impl Shape {
    /// The views' lengths.
    fn lens(self, len: usize) -> Vec<usize> {
        match self {
            Shape::Range(lo, hi) => vec![hi - lo],
            Shape::From(lo) | Shape::FromVar(lo) => vec![len - lo],
            Shape::To(hi) => vec![hi],
            Shape::Split(m) => vec![m, len - m],
            Shape::Reslice(_, p) => vec![p],
        }
    }
}

/// A read of view number `view`.
#[derive(Clone, Debug, PartialEq)]
pub struct Use {
    pub view: usize,
    pub how: UseHow,
}

#[derive(Clone, Debug, PartialEq)]
pub enum UseHow {
    /// `v[k] * t`.
    Elem(usize, Term),
    /// `v.len() as f64`.
    Len,
    /// `v.iter().sum::<f64>()`.
    Sum,
    /// `v.iter().map(|e| e * e).sum::<f64>()`.
    Map,
    /// `for i in 0..v.len() { s += v[i] * t + i as f64 * 0.25; }` (`0..n`,
    /// `n` a literal no longer than the view, when `upto`).
    Loop { t: Term, upto: Option<usize> },
    /// `for &e in v { s += e.sin() * t; }`, or `for e in v.iter() { s += e
    /// * t; }` when `iter`.
    ForElem { t: Term, iter: bool },
    /// `vread0(v, t)`, a helper reading the view.
    Call(Term),
    /// `for c in v.chunks(k) { s += c[0] * t; }` (the last chunk may be
    /// shorter), or `v.chunks_exact(k)` reading `c[k - 1]` when `exact`.
    Chunks { k: usize, exact: bool, t: Term },
    /// `for wn in v.windows(2) { s += (wn[1] - wn[0]) * t; }`.
    Windows(Term),
    /// `for (a, b) in v.iter().zip(w.iter()) { s += a * b * t; }`.
    Zip(Zip, Term),
}

/// What a view is zipped with (the lengths may differ).
#[derive(Clone, Debug, PartialEq)]
pub enum Zip {
    /// An array parameter.
    Param(Name),
    /// View number `n` of the same part (itself when there is no other).
    View(usize),
}

/// A write through mutable view number `view`.
#[derive(Clone, Debug, PartialEq)]
pub struct Write {
    pub view: usize,
    pub how: WriteHow,
}

#[derive(Clone, Debug, PartialEq)]
pub enum WriteHow {
    /// `v[k] = v[j] * t + 0.5;`
    Set(usize, usize, Term),
    /// `v[k] += t;`
    Add(usize, Term),
    /// `v[k] += other[j] * t;` from the other half of a split.
    Cross(usize, usize, Term),
    /// `for i in 0..v.len() { v[i] = v[i] * t; }`
    Loop(Term),
    /// `vwrite0(t, v);`, a helper writing into the view.
    Lend(Term),
    /// `for e in v.iter_mut() { *e += t; *e *= 0.5; }`
    IterMut(Term),
    /// `for (i, e) in v.iter_mut().enumerate() { *e = *e * t + i as f64 *
    /// 0.25; }`
    IterMutEnum(Term),
    /// `for (e, z) in v.iter_mut().zip(w.iter()) { *e += *z * t; }` with an
    /// array parameter or the other half of a split.
    IterMutZip(Zip, Term),
}

/// How one output of a helper with several outputs is lent.
#[derive(Clone, Debug, PartialEq)]
pub enum Lend {
    /// `&mut b` (a buffer of its own).
    Whole,
    /// `&mut b[lo..hi]`.
    Range(usize, usize),
}

/// A fixed-size view of the base as a `&[f64; n]` argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chunk {
    First,
    Last,
    /// `b[lo..lo + n].try_into().unwrap()`.
    At(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    /// Views of `base`, then reads of them.
    Read {
        base: Base,
        shape: Shape,
        uses: Vec<Use>,
        /// The reading helper's body: which of a few.
        helper: usize,
    },
    /// A local buffer of `init`, mutable views of it written through and
    /// read, then the buffer read (`vb0.iter().sum::<f64>()`, or `vb0[k] *
    /// t` when `elem`).
    Write {
        vec: bool,
        init: Vec<Term>,
        shape: Shape,
        writes: Vec<Write>,
        uses: Vec<Use>,
        elem: Option<(usize, Term)>,
        helper: usize,
    },
    /// `hm0([xs,] t, a, [b,] [e])` on local buffers (the halves of one
    /// buffer's `split_at_mut(split)` for `a` and `b` when `split` is set),
    /// then all of them read.
    Outs {
        xs: Option<Base>,
        t: Term,
        a: Vec<Term>,
        a_lend: Lend,
        b: Option<(Vec<Term>, Lend)>,
        split: Option<usize>,
        /// `&mut ve0` from a float (`Ok`), or `&mut vq0[k]` of a buffer.
        e: Option<Result<Term, (Vec<Term>, usize)>>,
        helper: usize,
    },
    /// `hf0(chunk, t)` (returning a float) or `let fc0 = hc0(chunk);` (an
    /// array, its element `k` read) for each call, `n` long views of `base`.
    Fixed {
        base: Base,
        n: usize,
        calls: Vec<(Chunk, Option<usize>, Term)>,
    },
}

/// The statement: its parts, and the float `out` it declares, their sum,
/// written `let out = { .. };` when `block`.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewUse {
    pub out: Name,
    pub block: bool,
    pub parts: Vec<Part>,
}

// ---------------------------------------------------------------------------
// What the rest of the program sees.
// ---------------------------------------------------------------------------

/// Calls `f` on every parameter a part reads, with the type it is read as.
type Visit<'a> = &'a mut dyn FnMut(&mut Name, Ty);

fn term_names(t: &mut Term, f: Visit) {
    if let Some(v) = &mut t.var {
        f(v, Ty::F);
    }
}

fn terms_names(ts: &mut [Term], f: Visit) {
    ts.iter_mut().for_each(|t| term_names(t, f));
}

fn base_names(b: &mut Base, f: Visit) {
    match b {
        Base::Param { name, .. } => f(name, Ty::A),
        Base::Local { elems, .. } => terms_names(elems, f),
    }
}

fn uses_names(uses: &mut [Use], f: Visit) {
    for u in uses {
        match &mut u.how {
            UseHow::Elem(_, t)
            | UseHow::Loop { t, .. }
            | UseHow::ForElem { t, .. }
            | UseHow::Call(t)
            | UseHow::Chunks { t, .. }
            | UseHow::Windows(t) => term_names(t, f),
            UseHow::Zip(z, t) => {
                if let Zip::Param(n) = z {
                    f(n, Ty::A);
                }
                term_names(t, f);
            }
            UseHow::Len | UseHow::Sum | UseHow::Map => {}
        }
    }
}

impl ViewUse {
    /// Calls `f` on every parameter the parts read (the only names of the
    /// program they see), with the type it is read as.
    pub fn visit_outer(&mut self, f: Visit) {
        for p in &mut self.parts {
            match p {
                Part::Read { base, uses, .. } => {
                    base_names(base, f);
                    uses_names(uses, f);
                }
                Part::Write {
                    init,
                    writes,
                    uses,
                    elem,
                    ..
                } => {
                    terms_names(init, f);
                    for w in writes {
                        match &mut w.how {
                            WriteHow::Set(_, _, t)
                            | WriteHow::Add(_, t)
                            | WriteHow::Cross(_, _, t)
                            | WriteHow::Loop(t)
                            | WriteHow::Lend(t)
                            | WriteHow::IterMut(t)
                            | WriteHow::IterMutEnum(t) => term_names(t, f),
                            WriteHow::IterMutZip(z, t) => {
                                if let Zip::Param(n) = z {
                                    f(n, Ty::A);
                                }
                                term_names(t, f);
                            }
                        }
                    }
                    uses_names(uses, f);
                    if let Some((_, t)) = elem {
                        term_names(t, f);
                    }
                }
                Part::Outs { xs, t, a, b, e, .. } => {
                    if let Some(x) = xs {
                        base_names(x, f);
                    }
                    term_names(t, f);
                    terms_names(a, f);
                    if let Some((b, _)) = b {
                        terms_names(b, f);
                    }
                    match e {
                        Some(Ok(t)) => term_names(t, f),
                        Some(Err((q, _))) => terms_names(q, f),
                        None => {}
                    }
                }
                Part::Fixed { base, calls, .. } => {
                    base_names(base, f);
                    calls.iter_mut().for_each(|(_, _, t)| term_names(t, f));
                }
            }
        }
    }

    /// The parameters the parts read.
    pub fn outer(&self) -> Vec<(Name, Ty)> {
        let mut out = Vec::new();
        self.clone()
            .visit_outer(&mut |n: &mut Name, ty| out.push((n.clone(), ty)));
        out
    }

    /// The number of syntax nodes, for the shrinker.
    pub fn size(&self) -> usize {
        1 + self.outer().len()
            + self
                .parts
                .iter()
                .map(|p| match p {
                    Part::Read { uses, .. } => 2 + uses.len(),
                    Part::Write { writes, uses, .. } => 3 + writes.len() + uses.len(),
                    Part::Outs { b, e, .. } => {
                        3 + usize::from(b.is_some()) + usize::from(e.is_some())
                    }
                    Part::Fixed { calls, .. } => 2 + calls.len(),
                })
                .sum::<usize>()
    }

    /// One-step reductions: a part, a read or a write left out, a view of
    /// a view made directly.
    pub fn smaller(&self) -> Vec<ViewUse> {
        let mut out = Vec::new();
        let with = |i: usize, p: Part| {
            let mut v = self.clone();
            v.parts[i] = p;
            v
        };
        for i in 0..self.parts.len() {
            if self.parts.len() > 1 {
                let mut v = self.clone();
                v.parts.remove(i);
                out.push(v);
            }
            if let Part::Read { shape, .. } | Part::Write { shape, .. } = &self.parts[i] {
                if let Shape::Reslice(lo, n) = *shape {
                    let mut p = self.parts[i].clone();
                    if let Part::Read { shape, .. } | Part::Write { shape, .. } = &mut p {
                        *shape = Shape::Range(lo, lo + n);
                    }
                    out.push(with(i, p));
                }
            }
            match &self.parts[i] {
                Part::Read { uses, .. } => {
                    for k in 0..uses.len() {
                        let mut p = self.parts[i].clone();
                        if let Part::Read { uses, .. } = &mut p {
                            uses.remove(k);
                        }
                        out.push(with(i, p));
                    }
                }
                Part::Write { writes, uses, .. } => {
                    for k in 0..writes.len() + uses.len() {
                        let mut p = self.parts[i].clone();
                        if let Part::Write { writes, uses, .. } = &mut p {
                            if k < writes.len() {
                                writes.remove(k);
                            } else {
                                uses.remove(k - writes.len());
                            }
                        }
                        out.push(with(i, p));
                    }
                }
                Part::Outs { .. } => {}
                Part::Fixed { calls, .. } => {
                    for k in 0..calls.len() {
                        if calls.len() > 1 {
                            let mut p = self.parts[i].clone();
                            if let Part::Fixed { calls, .. } = &mut p {
                                calls.remove(k);
                            }
                            out.push(with(i, p));
                        }
                    }
                }
            }
        }
        if self.block {
            let mut v = self.clone();
            v.block = false;
            out.push(v);
        }
        out
    }
}
