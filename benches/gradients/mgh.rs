//! Two least-squares test problems of J. J. Moré, B. S. Garbow and
//! K. E. Hillstrom, "Testing unconstrained optimization software", ACM
//! Transactions on Mathematical Software 7(1), 17–41 (1981): the extended
//! Powell singular function (problem 22) and the Broyden tridiagonal function
//! (problem 30), each as the sum of its squared residuals. Here are the
//! functions under `#[differentiate]`, written the way a user writes them,
//! their fastest hand-written gradients, the num-dual and tape versions, and
//! the workloads.

// Index loops are how the functions under `#[differentiate]` are written.
#![allow(clippy::needless_range_loop)]

use crate::check::Rng;
use crate::workloads::{Kind, Runner};
use gradmacro::differentiate;
use nalgebra::DVector;
use num_dual::{gradient, DualDVec64, DualNum};
use std::hint::black_box;
use RustQuant_autodiff::{Accumulate, Gradient, Graph, Powi, Variable};

/// The extended Powell singular function (Moré, Garbow, Hillstrom 1981,
/// problem 22): over the blocks `(x1, x2, x3, x4)` of four consecutive
/// entries, `Σ (x1 + 10 x2)² + 5 (x3 − x4)² + (x2 − 2 x3)⁴ + 10 (x1 − x4)⁴`.
/// Entries past the last whole block are ignored.
#[differentiate]
pub fn extended_powell(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for j in 0..x.len() / 4 {
        let i = 4 * j;
        s += (x[i] + 10.0 * x[i + 1]).powi(2)
            + 5.0 * (x[i + 2] - x[i + 3]).powi(2)
            + (x[i + 1] - 2.0 * x[i + 2]).powi(4)
            + 10.0 * (x[i] - x[i + 3]).powi(4);
    }
    s
}

/// [`extended_powell`] and its gradient by hand: each block's four
/// residuals once, their derivatives from the same powers.
pub fn extended_powell_hand(x: &[f64]) -> (f64, Vec<f64>) {
    let mut g = vec![0.0; x.len()];
    let mut s = 0.0;
    for (b, gb) in x.chunks_exact(4).zip(g.chunks_exact_mut(4)) {
        let p = b[0] + 10.0 * b[1];
        let q = b[2] - b[3];
        let r = b[1] - 2.0 * b[2];
        let t = b[0] - b[3];
        let (r2, t2) = (r * r, t * t);
        s += p * p + 5.0 * q * q + r2 * r2 + 10.0 * t2 * t2;
        let (dp, dq, dr, dt) = (2.0 * p, 10.0 * q, 4.0 * r2 * r, 40.0 * t2 * t);
        gb[0] = dp + dt;
        gb[1] = 10.0 * dp + dr;
        gb[2] = dq - 2.0 * dr;
        gb[3] = -dq - dt;
    }
    (s, g)
}

/// The Broyden tridiagonal function (Moré, Garbow, Hillstrom 1981, problem
/// 30) as a sum of squares: `Σ_i f_i²` with
/// `f_i = (3 − 2 x_i) x_i − x_{i−1} − 2 x_{i+1} + 1` and
/// `x_0 = x_{n+1} = 0`.
#[differentiate]
pub fn broyden_tridiagonal(x: &[f64]) -> f64 {
    let n = x.len();
    let mut s = 0.0;
    for i in 0..n {
        let prev = if i > 0 { x[i - 1] } else { 0.0 };
        let next = if i + 1 < n { x[i + 1] } else { 0.0 };
        let f = (3.0 - 2.0 * x[i]) * x[i] - prev - 2.0 * next + 1.0;
        s += f * f;
    }
    s
}

/// [`broyden_tridiagonal`] and its gradient by hand:
/// `∂/∂x_i = 2 f_i (3 − 4 x_i) − 4 f_{i−1} − 2 f_{i+1}`, one pass with the
/// residuals `f_{i−1}, f_i, f_{i+1}` in registers, each computed once.
pub fn broyden_tridiagonal_hand(x: &[f64]) -> (f64, Vec<f64>) {
    let n = x.len();
    let residual = |i: usize, prev: f64| {
        let next = if i + 1 < n { x[i + 1] } else { 0.0 };
        (3.0 - 2.0 * x[i]) * x[i] - prev - 2.0 * next + 1.0
    };
    let mut g = vec![0.0; n];
    let mut s = 0.0;
    let (mut f_prev, mut f) = (0.0, if n > 0 { residual(0, 0.0) } else { 0.0 });
    for (i, gi) in g.iter_mut().enumerate() {
        let f_next = if i + 1 < n {
            residual(i + 1, x[i])
        } else {
            0.0
        };
        s += f * f;
        *gi = 2.0 * f * (3.0 - 4.0 * x[i]) - 4.0 * f_prev - 2.0 * f_next;
        (f_prev, f) = (f, f_next);
    }
    (s, g)
}

