//! Control flow in `#[differentiate]` functions: `if`/`else if`/`else` as
//! statements and as expressions, conditions on active values and on integer
//! and `bool` parameters, integer and `bool` locals, `for` over ranges
//! (`a..b`, `a..=b`, `.rev()`, `.step_by(k)`), `while`, `loop`, `break`,
//! `continue` and early `return` nested several loops deep, and loop-carried
//! values reassigned several times per iteration.
//!
//! The derivative expected is that of the path actually taken. Every test
//! checks, at several points chosen away from the points where the path
//! changes:
//!
//! 1. the value returned by `f_grad` is bit-for-bit the value of `f`;
//! 2. the gradient agrees with an oracle written independently of the macro:
//!    a closed-form derivative where one exists, otherwise the same function
//!    written over forward-mode dual numbers (`Dual` below), whose primal
//!    value is checked to be bit-for-bit `f`'s so that it follows the same
//!    path;
//! 3. the gradient agrees with a central finite difference of `f` (except at
//!    the few points, checked with `ORACLE_ONLY`, where `f` is not smooth);
//! 4. `f_adjoint(.., 2.0)` is twice the gradient (to `ADJOINT_REL`: scaling
//!    the seed by a power of two scales every adjoint exactly, so only a
//!    different order of accumulation could separate the two).

// The functions are written the way the tests mean to exercise them: loop-
// carried updates spelled `s = s * x` (one new value of `s` per statement)
// and a negated comparison `!(x > y)` to test `!` in a condition.
#![allow(clippy::assign_op_pattern, clippy::neg_cmp_op_on_partial_ord)]

mod support;

use gradmacro::differentiate;
use gradmacro_runtime::{central_difference, check_gradient};
use support::close;
use support::dual::Dual;

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------

/// Tolerances of one test.
#[derive(Clone, Copy)]
struct Tol {
    /// Relative tolerance between the generated gradient and the oracle.
    rel: f64,
    /// Tolerance of the finite-difference check (absolute or relative, see
    /// `GradientCheck::passes`); `None` at a point where `f` is not smooth
    /// (a guard such as `x != 0.0` at `x = 0`), where only the oracle applies.
    fd: Option<f64>,
}

/// The default: agreement with the oracle to a few units in the last place
/// and with finite differences to `1e-6`, well above the `~1e-10` noise of
/// the difference and far below any error a wrong rule or a wrong path
/// produces.
const STRICT: Tol = Tol {
    rel: 1e-12,
    fd: Some(1e-6),
};

/// Only the oracle: for points where `f` jumps or has a kink.
const ORACLE_ONLY: Tol = Tol {
    rel: 1e-12,
    fd: None,
};

/// Absolute tolerance for gradients that are zero or close to it.
const ABS: f64 = 1e-14;

/// The seed passed to every `f_adjoint`.
const D_OUT: f64 = 2.0;

/// Relative tolerance between `f_adjoint(.., D_OUT)` and `D_OUT` times the
/// gradient.
const ADJOINT_REL: f64 = 1e-14;

/// The checks 1-4 at one point `x`, given what `f_grad` and `f_adjoint(..,
/// D_OUT)` returned there and the oracle's gradient.
#[allow(clippy::too_many_arguments)]
#[track_caller]
fn check_at(
    name: &str,
    x: &[f64],
    f: &dyn Fn(&[f64]) -> f64,
    value: f64,
    grad: &[f64],
    adjoint: &[f64],
    want: &[f64],
    tol: Tol,
) {
    let primal = f(x);
    assert!(
        primal.is_finite(),
        "{name}: the test point {x:?} is outside the domain (f = {primal:?})"
    );
    assert!(
        value.to_bits() == primal.to_bits(),
        "{name}: value of _grad at {x:?} is {value:?}, f gives {primal:?}"
    );
    let numeric = central_difference(f, x);
    for i in 0..x.len() {
        assert!(
            grad[i].is_finite(),
            "{name}: derivative {i} at {x:?} is {:?}",
            grad[i]
        );
        assert!(
            close(grad[i], want[i], ABS, tol.rel),
            "{name}: derivative {i} at {x:?}: generated {:e}, oracle {:e} \
             (finite difference {:e}; relative tolerance {:e})",
            grad[i],
            want[i],
            numeric[i],
            tol.rel
        );
    }
    if let Some(fd) = tol.fd {
        let check = check_gradient(f, x, grad);
        assert!(
            check.passes(fd),
            "{name}: gradient at {x:?} disagrees with finite differences \
             (tolerance {fd:e}):\n{check}"
        );
    }
    for i in 0..x.len() {
        assert!(
            close(adjoint[i], D_OUT * grad[i], ABS, ADJOINT_REL),
            "{name}: adjoint {i} at {x:?} with d_out = {D_OUT}: got {:e}, expected {:e}",
            adjoint[i],
            D_OUT * grad[i]
        );
    }
}

/// The checks for `f(x)` at every point, given `f_grad`, `f_adjoint` and the
/// oracle `want(x)`.
#[track_caller]
fn unary(
    name: &str,
    f: impl Fn(f64) -> f64,
    grad: impl Fn(f64) -> (f64, f64),
    adjoint: impl Fn(f64, f64) -> f64,
    want: impl Fn(f64) -> f64,
    points: &[f64],
    tol: Tol,
) {
    assert!(!points.is_empty());
    for &x in points {
        let (value, g) = grad(x);
        check_at(
            name,
            &[x],
            &|p| f(p[0]),
            value,
            &[g],
            &[adjoint(x, D_OUT)],
            &[want(x)],
            tol,
        );
    }
}

/// The checks for `f(x, y)` at every point, given `f_grad`, `f_adjoint` and
/// the oracle `want(x, y)`.
#[track_caller]
fn binary(
    name: &str,
    f: impl Fn(f64, f64) -> f64,
    grad: impl Fn(f64, f64) -> (f64, (f64, f64)),
    adjoint: impl Fn(f64, f64, f64) -> (f64, f64),
    want: impl Fn(f64, f64) -> (f64, f64),
    points: &[(f64, f64)],
    tol: Tol,
) {
    assert!(!points.is_empty());
    for &(x, y) in points {
        let (value, (gx, gy)) = grad(x, y);
        let (ax, ay) = adjoint(x, y, D_OUT);
        let (wx, wy) = want(x, y);
        check_at(
            name,
            &[x, y],
            &|p| f(p[0], p[1]),
            value,
            &[gx, gy],
            &[ax, ay],
            &[wx, wy],
            tol,
        );
    }
}

// ---------------------------------------------------------------------------
// Forward-mode dual numbers (`support::dual`): the oracle for functions whose
// path depends on the input in ways no closed form captures.
// ---------------------------------------------------------------------------

/// The oracle's gradient at `x` for a function of one variable written over
/// `Dual<1>`, after checking that it reproduces `f`'s value bit for bit.
#[track_caller]
fn dual1(f: impl Fn(f64) -> f64, g: impl Fn(Dual<1>) -> Dual<1>) -> impl Fn(f64) -> f64 {
    move |x| {
        let r = g(Dual::var(x, 0));
        assert_eq!(
            r.v.to_bits(),
            f(x).to_bits(),
            "the dual oracle does not reproduce f at {x}: {} vs {}",
            r.v,
            f(x)
        );
        r.d[0]
    }
}

/// As `dual1`, for a function of two variables.
#[track_caller]
fn dual2(
    f: impl Fn(f64, f64) -> f64,
    g: impl Fn(Dual<2>, Dual<2>) -> Dual<2>,
) -> impl Fn(f64, f64) -> (f64, f64) {
    move |x, y| {
        let r = g(Dual::var(x, 0), Dual::var(y, 1));
        assert_eq!(
            r.v.to_bits(),
            f(x, y).to_bits(),
            "the dual oracle does not reproduce f at ({x}, {y}): {} vs {}",
            r.v,
            f(x, y)
        );
        (r.d[0], r.d[1])
    }
}

