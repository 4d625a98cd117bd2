//! Differentiated functions calling differentiated functions.
//!
//! Inside a `#[differentiate]` function, a call `g(a, b)` with a
//! differentiated argument keeps `g(a, b)` in the forward sweep and asks
//! `g_pullback` for the arguments' shares in the reverse sweep. Each caller
//! here is checked against oracles that do not go through the macro:
//!
//! - the derivative written out by hand (chain rule on paper, or a forward-mode
//!   recurrence coded by hand for loops and recursion);
//! - a centered finite difference of the caller (`check_gradient`);
//!
//! and, at every point, `f_grad`'s value is bit-for-bit `f`'s and
//! `f_adjoint(.., d_out)` is `d_out` times the gradient (see
//! `support::check_point`). Points avoid 0, 1 and other values where a
//! missing term could vanish.
//!
//! Covered: a chain of three functions; a callee called twice with the same
//! arguments swapped, and with one argument passed twice; calls nested in
//! arguments; slices and fixed-size arrays passed to callees; a callee whose
//! `wrt(..)` excludes a float parameter that the caller passes a
//! differentiated value; calls in loops, branches and conditions; callees by
//! module path; integer and `bool` parameters; an `f32` chain; direct and
//! mutual recursion; callee and caller sharing local names with each other
//! and with the generated code; stopping the gradient with `no_grad` and
//! `detach`, and a user's own function that happens to be named `detach`.

mod support;

use gradmacro::differentiate;
use gradmacro_runtime::{check_gradient, detach, no_grad};
use support::{assert_bits, check_binary, check_point, check_unary, close, D_OUT};

/// Points `(x, y)` used by most binary functions: away from 0 and 1, of both
/// signs, not symmetric.
const PAIRS: [(f64, f64); 5] = [
    (0.7, -1.3),
    (-0.4, 0.9),
    (1.6, 0.35),
    (-2.1, -0.8),
    (0.25, 2.2),
];
/// Points used by most unary functions.
const POINTS: [f64; 5] = [0.3, -0.75, 1.4, -2.2, 0.95];

// ---------------------------------------------------------------------------
// A chain of three: chain_a calls chain_b calls chain_c.
// ---------------------------------------------------------------------------

#[differentiate]
fn chain_c(u: f64) -> f64 {
    u * u.sin()
}

/// `c'(u) = sin u + u cos u`.
fn chain_c_prime(u: f64) -> f64 {
    u.sin() + u * u.cos()
}

#[differentiate]
fn chain_b(x: f64, y: f64) -> f64 {
    chain_c(x * y) + y.exp()
}

/// `b(x, y) = c(x y) + e^y`: `(y c'(x y), x c'(x y) + e^y)`.
fn chain_b_prime(x: f64, y: f64) -> (f64, f64) {
    let c1 = chain_c_prime(x * y);
    (y * c1, x * c1 + y.exp())
}

/// `b` called twice, once with a constant argument, plus a call with constant
/// arguments only (an ordinary call, no pullback).
#[differentiate]
fn chain_a(x: f64, y: f64) -> f64 {
    x * chain_b(x, y) - chain_b(y, 0.5) + chain_c(1.5) * y
}

/// `a = x b(x, y) - b(y, 1/2) + c(3/2) y`.
fn chain_a_prime(x: f64, y: f64) -> (f64, f64) {
    let (bx, by) = chain_b_prime(x, y);
    let (by_first, _) = chain_b_prime(y, 0.5);
    (chain_b(x, y) + x * bx, x * by - by_first + chain_c(1.5))
}

#[test]
fn chain_of_three_functions() {
    check_unary(
        "chain_c",
        chain_c,
        chain_c_grad,
        chain_c_adjoint,
        chain_c_prime,
        &POINTS,
    );
    check_binary(
        "chain_b",
        chain_b,
        chain_b_grad,
        chain_b_adjoint,
        chain_b_prime,
        &PAIRS,
    );
    check_binary(
        "chain_a",
        chain_a,
        chain_a_grad,
        chain_a_adjoint,
        chain_a_prime,
        &PAIRS,
    );
}

#[test]
fn chain_adjoint_acc_adds_into_the_buffers() {
    for (x, y) in PAIRS {
        let (_, (gx, gy)) = chain_a_grad(x, y);
        let (mut dx, mut dy) = (0.25, -1.5);
        chain_a_adjoint_acc(x, y, D_OUT, &mut dx, &mut dy);
        assert!(
            close(dx, 0.25 + D_OUT * gx, 1e-15, 1e-13),
            "d_x at ({x}, {y}): {dx}"
        );
        assert!(
            close(dy, -1.5 + D_OUT * gy, 1e-15, 1e-13),
            "d_y at ({x}, {y}): {dy}"
        );
    }
}

// ---------------------------------------------------------------------------
// One callee used several times on shared arguments: contributions add up.
// ---------------------------------------------------------------------------

#[differentiate]
fn shared_g(u: f64, v: f64) -> f64 {
    u.sin() * v + u * v * v
}

/// `(v cos u + v^2, sin u + 2 u v)`.
fn shared_g_prime(u: f64, v: f64) -> (f64, f64) {
    (v * u.cos() + v * v, u.sin() + 2.0 * u * v)
}

