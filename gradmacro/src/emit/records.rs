//! What the forward sweep records for the reverse sweep, and where it keeps it.
//! A value recorded at most once per call lives in a variable; one recorded
//! inside a loop goes on a tape (a `Vec` used as a stack). Loop-free code
//! therefore allocates nothing.

use crate::analysis::{write_key, Analysis};
use crate::ir::{Block, Ctx, Func, LoopKind, SiteId, Stmt, VarId};
use proc_macro2::Ident;
use std::collections::HashMap;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Keep {
    /// Directly in the function body, before any `return`: a plain `let`.
    Top,
    /// In a branch (or before a `return`), outside loops: a variable declared
    /// before the forward sweep.
    Once,
    /// Inside a loop: a tape, pushed forward and popped in reverse.
    Tape,
}

impl Keep {
    pub fn of(ctx: Ctx) -> Keep {
        if ctx.loop_depth > 0 {
            Keep::Tape
        } else if ctx.nested {
            Keep::Once
        } else {
            Keep::Top
        }
    }
}

#[derive(Clone, Debug)]
pub struct Slot {
    pub ident: Ident,
    pub store: Keep,
    /// For a loop count on a tape: the per-run counter pushed after the loop.
    pub counter: Option<Ident>,
    /// A loop count declared `usize`; otherwise its type is inferred (it must
    /// match the loop binding it replays).
    pub typed: bool,
}

/// Identifies one write statement (its address in the IR, which does not move
/// while a function is emitted).
pub type WriteKey = crate::ir::StmtId;

#[derive(Default)]
pub struct Records {
    pub branch: HashMap<SiteId, Slot>,
    pub count: HashMap<SiteId, Slot>,
    pub exit: HashMap<SiteId, Slot>,
    /// Old values saved once, per write statement; `true` for a whole array.
    pub saves: HashMap<WriteKey, (Slot, VarId, bool)>,
    /// Tapes of old values (or elements), per variable.
    pub tapes: HashMap<VarId, Ident>,
    /// Of those, the ones kept in a fixed array: its length, and the count of
    /// values it holds.
    pub stack: HashMap<VarId, (u64, Ident)>,
    /// Tapes of whole arrays re-created in a loop, per variable.
    pub array_tapes: HashMap<VarId, Ident>,
    /// Buffers lent to callees for shares nobody needs, grown as needed.
    pub scratch: Vec<Ident>,
}

/// Most values a tape kept on the stack may hold: a few KiB per tape.
const STACK_TAPE_MAX: u64 = 256;

/// The tapes of differentiated scalars whose every push runs in `for` loops
/// over literal ranges (`0..20`), with room for all of them: those live in a
/// fixed array on the stack instead of a `Vec`, allocating nothing.
pub fn stack_tapes(f: &Func, a: &Analysis) -> HashMap<VarId, u64> {
    let mut caps: HashMap<VarId, Option<u64>> = HashMap::new();
    count_pushes(f, a, &f.body, Some(1), &mut caps);
    caps.into_iter()
        .filter_map(|(v, cap)| Some((v, cap?)))
        .filter(|&(v, cap)| cap <= STACK_TAPE_MAX && f.is_active(v) && !f.var(v).shape.is_array())
        .collect()
}

/// Adds to `caps` the pushes `block` makes onto each value tape when it runs
/// `trips` times (`None`: not known).
fn count_pushes(
    f: &Func,
    a: &Analysis,
    block: &Block,
    trips: Option<u64>,
    caps: &mut HashMap<VarId, Option<u64>>,
) {
    for s in &block.stmts {
        let write = match s {
            Stmt::Step(st) => Some((st.dst, st.write, st.ctx)),
            Stmt::Assign(p) => Some((p.dst, p.write, p.ctx)),
            Stmt::Reduce(r) => Some((r.dst, r.write, r.ctx)),
            Stmt::Call(c) => Some((c.dst, c.write, c.ctx)),
            _ => None,
        };
        if let Some((dst, w, ctx)) = write {
            if Keep::of(ctx) == Keep::Tape && a.saves_at(f, dst, w, write_key(s)) {
                let cap = caps.entry(dst).or_insert(Some(0));
                *cap = cap.zip(trips).map(|(c, t)| c + t);
            }
        }
        match s {
            Stmt::If(i) => {
                count_pushes(f, a, &i.then, trips, caps);
                count_pushes(f, a, &i.els, trips, caps);
            }
            Stmt::Loop(l) => {
                let inner = match &l.kind {
                    LoopKind::For { trips, .. } => *trips,
                    _ => None,
                };
                let trips = trips.zip(inner).map(|(t, n)| t.saturating_mul(n));
                count_pushes(f, a, &l.body, trips, caps);
            }
            _ => {}
        }
    }
}
