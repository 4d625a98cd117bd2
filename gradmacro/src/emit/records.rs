//! What the forward sweep records for the reverse sweep, and where it keeps it.
//! A value recorded at most once per call lives in a variable; one recorded
//! inside a loop goes on a tape (a `Vec` used as a stack). Loop-free code
//! therefore allocates nothing.

use crate::ir::{Ctx, SiteId, VarId};
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
pub type WriteKey = usize;

#[derive(Default)]
pub struct Records {
    pub branch: HashMap<SiteId, Slot>,
    pub count: HashMap<SiteId, Slot>,
    pub exit: HashMap<SiteId, Slot>,
    /// Old values saved once, per write statement; `true` for a whole array.
    pub saves: HashMap<WriteKey, (Slot, VarId, bool)>,
    /// Tapes of old values (or elements), per variable.
    pub tapes: HashMap<VarId, Ident>,
    /// Tapes of whole arrays re-created in a loop, per variable.
    pub array_tapes: HashMap<VarId, Ident>,
    /// Buffers lent to callees for shares nobody needs, grown as needed.
    pub scratch: Vec<Ident>,
}