/// `h = g(x, y) g(y, x)`: x and y each reach h through both calls, once as
/// the first argument and once as the second.
#[differentiate]
fn shared_h(x: f64, y: f64) -> f64 {
    shared_g(x, y) * shared_g(y, x)
}

fn shared_h_prime(x: f64, y: f64) -> (f64, f64) {
    let (gxy, gyx) = (shared_g(x, y), shared_g(y, x));
    let (gu_xy, gv_xy) = shared_g_prime(x, y);
    let (gu_yx, gv_yx) = shared_g_prime(y, x);
    (gu_xy * gyx + gxy * gv_yx, gv_xy * gyx + gxy * gu_yx)
}

/// One argument passed to both parameters, and scaled into the second.
#[differentiate]
fn shared_diag(x: f64) -> f64 {
    shared_g(x, x) + shared_g(x, 2.0 * x)
}

fn shared_diag_prime(x: f64) -> f64 {
    let (a, b) = shared_g_prime(x, x);
    let (c, d) = shared_g_prime(x, 2.0 * x);
    a + b + c + 2.0 * d
}

/// A call's result passed to another call, and the same call's result used
/// twice.
#[differentiate]
fn shared_nested(x: f64, y: f64) -> f64 {
    let t = shared_g(shared_g(x, y), chain_c(x));
    t * t + shared_g(t, y)
}

fn shared_nested_prime(x: f64, y: f64) -> (f64, f64) {
    let (s, c) = (shared_g(x, y), chain_c(x));
    let t = shared_g(s, c);
    let (t_s, t_c) = shared_g_prime(s, c);
    let (s_x, s_y) = shared_g_prime(x, y);
    let c_x = chain_c_prime(x);
    let dt_dx = t_s * s_x + t_c * c_x;
    let dt_dy = t_s * s_y;
    let (o_t, o_y) = shared_g_prime(t, y);
    (
        2.0 * t * dt_dx + o_t * dt_dx,
        2.0 * t * dt_dy + o_t * dt_dy + o_y,
    )
}

#[test]
fn callee_used_twice_sums_the_contributions() {
    check_binary(
        "shared_g",
        shared_g,
        shared_g_grad,
        shared_g_adjoint,
        shared_g_prime,
        &PAIRS,
    );
    check_binary(
        "shared_h",
        shared_h,
        shared_h_grad,
        shared_h_adjoint,
        shared_h_prime,
        &PAIRS,
    );
    check_unary(
        "shared_diag",
        shared_diag,
        shared_diag_grad,
        shared_diag_adjoint,
        shared_diag_prime,
        &POINTS,
    );
}

/// A call's result as the receiver of a method.
#[differentiate]
fn call_receiver(x: f64, y: f64) -> f64 {
    shared_g(x, y).exp() - chain_c(y).powi(2)
}

fn call_receiver_prime(x: f64, y: f64) -> (f64, f64) {
    let e = shared_g(x, y).exp();
    let (gu, gv) = shared_g_prime(x, y);
    (e * gu, e * gv - 2.0 * chain_c(y) * chain_c_prime(y))
}

#[test]
fn calls_nested_in_arguments() {
    let points = [(0.7, -0.6), (-0.4, 0.5), (0.45, 0.35), (-0.8, -0.3)];
    check_binary(
        "shared_nested",
        shared_nested,
        shared_nested_grad,
        shared_nested_adjoint,
        shared_nested_prime,
        &points,
    );
    check_binary(
        "call_receiver",
        call_receiver,
        call_receiver_grad,
        call_receiver_adjoint,
        call_receiver_prime,
        &points,
    );
}

// ---------------------------------------------------------------------------
// Slices and arrays passed to callees.
// ---------------------------------------------------------------------------

#[differentiate]
fn dot(w: &[f64], x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..w.len() {
        s += w[i] * x[i];
    }
    s
}

/// `tanh(w . x + b)`: a callee taking two slices, each a parameter of the
/// caller.
#[differentiate]
fn neuron(w: &[f64], x: &[f64], b: f64) -> f64 {
    let z = dot(w, x) + b;
    z.tanh()
}

/// The same slice passed to both parameters (`x . x`), then scaled by a
/// local buffer built from it and passed by reference.
#[differentiate]
fn slice_twice(x: &[f64], s: f64) -> f64 {
    let mut scaled = vec![0.0; x.len()];
    for i in 0..x.len() {
        scaled[i] = x[i] * s;
    }
    dot(x, x) + dot(&scaled, x)
}

/// Horner's rule: `sum_k c[k] t^k`.
#[differentiate]
fn poly(c: &[f64], t: f64) -> f64 {
    let n = c.len();
    let mut acc = 0.0;
    for i in 0..n {
        acc = acc * t + c[n - 1 - i];
    }
    acc
}

/// A slice and a scalar computed in the caller.
#[differentiate]
fn poly_of_sin(c: &[f64], x: f64) -> f64 {
    poly(c, x.sin()) * x
}

#[differentiate]
fn norm3(a: [f64; 3]) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

/// A fixed-size array passed on to a callee.
#[differentiate]
fn norm3_scaled(a: [f64; 3], k: f64) -> f64 {
    k * norm3(a)
}

/// Asserts that two gradients agree entry by entry.
#[track_caller]
fn assert_close_slices(what: &str, got: &[f64], want: &[f64], rel: f64) {
    support::assert_all_close(what, got, want, 1e-14, rel);
}

