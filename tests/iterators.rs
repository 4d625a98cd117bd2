//! Iterator reductions with closures: `.map(|x| ..).sum()`, `.product()`,
//! `.fold(init, |acc, x| ..)` and `.map(|x| ..).collect()` over arrays (with `zip`, `enumerate`, `rev`)
//! and ranges. Each gradient is checked against its derivative worked out by
//! hand, against centered finite differences, for a value bit-identical to
//! the function's and for `f_adjoint == d_out * gradient`.

mod support;

use approx::assert_relative_eq;
use gradmacro::differentiate;
use gradmacro_runtime::check_gradient;

const D_OUT: f64 = 1.75;

#[track_caller]
fn assert_all_close(got: &[f64], want: &[f64]) {
    support::assert_all_close("gradient", got, want, 1e-14, 1e-12);
}

/// Σ x_i²: d/dx_i = 2 x_i
#[differentiate]
fn sum_of_squares(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum::<f64>()
}

#[test]
fn map_sum() {
    for x in [vec![0.5, -1.5, 2.0], vec![3.0], vec![]] {
        let (v, g) = sum_of_squares_grad(&x);
        assert_eq!(v.to_bits(), sum_of_squares(&x).to_bits());
        let want: Vec<f64> = x.iter().map(|v| 2.0 * v).collect();
        assert_all_close(&g, &want);
        let a = sum_of_squares_adjoint(&x, D_OUT);
        assert_all_close(&a, &want.iter().map(|w| D_OUT * w).collect::<Vec<_>>());
    }
}

/// a·b written with `zip`: d/da = b, d/db = a
#[differentiate]
#[allow(clippy::ptr_arg)] // `&Vec` parameters are part of what is tested
fn dot(a: &[f64], b: &Vec<f64>) -> f64 {
    a.iter().zip(b.iter()).map(|(p, q)| p * q).sum()
}

#[test]
fn zip_map_sum_is_a_dot_product() {
    let a = [0.3, -1.2, 2.5, 0.7];
    let b = vec![1.1, 0.4, -0.6, 2.0];
    let (v, (ga, gb)) = dot_grad(&a, &b);
    assert_eq!(v.to_bits(), dot(&a, &b).to_bits());
    assert_all_close(&ga, &b);
    assert_all_close(&gb, &a);
}

/// Σ (i + 1) sin x_i: d/dx_i = (i + 1) cos x_i
#[differentiate]
fn weighted(x: [f64; 4]) -> f64 {
    x.iter()
        .enumerate()
        .map(|(i, v): (usize, &f64)| (i as f64 + 1.0) * v.sin())
        .sum::<f64>()
}

#[test]
fn enumerate_map_sum() {
    let x = [0.3, -1.2, 2.5, 0.7];
    let (v, g) = weighted_grad(x);
    assert_eq!(v.to_bits(), weighted(x).to_bits());
    let want: Vec<f64> = (0..4).map(|i| (i as f64 + 1.0) * x[i].cos()).collect();
    assert_all_close(&g, &want);
}

/// Π (x_i + 2) over a range of indices: d/dx_j = Π_{i≠j} (x_i + 2), exact
/// when a factor is zero.
#[differentiate]
fn shifted_product(x: &[f64]) -> f64 {
    (0..x.len()).map(|i| x[i] + 2.0).product::<f64>()
}

#[test]
fn range_map_product_with_a_zero_factor() {
    for x in [[0.5, -1.5, 1.0], [-2.0, 0.5, 1.5], [-2.0, -2.0, 3.0]] {
        let (v, g) = shifted_product_grad(&x);
        assert_eq!(v.to_bits(), shifted_product(&x).to_bits());
        let want: Vec<f64> = (0..3)
            .map(|j| (0..3).filter(|&i| i != j).map(|i| x[i] + 2.0).product())
            .collect();
        assert_all_close(&g, &want);
    }
}

/// Horner's rule as a fold over the reversed coefficients:
/// p(t) = Σ c_i t^i, d/dc_i = t^i, d/dt = Σ i c_i t^(i-1)
#[differentiate]
fn horner_fold(c: &[f64], t: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, &ci| acc * t + ci)
}

#[test]
fn fold_over_a_reversed_slice() {
    let c = [0.5, -1.0, 2.0, 0.25, -0.75];
    for t in [0.7, -1.3, 2.1] {
        let (v, (gc, gt)) = horner_fold_grad(&c, t);
        assert_eq!(v.to_bits(), horner_fold(&c, t).to_bits());
        let want_c: Vec<f64> = (0..c.len()).map(|i| t.powi(i as i32)).collect();
        let want_t: f64 = (1..c.len())
            .map(|i| i as f64 * c[i] * t.powi(i as i32 - 1))
            .sum();
        assert_all_close(&gc, &want_c);
        assert_relative_eq!(gt, want_t, max_relative = 1e-12);
        let (ac, at) = horner_fold_adjoint(&c, t, D_OUT);
        assert_all_close(&ac, &want_c.iter().map(|w| D_OUT * w).collect::<Vec<_>>());
        assert_relative_eq!(at, D_OUT * want_t, max_relative = 1e-12);
    }
}

