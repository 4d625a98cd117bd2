//! Room on the tapes before a loop runs: its number of iterations times what
//! each iteration pushes. An inner loop that runs in full on every iteration,
//! over a range that cannot change meanwhile, hands its pushes to the loop
//! around it, so that a nest of loops reserves once, before the outermost,
//! instead of growing its tapes copy after copy.

use super::control::is_range;
use crate::emit::{Emitter, Pushes};
use crate::ir::*;
use proc_macro2::{Delimiter, Ident, TokenStream, TokenTree};
use quote::quote;

impl Emitter<'_> {
    /// The reservations before `l`, which pushed `pushes`, or nothing when
    /// they go to the loop around it.
    pub(super) fn reserve(&mut self, l: &Loop, pushes: Pushes) -> TokenStream {
        let LoopKind::For {
            iter,
            reversed: Some(_),
            ..
        } = &l.kind
        else {
            return quote!();
        };
        let it = &iter.tokens;
        let count = if is_range(it) {
            quote!((#it).size_hint().0)
        } else {
            quote!(#it.size_hint().0)
        };
        // Per tape: how many values one iteration pushes, and what that reads.
        let mut per: Vec<(Ident, Option<TokenStream>, Vec<VarId>)> = Vec::new();
        let direct = pushes.direct.iter().map(|t| (t.clone(), None, Vec::new()));
        let nested = pushes
            .nested
            .iter()
            .map(|(t, n, r)| (t.clone(), Some(n.clone()), r.clone()));
        for (tape, n, reads) in direct.chain(nested) {
            match per.iter_mut().find(|(t, _, _)| *t == tape) {
                Some((_, m, r)) => {
                    let one = |n: Option<TokenStream>| n.unwrap_or_else(|| quote!(1usize));
                    let (a, b) = (one(m.take()), one(n));
                    *m = Some(quote!(#a.saturating_add(#b)));
                    r.extend(reads);
                }
                None => per.push((tape, n, reads)),
            }
        }
        if per.is_empty() {
            return quote!();
        }
        if self.hands_up(l, &pushes, &per) {
            let parent = self.pushed.last_mut().expect("a loop around");
            for (tape, n, mut reads) in per {
                let n = match n {
                    Some(n) => quote!(#count.saturating_mul(#n)),
                    None => count.clone(),
                };
                reads.extend(&iter.reads);
                parent.nested.push((tape, n, reads));
            }
            return quote!();
        }
        let len = self.names.fresh("len");
        let reserves = per.iter().map(|(tape, n, _)| match n {
            Some(n) => quote!(#tape.reserve(#len.saturating_mul(#n));),
            None => quote!(#tape.reserve(#len);),
        });
        quote!(let #len = #count; #(#reserves)*)
    }

    /// Whether `l`'s pushes can be reserved by the loop around it: `l` is
    /// directly in its body, runs in full on every iteration (it never
    /// leaves early, and pushes outside any `if`), and what each of its
    /// counts reads is declared outside that loop and cannot change inside.
    fn hands_up(
        &self,
        l: &Loop,
        pushes: &Pushes,
        per: &[(Ident, Option<TokenStream>, Vec<VarId>)],
    ) -> bool {
        let Some(parent) = self.pushed.last() else {
            return false;
        };
        let outside = |v: &VarId| {
            self.f.var(*v).decl.loop_depth <= parent.depth && Some(*v) != parent.binding
        };
        let LoopKind::For { iter, .. } = &l.kind else {
            return false;
        };
        parent.counted
            && parent.children.contains(&l.site)
            && !pushes.conditional
            && self.a.reversible.contains(&l.site)
            && cannot_panic(&iter.tokens)
            && iter.reads.iter().all(outside)
            && per.iter().all(|(_, _, reads)| reads.iter().all(outside))
    }
}

/// Names, literals, ranges and `.len()` / `.rev()` only: evaluated ahead of
/// the loop that would have evaluated it (maybe never), it cannot panic.
fn cannot_panic(tokens: &TokenStream) -> bool {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    trees.iter().enumerate().all(|(k, t)| match t {
        TokenTree::Ident(_) | TokenTree::Literal(_) => true,
        TokenTree::Punct(p) => matches!(p.as_char(), '.' | '='),
        TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => {
            match k.checked_sub(1).map(|j| &trees[j]) {
                Some(TokenTree::Ident(m)) => (m == "len" || m == "rev") && g.stream().is_empty(),
                _ => cannot_panic(&g.stream()),
            }
        }
        TokenTree::Group(_) => false,
    })
}
