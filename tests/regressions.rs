//! Regression tests: the bug classes that have shipped wrong gradients in
//! other AD tools, and the minimal programs the differential test
//! (`tests/differential.rs`) shrank its failures to.
//!
//! Each `#[differentiate]` function here is checked at a few points against
//! its derivative worked out by hand (in the comments), against centered
//! finite differences, for a value bit-identical to the function's, and for
//! `f_adjoint(.., d_out) == d_out * gradient`.
//!
//! Shrunk programs whose expansion does not compile (or fails clippy) cannot
//! live in this file as code (one would stop the whole file from building,
//! or CI's clippy step): they are kept as source text in `SHRUNK` and checked
//! by `shrunk_programs`, which builds them in the differential test's scratch
//! crate and compares them with dual numbers there.

#[path = "differential/mod.rs"]
mod difftest;
mod support;

use difftest::harness::{Case, Outcome, TestCrate};
use gradmacro::differentiate;
use gradmacro_runtime::check_gradient;
use support::close;
use support::dual::Dual;

/// Not a power of two: a mis-scaled adjoint cannot pass by accident.
const D_OUT: f64 = 2.5;

/// Value, gradient, adjoint and finite differences of a function of `n`
/// inputs at one point.
#[track_caller]
fn check_point(
    name: &str,
    x: &[f64],
    f: &dyn Fn(&[f64]) -> f64,
    value: f64,
    grad: &[f64],
    adjoint: &[f64],
    want: &[f64],
) {
    let fx = f(x);
    assert!(fx.is_finite(), "{name}: f{x:?} = {fx}: not a usable point");
    assert_eq!(
        value.to_bits(),
        fx.to_bits(),
        "{name}: f_grad{x:?} gives the value {value:?}, f gives {fx:?}"
    );
    for i in 0..x.len() {
        assert!(
            close(grad[i], want[i], 1e-12, 1e-12),
            "{name}: at {x:?}, derivative {i} is {:?}, expected {:?} (whole gradient {grad:?}, \
             expected {want:?})",
            grad[i],
            want[i]
        );
        assert!(
            close(adjoint[i], D_OUT * want[i], 1e-12, 1e-12),
            "{name}: at {x:?}, f_adjoint(.., {D_OUT}) entry {i} is {:?}, expected {:?}",
            adjoint[i],
            D_OUT * want[i]
        );
    }
    check_gradient(f, x, grad).assert_within(1e-6);
}

// ---------------------------------------------------------------------------
// A value reused along several paths, and twice inside one operation.
// ---------------------------------------------------------------------------

/// `a = xy` reaches the output four times, twice through `a * a`; `x` is
/// both operands of `hypot`, `y` both operands of `atan2`.
///
/// out = (a² + a x) a + hypot(x, x) + atan2(y, y) = x³y³ + x³y² + √2|x| + atan2(y, y)
/// d/dx = 3x²y³ + 3x²y² + √2 sign(x),  d/dy = 3x³y² + 2x³y  (atan2(y, y) is constant)
#[differentiate]
fn reuse(x: f64, y: f64) -> f64 {
    let a = x * y;
    let b = a * a;
    let c = b + a * x;
    c * a + x.hypot(x) + y.atan2(y)
}

#[test]
fn reuse_along_several_paths() {
    for (x, y) in [(1.3, 0.7), (-0.8, 1.9), (2.1, -0.4)] {
        let (v, (gx, gy)) = reuse_grad(x, y);
        let (ax, ay) = reuse_adjoint(x, y, D_OUT);
        let want = [
            3.0 * x * x * y * y * y + 3.0 * x * x * y * y + 2f64.sqrt() * x.signum(),
            3.0 * x * x * x * y * y + 2.0 * x * x * x * y,
        ];
        check_point(
            "reuse",
            &[x, y],
            &|p| reuse(p[0], p[1]),
            v,
            &[gx, gy],
            &[ax, ay],
            &want,
        );
    }
}

/// One variable as every operand: x^x + (x·x + x) + hypot(x, x) - min(x, x).
/// d/dx = x^x (ln x + 1) + 2x + 1 + √2 sign(x) - 1
#[differentiate]
fn self_operands(x: f64) -> f64 {
    x.powf(x) + x.mul_add(x, x) + x.hypot(x) - x.min(x)
}

#[test]
fn one_value_as_every_operand() {
    for x in [0.4, 1.7, 2.6] {
        let (v, g) = self_operands_grad(x);
        let a = self_operands_adjoint(x, D_OUT);
        let want = x.powf(x) * (x.ln() + 1.0) + 2.0 * x + 2f64.sqrt();
        check_point(
            "self_operands",
            &[x],
            &|p| self_operands(p[0]),
            v,
            &[g],
            &[a],
            &[want],
        );
    }
}

// ---------------------------------------------------------------------------
// A variable defined before a loop whose trip count depends on the input,
// and read after it: its adjoint must survive the loop.
// ---------------------------------------------------------------------------

/// `s` only depends on x through the trip count (piecewise constant), so
/// d/dx = 3 s + 3 where s = 1.5^k, k the number of iterations.
#[differentiate]
fn before_loop(x: f64) -> f64 {
    let c = x * 3.0;
    let mut s = 1.0;
    let mut k = 0;
    while s < x * x && k < 100 {
        s *= 1.5;
        k += 1;
    }
    c * s + c
}

/// The `s` of `before_loop`.
fn trips(x: f64) -> f64 {
    let mut s = 1.0;
    while s < x * x {
        s *= 1.5;
    }
    s
}

#[test]
fn defined_before_a_loop_with_input_dependent_trips() {
    // 0, 4 and 6 iterations.
    for x in [0.5, 2.0, 3.3] {
        let (v, g) = before_loop_grad(x);
        let a = before_loop_adjoint(x, D_OUT);
        let want = 3.0 * trips(x) + 3.0;
        check_point(
            "before_loop",
            &[x],
            &|p| before_loop(p[0]),
            v,
            &[g],
            &[a],
            &[want],
        );
    }
}

/// `c` is read inside and after a loop that runs `n` times:
/// s_n = 0.5ⁿ x + 2c (1 - 0.5ⁿ), out = s_n c, with c = sin x:
/// d/dx = (0.5ⁿ + 2 cos x (1 - 0.5ⁿ)) c + s_n cos x
#[differentiate]
fn carried(x: f64, n: usize) -> f64 {
    let c = x.sin();
    let mut s = x;
    for _ in 0..n {
        s = s * 0.5 + c;
    }
    s * c
}

#[test]
fn read_inside_and_after_a_loop_of_n_trips() {
    for n in [0usize, 1, 3, 7] {
        for x in [-1.1, 0.6, 2.3] {
            let (v, g) = carried_grad(x, n);
            let a = carried_adjoint(x, n, D_OUT);
            let h = 0.5f64.powi(n as i32);
            let (c, dc) = (x.sin(), x.cos());
            let s = h * x + 2.0 * c * (1.0 - h);
            let want = (h + 2.0 * dc * (1.0 - h)) * c + s * dc;
            check_point(
                &format!("carried(n = {n})"),
                &[x],
                &|p| carried(p[0], n),
                v,
                &[g],
                &[a],
                &[want],
            );
        }
    }
}

/// `a` is defined before a `while` whose trip count depends on x and read
/// after it: t = 0.7 k with k trips, out = a + t a, d/dx = 2x (1 + t).
#[differentiate]
fn until(x: f64) -> f64 {
    let a = x * x;
    let mut t = 0.0;
    let mut k = 0;
    while t < x + 2.0 && k < 50 {
        t += 0.7;
        k += 1;
    }
    a + t * a
}

#[test]
fn read_after_a_while_of_input_dependent_trips() {
    for x in [-1.8, 0.3, 1.9] {
        let (v, g) = until_grad(x);
        let a = until_adjoint(x, D_OUT);
        let mut t = 0.0;
        while t < x + 2.0 {
            t += 0.7;
        }
        let want = 2.0 * x * (1.0 + t);
        check_point("until", &[x], &|p| until(p[0]), v, &[g], &[a], &[want]);
    }
}

// ---------------------------------------------------------------------------
// A branch not taken whose derivative would be NaN or infinite.
// ---------------------------------------------------------------------------

/// sqrt and ln guarded by their domains; a branch never taken at the test
/// points (its derivative would be NaN there).
/// d/dx = [x > 0] / (2√x) + (x > 1 ? 1/(x - 1) : 2) + 1
#[differentiate]
fn guarded(x: f64) -> f64 {
    let r = if x > 0.0 { x.sqrt() } else { 0.0 };
    let l = if x > 1.0 { (x - 1.0).ln() } else { x * 2.0 };
    let mut s = x;
    if x < -5.0 {
        s = (x + 5.0).sqrt();
    }
    r + l + s
}

#[test]
fn branches_not_taken_do_not_poison() {
    for x in [-0.5, 0.5, 2.0] {
        let (v, g) = guarded_grad(x);
        let a = guarded_adjoint(x, D_OUT);
        let r = if x > 0.0 { 0.5 / x.sqrt() } else { 0.0 };
        let l = if x > 1.0 { 1.0 / (x - 1.0) } else { 2.0 };
        check_point(
            "guarded",
            &[x],
            &|p| guarded(p[0]),
            v,
            &[g],
            &[a],
            &[r + l + 1.0],
        );
    }
}

/// A loop body with 1/x that runs zero times at x = 0: d/dx = 2.
#[differentiate]
fn zero_trips(x: f64, n: usize) -> f64 {
    let mut s = x * 2.0;
    for _ in 0..n {
        s += 1.0 / x;
    }
    s
}

#[test]
fn a_loop_that_does_not_run_does_not_poison() {
    let (v, g) = zero_trips_grad(0.0, 0);
    assert_eq!(v.to_bits(), zero_trips(0.0, 0).to_bits());
    assert_eq!(g, 2.0, "d/dx of 2x at 0, with an unexecuted 1/x");
    assert_eq!(zero_trips_adjoint(0.0, 0, D_OUT), 2.0 * D_OUT);
}

/// A constant exponent of a negative base: the exponent's partial (which
/// needs ln of the base, NaN here) must not be used.
/// d/dx (x^2 + x^3) = 2x + 3x²
#[differentiate]
fn negative_base(x: f64) -> f64 {
    x.powf(2.0) + x.powf(3.0)
}

#[test]
fn constant_exponent_of_a_negative_base() {
    for x in [-1.5, -0.3, 0.8] {
        let (v, g) = negative_base_grad(x);
        let a = negative_base_adjoint(x, D_OUT);
        check_point(
            "negative_base",
            &[x],
            &|p| negative_base(p[0]),
            v,
            &[g],
            &[a],
            &[2.0 * x + 3.0 * x * x],
        );
    }
}

// ---------------------------------------------------------------------------
// Values read after a `break`.
// ---------------------------------------------------------------------------

/// At the points used the loop breaks when i = 3, with
/// s3 = 3.375x + 4.75y and last = s3 y + 3, so out = s3² y + 4 s3:
/// d/dx = (2 s3 y + 4) 3.375,  d/dy = s3² + (2 s3 y + 4) 4.75
#[differentiate]
fn after_break(x: f64, y: f64) -> f64 {
    let mut s = x;
    let mut last = y;
    for i in 0..10 {
        last = s * y + i as f64;
        if last > 4.0 {
            break;
        }
        s = s * 1.5 + y;
    }
    s * last + s
}

#[test]
fn values_read_after_break() {
    for (x, y) in [(1.0, 0.5), (0.8, 0.6), (1.2, 0.45)] {
        let (v, (gx, gy)) = after_break_grad(x, y);
        let (ax, ay) = after_break_adjoint(x, y, D_OUT);
        let s3 = 3.375 * x + 4.75 * y;
        assert!(
            s3 * y + 3.0 > 4.0,
            "the loop must break at i = 3 at {x}, {y}"
        );
        let want = [
            (2.0 * s3 * y + 4.0) * 3.375,
            s3 * s3 + (2.0 * s3 * y + 4.0) * 4.75,
        ];
        check_point(
            "after_break",
            &[x, y],
            &|p| after_break(p[0], p[1]),
            v,
            &[gx, gy],
            &[ax, ay],
            &want,
        );
    }
}

/// `loop` + `break`: t = x^k for the first k with x^k > 10, out = t + k x:
/// d/dx = k x^(k-1) + k
#[differentiate]
fn loop_break(x: f64) -> f64 {
    let mut t = 1.0;
    let mut k = 0;
    loop {
        k += 1;
        t *= x;
        if t > 10.0 || k >= 30 {
            break;
        }
    }
    t + k as f64 * x
}

#[test]
fn loop_with_break_then_reads() {
    for x in [1.3, 2.5, 4.0] {
        let (v, g) = loop_break_grad(x);
        let a = loop_break_adjoint(x, D_OUT);
        let mut k = 1;
        while x.powi(k) <= 10.0 {
            k += 1;
        }
        let want = f64::from(k) * x.powi(k - 1) + f64::from(k);
        check_point(
            "loop_break",
            &[x],
            &|p| loop_break(p[0]),
            v,
            &[g],
            &[a],
            &[want],
        );
    }
}

// ---------------------------------------------------------------------------
// A variable reassigned inside a branch inside a loop, read twice after it.
// ---------------------------------------------------------------------------