// ---------------------------------------------------------------------------
// Piecewise functions: `if` as the tail, as a statement, nested, chained.
// ---------------------------------------------------------------------------

#[differentiate]
fn ln_or_line(x: f64) -> f64 {
    if x > 1.0 {
        x.ln()
    } else {
        x - 1.0
    }
}

#[test]
fn if_else_as_the_tail() {
    unary(
        "ln_or_line",
        ln_or_line,
        ln_or_line_grad,
        ln_or_line_adjoint,
        |x| if x > 1.0 { 1.0 / x } else { 1.0 },
        &[-2.0, 0.3, 0.9, 1.2, 3.5, 40.0],
        STRICT,
    );
}

#[differentiate]
fn square_above(x: f64) -> f64 {
    let mut y = x * 3.0;
    if y > 2.0 {
        y = y * y;
    }
    y + x
}

#[test]
fn if_without_else_as_a_statement() {
    // y = 3x, squared when above 2: 18x + 1 or 3 + 1.
    unary(
        "square_above",
        square_above,
        square_above_grad,
        square_above_adjoint,
        |x| if 3.0 * x > 2.0 { 18.0 * x + 1.0 } else { 4.0 },
        &[-1.0, 0.2, 0.6, 0.7, 2.0],
        STRICT,
    );
}

#[differentiate]
fn quadrants(x: f64, y: f64) -> f64 {
    if x > 0.0 {
        if y > 0.0 {
            x * y
        } else {
            x - y * y
        }
    } else if y > x {
        y.sin() * x
    } else {
        x * x * x + y
    }
}

#[test]
fn nested_ifs() {
    binary(
        "quadrants",
        quadrants,
        quadrants_grad,
        quadrants_adjoint,
        |x, y| {
            if x > 0.0 {
                if y > 0.0 {
                    (y, x)
                } else {
                    (1.0, -2.0 * y)
                }
            } else if y > x {
                (y.sin(), x * y.cos())
            } else {
                (3.0 * x * x, 1.0)
            }
        },
        &[
            (1.5, 2.0),
            (0.7, -1.3),
            (-0.5, 1.2),
            (-3.0, -1.0),
            (-0.5, -2.0),
            (-1.5, -2.5),
        ],
        STRICT,
    );
}

#[differentiate]
fn four_pieces(x: f64) -> f64 {
    if x < -1.0 {
        -x * x
    } else if x < 0.0 {
        x.exp()
    } else if x < 2.0 {
        x.sin() + 1.0
    } else {
        x.sqrt() * 3.0
    }
}

#[test]
fn else_if_chain() {
    unary(
        "four_pieces",
        four_pieces,
        four_pieces_grad,
        four_pieces_adjoint,
        |x| {
            if x < -1.0 {
                -2.0 * x
            } else if x < 0.0 {
                x.exp()
            } else if x < 2.0 {
                x.cos()
            } else {
                1.5 / x.sqrt()
            }
        },
        &[-2.5, -1.3, -0.6, -0.1, 0.4, 1.7, 2.3, 9.0],
        STRICT,
    );
}

#[differentiate]
fn if_values(x: f64, y: f64) -> f64 {
    let a = if x > y { x * 2.0 } else { y * y };
    let b = if a > 1.0 { a.ln() } else { a * x };
    let c = 2.0 * if b < 0.5 { b } else { b * b };
    if c > x {
        c - x
    } else {
        c * y
    }
}

/// `if_values`, differentiated by hand with the chain rule, branch by branch.
fn d_if_values(x: f64, y: f64) -> (f64, f64) {
    let (a, da) = if x > y {
        (x * 2.0, [2.0, 0.0])
    } else {
        (y * y, [0.0, 2.0 * y])
    };
    let (b, db) = if a > 1.0 {
        (a.ln(), [da[0] / a, da[1] / a])
    } else {
        (a * x, [da[0] * x + a, da[1] * x])
    };
    let (c, dc) = if b < 0.5 {
        (2.0 * b, [2.0 * db[0], 2.0 * db[1]])
    } else {
        (2.0 * b * b, [4.0 * b * db[0], 4.0 * b * db[1]])
    };
    if c > x {
        (dc[0] - 1.0, dc[1])
    } else {
        (dc[0] * y, dc[1] * y + c)
    }
}

#[test]
fn if_expressions_as_let_initialisers_operands_and_tail() {
    // The points take each side of each of the four `if`s:
    // a: x > y at (3, 1), (0.8, 0.3), (0.2, -2); y >= x at the others.
    // b: a <= 1 at (0.4, 0.6), (0.2, -2); a > 1 at the others.
    // c: b < 0.5 at (0.8, 0.3), (0.4, 0.6), (0.2, -2); b >= 0.5 at the others.
    // tail: c <= x at (0.4, 0.6), (0.2, -2); c > x at the others.
    binary(
        "if_values",
        if_values,
        if_values_grad,
        if_values_adjoint,
        d_if_values,
        &[
            (3.0, 1.0),
            (0.8, 0.3),
            (0.4, 0.6),
            (-1.0, 1.5),
            (0.2, -2.0),
            (2.0, 3.0),
        ],
        STRICT,
    );
}

#[test]
fn if_values_points_cover_every_branch() {
    // Guards the comment above: if the points stopped covering a side of a
    // branch, the test above would silently test less.
    let mut seen = [[false; 2]; 4];
    for (x, y) in [
        (3.0f64, 1.0f64),
        (0.8, 0.3),
        (0.4, 0.6),
        (-1.0, 1.5),
        (0.2, -2.0),
        (2.0, 3.0),
    ] {
        let a = if x > y { x * 2.0 } else { y * y };
        let b = if a > 1.0 { a.ln() } else { a * x };
        let c = 2.0 * if b < 0.5 { b } else { b * b };
        seen[0][usize::from(x > y)] = true;
        seen[1][usize::from(a > 1.0)] = true;
        seen[2][usize::from(b < 0.5)] = true;
        seen[3][usize::from(c > x)] = true;
    }
    assert_eq!(seen, [[true; 2]; 4]);
}

#[differentiate]
fn by_mode(x: f64, mode: i32) -> f64 {
    if mode == 0 {
        x * x
    } else if mode > 0 {
        x.sin() * mode as f64
    } else {
        x.exp() * (-mode) as f64
    }
}

#[test]
fn condition_on_an_integer_parameter() {
    for mode in [-2, 0, 3] {
        let m = f64::from(mode);
        unary(
            &format!("by_mode(x, {mode})"),
            |x| by_mode(x, mode),
            |x| by_mode_grad(x, mode),
            |x, d| by_mode_adjoint(x, mode, d),
            |x| match mode {
                0 => 2.0 * x,
                _ if mode > 0 => x.cos() * m,
                _ => x.exp() * -m,
            },
            &[-1.7, -0.2, 0.6, 2.4],
            STRICT,
        );
    }
}

#[differentiate]
fn swapped_series(x: f64, y: f64, swap: bool, n: usize) -> f64 {
    let mut a = x;
    let mut b = y;
    if swap {
        a = y;
        b = x;
    }
    let mut s = 0.0;
    for _ in 0..n {
        s = s * a + b;
    }
    s
}

