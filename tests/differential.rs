//! Differential test of `#[differentiate]`: random programs against dual
//! numbers.
//!
//! Each program comes from a seed (`difftest::gen`): nested arithmetic and
//! every supported float method on safe arguments, `let`s, shadowing,
//! reassignment and compound assignment, `if`/`else if`/`else` on float,
//! integer and `bool` conditions, `for` (with `..=`, `.rev()`,
//! `.step_by(k)`), `while` and `loop` with small trip counts, `break`,
//! `continue` and `return` at any depth.
//!
//! About a third of the programs also use arrays and calls:
//!
//! - array parameters `&[f64]`, `&Vec<f64>`, `[f64; N]` and `&[f64; N]`, of
//!   2 to 5 elements (the length of a `&[f64]` is stated in the function's
//!   doc comment, for the harness), read as `w[k]` with an index that cannot
//!   be out of bounds (a literal, the index of a loop over a short enough
//!   range, or `(i + 1) % len`), `w.iter().sum::<f64>()`, `w.len() as f64`,
//!   and walked by `for i in 0..w.len()`, `for i in 0..N`, `for wi in
//!   w.iter()`, `for &wi in w`, `for (i, wi) in w.iter().enumerate()`;
//! - local buffers `vec![0.0; n]`, `vec![0.0; w.len()]`, `[0.0; N]`,
//!   `vec![a, b]`, `[a, b]`, written by `v[i] = ..` and `v[i] += ..` (often
//!   in a loop over the buffer's indices, overwriting an element it reads),
//!   read and summed later;
//! - one or two helper functions, `#[differentiate]` too and printed before
//!   `f` (each program is its own module of the scratch crate, so `g1` is
//!   unique), called with floats and arrays (`g1(x, &v)`), in loops and
//!   branches, now and then twice with a shared argument.
//!
//! About a fifth of the programs also use closures and the iterator forms
//! around them:
//!
//! - reductions `w.iter().map(|v| ..).sum::<f64>()` and `.product::<f64>()`,
//!   over `w.iter()` (with `.rev()`, `.copied()`, or the pattern `|&v|`),
//!   `a.iter().zip(b.iter())` and `.zip(b)`, `w.iter().enumerate()` and
//!   `(0..n)` (whose index reads arrays at most `n` long); `.fold(init, |acc,
//!   v| ..)`, often Horner's `acc * x + c` over `.rev()`; `.map(..).fold(
//!   f64::NEG_INFINITY, f64::max)` and `f64::min`; `w.iter().product::<f64>()`;
//!   closure bodies are expressions or blocks with `let`s and `if`/`else`
//!   values, read outer variables, and now and then shadow one by the
//!   parameter's name; a `&f64` parameter is read bare in arithmetic
//!   (`v * y`), as users write it;
//! - `let v: Vec<f64> = ..collect();` and `.collect::<Vec<f64>>()`, copies
//!   `let mut s = x;`, `*x`, `.to_vec()`, `.clone()`, `.to_owned()` (now and
//!   then shadowing the array copied), and `Vec::with_capacity(n)` filled by
//!   `push` in a loop, all then used as buffers (written, indexed, summed);
//! - conditions and values evaluated on closures: a reduction in a `while`
//!   or `if` condition, `w.iter().any(|v| *v > e)`, and the piecewise
//!   constant `w.iter().filter(|v| **v > e).count() as f64`.
//!
//! About three programs in ten also read structs of constants, from draws
//! of their own (so a program without them is the one its seed gave before
//! they existed):
//!
//! - a settings parameter `cfg: &Cfg` (or `cfg: Cfg`, a `Copy` struct),
//!   whose fields `scale: f64`, `n: usize` (`i32` beside an `i32`
//!   parameter) and `w: Vec<f64>` (`[f64; 3]` when `Copy`) are read as
//!   floats in arithmetic, as loop bounds and conditions, as an array
//!   indexed (`cfg.w[k]`), summed and walked by index, passed to helpers
//!   (`g1(x, &cfg.w)`); helpers now and then take `cfg` too, and are passed
//!   it;
//! - `f` as a method of `Model` (`&self`, or `self` for a `Copy` struct),
//!   whose fields `k`, `m` and `c` are read the same way; the glue calls
//!   `s.f_grad(..)`, `s.f_adjoint(..)` and `s.f_adjoint_acc(..)`.
//!
//! Each struct is printed with the fields the program reads (an unread
//! field is `dead_code`); the runner draws their values at every point, and
//! the dual copy holds them as constants. The arrays of structs are not
//! walked by element nor copied, which the macro does not support yet;
//! `GRADMACRO_DIFFTEST_FIELD_WALKS=1` generates those too.
//!
//! About two in five of those programs (from a third generator of draws,
//! so the others stay as they were) differentiate with respect to the
//! struct: `#[derive(gradmacro::Differentiable)]` on it, `wrt(cfg, x, ..)`
//! or `wrt(self, ..)` (now and then the struct alone, a bare gradient of
//! its type; now and then both). The dual copy then seeds the struct's
//! float fields (`scale`, `k`, each element of `w` and `c`) one direction
//! at a time like the other inputs, the receiver's first as its gradient
//! entry comes first; the runner compares each float field of the gradient
//! struct of `f_grad` and of `f_adjoint`, and what `f_adjoint_acc` adds to a
//! struct buffer whose floats start at `ACC_START`, and checks that their
//! integer fields are the input's. Only what the macro supports is
//! generated: helpers receive the struct's fields (`&cfg.w`, floats) but
//! not the struct; its integer fields are read where only integers fit
//! (loop bounds, indices, `% 2`, conditions and casts), never as the value
//! of an integer `let`; a float field passed whole to a call is read as a
//! value too, and at least one float field is (`+ cfg.scale` at the end if
//! need be); no `tangent`/`hessian` for those programs.
//!
//! About one program in seven (from a generator of draws of its own, so
//! the others stay as they were) also calls a helper writing into an
//! output buffer, `#[differentiate] fn h1(x: f64[, y: f64][, w: &[f64]],
//! out: &mut [f64])`, which returns nothing and updates every element of
//! `out` from itself in a loop over its indices (`out[i] = out[i] * e +
//! ..`, now and then `out[1] += out[0] * e` too); `f` calls it as a
//! statement, once or twice, on a local buffer (`vec![..]`, `[..]`,
//! `vec![0.0; N]`, `[0.0; N]`) lent whole or as a range, `h1(x, &w, &mut
//! ob[1..4]);`, and its value reads the buffer afterwards. Such programs
//! get `tangent` (the helper too) but never `hessian`. The dual copy of
//! the helper takes `&mut [D]`.
//!
//! About one program in five (from draws of its own too) also matches
//! patterns on integer data, a statement now and then: `if let Some(m) =
//! n.checked_sub(1) { .. } [else { .. }]` on the integer parameter `n` or
//! an array's length (`w.len().checked_sub(2)`), or a `match` on it with
//! `Some(m) if m > 1 => { .. } _ => { .. }` or `Some(m) => { .. } None =>
//! { .. }`, or `let Some(m) = n.checked_sub(1) else { return e; };` with
//! `m` read by what follows; the arm that binds `m` usually starts by
//! adding `(m as f64) * e` to a float. The dual copy leaves them as they
//! are (integers).
//!
//! About seven programs in ten (from draws of their own again) may filter
//! what they walk: a loop `for v in w.iter().filter(|fv| **fv < 1.5) { ..
//! }`, and a sum `w.iter().filter(|fv| **fv > 0.5).map(|v| ..)
//! .sum::<f64>()` (`.rev()` and `.copied()` before it too) wherever a
//! reduction can be. The threshold is a literal;
//! the dual copy compares `D`s there, which records how near each element
//! is to it, so a point where an element could cross it is skipped like
//! any branch about to flip.
//!
//! About one unfiltered sum through a closure in two (from draws of its
//! own) takes the largest or smallest value instead: `src.map(|v|
//! ..).max_by(|p, q| p.partial_cmp(q).unwrap()).unwrap_or(0.0)` (`min_by`);
//! the dual copy runs the standard library's `max_by` on `D`s, comparing
//! values.
//! About three programs in ten (from draws of their own too) also hold
//! one statement of views and outputs (`difftest/views`), placed at the
//! top level before the value, which then adds or subtracts the float it
//! declares (`let vw = ..;`): views of
//! array parameters and local arrays (`&w[a..b]`, `&w[a..]`, `&w[..b]`,
//! `w.split_at(k)`, `&w[a..][..p]`, and `&w[vk0..]` whose bound `vk0` a
//! later loop binds again) read by index, length, sum, `for` and closures,
//! walked by `chunks(k)`, `chunks_exact(k)`, `windows(2)` and zipped with an
//! array parameter or another view, and passed to a helper; mutable views
//! of local buffers (`&mut vb0[a..b]`, `&mut vb0[a..][..p]`,
//! `split_at_mut(k)`) written through (by index, `iter_mut()` and
//! `iter_mut().enumerate()`) and lent to helpers writing or only reading
//! them, the buffer read afterwards; a helper with several outputs
//! (`a: &mut [f64], b: &mut [f64], e: &mut f64`) called with whole buffers,
//! ranges, the halves of a split, a local float and an element
//! (`&mut vq0[1]`); fixed-size views as `&[f64; N]` arguments
//! (`first_chunk`, `last_chunk`, `w[a..b].try_into().unwrap()`) and a
//! callee's `[f64; N]` bound without its type. The dual copy slices the
//! same `[D]`s with Rust's own methods. The forms the macro does not
//! support yet (the statement as a block expression among them) are
//! printed otherwise unless `GRADMACRO_DIFFTEST_VIEW_GAPS=1` (see
//! `views::gaps`); no `hessian` for programs whose helpers take `&mut [f64]`.
//!
//! Every fifth program without structs (by its index, so the program is
//! the same) is written generic over its float type (`difftest/generic`):
//! `fn f<T>(..) -> T where T: num_traits::Float + ..`, helpers too, `T`
//! wherever it wrote `f64`, literals as `T::from(c).unwrap()`, `f64::sin`
//! as `T::sin`, `k as f64` as `T::from(k).unwrap()`, `v[i] += e` as `v[i] =
//! v[i] + (e)` (a generic `+=` borrows `v`); the extra bounds are what the
//! function itself needs to compile (`+=`, `Sum`, arithmetic on `&T`), not
//! the macro. The glue calls it at `f64`, the copy without the macro is
//! the generic one too, and the oracle's copy is made from the program as
//! written: values must still be bit-identical and derivatives the same.
//! Float lets are now and then a tuple read by its fields (`let pair_s =
//! (e, 2.0); let s = pair_s.0 * pair_s.1 * 0.5;`).
//!
//! The dual numbers implement `Sum` and `Product` as `f64` does (the same
//! starting value and order, so values stay bit-identical), arithmetic on
//! `&D`, and give a `max`/`min` tie to the receiver as the macro does; a
//! tie is a kink the runner's margin sees, so such points are skipped.
//!
//! All of them are written into one scratch crate with `#![deny(warnings)]`,
//! next to a copy without `#[differentiate]` (an error there is the
//! generator's, reported as such; an error only in the expanded program is
//! the macro's), expanded by the real macro and built once; then, at points
//! where no branch is near flipping (`difftest/runner.rs`), `f_grad`'s value
//! must be `f`'s bit for bit, its gradient (an array parameter's entry
//! compared element by element, one dual-number seed per element) must match
//! forward-mode dual numbers evaluating the same program text, helpers
//! included (relative tolerance 1e-9 of the size of the terms, absolute
//! 1e-12), `f_adjoint(.., d_out)` must be `d_out` times it, and
//! `f_adjoint_acc` must add `d_out` times it to its buffers. Centered finite
//! differences check the dual numbers in turn.
//!
//! A failing program is printed, then shrunk (statements deleted,
//! expressions replaced by an operand or a variable, loops and conditions
//! simplified, each step re-checked) and printed again in its minimal form:
//! that form belongs in `tests/regressions.rs`.
//!
//! # Running
//!
//! ```text
//! cargo test --test differential                   # 300 programs (CI)
//! GRADMACRO_DIFFTEST_PROGRAMS=20000 cargo test --release --test differential -- --nocapture
//! GRADMACRO_DIFFTEST_PROGRAMS=5000 GRADMACRO_DIFFTEST_SEED=15000 cargo test --test differential
//! scripts/difftest-long.sh 20000                   # the long run, in batches, with a log
//! ```
//!
//! - `GRADMACRO_DIFFTEST_PROGRAMS`: how many programs (default 300);
//! - `GRADMACRO_DIFFTEST_SEED`: index of the first program (default 0), so a
//!   long run can be split into batches that together cover `0..N`;
//! - `GRADMACRO_DIFFTEST_BATCH`: programs per build of the scratch crate
//!   (default 400);
//! - `GRADMACRO_DIFFTEST_SHRINK`: failures shrunk per distinct kind of
//!   failure (default 1; the others are printed unshrunk);
//! - `GRADMACRO_DIFFTEST_SHRINK_SECS`: time allowed to each shrink (default
//!   120), `GRADMACRO_DIFFTEST_SHRINK_TOTAL_SECS` to all of them (default 600);
//! - `GRADMACRO_DIFFTEST_SHOW=<index>`: print program `<index>` and exit;
//! - `GRADMACRO_DIFFTEST_DUMP=<file>`: also write every program to `<file>`;
//! - `GRADMACRO_DIFFTEST_MACRO_DIR`: test another copy of the macro crate;
//! - `GRADMACRO_DIFFTEST_FIELD_WALKS=1`: also walk and copy the arrays of
//!   structs (not supported by the macro yet: expect failures);
//! - `GRADMACRO_DIFFTEST_FILTER_SUMS=0`: never filter what sums map (the
//!   programs of earlier runs, before such sums were generated).
//! - `GRADMACRO_DIFFTEST_VIEW_GAPS=1`: also the forms of views the macro
//!   does not support yet (a block expression assigning to its locals,
//!   `vec![..]` in one, a split's half ignored by `_`, a view of a local
//!   array lent to a reader under `hessian`, a view of a parameter declared
//!   again later, Hessians through a callee's `[f64; N]` bound without its
//!   type: expect failures).
//!
//! Program `i` is the same on every machine and every run: a failure is
//! reproduced by `GRADMACRO_DIFFTEST_PROGRAMS=1 GRADMACRO_DIFFTEST_SEED=i`.

