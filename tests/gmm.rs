//! The Gaussian mixture model objective of the ADBench benchmarks, written the
//! way numeric Rust writes it: views of the parameter slices, helpers that
//! write into output buffers, a `Wishart` prior passed as a constant struct,
//! integer sizes as data. The gradient with respect to the mixture's weights,
//! means and inverse covariance factors is compared with forward-mode dual
//! numbers run through an independent implementation (dense triangular
//! matrices instead of packed ones), at several seeded points of two sizes;
//! the value from `_grad` is bit-identical to the function's.
//!
//! The objective, for `n` points `x_i` in `d` dimensions and `k` components:
//!
//! ```text
//! Σ_i logsumexp_k(α_k + Σ_j q_kj − ½‖Q_k (x_i − μ_k)‖²) − n logsumexp(α)
//!   + Σ_k (½ γ² (‖diag Q_k‖² + ‖offdiag Q_k‖²) − m Σ_j q_kj) + constants
//! ```
//!
//! where `Q_k` is lower-triangular with diagonal `exp(q_k)` and, below it,
//! the rest of the component's `icf` entries column by column.

#![deny(warnings)]
#![deny(clippy::all)]
// Index loops are how the functions under test are written.
#![allow(clippy::needless_range_loop)]

#[path = "support/gmm.rs"]
mod objective;
mod support;

use objective::*;

use support::dual::{forward_gradient, Dual};
use support::rng::Rng;

type D = Dual<1>;

fn lse_dual(v: &[D]) -> D {
    let top = v.iter().map(|a| a.v).fold(f64::NEG_INFINITY, f64::max);
    let s: D = v.iter().map(|a| (*a - top).exp()).sum();
    s.ln() + top
}

/// The same objective on dual numbers, written independently: each `Q_k`
/// built as a dense matrix, the quadratic form by a matrix-vector product.
fn gmm_dual(p: &[D], x: &[f64], prior: Wishart, d: usize, k: usize) -> D {
    let icf_len = d * (d + 1) / 2;
    let (alphas, rest) = p.split_at(k);
    let (means, icf) = rest.split_at(k * d);
    let n = x.len() / d;
    let mut q_mats = Vec::new();
    let mut log_dets = Vec::new();
    let mut frobenius = Vec::new();
    for ik in 0..k {
        let c = &icf[ik * icf_len..(ik + 1) * icf_len];
        let mut q = vec![vec![D::cst(0.0); d]; d];
        let mut at = d;
        for col in 0..d {
            q[col][col] = c[col].exp();
            for row in col + 1..d {
                q[row][col] = c[at];
                at += 1;
            }
        }
        log_dets.push(c[..d].iter().copied().sum::<D>());
        let mut f = D::cst(0.0);
        for row in &q {
            for v in row {
                f = f + *v * *v;
            }
        }
        frobenius.push(f);
        q_mats.push(q);
    }
    let mut total = D::cst(0.0);
    for ix in 0..n {
        let mut terms = Vec::new();
        for ik in 0..k {
            let mut quad = D::cst(0.0);
            for row in 0..d {
                let mut s = D::cst(0.0);
                for col in 0..d {
                    s = s + q_mats[ik][row][col] * (x[ix * d + col] - means[ik * d + col]);
                }
                quad = quad + s * s;
            }
            terms.push(alphas[ik] + log_dets[ik] - 0.5 * quad);
        }
        total = total + lse_dual(&terms);
    }
    let nn = d as i32 + prior.m + 1;
    let c = nn as f64 * d as f64 * (prior.gamma.ln() - 0.5 * std::f64::consts::LN_2)
        - log_multi_gamma(0.5 * nn as f64, d);
    let mut wishart = D::cst(0.0);
    for ik in 0..k {
        wishart = wishart + 0.5 * prior.gamma * prior.gamma * frobenius[ik]
            - prior.m as f64 * log_dets[ik]
            - c;
    }
    let constant = -(n as f64) * d as f64 * 0.5 * (2.0 * std::f64::consts::PI).ln();
    total - n as f64 * lse_dual(alphas) + wishart + constant
}

fn check_size(d: usize, k: usize, n: usize, seed: u64) {
    let icf_len = d * (d + 1) / 2;
    let prior = Wishart { gamma: 1.0, m: 0 };
    let mut rng = Rng::new(seed);
    for _ in 0..3 {
        let alphas = rng.vec(k, -1.0, 1.0);
        let means = rng.vec(k * d, -1.0, 1.0);
        let icf = rng.vec(k * icf_len, -0.5, 0.5);
        let x = rng.vec(n * d, -1.5, 1.5);
        let (value, (da, dm, di)) = gmm_objective_grad(&alphas, &means, &icf, &x, prior, d, k);
        let f = gmm_objective(&alphas, &means, &icf, &x, prior, d, k);
        support::assert_bits("value", value, f);
        let p: Vec<f64> = alphas.iter().chain(&means).chain(&icf).copied().collect();
        let want = forward_gradient(|q| gmm_dual(q, &x, prior, d, k), &p);
        let got: Vec<f64> = da.iter().chain(&dm).chain(&di).copied().collect();
        // The two implementations agree on the value to rounding.
        let dual_value = gmm_dual(
            &p.iter().map(|v| D::cst(*v)).collect::<Vec<_>>(),
            &x,
            prior,
            d,
            k,
        )
        .v;
        support::assert_close("value", dual_value, f, 1e-9, 1e-12);
        support::assert_all_close("gradient", &got, &want, 1e-10, 1e-10);
        let adj = gmm_objective_adjoint(&alphas, &means, &icf, &x, prior, d, k, support::D_OUT);
        let scaled: Vec<f64> = got.iter().map(|g| g * support::D_OUT).collect();
        let adj: Vec<f64> = adj.0.iter().chain(&adj.1).chain(&adj.2).copied().collect();
        support::assert_all_close("adjoint", &adj, &scaled, 1e-12, 1e-12);
    }
}

#[test]
fn gmm_d2_k3_against_dual_numbers() {
    check_size(2, 3, 10, 21);
}

#[test]
fn gmm_d3_k5_against_dual_numbers() {
    check_size(3, 5, 20, 22);
}