#[test]
fn condition_on_a_bool_parameter_and_a_usize_trip_count() {
    // s = b (1 + a + ... + a^(n-1)).
    for swap in [false, true] {
        for n in [0usize, 1, 4, 9] {
            let want = |x: f64, y: f64| {
                let (a, b) = if swap { (y, x) } else { (x, y) };
                let mut geometric = 0.0;
                let mut d_geometric = 0.0;
                for k in 0..n {
                    geometric += a.powi(k as i32);
                    if k > 0 {
                        d_geometric += k as f64 * a.powi(k as i32 - 1);
                    }
                }
                let (da, db) = (b * d_geometric, geometric);
                if swap {
                    (db, da)
                } else {
                    (da, db)
                }
            };
            binary(
                &format!("swapped_series(x, y, {swap}, {n})"),
                |x, y| swapped_series(x, y, swap, n),
                |x, y| swapped_series_grad(x, y, swap, n),
                |x, y, d| swapped_series_adjoint(x, y, swap, n, d),
                want,
                &[(0.7, 1.3), (-1.2, 0.4), (1.1, -2.0)],
                STRICT,
            );
        }
    }
}

#[differentiate]
fn logic(x: f64, y: f64) -> f64 {
    if x > 0.0 && y > 0.0 {
        x * y
    } else if x < -1.0 || y < -1.0 {
        x + 2.0 * y
    } else if !(x > y) {
        x * x - y
    } else {
        (x - y).exp()
    }
}

#[test]
fn and_or_not_in_conditions() {
    binary(
        "logic",
        logic,
        logic_grad,
        logic_adjoint,
        |x, y| {
            if x > 0.0 && y > 0.0 {
                (y, x)
            } else if x < -1.0 || y < -1.0 {
                (1.0, 2.0)
            } else if x <= y {
                (2.0 * x, -1.0)
            } else {
                let e = (x - y).exp();
                (e, -e)
            }
        },
        &[
            (1.0, 2.0),
            (-2.0, 0.5),
            (0.5, -1.5),
            (-0.5, 0.3),
            (0.5, -0.5),
            (-0.3, -0.8),
        ],
        STRICT,
    );
}

#[differentiate]
fn sinc(x: f64) -> f64 {
    if x.abs() < 1e-4 {
        1.0 - x * x / 6.0
    } else {
        x.sin() / x
    }
}

#[test]
fn condition_on_abs_of_an_active_value() {
    // Inside the band the series (derivative -x/3); outside sin(x)/x. At 0
    // the other branch would give 0/0: the series is the path taken.
    unary(
        "sinc",
        sinc,
        sinc_grad,
        sinc_adjoint,
        |x| {
            if x.abs() < 1e-4 {
                -x / 3.0
            } else {
                (x * x.cos() - x.sin()) / (x * x)
            }
        },
        &[-2.0, -5e-5, 0.0, 3e-5, 0.8, 3.0],
        STRICT,
    );
}

#[differentiate]
fn integer_bookkeeping(x: f64) -> f64 {
    let mut k = 0;
    let mut odd = false;
    let mut s = x;
    for i in 1..=6 {
        if x * i as f64 > 3.0 {
            k += 2 * i - 1;
            odd = !odd;
        }
        s = s + x / i as f64;
    }
    let m = k * k - 3;
    if odd {
        s * m as f64
    } else {
        s + x * x * m as f64
    }
}

#[test]
fn integer_and_bool_locals() {
    // s = x (1 + H_6); k and the parity count the i with x i > 3.
    let want = |x: f64| {
        let mut k = 0;
        let mut odd = false;
        let mut harmonic = 1.0;
        for i in 1..=6 {
            if x * f64::from(i) > 3.0 {
                k += 2 * i - 1;
                odd = !odd;
            }
            harmonic += 1.0 / f64::from(i);
        }
        let m = f64::from(k * k - 3);
        if odd {
            harmonic * m
        } else {
            harmonic + 2.0 * x * m
        }
    };
    unary(
        "integer_bookkeeping",
        integer_bookkeeping,
        integer_bookkeeping_grad,
        integer_bookkeeping_adjoint,
        want,
        &[-0.8, 0.4, 0.55, 0.7, 1.1, 1.6, 2.2, 4.0],
        STRICT,
    );
}

#[differentiate]
fn square_or_cube(x: f64) -> f64 {
    if x > 0.5 {
        x * x + 1.0
    } else {
        x * x * x - 1.0
    }
}

#[test]
fn both_branches_compute_intermediate_values() {
    // Each branch needs an intermediate value (x * x) of its own.
    unary(
        "square_or_cube",
        square_or_cube,
        square_or_cube_grad,
        square_or_cube_adjoint,
        |x| if x > 0.5 { 2.0 * x } else { 3.0 * x * x },
        &[-1.5, 0.2, 0.7, 2.5],
        STRICT,
    );
}

#[differentiate]
fn branch_locals(x: f64) -> f64 {
    let mut y = x;
    if x > 0.0 {
        let a = x * 2.0;
        y = a * a;
    } else {
        let b = x * 3.0;
        y = b + y;
    }
    y
}

#[test]
fn both_branches_declare_locals() {
    // 4x^2 or 4x.
    unary(
        "branch_locals",
        branch_locals,
        branch_locals_grad,
        branch_locals_adjoint,
        |x| if x > 0.0 { 8.0 * x } else { 4.0 },
        &[-2.0, -0.3, 0.4, 1.9],
        STRICT,
    );
}

#[differentiate]
fn chain_without_else(x: f64) -> f64 {
    let mut y = 0.5;
    if x > 0.0 {
        y = x * x;
    } else if x > -1.0 {
        y = x;
    }
    y * 3.0
}

#[test]
fn else_if_chain_without_else_as_statements() {
    // 3x^2, 3x, or the constant 1.5 (derivative 0) below -1.
    unary(
        "chain_without_else",
        chain_without_else,
        chain_without_else_grad,
        chain_without_else_adjoint,
        |x| {
            if x > 0.0 {
                6.0 * x
            } else if x > -1.0 {
                3.0
            } else {
                0.0
            }
        },
        &[-2.5, -1.2, -0.5, 0.3, 1.4],
        STRICT,
    );
}

#[differentiate]
fn branch_with_a_loop(x: f64) -> f64 {
    let y = if x > 0.0 {
        let mut s = x;
        for _ in 0..3 {
            s = s * x;
        }
        s
    } else {
        x
    };
    y + 1.0
}

#[test]
fn if_expression_whose_branch_runs_a_loop() {
    // x^4 + 1 or x + 1.
    unary(
        "branch_with_a_loop",
        branch_with_a_loop,
        branch_with_a_loop_grad,
        branch_with_a_loop_adjoint,
        |x| if x > 0.0 { 4.0 * x * x * x } else { 1.0 },
        &[-1.2, -0.1, 0.3, 1.7],
        STRICT,
    );
}

#[differentiate]
fn return_from_let_if(x: f64) -> f64 {
    let y = if x < 0.0 {
        return 0.0;
    } else {
        x.sqrt()
    };
    y * x
}

#[test]
fn early_return_inside_an_if_expression_initialiser() {
    // 0 for x < 0, else x^(3/2): derivative 1.5 sqrt(x). The sqrt is never
    // evaluated on the negative side.
    unary(
        "return_from_let_if",
        return_from_let_if,
        return_from_let_if_grad,
        return_from_let_if_adjoint,
        |x| if x < 0.0 { 0.0 } else { 1.5 * x.sqrt() },
        &[-1.2, -0.01, 0.3, 2.5],
        STRICT,
    );
}

#[differentiate]
fn loops_in_branches(x: f64) -> f64 {
    let mut s = x;
    if x > 1.0 {
        for _ in 0..3 {
            s = s * x;
        }
    } else {
        let mut n = 0;
        while n < 4 {
            s = s + x * s;
            n += 1;
        }
    }
    s
}

