//! Arrays in `#[differentiate]`: slice, `Vec` and fixed-size array
//! parameters, local buffers, element reads and writes, `push`, reductions,
//! loops over elements, and the contracts of the generated functions on
//! arrays (gradient shapes, bit-identical values, bounds checks,
//! accumulation into caller buffers, freshness, linear cost).
//!
//! Every gradient is compared with a derivative worked out independently of
//! the macro: written out by hand in closed form, or, where there is no
//! short closed form, computed by forward-mode dual numbers over a copy of
//! the function body. Many are also compared with central finite
//! differences as a second opinion. Every `_grad` value is compared
//! bit-for-bit with the function's own value.
//!
//! The functions index in loops (`for i in 0..n { v[i] = .. }`) on purpose:
//! index reads and writes are what is being tested, so clippy's
//! `needless_range_loop` and `manual_memcpy` are allowed.

#![allow(clippy::needless_range_loop, clippy::manual_memcpy)]

mod support;

use gradmacro::differentiate;
use gradmacro_runtime::check_gradient;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use support::dual::{forward_gradient, Dual};
use support::rng::Rng;

/// Relative tolerance between a generated and a hand-written gradient: both
/// are `f64` evaluations of the same derivative by different formulas.
const REL: f64 = 1e-12;
/// Absolute floor, for entries that are zero or cancel to nearly zero.
const ABS: f64 = 1e-13;
/// Tolerance of the finite-difference checks (absolute or relative).
const FD_TOL: f64 = 1e-6;
/// Seed passed to `_adjoint`: not a power of two, so a dropped or
/// mis-scaled seed shows.
const D_OUT: f64 = -1.75;

// ---------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------

#[track_caller]
fn assert_close(what: &str, got: f64, want: f64) {
    support::assert_close(what, got, want, ABS, REL);
}

#[track_caller]
fn assert_all_close(what: &str, got: &[f64], want: &[f64]) {
    support::assert_all_close(what, got, want, ABS, REL);
}

#[track_caller]
fn assert_bits(what: &str, got: f64, want: f64) {
    assert_eq!(
        got.to_bits(),
        want.to_bits(),
        "{what}: _grad value {got:e} is not bit-identical to f's {want:e}"
    );
}

#[track_caller]
fn assert_fd(what: &str, f: impl Fn(&[f64]) -> f64, x: &[f64], grad: &[f64]) {
    let check = check_gradient(f, x, grad);
    assert!(
        check.passes(FD_TOL),
        "{what}: disagrees with finite differences:\n{check}"
    );
}

/// `f_grad` of a function of two slices.
type Grad2 = fn(&[f64], &[f64]) -> (f64, (Vec<f64>, Vec<f64>));
/// `f_grad`, `f_adjoint` and `f_adjoint_acc` of a function of a weight
/// slice and two constant data slices.
type DataGrad = fn(&[f64], &[f64], &[f64]) -> (f64, Vec<f64>);
type DataAdjoint = fn(&[f64], &[f64], &[f64], f64) -> Vec<f64>;
type DataAcc = fn(&[f64], &[f64], &[f64], f64, &mut [f64]);
/// `f_grad` of the linear model with a separate scalar bias.
type BiasGrad = fn(&[f64], f64, &[f64], &[f64]) -> (f64, (Vec<f64>, f64));
/// `f_grad`, `f_adjoint` and `f_adjoint_acc` of `fixed`.
type FixedGrad = fn([f64; 3], &[f64; 3]) -> (f64, ([f64; 3], [f64; 3]));
type FixedAdjoint = fn([f64; 3], &[f64; 3], f64) -> ([f64; 3], [f64; 3]);
type FixedAcc = fn([f64; 3], &[f64; 3], f64, &mut [f64], &mut [f64]);
/// `f_grad` and `f_adjoint_acc` of `vec_params`.
type VecGrad = fn(Vec<f64>, &Vec<f64>) -> (f64, (Vec<f64>, Vec<f64>));
type VecAcc = fn(Vec<f64>, &Vec<f64>, f64, &mut [f64], &mut [f64]);
/// `f_grad` of `gather` and `horner`.
type GatherGrad = fn(&[f64], &[usize], &[i64], &[bool]) -> (f64, Vec<f64>);
type HornerGrad = fn(&[f64], f64) -> (f64, (Vec<f64>, f64));
/// `f_grad` of a function of two `f32` slices.
type Grad2F32 = fn(&[f32], &[f32]) -> (f32, (Vec<f32>, Vec<f32>));

/// Whether calling `f` panics.
fn panics<R>(f: impl FnOnce() -> R) -> bool {
    catch_unwind(AssertUnwindSafe(f)).is_err()
}

// ---------------------------------------------------------------------------
// Dot product.
// ---------------------------------------------------------------------------

#[differentiate]
fn dot(x: &[f64], y: &[f64]) -> f64 {
    let mut s = 0.0;
    for (a, b) in x.iter().zip(y.iter()) {
        s += a * b;
    }
    s
}

#[differentiate]
fn dot_indexed(x: &[f64], y: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += x[i] * y[i];
    }
    s
}

#[test]
fn dot_product_gradient_is_the_other_vector() {
    let grad: Grad2 = dot_grad;
    let mut rng = Rng::new(1);
    for n in [0, 1, 2, 7, 50] {
        let x = rng.vec(n, -3.0, 3.0);
        let y = rng.vec(n, -3.0, 3.0);
        for (name, f, g) in [
            ("dot", dot as fn(&[f64], &[f64]) -> f64, grad),
            ("dot_indexed", dot_indexed, dot_indexed_grad),
        ] {
            let (v, (gx, gy)) = g(&x, &y);
            assert_bits(name, v, f(&x, &y));
            assert_eq!(gx, y, "{name}: d/dx is y exactly");
            assert_eq!(gy, x, "{name}: d/dy is x exactly");
        }
        let (ax, ay) = dot_adjoint(&x, &y, D_OUT);
        let sy: Vec<f64> = y.iter().map(|v| D_OUT * v).collect();
        let sx: Vec<f64> = x.iter().map(|v| D_OUT * v).collect();
        assert_all_close("dot adjoint x", &ax, &sy);
        assert_all_close("dot adjoint y", &ay, &sx);
    }
}

#[test]
fn dot_product_of_unequal_lengths_stops_at_the_shorter() {
    // `zip` stops at the shorter slice: the extra elements get zero.
    let x = [1.5, -2.0, 0.25, 4.0, 3.0];
    let y = [0.5, 3.0, -1.0];
    let (v, (gx, gy)) = dot_grad(&x, &y);
    assert_bits("dot", v, dot(&x, &y));
    assert_eq!(gx, vec![0.5, 3.0, -1.0, 0.0, 0.0]);
    assert_eq!(gy, vec![1.5, -2.0, 0.25]);
}

/// `x[i] * x[i]`: the same element twice in one product.
#[differentiate]
fn square_norm(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += x[i] * x[i];
    }
    s
}

#[test]
fn same_element_twice_in_a_product() {
    let mut rng = Rng::new(2);
    for n in [1, 3, 20] {
        let x = rng.vec(n, -2.0, 2.0);
        let (v, g) = square_norm_grad(&x);
        assert_bits("square_norm", v, square_norm(&x));
        let want: Vec<f64> = x.iter().map(|xi| 2.0 * xi).collect();
        assert_eq!(g, want, "2 x exactly");
    }
}

// ---------------------------------------------------------------------------
// Softmax cross-entropy.
// ---------------------------------------------------------------------------

/// `-log softmax(z)[label]`, by log-sum-exp with the maximum subtracted.
#[differentiate]
fn softmax_xent(z: &[f64], label: usize) -> f64 {
    let mut m = z[0];
    for &zi in z {
        m = m.max(zi);
    }
    let mut s = 0.0;
    for &zi in z {
        s += (zi - m).exp();
    }
    m + s.ln() - z[label]
}

