//! Patterns on data in differentiated functions: `if let`, `let … else`,
//! `while let`, and `match` arms binding parts of the value (`Some(n)`,
//! `(a, _)`, guards reading them), each against a derivative by hand at
//! several points, values bit-identical to the function's.

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

/// `loop` with `let … else`, what `while let` stands for.
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

/// `while let` on an integer, with `continue` (which evaluates the
/// scrutinee again) and a binding read in the body; in forward mode too.
#[differentiate(tangent)]
fn while_let_countdown(x: f64, n: u32) -> f64 {
    let mut k = n;
    let mut y = x;
    while let Some(m) = k.checked_sub(2) {
        k = m;
        if m % 4 == 1 {
            continue;
        }
        y = y * x + m as f64;
    }
    y
}

/// The same loop by hand: `y` as a polynomial in `x`, its derivative beside.
fn countdown_by_hand(x: f64, n: u32) -> (f64, f64) {
    let (mut k, mut y, mut dy) = (n, x, 1.0);
    while k >= 2 {
        k -= 2;
        if k % 4 != 1 {
            (y, dy) = (y * x + k as f64, dy * x + y);
        }
    }
    (y, dy)
}

/// `while let` popping a work list of indices (a passive `Vec`), and one
/// left by `break` on a test of a differentiated value.
#[differentiate(wrt(x))]
fn while_let_work_list(x: &[f64], scale: f64) -> f64 {
    let mut todo = vec![0usize];
    let mut s = 0.0;
    while let Some(i) = todo.pop() {
        s += x[i] * (i as f64 + scale);
        for c in [2 * i + 1, 2 * i + 2] {
            if c < x.len() {
                todo.push(c);
            }
        }
    }
    let mut t = s;
    let mut k = 0u32;
    while let Some(m) = k.checked_add(1) {
        if t.abs() >= 50.0 {
            break;
        }
        k = m;
        t *= 1.5;
    }
    t
}

#[test]
fn while_let_on_data() {
    for x in [0.5, -1.25, 2.0, 0.9] {
        for n in [0, 1, 6, 9, 13] {
            let (v, d) = while_let_countdown_grad(x, n);
            assert_bits("value", v, while_let_countdown(x, n));
            let (want, dwant) = countdown_by_hand(x, n);
            assert_bits("value by hand", v, want);
            assert_close("d/dx", d, dwant, 1e-12, 1e-12);
            let (tv, td) = while_let_countdown_tangent(x, n, -0.5);
            assert_bits("tangent value", tv, want);
            assert_close("tangent", td, -0.5 * dwant, 1e-12, 1e-12);
        }
    }
    let xs = [
        vec![0.5, -1.25, 2.0, 0.75, -0.3],
        vec![1.5, 0.2, -0.7, 3.1, 0.9, -2.2, 0.35],
    ];
    for x in &xs {
        let scale = 0.25;
        let (v, g) = while_let_work_list_grad(x, scale);
        assert_bits("value", v, while_let_work_list(x, scale));
        // Every index is visited once: s = sum x_i (i + scale); t = s 1.5^k,
        // k fixed near the point (the loop's test reads values only).
        let s: f64 = x
            .iter()
            .enumerate()
            .map(|(i, v)| v * (i as f64 + scale))
            .sum();
        let mut factor = 1.0;
        let mut t = s;
        while t.abs() < 50.0 {
            t *= 1.5;
            factor *= 1.5;
        }
        for (i, gi) in g.iter().enumerate() {
            assert_close("d/dx_i", *gi, factor * (i as f64 + scale), 1e-12, 1e-12);
        }
    }
}

/// Arms written on one line with braces, and a binding `m @ range`: the
/// generated code put braces around the braces (`unused_braces`) and kept
/// `m` bound in the arm's test (`unused_variables`), errors here under
/// `#![deny(warnings)]`.
/// For n ≤ 3: out = (y + y·n·(y·s)), else out = y + y·2 (k = B: y·2 too).
#[differentiate(wrt(y))]
#[rustfmt::skip]
fn one_line_arms(y: f64, k: Option<f64>, n: u8) -> f64 {
    let a = match n { m @ 0..=3 => { y * m as f64 }, _ => { y } };
    let b = match k { Some(s) => { s * y }, None => { 2.0 } };
    y + a * b
}

#[test]
fn braced_arms_on_one_line() {
    for (y, k, n) in [
        (0.5, Some(1.5), 2u8),
        (-1.25, None, 7),
        (2.0, Some(-0.5), 0),
        (0.3, None, 3),
    ] {
        let (v, d) = one_line_arms_grad(y, k, n);
        assert_bits("one_line_arms", v, one_line_arms(y, k, n));
        // a = c·y with c = n (n ≤ 3) or 1; b = s·y or 2.
        let c = if n <= 3 { f64::from(n) } else { 1.0 };
        let want = match k {
            Some(s) => 1.0 + 2.0 * c * s * y,
            None => 1.0 + 2.0 * c,
        };
        assert_close("d one_line_arms / dy", d, want, 1e-12, 1e-12);
    }
}
