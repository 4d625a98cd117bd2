//! Branches inside loops: a condition that reads only values that cannot have
//! changed (parameters, values computed again from them, the loop index) is
//! evaluated again by the reverse sweep; any other is recorded. Either way the
//! gradient is the derivative of the branches taken, checked here against
//! derivatives written by hand; and a condition with an effect runs exactly
//! as often as in the function itself.

// Index loops are what is tested: the reverse sweep replays the index.
#![allow(clippy::needless_range_loop)]

use gradmacro::differentiate;
use std::cell::Cell;

mod support;

/// Derivatives written by hand agree with the generated ones to rounding.
#[track_caller]
fn assert_close(got: f64, want: f64) {
    support::assert_close("derivative", got, want, 1e-12, 1e-12);
}

/// The condition reads `t`, computed from the inputs in the same iteration.
#[differentiate]
fn hinge_sum(x: f64, w: &[f64]) -> f64 {
    let mut s = 0.0;
    for k in 0..w.len() {
        let t = w[k] * x;
        if t > 0.0 {
            s += t * t;
        } else {
            s -= 0.5 * t;
        }
    }
    s
}

/// The condition reads a parameter and an element of another.
#[differentiate]
fn clipped(x: f64, w: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..w.len() {
        if x > w[i] {
            s += (x - w[i]).powi(2);
        }
    }
    s
}

/// The condition reads the accumulator, which changes every iteration: the
/// branch taken must be recorded.
#[differentiate]
fn saturating(x: f64, w: &[f64]) -> f64 {
    let mut s = 0.0;
    for k in 0..w.len() {
        if s < 1.0 {
            s += w[k] * x;
        } else {
            s += 0.1 * w[k] * x;
        }
    }
    s
}

thread_local! {
    static CALLS: Cell<usize> = const { Cell::new(0) };
}

/// Counts its calls: a condition with an effect.
fn tick(v: f64) -> f64 {
    CALLS.with(|c| c.set(c.get() + 1));
    v
}

#[differentiate]
fn counted(x: f64, w: &[f64]) -> f64 {
    let mut s = 0.0;
    for k in 0..w.len() {
        if tick(w[k]) > 0.0 {
            s += w[k] * x * x;
        }
    }
    s
}

const POINTS: [f64; 4] = [-1.3, -0.2, 0.45, 2.0];
const W: [f64; 5] = [0.5, -1.0, 2.0, -0.25, 1.5];

#[test]
fn a_condition_on_values_computed_again() {
    for x in POINTS {
        let (value, (dx, dw)) = hinge_sum_grad(x, &W);
        assert_eq!(value.to_bits(), hinge_sum(x, &W).to_bits());
        let (mut want_dx, mut want_dw) = (0.0, [0.0; 5]);
        for (k, wk) in W.iter().enumerate() {
            let t = wk * x;
            if t > 0.0 {
                want_dx += 2.0 * t * wk;
                want_dw[k] = 2.0 * t * x;
            } else {
                want_dx -= 0.5 * wk;
                want_dw[k] = -0.5 * x;
            }
        }
        assert_close(dx, want_dx);
        for k in 0..5 {
            assert_close(dw[k], want_dw[k]);
        }
    }
}

#[test]
fn a_condition_on_parameters() {
    for x in POINTS {
        let (value, (dx, dw)) = clipped_grad(x, &W);
        assert_eq!(value.to_bits(), clipped(x, &W).to_bits());
        let mut want_dx = 0.0;
        for (k, wk) in W.iter().enumerate() {
            let want = if x > *wk { 2.0 * (x - wk) } else { 0.0 };
            want_dx += want;
            assert_close(dw[k], -want);
        }
        assert_close(dx, want_dx);
    }
}

#[test]
fn a_condition_on_a_changing_value() {
    for x in POINTS {
        let (value, dx) = {
            let (v, (dx, _)) = saturating_grad(x, &W);
            (v, dx)
        };
        assert_eq!(value.to_bits(), saturating(x, &W).to_bits());
        let (mut s, mut want) = (0.0, 0.0);
        for wk in W {
            if s < 1.0 {
                s += wk * x;
                want += wk;
            } else {
                s += 0.1 * wk * x;
                want += 0.1 * wk;
            }
        }
        assert_close(dx, want);
    }
}

#[test]
fn a_condition_with_an_effect_runs_once_per_iteration() {
    for x in POINTS {
        CALLS.with(|c| c.set(0));
        let (value, (dx, _)) = counted_grad(x, &W);
        assert_eq!(CALLS.with(Cell::get), W.len());
        assert_eq!(value.to_bits(), counted(x, &W).to_bits());
        let want: f64 = W.iter().filter(|w| **w > 0.0).map(|w| 2.0 * w * x).sum();
        assert_close(dx, want);
    }
}

/// A loop over elements: the condition reads the element and a value
/// computed before the loop.
#[differentiate]
fn above(x: &[f64], a: f64) -> f64 {
    let g = a.tanh();
    let mut s = 0.0;
    for &v in x.iter() {
        if v > g {
            s += v * a;
        } else {
            s -= v * v;
        }
    }
    s
}

#[test]
fn a_condition_on_elements() {
    for a in POINTS {
        let (value, (dx, da)) = above_grad(&W, a);
        assert_eq!(value.to_bits(), above(&W, a).to_bits());
        let g = a.tanh();
        let want_da: f64 = W.iter().filter(|v| **v > g).sum();
        assert_close(da, want_da);
        for (k, v) in W.iter().enumerate() {
            assert_close(dx[k], if *v > g { a } else { -2.0 * v });
        }
    }
}
