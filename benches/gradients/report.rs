//! The results table, the targets, and `benches/RESULTS.md`.

use crate::timing::{Config, Stats};
use crate::workloads::{Kind, Row};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where the results go.
pub fn results_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/RESULTS.md")
}

/// Everything from this line on belongs to `scripts/compile_time.sh`.
const COMPILE_TIME_MARKER: &str =
    "<!-- compile-time section: written by scripts/compile_time.sh -->";
/// The compile-time section records the expansion time of the
/// 2,000-statement function on a line starting with this.
const EXPAND_MARKER: &str = "<!-- expand-2000-ms:";
/// The first cell of the expansion target's row (the script rewrites it).
pub const EXPAND_ROW: &str = "| Expansion of a 2,000-statement function";

/// A time per call with three significant digits and a unit.
pub fn time(seconds: f64) -> String {
    let (v, unit) = if seconds < 1e-6 {
        (seconds * 1e9, "ns")
    } else if seconds < 1e-3 {
        (seconds * 1e6, "µs")
    } else if seconds < 1.0 {
        (seconds * 1e3, "ms")
    } else {
        (seconds, "s")
    };
    if v < 10.0 {
        format!("{v:.2} {unit}")
    } else if v < 100.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.0} {unit}")
    }
}

fn ratio(r: f64) -> String {
    if r < 10.0 {
        format!("{r:.2}")
    } else if r < 100.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.0}")
    }
}

/// A time, or "–" for a column that was not run.
fn time_or_dash(s: Option<Stats>) -> String {
    s.map_or_else(|| "–".to_string(), |s| time(s.median))
}

/// `a / b`, or "–" for a column that was not run.
fn ratio_or_dash(r: Option<f64>) -> String {
    r.map_or_else(|| "–".to_string(), ratio)
}

/// `None` for no figures (a column run on none of the workloads).
fn geomean(xs: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (sum, n) = xs
        .into_iter()
        .fold((0.0, 0usize), |(s, n), x| (s + x.ln(), n + 1));
    (n > 0).then(|| (sum / n as f64).exp())
}

fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// CPU model and core count from `/proc/cpuinfo`.
pub fn machine() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or("unknown CPU", str::trim)
        .to_string();
    let logical = info.lines().filter(|l| l.starts_with("processor")).count();
    let available = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{model}, {logical} logical cores ({available} available to this process)")
}

/// `YYYY-MM-DD HH:MM UTC`, from the system clock.
pub fn date() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

fn rustc() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    command_output(&rustc, &["--version"]).unwrap_or_else(|| "rustc (version unknown)".into())
}

fn commit() -> String {
    let dir = env!("CARGO_MANIFEST_DIR");
    match command_output("git", &["-C", dir, "rev-parse", "--short", "HEAD"]) {
        Some(hash) => {
            let dirty = command_output(
                "git",
                &["-C", dir, "status", "--porcelain", "--untracked-files=no"],
            )
            .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{hash} with uncommitted changes")
            } else {
                hash
            }
        }
        None => "unknown".into(),
    }
}

fn status(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "**missed**"
    }
}

/// The expansion time recorded by `scripts/compile_time.sh`, if any.
fn recorded_expansion(compile_section: &str) -> Option<f64> {
    let line = compile_section
        .lines()
        .find(|l| l.starts_with(EXPAND_MARKER))?;
    line[EXPAND_MARKER.len()..]
        .trim()
        .trim_end_matches("-->")
        .trim()
        .parse()
        .ok()
}

/// The row with the largest (`max`) or smallest figure.
fn extreme<'a>(it: impl Iterator<Item = (&'a Row, f64)>, max: bool) -> Option<(&'a Row, f64)> {
    it.fold(None, |acc, (r, v)| match acc {
        Some((_, a)) if (max && a >= v) || (!max && a <= v) => acc,
        _ => Some((r, v)),
    })
}

