//! The largest or smallest element by a comparator, and reductions without a
//! start value: `x.iter().max_by(|a, b| a.total_cmp(b)).unwrap()`,
//! `.min_by(|a, b| a.partial_cmp(b).unwrap())`, over `.copied()`, `.map(..)`
//! (of a slice, a `zip` or a range), `skip`/`rev`; `.reduce(f64::max)`,
//! `.reduce(|a, b| a + b)`; opened with `.unwrap()`, `*..unwrap()`,
//! `.copied().unwrap()`, `.expect(..)`, `.unwrap_or(..)`.
//!
//! The derivative is that of the element chosen: each gradient is checked
//! against one written by hand (the index chosen found by a plain loop,
//! independently of the macro) and against central finite differences at
//! points away from ties, the value bit for bit against the function's;
//! at ties, the element chosen is the one the standard library returns (the
//! last of equal maxima, the first of equal minima). Forward mode and the
//! Hessian are checked on the same forms. Denies every warning and clippy
//! lint, so the generated code is checked for both.

#![deny(warnings)]
#![deny(clippy::all)]

mod support;

use gradmacro::differentiate;

const D_OUT: f64 = -1.25;

/// Points of length 6 without ties, under any of the maps below.
fn points() -> Vec<Vec<f64>> {
    vec![
        vec![0.5, -1.25, 2.0, 0.75, -0.3, 1.1],
        vec![1.5, 0.2, -0.7, 3.1, 0.9, -2.2],
        vec![-0.6, 1.8, 0.45, -1.9, 2.7, 0.15],
        vec![2.9, -0.4, 0.05, 1.3, -2.6, 0.8],
    ]
}

/// The index of the last largest (`max`) or first smallest of `v`, as
/// `Iterator::max_by`/`min_by` choose.
fn chosen(v: &[f64], max: bool) -> usize {
    let mut best = 0;
    for (i, &e) in v.iter().enumerate() {
        let better = if max { e >= v[best] } else { e < v[best] };
        if better {
            best = i;
        }
    }
    best
}

/// `support::check_slice_fn` with this file's `D_OUT`.
#[track_caller]
fn check(
    name: &str,
    x: &[f64],
    f: &dyn Fn(&[f64]) -> f64,
    grad: support::SliceGrad<'_>,
    adjoint: &dyn Fn(&[f64], f64) -> Vec<f64>,
    want: &[f64],
) {
    support::check_slice_fn(name, x, f, grad, adjoint, want, D_OUT);
}

macro_rules! check {
    ($f:ident, $grad:ident, $adjoint:ident, $want:expr) => {{
        for x in points() {
            let want: Vec<f64> = $want(&x);
            check(
                stringify!($f),
                &x,
                &|x| $f(x),
                &|x| $grad(x),
                &|x, d| $adjoint(x, d),
                &want,
            );
        }
    }};
}

/// A gradient that is `d` at `i` and zero elsewhere, plus `extra`.
fn at(n: usize, i: usize, d: f64) -> Vec<f64> {
    let mut g = vec![0.0; n];
    g[i] += d;
    g
}

// ---------------------------------------------------------------------------
// max_by / min_by over references and values
// ---------------------------------------------------------------------------

#[differentiate]
fn max_deref(x: &[f64]) -> f64 {
    let m = *x.iter().max_by(|a, b| a.total_cmp(b)).unwrap();
    m * m + x[0]
}

#[test]
fn max_by_total_cmp_dereferenced() {
    // f = m^2 + x0, m = x[k]: df/dx_k = 2 m, df/dx0 += 1
    check!(
        max_deref,
        max_deref_grad,
        max_deref_adjoint,
        |x: &[f64]| {
            let k = chosen(x, true);
            let mut g = at(x.len(), k, 2.0 * x[k]);
            g[0] += 1.0;
            g
        }
    );
}

#[differentiate]
fn min_partial(x: &[f64]) -> f64 {
    x.iter()
        .copied()
        .min_by(|a, b| a.partial_cmp(b).unwrap())
        .unwrap()
        .sin()
}

#[test]
fn min_by_partial_cmp_over_copied() {
    // f = sin(x_k), k the smallest: df/dx_k = cos(x_k)
    check!(
        min_partial,
        min_partial_grad,
        min_partial_adjoint,
        |x: &[f64]| {
            let k = chosen(x, false);
            at(x.len(), k, x[k].cos())
        }
    );
}

