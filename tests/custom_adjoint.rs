//! Hand-written adjoints (`#[custom_adjoint(f)]`) used by differentiated
//! callers, and the special functions of `gradmacro_runtime::special`
//! (feature `libm`), whose adjoints are written the same way.
//!
//! Each caller is checked against a centered finite difference of itself and
//! against its derivative written out by hand, its `_grad` value bit-for-bit
//! against the function and its `_adjoint` against `d_out` times the gradient
//! (`support::check_point`). Where a custom adjoint is on purpose not the
//! derivative (a surrogate gradient), the finite difference is not an oracle
//! and only the hand-written rule is.

mod support;

use gradmacro::{custom_adjoint, differentiate};
// A differentiated `erf(..)` call needs `erf_pullback` in scope too (see
// tests/ui/pullback_not_imported.rs); `special::erf(..)` finds it by path.
use gradmacro_runtime::special::{self, digamma, erf, erf_pullback};
use gradmacro_runtime::{check_gradient, Float};
use std::f64::consts::{FRAC_2_SQRT_PI, PI, SQRT_2};
use support::{assert_bits, check_binary, check_point, check_unary, close, D_OUT};

const PAIRS: [(f64, f64); 5] = [
    (0.7, -1.3),
    (-0.4, 0.9),
    (1.6, 0.35),
    (-2.1, -0.8),
    (0.25, 2.2),
];
const POINTS: [f64; 6] = [0.3, -0.75, 1.4, -2.2, 0.95, 3.1];

/// `erf'(u) = 2 / sqrt(pi) exp(-u^2)`, written out.
fn erf_prime(u: f64) -> f64 {
    2.0 / PI.sqrt() * (-u * u).exp()
}

/// The standard normal density.
fn phi(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * PI).sqrt()
}

// ---------------------------------------------------------------------------
// erf, erfc, gamma, lgamma from gradmacro_runtime::special.
// ---------------------------------------------------------------------------

/// `erf` imported with its pullback, called twice.
#[differentiate]
fn erf_mix(x: f64, y: f64) -> f64 {
    erf(x * y) + x * erf(y)
}

fn erf_mix_prime(x: f64, y: f64) -> (f64, f64) {
    (
        y * erf_prime(x * y) + erf(y),
        x * erf_prime(x * y) + x * erf_prime(y),
    )
}

/// The normal distribution function, through the module path.
#[differentiate]
fn normal_cdf(x: f64, mu: f64, sigma: f64) -> f64 {
    0.5 * special::erfc(-(x - mu) / (sigma * SQRT_2))
}

/// `(phi(z) / sigma, -phi(z) / sigma, -phi(z) z / sigma)`, `z = (x - mu) / sigma`.
fn normal_cdf_prime(x: f64, mu: f64, sigma: f64) -> (f64, f64, f64) {
    let z = (x - mu) / sigma;
    let d = phi(z) / sigma;
    (d, -d, -d * z)
}

mod activations {
    use gradmacro::differentiate;
    use gradmacro_runtime::special::*;
    use std::f64::consts::SQRT_2;

    /// GELU, `x Phi(x)`, with everything from `special` glob-imported.
    #[differentiate]
    pub fn gelu(x: f64) -> f64 {
        0.5 * x * (1.0 + erf(x / SQRT_2))
    }
}

/// `ln B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b)`.
#[differentiate]
fn ln_beta(a: f64, b: f64) -> f64 {
    special::lgamma(a) + special::lgamma(b) - special::lgamma(a + b)
}

/// `gamma(x + 1/2) / gamma(x)`, and `gamma` against `lgamma`.
#[differentiate]
fn gamma_ratio(x: f64) -> f64 {
    special::gamma(x + 0.5) / special::gamma(x) + special::gamma(x).abs().ln()
}

fn gamma_ratio_prime(x: f64) -> f64 {
    let ratio = special::gamma(x + 0.5) / special::gamma(x);
    ratio * (digamma(x + 0.5) - digamma(x)) + digamma(x)
}

#[test]
fn erf_inside_a_differentiated_function() {
    check_binary(
        "erf_mix",
        erf_mix,
        erf_mix_grad,
        erf_mix_adjoint,
        erf_mix_prime,
        &PAIRS,
    );
    // The pullback is the analytic formula, exactly as the runtime states it.
    for x in POINTS {
        let mut g = 0.0;
        erf_pullback(x, D_OUT, Some(&mut g));
        assert_eq!(g, D_OUT * (FRAC_2_SQRT_PI * (-x * x).exp()));
        assert!(close(g, D_OUT * erf_prime(x), 0.0, 4.0 * f64::EPSILON));
    }
}

