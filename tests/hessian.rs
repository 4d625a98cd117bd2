//! Second derivatives, `#[differentiate(hessian)]`: `f_hessian` against
//! argmin_testfunctions' hand-written Hessians and against Hessians written
//! out here; `f_hvp` against H·v and against central differences of `f_grad`;
//! symmetry; the value bit for bit `f`'s and the gradient `f_grad`'s.
#![deny(warnings)]

mod support;

use gradmacro::differentiate;
use support::rng::Rng;
use support::{assert_all_close, assert_bits, assert_close};

#[differentiate(hessian)]
fn rosenbrock(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        let a = 1.0 - x[i];
        let b = x[i + 1] - x[i] * x[i];
        s += a * a + 100.0 * b * b;
    }
    s
}

fn assert_matrix_close(what: &str, got: &[Vec<f64>], want: &[Vec<f64>], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: rows");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_all_close(&format!("{what}, row {i}"), g, w, tol, tol);
    }
}

fn assert_symmetric(what: &str, h: &[Vec<f64>]) {
    for (i, row) in h.iter().enumerate() {
        for (j, &hij) in row.iter().enumerate().take(i) {
            let what = format!("{what}: H[{i}][{j}] vs H[{j}][{i}]");
            assert_close(&what, hij, h[j][i], 1e-12, 1e-12);
        }
    }
}

#[test]
fn rosenbrock_hessian_matches_argmin_testfunctions() {
    let mut rng = Rng::new(21);
    for n in [2, 3, 10] {
        for _ in 0..3 {
            let x = rng.vec(n, -2.0, 2.0);
            let (value, grad, h) = rosenbrock_hessian(&x);
            assert_bits("value", value, rosenbrock(&x));
            let (_, g) = rosenbrock_grad(&x);
            // `f_grad` adds each term's share as soon as the term is
            // computed (one pass), the Hessian's gradient after the sweep:
            // the same sums in another order.
            assert_all_close("gradient", &grad, &g, 0.0, 1e-14);
            let want = argmin_testfunctions::rosenbrock_hessian(&x);
            assert_matrix_close(&format!("rosenbrock n={n}"), &h, &want, 1e-10);
            assert_symmetric("rosenbrock", &h);
        }
    }
}

#[differentiate(hessian)]
fn himmelblau(x: f64, y: f64) -> f64 {
    (x * x + y - 11.0).powi(2) + (x + y * y - 7.0).powi(2)
}

#[test]
fn himmelblau_matches_argmin_testfunctions() {
    let mut rng = Rng::new(22);
    for _ in 0..10 {
        let (x, y) = (rng.uniform(-4.0, 4.0), rng.uniform(-4.0, 4.0));
        let (value, grad, h) = himmelblau_hessian(x, y);
        assert_bits("value", value, himmelblau(x, y));
        let want = argmin_testfunctions::himmelblau_hessian(&[x, y]);
        let want: Vec<Vec<f64>> = want.iter().map(|r| r.to_vec()).collect();
        assert_matrix_close("himmelblau", &h, &want, 1e-10);
        let d = argmin_testfunctions::himmelblau_derivative(&[x, y]);
        assert_all_close("himmelblau gradient", &grad, &d, 1e-10, 1e-10);
    }
}

/// Loops, a branch, transcendental functions and a constant parameter:
/// f = Σ_i c·w_i²·sin(x) + (x > 0 ? x³ : -x)·exp(w_0).
#[differentiate(wrt(x, w), hessian)]
fn mixed(x: f64, w: &[f64], c: f64) -> f64 {
    let mut s = 0.0;
    for wi in w {
        s += c * wi * wi * x.sin();
    }
    let k = if x > 0.0 { x * x * x } else { -x };
    s + k * w[0].exp()
}