/// The result kept as the `&f64` it is, read through `*m` and by method.
#[differentiate]
fn max_by_name(x: &[f64]) -> f64 {
    let m = x.iter().max_by(|&a, &b| a.total_cmp(b)).unwrap();
    let n = x.iter().min_by(f64::total_cmp_ref).copied().unwrap();
    *m * 3.0 + m.exp() - n
}

/// `f64::total_cmp` over references to references, as `max_by` needs it.
trait TotalCmpRef {
    fn total_cmp_ref(a: &&f64, b: &&f64) -> std::cmp::Ordering;
}

impl TotalCmpRef for f64 {
    fn total_cmp_ref(a: &&f64, b: &&f64) -> std::cmp::Ordering {
        a.total_cmp(b)
    }
}

#[test]
fn max_by_bound_to_a_name_and_min_by_a_path() {
    // f = 3 x_k + exp(x_k) - x_j
    check!(
        max_by_name,
        max_by_name_grad,
        max_by_name_adjoint,
        |x: &[f64]| {
            let (k, j) = (chosen(x, true), chosen(x, false));
            let mut g = at(x.len(), k, 3.0 + x[k].exp());
            g[j] -= 1.0;
            g
        }
    );
}

#[differentiate]
fn max_of_squares(x: &[f64]) -> f64 {
    let top = x
        .iter()
        .map(|v| (v - 0.3) * (v - 0.3))
        .max_by(|a, b| a.total_cmp(b))
        .unwrap();
    top * x[1]
}

#[test]
fn max_by_over_map() {
    // f = (x_k - 0.3)^2 x1, k the largest (x - 0.3)^2
    check!(
        max_of_squares,
        max_of_squares_grad,
        max_of_squares_adjoint,
        |x: &[f64]| {
            let sq: Vec<f64> = x.iter().map(|v| (v - 0.3) * (v - 0.3)).collect();
            let k = chosen(&sq, true);
            let mut g = at(x.len(), k, 2.0 * (x[k] - 0.3) * x[1]);
            g[1] += sq[k];
            g
        }
    );
}

#[differentiate(wrt(x))]
fn min_weighted(x: &[f64], w: &[f64]) -> f64 {
    x.iter()
        .zip(w)
        .map(|(a, b)| a * b)
        .min_by(f64::total_cmp)
        .expect("not empty")
}

const W: [f64; 6] = [1.0, -2.0, 0.5, 3.0, -1.5, 2.5];

fn min_weighted_x(x: &[f64]) -> f64 {
    min_weighted(x, &W)
}

fn min_weighted_grad_x(x: &[f64]) -> (f64, Vec<f64>) {
    min_weighted_grad(x, &W)
}

fn min_weighted_adjoint_x(x: &[f64], d: f64) -> Vec<f64> {
    min_weighted_adjoint(x, &W, d)
}

#[test]
fn min_by_over_zip_map_with_a_path_and_expect() {
    // f = x_k w_k, k the smallest product
    check!(
        min_weighted_x,
        min_weighted_grad_x,
        min_weighted_adjoint_x,
        |x: &[f64]| {
            let p: Vec<f64> = x.iter().zip(W).map(|(a, b)| a * b).collect();
            let k = chosen(&p, false);
            at(x.len(), k, W[k])
        }
    );
}

#[differentiate]
fn range_map_skip_rev(x: &[f64]) -> f64 {
    let a = (0..x.len())
        .map(|i| x[i] * (i as f64 + 1.0))
        .max_by(|a, b| a.total_cmp(b))
        .unwrap();
    let b = *x
        .iter()
        .skip(1)
        .rev()
        .min_by(|p, q| p.total_cmp(q))
        .unwrap();
    a - b * b
}

#[test]
fn max_by_over_a_range_map_and_min_by_after_skip_rev() {
    // f = (k + 1) x_k - x_j^2, j the smallest of x[1..]
    check!(
        range_map_skip_rev,
        range_map_skip_rev_grad,
        range_map_skip_rev_adjoint,
        |x: &[f64]| {
            let s: Vec<f64> = (0..x.len()).map(|i| x[i] * (i as f64 + 1.0)).collect();
            let k = chosen(&s, true);
            // `rev` then `min_by`: the first smallest from the end; no ties here.
            let j = 1 + chosen(&x[1..], false);
            let mut g = at(x.len(), k, k as f64 + 1.0);
            g[j] -= 2.0 * x[j];
            g
        }
    );
}

/// The largest element of each pair of elements (max pooling), in a loop.
#[differentiate]
fn max_pool(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for r in 0..x.len() / 2 {
        let m = x[2 * r..2 * r + 2]
            .iter()
            .max_by(|a, b| a.total_cmp(b))
            .unwrap();
        s += m * m;
    }
    s
}

