//! Vector outputs: `f_jacobian`, `f_adjoint` (Jᵀ·d_out), `f_adjoint_acc` and
//! `f_tangent` (J·t) against Jacobians written out by hand, for `[f64; 2]`,
//! `[f64; 3]` and `Vec<f64>` outputs; the value bit for bit `f`'s.
#![deny(warnings)]

mod support;

use gradmacro::differentiate;
use support::rng::Rng;
use support::{assert_all_close, assert_close};

/// Checks every generated function of a vector output against `want` (rows =
/// outputs, columns = flattened parameters): `jac` from `f_jacobian`, and
/// `vjp(d)`/`jvp(t)` flattened.
fn check_products(
    what: &str,
    jac: &[Vec<f64>],
    want: &[Vec<f64>],
    vjp: impl Fn(&[f64]) -> Vec<f64>,
    jvp: impl Fn(&[f64]) -> Vec<f64>,
    rng: &mut Rng,
) {
    assert_eq!(jac.len(), want.len(), "{what}: rows");
    for (i, (g, w)) in jac.iter().zip(want).enumerate() {
        assert_all_close(&format!("{what}: row {i}"), g, w, 1e-12, 1e-12);
    }
    let (m, n) = (want.len(), want[0].len());
    let d = rng.vec(m, -1.0, 1.0);
    let t = rng.vec(n, -1.0, 1.0);
    let jt_d: Vec<f64> = (0..n)
        .map(|j| (0..m).map(|i| want[i][j] * d[i]).sum())
        .collect();
    let j_t: Vec<f64> = (0..m)
        .map(|i| (0..n).map(|j| want[i][j] * t[j]).sum())
        .collect();
    assert_all_close(&format!("{what}: Jᵀ·d"), &vjp(&d), &jt_d, 1e-12, 1e-12);
    assert_all_close(&format!("{what}: J·t"), &jvp(&t), &j_t, 1e-12, 1e-12);
}

#[differentiate(tangent)]
fn rotate(theta: f64, p: [f64; 2]) -> [f64; 2] {
    let c = theta.cos();
    let s = theta.sin();
    [c * p[0] - s * p[1], s * p[0] + c * p[1]]
}

#[test]
fn rotation() {
    let mut rng = Rng::new(31);
    for _ in 0..5 {
        let th = rng.uniform(-3.0, 3.0);
        let p = [rng.uniform(-2.0, 2.0), rng.uniform(-2.0, 2.0)];
        let (value, jac) = rotate_jacobian(th, p);
        assert_eq!(value, rotate(th, p));
        let (c, s) = (th.cos(), th.sin());
        let want = vec![
            vec![-s * p[0] - c * p[1], c, -s],
            vec![c * p[0] - s * p[1], s, c],
        ];
        check_products(
            "rotate",
            &jac,
            &want,
            |d| {
                let (dt, dp) = rotate_adjoint(th, p, d);
                vec![dt, dp[0], dp[1]]
            },
            |t| {
                let (v, dv) = rotate_tangent(th, p, t[0], &t[1..]);
                assert_eq!(v, rotate(th, p));
                dv.to_vec()
            },
            &mut rng,
        );
    }
}

/// Spherical to cartesian: more outputs than inputs (forward by columns).
#[differentiate(tangent)]
fn cartesian(r: f64, theta: f64, phi: f64) -> [f64; 3] {
    let st = theta.sin();
    [r * st * phi.cos(), r * st * phi.sin(), r * theta.cos()]
}

#[test]
fn spherical_to_cartesian() {
    let mut rng = Rng::new(32);
    for _ in 0..5 {
        let (r, th, ph) = (
            rng.uniform(0.5, 2.0),
            rng.uniform(0.1, 3.0),
            rng.uniform(-3.0, 3.0),
        );
        let (value, jac) = cartesian_jacobian(r, th, ph);
        assert_eq!(value, cartesian(r, th, ph));
        let (st, ct, sp, cp) = (th.sin(), th.cos(), ph.sin(), ph.cos());
        let want = vec![
            vec![st * cp, r * ct * cp, -r * st * sp],
            vec![st * sp, r * ct * sp, r * st * cp],
            vec![ct, -r * st, 0.0],
        ];
        check_products(
            "cartesian",
            &jac,
            &want,
            |d| {
                let (a, b, c) = cartesian_adjoint(r, th, ph, d);
                vec![a, b, c]
            },
            |t| cartesian_tangent(r, th, ph, t[0], t[1], t[2]).1.to_vec(),
            &mut rng,
        );
    }
}

