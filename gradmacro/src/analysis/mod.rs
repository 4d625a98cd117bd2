//! Data-flow facts both sweeps need: which adjoints carry anything, which
//! primal values the reverse sweep reads, which forward statements are live,
//! and which writes must record the value they destroy.
//!
//! `analyze` works them out in order into one `Analysis`; each concern it
//! draws on lives in a child module, and the statement walks they share live
//! here.

mod activity;
mod exits;
mod floats;
mod fold;
mod lengths;
mod liveness;
mod reads;
mod recompute;
mod records;
mod stores;
mod unread;

use crate::ir::*;
use activity::flows;
use exits::{exits, ExitSites};
use floats::{copied_floats, float_method_of, one_name};
pub(crate) use lengths::sole_definitions;
pub(crate) use liveness::evaluated;
use liveness::liveness;
pub use reads::partial_uses;
use reads::reverse_reads;
use recompute::{conditions_to_recompute, has_reverse, recomputable, reversible_loops};
use records::{invertible, unneeded_saves};
use std::collections::{HashMap, HashSet};

/// Visits every statement, nested ones included, in program order.
pub fn walk<'a>(block: &'a Block, f: &mut impl FnMut(&'a Stmt)) {
    for s in &block.stmts {
        f(s);
        match s {
            Stmt::If(i) => {
                walk(&i.then, f);
                walk(&i.els, f);
            }
            Stmt::Loop(l) => walk(&l.body, f),
            _ => {}
        }
    }
}

pub struct Analysis {
    /// `if`s and loops that may leave their enclosing block early (a `break`,
    /// `continue` or `return` inside them reaches past them).
    pub escaping: HashSet<SiteId>,
    /// The variable's adjoint can be nonzero and reaches a gradient entry.
    pub adj: Vec<bool>,
    /// The reverse sweep reads the variable's primal value.
    pub needed: Vec<bool>,
    /// An array with an adjoint: the reverse sweep sizes the adjoint from it.
    pub scoped: Vec<bool>,
    /// Declared inside a construct but used by the reverse sweep: declared at
    /// the top of the function instead.
    pub hoisted: Vec<bool>,
    /// The forward sweep must compute the variable: the core returns the
    /// value, so the output and everything it reads are live.
    pub live: Vec<bool>,
    /// Declared by a `let v;` statement (rather than by its first write).
    pub declared: Vec<bool>,
    /// Some write of the variable records the old value.
    pub restored: Vec<bool>,
    /// A loop binding the reverse sweep rebuilds (from the iteration count, or
    /// by running the range backwards).
    pub replayed: Vec<bool>,
    /// Loops the reverse sweep runs over their own range backwards, recording
    /// nothing: they never break and their range cannot change.
    pub reversible: HashSet<SiteId>,
    /// Values inside loops that the reverse sweep computes again from inputs
    /// that cannot have changed, instead of recording them (see `recomputable`).
    pub recomputed: Vec<bool>,
    /// `if`s inside loops whose condition the reverse sweep evaluates again
    /// (it reads only values that cannot have changed, and calls nothing
    /// but float methods), instead of recording which branch was taken.
    pub recomputed_cond: HashSet<SiteId>,
    /// A scalar of the function's float type: annotated so, or written or
    /// read whole by a float step (a declaration can name its type).
    pub floats: Vec<bool>,
    /// Number of steps writing the variable whose reverse reads its adjoint.
    writers: Vec<usize>,
    /// Writes whose old value nothing reads (see `unneeded_saves`).
    unneeded: HashSet<StmtId>,
    /// The element stores that record the element they overwrite (see
    /// `stores.rs`).
    saved_stores: HashSet<StmtId>,
    /// Integer increments (`at += 1`) the reverse sweep undoes by the inverse
    /// update instead of recording the old value, with that update's
    /// operator (`-=` for `+=`; see `invertible`).
    pub inverted: HashMap<StmtId, &'static str>,
    /// Writes whose value nothing emitted reads (see `unread`): left out, a
    /// first one (`let v = ..;`) declaring the variable without its value.
    pub unread: HashSet<StmtId>,
    /// Variables with unread writes that the rest of the forward sweep writes
    /// at most once per declaration: a `let` without a value takes that
    /// write without `mut`.
    pub written_once: Vec<bool>,
    /// Variables whose every write is unread: nothing reads them, so they
    /// are not declared at all.
    pub undeclared: Vec<bool>,
    /// Temporaries the forward sweep writes inside the expression that reads
    /// them, rather than with a `let` (see `fold.rs`): none of their values
    /// is read by the reverse sweep, unless it computes them again.
    pub folded: Vec<bool>,
}