fn extended_powell_dual(x: &[DualDVec64]) -> DualDVec64 {
    let mut s = DualDVec64::from_re(0.0);
    for b in x.chunks_exact(4) {
        s += (b[1].clone() * 10.0 + &b[0]).powi(2)
            + (&b[2] - &b[3]).powi(2) * 5.0
            + (&b[1] - b[2].clone() * 2.0).powi(4)
            + (&b[0] - &b[3]).powi(4) * 10.0;
    }
    s
}

fn extended_powell_tape(g: &Graph, x: &[f64]) -> (f64, Vec<f64>) {
    g.clear();
    let v = g.vars(x);
    let mut s = g.var(0.0);
    for b in v.chunks_exact(4) {
        s = s
            + (b[0] + 10.0 * b[1]).powi(2)
            + 5.0 * (b[2] - b[3]).powi(2)
            + (b[1] - 2.0 * b[2]).powi(4)
            + 10.0 * (b[0] - b[3]).powi(4);
    }
    let a: Vec<f64> = s.accumulate();
    (s.value(), a.wrt(&v[..]))
}

fn broyden_tridiagonal_dual(x: &[DualDVec64]) -> DualDVec64 {
    let n = x.len();
    let mut s = DualDVec64::from_re(0.0);
    for i in 0..n {
        let mut f = (x[i].clone() * -2.0 + 3.0) * &x[i] + 1.0;
        if i > 0 {
            f -= x[i - 1].clone();
        }
        if i + 1 < n {
            f -= x[i + 1].clone() * 2.0;
        }
        s += &f * &f;
    }
    s
}

fn broyden_tridiagonal_tape(g: &Graph, x: &[f64]) -> (f64, Vec<f64>) {
    g.clear();
    let v = g.vars(x);
    let n = v.len();
    let mut s = g.var(0.0);
    for i in 0..n {
        let mut f: Variable = (3.0 - 2.0 * v[i]) * v[i] + 1.0;
        if i > 0 {
            f -= v[i - 1];
        }
        if i + 1 < n {
            f -= 2.0 * v[i + 1];
        }
        s += f * f;
    }
    let a: Vec<f64> = s.accumulate();
    (s.value(), a.wrt(&v[..]))
}

/// The extended Powell function at `n` seeded points in `[-2, 2)`.
pub fn extended_powell_n(r: &mut Runner, n: usize) {
    let x = Rng::new(0x90E1 + n as u64).vec(n, -2.0, 2.0);
    let xd = DVector::from_column_slice(&x);
    let graph = Graph::new();
    r.run(
        &format!("extended Powell n = {n}"),
        Kind::NDim(n),
        &|p| extended_powell(p),
        &x,
        || extended_powell(black_box(&x)),
        || extended_powell_hand(black_box(&x)),
        || {
            gradient(
                |v: DVector<DualDVec64>| extended_powell_dual(v.as_slice()),
                black_box(&xd),
            )
        },
        || extended_powell_tape(&graph, black_box(&x)),
        || extended_powell_grad(black_box(&x)),
    );
}

/// The Broyden tridiagonal function at `n` seeded points in `[-2, 2)`.
pub fn broyden_tridiagonal_n(r: &mut Runner, n: usize) {
    let x = Rng::new(0xB207 + n as u64).vec(n, -2.0, 2.0);
    let xd = DVector::from_column_slice(&x);
    let graph = Graph::new();
    r.run(
        &format!("Broyden tridiagonal n = {n}"),
        Kind::NDim(n),
        &|p| broyden_tridiagonal(p),
        &x,
        || broyden_tridiagonal(black_box(&x)),
        || broyden_tridiagonal_hand(black_box(&x)),
        || {
            gradient(
                |v: DVector<DualDVec64>| broyden_tridiagonal_dual(v.as_slice()),
                black_box(&xd),
            )
        },
        || broyden_tridiagonal_tape(&graph, black_box(&x)),
        || broyden_tridiagonal_grad(black_box(&x)),
    );
}
