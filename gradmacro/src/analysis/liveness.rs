//! Liveness: which values the forward sweep must compute, and which `if`s
//! and loops it must emit, given what both sweeps read.

use super::{fixpoint, statements};
use crate::ir::*;

/// Variables the forward sweep must compute: read by control flow that is
/// emitted, by passive statements, by the reverse sweep, or returned.
///
/// An `if` or a loop none of whose statements does anything in either sweep
/// is not emitted: what only its condition or range reads is not live
/// (after `let b = g(); if b < 1.0 { for _ in 0..n {} }`, `b` would be
/// computed in vain), unless it reads a live value written more than once
/// (`evaluated`).
/// Whether a construct does anything depends on what is live, so both
/// settle together.
pub(super) fn liveness(
    f: &Func,
    needed: &[bool],
    scoped: &[bool],
    in_reverse: &[bool],
) -> Vec<bool> {
    let mut live: Vec<bool> = needed.iter().zip(scoped).map(|(a, b)| *a || *b).collect();
    live[f.output.0] |= !f.value_unused;
    let all = statements(f);
    fixpoint(|| {
        let mut changed = false;
        let mut mark = |live: &mut Vec<bool>, vs: &[VarId]| {
            for v in vs {
                changed |= !live[v.0];
                live[v.0] = true;
            }
        };
        let mut control: Vec<&[VarId]> = Vec::new();
        effective(&f.body, f, &live, in_reverse, &mut control);
        for reads in control {
            mark(&mut live, reads);
        }
        for s in all.iter().rev() {
            let (dst, reads): (VarId, Vec<VarId>) = match s {
                Stmt::Step(st) => (st.dst, st.args.iter().flat_map(Operand::reads).collect()),
                Stmt::Assign(a) => (a.dst, a.value.reads.clone()),
                Stmt::Store(s) => (
                    s.arr,
                    s.value
                        .reads()
                        .into_iter()
                        .chain(s.index.reads.iter().copied())
                        .collect(),
                ),
                Stmt::Push(p) => (p.arr, p.value.reads()),
                Stmt::ArrayDef(d) => (d.dst, d.init.reads.clone()),
                Stmt::Reduce(r) => (r.dst, vec![r.arr]),
                Stmt::Call(c) => (
                    c.dst,
                    c.args.iter().flat_map(|a| a.value.reads.clone()).collect(),
                ),
                _ => continue,
            };
            if live[dst.0] {
                mark(&mut live, &reads);
            }
        }
        changed
    });
    live
}

/// Whether a block may do anything in the forward or the reverse sweep: a
/// write of a live value or of one the reverse sweep writes (an adjoint, or
/// a value it computes again, inside the replayed branch), passive code kept
/// as written, an exit, or an infinite loop. Errs towards `true`: a construct
/// emitted whose condition was not computed would not compile. Collects in
/// `reads` what the conditions and ranges of the constructs it finds
/// effective read, and what passive code reads: one walk, from the innermost
/// constructs out.
fn effective<'a>(
    b: &'a Block,
    f: &Func,
    live: &[bool],
    in_reverse: &[bool],
    reads: &mut Vec<&'a [VarId]>,
) -> bool {
    let matters = |v: &VarId| live[v.0] || in_reverse[v.0];
    let mut any = false;
    for s in &b.stmts {
        any |= match s {
            Stmt::Step(st) => matters(&st.dst),
            Stmt::Assign(a) => matters(&a.dst),
            Stmt::Store(st) => matters(&st.arr),
            Stmt::Push(p) => matters(&p.arr),
            Stmt::ArrayDef(d) => matters(&d.dst),
            Stmt::Reduce(r) => matters(&r.dst),
            Stmt::Call(c) => matters(&c.dst),
            Stmt::Declare(v) => matters(v),
            Stmt::Verbatim(_, r) => {
                reads.push(r);
                true
            }
            Stmt::Exit(_) => true,
            Stmt::If(i) => {
                let then = effective(&i.then, f, live, in_reverse, reads);
                let els = effective(&i.els, f, live, in_reverse, reads);
                let any = then || els || evaluated(f, &i.cond.reads, live);
                if any {
                    reads.push(&i.cond.reads);
                }
                any
            }
            Stmt::Loop(l) => {
                let body = effective(&l.body, f, live, in_reverse, reads);
                let header = match &l.kind {
                    LoopKind::For { iter, .. } => Some(&iter.reads),
                    LoopKind::While { cond } => Some(&cond.reads),
                    LoopKind::Infinite => None,
                };
                let runs = body || header.is_none_or(|r| evaluated(f, r, live));
                if let Some(r) = header.filter(|_| runs) {
                    reads.push(r);
                }
                runs
            }
        };
    }
    any
}

/// Whether the condition or range of a construct that does nothing is still
/// evaluated in its place (`let _ = u > 1.0;`): when it reads a live value
/// written more than once, it may be the one read of a value the function
/// then overwrites, which unread would be an unused assignment.
pub(crate) fn evaluated(f: &Func, reads: &[VarId], live: &[bool]) -> bool {
    reads.iter().any(|v| live[v.0] && f.var(*v).reassigned)
}