/// `softmax(z) - onehot(label)`.
fn softmax_xent_analytic(z: &[f64], label: usize) -> Vec<f64> {
    let m = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = z.iter().map(|zi| (zi - m).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter()
        .enumerate()
        .map(|(i, ei)| ei / s - if i == label { 1.0 } else { 0.0 })
        .collect()
}

#[test]
fn softmax_cross_entropy_gradient_is_softmax_minus_onehot() {
    let grad: fn(&[f64], usize) -> (f64, Vec<f64>) = softmax_xent_grad;
    let mut rng = Rng::new(3);
    let mut cases: Vec<(Vec<f64>, usize)> = vec![
        (vec![0.3], 0),
        (vec![1.0, 3.0, 3.0], 0),                  // a tie for the maximum
        (vec![1.0, 3.0, 3.0], 2),                  // the label at the tie
        (vec![1000.0, 999.0, -1000.0, 1001.0], 1), // huge logits
    ];
    for n in [2, 5, 10] {
        cases.push((rng.vec(n, -4.0, 4.0), n / 2));
    }
    for (z, label) in &cases {
        let (v, g) = grad(z, *label);
        let value = softmax_xent(z, *label);
        assert!(value.is_finite(), "{z:?}: {value}");
        assert_bits("softmax_xent", v, value);
        assert_all_close(
            &format!("softmax_xent {z:?} label {label}"),
            &g,
            &softmax_xent_analytic(z, *label),
        );
        // The entries of softmax - onehot sum to 0.
        assert!(g.iter().sum::<f64>().abs() < 1e-14, "{g:?}");
        if z.iter().all(|zi| zi.abs() < 10.0) {
            assert_fd("softmax_xent", |p| softmax_xent(p, *label), z, &g);
        }
    }
}

// ---------------------------------------------------------------------------
// Mean squared error of a linear model; the data are constants.
// ---------------------------------------------------------------------------

/// `mean_i (w . x_i + bias - y_i)^2`, `w = [weights.., bias]`, the rows
/// `x_i` stored flat in `xs`.
#[differentiate(wrt(w))]
fn linear_mse(w: &[f64], xs: &[f64], ys: &[f64]) -> f64 {
    let d = w.len() - 1;
    let m = ys.len();
    let mut total = 0.0;
    for i in 0..m {
        let mut pred = w[d];
        for j in 0..d {
            pred += w[j] * xs[i * d + j];
        }
        let r = pred - ys[i];
        total += r * r;
    }
    total / m as f64
}

/// The same model with the bias as a separate scalar.
#[differentiate(wrt(w, bias))]
fn linear_mse_bias(w: &[f64], bias: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let d = w.len();
    let mut total = 0.0;
    for i in 0..ys.len() {
        let mut pred = bias;
        for j in 0..d {
            pred += w[j] * xs[i * d + j];
        }
        total += (pred - ys[i]).powi(2);
    }
    total / ys.len() as f64
}

/// `2/m sum_i r_i [x_i, 1]`.
fn linear_mse_analytic(w: &[f64], xs: &[f64], ys: &[f64]) -> Vec<f64> {
    let d = w.len() - 1;
    let m = ys.len() as f64;
    let mut g = vec![0.0; d + 1];
    for (i, y) in ys.iter().enumerate() {
        let x = &xs[i * d..(i + 1) * d];
        let r = x.iter().zip(w).map(|(a, b)| a * b).sum::<f64>() + w[d] - y;
        for j in 0..d {
            g[j] += 2.0 * r * x[j] / m;
        }
        g[d] += 2.0 * r / m;
    }
    g
}

#[test]
fn linear_mse_excludes_the_data() {
    // The data get no gradient entry: the signatures say so.
    let grad: DataGrad = linear_mse_grad;
    let adjoint: DataAdjoint = linear_mse_adjoint;
    let acc: DataAcc = linear_mse_adjoint_acc;
    let grad_b: BiasGrad = linear_mse_bias_grad;

    let mut rng = Rng::new(4);
    for (d, m) in [(1, 1), (1, 5), (3, 8), (10, 40)] {
        let w = rng.vec(d + 1, -1.0, 1.0);
        let xs = rng.vec(d * m, -2.0, 2.0);
        let ys = rng.vec(m, -2.0, 2.0);
        let (v, g) = grad(&w, &xs, &ys);
        assert_bits("linear_mse", v, linear_mse(&w, &xs, &ys));
        let want = linear_mse_analytic(&w, &xs, &ys);
        assert_all_close("linear_mse", &g, &want);
        assert_fd("linear_mse", |p| linear_mse(p, &xs, &ys), &w, &g);

        let scaled: Vec<f64> = want.iter().map(|gi| D_OUT * gi).collect();
        assert_all_close("linear_mse adjoint", &adjoint(&w, &xs, &ys, D_OUT), &scaled);
        let mut buf = vec![0.0; d + 1];
        acc(&w, &xs, &ys, D_OUT, &mut buf);
        assert_all_close("linear_mse adjoint_acc", &buf, &scaled);

        let (vb, (gw, gb)) = grad_b(&w[..d], w[d], &xs, &ys);
        assert_bits(
            "linear_mse_bias",
            vb,
            linear_mse_bias(&w[..d], w[d], &xs, &ys),
        );
        assert_all_close("linear_mse_bias w", &gw, &want[..d]);
        assert_close("linear_mse_bias bias", gb, want[d]);
    }
}

// ---------------------------------------------------------------------------
// Fixed-size arrays: `[f64; N]` and `&[f64; N]` give `[f64; N]` entries.
// ---------------------------------------------------------------------------

/// `sum_i a_i b_i^2 + a_0 a_2`.
#[differentiate]
fn fixed(a: [f64; 3], b: &[f64; 3]) -> f64 {
    let mut s = 0.0;
    for i in 0..3 {
        s += a[i] * b[i] * b[i];
    }
    s + a[0] * a[2]
}

/// A local `[0.0; N]` buffer, filled and reduced.
#[differentiate]
fn fixed_local(a: &[f64; 4]) -> f64 {
    let mut t = [0.0; 4];
    for (i, ai) in a.iter().enumerate() {
        t[i] = ai.exp() * (i as f64 + 1.0);
    }
    t.iter().sum::<f64>() * a[a.len() - 1]
}

#[test]
fn fixed_size_arrays_have_array_gradients() {
    let grad: FixedGrad = fixed_grad;
    let adjoint: FixedAdjoint = fixed_adjoint;
    let acc: FixedAcc = fixed_adjoint_acc;
    for (a, b) in [
        ([0.5, -1.25, 2.0], [1.5, 0.75, -0.5]),
        ([-2.0, 3.0, 0.125], [-1.0, 2.5, 1.75]),
    ] {
        let (v, (ga, gb)) = grad(a, &b);
        assert_bits("fixed", v, fixed(a, &b));
        let want_a = [b[0] * b[0] + a[2], b[1] * b[1], b[2] * b[2] + a[0]];
        let want_b = [2.0 * a[0] * b[0], 2.0 * a[1] * b[1], 2.0 * a[2] * b[2]];
        assert_all_close("fixed a", &ga, &want_a);
        assert_all_close("fixed b", &gb, &want_b);

        let (aa, ab) = adjoint(a, &b, D_OUT);
        assert_all_close("fixed adjoint a", &aa, &want_a.map(|g| D_OUT * g));
        assert_all_close("fixed adjoint b", &ab, &want_b.map(|g| D_OUT * g));

        let (mut da, mut db) = ([1.0; 3], [-1.0; 3]);
        acc(a, &b, D_OUT, &mut da, &mut db);
        assert_all_close("fixed acc a", &da, &want_a.map(|g| 1.0 + D_OUT * g));
        assert_all_close("fixed acc b", &db, &want_b.map(|g| -1.0 + D_OUT * g));
    }

    let local: fn(&[f64; 4]) -> (f64, [f64; 4]) = fixed_local_grad;
    let a = [0.3, -0.7, 1.1, 0.4];
    let (v, g) = local(&a);
    assert_bits("fixed_local", v, fixed_local(&a));
    // s = sum_i (i + 1) e^{a_i}; f = s a_3.
    let s: f64 = (0..4).map(|i| (i as f64 + 1.0) * a[i].exp()).sum();
    let mut want = [0.0; 4];
    for i in 0..4 {
        want[i] = (i as f64 + 1.0) * a[i].exp() * a[3];
    }
    want[3] += s;
    assert_all_close("fixed_local", &g, &want);
}

// ---------------------------------------------------------------------------
// `Vec<f64>` and `&Vec<f64>` parameters give `Vec<f64>` entries.
// ---------------------------------------------------------------------------

/// `sum v^2 + sum_i sin(r_i) v_{i mod |v|}`.
#[allow(clippy::ptr_arg)]
#[differentiate]
fn vec_params(v: Vec<f64>, r: &Vec<f64>) -> f64 {
    let mut s = 0.0;
    for vi in &v {
        s += vi * vi;
    }
    for (i, ri) in r.iter().enumerate() {
        s += ri.sin() * v[i % v.len()];
    }
    s
}

#[test]
fn vec_parameters_have_vec_gradients() {
    let grad: VecGrad = vec_params_grad;
    let acc: VecAcc = vec_params_adjoint_acc;
    let v = vec![0.5, -1.5, 2.0];
    let r = vec![0.1, 0.7, -1.3, 2.2, -0.4];
    let (val, (gv, gr)) = grad(v.clone(), &r);
    assert_bits("vec_params", val, vec_params(v.clone(), &r));
    let mut want_v: Vec<f64> = v.iter().map(|x| 2.0 * x).collect();
    let mut want_r = vec![0.0; r.len()];
    for i in 0..r.len() {
        want_v[i % v.len()] += r[i].sin();
        want_r[i] = r[i].cos() * v[i % v.len()];
    }
    assert_all_close("vec_params v", &gv, &want_v);
    assert_all_close("vec_params r", &gr, &want_r);

    let (mut dv, mut dr) = (vec![0.0; 3], vec![0.0; 5]);
    acc(v.clone(), &r, 1.0, &mut dv, &mut dr);
    acc(v.clone(), &r, 1.0, &mut dv, &mut dr);
    let twice = |w: &[f64]| w.iter().map(|x| 2.0 * x).collect::<Vec<_>>();
    assert_all_close("vec_params acc v", &dv, &twice(&want_v));
    assert_all_close("vec_params acc r", &dr, &twice(&want_r));
}

// ---------------------------------------------------------------------------
// f32 slices.
// ---------------------------------------------------------------------------

/// `sum_i c_i x_i^3 + tanh(x_i)`.
#[differentiate]
fn cubic_f32(x: &[f32], c: &[f32]) -> f32 {
    let mut s = 0.0;
    for (xi, ci) in x.iter().zip(c.iter()) {
        s += ci * xi.powi(3) + xi.tanh();
    }
    s
}

/// A local f32 buffer and a product.
#[allow(clippy::useless_vec)]
#[differentiate]
fn product_f32(x: &[f32; 3]) -> f32 {
    let mut v = vec![0.0; 3];
    for i in 0..3 {
        v[i] = x[i] + 1.0;
    }
    v.iter().product::<f32>()
}

#[test]
fn f32_slices() {
    let grad: Grad2F32 = cubic_f32_grad;
    let x: [f32; 4] = [0.5, -1.25, 0.75, 1.5];
    let c: [f32; 4] = [2.0, -0.5, 1.25, 0.3];
    let (v, (gx, gc)) = grad(&x, &c);
    assert_eq!(v.to_bits(), cubic_f32(&x, &c).to_bits());
    for i in 0..4 {
        // The derivative in f64, from the f32 inputs.
        let (xi, ci) = (x[i] as f64, c[i] as f64);
        let want_x = 3.0 * ci * xi * xi + 1.0 / xi.cosh().powi(2);
        let want_c = xi.powi(3);
        for (got, want) in [(gx[i] as f64, want_x), (gc[i] as f64, want_c)] {
            assert!(
                (got - want).abs() <= 1e-5 * want.abs().max(1.0),
                "cubic_f32 [{i}]: got {got}, want {want}"
            );
        }
    }
    let check = check_gradient(|p: &[f32]| cubic_f32(p, &c), &x, &gx);
    assert!(check.passes(1e-3), "{check}");

    let p: fn(&[f32; 3]) -> (f32, [f32; 3]) = product_f32_grad;
    let a: [f32; 3] = [0.5, -2.0, 1.5];
    let (v, g) = p(&a);
    assert_eq!(v.to_bits(), product_f32(&a).to_bits());
    let want = [
        (a[1] + 1.0) * (a[2] + 1.0),
        (a[0] + 1.0) * (a[2] + 1.0),
        (a[0] + 1.0) * (a[1] + 1.0),
    ];
    for i in 0..3 {
        assert!(
            (g[i] - want[i]).abs() <= 1e-6 * want[i].abs().max(1.0),
            "{g:?} {want:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// Local buffers written and overwritten inside loops.
// ---------------------------------------------------------------------------

/// Each element is written twice and scaled once per iteration; the first
/// value is read before it is overwritten, the last after the loop.
#[differentiate]
fn overwrite(x: &[f64]) -> f64 {
    let n = x.len();
    let mut v = vec![0.0; n];
    let mut s = 0.0;
    for i in 0..n {
        v[i] = x[i] * x[i];
        s += v[i];
        v[i] = v[i].sin() + x[i];
        v[i] *= x[i];
    }
    for i in 0..n {
        s += v[i] * v[i];
    }
    s
}

/// `s = sum x^2 + sum u^2`, `u = (sin(x^2) + x) x`.
fn overwrite_analytic(x: &[f64]) -> Vec<f64> {
    x.iter()
        .map(|&x| {
            let u = ((x * x).sin() + x) * x;
            let du = (2.0 * x * (x * x).cos() + 1.0) * x + (x * x).sin() + x;
            2.0 * x + 2.0 * u * du
        })
        .collect()
}

/// Each element overwritten once per outer iteration: after `steps` passes
/// `v_i = 1 + x_i + ... + x_i^(steps - 1)`.
#[differentiate]
fn geometric(x: &[f64], steps: usize) -> f64 {
    let mut v = vec![0.0; x.len()];
    for _ in 0..steps {
        for i in 0..x.len() {
            v[i] = v[i] * x[i] + 1.0;
        }
    }
    v.iter().sum::<f64>()
}

/// `v_i = ((1 + x_i) x_i - x_{i+1} / 2) / (2 + x_i^2)` through `+=`, `*=`,
/// `-=` and `/=` on elements.
#[differentiate]
fn compound(x: &[f64]) -> f64 {
    let n = x.len();
    let mut v = vec![1.0; n];
    for i in 0..n {
        v[i] += x[i];
        v[i] *= x[i];
        v[i] -= 0.5 * x[(i + 1) % n];
        v[i] /= 2.0 + x[i] * x[i];
    }
    let mut s = 0.0;
    for vi in v.iter() {
        s += vi;
    }
    s
}

fn compound_analytic(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let mut g = vec![0.0; n];
    for i in 0..n {
        let (a, b) = (x[i], x[(i + 1) % n]);
        let num = (1.0 + a) * a - 0.5 * b;
        let den = 2.0 + a * a;
        g[i] += ((1.0 + 2.0 * a) * den - num * 2.0 * a) / (den * den);
        g[(i + 1) % n] += -0.5 / den;
    }
    g
}

#[test]
fn local_buffers_overwritten_in_loops() {
    let mut rng = Rng::new(5);
    for n in [1, 2, 3, 16] {
        let x = rng.vec(n, -1.5, 1.5);

        let (v, g) = overwrite_grad(&x);
        assert_bits("overwrite", v, overwrite(&x));
        assert_all_close("overwrite", &g, &overwrite_analytic(&x));
        assert_fd("overwrite", overwrite, &x, &g);

        let (v, g) = compound_grad(&x);
        assert_bits("compound", v, compound(&x));
        assert_all_close("compound", &g, &compound_analytic(&x));
        assert_fd("compound", compound, &x, &g);

        for steps in [0, 1, 2, 6] {
            let (v, g) = geometric_grad(&x, steps);
            assert_bits("geometric", v, geometric(&x, steps));
            let want: Vec<f64> = x
                .iter()
                .map(|&xi| (1..steps).map(|k| k as f64 * xi.powi(k as i32 - 1)).sum())
                .collect();
            assert_all_close(&format!("geometric steps {steps}"), &g, &want);
        }
    }
}

/// Prefix products, each reading the element written in the previous
/// iteration: `sum_k prod_{j <= k} x_j`.
#[differentiate]
fn cumprod(x: &[f64]) -> f64 {
    let n = x.len();
    let mut v = vec![0.0; n];
    v[0] = x[0];
    for i in 1..n {
        v[i] = v[i - 1] * x[i];
    }
    v.iter().sum::<f64>()
}

/// `d/dx_i = sum_{k >= i} prod_{j <= k, j != i} x_j`, without dividing.
fn cumprod_analytic(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    (0..n)
        .map(|i| {
            (i..n)
                .map(|k| (0..=k).filter(|&j| j != i).map(|j| x[j]).product::<f64>())
                .sum()
        })
        .collect()
}

/// In-place sweeps (each element reads its freshly overwritten neighbour),
/// three times over, then a backwards Horner-style reduction.
#[differentiate]
fn sweep(x: &[f64]) -> f64 {
    let n = x.len();
    let mut v = vec![0.0; n];
    for i in 0..n {
        v[i] = x[i];
    }
    for _ in 0..3 {
        for i in 1..n {
            v[i] = (v[i - 1] + v[i]).sin() * x[i];
        }
    }
    let mut s = 0.0;
    for vi in v.iter().rev() {
        s = s * 0.5 + vi * vi;
    }
    s
}

fn sweep_dual(x: &[Dual<1>]) -> Dual<1> {
    let n = x.len();
    let mut v = x.to_vec();
    for _ in 0..3 {
        for i in 1..n {
            v[i] = (v[i - 1] + v[i]).sin() * x[i];
        }
    }
    let mut s = Dual::cst(0.0);
    for &vi in v.iter().rev() {
        s = s * Dual::cst(0.5) + vi * vi;
    }
    s
}

/// Elements shifted up by a reversed integer range, then the first
/// overwritten: `v = [x_{n-1}, x_0^2, .., x_{n-2}^2]`, `s = sum (i + 1) v_i`.
#[differentiate]
fn shift(x: &[f64]) -> f64 {
    let n = x.len();
    let mut v = vec![0.0; n];
    for i in 0..n {
        v[i] = x[i] * x[i];
    }
    for i in (1..n).rev() {
        v[i] = v[i - 1];
    }
    v[0] = x[n - 1];
    let mut s = 0.0;
    for i in 0..n {
        s += v[i] * (i as f64 + 1.0);
    }
    s
}

/// Pushed in a `while` loop that reads the growing length, then walked
/// backwards: `sum_i sin(2 x_i) / 2^i`.
#[differentiate]
fn while_push(x: &[f64]) -> f64 {
    let mut v = Vec::new();
    while v.len() < x.len() {
        v.push(x[v.len()] * 2.0);
    }
    let mut s = 0.0;
    for vi in v.iter().rev() {
        s = s * 0.5 + vi.sin();
    }
    s
}

/// Two elements of a fixed buffer used as running accumulators.
#[differentiate]
fn running(x: &[f64]) -> f64 {
    let mut v = [0.0; 2];
    for i in 0..x.len() {
        v[0] += x[i];
        v[1] += v[0] * x[i];
    }
    v[0] * v[1]
}

fn running_dual(x: &[Dual<1>]) -> Dual<1> {
    let mut v = [Dual::cst(0.0); 2];
    for &xi in x {
        v[0] = v[0] + xi;
        v[1] = v[1] + v[0] * xi;
    }
    v[0] * v[1]
}

/// A reduction inside a loop: `sum_i x_i sum_j x_j = (sum x)^2`.
#[differentiate]
fn sum_in_loop(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += x[i] * x.iter().sum::<f64>();
    }
    s
}

#[test]
fn buffers_reading_their_own_overwritten_elements() {
    let mut rng = Rng::new(10);
    for n in [1, 2, 3, 8] {
        let x = rng.vec(n, -1.5, 1.5);

        let (v, g) = cumprod_grad(&x);
        assert_bits("cumprod", v, cumprod(&x));
        assert_all_close("cumprod", &g, &cumprod_analytic(&x));

        let (v, g) = sweep_grad(&x);
        assert_bits("sweep", v, sweep(&x));
        assert_all_close("sweep", &g, &forward_gradient(sweep_dual, &x));
        assert_fd("sweep", sweep, &x, &g);

        let (v, g) = shift_grad(&x);
        assert_bits("shift", v, shift(&x));
        let mut want = vec![0.0; n];
        for j in 0..n - 1 {
            want[j] += 2.0 * (j as f64 + 2.0) * x[j];
        }
        want[n - 1] += 1.0;
        assert_all_close("shift", &g, &want);

        let (v, g) = while_push_grad(&x);
        assert_bits("while_push", v, while_push(&x));
        let want: Vec<f64> = (0..n)
            .map(|i| 2.0 * (2.0 * x[i]).cos() * 0.5f64.powi(i as i32))
            .collect();
        assert_all_close("while_push", &g, &want);

        let (v, g) = running_grad(&x);
        assert_bits("running", v, running(&x));
        assert_all_close("running", &g, &forward_gradient(running_dual, &x));

        let (v, g) = sum_in_loop_grad(&x);
        assert_bits("sum_in_loop", v, sum_in_loop(&x));
        let sum: f64 = x.iter().sum();
        assert_all_close("sum_in_loop", &g, &vec![2.0 * sum; n]);
    }
    // Prefix products through a zero: no division, no NaN.
    let x = [0.5, 0.0, 2.0, -1.5];
    let (_, g) = cumprod_grad(&x);
    assert_all_close("cumprod with a zero", &g, &cumprod_analytic(&x));
}

// ---------------------------------------------------------------------------
// Vectors built with push.
// ---------------------------------------------------------------------------

/// `sum sin(x^3) + sum x^2`, through two pushed vectors.
#[differentiate]
fn pushed(x: &[f64]) -> f64 {
    let mut squares = Vec::with_capacity(x.len());
    for &xi in x {
        squares.push(xi * xi);
    }
    let mut cubes = Vec::new();
    for i in 0..squares.len() {
        cubes.push(squares[i] * x[i]);
    }
    let mut s = 0.0;
    for c in cubes.iter() {
        s += c.sin();
    }
    s + squares.iter().sum::<f64>()
}

/// Pushed as constants, then overwritten with differentiated values.
#[allow(clippy::same_item_push)]
#[differentiate]
fn pushed_then_written(x: &[f64]) -> f64 {
    let mut v = Vec::new();
    for _ in 0..x.len() {
        v.push(0.0);
    }
    for i in 0..x.len() {
        v[i] = x[i].exp();
    }
    let mut s = 0.0;
    for i in 0..v.len() {
        s += v[i] * x[x.len() - 1 - i];
    }
    s
}

#[test]
fn push_built_vectors() {
    let mut rng = Rng::new(6);
    for n in [0, 1, 4, 12] {
        let x = rng.vec(n, -1.2, 1.2);
        let (v, g) = pushed_grad(&x);
        assert_bits("pushed", v, pushed(&x));
        let want: Vec<f64> = x
            .iter()
            .map(|&xi| (xi * xi * xi).cos() * 3.0 * xi * xi + 2.0 * xi)
            .collect();
        assert_all_close("pushed", &g, &want);

        let (v, g) = pushed_then_written_grad(&x);
        assert_bits("pushed_then_written", v, pushed_then_written(&x));
        // s = sum_i e^{x_i} x_{n-1-i}.
        let mut want = vec![0.0; n];
        for i in 0..n {
            want[i] += x[i].exp() * x[n - 1 - i];
            want[n - 1 - i] += x[i].exp();
        }
        assert_all_close("pushed_then_written", &g, &want);
    }
}

// ---------------------------------------------------------------------------
// Reductions.
// ---------------------------------------------------------------------------

/// `(sum x)^2 + sum x` through `sum` and `copied().sum`.
#[differentiate]
fn sums(x: &[f64]) -> f64 {
    let s = x.iter().sum::<f64>();
    s * s + x.iter().copied().sum::<f64>()
}

#[differentiate]
fn product(x: &[f64]) -> f64 {
    x.iter().product::<f64>()
}

/// The product of `x_i - 1`, from a local buffer.
#[differentiate]
fn product_local(x: &[f64]) -> f64 {
    let mut v = vec![0.0; x.len()];
    for i in 0..x.len() {
        v[i] = x[i] - 1.0;
    }
    v.iter().product::<f64>() * 3.0
}

/// `d/dx_j prod x = prod_{k != j} x_k`, without dividing.
fn product_analytic(x: &[f64]) -> Vec<f64> {
    (0..x.len())
        .map(|j| {
            x.iter()
                .enumerate()
                .filter(|&(k, _)| k != j)
                .map(|(_, xk)| xk)
                .product()
        })
        .collect()
}

#[test]
fn sum_reduction() {
    let mut rng = Rng::new(7);
    for n in [0, 1, 5, 30] {
        let x = rng.vec(n, -2.0, 2.0);
        let (v, g) = sums_grad(&x);
        assert_bits("sums", v, sums(&x));
        let s: f64 = x.iter().sum();
        assert_all_close("sums", &g, &vec![2.0 * s + 1.0; n]);
    }
}

#[test]
fn product_reduction_with_zero_elements() {
    let cases: Vec<Vec<f64>> = vec![
        vec![],
        vec![1.5],
        vec![0.5, -2.0, 1.25, 3.0],
        vec![0.5, 0.0, 1.25, 3.0], // one zero: only its entry is non-zero
        vec![0.0, -2.0, 0.0, 3.0], // two zeros: the gradient is zero
        vec![0.0],
        vec![-0.0, 2.0],
    ];
    for x in &cases {
        let (v, g) = product_grad(x);
        assert_bits("product", v, product(x));
        assert!(g.iter().all(|gi| gi.is_finite()), "product {x:?}: {g:?}");
        assert_all_close(&format!("product {x:?}"), &g, &product_analytic(x));

        // The same through a local buffer holding x - 1.
        let shifted: Vec<f64> = x.iter().map(|xi| xi + 1.0).collect();
        let (v, g) = product_local_grad(&shifted);
        assert_bits("product_local", v, product_local(&shifted));
        let want: Vec<f64> = product_analytic(x).iter().map(|p| 3.0 * p).collect();
        assert!(
            g.iter().all(|gi| gi.is_finite()),
            "product_local {x:?}: {g:?}"
        );
        assert_all_close(&format!("product_local {x:?}"), &g, &want);
    }
    // One zero, exactly: the other entries are exactly zero.
    let (_, g) = product_grad(&[0.5, 0.0, 1.25, 3.0]);
    assert_eq!(g[0], 0.0);
    assert_eq!(g[2], 0.0);
    assert_eq!(g[3], 0.0);
    assert_close("product one zero", g[1], 0.5 * 1.25 * 3.0);
}

// ---------------------------------------------------------------------------
// Elements read in several iterations; index expressions.
// ---------------------------------------------------------------------------

/// `x_0` is read in every iteration, and `x` backwards through
/// `x[n - 1 - i]`: `s = x_0 sum x + sum sin x`.
#[differentiate]
fn anchored(x: &[f64]) -> f64 {
    let n = x.len();
    let mut s = 0.0;
    for i in 0..n {
        s += x[0] * x[i] + x[n - 1 - i].sin();
    }
    s
}

/// `sum_i x_i x_{(i+1) mod n}^2`: each element read in two iterations.
#[differentiate]
fn cyclic(x: &[f64]) -> f64 {
    let n = x.len();
    let mut s = 0.0;
    for i in 0..n {
        s += x[i] * x[(i + 1) % n] * x[(i + 1) % n];
    }
    s
}

/// Strided reads: `sum_i x_{2i} x_{2i+1}`.
#[differentiate]
fn strided(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() / 2 {
        s += x[2 * i] * x[2 * i + 1];
    }
    s
}

/// Gathers through constant index arrays, with repeats, and a mask.
#[differentiate]
fn gather(x: &[f64], idx: &[usize], signed: &[i64], mask: &[bool]) -> f64 {
    let mut s = 0.0;
    for k in 0..idx.len() {
        s += x[idx[k]] * x[signed[k] as usize];
    }
    for i in 0..x.len() {
        if mask[i] {
            s += x[i].exp();
        }
    }
    s
}

#[test]
fn elements_read_in_several_iterations() {
    let mut rng = Rng::new(8);
    for n in [1, 2, 3, 9] {
        let x = rng.vec(n, -2.0, 2.0);
        let (v, g) = anchored_grad(&x);
        assert_bits("anchored", v, anchored(&x));
        let sum: f64 = x.iter().sum();
        let mut want: Vec<f64> = x.iter().map(|xi| x[0] + xi.cos()).collect();
        want[0] += sum;
        assert_all_close("anchored", &g, &want);

        let (v, g) = cyclic_grad(&x);
        assert_bits("cyclic", v, cyclic(&x));
        let mut want = vec![0.0; n];
        for i in 0..n {
            let j = (i + 1) % n;
            want[i] += x[j] * x[j];
            want[j] += 2.0 * x[i] * x[j];
        }
        assert_all_close("cyclic", &g, &want);
        assert_fd("cyclic", cyclic, &x, &g);
    }
}

#[test]
fn index_expressions() {
    let x = [0.5, -1.5, 2.0, 0.25, -0.75];
    let (v, g) = strided_grad(&x);
    assert_bits("strided", v, strided(&x));
    assert_all_close("strided", &g, &[x[1], x[0], x[3], x[2], 0.0]);

    let idx = [0, 2, 2, 4];
    let signed = [1i64, 2, 0, 4];
    let mask = [true, false, true, false, true];
    let (v, g) = gather_grad(&x, &idx, &signed, &mask);
    assert_bits("gather", v, gather(&x, &idx, &signed, &mask));
    let mut want = vec![0.0; 5];
    for k in 0..4 {
        let (a, b) = (idx[k], signed[k] as usize);
        want[a] += x[b];
        want[b] += x[a];
    }
    for i in 0..5 {
        if mask[i] {
            want[i] += x[i].exp();
        }
    }
    assert_all_close("gather", &g, &want);
    // Only x has an entry: the index and mask slices are constants.
    let _: GatherGrad = gather_grad;
}

// ---------------------------------------------------------------------------
// Loop forms: rev, enumerate, zip, break, continue, return, while.
// ---------------------------------------------------------------------------

/// Horner's rule, highest coefficient first: `sum_i c_i t^i`.
#[differentiate]
fn horner(c: &[f64], t: f64) -> f64 {
    let mut acc = 0.0;
    for &ci in c.iter().rev() {
        acc = acc * t + ci;
    }
    acc
}

/// Walked backwards with the index: `sum_i (i + 1) sin(x_i) / 2^i`.
#[differentiate]
fn enumerate_rev(x: &[f64]) -> f64 {
    let mut acc = 0.0;
    for (i, xi) in x.iter().enumerate().rev() {
        acc = acc * 0.5 + (i as f64 + 1.0) * xi.sin();
    }
    acc
}

/// Zipped backwards: `sum_i x_i y_i / 2^i` (Horner in 1/2).
#[differentiate]
fn zip_rev(x: &[f64], y: &[f64]) -> f64 {
    let mut acc = 0.0;
    for (a, b) in x.iter().zip(y.iter()).rev() {
        acc = acc * 0.5 + a * b;
    }
    acc
}

/// Sum of squares up to the first negative element.
#[differentiate]
fn until_negative(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for &xi in x {
        if xi < 0.0 {
            break;
        }
        s += xi * xi;
    }
    s
}

/// Cubes of the non-negative elements.
#[differentiate]
fn skip_negative(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for xi in x.iter() {
        if *xi < 0.0 {
            continue;
        }
        s += xi.powi(3);
    }
    s
}

/// Returns `i * x_i` at the first element above 10, else the sum.
#[differentiate]
fn first_large(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, xi) in x.iter().enumerate() {
        if *xi > 10.0 {
            return xi * i as f64;
        }
        s += xi;
    }
    s
}

/// The `&&` short-circuits the read of `x[i]` at `i == x.len()`.
#[differentiate]
fn prefix_below(x: &[f64]) -> f64 {
    let mut s = 0.0;
    let mut i = 0;
    while i < x.len() && x[i] < 3.0 {
        s += x[i].exp();
        i += 1;
    }
    s
}

/// `loop` with `break`, reading a local buffer.
#[differentiate]
fn loop_break(x: &[f64]) -> f64 {
    let mut v = vec![0.0; x.len()];
    for i in 0..x.len() {
        v[i] = 2.0 * x[i];
    }
    let mut i = 0;
    let mut s = 1.0;
    loop {
        if i == v.len() {
            break;
        }
        s *= v[i];
        i += 1;
    }
    s
}

#[test]
fn loop_forms() {
    let c = [1.5, -2.0, 0.5, 3.0];
    for t in [0.7, -1.3, 2.0] {
        let grad: HornerGrad = horner_grad;
        let (v, (gc, gt)) = grad(&c, t);
        assert_bits("horner", v, horner(&c, t));
        let want_c: Vec<f64> = (0..4).map(|i| t.powi(i)).collect();
        let want_t: f64 = (1..4).map(|i| i as f64 * c[i] * t.powi(i as i32 - 1)).sum();
        assert_all_close("horner c", &gc, &want_c);
        assert_close("horner t", gt, want_t);
    }

    let x = [0.3, -1.1, 2.4, 0.9, -0.2];
    let (v, g) = enumerate_rev_grad(&x);
    assert_bits("enumerate_rev", v, enumerate_rev(&x));
    let want: Vec<f64> = (0..5)
        .map(|j| (j as f64 + 1.0) * x[j].cos() * 0.5f64.powi(j as i32))
        .collect();
    assert_all_close("enumerate_rev", &g, &want);

    let y = [1.0, 2.0, -3.0];
    let (v, (gx, gy)) = zip_rev_grad(&x, &y);
    assert_bits("zip_rev", v, zip_rev(&x, &y));
    let wx: Vec<f64> = (0..5)
        .map(|i| {
            if i < 3 {
                y[i] * 0.5f64.powi(i as i32)
            } else {
                0.0
            }
        })
        .collect();
    let wy: Vec<f64> = (0..3).map(|i| x[i] * 0.5f64.powi(i as i32)).collect();
    assert_all_close("zip_rev x", &gx, &wx);
    assert_all_close("zip_rev y", &gy, &wy);

    // Break at x[1] < 0: only x[0] contributes.
    let (v, g) = until_negative_grad(&x);
    assert_bits("until_negative", v, until_negative(&x));
    assert_eq!(g, vec![2.0 * x[0], 0.0, 0.0, 0.0, 0.0]);

    let (v, g) = skip_negative_grad(&x);
    assert_bits("skip_negative", v, skip_negative(&x));
    let want: Vec<f64> = x
        .iter()
        .map(|&xi| if xi < 0.0 { 0.0 } else { 3.0 * xi * xi })
        .collect();
    assert_all_close("skip_negative", &g, &want);

    let (v, g) = first_large_grad(&x);
    assert_bits("first_large", v, first_large(&x));
    assert_eq!(g, vec![1.0; 5]);
    let z = [1.0, 2.0, 11.0, 50.0];
    let (v, g) = first_large_grad(&z);
    assert_bits("first_large", v, first_large(&z));
    assert_eq!(g, vec![0.0, 0.0, 2.0, 0.0]);

    for p in [vec![], vec![0.5, 1.0, 2.9], vec![0.5, 4.0, 1.0]] {
        let (v, g) = prefix_below_grad(&p);
        assert_bits("prefix_below", v, prefix_below(&p));
        let stop = p.iter().position(|&xi| xi >= 3.0).unwrap_or(p.len());
        let want: Vec<f64> = (0..p.len())
            .map(|i| if i < stop { p[i].exp() } else { 0.0 })
            .collect();
        assert_all_close("prefix_below", &g, &want);
    }

    let (v, g) = loop_break_grad(&x);
    assert_bits("loop_break", v, loop_break(&x));
    // s = prod 2 x_i.
    let want: Vec<f64> = product_analytic(&x).iter().map(|p| 32.0 * p).collect();
    assert_all_close("loop_break", &g, &want);
}

// ---------------------------------------------------------------------------
// len, is_empty, array literals, calls.
// ---------------------------------------------------------------------------

#[differentiate]
fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    x.iter().sum::<f64>() / x.len() as f64
}

/// `a = [x y, sin y, 2]`, `v = [x, sin(y) x]`: `f = x^2 y sin y + 2 x + sin y`.
#[allow(clippy::useless_vec)]
#[differentiate]
fn literals(x: f64, y: f64) -> f64 {
    let a = [x * y, y.sin(), 2.0];
    let v = vec![x, a[1] * x];
    a[0] * v[1] + a[2] * v[0] + a[1]
}

#[differentiate]
fn sum_squares(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for &xi in x {
        s += xi * xi;
    }
    s
}

/// Calls through a differentiated function, on a parameter and on a local
/// buffer: `f = sum x^2 / 2 + sum sin^2 x`.
#[differentiate]
fn calls(x: &[f64]) -> f64 {
    let mut v = vec![0.0; x.len()];
    for i in 0..x.len() {
        v[i] = x[i].sin();
    }
    sum_squares(x) * 0.5 + sum_squares(&v)
}

/// A call through a `wrt`-restricted function, passing the data along:
/// `linear_mse + 0.1 |w|^2`.
#[differentiate(wrt(w))]
fn regularized(w: &[f64], xs: &[f64], ys: &[f64]) -> f64 {
    linear_mse(w, xs, ys) + 0.1 * sum_squares(w)
}

#[test]
fn len_is_empty_literals_and_calls() {
    let (v, g) = mean_grad(&[]);
    assert_bits("mean", v, mean(&[]));
    assert!(g.is_empty());
    let x = [0.5, 1.5, -3.0, 2.0];
    let (v, g) = mean_grad(&x);
    assert_bits("mean", v, mean(&x));
    assert_eq!(g, vec![0.25; 4]);

    for (x, y) in [(0.5, 1.25), (-1.5, 0.75), (2.0, -2.5)] {
        let (v, (gx, gy)) = literals_grad(x, y);
        assert_bits("literals", v, literals(x, y));
        assert_close("literals x", gx, 2.0 * x * y * y.sin() + 2.0);
        assert_close("literals y", gy, x * x * (y.sin() + y * y.cos()) + y.cos());
    }

    let x = [0.3, -1.2, 2.5];
    let (v, g) = calls_grad(&x);
    assert_bits("calls", v, calls(&x));
    let want: Vec<f64> = x.iter().map(|xi| xi + 2.0 * xi.sin() * xi.cos()).collect();
    assert_all_close("calls", &g, &want);

    let mut rng = Rng::new(11);
    let w = rng.vec(3, -1.0, 1.0);
    let xs = rng.vec(2 * 6, -2.0, 2.0);
    let ys = rng.vec(6, -2.0, 2.0);
    let grad: DataGrad = regularized_grad;
    let (v, g) = grad(&w, &xs, &ys);
    assert_bits("regularized", v, regularized(&w, &xs, &ys));
    let want: Vec<f64> = linear_mse_analytic(&w, &xs, &ys)
        .iter()
        .zip(&w)
        .map(|(gm, wi)| gm + 0.2 * wi)
        .collect();
    assert_all_close("regularized", &g, &want);
}

// ---------------------------------------------------------------------------
// Out-of-bounds indexing: `_grad` panics exactly when `f` does.
// ---------------------------------------------------------------------------

#[differentiate]
fn pick(x: &[f64], k: usize) -> f64 {
    x[k] * x[0]
}

#[differentiate]
fn sum_sin_first(x: &[f64], n: usize) -> f64 {
    let mut s = 0.0;
    for i in 0..n {
        s += x[i].sin();
    }
    s
}

#[allow(clippy::useless_vec)]
#[differentiate]
fn store_at(x: &[f64], k: usize) -> f64 {
    let mut v = vec![0.0; 3];
    v[k] = x[0] * 2.0;
    v[0] + v[1] + v[2]
}

/// Never out of bounds: the read is guarded.
#[differentiate]
fn guarded(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() + 2 {
        if i < x.len() {
            s += x[i] * x[i];
        }
    }
    s
}

#[test]
fn out_of_bounds_panics_exactly_when_f_panics() {
    let x = [1.5, -0.5, 2.0];
    for k in 0..6 {
        let f = panics(|| pick(&x, k));
        assert_eq!(f, k >= 3);
        assert_eq!(panics(|| pick_grad(&x, k)), f, "pick_grad k = {k}");
        assert_eq!(
            panics(|| pick_adjoint(&x, k, 1.0)),
            f,
            "pick_adjoint k = {k}"
        );
        let mut buf = [0.0; 3];
        assert_eq!(
            panics(|| pick_adjoint_acc(&x, k, 1.0, &mut buf)),
            f,
            "pick_adjoint_acc k = {k}"
        );

        let f = panics(|| sum_sin_first(&x, k));
        assert_eq!(f, k > 3);
        assert_eq!(
            panics(|| sum_sin_first_grad(&x, k)),
            f,
            "sum_sin_first_grad n = {k}"
        );

        let f = panics(|| store_at(&x, k));
        assert_eq!(f, k >= 3);
        assert_eq!(panics(|| store_at_grad(&x, k)), f, "store_at_grad k = {k}");
    }
    for n in [0, 1, 4] {
        let x = vec![0.75; n];
        assert!(!panics(|| guarded(&x)));
        let (v, g) = guarded_grad(&x);
        assert_bits("guarded", v, guarded(&x));
        assert_eq!(g, vec![1.5; n]);
    }
    // The gradients that do come back are right.
    let (_, g) = pick_grad(&x, 2);
    assert_eq!(g, vec![x[2], 0.0, x[0]]);
    let (_, g) = pick_grad(&x, 0);
    assert_eq!(g, vec![2.0 * x[0], 0.0, 0.0]);
}

// ---------------------------------------------------------------------------
// f_adjoint_acc adds into the caller's buffers.
// ---------------------------------------------------------------------------

/// `a |w|`.
#[differentiate]
fn scaled_norm(w: &[f64], a: f64) -> f64 {
    let mut s = 0.0;
    for &wi in w {
        s += wi * wi;
    }
    a * s.sqrt()
}

#[test]
fn adjoint_acc_adds_into_buffers() {
    let acc: fn(&[f64], f64, f64, &mut [f64], &mut f64) = scaled_norm_adjoint_acc;
    let w = [0.6, -0.8, 1.2, 0.1];
    let a = 1.75;
    let norm = w.iter().map(|x| x * x).sum::<f64>().sqrt();
    let gw: Vec<f64> = w.iter().map(|x| a * x / norm).collect();
    let ga = norm;

    let (v, (g1, a1)) = scaled_norm_grad(&w, a);
    assert_bits("scaled_norm", v, scaled_norm(&w, a));
    assert_all_close("scaled_norm w", &g1, &gw);
    assert_close("scaled_norm a", a1, ga);

    // Zeroed buffers, two calls: twice d_out times the gradient.
    let d_out = 1.5;
    let mut dw = vec![0.0; 4];
    let mut da = 0.0;
    acc(&w, a, d_out, &mut dw, &mut da);
    acc(&w, a, d_out, &mut dw, &mut da);
    let want: Vec<f64> = gw.iter().map(|g| 2.0 * d_out * g).collect();
    assert_all_close("acc twice w", &dw, &want);
    assert_close("acc twice a", da, 2.0 * d_out * ga);

    // Non-zero buffers: added to, not overwritten.
    let mut dw = vec![10.0, -10.0, 0.5, 3.0];
    let mut da = -4.0;
    acc(&w, a, D_OUT, &mut dw, &mut da);
    let want: Vec<f64> = [10.0, -10.0, 0.5, 3.0]
        .iter()
        .zip(&gw)
        .map(|(b, g)| b + D_OUT * g)
        .collect();
    assert_all_close("acc into non-zero w", &dw, &want);
    assert_close("acc into non-zero a", da, -4.0 + D_OUT * ga);

    // Summed over two different points: the sum of the two gradients.
    let w2 = [0.3, 0.3, -0.9, 2.0];
    let (_, (g2, a2)) = scaled_norm_grad(&w2, -0.5);
    let mut dw = vec![0.0; 4];
    let mut da = 0.0;
    acc(&w, a, 1.0, &mut dw, &mut da);
    acc(&w2, -0.5, 1.0, &mut dw, &mut da);
    let sum: Vec<f64> = g1.iter().zip(&g2).map(|(p, q)| p + q).collect();
    assert_all_close("acc over two points w", &dw, &sum);
    assert_close("acc over two points a", da, a1 + a2);
}

#[test]
#[should_panic(expected = "parameter `w`")]
fn adjoint_acc_rejects_a_long_buffer() {
    let w = [0.6, -0.8, 1.2];
    let mut dw = vec![0.0; 4];
    let mut da = 0.0;
    scaled_norm_adjoint_acc(&w, 1.0, 1.0, &mut dw, &mut da);
}

#[test]
#[should_panic(expected = "parameter `w`")]
fn adjoint_acc_rejects_a_short_buffer() {
    let w = [0.6, -0.8, 1.2];
    let mut dw = vec![0.0; 2];
    let mut da = 0.0;
    scaled_norm_adjoint_acc(&w, 1.0, 1.0, &mut dw, &mut da);
}

#[test]
#[should_panic(expected = "parameter `y`")]
fn adjoint_acc_names_the_mismatched_parameter() {
    // The first buffer is right; the second is not.
    let x = [1.0, 2.0, 3.0];
    let y = [4.0, 5.0, 6.0];
    let mut dx = [0.0; 3];
    let mut dy = [0.0; 2];
    dot_adjoint_acc(&x, &y, 1.0, &mut dx, &mut dy);
}

#[test]
fn adjoint_acc_wrong_length_message_names_buffer_and_parameter() {
    let x = [1.0, 2.0, 3.0];
    let y = [4.0, 5.0, 6.0];
    let err = catch_unwind(|| {
        let mut dx = [0.0; 5];
        let mut dy = [0.0; 3];
        dot_adjoint_acc(&x, &y, 1.0, &mut dx, &mut dy);
    })
    .unwrap_err();
    let msg = err
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap();
    assert!(msg.contains("`d_x`"), "the buffer is named: {msg}");
    assert!(msg.contains("`x`"), "the parameter is named: {msg}");
    assert!(msg.contains('5') && msg.contains('3'), "{msg}");
    assert!(!msg.contains("`y`"), "{msg}");
}

// ---------------------------------------------------------------------------
// f_grad is fresh on every call.
// ---------------------------------------------------------------------------

#[test]
fn grad_is_fresh_on_every_call() {
    let x = [0.4, -1.3, 2.2, 0.7];
    let (v1, g1) = overwrite_grad(&x);
    let (v2, g2) = overwrite_grad(&x);
    assert_bits("overwrite", v1, v2);
    assert_eq!(g1, g2);

    // An accumulation in between does not leak into the next gradient.
    let mut buf = vec![0.0; 4];
    overwrite_adjoint_acc(&x, 3.0, &mut buf);
    overwrite_adjoint_acc(&x, 3.0, &mut buf);
    let (_, g3) = overwrite_grad(&x);
    assert_eq!(g1, g3);

    // Nor does a gradient at another point.
    let _ = overwrite_grad(&[5.0, 5.0, 5.0, 5.0]);
    let (_, g4) = overwrite_grad(&x);
    assert_eq!(g1, g4);
    assert_eq!(overwrite_adjoint(&x, 1.0), overwrite_adjoint(&x, 1.0));
}

// ---------------------------------------------------------------------------
// Cost linear in n. Nothing is timed: a quadratic gradient would not finish
// at n = 100,000 in a debug build, and the bytes a gradient allocates are
// counted (per thread, so tests running in parallel do not interfere) and
// bounded by a constant times n.
// ---------------------------------------------------------------------------

/// The system allocator, counting the bytes each thread asks for.
struct Counting;

thread_local! {
    static ALLOCATED: Cell<usize> = const { Cell::new(0) };
}

fn count(bytes: usize) {
    let _ = ALLOCATED.try_with(|a| a.set(a.get() + bytes));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        System.realloc(ptr, layout, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// What `f` returns and the bytes it allocated on this thread.
fn allocated_by<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = ALLOCATED.with(|a| a.get());
    let r = f();
    (r, ALLOCATED.with(|a| a.get()) - before)
}

/// Bytes per element a linear-cost gradient may allocate: a few tapes and
/// adjoint vectors of `n` floats, with room for `Vec` doubling.
const BYTES_PER_ELEMENT: usize = 64 * 8;

#[track_caller]
fn assert_linear_memory(what: &str, n: usize, bytes: usize) {
    assert!(
        bytes <= BYTES_PER_ELEMENT * n,
        "{what}: the gradient allocated {bytes} bytes for n = {n}, more than \
         {BYTES_PER_ELEMENT} per element: its cost is not linear in n"
    );
}

#[differentiate]
fn rosenbrock(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        let a = 1.0 - x[i];
        let b = x[i + 1] - x[i] * x[i];
        s += a * a + 100.0 * b * b;
    }
    s
}

fn rosenbrock_analytic(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let mut g = vec![0.0; n];
    for i in 0..n - 1 {
        let b = x[i + 1] - x[i] * x[i];
        g[i] += -2.0 * (1.0 - x[i]) - 400.0 * x[i] * b;
        g[i + 1] += 200.0 * b;
    }
    g
}

#[test]
fn large_inputs_take_linear_time() {
    let n = 100_000;
    let mut rng = Rng::new(9);
    let x = rng.vec(n, -2.0, 2.0);

    let ((v, g), bytes) = allocated_by(|| rosenbrock_grad(&x));
    assert_linear_memory("rosenbrock", n, bytes);
    assert_bits("rosenbrock", v, rosenbrock(&x));
    let want = rosenbrock_analytic(&x);
    let scale = want.iter().fold(1.0f64, |m, w| m.max(w.abs()));
    for i in 0..n {
        let tol = 1e-12 * g[i].abs().max(want[i].abs()) + 1e-13 * scale;
        assert!((g[i] - want[i]).abs() <= tol, "rosenbrock[{i}]");
    }

    let small = rng.vec(n, -1.0, 1.0);
    let ((v, g), bytes) = allocated_by(|| overwrite_grad(&small));
    assert_linear_memory("overwrite", n, bytes);
    assert_bits("overwrite", v, overwrite(&small));
    assert_all_close("overwrite", &g, &overwrite_analytic(&small));

    let ((v, g), bytes) = allocated_by(|| pushed_grad(&small));
    assert_linear_memory("pushed", n, bytes);
    assert_bits("pushed", v, pushed(&small));
    assert_eq!(g.len(), n);

    let ((v, g), bytes) = allocated_by(|| cyclic_grad(&small));
    assert_linear_memory("cyclic", n, bytes);
    assert_bits("cyclic", v, cyclic(&small));
    assert_eq!(g.len(), n);

    let ((v, g), bytes) = allocated_by(|| sums_grad(&small));
    assert_linear_memory("sums", n, bytes);
    assert_bits("sums", v, sums(&small));
    assert_eq!(g.len(), n);

    let ((v, g), bytes) = allocated_by(|| sweep_grad(&small));
    assert_linear_memory("sweep", n, bytes);
    assert_bits("sweep", v, sweep(&small));
    assert_eq!(g.len(), n);

    let mut buf = vec![0.0; n];
    let ((), bytes) = allocated_by(|| rosenbrock_adjoint_acc(&x, 1.0, &mut buf));
    assert_linear_memory("rosenbrock_adjoint_acc", n, bytes);
    assert_all_close("rosenbrock_adjoint_acc", &buf[..100], &want[..100]);
}

#[test]
fn the_memory_bound_can_fail() {
    // A quadratic amount of memory is over the bound.
    let n = 1000;
    let ((), bytes) = allocated_by(|| {
        for _ in 0..n {
            std::hint::black_box(vec![0.0f64; n]);
        }
    });
    assert!(bytes > BYTES_PER_ELEMENT * n);
}

/// One element's term, called once per element by `summed_by_calls`.
#[differentiate]
fn term(x: &[f64], i: usize) -> f64 {
    x[i] * x[i] + x[i].sin()
}

/// `sum_i term(x, i)`: a differentiated call per element.
#[differentiate]
fn summed_by_calls(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() {
        s += term(x, i);
    }
    s
}

/// One example's squared error, the data passed whole with an index.
#[differentiate(wrt(w))]
fn example_error(w: f64, xs: &[f64], i: usize) -> f64 {
    (w * xs[i] - 1.0).powi(2)
}

/// The mean of `example_error` over the data set.
#[differentiate(wrt(w))]
fn data_error(w: f64, xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..xs.len() {
        s += example_error(w, xs, i);
    }
    s / xs.len() as f64
}

#[test]
fn calls_in_a_loop_take_linear_time() {
    // Each call touches one element: the whole gradient is still linear.
    let n = 20_000;
    let mut rng = Rng::new(12);
    let x = rng.vec(n, -1.0, 1.0);

    let ((v, g), bytes) = allocated_by(|| summed_by_calls_grad(&x));
    assert_bits("summed_by_calls", v, summed_by_calls(&x));
    let want: Vec<f64> = x.iter().map(|xi| 2.0 * xi + xi.cos()).collect();
    assert_all_close("summed_by_calls", &g, &want);
    assert_linear_memory("summed_by_calls", n, bytes);

    let ((v, g), bytes) = allocated_by(|| data_error_grad(0.7, &x));
    assert_bits("data_error", v, data_error(0.7, &x));
    let want = x.iter().map(|xi| 2.0 * (0.7 * xi - 1.0) * xi).sum::<f64>() / n as f64;
    assert!((g - want).abs() <= 1e-10 * want.abs(), "{g} vs {want}");
    assert_linear_memory("data_error", n, bytes);
}

// ---------------------------------------------------------------------------
// Constant slices walked by iterator, buffers allocated inside a loop, and
// wide fixed-size arrays.
// ---------------------------------------------------------------------------

/// `w sum ys`, the constant data walked by `iter()`.
#[differentiate(wrt(w))]
fn data_by_iter(w: f64, ys: &[f64]) -> f64 {
    let mut s = 0.0;
    for y in ys.iter() {
        s += w * y;
    }
    s
}

/// `sum_i w_{i mod |w|} ys_i`, the constant data walked by `&y` (with a
/// counter kept by hand, as written on purpose).
#[allow(clippy::explicit_counter_loop)]
#[differentiate(wrt(w))]
fn data_by_pattern(w: &[f64], ys: &[f64]) -> f64 {
    let mut s = 0.0;
    let mut i = 0;
    for &y in ys {
        s += w[i % w.len()] * y;
        i += 1;
    }
    s
}

/// `sum_i w_i^2 ys_i`, the constant data walked by `iter().enumerate()`.
#[differentiate(wrt(w))]
fn data_by_enumerate(w: &[f64], ys: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, y) in ys.iter().enumerate() {
        s += w[i] * w[i] * y;
    }
    s
}

