//! Helpers that write into an output buffer (`fn h(x: &[f64], out: &mut
//! [f64])`), called from differentiated functions, as ADBench's bundle
//! adjustment writes them: the buffer read and written in place, lent whole
//! or as a range, passed on to another such helper, in loops. Each gradient
//! is checked against one derived by hand, or against central differences
//! with a tolerance that a wrong derivative cannot meet, at several points;
//! values are bit-identical to the function's.

#![deny(warnings)]
#![deny(clippy::all)]
// Index loops are how the functions under test are written.
#![allow(clippy::needless_range_loop)]
// ADBench writes `proj[0] = proj[0] * l`.
#![allow(clippy::assign_op_pattern)]

use gradmacro::differentiate;
use gradmacro_runtime::central_difference;

mod support;

use support::{assert_all_close, assert_bits, assert_close};

/// Multiplies every element of `out` by `k`, in place.
#[differentiate]
fn scale_into(k: f64, out: &mut [f64]) {
    for i in 0..out.len() {
        out[i] *= k;
    }
}

/// `k² Σ x²` through a buffer scaled in place.
#[differentiate]
fn scaled_energy(x: &[f64], k: f64) -> f64 {
    let mut buf = x.to_vec();
    scale_into(k, &mut buf);
    let mut s = 0.0;
    for v in buf.iter() {
        s += v * v;
    }
    s
}

#[test]
fn a_buffer_scaled_in_place() {
    for (x, k) in [
        (vec![1.0, -2.0, 0.5], 1.5),
        (vec![0.25, 3.0], -0.5),
        (vec![2.0], 2.0),
    ] {
        let (value, (dx, dk)) = scaled_energy_grad(&x, k);
        assert_bits("value", value, scaled_energy(&x, k));
        let sq: f64 = x.iter().map(|v| v * v).sum();
        let want: Vec<f64> = x.iter().map(|v| 2.0 * k * k * v).collect();
        assert_all_close("d/dx", &dx, &want, 1e-12, 1e-12);
        assert_close("d/dk", dk, 2.0 * k * sq, 1e-12, 1e-12);
    }
}

/// ADBench's radial distortion, as the bundle-adjustment objective has it.
#[differentiate]
fn radial_distort(rad_params: &[f64], proj: &mut [f64]) {
    let rsq = proj[0] * proj[0] + proj[1] * proj[1];
    let l = 1. + rad_params[0] * rsq + rad_params[1] * rsq * rsq;
    proj[0] = proj[0] * l;
    proj[1] = proj[1] * l;
}

