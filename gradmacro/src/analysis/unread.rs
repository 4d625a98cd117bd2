//! Writes no emitted code reads. A core that leaves out what only the
//! returned value needed (the cores of second derivatives return nothing)
//! can leave values unread: in `let mut e = 1.0; if c { e = 1.0; x = e; }
//! x.cos() + e`, once `+ e` is gone, `1.0` is overwritten before any read;
//! in `let mut b = 1.0; for .. { b -= 1.0; if c { b = x; return b; } }`,
//! the decrements feed only one another. rustc would warn that the values
//! are never read (its liveness is strong: a read by a write nothing reads
//! does not count), so those writes are left out, and a first one leaves
//! its `let` without a value, or out too when no write of the variable is
//! left (`let r = 0.9; x -= r;` once `x -= r` is gone).

use crate::ir::*;
use std::collections::{BTreeSet, HashSet};

/// Variables of interest live at a point of the forward sweep.
type Live = BTreeSet<usize>;

/// What is live where an exit jumps to.
struct Targets {
    end: Live,
    after_loop: Live,
    loop_head: Live,
}

/// The writes of `candidates` (steps and assignments) whose value no
/// statement the forward sweep emits (`live`), no condition or range and not
/// the returned value reads before the variable is written again, counting
/// only reads by writes that are read themselves. Errs towards "read": a
/// write kept is at worst the lint this avoids, while one left out that is
/// read would not compile.
pub(super) fn unread_writes(f: &Func, live: &[bool], candidates: &[bool]) -> HashSet<StmtId> {
    if !candidates.iter().any(|c| *c) {
        return HashSet::new();
    }
    let mut flow = Flow {
        live,
        candidates,
        writes: HashSet::new(),
        read: HashSet::new(),
    };
    let mut end = Live::new();
    if !f.value_unused {
        flow.add(&mut end, &[f.output]);
    }
    let targets = Targets {
        end: end.clone(),
        after_loop: Live::new(),
        loop_head: Live::new(),
    };
    flow.block(&f.body, end, &targets);
    flow.writes.difference(&flow.read).copied().collect()
}

/// A backward walk: what is live before each statement, from what is live
/// after it. Loops iterate to a fixpoint; a write read on any pass is read,
/// so the passes before the last only add to `read`.
struct Flow<'a> {
    live: &'a [bool],
    candidates: &'a [bool],
    writes: HashSet<StmtId>,
    read: HashSet<StmtId>,
}

impl Flow<'_> {
    fn add(&self, l: &mut Live, reads: &[VarId]) {
        l.extend(reads.iter().filter(|v| self.candidates[v.0]).map(|v| v.0));
    }

    fn block(&mut self, b: &Block, mut l: Live, t: &Targets) -> Live {
        for s in b.stmts.iter().rev() {
            l = self.stmt(s, l, t);
        }
        l
    }

    /// A write of `dst` reading `reads`: whether its value is read, and if so
    /// what is live before it. An unread write of a candidate reads nothing.
    fn write(&mut self, id: StmtId, dst: VarId, whole: bool, reads: &[VarId], l: &mut Live) {
        if self.candidates[dst.0] {
            self.writes.insert(id);
            if !l.contains(&dst.0) {
                return;
            }
            self.read.insert(id);
        }
        if whole {
            l.remove(&dst.0);
        }
        self.add(l, reads);
    }

    fn stmt(&mut self, s: &Stmt, mut l: Live, t: &Targets) -> Live {
        let emitted = |v: &VarId| self.live[v.0];
        match s {
            Stmt::Step(st) if emitted(&st.dst) => {
                let reads: Vec<VarId> = st.args.iter().flat_map(Operand::reads).collect();
                self.write(st.id, st.dst, true, &reads, &mut l);
            }
            Stmt::Assign(a) if emitted(&a.dst) => {
                // `v += x` reads `v`.
                let mut reads = a.value.reads.clone();
                let compound = a.op.is_some();
                if compound {
                    reads.push(a.dst);
                }
                self.write(a.id, a.dst, !compound, &reads, &mut l);
            }
            Stmt::Store(st) if emitted(&st.arr) => {
                self.add(&mut l, &st.value.reads());
                self.add(&mut l, &st.index.reads);
            }
            Stmt::Push(p) if emitted(&p.arr) => self.add(&mut l, &p.value.reads()),
            Stmt::ArrayDef(d) if emitted(&d.dst) => self.add(&mut l, &d.init.reads),
            Stmt::Reduce(r) if emitted(&r.dst) => self.add(&mut l, &[r.arr]),
            Stmt::Call(c) if emitted(&c.dst) => {
                for a in &c.args {
                    self.add(&mut l, &a.value.reads);
                }
            }
            Stmt::Verbatim(_, reads) => self.add(&mut l, reads),
            Stmt::Exit(exit) => l.extend(match exit {
                Exit::Break => &t.after_loop,
                Exit::Continue => &t.loop_head,
                Exit::Return => &t.end,
            }),
            Stmt::If(i) => {
                let then = self.block(&i.then, l.clone(), t);
                let els = self.block(&i.els, l, t);
                l = then.union(&els).copied().collect();
                self.add(&mut l, &i.cond.reads);
            }
            Stmt::Loop(lp) => {
                let header: &[VarId] = match &lp.kind {
                    LoopKind::For { iter, .. } => &iter.reads,
                    LoopKind::While { cond } => &cond.reads,
                    LoopKind::Infinite => &[],
                };
                // The body may run no time, or again after any pass.
                let mut head = l.clone();
                self.add(&mut head, header);
                loop {
                    let inner = Targets {
                        end: t.end.clone(),
                        after_loop: l.clone(),
                        loop_head: head.clone(),
                    };
                    let body = self.block(&lp.body, head.clone(), &inner);
                    let before = head.len();
                    head.extend(body);
                    if head.len() == before {
                        break;
                    }
                }
                l = head;
            }
            _ => {}
        }
        l
    }
}
