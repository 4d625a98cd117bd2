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

/// The function's last loop, a `for` loop, if its reverse can run inside
/// it: it sums one value `s` (`s += ..`, `s -= ..`, nothing else writing or
/// reading `s` in it), which the function returns or which the statements
/// after the loop turn into the value by steps whose reverses read nothing
/// the loop or they compute (`a * n + s`, `s / n`: `d_s` is known before
/// the loop); every iteration records nothing (values computed again,
/// conditions evaluated again, ranges run again), leaves by no `break`,
/// `continue` or `return`, calls nothing, writes no array, and adds only into
/// the adjoints of what it declares itself, of top-level values and of
/// `direct`, the caller's gradient slots.
pub fn fused_loop(f: &Func, a: &Analysis, direct: &HashSet<VarId>) -> Option<StmtId> {
    let at = f
        .body
        .stmts
        .iter()
        .rposition(|s| matches!(s, Stmt::Loop(_)))?;
    let Stmt::Loop(l) = &f.body.stmts[at] else {
        return None;
    };
    if f.has_return {
        return None;
    }
    let mut sums = Vec::new();
    crate::analysis::walk(&l.body, &mut |s| {
        if let Stmt::Step(st) = s {
            if f.var(st.dst).decl.loop_depth == 0 && !sums.contains(&st.dst) {
                sums.push(st.dst);
            }
        }
    });
    let [sum] = sums[..] else { return None };
    let top = f.var(sum).decl.loop_depth == 0 && !f.is_param(sum);
    if !top || !a.adj[sum.0] {
        return None;
    }
    let check = Check { f, a, direct, sum };
    let after = &f.body.stmts[at + 1..];
    let tail_ok = if after.is_empty() {
        sum == f.output
    } else {
        check.after(after)
    };
    (tail_ok && check.loop_ok(l) && check.block(&l.body) && check.sums(&l.body)).then_some(l.id)
}

struct Check<'a> {
    f: &'a Func,
    a: &'a Analysis,
    direct: &'a HashSet<VarId>,
    sum: VarId,
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

    /// A value of the top level (not a parameter): its adjoint is declared
    /// before the loop, and read by the reverse of what precedes the loop only
    /// after it.
    fn top(&self, v: VarId) -> bool {
        self.f.var(v).decl.loop_depth == 0 && !self.f.is_param(v)
    }

    fn block(&self, b: &Block) -> bool {
        b.stmts.iter().all(|s| self.stmt(s))
    }

    fn stmt(&self, s: &Stmt) -> bool {
        let (f, a) = (self.f, self.a);
        match s {
            Stmt::Step(st) => {
                let sum = st.dst == self.sum;
                (sum || self.inner(st.dst))
                    && !a.saves_at(f, st.dst, st.write, st.id)
                    && st.args.iter().enumerate().all(|(i, arg)| {
                        let reads_sum = arg.var() == Some(self.sum);
                        match arg.var() {
                            _ if reads_sum => sum && i == 0,
                            Some(v) if a.adj[v.0] => {
                                self.inner(v) || self.direct.contains(&v) || self.top(v)
                            }
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
    /// stays what it was before the loop.
    fn sums(&self, b: &Block) -> bool {
        let mut ok = true;
        crate::analysis::walk(b, &mut |s| {
            if let Stmt::Step(st) = s {
                if st.dst == self.sum {
                    ok &= matches!(st.prim, Prim::Add | Prim::Sub)
                        && matches!(st.args.first(), Some(Operand::Var(v)) if *v == self.sum);
                }
            }
        });
        ok
    }

    /// The statements after the loop, whose reverses run before it: steps
    /// (and passive statements) whose partials read only constants and
    /// values that neither the loop nor they compute, and whose adjoints go
    /// to top-level values or gradient slots.
    fn after(&self, stmts: &[Stmt]) -> bool {
        let (f, a) = (self.f, self.a);
        let mut late = vec![self.sum];
        for s in stmts {
            match s {
                Stmt::Assign(pa) => late.push(pa.dst),
                Stmt::Declare(v) => late.push(*v),
                Stmt::Verbatim(..) => {}
                Stmt::Step(st) => {
                    if f.var(st.dst).decl.loop_depth != 0 || a.saves_at(f, st.dst, st.write, st.id)
                    {
                        return false;
                    }
                    let early =
                        |r: &[VarId]| r.iter().all(|v| !late.contains(v) && !a.recomputed[v.0]);
                    for (arg, pu) in st.args.iter().zip(crate::analysis::partial_uses(st.prim)) {
                        let Some(v) = arg.var().filter(|v| pu.nonzero && a.adj[v.0]) else {
                            continue;
                        };
                        let param = f.is_param(v);
                        let read = pu.args.iter().all(|&j| early(&st.args[j].reads()));
                        let index = match arg {
                            Operand::Elem(_, i) => early(&i.reads),
                            _ => true,
                        };
                        if pu.out || !read || !index || (param && !self.direct.contains(&v)) {
                            return false;
                        }
                    }
                    late.push(st.dst);
                }
                _ => return false,
            }
        }
        true
    }
}
