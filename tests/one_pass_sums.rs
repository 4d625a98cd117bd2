//! Functions returning what their last loop sums (`s += term`), whose
//! gradient runs each term's reverse inside the loop, right after the term
//! (one pass over the data, as a hand-written gradient does), next to
//! shapes that must keep two passes. Each is checked against its derivative
//! by hand, central differences, `f_adjoint` and `f_adjoint_acc` (which adds
//! into what its buffers hold), at several random points; values bit for bit.

// Index loops are how the functions under test are written.
#![allow(clippy::needless_range_loop)]

mod support;

use gradmacro::differentiate;
use support::rng::Rng;
use support::{assert_all_close, assert_bits, check_slice_fn, D_OUT};

/// Σ_i x_i w + (x_i > 0.5 ? sin(x_i w) : −(x_i w)²), the branch evaluated
/// again on parameters: d/dx_i = w + (cos(x_i w) w | −2 x_i w²), d/dw likewise.
#[differentiate]
fn branchy(x: &[f64], w: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        let t = x[i] * w;
        s += t;
        if x[i] > 0.5 {
            s += t.sin();
        } else {
            s -= t * t;
        }
    }
    s
}

fn branchy_by_hand(x: &[f64], w: f64) -> (Vec<f64>, f64) {
    let (mut dx, mut dw) = (vec![0.0; x.len()], 0.0);
    for (i, &xi) in x.iter().enumerate() {
        let t = xi * w;
        let dt = if xi > 0.5 {
            1.0 + t.cos()
        } else {
            1.0 - 2.0 * t
        };
        dx[i] = dt * w;
        dw += dt * xi;
    }
    (dx, dw)
}

#[test]
fn a_branch_inside_the_sum() {
    let mut rng = Rng::new(71);
    for n in [1, 4, 9] {
        for _ in 0..4 {
            let x = rng.vec(n, -1.0, 2.0);
            let w = rng.uniform(-1.5, 1.5);
            // Away from the kink at 0.5.
            if x.iter().any(|v| (v - 0.5).abs() < 1e-3) {
                continue;
            }
            let (value, (dx, dw)) = branchy_grad(&x, w);
            assert_bits("value", value, branchy(&x, w));
            let (hx, hw) = branchy_by_hand(&x, w);
            assert_all_close("d/dx", &dx, &hx, 1e-12, 1e-12);
            assert_all_close("d/dw", &[dw], &[hw], 1e-12, 1e-12);
            let (ax, aw) = branchy_adjoint(&x, w, D_OUT);
            let scaled: Vec<f64> = hx.iter().map(|v| v * D_OUT).collect();
            assert_all_close("adjoint x", &ax, &scaled, 1e-12, 1e-12);
            assert_all_close("adjoint w", &[aw], &[hw * D_OUT], 1e-12, 1e-12);
            let (mut bx, mut bw) = (vec![1.0; n], 0.25);
            branchy_adjoint_acc(&x, w, D_OUT, &mut bx, &mut bw);
            let acc: Vec<f64> = scaled.iter().map(|v| v + 1.0).collect();
            assert_all_close("acc x", &bx, &acc, 1e-12, 1e-12);
            assert_all_close("acc w", &[bw], &[hw * D_OUT + 0.25], 1e-12, 1e-12);
            let fd = gradmacro_runtime::central_difference(
                |p| branchy(&p[..n], p[n]),
                &[&x[..], &[w]].concat(),
            );
            assert_all_close(
                "finite differences",
                &[&dx[..], &[dw]].concat(),
                &fd,
                1e-6,
                1e-6,
            );
        }
    }
}

/// xᵀ A x over a constant matrix, by a nested loop: d/dx = (A + Aᵀ) x.
#[differentiate(wrt(x))]
fn quadratic(x: &[f64], a: &[f64]) -> f64 {
    let n = x.len();
    let mut s = 0.0;
    for i in 0..n {
        for j in 0..n {
            s += x[i] * a[i * n + j] * x[j];
        }
    }
    s
}

/// Each term reads a sum over all of `x` and an index made from the
/// counter: s = Σ_i x_i Σx + x_i x_{(i+1) mod n}, every `x` a parameter.
#[differentiate]
fn coupled(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        let k = (i + 1) % x.len();
        let total = x.iter().sum::<f64>();
        s += x[i] * total + x[i] * x[k];
    }
    s
}

#[test]
fn nested_loops_reductions_and_indices() {
    let mut rng = Rng::new(72);
    for n in [2, 3, 6] {
        let a = rng.vec(n * n, -1.0, 1.0);
        for _ in 0..3 {
            let x = rng.vec(n, -2.0, 2.0);
            let mut want = vec![0.0; n];
            for i in 0..n {
                for j in 0..n {
                    want[i] += (a[i * n + j] + a[j * n + i]) * x[j];
                }
            }
            check_slice_fn(
                "quadratic",
                &x,
                &|p| quadratic(p, &a),
                &|p| quadratic_grad(p, &a),
                &|p, d| quadratic_adjoint(p, &a, d),
                &want,
                D_OUT,
            );
            // d/dx_j = 2 Σx + x_{j+1} + x_{j−1} (indices mod n).
            let total: f64 = x.iter().sum();
            let want: Vec<f64> = (0..n)
                .map(|j| 2.0 * total + x[(j + 1) % n] + x[(j + n - 1) % n])
                .collect();
            check_slice_fn(
                "coupled",
                &x,
                &|p| coupled(p),
                &|p| coupled_grad(p),
                &|p, d| coupled_adjoint(p, d),
                &want,
                D_OUT,
            );
        }
    }
}