/// Finite-difference check of a whole gradient, the point being all the
/// parameters flattened.
#[track_caller]
fn assert_fd(what: &str, f: impl Fn(&[f64]) -> f64, point: &[f64], grad: &[f64]) {
    let check = check_gradient(f, point, grad);
    assert!(
        check.passes(1e-6),
        "{what}: disagrees with finite differences:\n{check}"
    );
}

#[test]
fn callee_taking_slices() {
    let cases: [(&[f64], &[f64], f64); 3] = [
        (&[0.3, -0.7, 1.1], &[0.5, 0.2, -0.4], 0.1),
        (&[-1.2, 0.4], &[0.9, -0.35], -0.25),
        (&[0.6, 0.15, -0.5, 0.8], &[-0.3, 0.7, 0.45, -0.2], 0.3),
    ];
    for (w, x, b) in cases {
        let n = w.len();
        let (value, (gw, gx, gb)) = neuron_grad(w, x, b);
        assert_bits("neuron value", value, neuron(w, x, b));
        let z: f64 = w.iter().zip(x).map(|(a, b)| a * b).sum::<f64>() + b;
        let sech2 = 1.0 - z.tanh() * z.tanh();
        let want_w: Vec<f64> = x.iter().map(|xi| sech2 * xi).collect();
        let want_x: Vec<f64> = w.iter().map(|wi| sech2 * wi).collect();
        assert_close_slices("neuron d/dw", &gw, &want_w, 1e-12);
        assert_close_slices("neuron d/dx", &gx, &want_x, 1e-12);
        assert!(
            close(gb, sech2, 1e-15, 1e-12),
            "neuron d/db: {gb} vs {sech2}"
        );

        let mut flat = w.to_vec();
        flat.extend_from_slice(x);
        flat.push(b);
        let mut grad = gw.clone();
        grad.extend_from_slice(&gx);
        grad.push(gb);
        assert_fd(
            "neuron",
            |p| neuron(&p[..n], &p[n..2 * n], p[2 * n]),
            &flat,
            &grad,
        );

        let (aw, ax, ab) = neuron_adjoint(w, x, b, D_OUT);
        let scale = |g: &[f64]| g.iter().map(|v| D_OUT * v).collect::<Vec<_>>();
        assert_close_slices("neuron adjoint w", &aw, &scale(&gw), 1e-13);
        assert_close_slices("neuron adjoint x", &ax, &scale(&gx), 1e-13);
        assert!(close(ab, D_OUT * gb, 1e-15, 1e-13));

        // f = (1 + s) x . x: d/dx = 2 (1 + s) x, d/ds = x . x.
        let s = b;
        let (value, (gx, gs)) = slice_twice_grad(x, s);
        assert_bits("slice_twice value", value, slice_twice(x, s));
        let xx: f64 = x.iter().map(|v| v * v).sum();
        let want_x: Vec<f64> = x.iter().map(|v| 2.0 * (1.0 + s) * v).collect();
        assert_close_slices("slice_twice d/dx", &gx, &want_x, 1e-12);
        assert!(
            close(gs, xx, 1e-15, 1e-12),
            "slice_twice d/ds: {gs} vs {xx}"
        );
        let mut flat = x.to_vec();
        flat.push(s);
        let mut grad = gx.clone();
        grad.push(gs);
        assert_fd("slice_twice", |p| slice_twice(&p[..n], p[n]), &flat, &grad);
    }
}

#[test]
fn callee_taking_a_slice_and_a_scalar() {
    let c = [0.4, -1.1, 0.75, 0.3];
    for x in POINTS {
        let (value, (gc, gx)) = poly_of_sin_grad(&c, x);
        assert_bits("poly_of_sin value", value, poly_of_sin(&c, x));
        let t = x.sin();
        let p: f64 = c
            .iter()
            .enumerate()
            .map(|(k, ck)| ck * t.powi(k as i32))
            .sum();
        let dp: f64 = c
            .iter()
            .enumerate()
            .skip(1)
            .map(|(k, ck)| k as f64 * ck * t.powi(k as i32 - 1))
            .sum();
        let want_c: Vec<f64> = (0..c.len()).map(|k| x * t.powi(k as i32)).collect();
        assert_close_slices("poly_of_sin d/dc", &gc, &want_c, 1e-12);
        let want_x = p + x * dp * x.cos();
        assert!(
            close(gx, want_x, 1e-15, 1e-12),
            "poly_of_sin d/dx at {x}: {gx} vs {want_x}"
        );
        let mut flat = c.to_vec();
        flat.push(x);
        let mut grad = gc.clone();
        grad.push(gx);
        assert_fd("poly_of_sin", |q| poly_of_sin(&q[..4], q[4]), &flat, &grad);
    }
}

#[test]
fn callee_taking_a_fixed_size_array() {
    for (a, k) in [([0.3, -1.2, 0.8], 1.7), ([-2.0, 0.45, 0.15], -0.6)] {
        let (value, (ga, gk)) = norm3_scaled_grad(a, k);
        assert_bits("norm3_scaled value", value, norm3_scaled(a, k));
        let r = norm3(a);
        let want: Vec<f64> = a.iter().map(|ai| k * ai / r).collect();
        assert_close_slices("norm3_scaled d/da", &ga, &want, 1e-12);
        assert!(close(gk, r, 1e-15, 1e-12));
        let flat = [a[0], a[1], a[2], k];
        assert_fd(
            "norm3_scaled",
            |p| norm3_scaled([p[0], p[1], p[2]], p[3]),
            &flat,
            &[ga[0], ga[1], ga[2], gk],
        );
    }
}