/// `sum_k x_{idx_k}^2`, the constant indices walked by `&k`.
#[differentiate]
fn gather_by_iter(x: &[f64], idx: &[usize]) -> f64 {
    let mut s = 0.0;
    for &k in idx {
        s += x[k] * x[k];
    }
    s
}

/// A buffer allocated afresh in every iteration of the outer loop:
/// `sum_r sum_i tanh((r + 1) x_i)`.
#[differentiate]
fn alloc_in_loop(x: &[f64], reps: usize) -> f64 {
    let mut s = 0.0;
    for r in 0..reps {
        let mut h = vec![0.0; x.len()];
        for i in 0..x.len() {
            h[i] = (x[i] * (r as f64 + 1.0)).tanh();
        }
        s += h.iter().sum::<f64>();
    }
    s
}

/// A fixed array of more than 32 elements whose gradient entry stays zero.
#[differentiate]
fn wide_unused(x: f64, _wide: [f64; 40]) -> f64 {
    x * 2.0
}

#[test]
fn constant_data_walked_by_iterators() {
    let w = [0.5, -1.5, 2.0];
    let ys = [1.0, 2.0, -0.5, 4.0, 0.25];

    let (v, g) = data_by_iter_grad(2.5, &ys);
    assert_bits("data_by_iter", v, data_by_iter(2.5, &ys));
    assert_close("data_by_iter", g, ys.iter().sum());

    let (v, g) = data_by_pattern_grad(&w, &ys);
    assert_bits("data_by_pattern", v, data_by_pattern(&w, &ys));
    let mut want = vec![0.0; 3];
    for (i, y) in ys.iter().enumerate() {
        want[i % 3] += y;
    }
    assert_all_close("data_by_pattern", &g, &want);

    let (v, g) = data_by_enumerate_grad(&w, &ys[..3]);
    assert_bits("data_by_enumerate", v, data_by_enumerate(&w, &ys[..3]));
    let want: Vec<f64> = (0..3).map(|i| 2.0 * w[i] * ys[i]).collect();
    assert_all_close("data_by_enumerate", &g, &want);

    let idx = [2, 0, 2];
    let (v, g) = gather_by_iter_grad(&w, &idx);
    assert_bits("gather_by_iter", v, gather_by_iter(&w, &idx));
    assert_all_close("gather_by_iter", &g, &[2.0 * w[0], 0.0, 4.0 * w[2]]);
}

