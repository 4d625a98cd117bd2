//! No-panic fuzzing of the expansion.
//!
//! Whatever tokens the compiler hands `#[differentiate]`, the macro must
//! answer with code or with `compile_error!`s: a panic in a proc macro is an
//! internal compiler error for the user, and a stack overflow kills rustc.
//! These tests call [`crate::expand::differentiate`] directly with:
//!
//! - random token trees (balanced, over a vocabulary of Rust's keywords,
//!   punctuation and literals), inside and outside a `fn` shape;
//! - random functions from a grammar of every syntax form, supported or not
//!   (match, closures, macros, async, unsafe, struct literals, tuples,
//!   indexing, references, labelled loops, let-else, if-let, ranges, method
//!   chains, turbofish, odd casts, nested items...), with odd signatures and
//!   attribute arguments, then token-level mutations of them;
//! - fixed edge cases, and 10,000-deep or long inputs, each in a child
//!   process on a thread with rustc's 8 MiB stack (or 2 MiB).
//!
//! Every output must contain a `compile_error!` or parse as Rust items. A
//! panic is shrunk (tokens deleted while the same panic location remains)
//! and reported with its message and location.
//!
//! ```text
//! cargo test -p gradmacro fuzz                  # CI: 3,000 random inputs, edge cases,
//!                                               # 10,000-deep and 10,000-statement inputs
//! GRADMACRO_FUZZ_ITERS=1000000 cargo test --release -p gradmacro fuzz::random -- --nocapture
//! GRADMACRO_FUZZ_STATEMENTS=100000 GRADMACRO_FUZZ_BIG_SECS=3600 \
//!     cargo test -p gradmacro fuzz::deep -- --nocapture
//! ```
//!
//! - `GRADMACRO_FUZZ_ITERS`: random inputs (default 3,000);
//! - `GRADMACRO_FUZZ_SEED`: which sequence of random inputs (default 1);
//! - `GRADMACRO_FUZZ_SHOW=<k>`: print the first `k` inputs and what the
//!   macro answered (to see what the generators reach);
//! - `GRADMACRO_FUZZ_DEPTH`: nesting of the deep inputs (default 10,000);
//! - `GRADMACRO_FUZZ_STATEMENTS`: statements of the long bodies (default
//!   10,000; the expansion time grows linearly with it);
//! - `GRADMACRO_FUZZ_BIG_SECS`: time allowed to each deep or long case in
//!   its child process (default 120 s);
//! - `GRADMACRO_FUZZ_STACKS`: the stack sizes, in MiB, the deep and long cases
//!   run with (default `8`, rustc's; `8,2` adds 2 MiB).

mod grammar;
mod inputs;
mod noise;
mod run;
mod shapes;
mod shrink;

pub(crate) use shapes::big_case;

use crate::test_support::Rng;
use inputs::{random_input, MODES};
use proc_macro2::TokenStream;
use run::{expand, has_compile_error, location, run, Verdict};
use shrink::shrink_panic;
use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------
// Settings (randomness is `test_support::Rng`).
// ---------------------------------------------------------------------------

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

// ---------------------------------------------------------------------------
// The tests.
// ---------------------------------------------------------------------------

struct Findings {
    /// Location -> (count, first message, minimal input).
    panics: BTreeMap<String, (usize, String, String)>,
}

impl Findings {
    fn record(&mut self, attr: &TokenStream, item: &TokenStream, v: &Verdict) {
        let at = location(v);
        let entry = self.panics.entry(at.clone());
        let e = entry.or_insert_with(|| {
            let msg = match v {
                Verdict::Panic(p) | Verdict::Unparsable(p) => p.clone(),
                Verdict::Code | Verdict::Errors => String::new(),
            };
            let small = if matches!(v, Verdict::Panic(_)) {
                shrink_panic(attr, item, &at)
            } else {
                item.to_string()
            };
            (0, msg, format!("#[differentiate({attr})] {small}"))
        });
        e.0 += 1;
    }

