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

/// Expansion time, stage by stage, of the long and deep inputs of the
/// no-panic fuzzer (`fuzz::big_case`): each shape at each size, with the
/// growth of the time against the growth of the size, so a stage that grows
/// faster than its input shows as such.
///
/// ```sh
/// cargo test --release -p gradmacro bench_expand_shapes -- --ignored --nocapture
/// BENCH_EXPAND_SHAPES="compound statements" BENCH_EXPAND_SIZES=1000,2000,4000,8000 \
///     cargo test --release -p gradmacro bench_expand_shapes -- --ignored --nocapture
/// ```
///
/// Prints one `SHAPE` line per shape and size: the time of parsing, of
/// lowering (repeated until the active declarations settle, as the macro
/// does), of the analysis, of emission (which runs the analysis again), and
/// of the whole `expand::differentiate`, in milliseconds.
#[test]
#[ignore = "a timing, not a test"]
fn bench_expand_shapes() {
    let shapes: Vec<String> = std::env::var("BENCH_EXPAND_SHAPES")
        .map(|s| s.split(',').map(|n| n.trim().to_string()).collect())
        .unwrap_or_else(|_| {
            [
                "compound statements",
                "statements",
                "flat products",
                "sums",
                "parens",
                "negations",
                "method chain",
                "blocks",
                "else-if chain",
                "nested ifs",
                "nested loops",
            ]
            .map(String::from)
            .to_vec()
        });
    let sizes: Vec<usize> = std::env::var("BENCH_EXPAND_SIZES")
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|_| vec![1000, 2000, 4000]);
    for shape in &shapes {
        let mut previous: Option<(usize, f64)> = None;
        for &n in &sizes {
            let item = crate::fuzz::big_case(shape, n);
            // Deep inputs recurse: run on the stack the macro itself grows.
            let line = stacker::grow(1 << 30, || stages(shape, n, item));
            let total = line.total;
            let growth = previous
                .map(|(m, p)| {
                    format!(
                        " (time x{:.1} for size x{:.1})",
                        total / p,
                        n as f64 / m as f64
                    )
                })
                .unwrap_or_default();
            println!(
                "SHAPE {shape} n={n} parse={:.1} lower={:.1} analyze={:.1} emit={:.1} total={:.1} ms{growth}",
                line.parse, line.lower, line.analyze, line.emit, total
            );
            previous = Some((n, total));
        }
    }
}

/// Milliseconds spent in each stage of one expansion.
struct Stages {
    parse: f64,
    lower: f64,
    analyze: f64,
    emit: f64,
    total: f64,
}

fn stages(shape: &str, n: usize, item: TokenStream) -> Stages {
    use crate::{analysis, args::Args, ctxt::Ctxt, emit, lower, signature};
    let ms = |start: Instant| start.elapsed().as_secs_f64() * 1e3;
    let start = Instant::now();
    let f: syn::ItemFn = syn::parse2(item.clone()).expect("a function");
    let parse = ms(start);
    let mut cx = Ctxt::default();
    let sig = signature::check(&f.sig, &Args::default(), &mut cx).expect("a supported signature");
    let start = Instant::now();
    let mut promoted = std::collections::HashSet::new();
    let vecs = lower::vec_macros::VecMacros::of(&f.block);
    let (func, names) = loop {
        let user_names = crate::names::Names::avoiding(quote::ToTokens::to_token_stream(&f));
        let (func, promote, names, _) =
            lower::lower(&f, &sig, &promoted, &vecs, user_names, &mut cx);
        if promote.is_subset(&promoted) {
            break (func, names);
        }
        promoted.extend(promote);
    };
    let lower = ms(start);
    let (analyze, emit) = match func {
        Some(func) if !cx.has_errors() => {
            let start = Instant::now();
            drop(analysis::analyze(&func));
            let analyze = ms(start);
            let start = Instant::now();
            drop(emit::generate(
                &func,
                None,
                &[],
                None,
                names,
                &f,
                emit::Modes::default(),
            ));
            (analyze, ms(start))
        }
        // Not supported: the expansion stops at the errors.
        _ => (0.0, 0.0),
    };
    let start = Instant::now();
    let out = crate::expand::differentiate(TokenStream::new(), item);
    let total = ms(start);
    assert!(!out.is_empty(), "{shape} ({n}) expanded to nothing");
    Stages {
        parse,
        lower,
        analyze,
        emit,
        total,
    }
}