/// Taken at i = 0 and 2: t = x y² + x y + x, out = t² + sin t:
/// d/dx = (2t + cos t)(y² + y + 1),  d/dy = (2t + cos t)(2xy + x)
#[differentiate]
fn branch_in_loop(x: f64, y: f64) -> f64 {
    let mut t = x;
    for i in 0..4 {
        if i % 2 == 0 {
            t = t * y + x;
        }
    }
    t * t + t.sin()
}

#[test]
fn reassigned_in_a_branch_in_a_loop_read_twice() {
    for (x, y) in [(0.7, 1.2), (-1.4, 0.3), (2.0, -0.8)] {
        let (v, (gx, gy)) = branch_in_loop_grad(x, y);
        let (ax, ay) = branch_in_loop_adjoint(x, y, D_OUT);
        let t = x * y * y + x * y + x;
        let k = 2.0 * t + t.cos();
        check_point(
            "branch_in_loop",
            &[x, y],
            &|p| branch_in_loop(p[0], p[1]),
            v,
            &[gx, gy],
            &[ax, ay],
            &[k * (y * y + y + 1.0), k * (2.0 * x * y + x)],
        );
    }
}

/// The branch depends on the value being updated: t grows by 1.5 while
/// below 2, then by 0.25 x.
#[differentiate]
fn branch_on_itself(x: f64) -> f64 {
    let mut t = x;
    for _ in 0..5 {
        if t < 2.0 {
            t *= 1.5;
        } else {
            t += 0.25 * x;
        }
    }
    t * t - t
}

/// The same, by hand: t = 1.5^m x + 0.25 (5 - m) x, where m counts the
/// first kind of step; d/dx = (2t - 1) (1.5^m + 0.25 (5 - m)).
fn branch_on_itself_by_hand(x: f64) -> (f64, f64) {
    let mut t = x;
    let mut m = 0;
    for _ in 0..5 {
        if t < 2.0 {
            t *= 1.5;
            m += 1;
        } else {
            t += 0.25 * x;
        }
    }
    let dt = 1.5f64.powi(m) + 0.25 * f64::from(5 - m);
    (t, (2.0 * t - 1.0) * dt)
}

#[test]
fn branch_on_the_reassigned_variable() {
    for x in [0.3, 0.9, 2.7] {
        let (v, g) = branch_on_itself_grad(x);
        let a = branch_on_itself_adjoint(x, D_OUT);
        let (_, want) = branch_on_itself_by_hand(x);
        check_point(
            "branch_on_itself",
            &[x],
            &|p| branch_on_itself(p[0]),
            v,
            &[g],
            &[a],
            &[want],
        );
    }
}

// ---------------------------------------------------------------------------
// A variable declared without a value and assigned in a loop: each
// iteration's value is a different one for the reverse sweep.
// ---------------------------------------------------------------------------

/// out = y · Π_{k=1..4} sin(k x) + Σ_{k=1..4} (k - 1) x
/// d/dx = out' = y Π sin(kx) · Σ k cot(kx) + 6,  d/dy = Π sin(kx)
#[differentiate]
fn deferred_in_loop(x: f64, y: f64) -> f64 {
    let mut w;
    let mut k;
    let mut s = y;
    let mut t = 0.0;
    for i in 0..4 {
        w = x * (i as f64 + 1.0);
        k = i;
        s *= w.sin();
        t += x * k as f64;
    }
    s + t
}

#[test]
fn deferred_declaration_assigned_in_a_loop() {
    for (x, y) in [(0.3, 1.7), (0.55, -0.8), (0.17, 2.4)] {
        let (v, (gx, gy)) = deferred_in_loop_grad(x, y);
        let (ax, ay) = deferred_in_loop_adjoint(x, y, D_OUT);
        let prod: f64 = (1..=4).map(|k| (k as f64 * x).sin()).product();
        let cot_sum: f64 = (1..=4).map(|k| k as f64 / (k as f64 * x).tan()).sum();
        let want = [y * prod * cot_sum + 6.0, prod];
        check_point(
            "deferred_in_loop",
            &[x, y],
            &|p| deferred_in_loop(p[0], p[1]),
            v,
            &[gx, gy],
            &[ax, ay],
            &want,
        );
    }
}

/// An array literal of active values, never written by the user (no `mut`).
/// out = 2x·y + x·y = 3xy: d/dx = 3y, d/dy = 3x
#[differentiate]
fn array_literal(x: f64, y: f64) -> f64 {
    let v = [x * 2.0, y, x * y];
    let w = [v[0], v[2]];
    w[0] * v[1] + w[1]
}

#[test]
fn array_literal_of_active_values() {
    for (x, y) in [(0.3, 1.7), (-1.5, 0.8)] {
        let (v, (gx, gy)) = array_literal_grad(x, y);
        let (ax, ay) = array_literal_adjoint(x, y, D_OUT);
        check_point(
            "array_literal",
            &[x, y],
            &|p| array_literal(p[0], p[1]),
            v,
            &[gx, gy],
            &[ax, ay],
            &[3.0 * y, 3.0 * x],
        );
    }
}

/// A block in a condition declares `u`, hiding the function's `u`: the
/// condition must read the inner one (the copied condition once read the
/// outer, so `f_grad` took the other branch).
/// x < 0.5: out = x + 10, d = 1; x > 0.5: out = 3x + 10, d = 3
#[differentiate]
fn shadowed_in_condition(x: f64) -> f64 {
    let u = 10.0;
    let mut y = x;
    if ({
        let u = x;
        u * 2.0
    }) > 1.0
    {
        y *= 3.0;
    }
    y + u
}

#[test]
fn a_let_in_a_condition_hides_the_outer_name() {
    for (x, want) in [(0.3, 1.0), (0.45, 1.0), (0.7, 3.0), (1.9, 3.0)] {
        let (v, g) = shadowed_in_condition_grad(x);
        let a = shadowed_in_condition_adjoint(x, D_OUT);
        check_point(
            "shadowed_in_condition",
            &[x],
            &|p| shadowed_in_condition(p[0]),
            v,
            &[g],
            &[a],
            &[want],
        );
    }
}

// ---------------------------------------------------------------------------
// Shrunk failures of the differential test that compile.
// ---------------------------------------------------------------------------

/// A parameter overwritten by a constant in a branch that is taken: the
/// output no longer depends on it, d/dy = 0.
/// (Differential test, program 44; shrunk from 116 syntax nodes to 9.)
#[differentiate]
fn overwritten_in_taken_branch(mut y: f64) -> f64 {
    if 1.5 <= 2.0 {
        y = 1.0;
    }
    y
}

#[test]
fn overwrite_in_a_taken_branch_kills_the_derivative() {
    for y in [0.13, -2.0, 7.5] {
        let (v, g) = overwritten_in_taken_branch_grad(y);
        assert_eq!(v, overwritten_in_taken_branch(y));
        assert_eq!(g, 0.0, "d/dy of a function that ignores y, at {y}");
        assert_eq!(overwritten_in_taken_branch_adjoint(y, D_OUT), 0.0);
    }
}

/// The same with a condition on the input: below 10 the output is 1.
#[differentiate]
fn overwritten_when_small(mut y: f64) -> f64 {
    if y < 10.0 {
        y = 2.0 * 3.0;
    }
    y * 2.0
}

#[test]
fn overwrite_in_a_branch_on_the_input() {
    for y in [0.5, 3.0] {
        assert_eq!(overwritten_when_small(y), 12.0);
        assert_eq!(overwritten_when_small_grad(y), (12.0, 0.0), "at {y}");
    }
    assert_eq!(overwritten_when_small_grad(12.0), (24.0, 2.0));
}

// ---------------------------------------------------------------------------
// Shrunk failures that cannot be compiled here, checked as text.
// ---------------------------------------------------------------------------

/// Program 2814498, shrunk (twice in `SHRUNK`: the index gives the flags).
const P2814498: &str = "#[differentiate]
fn g2(x: f64, y: f64) -> f64 {
    x * y + 1.0
}

/// `w.len() == 3`
#[differentiate]
fn f(xs: [f64; 3], w: &[f64]) -> f64 {
    g2(xs.iter().sum::<f64>(), {
        let (acc,): (f64,) = (0.3_f64.sin(),);
        -acc.fract()
    }) + w[1] * xs[0]
}";

/// Program 2812804, shrunk (twice in `SHRUNK`, as for `P2814498`).
const P2812804: &str = "#[differentiate]
fn g1(x: f64, _y: f64, _w: &[f64]) -> f64 {
    x * x
}

/// `w.len() == 4`
#[differentiate]
fn f(w: &[f64], x: f64, _flag: bool) -> f64 {
    if x >= 1.0 {
        return 0.6_f64.powf(x - w[3]);
    }
    (0..3).map(|_| g1(1.0, 2.26, w)).min_by(|p, q| p.partial_cmp(q).unwrap()).unwrap_or(0.0f64) * x
}";

