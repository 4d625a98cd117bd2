//! One pass instead of two: the reverse of a loop run inside it, each
//! iteration's reverse right after the iteration.
//!
//! `let mut s = 0.0; for i in .. { s += term(x, i); } s` has the adjoint
//! `d_out` for `s` in every iteration before the loop even starts. When the
//! iterations record nothing and add only into their own adjoints and the
//! gradient slots, their reverses can run in any order, so running each as
//! soon as its iteration has is the same sum (in another order) without a
//! second walk over the data: what a hand-written gradient of a sum of terms
//! does.

use crate::analysis::Analysis;
use crate::ir::*;
use crate::rules::Prim;
use std::collections::HashSet;

/// The function's last statement, a `for` loop, if its reverse can run
/// inside it: the function returns what the loop sums (`s += ..`, `s -=
/// ..`, nothing else writing or reading `s` in it), and every iteration
/// records nothing (values computed again, conditions evaluated again,
/// ranges run again), leaves by no `break`, `continue` or `return`, calls
/// nothing, writes no array, and adds only into the adjoints of what it
/// declares itself and into `direct`, the caller's gradient slots.
pub fn fused_loop(f: &Func, a: &Analysis, direct: &HashSet<VarId>) -> Option<StmtId> {
    let Some(Stmt::Loop(l)) = f.body.stmts.last() else {
        return None;
    };
    let out = f.output;
    let declared_at_top = f.var(out).decl.loop_depth == 0;
    if f.has_return || !a.adj[out.0] || !declared_at_top || f.params.iter().any(|p| p.id == out) {
        return None;
    }
    let check = Check { f, a, direct };
    (check.loop_ok(l) && check.block(&l.body) && check.sums(&l.body)).then_some(l.id)
}

struct Check<'a> {
    f: &'a Func,
    a: &'a Analysis,
    direct: &'a HashSet<VarId>,
}

impl Check<'_> {
    /// Run backwards over its own range, its binding recorded nowhere.
    fn loop_ok(&self, l: &Loop) -> bool {
        let LoopKind::For {
            binding,
            reversed: Some(_),
            ..
        } = &l.kind
        else {
            return false;
        };
        let binding_ok =
            binding.is_none_or(|v| !self.a.hoisted[v.0] && !self.a.saves(self.f, v, Write::Def));
        self.a.reversible.contains(&l.site) && binding_ok
    }

    /// Declared inside the loop (the loop is at the top level, so any
    /// variable declared in a loop and written in this one is its own).
    fn inner(&self, v: VarId) -> bool {
        self.f.var(v).decl.loop_depth > 0
    }

    fn block(&self, b: &Block) -> bool {
        b.stmts.iter().all(|s| self.stmt(s))
    }

    fn stmt(&self, s: &Stmt) -> bool {
        let (f, a) = (self.f, self.a);
        match s {
            Stmt::Step(st) => {
                let sum = st.dst == f.output;
                (sum || self.inner(st.dst))
                    && !a.saves_at(f, st.dst, st.write, st.id)
                    && st.args.iter().enumerate().all(|(i, arg)| {
                        let reads_sum = arg.var() == Some(f.output);
                        match arg.var() {
                            _ if reads_sum => sum && i == 0,
                            Some(v) if a.adj[v.0] => self.inner(v) || self.direct.contains(&v),
                            _ => true,
                        }
                    })
            }
            Stmt::Reduce(r) => {
                self.inner(r.dst)
                    && !a.saves_at(f, r.dst, r.write, r.id)
                    && (!a.adj[r.arr.0] || self.direct.contains(&r.arr))
            }
            Stmt::Assign(pa) => self.inner(pa.dst) && !a.saves_at(f, pa.dst, pa.write, pa.id),
            Stmt::Verbatim(..) | Stmt::Declare(_) => true,
            Stmt::If(i) => {
                a.recomputed_cond.contains(&i.site) && self.block(&i.then) && self.block(&i.els)
            }
            Stmt::Loop(l) => self.loop_ok(l) && self.block(&l.body),
            Stmt::Store(_) | Stmt::Push(_) | Stmt::ArrayDef(_) | Stmt::Call(_) | Stmt::Exit(_) => {
                false
            }
        }
    }

    /// Every write of the sum is `s = s + e` or `s = s - e`: its adjoint
    /// stays `d_out`.
    fn sums(&self, b: &Block) -> bool {
        let mut ok = true;
        crate::analysis::walk(b, &mut |s| {
            if let Stmt::Step(st) = s {
                if st.dst == self.f.output {
                    ok &= matches!(st.prim, Prim::Add | Prim::Sub)
                        && matches!(st.args.first(), Some(Operand::Var(v)) if *v == self.f.output);
                }
            }
        });
        ok
    }
}