/// The markdown of the run-time section.
pub fn render(rows: &[Row], elapsed: Duration, compile_section: &str, cfg: &Config) -> String {
    let mut md = String::new();
    let w = &mut md;
    let _ = writeln!(w, "## Run time\n");
    let _ = writeln!(w, "- Machine: {}", machine());
    let _ = writeln!(w, "- Date: {}", date());
    let _ = writeln!(w, "- Compiler: {}", rustc());
    let _ = writeln!(w, "- Commit: {}", commit());
    let _ = writeln!(
        w,
        "- Command: `cargo bench --bench gradients` (bench profile = release; this run took {:.0} s after compiling)",
        elapsed.as_secs_f64()
    );
    let _ = writeln!(
        w,
        "- Timing: {}; median over {} interleaved rounds of batches of about {} ms per column (see the notes below)\n",
        cfg.clock.describe(),
        cfg.samples,
        cfg.batch.as_millis()
    );
    let _ = writeln!(
        w,
        "Time per call of each column; the ratios are of these medians, `gm` being gradmacro's `f_grad`.\n"
    );
    let _ = writeln!(
        w,
        "| workload | f | hand | argmin | num-dual | tape | gradmacro | gm/hand | gm/f | num-dual/gm | tape/gm |"
    );
    let _ = writeln!(
        w,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for r in rows {
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.name,
            time(r.f.median),
            time(r.hand.median),
            time_or_dash(r.argmin),
            time_or_dash(r.dual),
            time_or_dash(r.tape),
            time(r.gm.median),
            ratio(r.gm.median / r.hand.median),
            ratio(r.gm.median / r.f.median),
            ratio_or_dash(r.dual.map(|s| s.median / r.gm.median)),
            ratio_or_dash(r.tape.map(|s| s.median / r.gm.median)),
        );
    }
    // NaN only in a filtered run that selects none of these workloads.
    let g_hand = geomean(rows.iter().map(|r| r.gm.median / r.hand.median)).unwrap_or(f64::NAN);
    let g_f = geomean(rows.iter().map(|r| r.gm.median / r.f.median)).unwrap_or(f64::NAN);
    // Over the workloads where the column was run.
    let g_dual = geomean(
        rows.iter()
            .filter_map(|r| Some(r.dual?.median / r.gm.median)),
    );
    let g_tape = geomean(
        rows.iter()
            .filter_map(|r| Some(r.tape?.median / r.gm.median)),
    );
    let _ = writeln!(
        w,
        "| **geometric mean** | | | | | | | **{}** | **{}** | **{}** | **{}** |\n",
        ratio(g_hand),
        ratio(g_f),
        ratio_or_dash(g_dual),
        ratio_or_dash(g_tape)
    );

    // The noise of the figures.
    let (spread, at) = rows
        .iter()
        .flat_map(|r| {
            [
                ("f", Some(r.f)),
                ("hand", Some(r.hand)),
                ("argmin", r.argmin),
                ("num-dual", r.dual),
                ("tape", r.tape),
                ("gradmacro", Some(r.gm)),
            ]
            .into_iter()
            .filter_map(move |(c, s)| Some((s?.spread, format!("{}, {c}", r.name))))
        })
        .fold((0.0, String::new()), |a, b| if b.0 > a.0 { b } else { a });
    let _ = writeln!(
        w,
        "Largest interquartile range of any time above: {:.1}% of its median ({at}).\n",
        100.0 * spread
    );

    // Targets.
    let _ = writeln!(w, "### Targets\n");
    let _ = writeln!(w, "| target | figure | status |");
    let _ = writeln!(w, "| --- | --- | --- |");
    let _ = writeln!(
        w,
        "| gradmacro/hand-written, geometric mean ≤ 1.10 | {} | {} |",
        ratio(g_hand),
        status(g_hand <= 1.10)
    );
    if let Some((r, v)) = extreme(rows.iter().map(|r| (r, r.gm.median / r.hand.median)), true) {
        let _ = writeln!(
            w,
            "| gradmacro/hand-written, worst ≤ 1.5 | {} ({}) | {} |",
            ratio(v),
            r.name,
            status(v <= 1.5)
        );
    }
    if let Some((r, v)) = extreme(
        rows.iter()
            .filter(|r| r.inputs >= 10)
            .map(|r| (r, r.gm.median / r.f.median)),
        true,
    ) {
        let _ = writeln!(
            w,
            "| gradmacro gradient/function ≤ 4 on every workload with ≥ 10 inputs | worst {} ({}) | {} |",
            ratio(v),
            r.name,
            status(v <= 4.0)
        );
    }
    let _ = writeln!(
        w,
        "| gradmacro gradient/function, geometric mean ≤ 3 | {} | {} |",
        ratio(g_f),
        status(g_f <= 3.0)
    );
    let n100 = |r: &&Row| r.kind == Kind::NDim(100);
    if let Some((r, v)) = extreme(
        rows.iter()
            .filter(n100)
            .filter_map(|r| Some((r, r.dual?.median / r.gm.median))),
        false,
    ) {
        let _ = writeln!(
            w,
            "| num-dual/gradmacro ≥ 10 at n = 100 | lowest {} ({}) | {} |",
            ratio(v),
            r.name,
            status(v >= 10.0)
        );
    }
    let gmm = |r: &&Row| r.kind == Kind::Gmm { d: 10, k: 25 };
    if let Some(r) = rows.iter().find(gmm) {
        let v = r.gm.median / r.hand.median;
        let _ = writeln!(
            w,
            "| gradmacro/hand-written ≤ 1.5 on GMM at d = 10, k = 25 | {} | {} |",
            ratio(v),
            status(v <= 1.5)
        );
        let v = r.gm.median / r.f.median;
        let _ = writeln!(
            w,
            "| gradmacro gradient/function ≤ 4 on GMM at d = 10, k = 25 | {} | {} |",
            ratio(v),
            status(v <= 4.0)
        );
    }
    if let Some(g_tape) = g_tape {
        let _ = writeln!(
            w,
            "| tape/gradmacro, geometric mean ≥ 5 | {} | {} |",
            ratio(g_tape),
            status(g_tape >= 5.0)
        );
    }
    let _ = match recorded_expansion(compile_section) {
        Some(ms) => writeln!(
            w,
            "{EXPAND_ROW} < 200 ms | {ms:.1} ms (scripts/compile_time.sh) | {} |",
            status(ms < 200.0)
        ),
        None => writeln!(
            w,
            "{EXPAND_ROW} < 200 ms | not measured: run scripts/compile_time.sh | - |"
        ),
    };
    let _ = writeln!(w);
    let _ = write!(w, "{}", NOTES);
    md
}