    fn report(&self) -> String {
        let mut s = String::new();
        for (at, (n, msg, input)) in &self.panics {
            s.push_str(&format!(
                "\n{n} input(s) end at {at}\n  message: {msg}\n  minimal input: {input}\n"
            ));
        }
        s
    }
}

/// Random inputs: `GRADMACRO_FUZZ_ITERS` of them (default 3,000), from
/// `GRADMACRO_FUZZ_SEED`.
#[test]
fn random_inputs_never_panic() {
    let iters = env_u64("GRADMACRO_FUZZ_ITERS", 3000);
    let seed = env_u64("GRADMACRO_FUZZ_SEED", 1);
    let mut rng = Rng::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
    let mut findings = Findings {
        panics: BTreeMap::new(),
    };
    let start = Instant::now();
    let (mut code, mut errors) = (0u64, 0u64);
    let mut by_mode = [[0u64; 2]; 4];
    // GRADMACRO_FUZZ_SHOW=<k>: print the first k inputs and the first error
    // each was answered with (to see what the generators reach).
    let show = env_u64("GRADMACRO_FUZZ_SHOW", 0);
    for i in 0..iters {
        let (mode, attr, item) = random_input(&mut rng);
        let v = run(&attr, &item);
        if i < show {
            let out = expand(&attr, &item)
                .map(|o| o.to_string())
                .unwrap_or_default();
            let err = out
                .find("compile_error")
                .map(|k| out[k..].chars().take(160).collect::<String>())
                .unwrap_or_default();
            println!(
                "--- [{}] #[differentiate({attr})] {item}\n    => {v:?} {err}",
                MODES[mode]
            );
        }
        match v {
            Verdict::Code => {
                code += 1;
                by_mode[mode][0] += 1;
            }
            Verdict::Errors => {
                errors += 1;
                by_mode[mode][1] += 1;
            }
            _ => findings.record(&attr, &item, &v),
        }
    }
    let modes: Vec<String> = MODES
        .iter()
        .zip(by_mode)
        .map(|(m, [c, e])| format!("{m}: {c} code, {e} errors"))
        .collect();
    println!(
        "fuzz: {iters} inputs (seed {seed}) in {:.1} s: {code} expanded to code, {errors} to \
         compile errors ({}), {} distinct failures{}",
        start.elapsed().as_secs_f64(),
        modes.join("; "),
        findings.panics.len(),
        findings.report()
    );
    assert!(
        findings.panics.is_empty(),
        "the macro panicked or emitted unparsable code:{}",
        findings.report()
    );
}

