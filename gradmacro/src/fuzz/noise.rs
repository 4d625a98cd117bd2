//! Random token trees, balanced, over a vocabulary of Rust's keywords,
//! punctuation and literals; and token-level mutations of an input.

use crate::test_support::Rng;
use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

const WORDS: &[&str] = &[
    "fn",
    "let",
    "mut",
    "if",
    "else",
    "for",
    "in",
    "while",
    "loop",
    "return",
    "break",
    "continue",
    "match",
    "as",
    "move",
    "async",
    "await",
    "unsafe",
    "pub",
    "crate",
    "self",
    "Self",
    "super",
    "struct",
    "impl",
    "where",
    "const",
    "static",
    "ref",
    "dyn",
    "type",
    "use",
    "mod",
    "true",
    "false",
    "x",
    "y",
    "z",
    "n",
    "s",
    "t",
    "f",
    "g",
    "d_out",
    "out",
    "t1",
    "f64",
    "f32",
    "i32",
    "usize",
    "bool",
    "u8",
    "sin",
    "cos",
    "powi",
    "powf",
    "max",
    "clamp",
    "mul_add",
    "ln",
    "sqrt",
    "abs",
    "iter",
    "sum",
    "len",
    "rev",
    "step_by",
    "wrt",
    "vec",
    "Vec",
    "Some",
    "None",
    "Option",
    "_",
    "r#fn",
    "r#x",
    "differentiate",
];
const PUNCTS: &[&str] = &[
    "+", "-", "*", "/", "%", "=", "==", "!=", "<", ">", "<=", ">=", "!", "&", "&&", "|", "||", ";",
    ",", ".", "..", "..=", ":", "::", "->", "=>", "#", "?", "@", "^", "~", "$", "+=", "-=", "*=",
    "/=", "%=", "<<", ">>", "'",
];
const LITERALS: &[&str] = &[
    "0",
    "1",
    "2",
    "1.0",
    "0.5",
    "2.5",
    "1e10",
    "1e309",
    "1e-400",
    "0.0",
    "1_f32",
    "1.5f64",
    "0x10",
    "3usize",
    "\"s\"",
    "'c'",
    "b'a'",
    "b\"by\"",
    "r\"raw\"",
    "1u128",
    "340282366920938463463374607431768211455",
    "1.7976931348623157e308",
    "4.9e-324",
];

fn punct_tokens(p: &str) -> Vec<TokenTree> {
    let chars: Vec<char> = p.chars().collect();
    chars
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let spacing = if i + 1 < chars.len() {
                Spacing::Joint
            } else {
                Spacing::Alone
            };
            TokenTree::Punct(Punct::new(*c, spacing))
        })
        .collect()
}

fn word(w: &str) -> TokenTree {
    if let Some(raw) = w.strip_prefix("r#") {
        TokenTree::Ident(Ident::new_raw(raw, Span::call_site()))
    } else {
        TokenTree::Ident(Ident::new(w, Span::call_site()))
    }
}

pub(super) fn random_tokens(rng: &mut Rng, depth: usize, len: usize) -> TokenStream {
    let mut out: Vec<TokenTree> = Vec::new();
    for _ in 0..len {
        match rng.index(10) {
            0..=3 => out.push(word(rng.pick(WORDS))),
            4..=6 => {
                let p = rng.pick(PUNCTS);
                if p == "'" {
                    // A lifetime: `'a`.
                    out.extend(punct_tokens("'"));
                    out.push(word("a"));
                } else {
                    out.extend(punct_tokens(p));
                }
            }
            7 => {
                let l: TokenStream = rng.pick(LITERALS).parse().unwrap();
                out.extend(l);
            }
            _ if depth > 0 => {
                let delim = match rng.index(4) {
                    0 => Delimiter::Parenthesis,
                    1 => Delimiter::Bracket,
                    2 => Delimiter::Brace,
                    _ => Delimiter::None,
                };
                let inner_len = rng.index(8);
                let inner = random_tokens(rng, depth - 1, inner_len);
                out.push(TokenTree::Group(Group::new(delim, inner)));
            }
            _ => out.push(TokenTree::Literal(Literal::f64_suffixed(1.5))),
        }
    }
    out.into_iter().collect()
}

/// Token-level mutations: delete, duplicate, swap, replace, insert.
pub(super) fn mutate(rng: &mut Rng, ts: TokenStream, rate: f64) -> TokenStream {
    let mut out: Vec<TokenTree> = Vec::new();
    let items: Vec<TokenTree> = ts.into_iter().collect();
    for tt in items {
        if !rng.chance(rate) {
            match tt {
                TokenTree::Group(g) => {
                    let inner = mutate(rng, g.stream(), rate);
                    out.push(TokenTree::Group(Group::new(g.delimiter(), inner)));
                }
                other => out.push(other),
            }
            continue;
        }
        match rng.index(6) {
            0 => {}
            1 => {
                out.push(tt.clone());
                out.push(tt);
            }
            2 => {
                let last = out.pop();
                out.push(tt);
                out.extend(last);
            }
            3 => out.extend(random_tokens(rng, 1, 1)),
            4 => {
                out.extend(random_tokens(rng, 1, 2));
                out.push(tt);
            }
            _ => match tt {
                TokenTree::Group(g) => {
                    let delim = [
                        Delimiter::Parenthesis,
                        Delimiter::Bracket,
                        Delimiter::Brace,
                        Delimiter::None,
                    ][rng.index(4)];
                    out.push(TokenTree::Group(Group::new(delim, g.stream())));
                }
                other => out.push(other),
            },
        }
    }
    out.into_iter().collect()
}