#[test]
fn a_loop_in_each_branch() {
    // x^4, or x (1 + x)^4.
    unary(
        "loops_in_branches",
        loops_in_branches,
        loops_in_branches_grad,
        loops_in_branches_adjoint,
        |x| {
            if x > 1.0 {
                4.0 * x.powi(3)
            } else {
                (1.0 + x).powi(4) + 4.0 * x * (1.0 + x).powi(3)
            }
        },
        &[-1.4, -0.3, 0.6, 1.3, 2.2],
        STRICT,
    );
}

// ---------------------------------------------------------------------------
// Horner's rule over 1000 coefficients computed from the loop index.
// ---------------------------------------------------------------------------

const HORNER_POINTS: [f64; 6] = [-0.9, -0.5, 0.3, 0.75, 0.9, 0.99];

#[differentiate]
fn horner(x: f64) -> f64 {
    let mut acc = 0.0;
    for i in (0..1000).rev() {
        let c = 1.0 / (i as f64 + 1.0);
        acc = acc * x + c;
    }
    acc
}

#[test]
fn horner_1000_coefficients() {
    // p(x) = sum_i x^i / (i + 1), p'(x) = sum_i i x^(i-1) / (i + 1).
    let d_horner = |x: f64| {
        let mut sum = 0.0;
        let mut power = 1.0; // x^(i-1)
        for i in 1..1000 {
            sum += f64::from(i) / (f64::from(i) + 1.0) * power;
            power *= x;
        }
        sum
    };
    unary(
        "horner",
        horner,
        horner_grad,
        horner_adjoint,
        d_horner,
        &HORNER_POINTS,
        Tol {
            rel: 1e-11,
            ..STRICT
        },
    );
}

#[differentiate]
fn horner_active_coefficients(x: f64, y: f64) -> f64 {
    let mut acc = 0.0;
    for i in (0..1000).rev() {
        let c = (y * (i as f64 + 1.0) * 1e-3).sin();
        acc = acc * x + c;
    }
    acc
}

#[test]
fn horner_1000_coefficients_depending_on_a_parameter() {
    // p = sum_i x^i sin(y t_i), t_i = (i + 1) / 1000.
    let want = |x: f64, y: f64| {
        let (mut dx, mut dy) = (0.0, 0.0);
        let mut power = 1.0; // x^i
        for i in 0..1000 {
            let t = (f64::from(i) + 1.0) * 1e-3;
            if i > 0 {
                dx += f64::from(i) * (y * t).sin() * (power / x);
            }
            dy += power * (y * t).cos() * t;
            power *= x;
        }
        (dx, dy)
    };
    binary(
        "horner_active_coefficients",
        horner_active_coefficients,
        horner_active_coefficients_grad,
        horner_active_coefficients_adjoint,
        want,
        &[(0.5, 0.7), (-0.8, 2.0), (0.95, -1.3), (0.3, 4.0)],
        Tol {
            rel: 1e-11,
            ..STRICT
        },
    );
}

// ---------------------------------------------------------------------------
// Newton's iteration for a square root.
// ---------------------------------------------------------------------------

const SQRT_POINTS: [f64; 7] = [0.01, 0.5, 2.0, 3.7, 10.0, 123.0, 1e4];

#[differentiate]
fn newton_sqrt(a: f64) -> f64 {
    let mut r = a;
    for _ in 0..20 {
        r = 0.5 * (r + a / r);
    }
    r
}

#[test]
fn newton_square_root_for_loop() {
    for a in SQRT_POINTS {
        // The point must have converged for 1/(2 sqrt a) to be the derivative.
        assert!(
            close(newton_sqrt(a), a.sqrt(), ABS, 1e-15),
            "not converged at {a}"
        );
    }
    unary(
        "newton_sqrt",
        newton_sqrt,
        newton_sqrt_grad,
        newton_sqrt_adjoint,
        |a| 0.5 / a.sqrt(),
        &SQRT_POINTS,
        STRICT,
    );
}

#[differentiate]
fn newton_sqrt_until(a: f64) -> f64 {
    let mut r = a;
    let mut steps = 0;
    while (r * r - a).abs() > 1e-13 * a && steps < 100 {
        r = 0.5 * (r + a / r);
        steps += 1;
    }
    r
}

#[test]
fn newton_square_root_while_converging() {
    // The number of steps depends on a: 5 at a = 0.5, 8 at a = 0.01, 11 at
    // a = 1e4, none at a = 1.
    unary(
        "newton_sqrt_until",
        newton_sqrt_until,
        newton_sqrt_until_grad,
        newton_sqrt_until_adjoint,
        |a| 0.5 / a.sqrt(),
        &SQRT_POINTS,
        STRICT,
    );
    // At a = 1 the loop does not run: r = a, derivative 1.
    assert_eq!(newton_sqrt_until_grad(1.0), (1.0, 1.0));
}

// ---------------------------------------------------------------------------
// `while` with an input-dependent trip count.
// ---------------------------------------------------------------------------

#[differentiate]
fn double_until(x: f64) -> f64 {
    let w = x.sin();
    let mut y = x;
    let mut n = 0;
    while y <= 100.0 {
        y = y * 2.0 + 1.0;
        n += 1;
    }
    y * y + w * n as f64
}

#[test]
fn while_loop_with_input_dependent_trip_count() {
    // After n doublings y = 2^n x + 2^n - 1, so dy/dx = 2^n, and the result
    // is y^2 + n sin x: derivative 2 y 2^n + n cos x. w is defined before
    // the loop and read after it.
    let want = |x: f64| {
        let mut n = 0;
        let mut y = x;
        while y <= 100.0 {
            y = y * 2.0 + 1.0;
            n += 1;
        }
        let p = 2f64.powi(n);
        2.0 * y * p + f64::from(n) * x.cos()
    };
    let points = [0.2, 0.7, 3.0, 30.0, 60.0, 150.0];
    let counts: Vec<u32> = points
        .iter()
        .map(|&x| {
            let (mut y, mut n) = (x, 0);
            while y <= 100.0 {
                y = y * 2.0 + 1.0;
                n += 1;
            }
            n
        })
        .collect();
    assert_eq!(counts, [7, 6, 5, 2, 1, 0]);
    unary(
        "double_until",
        double_until,
        double_until_grad,
        double_until_adjoint,
        want,
        &points,
        STRICT,
    );
}

#[differentiate]
fn kept_across_loop(x: f64, y: f64) -> f64 {
    let keep = x * y;
    let mut t = y;
    let mut i = 0;
    while t < x {
        t = t * 1.5 + keep * 0.1;
        i += 1;
        if i > 50 {
            break;
        }
    }
    keep * t + keep
}

#[test]
fn value_defined_before_a_loop_and_read_after_it() {
    let want = dual2(kept_across_loop, |x, y| {
        let keep = x * y;
        let mut t = y;
        let mut i = 0;
        while t.v < x.v {
            t = t * 1.5 + keep * 0.1;
            i += 1;
            if i > 50 {
                break;
            }
        }
        keep * t + keep
    });
    // The loop runs 0 times at (1, 2), a few times elsewhere.
    binary(
        "kept_across_loop",
        kept_across_loop,
        kept_across_loop_grad,
        kept_across_loop_adjoint,
        want,
        &[(1.0, 2.0), (5.0, 1.0), (20.0, 0.3), (3.0, 0.8)],
        STRICT,
    );
    // At (1, 2): keep = 2, t = 2, f = keep t + keep = xy y + xy.
    let (_, (gx, gy)) = kept_across_loop_grad(1.0, 2.0);
    assert_eq!((gx, gy), (2.0 * 2.0 + 2.0, 2.0 * 1.0 * 2.0 + 1.0));
}

// ---------------------------------------------------------------------------
// `break`, `continue` and early `return` in nested loops.
// ---------------------------------------------------------------------------