#[differentiate(tangent)]
fn softmax(x: &[f64]) -> Vec<f64> {
    let mut m = x[0];
    for &v in x {
        if v > m {
            m = v;
        }
    }
    let mut e = vec![0.0; x.len()];
    let mut s = 0.0;
    for i in 0..x.len() {
        e[i] = (x[i] - m).exp();
        s += e[i];
    }
    let mut out = vec![0.0; x.len()];
    for i in 0..x.len() {
        out[i] = e[i] / s;
    }
    out
}

#[test]
fn softmax_against_its_closed_form() {
    let mut rng = Rng::new(33);
    for n in [1, 3, 6] {
        let x = rng.vec(n, -2.0, 2.0);
        let (value, jac) = softmax_jacobian(&x);
        assert_eq!(value, softmax(&x));
        let p = &value;
        let want: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| p[i] * (f64::from(u8::from(i == j)) - p[j]))
                    .collect()
            })
            .collect();
        check_products(
            "softmax",
            &jac,
            &want,
            |d| softmax_adjoint(&x, d),
            |t| softmax_tangent(&x, t).1,
            &mut rng,
        );
    }
}

/// Rosenbrock's residuals r = (10 (x_{i+1} - x_i²), 1 - x_i): 2(n-1) outputs.
#[differentiate]
fn residuals(x: &[f64]) -> Vec<f64> {
    let mut r = Vec::with_capacity(2 * x.len());
    for i in 0..x.len() - 1 {
        r.push(10.0 * (x[i + 1] - x[i] * x[i]));
        r.push(1.0 - x[i]);
    }
    r
}

#[test]
fn rosenbrock_residuals() {
    let mut rng = Rng::new(34);
    // 20 columns: two forward passes (16 tangents each, the second 4 wide).
    for n in [2, 4, 20] {
        let x = rng.vec(n, -1.5, 1.5);
        let (value, jac) = residuals_jacobian(&x);
        assert_eq!(value, residuals(&x));
        let mut want = vec![vec![0.0; n]; 2 * (n - 1)];
        for i in 0..n - 1 {
            want[2 * i][i] = -20.0 * x[i];
            want[2 * i][i + 1] = 10.0;
            want[2 * i + 1][i] = -1.0;
        }
        let d = rng.vec(2 * (n - 1), -1.0, 1.0);
        let mut acc = vec![0.5; n];
        residuals_adjoint_acc(&x, &d, &mut acc);
        let vjp = residuals_adjoint(&x, &d);
        for j in 0..n {
            assert_close("acc adds", acc[j], 0.5 + vjp[j], 1e-14, 1e-14);
        }
        check_products(
            "residuals",
            &jac,
            &want,
            |d| residuals_adjoint(&x, d),
            |t| {
                // No `tangent` flag: J·t from the Jacobian itself.
                jac.iter()
                    .map(|row| row.iter().zip(t).map(|(a, b)| a * b).sum())
                    .collect()
            },
            &mut rng,
        );
    }
}

#[test]
#[should_panic(expected = "residuals_adjoint: `d_out` has length 3 but the output has length 2")]
fn adjoint_length_mismatch_panics() {
    let _ = residuals_adjoint(&[1.0, 2.0], &[1.0, 2.0, 3.0]);
}

/// One RK4 step of the damped pendulum with step h (a constant): the
/// sensitivity of the next state to the current one and to the damping.
#[differentiate(wrt(y, c), tangent)]
fn rk4(y: [f64; 2], c: f64, h: f64) -> [f64; 2] {
    let k1 = [y[1], -y[0].sin() - c * y[1]];
    let y2 = [y[0] + 0.5 * h * k1[0], y[1] + 0.5 * h * k1[1]];
    let k2 = [y2[1], -y2[0].sin() - c * y2[1]];
    let y3 = [y[0] + 0.5 * h * k2[0], y[1] + 0.5 * h * k2[1]];
    let k3 = [y3[1], -y3[0].sin() - c * y3[1]];
    let y4 = [y[0] + h * k3[0], y[1] + h * k3[1]];
    let k4 = [y4[1], -y4[0].sin() - c * y4[1]];
    [
        y[0] + h / 6.0 * (k1[0] + 2.0 * k2[0] + 2.0 * k3[0] + k4[0]),
        y[1] + h / 6.0 * (k1[1] + 2.0 * k2[1] + 2.0 * k3[1] + k4[1]),
    ]
}