#[test]
fn buffer_allocated_inside_a_loop() {
    let x = [0.3, -0.7, 1.1];
    for reps in [0, 1, 3] {
        let (v, g) = alloc_in_loop_grad(&x, reps);
        assert_bits("alloc_in_loop", v, alloc_in_loop(&x, reps));
        let want: Vec<f64> = x
            .iter()
            .map(|xi| {
                (0..reps)
                    .map(|r| {
                        let c = r as f64 + 1.0;
                        c / (c * xi).cosh().powi(2)
                    })
                    .sum()
            })
            .collect();
        assert_all_close(&format!("alloc_in_loop reps {reps}"), &g, &want);
    }
}

#[test]
fn wide_fixed_array_with_an_untouched_gradient() {
    let (v, (gx, gw)) = wide_unused_grad(1.5, [1.0; 40]);
    assert_bits("wide_unused", v, wide_unused(1.5, [1.0; 40]));
    assert_eq!(gx, 2.0);
    assert_eq!(gw, [0.0; 40]);
}

// ---------------------------------------------------------------------------
// Copies of differentiated arrays: `let mut s = x;`, `*x`, `.to_vec()`,
// `.clone()`, `.to_owned()`, then written without touching the original.
// ---------------------------------------------------------------------------

/// s = x, s0 ← s0·s1: out = x0 x1 + x2 + x0, d = [x1 + 1, x0, 1]
#[differentiate]
fn copy_fixed(x: [f64; 3]) -> f64 {
    let mut s = x;
    s[0] *= s[1];
    s[0] + s[2] + x[0]
}

