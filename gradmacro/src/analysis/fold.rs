//! Temporaries the forward sweep writes inside the one expression that reads
//! them: `let r = (a * a + b * b + 1.0).sqrt();` rather than a `let` per
//! primitive, where the reverse sweep reads none of the parts. The operations
//! and their order are the same, so the value stays bit for bit the user's.

use super::walk;
use crate::ir::*;

/// Which temporaries may be folded into their reader: scalar temporaries of
/// the lowering, defined once by a step and read once, by a later step of the
/// same block, with nothing in between but other such temporaries read
/// there too (so nothing between can change what they read); the reverse
/// sweep reads none of them from the forward sweep (`primal_read`).
pub(super) fn foldable(f: &Func, primal_read: &[bool], kept: &[bool]) -> Vec<bool> {
    let n = f.vars.len();
    let mut uses = vec![0usize; n];
    let mut defs = vec![0usize; n];
    walk(&f.body, &mut |s| {
        for v in reads(s) {
            uses[v.0] += 1;
        }
        if let Stmt::Step(st) = s {
            defs[st.dst.0] += usize::from(st.write == Write::Def);
        }
    });
    let mut fold: Vec<bool> = (0..n)
        .map(|i| {
            let v = &f.vars[i];
            v.temp
                && !v.shape.is_array()
                && uses[i] == 1
                && defs[i] == 1
                && !primal_read[i]
                && !kept[i]
                && VarId(i) != f.output
        })
        .collect();
    // A temporary is folded only if every statement up to its reader is
    // folded into that reader too: dropping one can drop others.
    super::fixpoint(|| {
        let mut changed = settle(&f.body, &mut fold);
        walk(&f.body, &mut |s| match s {
            Stmt::If(i) => {
                changed |= settle(&i.then, &mut fold);
                changed |= settle(&i.els, &mut fold);
            }
            Stmt::Loop(l) => changed |= settle(&l.body, &mut fold),
            _ => {}
        });
        changed
    });
    fold
}

/// Unfolds what breaks the rule in one block; true if anything changed.
fn settle(b: &Block, fold: &mut [bool]) -> bool {
    let mut changed = false;
    for (i, s) in b.stmts.iter().enumerate() {
        let Stmt::Step(st) = s else { continue };
        if !fold[st.dst.0] {
            continue;
        }
        let reader = b.stmts[i + 1..]
            .iter()
            .position(|s| reads(s).contains(&st.dst))
            .map(|k| i + 1 + k);
        let ok = reader.is_some_and(|j| {
            matches!(&b.stmts[j], Stmt::Step(_))
                && b.stmts[i + 1..j]
                    .iter()
                    .all(|s| matches!(s, Stmt::Step(m) if fold[m.dst.0]))
        });
        if !ok {
            fold[st.dst.0] = false;
            changed = true;
        }
    }
    changed
}

/// Every variable a statement reads (not what nested blocks read), once per
/// read: `x * x` reads `x` twice.
fn reads(s: &Stmt) -> Vec<VarId> {
    match s {
        Stmt::Step(st) => st.args.iter().flat_map(Operand::reads).collect(),
        Stmt::Assign(a) => a.value.reads.clone(),
        Stmt::Store(st) => {
            let mut r = st.value.reads();
            r.extend(&st.index.reads);
            r
        }
        Stmt::Push(p) => p.value.reads(),
        Stmt::ArrayDef(d) => d.init.reads.clone(),
        Stmt::Reduce(r) => vec![r.arr],
        Stmt::Call(c) => c
            .args
            .iter()
            .flat_map(|a| {
                let mut r = a.value.reads.clone();
                match &a.share {
                    Share::Scalar(op) => r.extend(op.reads()),
                    Share::Slice(_, p) => r.extend(&p.reads),
                    _ => {}
                }
                r
            })
            .collect(),
        Stmt::Verbatim(_, r) => r.clone(),
        Stmt::If(i) => i.cond.reads.clone(),
        Stmt::Loop(l) => match &l.kind {
            LoopKind::For { iter, reversed, .. } => {
                let mut r = iter.reads.clone();
                if let Some(rev) = reversed {
                    r.extend(&rev.reads);
                }
                r
            }
            LoopKind::While { cond } => cond.reads.clone(),
            LoopKind::Infinite => Vec::new(),
        },
        Stmt::Declare(_) | Stmt::Exit(_) => Vec::new(),
    }
}