#[path = "differential/mod.rs"]
mod difftest;
mod support;

use difftest::ast::Program;
use difftest::harness::{Case, Failure, Outcome, TestCrate};
use difftest::{dual, gen, shrink};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

fn env_num(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

struct Failed {
    index: u64,
    seed: u64,
    program: Program,
    failure: Failure,
}

/// Shrinks `p` while it keeps failing with `want.key`.
fn shrink_failure(
    tc: &mut TestCrate,
    p: &Program,
    seed: u64,
    want: &Failure,
    budget: Duration,
) -> (Program, Failure, usize) {
    let deadline = Instant::now() + budget;
    let mut cur = p.clone();
    let mut cur_failure = want.clone();
    let mut steps = 0;
    'outer: loop {
        let cands = shrink::candidates(&cur);
        let mut i = 0;
        let mut chunk = 8;
        while i < cands.len() {
            if Instant::now() > deadline {
                break 'outer;
            }
            let slice = &cands[i..(i + chunk).min(cands.len())];
            let cases: Vec<Case> = slice
                .iter()
                .enumerate()
                .map(|(k, c)| Case {
                    id: k,
                    seed,
                    source: c.source(),
                })
                .collect();
            let outs = tc.run(&cases);
            let hit = outs.iter().enumerate().find_map(|(k, o)| match o {
                Outcome::Fail(f) if f.key == want.key => Some((k, f.clone())),
                _ => None,
            });
            if let Some((k, f)) = hit {
                cur = slice[k].clone();
                cur_failure = f;
                steps += 1;
                continue 'outer;
            }
            i += chunk;
            chunk = (chunk * 2).min(64);
        }
        break;
    }
    (cur, cur_failure, steps)
}