#[test]
fn erfc_by_module_path() {
    for (x, mu, sigma) in [
        (1.0, 0.0, 1.0),
        (0.3, -0.5, 0.7),
        (-1.2, 0.4, 2.5),
        (4.0, 1.0, 0.8),
    ] {
        let (value, (gx, gm, gs)) = normal_cdf_grad(x, mu, sigma);
        let (ax, am, a_s) = normal_cdf_adjoint(x, mu, sigma, D_OUT);
        let (dx, dm, ds) = normal_cdf_prime(x, mu, sigma);
        check_point(
            "normal_cdf",
            &[x, mu, sigma],
            |p| normal_cdf(p[0], p[1], p[2]),
            value,
            &[gx, gm, gs],
            &[ax, am, a_s],
            &[dx, dm, ds],
        );
    }
    // Phi(1) and phi(1).
    let (p, d) = (
        normal_cdf(1.0, 0.0, 1.0),
        normal_cdf_grad(1.0, 0.0, 1.0).1 .0,
    );
    assert!(close(p, 0.8413447460685429, 0.0, 2.0 * f64::EPSILON));
    assert!(close(d, 0.24197072451914337, 0.0, 4.0 * f64::EPSILON));
}

#[test]
fn erf_glob_imported() {
    check_unary(
        "gelu",
        activations::gelu,
        activations::gelu_grad,
        activations::gelu_adjoint,
        |x| 0.5 * (1.0 + erf(x / SQRT_2)) + x * phi(x),
        &POINTS,
    );
}

#[test]
fn gamma_and_lgamma_inside_differentiated_functions() {
    check_binary(
        "ln_beta",
        ln_beta,
        ln_beta_grad,
        ln_beta_adjoint,
        |a, b| (digamma(a) - digamma(a + b), digamma(b) - digamma(a + b)),
        &[(0.5, 0.5), (2.5, 1.5), (0.3, 7.0), (12.0, 3.3)],
    );
    // d/da ln B(a, b) at (1, 1): psi(1) - psi(2) = -1.
    assert!(close(
        ln_beta_grad(1.0, 1.0).1 .0,
        -1.0,
        0.0,
        8.0 * f64::EPSILON
    ));
    check_unary(
        "gamma_ratio",
        gamma_ratio,
        gamma_ratio_grad,
        gamma_ratio_adjoint,
        gamma_ratio_prime,
        &[0.4, 1.3, 2.5, 6.75, -0.3, -1.6],
    );
}

// ---------------------------------------------------------------------------
// A user-defined softplus.
// ---------------------------------------------------------------------------

/// `ln(1 + e^x)`, without overflow for large x: a branch the caller need not
/// see through.
fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[custom_adjoint(softplus)]
fn softplus_adjoint(x: f64, d_out: f64) -> f64 {
    d_out * sigmoid(x)
}

/// Two active calls, one with a constant argument.
#[differentiate]
fn softplus_loss(x: f64, y: f64) -> f64 {
    softplus(x * y) - softplus(-x) + softplus(2.0) * y
}

fn softplus_loss_prime(x: f64, y: f64) -> (f64, f64) {
    (
        sigmoid(x * y) * y + sigmoid(-x),
        sigmoid(x * y) * x + softplus(2.0),
    )
}

#[test]
fn user_defined_softplus() {
    // The pullback adds the adjoint into the slot a caller lends it.
    let pullback: fn(f64, f64, Option<&mut f64>) = softplus_pullback;
    let mut g = 1.0;
    pullback(0.5, D_OUT, Some(&mut g));
    assert_eq!(g, 1.0 + softplus_adjoint(0.5, D_OUT));
    check_binary(
        "softplus_loss",
        softplus_loss,
        softplus_loss_grad,
        softplus_loss_adjoint,
        softplus_loss_prime,
        &PAIRS,
    );
    // Far out, where the naive formula ln(1 + e^x) overflows.
    for (x, y) in [(40.0, 20.0), (-30.0, 25.0)] {
        let (value, (gx, gy)) = softplus_loss_grad(x, y);
        assert!(value.is_finite());
        let (dx, dy) = softplus_loss_prime(x, y);
        assert!(close(gx, dx, 1e-15, 1e-14) && close(gy, dy, 1e-15, 1e-14));
    }
}