impl Analysis {
    /// Whether the variable's `let` needs `mut` in the forward sweep.
    pub fn mutable(&self, f: &Func, v: VarId) -> bool {
        (f.var(v).reassigned || self.restored[v.0]) && !self.written_once[v.0]
    }
}

pub fn analyze(f: &Func) -> Analysis {
    let n = f.vars.len();
    let flows = flows(f);
    let mut reduce_srcs: Vec<(VarId, VarId)> = Vec::new();
    walk(&f.body, &mut |s| {
        if let Stmt::Reduce(r) = s {
            reduce_srcs.push((r.dst, r.arr));
        }
    });

    // Varied: depends on a differentiated parameter.
    let mut varied = vec![false; n];
    for p in f.wrt() {
        varied[p.0] = true;
    }
    fixpoint(|| {
        let mut changed = false;
        for fl in &flows {
            if !varied[fl.dst.0] && fl.srcs.iter().any(|v| varied[v.0]) {
                varied[fl.dst.0] = true;
                changed = true;
            }
        }
        for &(dst, arr) in &reduce_srcs {
            if !varied[dst.0] && varied[arr.0] {
                varied[dst.0] = true;
                changed = true;
            }
        }
        changed
    });
    // Useful: influences the output.
    let mut useful = vec![false; n];
    useful[f.output.0] = true;
    // Backwards, so a chain of n statements settles in one pass, not n.
    fixpoint(|| {
        let mut changed = false;
        for fl in flows.iter().rev() {
            if useful[fl.dst.0] {
                for v in &fl.srcs {
                    changed |= !useful[v.0];
                    useful[v.0] = true;
                }
            }
        }
        for &(dst, arr) in reduce_srcs.iter().rev() {
            if useful[dst.0] {
                changed |= !useful[arr.0];
                useful[arr.0] = true;
            }
        }
        changed
    });
    let adj: Vec<bool> = (0..n).map(|i| varied[i] && useful[i]).collect();

    let mut needed = vec![false; n];
    let need = |vs: &[VarId], needed: &mut Vec<bool>| vs.iter().for_each(|v| needed[v.0] = true);
    // Arrays with an adjoint: the reverse sweep sizes it from the array, and
    // an array created in a loop is restored whole for each iteration. An
    // inline buffer's adjoint is sized from its definition.
    let mut scoped = vec![false; n];
    for (i, v) in f.vars.iter().enumerate() {
        scoped[i] = adj[i] && v.shape.is_array() && !v.on_stack;
    }
    walk(&f.body, &mut |s| {
        let (reads, out) = reverse_reads(s, &adj);
        need(&reads, &mut needed);
        if let (true, Some(dst)) = (out, written(s)) {
            needed[dst.0] = true;
        }
    });
    let mut reversible = HashSet::new();
    reversible_loops(f, &f.body, &mut Vec::new(), &mut reversible);
    walk(&f.body, &mut |s| {
        if let Stmt::Loop(Loop {
            site,
            kind: LoopKind::For {
                reversed: Some(r), ..
            },
            ..
        }) = s
        {
            if reversible.contains(site) {
                need(&r.reads, &mut needed);
            }
        }
    });
    let mut replayed = vec![false; n];
    walk(&f.body, &mut |s| {
        if let Stmt::Loop(Loop {
            site,
            kind: LoopKind::For {
                binding: Some(v), ..
            },
            ..
        }) = s
        {
            if reversible.contains(site) {
                replayed[v.0] = true;
            }
        }
        if let Stmt::Loop(Loop {
            kind:
                LoopKind::For {
                    binding: Some(v),
                    replay: Some(_),
                    ..
                },
            ..
        }) = s
        {
            replayed[v.0] = true;
        }
    });
    // A variable declared by `let v;` is written in branches: not once, in
    // its own block, so it is never recomputed.
    let mut candidates = vec![false; n];
    let mut deferred = vec![false; n];
    walk(&f.body, &mut |s| {
        if let Stmt::Declare(v) = s {
            deferred[v.0] = true;
        }
    });
    let _ = recomputable(f, &f.body, &replayed, &deferred, &mut candidates);
    // Recompute what the reverse sweep reads, and what that is made from.
    let mut recomputed: Vec<bool> = (0..n).map(|i| candidates[i] && needed[i]).collect();
    let recomputed_cond = conditions_to_recompute(f, &replayed, &candidates);
    // An `if` whose branches the reverse sweep leaves alone has no reverse:
    // its condition is not evaluated again (`if c { for _ in 0..n {} }`, or
    // `if b < 0.6 { s = 0.5; }` with `s` read by nothing backwards). What the
    // reverse sweep reads grows with the conditions it evaluates, so the two
    // settle together.
    let replays = |i: &If, needed: &[bool], recomputed: &[bool]| {
        recomputed_cond.contains(&i.site)
            && [&i.then, &i.els]
                .iter()
                .any(|b| has_reverse(b, &adj, needed, recomputed))
    };
    let all = statements(f);
    fixpoint(|| {
        let before = needed.iter().filter(|v| **v).count();
        walk(&f.body, &mut |s| {
            if let Stmt::If(i) = s {
                if replays(i, &needed, &recomputed) {
                    for u in &i.cond.reads {
                        if candidates[u.0] {
                            recomputed[u.0] = true;
                        }
                    }
                }
            }
        });
        fixpoint(|| {
            let mut changed = false;
            for s in all.iter().rev() {
                let (dst, reads) = match s {
                    Stmt::Step(st) => (st.dst, st.args.iter().flat_map(Operand::reads).collect()),
                    Stmt::Assign(pa) => (pa.dst, pa.value.reads.clone()),
                    _ => continue,
                };
                if recomputed[dst.0] {
                    for v in reads {
                        if candidates[v.0] && !recomputed[v.0] {
                            recomputed[v.0] = true;
                            changed = true;
                        }
                    }
                }
            }
            changed
        });
        let mut reads: Vec<VarId> = Vec::new();
        walk(&f.body, &mut |s| match s {
            Stmt::Step(st) if recomputed[st.dst.0] => {
                // Its inputs are read again, backwards.
                st.args.iter().for_each(|a| reads.extend(a.reads()));
            }
            Stmt::Assign(pa) if recomputed[pa.dst.0] => reads.extend(&pa.value.reads),
            Stmt::If(i) if replays(i, &needed, &recomputed) => reads.extend(&i.cond.reads),
            // Restoring an overwritten element of a needed array reads its index.
            Stmt::Store(st) if needed[st.arr.0] => reads.extend(&st.index.reads),
            _ => {}
        });
        need(&reads, &mut needed);
        needed.iter().filter(|v| **v).count() != before
    });
    let hoisted: Vec<bool> = (0..n)
        .map(|i| {
            (needed[i] || scoped[i])
                && !replayed[i]
                && !recomputed[i]
                && f.vars[i].decl.nested
                && VarId(i) != f.output
        })
        .collect();
    // A recomputed value is made again by the reverse sweep: the forward
    // sweep computes it only if something else there reads it.
    let seeds: Vec<bool> = (0..n).map(|i| needed[i] && !recomputed[i]).collect();
    // What the reverse sweep writes: adjoints, and values it computes again
    // (inside the branch they were computed in, which it then replays).
    let in_reverse: Vec<bool> = (0..n).map(|i| adj[i] || recomputed[i]).collect();
    let live = liveness(f, &seeds, &scoped, &in_reverse);
    let mut declared = vec![false; n];
    walk(&f.body, &mut |s| {
        if let Stmt::Declare(v) = s {
            declared[v.0] = true;
        }
    });
    // Annotated with the function's float type, or read or written by a
    // float step.
    let float_ty = crate::emit::float_ty(&f.float).to_string();
    let mut floats: Vec<bool> = f
        .vars
        .iter()
        .map(|v| v.ty.as_ref().is_some_and(|t| t.to_string() == float_ty))
        .collect();
    for p in &f.params {
        floats[p.id.0] |= !p.shape.is_array() && p.ty.to_string() == float_ty;
    }
    walk(&f.body, &mut |s| {
        if let Stmt::Step(st) = s {
            floats[st.dst.0] = true;
            for (i, a) in st.args.iter().enumerate() {
                if st.prim.integer_operand(i) {
                    continue;
                }
                match a {
                    Operand::Var(v) => floats[v.0] = true,
                    Operand::Const(c)
                        if c.reads.len() == 1
                            && (one_name(c) || float_method_of(c, &f.var(c.reads[0]).ident)) =>
                    {
                        floats[c.reads[0].0] = true
                    }
                    _ => {}
                }
            }
        }
    });
    copied_floats(f, &mut floats);
    let mut sites = ExitSites::default();
    exits(&f.body, &mut sites);
    let mut a = Analysis {
        escaping: sites.escaping,
        adj,
        needed,
        scoped,
        hoisted,
        live,
        declared,
        restored: vec![false; n],
        replayed,
        reversible,
        recomputed,
        recomputed_cond,
        floats,
        writers: vec![0; n],
        unneeded: HashSet::new(),
        saved_stores: HashSet::new(),
        inverted: HashMap::new(),
        unread: HashSet::new(),
        written_once: vec![false; n],
        undeclared: vec![false; n],
        folded: Vec::new(),
    };
    let _ = unneeded_saves(&f.body, &a.adj, &mut a.unneeded);
    a.saved_stores = stores::saved_stores(f, &a.adj);
    a.inverted = invertible(f, &a);
    let mut restored = vec![false; n];
    let mut writers = vec![0; n];
    walk(&f.body, &mut |s| match s {
        Stmt::Step(st) => {
            restored[st.dst.0] |= a.saves_at(f, st.dst, st.write, write_key(s));
            writers[st.dst.0] += usize::from(a.contributes(st));
        }
        Stmt::Assign(p) => {
            restored[p.dst.0] |=
                a.saves_at(f, p.dst, p.write, p.id) || a.inverted.contains_key(&p.id)
        }
        Stmt::Reduce(r) => {
            restored[r.dst.0] |= a.saves_at(f, r.dst, r.write, write_key(s));
            writers[r.dst.0] += usize::from(a.adj[r.arr.0]);
        }
        Stmt::Call(c) => {
            restored[c.dst.0] |= a.saves_at(f, c.dst, c.write, write_key(s));
            writers[c.dst.0] += 1;
        }
        Stmt::ArrayDef(d) => restored[d.dst.0] |= a.saves_array(f, d.dst, d.write),
        Stmt::Store(s) => restored[s.arr.0] |= a.saves_element(s),
        Stmt::Loop(Loop {
            kind: LoopKind::For {
                binding: Some(v), ..
            },
            ..
        }) => restored[v.0] |= a.saves(f, *v, Write::Def),
        _ => {}
    });
    a.restored = restored;
    a.writers = writers;
    unread_writes(f, &mut a);
    let primal_read: Vec<bool> = (0..n).map(|i| a.needed[i] && !a.recomputed[i]).collect();
    let kept: Vec<bool> = (0..n)
        .map(|i| a.declared[i] || a.hoisted[i] || a.restored[i] || a.scoped[i])
        .collect();
    a.folded = fold::foldable(f, &primal_read, &kept);
    a
}