#[test]
fn generated_programs_agree_with_dual_numbers() {
    if let Ok(i) = std::env::var("GRADMACRO_DIFFTEST_SHOW") {
        let i: u64 = i.parse().expect("GRADMACRO_DIFFTEST_SHOW=<index>");
        let p = gen::program(gen::program_seed(i)).expect("a valid program");
        println!("{}", p.source());
        return;
    }
    let programs = env_num("GRADMACRO_DIFFTEST_PROGRAMS", 300);
    let first = env_num("GRADMACRO_DIFFTEST_SEED", 0);
    let batch = env_num("GRADMACRO_DIFFTEST_BATCH", 400).max(1);
    let shrink_max = env_num("GRADMACRO_DIFFTEST_SHRINK", 1) as usize;
    let shrink_secs = env_num("GRADMACRO_DIFFTEST_SHRINK_SECS", 120);
    let shrink_total = Duration::from_secs(env_num("GRADMACRO_DIFFTEST_SHRINK_TOTAL_SECS", 600));
    let start = Instant::now();
    let mut tc = TestCrate::new(if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    });

    let mut failed: Vec<Failed> = Vec::new();
    let mut generator_errors = Vec::new();
    let (mut ok, mut skipped, mut points, mut tried, mut fd) = (0, 0, 0, 0, 0);
    let mut lines = 0usize;
    let mut dump = std::env::var_os("GRADMACRO_DIFFTEST_DUMP")
        .map(|p| std::fs::File::create(p).expect("GRADMACRO_DIFFTEST_DUMP=<file>"));
    let mut index = first;
    while index < first + programs {
        let end = (index + batch).min(first + programs);
        let mut cases = Vec::new();
        let mut progs = BTreeMap::new();
        for i in index..end {
            let seed = gen::program_seed(i);
            match gen::program(seed) {
                Ok(p) => {
                    let source = p.source();
                    lines += source.lines().count();
                    if let Some(d) = &mut dump {
                        use std::io::Write as _;
                        writeln!(d, "// program {i}\n{source}").unwrap();
                    }
                    cases.push(Case {
                        id: i as usize,
                        seed,
                        source,
                    });
                    progs.insert(i, (seed, p));
                }
                Err(e) => generator_errors.push(format!("program {i}: {e}")),
            }
        }
        let outcomes = tc.run(&cases);
        for (c, o) in cases.iter().zip(outcomes) {
            match o {
                Outcome::Ok {
                    points: p,
                    tried: t,
                    fd: f,
                } => {
                    ok += 1;
                    points += p;
                    tried += t;
                    fd += f;
                }
                Outcome::Skip { tried: t } => {
                    skipped += 1;
                    tried += t;
                }
                // Not valid Rust without the macro either: the generator's.
                Outcome::Fail(failure) if failure.kind == "generator" => {
                    generator_errors
                        .push(format!("program {}: {}\n{}", c.id, failure.msg, c.source));
                }
                Outcome::Fail(failure) => {
                    let (seed, program) = progs.remove(&(c.id as u64)).unwrap();
                    failed.push(Failed {
                        index: c.id as u64,
                        seed,
                        program,
                        failure,
                    });
                }
            }
        }
        index = end;
    }
    let checked = start.elapsed();

    let mut report = String::new();
    writeln!(
        report,
        "differential test: programs {first}..{} ({} lines of source): {ok} passed, \
         {} failed, {skipped} skipped (no usable point); {points} points compared \
         ({fd} also against finite differences) out of {tried} tried; \
         {} builds, {:.1} s building, {:.1} s running, {:.1} s in all",
        first + programs,
        lines,
        failed.len(),
        tc.builds,
        tc.build_secs,
        tc.run_secs,
        checked.as_secs_f64()
    )
    .unwrap();
    for e in &generator_errors {
        writeln!(report, "generator error: {e}").unwrap();
    }

    // Every failure, then the first few of each kind shrunk.
    let mut by_key: BTreeMap<String, Vec<&Failed>> = BTreeMap::new();
    for f in &failed {
        writeln!(
            report,
            "\n=== FAILED: program {} (seed {:#x}): {}: {}\n{}",
            f.index,
            f.seed,
            f.failure.kind,
            f.failure.msg,
            f.program.source()
        )
        .unwrap();
        by_key.entry(f.failure.key.clone()).or_default().push(f);
    }
    let shrink_deadline = Instant::now() + shrink_total;
    for (key, list) in &by_key {
        writeln!(
            report,
            "\n##### {} program(s) failing with: {key}",
            list.len()
        )
        .unwrap();
        for f in list.iter().take(shrink_max) {
            let left = shrink_deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                writeln!(report, "(no time left to shrink program {})", f.index).unwrap();
                continue;
            }
            let (small, failure, steps) = shrink_failure(
                &mut tc,
                &f.program,
                f.seed,
                &f.failure,
                Duration::from_secs(shrink_secs).min(left),
            );
            writeln!(
                report,
                "--- program {} shrunk in {steps} steps from size {} to {}: {}: {}\n{}",
                f.index,
                f.program.size(),
                small.size(),
                failure.kind,
                failure.msg,
                small.source()
            )
            .unwrap();
        }
    }
    println!("{report}");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("gradmacro-difftest");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("report-{first}-{}.txt", first + programs));
    let _ = std::fs::write(&path, &report);
    assert!(
        failed.is_empty() && generator_errors.is_empty(),
        "{} of {programs} programs failed (report also in {})",
        failed.len() + generator_errors.len(),
        path.display()
    );
    // About 8% of the programs have no point where every comparison is
    // clear of a tie (`x >= x`, `y.max(y)`) and every argument inside its
    // domain; many more means the generator drifted.
    assert!(
        ok * 10 >= programs as usize * 8,
        "fewer than 80% of the programs found a usable point: the generator drifted"
    );
}