/// Not one pass: the sum is scaled in the loop (`s *= r`), so its adjoint
/// changes from one iteration to the next. s_n = Σ_i x_i r^{n−1−i}.
#[differentiate(wrt(x))]
fn discounted(x: &[f64], r: f64) -> f64 {
    let mut s = 0.0;
    for xi in x.iter() {
        s *= r;
        s += xi;
    }
    s
}

/// Not one pass: what the loop sums is read after it.
#[differentiate]
fn sum_then_log(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for xi in x.iter() {
        s += xi * xi;
    }
    s.ln()
}

/// Not one pass: each term reads the running sum.
#[differentiate]
fn running(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for xi in x.iter() {
        let t = s * 0.5;
        s += t * xi;
        s += xi;
    }
    s
}

#[test]
fn sums_whose_adjoint_changes_keep_two_passes() {
    let mut rng = Rng::new(73);
    for n in [1, 3, 7] {
        let x = rng.vec(n, 0.2, 1.5);
        let r: f64 = 0.75;
        let want: Vec<f64> = (0..n).map(|i| r.powi((n - 1 - i) as i32)).collect();
        check_slice_fn(
            "discounted",
            &x,
            &|p| discounted(p, r),
            &|p| discounted_grad(p, r),
            &|p, d| discounted_adjoint(p, r, d),
            &want,
            D_OUT,
        );
        let total: f64 = x.iter().map(|v| v * v).sum();
        let want: Vec<f64> = x.iter().map(|v| 2.0 * v / total).collect();
        check_slice_fn(
            "sum_then_log",
            &x,
            &|p| sum_then_log(p),
            &|p| sum_then_log_grad(p),
            &|p, d| sum_then_log_adjoint(p, d),
            &want,
            D_OUT,
        );
        // s_{k+1} = s_k (1 + x_k / 2) + x_k: by forward accumulation of
        // ∂s/∂x_j, which enters at step j and is scaled by every later step.
        let mut want = vec![0.0; n];
        for j in 0..n {
            let mut s = 0.0;
            let mut ds = 0.0;
            for (k, &xk) in x.iter().enumerate() {
                let dxk = if k == j { 1.0 } else { 0.0 };
                ds = ds * (1.0 + 0.5 * xk) + s * 0.5 * dxk + dxk;
                s = s * (1.0 + 0.5 * xk) + xk;
            }
            want[j] = ds;
        }
        check_slice_fn(
            "running",
            &x,
            &|p| running(p),
            &|p| running_grad(p),
            &|p, d| running_adjoint(p, d),
            &want,
            D_OUT,
        );
    }
}

/// In `f32`: Σ (1 − x_i)² + (x_{i+1} − x_i²)², d/dx by hand.
#[differentiate]
fn valley(x: &[f32]) -> f32 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        s += (1.0 - x[i]).powi(2) + (x[i + 1] - x[i] * x[i]).powi(2);
    }
    s
}

#[test]
fn f32_sums() {
    let x = [0.5f32, -1.25, 2.0, 0.75];
    let (value, g) = valley_grad(&x);
    assert_eq!(value.to_bits(), valley(&x).to_bits());
    let mut want = [0.0f32; 4];
    for i in 0..3 {
        let b = x[i + 1] - x[i] * x[i];
        want[i] += -2.0 * (1.0 - x[i]) - 4.0 * x[i] * b;
        want[i + 1] += 2.0 * b;
    }
    for i in 0..4 {
        assert!(
            (g[i] - want[i]).abs() <= 1e-5 * want[i].abs().max(1.0),
            "valley: d/dx_{i} = {}, expected {}",
            g[i],
            want[i]
        );
    }
}

/// Mean squared error, the mean taken after the loop: d/dx_i = 2 e_i / n,
/// d/dy_i = −2 e_i / n.
#[differentiate]
fn mse(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let mut s = 0.0;
    for i in 0..x.len() {
        let e = x[i] - y[i];
        s += e * e;
    }
    s / n
}

/// The count taken after the loop (the reverse of `/ n` reads it, so the
/// loop keeps two passes), and a shift by a parameter: 0.5 Σ sin x_i / n + w.
#[differentiate]
fn late_count(x: &[f64], w: f64) -> f64 {
    let mut s = 0.0;
    for xi in x.iter() {
        s += xi.sin();
    }
    let n = x.len() as f64;
    0.5 * s / n + w
}