// ---------------------------------------------------------------------------
// A callee whose wrt(..) excludes a float parameter that the caller passes a
// differentiated value: the caller still needs that parameter's derivative.
// ---------------------------------------------------------------------------

#[differentiate(wrt(x))]
fn scaled(x: f64, k: f64) -> f64 {
    x * x * k + k.sin()
}

/// `k` gets `y * y` (active) in the first call and the constant 3 in the
/// second; `y` also goes to the differentiated parameter of the second.
#[differentiate]
fn uses_scaled(x: f64, y: f64) -> f64 {
    scaled(x, y * y) + scaled(y, 3.0)
}

/// `x^2 y^2 + sin(y^2) + 3 y^2 + sin 3`.
fn uses_scaled_prime(x: f64, y: f64) -> (f64, f64) {
    (2.0 * x * y * y, 2.0 * y * (x * x + (y * y).cos()) + 6.0 * y)
}

#[test]
fn callee_wrt_excludes_a_parameter_the_caller_differentiates() {
    // The callee's own gradient keeps only x.
    let own: fn(f64, f64) -> (f64, f64) = scaled_grad;
    assert_eq!(own(1.5, 2.0).1, 2.0 * 1.5 * 2.0);
    // Its pullback has a slot for every float parameter.
    let pullback: fn(f64, f64, f64, Option<&mut f64>, Option<&mut f64>) = scaled_pullback;
    let (mut px, mut pk) = (0.0, 0.0);
    pullback(1.5, 2.0, D_OUT, Some(&mut px), Some(&mut pk));
    assert!(close(px, D_OUT * 6.0, 1e-15, 1e-14));
    assert!(close(pk, D_OUT * (2.25 + 2.0f64.cos()), 1e-15, 1e-14));

    check_binary(
        "uses_scaled",
        uses_scaled,
        uses_scaled_grad,
        uses_scaled_adjoint,
        uses_scaled_prime,
        &PAIRS,
    );
}

// ---------------------------------------------------------------------------
// Calls inside loops, branches and conditions.
// ---------------------------------------------------------------------------

#[differentiate]
fn step(s: f64, x: f64) -> f64 {
    s.sin() + x * s
}

/// `s <- step(s, x)`, `n` times, from `s = x`: x reaches the result through
/// every iteration, via both arguments.
#[differentiate]
fn iterate(x: f64, n: usize) -> f64 {
    let mut s = x;
    for _ in 0..n {
        s = step(s, x);
    }
    s
}

/// Forward mode by hand: `(s, ds/dx)`.
fn iterate_forward(x: f64, n: usize) -> (f64, f64) {
    let (mut s, mut ds) = (x, 1.0);
    for _ in 0..n {
        let ds_new = (s.cos() + x) * ds + s;
        s = s.sin() + x * s;
        ds = ds_new;
    }
    (s, ds)
}

/// `s += step(s, x)`: the variable assigned is also an argument.
#[differentiate]
fn iterate_compound(x: f64, n: usize) -> f64 {
    let mut s = x;
    for _ in 0..n {
        s += step(s, x);
    }
    s
}

fn iterate_compound_forward(x: f64, n: usize) -> (f64, f64) {
    let (mut s, mut ds) = (x, 1.0);
    for _ in 0..n {
        let ds_new = ds + (s.cos() + x) * ds + s;
        s = s + s.sin() + x * s;
        ds = ds_new;
    }
    (s, ds)
}

/// Slice elements as arguments: `x[i]`, `x[(i + 1) % n]` and a `for &xi`
/// binding.
#[differentiate]
fn ring(x: &[f64]) -> f64 {
    let n = x.len();
    let mut s = 0.0;
    for i in 0..n {
        s += shared_g(x[i], x[(i + 1) % n]);
    }
    for &xi in x {
        s -= chain_c(xi) * 0.5;
    }
    s
}

fn ring_prime(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    (0..n)
        .map(|j| {
            let (next, prev) = ((j + 1) % n, (j + n - 1) % n);
            shared_g_prime(x[j], x[next]).0 + shared_g_prime(x[prev], x[j]).1
                - 0.5 * chain_c_prime(x[j])
        })
        .collect()
}

/// A call accumulated in a loop, with the loop index as a constant argument.
#[differentiate]
fn loop_sum(x: f64, y: f64) -> f64 {
    let mut acc = 0.0;
    for i in 0..4 {
        acc += shared_g(x, y + i as f64 * 0.5);
    }
    acc
}

fn loop_sum_prime(x: f64, y: f64) -> (f64, f64) {
    (0..4).fold((0.0, 0.0), |(dx, dy), i| {
        let (gu, gv) = shared_g_prime(x, y + i as f64 * 0.5);
        (dx + gu, dy + gv)
    })
}

/// A call in each arm of a branch, the arms calling with different argument
/// orders.
#[differentiate]
fn branchy(x: f64, y: f64) -> f64 {
    if x > y {
        shared_g(x, y)
    } else {
        let t = shared_g(y, x);
        t * t
    }
}