fn mixed_hessian_by_hand(x: f64, w: &[f64], c: f64) -> Vec<Vec<f64>> {
    let n = w.len() + 1;
    let mut h = vec![vec![0.0; n]; n];
    let sw2: f64 = w.iter().map(|v| v * v).sum();
    let (k, dk, ddk) = if x > 0.0 {
        (x * x * x, 3.0 * x * x, 6.0 * x)
    } else {
        (-x, -1.0, 0.0)
    };
    let e = w[0].exp();
    h[0][0] = -c * sw2 * x.sin() + ddk * e;
    for i in 0..w.len() {
        let mut hxw = 2.0 * c * w[i] * x.cos();
        let mut hww = 2.0 * c * x.sin();
        if i == 0 {
            hxw += dk * e;
            hww += k * e;
        }
        h[0][i + 1] = hxw;
        h[i + 1][0] = hxw;
        h[i + 1][i + 1] = hww;
    }
    h
}

#[test]
fn loops_branches_and_constants_by_hand() {
    let mut rng = Rng::new(23);
    for _ in 0..10 {
        let x = rng.uniform(-2.0, 2.0);
        if x.abs() < 1e-3 {
            continue;
        }
        let w = rng.vec(4, -1.0, 1.0);
        let (value, _, h) = mixed_hessian(x, &w, 0.7);
        assert_bits("value", value, mixed(x, &w, 0.7));
        assert_matrix_close("mixed", &h, &mixed_hessian_by_hand(x, &w, 0.7), 1e-12);
    }
}

#[test]
fn hvp_is_h_times_v_and_a_difference_of_gradients() {
    let mut rng = Rng::new(24);
    for n in [2, 5] {
        let x = rng.vec(n, -1.5, 1.5);
        let v = rng.vec(n, -1.0, 1.0);
        let (value, grad, hv) = rosenbrock_hvp(&x, &v);
        assert_bits("value", value, rosenbrock(&x));
        let (_, g) = rosenbrock_grad(&x);
        assert_all_close("hvp gradient", &grad, &g, 0.0, 0.0);
        let h = argmin_testfunctions::rosenbrock_hessian(&x);
        let want: Vec<f64> = h
            .iter()
            .map(|r| r.iter().zip(&v).map(|(a, b)| a * b).sum())
            .collect();
        assert_all_close("H·v", &hv, &want, 1e-10, 1e-10);
        // Central differences of the gradient along v.
        let eps = 1e-6;
        let at = |t: f64| {
            let y: Vec<f64> = x.iter().zip(&v).map(|(a, b)| a + t * b).collect();
            rosenbrock_grad(&y).1
        };
        let (gp, gm) = (at(eps), at(-eps));
        let fd: Vec<f64> = gp
            .iter()
            .zip(&gm)
            .map(|(a, b)| (a - b) / (2.0 * eps))
            .collect();
        assert_all_close("H·v vs finite differences", &hv, &fd, 1e-4, 1e-5);
    }
}

#[test]
#[should_panic(
    expected = "rosenbrock_hvp: `v` has length 2 but the differentiable parameters have 3 elements in all"
)]
fn hvp_length_mismatch_panics() {
    let _ = rosenbrock_hvp(&[1.0, 2.0, 3.0], &[1.0, 0.0]);
}

#[differentiate(hessian)]
fn early_exit(x: f64, y: f64, n: usize) -> f64 {
    let mut s = x * y;
    for _ in 0..n {
        s = s.sin() * x + y.powf(1.5);
        if s > 3.0 {
            return s * s;
        }
    }
    s.tanh() * y
}