/// Inputs written out: the edges of the grammar.
#[test]
fn edge_cases_never_panic() {
    let cases: &[(&str, &str)] = &[
        ("", "fn f() {}"),
        ("", "fn f(x: f64) -> f64 {}"),
        ("", "fn f(x: f64) {}"),
        ("", "fn f(x: f64) -> ! { loop {} }"),
        ("", "fn f(x: f64) -> ! { panic!() }"),
        ("", "fn f(x: f64) -> f64 { return; }"),
        ("", "fn f(x: f64) -> f64 { return }"),
        ("", "fn f(x: f64) -> f64 { loop {} }"),
        ("", "fn f(x: f64) -> f64 { loop { break; } }"),
        ("", "fn f(x: f64) -> f64 { loop { return x; } }"),
        ("", "fn f(x: f64) -> f64 { while true { return x; } }"),
        ("", "fn f(x: f64) -> f64 { x; }"),
        ("", "fn f(x: f64) -> f64 { ; ; ; x }"),
        ("", "fn f(x: f64) -> f64 { 1e309 * x }"),
        ("", "fn f(x: f64) -> f64 { 1e-400 * x }"),
        ("", "fn f(x: f64) -> f64 { x * 340282366920938463463374607431768211455.0 }"),
        ("", "fn f(x: f64) -> f64 { x.powi(2147483647) + x.powi(-2147483648) }"),
        ("", "fn f(x: f64) -> f64 { x.powi(99999999999) }"),
        ("", "fn f(x: f64, n: u128) -> f64 { x * n as f64 }"),
        ("", "fn f(x: f64) -> f64 { let x = x; let x = x; let x = x; x }"),
        ("", "fn f(x: f64) -> f64 { { { { { x } } } } }"),
        ("", "fn f(x: f64) -> f64 { (((((x))))) }"),
        ("", "fn f(x: f64) -> f64 { - - - - x }"),
        ("", "fn f(x: f64) -> f64 { !x }"),
        ("", "fn f(x: f64) -> f64 { x = x; x }"),
        ("", "fn f(mut x: f64) -> f64 { x = x; x }"),
        ("", "fn f(x: f64) -> f64 { let a: f64; a }"),
        ("", "fn f(x: f64) -> f64 { let a; a = x; a = a; a }"),
        ("", "fn f(x: f64) -> f64 { for i in 0..0 {} x }"),
        ("", "fn f(x: f64) -> f64 { for i in 0.. { break; } x }"),
        ("", "fn f(x: f64) -> f64 { for i in .. { break; } x }"),
        ("", "fn f(x: f64) -> f64 { for i in 0..3 { let i = x; } x }"),
        ("", "fn f(x: f64) -> f64 { for x in 0..3 { } x }"),
        ("", "fn f(x: f64) -> f64 { let mut s = x; for _ in 0..3 { s = s; } s }"),
        ("", "fn f(x: f64) -> f64 { if x > 0.0 {} else {} x }"),
        ("", "fn f(x: f64) -> f64 { if x > 0.0 { return x } else { return -x } }"),
        ("", "fn f(x: f64) -> f64 { if x > 0.0 { x } }"),
        ("", "fn f(x: f64) -> f64 { if x { x } else { x } }"),
        ("", "fn f(x: f64) -> f64 { if true { x } else { 1.0 } }"),
        ("", "fn f(x: f64) -> f64 { while x > 0.0 {} x }"),
        ("", "fn f(x: f64) -> f64 { break; x }"),
        ("", "fn f(x: f64) -> f64 { continue; }"),
        ("", "fn f(x: f64) -> f64 { 'a: loop { loop { break 'a; } } x }"),
        ("", "fn f(x: f64) -> f64 { 'a: { break 'a; } x }"),
        ("", "fn f(x: f64) -> f64 { let y = loop { break x; }; y }"),
        ("", "fn f(x: f64) -> f64 { match x { _ => x } }"),
        ("", "fn f(x: f64) -> f64 { let c = |a: f64| a; c(x) }"),
        ("", "fn f(x: f64) -> f64 { async { x }; x }"),
        ("", "fn f(x: f64) -> f64 { unsafe { x } }"),
        ("", "fn f(x: f64) -> f64 { let s = S { a: x }; s.a }"),
        ("", "fn f(x: f64) -> f64 { let t = (x, x); t.0 }"),
        ("", "fn f(x: f64) -> f64 { let r = &x; *r }"),
        ("", "fn f(x: f64) -> f64 { let Some(a) = Some(x) else { return x; }; a }"),
        ("", "fn f(x: f64) -> f64 { if let Some(a) = Some(x) { a } else { x } }"),
        ("", "fn f(x: f64) -> f64 { (0..3).map(|i| i as f64 * x).sum() }"),
        ("", "fn f(x: f64) -> f64 { x.sin::<f64>() }"),
        ("", "fn f(x: f64) -> f64 { <f64>::sin(x) }"),
        ("", "fn f(x: f64) -> f64 { f64::sin::<>(x) }"),
        ("", "fn f(x: f64) -> f64 { x as f32 as f64 }"),
        ("", "fn f(x: f64) -> f64 { x as _ }"),
        ("", "fn f(x: f64) -> f64 { (x as u8) as f64 }"),
        ("", "fn f(x: f64) -> f64 { fn g(a: f64) -> f64 { a } g(x) }"),
        ("", "fn f(x: f64) -> f64 { #[differentiate] fn g(a: f64) -> f64 { a } x }"),
        ("", "fn f(x: f64) -> f64 { x.sin(1.0) }"),
        ("", "fn f(x: f64) -> f64 { f64::sin() }"),
        ("", "fn f(x: f64) -> f64 { f64::atan2(x) }"),
        ("", "fn f(x: f64) -> f64 { f64::mul_add(x) }"),
        ("", "fn f(x: f64) -> f64 { x.clamp() }"),
        ("", "fn f(x: f64) -> f64 { x.powi(x) }"),
        ("", "fn f(x: f64) -> f64 { x.powi() }"),
        ("", "fn f(x: f64) -> f64 { x + }"),
        ("", "fn f(x: f64) -> f64 { x ++ x }"),
        ("", "fn f(x: f64) -> f64 { x +=+= x }"),
        ("", "fn f(x: f64) -> f64 { let = x; }"),
        ("", "fn f(x: f64) -> f64 { let mut; }"),
        ("", "fn f(x: f64) -> f64 { x[] }"),
        ("", "fn f(x: f64) -> f64 { x.0.0.0 }"),
        ("", "fn f(x: f64) -> f64 { x?? }"),
        ("", "fn f(x: f64) -> f64 { x.await }"),
        ("", "fn f(x: f64) -> f64 { yield x }"),
        ("", "fn f(x: f64) -> f64 { become g(x) }"),
        ("", "fn f(x: f64) -> f64 { const { 1.0 } * x }"),
        ("", "fn f(x: f64) -> f64 { dbg!(x) }"),
        ("", "fn f(x: f64) -> f64 { m!{} }"),
        ("", "fn f(x: f64) -> f64 { x } fn g() {}"),
        ("", "fn f(x: f64) -> f64 { x } extra tokens"),
        ("", "fn f(x: f64) -> f64"),
        ("", "fn f(x: f64) -> f64;"),
        ("", "fn"),
        ("", ""),
        ("", "struct S;"),
        ("", "impl S { fn f(&self) -> f64 { 1.0 } }"),
        ("", "const C: f64 = 1.0;"),
        ("", "mod m { fn f(x: f64) -> f64 { x } }"),
        ("", "#[differentiate] fn f(x: f64) -> f64 { x }"),
        ("", "#[cfg(any())] fn f(x: f64) -> f64 { x }"),
        ("", "pub(in crate) fn f(x: f64) -> f64 { x }"),
        ("", "fn f(x: f64, y: f64, z: f64, w: f64, v: f64, u: f64, t: f64, s: f64, r: f64, q: f64, p: f64, o: f64, a13: f64) -> f64 { x }"),
        ("wrt(x)", "fn f(x: f64, y: f64) -> f64 { x * y }"),
        ("wrt()", "fn f(x: f64) -> f64 { x }"),
        ("wrt(x, x)", "fn f(x: f64) -> f64 { x }"),
        ("wrt(n)", "fn f(x: f64, n: usize) -> f64 { x }"),
        ("wrt(q)", "fn f(x: f64) -> f64 { x }"),
        ("wrt", "fn f(x: f64) -> f64 { x }"),
        ("wrt = x", "fn f(x: f64) -> f64 { x }"),
        ("wrt(x) wrt(x)", "fn f(x: f64) -> f64 { x }"),
        ("wrt(x),,", "fn f(x: f64) -> f64 { x }"),
        ("wrt(x::y)", "fn f(x: f64) -> f64 { x }"),
        ("wrt(1)", "fn f(x: f64) -> f64 { x }"),
        ("foo bar baz", "fn f(x: f64) -> f64 { x }"),
        ("#", "fn f(x: f64) -> f64 { x }"),
        ("wrt(r#x)", "fn f(r#x: f64) -> f64 { r#x }"),
        ("", "fn r#fn(r#let: f64) -> f64 { r#let }"),
        ("", "fn f(d_out: f64, out: f64, value: f64) -> f64 { d_out * out * value }"),
        ("", "fn f(x: f64) -> f64 { let d_x = x; let tape_d_x = d_x; let iters1 = 1.0; d_x * tape_d_x * iters1 }"),
        ("", "fn f_grad(x: f64) -> f64 { x }"),
        ("", "fn f(x: f64) -> f64 { let f_grad = x; f_grad }"),
        // Found by the random run: `()` lost its parentheses (`s *= ;`).
        ("wrt(x)", "fn f(x: f64, flag: bool) -> f64 { let mut s = x; for _ in 0..3 { if flag { s *= (); } s += 1.0; } s }"),
        ("", "fn f(x: f64) -> f64 { let mut s = x; s *= (x, 1.0); s }"),
    ];
    let mut findings = Findings {
        panics: BTreeMap::new(),
    };
    for (attr, item) in cases {
        let attr: TokenStream = attr.parse().unwrap();
        let item: TokenStream = item.parse().unwrap();
        let v = run(&attr, &item);
        if !v.fine() {
            findings.record(&attr, &item, &v);
        }
    }
    assert!(findings.panics.is_empty(), "{}", findings.report());
}

