//! gradmacro-runtime's argmin adapter: argmin's solvers converge on gradients
//! from `#[differentiate]`, and the cache of the last point runs the gradient
//! code once where argmin asks for the cost and then the gradient.

use argmin::core::{CostFunction, Error, Executor, Gradient, Hessian, State};
use argmin::solver::linesearch::condition::ArmijoCondition;
use argmin::solver::linesearch::{BacktrackingLineSearch, MoreThuenteLineSearch};
use argmin::solver::quasinewton::LBFGS;
use argmin::solver::trustregion::{Steihaug, TrustRegion};
use gradmacro::differentiate;
use gradmacro_runtime::argmin::Problem;
use std::cell::Cell;

/// Rosenbrock's function, its coupling weight as data.
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

/// The hand-written Hessian of two-dimensional `rosen`, with its value and
/// gradient: Hessians do not come from the macro yet.
fn rosen2_hessian(p: &[f64], scale: f64) -> (f64, Vec<f64>, Vec<Vec<f64>>) {
    let (x, y) = (p[0], p[1]);
    let (value, grad) = rosen_grad(p, scale);
    let h = vec![
        vec![2.0 - 4.0 * scale * (y - 3.0 * x * x), -4.0 * scale * x],
        vec![-4.0 * scale * x, 2.0 * scale],
    ];
    (value, grad, h)
}

fn start(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
        .collect()
}

fn max_error(x: &[f64]) -> f64 {
    x.iter().map(|v| (v - 1.0).abs()).fold(0.0, f64::max)
}

/// The adapter one would write first around `f_grad` alone: every `cost`
/// and every `gradient` call runs the gradient code.
struct Uncached<G> {
    value_and_grad: G,
}

impl<G: Fn(&[f64]) -> (f64, Vec<f64>)> CostFunction for Uncached<G> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, p: &Vec<f64>) -> Result<f64, Error> {
        Ok((self.value_and_grad)(p).0)
    }
}

impl<G: Fn(&[f64]) -> (f64, Vec<f64>)> Gradient for Uncached<G> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, p: &Vec<f64>) -> Result<Vec<f64>, Error> {
        Ok((self.value_and_grad)(p).1)
    }
}

#[test]
fn lbfgs_converges_and_the_cache_halves_the_gradient_runs() {
    let scale = 100.0;
    let lbfgs = || {
        LBFGS::new(MoreThuenteLineSearch::new(), 7)
            .with_tolerance_grad(1e-12)
            .unwrap()
            .with_tolerance_cost(0.0)
            .unwrap()
    };

    let (costs, grads) = (Cell::new(0u64), Cell::new(0u64));
    let cost = |p: &[f64]| {
        costs.set(costs.get() + 1);
        rosen(p, scale)
    };
    let value_and_grad = |p: &[f64]| {
        grads.set(grads.get() + 1);
        rosen_grad(p, scale)
    };

    let cached = Executor::new(Problem::new(cost, value_and_grad), lbfgs())
        .configure(|s| s.param(start(10)).max_iters(500).counting(true))
        .run()
        .unwrap();
    let (cached_costs, cached_grads) = (costs.replace(0), grads.replace(0));
    let uncached = Executor::new(Uncached { value_and_grad }, lbfgs())
        .configure(|s| s.param(start(10)).max_iters(500).counting(true))
        .run()
        .unwrap();
    let uncached_grads = grads.get();

    let best = cached.state().get_best_param().unwrap();
    assert!(max_error(best) < 1e-5, "{best:?}");
    // The value from `rosen_grad` is bit-identical to `rosen`'s, so the cache
    // changes no number argmin sees: both runs take the same path.
    assert_eq!(cached.state().get_iter(), uncached.state().get_iter());
    assert_eq!(best, uncached.state().get_best_param().unwrap());

    let asked = cached.state().get_func_counts();
    let (asked_costs, asked_grads) = (asked["cost_count"], asked["gradient_count"]);
    assert_eq!(uncached_grads, asked_costs + asked_grads);
    // One run of the gradient code per point argmin visits, where the
    // uncached problem runs it at every call.
    eprintln!(
        "argmin asked for {asked_costs} costs and {asked_grads} gradients; the gradient code \
         ran {cached_grads} times with the cache, {uncached_grads} times without"
    );
    assert_eq!(cached_costs, 0);
    assert_eq!(cached_grads, asked_costs);
    assert!(
        2 * cached_grads <= uncached_grads,
        "cached: {cached_grads} gradient runs, uncached: {uncached_grads}"
    );
}