#[test]
fn max_by_inside_a_loop_over_sub_slices() {
    check!(max_pool, max_pool_grad, max_pool_adjoint, |x: &[f64]| {
        let mut g = vec![0.0; x.len()];
        for r in 0..x.len() / 2 {
            let k = 2 * r + chosen(&x[2 * r..2 * r + 2], true);
            g[k] += 2.0 * x[k];
        }
        g
    });
}

// ---------------------------------------------------------------------------
// reduce, unwrap_or
// ---------------------------------------------------------------------------

#[differentiate]
fn reduce_max_and_sum(x: &[f64]) -> f64 {
    let m = x.iter().copied().reduce(f64::max).unwrap();
    let s = x
        .iter()
        .map(|v| v * v)
        .reduce(|acc, v| acc + v)
        .unwrap_or(0.0);
    m * s
}

#[test]
fn reduce_by_path_and_by_closure() {
    // f = x_k S, S = sum x_i^2: df/dx_i = 2 x_i x_k, + S at k
    check!(
        reduce_max_and_sum,
        reduce_max_and_sum_grad,
        reduce_max_and_sum_adjoint,
        |x: &[f64]| {
            let k = chosen(x, true);
            let s: f64 = x.iter().map(|v| v * v).sum();
            let mut g: Vec<f64> = x.iter().map(|v| 2.0 * v * x[k]).collect();
            g[k] += s;
            g
        }
    );
}

/// Empty iterators: `unwrap_or` gives its default, whose derivative flows.
#[differentiate]
fn or_default(x: &[f64], n: usize) -> f64 {
    let m = x
        .iter()
        .take(n)
        .max_by(|a, b| a.total_cmp(b))
        .copied()
        .unwrap_or(x[0] * 0.5);
    let r = x
        .iter()
        .skip(n)
        .copied()
        .reduce(|a, b| a * b)
        .unwrap_or(1.0);
    m + r
}

#[test]
fn unwrap_or_on_empty_and_non_empty_iterators() {
    for x in points() {
        for n in [0, 3, x.len()] {
            let (v, g) = or_default_grad(&x, n);
            assert_eq!(v.to_bits(), or_default(&x, n).to_bits());
            let mut want = vec![0.0; x.len()];
            if n == 0 {
                want[0] += 0.5;
            } else {
                let k = chosen(&x[..n], true);
                want[k] += 1.0;
            }
            if n < x.len() {
                // d(prod_{i>=n} x_i)/dx_j = prod / x_j (no zeros here)
                let p: f64 = x[n..].iter().product();
                for j in n..x.len() {
                    want[j] += p / x[j];
                }
            }
            support::assert_all_close("or_default", &g, &want, 1e-12, 1e-12);
        }
    }
}

#[test]
#[should_panic(expected = "called `Option::unwrap()` on a `None` value")]
fn unwrap_of_an_empty_max_by_panics_as_std() {
    let _ = max_deref_grad(&[]);
}

/// The position of the largest element (`argmax`), an index evaluated on
/// values, then read: the derivative reaches the element it names.
#[differentiate]
fn at_argmax(x: &[f64]) -> f64 {
    let k = x
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .unwrap()
        .0;
    x[k] * x[(k + 1) % x.len()]
}

#[test]
fn argmax_position_is_an_index() {
    check!(
        at_argmax,
        at_argmax_grad,
        at_argmax_adjoint,
        |x: &[f64]| {
            let k = chosen(x, true);
            let j = (k + 1) % x.len();
            let mut g = at(x.len(), k, x[j]);
            g[j] += x[k];
            g
        }
    );
}

/// Generic over the float type, at `f64` and `f32`.
#[differentiate]
fn generic_top<T: num_traits::Float>(x: &[T]) -> T {
    let m = x
        .iter()
        .copied()
        .max_by(|a, b| a.partial_cmp(b).unwrap())
        .unwrap();
    let lo = x.iter().copied().reduce(T::min).unwrap();
    m * m - lo
}

#[test]
fn generic_floats() {
    for x in points() {
        let (k, j) = (chosen(&x, true), chosen(&x, false));
        let mut want = at(x.len(), k, 2.0 * x[k]);
        want[j] -= 1.0;
        let (v, g) = generic_top_grad(&x);
        assert_eq!(v.to_bits(), generic_top(&x).to_bits());
        support::assert_all_close("generic_top", &g, &want, 1e-12, 1e-12);
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let (v32, g32) = generic_top_grad(&x32);
        assert_eq!(v32.to_bits(), generic_top(&x32).to_bits());
        let g32: Vec<f64> = g32.iter().map(|&v| v.into()).collect();
        support::assert_all_close("generic_top f32", &g32, &want, 1e-5, 1e-5);
    }
}