const NOTES: &str = "\
### What the columns are

- **f**: the function itself, exactly as it is written under `#[differentiate]`.
- **hand**: value and the fastest hand-written gradient we could write, in
  `benches/gradients/`: a fused pass computing the value and the gradient
  together where one exists, allocating nothing but the returned gradient (`hand.rs` for
  Rosenbrock, Rastrigin, Ackley and Beale, `mgh.rs` for the extended Powell and
  Broyden tridiagonal functions; Ackley takes two passes, since every entry
  needs both of its sums; the straight-line function's is generated as a
  textbook adjoint). Each is checked against central finite differences on
  every run.
- **argmin**: for the four test functions that `argmin_testfunctions` 0.3
  ships, its function and its hand-derived `*_derivative`, called one after
  the other as a user of that crate does (`rosenbrock_derivative_const` for the
  2-D case); checked against the hand column like every other.
- **extended Powell, Broyden tridiagonal**: problems 22 and 30 of Moré, Garbow and
  Hillstrom (1981), each the sum of its squared residuals, written under
  `#[differentiate]` as index loops over a `&[f64]` (Broyden's neighbours as
  `if i > 0 { x[i - 1] } else { 0.0 }`), at n = 100 seeded points in [−2, 2).
- **GMM**: the Gaussian mixture model objective of ADBench (`benches/gradients/gmm.rs`,
  the code of `tests/gmm.rs`: views of the parameter slices, helpers writing into
  output buffers, a constant Wishart prior with γ = 1, m = 0), on 1,000 seeded points,
  differentiated with respect to the weights, means and inverse covariance factors
  (30 entries at d = 2, k = 5; 1,650 at d = 10, k = 25). Its hand-written gradient is
  one fused pass over points and components (softmax weights per point, the means'
  gradient as `Qᵀ Σ r y` once per component); it is checked against central finite
  differences on every run (at d = 10, k = 25 on 5 points, where differences over
  1,650 parameters are cheap), as is gradmacro's against it. num-dual and the tape
  are not run on GMM (a dash in the table): at these sizes they take seconds per call; the geometric
  means of their columns are over the other workloads.
