//! What the reverse sweep rebuilds instead of reading from a record: `for`
//! loops run backwards over their own range, loop-body values and `if`
//! conditions computed again from inputs that cannot have changed.

use super::exits::{exits, ExitSites};
use super::lengths::{fixed_lengths, only_length};
use super::{walk, written};
use crate::ir::*;
use proc_macro2::{TokenStream, TokenTree};
use std::collections::HashSet;

/// Finds the `for` loops whose reverse can run their range backwards: no
/// `break` or `return` leaves them, and every variable their range reads is
/// written once outside all loops, is the binding of an enclosing loop that
/// the reverse sweep rebuilds too, or is an array whose length cannot change,
/// read only for it. `bound` holds those enclosing bindings.
pub(super) fn reversible_loops(
    f: &Func,
    b: &Block,
    bound: &mut Vec<VarId>,
    out: &mut HashSet<SiteId>,
) {
    let mut sites = ExitSites::default();
    let _ = exits(b, &mut sites);
    let lengths = fixed_lengths(f);
    reversible_loops_in(f, b, (&sites.breaking, &lengths), bound, out);
}

fn reversible_loops_in(
    f: &Func,
    b: &Block,
    (breaking, lengths): (&HashSet<SiteId>, &[bool]),
    bound: &mut Vec<VarId>,
    out: &mut HashSet<SiteId>,
) {
    for s in &b.stmts {
        match s {
            Stmt::If(i) => {
                reversible_loops_in(f, &i.then, (breaking, lengths), bound, out);
                reversible_loops_in(f, &i.els, (breaking, lengths), bound, out);
            }
            Stmt::Loop(l) => {
                let mut pushed = false;
                if let LoopKind::For {
                    reversed: Some(r),
                    binding,
                    replay,
                    ..
                } = &l.kind
                {
                    let fixed = |v: &VarId| {
                        bound.contains(v)
                            || (!f.var(*v).reassigned && f.var(*v).decl.loop_depth == 0)
                            || lengths[v.0] && only_length(&r.tokens, &f.var(*v).ident)
                    };
                    if !breaking.contains(&l.site) && r.reads.iter().all(fixed) {
                        out.insert(l.site);
                    }
                    if let (Some(v), true) = (binding, out.contains(&l.site) || replay.is_some()) {
                        bound.push(*v);
                        pushed = true;
                    }
                }
                reversible_loops_in(f, &l.body, (breaking, lengths), bound, out);
                if pushed {
                    bound.pop();
                }
            }
            _ => {}
        }
    }
}

