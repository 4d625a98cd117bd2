//! Classic n-dimensional optimisation test functions written with
//! `#[differentiate]` over `&[f64]`, checked against the hand-written
//! gradients of the `argmin_testfunctions` crate.
//!
//! The oracle is independent of the macro: `argmin_testfunctions` derives
//! every gradient on paper and codes it by hand. Each function here is
//! written in the loop-and-index style a user would write, with the same
//! parameterisation as the crate's default (Rosenbrock `a = 1, b = 100`,
//! Rastrigin `A = 10`, Ackley `a = 20, b = 0.2, c = 2 pi`, Styblinski–Tang
//! `0.5 * sum(x^4 - 16 x^2 + 5 x)`); the values are compared with the crate's
//! too, so a mismatched parameterisation fails before any gradient is looked
//! at.
//!
//! Each function is checked for n = 1, 2, 3, 10, 100 and 1000 at several
//! points drawn from a seeded generator, so that the points are arbitrary
//! but every run sees the same ones. At each point:
//!
//! - `f_grad(x).0` is bit-for-bit `f(x)`;
//! - `f(x)` agrees with the crate's function value;
//! - the gradient agrees with the crate's to a relative tolerance of `1e-10`,
//!   with an absolute floor of `1e-12` times the largest gradient entry (for
//!   entries that cancel to nearly zero); both sides are evaluated in `f64`
//!   by formulas that differ only in rounding, so a wrong derivative term is
//!   off by far more;
//! - `f_adjoint(x, d_out)` is `d_out` times the gradient, and
//!   `f_adjoint_acc` adds the same into a buffer.

mod support;

use argmin_testfunctions as atf;
use gradmacro::differentiate;
use std::f64::consts::PI;
use support::rng::Rng;

/// The dimensions every function is checked in.
const DIMS: [usize; 6] = [1, 2, 3, 10, 100, 1000];
/// Points per dimension.
const POINTS: usize = 4;
/// Relative tolerance between the generated and the hand-written gradient.
const REL: f64 = 1e-10;
/// Absolute floor, as a fraction of the largest entry of the gradient.
const ABS_FRACTION: f64 = 1e-12;
/// Seed passed to every `f_adjoint`: not a power of two.
const D_OUT: f64 = -1.75;

/// `POINTS` points of dimension `n` drawn uniformly from `[lo, hi)^n`; the
/// seed depends on the function's name and `n`, so every run draws the same.
fn points(name: &str, n: usize, lo: f64, hi: f64) -> Vec<Vec<f64>> {
    let seed = name
        .bytes()
        .fold(n as u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
    let mut rng = Rng::new(seed);
    (0..POINTS).map(|_| rng.vec(n, lo, hi)).collect()
}

// ---------------------------------------------------------------------------
// The functions.
// ---------------------------------------------------------------------------

/// Rosenbrock with `a = 1`, `b = 100`: `sum_i (1 - x_i)^2 + 100 (x_{i+1} -
/// x_i^2)^2`; each element is read in two iterations.
#[differentiate]
fn rosenbrock(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        s += (1.0 - x[i]).powi(2) + 100.0 * (x[i + 1] - x[i].powi(2)).powi(2);
    }
    s
}

/// Rastrigin with `A = 10`: `10 n + sum_i (x_i^2 - 10 cos(2 pi x_i))`.
#[differentiate]
fn rastrigin(x: &[f64]) -> f64 {
    let a = 10.0;
    let mut s = 0.0;
    for &xi in x {
        s += xi.powi(2) - a * (2.0 * PI * xi).cos();
    }
    a * x.len() as f64 + s
}

/// Ackley with `a = 20`, `b = 0.2`, `c = 2 pi`:
/// `-a exp(-b sqrt(mean x^2)) - exp(mean cos(c x)) + a + e`.
#[differentiate]
fn ackley(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let mut squares = 0.0;
    let mut cosines = 0.0;
    for xi in x.iter() {
        squares += xi.powi(2);
        cosines += (2.0 * PI * xi).cos();
    }
    -20.0 * (-0.2 * (squares / n).sqrt()).exp() - (cosines / n).exp() + 20.0 + 1.0f64.exp()
}

/// Styblinski–Tang: `0.5 * sum_i (x_i^4 - 16 x_i^2 + 5 x_i)`, built from a
/// local buffer of terms and a `sum` reduction.
#[differentiate]
fn styblinski_tang(x: &[f64]) -> f64 {
    let mut terms = vec![0.0; x.len()];
    for (i, xi) in x.iter().enumerate() {
        terms[i] = xi.powi(4) - 16.0 * xi.powi(2) + 5.0 * xi;
    }
    0.5 * terms.iter().sum::<f64>()
}

// ---------------------------------------------------------------------------
// The comparison.
// ---------------------------------------------------------------------------