#[test]
fn programs_are_deterministic_and_tidy() {
    for i in 0..200 {
        let seed = gen::program_seed(i);
        let a = gen::program(seed).unwrap();
        let b = gen::program(seed).unwrap();
        assert_eq!(a.source(), b.source(), "program {i} is not deterministic");
        let mut again = a.clone();
        difftest::tidy::tidy(&mut again).unwrap();
        assert_eq!(
            again.source(),
            a.source(),
            "tidying program {i} twice changes it"
        );
    }
}

/// The oracle's own derivative rules against centered differences, for
/// every method, at points inside each domain.
#[test]
fn dual_number_rules_match_finite_differences() {
    use dual::D;
    type Op = (&'static str, fn(D) -> D, &'static [f64]);
    let any: &[f64] = &[-2.3, -0.6, 0.35, 1.1, 2.9];
    let unit: &[f64] = &[-0.9, -0.45, 0.2, 0.75];
    let pos: &[f64] = &[0.05, 0.7, 2.5, 40.0];
    let ops: &[Op] = &[
        ("sin", |x| x.sin(), any),
        ("cos", |x| x.cos(), any),
        ("tan", |x| x.tan(), &[-1.2, -0.3, 0.5, 1.1]),
        ("asin", |x| x.asin(), unit),
        ("acos", |x| x.acos(), unit),
        ("atan", |x| x.atan(), any),
        ("atan2 y", |y| y.atan2(D::c(0.7)), any),
        ("atan2 x", |x| D::c(0.7).atan2(x), any),
        ("sinh", |x| x.sinh(), any),
        ("cosh", |x| x.cosh(), any),
        ("tanh", |x| x.tanh(), any),
        ("asinh", |x| x.asinh(), any),
        ("acosh", |x| x.acosh(), &[1.1, 1.5, 2.0, 7.5]),
        ("atanh", |x| x.atanh(), unit),
        ("exp", |x| x.exp(), any),
        ("exp2", |x| x.exp2(), any),
        ("exp_m1", |x| x.exp_m1(), any),
        ("ln", |x| x.ln(), pos),
        ("ln_1p", |x| x.ln_1p(), &[-0.6, 0.5, 9.0]),
        ("log self", |x| x.log(D::c(3.0)), pos),
        ("log base", |b| D::c(2.5).log(b), &[0.3, 2.0, 5.0]),
        ("log2", |x| x.log2(), pos),
        ("log10", |x| x.log10(), pos),
        ("sqrt", |x| x.sqrt(), pos),
        ("cbrt", |x| x.cbrt(), any),
        ("powi", |x| x.powi(3), any),
        ("powi -2", |x| x.powi(-2), any),
        ("powf self", |x| x.powf(D::c(2.3)), pos),
        ("powf exponent", |b| D::c(1.7).powf(b), any),
        ("hypot", |x| x.hypot(D::c(0.8)), any),
        ("abs", |x| x.abs(), any),
        ("recip", |x| x.recip(), any),
        ("mul_add self", |x| x.mul_add(D::c(1.5), D::c(0.5)), any),
        ("mul_add a", |a| D::c(1.5).mul_add(a, D::c(0.5)), any),
        ("mul_add b", |b| D::c(1.5).mul_add(D::c(0.5), b), any),
        ("max", |x| x.max(D::c(0.2)), any),
        ("min", |x| x.min(D::c(0.2)), any),
        ("clamp", |x| x.clamp(D::c(-1.0), D::c(1.5)), any),
        ("clamp lo", |l| D::c(-3.0).clamp(l, D::c(9.0)), any),
        ("fract", |x| x.fract(), any),
        ("to_degrees", |x| x.to_degrees(), any),
        ("to_radians", |x| x.to_radians(), any),
        ("x * x / (x + 3)", |x| x * x / (x + D::c(3.0)), any),
        ("x - 2x", |x| x - D::c(2.0) * x, any),
        ("-x", |x| -x, any),
    ];
    for (name, f, points) in ops {
        for &x in *points {
            let y = f(dual::input(x, true));
            let h = 1e-6 * x.abs().max(1.0);
            let fd = (f(D::c(x + h)).v - f(D::c(x - h)).v) / ((x + h) - (x - h));
            assert!(
                (y.d - fd).abs() <= 1e-6 * (1.0 + y.d.abs()),
                "{name} at {x}: dual {} vs finite difference {fd}",
                y.d
            );
            assert!(y.m >= y.d.abs(), "{name} at {x}: magnitude below |d|");
        }
    }
}

