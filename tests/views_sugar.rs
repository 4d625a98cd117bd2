//! Views of arrays (`let v = &x[a..b];` and its kin), as a user writes them,
//! against derivatives written by hand.
#![deny(warnings)]

mod support;

use gradmacro::differentiate;
use support::{assert_all_close, assert_bits, assert_close};

#[differentiate(tangent)]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..a.len() {
        s += a[i] * b[i];
    }
    s
}

#[differentiate(tangent)]
#[allow(clippy::needless_range_loop, clippy::redundant_slicing)]
fn rows(x: &[f64], p: usize, w: f64) -> f64 {
    let mut total = 0.0;
    for r in 0..x.len() / p {
        let row = &x[r * p..(r + 1) * p];
        let mut s = 0.0;
        for j in 0..row.len() {
            s += row[j] * row[j];
        }
        let head = &row[..2];
        total += s * w + dot(head, &row[1..3]);
    }
    let (left, right) = x.split_at(p);
    let all = &x[..];
    total + left[0] * right[0] + all.len() as f64
}

#[test]
fn views_of_a_differentiated_slice() {
    let x = [0.5, -1.0, 2.0, 0.25, 1.5, -0.75];
    let (p, w) = (3, 0.7);
    let (value, (gx, gw)) = rows_grad(&x, p, w);
    assert_bits("value", value, rows(&x, p, w));
    // By hand: per row r, s = Σ x², head = (x0, x1), dot(head, (x1, x2)).
    let mut want = vec![0.0; 6];
    let mut want_w = 0.0;
    for r in 0..2 {
        let o = r * p;
        for j in 0..p {
            want[o + j] += 2.0 * x[o + j] * w;
            want_w += x[o + j] * x[o + j];
        }
        want[o] += x[o + 1];
        want[o + 1] += x[o] + x[o + 2];
        want[o + 2] += x[o + 1];
    }
    want[0] += x[3];
    want[3] += x[0];
    assert_all_close("d/dx", &gx, &want, 1e-12, 1e-12);
    assert_close("d/dw", gw, want_w, 1e-12, 1e-12);
    let t: Vec<f64> = (0..6).map(|k| k as f64 - 2.0).collect();
    let (_, dot_t) = rows_tangent(&x, p, w, &t, 0.0);
    let want_t: f64 = want.iter().zip(&t).map(|(a, b)| a * b).sum();
    assert_close("tangent", dot_t, want_t, 1e-12, 1e-12);
}

#[differentiate(wrt(w))]
fn constant_view(w: f64, x: &[f64]) -> f64 {
    let row = &x[0..2];
    row[0] * w + row[1] * w * w
}

#[test]
fn a_view_of_constant_data() {
    let x = [2.0, 3.0, 4.0];
    assert_eq!(
        constant_view_grad(0.5, &x),
        (2.0 * 0.5 + 3.0 * 0.25, 2.0 + 3.0)
    );
}

#[differentiate(tangent)]
fn loops_over_views(x: &[f64], c: &[f64]) -> f64 {
    let tail = &x[1..];
    let mut s = 0.0;
    for e in tail.iter() {
        s += e * e;
    }
    for &e in tail {
        s += e.sin();
    }
    for (i, e) in tail.iter().enumerate() {
        s += *e * c[i];
    }
    let data = &c[..2];
    for d in data {
        s += d * x[0];
    }
    s
}

#[test]
fn loops_over_views_of_differentiated_and_constant_slices() {
    let x = [0.3, -1.2, 0.8];
    let c = [2.0, -0.5, 1.0];
    let (value, (gx, gc)) = loops_over_views_grad(&x, &c);
    assert_bits("value", value, loops_over_views(&x, &c));
    let want_x = [
        c[0] + c[1],
        2.0 * x[1] + x[1].cos() + c[0],
        2.0 * x[2] + x[2].cos() + c[1],
    ];
    assert_all_close("d/dx", &gx, &want_x, 1e-12, 1e-12);
    assert_all_close("d/dc", &gc, &[x[1] + x[0], x[2] + x[0], 0.0], 1e-12, 1e-12);
    let (_, t) = loops_over_views_tangent(&x, &c, &[1.0, 0.0, 0.0], &[0.0; 3]);
    assert_close("tangent", t, want_x[0], 1e-12, 1e-12);
}

#[differentiate]
fn reference_to_a_scalar(x: f64) -> f64 {
    let r = &x;
    *r * 2.0 + r.sin()
}

#[test]
fn a_reference_to_a_scalar_reads_it() {
    for x in [-0.5, 1.25] {
        assert_eq!(
            reference_to_a_scalar_grad(x),
            (x * 2.0 + x.sin(), 2.0 + x.cos())
        );
    }
}

#[differentiate(tangent)]
fn reductions_over_views(x: &[f64], w: &[f64], p: usize) -> f64 {
    let mut total = 0.0;
    for r in 0..x.len() / p {
        let row = &x[r * p..(r + 1) * p];
        let s: f64 = row.iter().sum();
        let q = row.iter().map(|v| v * v).sum::<f64>();
        let d = row.iter().zip(w).map(|(a, b)| a * b).sum::<f64>();
        let m: f64 = row.iter().copied().product();
        total += s + q + d * 0.5 + m;
    }
    total
}

