//! Activity as data flow: which statements carry a value from their operands
//! to what they write (so which adjoints can be nonzero and reach a gradient
//! entry), and when the reverse sweep must clear an adjoint it consumed.

use super::{partial_uses, walk, Analysis};
use crate::ir::*;

/// A statement seen as data flow: `dst` gets a value from `srcs` (operands
/// whose partial is nonzero). Control flow and passive code are not flows.
pub(super) struct Flow {
    pub(super) dst: VarId,
    pub(super) srcs: Vec<VarId>,
}

pub(super) fn flows(f: &Func) -> Vec<Flow> {
    let mut out = Vec::new();
    walk(&f.body, &mut |s| match s {
        Stmt::Step(st) => {
            let uses = partial_uses(st.prim);
            let srcs = st
                .args
                .iter()
                .zip(&uses)
                .filter(|(_, u)| u.nonzero)
                .filter_map(|(a, _)| a.var())
                .collect();
            out.push(Flow { dst: st.dst, srcs });
        }
        Stmt::Store(s) => out.push(Flow {
            dst: s.arr,
            srcs: s.value.var().into_iter().collect(),
        }),
        Stmt::Push(p) => out.push(Flow {
            dst: p.arr,
            srcs: p.value.var().into_iter().collect(),
        }),
        Stmt::Reduce(r) => out.push(Flow {
            dst: r.dst,
            srcs: Vec::new(),
        }),
        Stmt::Call(c) => out.push(Flow {
            dst: c.dst,
            srcs: c.args.iter().filter_map(CallArg::target).collect(),
        }),
        _ => {}
    });
    out
}

impl Analysis {
    /// Whether the reverse of overwriting step `st` must clear the adjoint it
    /// consumed: only if something later in the reverse sweep reads it again.
    pub fn zero_needed(&self, f: &Func, st: &Step) -> bool {
        let own = usize::from(self.contributes(st));
        // A parameter's adjoint is read at the end, as its gradient entry.
        let param = f.is_param(st.dst);
        param || self.writers[st.dst.0] > own || st.ctx.loop_depth > f.var(st.dst).decl.loop_depth
    }

    pub(super) fn contributes(&self, st: &Step) -> bool {
        let uses = partial_uses(st.prim);
        st.args
            .iter()
            .zip(&uses)
            .any(|(a, u)| u.nonzero && a.var().is_some_and(|v| self.adj[v.0]))
    }
}