/// Minimal programs the differential test found (program number, source),
/// whose expansion does not compile, or is rejected by clippy (which would
/// stop CI before any test runs). Each must build under `#![deny(warnings)]`
/// and agree with dual numbers.
const SHRUNK: &[(&str, &str)] = &[
    (
        "120883: an `if` that does nothing, inside a loop, on a value it alone reads: the \
         value was computed for the reverse sweep to evaluate the condition again, which it \
         never does (`value assigned to `b` is never read`)",
        "/// `w.len() == 3`
#[differentiate]
fn f(w: &[f64]) -> f64 {
    let mk_b = || 0.81;
    let b: f64 = mk_b();
    let mut w1 = 0;
    loop {
        w1 += 1;
        if w1 > 2 {
            break;
        }
        if 1.0 >= b {
            for _ in 0..w.len() {
            }
        }
    }
    1.0
}",
    ),
    (
        "277: f_grad's value is not f's; the expansion assigns `g = g` (clippy::self_assignment). \
         At (1.3588449771152593, -0.39005698921041, 0.3430178880882634) f = -0.0470391011221466 \
         but f_grad returns 0.3430178880882634",
        "#[differentiate]
fn f(y: f64, z: f64, mut x: f64) -> f64 {
    let c = z;
    let g: f64 = 1.0;
    let g = if y < 0.75 {
        1.69
    } else {
        g
    };
    if 1.0 > 1.25 {
        return 1.0;
    }
    let d: f64;
    d = c * g;
    x += d;
    x
}",
    ),
    (
        "21: f64::max with a literal first argument (E0689, ambiguous float)",
        "#[differentiate]
fn f(y: f64) -> f64 {
    let t: f64;
    t = f64::max(3.0, y);
    t
}",
    ),
    (
        "141: integer local assigned in a loop lost its `mut` (E0384)",
        "#[differentiate]
fn f(_x: f64) -> f64 {
    let mut k;
    let mut w1 = 0;
    loop {
        w1 += 1;
        if w1 > 5 {
            break;
        }
        k = 0;
        if k > 2 {
            return 1.0;
        }
    }
    1.0
}",
    ),
    (
        "190: shadowed parameter compared in a loop (E0282, type annotations needed)",
        "#[differentiate]
fn f(x: f64) -> f64 {
    let x = if 1.0 <= 1.0 {
        x.acos()
    } else {
        1.0
    };
    let mut w2 = 0;
    loop {
        w2 += 1;
        if w2 > 3 {
            break;
        }
        if x < 1.38 {
            continue;
        }
    }
    1.0
}",
    ),
    (
        "43: return after a reassignment in a branch (unused_parens in the expansion)",
        "#[differentiate]
fn f(mut out: f64) -> f64 {
    if 0.11 <= 1.75 {
        out = out * (1.0 + 1.0);
        return out;
    }
    1.0
}",
    ),
    (
        "8: shadowing `let x = if ..` read in a loop (E0381, possibly-uninitialized)",
        "#[differentiate]
fn f(x: f64) -> f64 {
    let x = if 1.0 > 3.0 {
        x
    } else {
        1.0
    };
    for _ in 0..3 {
        if x > 1.0 {
            continue;
        }
    }
    2.84
}",
    ),
    (
        "25: shadowing `let mut x = if ..` reassigned in a loop (E0381)",
        "#[differentiate]
fn f(x: f64, y: f64) -> f64 {
    let mut x = if 1.0 >= 2.59 {
        x
    } else {
        y
    };
    let mut w4 = 0;
    loop {
        w4 += 1;
        if w4 > 4 {
            break;
        }
        if x <= 1.5 {
            continue;
        }
        x = 1.0;
    }
    1.0
}",
    ),
    (
        "179: unconditional return inside a for loop (E0381)",
        "#[differentiate]
fn f(y: f64) -> f64 {
    for _ in 0..2 {
        return 2.5 / y;
    }
    1.0
}",
    ),
    (
        "3061: a block initialiser reads the name it shadows (E0277: `{integer} + f64`)",
        "#[differentiate]
fn f(n: usize, y: f64) -> f64 {
    let n = {
        let q = ((n + 1) as f64) - y;
        q
    };
    n
}",
    ),
    (
        "1179: `let i = if i < 2 ..` shadowing an integer loop variable (E0308)",
        "#[differentiate]
fn f(y: f64) -> f64 {
    let mut x: f64 = 1.0;
    for i in 0..4 {
        let c: f64;
        let i = if i < 2 {
            x
        } else {
            y
        };
        c = i;
        x = c;
    }
    1.0
}",
    ),
    (
        "437: an unused variable in the expansion (a block in a condition shadows `q`)",
        "#[differentiate]
fn f(x: f64) -> f64 {
    let q: f64 = if ({
        let q = 1.0;
        q * x
    }) >= 1.47 {
        1.0
    } else {
        1.0
    };
    if 1 < 1 {
        return 1.0;
    }
    q * x
}",
    ),
    (
        "31 (commit 198b34f): a loop body value recomputed from an `if` temporary out of \
         scope (E0425: cannot find `t1`)",
        "#[differentiate]
fn f(mut x: f64) -> f64 {
    for _ in 0..1 {
        let v: f64 = 1.0 + (if x >= 0.5 {
            1.0
        } else {
            1.0
        });
        x = v * x;
    }
    x
}",
    ),
    (
        "1638: with `wrt(y)`, a block assigned to `x` \
         declaring `r`, then `let r = if ..`: the loop counter `w1` is declared `f64` in the \
         expansion (E0308, E0277)",
        "#[differentiate(wrt(y))]
fn f(y: f64, mut x: f64) -> f64 {
    x = {
        let r = x;
        r
    };
    let mut w1 = 0;
    loop {
        w1 += 1;
        if w1 > 6 {
            break;
        }
    }
    let r = if 1.0 > 1.25 {
        y
    } else {
        1.0
    };
    x -= r;
    x
}",
    ),
    (
        "1661: `let mut idx;` assigned in a loop is read \
         by the reverse sweep after the loop, where it may be uninitialised (E0381)",
        "#[differentiate]
fn f(x: f64, mut y: f64) -> f64 {
    let mut idx;
    let mut s: f64 = 1.0;
    for _ in 0..2 {
        idx = 1;
        let u = (idx as f64) * x;
        s = u;
    }
    y += s;
    y
}",
    ),
    (
        "6794: `let mut b: f64;` assigned in a loop and \
         multiplied into `y`: the reverse sweep reads `b` where it may be uninitialised (E0381)",
        "#[differentiate]
fn f(mut y: f64) -> f64 {
    let mut b: f64;
    let mut w2 = 0;
    loop {
        w2 += 1;
        if w2 > 4 {
            break;
        }
        b = 4.0;
        y = y * b;
    }
    y
}",
    ),
    (
        "901 (and 2333, 2890, 3060): a literal receiver `f64::min(0.25, d)` in a loop, \
         recomputed by the reverse sweep as `0.25.min(d)` (E0689)",
        "#[differentiate]
fn f(x: f64) -> f64 {
    let d = x * 2.0;
    let mut acc = 0.0;
    let mut w = 0;
    while w < 3 {
        w += 1;
        acc += x * f64::min(0.25, d).tanh();
    }
    acc
}",
    ),
    (
        "2745: `let mut took: f64 = 2.91;` in a loop, recomputed by the reverse sweep \
         without its type (E0689)",
        "#[differentiate]
fn f(mut x: f64, y: f64) -> f64 {
    for _ in 0..2 {
        let mut took: f64 = 2.91;
        x = x + took.asinh();
        took *= took.min(y).sin();
        x += y * took;
    }
    x
}",
    ),
    (
        "3226: `let d: f64 = if <condition on an input> { 1.5 } else { 0.1 };` lost its \
         type (E0689)",
        "#[differentiate]
fn f(x: f64) -> f64 {
    let e = if x > 0.7 {
        let d: f64 = if x < 1.5 { 1.5 } else { 0.1 };
        d.powi(2) * x
    } else {
        x.cbrt()
    };
    e
}",
    ),
    (
        "`let b;` assigned on one path of an `if` and read there: the reverse sweep's read \
         in the mirrored branch is possibly-uninitialized to rustc (E0381)",
        "#[differentiate]
fn f(x: f64) -> f64 {
    let b;
    let mut y = x;
    if x > 1.0 {
        b = x * 2.0;
        y = y * b;
    }
    y
}",
    ),
    (
        "1365: a shadowing `let` inside a block in a loop's `if` condition: the copied \
         condition read the outer `u` (unused variable `u` in the expansion)",
        "#[differentiate]
fn f(mut x: f64) -> f64 {
    let mut w1 = 0;
    loop {
        w1 += 1;
        if w1 > 4 {
            break;
        }
        let u: f64 = 1.75;
        x += u;
        if 1.0 <= ({
            let u = x;
            let t2 = u;
            t2
        }) {
            break;
        }
    }
    x
}",
    ),
    (
        "155: an element store in a `.rev()` loop that can `break`, restored by the reverse \
         sweep with an index it did not keep (E0425: cannot find value `l`)",
        "#[differentiate]
fn g1(_x: f64, _y: f64) -> f64 {
    1.0
}

#[differentiate]
fn f(y: f64) -> f64 {
    let mut vs: Vec<f64> = vec![0.0; 4];
    let c: f64;
    for l in (0..3).rev() {
        if 1.0 != 0.75 {
            break;
        }
        vs[l] = 1.0;
    }
    c = 1.0;
    c + g1(vs[1], y)
}",
    ),
    (
        "151: `f64::hypot(1.0, w[1])` returned from inside a loop (E0689)",
        "/// `w.len() == 4`
#[differentiate]
fn f(w: &[f64]) -> f64 {
    for _ in 0..1 {
        return f64::hypot(1.0, w[1]).sin();
    }
    1.0
}",
    ),
    (
        "198: a buffer of constants written and summed: its `let` lost its `mut` (E0596)",
        "#[differentiate]
fn f(mut y: f64) -> f64 {
    let mut buf = vec![0.0; 3];
    buf[0] = 1.0;
    let v = buf.iter().sum::<f64>();
    y -= v;
    y
}",
    ),
    (
        "20026: `.iter().rev().copied()` was not taken for a loop over the elements",
        "/// `w.len() == 3`
#[differentiate]
fn f(w: &[f64]) -> f64 {
    w.iter().rev().copied().map(|v| v * 2.0).fold(f64::INFINITY, f64::min)
}",
    ),
    (
        "20012: a `Vec` of constants made by `collect()`, then written by index",
        "#[differentiate]
fn f(x: f64) -> f64 {
    let mut vs: Vec<f64> = (0..4).map(|_| 1.0).collect();
    vs[1] = x * 2.0;
    vs[0] + vs[1]
}",
    ),
    (
        "20033: the closure pattern `|&_|`",
        "/// `w.len() == 2`
#[differentiate]
fn f(mut x: f64, w: &Vec<f64>) -> f64 {
    x = x + w.iter().map(|&_| std::f64::consts::PI).sum::<f64>();
    (0..4).map(|_| x).sum::<f64>()
}",
    ),
    (
        "20707: `Vec::with_capacity` filled with constants by `push` lost its `mut` (E0596)",
        "/// `w.len() == 3`
#[differentiate]
fn f(w: &[f64]) -> f64 {
    let mut cells: Vec<f64> = Vec::with_capacity(2);
    for _ in 0..2 {
        cells.push(1.0);
    }
    cells[1] * w[0]
}",
    ),
    (
        "20342 (wrong gradient): `w[0] = w[0]` cleared the element's adjoint after passing \
         it on to itself, so d/dw0 was 0 instead of 1",
        "/// `w.len() == 2`
#[differentiate]
fn f(mut x: f64, w: &[f64]) -> f64 {
    let mut w = w.to_vec();
    w[0] = w[0];
    x += w[0];
    x
}",
    ),
    (
        "11423: `let mut tmp = *w;` of a constant `&[f64; 4]`, then written by index",
        "#[differentiate(wrt(x))]
fn f(x: f64, w: &[f64; 4]) -> f64 {
    let mut tmp = *w;
    for _ in 0..tmp.len() {
        tmp[0] = x;
    }
    tmp[0] * tmp[1]
}",
    ),
    (
        "13166: in f_adjoint, which drops the primal value, `let mut k = 4;` overwritten in a \
         loop was never read (unused_assignments)",
        "#[differentiate]
fn f(x: f64) -> f64 {
    let mut k = 4;
    for _ in 0..1 {
        k = 3;
        if k == 1 {
            return 1.0;
        }
    }
    let v = k as f64;
    let t = v;
    t + x
}",
    ),
    (
        "1214171: an `if` that does nothing was dropped with its condition, the one read of \
         `u`'s first value before the loop overwrites it (unused_assignments); the condition \
         is now evaluated in its place",
        "/// `_w.len() == 4`
#[differentiate]
fn f(_w: &Vec<f64>) -> f64 {
    let mut u: f64 = 1.0;
    if u > 1.0 {
        for _ in 0..3 {
        }
    }
    let mut w1 = 0;
    loop {
        w1 += 1;
        if w1 > 2 {
            break;
        }
        u = 1.0;
        if u >= 0.01 {
            break;
        }
    }
    1.0
}",
    ),
    (
        "1206744 (at an index the test gives `tangent, hessian`): with `tangent`, a `match` arm binding `m` whose body reads the field \
         `self.m` bound `m` again for nothing (unused_assignments): a field's name was taken \
         for a read of the binding",
        "struct Model {
    m: usize,
}

impl Model {
    #[differentiate]
    fn f(&self, n: usize, w: [f64; 3]) -> f64 {
        let mut s = w[0] * w[1];
        match n.checked_sub(1) {
            Some(m) if m > 2 => {
                for _ in 1..self.m {
                    s += w[2];
                }
            }
            _ => {
                for _ in 1..4 {
                }
            }
        }
        s
    }
}",
    ),
    (
        "1302796: a float field of a differentiated struct read only as the start of a `fold` \
         was taken for data (E0277 a field read as data is `f64`)",
        "#[derive(Clone, Copy, gradmacro::Differentiable)]
struct Cfg {
    scale: f64,
    w: [f64; 3],
}

/// `w.len() == 2`
#[differentiate(wrt(cfg, y, w))]
fn f(cfg: Cfg, mut y: f64, w: &[f64]) -> f64 {
    y = y * w.iter().fold(cfg.scale, |y, el| y * 0.5 + el);
    y - cfg.w[2]
}",
    ),
    (
        "1309539: a filtered sum bound by a `let` inside a constant `if` used as a value was \
         kept as one expression (compound assignment inside an expression)",
        "/// `w.len() == 5`
#[differentiate]
fn f(w: &[f64]) -> f64 {
    let vals = vec![0.0_f64; 3];
    let p = if 1.0 >= 1.0 {
        let t1 = vals.iter().filter(|fv| **fv > 4.0).map(|_| 1.0).sum::<f64>();
        t1
    } else {
        1.0
    };
    p + w[1] * w[2]
}",
    ),
    (
        "1600729: a helper's local `let out = x;` shadowing its output buffer `out` was lent \
         as the buffer to a call reading it (`f64::signum(&out)`: references to \
         differentiated values are not supported)",
        "/// `_w.len() == 2`
#[differentiate]
fn h1(x: f64, _w: &[f64], out: &mut [f64]) {
    for _ in 0..out.len() {
        out[0] = {
            let out = x;
            let pair_s = (-f64::signum(out), 2.0);
            let s = pair_s.0 * pair_s.1 * 0.5;
            s * x
        };
    }
}

#[differentiate]
fn f(_flag: bool, w: [f64; 2], _n: i32, x: f64, _y: f64) -> f64 {
    let mut ob = vec![0.0_f64; 2];
    h1(x * 0.5 + 1.0, &w, &mut ob);
    ob.iter().sum::<f64>() * w[0]
}",
    ),
    (
        "1704754: a filtered sum inside an `if` that is an argument (`1.0_f64.atan2(if c { \
         <sum> } else { 1.0 })`) was kept as one expression with its accumulator's `+=` \
         (compound assignment inside an expression)",
        "/// `w.len() == 4`
#[differentiate]
fn f(w: &[f64]) -> f64 {
    let cells = vec![1.0, 0.5];
    let mk_r = || 1.0_f64.atan2(if 1.0 >= 0.25 {
        cells.iter().rev().filter(|fv| **fv < 0.6).map(|&_| 1.5).sum::<f64>()
    } else {
        1.0
    });
    let r: f64 = mk_r();
    (0..4).map(|k| r * w[k]).max_by(|p, q| p.partial_cmp(q).unwrap()).unwrap_or(0.0f64)
}",
    ),
    (
        "1707078: a filtered sum at the tail of a block assigned to a deferred `let v: f64;` \
         (compound assignment inside an expression)",
        "/// `w.len() == 4`
#[differentiate]
fn f(w: &[f64]) -> f64 {
    let buf = vec![0.0_f64, 1.5, 2.0, 0.5];
    let v: f64;
    v = {
        let pair_s: (f64, f64) = (1.0, 2.0);
        let s: f64 = pair_s.0 * pair_s.1 * 0.5;
        buf.iter().rev().filter(|fv| **fv >= 1.0).map(|&_| s).sum::<f64>()
    };
    v * w[1] + w[2] * w[2]
}",
    ),
    (
        "2101868 (at an index the test gives a generic twin with `tangent`): in-place \
         iteration over one half of a constant buffer's `split_at_mut` zipped with the other \
         half, written as stores into the buffer, `vb0[k] += vb0[1 + k] * c;`: for a generic \
         float the element is borrowed mutably before the value is evaluated (E0502)",
        "#[differentiate]
fn f(x: f64) -> f64 {
    let mut vb0: Vec<f64> = vec![0.5, 0.75, 1.25, 0.3, 1.25];
    let (pa0, pb0) = vb0.split_at_mut(1);
    for (pe0, pz0) in pa0.iter_mut().zip(pb0.iter()) {
        *pe0 += *pz0 * 0.3;
    }
    pb0[1] -= pb0[2] * 0.5;
    let mut vs0_0 = 0.0;
    for vi0 in 0..1 {
        vs0_0 += pb0[vi0] * 0.25 + vi0 as f64 * 0.25;
    }
    let mut vc: Vec<f64> = vec![x, 2.0 * x, 0.5];
    let (pa1, pb1) = vc.split_at_mut(1);
    for (pe1, pz1) in pa1.iter_mut().zip(pb1.iter()) {
        *pe1 += *pz1 * x;
    }
    vs0_0 + vb0.iter().sum::<f64>() * x + vc.iter().sum::<f64>()
}",
    ),
    (
        "2609708 in reverse mode only: its gradient, without the flags that made the \
         second derivatives' cores fail to build (the next case)",
        "#[differentiate]
fn f(mut x: f64) -> f64 {
    let mut e: f64 = 1.0;
    if 1.0 >= 0.05 {
        {
            e = 1.0;
            x = e;
        }
    }
    x.cos() + e - 1.0
}",
    ),
    (
        "2609708 and 2513696 (at an index the test gives `tangent, hessian`): the cores of \
         second derivatives return nothing, so they leave out the output's arithmetic. \
         2609708: that was the one read of `e`'s first value, which a branch overwrites \
         (unused_assignments). 2513696: `b` was computed for a condition the reverse sweep \
         evaluates again only if the branch does anything backwards, which it does not \
         (unused_assignments)",
        "#[differentiate(wrt(x))]
fn f(mut x: f64, y: f64) -> f64 {
    let mk_b = || 0.75;
    let b: f64 = mk_b();
    let mut sum_t: f64 = 0.0;
    for _ in 0..4 {
        if b < 0.6 || 0.0 >= 0.75 {
            sum_t = 1.0 * 0.5;
        }
    }
    let mut e: f64 = 1.0;
    if y >= 0.05 {
        {
            e = 1.0;
            x = e + y;
        }
    }
    x.cos() * y + e - 1.0 + sum_t
}",
    ),
    (
        "2814498 in reverse mode (the next case gives it `tangent`)",
        P2814498,
    ),
    (
        "2814498 with `tangent`, at f64 (its generic twin, which did not compile, is \
         tests/generics.rs::a_float_method_of_a_block_binding_as_an_argument)",
        P2814498,
    ),
    (
        "2812804's program as a generic twin, in reverse mode (the next case gives it \
         `tangent, hessian`)",
        P2812804,
    ),
    (
        "2812804 (at an index the test gives `tangent, hessian`): a differentiated call's \
         value compared by reference in `min_by` (`(&best).partial_cmp(&item)`, in the \
         tangent program the second derivatives lower again) was taken for an array, since \
         a float is lent by value (E0599 `len` on `f64`)",
        P2812804,
    ),
];

