//! Loops of ten million iterations with a loop-carried value: whatever the
//! reverse sweep records per iteration must live on the heap, so the
//! gradient comes out right on the default (test thread) stack, in a few
//! seconds even in a debug build.
//!
//! The oracles are closed forms. The generated value and gradient are sums or
//! products of ten million rounded terms, so they carry an accumulated
//! rounding error of up to about `1e7 * eps ~ 2e-9` relative (typically far
//! less). The tolerance sits above that and below the error of a single
//! iteration lost or repeated by the reverse sweep (each of the ten million
//! contributes about `1e-7` of every gradient checked here). The values are
//! compared bit for bit with the undifferentiated function.

// The loop-carried updates are spelled `s = s * c` on purpose.
#![allow(clippy::assign_op_pattern)]

mod support;

use gradmacro::differentiate;

/// The number of iterations.
const N: i32 = 10_000_000;

/// Relative tolerance against the closed forms.
const REL: f64 = 1e-8;

/// The seed passed to every `f_adjoint`.
const D_OUT: f64 = 2.0;

#[track_caller]
fn assert_close(what: &str, got: f64, want: f64) {
    support::assert_close(what, got, want, 0.0, REL);
}

#[differentiate]
fn compound(x: f64) -> f64 {
    let mut s = 1.0;
    for _ in 0..10_000_000 {
        s = s * (1.0 + x * 1e-9);
    }
    s
}

#[test]
fn ten_million_products() {
    // s = (1 + 1e-9 x)^N, ds/dx = N 1e-9 (1 + 1e-9 x)^(N - 1) = 0.01 s / (1 + 1e-9 x).
    for x in [-3.0, 0.5, 2.0] {
        let (value, grad) = compound_grad(x);
        assert_eq!(value.to_bits(), compound(x).to_bits(), "value at {x}");
        let base = 1.0 + x * 1e-9;
        assert_close(&format!("value at {x}"), value, base.powi(N));
        let want = f64::from(N) * 1e-9 * base.powi(N - 1);
        assert_close(&format!("derivative at {x}"), grad, want);
        assert_close(
            &format!("adjoint at {x}"),
            compound_adjoint(x, D_OUT),
            D_OUT * grad,
        );
    }
}

#[differentiate]
fn drift(x: f64, y: f64) -> f64 {
    let mut s = y;
    let mut n = 0;
    while n < 10_000_000 {
        s = s + x * 1e-7;
        n += 1;
    }
    s * y
}

#[test]
fn ten_million_sums_in_a_while_loop() {
    // s = y + N 1e-7 x = y + x, f = s y: df/dx = y, df/dy = s + y.
    for (x, y) in [(0.5, 1.5), (-2.0, 0.25)] {
        let (value, (gx, gy)) = drift_grad(x, y);
        assert_eq!(
            value.to_bits(),
            drift(x, y).to_bits(),
            "value at ({x}, {y})"
        );
        let s = y + x;
        assert_close(&format!("value at ({x}, {y})"), value, s * y);
        assert_close(&format!("d/dx at ({x}, {y})"), gx, y);
        assert_close(&format!("d/dy at ({x}, {y})"), gy, s + y);
        let (ax, ay) = drift_adjoint(x, y, D_OUT);
        assert_close(&format!("adjoint x at ({x}, {y})"), ax, D_OUT * gx);
        assert_close(&format!("adjoint y at ({x}, {y})"), ay, D_OUT * gy);
    }
}

#[differentiate]
fn relax(x: f64) -> f64 {
    let mut s = 0.0;
    let mut k = 0;
    loop {
        s = s * (1.0 - 1e-7) + x * 1e-7;
        k += 1;
        if k == 10_000_000 {
            break;
        }
    }
    s
}

#[test]
fn ten_million_iterations_of_a_loop_with_break() {
    // s_N = x (1 - (1 - 1e-7)^N): linear in x.
    for x in [0.75, -4.0] {
        let (value, grad) = relax_grad(x);
        assert_eq!(value.to_bits(), relax(x).to_bits(), "value at {x}");
        let want = 1.0 - (1.0f64 - 1e-7).powi(N);
        assert_close(&format!("value at {x}"), value, x * want);
        assert_close(&format!("derivative at {x}"), grad, want);
        assert_close(
            &format!("adjoint at {x}"),
            relax_adjoint(x, D_OUT),
            D_OUT * grad,
        );
    }
}