#[test]
fn cost_at_a_point_then_gradient_there_runs_the_gradient_code_once() {
    let (costs, grads) = (Cell::new(0), Cell::new(0));
    let problem = Problem::new(
        |p: &[f64]| {
            costs.set(costs.get() + 1);
            rosen(p, 100.0)
        },
        |p: &[f64]| {
            grads.set(grads.get() + 1);
            rosen_grad(p, 100.0)
        },
    );
    let p = vec![0.5, 0.25, -1.0];
    let value = problem.cost(&p).unwrap();
    let gradient = problem.gradient(&p).unwrap();
    assert_eq!((value, gradient), rosen_grad(&p, 100.0));
    assert_eq!(problem.cost(&p).unwrap(), value);
    assert_eq!((costs.get(), grads.get()), (0, 1));

    // A gradient computed with the cost and never asked for: from then on
    // the cost alone is computed at a new point ...
    let q = vec![1.0, 2.0, 3.0];
    let r = vec![-1.0, 0.0, 1.0];
    assert_eq!(problem.cost(&q).unwrap(), rosen(&q, 100.0));
    assert_eq!(problem.cost(&r).unwrap(), rosen(&r, 100.0));
    assert_eq!((costs.get(), grads.get()), (1, 2));
    // ... until the gradient is asked for where only the cost was computed.
    assert_eq!(problem.gradient(&r).unwrap(), rosen_grad(&r, 100.0).1);
    assert_eq!(problem.cost(&q).unwrap(), rosen(&q, 100.0));
    assert_eq!((costs.get(), grads.get()), (1, 4));
}

#[test]
fn a_line_search_that_rejects_points_gets_the_cost_alone_there() {
    // Backtracking with the Armijo condition asks for the cost at every trial
    // step and for the gradient only at the step it accepts.
    let scale = 100.0;
    let (costs, grads) = (Cell::new(0u64), Cell::new(0u64));
    let problem = Problem::new(
        |p: &[f64]| {
            costs.set(costs.get() + 1);
            rosen(p, scale)
        },
        |p: &[f64]| {
            grads.set(grads.get() + 1);
            rosen_grad(p, scale)
        },
    );
    let linesearch = BacktrackingLineSearch::new(ArmijoCondition::new(1e-4).unwrap());
    let solver = LBFGS::new(linesearch, 7)
        .with_tolerance_grad(1e-10)
        .unwrap();
    let result = Executor::new(problem, solver)
        .configure(|s| s.param(start(4)).max_iters(2000).counting(true))
        .run()
        .unwrap();
    assert!(max_error(result.state().get_best_param().unwrap()) < 1e-5);
    let asked = result.state().get_func_counts();
    let (asked_costs, asked_grads) = (asked["cost_count"], asked["gradient_count"]);
    eprintln!(
        "asked: {asked_costs} costs, {asked_grads} gradients; ran: {} costs, {} gradients",
        costs.get(),
        grads.get()
    );
    // The cost alone where the gradient went unused, and fewer runs in all
    // than calls argmin made.
    assert!(costs.get() > 0, "the cost closure was never used");
    assert!(costs.get() + grads.get() < asked_costs + asked_grads);
}

#[test]
fn a_trust_region_uses_the_hand_written_hessian() {
    let scale = 100.0;
    let (costs, grads, hessians) = (Cell::new(0u64), Cell::new(0u64), Cell::new(0u64));
    let problem = Problem::new(
        |p: &[f64]| {
            costs.set(costs.get() + 1);
            rosen(p, scale)
        },
        |p: &[f64]| {
            grads.set(grads.get() + 1);
            rosen_grad(p, scale)
        },
    )
    .with_hessian(|p: &[f64]| {
        hessians.set(hessians.get() + 1);
        rosen2_hessian(p, scale)
    });

    let p = vec![0.3, -0.7];
    let (value, grad, h) = rosen2_hessian(&p, scale);
    assert_eq!(problem.hessian(&p).unwrap(), h);
    assert_eq!(problem.gradient(&p).unwrap(), grad);
    assert_eq!(problem.cost(&p).unwrap(), value);
    assert_eq!((costs.get(), grads.get(), hessians.get()), (0, 0, 1));
    // The Hessian closure agrees with the gradient it returns.
    let e = 1e-6;
    for j in 0..2 {
        let (mut hi, mut lo) = (p.clone(), p.clone());
        hi[j] += e;
        lo[j] -= e;
        let (g_hi, g_lo) = (rosen_grad(&hi, scale).1, rosen_grad(&lo, scale).1);
        for (row, (a, b)) in h.iter().zip(g_hi.iter().zip(&g_lo)) {
            let fd = (a - b) / (2.0 * e);
            assert!((fd - row[j]).abs() < 1e-5 * (1.0 + row[j].abs()));
        }
    }

    let solver = TrustRegion::new(Steihaug::new().with_max_iters(20));
    let result = Executor::new(problem, solver)
        .configure(|s| s.param(vec![-1.2, 1.0]).max_iters(200).counting(true))
        .run()
        .unwrap();
    let state = result.state();
    assert!(max_error(state.get_best_param().unwrap()) < 1e-5);
    let asked = state.get_func_counts();
    let ran = costs.get() + grads.get() + hessians.get();
    eprintln!(
        "asked: {asked:?}; ran: {} costs, {} gradients, {} Hessians",
        costs.get(),
        grads.get(),
        hessians.get()
    );
    // Gradient and Hessian are asked for at the same points: one run of the
    // Hessian closure serves both.
    assert!(ran < asked["cost_count"] + asked["gradient_count"] + asked["hessian_count"]);
    assert!(grads.get() + hessians.get() < asked["gradient_count"] + asked["hessian_count"]);
}

#[test]
fn a_problem_of_sync_closures_is_sync() {
    fn sync<T: Sync + Send>(_: &T) {}
    let problem = Problem::new(|p: &[f64]| rosen(p, 1.0), |p: &[f64]| rosen_grad(p, 1.0))
        .with_hessian(|p: &[f64]| rosen2_hessian(p, 1.0));
    sync(&problem);
}