/// Scaled by a parameter (whose derivative reads the sum: two passes):
/// c Σ x_i³, d/dx_i = 3 c x_i², d/dc = Σ x_i³.
#[differentiate]
fn scaled(x: &[f64], c: f64) -> f64 {
    let mut s = 0.0;
    for xi in x.iter() {
        s += xi * xi * xi;
    }
    c * s
}

#[test]
fn statements_after_the_sum() {
    let mut rng = Rng::new(74);
    for n in [1, 2, 5] {
        for _ in 0..3 {
            let x = rng.vec(n, -2.0, 2.0);
            let y = rng.vec(n, -1.0, 1.0);
            let (value, (dx, dy)) = mse_grad(&x, &y);
            assert_bits("mse", value, mse(&x, &y));
            let e: Vec<f64> = x
                .iter()
                .zip(&y)
                .map(|(a, b)| 2.0 * (a - b) / n as f64)
                .collect();
            assert_all_close("mse d/dx", &dx, &e, 1e-12, 1e-12);
            let neg: Vec<f64> = e.iter().map(|v| -v).collect();
            assert_all_close("mse d/dy", &dy, &neg, 1e-12, 1e-12);
            let (ax, ay) = mse_adjoint(&x, &y, D_OUT);
            let scaled_e: Vec<f64> = e.iter().map(|v| v * D_OUT).collect();
            assert_all_close("mse adjoint x", &ax, &scaled_e, 1e-12, 1e-12);
            let scaled_neg: Vec<f64> = neg.iter().map(|v| v * D_OUT).collect();
            assert_all_close("mse adjoint y", &ay, &scaled_neg, 1e-12, 1e-12);

            let w = rng.uniform(-1.0, 1.0);
            let (value, (dx, dw)) = late_count_grad(&x, w);
            assert_bits("late_count", value, late_count(&x, w));
            let want: Vec<f64> = x.iter().map(|v| 0.5 * v.cos() / n as f64).collect();
            assert_all_close("late_count d/dx", &dx, &want, 1e-12, 1e-12);
            assert_all_close("late_count d/dw", &[dw], &[1.0], 0.0, 0.0);

            let c = rng.uniform(-1.5, 1.5);
            let (value, (dx, dc)) = scaled_grad(&x, c);
            assert_bits("scaled", value, scaled(&x, c));
            let want: Vec<f64> = x.iter().map(|v| 3.0 * c * v * v).collect();
            assert_all_close("scaled d/dx", &dx, &want, 1e-12, 1e-12);
            let cubes: f64 = x.iter().map(|v| v * v * v).sum();
            assert_all_close("scaled d/dc", &[dc], &[cubes], 1e-12, 1e-12);
            let (mut bx, mut bc) = (vec![0.5; n], -1.0);
            scaled_adjoint_acc(&x, c, D_OUT, &mut bx, &mut bc);
            let acc: Vec<f64> = want.iter().map(|v| v * D_OUT + 0.5).collect();
            assert_all_close("scaled acc x", &bx, &acc, 1e-12, 1e-12);
            assert_all_close("scaled acc c", &[bc], &[cubes * D_OUT - 1.0], 1e-12, 1e-12);
        }
    }
}

/// Terms reading values computed before the loop, whose adjoints the loop
/// adds to: ½ Σ (c x_i + sin c), c = a b. d/dx_i = c / 2, d/da = ½ (Σx + n
/// cos c) b, d/db = ½ (Σx + n cos c) a.
#[differentiate]
fn shared_factor(x: &[f64], a: f64, b: f64) -> f64 {
    let c = a * b;
    let d = c.sin();
    let mut s = 0.0;
    for i in 0..x.len() {
        s += c * x[i] + d;
    }
    s * 0.5
}

#[test]
fn terms_reading_values_from_before_the_loop() {
    let mut rng = Rng::new(75);
    for n in [1, 3, 8] {
        let x = rng.vec(n, -2.0, 2.0);
        let (a, b) = (rng.uniform(-1.5, 1.5), rng.uniform(-1.5, 1.5));
        let (value, (dx, da, db)) = shared_factor_grad(&x, a, b);
        assert_bits("value", value, shared_factor(&x, a, b));
        let c = a * b;
        assert_all_close("d/dx", &dx, &vec![0.5 * c; n], 1e-14, 1e-14);
        let common = 0.5 * (x.iter().sum::<f64>() + n as f64 * c.cos());
        assert_all_close(
            "d/da, d/db",
            &[da, db],
            &[common * b, common * a],
            1e-13,
            1e-13,
        );
        let (mut bx, mut ba, mut bb) = (vec![1.0; n], 2.0, -3.0);
        shared_factor_adjoint_acc(&x, a, b, D_OUT, &mut bx, &mut ba, &mut bb);
        let want: Vec<f64> = vec![1.0 + D_OUT * 0.5 * c; n];
        assert_all_close("acc x", &bx, &want, 1e-13, 1e-13);
        assert_all_close(
            "acc a, b",
            &[ba, bb],
            &[2.0 + D_OUT * common * b, -3.0 + D_OUT * common * a],
            1e-13,
            1e-13,
        );
    }
}