/// How often each construct occurs among the first 1,000 programs; each must
/// occur in at least 1% of them, so that a change to the generator cannot
/// silently stop testing one. `-- --nocapture` prints the table.
#[test]
fn generator_covers_the_language() {
    type Has = dyn Fn(&str) -> bool;
    let constructs: &[(&str, &Has)] = &[
        ("`let`", &|s| s.contains("let ")),
        ("`let mut`", &|s| s.contains("let mut ")),
        ("`let x;` (assigned later)", &|s| {
            s.lines()
                .any(|l| l.trim_start().starts_with("let ") && !l.contains('='))
        }),
        ("`: f64` annotation", &|s| {
            s.contains(": f64 =") || s.contains(": f64;")
        }),
        ("shadowing", &|s| {
            let mut names: Vec<&str> = s
                .split("let ")
                .skip(1)
                .filter_map(|r| {
                    r.trim_start_matches("mut ")
                        .split(|c: char| !c.is_alphanumeric() && c != '_')
                        .next()
                })
                .collect();
            let n = names.len();
            names.sort_unstable();
            names.dedup();
            names.len() < n
        }),
        ("reassignment `x = ..`", &|s| {
            s.lines().any(|l| {
                let l = l.trim_start();
                !l.starts_with("let ") && l.contains(" = ") && !l.contains("==")
            })
        }),
        ("`+=` (besides loop counters)", &|s| {
            s.lines()
                .any(|l| l.contains(" += ") && !l.trim_start().starts_with('w'))
        }),
        ("`-=`", &|s| s.contains(" -= ")),
        ("`*=`", &|s| s.contains(" *= ")),
        ("`/=`", &|s| s.contains(" /= ")),
        ("`if`", &|s| s.contains("if ")),
        ("`else if`", &|s| s.contains("else if ")),
        ("`if` as a value", &|s| {
            s.contains("= if ") || s.contains("(if ")
        }),
        ("block as a value", &|s| {
            s.contains("= {\n") || s.contains("({\n")
        }),
        ("float condition", &|s| {
            s.contains(" < ") || s.contains(" > ")
        }),
        ("integer condition", &|s| s.contains(" % 2 ")),
        ("`&&`", &|s| s.contains(" && ")),
        ("`||`", &|s| s.contains(" || ")),
        ("`!`", &|s| s.contains("!(") || s.contains("!flag")),
        ("`for`", &|s| s.contains("for ")),
        ("`..=`", &|s| s.contains("..=")),
        ("`.rev()`", &|s| s.contains(".rev()")),
        ("`.step_by(k)`", &|s| s.contains(".step_by(")),
        ("nested loops", &|s| {
            s.lines()
                .any(|l| l.starts_with("        ") && l.trim_start().starts_with("for "))
        }),
        ("`while`", &|s| s.contains("while ")),
        ("`loop`", &|s| s.contains("loop {")),
        ("`break`", &|s| {
            s.matches("break;").count() > s.matches("loop {").count()
        }),
        ("`continue`", &|s| s.contains("continue;")),
        ("`return`", &|s| s.contains("return ")),
        ("`as f64`", &|s| s.contains(" as f64")),
        ("integer parameter", &|s| {
            s.contains(": usize") || s.contains(": i32")
        }),
        ("`bool` parameter", &|s| s.contains(": bool")),
        ("`wrt(..)`", &|s| s.contains("wrt(")),
        ("one float parameter", &|s| {
            main_signature(s).matches("f64").count() == 2
        }),
        ("`&[f64]` parameter", &|s| {
            main_signature(s).contains(": &[f64]")
        }),
        ("`&Vec<f64>` parameter", &|s| {
            main_signature(s).contains(": &Vec<f64>")
        }),
        ("`[f64; N]` parameter", &|s| {
            main_signature(s).contains(": [f64; ")
        }),
        ("`&[f64; N]` parameter", &|s| {
            main_signature(s).contains(": &[f64; ")
        }),
        ("only an array parameter", &|s| {
            main_signature(s).matches("f64").count() == 2 && main_signature(s).contains('[')
        }),
        ("`w[k]`", &|s| s.contains("w[")),
        ("`.iter().sum::<f64>()`", &|s| {
            s.contains(".iter().sum::<f64>()")
        }),
        ("`.len() as f64`", &|s| s.contains(".len() as f64")),
        ("`for i in 0..w.len()`", &|s| {
            for_lines(s).any(|l| l.contains(".len()"))
        }),
        ("`for wi in w.iter()`", &|s| {
            for_lines(s)
                .any(|l| l.contains(".iter()") && !l.contains("enumerate") && !l.contains('&'))
        }),
        ("`for &wi in w`", &|s| {
            for_lines(s).any(|l| l.starts_with("for &"))
        }),
        ("`.enumerate()`", &|s| s.contains(".iter().enumerate()")),
        ("`.iter().rev()`", &|s| {
            s.contains(".rev() {") && s.contains(".iter()")
        }),
        ("`vec![0.0; n]`", &|s| s.contains("vec![0.0; ")),
        ("`vec![0.0; w.len()]`", &|s| {
            s.contains("vec![0.0; w.len()]")
        }),
        ("`[0.0; N]`", &|s| s.contains(" = [0.0; ")),
        ("`vec![a, b]`", &|s| {
            s.lines()
                .any(|l| l.contains("= vec![") && !l.contains("vec![0.0; "))
        }),
        ("`[a, b]`", &|s| {
            s.lines()
                .any(|l| l.contains(" = [") && !l.contains("[0.0; "))
        }),
        ("`: Vec<f64>` buffer", &|s| s.contains(": Vec<f64> =")),
        ("store `v[i] = ..`", &|s| {
            s.lines()
                .any(|l| l.contains("] = ") && !l.trim_start().starts_with("let "))
        }),
        ("store `v[i] += ..`", &|s| s.contains("] += ")),
        ("store in a loop over the indices", &|s| {
            s.lines().any(|l| {
                l.starts_with("        ")
                    && ["[i] ", "[j] ", "[l] "].iter().any(|i| l.contains(i))
                    && l.contains("= ")
            })
        }),
        ("`.map(|v| ..).sum::<f64>()`", &|s| {
            s.contains(".iter().map(|") && s.contains(").sum::<f64>()")
        }),
        ("`.map(|v| ..).product::<f64>()`", &|s| {
            s.matches(").product::<f64>()").count() > s.matches(".iter().product::<f64>()").count()
        }),
        ("`.iter().product::<f64>()`", &|s| {
            s.contains(".iter().product::<f64>()")
        }),
        ("`.zip(b.iter())`", &|s| {
            s.contains(".zip(") && s.contains(".iter())")
        }),
        ("`.zip(b)`", &|s| {
            s.split(".zip(")
                .skip(1)
                .any(|r| !r.split(')').next().unwrap_or("").contains('.'))
        }),
        ("`.enumerate().map(|(i, v)| ..)`", &|s| {
            s.contains(".enumerate().map(|(")
        }),
        ("`(0..n).map(|i| ..)`", &|s| {
            s.contains(").map(|") && s.contains("(0..")
        }),
        ("`.fold(init, |acc, &v| ..)`", &|s| {
            s.contains(".fold(") && s.contains(", &")
        }),
        ("`.rev().fold(..)`", &|s| s.contains(".rev().fold(")),
        ("`.copied()`", &|s| s.contains(".copied()")),
        ("`.fold(f64::NEG_INFINITY, f64::max)`", &|s| {
            s.contains("f64::NEG_INFINITY, f64::max)")
        }),
        ("`.fold(f64::INFINITY, f64::min)`", &|s| {
            s.contains("f64::INFINITY, f64::min)")
        }),
        ("`.max_by(..).unwrap_or(..)`", &|s| {
            s.contains(".max_by(|p, q|")
        }),
        ("`.min_by(..).unwrap_or(..)`", &|s| {
            s.contains(".min_by(|p, q|")
        }),
        ("closure with a block body", &|s| {
            s.contains(
                "| {
",
            )
        }),
        ("closure shadowing an outer variable", &|s| {
            ["x", "y", "z"].iter().any(|x| {
                [
                    format!("|{x}|"),
                    format!("|&{x}|"),
                    format!("|({x}, "),
                    format!(", {x})|"),
                    format!("|{x}, "),
                ]
                .iter()
                .any(|p| s.contains(p.as_str()))
            })
        }),
        ("`.collect()` into `Vec<f64>`", &|s| {
            s.contains(".collect()")
        }),
        ("`.collect::<Vec<f64>>()`", &|s| {
            s.contains(".collect::<Vec<f64>>()")
        }),
        // Fixed-array parameters are the rarer kinds: counted together.
        ("copy `let mut s = x;` or `*x`", &|s| {
            s.contains(" = *") || s.lines().any(copies_by_value)
        }),
        ("`.to_vec()`", &|s| s.contains(".to_vec();")),
        ("`.clone()`", &|s| s.contains(".clone();")),
        ("`.to_owned()`", &|s| s.contains(".to_owned();")),
        ("shadowing copy `let w = w.to_vec();`", &|s| {
            ["w", "xs"].iter().any(|w| {
                [".to_vec();", ".clone();", ".to_owned();"]
                    .iter()
                    .any(|m| s.contains(&format!("{w} = {w}{m}")))
            })
        }),
        ("store into a copy or collected vector", &|s| {
            stores_into_new_vector(s)
        }),
        ("`Vec::with_capacity(n)` + `push`", &|s| {
            s.contains("Vec::with_capacity(") && s.contains(".push(")
        }),
        ("`while` on a reduction", &|s| {
            s.lines()
                .any(|l| l.trim_start().starts_with("while ") && l.contains(".iter()"))
        }),
        ("`.iter().any(|v| ..)`", &|s| s.contains(".iter().any(|")),
        ("`.filter(..).count() as f64`", &|s| {
            s.contains(".count() as f64")
        }),
        ("helper", &|s| s.contains("fn g1(")),
        ("two helpers", &|s| s.contains("fn g2(")),
        ("helper taking `&[f64]`", &|s| {
            s.lines()
                .any(|l| l.starts_with("fn g") && l.contains("&[f64]"))
        }),
        ("helper called twice", &|s| helper_calls(s) >= 2),
        ("helper called in a loop or branch", &|s| {
            s.lines()
                .any(|l| l.starts_with("        ") && (l.contains("g1(") || l.contains("g2(")))
        }),
        ("path form `f64::m(..)`", &|s| {
            s.contains("f64::") && !s.contains("consts")
        }),
        ("literal receiver `2.0_f64.m()`", &|s| s.contains("_f64.")),
        ("settings parameter `cfg: &Cfg`", &|s| {
            main_signature(s).contains("cfg: &Cfg")
        }),
        ("settings parameter `cfg: Cfg` (a `Copy` struct)", &|s| {
            main_signature(s).contains("cfg: Cfg")
        }),
        ("`cfg.scale`", &|s| s.contains("cfg.scale")),
        ("`cfg.n` as a loop bound", &|s| {
            for_lines(s).any(|l| l.contains("cfg.n"))
        }),
        ("`cfg.w[k]`", &|s| s.contains("cfg.w[")),
        ("`for i in 0..cfg.w.len()`", &|s| {
            for_lines(s).any(|l| l.contains("cfg.w.len()"))
        }),
        ("helper taking `cfg`", &|s| {
            s.lines()
                .any(|l| l.starts_with("fn g") && l.contains("cfg: "))
        }),
        ("`cfg` passed on to a helper", &|s| {
            s.lines()
                .any(|l| !l.starts_with("fn ") && (l.contains(", cfg)") || l.contains("(cfg)")))
        }),
        ("a struct's array field passed to a helper", &|s| {
            s.contains("(&cfg.w")
                || s.contains(", &cfg.w")
                || s.contains("&self.c,")
                || s.contains("&self.c)")
        }),
        ("method `&self`", &|s| s.contains("fn f(&self")),
        ("method `self` by value", &|s| s.contains("fn f(self")),
        ("`self.k`", &|s| s.contains("self.k")),
        ("`self.m` as a loop bound", &|s| {
            for_lines(s).any(|l| l.contains("self.m"))
        }),
        ("`self.c[k]`", &|s| s.contains("self.c[")),
        ("`#[derive(gradmacro::Differentiable)]`", &|s| {
            s.contains("gradmacro::Differentiable)]")
        }),
        ("`wrt(cfg, ..)`", &|s| {
            s.lines()
                .any(|l| l.contains("wrt(") && (l.contains("(cfg") || l.contains(", cfg")))
        }),
        ("`wrt(self, ..)`", &|s| {
            s.lines()
                .any(|l| l.contains("wrt(") && (l.contains("(self") || l.contains(", self")))
        }),
        ("a struct alone in `wrt(..)`", &|s| {
            [
                "wrt(cfg))]",
                "wrt(self))]",
                "wrt(self, cfg))]",
                "wrt(cfg, self))]",
            ]
            .iter()
            .any(|w| s.contains(w))
        }),
        ("`Copy` struct in `wrt(..)`", &|s| {
            s.contains("#[derive(Clone, Copy, gradmacro::Differentiable)]")
        }),
        ("method taking `cfg` too", &|s| {
            s.contains("fn f(&self") && main_signature(s).contains("cfg: ")
                || s.contains("fn f(self") && main_signature(s).contains("cfg: ")
        }),
        ("helper writing into `out: &mut [f64]`", &|s| {
            s.contains("out: &mut [f64]")
        }),
        ("a buffer lent whole, `&mut ob)`", &|s| {
            s.contains("&mut ob)")
        }),
        ("a buffer's range lent, `&mut ob[a..b]`", &|s| {
            s.contains("&mut ob[")
        }),
        ("an output helper called twice", &|s| {
            s.matches("    h1(").count() >= 2
        }),
        ("an output helper over `w[..]`", &|s| {
            s.contains("out: &mut [f64]") && s.contains("w: &[f64], out")
        }),
        ("`if let Some(m) = ..checked_sub(..)`", &|s| {
            s.contains("if let Some(")
        }),
        ("`match ..checked_sub(..)`", &|s| s.contains("match ")),
        ("a guarded arm `Some(m) if m > ..`", &|s| {
            s.lines().any(|l| l.contains("Some(") && l.contains(" if "))
        }),
        ("a pattern on an array's length", &|s| {
            s.contains(".len().checked_sub(")
        }),
        ("`let Some(m) = .. else { return .. };`", &|s| {
            s.lines()
                .any(|l| l.contains("let Some(") && l.ends_with(" else {"))
        }),
        ("`for v in w.iter().filter(..)`", &|s| {
            s.lines()
                .any(|l| l.trim_start().starts_with("for ") && l.contains(".filter(|fv|"))
        }),
        ("an arm reading `m as f64`", &|s| {
            ["m as f64", "rest as f64", "prev as f64"]
                .iter()
                .any(|m| s.contains(m))
        }),
        ("names the macro also uses", &|s| {
            [
                "out", "t1", "d_x", "d_out", "tape_s", "iters1", "value", "s_1",
            ]
            .iter()
            .any(|n| s.contains(&format!("let {n} ")) || s.contains(&format!("{n}: f64")))
        }),
    ];
    let methods = [
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "exp",
        "exp2",
        "exp_m1",
        "ln",
        "ln_1p",
        "log",
        "log2",
        "log10",
        "sqrt",
        "cbrt",
        "powi",
        "powf",
        "hypot",
        "abs",
        "recip",
        "mul_add",
        "max",
        "min",
        "clamp",
        "signum",
        "floor",
        "ceil",
        "round",
        "trunc",
        "fract",
        "to_degrees",
        "to_radians",
    ];
    let sources: Vec<String> = (0..1000)
        .map(|i| gen::program(gen::program_seed(i)).unwrap().source())
        .collect();
    let new = sources.iter().filter(|s| uses_arrays_or_calls(s)).count();
    let iterating = sources
        .iter()
        .filter(|s| uses_iterator_forms(&difftest::views::coverage::without_views(s)))
        .count();
    let mut table = String::new();
    let mut rare = Vec::new();
    let mut count = |name: String, has: &dyn Fn(&str) -> bool| {
        let n = sources.iter().filter(|s| has(s)).count();
        writeln!(table, "{n:5} / 1000  {name}").unwrap();
        if n < 10 {
            rare.push(name);
        }
    };
    for (name, has) in constructs {
        count(name.to_string(), has);
    }
    for (name, has) in difftest::views::coverage::coverage() {
        count(name.to_string(), &has);
    }
    for m in methods {
        let method = format!(".{m}(");
        let path = format!("f64::{m}(");
        count(format!("`{m}`"), &|s: &str| {
            s.contains(&method) || s.contains(&path)
        });
    }
    writeln!(table, "{new:5} / 1000  arrays, buffers or calls").unwrap();
    writeln!(
        table,
        "{iterating:5} / 1000  closures, collections or copies"
    )
    .unwrap();
    println!("{table}");
    assert!(
        rare.is_empty(),
        "rare in the generated programs: {rare:?}\n{table}"
    );
    assert!(
        (250..=450).contains(&new),
        "arrays, buffers or calls in {new} of 1000 programs, not about a third\n{table}"
    );
    assert!(
        (150..=250).contains(&iterating),
        "closures, collections or copies in {iterating} of 1000 programs, not about a fifth\n{table}"
    );
}

