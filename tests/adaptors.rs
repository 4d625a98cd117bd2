//! Iterator adaptors as idiomatic numeric Rust writes them: `chunks`,
//! `chunks_exact`, `windows`; `enumerate`, `rev`, `skip`, `take`, `step_by`,
//! `copied`, `cloned` and `zip` of parameters, sub-slices, local buffers,
//! constant data and ranges, in `for` loops and in `.map(..).sum()` /
//! `.fold(..)` chains; copies of sub-slices (`to_vec`, `to_owned`,
//! `Vec::from`). Each gradient is checked at several points against its
//! derivative worked out by hand (in the comments) and against centered
//! finite differences, for a value bit-identical to the function's, and for
//! `f_adjoint == d_out * gradient`.

#![deny(warnings)]

mod support;

use gradmacro::differentiate;

const D_OUT: f64 = 1.75;

/// Points of length 7 (odd, so chunks of 2 and 3 leave a remainder).
fn points() -> Vec<Vec<f64>> {
    vec![
        vec![0.5, -1.25, 2.0, 0.75, -0.3, 1.1, 2.4],
        vec![1.5, 0.2, -0.7, 3.1, 0.9, -2.2, 0.35],
        vec![-0.6, 1.8, 0.45, -1.9, 2.7, 0.15, -0.85],
    ]
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

/// `check` at every point, for `$f(x: &[f64]) -> f64` and its generated
/// functions, against the gradient `$want(x)`.
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

// ---------------------------------------------------------------------------
// chunks, chunks_exact, windows
// ---------------------------------------------------------------------------

/// Σ over chunks of 2 of c[0] · c.len(): x_i with i even counts the length
/// of its chunk (2, and 1 for the last of an odd length).
#[differentiate]
fn chunk_heads(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for c in x.chunks(2) {
        s += c[0] * c.len() as f64;
    }
    s
}

/// Σ_chunks (Σ_{v in c} v)²: d/dx_i = 2 · (sum of i's chunk of 3).
#[differentiate]
fn chunk_sums_squared(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for c in x.chunks(3) {
        let mut t = 0.0;
        for v in c {
            t += v;
        }
        s += t * t;
    }
    s
}

/// Exact chunks of 2 (the last element dropped): Σ_j j · c[0] · c[1].
#[differentiate]
fn exact_pairs(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for (j, c) in x.chunks_exact(2).enumerate() {
        s += j as f64 * c[0] * c[1];
    }
    s
}

/// Total variation Σ (w[1] - w[0])², as `windows(2).map(..).sum()`.
#[differentiate]
fn squared_differences(x: &[f64]) -> f64 {
    x.windows(2)
        .map(|w| (w[1] - w[0]) * (w[1] - w[0]))
        .sum::<f64>()
}

/// Σ over windows of 3 of the window's product, with `fold`.
#[differentiate]
fn window_products(x: &[f64]) -> f64 {
    x.windows(3)
        .fold(0.0, |acc, w| acc + w.iter().product::<f64>())
}

/// Chunks of a constant slice weighting the parameter: Σ_j x_j · Σ c_j.
#[differentiate(wrt(x))]
fn constant_chunks(x: &[f64], w: &[f64]) -> f64 {
    let mut s = 0.0;
    for (j, c) in w.chunks(2).enumerate() {
        s += x[j] * c.iter().sum::<f64>();
    }
    s
}

#[test]
fn chunks_and_windows() {
    check!(
        chunk_heads,
        chunk_heads_grad,
        chunk_heads_adjoint,
        |x: &[f64]| (0..x.len())
            .map(|i| {
                if i % 2 == 1 {
                    0.0
                } else {
                    (x.len() - i).min(2) as f64
                }
            })
            .collect()
    );
    check!(
        chunk_sums_squared,
        chunk_sums_squared_grad,
        chunk_sums_squared_adjoint,
        |x: &[f64]| (0..x.len())
            .map(|i| {
                let c = i / 3 * 3;
                2.0 * x[c..(c + 3).min(x.len())].iter().sum::<f64>()
            })
            .collect()
    );
    check!(
        exact_pairs,
        exact_pairs_grad,
        exact_pairs_adjoint,
        |x: &[f64]| (0..x.len())
            .map(|i| {
                let j = i / 2;
                if 2 * j + 1 >= x.len() {
                    0.0
                } else {
                    j as f64 * x[i ^ 1]
                }
            })
            .collect()
    );
    check!(
        squared_differences,
        squared_differences_grad,
        squared_differences_adjoint,
        |x: &[f64]| {
            let n = x.len();
            (0..n)
                .map(|i| {
                    let left = if i > 0 { 2.0 * (x[i] - x[i - 1]) } else { 0.0 };
                    let right = if i + 1 < n {
                        -2.0 * (x[i + 1] - x[i])
                    } else {
                        0.0
                    };
                    left + right
                })
                .collect()
        }
    );
    check!(
        window_products,
        window_products_grad,
        window_products_adjoint,
        |x: &[f64]| {
            let n = x.len();
            let mut g = vec![0.0; n];
            for s in 0..n - 2 {
                for k in 0..3 {
                    g[s + k] += (0..3)
                        .filter(|&m| m != k)
                        .map(|m| x[s + m])
                        .product::<f64>();
                }
            }
            g
        }
    );
    let w = [0.3, -1.1, 2.5, 0.4, -0.8, 1.6, 0.9];
    for x in points() {
        let (v, g) = constant_chunks_grad(&x, &w);
        assert_eq!(v.to_bits(), constant_chunks(&x, &w).to_bits());
        let mut want = vec![0.0; x.len()];
        for (j, c) in w.chunks(2).enumerate() {
            want[j] = c.iter().sum::<f64>();
        }
        support::assert_all_close("constant_chunks", &g, &want, 1e-12, 1e-12);
    }
}

// ---------------------------------------------------------------------------
// skip, take, step_by, rev, enumerate in `for` loops
// ---------------------------------------------------------------------------

/// Σ_{i ≥ 2} x_i²: d/dx_i = 2 x_i for i ≥ 2.
#[differentiate]
fn skip_two(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for v in x.iter().skip(2) {
        s += v * v;
    }
    s
}

/// Σ_{i < 3} sin x_i.
#[differentiate]
fn take_three(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for &v in x.iter().take(3) {
        s += v.sin();
    }
    s
}

/// Σ over even i of (i + 1) · x_i (the count of `enumerate` after
/// `step_by` is the position, `i = 2 · position`).
#[differentiate]
fn even_weighted(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for (p, v) in x.iter().step_by(2).enumerate() {
        s += (2 * p + 1) as f64 * v;
    }
    s
}

/// Horner's rule from the last coefficient: p = Σ x_i t^i at t = 0.7,
/// walked with `rev`: d/dx_i = t^i.
#[differentiate]
fn horner(x: &[f64]) -> f64 {
    let t = 0.7;
    let mut p = 0.0;
    for c in x.iter().rev() {
        p = p * t + c;
    }
    p
}

/// `enumerate` before `rev`: Σ i · x_i², visited backwards.
#[differentiate]
fn enumerate_rev(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, v) in x.iter().enumerate().rev() {
        s = s * 0.5 + i as f64 * v * v;
    }
    s
}

