//! Which writes must record the value they destroy, so the reverse sweep can
//! put it back: only those whose old value it reads, and not the ones whose
//! old value nothing reads before the next write, or that an integer update
//! run backwards undoes.

use super::reads::reverse_reads;
use super::{walk, write_key, written, Analysis};
use crate::ir::*;
use std::collections::{HashMap, HashSet};

impl Analysis {
    /// Whether the write statement `key` (see [`write_key`]) of `dst` must
    /// record the value it destroys.
    pub fn saves_at(&self, f: &Func, dst: VarId, write: Write, key: StmtId) -> bool {
        self.saves(f, dst, write)
            && !self.unneeded.contains(&key)
            && !self.inverted.contains_key(&key)
    }

    /// Whether a write of `dst` of this kind must record the value it destroys.
    pub fn saves(&self, f: &Func, dst: VarId, write: Write) -> bool {
        self.needed[dst.0]
            && !self.replayed[dst.0]
            && !self.recomputed[dst.0]
            && (write == Write::Overwrite || f.var(dst).decl.loop_depth > 0)
    }

    /// Whether re-creating the array `dst` must record the old array (moved,
    /// not copied): the reverse sweep sizes its adjoint from it, or reads it.
    /// Re-creating an array with an adjoint sizes that adjoint afresh from
    /// the old array: the new array's length may differ, and its adjoints,
    /// already passed on, must not reach the old elements.
    pub fn saves_array(&self, f: &Func, dst: VarId, write: Write) -> bool {
        let resized = write == Write::Overwrite && self.adj[dst.0];
        (self.needed[dst.0] || self.scoped[dst.0] || resized)
            && (write == Write::Overwrite || f.var(dst).decl.loop_depth > 0)
    }

    /// Whether the reverse of re-creating `dst` starts the old array's
    /// adjoint afresh (see `saves_array`).
    pub fn resets_adjoint(&self, dst: VarId, write: Write) -> bool {
        write == Write::Overwrite && self.adj[dst.0]
    }

    /// Whether a store must record the element it overwrites.
    pub fn saves_element(&self, st: &Store) -> bool {
        self.needed[st.arr.0] && self.saved_stores.contains(&st.id)
    }
}

/// The recorded writes `v += c` / `v -= c` with `c` an integer literal (so `v`
/// is an integer, and the update exact), of variables whose every other
/// write is an assignment recorded too, or its first definition outside
/// loops: the reverse sweep then reaches each such write with `v` as the write
/// left it, and `v -= c` puts back what `v` held before, as a tape would.
pub(super) fn invertible(f: &Func, a: &Analysis) -> HashMap<StmtId, &'static str> {
    let mut others_recorded = vec![true; f.vars.len()];
    let mut candidates = Vec::new();
    walk(&f.body, &mut |s| match s {
        Stmt::Assign(p) => {
            let first = p.write == Write::Def && f.var(p.dst).decl.loop_depth == 0;
            if a.saves_at(f, p.dst, p.write, p.id) {
                if let Some(inverse) = int_increment(p) {
                    candidates.push((p.id, p.dst, inverse));
                }
            } else if !first {
                others_recorded[p.dst.0] = false;
            }
        }
        Stmt::Loop(Loop {
            kind: LoopKind::For {
                binding: Some(v), ..
            },
            ..
        }) => others_recorded[v.0] = false,
        _ => {
            if let Some(v) = written(s) {
                others_recorded[v.0] = false;
            }
        }
    });
    candidates
        .into_iter()
        .filter(|(_, v, _)| others_recorded[v.0])
        .map(|(id, _, inverse)| (id, inverse))
        .collect()
}

/// For `v += c` / `v -= c` with `c` an integer literal: the inverse operator.
pub fn int_increment(p: &PassiveAssign) -> Option<&'static str> {
    let inverse = match p.op.as_ref()?.to_string().as_str() {
        "+=" => "-=",
        "-=" => "+=",
        _ => return None,
    };
    let mut tokens = p.value.tokens.clone().into_iter();
    let (Some(proc_macro2::TokenTree::Literal(l)), None) = (tokens.next(), tokens.next()) else {
        return None;
    };
    let text = l.to_string();
    let suffix = text.trim_start_matches(|c: char| c.is_ascii_digit() || c == '_');
    let integer = text.starts_with(|c: char| c.is_ascii_digit())
        && (suffix.is_empty() || crate::signature::INTEGERS.contains(&suffix));
    integer.then_some(inverse)
}