/// Mean squared error of a line through data excluded by `wrt`: the closure
/// reads the active `w`, `b` and the constant data.
/// d/dw = 2/n Σ r_i x_i, d/db = 2/n Σ r_i, with r_i = w x_i + b - y_i
#[differentiate(wrt(w, b))]
fn mse(w: f64, b: f64, xs: &[f64], ys: &[f64]) -> f64 {
    xs.iter()
        .zip(ys)
        .map(|(x, y)| (w * x + b - y).powi(2))
        .sum::<f64>()
        / xs.len() as f64
}

#[test]
fn closure_over_constant_data() {
    let xs = [0.1, 0.5, 0.9, 1.4, 2.2];
    let ys = [1.0, 2.1, 2.9, 4.2, 5.5];
    let n = xs.len() as f64;
    for (w, b) in [(0.7, 0.2), (2.1, -0.4)] {
        let (v, (gw, gb)) = mse_grad(w, b, &xs, &ys);
        assert_eq!(v.to_bits(), mse(w, b, &xs, &ys).to_bits());
        let r: Vec<f64> = (0..5).map(|i| w * xs[i] + b - ys[i]).collect();
        let want_w: f64 = (0..5).map(|i| 2.0 * r[i] * xs[i]).sum::<f64>() / n;
        let want_b: f64 = r.iter().map(|ri| 2.0 * ri).sum::<f64>() / n;
        assert_relative_eq!(gw, want_w, max_relative = 1e-12);
        assert_relative_eq!(gb, want_b, max_relative = 1e-12);
    }
}

/// Σ_i Σ_j tanh(a_i b_j): d/da_i = Σ_j b_j sech²(a_i b_j), d/db_j = Σ_i a_i sech²(a_i b_j)
#[differentiate]
fn nested(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .map(|p| b.iter().map(|q| (p * q).tanh()).sum::<f64>())
        .sum::<f64>()
}

#[test]
fn nested_map_sums() {
    let a = [0.3, -0.8, 1.1];
    let b = [0.5, 1.7];
    let (v, (ga, gb)) = nested_grad(&a, &b);
    assert_eq!(v.to_bits(), nested(&a, &b).to_bits());
    let sech2 = |z: f64| 1.0 - z.tanh().powi(2);
    let want_a: Vec<f64> = a
        .iter()
        .map(|p| b.iter().map(|q| q * sech2(p * q)).sum())
        .collect();
    let want_b: Vec<f64> = b
        .iter()
        .map(|q| a.iter().map(|p| p * sech2(p * q)).sum())
        .collect();
    assert_all_close(&ga, &want_a);
    assert_all_close(&gb, &want_b);
}

/// A block closure with a `let` and a branch, inside a loop that carries `s`.
/// s_{k+1} = s_k · 0.5 + Σ_i h(x_i), h(v) = v² if v > 0 else -v, three times:
/// s_3 = 0.125 y + 1.75 Σ h(x_i); d/dy = 0.125, d/dx_i = 1.75 h'(x_i)
#[differentiate]
fn block_closure_in_a_loop(x: &[f64], y: f64) -> f64 {
    let mut s = y;
    for _ in 0..3 {
        let h = x
            .iter()
            .map(|v| {
                let sq = v * v;
                if *v > 0.0 {
                    sq
                } else {
                    -v
                }
            })
            .sum::<f64>();
        s = s * 0.5 + h;
    }
    s
}

#[test]
fn block_closure_with_a_branch_inside_a_loop() {
    let x = [0.4, -1.3, 2.2, -0.1];
    let y = 0.9;
    let (v, (gx, gy)) = block_closure_in_a_loop_grad(&x, y);
    assert_eq!(v.to_bits(), block_closure_in_a_loop(&x, y).to_bits());
    let want_x: Vec<f64> = x
        .iter()
        .map(|v| 1.75 * if *v > 0.0 { 2.0 * v } else { -1.0 })
        .collect();
    assert_all_close(&gx, &want_x);
    assert_relative_eq!(gy, 0.125, max_relative = 1e-12);
    let mut p = x.to_vec();
    p.push(y);
    let mut g = gx.clone();
    g.push(gy);
    check_gradient(|p: &[f64]| block_closure_in_a_loop(&p[..4], p[4]), &p, &g).assert_within(1e-6);
}

/// log Σ exp(x_i) in f32: d/dx_i = softmax(x)_i
#[differentiate]
fn log_sum_exp(x: [f32; 3]) -> f32 {
    x.iter().map(|v| v.exp()).sum::<f32>().ln()
}

#[test]
fn f32_map_sum() {
    let x = [0.1f32, -0.7, 1.2];
    let (v, g) = log_sum_exp_grad(x);
    assert_eq!(v.to_bits(), log_sum_exp(x).to_bits());
    let z: f32 = x.iter().map(|v| v.exp()).sum();
    for i in 0..3 {
        assert_relative_eq!(g[i], x[i].exp() / z, max_relative = 1e-6);
    }
}