#[test]
fn early_exit_matches_finite_differences_of_the_gradient() {
    let mut rng = Rng::new(25);
    for _ in 0..20 {
        let (x, y, n) = (rng.uniform(-1.5, 1.5), rng.uniform(0.2, 2.0), rng.below(5));
        let (value, grad, h) = early_exit_hessian(x, y, n);
        assert_bits("value", value, early_exit(x, y, n));
        let (_, (gx, gy)) = early_exit_grad(x, y, n);
        assert_all_close("gradient", &grad, &[gx, gy], 0.0, 0.0);
        assert_symmetric("early_exit", &h);
        let eps = 1e-6;
        let fx = |d: f64| early_exit_grad(x + d, y, n).1;
        let fy = |d: f64| early_exit_grad(x, y + d, n).1;
        let col_x = (
            (fx(eps).0 - fx(-eps).0) / (2.0 * eps),
            (fx(eps).1 - fx(-eps).1) / (2.0 * eps),
        );
        let col_y = (
            (fy(eps).0 - fy(-eps).0) / (2.0 * eps),
            (fy(eps).1 - fy(-eps).1) / (2.0 * eps),
        );
        // Skip points where a branch flips within the step.
        if (early_exit(x + eps, y, n) - early_exit(x - eps, y, n)).abs() > 1e-3 {
            continue;
        }
        assert_close("Hxx", h[0][0], col_x.0, 1e-4, 1e-4);
        assert_close("Hyx", h[1][0], col_x.1, 1e-4, 1e-4);
        assert_close("Hxy", h[0][1], col_y.0, 1e-4, 1e-4);
        assert_close("Hyy", h[1][1], col_y.1, 1e-4, 1e-4);
    }
}

#[differentiate(hessian)]
fn single(x: f32, y: f32) -> f32 {
    x * x * y + y.sin()
}

#[test]
fn f32_hessians_are_f32() {
    let (value, grad, h): (f32, Vec<f32>, Vec<Vec<f32>>) = single_hessian(1.5, 0.5);
    assert_eq!(value.to_bits(), single(1.5, 0.5).to_bits());
    assert!((grad[0] - 1.5).abs() < 1e-5 && (grad[1] - (2.25 + 0.5f32.cos())).abs() < 1e-5);
    let want = [[1.0, 3.0], [3.0, -(0.5f32.sin())]];
    for i in 0..2 {
        for j in 0..2 {
            assert!(
                (h[i][j] - want[i][j]).abs() < 1e-5,
                "H[{i}][{j}] = {}",
                h[i][j]
            );
        }
    }
}

/// The README's example of the flags, as written there.
#[differentiate(wrt(x), tangent, hessian)]
fn energy(x: &[f64], k: f64) -> f64 {
    let mut e = 0.0;
    for i in 0..x.len() - 1 {
        let d = x[i + 1] - x[i] - 1.0;
        e += 0.5 * k * d * d + x[i].cos();
    }
    e
}

#[test]
fn readme_example() {
    let x = [0.1, 1.3, 2.0];
    let (value, dir) = energy_tangent(&x, 2.0, &[1.0, 0.0, -1.0]);
    let (_, grad, h) = energy_hessian(&x, 2.0);
    let (_, _, hv) = energy_hvp(&x, 2.0, &[1.0, 0.0, -1.0]);
    assert_eq!(value, energy(&x, 2.0));
    assert!((dir - (grad[0] - grad[2])).abs() < 1e-12);
    assert!((hv[1] - (h[1][0] - h[1][2])).abs() < 1e-12);
    // By hand: H = k·L (L the path Laplacian) - diag(cos x_0, cos x_1, 0).
    let want = [
        [2.0 - 0.1f64.cos(), -2.0, 0.0],
        [-2.0, 4.0 - 1.3f64.cos(), -2.0],
        [0.0, -2.0, 2.0],
    ];
    for (row, want_row) in h.iter().zip(&want) {
        assert_all_close("energy Hessian", row, want_row, 1e-14, 1e-14);
    }
}

/// Parameter names that the generated functions use for their own locals.
#[differentiate(tangent, hessian)]
#[allow(clippy::too_many_arguments)]
fn hostile(t_x: f64, x: f64, v: f64, grad: &[f64], hv: f64, n: usize, g: f64, next: f64) -> f64 {
    let mut s = t_x * x + v * hv;
    for (i, gi) in grad.iter().enumerate() {
        s += gi * g * next * (i as f64 + n as f64 - 1.0);
    }
    s * s
}

