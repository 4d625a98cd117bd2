//! Forward mode, `#[differentiate(tangent)]`: `f_tangent` against directional
//! derivatives written by hand, against `f_grad`·v, and against central
//! differences along the direction; the value bit for bit `f`'s.
#![deny(warnings)]

mod support;

use gradmacro::differentiate;
use support::rng::Rng;
use support::{assert_bits, assert_close};

#[differentiate(tangent)]
fn seed(x: f64) -> f64 {
    let q = x * x;
    q + x
}

#[test]
fn seed_example_tangent_is_seven() {
    assert_eq!(seed_tangent(3.0, 1.0), (12.0, 7.0));
    assert_eq!(seed_tangent(3.0, 2.0), (12.0, 14.0));
}

#[differentiate(tangent)]
fn mix(x: f64, y: f64) -> f64 {
    let a = (x * y).sin();
    let b = x.exp() / (1.0 + y * y);
    a * b + x.powi(3) - y.sqrt() + x.atan2(y)
}

fn mix_dx(x: f64, y: f64) -> (f64, f64) {
    let a = (x * y).sin();
    let b = x.exp() / (1.0 + y * y);
    let da_dx = y * (x * y).cos();
    let da_dy = x * (x * y).cos();
    let db_dx = b;
    let db_dy = -x.exp() * 2.0 * y / ((1.0 + y * y) * (1.0 + y * y));
    let r2 = x * x + y * y;
    (
        da_dx * b + a * db_dx + 3.0 * x * x + y / r2,
        da_dy * b + a * db_dy - 0.5 / y.sqrt() - x / r2,
    )
}

/// `f_tangent` along `v` at `p` against a derivative written out by hand,
/// against `f_grad`·v and against a central difference along `v`.
fn check_dir(what: &str, value: f64, got: f64, hand: f64, grad_dot_v: f64, fd: f64, f_value: f64) {
    assert_bits(what, value, f_value);
    assert_close(&format!("{what} vs hand"), got, hand, 1e-12, 1e-12);
    assert_close(
        &format!("{what} vs f_grad.v"),
        got,
        grad_dot_v,
        1e-12,
        1e-12,
    );
    assert_close(&format!("{what} vs finite difference"), got, fd, 1e-6, 1e-6);
}

#[test]
fn scalar_tangent_matches_hand_and_gradient() {
    let mut rng = Rng::new(11);
    for _ in 0..20 {
        let (x, y) = (rng.uniform(-1.5, 1.5), rng.uniform(0.3, 2.0));
        let (vx, vy) = (rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0));
        let (value, dot) = mix_tangent(x, y, vx, vy);
        let (dx, dy) = mix_dx(x, y);
        let (_, (gx, gy)) = mix_grad(x, y);
        let h = 1e-6;
        let fd = (mix(x + h * vx, y + h * vy) - mix(x - h * vx, y - h * vy)) / (2.0 * h);
        let what = format!("mix at ({x}, {y}) along ({vx}, {vy})");
        check_dir(
            &what,
            value,
            dot,
            dx * vx + dy * vy,
            gx * vx + gy * vy,
            fd,
            mix(x, y),
        );
    }
}

#[differentiate(tangent)]
fn weighted(x: f64, w: &[f64], data: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..w.len() {
        let r = w[i] * data[i] - x;
        if r > 0.0 {
            s += r * r;
        } else {
            s -= 0.5 * r;
        }
    }
    let m: f64 = w.iter().map(|v| v * v).sum();
    s * x.tanh() + m.ln_1p()
}

