//! The Gaussian mixture model objective of the ADBench benchmarks, as
//! `tests/gmm.rs` writes it for the macro (views of the parameter slices,
//! helpers that write into output buffers, a constant `Wishart` prior), and a
//! hand-written gradient of it.
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

// Index loops are how the functions under `#[differentiate]` are written.
#![allow(clippy::needless_range_loop)]

#[path = "../../tests/support/gmm.rs"]
mod objective;

use objective::log_multi_gamma;
pub use objective::{gmm_objective, gmm_objective_grad, Wishart};

/// Value and gradient `(d/dalphas, d/dmeans, d/dicf)` of [`gmm_objective`],
/// derived by hand.
///
/// With `c = x_i − μ_k`, `y = Q_k c` and `t_ik = α_k + Σ_j q_kj − ½‖y‖²`,
/// the softmax weights `r_ik = exp(t_ik) / Σ_k' exp(t_ik')` carry the
/// log-sum-exp's adjoint, and
///
/// - `∂t/∂α_k = 1`,
/// - `∂t/∂μ_k = Q_kᵀ y`,
/// - `∂t/∂q_kj = 1 − y_j c_j exp(q_kj)` (the diagonal, through `exp`),
/// - `∂t/∂L_k[row, col] = −y_row c_col` (below the diagonal).
///
/// One fused pass over the points computes, per point, every component's
/// `c`, `y` and `t`, then the weights, then accumulates per component
/// `Σ_i r`, `Σ_i r y` (multiplied by the constant `Q_kᵀ` once at the end),
/// `Σ_i r y_j c_j` and `Σ_i r y_row c_col`. The prior adds `γ² exp(2 q_kj) − m`
/// on the diagonal and `γ² L` below it; `−n logsumexp(α)` adds
/// `−n softmax(α)`.
#[allow(clippy::type_complexity)]
pub fn gmm_hand(
    alphas: &[f64],
    means: &[f64],
    icf: &[f64],
    x: &[f64],
    prior: Wishart,
    d: usize,
    k: usize,
) -> (f64, (Vec<f64>, Vec<f64>, Vec<f64>)) {
    let n = x.len() / d;
    let icf_len = d * (d + 1) / 2;
    let below_len = icf_len - d;

    // exp of the diagonal entries, and their logs' sums (the log-determinants).
    let mut diags = vec![0.0; k * d];
    let mut sum_qs = vec![0.0; k];
    for ik in 0..k {
        let q = &icf[ik * icf_len..][..d];
        let diag = &mut diags[ik * d..][..d];
        let mut s = 0.0;
        for j in 0..d {
            diag[j] = q[j].exp();
            s += q[j];
        }
        sum_qs[ik] = s;
    }

    // Per point: every component's `c` and `y`, and its term (then weight).
    let mut cs = vec![0.0; k * d];
    let mut ys = vec![0.0; k * d];
    let mut terms = vec![0.0; k];
    // Accumulators over the points: `Σ r` into the alphas' gradient, `Σ r y`
    // into the means', `Σ r y_j c_j` and `Σ r y_row c_col` into the icf's.
    let mut g_alphas = vec![0.0; k];
    let mut ry_sums = vec![0.0; k * d];
    let mut g_icf = vec![0.0; k * icf_len];
    let mut total = 0.0;
    for xi in x.chunks_exact(d) {
        let mut top = f64::NEG_INFINITY;
        for ik in 0..k {
            let mu = &means[ik * d..][..d];
            let diag = &diags[ik * d..][..d];
            let below = &icf[ik * icf_len + d..][..below_len];
            let c = &mut cs[ik * d..][..d];
            let y = &mut ys[ik * d..][..d];
            for j in 0..d {
                c[j] = xi[j] - mu[j];
                y[j] = diag[j] * c[j];
            }
            let mut at = 0;
            for col in 0..d {
                let cc = c[col];
                for (yr, l) in y[col + 1..].iter_mut().zip(&below[at..]) {
                    *yr += l * cc;
                }
                at += d - col - 1;
            }
            let sq: f64 = y.iter().map(|v| v * v).sum();
            let t = alphas[ik] + sum_qs[ik] - 0.5 * sq;
            terms[ik] = t;
            top = top.max(t);
        }
        let mut s = 0.0;
        for t in terms.iter_mut() {
            *t = (*t - top).exp();
            s += *t;
        }
        total += s.ln() + top;
        let inv = 1.0 / s;
        for ik in 0..k {
            let r = terms[ik] * inv;
            g_alphas[ik] += r;
            let c = &cs[ik * d..][..d];
            let y = &mut ys[ik * d..][..d];
            let w = &mut ry_sums[ik * d..][..d];
            let (g_diag, g_below) = g_icf[ik * icf_len..][..icf_len].split_at_mut(d);
            for j in 0..d {
                let ry = r * y[j];
                y[j] = ry;
                w[j] += ry;
                g_diag[j] += ry * c[j];
            }
            let mut at = 0;
            for col in 0..d {
                let cc = c[col];
                for (g, ry) in g_below[at..].iter_mut().zip(&y[col + 1..]) {
                    *g += ry * cc;
                }
                at += d - col - 1;
            }
        }
    }

    // −n logsumexp(α) and its gradient −n softmax(α).
    let top = alphas.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let s: f64 = alphas.iter().map(|a| (a - top).exp()).sum();
    let lse_alphas = s.ln() + top;

    // The prior's value.
    let gamma2 = prior.gamma * prior.gamma;
    let m = prior.m as f64;
    let nn = d as i32 + prior.m + 1;
    let c = nn as f64 * d as f64 * (prior.gamma.ln() - 0.5 * std::f64::consts::LN_2)
        - log_multi_gamma(0.5 * nn as f64, d);
    let mut wishart = 0.0;

    let mut g_means = vec![0.0; k * d];
    for ik in 0..k {
        let r_sum = g_alphas[ik];
        g_alphas[ik] = r_sum - n as f64 * (alphas[ik] - top).exp() / s;
        let diag = &diags[ik * d..][..d];
        let below = &icf[ik * icf_len + d..][..below_len];
        let (g_diag, g_below) = g_icf[ik * icf_len..][..icf_len].split_at_mut(d);
        let frobenius =
            diag.iter().map(|v| v * v).sum::<f64>() + below.iter().map(|v| v * v).sum::<f64>();
        wishart += 0.5 * gamma2 * frobenius - m * sum_qs[ik];
        for j in 0..d {
            g_diag[j] = r_sum - diag[j] * g_diag[j] + gamma2 * diag[j] * diag[j] - m;
        }
        for (g, l) in g_below.iter_mut().zip(below) {
            *g = gamma2 * l - *g;
        }
        // d/dμ_k = Q_kᵀ Σ_i r y.
        let w = &ry_sums[ik * d..][..d];
        let gm = &mut g_means[ik * d..][..d];
        let mut at = 0;
        for col in 0..d {
            let mut v = diag[col] * w[col];
            for (l, wr) in below[at..].iter().zip(&w[col + 1..]) {
                v += l * wr;
            }
            gm[col] = v;
            at += d - col - 1;
        }
    }
    wishart -= k as f64 * c;
    let constant = -(n as f64) * d as f64 * 0.5 * (2.0 * std::f64::consts::PI).ln();
    let value = constant + total - n as f64 * lse_alphas + wishart;
    (value, (g_alphas, g_means, g_icf))
}
