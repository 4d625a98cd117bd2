//! What the coverage test counts of `Stmt::Views`, and the program
//! without it.

/// A test of a program's source.
type Has = fn(&str) -> bool;

/// `s` without the helpers, local arrays and closures of its `Stmt::Views`,
/// drawn apart from the arrays, calls and closures the generator's coverage
/// counts.
pub fn without_views(s: &str) -> String {
    const HELPERS: [&str; 5] = ["fn vread", "fn vwrite", "fn hm", "fn hf", "fn hc"];
    const LOCALS: [&str; 5] = ["let vb", "let mut vb", "let mut vo", "let mut vq", "let vx"];
    let mut out = String::new();
    let mut in_helper = false;
    for l in s.lines() {
        if HELPERS.iter().any(|h| l.starts_with(h)) {
            in_helper = true;
        }
        let t = l.trim_start();
        // `*pe0 = *pe0 * ..` is no copy `= *x`.
        let own = LOCALS.iter().any(|p| t.starts_with(p))
            || t.contains(".map(|e| e * e)")
            || t.starts_with("*pe");
        if !in_helper && !own {
            out.push_str(l);
            out.push('\n');
        }
        if in_helper && l == "}" {
            in_helper = false;
        }
    }
    out
}

/// Whether some line, without its indentation, starts with `start` and
/// contains every one of `parts`.
fn line_with(s: &str, start: &str, parts: &[&str]) -> bool {
    s.lines()
        .map(str::trim_start)
        .any(|l| l.starts_with(start) && parts.iter().all(|p| l.contains(p)))
}

/// What the views of the parts are zipped with.
fn zipped(s: &str) -> impl Iterator<Item = &str> {
    s.lines()
        .filter(|l| l.trim_start().starts_with("for (vc"))
        .filter_map(|l| l.split(".zip(").nth(1)?.split('.').next())
}

fn is_view(w: &str) -> bool {
    ["row", "lh", "rh", "pa", "pb"]
        .iter()
        .any(|v| w.starts_with(v))
}

/// What `generator_covers_the_language` counts of these constructs.
pub fn coverage() -> Vec<(&'static str, Has)> {
    vec![
        ("view `&w[a..b]`", |s| {
            s.lines()
                .map(str::trim_start)
                .any(|l| l.starts_with("let row") && !l.contains("[..") && !l.contains("..]"))
        }),
        ("view `&w[a..]`", |s| line_with(s, "let row", &["..];"])),
        ("view `&w[..b]`", |s| {
            s.lines()
                .map(str::trim_start)
                .any(|l| l.starts_with("let row") && l.contains("[..") && !l.contains("..]["))
        }),
        ("view `&w[k..]` with `k` bound again by a loop", |s| {
            s.contains("[vk") && s.contains("for vk")
        }),
        ("`let (l, r) = w.split_at(k);`", |s| {
            s.contains(".split_at(")
        }),
        ("a view of a parameter", |s| {
            ["= &w[", "= &xs[", "= w.split_at(", "= xs.split_at("]
                .iter()
                .any(|p| s.contains(p))
        }),
        ("a view walked by `for`", |s| {
            ["for ve", "for &ve"]
                .iter()
                .any(|f| line_with(s, f, &["in row"]) || line_with(s, f, &["in lh"]))
        }),
        ("a view passed to a helper", |s| {
            line_with(s, "", &["vread", "(row"]) || line_with(s, "", &["vread", "(lh"])
        }),
        ("mutable view `&mut b[a..b]`", |s| {
            line_with(s, "let pa", &["= &mut "])
        }),
        ("`split_at_mut(k)`", |s| s.contains(".split_at_mut(")),
        ("view of a view `&w[a..][..p]`", |s| {
            line_with(s, "let row", &["..][.."])
        }),
        ("mutable view of a view `&mut b[a..][..p]`", |s| {
            line_with(s, "let pa", &["..][.."])
        }),
        ("a view walked by `chunks(k)`", |s| s.contains(".chunks(")),
        ("a view walked by `chunks_exact(k)`", |s| {
            s.contains(".chunks_exact(")
        }),
        ("a view walked by `windows(2)`", |s| {
            s.contains(".windows(2)")
        }),
        ("a view zipped with a parameter", |s| {
            zipped(s).any(|w| !is_view(w))
        }),
        ("a view zipped with another view", |s| {
            zipped(s).any(is_view)
        }),
        ("written by `iter_mut()`", |s| s.contains(".iter_mut() {")),
        ("written by `iter_mut().enumerate()`", |s| {
            s.contains(".iter_mut().enumerate()")
        }),
        ("written by `iter_mut().zip(..)`", |s| {
            s.contains(".iter_mut().zip(")
        }),
        ("written through a mutable view", |s| {
            line_with(s, "pa", &["] = "]) || line_with(s, "pb", &["] += "])
        }),
        ("a mutable view lent to a helper writing it", |s| {
            line_with(s, "vwrite", &[", pa"]) || line_with(s, "vwrite", &[", pb"])
        }),
        ("helper with two output buffers", |s| {
            s.contains("a: &mut [f64], b: &mut [f64]")
        }),
        ("helper writing `*e` of `e: &mut f64`", |s| {
            s.contains("e: &mut f64")
        }),
        ("a local float lent, `&mut ve0`", |s| s.contains("&mut ve")),
        ("an element lent, `&mut vq0[k]`", |s| s.contains("&mut vq")),
        ("a range lent to several outputs", |s| {
            line_with(s, "hm", &["&mut vb", "]"])
        }),
        ("the halves of a split lent", |s| {
            line_with(s, "hm", &["pa", "pb"])
        }),
        ("`first_chunk::<N>()`", |s| s.contains(".first_chunk::<")),
        ("`last_chunk::<N>()`", |s| s.contains(".last_chunk::<")),
        ("`w[a..b].try_into().unwrap()`", |s| {
            s.contains(".try_into().unwrap()")
        }),
        ("a callee's `[f64; N]` bound without its type", |s| {
            s.contains("let fc")
        }),
    ]
}