/// Marks the loop-body values the reverse sweep can compute again rather than
/// record: written once, by a step reached on every run of its block (no
/// earlier statement of the block can leave it, so recomputing cannot fail
/// where the forward sweep did not run), from inputs that cannot have changed
/// since: parameters and top-level values never reassigned, rebuilt loop
/// bindings, and other recomputed values. `t = 1.0 - x[i]` costs a subtraction
/// backwards instead of a push and a pop.
///
/// Returns whether `b` holds an exit that leaves it, outside a loop and
/// inside one ([`Leaves`]), gathered on the way: asking `escapes` of every
/// statement would walk each nested construct again at every level of
/// nesting.
pub(super) fn recomputable(
    f: &Func,
    b: &Block,
    replayed: &[bool],
    deferred: &[bool],
    out: &mut Vec<bool>,
) -> Leaves {
    let mut left = false;
    let mut leaves = Leaves::default();
    // Variables this block declares with `let v;`, to be assigned later.
    let mut declared_here = Vec::new();
    for s in &b.stmts {
        // Whether `s` may leave `b` early (`escapes`), and what it leaves.
        let (escapes, inner) = match s {
            Stmt::Declare(v) => {
                declared_here.push(*v);
                (false, Leaves::default())
            }
            Stmt::If(i) => {
                let then = recomputable(f, &i.then, replayed, deferred, out);
                let els = recomputable(f, &i.els, replayed, deferred, out);
                if !left {
                    for v in chosen(f, i, &declared_here, replayed, out) {
                        out[v.0] = true;
                    }
                }
                let inner = Leaves {
                    block: then.block || els.block,
                    loop_body: then.loop_body || els.loop_body,
                };
                (inner.block, inner)
            }
            Stmt::Loop(l) => {
                let body = recomputable(f, &l.body, replayed, deferred, out);
                // Inside a loop, only `return` leaves it.
                let inner = Leaves {
                    block: body.loop_body,
                    loop_body: body.loop_body,
                };
                (inner.loop_body, inner)
            }
            Stmt::Exit(e) => {
                let ret = matches!(e, Exit::Return);
                (
                    true,
                    Leaves {
                        block: true,
                        loop_body: ret,
                    },
                )
            }
            // A passive value made afresh each iteration from values that
            // cannot have changed (`let i = 4 * j;`): an index the reverse
            // sweep computes again rather than records.
            Stmt::Assign(pa) => {
                let v = f.var(pa.dst);
                if !left
                    && pa.op.is_none()
                    && !deferred[pa.dst.0]
                    && pa.write == Write::Def
                    && !v.reassigned
                    && v.decl.loop_depth > 0
                    && !v.shape.is_array()
                    && pa
                        .value
                        .reads
                        .iter()
                        .all(|u| unchanged(f, replayed, out, *u))
                    && pure(&pa.value.tokens)
                {
                    out[pa.dst.0] = true;
                }
                (false, Leaves::default())
            }
            Stmt::Step(st) => {
                let v = f.var(st.dst);
                let inputs = st.args.iter().all(|a| {
                    a.reads()
                        .into_iter()
                        .all(|u| unchanged(f, replayed, out, u))
                });
                if !left
                    && !deferred[st.dst.0]
                    && st.write == Write::Def
                    && !v.reassigned
                    && v.decl.loop_depth > 0
                    && !v.shape.is_array()
                    && inputs
                {
                    out[st.dst.0] = true;
                }
                (false, Leaves::default())
            }
            _ => (false, Leaves::default()),
        };
        left |= escapes;
        leaves.block |= inner.block;
        leaves.loop_body |= inner.loop_body;
    }
    leaves
}

/// `let prev; if i > 0 { prev = x[i - 1]; } else { prev = 0.0; }` in a
/// loop: the variables an `if` chooses the value of, which the reverse sweep
/// can choose again. Its condition can be evaluated again (see
/// `conditions_to_recompute`); each branch is nothing but one write of each
/// of the same variables, declared by `let v;` in the enclosing block, from
/// inputs that cannot have changed.
fn chosen(
    f: &Func,
    i: &If,
    declared_here: &[VarId],
    replayed: &[bool],
    out: &[bool],
) -> Vec<VarId> {
    let fixed = |u: &VarId| unchanged(f, replayed, out, *u);
    if i.ctx.loop_depth == 0 || !i.cond.reads.iter().all(fixed) || !pure(&i.cond.tokens) {
        return Vec::new();
    }
    let writes = |b: &Block| -> Option<Vec<VarId>> {
        let mut vs = Vec::new();
        for s in &b.stmts {
            let (dst, ok) = match s {
                Stmt::Step(st) => (st.dst, st.args.iter().all(|a| a.reads().iter().all(fixed))),
                Stmt::Assign(pa) => (
                    pa.dst,
                    pa.op.is_none() && pa.value.reads.iter().all(fixed) && pure(&pa.value.tokens),
                ),
                _ => return None,
            };
            let var = f.var(dst);
            if !ok || vs.contains(&dst) || !declared_here.contains(&dst) || var.shape.is_array() {
                return None;
            }
            vs.push(dst);
        }
        vs.sort_by_key(|v| v.0);
        Some(vs)
    };
    let (Some(then), Some(els)) = (writes(&i.then), writes(&i.els)) else {
        return Vec::new();
    };
    // Written nowhere else: what the reverse sweep chooses is the value.
    let mut elsewhere = 0;
    walk(&f.body, &mut |s| {
        elsewhere += written(s).filter(|v| then.contains(v)).map_or(0, |_| 1);
    });
    if then != els || elsewhere != 2 * then.len() {
        return Vec::new();
    }
    then
}