// ---------------------------------------------------------------------------
// A custom adjoint that is not the derivative on purpose: a surrogate
// gradient for a step function. Finite differences say 0; the caller must use
// the rule given.
// ---------------------------------------------------------------------------

fn heaviside(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else {
        0.0
    }
}

/// The derivative of `sigmoid(4x)`.
#[custom_adjoint(for = heaviside)]
fn heaviside_adjoint(x: f64, d_out: f64) -> f64 {
    let s = sigmoid(4.0 * x);
    d_out * 4.0 * s * (1.0 - s)
}

#[differentiate]
fn spikes(x: f64, w: f64) -> f64 {
    heaviside(w * x - 0.5) + heaviside(x)
}

#[test]
fn the_custom_adjoint_is_what_callers_use() {
    let surrogate = |u: f64| heaviside_adjoint(u, 1.0);
    for (x, w) in PAIRS {
        let (value, (gx, gw)) = spikes_grad(x, w);
        assert_bits("spikes value", value, spikes(x, w));
        let (dx, dw) = (
            w * surrogate(w * x - 0.5) + surrogate(x),
            x * surrogate(w * x - 0.5),
        );
        assert!(
            close(gx, dx, 1e-15, 1e-13),
            "spikes d/dx at ({x}, {w}): {gx} vs {dx}"
        );
        assert!(
            close(gw, dw, 1e-15, 1e-13),
            "spikes d/dw at ({x}, {w}): {gw} vs {dw}"
        );
        assert!(gx != 0.0, "the surrogate is nonzero everywhere");
        // The true derivative is zero: finite differences disagree.
        let fd = check_gradient(|p| spikes(p[0], p[1]), &[x, w], &[gx, gw]);
        assert!(!fd.passes(1e-6));
    }
}

// ---------------------------------------------------------------------------
// Two float parameters around an integer one.
// ---------------------------------------------------------------------------

/// The p-norm of `(x, y)`.
fn pnorm(x: f64, p: u32, y: f64) -> f64 {
    let p = p as i32;
    (x.abs().powi(p) + y.abs().powi(p)).powf(1.0 / p as f64)
}

/// `dr/dx = sign(x) (|x| / r)^(p - 1)`, the same for y.
#[custom_adjoint(pnorm)]
fn pnorm_adjoint(x: f64, p: u32, y: f64, d_out: f64) -> (f64, f64) {
    let r = pnorm(x, p, y);
    let share = |t: f64| t.signum() * (t.abs() / r).powi(p as i32 - 1);
    (d_out * share(x), d_out * share(y))
}

/// Active arguments around a parameter passed through, and a call with a
/// literal exponent.
#[differentiate]
fn pnorm_user(a: f64, b: f64, p: u32) -> f64 {
    pnorm(a * b, p, a - b) + pnorm(a, 2, 1.5)
}

fn pnorm_user_prime(a: f64, b: f64, p: u32) -> (f64, f64) {
    let (u, v) = (a * b, a - b);
    let r = (u.abs().powi(p as i32) + v.abs().powi(p as i32)).powf(1.0 / p as f64);
    let su = u.signum() * (u.abs() / r).powi(p as i32 - 1);
    let sv = v.signum() * (v.abs() / r).powi(p as i32 - 1);
    let h = a / (a * a + 2.25).sqrt();
    (su * b + sv + h, su * a - sv)
}

