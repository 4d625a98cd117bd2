//! Minimising a function with argmin's L-BFGS, its gradient from `#[differentiate]`.
//!
//! Run with `cargo run --release --example argmin` (the `argmin` feature of
//! gradmacro-runtime supplies the adapter).
//!
//! The function is the 10-dimensional Rosenbrock function
//! `sum_i scale (x[i+1] - x[i]^2)^2 + (1 - x[i])^2`, minimal at `x = (1, .., 1)`.
//! `scale` is data, not a variable: `wrt(x)` leaves it out of the gradient,
//! and the closures handed to argmin capture it.

use argmin::core::{Executor, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use gradmacro::differentiate;
use gradmacro_runtime::argmin::Problem;
use std::cell::Cell;

/// The Rosenbrock function with its coupling weight as a parameter.
#[differentiate(wrt(x))]
fn rosen(x: &[f64], scale: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        let a = x[i + 1] - x[i] * x[i];
        let b = 1.0 - x[i];
        s += scale * a * a + b * b;
    }
    s
}

fn main() {
    let scale = 100.0;
    let start: Vec<f64> = (0..10)
        .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
        .collect();

    // Counters of how often argmin made each closure run.
    let (costs, gradients) = (Cell::new(0u64), Cell::new(0u64));
    let problem = Problem::new(
        |p: &[f64]| {
            costs.set(costs.get() + 1);
            rosen(p, scale)
        },
        |p: &[f64]| {
            gradients.set(gradients.get() + 1);
            rosen_grad(p, scale)
        },
    );
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7)
        .with_tolerance_grad(1e-12)
        .expect("a positive tolerance")
        .with_tolerance_cost(0.0)
        .expect("a non-negative tolerance");
    let result = Executor::new(problem, solver)
        .configure(|state| state.param(start).max_iters(500).counting(true))
        .run()
        .expect("L-BFGS runs");

    let state = result.state();
    let best = state.get_best_param().expect("a best point");
    let error = best.iter().map(|v| (v - 1.0).abs()).fold(0.0, f64::max);
    let counts = state.get_func_counts();
    println!("L-BFGS on the 10-D Rosenbrock function, from (-1.2, 1, -1.2, ..)");
    println!("stopped: {}", state.get_termination_status());
    println!("iterations: {}", state.get_iter());
    println!("cost: {:.3e}", state.get_best_cost());
    println!("x: {best:.8?}");
    println!("max |x - 1|: {error:.3e}");
    println!(
        "argmin asked for {} costs and {} gradients; the gradient code ran {} times, \
         the cost alone {} times",
        counts.get("cost_count").copied().unwrap_or(0),
        counts.get("gradient_count").copied().unwrap_or(0),
        gradients.get(),
        costs.get()
    );
    assert!(
        error < 1e-5,
        "L-BFGS did not converge: max |x - 1| = {error:e}"
    );
}