/// The line `fn f(..) -> f64 {` of a program (its helpers come first;
/// a method is indented in its `impl` block).
fn main_signature(s: &str) -> &str {
    s.lines()
        .map(str::trim_start)
        .find(|l| l.starts_with("fn f("))
        .unwrap_or("")
}

/// The `for` lines, without their indentation.
fn for_lines(s: &str) -> impl Iterator<Item = &str> {
    s.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("for "))
}

/// Calls of helpers (not their definitions).
fn helper_calls(s: &str) -> usize {
    s.lines()
        .filter(|l| !l.starts_with("fn "))
        .map(|l| l.matches("g1(").count() + l.matches("g2(").count())
        .sum()
}

/// The program without its struct definitions (whose array fields are
/// not the arrays counted here).
fn without_structs(s: &str) -> String {
    let mut out = String::new();
    let mut in_struct = false;
    for l in s.lines() {
        if l.starts_with("struct ") {
            in_struct = true;
        }
        if !in_struct {
            out.push_str(l);
            out.push('\n');
        }
        if l == "}" {
            in_struct = false;
        }
    }
    out
}

fn uses_arrays_or_calls(s: &str) -> bool {
    let s = &difftest::views::coverage::without_views(&without_out_buffers(&without_structs(s)));
    s.contains("f64]") || s.contains("Vec<f64>") || s.contains("vec![") || s.contains("fn g1(") || {
        s.lines()
            .any(|l| l.trim_start().starts_with("let ") && l.contains(" = ["))
    }
}