/// The explicit Euler step of x'' = -k x, 100 steps on a copied state:
/// (x, v) after n steps is Mⁿ (x0, v0) with M = [[1, h], [-k h, 1]], so
/// d x_n / d(x0, v0) is the first row of Mⁿ.
#[differentiate]
fn euler_on_a_copy(state: &[f64; 2], k: f64) -> f64 {
    let h = 0.01;
    let mut s = *state;
    for _ in 0..100 {
        let a = -k * s[0];
        s[0] += h * s[1];
        s[1] += h * a;
    }
    s[0]
}

/// t = y (a `Vec`), then overwritten and read with the original:
/// out = (y0 + y1)·2 y0 + y1 y2, d = [4 y0 + 2 y1, 2 y0 + y2, y1]
#[differentiate]
fn copy_vec(y: &[f64]) -> f64 {
    let mut t = y.to_vec();
    let u = y.to_owned();
    t[0] += t[1];
    t[1] = t[0] * 2.0;
    t[1] * y[0] + u[1] * y[2]
}

/// A shadowing copy of an owned `Vec` parameter: `let mut x = x.clone();`
/// out = 3 x0 + x1², d = [3, 2 x1]
#[differentiate]
fn shadowing_copy(x: Vec<f64>) -> f64 {
    let mut x = x.clone();
    x[0] *= 3.0;
    x[1] *= x[1];
    x[0] + x[1]
}