// ---------------------------------------------------------------------------
// Deep and huge inputs, in child processes (a stack overflow aborts).
// ---------------------------------------------------------------------------

/// Run by `deep_and_huge_inputs` in a child process: one case
/// (`GRADMACRO_FUZZ_CHILD=<case>/<n>/<stack KiB>/<stage>`), on a thread with
/// the given stack; prints `RESULT <verdict>` and the time taken. `stage`
/// is `syn` (parsing only) or `macro` (the whole expansion).
#[test]
#[ignore = "run by deep_and_huge_inputs in a child process"]
fn deep_case_child() {
    let Ok(spec) = std::env::var("GRADMACRO_FUZZ_CHILD") else {
        return;
    };
    let parts: Vec<&str> = spec.split('/').collect();
    let (name, n, kib, stage) = (
        parts[0].to_string(),
        parts[1].parse::<usize>().unwrap(),
        parts[2].parse::<usize>().unwrap(),
        parts[3].to_string(),
    );
    let handle = std::thread::Builder::new()
        .stack_size(kib * 1024)
        .spawn(move || {
            let item = big_case(&name, n);
            let start = Instant::now();
            let verdict = if stage == "syn" {
                match syn::parse2::<syn::ItemFn>(item) {
                    Ok(f) => {
                        drop(f);
                        "parsed".to_string()
                    }
                    Err(e) => format!("parse error: {e}"),
                }
            } else {
                // The expansion only: checking its output would parse it
                // again, as deep as the input.
                match expand(&TokenStream::new(), &item) {
                    Ok(out) => {
                        let errors = if has_compile_error(&out) {
                            "compile errors"
                        } else {
                            "code"
                        };
                        format!("fine ({errors})")
                    }
                    Err(p) => format!("Panic({p})"),
                }
            };
            format!("{verdict} in {:.2} s", start.elapsed().as_secs_f64())
        })
        .unwrap();
    let result = handle.join().unwrap_or_else(|_| "thread panicked".into());
    println!("RESULT {result}");
}