/// `s` without its output buffer (the helper `h1`, the buffer `ob` and the
/// calls filling it), drawn apart from the arrays and calls.
fn without_out_buffers(s: &str) -> String {
    let mut out = String::new();
    let mut in_h1 = false;
    for l in s.lines() {
        if l.starts_with("fn h1(") {
            in_h1 = true;
        }
        let t = l.trim_start();
        if !in_h1 && !t.starts_with("let mut ob ") && !t.starts_with("h1(") {
            out.push_str(l);
            out.push('\n');
        }
        if in_h1 && l == "}" {
            in_h1 = false;
        }
    }
    out
}

/// Closures, `collect`, copies of arrays, `push`, products, `any`, `count`.
fn uses_iterator_forms(s: &str) -> bool {
    [
        ".map(|",
        ".fold(",
        ".any(|",
        ".filter(|",
        ".product::<f64>()",
        ".to_vec()",
        ".clone()",
        ".to_owned()",
        ".push(",
    ]
    .iter()
    .any(|f| s.contains(f))
        || s.lines().any(|l| l.contains(" = *") || copies_by_value(l))
}

/// `let s = w;`: a copy of an array (by the names arrays have).
fn copies_by_value(l: &str) -> bool {
    let l = l.trim_start();
    l.starts_with("let ")
        && ["w", "xs", "buf", "vs", "cells", "tmp", "vals"]
            .iter()
            .any(|a| l.ends_with(&format!(" = {a};")))
}

/// `v[k] = ..` (or `+=`...) into a vector made by `collect`, a copy or
/// `push`.
fn stores_into_new_vector(s: &str) -> bool {
    let made: Vec<&str> = s
        .lines()
        .map(str::trim_start)
        .filter(|l| {
            l.starts_with("let ")
                && [
                    ".collect",
                    ".to_vec()",
                    ".clone()",
                    ".to_owned()",
                    "with_capacity",
                    " = *",
                ]
                .iter()
                .any(|m| l.contains(m))
        })
        .filter_map(|l| {
            l.trim_start_matches("let ")
                .trim_start_matches("mut ")
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .next()
        })
        .collect();
    s.lines().map(str::trim_start).any(|l| {
        made.iter()
            .any(|v| l.starts_with(&format!("{v}[")) && l.contains("] "))
    })
}