#[test]
fn two_floats_and_an_integer() {
    type Pullback = fn(f64, u32, f64, f64, Option<&mut f64>, (), Option<&mut f64>);
    let pullback: Pullback = pnorm_pullback;
    let (mut gx, mut gy) = (0.0, 0.0);
    pullback(3.0, 2, -4.0, D_OUT, Some(&mut gx), (), Some(&mut gy));
    assert!(close(gx, D_OUT * 0.6, 0.0, 4.0 * f64::EPSILON));
    assert!(close(gy, D_OUT * -0.8, 0.0, 4.0 * f64::EPSILON));
    for p in [1u32, 2, 3, 5] {
        for (a, b) in PAIRS {
            let (value, (ga, gb)) = pnorm_user_grad(a, b, p);
            let (aa, ab) = pnorm_user_adjoint(a, b, p, D_OUT);
            let (da, db) = pnorm_user_prime(a, b, p);
            check_point(
                &format!("pnorm_user p = {p}"),
                &[a, b],
                |q| pnorm_user(q[0], q[1], p),
                value,
                &[ga, gb],
                &[aa, ab],
                &[da, db],
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Slice parameters.
// ---------------------------------------------------------------------------

/// `ln sum e^z`, shifted by the maximum: iterator code the macro does not
/// differentiate.
fn logsumexp(z: &[f64]) -> f64 {
    let m = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    m + z.iter().map(|zi| (zi - m).exp()).sum::<f64>().ln()
}

/// `d_out softmax(z)`.
#[custom_adjoint(logsumexp)]
fn logsumexp_adjoint(z: &[f64], d_out: f64) -> Vec<f64> {
    let l = logsumexp(z);
    z.iter().map(|zi| d_out * (zi - l).exp()).collect()
}

/// `t logsumexp(z / t)`: a slice and a scalar.
fn smooth_max(z: &[f64], t: f64) -> f64 {
    let scaled: Vec<f64> = z.iter().map(|zi| zi / t).collect();
    t * logsumexp(&scaled)
}

/// `(softmax(z / t), lse(z / t) - sum softmax_i z_i / t)`.
#[custom_adjoint(smooth_max)]
fn smooth_max_adjoint(z: &[f64], t: f64, d_out: f64) -> (Vec<f64>, f64) {
    let scaled: Vec<f64> = z.iter().map(|zi| zi / t).collect();
    let l = logsumexp(&scaled);
    let soft: Vec<f64> = scaled.iter().map(|s| (s - l).exp()).collect();
    let dt = l - soft.iter().zip(&scaled).map(|(p, s)| p * s).sum::<f64>();
    (soft.iter().map(|p| d_out * p).collect(), d_out * dt)
}

/// Cross-entropy of logits `z` against class `target`.
#[differentiate]
fn cross_entropy(z: &[f64], target: usize) -> f64 {
    logsumexp(z) - z[target]
}

/// A local buffer passed by reference, and a slice with a scalar.
#[differentiate]
fn scaled_scores(z: &[f64], w: f64) -> f64 {
    let mut h = vec![0.0; z.len()];
    for i in 0..z.len() {
        h[i] = z[i] * w;
    }
    logsumexp(&h) + smooth_max(z, w * w) * 2.0
}

fn softmax(z: &[f64]) -> Vec<f64> {
    let l = logsumexp(z);
    z.iter().map(|zi| (zi - l).exp()).collect()
}

#[track_caller]
fn assert_close_slices(what: &str, got: &[f64], want: &[f64]) {
    support::assert_all_close(what, got, want, 1e-15, 1e-12);
}

const LOGITS: [&[f64]; 3] = [&[0.3, -1.2, 2.0], &[1.5, 1.4, -0.3, 0.8], &[-0.7, 0.25]];

#[test]
fn custom_adjoint_over_a_slice() {
    let pullback: fn(&[f64], f64, Option<&mut [f64]>) = logsumexp_pullback;
    let mut g = vec![0.0; LOGITS[1].len()];
    pullback(LOGITS[1], D_OUT, Some(&mut g));
    assert_eq!(g, logsumexp_adjoint(LOGITS[1], D_OUT));
    for z in LOGITS {
        for target in 0..z.len() {
            let (value, g) = cross_entropy_grad(z, target);
            assert_bits("cross_entropy value", value, cross_entropy(z, target));
            let mut want = softmax(z);
            want[target] -= 1.0;
            assert_close_slices("cross_entropy gradient", &g, &want);
            let fd = check_gradient(|p| cross_entropy(p, target), z, &g);
            assert!(fd.passes(1e-6), "cross_entropy:\n{fd}");
            let adjoint = cross_entropy_adjoint(z, target, D_OUT);
            let scaled: Vec<f64> = g.iter().map(|v| D_OUT * v).collect();
            assert_close_slices("cross_entropy adjoint", &adjoint, &scaled);
        }
    }
}

/// `smooth_max_pullback`: a slot per parameter, a slice for the slice.
type SmoothMaxPullback = fn(&[f64], f64, f64, Option<&mut [f64]>, Option<&mut f64>);

#[test]
fn custom_adjoint_over_a_slice_and_a_scalar() {
    let pullback: SmoothMaxPullback = smooth_max_pullback;
    let (mut gz, mut gt) = (vec![0.0; LOGITS[0].len()], 0.0);
    pullback(LOGITS[0], 0.7, D_OUT, Some(&mut gz), Some(&mut gt));
    assert_eq!((gz, gt), smooth_max_adjoint(LOGITS[0], 0.7, D_OUT));
    for z in LOGITS {
        for w in [0.8, -1.3, 2.1] {
            let n = z.len();
            let (value, (gz, gw)) = scaled_scores_grad(z, w);
            assert_bits("scaled_scores value", value, scaled_scores(z, w));
            // d/dz: w softmax(w z) + 2 softmax(z / w^2);
            // d/dw: z . softmax(w z) + 2 * 2w * (lse(z / t) - softmax(z / t) . z / t).
            let t = w * w;
            let wz: Vec<f64> = z.iter().map(|zi| w * zi).collect();
            let zt: Vec<f64> = z.iter().map(|zi| zi / t).collect();
            let (s1, s2) = (softmax(&wz), softmax(&zt));
            let want_z: Vec<f64> = (0..n).map(|i| w * s1[i] + 2.0 * s2[i]).collect();
            let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
            let want_w = dot(z, &s1) + 4.0 * w * (logsumexp(&zt) - dot(&s2, &zt));
            assert_close_slices("scaled_scores d/dz", &gz, &want_z);
            assert!(
                close(gw, want_w, 1e-15, 1e-12),
                "scaled_scores d/dw: {gw} vs {want_w}"
            );
            let mut flat = z.to_vec();
            flat.push(w);
            let mut grad = gz.clone();
            grad.push(gw);
            let fd = check_gradient(|p| scaled_scores(&p[..n], p[n]), &flat, &grad);
            assert!(fd.passes(1e-6), "scaled_scores:\n{fd}");
        }
    }
}

// ---------------------------------------------------------------------------
// A custom adjoint in a module, called by path; one for a function of another
// module, called by its imported name; f32.
// ---------------------------------------------------------------------------

mod act {
    use gradmacro::custom_adjoint;

    /// `x sigmoid(x)`.
    pub fn swish(x: f64) -> f64 {
        x / (1.0 + (-x).exp())
    }

    #[custom_adjoint(swish)]
    pub fn swish_adjoint(x: f64, d_out: f64) -> f64 {
        let s = 1.0 / (1.0 + (-x).exp());
        d_out * (s + x * s * (1.0 - s))
    }
}

mod foreign {
    /// A function of "another crate": its adjoint is written elsewhere.
    pub fn cube(x: f64) -> f64 {
        x * x * x
    }
}

use foreign::cube;

#[custom_adjoint(foreign::cube)]
fn cube_adjoint(x: f64, d_out: f64) -> f64 {
    d_out * 3.0 * x * x
}

#[differentiate]
fn paths(x: f64) -> f64 {
    act::swish(x) * cube(x - 0.5)
}

fn paths_prime(x: f64) -> f64 {
    let s = sigmoid(x);
    let (sw, dsw) = (x * s, s + x * s * (1.0 - s));
    dsw * (x - 0.5).powi(3) + sw * 3.0 * (x - 0.5).powi(2)
}

fn softsign32(x: f32) -> f32 {
    x / (1.0 + x.abs())
}

#[custom_adjoint(softsign32)]
fn softsign32_adjoint(x: f32, d_out: f32) -> f32 {
    d_out / ((1.0 + x.abs()) * (1.0 + x.abs()))
}

#[differentiate]
fn softsign32_user(x: f32, y: f32) -> f32 {
    softsign32(x * y) + softsign32(y).exp()
}

#[test]
fn custom_adjoints_by_path_and_in_f32() {
    check_unary(
        "paths",
        paths,
        paths_grad,
        paths_adjoint,
        paths_prime,
        &POINTS,
    );
    let pullback: fn(f32, f32, Option<&mut f32>) = softsign32_pullback;
    let mut g = 0.0;
    pullback(0.5, 2.0, Some(&mut g));
    assert_eq!(g, softsign32_adjoint(0.5, 2.0));
    check_binary(
        "softsign32_user",
        softsign32_user,
        softsign32_user_grad,
        softsign32_user_adjoint,
        |x: f32, y: f32| {
            let (x, y) = (x.to_f64(), y.to_f64());
            let d = |u: f64| 1.0 / ((1.0 + u.abs()) * (1.0 + u.abs()));
            let e = (y / (1.0 + y.abs())).exp();
            ((y * d(x * y)) as f32, (x * d(x * y) + e * d(y)) as f32)
        },
        &[(0.3f32, -0.7f32), (-0.9, 0.4), (1.2, 0.8), (2.5, -1.5)],
    );
}
