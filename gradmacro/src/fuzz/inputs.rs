//! One random input, drawn from one of four generators: noise, noise in a
//! function's shape, the grammar, the grammar mutated.

use super::grammar::{Grammar, SIGNATURES};
use super::noise::{mutate, random_tokens};
use crate::test_support::Rng;
use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};

pub(super) const MODES: [&str; 4] = ["noise", "noise in a fn", "grammar", "mutated grammar"];

/// One random input, drawn from one of four generators (`MODES`).
pub(super) fn random_input(rng: &mut Rng) -> (usize, TokenStream, TokenStream) {
    let m = rng.index(10);
    let mode = match m {
        0 => 0,
        1 | 2 => 1,
        3..=6 => 2,
        _ => 3,
    };
    let (a, i) = random_input_of(rng, m);
    (mode, a, i)
}

fn random_input_of(rng: &mut Rng, m: usize) -> (TokenStream, TokenStream) {
    match m {
        // Pure noise.
        0 => {
            let (alen, len) = (rng.index(3), rng.index(30));
            let attr = random_tokens(rng, 0, alen);
            (attr, random_tokens(rng, 3, len))
        }
        // Noise inside a function's shape.
        1 | 2 => {
            let len = rng.index(40);
            let body = random_tokens(rng, 3, len);
            let sig: TokenStream = rng.pick(SIGNATURES).parse().unwrap();
            let mut item: Vec<TokenTree> = sig.into_iter().collect();
            item.push(TokenTree::Group(Group::new(Delimiter::Brace, body)));
            (TokenStream::new(), item.into_iter().collect())
        }
        // Grammar: mostly the supported language, or anything.
        3..=6 => {
            let bad = [0.0, 0.03, 0.3][rng.index(3)];
            let (attr, item) = Grammar { rng, bad }.function();
            (attr.parse().unwrap(), item.parse().unwrap())
        }
        // Grammar, mutated.
        _ => {
            let bad = [0.0, 0.3][rng.index(2)];
            let (attr, item) = Grammar { rng, bad }.function();
            let item: TokenStream = item.parse().unwrap();
            let attr: TokenStream = attr.parse().unwrap();
            let rate = [0.02, 0.05, 0.15][rng.index(3)];
            (mutate(rng, attr, rate), mutate(rng, item, rate))
        }
    }
}
