//! Fixed-size arrays as numeric Rust passes them: a callee's `[f64; 3]`
//! bound without its type written (`let c = cross(&a, &b);`), fixed-size
//! views of longer slices (`x.first_chunk::<3>().unwrap()`,
//! `x[a..b].try_into().unwrap()`, `x.last_chunk::<2>().unwrap()`), and a
//! range of a buffer lent as a `&mut [f64; N]` output
//! (`(&mut out[a..b]).try_into().unwrap()`). Gradients are checked against
//! ones derived by hand or central differences, at several points; values
//! are bit-identical to the function's.

#![deny(warnings)]
#![deny(clippy::all)]
// Index loops are how the functions under test are written.
#![allow(clippy::needless_range_loop)]

use gradmacro::differentiate;
use gradmacro_runtime::central_difference;

mod support;

use support::{assert_all_close, assert_bits, assert_close};

#[differentiate]
fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// `|a × b|²`, the cross product bound without its type, in both branches
/// of an `if` (so declared before it).
#[differentiate]
fn cross_sq(a: &[f64; 3], b: &[f64; 3], flip: bool) -> f64 {
    let mut s = 0.0;
    if flip {
        let c = cross(b, a);
        for i in 0..3 {
            s += c[i] * c[i];
        }
    } else {
        let c = cross(a, b);
        for i in 0..3 {
            s += c[i] * c[i];
        }
    }
    s
}

#[test]
fn an_untyped_array_from_a_call() {
    for (a, b) in [
        ([1.0, 2.0, 3.0], [-0.5, 0.25, 2.0]),
        ([0.3, -1.2, 0.7], [2.0, 1.0, -1.0]),
    ] {
        for flip in [false, true] {
            let (value, (da, db)) = cross_sq_grad(&a, &b, flip);
            assert_bits("value", value, cross_sq(&a, &b, flip));
            // |a × b|² = |a|²|b|² − (a·b)²: d/da = 2|b|² a − 2(a·b) b.
            let dot: f64 = (0..3).map(|i| a[i] * b[i]).sum();
            let (aa, bb): (f64, f64) =
                (a.iter().map(|v| v * v).sum(), b.iter().map(|v| v * v).sum());
            let want_a: Vec<f64> = (0..3).map(|i| 2.0 * bb * a[i] - 2.0 * dot * b[i]).collect();
            let want_b: Vec<f64> = (0..3).map(|i| 2.0 * aa * b[i] - 2.0 * dot * a[i]).collect();
            assert_all_close("d/da", &da, &want_a, 1e-12, 1e-12);
            assert_all_close("d/db", &db, &want_b, 1e-12, 1e-12);
        }
    }
}

#[differentiate]
fn weighted(v: &[f64; 3], w: &[f64; 2]) -> f64 {
    v[0] * w[0] + v[1] * v[2] * w[1]
}

/// Fixed-size views of one parameter passed where `&[f64; N]` is wanted.
#[differentiate]
fn views(x: &[f64]) -> f64 {
    let a = weighted(x.first_chunk::<3>().unwrap(), x.last_chunk::<2>().unwrap());
    let b = weighted(x[1..4].try_into().unwrap(), x[3..5].try_into().unwrap());
    let c: [f64; 3] = cross(x[0..3].try_into().unwrap(), x[2..5].try_into().unwrap());
    a * b + c[1]
}

#[test]
fn fixed_size_views_of_a_slice() {
    for x in [
        vec![0.5, -1.0, 2.0, 0.25, 1.5],
        vec![1.0, 0.3, -0.7, 2.2, -0.4, 9.0],
    ] {
        let (value, dx) = views_grad(&x);
        assert_bits("value", value, views(&x));
        let fd = central_difference(|v: &[f64]| views(v), &x);
        assert_all_close("d/dx", &dx, &fd, 1e-8, 1e-8);
    }
}

/// `w (p − f)` into a `&mut [f64; 2]`.
#[differentiate]
fn residual(p: &[f64; 2], w: f64, f: &[f64; 2], err: &mut [f64; 2]) {
    err[0] = w * (p[0] - f[0]);
    err[1] = w * (p[1] - f[1]);
}

/// The residuals of pairs of `ps` into their ranges of one buffer.
#[differentiate(wrt(ps, w))]
fn residuals(ps: &[f64], w: f64, fs: &[f64]) -> f64 {
    let n = ps.len() / 2;
    let mut errs = vec![0.0; 2 * n];
    for i in 0..n {
        residual(
            ps[2 * i..2 * i + 2].try_into().unwrap(),
            w,
            fs[2 * i..2 * i + 2].try_into().unwrap(),
            (&mut errs[2 * i..2 * i + 2]).try_into().unwrap(),
        );
    }
    errs.iter().map(|e| e * e).sum()
}

#[test]
fn a_range_lent_as_a_fixed_size_output() {
    for (ps, w, fs) in [
        (vec![1.0, 2.0, -0.5, 0.25], 1.5, vec![0.5, 1.0, 0.0, 1.0]),
        (vec![0.1, -0.2], -0.7, vec![1.0, 2.0]),
    ] {
        let (value, (dps, dw)) = residuals_grad(&ps, w, &fs);
        assert_bits("value", value, residuals(&ps, w, &fs));
        // Σ w² (p − f)²: d/dp = 2 w² (p − f), d/dw = 2 w Σ (p − f)².
        let want: Vec<f64> = (0..ps.len())
            .map(|i| 2.0 * w * w * (ps[i] - fs[i]))
            .collect();
        let sq: f64 = (0..ps.len()).map(|i| (ps[i] - fs[i]).powi(2)).sum();
        assert_all_close("d/dps", &dps, &want, 1e-12, 1e-12);
        assert_close("d/dw", dw, 2.0 * w * sq, 1e-12, 1e-12);
    }
}

#[differentiate(tangent)]
fn cross_t(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Forward mode through a callee's array bound without its type.
#[differentiate(tangent)]
fn cross_first(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    let c = cross_t(a, b);
    c[0] * c[1] + c[2]
}

#[test]
fn forward_mode_through_an_untyped_array() {
    let (a, b) = ([1.0, 2.0, 3.0], [-0.5, 0.25, 2.0]);
    let (ta, tb) = ([1.0, 0.0, -1.0], [0.5, 2.0, 0.0]);
    let (value, tangent) = cross_first_tangent(&a, &b, &ta, &tb);
    assert_bits("value", value, cross_first(&a, &b));
    let (_, (da, db)) = cross_first_grad(&a, &b);
    let want: f64 = (0..3).map(|i| da[i] * ta[i] + db[i] * tb[i]).sum();
    assert_close("tangent", tangent, want, 1e-12, 1e-12);
}