- **num-dual**: num-dual 0.15's `gradient` helper, its recommended API for
  gradients: `SVector<DualSVec64<N>, N>` when the size is known at compile time
  (2-D functions, the 8-input straight-line function), `DVector<DualDVec64>`
  otherwise; `first_derivative` for the one-variable seed. Forward mode carries
  one derivative slot per input through every operation, so its cost grows with
  n times the function's.
- **tape**: RustQuant_autodiff 0.4 (reverse mode on a Wengert list, `Graph`).
  One graph per workload, cleared at the start of each call so its storage is
  reused; the inputs are recorded, the function runs on `Variable`s, then
  `accumulate` and `wrt` read the gradient.
  Of the tape-based reverse-mode crates on crates.io it is the most credible
  maintained one for scalar code: part of the RustQuant project, released in 2026,
  a plain Wengert list with a `Copy` variable type. Also considered: easy-ml 2.3
  (`Record` on a `RefCell` Wengert list, about as fast; reverse mode is a side
  feature of a matrix library), echidna 0.15 (an Adept-style thread-local tape,
  first released in 2026, about twice as slow as RustQuant_autodiff on
  Rosenbrock in a trial) and reverse 0.2 (unmaintained since 2021).
- **gradmacro**: the generated `f_grad`, returning the value and the gradient
  (a fresh `Vec` for slice parameters, as the hand-written gradients do).

The targets on gradient/function count every workload whose gradient has at
least 10 entries (the n-dimensional functions at n ≥ 10, the dense layer,
Horner's rule and GMM); the geometric means are over every workload.

Before anything is timed, every column's value and gradient are compared with the
hand-written ones (relative 1e-9) and gradmacro's value with `f`'s bit for bit; a
failing check aborts the run. The dense layer's gradient is with respect to its 128
weights and 8 biases (`#[differentiate(wrt(w, b))]`; the 32 samples and their
targets are constants). Horner's rule is differentiated with respect to all 1,000
coefficients and `x` (1,001 entries). The straight-line function is generated by
`scripts/gen_straight_line.py bench 300`.

Timing: each column is warmed up for 20 ms, then batches of repeated calls are
calibrated to about 2 ms; 101 rounds each run one batch of every column of the
workload in turn, and the figure is the median time per call. The clock is the
thread's CPU time, which equals wall time on an idle machine and leaves out the time
the thread spends descheduled on a busy one (`GRADBENCH_CLOCK=wall` for wall time).
Inputs pass through `std::hint::black_box` on every call, and so does every result.
Override with `GRADBENCH_SAMPLES` and `GRADBENCH_BATCH_MS`; `cargo bench --bench gradients -- NAME`
runs only the workloads whose name contains NAME (without writing this file), and
`cargo test --bench gradients` runs only the checks.
";

/// Writes the run-time section, keeping the compile-time section if there is one.
pub fn write_results(runtime: &str, compile_section: &str) -> std::io::Result<()> {
    let mut out = String::from(
        "# Benchmark results\n\n\
         The run-time section is written by `cargo bench --bench gradients`, the\n\
         compile-time section by `scripts/compile_time.sh`; each keeps the other.\n\n",
    );
    out.push_str(runtime);
    out.push('\n');
    if compile_section.is_empty() {
        out.push_str(COMPILE_TIME_MARKER);
        out.push_str("\n\n## Compile time\n\nNot measured yet: run `scripts/compile_time.sh`.\n");
    } else {
        out.push_str(compile_section);
    }
    std::fs::write(results_path(), out)
}

/// The compile-time section of the current `RESULTS.md`, marker included.
pub fn compile_section() -> String {
    let text = std::fs::read_to_string(results_path()).unwrap_or_default();
    text.find(COMPILE_TIME_MARKER)
        .map(|i| text[i..].to_string())
        .unwrap_or_default()
}