fn branchy_prime(x: f64, y: f64) -> (f64, f64) {
    if x > y {
        shared_g_prime(x, y)
    } else {
        let t = shared_g(y, x);
        let (gu, gv) = shared_g_prime(y, x);
        (2.0 * t * gv, 2.0 * t * gu)
    }
}

/// A call with a differentiated argument in a condition: only its value
/// matters there.
#[differentiate]
fn call_in_condition(x: f64) -> f64 {
    if chain_c(x) > 0.5 {
        x * 3.0
    } else {
        -x
    }
}

#[test]
fn callee_in_a_loop() {
    for n in [0usize, 1, 2, 5] {
        for x in [0.3, -0.45, 0.8, -0.9] {
            let (s, ds) = iterate_forward(x, n);
            let (value, grad) = iterate_grad(x, n);
            check_point(
                &format!("iterate n = {n}"),
                &[x],
                |p| iterate(p[0], n),
                value,
                &[grad],
                &[iterate_adjoint(x, n, D_OUT)],
                &[ds],
            );
            assert!(close(value, s, 0.0, 1e-15));
        }
    }
    for n in [0usize, 1, 3] {
        for x in [0.3, -0.45, 0.8] {
            let (value, grad) = iterate_compound_grad(x, n);
            check_point(
                &format!("iterate_compound n = {n}"),
                &[x],
                |p| iterate_compound(p[0], n),
                value,
                &[grad],
                &[iterate_compound_adjoint(x, n, D_OUT)],
                &[iterate_compound_forward(x, n).1],
            );
        }
    }
    for x in [&[0.4][..], &[0.3, -0.8], &[0.5, -0.25, 0.9, -0.6, 0.15]] {
        let (value, grad) = ring_grad(x);
        assert_bits("ring value", value, ring(x));
        assert_close_slices("ring", &grad, &ring_prime(x), 1e-12);
        assert_fd("ring", ring, x, &grad);
        let adjoint = ring_adjoint(x, D_OUT);
        let scaled: Vec<f64> = grad.iter().map(|g| D_OUT * g).collect();
        assert_close_slices("ring adjoint", &adjoint, &scaled, 1e-13);
    }
    check_binary(
        "loop_sum",
        loop_sum,
        loop_sum_grad,
        loop_sum_adjoint,
        loop_sum_prime,
        &PAIRS,
    );
}

#[test]
fn callee_in_a_branch_and_a_condition() {
    // PAIRS has points on both sides of x = y.
    assert!(PAIRS.iter().any(|(x, y)| x > y) && PAIRS.iter().any(|(x, y)| x <= y));
    check_binary(
        "branchy",
        branchy,
        branchy_grad,
        branchy_adjoint,
        branchy_prime,
        &PAIRS,
    );
    // chain_c(x) = x sin x: 0.06 at 0.25, 1.33 at 1.4.
    check_unary(
        "call_in_condition",
        call_in_condition,
        call_in_condition_grad,
        call_in_condition_adjoint,
        |x| if chain_c(x) > 0.5 { 3.0 } else { -1.0 },
        &[0.25, 1.4, -0.3, -1.3],
    );
}

// ---------------------------------------------------------------------------
// Callees by module path.
// ---------------------------------------------------------------------------

mod physics {
    use gradmacro::differentiate;

    /// Quadratic drag `1/2 rho c_d v |v|` (air, a sphere).
    #[differentiate]
    pub fn drag(v: f64) -> f64 {
        0.5 * 1.225 * 0.47 * v * v.abs()
    }

    pub mod units {
        use gradmacro::differentiate;

        /// km/h to m/s.
        #[differentiate]
        pub fn kmh(v: f64) -> f64 {
            v / 3.6
        }

        /// A callee in a parent module, through `super::`.
        #[differentiate]
        pub fn drag_kmh(v: f64) -> f64 {
            super::drag(kmh(v))
        }
    }
}

/// `d/dv drag = rho c_d |v|`.
fn drag_prime(v: f64) -> f64 {
    1.225 * 0.47 * v.abs()
}

/// Power against drag, `F v`.
#[differentiate]
fn drag_power(v: f64) -> f64 {
    physics::drag(v) * v
}

/// Nested module paths, `crate::` and `self::` prefixes.
#[differentiate]
fn drag_paths(v: f64) -> f64 {
    crate::physics::drag(physics::units::kmh(v)) + self::physics::units::drag_kmh(v * 2.0)
}

#[test]
fn callee_by_module_path() {
    check_unary(
        "physics::drag",
        physics::drag,
        physics::drag_grad,
        physics::drag_adjoint,
        drag_prime,
        &POINTS,
    );
    check_unary(
        "drag_power",
        drag_power,
        drag_power_grad,
        drag_power_adjoint,
        |v| drag_prime(v) * v + physics::drag(v),
        &POINTS,
    );
    check_unary(
        "drag_paths",
        drag_paths,
        drag_paths_grad,
        drag_paths_adjoint,
        |v| drag_prime(v / 3.6) / 3.6 + drag_prime(2.0 * v / 3.6) * 2.0 / 3.6,
        &POINTS,
    );
}