#[test]
fn shrunk_programs() {
    let mut tc = TestCrate::new(if cfg!(debug_assertions) {
        "regressions-debug"
    } else {
        "regressions-release"
    });
    let cases: Vec<Case> = SHRUNK
        .iter()
        .enumerate()
        .map(|(i, (_, source))| Case {
            id: i,
            seed: difftest::gen::program_seed(i as u64),
            source: source.to_string(),
        })
        .collect();
    let outcomes = tc.run(&cases);
    let mut failures = Vec::new();
    for ((name, source), outcome) in SHRUNK.iter().zip(outcomes) {
        match outcome {
            Outcome::Ok { .. } => {}
            Outcome::Skip { .. } => failures.push(format!("{name}: no usable point\n{source}")),
            Outcome::Fail(f) => failures.push(format!("{name}: {}: {}\n{source}", f.kind, f.msg)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} shrunk programs fail:\n\n{}",
        failures.len(),
        SHRUNK.len(),
        failures.join("\n\n")
    );
}

/// A value defined by a reduction and overwritten by a constant on a branch:
/// the overwrite must clear its adjoint, or the array receives the adjoint of
/// a value that no longer reaches the output (program 21279 of the
/// differential test; wrong gradient: -1 for every element instead of 0).
#[differentiate]
fn reduction_then_overwritten(w: [f64; 3], mut x: f64, flag: bool) -> f64 {
    let mut e = w.iter().sum::<f64>();
    if flag {
        e = 1.0;
    }
    x -= e;
    x
}

#[test]
fn an_overwrite_clears_the_adjoint_of_a_reduction() {
    let w = [0.5, -1.0, 2.0];
    assert_eq!(
        reduction_then_overwritten_grad(w, 1.0, true).1,
        ([0.0; 3], 1.0)
    );
    assert_eq!(
        reduction_then_overwritten_grad(w, 1.0, false).1,
        ([-1.0; 3], 1.0)
    );
}

/// Second derivatives of a function whose branch only moves the value: the
/// Hessian's core drops the branch and must not warn about the value its
/// condition reads (program 21556, under `-D warnings`).
#[differentiate(tangent, hessian)]
fn branch_on_a_constant_value(mut x: f64) -> f64 {
    let mk_r = || 1.0_f64.powf(1.0);
    let r: f64 = mk_r();
    if r <= 0.05 {
        x += 0.36;
    }
    x
}

#[test]
fn a_branch_that_only_moves_the_value() {
    assert_eq!(
        branch_on_a_constant_value_hessian(1.5),
        (1.5, vec![1.0], vec![vec![0.0]])
    );
}

/// An `if` whose body does nothing in either sweep is not emitted: the value
/// its condition alone reads must not be computed either, or it is assigned
/// in vain (`unused_assignments`, program 22870 of the differential test,
/// shrunk). Denied here, so the file does not build if the lint fires; with
/// and without forward mode and second derivatives, as a function and as a
/// method.
#[deny(warnings)]
mod condition_of_an_empty_branch {
    use gradmacro::differentiate;

    pub struct Cfg {
        pub w: Vec<f64>,
    }

    #[differentiate]
    pub fn plain(cfg: &Cfg, x: f64) -> f64 {
        let mk_b = || 1.0;
        let b: f64 = mk_b();
        if b < 1.0 {
            for _ in 0..cfg.w.len() {}
        }
        2.0 * x
    }

    #[differentiate(tangent)]
    pub fn forward(cfg: &Cfg, x: f64) -> f64 {
        let mk_b = || 1.0;
        let b: f64 = mk_b();
        if b < 1.0 {
            for _ in 0..cfg.w.len() {}
        }
        2.0 * x
    }

    /// Taken by value: `f_hessian` calls the core once per column.
    #[derive(Clone, Copy)]
    pub struct Fixed {
        pub w: [f64; 2],
    }

    #[derive(Clone, Copy)]
    pub struct Model;

    impl Model {
        #[differentiate(hessian)]
        pub fn second(self, cfg: Fixed, _x: f64) -> f64 {
            let mk_b = || 1.0;
            let b: f64 = mk_b();
            if b < 1.0 {
                for _ in 0..cfg.w.len() {}
            }
            1.0
        }
    }
}

#[test]
fn the_condition_of_an_empty_branch_is_not_computed() {
    use condition_of_an_empty_branch::*;
    let cfg = Cfg { w: vec![0.5, 1.5] };
    let fixed = Fixed { w: [0.5, 1.5] };
    for x in [-1.25, 0.0, 3.5] {
        assert_eq!(plain_grad(&cfg, x), (plain(&cfg, x), 2.0));
        assert_eq!(forward_tangent(&cfg, x, 0.75), (2.0 * x, 1.5));
        assert_eq!(Model.second_grad(fixed, x), (1.0, 0.0));
        assert_eq!(
            Model.second_hessian(fixed, x),
            (1.0, vec![0.0], vec![vec![0.0]])
        );
    }
}

/// A `match` on a float comparison inside `vec![..]`, next to a `let` that
/// receives a differentiated value: the lowering, repeated until it knows
/// which `let`s carry derivatives, knew them by their address in a parse of
/// the `vec!` of its own at each attempt, so the scrutinee `let` of the
/// rewritten `match` could take the address of a `let` promoted by the
/// attempt before ("`match` is not supported on differentiated values",
/// program 50957 of the differential test, shrunk).
///
/// With t = atanh(0.8 cos 0.5) ≈ 0.871: when any xs ≤ 5 the value is
/// w0 - xs3, else when t·max(w1, 0) > 0.3 it is w0 - xs3, else
/// (w0 + w1) w0 - xs3 (d/dw0 = 2 w0 + w1, d/dw1 = w0).
#[differentiate(wrt(w))]
#[allow(clippy::useless_vec, clippy::let_and_return)]
fn match_in_vec(xs: &[f64; 5], w: [f64; 2], _n: usize) -> f64 {
    let vals = vec![
        1.0,
        if xs.iter().any(|c| *c <= (xs.len() as f64)) {
            let (q,): (f64,) = (1.0,);
            q
        } else {
            match f64::atanh(0.5_f64.cos() * 0.8) * w[1].max(0.0) > 0.3 {
                true => 1.0,
                false => {
                    let p = {
                        let mk_b = || 1.75 * w.iter().sum::<f64>() / 1.75;
                        let b = mk_b();
                        b
                    };
                    p
                }
            }
        },
    ];
    vals[1] * w[0] - xs[3]
}

#[test]
fn a_match_inside_vec_next_to_a_promoted_let() {
    let points: [(f64, [f64; 2]); 4] = [
        (9.0, [0.5, 0.1]),
        (9.0, [1.25, -0.4]),
        (9.0, [-0.7, 2.0]),
        (1.0, [0.5, 0.1]),
    ];
    for (x, w) in points {
        let xs = [x; 5];
        let t = (0.5_f64.cos() * 0.8).atanh();
        let want = if x <= 5.0 || t * w[1].max(0.0) > 0.3 {
            [1.0, 0.0]
        } else {
            [2.0 * w[0] + w[1], w[0]]
        };
        let (v, g) = match_in_vec_grad(&xs, w, 0);
        let a = match_in_vec_adjoint(&xs, w, 0, D_OUT);
        check_point(
            "match_in_vec",
            &w,
            &|p| match_in_vec(&xs, [p[0], p[1]], 0),
            v,
            &g,
            &a,
            &want,
        );
    }
}

/// `let`s inside `vec![..]` that receive differentiated values (`s` only
/// once `s += x * y` is seen): the lowering must settle on the same
/// declarations at every attempt.
///
/// x > y: v = [xy, x²], out = x³y: d/dx = 3x²y, d/dy = x³;
/// else xy > 1: out = xy², d/dx = y², d/dy = 2xy; else out = xy sin x,
/// d/dx = y sin x + xy cos x, d/dy = x sin x.
#[differentiate]
#[allow(clippy::useless_vec)]
fn lets_in_vec(x: f64, y: f64) -> f64 {
    let v = vec![
        {
            let mut s = 0.0;
            s += x * y;
            s
        },
        if x > y {
            let t = x;
            t * t
        } else {
            match x * y > 1.0 {
                true => y,
                false => x.sin(),
            }
        },
    ];
    v[0] * v[1]
}

#[test]
fn lets_inside_vec_settle() {
    for (x, y) in [(1.5_f64, 0.5), (0.75, 2.0), (0.5, 1.5)] {
        let want = if x > y {
            [3.0 * x * x * y, x * x * x]
        } else if x * y > 1.0 {
            [y * y, 2.0 * x * y]
        } else {
            [y * x.sin() + x * y * x.cos(), x * x.sin()]
        };
        let (v, (gx, gy)) = lets_in_vec_grad(x, y);
        let (ax, ay) = lets_in_vec_adjoint(x, y, D_OUT);
        check_point(
            "lets_in_vec",
            &[x, y],
            &|p| lets_in_vec(p[0], p[1]),
            v,
            &[gx, gy],
            &[ax, ay],
            &want,
        );
    }
}

/// A struct's array read only by filtered counts (`cfg.w.iter().filter(..)
/// .count() as f64`): the cast converts the count, so the array is not taken
/// for data that must be an integer ("a field read as data is `f64`",
/// program 54560 of the differential test, shrunk).
#[derive(Clone, Copy, gradmacro::Differentiable)]
struct Counted {
    scale: f64,
    w: [f64; 3],
}

/// With n the number of w_i ≤ 1 (the loop never runs: n ≤ 3):
/// out = scale (1 + n), d/dscale = 1 + n, d/dw = 0.
#[differentiate(wrt(cfg))]
fn counted(cfg: Counted) -> f64 {
    let n = cfg.w.iter().filter(|v| **v <= 1.0).count() as f64;
    let mut k = 0;
    while k < 3 && (cfg.w.iter().filter(|v| **v <= 1.0).count() as f64) > 3.15 {
        k += 1;
    }
    cfg.scale * (1.0 + n) + k as f64
}

#[test]
fn a_struct_array_read_by_a_filtered_count() {
    for (scale, w) in [
        (1.5, [0.5, 2.0, 0.1]),
        (-0.75, [1.25, 3.0, 2.5]),
        (2.0, [0.0, -1.0, 0.9]),
    ] {
        let n = w.iter().filter(|v| **v <= 1.0).count() as f64;
        let (v, g) = counted_grad(Counted { scale, w });
        let a = counted_adjoint(Counted { scale, w }, D_OUT);
        check_point(
            "counted",
            &[scale, w[0], w[1], w[2]],
            &|p| {
                counted(Counted {
                    scale: p[0],
                    w: [p[1], p[2], p[3]],
                })
            },
            v,
            &[g.scale, g.w[0], g.w[1], g.w[2]],
            &[a.scale, a.w[0], a.w[1], a.w[2]],
            &[1.0 + n, 0.0, 0.0, 0.0],
        );
    }
}

/// Second derivatives through a branch whose only work in the reverse sweep
/// is a value computed again there (the operand of `max`, whose result
/// reaches the output only through `floor`): the branch is replayed from a
/// record, so the value its condition reads must be computed, though nothing
/// else reads it (program 56672 of the differential test, shrunk: "cannot
/// find value `__gm_scrutinee`", the condition of the `match`). Denied here,
/// so the file does not build if a warning fires.
#[deny(warnings)]
mod replayed_branch_of_a_recomputed_value {
    use gradmacro::differentiate;

    /// `xs.len() == 5`. The loop's result is piecewise constant (floor):
    /// out = c + w0 w1 with c constant, d/dw0 = w1, d/dw1 = w0, the only
    /// second derivative d²/dw0dw1 = 1.
    #[differentiate(tangent, hessian)]
    #[allow(clippy::match_bool)]
    pub fn f(xs: &[f64], w: &[f64; 2], mut x: f64) -> f64 {
        for l in 0..4 {
            let h = (match l < 1 {
                true => 0.25_f64.max(xs[1] + xs[2]),
                false => x,
            })
            .tanh();
            for _ in 0..w.len() {
                let e: f64 = h;
                x -= e;
            }
        }
        1.0 / (f64::floor(x).sin() * 1.5).cosh() + w[0] * w[1]
    }
}

#[test]
fn second_derivatives_replay_a_branch_of_a_recomputed_value() {
    use replayed_branch_of_a_recomputed_value::*;
    let points = [
        ([1.0, 0.5, 0.25, 1.0, 1.0], [1.0, 2.0], 0.3),
        ([0.2, -0.4, 1.5, 0.0, 2.0], [-0.75, 0.5], 1.7),
    ];
    for (xs, w, x) in points {
        let mut want = [0.0; 8];
        want[5] = w[1];
        want[6] = w[0];
        let (v, (gxs, gw, gx)) = f_grad(&xs, &w, x);
        let (axs, aw, ax) = f_adjoint(&xs, &w, x, D_OUT);
        let flat = |a: &[f64], b: &[f64], c: f64| [a, b, &[c]].concat();
        check_point(
            "f",
            &flat(&xs, &w, x),
            &|p| f(&p[..5], &[p[5], p[6]], p[7]),
            v,
            &flat(&gxs, &gw, gx),
            &flat(&axs, &aw, ax),
            &want,
        );
        let (hv, hg, h) = f_hessian(&xs, &w, x);
        assert_eq!(hv.to_bits(), v.to_bits());
        assert_eq!(hg, want.to_vec());
        for (i, row) in h.iter().enumerate() {
            for (j, hij) in row.iter().enumerate() {
                let expected = if (i, j) == (5, 6) || (i, j) == (6, 5) {
                    1.0
                } else {
                    0.0
                };
                assert_eq!(*hij, expected, "d²f/d{i}d{j} at {xs:?}, {w:?}, {x}");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// A block with statements whose value does not depend on the differentiated
// inputs, assigned to one that does (differential-test program 71560: the
// tangent program's product rule is such a block, so `hessian` failed).
// ---------------------------------------------------------------------------

mod passive_block_with_statements {
    use gradmacro::differentiate;

    /// With P = w0 w1 .. (a constant: only `z` is differentiated),
    /// z1 = z² + P, out = z1² + P:
    /// d/dz = 4 z (z² + P), d²/dz² = 12 z² + 4 P.
    #[differentiate(wrt(z), tangent, hessian)]
    pub fn f(mut z: f64, w: &[f64]) -> f64 {
        let mut i = 0;
        while i < 2 {
            i += 1;
            z = z * z + {
                let mut suffix: Vec<f64> = vec![1.0; w.len() + 1];
                for k in (0..w.len()).rev() {
                    suffix[k] = suffix[k + 1] * w[k];
                }
                suffix[0]
            };
        }
        z
    }

    /// The shrunk program: `cells` is constant, out = 0.25^len(w), every
    /// derivative 0.
    #[differentiate(tangent, hessian)]
    pub fn shrunk(mut z: f64, w: &[f64]) -> f64 {
        let cells: Vec<f64> = w.iter().rev().map(|_| 0.25).collect();
        let mut w1 = 0;
        loop {
            w1 += 1;
            if w1 > 4 {
                break;
            }
            let mut w2 = 0;
            while w2 < 6 {
                w2 += 1;
                z = cells.iter().product::<f64>();
            }
        }
        z
    }
}

#[test]
fn a_block_of_constant_statements_assigned_to_a_differentiated_value() {
    use passive_block_with_statements::{
        f, f_adjoint, f_grad, f_hessian, f_tangent, shrunk, shrunk_hessian,
    };
    for (z, w) in [(0.5, vec![1.5, -0.5]), (-1.25, vec![0.75, 2.0, 0.5])] {
        let p: f64 = w.iter().product();
        let (v, dz) = f_grad(z, &w);
        assert_eq!(v.to_bits(), f(z, &w).to_bits());
        let want = 4.0 * z * (z * z + p);
        check_point(
            "f",
            &[z],
            &|x| f(x[0], &w),
            v,
            &[dz],
            &[f_adjoint(z, &w, D_OUT)],
            &[want],
        );
        let (tv, t) = f_tangent(z, &w, 0.75);
        assert_eq!(tv.to_bits(), v.to_bits());
        assert!(close(t, 0.75 * want, 1e-12, 1e-12), "tangent {t}");
        let (hv, g, h) = f_hessian(z, &w);
        assert_eq!(hv.to_bits(), v.to_bits());
        assert!(close(g[0], want, 1e-12, 1e-12));
        let second = 12.0 * z * z + 4.0 * p;
        assert!(
            close(h[0][0], second, 1e-12, 1e-12),
            "{} vs {second}",
            h[0][0]
        );
    }
    for (z, w) in [(0.5, vec![1.5, -0.5]), (2.0, vec![0.3, 0.1, 0.9])] {
        let (hv, g, h) = shrunk_hessian(z, &w);
        assert_eq!(hv.to_bits(), shrunk(z, &w).to_bits());
        assert_eq!(hv, 0.25f64.powi(w.len() as i32));
        assert!(g.iter().all(|d| *d == 0.0), "{g:?}");
        assert!(h.iter().flatten().all(|d| *d == 0.0), "{h:?}");
    }
}

// ---------------------------------------------------------------------------
// Integer counters stepped back by the reverse sweep instead of recorded.
// ---------------------------------------------------------------------------

/// v's strictly lower triangle weighted by `below`, packed column by column
/// (`at` counts through it): out = Σ_{c<r} below[at(c, r)] v[c] v[r].
#[differentiate]
fn packed_pairs(below: &[f64], v: &[f64]) -> f64 {
    let mut s = 0.0;
    let mut at = 0;
    for col in 0..v.len() {
        for row in col + 1..v.len() {
            s += below[at] * v[col] * v[row];
            at += 1;
        }
    }
    s
}

/// `at` reset on every pass and stepped inside: at == k, out = 3 Σ w_k²,
/// d/dw_k = 6 w_k.
#[differentiate]
fn reset_counter(w: &[f64]) -> f64 {
    let mut s = 0.0;
    let mut at: usize;
    for _ in 0..3 {
        at = 0;
        for k in 0..w.len() {
            s += w[at] * w[k];
            at += 1;
        }
    }
    s
}

#[test]
fn integer_counters_stepped_back() {
    let v = [0.5, -1.25, 2.0, 0.75];
    let below = [1.5, -0.5, 0.25, 2.0, -1.0, 0.3];
    let (value, (d_below, d_v)) = packed_pairs_grad(&below, &v);
    assert_eq!(value.to_bits(), packed_pairs(&below, &v).to_bits());
    let (mut want_below, mut want_v) = (vec![0.0; 6], vec![0.0; 4]);
    let mut at = 0;
    for c in 0..4 {
        for r in c + 1..4 {
            want_below[at] = v[c] * v[r];
            want_v[c] += below[at] * v[r];
            want_v[r] += below[at] * v[c];
            at += 1;
        }
    }
    let x: Vec<f64> = [&below[..], &v[..]].concat();
    let (a_below, a_v) = packed_pairs_adjoint(&below, &v, D_OUT);
    check_point(
        "packed_pairs",
        &x,
        &|p| packed_pairs(&p[..6], &p[6..]),
        value,
        &[d_below, d_v].concat(),
        &[a_below, a_v].concat(),
        &[want_below, want_v].concat(),
    );
    let w = [0.4, -1.5, 2.25];
    let (value, g) = reset_counter_grad(&w);
    let want: Vec<f64> = w.iter().map(|x| 6.0 * x).collect();
    check_point(
        "reset_counter",
        &w,
        &|p| reset_counter(p),
        value,
        &g,
        &reset_counter_adjoint(&w, D_OUT),
        &want,
    );
}

// ---------------------------------------------------------------------------
// Derivatives near the ends of their range: `1 − x²` written `(1 − x)(1 + x)`,
// exact where `1 − x·x` loses the digits `x·x` rounds. For `tanh` the rule
// reads the value `y` while |y| < 0.9 only: where tanh saturates
// (differential-test program 93423: tanh(16) = 1 − 2.5e-14) `y` itself is
// rounded, and 1 − y² kept about three digits.
// ---------------------------------------------------------------------------

#[differentiate]
fn saturated_tanh(x: f64) -> f64 {
    x.tanh()
}

#[differentiate]
fn near_one(x: f64) -> f64 {
    x.asin() + x.acos() * 0.5 + x.atanh()
}

#[differentiate]
fn near_one_above(x: f64) -> f64 {
    x.acosh()
}

#[test]
fn derivatives_keep_their_digits_near_the_ends_of_the_range() {
    for x in [16.0, -17.5, 10.0, 2.5, -3.75, 1.47, 1.48, 0.3, -0.01, 6.0] {
        let (_, d) = saturated_tanh_grad(x);
        // sech² = 4 / (eˣ + e⁻ˣ)², every factor accurate to an ulp or two.
        let want = 4.0 / ((x.exp() + (-x).exp()) * (x.exp() + (-x).exp()));
        assert!(
            close(d, want, 0.0, 1e-14),
            "tanh' at {x}: {d:e}, expected {want:e}"
        );
    }
    for x in [1.0 - 1e-12, -1.0 + 3e-13, 0.999_999_9, 0.25] {
        let (_, d) = near_one_grad(x);
        // (1 − x)(1 + x) computed as exactly as f64 allows, from 1 − x (exact
        // here) and 1 + x.
        let q = (1.0 - x) * (1.0 + x);
        let want = 1.0 / q.sqrt() - 0.5 / q.sqrt() + 1.0 / q;
        assert!(
            close(d, want, 0.0, 1e-12),
            "at {x}: {d:e}, expected {want:e}"
        );
    }
    for x in [1.0 + 1e-12, 1.5, 3.0] {
        let (_, d) = near_one_above_grad(x);
        let want = 1.0 / ((x - 1.0) * (x + 1.0)).sqrt();
        assert!(
            close(d, want, 0.0, 1e-12),
            "acosh' at {x}: {d:e}, expected {want:e}"
        );
    }
}

// ---------------------------------------------------------------------------
// A filtered sum inside a branch of an `if` read by a comparison or an
// integer cast (differential-test program 85376): evaluated on values, as a
// condition is; it was rewritten into statements the comparison could not hold
// ("compound assignment inside an expression").
// ---------------------------------------------------------------------------

/// `x·k` or `x²` as the filtered sum of `w` is small or not, with `k` the
/// integer part of another: piecewise x·c, derivative c.
#[differentiate]
fn filtered_in_a_comparison(x: f64, w: &[f64]) -> f64 {
    let small = (if x > 10.0 {
        1.0
    } else {
        w.iter().filter(|v| **v > 0.5).map(|v| v * x).sum::<f64>()
    }) < 2.0;
    let k = (if x > 10.0 {
        1.0
    } else {
        w.iter().filter(|v| **v > 0.5).sum::<f64>()
    }) as usize;
    if small {
        x * k as f64
    } else {
        x * x
    }
}

#[test]
fn filtered_sum_read_on_values_inside_an_expression() {
    let w = [0.75, 0.25, 1.5, 0.6];
    // Σ of w over 0.5 = 2.85: k = 2; small while 2.85 x < 2.
    for (x, want) in [(0.5, 2.0), (-1.25, 2.0), (1.5, 3.0), (3.0, 6.0)] {
        let (value, (dx, dw)) = filtered_in_a_comparison_grad(x, &w);
        assert_eq!(value.to_bits(), filtered_in_a_comparison(x, &w).to_bits());
        assert!(close(dx, want, 0.0, 1e-15), "at {x}: {dx}, expected {want}");
        assert!(dw.iter().all(|d| *d == 0.0), "at {x}: d/dw = {dw:?}");
        check_gradient(|p| filtered_in_a_comparison(p[0], &w), &[x], &[dx]).assert_within(1e-6);
    }
}

// ---------------------------------------------------------------------------
// `chunks`, `windows`, `skip`, `step_by`, `take` and `zip` over views whose
// length the macro knows as a number (`&w[4..][..1]`, `&vb[2..][..2]`): the
// counts were written `4.div_ceil(3)`, `(2 + 1).saturating_sub(2)`, which
// do not compile (E0689, ambiguous integer; differential-test program 201013).
// ---------------------------------------------------------------------------

/// One chunk, [w₄]: 0.75 w₄ x.
#[differentiate]
fn chunk_of_a_fixed_view(x: f64, w: &[f64]) -> f64 {
    let row = &w[4..][..1];
    let mut s = 0.0;
    for c in row.chunks(3) {
        s += c[0] * x * 0.75;
    }
    s
}

/// (1.5 − w₀) x + w₀² + 1.5 w₁ + x (w₁ + 3 w₃) + x (w₁ + w₂).
// A `Vec`, as in the program that failed.
#[allow(clippy::useless_vec)]
#[differentiate]
fn adaptors_on_fixed_views(x: f64, w: &[f64]) -> f64 {
    let vb = vec![x, x * 2.0, w[0], 1.5];
    let row = &vb[2..][..2];
    let mut s = 0.0;
    for c in row.windows(2) {
        s += (c[1] - c[0]) * x;
    }
    for (a, b) in row.iter().zip(w[..3].iter()) {
        s += a * b;
    }
    for (i, a) in w[..4].iter().enumerate().skip(1).step_by(2) {
        s += a * x * i as f64;
    }
    for a in w[1..3].iter().take(5) {
        s += a * x;
    }
    s
}

#[test]
fn adaptors_over_views_of_known_length() {
    let w = [0.4, -1.25, 2.0, 0.75, 1.5];
    for x in [0.5, -2.0, 1.75] {
        let (value, (dx, dw)) = chunk_of_a_fixed_view_grad(x, &w);
        assert_eq!(value.to_bits(), chunk_of_a_fixed_view(x, &w).to_bits());
        assert!(close(dx, 0.75 * w[4], 0.0, 1e-15), "{dx}");
        assert_eq!(dw, vec![0.0, 0.0, 0.0, 0.0, 0.75 * x]);
        let (value, (dx, dw)) = adaptors_on_fixed_views_grad(x, &w);
        assert_eq!(value.to_bits(), adaptors_on_fixed_views(x, &w).to_bits());
        let want_x = 1.5 - w[0] + 2.0 * w[1] + 3.0 * w[3] + w[2];
        assert!(close(dx, want_x, 1e-14, 1e-14), "{dx} vs {want_x}");
        let want_w = [2.0 * w[0] - x, 1.5 + 2.0 * x, x, 3.0 * x, 0.0];
        for (g, h) in dw.iter().zip(want_w) {
            assert!(close(*g, h, 1e-14, 1e-14), "{dw:?} vs {want_w:?}");
        }
        let p: Vec<f64> = std::iter::once(x).chain(w).collect();
        let g: Vec<f64> = std::iter::once(dx).chain(dw).collect();
        check_gradient(|p| adaptors_on_fixed_views(p[0], &p[1..]), &p, &g).assert_within(1e-6);
    }
}

// ---------------------------------------------------------------------------
// A filtered sum in a branch of an `if` whose value is stored into an
// element (differential-test program 105382): the branch became the sum's
// loop, which the element's value, constant there, could not hold
// ("compound assignment inside an expression").
// ---------------------------------------------------------------------------

/// A buffer of constants: 5, derivative 0.
// `Vec`s, as in the program that failed.
#[allow(clippy::useless_vec)]
#[differentiate]
fn stored_constant_branch(_w: &[f64]) -> f64 {
    let mut vs = vec![0.0_f64; 5];
    vs[4] = if vs.iter().any(|wv| *wv < 2.5) {
        1.0
    } else {
        vs.iter()
            .rev()
            .filter(|fv| **fv >= 0.25)
            .map(|_| 1.0)
            .sum::<f64>()
    };
    vs.len() as f64
}

/// x s + k x, s = 1 if w₀ > 0.5 else Σ_{w_i ≥ 0.25} 2 w_i, k = 1 if w₁ > 0
/// else 2: d/dx = s + k, d/dw_i = 2x where w₀ ≤ 0.5 and w_i ≥ 0.25.
#[allow(clippy::useless_vec)]
#[differentiate]
fn stored_filtered_branch(x: f64, w: &[f64]) -> f64 {
    let mut vs = vec![0.0_f64; 3];
    vs[1] = if w[0] > 0.5 {
        1.0
    } else {
        w.iter()
            .filter(|fv| **fv >= 0.25)
            .map(|v| v * 2.0)
            .sum::<f64>()
    };
    let k: usize = if w[1] > 0.0 { 1 } else { 2 };
    x * vs[1] + x * vs[0] + k as f64 * x
}

#[test]
fn a_filtered_sum_in_a_branch_stored_into_an_element() {
    let (value, g) = stored_constant_branch_grad(&[0.5, 1.0]);
    assert_eq!(value, 5.0);
    assert_eq!(g, vec![0.0, 0.0]);
    for w in [[0.75, -1.0, 0.3], [0.1, 0.6, 1.5], [-0.4, 0.3, 0.26]] {
        for x in [1.5, -0.75] {
            let (value, (dx, dw)) = stored_filtered_branch_grad(x, &w);
            assert_eq!(value.to_bits(), stored_filtered_branch(x, &w).to_bits());
            let s = if w[0] > 0.5 {
                1.0
            } else {
                w.iter()
                    .filter(|v| **v >= 0.25)
                    .map(|v| v * 2.0)
                    .sum::<f64>()
            };
            let k = if w[1] > 0.0 { 1.0 } else { 2.0 };
            assert!(close(dx, s + k, 1e-15, 1e-15), "{dx} vs {}", s + k);
            for i in 0..3 {
                let want = if w[0] <= 0.5 && w[i] >= 0.25 {
                    2.0 * x
                } else {
                    0.0
                };
                assert!(close(dw[i], want, 1e-15, 1e-15), "{dw:?}");
            }
        }
    }
}

/// A `match` on a comparison that starts with a float method (`h.cbrt() <=
/// 0.6`) in a function that can return early: the scrutinee, declared before
/// the forward sweep, is a `bool`, not a float copied from `h` (program
/// 3505492 of the differential test, shrunk; it did not compile).
struct Offset {
    k: f64,
}

impl Offset {
    #[differentiate(tangent, hessian)]
    fn matched_comparison(&self, y: f64, w: &[f64]) -> f64 {
        let buf: Vec<f64> = w.iter().map(|el| el - 1.25).collect();
        for &v in w.iter() {
            if v > 10.0 {
                return 1.0;
            }
        }
        let h = buf.iter().sum::<f64>();
        ((match h.cbrt() <= 0.6 {
            true => 1.0,
            false => -1.5,
        }) * h
            + y
            + self.k)
            * y
    }
}

#[test]
fn a_match_on_a_comparison_after_an_early_return() {
    let m = Offset { k: 0.75 };
    // (s h + y + k) y with h = Σ (w_i − 1.25), s = 1 where cbrt(h) <= 0.6,
    // else −1.5: d/dy = s h + 2 y + k, d/dw_i = s y; d²/dy² = 2,
    // d²/dy dw_i = s, d²/dw_i dw_j = 0. A w_i above 10 returns 1.
    for (y, w, s) in [
        (0.5, vec![1.0], 1.0),
        (-1.25, vec![1.0, 0.5], 1.0),
        (0.5, vec![3.0, 2.0], -1.5),
        (2.0, vec![4.0], -1.5),
    ] {
        let h: f64 = w.iter().map(|v| v - 1.25).sum();
        let (value, (dy, dw)) = m.matched_comparison_grad(y, &w);
        assert_eq!(value.to_bits(), m.matched_comparison(y, &w).to_bits());
        assert!(
            close(dy, s * h + 2.0 * y + m.k, 1e-12, 1e-12),
            "d/dy at {y}, {w:?}"
        );
        for g in &dw {
            assert!(close(*g, s * y, 1e-12, 1e-12), "d/dw at {y}, {w:?}");
        }
        let t_w = vec![0.5; w.len()];
        let (tv, dot) = m.matched_comparison_tangent(y, &w, 2.0, &t_w);
        assert_eq!(tv.to_bits(), value.to_bits());
        let want: f64 = 2.0 * dy + dw.iter().map(|g| g * 0.5).sum::<f64>();
        assert!(close(dot, want, 1e-12, 1e-12), "tangent at {y}, {w:?}");
        let (hv, hg, hess) = m.matched_comparison_hessian(y, &w);
        assert_eq!(hv.to_bits(), value.to_bits());
        assert!(close(hg[0], dy, 1e-12, 1e-12));
        for (i, row) in hess.iter().enumerate() {
            for (j, entry) in row.iter().enumerate() {
                let want = match (i, j) {
                    (0, 0) => 2.0,
                    (0, _) | (_, 0) => s,
                    _ => 0.0,
                };
                assert!(close(*entry, want, 1e-12, 1e-12), "Hessian at {y}, {w:?}");
            }
        }
    }
    let (value, (dy, dw)) = m.matched_comparison_grad(0.5, &[11.0, 1.0]);
    assert_eq!((value, dy, dw), (1.0, 0.0, vec![0.0, 0.0]));
}

// ---------------------------------------------------------------------------
// Expression trees written back whole by the forward sweep.
// ---------------------------------------------------------------------------

/// Parenthesised subtrees whose grouping decides the value bit for bit
/// (floating-point arithmetic is not associative): the forward sweep writes
/// each expression's temporaries back into it, with the parentheses the
/// tree needs (`a - (b - c)`, `a / (b * c)`, `-(a * b)`, `(a + b).sin()`).
#[differentiate]
fn grouped(x: f64, y: f64) -> f64 {
    let a = x - (y - x * 0.5);
    let b = x / (y * 1.5 + 2.0) * (x - y);
    let c = -(x * y) - -(y * y);
    let d = (x + y).sin() * (x - y * 0.25).exp().ln();
    let e = x - (y - (x - (y - 0.25)));
    let g = 1.0 / (x * (y / (x + 3.0)));
    a * b + c - d / (e + g * g + 5.0)
}

/// `grouped` over dual numbers, in the same order: the same value bit for
/// bit, and the derivatives by an arithmetic that shares nothing with the
/// macro.
fn grouped_dual(x: Dual<2>, y: Dual<2>) -> Dual<2> {
    let k = Dual::<2>::cst;
    let a = x - (y - x * k(0.5));
    let b = x / (y * k(1.5) + k(2.0)) * (x - y);
    let c = -(x * y) - -(y * y);
    let d = (x + y).sin() * (x - y * k(0.25)).exp().ln();
    let e = x - (y - (x - (y - k(0.25))));
    let g = k(1.0) / (x * (y / (x + k(3.0))));
    a * b + c - d / (e + g * g + k(5.0))
}

#[test]
fn grouped_subexpressions_keep_their_value_and_derivatives() {
    for (x, y) in [(0.7, 1.3), (-1.2, 0.4), (2.5, -0.8), (1.9, 2.2)] {
        let dual = grouped_dual(Dual::var(x, 0), Dual::var(y, 1));
        assert_eq!(
            dual.v.to_bits(),
            grouped(x, y).to_bits(),
            "dual value at ({x}, {y})"
        );
        let (v, (gx, gy)) = grouped_grad(x, y);
        let (ax, ay) = grouped_adjoint(x, y, D_OUT);
        check_point(
            "grouped",
            &[x, y],
            &|p| grouped(p[0], p[1]),
            v,
            &[gx, gy],
            &[ax, ay],
            &dual.d,
        );
    }
}

// ---------------------------------------------------------------------------
// Values an `if` chooses, chosen again backwards.
// ---------------------------------------------------------------------------

/// Neighbours chosen by `if` at the ends of the array, read by a recurrence
/// the reverse sweep undoes from a record: the chosen values (`prev`, `next`,
/// `w`) and what is made of them (`f`) are computed again backwards by
/// replaying the `if`s, not recorded. (`w` is assigned late on purpose: that
/// is the form the lowering sees for an `if` that assigns.)
#[allow(clippy::needless_late_init)]
#[differentiate]
fn boundary_recurrence(x: &[f64]) -> f64 {
    let n = x.len();
    let mut s = 0.0;
    for i in 0..n {
        let prev = if i > 0 { x[i - 1] } else { 0.5 };
        let next = if i + 1 < n { x[i + 1] } else { -0.25 };
        let w;
        if i % 2 == 0 {
            w = 2.0;
        } else {
            w = 3.0;
        }
        let f = (x[i] - prev).sin() * w - next * 0.5;
        s = s * f + f * f;
    }
    s
}

fn boundary_recurrence_dual(x: &[Dual<4>]) -> Dual<4> {
    let k = Dual::<4>::cst;
    let n = x.len();
    let mut s = k(0.0);
    for i in 0..n {
        let prev = if i > 0 { x[i - 1] } else { k(0.5) };
        let next = if i + 1 < n { x[i + 1] } else { k(-0.25) };
        let w = if i % 2 == 0 { k(2.0) } else { k(3.0) };
        let f = (x[i] - prev).sin() * w - next * k(0.5);
        s = s * f + f * f;
    }
    s
}

/// `f_grad` of a function of one slice.
type Grad<'a> = dyn Fn(&[f64]) -> (f64, Vec<f64>) + 'a;

/// At three points of four inputs: the value bit for bit against dual numbers
/// computed in the same order (`bits`; else to rounding), the gradient and
/// `f_adjoint` against them, and the gradient against finite differences.
fn check_against_duals(
    name: &str,
    f: &dyn Fn(&[f64]) -> f64,
    grad: &Grad<'_>,
    adjoint: &dyn Fn(&[f64], f64) -> Vec<f64>,
    dual: &dyn Fn(&[Dual<4>]) -> Dual<4>,
    bits: bool,
) {
    for x in [
        [0.3, -0.7, 1.1, 0.2],
        [-1.2, 0.4, 0.9, -0.5],
        [0.05, 0.6, -0.3, 1.4],
    ] {
        let duals: Vec<Dual<4>> = (0..4).map(|i| Dual::var(x[i], i)).collect();
        let d = dual(&duals);
        let same = if bits {
            d.v.to_bits() == f(&x).to_bits()
        } else {
            close(d.v, f(&x), 1e-12, 1e-12)
        };
        assert!(
            same,
            "{name}: dual value {} at {x:?}, f gives {}",
            d.v,
            f(&x)
        );
        let (v, g) = grad(&x);
        let a = adjoint(&x, D_OUT);
        check_point(name, &x, f, v, &g, &a, &d.d);
    }
}

#[test]
fn values_an_if_chooses_are_chosen_again_backwards() {
    check_against_duals(
        "boundary_recurrence",
        &|p| boundary_recurrence(p),
        &|p| boundary_recurrence_grad(p),
        &|p, d| boundary_recurrence_adjoint(p, d),
        &|p| boundary_recurrence_dual(p),
        true,
    );
}

/// Loops over the length of a buffer whose elements change from one pass to
/// the next (the length cannot): the reverse sweep runs them backwards over
/// that length again instead of recording each loop's count.
#[differentiate]
#[allow(clippy::needless_range_loop)] // The index loops are the case.
fn passes_over_a_buffer(x: &[f64]) -> f64 {
    let mut buf = vec![0.0; x.len() - 1];
    let mut s = 0.0;
    for i in 0..x.len() {
        for j in 0..buf.len() {
            buf[j] = (buf[j] + x[i]).sin() * (j as f64 + 1.5);
        }
        for j in 0..buf.len() {
            s += buf[j] * buf[buf.len() - 1 - j];
        }
    }
    s
}

#[allow(clippy::needless_range_loop)]
fn passes_over_a_buffer_dual(x: &[Dual<4>]) -> Dual<4> {
    let k = Dual::<4>::cst;
    let mut buf = vec![k(0.0); x.len() - 1];
    let mut s = k(0.0);
    for i in 0..x.len() {
        for j in 0..buf.len() {
            buf[j] = (buf[j] + x[i]).sin() * k(j as f64 + 1.5);
        }
        for j in 0..buf.len() {
            s = s + buf[j] * buf[buf.len() - 1 - j];
        }
    }
    s
}

#[test]
fn loops_over_a_fixed_length_run_backwards_again() {
    check_against_duals(
        "passes_over_a_buffer",
        &|p| passes_over_a_buffer(p),
        &|p| passes_over_a_buffer_grad(p),
        &|p, d| passes_over_a_buffer_adjoint(p, d),
        &|p| passes_over_a_buffer_dual(p),
        true,
    );
}

/// Constant arrays grown by code kept as written: their length changes from
/// one pass to the next, so the loops over it are counted, not run again
/// over the final length.
#[differentiate]
#[allow(clippy::needless_range_loop)] // The index loops are the case.
fn passes_over_growing_constants(x: &[f64]) -> f64 {
    let mut idx = vec![0usize; 2];
    let mut w = vec![0.5; 2];
    let mut s = 0.0;
    for i in 0..x.len() {
        for j in 0..idx.len() {
            s += x[i] * (idx[j] as f64 + 1.0);
        }
        for j in 0..w.len() {
            s += x[i] * w[j] * s.sin();
        }
        idx.push(i);
        w.push(1.0);
        w[0] += 1.0;
    }
    s
}

#[allow(clippy::needless_range_loop)]
fn passes_over_growing_constants_dual(x: &[Dual<4>]) -> Dual<4> {
    let k = Dual::<4>::cst;
    let mut idx = vec![0usize; 2];
    let mut w = vec![0.5; 2];
    let mut s = k(0.0);
    for i in 0..x.len() {
        for j in 0..idx.len() {
            s = s + x[i] * k(idx[j] as f64 + 1.0);
        }
        for j in 0..w.len() {
            s = s + x[i] * k(w[j]) * s.sin();
        }
        idx.push(i);
        w.push(1.0);
        w[0] += 1.0;
    }
    s
}

#[test]
fn loops_over_a_changing_length_are_counted() {
    check_against_duals(
        "passes_over_growing_constants",
        &|p| passes_over_growing_constants(p),
        &|p| passes_over_growing_constants_grad(p),
        &|p, d| passes_over_growing_constants_adjoint(p, d),
        &|p| passes_over_growing_constants_dual(p),
        true,
    );
}

/// Nests of loops whose tapes are reserved before the outermost loop that
/// can count them: inner ranges that read the outer binding, a length
/// measured inside the outer body, an inner loop inside an `if`, and a range
/// that cannot be evaluated ahead (`len - 1` when the loop around never
/// runs).
#[differentiate]
#[allow(clippy::needless_range_loop)] // The index loops are the case.
fn nested_tapes(x: &[f64], m: usize) -> f64 {
    let mut s = 0.5;
    for i in 0..x.len() {
        for j in 0..i {
            s = (s * 0.5 + x[j] * x[i]).sin();
        }
        let mut w = vec![0.0; i + 1];
        for b in 0..w.len() {
            w[b] = x[i] * b as f64;
        }
        for a in 0..2 {
            for b in 0..w.len() {
                s = (s * 0.5 + w[b] * (a as f64 + 1.0)).sin();
            }
        }
        if x[i] > 0.0 {
            for j in 0..x.len() {
                s = (s * 0.5 + x[j]).sin();
            }
        }
    }
    for _ in 0..m {
        for j in 0..x.len() - 1 {
            s = (s + x[j]).sin();
        }
    }
    s
}

#[allow(clippy::needless_range_loop)]
fn nested_tapes_dual(x: &[Dual<4>], m: usize) -> Dual<4> {
    let k = Dual::<4>::cst;
    let mut s = k(0.5);
    for i in 0..x.len() {
        for j in 0..i {
            s = (s * 0.5 + x[j] * x[i]).sin();
        }
        let mut w = vec![k(0.0); i + 1];
        for b in 0..w.len() {
            w[b] = x[i] * k(b as f64);
        }
        for a in 0..2 {
            for b in 0..w.len() {
                s = (s * k(0.5) + w[b] * k(a as f64 + 1.0)).sin();
            }
        }
        if x[i].v > 0.0 {
            for j in 0..x.len() {
                s = (s * k(0.5) + x[j]).sin();
            }
        }
    }
    for _ in 0..m {
        for j in 0..x.len() - 1 {
            s = (s + x[j]).sin();
        }
    }
    s
}

#[test]
fn nested_loops_reserve_their_tapes_ahead() {
    for m in [0, 2, 3] {
        check_against_duals(
            "nested_tapes",
            &|p| nested_tapes(p, m),
            &|p| nested_tapes_grad(p, m),
            &|p, d| nested_tapes_adjoint(p, m, d),
            &|p| nested_tapes_dual(p, m),
            true,
        );
    }
    // No point and no pass: `x.len() - 1` is never evaluated.
    assert_eq!(nested_tapes_grad(&[], 0), (0.5, vec![]));
}

/// Element stores whose old element the reverse sweep may or may not read
/// again: a buffer filled, then read (nothing to record); read before it is
/// overwritten in the same loop, or in an earlier statement, or by an
/// earlier pass of an enclosing loop (recorded).
#[differentiate]
#[allow(clippy::needless_range_loop)] // The index loops are the case.
fn stores_read_backwards(x: &[f64]) -> f64 {
    let n = x.len();
    let mut fill = vec![0.0; n];
    for i in 0..n {
        fill[i] = x[i].sin();
    }
    let mut s = 0.0;
    for i in 0..n {
        s += fill[i] * fill[(i + 1) % n];
    }
    let mut run = vec![0.25; n];
    for i in 0..n {
        s += run[i] * x[i];
        run[i] = s.cos();
    }
    let early = run[0] * x[0];
    run[0] = x[1] * 3.0;
    s += early + run[0] * run[1];
    let mut passes = vec![0.5; n];
    for _ in 0..3 {
        for i in 0..n {
            passes[i] = passes[i] * x[i] + 0.1;
        }
    }
    if x[0] > 0.0 {
        passes[1] = s.sin();
    } else {
        s += passes[1] * 2.0;
    }
    s + passes[0] * passes[1] + passes[n - 1]
}

fn stores_read_backwards_dual(x: &[Dual<4>]) -> Dual<4> {
    let k = Dual::<4>::cst;
    let n = x.len();
    let mut fill = vec![k(0.0); n];
    for i in 0..n {
        fill[i] = x[i].sin();
    }
    let mut s = k(0.0);
    for i in 0..n {
        s = s + fill[i] * fill[(i + 1) % n];
    }
    let mut run = vec![k(0.25); n];
    for i in 0..n {
        s = s + run[i] * x[i];
        run[i] = (s + k(std::f64::consts::FRAC_PI_2)).sin();
    }
    let early = run[0] * x[0];
    run[0] = x[1] * k(3.0);
    s = s + early + run[0] * run[1];
    let mut passes = vec![k(0.5); n];
    for _ in 0..3 {
        for i in 0..n {
            passes[i] = passes[i] * x[i] + k(0.1);
        }
    }
    if x[0].v > 0.0 {
        passes[1] = s.sin();
    } else {
        s = s + passes[1] * k(2.0);
    }
    s + passes[0] * passes[1] + passes[n - 1]
}

#[test]
fn stores_record_what_is_read_backwards() {
    check_against_duals(
        "stores_read_backwards",
        &|p| stores_read_backwards(p),
        &|p| stores_read_backwards_grad(p),
        &|p, d| stores_read_backwards_adjoint(p, d),
        &|p| stores_read_backwards_dual(p),
        false,
    );
}

/// Arrays repeating a differentiated value: a fixed array, a `Vec` of an
/// expression, one per iteration of a loop, one repeating an element of the
/// array it replaces, and one re-created in a branch.
#[differentiate(tangent)]
#[allow(clippy::useless_vec)]
fn repeated_values(p: &[f64]) -> f64 {
    let mut s = [p[0].sin(); 3];
    s[1] *= p[1];
    let mut t = vec![p[2] * p[3]; p.len()];
    t[0] += p[1];
    t = vec![t[0]; p.len() + 1];
    t[2] -= p[0];
    let mut acc = 0.0;
    for i in 0..p.len() {
        let w = vec![p[i]; 2];
        acc += w[0] * w[1] + t[i] * s[i % 3];
    }
    let mut u = vec![acc; 3];
    if p[3] > 0.0 {
        u = vec![p[3].exp(); 2];
    }
    u[1] * p[0] + u.iter().sum::<f64>() + t[4]
}

fn repeated_values_dual(p: &[Dual<4>]) -> Dual<4> {
    let mut s = [p[0].sin(); 3];
    s[1] = s[1] * p[1];
    let mut t = vec![p[2] * p[3]; p.len()];
    t[0] = t[0] + p[1];
    t = vec![t[0]; p.len() + 1];
    t[2] = t[2] - p[0];
    let mut acc = Dual::cst(0.0);
    for i in 0..p.len() {
        let w = [p[i]; 2];
        acc = acc + (w[0] * w[1] + t[i] * s[i % 3]);
    }
    let mut u = vec![acc; 3];
    if p[3].v > 0.0 {
        u = vec![p[3].exp(); 2];
    }
    u[1] * p[0] + u.iter().copied().sum::<Dual<4>>() + t[4]
}

#[test]
fn arrays_repeating_a_differentiated_value() {
    check_against_duals(
        "repeated_values",
        &|p| repeated_values(p),
        &|p| repeated_values_grad(p),
        &|p, d| repeated_values_adjoint(p, d),
        &|p| repeated_values_dual(p),
        true,
    );
    // The tangent along a direction is the gradient's dot product with it.
    let dir = [0.7, -1.3, 0.4, 2.1];
    for x in [[0.3, -0.7, 1.1, 0.2], [-1.2, 0.4, 0.9, -0.5]] {
        let duals: Vec<Dual<4>> = (0..4).map(|i| Dual::var(x[i], i)).collect();
        let d = repeated_values_dual(&duals);
        let want: f64 = (0..4).map(|i| d.d[i] * dir[i]).sum();
        let (v, t) = repeated_values_tangent(&x, &dir);
        assert_eq!(v.to_bits(), repeated_values(&x).to_bits());
        assert!(
            close(t, want, 1e-12, 1e-12),
            "tangent {t} against {want} at {x:?}"
        );
    }
}

/// Blocks and `if`s holding `vec![..]`, assigned (`=`, `+=`) to variables
/// declared before them, with constant and differentiated values.
#[differentiate]
#[allow(clippy::useless_vec, clippy::needless_range_loop)]
fn assigned_blocks_with_buffers(p: &[f64]) -> f64 {
    let mut c = 0.5;
    if p[0] > 0.0 {
        c = {
            let s: Vec<f64> = vec![1.5; p.len()];
            s[0] * 2.0 + s[3]
        };
    }
    let mut d = 1.0;
    d += {
        let s = vec![0.25; 2];
        s[1] * 3.0
    };
    let e = if p.len() > 2 {
        let s: Vec<f64> = vec![2.0; p.len()];
        s[2] - 0.5
    } else {
        1.0
    };
    let mut g = p[1];
    g = if p[2] > 0.5 {
        let s = vec![p[3]; 2];
        s[0] * s[1] + g
    } else {
        let s = [g, p[0]];
        s[0] - s[1]
    };
    let mut h = 0.0;
    for k in 0..p.len() {
        h += {
            let s = vec![p[k] * c; 2];
            s[0] + s[1] * d
        };
    }
    c * p[0] + d * p[1] + e * p[2] + g * h
}

fn assigned_blocks_with_buffers_dual(p: &[Dual<4>]) -> Dual<4> {
    let k = Dual::<4>::cst;
    let mut c = 0.5;
    if p[0].v > 0.0 {
        c = 1.5 * 2.0 + 1.5;
    }
    let d = 1.0 + 0.25 * 3.0;
    let e = 2.0 - 0.5;
    let g = if p[2].v > 0.5 {
        p[3] * p[3] + p[1]
    } else {
        p[1] - p[0]
    };
    let mut h = k(0.0);
    for pk in p {
        let s = *pk * k(c);
        h = h + (s + s * k(d));
    }
    k(c) * p[0] + k(d) * p[1] + k(e) * p[2] + g * h
}

#[test]
fn assigned_blocks_holding_buffers() {
    check_against_duals(
        "assigned_blocks_with_buffers",
        &|p| assigned_blocks_with_buffers(p),
        &|p| assigned_blocks_with_buffers_grad(p),
        &|p, d| assigned_blocks_with_buffers_adjoint(p, d),
        &|p| assigned_blocks_with_buffers_dual(p),
        true,
    );
}

/// Maps one after another, and loops over a map.
#[differentiate]
fn chained_maps(p: &[f64]) -> f64 {
    let a: f64 = p.iter().map(|v| v * 2.0).map(|d| d * d).sum();
    let b: f64 = p
        .iter()
        .zip(&p[1..])
        .map(|(u, w)| u - w)
        .map(|d| d.sin())
        .map(|e: f64| e * e)
        .sum();
    let c: Vec<f64> = p.iter().map(|&v| v + 0.5).map(|d| d.exp()).collect();
    let mut s = 0.0;
    for v in p.iter().map(|a| a * c[0]) {
        if v > 1.0 {
            continue;
        }
        s += v * v;
    }
    for d in p.iter().map(|v| v * 0.5).map(|t| t.exp()) {
        s += d;
    }
    a + b + c[1] * s
}

fn chained_maps_dual(p: &[Dual<4>]) -> Dual<4> {
    let k = Dual::<4>::cst;
    let mut a = k(0.0);
    for v in p {
        let d = *v * 2.0;
        a = a + d * d;
    }
    let mut b = k(0.0);
    for (u, w) in p.iter().zip(&p[1..]) {
        let e = (*u - *w).sin();
        b = b + e * e;
    }
    let c: Vec<Dual<4>> = p.iter().map(|v| (*v + 0.5).exp()).collect();
    let mut s = k(0.0);
    for a in p {
        let v = *a * c[0];
        if v.v > 1.0 {
            continue;
        }
        s = s + v * v;
    }
    for v in p {
        s = s + (*v * 0.5).exp();
    }
    a + b + c[1] * s
}

#[test]
fn maps_one_after_another_and_loops_over_a_map() {
    check_against_duals(
        "chained_maps",
        &|p| chained_maps(p),
        &|p| chained_maps_grad(p),
        &|p, d| chained_maps_adjoint(p, d),
        &|p| chained_maps_dual(p),
        false,
    );
}

/// A map of a function named by a path (`f64::exp`, a local closure), a
/// local closure over slices, and arrays destructured by `let [a, b] = ..`.
#[differentiate]
fn paths_closures_and_array_patterns(p: &[f64]) -> f64 {
    let sq = |v: f64| v * v;
    let a: f64 = p.iter().copied().map(f64::exp).sum();
    let b: f64 = p.iter().copied().map(sq).map(f64::sin).sum();
    let dot = |u: &[f64], w: &[f64]| -> f64 { u.iter().zip(w).map(|(s, t)| s * t).sum() };
    let c = dot(p, &p[1..]);
    let pair = [p[0] * p[1], p[2].sin()];
    let [mut e, f] = pair;
    e += f;
    let [g, h] = [f, e];
    let [h, g] = [g, h];
    a + b * c + e * f + g / (1.5 + h * h)
}

fn paths_closures_and_array_patterns_dual(p: &[Dual<4>]) -> Dual<4> {
    let k = Dual::<4>::cst;
    let mut a = k(0.0);
    let mut b = k(0.0);
    for v in p {
        a = a + v.exp();
        b = b + (*v * *v).sin();
    }
    let mut c = k(0.0);
    for (s, t) in p.iter().zip(&p[1..]) {
        c = c + *s * *t;
    }
    let f = p[2].sin();
    let e = p[0] * p[1] + f;
    let (g, h) = (e, f);
    a + b * c + e * f + g / (h * h + 1.5)
}

#[test]
fn maps_of_paths_closures_over_slices_and_array_patterns() {
    check_against_duals(
        "paths_closures_and_array_patterns",
        &|p| paths_closures_and_array_patterns(p),
        &|p| paths_closures_and_array_patterns_grad(p),
        &|p, d| paths_closures_and_array_patterns_adjoint(p, d),
        &|p| paths_closures_and_array_patterns_dual(p),
        false,
    );
}

/// The first and the last element read through `Option`: `*x.last().unwrap()`,
/// `.first().copied().unwrap()`, `.last().cloned().expect(..)`.
#[differentiate]
fn ends_of_arrays(p: &[f64]) -> f64 {
    let v: Vec<f64> = p.iter().map(|a| a.sin()).collect();
    let mut s = *p.last().unwrap() * p[0] + p.first().copied().unwrap();
    if *v.first().unwrap() > 0.0 {
        s += v.last().cloned().expect("four values") * *v.first().unwrap();
    }
    s
}

fn ends_of_arrays_dual(p: &[Dual<4>]) -> Dual<4> {
    let v: Vec<Dual<4>> = p.iter().map(|a| a.sin()).collect();
    let mut s = p[3] * p[0] + p[0];
    if v[0].v > 0.0 {
        s = s + v[3] * v[0];
    }
    s
}

#[test]
fn first_and_last_elements() {
    check_against_duals(
        "ends_of_arrays",
        &|p| ends_of_arrays(p),
        &|p| ends_of_arrays_grad(p),
        &|p, d| ends_of_arrays_adjoint(p, d),
        &|p| ends_of_arrays_dual(p),
        true,
    );
}

/// Filters over pairs (`enumerate`, `zip`) before a map and a reduction, the
/// patterns `(i, _)`, `&(i, v)`, `(a, b)` with `**a`, and `(i, &v)`.
#[differentiate]
fn filtered_pairs(p: &[f64]) -> f64 {
    let q: Vec<f64> = p.iter().map(|v| v * 0.5 + 0.13).collect();
    let even: f64 = p
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, v)| v * v)
        .sum();
    let above: f64 = p
        .iter()
        .zip(&q)
        .filter(|(a, b)| **a > **b)
        .map(|(a, b)| a - b)
        .sum();
    let prod: f64 = q
        .iter()
        .enumerate()
        .filter(|&(i, v)| i > 0 && *v < 0.6)
        .map(|(i, &v)| v * i as f64)
        .product();
    even * above + prod
}

fn filtered_pairs_dual(p: &[Dual<4>]) -> Dual<4> {
    let k = Dual::<4>::cst;
    let q: Vec<Dual<4>> = p.iter().map(|v| *v * 0.5 + 0.13).collect();
    let mut even = k(-0.0);
    let mut above = k(-0.0);
    let mut prod = k(1.0);
    for i in 0..p.len() {
        if i % 2 == 0 {
            even = even + p[i] * p[i];
        }
        if p[i].v > q[i].v {
            above = above + (p[i] - q[i]);
        }
        if i > 0 && q[i].v < 0.6 {
            prod = prod * (q[i] * i as f64);
        }
    }
    even * above + prod
}

#[test]
fn filters_over_pairs() {
    check_against_duals(
        "filtered_pairs",
        &|p| filtered_pairs(p),
        &|p| filtered_pairs_grad(p),
        &|p, d| filtered_pairs_adjoint(p, d),
        &|p| filtered_pairs_dual(p),
        true,
    );
}

/// A map before a filter (or `take_while`) in a reduction: the filter tests
/// the mapped values.
#[differentiate]
fn mapped_then_filtered(p: &[f64]) -> f64 {
    let a: f64 = p.iter().map(|v| v * 2.0 - 0.3).filter(|d| *d > 0.0).sum();
    let b: f64 = p
        .iter()
        .map(|&v| v.sin())
        .filter(|d| *d < 0.5)
        .map(|d| d * d)
        .sum();
    let c: f64 = p.iter().map(|v| v * a).take_while(|d| *d < 3.0).product();
    a * b + c
}

fn mapped_then_filtered_dual(p: &[Dual<4>]) -> Dual<4> {
    let k = Dual::<4>::cst;
    let (mut a, mut b, mut c) = (k(-0.0), k(-0.0), k(1.0));
    for v in p {
        let d = *v * 2.0 - 0.3;
        if d.v > 0.0 {
            a = a + d;
        }
        let s = v.sin();
        if s.v < 0.5 {
            b = b + s * s;
        }
    }
    for v in p {
        let d = *v * a;
        if d.v >= 3.0 {
            break;
        }
        c = c * d;
    }
    a * b + c
}

#[test]
fn maps_before_filters() {
    check_against_duals(
        "mapped_then_filtered",
        &|p| mapped_then_filtered(p),
        &|p| mapped_then_filtered_grad(p),
        &|p, d| mapped_then_filtered_adjoint(p, d),
        &|p| mapped_then_filtered_dual(p),
        true,
    );
}

/// Maps and loops over a map whose closures reuse one name (`|v| .. |v|`).
#[differentiate]
fn maps_reusing_a_name(p: &[f64]) -> f64 {
    let a: f64 = p.iter().map(|v| v * 2.0).map(|v| v.sin()).sum();
    let mut s = 0.0;
    for v in p.iter().map(|v| v * a) {
        s += v * v;
    }
    a * s
}

fn maps_reusing_a_name_dual(p: &[Dual<4>]) -> Dual<4> {
    let k = Dual::<4>::cst;
    let mut a = k(0.0);
    for v in p {
        a = a + (*v * 2.0).sin();
    }
    let mut s = k(0.0);
    for v in p {
        let w = *v * a;
        s = s + w * w;
    }
    a * s
}

#[test]
fn maps_whose_closures_reuse_a_name() {
    check_against_duals(
        "maps_reusing_a_name",
        &|p| maps_reusing_a_name(p),
        &|p| maps_reusing_a_name_grad(p),
        &|p, d| maps_reusing_a_name_adjoint(p, d),
        &|p| maps_reusing_a_name_dual(p),
        false,
    );
}

/// Views with their type written (`let row: &[f64] = &x[a..b];`).
#[differentiate]
#[allow(clippy::redundant_slicing)]
fn typed_views(p: &[f64]) -> f64 {
    let head: &[f64] = &p[..2];
    let tail: &[f64] = &p[2..];
    let whole: &[f64] = &p[..];
    head.iter().zip(tail).map(|(a, b)| a * b).sum::<f64>().sin() + whole[3] * head[1]
}

fn typed_views_dual(p: &[Dual<4>]) -> Dual<4> {
    let s = Dual::cst(-0.0) + p[0] * p[2] + p[1] * p[3];
    s.sin() + p[3] * p[1]
}

#[test]
fn views_with_their_type_written() {
    check_against_duals(
        "typed_views",
        &|p| typed_views(p),
        &|p| typed_views_grad(p),
        &|p, d| typed_views_adjoint(p, d),
        &|p| typed_views_dual(p),
        false,
    );
}