/// How one case went in a child process.
fn child(case: &str, n: usize, kib: usize, stage: &str, timeout: Duration) -> String {
    let exe = std::env::current_exe().unwrap();
    let mut c = Command::new(exe)
        .args([
            "fuzz::deep_case_child",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env("GRADMACRO_FUZZ_CHILD", format!("{case}/{n}/{kib}/{stage}"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = c.try_wait().unwrap() {
            let mut out = String::new();
            let mut err = String::new();
            use std::io::Read;
            c.stdout.take().unwrap().read_to_string(&mut out).unwrap();
            c.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            if let Some(line) = out.lines().find_map(|l| l.strip_prefix("RESULT ")) {
                return line.to_string();
            }
            if err.contains("overflowed its stack") {
                return "STACK OVERFLOW".into();
            }
            return format!("died ({status}): {}", err.lines().last().unwrap_or(""));
        }
        if start.elapsed() > timeout {
            let _ = c.kill();
            let _ = c.wait();
            return format!("TIMEOUT after {} s", timeout.as_secs());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// 10,000-deep expressions and blocks, and long bodies, with rustc's 8 MiB
/// stack (and 2 MiB with `GRADMACRO_FUZZ_STACKS=8,2`). Where `syn` itself
/// cannot parse the input on that stack, that is recorded and the macro is
/// not blamed; a case that does not finish in time fails.
///
/// `GRADMACRO_FUZZ_DEPTH` and `GRADMACRO_FUZZ_STATEMENTS` change the sizes
/// (defaults 10,000 and 10,000); `GRADMACRO_FUZZ_BIG_SECS` the time allowed
/// to each case (default 120 s). Expansion time is linear in the size for
/// every shape here (`bench_expand::bench_expand_shapes` measures it by
/// stage); the 100,000-statement body takes `GRADMACRO_FUZZ_STATEMENTS=100000`.
#[test]
fn deep_and_huge_inputs() {
    let depth = env_u64("GRADMACRO_FUZZ_DEPTH", 10_000) as usize;
    let stmts = env_u64("GRADMACRO_FUZZ_STATEMENTS", 10_000) as usize;
    let timeout = Duration::from_secs(env_u64("GRADMACRO_FUZZ_BIG_SECS", 120));
    // rustc's 8 MiB by default; `GRADMACRO_FUZZ_STACKS=8,2` adds 2 MiB.
    let stacks: Vec<usize> = std::env::var("GRADMACRO_FUZZ_STACKS")
        .unwrap_or_else(|_| "8".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let deep = [
        "parens",
        "sums",
        "flat products",
        "negations",
        "method chain",
        "blocks",
        "else-if chain",
        "nested ifs",
        "nested loops",
    ];
    let huge = ["statements", "compound statements"];
    let jobs: Vec<(&str, usize, usize)> = deep
        .iter()
        .map(|c| (*c, depth))
        .chain(huge.iter().map(|c| (*c, stmts)))
        .flat_map(|(c, n)| stacks.iter().map(move |mib| (c, n, mib * 1024)))
        .collect();
    // Two child processes at a time.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let lines = std::sync::Mutex::new(vec![(String::new(), false); jobs.len()]);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(&(case, n, kib)) = jobs.get(k) else {
                    break;
                };
                let parsed = child(case, n, kib, "syn", timeout);
                let expanded = if parsed.starts_with("parsed") {
                    child(case, n, kib, "macro", timeout)
                } else {
                    "not run: syn cannot parse it on this stack".into()
                };
                let line = format!(
                    "{case} (n = {n}), {} MiB stack: syn: {parsed}; macro: {expanded}",
                    kib / 1024
                );
                let failed = parsed.starts_with("parsed") && !expanded.starts_with("fine");
                lines.lock().unwrap()[k] = (line, failed);
            });
        }
    });
    let lines = lines.into_inner().unwrap();
    let report: String = lines.iter().map(|(l, _)| format!("{l}\n")).collect();
    let failures: Vec<&String> = lines.iter().filter(|(_, f)| *f).map(|(l, _)| l).collect();
    println!("{report}");
    assert!(
        failures.is_empty(),
        "the macro failed on inputs syn parses:\n{}",
        failures
            .iter()
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
