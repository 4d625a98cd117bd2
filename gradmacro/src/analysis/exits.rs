//! Where `break`, `continue` and `return` leave the constructs around them:
//! the `if`s and loops the sweeps must treat as leaving their block early.

use super::Analysis;
use crate::ir::*;
use std::collections::HashSet;

impl Analysis {
    /// The site of a statement that may leave its enclosing block early.
    pub fn escapes(&self, s: &Stmt) -> Option<SiteId> {
        let site = match s {
            Stmt::If(i) => i.site,
            Stmt::Loop(l) => l.site,
            _ => return None,
        };
        self.escaping.contains(&site).then_some(site)
    }
}

/// The `if`s and loops that exits leave, found in one walk from the
/// innermost constructs out (asking each construct in turn walked the nested
/// ones again at every level).
#[derive(Default)]
pub(super) struct ExitSites {
    /// `if`s and loops that may leave their enclosing block early.
    pub(super) escaping: HashSet<SiteId>,
    /// Loops whose body leaves them: a `break`, or a `return` anywhere.
    pub(super) breaking: HashSet<SiteId>,
}

/// What a block holds, seen from outside it.
#[derive(Clone, Copy, Default)]
pub(super) struct Exits {
    /// Any `break`, `continue` or `return` outside nested loops, or a
    /// `return` anywhere: it leaves the block if the block is not a loop body.
    any: bool,
    /// A `break` outside nested loops, or a `return` anywhere: it leaves the
    /// loop whose body the block is.
    breaks: bool,
    /// A `return` anywhere.
    returns: bool,
}

pub(super) fn exits(b: &Block, sites: &mut ExitSites) -> Exits {
    let mut all = Exits::default();
    for s in &b.stmts {
        let e = match s {
            Stmt::Exit(e) => Exits {
                any: true,
                breaks: *e != Exit::Continue,
                returns: *e == Exit::Return,
            },
            Stmt::If(i) => {
                let (t, e) = (exits(&i.then, sites), exits(&i.els, sites));
                if t.any || e.any {
                    sites.escaping.insert(i.site);
                }
                Exits {
                    any: t.any || e.any,
                    breaks: t.breaks || e.breaks,
                    returns: t.returns || e.returns,
                }
            }
            Stmt::Loop(l) => {
                let body = exits(&l.body, sites);
                if body.breaks {
                    sites.breaking.insert(l.site);
                }
                // A loop's own `break`s and `continue`s stay inside it.
                if body.returns {
                    sites.escaping.insert(l.site);
                }
                Exits {
                    any: body.returns,
                    breaks: body.returns,
                    returns: body.returns,
                }
            }
            _ => Exits::default(),
        };
        all.any |= e.any;
        all.breaks |= e.breaks;
        all.returns |= e.returns;
    }
    all
}
