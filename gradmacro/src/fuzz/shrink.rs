//! Shrinking a panicking input: tokens deleted while the macro still
//! panics at the same location.

use super::run::{location, run};
use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use std::time::{Duration, Instant};

/// The leaves of a token stream as text, with group boundaries as their own
/// entries, so that deleting entries keeps the text lexable when brackets are
/// deleted in pairs (otherwise the candidate is simply skipped).
fn pieces(ts: &TokenStream, out: &mut Vec<String>) {
    for tt in ts.clone() {
        match tt {
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::None => ("", ""),
                };
                out.push(open.to_string());
                pieces(&g.stream(), out);
                out.push(close.to_string());
            }
            TokenTree::Punct(p) => {
                let mut s = p.as_char().to_string();
                if p.spacing() == Spacing::Alone {
                    s.push(' ');
                }
                out.push(s);
            }
            other => out.push(format!("{other} ")),
        }
    }
}

/// Deletes pieces of `item` (delta debugging, then one by one) while the
/// macro still panics at `at`. Returns the smallest source found.
pub(super) fn shrink_panic(attr: &TokenStream, item: &TokenStream, at: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut cur = Vec::new();
    pieces(item, &mut cur);
    let still = |p: &[String]| -> bool {
        let Ok(ts) = p.concat().parse::<TokenStream>() else {
            return false;
        };
        location(&run(attr, &ts)) == at
    };
    let mut chunk = cur.len() / 2;
    while chunk >= 1 && Instant::now() < deadline {
        let mut i = 0;
        let mut progress = false;
        while i < cur.len() && Instant::now() < deadline {
            let end = (i + chunk).min(cur.len());
            let mut cand = cur[..i].to_vec();
            cand.extend_from_slice(&cur[end..]);
            if still(&cand) {
                cur = cand;
                progress = true;
            } else {
                i += chunk;
            }
        }
        if !progress {
            chunk /= 2;
        }
    }
    cur.concat()
}
