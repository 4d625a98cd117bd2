//! Data-flow facts both sweeps need: which adjoints carry anything, which
//! primal values the reverse sweep reads, which forward steps are live, and
//! which writes must record the value they destroy.

use crate::ir::*;
use crate::rules::{Partial, Prim};
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

/// What one partial derivative of a primitive needs.
pub struct PartialUse {
    pub nonzero: bool,
    /// Operand positions whose values it reads.
    pub args: Vec<usize>,
    /// It reads the primitive's output.
    pub out: bool,
}

/// Reads the rules table with placeholder operands to learn what each partial
/// uses, so no second table of "what reads what" exists.
pub fn partial_uses(prim: Prim) -> Vec<PartialUse> {
    let args: Vec<TokenStream> = (0..prim.arity())
        .map(|i| {
            let id = Ident::new(&format!("__gm_a{i}"), Span::call_site());
            quote!(#id)
        })
        .collect();
    let out = quote!(__gm_y);
    prim.partials(&args, &out, &quote!(f64))
        .into_iter()
        .map(|p| {
            let ts = match &p {
                Partial::Zero | Partial::Unit { .. } => TokenStream::new(),
                Partial::Times { expr, .. } | Partial::Over { expr, .. } => expr.clone(),
                Partial::When { cond } => cond.clone(),
            };
            let mut names = Vec::new();
            idents(ts, &mut names);
            PartialUse {
                nonzero: !matches!(p, Partial::Zero),
                args: (0..prim.arity())
                    .filter(|i| names.contains(&format!("__gm_a{i}")))
                    .collect(),
                out: names.iter().any(|n| n == "__gm_y"),
            }
        })
        .collect()
}

fn idents(ts: TokenStream, out: &mut Vec<String>) {
    for tt in ts {
        match tt {
            proc_macro2::TokenTree::Ident(i) => out.push(i.to_string()),
            proc_macro2::TokenTree::Group(g) => idents(g.stream(), out),
            _ => {}
        }
    }
}

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
    /// The variable's adjoint can be nonzero and reaches a gradient entry.
    pub adj: Vec<bool>,
    /// The reverse sweep reads the variable's primal value.
    pub needed: Vec<bool>,
    /// Declared inside a construct but read by the reverse sweep: declared at
    /// the top of the function instead.
    pub hoisted: Vec<bool>,
    /// The forward sweep must compute the variable (in `f_grad` / `f_adjoint`).
    pub live_grad: Vec<bool>,
    pub live_adjoint: Vec<bool>,
    /// Declared by a `let v;` statement (rather than by its first write).
    pub declared: Vec<bool>,
    /// Some write of the variable records the old value.
    pub restored: Vec<bool>,
    /// Number of steps writing the variable whose reverse reads its adjoint.
    writers: Vec<usize>,
}

impl Analysis {
    /// Whether the write of `dst` in this context must record the old value.
    pub fn saves(&self, f: &Func, dst: VarId, write: Write) -> bool {
        self.needed[dst.0]
            && (write == Write::Overwrite || f.var(dst).decl.loop_depth > 0)
    }

    /// Whether the reverse of overwriting step `st` must clear the adjoint it
    /// consumed: only if something later in the reverse sweep reads it again.
    pub fn zero_needed(&self, f: &Func, st: &Step) -> bool {
        let own = usize::from(self.contributes(st));
        self.writers[st.dst.0] > own || st.ctx.loop_depth > f.var(st.dst).decl.loop_depth
    }

    fn contributes(&self, st: &Step) -> bool {
        let uses = partial_uses(st.prim);
        st.args.iter().zip(&uses).any(|(a, u)| {
            u.nonzero && matches!(a, Operand::Var(v) if self.adj[v.0])
        })
    }
}