#[test]
fn arrays_loops_and_branches() {
    let mut rng = Rng::new(12);
    for n in [1, 3, 7] {
        let x = rng.uniform(-1.0, 1.0);
        let w = rng.vec(n, -1.0, 1.0);
        let data = rng.vec(n, -2.0, 2.0);
        let vx = rng.uniform(-1.0, 1.0);
        let vw = rng.vec(n, -1.0, 1.0);
        let vd = rng.vec(n, -1.0, 1.0);
        let (value, dot) = weighted_tangent(x, &w, &data, vx, &vw, &vd);
        // By hand: s = Σ piece(r_i), r_i = w_i d_i - x.
        let (mut s, mut ds) = (0.0, 0.0);
        for i in 0..n {
            let r = w[i] * data[i] - x;
            let dr = vw[i] * data[i] + w[i] * vd[i] - vx;
            if r > 0.0 {
                s += r * r;
                ds += 2.0 * r * dr;
            } else {
                s -= 0.5 * r;
                ds -= 0.5 * dr;
            }
        }
        let m: f64 = w.iter().map(|v| v * v).sum();
        let dm: f64 = w.iter().zip(&vw).map(|(a, b)| 2.0 * a * b).sum();
        let th = x.tanh();
        let hand = ds * th + s * (1.0 - th * th) * vx + dm / (1.0 + m);
        let (_, (gx, gw, gd)) = weighted_grad(x, &w, &data);
        let gv = gx * vx
            + gw.iter().zip(&vw).map(|(a, b)| a * b).sum::<f64>()
            + gd.iter().zip(&vd).map(|(a, b)| a * b).sum::<f64>();
        let h = 1e-6;
        let at = |t: f64| {
            let w2: Vec<f64> = w.iter().zip(&vw).map(|(a, b)| a + t * b).collect();
            let d2: Vec<f64> = data.iter().zip(&vd).map(|(a, b)| a + t * b).collect();
            weighted(x + t * vx, &w2, &d2)
        };
        let fd = (at(h) - at(-h)) / (2.0 * h);
        let f_value = weighted(x, &w, &data);
        check_dir(
            &format!("weighted n={n}"),
            value,
            dot,
            hand,
            gv,
            fd,
            f_value,
        );
    }
}

#[test]
#[should_panic(expected = "the tangent `t_w` has length 2 but the parameter `w` has length 3")]
fn tangent_length_mismatch_panics_naming_it() {
    let _ = weighted_tangent(
        0.5,
        &[1.0, 2.0, 3.0],
        &[1.0, 1.0, 1.0],
        1.0,
        &[1.0, 0.0],
        &[0.0; 3],
    );
}

#[differentiate(wrt(x), tangent)]
fn scaled(x: f64, k: f64, data: &[f64]) -> f64 {
    let mut s = 0.0;
    for d in data {
        s += (x * d).cos() * k;
    }
    s
}

#[test]
fn wrt_takes_one_tangent_per_differentiable_parameter() {
    let data = [0.5, -1.0, 2.0];
    for x in [-0.7, 0.2, 1.3] {
        let (value, dot) = scaled_tangent(x, 1.5, &data, 2.0);
        let hand: f64 = data.iter().map(|d| -(x * d).sin() * d * 1.5 * 2.0).sum();
        assert_bits("scaled value", value, scaled(x, 1.5, &data));
        assert_close("scaled tangent", dot, hand, 1e-12, 1e-12);
    }
}

#[differentiate(tangent)]
fn inner(a: f64, w: &[f64]) -> f64 {
    a.sin() * w[0] + w[1] * w[1]
}

#[differentiate(wrt(x), tangent)]
fn outer(x: f64, w: &[f64]) -> f64 {
    let mut v = vec![0.0; 2];
    v[0] = x * 2.0;
    v[1] = x.exp();
    inner(x * x, &v) + inner(1.0, w) * x
}

#[test]
fn calls_go_through_the_callee_pushforward() {
    let w = [0.3, -0.8];
    for x in [-0.9, 0.1, 0.8] {
        let (value, dot) = outer_tangent(x, &w, 1.0);
        // inner(x², [2x, e^x]) = sin(x²)·2x + e^{2x}; inner(1, w)·x.
        let hand = 2.0 * x * (x * x).cos() * 2.0 * x
            + (x * x).sin() * 2.0
            + 2.0 * (2.0 * x).exp()
            + (1.0f64.sin() * w[0] + w[1] * w[1]);
        assert_bits("outer value", value, outer(x, &w));
        assert_close("outer tangent", dot, hand, 1e-12, 1e-12);
        let (_, g) = outer_grad(x, &w);
        assert_close("outer tangent vs grad", dot, g, 1e-12, 1e-12);
    }
}

#[differentiate(tangent)]
fn early(x: f64, n: usize) -> f64 {
    let mut s = x;
    let mut i = 0;
    while i < n {
        s = s * x + 1.0;
        if s > 10.0 {
            return s.sqrt();
        }
        i += 1;
    }
    s.max(0.5 * x)
}