// ---------------------------------------------------------------------------
// Ties: the element the standard library returns gets the derivative
// ---------------------------------------------------------------------------

#[differentiate]
fn tie_max(x: &[f64]) -> f64 {
    *x.iter().max_by(|a, b| a.total_cmp(b)).unwrap()
}

#[differentiate]
fn tie_min(x: &[f64]) -> f64 {
    x.iter()
        .copied()
        .min_by(|a, b| a.partial_cmp(b).unwrap())
        .unwrap()
}

#[test]
fn ties_choose_as_std_does() {
    let x = [1.0, 3.0, -2.0, 3.0, -2.0, 0.5];
    let (v, g) = tie_max_grad(&x);
    assert_eq!(v.to_bits(), tie_max(&x).to_bits());
    // `max_by` returns the last of equal maxima
    let last = std::ptr::from_ref(x.iter().max_by(|a, b| a.total_cmp(b)).unwrap());
    assert_eq!(last, std::ptr::from_ref(&x[3]));
    assert_eq!(g, at(6, 3, 1.0));
    // `min_by` the first of equal minima
    let (v, g) = tie_min_grad(&x);
    assert_eq!(v.to_bits(), tie_min(&x).to_bits());
    let first = std::ptr::from_ref(x.iter().min_by(|a, b| a.total_cmp(b)).unwrap());
    assert_eq!(first, std::ptr::from_ref(&x[2]));
    assert_eq!(g, at(6, 2, 1.0));
    // -0.0 < 0.0 in the total order, equal for `partial_cmp`
    let z = [0.0, -0.0, -0.0];
    assert_eq!(tie_max_grad(&z).0.to_bits(), 0.0f64.to_bits());
    assert_eq!(tie_max_grad(&z).1, at(3, 0, 1.0));
    assert_eq!(tie_min_grad(&z).0.to_bits(), tie_min(&z).to_bits());
    assert_eq!(tie_min_grad(&z).1, at(3, 0, 1.0));
}

// ---------------------------------------------------------------------------
// Forward mode and second derivatives
// ---------------------------------------------------------------------------

#[differentiate(hessian)]
fn soft_top(x: &[f64]) -> f64 {
    let m = x
        .iter()
        .map(|v| v * v.sin())
        .max_by(|a, b| a.partial_cmp(b).unwrap())
        .unwrap();
    let lo = x.iter().copied().reduce(f64::min).unwrap();
    m * m + lo * x[0]
}

#[test]
fn tangent_and_hessian_follow_the_element_chosen() {
    for x in points() {
        let n = x.len();
        // g(v) = v sin v, g' = sin v + v cos v, g'' = 2 cos v - v sin v
        let g: Vec<f64> = x.iter().map(|v| v * v.sin()).collect();
        let k = chosen(&g, true);
        let j = chosen(&x, false);
        let (v, d1, d2) = (
            x[k],
            x[k].sin() + x[k] * x[k].cos(),
            2.0 * x[k].cos() - x[k] * x[k].sin(),
        );
        let mut grad = at(n, k, 2.0 * g[k] * d1);
        grad[j] += x[0];
        grad[0] += x[j];
        let mut hess = vec![vec![0.0; n]; n];
        hess[k][k] += 2.0 * d1 * d1 + 2.0 * g[k] * d2;
        hess[j][0] += 1.0;
        hess[0][j] += 1.0;
        let _ = v;
        let (value, got_grad, got_hess) = soft_top_hessian(&x);
        assert_eq!(value.to_bits(), soft_top(&x).to_bits());
        support::assert_all_close("soft_top gradient", &got_grad, &grad, 1e-12, 1e-12);
        for (r, (got, want)) in got_hess.iter().zip(&hess).enumerate() {
            support::assert_all_close(
                &format!("soft_top Hessian row {r}"),
                got,
                want,
                1e-12,
                1e-12,
            );
        }
        let t: Vec<f64> = (0..n).map(|i| 0.5 - 0.25 * i as f64).collect();
        let (tv, dir) = soft_top_tangent(&x, &t);
        assert_eq!(tv.to_bits(), soft_top(&x).to_bits());
        let want_dir: f64 = grad.iter().zip(&t).map(|(a, b)| a * b).sum();
        support::assert_close("soft_top tangent", dir, want_dir, 1e-12, 1e-12);
    }
}