// ---------------------------------------------------------------------------
// Callees with integer and bool parameters.
// ---------------------------------------------------------------------------

/// `(-1)^flip * scale * x^k`.
#[differentiate]
fn term(x: f64, k: i32, scale: usize, flip: bool) -> f64 {
    let t = x.powi(k) * scale as f64;
    if flip {
        -t
    } else {
        t
    }
}

/// `sum_{k < n} (-1)^k (k + 1) x^k`: integer arguments computed from the
/// loop index, a `bool` from a comparison.
#[differentiate]
fn series(x: f64, n: usize) -> f64 {
    let mut s = 0.0;
    for k in 0..n {
        s += term(x, k as i32, k + 1, k % 2 == 1);
    }
    s
}

fn series_prime(x: f64, n: usize) -> f64 {
    (1..n)
        .map(|k| {
            let sign = if k % 2 == 1 { -1.0 } else { 1.0 };
            sign * (k + 1) as f64 * k as f64 * x.powi(k as i32 - 1)
        })
        .sum()
}

/// Integer parameters before, between and after float ones.
#[differentiate]
fn mixed_callee(n: u32, x: f64, m: i64, y: f64) -> f64 {
    x.powi(n as i32) * y + m as f64 * x
}

#[differentiate]
fn mixed_caller(x: f64, y: f64, m: i64) -> f64 {
    mixed_callee(3, y, m, x) + mixed_callee(2, x, -m, y)
}

/// `x y^3 + m y + x^2 y - m x`.
fn mixed_caller_prime(x: f64, y: f64, m: i64) -> (f64, f64) {
    let m = m as f64;
    (y.powi(3) + 2.0 * x * y - m, 3.0 * x * y * y + m + x * x)
}

/// `term_pullback`: the parameters, the seed, then a slot per parameter that
/// adds its share into the caller's adjoint (`()` for integer parameters).
type TermPullback = fn(f64, i32, usize, bool, f64, Option<&mut f64>, (), (), ());
/// `mixed_callee_pullback`.
type MixedPullback = fn(u32, f64, i64, f64, f64, (), Option<&mut f64>, (), Option<&mut f64>);

#[test]
fn callees_with_integer_parameters() {
    // Integer parameters have a `()` entry in the pullback.
    let pullback: TermPullback = term_pullback;
    let mut g = 0.0;
    pullback(1.5, 3, 2, true, D_OUT, Some(&mut g), (), (), ());
    assert!(close(g, D_OUT * -2.0 * 3.0 * 2.25, 1e-15, 1e-14));
    let pullback: MixedPullback = mixed_callee_pullback;
    let (mut gx, mut gy) = (0.0, 0.0);
    pullback(3, 1.5, 4, -0.5, D_OUT, (), Some(&mut gx), (), Some(&mut gy));
    // x^3 y + 4 x at (1.5, -0.5): (3 x^2 y + 4, x^3).
    assert!(close(gx, D_OUT * (3.0 * 2.25 * -0.5 + 4.0), 1e-15, 1e-14));
    assert!(close(gy, D_OUT * 3.375, 1e-15, 1e-14));

    for n in [0usize, 1, 2, 4, 7] {
        for x in [0.55, -0.8, 1.25] {
            let (value, grad) = series_grad(x, n);
            check_point(
                &format!("series n = {n}"),
                &[x],
                |p| series(p[0], n),
                value,
                &[grad],
                &[series_adjoint(x, n, D_OUT)],
                &[series_prime(x, n)],
            );
        }
    }
    for m in [-2i64, 0, 5] {
        for (x, y) in PAIRS {
            let (value, (gx, gy)) = mixed_caller_grad(x, y, m);
            let (ax, ay) = mixed_caller_adjoint(x, y, m, D_OUT);
            let (dx, dy) = mixed_caller_prime(x, y, m);
            check_point(
                &format!("mixed_caller m = {m}"),
                &[x, y],
                |p| mixed_caller(p[0], p[1], m),
                value,
                &[gx, gy],
                &[ax, ay],
                &[dx, dy],
            );
        }
    }
}

// ---------------------------------------------------------------------------
// f32.
// ---------------------------------------------------------------------------

#[differentiate]
fn c32(x: f32) -> f32 {
    x.tanh() * x
}

#[differentiate]
fn b32(x: f32, y: f32) -> f32 {
    c32(x * y) + y
}

#[differentiate]
fn a32(x: f32) -> f32 {
    b32(x, x.exp()) * 0.5
}

/// `a = (tanh(u) u + e^x) / 2` with `u = x e^x`, `du/dx = (1 + x) e^x`;
/// evaluated in f64, then rounded.
fn a32_prime(x: f32) -> f32 {
    let x = x as f64;
    let u = x * x.exp();
    let th = u.tanh();
    let dc = th + u * (1.0 - th * th);
    (0.5 * (dc * (1.0 + x) * x.exp() + x.exp())) as f32
}

#[test]
fn f32_chain() {
    let points: [f32; 5] = [0.3, -0.75, 0.6, -1.4, 0.15];
    check_unary("a32", a32, a32_grad, a32_adjoint, a32_prime, &points);
    check_binary(
        "b32",
        b32,
        b32_grad,
        b32_adjoint,
        |x: f32, y: f32| {
            let u = x * y;
            let dc = u.tanh() + u * (1.0 - u.tanh() * u.tanh());
            (y * dc, x * dc + 1.0)
        },
        &[(0.3f32, -0.7f32), (-0.9, 0.4), (1.2, 0.8)],
    );
}