#[test]
fn reductions_over_views_of_a_differentiated_slice() {
    let x = [0.5, -1.0, 2.0, 0.25, 1.5, -0.75];
    let w = [0.3, -0.2, 1.1];
    let p = 3;
    let (value, (gx, gw)) = reductions_over_views_grad(&x, &w, p);
    assert_bits("value", value, reductions_over_views(&x, &w, p));
    let mut want_x = vec![0.0; 6];
    let mut want_w = vec![0.0; 3];
    for r in 0..2 {
        let row = &x[r * p..(r + 1) * p];
        let prod: f64 = row.iter().product();
        for j in 0..p {
            want_x[r * p + j] = 1.0 + 2.0 * row[j] + 0.5 * w[j] + prod / row[j];
            want_w[j] += 0.5 * row[j];
        }
    }
    assert_all_close("d/dx", &gx, &want_x, 1e-12, 1e-12);
    assert_all_close("d/dw", &gw, &want_w, 1e-12, 1e-12);
    let t = [1.0, 0.0, 0.0, 0.0, 0.0, -1.0];
    let (_, dt) = reductions_over_views_tangent(&x, &w, p, &t, &[0.0; 3]);
    assert_close("tangent", dt, want_x[0] - want_x[5], 1e-12, 1e-12);
}

/// A dense tanh layer: a view of each row, and a store into another array
/// indexed by the same loop variable the view's range reads (`h[j] = ..`
/// writes `h`, not `j`).
#[differentiate(wrt(w, b))]
fn layer_rows(w: &[f64], b: &[f64], x: &[f64], n: usize) -> f64 {
    let mut h = vec![0.0; b.len()];
    for j in 0..b.len() {
        let row = &w[j * n..(j + 1) * n];
        let s: f64 = row.iter().zip(x).map(|(wji, xi)| wji * xi).sum::<f64>();
        h[j] = (s + b[j]).tanh();
    }
    h.iter().sum::<f64>()
}

#[test]
fn a_view_beside_a_store_indexed_by_its_loop_variable() {
    let (w, b, x, n) = (
        [0.5, -1.0, 0.25, 2.0, -0.5, 1.0],
        [0.1, -0.2],
        [1.5, -0.5, 0.75],
        3,
    );
    let (value, (gw, gb)) = layer_rows_grad(&w, &b, &x, n);
    assert_bits("value", value, layer_rows(&w, &b, &x, n));
    for j in 0..2 {
        let s: f64 = (0..n).map(|i| w[j * n + i] * x[i]).sum::<f64>() + b[j];
        let ds = 1.0 - s.tanh() * s.tanh();
        assert_close("d/db", gb[j], ds, 1e-12, 1e-12);
        for i in 0..n {
            assert_close("d/dw", gw[j * n + i], ds * x[i], 1e-12, 1e-12);
        }
    }
}

#[differentiate]
fn sum_sq(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum()
}

/// Slices of slices (`&w[1..][..2]`, `w[2..][1]`, `&w[1..][1..]`) and a
/// reborrowed buffer (`&*v`), as ADBench's ports write them.
#[differentiate]
#[allow(clippy::explicit_auto_deref)]
fn reslices(w: &[f64]) -> f64 {
    let v = vec![w[0], w[1]];
    sum_sq(&w[1..][..2]) + sum_sq(&*v) + w[2..][1] * 3.0 + sum_sq(&w[1..][1..])
}

#[test]
fn slices_of_slices_and_reborrows() {
    for w in [[1.0, -2.0, 0.5, 3.0], [0.25, 1.5, -1.0, -0.5]] {
        let (value, g) = reslices_grad(&w);
        assert_bits("value", value, reslices(&w));
        let want = [2.0 * w[0], 4.0 * w[1], 4.0 * w[2], 3.0 + 2.0 * w[3]];
        assert_all_close("gradient", &g, &want, 1e-12, 1e-12);
    }
}

/// A view whose bound is a name the loop binds again (`i`): the view keeps
/// the range it was made with (this read `x[i + i]` once).
#[differentiate]
#[allow(clippy::needless_range_loop)]
fn view_then_loop_over_i(x: &[f64], i: usize) -> f64 {
    let v = &x[i..];
    let mut s = 0.0;
    for i in 0..2 {
        s += v[i] * (i as f64 + 1.0);
    }
    s
}

/// A view shadowed inside a block: its uses after the block are the view's,
/// the block's are the new binding's.
#[differentiate]
fn view_shadowed_in_a_block(x: &[f64]) -> f64 {
    let v = &x[1..];
    let inner = {
        let v = &x[2..];
        v[0] * 10.0
    };
    v[0] + inner
}

#[test]
fn views_keep_the_range_they_were_made_with() {
    let x = [0.5, -1.5, 2.0, 3.0];
    for i in 0..3 {
        let (value, dx) = view_then_loop_over_i_grad(&x, i);
        assert_bits("value", value, view_then_loop_over_i(&x, i));
        let mut want = vec![0.0; 4];
        want[i] = 1.0;
        want[i + 1] = 2.0;
        assert_all_close("d/dx", &dx, &want, 0.0, 0.0);
    }
    let (value, dx) = view_shadowed_in_a_block_grad(&x);
    assert_bits("value", value, view_shadowed_in_a_block(&x));
    assert_all_close("d/dx", &dx, &[0.0, 1.0, 10.0, 0.0], 0.0, 0.0);
}