#[test]
fn while_loops_and_early_return() {
    let mut rng = Rng::new(13);
    for _ in 0..40 {
        let x = rng.uniform(-2.0, 3.0);
        let n = rng.below(6);
        let (value, dot) = early_tangent(x, n, 1.0);
        let (_, g) = early_grad(x, n);
        let h = 1e-7;
        let fd = (early(x + h, n) - early(x - h, n)) / (2.0 * h);
        assert_bits("early value", value, early(x, n));
        assert_close("early tangent vs grad", dot, g, 1e-12, 1e-12);
        if (fd - g).abs() < 1e-3 * (1.0 + g.abs()) {
            assert_close("early tangent vs finite difference", dot, fd, 1e-5, 1e-5);
        }
    }
}

#[differentiate(tangent)]
fn every_primitive(x: f64, y: f64) -> f64 {
    let a = x.sin() + x.cos() + x.tan() + (x * 0.5).asin() + (x * 0.5).acos() + x.atan();
    let b = x.sinh() + x.cosh() + x.tanh() + x.asinh() + (y + 1.5).acosh() + (x * 0.5).atanh();
    let c = x.exp() + x.exp2() + x.exp_m1() + y.ln() + y.ln_1p() + y.log(3.0) + y.log2();
    let d = y.log10() + y.sqrt() + y.cbrt() + x.powi(3) + y.powf(x) + x.hypot(y) + x.abs();
    let e = y.recip() + x.mul_add(y, 2.0) + x.max(y) + x.min(y) + x.clamp(-0.5, 0.5);
    let f = x.signum() + x.floor() + x.fract() + x.to_degrees() + y.to_radians() + x % y;
    let g = -x / y + x.atan2(y);
    a * b + c * d - e * f + g
}

#[test]
fn every_primitive_agrees_with_the_gradient() {
    let mut rng = Rng::new(14);
    for _ in 0..20 {
        let (x, y) = (rng.uniform(-0.9, 0.9), rng.uniform(0.4, 1.8));
        let (vx, vy) = (rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0));
        let (value, dot) = every_primitive_tangent(x, y, vx, vy);
        let (_, (gx, gy)) = every_primitive_grad(x, y);
        assert_bits("value", value, every_primitive(x, y));
        assert_close("tangent vs grad", dot, gx * vx + gy * vy, 1e-11, 1e-11);
    }
}

#[differentiate(tangent)]
fn prod_of(w: &[f64]) -> f64 {
    let p: f64 = w.iter().product();
    let s: f64 = w.iter().sum();
    p + s * s
}

#[test]
fn reductions() {
    let w = [0.5, -2.0, 0.0, 3.0];
    let v = [1.0, 0.5, -1.0, 2.0];
    let (value, dot) = prod_of_tangent(&w, &v);
    // d(prod) = Σ v_k Π_{j≠k} w_j; only k = 2 (w_2 = 0) survives: 0.5·-2·3·-1 = 3.
    let s: f64 = w.iter().sum();
    let hand = 3.0 + 2.0 * s * v.iter().sum::<f64>();
    assert_bits("prod value", value, prod_of(&w));
    assert_close("prod tangent", dot, hand, 1e-14, 1e-14);
}

#[differentiate(tangent)]
fn single(x: f32, w: &[f32]) -> f32 {
    x * w[0].sin() + w[1] * w[1]
}

#[test]
fn f32_tangents_are_f32() {
    let w = [0.4f32, -1.2];
    let (value, dot): (f32, f32) = single_tangent(1.5, &w, 1.0, &[0.5, 2.0]);
    let hand = w[0].sin() + 1.5 * w[0].cos() * 0.5 + 2.0 * w[1] * 2.0;
    assert_eq!(value.to_bits(), single(1.5, &w).to_bits());
    assert!((dot - hand).abs() < 1e-5, "{dot} vs {hand}");
}

#[differentiate(tangent)]
fn constant_output(x: f64) -> f64 {
    let _ = x;
    2.5
}

#[test]
fn output_not_depending_on_the_input_has_zero_tangent() {
    assert_eq!(constant_output_tangent(1.0, 3.0), (2.5, 0.0));
}

struct Spring {
    k: f64,
    rest: f64,
}

impl Spring {
    #[differentiate(tangent)]
    fn energy(&self, x: f64) -> f64 {
        let d = x - self.rest;
        0.5 * self.k * d * d
    }
}

#[test]
fn methods_get_a_tangent_method() {
    let s = Spring { k: 3.0, rest: 0.5 };
    for x in [-1.0, 0.7, 2.0] {
        let (value, dot) = s.energy_tangent(x, 2.0);
        assert_bits("spring value", value, s.energy(x));
        assert_close("spring tangent", dot, 3.0 * (x - 0.5) * 2.0, 1e-14, 1e-14);
    }
}

