//! Run-time benchmark of gradmacro's generated gradients against the function
//! itself, hand-written gradients, num-dual (forward mode) and
//! RustQuant_autodiff (a tape), on one table.
//!
//! ```sh
//! cargo bench --bench gradients            # check, time, print, write benches/RESULTS.md
//! cargo bench --bench gradients -- Ackley  # only the workloads whose name contains "Ackley"
//! cargo test --bench gradients             # only the checks (no timing)
//! ```
//!
//! A `harness = false` binary with its own timing loop (see `timing.rs`), so
//! that all columns of a workload are measured in interleaved rounds and land
//! side by side in one table.

mod check;
mod functions;
mod gmm;
mod hand;
mod mgh;
mod modes;
mod report;
mod straight_line;
mod timing;
mod workloads;

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes `--bench`; `cargo test` does not: then only check.
    let time = args.iter().any(|a| a == "--bench");
    let filter: Vec<String> = args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .cloned()
        .collect();
    let mut runner = workloads::Runner {
        cfg: timing::Config::from_env(),
        time,
        filter: filter.clone(),
        rows: Vec::new(),
        checked: 0,
    };
    let start = Instant::now();
    workloads::all(&mut runner);
    let modes = modes::all(&runner.cfg, time, &filter);
    if !time {
        println!("{} passed, 0 failed", runner.checked);
        return;
    }
    let compile = report::compile_section();
    let mut md = report::render(&runner.rows, start.elapsed(), &compile, &runner.cfg);
    md.push_str(&modes::render(&modes));
    println!("\n{md}");
    if filter.is_empty() {
        match report::write_results(&md, &compile) {
            Ok(()) => eprintln!("wrote {}", report::results_path().display()),
            Err(e) => eprintln!("could not write {}: {e}", report::results_path().display()),
        }
    } else {
        eprintln!(
            "a filtered run: {} left as it was",
            report::results_path().display()
        );
    }
}