#[test]
fn hostile_names_stay_apart() {
    let grad = [0.5, -1.0];
    let args = (1.5, -0.5, 2.0, 0.25, 0.75, 1.25);
    let (t_x, x, v, hv, g, next) = args;
    let (value, dot) = hostile_tangent(
        t_x,
        x,
        v,
        &grad,
        hv,
        2,
        g,
        next,
        1.0,
        0.0,
        0.0,
        &[0.0, 0.0],
        0.0,
        0.0,
        0.0,
    );
    let s = t_x * x + v * hv + g * next * (0.5 - 2.0);
    assert_eq!(value, hostile(t_x, x, v, &grad, hv, 2, g, next));
    assert_close("d/dt_x", dot, 2.0 * s * x, 1e-14, 1e-14);
    let (_, gr, h) = hostile_hessian(t_x, x, v, &grad, hv, 2, g, next);
    assert_close("grad[0]", gr[0], 2.0 * s * x, 1e-14, 1e-14);
    // ∂²/∂t_x∂x = 2·t_x·x + 2s; ∂²/∂t_x² = 2x².
    assert_close("H[0][1]", h[0][1], 2.0 * x * t_x + 2.0 * s, 1e-13, 1e-13);
    assert_close("H[0][0]", h[0][0], 2.0 * x * x, 1e-14, 1e-14);
}

// Shrunk programs from the differential test, where forward mode or the
// Hessian once failed to compile.

#[differentiate(tangent, hessian)]
#[allow(clippy::needless_return)]
fn only_return(_x: f64) -> f64 {
    return 1.0;
}

#[differentiate(tangent, hessian)]
fn reassigned_parameter(mut z: f64, x: f64) -> f64 {
    if z <= 1.0 {
        z = 1.0;
        if 0.3 <= z {
            return x * z;
        }
    }
    z * z
}

#[differentiate(wrt(x), tangent, hessian)]
fn excluded_parameter_overwritten(mut y: f64, x: f64) -> f64 {
    y *= x;
    y * x
}

#[differentiate(wrt(w), tangent, hessian)]
#[allow(clippy::ptr_arg)]
fn collected_then_written(xs: &[f64], w: &Vec<f64>) -> f64 {
    let mut g = w[3];
    let mut cells = xs.iter().rev().map(|_| 0.5).collect::<Vec<f64>>();
    cells[4] = w[0] * w[1] + g;
    g += cells.iter().sum::<f64>() * w[2];
    g
}

#[differentiate(tangent, hessian)]
fn clamped(x: f64) -> f64 {
    (x * x).clamp(0.5, 4.0)
}

#[differentiate(tangent, hessian)]
#[allow(clippy::needless_late_init, clippy::useless_vec)] // The case under test.
fn product_in_a_branch(x: f64, y: f64) -> f64 {
    let buf = vec![x, y, x * y];
    let e: f64;
    if x < 1.0 {
        e = buf.iter().product::<f64>();
    } else {
        e = x;
    }
    e + y
}

#[test]
fn a_product_chosen_in_a_branch() {
    // x < 1: x²y² + y; otherwise x + y.
    for (x, y) in [(0.5, 1.5), (-0.75, 0.25), (0.9, -2.0)] {
        let (v, g, h) = product_in_a_branch_hessian(x, y);
        assert_bits("value", v, product_in_a_branch(x, y));
        assert_all_close(
            "gradient",
            &g,
            &[2.0 * x * y * y, 2.0 * x * x * y + 1.0],
            1e-12,
            1e-12,
        );
        let want = vec![
            vec![2.0 * y * y, 4.0 * x * y],
            vec![4.0 * x * y, 2.0 * x * x],
        ];
        assert_matrix_close("hessian", &h, &want, 1e-12);
        let (tv, t) = product_in_a_branch_tangent(x, y, 0.5, -1.0);
        assert_bits("tangent value", tv, v);
        assert_close("tangent", t, 0.5 * g[0] - g[1], 1e-12, 1e-12);
    }
    let (_, g, h) = product_in_a_branch_hessian(2.0, 3.0);
    assert_eq!(g, vec![1.0, 1.0]);
    assert_eq!(h, vec![vec![0.0, 0.0], vec![0.0, 0.0]]);
}

