//! Two iterators one after the other, `a.chain(b)`: in `for` loops (with
//! `break`), and in `.sum()`, `.product()`, `.fold(..)`, `.map(..).sum()`,
//! over parameters, sub-slices, adaptors and ranges, and over data.
//! Each gradient against one written by hand and against central finite
//! differences at several points, the value bit for bit against the
//! function's; forward mode and the Hessian on one of them. Denies
//! warnings and clippy lints.

#![deny(warnings)]
#![deny(clippy::all)]

mod support;

use gradmacro::differentiate;

/// Pairs `(x, y)`, lengths 4 and 3.
fn points() -> Vec<(Vec<f64>, Vec<f64>)> {
    vec![
        (vec![0.5, -1.25, 2.0, 0.75], vec![-0.3, 1.1, 0.6]),
        (vec![1.5, 0.2, -0.7, 3.1], vec![0.9, -2.2, 0.35]),
        (vec![-0.6, 1.8, 0.45, -1.9], vec![2.7, 0.15, -0.85]),
    ]
}

fn fd(f: &dyn Fn(&[f64], &[f64]) -> f64, x: &[f64], y: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let h = 1e-6;
    let dx = (0..x.len())
        .map(|i| {
            let (mut p, mut m) = (x.to_vec(), x.to_vec());
            p[i] += h;
            m[i] -= h;
            (f(&p, y) - f(&m, y)) / (2.0 * h)
        })
        .collect();
    let dy = (0..y.len())
        .map(|i| {
            let (mut p, mut m) = (y.to_vec(), y.to_vec());
            p[i] += h;
            m[i] -= h;
            (f(x, &p) - f(x, &m)) / (2.0 * h)
        })
        .collect();
    (dx, dy)
}

type Grad<'a> = &'a dyn Fn(&[f64], &[f64]) -> (f64, (Vec<f64>, Vec<f64>));
type Want<'a> = &'a dyn Fn(&[f64], &[f64]) -> (Vec<f64>, Vec<f64>);

#[track_caller]
fn check(name: &str, f: &dyn Fn(&[f64], &[f64]) -> f64, grad: Grad<'_>, want: Want<'_>) {
    for (x, y) in points() {
        let (v, (gx, gy)) = grad(&x, &y);
        assert_eq!(v.to_bits(), f(&x, &y).to_bits(), "{name}: value");
        let (wx, wy) = want(&x, &y);
        support::assert_all_close(&format!("{name} d/dx"), &gx, &wx, 1e-12, 1e-12);
        support::assert_all_close(&format!("{name} d/dy"), &gy, &wy, 1e-12, 1e-12);
        let (fx, fy) = fd(f, &x, &y);
        support::assert_all_close(&format!("{name} d/dx (fd)"), &gx, &fx, 1e-6, 1e-6);
        support::assert_all_close(&format!("{name} d/dy (fd)"), &gy, &fy, 1e-6, 1e-6);
    }
}

/// f = sum of squares of x then y.
#[differentiate(tangent, hessian)]
fn sum_of_squares(x: &[f64], y: &[f64]) -> f64 {
    x.iter().chain(y.iter()).map(|v| v * v).sum::<f64>()
}

#[test]
fn map_sum_over_a_chain() {
    check(
        "sum_of_squares",
        &|x, y| sum_of_squares(x, y),
        &|x, y| sum_of_squares_grad(x, y),
        &|x, y| {
            (
                x.iter().map(|v| 2.0 * v).collect(),
                y.iter().map(|v| 2.0 * v).collect(),
            )
        },
    );
    for (x, y) in points() {
        let (tx, ty) = (vec![1.0, 0.0, -1.0, 0.5], vec![0.25, 2.0, 0.0]);
        let (v, dir) = sum_of_squares_tangent(&x, &y, &tx, &ty);
        assert_eq!(v.to_bits(), sum_of_squares(&x, &y).to_bits());
        let want: f64 = x
            .iter()
            .zip(&tx)
            .chain(y.iter().zip(&ty))
            .map(|(a, t)| 2.0 * a * t)
            .sum();
        support::assert_close("tangent", dir, want, 1e-12, 1e-12);
        let (_, _, h) = sum_of_squares_hessian(&x, &y);
        for (i, row) in h.iter().enumerate() {
            for (j, hij) in row.iter().enumerate() {
                assert_eq!(*hij, if i == j { 2.0 } else { 0.0 }, "H[{i}][{j}]");
            }
        }
    }
}

