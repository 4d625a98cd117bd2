//! ADBench's Gaussian mixture model objective, written from its definition
//! the way numeric Rust writes it (views of the parameter slices, helpers
//! that write into output buffers, a constant `Wishart` prior), shared by
//! `tests/gmm.rs`, which checks its gradient, and the run-time benchmark,
//! which times it.

// Each includer uses part of what the macro generates.
#![allow(dead_code)]
// Index loops are how the functions under test are written.
#![allow(clippy::needless_range_loop)]

use gradmacro::differentiate;
use gradmacro_runtime::special::lgamma;

/// The Wishart prior on the inverse covariances: data, not differentiated.
#[derive(Clone, Copy, Debug)]
pub struct Wishart {
    pub gamma: f64,
    pub m: i32,
}

/// `ln Σ exp(v_i)`, shifted by the largest entry for range.
#[differentiate]
fn log_sum_exp(v: &[f64]) -> f64 {
    let mut top = v[0];
    for &a in v.iter() {
        if a > top {
            top = a;
        }
    }
    let s: f64 = v.iter().map(|a| (a - top).exp()).sum();
    s.ln() + top
}

#[differentiate]
fn sqnorm(v: &[f64]) -> f64 {
    v.iter().map(|a| a * a).sum()
}

/// `out = L·v`, `L` lower-triangular with diagonal `diag` and, below it,
/// `below` column by column.
#[differentiate]
fn tri_times(diag: &[f64], below: &[f64], v: &[f64], out: &mut [f64]) {
    let d = v.len();
    for i in 0..d {
        out[i] = diag[i] * v[i];
    }
    let mut at = 0;
    for col in 0..d {
        for row in col + 1..d {
            out[row] += below[at] * v[col];
            at += 1;
        }
    }
}

/// `out = a − b`.
#[differentiate]
fn subtract(a: &[f64], b: &[f64], out: &mut [f64]) {
    for i in 0..out.len() {
        out[i] = a[i] - b[i];
    }
}

/// The log of the multivariate gamma function `Γ_d(a)`: a constant here.
pub fn log_multi_gamma(a: f64, d: usize) -> f64 {
    let mut out = 0.25 * (d * (d - 1)) as f64 * std::f64::consts::PI.ln();
    for j in 1..=d {
        out += lgamma(a + 0.5 * (1 - j as i32) as f64);
    }
    out
}

/// The Wishart prior's terms that depend on the parameters, and its
/// normalising constant.
#[differentiate]
fn log_wishart_prior(
    diags: &[f64],
    sum_qs: &[f64],
    icf: &[f64],
    prior: Wishart,
    d: usize,
    k: usize,
) -> f64 {
    let icf_len = d * (d + 1) / 2;
    let n = d as i32 + prior.m + 1;
    let c = n as f64 * d as f64 * (prior.gamma.ln() - 0.5 * std::f64::consts::LN_2)
        - log_multi_gamma(0.5 * n as f64, d);
    let mut out = 0.0;
    for ik in 0..k {
        let frobenius = sqnorm(&diags[ik * d..(ik + 1) * d])
            + sqnorm(&icf[ik * icf_len + d..(ik + 1) * icf_len]);
        out += 0.5 * prior.gamma * prior.gamma * frobenius - prior.m as f64 * sum_qs[ik];
    }
    out - k as f64 * c
}

/// The mixture's negative log-likelihood with the prior, as ADBench defines
/// it; `x` holds the points one after another.
#[differentiate(wrt(alphas, means, icf))]
pub fn gmm_objective(
    alphas: &[f64],
    means: &[f64],
    icf: &[f64],
    x: &[f64],
    prior: Wishart,
    d: usize,
    k: usize,
) -> f64 {
    let n = x.len() / d;
    let icf_len = d * (d + 1) / 2;
    let mut diags = vec![0.0; k * d];
    let mut sum_qs = vec![0.0; k];
    for ik in 0..k {
        let q = &icf[ik * icf_len..ik * icf_len + d];
        for id in 0..d {
            diags[ik * d + id] = q[id].exp();
            sum_qs[ik] += q[id];
        }
    }
    let mut centred = vec![0.0; d];
    let mut transformed = vec![0.0; d];
    let mut terms = vec![0.0; k];
    let mut total = 0.0;
    for ix in 0..n {
        let xi = &x[ix * d..(ix + 1) * d];
        for ik in 0..k {
            subtract(xi, &means[ik * d..(ik + 1) * d], &mut centred);
            tri_times(
                &diags[ik * d..(ik + 1) * d],
                &icf[ik * icf_len + d..(ik + 1) * icf_len],
                &centred,
                &mut transformed,
            );
            terms[ik] = alphas[ik] + sum_qs[ik] - 0.5 * sqnorm(&transformed);
        }
        total += log_sum_exp(&terms);
    }
    let constant = -(n as f64) * d as f64 * 0.5 * (2.0 * std::f64::consts::PI).ln();
    constant + total - n as f64 * log_sum_exp(alphas)
        + log_wishart_prior(&diags, &sum_qs, icf, prior, d, k)
}