#[test]
fn shrunk_programs() {
    assert_eq!(only_return_tangent(2.0, 1.0), (1.0, 0.0));
    assert_eq!(only_return_hessian(2.0).2, vec![vec![0.0]]);
    // z ≤ 1: x·1, so ∂/∂x = 1; z > 1: z².
    assert_eq!(reassigned_parameter_hessian(0.5, 3.0).1, vec![0.0, 1.0]);
    assert_eq!(
        reassigned_parameter_hessian(2.0, 3.0).2,
        vec![vec![2.0, 0.0], vec![0.0, 0.0]]
    );
    // y·x²: ∂/∂x = 2xy, ∂²/∂x² = 2y.
    assert_eq!(
        excluded_parameter_overwritten_tangent(2.0, 3.0, 1.0),
        (18.0, 12.0)
    );
    assert_eq!(
        excluded_parameter_overwritten_hessian(2.0, 3.0).2,
        vec![vec![4.0]]
    );
    // g = w3 + (4·0.5 + w0 w1 + w3)·w2.
    let w = vec![1.5, -2.0, 0.5, 3.0];
    let (_, g, h) = collected_then_written_hessian(&[0.0; 5], &w);
    assert_eq!(
        g,
        vec![-2.0 * 0.5, 1.5 * 0.5, 2.0 + 1.5 * -2.0 + 3.0, 1.0 + 0.5]
    );
    assert_eq!(h[0][1], 0.5);
    assert_eq!(h[0][2], -2.0);
    assert_eq!(h[2][3], 1.0);
    assert_eq!(clamped_hessian(1.5).2, vec![vec![2.0]]);
    assert_eq!(clamped_hessian(3.0).2, vec![vec![0.0]]);
}

// Second derivatives through calls: the callee's tangent program is called
// by the caller's, and differentiated through its own pullback.

#[differentiate(hessian)]
fn bump(a: f64, w: &[f64]) -> f64 {
    let mut s = a.sin();
    for wi in w {
        s += wi * wi * a;
    }
    s
}

#[differentiate(wrt(k), hessian)]
fn spring(k: f64, x: f64, data: &[f64]) -> f64 {
    0.5 * k * x * x + data[0] * k.exp()
}

#[differentiate(hessian)]
fn caller(x: f64, y: f64, w: &[f64]) -> f64 {
    let mut v = vec![0.0; 2];
    v[0] = x * y;
    v[1] = w[1];
    let mut s = 0.0;
    for i in 0..2 {
        if w[i] > 0.0 {
            s += bump(x * w[i], &v);
        } else {
            s -= bump(y, &w[1..]);
        }
    }
    s + spring(x, y, w) * y
}

fn caller_plain(p: &[f64]) -> f64 {
    caller(p[0], p[1], &p[2..])
}