/// Finds the unread writes of variables the forward sweep alone reads (the
/// reverse sweep neither reads nor restores them), written only by steps and
/// assignments, and decides which of them still need `mut`.
fn unread_writes(f: &Func, a: &mut Analysis) {
    let mut candidates: Vec<bool> = (0..f.vars.len())
        .map(|i| {
            let v = &f.vars[i];
            a.live[i]
                && !(a.needed[i] || a.recomputed[i] || a.scoped[i])
                && !(a.declared[i] || a.hoisted[i] || a.restored[i])
                && !v.shape.is_array()
                && VarId(i) != f.output
                && !f.is_param(VarId(i))
        })
        .collect();
    walk(&f.body, &mut |s| match s {
        Stmt::Step(_) | Stmt::Assign(_) => {}
        Stmt::Loop(Loop {
            kind: LoopKind::For {
                binding: Some(v), ..
            },
            ..
        }) => candidates[v.0] = false,
        s => {
            if let Some(v) = written(s) {
                candidates[v.0] = false;
            }
        }
    });
    a.unread = unread::unread_writes(f, &a.live, &candidates);
    if a.unread.is_empty() {
        return;
    }
    let mut firsts = Vec::new();
    walk(&f.body, &mut |s| match s {
        Stmt::Step(st) if st.write == Write::Def && a.unread.contains(&st.id) => {
            firsts.push((st.dst, st.id))
        }
        Stmt::Assign(p) if p.write == Write::Def && a.unread.contains(&p.id) => {
            firsts.push((p.dst, p.id))
        }
        _ => {}
    });
    for (v, first) in firsts {
        let kept = most_writes(&f.body, v, first, a);
        a.written_once[v.0] = kept <= 1;
        a.undeclared[v.0] = kept == 0;
    }
}

