//! Patterns on data in differentiated functions: `if let`, `let … else`,
//! and `match` arms binding parts of the value (`Some(n)`, `(a, _)`,
//! guards reading them), each against a derivative by hand at several
//! points, values bit-identical to the function's.

#![deny(warnings)]
#![deny(clippy::all)]

use gradmacro::differentiate;

mod support;

use support::{assert_bits, assert_close};

/// `if let` on an optional count.
#[differentiate(wrt(x))]
fn if_let(x: f64, k: Option<usize>) -> f64 {
    if let Some(n) = k {
        x * x * n as f64
    } else {
        x.sin()
    }
}

/// `let … else` leaving early.
#[differentiate(wrt(x))]
fn let_else(x: f64, v: &[usize]) -> f64 {
    let Some(&n) = v.first() else {
        return x;
    };
    x * x * n as f64
}

/// Arms binding parts, a guard reading one, a part bound `mut`.
#[differentiate(wrt(x))]
fn parts(x: f64, k: Option<usize>, pair: (i32, i32)) -> f64 {
    let a = match k {
        Some(n) if n > 2 => x * n as f64,
        Some(mut n) => {
            n += 1;
            x * x * n as f64
        }
        None => x,
    };
    let b = match pair {
        (p, 0) => x.exp() * p as f64,
        (p, q) => x * (p + q) as f64,
    };
    a + b
}

#[test]
fn if_let_on_data() {
    for x in [0.5, -1.25, 2.0] {
        let (v, d) = if_let_grad(x, Some(3));
        assert_bits("value", v, if_let(x, Some(3)));
        assert_close("d/dx", d, 6.0 * x, 1e-12, 1e-12);
        let (v, d) = if_let_grad(x, None);
        assert_bits("value", v, if_let(x, None));
        assert_close("d/dx", d, x.cos(), 1e-12, 1e-12);
    }
}

#[test]
fn let_else_on_data() {
    for x in [0.5, -1.25, 2.0] {
        let (v, d) = let_else_grad(x, &[4, 1]);
        assert_bits("value", v, let_else(x, &[4, 1]));
        assert_close("d/dx", d, 8.0 * x, 1e-12, 1e-12);
        let (v, d) = let_else_grad(x, &[]);
        assert_bits("value", v, let_else(x, &[]));
        assert_close("d/dx", d, 1.0, 1e-12, 1e-12);
    }
}

#[test]
fn match_arms_binding_parts() {
    for x in [0.5, -1.25, 2.0] {
        for (k, pair) in [(Some(5), (2, 0)), (Some(1), (3, 4)), (None, (-1, 2))] {
            let (v, d) = parts_grad(x, k, pair);
            assert_bits("value", v, parts(x, k, pair));
            let da = match k {
                Some(n) if n > 2 => n as f64,
                Some(n) => 2.0 * x * (n + 1) as f64,
                None => 1.0,
            };
            let db = match pair {
                (p, 0) => x.exp() * p as f64,
                (p, q) => (p + q) as f64,
            };
            assert_close("d/dx", d, da + db, 1e-12, 1e-12);
        }
    }
}

/// What the error for `while let` suggests: `loop` with `let … else`.
#[differentiate]
#[allow(clippy::while_let_loop)]
fn countdown(x: f64, n: u32) -> f64 {
    let mut k = n;
    let mut y = x;
    loop {
        let Some(m) = k.checked_sub(1) else { break };
        k = m;
        y *= x;
    }
    y
}

#[test]
fn loop_with_let_else_instead_of_while_let() {
    for x in [0.5, -1.25, 2.0] {
        let (v, d) = countdown_grad(x, 3);
        assert_bits("value", v, countdown(x, 3));
        assert_close("d/dx", d, 4.0 * x * x * x, 1e-12, 1e-12);
    }
}