/// Whether the reverse sweep reads `u` with the value the forward sweep read:
/// it can compute it again (`recomputable`), or it is a parameter, a value
/// defined before any loop and never reassigned, or a replayed loop index.
fn unchanged(f: &Func, replayed: &[bool], recomputable: &[bool], u: VarId) -> bool {
    let var = f.var(u);
    let param = f.is_param(u);
    recomputable[u.0]
        || !var.reassigned && (param || replayed[u.0] || var.decl.loop_depth == 0 && !f.has_return)
}

/// The `if`s inside loops whose condition can be evaluated again by the
/// reverse sweep: every value it reads is a parameter, a value defined before
/// any loop and never reassigned, a replayed loop index, or a value the
/// reverse sweep can compute again (`candidates`); and it calls nothing that
/// could have an effect or give another answer the second time.
pub(super) fn conditions_to_recompute(
    f: &Func,
    replayed: &[bool],
    candidates: &[bool],
) -> HashSet<SiteId> {
    let fixed = |u: &VarId| unchanged(f, replayed, candidates, *u);
    let mut sites = HashSet::new();
    walk(&f.body, &mut |s| {
        if let Stmt::If(i) = s {
            if i.ctx.loop_depth > 0 && i.cond.reads.iter().all(fixed) && pure(&i.cond.tokens) {
                sites.insert(i.site);
            }
        }
    });
    sites
}

/// Code that calls no function, macro or closure, and no method but the float
/// methods and `len`: evaluating it again gives the same answer.
fn pure(tokens: &TokenStream) -> bool {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let before = |k: usize, back: usize| k.checked_sub(back).map(|j| &trees[j]);
    let punct =
        |t: Option<&TokenTree>, c: char| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == c);
    trees.iter().enumerate().all(|(k, t)| match t {
        TokenTree::Group(g) => {
            let call = g.delimiter() == proc_macro2::Delimiter::Parenthesis;
            let allowed = match (before(k, 2), before(k, 1)) {
                // `v.sin()`, `v.len()`: a method call.
                (Some(dot), Some(TokenTree::Ident(name))) if call && punct(Some(dot), '.') => {
                    let name = name.to_string();
                    name == "len" || crate::rules::Prim::from_method(&name).is_some()
                }
                // `f(..)`: a function call; `m!(..)`: a macro.
                (_, Some(TokenTree::Ident(_))) if call => false,
                (Some(TokenTree::Ident(_)), Some(bang)) if punct(Some(bang), '!') => false,
                _ => true,
            };
            allowed && pure(&g.stream())
        }
        // A lone `|` opens a closure (or is a bitwise or: treated alike).
        TokenTree::Punct(p) if p.as_char() == '|' => {
            punct(trees.get(k + 1), '|') || punct(before(k, 1), '|')
        }
        _ => true,
    })
}

/// Whether a block contains an exit that leaves it: `block` for a block
/// outside any loop, `loop_body` for a loop's body (where only `return`
/// leaves).
#[derive(Clone, Copy, Default)]
pub(super) struct Leaves {
    block: bool,
    loop_body: bool,
}

/// Whether the reverse sweep may do anything for a block: pass on an
/// adjoint, restore or compute again a value it reads, or call a pullback.
/// Errs towards `true`: a branch replayed whose condition the forward sweep
/// did not compute would not compile.
pub(super) fn has_reverse(b: &Block, adj: &[bool], needed: &[bool], recomputed: &[bool]) -> bool {
    let matters = |v: &VarId| adj[v.0] || needed[v.0] || recomputed[v.0];
    let mut any = false;
    walk(b, &mut |s| {
        any |= match s {
            Stmt::Call(_) | Stmt::Exit(_) => true,
            Stmt::Store(st) => matters(&st.arr),
            Stmt::Push(p) => matters(&p.arr),
            Stmt::ArrayDef(d) => matters(&d.dst),
            Stmt::Loop(Loop {
                kind: LoopKind::For {
                    binding: Some(v), ..
                },
                ..
            }) => matters(v),
            s => written(s).is_some_and(|v| matters(&v)),
        };
    });
    any
}