/// `rev` before `enumerate`: the count runs up while the elements run down,
/// Σ_k k · x_{n-1-k}.
#[differentiate]
fn rev_enumerate(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for (k, &v) in x.iter().rev().enumerate() {
        s += k as f64 * v;
    }
    s
}

/// skip, step_by, take combined: x_1, x_3, x_5 (then stop), cubed.
#[differentiate]
fn skip_step_take(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for v in x.iter().copied().skip(1).step_by(2).take(3) {
        s += v * v * v;
    }
    s
}

/// Over a sub-slice, skipping by a count held in a variable.
#[differentiate]
fn sub_slice_skip(x: &[f64]) -> f64 {
    let n = 1;
    let mut s = 0.0;
    for v in x[2..6].iter().skip(n) {
        s += v.exp();
    }
    s
}

#[test]
fn counted_adaptors_in_for_loops() {
    check!(skip_two, skip_two_grad, skip_two_adjoint, |x: &[f64]| x
        .iter()
        .enumerate()
        .map(|(i, v)| if i >= 2 { 2.0 * v } else { 0.0 })
        .collect());
    check!(
        take_three,
        take_three_grad,
        take_three_adjoint,
        |x: &[f64]| x
            .iter()
            .enumerate()
            .map(|(i, v)| if i < 3 { v.cos() } else { 0.0 })
            .collect()
    );
    check!(
        even_weighted,
        even_weighted_grad,
        even_weighted_adjoint,
        |x: &[f64]| (0..x.len())
            .map(|i| if i % 2 == 0 { (i + 1) as f64 } else { 0.0 })
            .collect()
    );
    check!(horner, horner_grad, horner_adjoint, |x: &[f64]| (0..x
        .len())
        .map(|i| 0.7f64.powi(i as i32))
        .collect());
    check!(
        enumerate_rev,
        enumerate_rev_grad,
        enumerate_rev_adjoint,
        |x: &[f64]| (0..x.len())
            .map(|i| 0.5f64.powi(i as i32) * i as f64 * 2.0 * x[i])
            .collect()
    );
    check!(
        rev_enumerate,
        rev_enumerate_grad,
        rev_enumerate_adjoint,
        |x: &[f64]| {
            let n = x.len();
            (0..n).map(|i| (n - 1 - i) as f64).collect()
        }
    );
    check!(
        skip_step_take,
        skip_step_take_grad,
        skip_step_take_adjoint,
        |x: &[f64]| (0..x.len())
            .map(|i| if i % 2 == 1 && i <= 5 {
                3.0 * x[i] * x[i]
            } else {
                0.0
            })
            .collect()
    );
    check!(
        sub_slice_skip,
        sub_slice_skip_grad,
        sub_slice_skip_adjoint,
        |x: &[f64]| (0..x.len())
            .map(|i| if (3..6).contains(&i) { x[i].exp() } else { 0.0 })
            .collect()
    );
}