#[differentiate]
fn two_deep(x: f64, y: f64) -> f64 {
    let mut s = 0.0;
    let mut last = 0.0;
    for i in 0..8 {
        for j in 0..8 {
            if j > i {
                break;
            }
            if (i + j) % 3 == 0 {
                continue;
            }
            s = s + x * j as f64 + y * y;
            last = s;
            if s > 20.0 {
                break;
            }
        }
        s = s * 0.9;
    }
    s + last * x
}

#[test]
fn break_and_continue_two_loops_deep() {
    let want = dual2(two_deep, |x, y| {
        let mut s = Dual::cst(0.0);
        let mut last = Dual::cst(0.0);
        for i in 0..8 {
            for j in 0..8 {
                if j > i {
                    break;
                }
                if (i + j) % 3 == 0 {
                    continue;
                }
                s = s + x * f64::from(j) + y * y;
                last = s;
                if s.v > 20.0 {
                    break;
                }
            }
            s = s * 0.9;
        }
        s + last * x
    });
    binary(
        "two_deep",
        two_deep,
        two_deep_grad,
        two_deep_adjoint,
        want,
        &[(0.1, 0.2), (0.5, 0.5), (1.3, -0.7), (2.0, 1.5), (-0.4, 2.5)],
        STRICT,
    );
}

#[differentiate]
fn three_deep(x: f64) -> f64 {
    let mut acc = 1.0;
    for i in 0..4 {
        for j in 0..4 {
            for k in 0..4 {
                if k > j {
                    break;
                }
                acc = acc * x + (i + j + k) as f64 * 0.01;
                if acc > 1e3 {
                    return acc.ln() + x;
                }
            }
            if j == i {
                continue;
            }
            acc = acc - 0.5 * x;
        }
    }
    acc * x
}

#[test]
fn break_continue_and_return_three_loops_deep() {
    let want = dual1(three_deep, |x| {
        let mut acc = Dual::cst(1.0);
        for i in 0..4 {
            for j in 0..4 {
                for k in 0..4 {
                    if k > j {
                        break;
                    }
                    acc = acc * x + f64::from(i + j + k) * 0.01;
                    if acc.v > 1e3 {
                        return acc.ln() + x;
                    }
                }
                if j == i {
                    continue;
                }
                acc = acc - 0.5 * x;
            }
        }
        acc * x
    });
    // Up to x = 1.2 the loops run to the end; from about 1.25 on, the
    // return fires, at an iteration that moves earlier as x grows (step 18 of
    // 40 at 1.5, step 4 at 6).
    unary(
        "three_deep",
        three_deep,
        three_deep_grad,
        three_deep_adjoint,
        want,
        &[-0.7, 0.5, 0.9, 1.2, 1.5, 2.5, 6.0],
        STRICT,
    );
}

#[differentiate]
fn first_above(x: f64) -> f64 {
    let mut found = 0.0;
    for i in 1..100 {
        let t = x * i as f64;
        if t > 3.0 {
            found = t * t;
            break;
        }
    }
    found + x
}

#[test]
fn value_assigned_just_before_break_is_read_after_the_loop() {
    // found = (x i*)^2 with i* the first i with x i > 3: derivative
    // 2 x i*^2 + 1; for x <= 3/99 nothing is found: derivative 1.
    let want = |x: f64| {
        let hit = (1..100).find(|&i| x * f64::from(i) > 3.0);
        match hit {
            Some(i) => 2.0 * x * f64::from(i * i) + 1.0,
            None => 1.0,
        }
    };
    unary(
        "first_above",
        first_above,
        first_above_grad,
        first_above_adjoint,
        want,
        &[0.01, 0.07, 0.45, 1.3, 3.5],
        STRICT,
    );
}

#[differentiate]
fn mixed_loops(x: f64, y: f64) -> f64 {
    let mut total = 0.0;
    for i in 1..=3 {
        let mut t = x;
        let mut n = 0;
        while n < 10 {
            n += 1;
            let mut m = 0;
            loop {
                m += 1;
                t = t * y + 0.1 * i as f64;
                if m >= i {
                    break;
                }
                if t > 5.0 {
                    break;
                }
            }
            if t.abs() > 8.0 {
                break;
            }
            if n % 2 == 0 {
                continue;
            }
            t = t - 0.5 * x;
        }
        total = total + t;
    }
    total
}

#[test]
fn for_while_loop_nested_with_breaks_and_continue() {
    let want = dual2(mixed_loops, |x, y| {
        let mut total = Dual::cst(0.0);
        for i in 1..=3 {
            let mut t = x;
            let mut n = 0;
            while n < 10 {
                n += 1;
                let mut m = 0;
                loop {
                    m += 1;
                    t = t * y + 0.1 * f64::from(i);
                    if m >= i {
                        break;
                    }
                    if t.v > 5.0 {
                        break;
                    }
                }
                if t.abs().v > 8.0 {
                    break;
                }
                if n % 2 == 0 {
                    continue;
                }
                t = t - 0.5 * x;
            }
            total = total + t;
        }
        total
    });
    binary(
        "mixed_loops",
        mixed_loops,
        mixed_loops_grad,
        mixed_loops_adjoint,
        want,
        &[(0.5, 0.8), (1.0, 1.2), (2.0, 1.5), (-1.0, 0.9), (0.3, -1.1)],
        STRICT,
    );
}

#[differentiate]
fn early_return(x: f64) -> f64 {
    if x < 0.0 {
        return -x * x;
    }
    let mut s = x;
    let mut i = 0;
    while i < 100 {
        s = s * 1.3 + 0.1;
        if s > 10.0 {
            return s.ln() * x;
        }
        i += 1;
    }
    s.sqrt()
}

#[test]
fn early_return_before_and_inside_a_loop() {
    // For x >= 0: s_n = 1.3^n x + c_n, ds/dx = 1.3^n, with n the first step
    // where s > 10; the result is x ln s.
    let want = |x: f64| {
        if x < 0.0 {
            return -2.0 * x;
        }
        let mut s = x;
        let mut p = 1.0;
        loop {
            s = s * 1.3 + 0.1;
            p *= 1.3;
            if s > 10.0 {
                return s.ln() + x * p / s;
            }
        }
    };
    unary(
        "early_return",
        early_return,
        early_return_grad,
        early_return_adjoint,
        want,
        &[-2.0, -0.3, 0.05, 0.6, 4.0, 9.5, 25.0],
        STRICT,
    );
}

#[differentiate]
fn triangle(x: f64) -> f64 {
    let mut s = 1.0;
    for i in 1..5 {
        for j in 0..i {
            s = s * x + j as f64;
        }
    }
    s
}

#[test]
fn inner_trip_count_from_the_outer_index() {
    let want = dual1(triangle, |x| {
        let mut s = Dual::cst(1.0);
        for i in 1..5 {
            for j in 0..i {
                s = s * x + f64::from(j);
            }
        }
        s
    });
    unary(
        "triangle",
        triangle,
        triangle_grad,
        triangle_adjoint,
        want,
        &[-1.2, -0.3, 0.6, 1.1],
        STRICT,
    );
    // s = x^10 + (lower terms): at x = 1, 10 + the sum over the j of the
    // number of multiplications that follow them.
    let mut want_at_1 = 10.0;
    let mut remaining = 10;
    for i in 1..5 {
        for j in 0..i {
            remaining -= 1;
            want_at_1 += f64::from(j) * f64::from(remaining);
        }
    }
    assert_eq!(triangle_grad(1.0).1, want_at_1);
}

#[differentiate]
fn grow_while_both(x: f64) -> f64 {
    let mut s = x;
    let mut i = 0;
    while i < 10 && s < 100.0 {
        i += 1;
        s = s * 1.7;
    }
    s + i as f64
}