/// The generated functions of one test function, as function pointers.
struct Generated {
    f: fn(&[f64]) -> f64,
    grad: fn(&[f64]) -> (f64, Vec<f64>),
    adjoint: fn(&[f64], f64) -> Vec<f64>,
    acc: fn(&[f64], f64, &mut [f64]),
}

#[track_caller]
fn assert_gradient(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: gradient length");
    let scale = want.iter().fold(1.0f64, |m, w| m.max(w.abs()));
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let tol = REL * g.abs().max(w.abs()) + ABS_FRACTION * scale;
        assert!(
            (g - w).abs() <= tol,
            "{what}: d/dx[{i}]: generated {g:e}, hand-written {w:e} (|diff| {:e} > tol {tol:e})",
            (g - w).abs()
        );
    }
}

/// Checks `gen` against the crate's `value` and `derivative` for every
/// dimension in `DIMS`, at points drawn from `[lo, hi)^n`.
fn check(
    name: &str,
    gen: Generated,
    value: fn(&[f64]) -> f64,
    derivative: fn(&[f64]) -> Vec<f64>,
    lo: f64,
    hi: f64,
) {
    for n in DIMS {
        for (k, x) in points(name, n, lo, hi).iter().enumerate() {
            let what = format!("{name}, n = {n}, point {k}");
            let primal = (gen.f)(x);
            assert!(primal.is_finite(), "{what}: f = {primal}");

            // Same parameterisation as the crate.
            let reference = value(x);
            assert!(
                (primal - reference).abs() <= 1e-12 * (1.0 + reference.abs()),
                "{what}: value {primal:e}, argmin_testfunctions gives {reference:e}"
            );

            let (v, g) = (gen.grad)(x);
            assert_eq!(v.to_bits(), primal.to_bits(), "{what}: value of _grad");
            let want = derivative(x);
            assert_gradient(&what, &g, &want);

            let adj = (gen.adjoint)(x, D_OUT);
            let scaled: Vec<f64> = g.iter().map(|gi| D_OUT * gi).collect();
            assert_gradient(&format!("{what}, _adjoint"), &adj, &scaled);

            let mut buf = vec![0.5; n];
            (gen.acc)(x, D_OUT, &mut buf);
            let added: Vec<f64> = scaled.iter().map(|s| 0.5 + s).collect();
            assert_gradient(&format!("{what}, _adjoint_acc"), &buf, &added);
        }
    }
}

#[test]
fn rosenbrock_matches_argmin() {
    check(
        "rosenbrock",
        Generated {
            f: rosenbrock,
            grad: rosenbrock_grad,
            adjoint: rosenbrock_adjoint,
            acc: rosenbrock_adjoint_acc,
        },
        atf::rosenbrock,
        atf::rosenbrock_derivative,
        -2.0,
        2.0,
    );
}

#[test]
fn rastrigin_matches_argmin() {
    check(
        "rastrigin",
        Generated {
            f: rastrigin,
            grad: rastrigin_grad,
            adjoint: rastrigin_adjoint,
            acc: rastrigin_adjoint_acc,
        },
        atf::rastrigin,
        atf::rastrigin_derivative,
        -5.12,
        5.12,
    );
}

#[test]
fn ackley_matches_argmin() {
    check(
        "ackley",
        Generated {
            f: ackley,
            grad: ackley_grad,
            adjoint: ackley_adjoint,
            acc: ackley_adjoint_acc,
        },
        atf::ackley,
        atf::ackley_derivative,
        -5.0,
        5.0,
    );
}

#[test]
fn styblinski_tang_matches_argmin() {
    check(
        "styblinski_tang",
        Generated {
            f: styblinski_tang,
            grad: styblinski_tang_grad,
            adjoint: styblinski_tang_adjoint,
            acc: styblinski_tang_adjoint_acc,
        },
        atf::styblinski_tang,
        atf::styblinski_tang_derivative,
        -5.0,
        5.0,
    );
}

#[test]
fn rosenbrock_minimum_has_zero_gradient() {
    // At (1, ..., 1) every term vanishes: value and gradient are exactly 0.
    for n in DIMS {
        let x = vec![1.0; n];
        let (v, g) = rosenbrock_grad(&x);
        assert_eq!(v, 0.0);
        assert!(g.iter().all(|&gi| gi == 0.0), "n = {n}: {g:?}");
        assert_eq!(atf::rosenbrock_derivative(&x), g);
    }
}

#[test]
fn the_oracle_can_fail() {
    // The comparison is not vacuous: one derivative term off by one part in
    // 1e8 is caught.
    let x = &points("oracle", 10, -2.0, 2.0)[0];
    let (_, mut g) = rosenbrock_grad(x);
    g[3] *= 1.0 + 1e-8;
    let want = atf::rosenbrock_derivative(x);
    let caught = std::panic::catch_unwind(|| assert_gradient("perturbed", &g, &want));
    assert!(caught.is_err());
}
