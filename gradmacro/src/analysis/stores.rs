//! Which element stores record the element they overwrite. The reverse
//! sweep restores an element for the steps it reaches after the store's
//! own: those before it in the program, and, in a loop, every step of the
//! loop (an earlier iteration's reverse comes after a later one's). Where
//! none of them reads the array, the old element is never needed: filling a
//! buffer of zeros records nothing.

use super::reads::reverse_reads;
use super::walk;
use crate::ir::*;
use std::collections::HashSet;

/// The stores that must record the element they overwrite.
pub(super) fn saved_stores(f: &Func, adj: &[bool]) -> HashSet<StmtId> {
    let mut out = HashSet::new();
    let mut read = vec![false; f.vars.len()];
    visit(&f.body, adj, &mut read, &mut out);
    out
}

/// Marks what the reverse of `s` reads, nested statements included.
fn mark(s: &Stmt, adj: &[bool], read: &mut [bool]) {
    let mut one = |s: &Stmt| {
        for v in reverse_reads(s, adj).0 {
            read[v.0] = true;
        }
    };
    one(s);
    match s {
        Stmt::If(i) => {
            walk(&i.then, &mut one);
            walk(&i.els, &mut one);
        }
        Stmt::Loop(l) => walk(&l.body, &mut one),
        _ => {}
    }
}

/// `read`: the variables read backwards by the steps the reverse sweep
/// reaches after the next statement of `b`.
fn visit(b: &Block, adj: &[bool], read: &mut Vec<bool>, out: &mut HashSet<StmtId>) {
    for s in &b.stmts {
        match s {
            Stmt::Loop(l) => {
                mark(s, adj, read);
                visit(&l.body, adj, read, out);
            }
            Stmt::If(i) => {
                let (mut then, mut els) = (read.clone(), read.clone());
                visit(&i.then, adj, &mut then, out);
                visit(&i.els, adj, &mut els, out);
                for (k, r) in read.iter_mut().enumerate() {
                    *r |= then[k] || els[k];
                }
            }
            Stmt::Store(st) => {
                if read[st.arr.0] {
                    out.insert(st.id);
                }
                mark(s, adj, read);
            }
            _ => mark(s, adj, read),
        }
    }
}
