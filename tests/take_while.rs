//! Iteration stopped by a test of the values, `take_while(|v| ..)`: in
//! `for` loops and before `.sum()`, `.product()`, `.map(..).sum()`; and
//! the empty filtered sum, which is -0.0 as the standard library's. Each
//! gradient against one written by hand and central finite differences,
//! the value bit for bit against the function's, forward mode too. Denies
//! warnings and clippy lints.

#![deny(warnings)]
#![deny(clippy::all)]

mod support;

use gradmacro::differentiate;

/// Points away from the tests' thresholds (0, 1.5, 2).
fn points() -> Vec<Vec<f64>> {
    vec![
        vec![0.5, 1.25, 2.05, -0.75, 0.3, 1.1],
        vec![1.45, -0.2, 0.7, 3.1, 0.9, 2.2],
        vec![0.6, 1.8, 0.45, 1.9, 2.7, 0.15],
        vec![-0.6, 1.8, 0.45, 1.9, 2.7, 0.15],
    ]
}

/// How many leading elements are positive.
fn leading(x: &[f64]) -> usize {
    x.iter().take_while(|v| **v > 0.0).count()
}

type Grad<'a> = &'a dyn Fn(&[f64]) -> (f64, Vec<f64>);
type Tangent<'a> = &'a dyn Fn(&[f64], &[f64]) -> (f64, f64);

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
        support::assert_all_close(&format!("{name} (fd)"), &g, &fd, 1e-6, 1e-6);
        let t: Vec<f64> = (0..x.len()).map(|i| 1.0 - 0.3 * i as f64).collect();
        let (tv, dir) = tangent(&x, &t);
        assert_eq!(tv.to_bits(), v.to_bits(), "{name}: tangent value");
        let dot: f64 = g.iter().zip(&t).map(|(a, b)| a * b).sum();
        support::assert_close(&format!("{name} (tangent)"), dir, dot, 1e-12, 1e-12);
    }
}

/// f = sum of squares of the leading positive elements, plus the product
/// of the leading elements below 2 (after the first).
#[differentiate(tangent)]
fn leading_reductions(x: &[f64]) -> f64 {
    let s = x
        .iter()
        .take_while(|v| **v > 0.0)
        .map(|v| v * v)
        .sum::<f64>();
    let p = x
        .iter()
        .skip(1)
        .copied()
        .take_while(|&v| v < 2.0)
        .product::<f64>();
    s + p
}

fn leading_reductions_by_hand(x: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; x.len()];
    for i in 0..leading(x) {
        g[i] += 2.0 * x[i];
    }
    let m = x[1..].iter().take_while(|v| **v < 2.0).count();
    let p: f64 = x[1..1 + m].iter().product();
    for i in 1..1 + m {
        g[i] += p / x[i];
    }
    g
}

#[test]
fn take_while_before_sum_and_product() {
    check(
        "leading_reductions",
        &|x| leading_reductions(x),
        &|x| leading_reductions_grad(x),
        &|x, t| leading_reductions_tangent(x, t),
        &leading_reductions_by_hand,
    );
}

/// A `for` loop over the leading positive elements, with `continue`.
#[differentiate(tangent)]
fn leading_loop(x: &[f64]) -> f64 {
    let mut s = 1.0;
    for v in x.iter().take_while(|v| **v > 0.0) {
        if *v > 1.5 {
            continue;
        }
        s *= v.exp() + 1.0;
    }
    s
}

fn leading_loop_by_hand(x: &[f64]) -> Vec<f64> {
    let n = leading(x);
    let used: Vec<usize> = (0..n).filter(|&i| x[i] <= 1.5).collect();
    let s: f64 = used.iter().map(|&i| x[i].exp() + 1.0).product();
    let mut g = vec![0.0; x.len()];
    for &i in &used {
        g[i] = s * x[i].exp() / (x[i].exp() + 1.0);
    }
    g
}

#[test]
fn take_while_in_a_for_loop() {
    check(
        "leading_loop",
        &|x| leading_loop(x),
        &|x| leading_loop_grad(x),
        &|x, t| leading_loop_tangent(x, t),
        &leading_loop_by_hand,
    );
}

/// An empty filtered or leading sum is -0.0, bit for bit.
#[differentiate]
fn empty_sums(x: &[f64]) -> f64 {
    let a = x.iter().filter(|v| **v > 100.0).sum::<f64>();
    let b = x
        .iter()
        .take_while(|v| **v > 100.0)
        .map(|v| v * 2.0)
        .sum::<f64>();
    a + b
}

#[test]
fn empty_sums_are_negative_zero() {
    let x = [1.0, -0.0];
    let (v, g) = empty_sums_grad(&x);
    assert_eq!(v.to_bits(), (-0.0f64).to_bits());
    assert_eq!(v.to_bits(), empty_sums(&x).to_bits());
    assert_eq!(g, vec![0.0, 0.0]);
}