// ---------------------------------------------------------------------------
// zip of parameters, sub-slices, buffers, constant data, ranges
// ---------------------------------------------------------------------------

pub struct Cfg {
    pub w: Vec<f64>,
}

/// x · cfg.w over the shorter of the two.
#[differentiate]
fn zip_constant_data(x: &[f64], cfg: &Cfg) -> f64 {
    let mut s = 0.0;
    for (a, b) in x.iter().zip(cfg.w.iter()) {
        s += a * b;
    }
    s
}

/// Σ_i (i + 1) · x_i with the weights from an endless range.
#[differentiate]
fn zip_endless_range(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for (v, i) in x.iter().zip(1..) {
        s += i as f64 * v;
    }
    s
}

/// Differences of neighbours: Σ (x_{i+1} - x_i)³ as a zip of a sub-slice
/// with the slice skipped by one.
#[differentiate]
fn zip_shifted(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for (a, b) in x[..x.len() - 1].iter().zip(x.iter().skip(1)) {
        let d = b - a;
        s += d * d * d;
    }
    s
}

/// A local buffer of squares zipped with the parameter reversed:
/// Σ_i x_i² · x_{n-1-i}.
#[differentiate]
fn zip_buffer_rev(x: &[f64]) -> f64 {
    let mut sq = vec![0.0; x.len()];
    for i in 0..x.len() {
        sq[i] = x[i] * x[i];
    }
    let mut s = 0.0;
    for (a, b) in sq.iter().zip(x.iter().rev()) {
        s += a * b;
    }
    s
}

/// `zip` with a range and `step_by` in a `map(..).sum()`: Σ_{j} j · x_{2j}.
#[differentiate]
fn zip_range_map(x: &[f64]) -> f64 {
    x.iter()
        .step_by(2)
        .zip(0..4)
        .map(|(v, j)| j as f64 * v)
        .sum::<f64>()
}

/// `.cloned().skip(1).take(4).fold(..)`: Π of x_1..x_4.
#[differentiate]
fn fold_skip_take(x: &[f64]) -> f64 {
    x.iter()
        .cloned()
        .skip(1)
        .take(4)
        .fold(1.0, |acc, v| acc * v)
}

