//! What the reverse sweep reads of the primal values: what each partial
//! derivative of a primitive uses, learned from the rules table, and the
//! values the reverse of one statement reads.

use crate::ir::*;
use crate::rules::{Partial, Prim};
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;
use std::collections::HashMap;

/// What one partial derivative of a primitive needs.
#[derive(Clone)]
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
    thread_local! {
        static CACHE: std::cell::RefCell<HashMap<Prim, Vec<PartialUse>>> = Default::default();
    }
    CACHE.with(|c| {
        c.borrow_mut()
            .entry(prim)
            .or_insert_with(|| read_partials(prim))
            .clone()
    })
}

fn read_partials(prim: Prim) -> Vec<PartialUse> {
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

/// The primal values the reverse of `s` reads (operands of its partials,
/// indices of its adjoint targets, arguments of a pullback), and whether it
/// reads the value it wrote itself.
pub(super) fn reverse_reads(s: &Stmt, adj: &[bool]) -> (Vec<VarId>, bool) {
    let mut reads = Vec::new();
    let mut out = false;
    let elem_index = |a: &Operand, reads: &mut Vec<VarId>| {
        if let Operand::Elem(b, j) = a {
            if adj[b.0] {
                reads.extend(j.reads.iter().copied());
            }
        }
    };
    match s {
        Stmt::Step(st) if adj[st.dst.0] => {
            let uses = partial_uses(st.prim);
            for (a, pu) in st.args.iter().zip(&uses) {
                let contributes = pu.nonzero && a.var().is_some_and(|v| adj[v.0]);
                if !contributes {
                    continue;
                }
                elem_index(a, &mut reads);
                for &j in &pu.args {
                    reads.extend(st.args[j].reads());
                }
                out |= pu.out;
            }
        }
        Stmt::Store(s) if adj[s.arr.0] => {
            reads.extend(s.index.reads.iter().copied());
            elem_index(&s.value, &mut reads);
        }
        Stmt::Push(p) if adj[p.arr.0] => elem_index(&p.value, &mut reads),
        Stmt::Reduce(r) if adj[r.dst.0] && adj[r.arr.0] && r.op.reads_array() => {
            reads.push(r.arr);
        }
        // The pullback runs the callee again on the same arguments.
        Stmt::Call(c) if adj[c.dst.0] => {
            for a in &c.args {
                reads.extend(a.value.reads.iter().copied());
            }
        }
        _ => {}
    }
    (reads, out)
}