/// A running sum over x then the tail of y, left by `break` once it
/// passes 1.0 (the break skips the rest of x and all of y).
#[differentiate]
fn until_above(x: &[f64], y: &[f64]) -> f64 {
    let mut s = 0.0;
    for &v in x.iter().chain(&y[1..]) {
        s += v.sin();
        if s > 1.0 {
            break;
        }
    }
    s * s
}

fn until_above_by_hand(x: &[f64], y: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let (mut gx, mut gy) = (vec![0.0; x.len()], vec![0.0; y.len()]);
    let mut s = 0.0;
    let mut used = Vec::new();
    for (k, v) in x.iter().chain(&y[1..]).enumerate() {
        s += v.sin();
        used.push((k, v.cos()));
        if s > 1.0 {
            break;
        }
    }
    for (k, c) in used {
        if k < x.len() {
            gx[k] += 2.0 * s * c;
        } else {
            gy[k - x.len() + 1] += 2.0 * s * c;
        }
    }
    (gx, gy)
}

#[test]
fn for_loop_over_a_chain_with_break() {
    check(
        "until_above",
        &|x, y| until_above(x, y),
        &|x, y| until_above_grad(x, y),
        &until_above_by_hand,
    );
}

/// `product` after `copied`, and a `fold` whose order matters.
#[differentiate]
fn product_and_fold(x: &[f64], y: &[f64]) -> f64 {
    let p = x.iter().chain(y).copied().product::<f64>();
    let q = x
        .iter()
        .skip(1)
        .chain(y.iter().rev())
        .fold(0.0, |acc, v| acc * 0.5 + v);
    p + q
}

fn product_and_fold_by_hand(x: &[f64], y: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let p: f64 = x.iter().chain(y).product();
    let mut gx: Vec<f64> = x.iter().map(|v| p / v).collect();
    let mut gy: Vec<f64> = y.iter().map(|v| p / v).collect();
    // q = sum_k e_k 0.5^(m - 1 - k) over the m elements e = x[1..], y reversed
    let order: Vec<(bool, usize)> = (1..x.len())
        .map(|i| (true, i))
        .chain((0..y.len()).rev().map(|i| (false, i)))
        .collect();
    let m = order.len();
    for (k, (in_x, i)) in order.into_iter().enumerate() {
        let w = 0.5f64.powi((m - 1 - k) as i32);
        if in_x {
            gx[i] += w;
        } else {
            gy[i] += w;
        }
    }
    (gx, gy)
}

#[test]
fn product_and_fold_over_chains() {
    check(
        "product_and_fold",
        &|x, y| product_and_fold(x, y),
        &|x, y| product_and_fold_grad(x, y),
        &product_and_fold_by_hand,
    );
}

/// Ranges chained, and a count over data chained (evaluated on values).
#[differentiate(wrt(x))]
fn ranges(x: &[f64], y: &[f64], skip: &[usize], more: &[usize]) -> f64 {
    let n: usize = skip.iter().chain(more).sum();
    let s = (0..1).chain(2..3).map(|i| x[i] * x[i + 1]).sum::<f64>();
    s * n as f64 + y[0]
}

#[test]
fn chains_of_ranges_and_of_data() {
    let (skip, more) = ([1usize, 2], [4usize]);
    check(
        "ranges",
        &|x, y| ranges(x, y, &skip, &more),
        &|x, y| {
            let (v, g) = ranges_grad(x, y, &skip, &more);
            (v, (g, vec![1.0, 0.0, 0.0]))
        },
        &|x, _| {
            let mut g = vec![0.0; x.len()];
            for i in [0, 2] {
                g[i] += 7.0 * x[i + 1];
                g[i + 1] += 7.0 * x[i];
            }
            (g, vec![1.0, 0.0, 0.0])
        },
    );
}