// ---------------------------------------------------------------------------
// Recursion. Every pullback call re-runs its callee forward, so the cost is
// quadratic in the depth; the depths here are small.
// ---------------------------------------------------------------------------

/// `p(x, n) = x^(2^n) + sum_{k < n} x^(2^k)`.
#[differentiate]
fn rec_p(x: f64, n: u32) -> f64 {
    if n == 0 {
        x
    } else {
        rec_p(x * x, n - 1) + x
    }
}

/// `2^n x^(2^n - 1) + sum_{k < n} 2^k x^(2^k - 1)`, from the closed form.
fn rec_p_prime(x: f64, n: u32) -> f64 {
    let top = 2f64.powi(n as i32) * x.powi(2i32.pow(n) - 1);
    let rest: f64 = (0..n)
        .map(|k| 2f64.powi(k as i32) * x.powi(2i32.pow(k) - 1))
        .sum();
    top + rest
}

/// Mutual recursion: `even(x, n)` and `odd(x, n)` alternate `sin` and a
/// product with `x`, which reaches every level.
#[differentiate]
fn rec_even(x: f64, s: f64, n: u32) -> f64 {
    if n == 0 {
        s
    } else {
        rec_odd(x, s.sin(), n - 1)
    }
}

#[differentiate]
fn rec_odd(x: f64, s: f64, n: u32) -> f64 {
    if n == 0 {
        s
    } else {
        rec_even(x, s * x, n - 1)
    }
}

/// Forward mode by hand over the same alternation: `(ds/dx, ds/ds0)`.
fn rec_even_prime(x: f64, s0: f64, n: u32) -> (f64, f64) {
    let (mut s, mut dx, mut ds) = (s0, 0.0, 1.0);
    for level in 0..n {
        if level % 2 == 0 {
            dx *= s.cos();
            ds *= s.cos();
            s = s.sin();
        } else {
            dx = dx * x + s;
            ds *= x;
            s *= x;
        }
    }
    (dx, ds)
}