#[differentiate]
fn creep_until_sine_high(x: f64) -> f64 {
    let mut s = x;
    let mut n = 0;
    while s.sin() < 0.9 && n < 50 {
        s = s + 0.1 * x;
        n += 1;
    }
    s
}

#[test]
fn while_conditions_mixing_integer_and_active_tests() {
    // s = 1.7^i x, stopped by the count or by the size.
    let want = |x: f64| {
        let (mut s, mut i) = (x, 0);
        while i < 10 && s < 100.0 {
            i += 1;
            s *= 1.7;
        }
        1.7f64.powi(i)
    };
    unary(
        "grow_while_both",
        grow_while_both,
        grow_while_both_grad,
        grow_while_both_adjoint,
        want,
        &[-3.0, 0.3, 5.0, 40.0, 200.0],
        STRICT,
    );
    // s = x (1 + n/10), n counted by a condition on sin(s).
    let want = |x: f64| {
        let (mut s, mut n) = (x, 0);
        while s.sin() < 0.9 && n < 50 {
            s += 0.1 * x;
            n += 1;
        }
        1.0 + 0.1 * f64::from(n)
    };
    unary(
        "creep_until_sine_high",
        creep_until_sine_high,
        creep_until_sine_high_grad,
        creep_until_sine_high_adjoint,
        want,
        &[-1.2, 0.05, 0.3, 2.5],
        STRICT,
    );
}

#[differentiate]
fn skip_every_third(x: f64) -> f64 {
    let mut s = x;
    let mut k = 0;
    loop {
        k += 1;
        if k % 3 == 0 {
            continue;
        }
        s = s * 0.9 + x;
        if k > 10 {
            break;
        }
    }
    s * k as f64
}

#[test]
fn loop_with_continue_and_break_on_a_counter() {
    // Updates at k = 1, 2, 4, 5, 7, 8, 10, 11 (8 of them), then k = 11:
    // s = x (0.9^8 + sum_{m<8} 0.9^m), times 11.
    let want = |_: f64| {
        let geometric: f64 = (0..8).map(|m| 0.9f64.powi(m)).sum();
        11.0 * (0.9f64.powi(8) + geometric)
    };
    unary(
        "skip_every_third",
        skip_every_third,
        skip_every_third_grad,
        skip_every_third_adjoint,
        want,
        &[-1.2, 0.3, 1.7],
        STRICT,
    );
}

#[differentiate]
fn return_from_else_if_in_loop(x: f64) -> f64 {
    let mut s = x;
    for i in 0..10 {
        if s > 5.0 {
            return s * x;
        } else if s < -5.0 {
            return -s;
        } else if i == 7 {
            break;
        }
        s = s * 1.5 + x;
    }
    s + x
}

#[test]
fn return_or_break_from_an_else_if_chain_in_a_loop() {
    let want = dual1(return_from_else_if_in_loop, |x| {
        let mut s = x;
        for i in 0..10 {
            if s.v > 5.0 {
                return s * x;
            } else if s.v < -5.0 {
                return -s;
            } else if i == 7 {
                break;
            }
            s = s * 1.5 + x;
        }
        s + x
    });
    // Large |x| returns early through either arm; small |x| breaks at i = 7.
    unary(
        "return_from_else_if_in_loop",
        return_from_else_if_in_loop,
        return_from_else_if_in_loop_grad,
        return_from_else_if_in_loop_adjoint,
        want,
        &[-1.2, -0.01, 0.01, 0.3, 1.7, 6.0],
        STRICT,
    );
}

#[differentiate]
fn running_max(x: f64) -> f64 {
    let mut best = x;
    for i in 0..6 {
        let t = (x + i as f64).sin();
        if t > best {
            best = t;
        }
    }
    best
}

#[test]
fn running_maximum_keeps_the_derivative_of_the_winner() {
    // best is x, or sin(x + i) for the last i that beat everything before.
    let want = |x: f64| {
        let (mut best, mut d) = (x, 1.0);
        for i in 0..6 {
            let t = (x + f64::from(i)).sin();
            if t > best {
                best = t;
                d = (x + f64::from(i)).cos();
            }
        }
        d
    };
    unary(
        "running_max",
        running_max,
        running_max_grad,
        running_max_adjoint,
        want,
        &[-2.0, 0.3, 1.2, 2.5],
        STRICT,
    );
}

#[differentiate]
fn alternate(x: f64, flag: bool) -> f64 {
    let mut s = x;
    let mut on = flag;
    for _ in 0..5 {
        if on && s < 3.0 {
            s = s * x;
        } else if !on || s > 10.0 {
            s = s - 1.0;
        }
        on = !on;
    }
    s
}

#[test]
fn bool_local_toggled_and_combined_with_active_tests() {
    for flag in [false, true] {
        let want = dual1(
            |x| alternate(x, flag),
            |x| {
                let mut s = x;
                let mut on = flag;
                for _ in 0..5 {
                    if on && s.v < 3.0 {
                        s = s * x;
                    } else if !on || s.v > 10.0 {
                        s = s - 1.0;
                    }
                    on = !on;
                }
                s
            },
        );
        unary(
            &format!("alternate(x, {flag})"),
            |x| alternate(x, flag),
            |x| alternate_grad(x, flag),
            |x, d| alternate_adjoint(x, flag, d),
            want,
            &[-1.2, 0.3, 1.5, 1.7, 4.5],
            STRICT,
        );
    }
}

// ---------------------------------------------------------------------------
// Branches not taken whose derivative would be NaN or infinite.
// ---------------------------------------------------------------------------

#[differentiate]
fn sqrt_or_zero(x: f64) -> f64 {
    if x > 0.0 {
        x.sqrt()
    } else {
        0.0
    }
}

#[test]
fn sqrt_in_a_branch_not_taken() {
    let d = |x: f64| if x > 0.0 { 0.5 / x.sqrt() } else { 0.0 };
    unary(
        "sqrt_or_zero",
        sqrt_or_zero,
        sqrt_or_zero_grad,
        sqrt_or_zero_adjoint,
        d,
        &[-1.0, -0.01, 0.25, 4.0],
        STRICT,
    );
    // At 0 the branch taken is the constant: derivative 0, not inf or NaN.
    unary(
        "sqrt_or_zero at 0",
        sqrt_or_zero,
        sqrt_or_zero_grad,
        sqrt_or_zero_adjoint,
        d,
        &[0.0],
        ORACLE_ONLY,
    );
}

#[differentiate]
fn ln_or_identity(x: f64) -> f64 {
    if x > 0.0 {
        x.ln()
    } else {
        x
    }
}

#[differentiate]
fn ln_assigned_if_positive(x: f64) -> f64 {
    let mut y = x;
    if x > 0.0 {
        y = x.ln();
    }
    y * 2.0
}

#[test]
fn ln_in_a_branch_not_taken() {
    unary(
        "ln_or_identity",
        ln_or_identity,
        ln_or_identity_grad,
        ln_or_identity_adjoint,
        |x| if x > 0.0 { 1.0 / x } else { 1.0 },
        &[-3.0, -1.0, 0.4, 2.0],
        STRICT,
    );
    unary(
        "ln_or_identity at 0",
        ln_or_identity,
        ln_or_identity_grad,
        ln_or_identity_adjoint,
        |_| 1.0,
        &[0.0],
        ORACLE_ONLY,
    );
    unary(
        "ln_assigned_if_positive",
        ln_assigned_if_positive,
        ln_assigned_if_positive_grad,
        ln_assigned_if_positive_adjoint,
        |x| if x > 0.0 { 2.0 / x } else { 2.0 },
        &[-3.0, -1.0, 0.4, 2.0],
        STRICT,
    );
    unary(
        "ln_assigned_if_positive at 0",
        ln_assigned_if_positive,
        ln_assigned_if_positive_grad,
        ln_assigned_if_positive_adjoint,
        |_| 2.0,
        &[0.0],
        ORACLE_ONLY,
    );
}