/// Overwrites whose old value nothing reads. Within one block, when `v` is
/// written at `p` and overwritten at `w` with nothing in between reading `v`
/// backwards, `p`'s own reverse not reading its output, and `w` not reading
/// the old `v` itself, the value `w` destroys is never needed: `s *= x;
/// s += 1.0;` records `s` once per iteration, not twice. Returns what the
/// block does, nested statements included, for the construct holding it.
pub(super) fn unneeded_saves(b: &Block, adj: &[bool], out: &mut HashSet<StmtId>) -> Effects {
    let mut last: HashMap<VarId, (bool, bool)> = HashMap::new(); // var -> (prev reads out, read since)
    let mut effects = Effects::default();
    for s in &b.stmts {
        let mut inner = match s {
            Stmt::If(i) => {
                unneeded_saves(&i.then, adj, out).merge(unneeded_saves(&i.els, adj, out))
            }
            Stmt::Loop(l) => unneeded_saves(&l.body, adj, out),
            _ => {
                let (reads, reads_out) = reverse_reads(s, adj);
                for v in &reads {
                    if let Some(entry) = last.get_mut(v) {
                        entry.1 = true;
                    }
                }
                if let Some(v) = written(s) {
                    if let Some(&(prev_out, read_since)) = last.get(&v) {
                        if !prev_out && !read_since && !reads.contains(&v) {
                            out.insert(write_key(s));
                        }
                    }
                    last.insert(v, (reads_out, false));
                    if reads_out {
                        effects.reads.insert(v);
                    }
                    effects.writes.entry(v).or_default().push(write_key(s));
                }
                effects.reads.extend(reads);
                continue;
            }
        };
        let kept = unread_inside(&mut inner, &last, out);
        last.clear();
        last.extend(kept);
        effects = effects.merge(inner);
    }
    effects
}

/// What a block does backwards, nested statements included: the variables
/// the reverse sweep reads there, and the writes of each variable whose old
/// value is not yet known to be unread. Summed from the innermost blocks
/// out, smaller into larger, so each statement is looked at once.
#[derive(Default)]
pub(super) struct Effects {
    reads: HashSet<VarId>,
    writes: HashMap<VarId, Vec<StmtId>>,
}

impl Effects {
    fn merge(mut self, mut other: Effects) -> Effects {
        if self.reads.len() < other.reads.len() {
            std::mem::swap(&mut self.reads, &mut other.reads);
        }
        self.reads.extend(other.reads);
        if self.writes.len() < other.writes.len() {
            std::mem::swap(&mut self.writes, &mut other.writes);
        }
        for (v, mut keys) in other.writes {
            let mine = self.writes.entry(v).or_default();
            if mine.len() < keys.len() {
                std::mem::swap(mine, &mut keys);
            }
            mine.extend(keys);
        }
        self
    }
}

/// A loop or an `if` (`inner`, what its blocks do) seen as one write of each
/// variable it writes: where nothing in it reads `v` backwards and, in the
/// enclosing block, `v` was written before (`last`, as in
/// [`unneeded_saves`]) with nothing since reading it backwards, what the
/// construct destroys is never read, and its writes of `v` record nothing:
/// `z = b[j]; for k in .. { z += w[k] * x[k]; } a = z.tanh();` records `z`
/// once per `j` (at `z = b[j]`), not once per `k`. Returns, for the block,
/// the variables whose writes count as one whose old value is not read.
fn unread_inside(
    inner: &mut Effects,
    last: &HashMap<VarId, (bool, bool)>,
    out: &mut HashSet<StmtId>,
) -> Vec<(VarId, (bool, bool))> {
    let free = |v: &VarId, reads: &HashSet<VarId>| {
        !reads.contains(v) && matches!(last.get(v), Some(&(false, false)))
    };
    let found: Vec<VarId> = if last.len() <= inner.writes.len() {
        last.keys()
            .filter(|v| inner.writes.contains_key(v) && free(v, &inner.reads))
            .copied()
            .collect()
    } else {
        inner
            .writes
            .keys()
            .filter(|v| free(v, &inner.reads))
            .copied()
            .collect()
    };
    // Once found, a write needs no second look from an enclosing construct.
    for v in &found {
        out.extend(
            inner
                .writes
                .get_mut(v)
                .map(std::mem::take)
                .unwrap_or_default(),
        );
    }
    found.into_iter().map(|v| (v, (false, false))).collect()
}