#[test]
fn recursion() {
    for n in 0..=4 {
        for x in [0.3, -0.7, 1.1, 0.95] {
            let (value, grad) = rec_p_grad(x, n);
            check_point(
                &format!("rec_p n = {n}"),
                &[x],
                |p| rec_p(p[0], n),
                value,
                &[grad],
                &[rec_p_adjoint(x, n, D_OUT)],
                &[rec_p_prime(x, n)],
            );
        }
    }
    for n in 0..=5 {
        for (x, s) in PAIRS {
            let (value, (gx, gs)) = rec_even_grad(x, s, n);
            let (ax, a_s) = rec_even_adjoint(x, s, n, D_OUT);
            let (dx, ds) = rec_even_prime(x, s, n);
            check_point(
                &format!("rec_even n = {n}"),
                &[x, s],
                |p| rec_even(p[0], p[1], n),
                value,
                &[gx, gs],
                &[ax, a_s],
                &[dx, ds],
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Hygiene: callee and caller use the same local names, names the generated
// code uses (`d_x`, `d_out`, `g1`, ...), and parameters named like them.
// ---------------------------------------------------------------------------

#[differentiate]
fn hyg_inner(d_x: f64, out: f64) -> f64 {
    let t1 = d_x * out;
    let d_out = t1.sin();
    let g1 = d_out + t1;
    g1 * d_x
}

/// `inner(a, b) = (sin(a b) + a b) a`.
fn hyg_inner_prime(a: f64, b: f64) -> (f64, f64) {
    let t = a * b;
    let k = t.cos() + 1.0;
    (k * b * a + t.sin() + t, k * a * a)
}

#[differentiate]
fn hyg_outer(x: f64, d_x: f64) -> f64 {
    let t1 = hyg_inner(x, d_x);
    let g1 = t1 * x;
    let d_t1 = hyg_inner(g1, t1);
    let out = d_t1 + g1;
    out * d_x
}

fn hyg_outer_prime(x: f64, y: f64) -> (f64, f64) {
    let t1 = hyg_inner(x, y);
    let (t1_x, t1_y) = hyg_inner_prime(x, y);
    let g1 = t1 * x;
    let (g1_x, g1_y) = (t1_x * x + t1, t1_y * x);
    let d_t1 = hyg_inner(g1, t1);
    let (i_a, i_b) = hyg_inner_prime(g1, t1);
    let (dt_x, dt_y) = (i_a * g1_x + i_b * t1_x, i_a * g1_y + i_b * t1_y);
    let out = d_t1 + g1;
    let (out_x, out_y) = (dt_x + g1_x, dt_y + g1_y);
    (out_x * y, out_y * y + out)
}

/// A parameter named like the seed of `_adjoint`.
#[differentiate]
fn hyg_seed_name(d_out: f64, x: f64) -> f64 {
    hyg_inner(d_out, x) + hyg_inner(x, d_out)
}

fn hyg_seed_name_prime(a: f64, x: f64) -> (f64, f64) {
    let (p, q) = hyg_inner_prime(a, x);
    let (r, s) = hyg_inner_prime(x, a);
    (p + s, q + r)
}

#[test]
fn hygiene_with_shared_names() {
    let points = [(0.7, -0.6), (-0.4, 0.5), (0.45, 0.35), (-0.8, -0.3)];
    check_binary(
        "hyg_inner",
        hyg_inner,
        hyg_inner_grad,
        hyg_inner_adjoint,
        hyg_inner_prime,
        &points,
    );
    check_binary(
        "hyg_outer",
        hyg_outer,
        hyg_outer_grad,
        hyg_outer_adjoint,
        hyg_outer_prime,
        &points,
    );
    check_binary(
        "hyg_seed_name",
        hyg_seed_name,
        hyg_seed_name_grad,
        hyg_seed_name_adjoint,
        hyg_seed_name_prime,
        &points,
    );
}

// ---------------------------------------------------------------------------
// Stopping the gradient: no_grad and detach.
//
// Finite differences see the whole function, stopped parts included, so the
// oracle is the finite difference of the function with the stopped quantity
// frozen at its value, next to the derivative by hand.
// ---------------------------------------------------------------------------

/// `x * no_grad(x y) + detach(sin x) + y`: the value is `x^2 y + sin x + y`;
/// the gradient is that of `c x + y` with `c = x y` frozen.
#[differentiate]
fn stop_mixed(x: f64, y: f64) -> f64 {
    x * no_grad(x * y) + detach(x.sin()) + y
}

/// A stopped argument to a callee, by full path: only the second argument's
/// share flows.
#[differentiate]
fn stop_into_callee(x: f64, y: f64) -> f64 {
    shared_g(gradmacro_runtime::no_grad(x * y), x) + gradmacro_runtime::detach(shared_g(x, y))
}

/// Straight-through estimator: the value rounds, the gradient is the
/// identity's.
#[differentiate]
fn straight_through(x: f64) -> f64 {
    x + no_grad(x.round() - x)
}

/// A stopped quantity as the whole output: the gradient is zero.
#[differentiate]
fn stop_everything(x: f64) -> f64 {
    no_grad(x * x) + detach(chain_c(x))
}

#[test]
fn no_grad_stops_the_gradient_and_keeps_the_value() {
    for (x, y) in PAIRS {
        let (value, (gx, gy)) = stop_mixed_grad(x, y);
        assert_bits("stop_mixed value", value, stop_mixed(x, y));
        assert!(close(value, x * x * y + x.sin() + y, 1e-15, 1e-14));
        let c = x * y;
        let frozen = |p: &[f64]| p[0] * c + p[1];
        assert_fd("stop_mixed, frozen", frozen, &[x, y], &[gx, gy]);
        assert_eq!((gx, gy), (c, 1.0), "stop_mixed at ({x}, {y})");
        let (ax, ay) = stop_mixed_adjoint(x, y, D_OUT);
        assert_eq!((ax, ay), (D_OUT * c, D_OUT));
        // The unstopped function has a different gradient: the check can fail.
        let full = check_gradient(|p| stop_mixed(p[0], p[1]), &[x, y], &[gx, gy]);
        assert!(
            !full.passes(1e-6),
            "stop_mixed: the stop had no effect?\n{full}"
        );

        let (value, (gx, gy)) = stop_into_callee_grad(x, y);
        assert_bits("stop_into_callee value", value, stop_into_callee(x, y));
        let c = x * y;
        let frozen = |p: &[f64]| shared_g(c, p[0]) + 0.0 * p[1];
        assert_fd("stop_into_callee, frozen", frozen, &[x, y], &[gx, gy]);
        let (_, gv) = shared_g_prime(c, x);
        assert!(
            close(gx, gv, 1e-15, 1e-12),
            "stop_into_callee d/dx: {gx} vs {gv}"
        );
        assert_eq!(gy, 0.0, "stop_into_callee d/dy");
    }
}

#[test]
fn straight_through_estimator() {
    for x in [0.3, 1.6, -2.7, 2.5, -0.49, 7.2] {
        let (value, grad) = straight_through_grad(x);
        assert_bits("straight_through value", value, straight_through(x));
        assert_eq!(value, x.round(), "straight_through({x})");
        assert_eq!(grad, 1.0, "straight_through'({x})");
        assert_eq!(straight_through_adjoint(x, D_OUT), D_OUT);
    }
}

#[test]
fn stopped_output_has_a_zero_gradient() {
    for x in POINTS {
        let (value, grad) = stop_everything_grad(x);
        assert_bits("stop_everything value", value, stop_everything(x));
        assert_eq!(grad, 0.0, "stop_everything'({x})");
        assert_eq!(stop_everything_adjoint(x, D_OUT), 0.0);
    }
}

/// A user's own differentiated function that happens to be called `detach`:
/// it is not the runtime's stop-gradient, and its derivative must flow.
mod user_named {
    use gradmacro::differentiate;

    #[differentiate]
    pub fn detach(x: f64) -> f64 {
        x * x
    }
}

#[differentiate]
fn calls_user_detach(x: f64) -> f64 {
    user_named::detach(x) + x
}

#[test]
fn a_user_function_named_detach_is_differentiated() {
    check_unary(
        "calls_user_detach",
        calls_user_detach,
        calls_user_detach_grad,
        calls_user_detach_adjoint,
        |x| 2.0 * x + 1.0,
        &POINTS,
    );
}