/// Softmax cross-entropy with the maximum from `fold` and the buffers from
/// `collect`: d/dz_i = softmax(z)_i - [i = label]
#[differentiate(wrt(z))]
fn softmax_xent(z: &[f64], label: usize) -> f64 {
    let m = z.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    let exps: Vec<f64> = z.iter().map(|v| (v - m).exp()).collect();
    let total: f64 = exps.iter().sum();
    let probs = exps.iter().map(|e| e / total).collect::<Vec<f64>>();
    -probs[label].ln()
}

#[test]
fn map_collect_into_a_vec() {
    for (z, label) in [
        ([0.3, -1.2, 0.8], 1),
        ([2.0, 0.1, -0.5], 0),
        ([-0.4, 0.9, 3.1], 2),
    ] {
        let (v, g) = softmax_xent_grad(&z, label);
        assert_eq!(v.to_bits(), softmax_xent(&z, label).to_bits());
        let t: f64 = z.iter().map(|v| v.exp()).sum();
        let want: Vec<f64> = (0..3)
            .map(|i| z[i].exp() / t - if i == label { 1.0 } else { 0.0 })
            .collect();
        assert_all_close(&g, &want);
        check_gradient(|p: &[f64]| softmax_xent(p, label), &z, &g).assert_within(1e-6);
    }
}

/// Closures evaluated on values only: in a `while` condition, over data
/// excluded by `wrt`, in `count`/`any`. The loop scales y by 1.5 k times,
/// k fixed near the point, so out = 1.5^k y S + n x_0 (S = Σ data², n the
/// count of positive x): d/dy = 1.5^k S, d/dx_0 = n, the rest 0.
#[differentiate(wrt(x, y))]
fn on_values(x: &[f64], y: f64, data: &[f64]) -> f64 {
    let mut y = y;
    let mut k = 0;
    while x.iter().map(|v| v * y).sum::<f64>() < 10.0 && k < 20 {
        y *= 1.5;
        k += 1;
    }
    let scale: f64 = data.iter().map(|d| d * d).sum();
    let n = x.iter().filter(|v| **v > 0.0).count() as f64;
    if x.iter().any(|v| v.is_nan()) {
        return 0.0;
    }
    y * scale + n * x[0]
}

#[test]
fn closures_evaluated_on_values() {
    let data = [0.5, 1.5, -2.0];
    let s: f64 = data.iter().map(|d| d * d).sum();
    for (x, y) in [([0.7, 1.3, -0.4], 0.45), ([2.0, -0.5, 0.25], 1.1)] {
        let (v, (gx, gy)) = on_values_grad(&x, y, &data);
        assert_eq!(v.to_bits(), on_values(&x, y, &data).to_bits());
        let sum_x: f64 = x.iter().sum();
        let mut k = 0;
        let mut yk = y;
        while sum_x * yk < 10.0 && k < 20 {
            yk *= 1.5;
            k += 1;
        }
        let n = x.iter().filter(|v| **v > 0.0).count() as f64;
        assert_all_close(&gx, &[n, 0.0, 0.0]);
        assert_relative_eq!(gy, 1.5f64.powi(k) * s, max_relative = 1e-12);
    }
}

/// The largest |a_i - b_i| by `fold` with a function path, and the smallest
/// x_i by `f64::min`: out = max_i |a_i - b_i| + min_i a_i, so the derivative
/// goes to the arg-max (sign of the difference) and to the arg-min.
#[differentiate]
fn extremes(a: &[f64], b: &[f64]) -> f64 {
    let worst = a
        .iter()
        .zip(b)
        .map(|(p, q)| (p - q).abs())
        .fold(f64::NEG_INFINITY, f64::max);
    let least = a.iter().copied().fold(f64::INFINITY, f64::min);
    worst + least
}

#[test]
fn fold_with_a_function_path() {
    let a = [0.5, -1.0, 2.0];
    let b = [0.25, 1.5, 1.0];
    let (v, (ga, gb)) = extremes_grad(&a, &b);
    assert_eq!(v.to_bits(), extremes(&a, &b).to_bits());
    // |a_1 - b_1| = 2.5 is the largest, a_1 - b_1 < 0; a_1 = -1 is the least.
    assert_all_close(&ga, &[0.0, -1.0 + 1.0, 0.0]);
    assert_all_close(&gb, &[0.0, 1.0, 0.0]);
}

/// `f_adjoint_acc` adds into caller buffers across calls.
#[test]
fn accumulation_across_calls() {
    let a = [0.3, -1.2];
    let b = vec![1.1, 0.4];
    let mut da = [0.0; 2];
    let mut db = [0.0; 2];
    dot_adjoint_acc(&a, &b, 1.0, &mut da, &mut db);
    dot_adjoint_acc(&a, &b, 2.0, &mut da, &mut db);
    assert_all_close(&da, &[3.0 * b[0], 3.0 * b[1]]);
    assert_all_close(&db, &[3.0 * a[0], 3.0 * a[1]]);
}