/// The cross product into a fixed-size buffer.
#[differentiate]
fn cross(a: &[f64; 3], b: &[f64; 3], out: &mut [f64; 3]) {
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/// A pinhole projection of `x` rotated slightly about `w` (first order), then
/// distorted: helpers calling helpers, the buffer passed on whole.
#[differentiate]
fn project(cam: &[f64], x: &[f64; 3], w: &[f64; 3], proj: &mut [f64; 2]) {
    let mut wx = [0.0; 3];
    cross(w, x, &mut wx);
    let mut p = [0.0; 3];
    for i in 0..3 {
        p[i] = x[i] + wx[i];
    }
    proj[0] = p[0] / p[2];
    proj[1] = p[1] / p[2];
    radial_distort(&cam[1..3], proj);
    proj[0] = proj[0] * cam[0];
    proj[1] = proj[1] * cam[0];
}

/// Squared reprojection error of several points, each projection written
/// into its range of one buffer.
#[differentiate(wrt(cam, xs))]
fn reprojection(cam: &[f64], xs: &[f64], feats: &[f64]) -> f64 {
    let n = feats.len() / 2;
    let w = [0.01, -0.02, 0.03];
    let mut projs = vec![0.0; 2 * n];
    for i in 0..n {
        let x = [xs[3 * i], xs[3 * i + 1], xs[3 * i + 2]];
        let mut p = [0.0; 2];
        project(cam, &x, &w, &mut p);
        projs[2 * i] = p[0];
        projs[2 * i + 1] = p[1];
        scale_into(1.0, &mut projs[2 * i..2 * i + 2]);
    }
    let mut e = 0.0;
    for j in 0..2 * n {
        let r = projs[j] - feats[j];
        e += r * r;
    }
    e
}

#[test]
fn a_reprojection_through_nested_helpers_against_central_differences() {
    let feats = [0.3, -0.2, 0.1, 0.4, -0.5, 0.25];
    let points = [
        (
            [2.0, 0.1, -0.05],
            [0.5, -0.25, 4.0, 1.0, 0.5, 5.0, -0.3, 0.2, 3.0],
        ),
        (
            [1.5, -0.2, 0.02],
            [0.1, 0.2, 2.0, -1.0, 0.3, 4.0, 0.7, -0.6, 6.0],
        ),
        (
            [3.0, 0.05, 0.01],
            [1.0, 1.0, 3.0, 0.0, -0.5, 2.5, -0.2, 0.1, 5.5],
        ),
    ];
    for (cam, xs) in points {
        let (value, (dcam, dxs)) = reprojection_grad(&cam, &xs, &feats);
        assert_bits("value", value, reprojection(&cam, &xs, &feats));
        let fd_cam = central_difference(|c: &[f64]| reprojection(c, &xs, &feats), &cam);
        let fd_xs = central_difference(|x: &[f64]| reprojection(&cam, x, &feats), &xs);
        assert_all_close("d/dcam", &dcam, &fd_cam, 1e-7, 1e-6);
        assert_all_close("d/dxs", &dxs, &fd_xs, 1e-7, 1e-6);
    }
}

/// The distortion alone, by hand: with `r = |p|²`, `l = 1 + a r + b r²`,
/// the result is `l p`.
#[differentiate]
fn distorted_norm(a: f64, b: f64, p0: f64, p1: f64) -> f64 {
    let mut proj = vec![p0, p1];
    let rad = [a, b];
    radial_distort(&rad, &mut proj);
    proj[0] + 2.0 * proj[1]
}

#[test]
fn the_distortion_against_its_derivative_by_hand() {
    for (a, b, p0, p1) in [
        (0.1, -0.05, 0.5, -0.25),
        (-0.2, 0.3, 1.0, 0.5),
        (0.0, 0.0, -1.0, 2.0),
    ] {
        let (value, (da, db, dp0, dp1)) = distorted_norm_grad(a, b, p0, p1);
        assert_bits("value", value, distorted_norm(a, b, p0, p1));
        let r = p0 * p0 + p1 * p1;
        let l = 1.0 + a * r + b * r * r;
        let s = p0 + 2.0 * p1;
        let dl_dr = a + 2.0 * b * r;
        assert_close("d/da", da, s * r, 1e-12, 1e-12);
        assert_close("d/db", db, s * r * r, 1e-12, 1e-12);
        assert_close("d/dp0", dp0, l + s * dl_dr * 2.0 * p0, 1e-12, 1e-12);
        assert_close("d/dp1", dp1, 2.0 * l + s * dl_dr * 2.0 * p1, 1e-12, 1e-12);
    }
}

/// `scale_into` for callers in forward mode too.
#[differentiate(tangent)]
fn scale_into_t(k: f64, out: &mut [f64]) {
    for i in 0..out.len() {
        out[i] *= k;
    }
}

/// Forward mode through a helper writing into a buffer.
#[differentiate(tangent)]
fn scaled_energy_t(x: &[f64], k: f64) -> f64 {
    let mut buf = x.to_vec();
    scale_into_t(k, &mut buf);
    buf.iter().map(|v| v * v).sum::<f64>()
}

/// A helper calling a scalar function (without `tangent`), and passing its
/// buffer whole to a function that only reads it.
#[differentiate]
fn normalise(out: &mut [f64]) {
    let s = sum_sq(out);
    for i in 0..out.len() {
        out[i] /= s.sqrt();
    }
}

#[differentiate]
fn sum_sq(v: &[f64]) -> f64 {
    v.iter().map(|a| a * a).sum()
}

/// The first coordinate of `x` normalised.
#[differentiate]
fn first_normalised(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    normalise(&mut v);
    v[0]
}

#[test]
fn a_buffer_read_whole_by_a_scalar_function() {
    for x in [[3.0, 4.0], [1.0, -2.0], [-0.5, 0.25]] {
        let (value, g) = first_normalised_grad(&x);
        assert_bits("value", value, first_normalised(&x));
        let n = (x[0] * x[0] + x[1] * x[1]).sqrt();
        let want = [
            1.0 / n - x[0] * x[0] / (n * n * n),
            -x[0] * x[1] / (n * n * n),
        ];
        assert_all_close("gradient", &g, &want, 1e-12, 1e-12);
    }
}

#[test]
fn forward_mode_through_a_buffer() {
    let x = [1.0, -2.0];
    let (v, t) = scaled_energy_t_tangent(&x, 1.5, &[1.0, 0.0], 0.5);
    assert_bits("value", v, scaled_energy_t(&x, 1.5));
    // d/dx0 = 2 k² x0 = 4.5; d/dk = 2 k Σx² = 15
    assert_close("tangent", t, 4.5 + 0.5 * 15.0, 1e-12, 1e-12);
}

/// The README's example, as written there.
#[differentiate]
fn torque_sq(r: &[f64; 3], f: &[f64; 3]) -> f64 {
    let mut t = [0.0; 3];
    cross(r, f, &mut t);
    t[0] * t[0] + t[1] * t[1] + t[2] * t[2]
}

#[test]
fn readme_example() {
    let (r, f) = ([1.0, -0.5, 2.0], [0.25, 3.0, -1.0]);
    let (value, (dr, df)) = torque_sq_grad(&r, &f);
    assert_bits("value", value, torque_sq(&r, &f));
    // |r × f|² = |r|²|f|² − (r·f)²
    let (rr, ff, rf) = (
        r.iter().map(|v| v * v).sum::<f64>(),
        f.iter().map(|v| v * v).sum::<f64>(),
        r.iter().zip(&f).map(|(a, b)| a * b).sum::<f64>(),
    );
    for i in 0..3 {
        assert_close(
            "d/dr",
            dr[i],
            2.0 * r[i] * ff - 2.0 * rf * f[i],
            1e-12,
            1e-12,
        );
        assert_close(
            "d/df",
            df[i],
            2.0 * f[i] * rr - 2.0 * rf * r[i],
            1e-12,
            1e-12,
        );
    }
}

/// Writes into a buffer by method: `copy_from_slice` of a view, `fill`.
#[differentiate]
fn buffer_methods(x: &[f64]) -> f64 {
    let mut v = [0.0; 2];
    let mut s = 0.0;
    for k in 0..2 {
        v.copy_from_slice(&x[k..k + 2]);
        s += v[0] * v[1];
        v.fill(x[0]);
        s += v[1];
    }
    s
}

#[test]
fn copy_from_slice_and_fill() {
    for x in [[1.0, 2.0, 3.0], [-0.5, 0.25, 4.0]] {
        let (value, g) = buffer_methods_grad(&x);
        assert_bits("value", value, buffer_methods(&x));
        // s = x0 x1 + x1 x2 + 2 x0
        let want = [x[1] + 2.0, x[0] + x[2], x[1]];
        assert_all_close("gradient", &g, &want, 1e-12, 1e-12);
    }
}

#[test]
#[should_panic(expected = "source slice length does not match destination slice length")]
fn copy_from_slice_checks_lengths() {
    wrong_length_grad(&[1.0, 2.0, 3.0]);
}

#[differentiate]
fn wrong_length(x: &[f64]) -> f64 {
    let mut v = [0.0; 2];
    v.copy_from_slice(&x[..3]);
    v[0]
}

/// A `Vec` lent whole: the helper sees `&mut Vec<f64>`.
#[differentiate]
#[allow(clippy::ptr_arg)] // The case under test.
fn step_vec(a: f64, out: &mut Vec<f64>) {
    out[0] = out[0] * a + 1.0;
    out[1] += a * out[0];
}

/// A fixed-size buffer.
#[differentiate]
fn step_fixed(a: f64, out: &mut [f64; 3]) {
    out[2] = out[1] * a;
    out[1] = out[0] - a;
    out[0] = a.sin();
}

/// Two outputs, a float and a buffer.
#[differentiate]
fn step_two(a: f64, lo: &mut f64, out: &mut [f64]) {
    *lo = *lo * a;
    for i in 0..out.len() {
        out[i] = out[i] * 0.5 + a * *lo;
    }
}

/// A generic helper writing into a slice.
#[differentiate]
fn step_generic<T: num_traits::Float>(a: T, out: &mut [T]) {
    for i in 0..out.len() {
        out[i] = out[i] * a + a * a;
    }
}

/// Every kind of output buffer lent again and again in a loop (the value of
/// each call is written into storage the loop reuses).
#[differentiate]
fn looped_outputs(x: &[f64]) -> f64 {
    let mut v = vec![0.5, -0.25];
    let mut f = [1.0, 0.0, -1.0];
    let mut lo = 1.0;
    let mut two = vec![0.0; 2];
    let mut g = vec![0.1, 0.2, 0.3];
    let mut s = 0.0;
    for i in 0..x.len() {
        step_vec(x[i], &mut v);
        step_fixed(x[i], &mut f);
        step_two(x[i], &mut lo, &mut two);
        step_generic(x[i], &mut g);
        s += v[0] * v[1] + f[0] * f[2] + lo * two[1] + g[0] - g[2] * f[1];
    }
    s
}

#[test]
fn every_kind_of_output_buffer_lent_in_a_loop() {
    for x in [
        vec![0.3, -0.7, 0.9],
        vec![1.1, 0.4],
        vec![-0.5, 0.8, -0.2, 0.6],
    ] {
        let (value, dx) = looped_outputs_grad(&x);
        assert_bits("value", value, looped_outputs(&x));
        let fd = central_difference(|p: &[f64]| looped_outputs(p), &x);
        assert_all_close("d/dx", &dx, &fd, 1e-7, 1e-7);
    }
}

/// Reads what it overwrites: its pullback computes the buffer again.
#[differentiate]
fn square_each(out: &mut [f64]) {
    for i in 0..out.len() {
        out[i] = out[i] * out[i];
    }
}

/// Linear in the buffer: its pullback needs no value of it.
#[differentiate]
fn axpy(a: f64, x: &[f64], out: &mut [f64]) {
    for i in 0..out.len() {
        out[i] += a * x[i];
    }
}

/// Helpers whose pullbacks hold their copy of the buffer and its adjoint
/// inline when short and on the heap when long.
#[differentiate]
fn through_helpers(a: f64, x: &[f64]) -> f64 {
    let mut buf = vec![0.0; x.len()];
    let mut s = 0.0;
    for k in 0..3 {
        axpy(a + k as f64, x, &mut buf);
        square_each(&mut buf);
        s += buf[0] + buf[x.len() - 1];
    }
    s
}

#[test]
fn helper_buffers_short_and_long() {
    for n in [1, 3, 16, 17, 40] {
        for a in [0.3, -0.45] {
            let x: Vec<f64> = (0..n).map(|i| 0.05 * i as f64 - 0.4).collect();
            let (value, (da, dx)) = through_helpers_grad(a, &x);
            assert_bits("value", value, through_helpers(a, &x));
            let mut p = vec![a];
            p.extend(&x);
            let fd = central_difference(|p: &[f64]| through_helpers(p[0], &p[1..]), &p);
            assert_close("d/da", da, fd[0], 1e-6, 1e-6);
            assert_all_close("d/dx", &dx, &fd[1..], 1e-6, 1e-6);
        }
    }
}