#[test]
fn ode_step_against_central_differences() {
    let mut rng = Rng::new(35);
    for _ in 0..5 {
        let y = [rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0)];
        let (c, h) = (rng.uniform(0.0, 0.5), 0.1);
        let (value, jac) = rk4_jacobian(y, c, h);
        assert_eq!(value, rk4(y, c, h));
        let eps = 1e-6;
        let fd = |k: usize| {
            let (mut yp, mut ym, mut cp, mut cm) = (y, y, c, c);
            if k < 2 {
                yp[k] += eps;
                ym[k] -= eps;
            } else {
                cp += eps;
                cm -= eps;
            }
            let (a, b) = (rk4(yp, cp, h), rk4(ym, cm, h));
            [(a[0] - b[0]) / (2.0 * eps), (a[1] - b[1]) / (2.0 * eps)]
        };
        for k in 0..3 {
            let col = fd(k);
            for (i, row) in jac.iter().enumerate() {
                assert_close(&format!("rk4 J[{i}][{k}]"), row[k], col[i], 1e-8, 1e-8);
            }
        }
        // J·t from the tangent, Jᵀ·d from the adjoint, against the Jacobian.
        let (_, jt) = rk4_tangent(y, c, h, &[1.0, -2.0], 0.5);
        for i in 0..2 {
            let want = jac[i][0] - 2.0 * jac[i][1] + 0.5 * jac[i][2];
            assert_close("rk4 J·t", jt[i], want, 1e-13, 1e-13);
        }
        let (dy, dc) = rk4_adjoint(y, c, h, &[0.3, -0.7]);
        assert_close(
            "rk4 Jᵀ·d [0]",
            dy[0],
            0.3 * jac[0][0] - 0.7 * jac[1][0],
            1e-13,
            1e-13,
        );
        assert_close(
            "rk4 Jᵀ·d [1]",
            dy[1],
            0.3 * jac[0][1] - 0.7 * jac[1][1],
            1e-13,
            1e-13,
        );
        assert_close(
            "rk4 Jᵀ·d c",
            dc,
            0.3 * jac[0][2] - 0.7 * jac[1][2],
            1e-13,
            1e-13,
        );
    }
}

#[differentiate]
fn polar_f32(r: f32, theta: f32) -> [f32; 2] {
    [r * theta.cos(), r * theta.sin()]
}

#[test]
fn f32_jacobians_are_f32() {
    let (value, jac): ([f32; 2], Vec<Vec<f32>>) = polar_f32_jacobian(2.0, 0.5);
    assert_eq!(value, polar_f32(2.0, 0.5));
    let want = [
        [0.5f32.cos(), -2.0 * 0.5f32.sin()],
        [0.5f32.sin(), 2.0 * 0.5f32.cos()],
    ];
    for i in 0..2 {
        for j in 0..2 {
            assert!((jac[i][j] - want[i][j]).abs() < 1e-6, "J[{i}][{j}]");
        }
    }
}

/// The README's example, as written there.
#[differentiate(tangent)]
fn polar(r: f64, theta: f64) -> [f64; 2] {
    [r * theta.cos(), r * theta.sin()]
}

#[test]
fn readme_example() {
    let (xy, jac) = polar_jacobian(2.0, 0.5);
    let (dr, dtheta) = polar_adjoint(2.0, 0.5, &[1.0, 0.0]);
    let (_, jt) = polar_tangent(2.0, 0.5, 1.0, 0.0);
    assert_eq!(xy, polar(2.0, 0.5));
    assert_eq!(
        jac,
        vec![
            vec![0.5f64.cos(), -2.0 * 0.5f64.sin()],
            vec![0.5f64.sin(), 2.0 * 0.5f64.cos()]
        ]
    );
    assert_eq!((dr, dtheta), (jac[0][0], jac[0][1]));
    assert_eq!(jt, [jac[0][0], jac[1][0]]);
}

// A differentiated function calling vector-output ones: the annotation on the
// `let` says the call returns an array.

#[differentiate(tangent)]
fn to_xy(r: f64, theta: f64) -> [f64; 2] {
    [r * theta.cos(), r * theta.sin()]
}

#[differentiate(wrt(w), tangent)]
fn scaled(w: &[f64], k: f64) -> Vec<f64> {
    let mut out = vec![0.0; w.len()];
    for i in 0..w.len() {
        out[i] = k * w[i] * w[i];
    }
    out
}