#[test]
fn hessian_through_calls_matches_finite_differences_of_the_gradient() {
    let mut rng = Rng::new(26);
    for _ in 0..12 {
        let p = [
            rng.uniform(-1.0, 1.0),
            rng.uniform(-1.0, 1.0),
            rng.uniform(-1.0, 1.0),
            rng.uniform(-1.0, 1.0),
        ];
        let (value, grad, h) = caller_hessian(p[0], p[1], &p[2..]);
        assert_bits("caller value", value, caller_plain(&p));
        let (_, (gx, gy, gw)) = caller_grad(p[0], p[1], &p[2..]);
        assert_all_close(
            "caller gradient",
            &grad,
            &[gx, gy, gw[0], gw[1]],
            1e-13,
            1e-13,
        );
        assert_symmetric("caller", &h);
        // Central differences of the gradient, column by column.
        let eps = 1e-6;
        let grad_at = |q: &[f64]| {
            let (_, (a, b, c)) = caller_grad(q[0], q[1], &q[2..]);
            vec![a, b, c[0], c[1]]
        };
        for j in 0..4 {
            let (mut qp, mut qm) = (p, p);
            qp[j] += eps;
            qm[j] -= eps;
            let (gp, gm) = (grad_at(&qp), grad_at(&qm));
            let col: Vec<f64> = gp
                .iter()
                .zip(&gm)
                .map(|(a, b)| (a - b) / (2.0 * eps))
                .collect();
            let got: Vec<f64> = h.iter().map(|row| row[j]).collect();
            assert_all_close(&format!("caller column {j}"), &got, &col, 1e-6, 1e-6);
        }
        // H·v from the same sweep.
        let v = [0.3, -1.1, 0.7, 0.2];
        let (_, _, hv) = caller_hvp(p[0], p[1], &p[2..], &v);
        let want: Vec<f64> = h
            .iter()
            .map(|r| r.iter().zip(&v).map(|(a, b)| a * b).sum())
            .collect();
        assert_all_close("caller H·v", &hv, &want, 1e-12, 1e-12);
    }
}

struct Chain {
    c: f64,
}

impl Chain {
    #[differentiate(hessian)]
    fn link(&self, a: f64, b: f64) -> f64 {
        self.c * (a - b).powi(2) + a.cosh()
    }

    #[differentiate(hessian)]
    fn energy(&self, x: &[f64]) -> f64 {
        let mut e = 0.0;
        for i in 0..x.len() - 1 {
            e += self.link(x[i], x[i + 1]);
        }
        e
    }
}

#[test]
fn methods_calling_methods() {
    let chain = Chain { c: 2.0 };
    let x = [0.2, -0.5, 1.0];
    let (_, _, h) = chain.energy_hessian(&x);
    // Tridiagonal: 2c·(neighbours) + cosh on the diagonal of the first two.
    let c = 2.0;
    let want = [
        [2.0 * c + 0.2f64.cosh(), -2.0 * c, 0.0],
        [-2.0 * c, 4.0 * c + (-0.5f64).cosh(), -2.0 * c],
        [0.0, -2.0 * c, 2.0 * c],
    ];
    for (row, w) in h.iter().zip(&want) {
        assert_all_close("chain Hessian", row, w, 1e-13, 1e-13);
    }
}

#[differentiate(tangent, hessian)]
#[allow(clippy::eq_op)]
fn power_of_zero(x: f64) -> f64 {
    f64::powi(x - x, 1) + x.powi(0) + x.powi(2)
}

#[differentiate(tangent, hessian)]
fn count_as_value(flag: bool, w: &[f64], mut y: f64) -> f64 {
    if flag {
        y = (w.iter().filter(|c| **c > 2.25).count() as f64).cos();
    }
    y * w[0]
}

#[test]
fn shrunk_programs_2() {
    // (x - x)¹ has derivative 0 everywhere; x⁰ too, even at 0.
    assert_eq!(
        power_of_zero_hessian(1.5),
        (1.0 + 2.25, vec![3.0], vec![vec![2.0]])
    );
    assert_eq!(power_of_zero_grad(0.0), (1.0, 0.0));
    let w = [3.0, 1.0];
    let (_, g, h) = count_as_value_hessian(true, &w, 0.5);
    let c = 1.0f64.cos();
    assert_eq!(g, vec![c, 0.0, 0.0]);
    assert_eq!(h, vec![vec![0.0; 3]; 3]);
}

/// tanh(a·x) both sides of the point where its rule stops reading the value
/// (|tanh| = 0.9) and deep in saturation: f' = a sech², f'' = −2a² tanh sech².
#[differentiate(tangent, hessian)]
fn scaled_tanh(x: f64, a: f64) -> f64 {
    (a * x).tanh()
}

