//! A local buffer re-created by assignment: from a copy (`v =
//! x[a..b].to_vec();`, `Vec::from(..)`, `.collect::<Vec<f64>>()`, of `v`
//! itself too), from `vec![0.0; n]` then `+=` into its elements, and from
//! `Vec::new()` then `push`, in loops and with a new length. The old
//! buffer's elements get only their own derivatives (the new buffer's,
//! already passed on, must not reach them). Each gradient against one worked
//! out by hand and against central finite differences, values bit for bit,
//! forward mode and the Hessian too. Denies warnings and clippy lints.

#![deny(warnings)]
#![deny(clippy::all)]

mod support;

use gradmacro::differentiate;

fn points() -> Vec<Vec<f64>> {
    vec![
        vec![0.5, 1.5, -2.0, 3.0, 0.25, -0.75],
        vec![-1.1, 0.4, 2.2, -0.6, 1.7, 0.9],
        vec![2.5, -0.35, 0.8, 1.25, -1.9, 0.05],
    ]
}

/// `f_grad` and `f_tangent` of a function of one slice.
type Grad<'a> = &'a dyn Fn(&[f64]) -> (f64, Vec<f64>);
type Tangent<'a> = &'a dyn Fn(&[f64], &[f64]) -> (f64, f64);

/// Value bits, the gradient against `want` and finite differences, and the
/// tangent along a direction against the gradient's dot product.
#[track_caller]
fn check(
    name: &str,
    f: &dyn Fn(&[f64]) -> f64,
    grad: Grad<'_>,
    tangent: Tangent<'_>,
    want: &dyn Fn(&[f64]) -> Vec<f64>,
) {
    for x in points() {
        let (v, g) = grad(&x);
        assert_eq!(v.to_bits(), f(&x).to_bits(), "{name}: value at {x:?}");
        support::assert_all_close(name, &g, &want(&x), 1e-12, 1e-12);
        let fd = gradmacro_runtime::central_difference(f, &x);
        support::assert_all_close(&format!("{name} (finite differences)"), &g, &fd, 1e-6, 1e-6);
        let t: Vec<f64> = (0..x.len()).map(|i| 0.75 - 0.5 * i as f64).collect();
        let (tv, dir) = tangent(&x, &t);
        assert_eq!(tv.to_bits(), v.to_bits(), "{name}: tangent value");
        let dot: f64 = g.iter().zip(&t).map(|(a, b)| a * b).sum();
        support::assert_close(&format!("{name} (tangent)"), dir, dot, 1e-12, 1e-12);
    }
}

/// A window sliding over `x`, re-created from a copy each step:
/// f = sum_{r<3} x_r x_{r+1} + x_3.
#[differentiate(tangent)]
fn sliding_copy(x: &[f64]) -> f64 {
    let mut v = x[0..2].to_vec();
    let mut s = 0.0;
    for r in 0..3 {
        s += v[0] * v[1];
        v = x[r + 1..r + 3].to_vec();
    }
    s + v[0]
}

fn sliding_by_hand(x: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; x.len()];
    for r in 0..3 {
        g[r] += x[r + 1];
        g[r + 1] += x[r];
    }
    g[3] += 1.0;
    g
}

#[test]
fn to_vec_assigned_in_a_loop() {
    check(
        "sliding_copy",
        &|x| sliding_copy(x),
        &|x| sliding_copy_grad(x),
        &|x, t| sliding_copy_tangent(x, t),
        &sliding_by_hand,
    );
}

/// The same window re-created by `vec![0.0; 2]` and `+=`, and by
/// `Vec::new()` and `push`: forms that already were supported, whose old
/// elements once received the new ones' derivatives.
#[differentiate(tangent)]
fn sliding_add(x: &[f64]) -> f64 {
    let mut v = x[0..2].to_vec();
    let mut s = 0.0;
    for r in 0..3 {
        s += v[0] * v[1];
        v = vec![0.0; 2];
        v[0] += x[r + 1];
        v[1] += x[r + 2];
    }
    s + v[0]
}

