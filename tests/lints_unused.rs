//! A private function whose generated functions alone are used is not dead
//! code: using the macro as intended must need no `#[allow(dead_code)]`.
//! The crate root denies every warning, so a `function is never used` for
//! `p` or `q` fails the build.

#![deny(warnings)]
#![deny(clippy::all)]

use gradmacro::differentiate;

#[differentiate]
fn p(x: f64, y: f64) -> f64 {
    x.atan2(y)
}

#[differentiate(wrt(x))]
fn q(x: f64, y: f64) -> f64 {
    x * y.sin()
}

mod support;

/// Derivatives written by hand agree with the generated ones to rounding.
#[track_caller]
fn assert_close(got: f64, want: f64) {
    support::assert_close("derivative", got, want, 1e-12, 1e-12);
}

#[test]
fn only_the_gradient_of_a_private_function_is_used() {
    for (x, y) in [(1.0, 2.0), (-0.5, 0.25), (3.0, -1.5)] {
        let (value, (dx, dy)) = p_grad(x, y);
        assert_eq!(value.to_bits(), f64::atan2(x, y).to_bits());
        let r2 = x * x + y * y;
        assert_close(dx, y / r2);
        assert_close(dy, -x / r2);
    }
}

#[test]
fn only_the_adjoint_of_a_private_function_with_wrt_is_used() {
    for (x, y) in [(1.0, 2.0), (-0.5, 0.25), (3.0, -1.5)] {
        assert_close(q_adjoint(x, y, 2.0), 2.0 * y.sin());
    }
}

/// A float made afresh each iteration and read only by a condition that
/// leaves the loop: the reverse sweep has nothing to do with it and must not
/// compute it again unread (`unused_variables` under `deny(warnings)`).
#[differentiate]
fn leaves_on_a_flag(x: f64) -> f64 {
    let mut s = x;
    let mut k = 0;
    while k < 4 {
        k += 1;
        let limit = || 3.0;
        let b: f64 = limit();
        s *= x;
        if b >= 2.5 {
            break;
        }
    }
    s
}

#[test]
fn a_value_read_only_by_a_loop_exit_is_not_recomputed_unread() {
    for x in [0.5, -1.25, 2.0] {
        let (value, dx) = leaves_on_a_flag_grad(x);
        assert_eq!(value.to_bits(), leaves_on_a_flag(x).to_bits());
        // x², leaving after the first multiplication.
        assert_close(dx, 2.0 * x);
    }
}
