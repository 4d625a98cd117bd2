//! Expansion time of long straight-line functions: how long
//! `expand::differentiate` takes on 500, 1,000, 2,000 and 4,000 statements.
//!
//! ```sh
//! cargo test --release -p gradmacro bench_expand -- --ignored --nocapture
//! ```
//!
//! `scripts/compile_time.sh` runs it and reads the `EXPAND n=.. ms=..` lines.
//! `BENCH_EXPAND_SIZES=500` (a comma-separated list) times other sizes, and
//! `BENCH_EXPAND_RUNS=1` runs each once, e.g. under a profiler.
//! The functions are the ones `scripts/gen_straight_line.py line N` writes
//! (the same generator, statement for statement): `N` `let` statements, each
//! reading the previous value and one older value or input through one of
//! seven shapes (tanh, sin, cos, division, exp, sqrt, linear combination).

use crate::test_support::Rng;
use proc_macro2::TokenStream;
use std::time::{Duration, Instant};

/// Inputs of the generated function.
const NX: u64 = 8;

/// A constant in `[lo, hi)` with two decimals.
fn constant(rng: &mut Rng, lo: f64, hi: f64) -> String {
    let steps = ((hi - lo) * 100.0).round() as u64;
    format!("{:.2}", lo + rng.below(steps) as f64 / 100.0)
}

/// The source of `pub fn straight_line(x: &[f64]) -> f64` with `n` statements.
fn source(n: u64) -> String {
    let mut rng = Rng::new(0x5EED);
    let mut body = String::new();
    for k in 0..n {
        let a = if k == 0 {
            format!("x[{}]", NX - 1)
        } else {
            format!("v{}", k - 1)
        };
        let (b, kind) = if k < NX {
            (format!("x[{k}]"), [0, 1, 2, 3, 6][rng.below(5) as usize])
        } else {
            let b = if rng.below(4) == 0 {
                format!("x[{}]", rng.below(NX))
            } else {
                format!("v{}", k - 1 - rng.below(k.min(64)))
            };
            (b, rng.below(7))
        };
        let c1 = constant(&mut rng, 0.5, 1.5);
        let c2 = constant(&mut rng, 0.1, 0.4);
        let rhs = match kind {
            0 => format!("({a} * {c1} + {b}).tanh()"),
            1 => format!("({a} - {b}).sin() * {c1}"),
            2 => format!("{a} * {b}.cos()"),
            3 => format!("{a} / ({b} * {b} + 1.0)"),
            4 => format!("({a} * {c2}).exp() * 0.5"),
            5 => format!("({a} * {a} * 0.5 + {c1}).sqrt()"),
            _ => format!("{a} * {c2} + {b} * {c2}"),
        };
        body.push_str(&format!("    let v{k} = {rhs};\n"));
    }
    format!(
        "pub fn straight_line(x: &[f64]) -> f64 {{\n{body}    v{} + v{}\n}}\n",
        n - 1,
        n - 2
    )
}

#[test]
#[ignore = "a timing, not a test: run by scripts/compile_time.sh"]
fn bench_expand() {
    let sizes: Vec<u64> = std::env::var("BENCH_EXPAND_SIZES")
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|_| vec![500, 1000, 2000, 4000]);
    let fixed_runs: Option<usize> = std::env::var("BENCH_EXPAND_RUNS")
        .ok()
        .and_then(|r| r.parse().ok());
    for n in sizes {
        let item: TokenStream = source(n).parse().expect("generated source tokenizes");
        let runs = fixed_runs.unwrap_or(if n <= 2000 { 5 } else { 3 }).max(1);
        let mut times: Vec<Duration> = Vec::with_capacity(runs);
        for _ in 0..runs {
            let input = item.clone();
            let start = Instant::now();
            let out = crate::expand::differentiate(TokenStream::new(), input);
            times.push(start.elapsed());
            let text = out.to_string();
            assert!(
                !text.contains("compile_error"),
                "{n} statements did not expand cleanly"
            );
            assert!(text.contains("fn straight_line_grad"));
        }
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "bench_expand: {n} statements: median {:.1} ms, min {:.1} ms over {runs} runs",
            ms(times[runs / 2]),
            ms(times[0])
        );
        println!("EXPAND n={n} ms={:.3}", ms(times[runs / 2]));
    }
}