#[test]
fn tanh_second_derivatives_on_both_sides_of_saturation() {
    let a = 1.25;
    // 600 and −700: a z past cosh's overflow, where 1 / cosh² gave NaN to the
    // Hessian (differential-test program 120872); its entries are 0.
    for x in [0.2, -0.9, 1.17, 1.19, -2.5, 6.0, 12.0, -13.0, 600.0, -700.0] {
        let z: f64 = a * x;
        let sech2 = 4.0 / ((z.exp() + (-z).exp()) * (z.exp() + (-z).exp()));
        let (value, grad, h) = scaled_tanh_hessian(x, a);
        assert_bits("value", value, scaled_tanh(x, a));
        assert_close("f'", grad[0], a * sech2, 0.0, 1e-14);
        assert_close("d/da", grad[1], x * sech2, 0.0, 1e-14);
        let hxx = -2.0 * a * a * z.tanh() * sech2;
        assert_close("f''", h[0][0], hxx, 0.0, 1e-13);
        // d²/dx da = sech² − 2 a x tanh sech²
        let hxa = sech2 - 2.0 * z * z.tanh() * sech2;
        assert_close("d²/dx da", h[0][1], hxa, 1e-300, 1e-13);
        assert_close("d²/da dx", h[1][0], hxa, 1e-300, 1e-13);
        let (_, t) = scaled_tanh_tangent(x, a, 1.0, 0.0);
        assert_close("tangent", t, a * sech2, 0.0, 1e-14);
    }
}

/// A repeated differentiated value (`vec![y * y; n]`): f = y² Σ x.
#[differentiate(hessian)]
#[allow(clippy::needless_range_loop)]
fn repeated_square(x: &[f64], y: f64) -> f64 {
    let v = vec![y * y; x.len()];
    let mut s = 0.0;
    for i in 0..x.len() {
        s += v[i] * x[i];
    }
    s
}

/// A map before a filter before a map: f = Σ over 2 x_i > 0.3 of (2 x_i)².
#[differentiate(hessian)]
fn mapped_filtered_squares(x: &[f64]) -> f64 {
    x.iter()
        .map(|v| v * 2.0)
        .filter(|d| *d > 0.3)
        .map(|d| d * d)
        .sum::<f64>()
}

#[test]
fn hessians_through_repeated_values_and_filtered_maps() {
    for (x, y) in [([0.3, -0.7, 1.1], 0.8), ([-1.2, 0.4, 0.9], -0.6)] {
        let (value, g, h) = repeated_square_hessian(&x, y);
        assert_bits("value", value, repeated_square(&x, y));
        let sx: f64 = x.iter().sum();
        let mut want_g = vec![y * y; 3];
        want_g.push(2.0 * y * sx);
        assert_all_close("gradient", &g, &want_g, 1e-12, 1e-12);
        // ∂²/∂x_i∂y = 2y, ∂²/∂y² = 2 Σ x, ∂²/∂x_i∂x_j = 0.
        let want_h: Vec<Vec<f64>> = (0..4)
            .map(|i| {
                (0..4)
                    .map(|j| match (i, j) {
                        (3, 3) => 2.0 * sx,
                        (3, _) | (_, 3) => 2.0 * y,
                        _ => 0.0,
                    })
                    .collect()
            })
            .collect();
        assert_matrix_close("hessian", &h, &want_h, 1e-12);

        let (value, g, h) = mapped_filtered_squares_hessian(&x);
        assert_bits("value", value, mapped_filtered_squares(&x));
        let counted = x.map(|v| 2.0 * v > 0.3);
        let want_g: Vec<f64> = (0..3)
            .map(|i| if counted[i] { 8.0 * x[i] } else { 0.0 })
            .collect();
        assert_all_close("gradient", &g, &want_g, 1e-12, 1e-12);
        let want_h: Vec<Vec<f64>> = (0..3)
            .map(|i| {
                (0..3)
                    .map(|j| if i == j && counted[i] { 8.0 } else { 0.0 })
                    .collect()
            })
            .collect();
        assert_matrix_close("hessian", &h, &want_h, 1e-12);
    }
}