/// `.skip(3).sum()` of the elements themselves.
#[differentiate]
fn sum_skipped(x: &[f64]) -> f64 {
    let s: f64 = x.iter().skip(3).sum();
    s * s
}

/// `enumerate` then `skip`: the count keeps the original index,
/// Σ_{i ≥ 2} i · x_i.
#[differentiate]
fn enumerate_skip_map(x: &[f64]) -> f64 {
    x.iter()
        .enumerate()
        .skip(2)
        .map(|(i, v)| i as f64 * v)
        .sum::<f64>()
}

#[test]
fn zips_and_chains() {
    let cfg = Cfg {
        w: vec![0.4, -1.3, 2.2, 0.8],
    };
    for x in points() {
        let (v, g) = zip_constant_data_grad(&x, &cfg);
        assert_eq!(v.to_bits(), zip_constant_data(&x, &cfg).to_bits());
        let mut want = vec![0.0; x.len()];
        want[..4].copy_from_slice(&cfg.w);
        support::assert_all_close("zip_constant_data", &g, &want, 1e-12, 1e-12);
    }
    check!(
        zip_endless_range,
        zip_endless_range_grad,
        zip_endless_range_adjoint,
        |x: &[f64]| (0..x.len()).map(|i| (i + 1) as f64).collect()
    );
    check!(
        zip_shifted,
        zip_shifted_grad,
        zip_shifted_adjoint,
        |x: &[f64]| {
            let n = x.len();
            let d = |i: usize| x[i + 1] - x[i];
            (0..n)
                .map(|i| {
                    let left = if i > 0 {
                        3.0 * d(i - 1) * d(i - 1)
                    } else {
                        0.0
                    };
                    let right = if i + 1 < n { -3.0 * d(i) * d(i) } else { 0.0 };
                    left + right
                })
                .collect()
        }
    );
    check!(
        zip_buffer_rev,
        zip_buffer_rev_grad,
        zip_buffer_rev_adjoint,
        |x: &[f64]| {
            let n = x.len();
            (0..n)
                .map(|i| 2.0 * x[i] * x[n - 1 - i] + x[n - 1 - i] * x[n - 1 - i])
                .collect()
        }
    );
    check!(
        zip_range_map,
        zip_range_map_grad,
        zip_range_map_adjoint,
        |x: &[f64]| (0..x.len())
            .map(|i| if i % 2 == 0 && i / 2 < 4 {
                (i / 2) as f64
            } else {
                0.0
            })
            .collect()
    );
    check!(
        fold_skip_take,
        fold_skip_take_grad,
        fold_skip_take_adjoint,
        |x: &[f64]| (0..x.len())
            .map(|i| {
                if (1..5).contains(&i) {
                    (1..5).filter(|&k| k != i).map(|k| x[k]).product::<f64>()
                } else {
                    0.0
                }
            })
            .collect()
    );
    check!(
        sum_skipped,
        sum_skipped_grad,
        sum_skipped_adjoint,
        |x: &[f64]| {
            let s: f64 = x[3..].iter().sum();
            (0..x.len())
                .map(|i| if i >= 3 { 2.0 * s } else { 0.0 })
                .collect()
        }
    );
    check!(
        enumerate_skip_map,
        enumerate_skip_map_grad,
        enumerate_skip_map_adjoint,
        |x: &[f64]| (0..x.len())
            .map(|i| if i >= 2 { i as f64 } else { 0.0 })
            .collect()
    );
}

// ---------------------------------------------------------------------------
// copies of sub-slices
// ---------------------------------------------------------------------------

/// A copy of x[1..4] written over, then read: Σ c_i² with c_0 doubled.
#[differentiate]
fn copy_to_vec(x: &[f64]) -> f64 {
    let mut c = x[1..4].to_vec();
    c[0] *= 2.0;
    c.iter().map(|v| v * v).sum::<f64>()
}

/// `to_owned` of a view, and `Vec::from` of a sub-slice.
#[differentiate]
fn copy_owned_from(x: &[f64]) -> f64 {
    let v = &x[2..];
    let a = v.to_owned();
    let b = Vec::from(&x[..3]);
    a[0] * b[2] + a[1] * b[0]
}