#[test]
fn copies_of_arrays_are_written_independently() {
    for x in [[1.5, -0.5, 2.0], [0.25, 3.0, -1.0]] {
        let (v, g) = copy_fixed_grad(x);
        assert_bits("copy_fixed", v, copy_fixed(x));
        assert_all_close("copy_fixed", &g, &[x[1] + 1.0, x[0], 1.0]);
    }
    for y in [vec![0.5, -1.5, 2.0], vec![1.25, 0.75, -0.5]] {
        let (v, g) = copy_vec_grad(&y);
        assert_bits("copy_vec", v, copy_vec(&y));
        let want = [4.0 * y[0] + 2.0 * y[1], 2.0 * y[0] + y[2], y[1]];
        assert_all_close("copy_vec", &g, &want);
        let a = copy_vec_adjoint(&y, D_OUT);
        let want_a: Vec<f64> = want.iter().map(|w| D_OUT * w).collect();
        assert_all_close("copy_vec adjoint", &a, &want_a);
        let (v, g) = shadowing_copy_grad(y.clone());
        assert_bits("shadowing_copy", v, shadowing_copy(y.clone()));
        assert_all_close("shadowing_copy", &g, &[3.0, 2.0 * y[1], 0.0]);
    }
}

#[test]
fn euler_steps_on_a_copied_state() {
    let (h, k) = (0.01, 2.0);
    let mut m = [[1.0, 0.0], [0.0, 1.0]];
    for _ in 0..100 {
        m = [
            [m[0][0] + h * m[1][0], m[0][1] + h * m[1][1]],
            [m[1][0] - k * h * m[0][0], m[1][1] - k * h * m[0][1]],
        ];
    }
    let state = [1.0, 0.3];
    let (v, (gs, gk)) = euler_on_a_copy_grad(&state, k);
    assert_bits("euler", v, euler_on_a_copy(&state, k));
    assert_all_close("euler", &gs, &m[0]);
    assert_fd(
        "euler",
        |p| euler_on_a_copy(&[p[0], p[1]], p[2]),
        &[state[0], state[1], k],
        &[gs[0], gs[1], gk],
    );
}