#[differentiate]
fn guarded_reciprocal(x: f64) -> f64 {
    if x != 0.0 {
        1.0 / x
    } else {
        0.0
    }
}

#[test]
fn division_by_zero_in_a_branch_not_taken() {
    unary(
        "guarded_reciprocal",
        guarded_reciprocal,
        guarded_reciprocal_grad,
        guarded_reciprocal_adjoint,
        |x| -1.0 / (x * x),
        &[-2.0, 0.5, 3.0],
        STRICT,
    );
    unary(
        "guarded_reciprocal at 0",
        guarded_reciprocal,
        guarded_reciprocal_grad,
        guarded_reciprocal_adjoint,
        |_| 0.0,
        &[0.0],
        ORACLE_ONLY,
    );
}

#[differentiate]
fn sqrt_steps(x: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..6 {
        let c = i as f64;
        if x > c {
            s = s + (x - c).sqrt();
        }
    }
    s
}

#[test]
fn sqrt_of_negative_in_a_branch_not_taken_inside_a_loop() {
    // Only the i below x contribute: sum 1 / (2 sqrt(x - i)).
    let want = |x: f64| {
        (0..6)
            .map(f64::from)
            .filter(|&c| x > c)
            .map(|c| 0.5 / (x - c).sqrt())
            .sum::<f64>()
    };
    unary(
        "sqrt_steps",
        sqrt_steps,
        sqrt_steps_grad,
        sqrt_steps_adjoint,
        want,
        &[-0.5, 0.3, 2.5, 4.9, 7.0],
        STRICT,
    );
    // At an integer the term that starts there is not taken (x > c fails).
    unary(
        "sqrt_steps at 2",
        sqrt_steps,
        sqrt_steps_grad,
        sqrt_steps_adjoint,
        want,
        &[0.0, 2.0],
        ORACLE_ONLY,
    );
}

// ---------------------------------------------------------------------------
// Loop-carried values reassigned several times per iteration.
// ---------------------------------------------------------------------------

#[differentiate]
fn reassign_three_times(x: f64) -> f64 {
    let mut s = 1.0;
    for _ in 0..3 {
        s = s * x;
        s = s + 1.0;
        s *= s;
    }
    s
}

#[test]
fn same_variable_reassigned_three_times_per_iteration() {
    // The tangent recurrence, written by hand statement by statement.
    let want = |x: f64| {
        let (mut s, mut ds) = (1.0f64, 0.0f64);
        for _ in 0..3 {
            ds = ds * x + s;
            s *= x;
            s += 1.0;
            ds *= 2.0 * s;
            s *= s;
        }
        ds
    };
    unary(
        "reassign_three_times",
        reassign_three_times,
        reassign_three_times_grad,
        reassign_three_times_adjoint,
        want,
        &[-1.2, -0.4, 0.3, 0.9, 1.1],
        STRICT,
    );
    // At x = 1: s = 4, 25, 676; ds = 4, 2*5*(4+4) = 80, 2*26*(80+25) = 5460.
    assert_eq!(reassign_three_times_grad(1.0), (676.0, 5460.0));
}

#[differentiate]
fn reassign_mixed(x: f64, y: f64) -> f64 {
    let mut s = x;
    let mut t = y;
    for i in 0..5 {
        s = s * s - t;
        s = s.sin();
        s += x;
        t = t * 0.5 + s;
        if s > t {
            s = s - t;
            t *= 1.1;
        } else {
            s = s * y;
        }
        s -= 0.01 * i as f64;
    }
    s * t
}

#[test]
fn two_variables_reassigned_in_branches_each_iteration() {
    let want = dual2(reassign_mixed, |x, y| {
        let mut s = x;
        let mut t = y;
        for i in 0..5 {
            s = s * s - t;
            s = s.sin();
            s = s + x;
            t = t * 0.5 + s;
            if s.v > t.v {
                s = s - t;
                t = t * 1.1;
            } else {
                s = s * y;
            }
            s = s - 0.01 * f64::from(i);
        }
        s * t
    });
    binary(
        "reassign_mixed",
        reassign_mixed,
        reassign_mixed_grad,
        reassign_mixed_adjoint,
        want,
        &[(0.5, 0.3), (-0.7, 1.2), (1.4, -0.6), (1.1, 0.9)],
        STRICT,
    );
}

#[differentiate]
fn halve_or_triple(x: f64) -> f64 {
    let mut s: f64 = 0.0;
    for i in 0..6 {
        s = if s > 1.0 { s / 2.0 } else { s * 3.0 + x };
        s += if i % 2 == 0 { x } else { -0.5 * x };
    }
    s
}

#[test]
fn loop_carried_value_reassigned_from_if_expressions() {
    let want = dual1(halve_or_triple, |x| {
        let mut s = Dual::cst(0.0);
        for i in 0..6 {
            s = if s.v > 1.0 { s * 0.5 } else { s * 3.0 + x };
            s = s + if i % 2 == 0 { x } else { -0.5 * x };
        }
        s
    });
    unary(
        "halve_or_triple",
        halve_or_triple,
        halve_or_triple_grad,
        halve_or_triple_adjoint,
        want,
        &[-1.2, 0.05, 0.3, 1.7],
        STRICT,
    );
}

#[differentiate]
fn rotate(x: f64) -> f64 {
    let mut a = x;
    let mut b = 1.0;
    for _ in 0..4 {
        let t = a;
        a = b;
        b = t * x + b;
    }
    a * b
}

#[test]
fn values_rotated_through_a_temporary() {
    let want = dual1(rotate, |x| {
        let mut a = x;
        let mut b = Dual::cst(1.0);
        for _ in 0..4 {
            let t = a;
            a = b;
            b = t * x + b;
        }
        a * b
    });
    unary(
        "rotate",
        rotate,
        rotate_grad,
        rotate_adjoint,
        want,
        &[-1.2, 0.3, 1.7],
        STRICT,
    );
}

#[differentiate]
fn becomes_active_late(x: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..5 {
        if i == 3 {
            s = x;
        } else {
            s = s * 2.0;
        }
    }
    s
}

#[test]
fn constant_that_becomes_active_in_a_later_iteration() {
    // s = 0, 0, 0, x, 2x.
    unary(
        "becomes_active_late",
        becomes_active_late,
        becomes_active_late_grad,
        becomes_active_late_adjoint,
        |_| 2.0,
        &[-1.2, 0.3, 1.7],
        STRICT,
    );
}

#[differentiate]
fn shadowed_in_loops(x: f64) -> f64 {
    let mut s = x;
    for _ in 0..3 {
        let s = s * 2.0;
        let s = s + x;
        if s > 100.0 {
            break;
        }
    }
    for _ in 0..3 {
        s = {
            let t = s * x;
            t + 1.0
        };
    }
    s
}

#[test]
fn shadowing_and_block_expressions_inside_loops() {
    // The first loop only shadows s; the second computes
    // s = x^4 + x^2 + x + 1 from s = x.
    unary(
        "shadowed_in_loops",
        shadowed_in_loops,
        shadowed_in_loops_grad,
        shadowed_in_loops_adjoint,
        |x| 4.0 * x.powi(3) + 2.0 * x + 1.0,
        &[-1.2, 0.3, 1.7, 60.0],
        STRICT,
    );
}

// ---------------------------------------------------------------------------
// `loop` with a counter, and the range forms of `for`.
// ---------------------------------------------------------------------------

#[differentiate]
fn seventh_power(x: f64) -> f64 {
    let mut p = 1.0;
    let mut n = 0;
    loop {
        p = p * x;
        n += 1;
        if n == 7 {
            break;
        }
    }
    p
}

