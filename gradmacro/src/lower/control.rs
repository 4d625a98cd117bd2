//! `if`, `return`, `break` and `continue`: each branch lowered into a block
//! of its own, and what is definitely assigned where the paths meet.

use super::{Assigned, Lowerer, Val};
use crate::ir::*;

impl Lowerer<'_> {
    /// Marks the variables that an `if` assigned on one path only.
    fn note_maybe_assigned(&mut self, then: &[Assigned], els: &[Assigned]) {
        for (i, a) in self.assigned.iter().enumerate() {
            let differs = then.get(i) != els.get(i);
            if *a == Assigned::Maybe && differs {
                self.vars[i].maybe_unassigned = true;
            }
        }
    }

    pub(super) fn cond(&mut self, e: &syn::Expr) -> Option<Passive> {
        match self.expr(e) {
            Val::Const(c) => Some(c),
            _ => {
                self.cx.error(
                    e,
                    "a condition must be a `bool` (e.g. `x > 0.0`), not a float",
                );
                None
            }
        }
    }

    pub(super) fn next_site(&mut self) -> SiteId {
        self.sites += 1;
        SiteId(self.sites - 1)
    }

    pub(super) fn if_(&mut self, i: &syn::ExprIf, target: Option<VarId>) {
        let cond = self.cond(&i.cond);
        let site = self.next_site();
        let ctx = Ctx {
            nested: true,
            ..self.ctx
        };
        let before = self.assigned.clone();
        let (then, then_div) = self.construct_block(ctx, |l| l.stmts(&i.then_branch.stmts, target));
        let mut before = before;
        // Variables declared in the `then` branch keep their slots.
        before.resize(self.assigned.len(), Assigned::No);
        let after_then = std::mem::replace(&mut self.assigned, before);
        let (els, els_div) = match &i.else_branch {
            None => (Block::default(), false),
            Some((_, e)) => self.construct_block(ctx, |l| match &**e {
                syn::Expr::If(inner) => l.if_(inner, target),
                syn::Expr::Block(b) => l.stmts(&b.block.stmts, target),
                other => l.expr_stmt(other),
            }),
        };
        let after_else = std::mem::take(&mut self.assigned);
        self.assigned = join(&after_then, then_div, &after_else, els_div);
        self.note_maybe_assigned(&after_then, &after_else);
        self.diverged |= then_div && els_div;
        if let Some(cond) = cond {
            self.cur.push(Stmt::If(If {
                site,
                cond,
                then,
                els,
                ctx: self.ctx,
            }));
        }
    }

    pub(super) fn return_(&mut self, r: &syn::ExprReturn) {
        let (Some(e), Some(out)) = (&r.expr, self.out) else {
            self.cx
                .error(r, "`return` needs a value: `return <f64 expression>;`");
            return;
        };
        // The path that writes `out` here leaves the function: later code
        // never sees this write.
        let before = self.assigned[out.0];
        self.assign_expr(out, e);
        self.assigned[out.0] = before;
        self.cur.push(Stmt::Exit(Exit::Return));
        self.diverged = true;
    }

    pub(super) fn exit(
        &mut self,
        label: Option<&syn::Lifetime>,
        has_value: bool,
        kind: Exit,
        e: &syn::Expr,
    ) {
        if let Some(label) = label {
            self.cx.error(label, "labelled `break`/`continue` are not supported: use a `bool` flag checked by the outer loop");
            return;
        }
        if has_value {
            self.cx.error(e, "`break` with a value is not supported: assign the value to a variable declared before the loop, then `break`");
            return;
        }
        if self.loop_depth == 0 {
            self.cx.error(e, "`break`/`continue` outside of a loop");
            return;
        }
        self.cur.push(Stmt::Exit(kind));
        self.diverged = true;
    }
}

fn join(a: &[Assigned], a_div: bool, b: &[Assigned], b_div: bool) -> Vec<Assigned> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let x = a.get(i).copied().unwrap_or(Assigned::No);
            let y = b.get(i).copied().unwrap_or(Assigned::No);
            match (a_div, b_div) {
                (true, false) => y,
                (false, true) => x,
                _ if x == y => x,
                _ => Assigned::Maybe,
            }
        })
        .collect()
}
