//! The shapes of the deep and huge inputs (10,000-deep expressions and
//! blocks, long bodies), each at any size, built without recursion;
//! `bench_expand.rs` times the same shapes.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};

/// The input of a named deep or huge case.
pub(crate) fn big_case(name: &str, n: usize) -> TokenStream {
    let wrap = |inner: TokenStream, delim: Delimiter| -> TokenStream {
        TokenTree::Group(Group::new(delim, inner)).into()
    };
    let ts = |s: &str| -> TokenStream { s.parse().unwrap() };
    let body: TokenStream = match name {
        // ((((x)))) built as tokens, without any recursion.
        "parens" => {
            let mut e = ts("x");
            for _ in 0..n {
                e = wrap(e, Delimiter::Parenthesis);
            }
            e
        }
        // x + (x + (x + ...)).
        "sums" => {
            let mut e = ts("x");
            for _ in 0..n {
                let mut s = ts("x +");
                s.extend(wrap(e, Delimiter::Parenthesis));
                e = s;
            }
            e
        }
        // x * x * x * ... : left-nested without any parentheses.
        "flat products" => {
            let mut s = String::from("x");
            for _ in 0..n {
                s.push_str(" * x");
            }
            ts(&s)
        }
        // - - - - x
        "negations" => {
            let mut s = String::new();
            for _ in 0..n {
                s.push_str("- ");
            }
            s.push('x');
            ts(&s)
        }
        // x.sin().sin().sin()...
        "method chain" => {
            let mut s = String::from("x");
            for _ in 0..n {
                s.push_str(".sin()");
            }
            ts(&s)
        }
        // { { { x } } }
        "blocks" => {
            let mut e = ts("x");
            for _ in 0..n {
                e = wrap(e, Delimiter::Brace);
            }
            e
        }
        // if x > 0.0 { x } else if ... else { x }
        "else-if chain" => {
            let mut s = String::new();
            for _ in 0..n {
                s.push_str("if x > 0.5 { x } else ");
            }
            s.push_str("{ x }");
            ts(&s)
        }
        // if x > 0.0 { if x > 0.0 { ... } else { x } } else { x }
        "nested ifs" => {
            let mut e = ts("x");
            for _ in 0..n {
                let mut s = ts("if x > 0.5");
                s.extend(wrap(e, Delimiter::Brace));
                s.extend(ts("else { x }"));
                e = s;
            }
            e
        }
        // for i in 0..1 { for i in 0..1 { ... s += x; } }
        "nested loops" => {
            let mut e = ts("s += x;");
            for _ in 0..n {
                let mut s = ts("for _ in 0..1");
                s.extend(wrap(e, Delimiter::Brace));
                e = s;
            }
            let mut b = ts("let mut s = 0.0;");
            b.extend(e);
            b.extend(ts("s"));
            b
        }
        // let v1 = x * 1.0001; let v2 = v1 * 1.0001; ... vN
        "statements" => {
            let mut s = String::from("let v0 = x;\n");
            for i in 1..=n {
                s.push_str(&format!("let v{i} = v{} * 1.0001;\n", i - 1));
            }
            s.push_str(&format!("v{n}"));
            ts(&s)
        }
        // let mut s = x; s += x; s *= 0.5; ... s
        "compound statements" => {
            let mut s = String::from("let mut s = x;\n");
            for i in 0..n {
                s.push_str(if i % 2 == 0 {
                    "s += x;\n"
                } else {
                    "s *= 0.5;\n"
                });
            }
            s.push('s');
            ts(&s)
        }
        other => panic!("unknown case {other}"),
    };
    let mut item = ts("fn f(x: f64) -> f64");
    item.extend(wrap(body, Delimiter::Brace));
    item
}