pub fn analyze(f: &Func) -> Analysis {
    let n = f.vars.len();
    let steps: Vec<&Step> = {
        let mut v = Vec::new();
        walk(&f.body, &mut |s| {
            if let Stmt::Step(st) = s {
                v.push(st);
            }
        });
        v
    };
    let uses: Vec<Vec<PartialUse>> = steps.iter().map(|s| partial_uses(s.prim)).collect();

    // Varied: depends on a differentiated parameter.
    let mut varied = vec![false; n];
    for p in f.wrt() {
        varied[p.0] = true;
    }
    fixpoint(|| {
        let mut changed = false;
        for (s, u) in steps.iter().zip(&uses) {
            if varied[s.dst.0] {
                continue;
            }
            let hit = s.args.iter().zip(u).any(|(a, u)| {
                u.nonzero && matches!(a, Operand::Var(v) if varied[v.0])
            });
            if hit {
                varied[s.dst.0] = true;
                changed = true;
            }
        }
        changed
    });
    // Useful: influences the output.
    let mut useful = vec![false; n];
    useful[f.output.0] = true;
    fixpoint(|| {
        let mut changed = false;
        for (s, u) in steps.iter().zip(&uses) {
            if !useful[s.dst.0] {
                continue;
            }
            for (a, u) in s.args.iter().zip(u) {
                if let (Operand::Var(v), true) = (a, u.nonzero) {
                    if !useful[v.0] {
                        useful[v.0] = true;
                        changed = true;
                    }
                }
            }
        }
        changed
    });
    let adj: Vec<bool> = (0..n).map(|i| varied[i] && useful[i]).collect();

    let mut needed = vec![false; n];
    for (s, u) in steps.iter().zip(&uses) {
        if !adj[s.dst.0] {
            continue;
        }
        for (a, pu) in s.args.iter().zip(u) {
            let contributes = pu.nonzero && matches!(a, Operand::Var(v) if adj[v.0]);
            if !contributes {
                continue;
            }
            for &j in &pu.args {
                match &s.args[j] {
                    Operand::Var(v) => needed[v.0] = true,
                    Operand::Const(c) => c.reads.iter().for_each(|v| needed[v.0] = true),
                }
            }
            if pu.out {
                needed[s.dst.0] = true;
            }
        }
    }
    let hoisted: Vec<bool> = (0..n)
        .map(|i| needed[i] && f.vars[i].decl.nested && VarId(i) != f.output)
        .collect();
    let live_grad = liveness(f, &needed, true);
    let live_adjoint = liveness(f, &needed, false);
    let mut declared = vec![false; n];
    walk(&f.body, &mut |s| {
        if let Stmt::Declare(v) = s {
            declared[v.0] = true;
        }
    });
    let mut a = Analysis {
        adj,
        needed,
        hoisted,
        live_grad,
        live_adjoint,
        declared,
        restored: vec![false; n],
        writers: vec![0; n],
    };
    let mut restored = vec![false; n];
    let mut writers = vec![0; n];
    walk(&f.body, &mut |s| match s {
        Stmt::Step(st) => {
            restored[st.dst.0] |= a.saves(f, st.dst, st.write);
            writers[st.dst.0] += usize::from(a.contributes(st));
        }
        Stmt::Assign(p) => restored[p.dst.0] |= a.saves(f, p.dst, p.write),
        Stmt::Loop(Loop { kind: LoopKind::For { binding: Some(v), .. }, .. }) => {
            restored[v.0] |= a.saves(f, *v, Write::Def)
        }
        _ => {}
    });
    a.restored = restored;
    a.writers = writers;
    a
}

fn fixpoint(mut step: impl FnMut() -> bool) {
    while step() {}
}

/// Variables the forward sweep must compute: read by control flow, by passive
/// statements, by the reverse sweep, or (for `f_grad`) returned.
fn liveness(f: &Func, needed: &[bool], with_output: bool) -> Vec<bool> {
    let mut live = needed.to_vec();
    if with_output {
        live[f.output.0] = true;
    }
    let mark = |live: &mut Vec<bool>, vs: &[VarId]| vs.iter().for_each(|v| live[v.0] = true);
    walk(&f.body, &mut |s| match s {
        Stmt::If(i) => mark(&mut live, &i.cond.reads),
        Stmt::Loop(l) => match &l.kind {
            LoopKind::For { iter, .. } => mark(&mut live, &iter.reads),
            LoopKind::While { cond } => mark(&mut live, &cond.reads),
            LoopKind::Infinite => {}
        },
        Stmt::Verbatim(_, reads) => mark(&mut live, reads),
        _ => {}
    });
    fixpoint(|| {
        let mut changed = false;
        walk(&f.body, &mut |s| {
            let (dst, reads): (VarId, Vec<VarId>) = match s {
                Stmt::Step(st) => (
                    st.dst,
                    st.args
                        .iter()
                        .flat_map(|a| match a {
                            Operand::Var(v) => vec![*v],
                            Operand::Const(c) => c.reads.clone(),
                        })
                        .collect(),
                ),
                Stmt::Assign(a) => (a.dst, a.value.reads.clone()),
                _ => return,
            };
            if live[dst.0] {
                for v in reads {
                    if !live[v.0] {
                        live[v.0] = true;
                        changed = true;
                    }
                }
            }
        });
        changed
    });
    live
}