#[differentiate(tangent, hessian)]
#[allow(clippy::ptr_arg)]
fn shapes(a: [f64; 3], w: &Vec<f64>, r: &[f64; 2]) -> f64 {
    let mut s = 0.0;
    for i in 0..3 {
        s += a[i] * w[i];
    }
    s * r[0] - r[1] * r[1]
}

#[test]
fn every_array_shape() {
    let a = [1.0, -2.0, 0.5];
    let w = vec![0.3, 0.7, -1.1];
    let r = [1.5, 2.0];
    let (ta, tw, tr) = ([1.0, 0.0, 2.0], [0.5, 0.5, 0.5], [1.0, -1.0]);
    let (value, dot) = shapes_tangent(a, &w, &r, &ta, &tw, &tr);
    let s: f64 = a.iter().zip(&w).map(|(x, y)| x * y).sum();
    let ds: f64 = (0..3).map(|i| ta[i] * w[i] + a[i] * tw[i]).sum();
    assert_bits("shapes value", value, shapes(a, &w, &r));
    assert_close(
        "shapes tangent",
        dot,
        ds * r[0] + s * tr[0] - 2.0 * r[1] * tr[1],
        1e-14,
        1e-14,
    );
    let (_, _, h) = shapes_hessian(a, &w, &r);
    // ∂²/∂a_0∂w_0 = r_0, ∂²/∂r_1² = -2, ∂²/∂a_1∂r_0 = w_1.
    assert_close("H[a0][w0]", h[0][3], r[0], 1e-14, 1e-14);
    assert_close("H[r1][r1]", h[7][7], -2.0, 1e-14, 1e-14);
    assert_close("H[a1][r0]", h[1][6], w[1], 1e-14, 1e-14);
}

mod hand {
    /// A function the macro does not see into, with both rules written by hand.
    pub fn logsumexp(w: &[f64], scale: f64) -> f64 {
        let m = w.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        scale * (m + w.iter().map(|v| (v - m).exp()).sum::<f64>().ln())
    }

    #[gradmacro::custom_tangent(logsumexp)]
    pub fn logsumexp_tangent_rule(w: &[f64], scale: f64, t_w: &[f64], t_scale: f64) -> (f64, f64) {
        let value = logsumexp(w, scale);
        let z: f64 = w.iter().map(|v| v.exp()).sum();
        let dot: f64 = w.iter().zip(t_w).map(|(v, t)| v.exp() / z * t).sum();
        (value, scale * dot + value / scale * t_scale)
    }

    #[gradmacro::custom_adjoint(logsumexp)]
    pub fn logsumexp_adjoint(w: &[f64], scale: f64, d_out: f64) -> (Vec<f64>, f64) {
        let z: f64 = w.iter().map(|v| v.exp()).sum();
        let dw = w.iter().map(|v| d_out * scale * v.exp() / z).collect();
        (dw, d_out * logsumexp(w, scale) / scale)
    }
}

use hand::{logsumexp, logsumexp_pullback, logsumexp_pushforward};

#[differentiate(tangent)]
fn uses_custom_rule(x: f64, w: &[f64]) -> f64 {
    let mut v = vec![0.0; 2];
    v[0] = x * w[0];
    v[1] = w[1].sin();
    logsumexp(&v, x * x) + logsumexp(w, 2.0)
}

#[test]
fn custom_tangent_rules_are_used_by_callers() {
    let w = [0.4, -0.9];
    for x in [-0.8, 0.5, 1.3] {
        let (value, dot) = uses_custom_rule_tangent(x, &w, 1.0, &[0.0, 0.0]);
        assert_bits("value", value, uses_custom_rule(x, &w));
        let (_, (gx, _)) = uses_custom_rule_grad(x, &w);
        assert_close("custom tangent vs custom adjoint", dot, gx, 1e-12, 1e-12);
        let h = 1e-6;
        let fd = (uses_custom_rule(x + h, &w) - uses_custom_rule(x - h, &w)) / (2.0 * h);
        assert_close("custom tangent vs finite difference", dot, fd, 1e-7, 1e-7);
        let (_, dw) = uses_custom_rule_tangent(x, &w, 0.0, &[1.0, -1.0]);
        let (_, (_, gw)) = uses_custom_rule_grad(x, &w);
        assert_close("along w", dw, gw[0] - gw[1], 1e-12, 1e-12);
    }
}