#[differentiate(tangent)]
#[allow(clippy::needless_range_loop)]
fn uses_vectors(r: f64, theta: f64, w: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..2 {
        let p: [f64; 2] = to_xy(r * w[i], theta);
        s += p[0] * p[1];
    }
    let q: Vec<f64> = scaled(w, r);
    s + q[0] + q[1] * theta
}

#[test]
fn calls_of_vector_outputs() {
    let mut rng = Rng::new(36);
    for _ in 0..6 {
        let (r, th) = (rng.uniform(0.5, 2.0), rng.uniform(-3.0, 3.0));
        let w = rng.vec(2, -1.0, 1.0);
        let (value, (gr, gt, gw)) = uses_vectors_grad(r, th, &w);
        assert_eq!(value, uses_vectors(r, th, &w));
        // By hand: p0 p1 = (r w_i)² sin θ cos θ; q = r w².
        let sc = th.sin() * th.cos();
        let c2 = (2.0 * th).cos();
        let sw2: f64 = w.iter().map(|v| v * v).sum();
        let want_r = 2.0 * r * sw2 * sc + w[0] * w[0] + w[1] * w[1] * th;
        let want_t = r * r * sw2 * c2 + r * w[1] * w[1];
        let want_w = [
            2.0 * r * r * w[0] * sc + 2.0 * r * w[0],
            2.0 * r * r * w[1] * sc + 2.0 * r * w[1] * th,
        ];
        assert_close("d/dr", gr, want_r, 1e-12, 1e-12);
        assert_close("d/dθ", gt, want_t, 1e-12, 1e-12);
        assert_all_close("d/dw", &gw, &want_w, 1e-12, 1e-12);
        let (tv, dot) = uses_vectors_tangent(r, th, &w, 0.5, -1.0, &[1.0, 2.0]);
        assert_eq!(tv, value);
        let want = 0.5 * want_r - want_t + want_w[0] + 2.0 * want_w[1];
        assert_close("tangent", dot, want, 1e-12, 1e-12);
    }
}

/// With `n = x.len()`, columns a, x_0..x_{n-1}, b; rows:
/// out_i = a x_i² + Σx + b where x_i > 0, else sin(b x_i) + b (i < n);
/// out_n = x_0 x_1 a b; out_{n+1} = e^a − (Σx)².
#[differentiate(tangent)]
fn mixed(a: f64, x: &[f64], b: f64) -> Vec<f64> {
    let s: f64 = x.iter().sum();
    let mut out = vec![0.0; x.len() + 2];
    for i in 0..x.len() {
        if x[i] > 0.0 {
            out[i] = a * x[i] * x[i] + s;
        } else {
            out[i] = (b * x[i]).sin();
        }
        out[i] += b;
    }
    let q = [x[0], x[1], a];
    let prod: f64 = q.iter().product();
    out[x.len()] = prod * b;
    out[x.len() + 1] = a.exp() - s * s;
    out
}

#[test]
fn many_columns_through_branches_loops_and_reductions() {
    let mut rng = Rng::new(35);
    // 21 and 5 columns: two forward passes (the second 5 wide), one.
    for n in [19, 3] {
        let (a, b) = (rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0));
        let x = rng.vec(n, -1.5, 1.5);
        let (value, jac) = mixed_jacobian(a, &x, b);
        let plain = mixed(a, &x, b);
        assert_eq!(value.len(), plain.len());
        for (v, p) in value.iter().zip(&plain) {
            assert_eq!(v.to_bits(), p.to_bits());
        }
        let s: f64 = x.iter().sum();
        let mut want = vec![vec![0.0; n + 2]; n + 2];
        for i in 0..n {
            let row = &mut want[i];
            if x[i] > 0.0 {
                row[0] = x[i] * x[i];
                for k in 0..n {
                    row[1 + k] = 1.0;
                }
                row[1 + i] += 2.0 * a * x[i];
            } else {
                row[1 + i] = b * (b * x[i]).cos();
                row[n + 1] = x[i] * (b * x[i]).cos();
            }
            row[n + 1] += 1.0;
        }
        want[n][0] = x[0] * x[1] * b;
        want[n][1] = x[1] * a * b;
        want[n][2] = x[0] * a * b;
        want[n][n + 1] = x[0] * x[1] * a;
        want[n + 1][0] = a.exp();
        for k in 0..n {
            want[n + 1][1 + k] = -2.0 * s;
        }
        check_products(
            "mixed",
            &jac,
            &want,
            |d| {
                let (da, dx, db) = mixed_adjoint(a, &x, b, d);
                [&[da][..], &dx, &[db]].concat()
            },
            |t| {
                let (v, jt) = mixed_tangent(a, &x, b, t[0], &t[1..=n], t[n + 1]);
                assert_eq!(v, plain);
                jt
            },
            &mut rng,
        );
    }
}

