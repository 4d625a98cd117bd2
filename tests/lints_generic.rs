//! Generated code for generic functions (`T: num_traits::Float`) must be
//! warning-free too: this crate root denies every rustc warning and every
//! default clippy lint (`cargo test --test lints_generic`, `cargo clippy
//! --all-targets`), over everything the generic emitter writes differently
//! (`T::zero()`, `T::from(c).unwrap()`, `d = d + e`, generics on every
//! generated function): adjoint buffers, tapes in loops, `wrt`, early
//! returns, calls, the tangent and Hessian functions and a vector output.
//! Names are the hostile ones of `tests/lints.rs` (`d_x`, `d_out`, `out`,
//! `t1`). Each gradient is compared with one derived by hand.

#![deny(warnings)]
#![deny(clippy::all)]

use gradmacro::differentiate;
use num_traits::Float;

#[track_caller]
fn near<T: Float + std::fmt::Debug>(what: &str, got: T, want: T) {
    let tol = T::epsilon() * T::from(64.0).unwrap() * want.abs().max(T::one());
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got:?}, want {want:?}"
    );
}

/// Parameters named like adjoints and seeds: f = d_x · x² + d_out.
#[differentiate(hessian)]
fn named<T: Float>(x: T, d_x: T, d_out: T) -> T {
    let t1 = x * x;
    d_x * t1 + d_out
}

/// A value overwritten in a loop (taped), with an early return:
/// f = Π_i (1 + w_i x) unless it exceeds `cap`, then `cap`.
#[differentiate(wrt(x))]
fn product<T>(x: T, w: &[T], cap: T) -> T
where
    T: Float + std::fmt::Debug,
{
    let mut out = T::one();
    for wi in w.iter() {
        out = out * (T::one() + *wi * x);
        if out > cap {
            return cap;
        }
    }
    out
}

/// Calls a generic differentiated function; forward mode and Hessians.
#[differentiate(hessian)]
fn calls<T: Float>(x: T, y: T) -> T {
    named(x, y, y) * y.exp()
}

/// A vector output with an array parameter.
#[differentiate(tangent)]
fn scaled<T: Float>(x: T, w: &[T]) -> Vec<T> {
    let mut v = Vec::new();
    for wi in w.iter() {
        v.push(*wi * x.sin());
    }
    v
}

fn check<T: Float + std::fmt::Debug>() {
    let c = |v: f64| T::from(v).unwrap();
    let (x, y, z) = (c(1.25), c(-0.5), c(2.0));

    let (v, (dx, dd, dout)) = named_grad(x, y, z);
    assert_eq!(v, named(x, y, z));
    near("named d/dx", dx, c(2.0) * y * x);
    near("named d/d_x", dd, x * x);
    near("named d/d_out", dout, T::one());

    let w = [c(0.5), c(-0.25), c(1.5)];
    for cap in [c(100.0), c(1.5)] {
        let (v, dx) = product_grad(x, &w, cap);
        assert_eq!(v, product(x, &w, cap));
        // By hand: the factors up to where the cap is hit.
        let mut p = T::one();
        let mut d = T::zero();
        let mut capped = false;
        for &wi in &w {
            d = d * (T::one() + wi * x) + p * wi;
            p = p * (T::one() + wi * x);
            if p > cap {
                capped = true;
                break;
            }
        }
        near("product d/dx", dx, if capped { T::zero() } else { d });
    }

    // calls = (y x² + y) e^y
    let (v, (gx, gy)) = calls_grad(x, y);
    assert_eq!(v, calls(x, y));
    near("calls d/dx", gx, c(2.0) * y * x * y.exp());
    near(
        "calls d/dy",
        gy,
        (x * x + T::one() + y * x * x + y) * y.exp(),
    );
    let (_, _, h) = calls_hessian(x, y);
    near("calls H_xx", h[0][0], c(2.0) * y * y.exp());
    near("calls H_xy", h[0][1], c(2.0) * x * (T::one() + y) * y.exp());
    near(
        "calls H_yy",
        h[1][1],
        (x * x + T::one()) * (c(2.0) + y) * y.exp(),
    );
    let (_, dot) = calls_tangent(x, y, T::one(), T::zero());
    near("calls tangent", dot, gx);

    let (v, j) = scaled_jacobian(x, &w);
    assert_eq!(v, scaled(x, &w));
    for (k, row) in j.iter().enumerate() {
        near("scaled J x", row[0], w[k] * x.cos());
        for (m, &e) in row[1..].iter().enumerate() {
            near("scaled J w", e, if m == k { x.sin() } else { T::zero() });
        }
    }
    let (_, t) = scaled_tangent(x, &w, T::one(), &[T::zero(); 3]);
    near("scaled tangent", t[1], w[1] * x.cos());
}

#[test]
fn generic_code_is_lint_free_and_right() {
    check::<f64>();
    check::<f32>();
}
