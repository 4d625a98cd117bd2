//! The names the statements of a reversed block mention and assign, each
//! statement read at most once per block.
//!
//! Inside the compiler, comparing two `proc_macro2::Ident`s prints both of
//! them; asking each statement about each adjoint a block declares printed
//! names a number of times quadratic in the block's length, most of the
//! macro's own time in an unoptimised build (which is how cargo builds
//! procedural macros unless told otherwise). The folds of the reverse sweep
//! ask this index instead.

use proc_macro2::{Ident, Spacing, TokenStream, TokenTree};
use std::cell::OnceCell;
use std::collections::HashSet;

/// What one statement mentions, and which of those names it assigns
/// (`d = ..`, `d += ..`, `d -= ..`, `d *= ..`, `d /= ..`).
#[derive(Default)]
struct StmtNames {
    mentioned: HashSet<String>,
    assigned: HashSet<String>,
}

impl StmtNames {
    fn of(tokens: &TokenStream) -> StmtNames {
        let mut names = StmtNames::default();
        names.add(tokens);
        names
    }

    fn add(&mut self, tokens: &TokenStream) {
        let tts: Vec<TokenTree> = tokens.clone().into_iter().collect();
        for (k, tt) in tts.iter().enumerate() {
            match tt {
                TokenTree::Ident(i) => {
                    let name = i.to_string();
                    if assigned_by(&tts[k + 1..]) {
                        self.assigned.insert(name.clone());
                    }
                    self.mentioned.insert(name);
                }
                TokenTree::Group(g) => self.add(&g.stream()),
                _ => {}
            }
        }
    }
}

/// Whether the tokens after a name assign to it.
fn assigned_by(after: &[TokenTree]) -> bool {
    match after {
        [TokenTree::Punct(p), ..] if p.as_char() == '=' && p.spacing() == Spacing::Alone => true,
        [TokenTree::Punct(p), TokenTree::Punct(q), ..] => {
            "+-*/".contains(p.as_char()) && p.spacing() == Spacing::Joint && q.as_char() == '='
        }
        _ => false,
    }
}

/// The names of a block's statements, each statement read when first asked
/// about: a block holding a long nest of blocks reads it only if it asks.
pub(super) struct BlockNames(Vec<Option<StmtNames>>);

impl BlockNames {
    pub(super) fn new(out: &[TokenStream]) -> BlockNames {
        BlockNames(out.iter().map(|_| None).collect())
    }

    fn at(&mut self, out: &[TokenStream], j: usize) -> &StmtNames {
        self.0[j].get_or_insert_with(|| StmtNames::of(&out[j]))
    }

    /// The first statement that mentions `name`.
    pub(super) fn first_mention(&mut self, out: &[TokenStream], name: &str) -> Option<usize> {
        (0..out.len()).find(|&j| self.at(out, j).mentioned.contains(name))
    }

    /// Whether a statement after the `j`th assigns `name`.
    pub(super) fn assigned_after(&mut self, out: &[TokenStream], j: usize, name: &str) -> bool {
        (j + 1..out.len()).any(|k| self.at(out, k).assigned.contains(name))
    }

    /// The `j`th statement was written anew.
    pub(super) fn rewritten(&mut self, j: usize) {
        self.0[j] = None;
    }
}

/// Whether a block's statements, and those added before them, mention a
/// name; the statements are read on the first question.
pub(super) struct Mentioned<'a> {
    out: &'a [TokenStream],
    all: OnceCell<HashSet<String>>,
    added: HashSet<String>,
}

impl<'a> Mentioned<'a> {
    pub(super) fn new(out: &'a [TokenStream]) -> Mentioned<'a> {
        Mentioned {
            out,
            all: OnceCell::new(),
            added: HashSet::new(),
        }
    }

    pub(super) fn add(&mut self, tokens: &TokenStream) {
        self.added.extend(StmtNames::of(tokens).mentioned);
    }

    pub(super) fn contains(&self, name: &Ident) -> bool {
        let name = name.to_string();
        self.added.contains(&name)
            || self
                .all
                .get_or_init(|| {
                    let mut all = StmtNames::default();
                    self.out.iter().for_each(|s| all.add(s));
                    all.mentioned
                })
                .contains(&name)
    }
}