/// Outputs that do not depend on the parameters' values (only on `w`'s
/// length): every derivative is 0. Nothing was generated for it once.
#[differentiate(tangent)]
fn constant_rows(w: &[f64]) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::with_capacity(w.len());
    for k in 0..w.len() {
        out.push((k as f64 + 0.5).sin());
    }
    out
}

#[test]
fn outputs_independent_of_the_parameters() {
    let w = [0.3, -1.2, 2.0, 0.7];
    let (value, jac) = constant_rows_jacobian(&w);
    assert_eq!(value, constant_rows(&w));
    assert_eq!(jac, vec![vec![0.0; 4]; 4]);
    assert_eq!(
        constant_rows_adjoint(&w, &[1.0, 2.0, 3.0, 4.0]),
        vec![0.0; 4]
    );
    let (tv, t) = constant_rows_tangent(&w, &[1.0, -1.0, 0.5, 2.0]);
    assert_eq!(tv, value);
    assert_eq!(t, vec![0.0; 4]);
}

/// A helper with no flag: forward mode cannot go through it.
#[differentiate]
fn squared(a: f64) -> f64 {
    a * a
}

/// Two columns and three rows, calling a helper without `tangent`: the
/// Jacobian is taken by rows in reverse mode (forward mode, cheaper for the
/// shape, would need `squared_pushforward`, which `tangent` alone makes).
#[differentiate]
fn through_a_plain_helper(x: f64, y: f64) -> [f64; 3] {
    [squared(x), x * y, squared(y).sin()]
}

#[test]
fn jacobian_through_a_helper_without_tangent() {
    for (x, y) in [(0.5, 1.5), (-1.25, 0.75), (2.0, -0.3)] {
        let (value, jac) = through_a_plain_helper_jacobian(x, y);
        let plain = through_a_plain_helper(x, y);
        for (a, b) in value.iter().zip(plain) {
            assert_eq!(a.to_bits(), b.to_bits(), "value");
        }
        let want = [
            vec![2.0 * x, 0.0],
            vec![y, x],
            vec![0.0, (y * y).cos() * 2.0 * y],
        ];
        for (i, (g, w)) in jac.iter().zip(&want).enumerate() {
            assert_all_close(&format!("row {i}"), g, w, 1e-12, 1e-12);
        }
        let (dx, dy) = through_a_plain_helper_adjoint(x, y, &[1.0, -2.0, 0.5]);
        assert_close("Jᵀ·d x", dx, 2.0 * x - 2.0 * y, 1e-12, 1e-12);
        assert_close("Jᵀ·d y", dy, -2.0 * x + 0.5 * want[2][1], 1e-12, 1e-12);
    }
}

/// Reductions assigned inside a loop and a branch, taken by columns (more
/// outputs than inputs): each output's tangents come lane by lane.
#[differentiate]
#[allow(clippy::needless_late_init, clippy::needless_range_loop)] // The case under test.
fn reductions_by_columns(xs: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; 4];
    for t in 0..4 {
        let total = || xs.iter().sum::<f64>();
        let b = total();
        let p: f64;
        if t % 2 == 0 {
            p = xs.iter().product::<f64>();
        } else {
            p = b;
        }
        out[t] = b * (t as f64 + 1.0) + p;
    }
    out
}

#[test]
fn reductions_assigned_in_loops_and_branches_by_columns() {
    for xs in [[0.5, -1.5], [2.0, 0.25], [-0.75, -1.25]] {
        let (value, jac) = reductions_by_columns_jacobian(&xs);
        assert_eq!(value, reductions_by_columns(&xs));
        // out[t] = (t + 1) Σx + (t even ? Πx : Σx).
        for (t, row) in jac.iter().enumerate() {
            let k = t as f64 + 1.0;
            let want = if t % 2 == 0 {
                [k + xs[1], k + xs[0]]
            } else {
                [k + 1.0, k + 1.0]
            };
            assert_all_close("row", row, &want, 1e-12, 1e-12);
        }
    }
}