/// How many times, at most, one run of the variable's declaration is
/// followed by writes of it the forward sweep keeps (not unread); 2 stands
/// for "more than one". The larger of two branches, a loop's writes twice
/// unless the loop holds the declaration. Exits are ignored, which can only
/// count more.
fn most_writes(b: &Block, v: VarId, first: StmtId, a: &Analysis) -> usize {
    let mut n = 0;
    for s in &b.stmts {
        n += match s {
            Stmt::Step(st) if st.dst == v && a.live[v.0] && !a.unread.contains(&st.id) => 1,
            Stmt::Assign(p) if p.dst == v && a.live[v.0] && !a.unread.contains(&p.id) => 1,
            Stmt::If(i) => most_writes(&i.then, v, first, a).max(most_writes(&i.els, v, first, a)),
            Stmt::Loop(l) => {
                let mut holds = false;
                walk(&l.body, &mut |s| holds |= write_key(s) == first);
                let body = most_writes(&l.body, v, first, a);
                if holds || body == 0 {
                    body
                } else {
                    2
                }
            }
            _ => 0,
        };
    }
    n.min(2)
}

/// The variable a simple statement writes.
fn written(s: &Stmt) -> Option<VarId> {
    match s {
        Stmt::Step(st) => Some(st.dst),
        Stmt::Assign(a) => Some(a.dst),
        Stmt::Reduce(r) => Some(r.dst),
        Stmt::Call(c) => Some(c.dst),
        _ => None,
    }
}

/// Identifies a write statement (its address, stable while `f` is borrowed).
pub fn write_key(s: &Stmt) -> StmtId {
    match s {
        Stmt::Step(st) => st.id,
        Stmt::Assign(a) => a.id,
        Stmt::Reduce(r) => r.id,
        Stmt::Call(c) => c.id,
        Stmt::Store(st) => st.id,
        Stmt::ArrayDef(d) => d.id,
        Stmt::Loop(l) => l.id,
        // Writes nothing that is recorded: an id no statement has.
        _ => StmtId(usize::MAX),
    }
}

/// Every statement, nested ones included, in program order.
fn statements(f: &Func) -> Vec<&Stmt> {
    let mut all = Vec::new();
    walk(&f.body, &mut |s| all.push(s));
    all
}

fn fixpoint(mut step: impl FnMut() -> bool) {
    while step() {}
}

pub fn stmt_ctx(s: &Stmt) -> Ctx {
    match s {
        Stmt::If(i) => i.ctx,
        Stmt::Loop(l) => l.ctx,
        _ => Ctx::default(),
    }
}
