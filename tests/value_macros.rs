//! `assert!`, `assert_eq!`, `debug_assert!`, `println!`/`eprintln!` in a
//! differentiated body: kept, evaluated on values, no derivative of their own.
#![deny(warnings)]

mod support;

use gradmacro::differentiate;
use support::{assert_bits, assert_close};

#[differentiate(tangent, hessian)]
#[allow(clippy::needless_range_loop)]
fn checked(x: f64, w: &[f64], n: usize) -> f64 {
    assert!(n <= w.len(), "n = {} is longer than w ({})", n, w.len());
    assert_eq!(w.len(), 3);
    let mut s = 0.0;
    for i in 0..n {
        s += w[i] * x.sin();
        debug_assert!(s.is_finite());
    }
    eprintln!("checked: s = {} at x = {}", s, x);
    s * x
}

#[test]
fn macros_are_kept_and_do_not_change_the_derivative() {
    let w = [0.5, -1.0, 2.0];
    for x in [-0.7, 0.3, 1.9] {
        let (value, g) = checked_grad(x, &w, 2);
        assert_bits("value", value, checked(x, &w, 2));
        let k = w[0] + w[1];
        let (gx, gw) = g;
        assert_close("d/dx", gx, k * (x.sin() + x * x.cos()), 1e-14, 1e-14);
        assert_close("d/dw0", gw[0], x.sin() * x, 1e-14, 1e-14);
        assert_eq!(gw[2], 0.0);
        let (_, dot) = checked_tangent(x, &w, 2, 1.0, &[0.0; 3]);
        assert_close("tangent", dot, gx, 1e-14, 1e-14);
        let (_, _, h) = checked_hessian(x, &w, 2);
        assert_close(
            "Hxx",
            h[0][0],
            k * (2.0 * x.cos() - x * x.sin()),
            1e-13,
            1e-13,
        );
    }
}

#[test]
#[should_panic(expected = "n = 4 is longer than w (3)")]
fn a_failing_assertion_panics_in_the_gradient_too() {
    let _ = checked_grad(1.0, &[1.0, 2.0, 3.0], 4);
}