#[test]
fn loop_with_a_counter_and_break() {
    unary(
        "seventh_power",
        seventh_power,
        seventh_power_grad,
        seventh_power_adjoint,
        |x| 7.0 * x.powi(6),
        &[-1.3, -0.5, 0.4, 1.1, 2.0],
        STRICT,
    );
}

#[differentiate]
fn grow_past_fifty(x: f64) -> f64 {
    let mut p = x;
    let mut n = 0;
    loop {
        if p > 50.0 {
            break;
        }
        p = p * x + 1.0;
        n += 1;
    }
    p + n as f64
}

#[test]
fn loop_with_break_on_an_active_value() {
    // The tangent recurrence, by hand: dp <- dp x + p.
    let want = |x: f64| {
        let (mut p, mut dp) = (x, 1.0);
        while p <= 50.0 {
            dp = dp * x + p;
            p = p * x + 1.0;
        }
        dp
    };
    unary(
        "grow_past_fifty",
        grow_past_fifty,
        grow_past_fifty_grad,
        grow_past_fifty_adjoint,
        want,
        &[1.5, 2.0, 3.3, 7.5, 60.0],
        STRICT,
    );
}

#[differentiate]
fn reversed_inclusive(x: f64) -> f64 {
    let mut acc = 0.0;
    for i in (1..=5).rev() {
        acc = acc * x + i as f64;
    }
    acc
}

#[test]
fn for_over_a_reversed_inclusive_range() {
    // 5x^4 + 4x^3 + 3x^2 + 2x + 1.
    unary(
        "reversed_inclusive",
        reversed_inclusive,
        reversed_inclusive_grad,
        reversed_inclusive_adjoint,
        |x| 20.0 * x.powi(3) + 12.0 * x * x + 6.0 * x + 2.0,
        &[-1.5, -0.3, 0.6, 2.1],
        STRICT,
    );
}

#[differentiate]
fn stepped(x: f64) -> f64 {
    let mut s = 0.0;
    for i in (0..20).step_by(3) {
        s = s * x + i as f64;
    }
    s
}

#[test]
fn for_over_a_stepped_range() {
    // i = 0, 3, ..., 18: s = sum_m 3m x^(6-m), m = 0..=6.
    let want = |x: f64| {
        (0..6)
            .map(|m| 3.0 * f64::from(m) * f64::from(6 - m) * x.powi(5 - m))
            .sum::<f64>()
    };
    unary(
        "stepped",
        stepped,
        stepped_grad,
        stepped_adjoint,
        want,
        &[-1.1, -0.4, 0.7, 1.3],
        STRICT,
    );
}

#[differentiate]
fn even_terms(x: f64, n: i32) -> f64 {
    let mut s = 0.0;
    for i in (0..=n).step_by(2) {
        s = s + x.powi(i) / (i as f64 + 1.0);
    }
    s
}

#[test]
fn for_over_a_stepped_inclusive_range_with_an_integer_bound() {
    for n in [0, 1, 6, 9] {
        unary(
            &format!("even_terms(x, {n})"),
            |x| even_terms(x, n),
            |x| even_terms_grad(x, n),
            |x, d| even_terms_adjoint(x, n, d),
            |x| {
                (2..=n)
                    .step_by(2)
                    .map(|i| f64::from(i) * x.powi(i - 1) / (f64::from(i) + 1.0))
                    .sum::<f64>()
            },
            &[-1.4, -0.6, 0.5, 1.2],
            STRICT,
        );
    }
}

#[differentiate]
fn window(x: f64, a: i32, b: i32) -> f64 {
    let mut acc = 0.0;
    for i in a..b {
        acc = acc * x + (i as f64).cos();
    }
    acc
}

#[test]
fn for_over_a_range_with_integer_parameter_bounds() {
    for (a, b) in [(3, 3), (5, 2), (0, 1), (-2, 4), (10, 17)] {
        let want = |x: f64| {
            // acc = sum_{i=a}^{b-1} cos(i) x^(b-1-i).
            (a..b)
                .filter(|&i| b - 1 - i > 0)
                .map(|i| f64::from(i).cos() * f64::from(b - 1 - i) * x.powi(b - 2 - i))
                .sum::<f64>()
        };
        unary(
            &format!("window(x, {a}, {b})"),
            |x| window(x, a, b),
            |x| window_grad(x, a, b),
            |x, d| window_adjoint(x, a, b, d),
            want,
            &[-1.3, 0.4, 0.9, 1.6],
            STRICT,
        );
    }
}

// ---------------------------------------------------------------------------
// Tapes kept on the stack: values overwritten in `for` loops over literal
// ranges fit a fixed array (up to 256 values); more, or loops of unknown
// length, use a `Vec`. Both must give the same derivatives.
// ---------------------------------------------------------------------------

/// Three nested literal ranges (2·3·4 = 24 trips), two push sites, one in a
/// branch, and a `break` that ends the inner loop early on some paths.
#[differentiate]
fn nested_literal_loops(x: f64) -> f64 {
    let mut r = 1.0;
    for i in 0..2 {
        for j in 0..=2 {
            for k in (0..4).rev() {
                r = r * (1.0 + x / (i + j + k + 1) as f64);
                if k == 1 {
                    r = r.sin() + r;
                }
                if r > 50.0 {
                    break;
                }
            }
        }
    }
    r
}

fn nested_literal_loops_dual(x: Dual<1>) -> Dual<1> {
    let mut r = Dual::cst(1.0);
    for i in 0..2 {
        for j in 0..=2 {
            for k in (0..4).rev() {
                r = r * (Dual::cst(1.0) + x / Dual::cst((i + j + k + 1) as f64));
                if k == 1 {
                    r = r.sin() + r;
                }
                if r.v > 50.0 {
                    break;
                }
            }
        }
    }
    r
}

#[test]
fn nested_literal_ranges_with_a_break() {
    unary(
        "nested_literal_loops",
        nested_literal_loops,
        nested_literal_loops_grad,
        nested_literal_loops_adjoint,
        dual1(nested_literal_loops, nested_literal_loops_dual),
        &[0.05, 0.2, 0.35, 0.8],
        STRICT,
    );
}

/// r ← r·x + 1, n times from r = 2: r_n = 2xⁿ + Σ_{k<n} xᵏ, so
/// dr_n/dx = 2n xⁿ⁻¹ + Σ_{k<n} k xᵏ⁻¹. 256 trips fill a stack tape exactly;
/// 257 take a `Vec`.
#[differentiate]
fn affine_256(x: f64) -> f64 {
    let mut r = 2.0;
    for _ in 0..256 {
        r = r * x + 1.0;
    }
    r
}

#[differentiate]
fn affine_257(x: f64) -> f64 {
    let mut r = 2.0;
    for _ in 1..=257 {
        r = r * x + 1.0;
    }
    r
}

fn affine_derivative(x: f64, n: i32) -> f64 {
    2.0 * f64::from(n) * x.powi(n - 1) + (1..n).map(|k| f64::from(k) * x.powi(k - 1)).sum::<f64>()
}

#[test]
fn stack_tape_at_its_capacity_and_one_past_it() {
    let points = [0.9, 0.99, -0.97, 1.001];
    unary(
        "affine_256",
        affine_256,
        affine_256_grad,
        affine_256_adjoint,
        |x| affine_derivative(x, 256),
        &points,
        Tol {
            rel: 1e-10,
            fd: Some(1e-6),
        },
    );
    unary(
        "affine_257",
        affine_257,
        affine_257_grad,
        affine_257_adjoint,
        |x| affine_derivative(x, 257),
        &points,
        Tol {
            rel: 1e-10,
            fd: Some(1e-6),
        },
    );
}