#[differentiate(tangent)]
fn sliding_push(x: &[f64]) -> f64 {
    let mut v = x[0..2].to_vec();
    let mut s = 0.0;
    for r in 0..3 {
        s += v[0] * v[1];
        v = Vec::new();
        for k in 0..2 {
            v.push(x[r + 1 + k]);
        }
    }
    s + v[0]
}

#[test]
fn re_created_by_vec_macro_and_by_push() {
    check(
        "sliding_add",
        &|x| sliding_add(x),
        &|x| sliding_add_grad(x),
        &|x, t| sliding_add_tangent(x, t),
        &sliding_by_hand,
    );
    check(
        "sliding_push",
        &|x| sliding_push(x),
        &|x| sliding_push_grad(x),
        &|x, t| sliding_push_tangent(x, t),
        &sliding_by_hand,
    );
}

/// A new length, shorter then longer, and a copy of `v` itself:
/// v = x[0..3]: a = v2 v0; v = x[3..5]: b = v0 v1; v = x[1..6]: c = v4 + v1;
/// v = v[2..] = x[3..6]: d = v0 v2.
#[differentiate(tangent, hessian)]
fn lengths_change(x: &[f64]) -> f64 {
    let mut v = x[0..3].to_vec();
    let a = v[2] * v[0];
    v = Vec::from(&x[3..5]);
    let b = v[0] * v[1];
    v = x[1..].iter().map(|e| e * 2.0).collect::<Vec<f64>>();
    let c = v[4] + v[1];
    v = v[2..].to_vec();
    let d = v[0] * v[2];
    a + b * c + d
}

fn lengths_by_hand(x: &[f64]) -> Vec<f64> {
    // a = x2 x0, b = x3 x4, c = 2 x5 + 2 x2, d = (2 x3)(2 x5)
    let (b, c) = (x[3] * x[4], 2.0 * x[5] + 2.0 * x[2]);
    let mut g = vec![0.0; 6];
    g[0] += x[2];
    g[2] += x[0];
    g[3] += x[4] * c;
    g[4] += x[3] * c;
    g[5] += 2.0 * b;
    g[2] += 2.0 * b;
    g[3] += 4.0 * x[5];
    g[5] += 4.0 * x[3];
    g
}

#[test]
fn new_lengths_and_a_copy_of_itself() {
    check(
        "lengths_change",
        &|x| lengths_change(x),
        &|x| lengths_change_grad(x),
        &|x, t| lengths_change_tangent(x, t),
        &lengths_by_hand,
    );
    for x in points() {
        let (v, g, h) = lengths_change_hessian(&x);
        assert_eq!(v.to_bits(), lengths_change(&x).to_bits());
        support::assert_all_close(
            "lengths_change gradient",
            &g,
            &lengths_by_hand(&x),
            1e-12,
            1e-12,
        );
        // Nonzero second derivatives: a: (0,2); b c: (3,4) c, (3,5) 2 x4,
        // (3,2) 2 x4, (4,5) 2 x3, (4,2) 2 x3; d: (3,5) 4.
        let mut want = vec![vec![0.0; 6]; 6];
        let c = 2.0 * x[5] + 2.0 * x[2];
        for (i, j, v) in [
            (0, 2, 1.0),
            (3, 4, c),
            (3, 5, 2.0 * x[4] + 4.0),
            (3, 2, 2.0 * x[4]),
            (4, 5, 2.0 * x[3]),
            (4, 2, 2.0 * x[3]),
        ] {
            want[i][j] += v;
            want[j][i] += v;
        }
        for (r, (got, w)) in h.iter().zip(&want).enumerate() {
            support::assert_all_close(&format!("Hessian row {r}"), got, w, 1e-12, 1e-12);
        }
    }
}