#[test]
fn copies_of_sub_slices() {
    check!(
        copy_to_vec,
        copy_to_vec_grad,
        copy_to_vec_adjoint,
        |x: &[f64]| (0..x.len())
            .map(|i| match i {
                1 => 8.0 * x[1],
                2 | 3 => 2.0 * x[i],
                _ => 0.0,
            })
            .collect()
    );
    // a = x[2..], b = x[..3]: a[0] b[2] = x2², a[1] b[0] = x3 x0.
    check!(
        copy_owned_from,
        copy_owned_from_grad,
        copy_owned_from_adjoint,
        |x: &[f64]| (0..x.len())
            .map(|i| match i {
                0 => x[3],
                2 => 2.0 * x[2],
                3 => x[0],
                _ => 0.0,
            })
            .collect()
    );
}

// ---------------------------------------------------------------------------
// maxima
// ---------------------------------------------------------------------------

/// max_i x_i: the derivative goes to the element chosen.
#[differentiate]
fn maximum(x: &[f64]) -> f64 {
    x.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

#[test]
fn maximum_by_fold() {
    check!(maximum, maximum_grad, maximum_adjoint, |x: &[f64]| {
        let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        x.iter().map(|&v| if v == m { 1.0 } else { 0.0 }).collect()
    });
}

// ---------------------------------------------------------------------------
// filter
// ---------------------------------------------------------------------------

/// A hinge loss: Σ over x_i < 1 of (1 − x_i).
#[differentiate]
fn hinge(x: &[f64]) -> f64 {
    x.iter().filter(|v| **v < 1.0).map(|v| 1.0 - v).sum::<f64>()
}

/// Filtered sums and a product, the patterns `|v|`, `|&v|`, `|&&v|`, after
/// `copied()` too, and a `for` loop over a filtered iterator.
#[differentiate]
fn filtered(x: &[f64]) -> f64 {
    let s: f64 = x.iter().filter(|v| **v > 0.0).sum();
    let c: f64 = x.iter().copied().filter(|&v| v > 0.55).map(|v| v * v).sum();
    let p: f64 = x.iter().filter(|&&v| v < -0.5).map(|v| 1.0 + v).product();
    let mut l = 0.0;
    for v in x.iter().filter(|v| v.abs() < 1.0) {
        l += v * v * v;
    }
    s + c + p + l
}

#[test]
fn filtered_reductions_and_loops() {
    check!(hinge, hinge_grad, hinge_adjoint, |x: &[f64]| x
        .iter()
        .map(|v| if *v < 1.0 { -1.0 } else { 0.0 })
        .collect());
    check!(filtered, filtered_grad, filtered_adjoint, |x: &[f64]| {
        let picked: Vec<usize> = (0..x.len()).filter(|&i| x[i] < -0.5).collect();
        x.iter()
            .enumerate()
            .map(|(i, v)| {
                let mut d = 0.0;
                if *v > 0.0 {
                    d += 1.0;
                }
                if *v > 0.55 {
                    d += 2.0 * v;
                }
                if picked.contains(&i) {
                    d += picked
                        .iter()
                        .filter(|&&j| j != i)
                        .map(|&j| 1.0 + x[j])
                        .product::<f64>();
                }
                if v.abs() < 1.0 {
                    d += 3.0 * v * v;
                }
                d
            })
            .collect()
    });
}

/// Found by the differential test: map closures after `filter` that
/// dereference their element (`|wv| *wv`, `*c` in a branch), `|&_|`, `|&v|`,
/// and `for _ in` over a filtered iterator. (Written as the generator
/// writes them, not as clippy would.)
#[differentiate]
#[allow(clippy::map_clone)]
fn filter_closures(w: &[f64]) -> f64 {
    let a = w.iter().filter(|fv| **fv >= 0.8).map(|wv| *wv).sum::<f64>();
    let b = w.iter().filter(|fv| **fv <= 4.0).map(|&_| 1.0).sum::<f64>();
    let c = w
        .iter()
        .filter(|fv| **fv <= 4.0)
        .map(|c| if *c < 1.2 { *c * 2.0 } else { 1.0 })
        .sum::<f64>();
    let d = w
        .iter()
        .filter(|fv| **fv > 0.0)
        .map(|&v| v * v)
        .sum::<f64>();
    let mut e = w[0];
    for _ in w.iter().filter(|fv| **fv <= 1.0) {
        e *= 2.0;
    }
    a + b + c + d + e
}

#[test]
fn filter_closure_forms() {
    check!(
        filter_closures,
        filter_closures_grad,
        filter_closures_adjoint,
        |x: &[f64]| {
            let doublings = x.iter().filter(|v| **v <= 1.0).count() as i32;
            x.iter()
                .enumerate()
                .map(|(i, v)| {
                    let mut g = 0.0;
                    if *v >= 0.8 {
                        g += 1.0;
                    }
                    if *v < 1.2 {
                        g += 2.0;
                    }
                    if *v > 0.0 {
                        g += 2.0 * v;
                    }
                    if i == 0 {
                        g += 2f64.powi(doublings);
                    }
                    g
                })
                .collect()
        }
    );
}

/// A filtered sum in a condition stays as written (evaluated on values).
#[differentiate]
fn filtered_condition(w: &[f64]) -> f64 {
    if 1.0
        > w.iter()
            .rev()
            .filter(|fv| **fv >= 1.25)
            .map(|_| 1.0)
            .sum::<f64>()
    {
        return w[0] * 2.0;
    }
    w[0]
}

#[test]
fn a_filtered_sum_in_a_condition() {
    check!(
        filtered_condition,
        filtered_condition_grad,
        filtered_condition_adjoint,
        |x: &[f64]| {
            let big = x.iter().filter(|v| **v >= 1.25).count();
            let mut g = vec![0.0; x.len()];
            g[0] = if big < 1 { 2.0 } else { 1.0 };
            g
        }
    );
}

/// Filtered sums over data only (no derivative flows through them), bound
/// by a `let` and stored into a buffer, beside one that is differentiated.
#[differentiate]
fn filtered_data(x: &[f64]) -> f64 {
    let mut tmp = [1.0; 4];
    tmp[1] = -1.0;
    let n = tmp
        .iter()
        .filter(|fv| **fv >= 0.0)
        .map(|_| 1.0)
        .sum::<f64>();
    tmp[2] = tmp
        .iter()
        .filter(|fv| **fv >= 0.0)
        .map(|_| 1.0)
        .sum::<f64>();
    x[0] * n + x[1] * tmp[2] + x.iter().filter(|v| **v > 0.0).map(|v| v * v).sum::<f64>()
}

#[test]
fn filtered_sums_over_data() {
    check!(
        filtered_data,
        filtered_data_grad,
        filtered_data_adjoint,
        |x: &[f64]| {
            let mut g: Vec<f64> = x
                .iter()
                .map(|v| if *v > 0.0 { 2.0 * v } else { 0.0 })
                .collect();
            g[0] += 3.0;
            g[1] += 3.0;
            g
        }
    );
}

/// Filtered sums in conditions: inside an `if` and a `match` that are
/// operands of a comparison they stay as written, evaluated on values
/// (program 50446 of the differential test: the sum inside the inner `if`
/// became a loop no condition can hold); in a block that is the condition,
/// a statement's sum becomes a loop before it, as anywhere.
///
/// With A = [w2 > 0 and Σ_{w_i > 0.6} w_i² ≥ 2], B = [at least two w_i < 0
/// and w4 > 0], C = [w6 > 0 and Σ_{w_i > 1} 2 w_i > 1]: s = w0 w1 + A w3,
/// times w5 if B, minus w1 if C.
#[differentiate]
#[allow(clippy::blocks_in_conditions, clippy::match_bool)]
fn filtered_nested_conditions(w: &[f64]) -> f64 {
    let mut s = w[0] * w[1];
    if (if w[2] > 0.0 {
        w.iter().filter(|fv| **fv > 0.6).map(|v| v * v).sum::<f64>()
    } else {
        1.0
    }) >= 2.0
    {
        s += w[3];
    }
    if {
        let n = w.iter().filter(|fv| **fv < 0.0).map(|_| 1.0).sum::<f64>();
        n >= 2.0 && w[4] > 0.0
    } {
        s *= w[5];
    }
    if (match w[6] > 0.0 {
        true => {
            let k = w
                .iter()
                .filter(|fv| **fv > 1.0)
                .map(|v| v * 2.0)
                .sum::<f64>();
            k
        }
        false => 0.0,
    }) > 1.0
    {
        s -= w[1];
    }
    s
}

#[test]
fn filtered_sums_nested_in_conditions() {
    check!(
        filtered_nested_conditions,
        filtered_nested_conditions_grad,
        filtered_nested_conditions_adjoint,
        |x: &[f64]| {
            let big: f64 = x.iter().filter(|v| **v > 0.6).map(|v| v * v).sum();
            let a = x[2] > 0.0 && big >= 2.0;
            let b = x.iter().filter(|v| **v < 0.0).count() >= 2 && x[4] > 0.0;
            let over: f64 = x.iter().filter(|v| **v > 1.0).map(|v| v * 2.0).sum();
            let c = x[6] > 0.0 && over > 1.0;
            let scale = if b { x[5] } else { 1.0 };
            let mut g = vec![0.0; x.len()];
            g[0] = x[1] * scale;
            g[1] = x[0] * scale - if c { 1.0 } else { 0.0 };
            g[3] = if a { scale } else { 0.0 };
            if b {
                g[5] = x[0] * x[1] + if a { x[3] } else { 0.0 };
            }
            g
        }
    );
}

/// A filtered sum in the body of a local closure called twice: the calls
/// are written out before the sums become loops (program 50879 of the
/// differential test: the sum was left inside the closure, unlowered).
///
/// out = a w0 + Σ_{w_i > -1} w_i² with a = Σ_{w_i > 0.6} w_i².
#[differentiate]
fn filtered_in_closure(w: &[f64]) -> f64 {
    let big = |t: f64| w.iter().filter(|fv| **fv > t).map(|v| v * v).sum::<f64>();
    let a = big(0.6);
    a * w[0] + big(-1.0)
}

#[test]
fn a_filtered_sum_in_a_local_closure() {
    check!(
        filtered_in_closure,
        filtered_in_closure_grad,
        filtered_in_closure_adjoint,
        |x: &[f64]| {
            let a: f64 = x.iter().filter(|v| **v > 0.6).map(|v| v * v).sum();
            let mut g: Vec<f64> = x
                .iter()
                .map(|v| {
                    let mut d = 0.0;
                    if *v > 0.6 {
                        d += 2.0 * v * x[0];
                    }
                    if *v > -1.0 {
                        d += 2.0 * v;
                    }
                    d
                })
                .collect();
            g[0] += a;
            g
        }
    );
}

/// Filtered sums inside `vec![..]`, as an element and in a block that is
/// one: the macro's tokens are read as expressions, like the lowering
/// reads them.
///
/// With a = Σ_{w_i > 0.6} w_i and b = Σ_{w_i > 0.6} w_i²: out = 2 a w0 +
/// (b if w1 > 0, else 1).
#[differentiate]
#[allow(clippy::useless_vec, clippy::let_and_return)]
fn filtered_in_vec(w: &[f64]) -> f64 {
    let v = vec![
        w.iter()
            .filter(|fv| **fv > 0.6)
            .map(|x| x * 2.0)
            .sum::<f64>(),
        w[0],
    ];
    let u = vec![
        if w[1] > 0.0 {
            let t = w.iter().filter(|fv| **fv > 0.6).map(|x| x * x).sum::<f64>();
            t
        } else {
            1.0
        },
        2.0,
    ];
    v[0] * v[1] + u[0]
}

#[test]
fn filtered_sums_inside_vec() {
    check!(
        filtered_in_vec,
        filtered_in_vec_grad,
        filtered_in_vec_adjoint,
        |x: &[f64]| {
            let a: f64 = x.iter().filter(|v| **v > 0.6).sum();
            let mut g: Vec<f64> = x
                .iter()
                .map(|v| {
                    let mut d = 0.0;
                    if *v > 0.6 {
                        d += 2.0 * x[0];
                        if x[1] > 0.0 {
                            d += 2.0 * v;
                        }
                    }
                    d
                })
                .collect();
            g[0] += 2.0 * a;
            g
        }
    );
}
