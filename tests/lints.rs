//! Generated code must be warning-free and hygienic.
//!
//! This crate root denies every rustc warning and every default clippy lint,
//! so any lint that fires in the code `#[differentiate]` writes fails the
//! build (`cargo test --test lints`, `cargo clippy --all-targets`). The
//! functions use the most hostile names available: parameters and locals
//! spelled like the names the generated code is built from (`d_x`, `d_out`,
//! `out`, `tape_s`, `s_1`, `t1`, `__t0`, ...), shadowing, raw identifiers,
//! loops, branches and early returns. Every gradient is compared with a
//! derivative written out by hand, so a generated name captured by a user
//! name (or the other way round) shows up as a wrong number, not only as a
//! compile error.

#![deny(warnings)]
#![deny(clippy::all)]

mod support;

use gradmacro::{custom_adjoint, differentiate};

/// Seed used for every `f_adjoint` call: not 1, so a dropped seed shows.
const SEED: f64 = -1.75;

/// `got` and `want` agree to a tight tolerance.
#[track_caller]
fn assert_close(what: &str, got: f64, want: f64) {
    support::assert_close(what, got, want, 1e-12, 1e-12);
}

#[track_caller]
fn assert_close32(what: &str, got: f32, want: f32) {
    support::assert_close(what, got.into(), want.into(), 1e-5, 1e-5);
}

// ---------------------------------------------------------------------------
// Names that look like adjoints and seeds.
// ---------------------------------------------------------------------------

/// A parameter `d_x` next to `x`: `d_x` is the natural name of `x`'s adjoint.
#[differentiate]
fn adjoint_lookalikes(d_x: f64, x: f64) -> f64 {
    let d_out = d_x * x;
    let x_adj = d_out + x;
    x_adj * d_x
}

#[test]
fn adjoint_lookalikes_gradient() {
    for (d_x, x) in [(0.5, 1.5), (-1.25, 2.0), (3.0, -0.75)] {
        // f = d_x^2 x + x d_x
        let want = (2.0 * d_x * x + x, d_x * d_x + d_x);
        let (value, (g0, g1)) = adjoint_lookalikes_grad(d_x, x);
        assert_close("value", value, adjoint_lookalikes(d_x, x));
        assert_close("df/dd_x", g0, want.0);
        assert_close("df/dx", g1, want.1);
        let (a0, a1) = adjoint_lookalikes_adjoint(d_x, x, SEED);
        assert_close("adjoint d_x", a0, SEED * want.0);
        assert_close("adjoint x", a1, SEED * want.1);
    }
}

/// Parameters named after the seed (`d_out`) and the output (`out`).
#[differentiate]
fn seed_lookalikes(d_out: f64, out: f64) -> f64 {
    let adj = d_out * out;
    let value = adj.sin();
    value + out
}

#[test]
fn seed_lookalikes_gradient() {
    for (d_out, out) in [(0.3f64, 0.9f64), (-1.1, 2.2), (2.5, -0.4)] {
        let c = (d_out * out).cos();
        let want = (c * out, c * d_out + 1.0);
        let (value, (g0, g1)) = seed_lookalikes_grad(d_out, out);
        assert_close("value", value, seed_lookalikes(d_out, out));
        assert_close("df/dd_out", g0, want.0);
        assert_close("df/dout", g1, want.1);
        // The third argument is the seed, whatever the parameters are called.
        let (a0, a1) = seed_lookalikes_adjoint(d_out, out, SEED);
        assert_close("adjoint d_out", a0, SEED * want.0);
        assert_close("adjoint out", a1, SEED * want.1);
    }
}

/// Names the generated code could derive from `out` and `d_out` themselves.
#[differentiate]
fn crowded(out: f64, out_1: f64) -> f64 {
    let d_out_1 = out * out_1;
    let grad = d_out_1 + out;
    let d_out_2 = grad * out_1;
    d_out_2 - out
}

#[test]
fn crowded_gradient() {
    for (out, out_1) in [(0.7, 1.3), (-2.0, 0.25)] {
        // f = out out_1^2 + out out_1 - out
        let want = (out_1 * out_1 + out_1 - 1.0, 2.0 * out * out_1 + out);
        let (value, (g0, g1)) = crowded_grad(out, out_1);
        assert_close("value", value, crowded(out, out_1));
        assert_close("df/dout", g0, want.0);
        assert_close("df/dout_1", g1, want.1);
        let (a0, a1) = crowded_adjoint(out, out_1, SEED);
        assert_close("adjoint out", a0, SEED * want.0);
        assert_close("adjoint out_1", a1, SEED * want.1);
    }
}

// ---------------------------------------------------------------------------
// Names that look like temporaries, tapes and versions.
// ---------------------------------------------------------------------------

/// Locals spelled like generated temporaries.
#[differentiate]
fn temp_lookalikes(t1: f64, t2: f64) -> f64 {
    let __t0 = t1 * t2;
    let t3 = __t0 + t1.sin() * t2;
    t3 * t1
}

#[test]
fn temp_lookalikes_gradient() {
    for (t1, t2) in [(0.4f64, 1.6f64), (-1.3, 0.8), (2.1, -1.9)] {
        // f = t1^2 t2 + t1 sin(t1) t2
        let want = (
            2.0 * t1 * t2 + (t1.sin() + t1 * t1.cos()) * t2,
            t1 * t1 + t1 * t1.sin(),
        );
        let (value, (g0, g1)) = temp_lookalikes_grad(t1, t2);
        assert_close("value", value, temp_lookalikes(t1, t2));
        assert_close("df/dt1", g0, want.0);
        assert_close("df/dt2", g1, want.1);
        let (a0, a1) = temp_lookalikes_adjoint(t1, t2, SEED);
        assert_close("adjoint t1", a0, SEED * want.0);
        assert_close("adjoint t2", a1, SEED * want.1);
    }
}

/// A variable `s` in a loop next to locals named like its tape (`tape_s`), its
/// versions (`s_1`) and its adjoints (`d_s`, `d_s_new`).
#[differentiate]
fn tape_lookalikes(s: f64, n: u32) -> f64 {
    let mut tape_s = 1.0;
    let mut s_1 = 0.0;
    let mut d_s = s;
    for iters1 in 0..n {
        let took1 = iters1 as f64;
        tape_s *= s;
        s_1 += tape_s * took1;
        d_s = d_s * 0.5 + s;
    }
    let d_s_new = s_1 + tape_s;
    d_s_new + d_s
}

/// d/ds of `tape_lookalikes`, term by term.
fn d_tape_lookalikes(s: f64, n: u32) -> f64 {
    // s_1 = sum_{i<n} i s^(i+1); tape_s = s^n; d_s = s (2 - 2^-n).
    let mut d = 0.0;
    for i in 0..n {
        d += f64::from(i) * f64::from(i + 1) * s.powi(i as i32);
    }
    if n > 0 {
        d += f64::from(n) * s.powi(n as i32 - 1);
    }
    d + 2.0 - 0.5f64.powi(n as i32)
}

#[test]
fn tape_lookalikes_gradient() {
    for s in [0.6, -1.2, 1.7] {
        for n in [0, 1, 2, 5] {
            let (value, g) = tape_lookalikes_grad(s, n);
            assert_close("value", value, tape_lookalikes(s, n));
            assert_close("df/ds", g, d_tape_lookalikes(s, n));
            let a = tape_lookalikes_adjoint(s, n, SEED);
            assert_close("adjoint s", a, SEED * d_tape_lookalikes(s, n));
        }
    }
}

/// Integer parameters and loop variables spelled like generated names.
#[differentiate]
fn int_lookalikes(x: f64, tape: usize, took1: i32) -> f64 {
    let mut y = x;
    for t1 in 0..tape {
        y = y * x + t1 as f64 + f64::from(took1);
    }
    y
}

#[test]
fn int_lookalikes_gradient() {
    for x in [0.5, -1.4, 1.1] {
        for tape in [0, 1, 3] {
            let (mut y, mut dy) = (x, 1.0);
            for t1 in 0..tape {
                dy = dy * x + y;
                y = y * x + t1 as f64 + 2.0;
            }
            let (value, g) = int_lookalikes_grad(x, tape, 2);
            assert_close("value", value, y);
            assert_close("value by hand", int_lookalikes(x, tape, 2), y);
            assert_close("df/dx", g, dy);
            assert_close(
                "adjoint x",
                int_lookalikes_adjoint(x, tape, 2, SEED),
                SEED * dy,
            );
        }
    }
}

/// A free function spelled like a generated temporary, called with a constant.
fn t2() -> f64 {
    0.5
}

#[differentiate]
fn calls_lookalike(x: f64) -> f64 {
    x * t2() + x.sin()
}

#[test]
fn calls_lookalike_gradient() {
    for x in [0.3f64, -1.2] {
        let want = 0.5 + x.cos();
        let (value, g) = calls_lookalike_grad(x);
        assert_close("value", value, calls_lookalike(x));
        assert_close("df/dx", g, want);
        assert_close("adjoint x", calls_lookalike_adjoint(x, SEED), SEED * want);
    }
}

// ---------------------------------------------------------------------------
// Custom adjoints whose parameters are spelled like the names their generated
// pullbacks are built from (the seed `d_out`, gradient entries `g1`, slots
// `d1`, the output `out`, the loop's `b` and `g`).
// ---------------------------------------------------------------------------

fn scale(d_out: f64, g1: f64) -> f64 {
    d_out * g1.sin()
}

/// The seed is called `d1`, like the pullback's first slot.
#[custom_adjoint(scale)]
fn scale_adjoint(d_out: f64, g1: f64, d1: f64) -> (f64, f64) {
    (d1 * g1.sin(), d1 * d_out * g1.cos())
}

fn shift(out: f64, d1: &[f64], g1: usize) -> f64 {
    out.exp() + d1[g1] * out
}

/// The seed is called `d_out`; a constant parameter is called `g1`.
#[custom_adjoint(shift)]
fn shift_adjoint(out: f64, d1: &[f64], g1: usize, d_out: f64) -> (f64, Vec<f64>) {
    let mut d_d1 = vec![0.0; d1.len()];
    d_d1[g1] = d_out * out;
    (d_out * (out.exp() + d1[g1]), d_d1)
}

fn mix(b: f64, g: &[f64]) -> f64 {
    b * g[0] + g[1]
}

#[custom_adjoint(mix)]
fn mix_adjoint(b: f64, g: &[f64], g2: f64) -> (f64, Vec<f64>) {
    let mut d_g = vec![0.0; g.len()];
    d_g[0] = g2 * b;
    d_g[1] = g2;
    (g2 * g[0], d_g)
}

/// The caller's parameters repeat the callees' names.
#[differentiate]
fn scaled_square(d_out: f64, g1: f64) -> f64 {
    scale(d_out, g1) * g1
}

#[differentiate]
fn custom_lookalikes(d_out: f64, g1: f64, out: f64, d1: &[f64]) -> f64 {
    let d2 = scale(d_out, g1);
    d2 * shift(out, d1, 1) + mix(g1, d1)
}

#[test]
fn custom_adjoint_lookalikes_gradient() {
    for (d_out, g1) in [(0.5f64, 1.5f64), (-1.25, 2.0), (3.0, -0.75)] {
        // f = d_out sin(g1) g1
        let (s, c) = g1.sin_cos();
        let want = (s * g1, d_out * (c * g1 + s));
        let (value, (a, b)) = scaled_square_grad(d_out, g1);
        assert_close("value", value, scaled_square(d_out, g1));
        assert_close("df/dd_out", a, want.0);
        assert_close("df/dg1", b, want.1);
        let (a, b) = scaled_square_adjoint(d_out, g1, SEED);
        assert_close("adjoint d_out", a, SEED * want.0);
        assert_close("adjoint g1", b, SEED * want.1);
    }
    let points: [(f64, f64, f64, [f64; 3]); 3] = [
        (0.5, 1.5, 0.25, [0.75, -0.5, 2.0]),
        (-1.25, 2.0, -0.5, [1.5, 0.25, -1.0]),
        (3.0, -0.75, 1.25, [-0.25, 2.5, 0.5]),
    ];
    for (d_out, g1, out, d1) in points {
        // f = S H + M, S = d_out sin(g1), H = exp(out) + d1[1] out,
        // M = g1 d1[0] + d1[1]
        let (s, c) = g1.sin_cos();
        let big_s = d_out * s;
        let h = out.exp() + d1[1] * out;
        let want_d1 = [g1, big_s * out + 1.0, 0.0];
        let want = (s * h, d_out * c * h + d1[0], big_s * (out.exp() + d1[1]));
        let (value, (a, b, o, g)) = custom_lookalikes_grad(d_out, g1, out, &d1);
        assert_close("value", value, custom_lookalikes(d_out, g1, out, &d1));
        assert_close("df/dd_out", a, want.0);
        assert_close("df/dg1", b, want.1);
        assert_close("df/dout", o, want.2);
        assert_eq!(g.len(), 3);
        for (&got, &w) in g.iter().zip(&want_d1) {
            assert_close("df/dd1", got, w);
        }
        let (a, b, o, g) = custom_lookalikes_adjoint(d_out, g1, out, &d1, SEED);
        assert_close("adjoint d_out", a, SEED * want.0);
        assert_close("adjoint g1", b, SEED * want.1);
        assert_close("adjoint out", o, SEED * want.2);
        assert_eq!(g.len(), 3);
        for (&got, &w) in g.iter().zip(&want_d1) {
            assert_close("adjoint d1", got, SEED * w);
        }
    }
}

// ---------------------------------------------------------------------------
// Shadowing, raw identifiers, `mut` parameters.
// ---------------------------------------------------------------------------

/// `x` shadowed three times, and a local `d_x` in between.
#[differentiate]
fn shadowing(x: f64) -> f64 {
    let x = x * x;
    let x = x + 1.0;
    let d_x = x.ln();
    let x = d_x * x;
    x - d_x
}

#[test]
fn shadowing_gradient() {
    for x in [0.3f64, -1.7, 2.4] {
        // f = u ln(u) - ln(u), u = x^2 + 1
        let u = x * x + 1.0;
        let want = 2.0 * x * (u.ln() + 1.0) - 2.0 * x / u;
        let (value, g) = shadowing_grad(x);
        assert_close("value", value, shadowing(x));
        assert_close("df/dx", g, want);
        assert_close("adjoint x", shadowing_adjoint(x, SEED), SEED * want);
    }
}

/// The same name bound in the function, inside a loop and inside a block,
/// with the outer binding read after both.
#[differentiate]
fn block_shadowing(x: f64, n: u32) -> f64 {
    let k = x * 2.0;
    let mut acc = 0.0;
    for i in 0..n {
        let k = f64::from(i) + x;
        acc += k * x;
    }
    {
        let k = x.sin();
        acc += k;
    }
    acc * k
}

#[test]
fn block_shadowing_gradient() {
    for (x, n) in [(0.7f64, 3u32), (-0.4, 0), (1.3, 5)] {
        // acc = sum_i (i + x) x + sin x; f = 2 x acc
        let (mut acc, mut dacc) = (0.0, 0.0);
        for i in 0..n {
            acc += (f64::from(i) + x) * x;
            dacc += f64::from(i) + 2.0 * x;
        }
        acc += x.sin();
        dacc += x.cos();
        let want = 2.0 * x * dacc + 2.0 * acc;
        let (value, g) = block_shadowing_grad(x, n);
        assert_close("value", value, block_shadowing(x, n));
        assert_close("df/dx", g, want);
        assert_close(
            "adjoint x",
            block_shadowing_adjoint(x, n, SEED),
            SEED * want,
        );
    }
}

/// Raw identifiers as parameters.
#[differentiate]
fn raw_names(r#type: f64, r#match: f64) -> f64 {
    let r#loop = r#type * r#match;
    r#loop.exp() + r#type
}

#[test]
fn raw_names_gradient() {
    for (a, b) in [(0.2f64, 0.9f64), (-0.8, 1.4)] {
        let e = (a * b).exp();
        let want = (e * b + 1.0, e * a);
        let (value, (g0, g1)) = raw_names_grad(a, b);
        assert_close("value", value, raw_names(a, b));
        assert_close("df/dtype", g0, want.0);
        assert_close("df/dmatch", g1, want.1);
        let (a0, a1) = raw_names_adjoint(a, b, SEED);
        assert_close("adjoint type", a0, SEED * want.0);
        assert_close("adjoint match", a1, SEED * want.1);
    }
}

/// A `mut` parameter overwritten in a loop.
#[differentiate]
fn mut_param(mut x: f64, n: u32) -> f64 {
    for _ in 0..n {
        x = x.sin() + x;
    }
    x
}

#[test]
fn mut_param_gradient() {
    for x0 in [0.4f64, -2.2, 1.9] {
        for n in [0, 1, 4] {
            let (mut x, mut dx) = (x0, 1.0);
            for _ in 0..n {
                dx *= x.cos() + 1.0;
                x = x.sin() + x;
            }
            let (value, g) = mut_param_grad(x0, n);
            assert_close("value", value, x);
            assert_close("value by hand", mut_param(x0, n), x);
            assert_close("df/dx", g, dx);
            assert_close("adjoint x", mut_param_adjoint(x0, n, SEED), SEED * dx);
        }
    }
}

/// The function and a parameter share a name.
#[differentiate]
fn value(value: f64, out: f64) -> f64 {
    value * out + value
}

#[test]
fn value_named_like_its_function() {
    let (v, (g0, g1)) = value_grad(1.5, -0.5);
    assert_close("value", v, value(1.5, -0.5));
    assert_close("df/dvalue", g0, -0.5 + 1.0);
    assert_close("df/dout", g1, 1.5);
    let (a0, a1) = value_adjoint(1.5, -0.5, SEED);
    assert_close("adjoint value", a0, SEED * 0.5);
    assert_close("adjoint out", a1, SEED * 1.5);
}

/// The output is a parameter, unchanged; another parameter is never read.
#[differentiate]
fn passthrough(out: f64, _unused: f64) -> f64 {
    out
}

#[test]
fn passthrough_gradient() {
    assert_eq!(passthrough(1.5, 2.0), 1.5);
    assert_eq!(passthrough_grad(1.5, 2.0), (1.5, (1.0, 0.0)));
    assert_eq!(passthrough_adjoint(1.5, 2.0, SEED), (SEED, 0.0));
}

/// Every compound assignment on a differentiated variable.
#[differentiate]
fn compound(x: f64, y: f64) -> f64 {
    let mut q = x;
    q /= y;
    q -= y;
    q *= x;
    q += 1.0;
    q %= 100.0;
    q
}

#[test]
fn compound_gradient() {
    for (x, y) in [(2.0, 0.5), (-1.5, 1.25), (3.0, -2.0)] {
        // f = (x / y - y) x + 1, away from the jumps of `% 100`.
        let want = (2.0 * x / y - y, -x * x / (y * y) - x);
        let (value, (g0, g1)) = compound_grad(x, y);
        assert_close("value", value, compound(x, y));
        assert_close("df/dx", g0, want.0);
        assert_close("df/dy", g1, want.1);
        let (a0, a1) = compound_adjoint(x, y, SEED);
        assert_close("adjoint x", a0, SEED * want.0);
        assert_close("adjoint y", a1, SEED * want.1);
    }
}

/// `clamp`, whose derivative tests whether the argument is inside the range.
#[differentiate]
fn clamped(x: f64, gain: f64) -> f64 {
    x.clamp(-1.0, 1.0) * gain
}

#[test]
fn clamped_gradient() {
    for (x, gain) in [(0.25f64, 3.0), (1.5, 3.0), (-2.0, -0.5)] {
        let inside = x > -1.0 && x < 1.0;
        let want = (if inside { gain } else { 0.0 }, x.clamp(-1.0, 1.0));
        let (value, (g0, g1)) = clamped_grad(x, gain);
        assert_close("value", value, clamped(x, gain));
        assert_close("df/dx", g0, want.0);
        assert_close("df/dgain", g1, want.1);
        let (a0, a1) = clamped_adjoint(x, gain, SEED);
        assert_close("adjoint x", a0, SEED * want.0);
        assert_close("adjoint gain", a1, SEED * want.1);
    }
}

// ---------------------------------------------------------------------------
// Parameters that do not reach the output, constant outputs.
// ---------------------------------------------------------------------------

/// `_ignored` is never read and `gate` only in a comparison: both have a zero
/// gradient entry.
#[differentiate]
fn ignores_some(x: f64, _ignored: f64, gate: f64) -> f64 {
    if gate > 0.0 {
        x * 3.0
    } else {
        -x
    }
}

#[test]
fn ignores_some_gradient() {
    for gate in [1.0, -1.0] {
        let dx = if gate > 0.0 { 3.0 } else { -1.0 };
        let (value, (g0, g1, g2)) = ignores_some_grad(0.7, 5.0, gate);
        assert_close("value", value, ignores_some(0.7, 5.0, gate));
        assert_eq!((g0, g1, g2), (dx, 0.0, 0.0));
        let (a0, a1, a2) = ignores_some_adjoint(0.7, 5.0, gate, SEED);
        assert_eq!((a0, a1, a2), (SEED * dx, 0.0, 0.0));
    }
}

/// The output does not depend on `x` at all.
#[differentiate]
fn flat(_x: f64) -> f64 {
    2.5
}

/// The output depends on `x` only through a branch.
#[differentiate]
fn constant_output(x: f64, n: i32) -> f64 {
    let k = f64::from(n);
    if x > 0.0 {
        k
    } else {
        2.0 * k
    }
}

#[test]
fn constant_outputs_have_zero_gradient() {
    assert_eq!(flat(1.0), 2.5);
    assert_eq!(flat_grad(1.0), (2.5, 0.0));
    assert_eq!(flat_adjoint(1.0, SEED), 0.0);
    assert_eq!(constant_output(1.0, 3), 3.0);
    assert_eq!(constant_output_grad(1.0, 3), (3.0, 0.0));
    assert_eq!(constant_output_grad(-1.0, 3), (6.0, 0.0));
    assert_eq!(constant_output_adjoint(-1.0, 3, SEED), 0.0);
}

// ---------------------------------------------------------------------------
// Loops, branches, early returns.
// ---------------------------------------------------------------------------

/// `while` with `continue` and an early `return`, then a `loop` with `break`.
#[differentiate]
fn control_flow(x: f64, n: u32) -> f64 {
    let mut acc = x;
    let mut i = 0;
    while i < n {
        i += 1;
        if i % 3 == 0 {
            continue;
        }
        if acc > 50.0 {
            return acc.sqrt();
        }
        acc = acc * x + 1.0;
    }
    loop {
        if acc < 1.0 {
            break;
        }
        acc *= 0.5;
    }
    acc
}

/// `control_flow` and its derivative, carried along by hand.
fn d_control_flow(x: f64, n: u32) -> (f64, f64) {
    let (mut a, mut da) = (x, 1.0);
    let mut i = 0;
    while i < n {
        i += 1;
        if i % 3 == 0 {
            continue;
        }
        if a > 50.0 {
            return (a.sqrt(), 0.5 / a.sqrt() * da);
        }
        da = da * x + a;
        a = a * x + 1.0;
    }
    while a >= 1.0 {
        a *= 0.5;
        da *= 0.5;
    }
    (a, da)
}

#[test]
fn control_flow_gradient() {
    for x in [0.3, 1.5, 3.0, 7.5, -0.9] {
        for n in [0, 1, 2, 4, 7] {
            let want = d_control_flow(x, n);
            let (value, g) = control_flow_grad(x, n);
            assert_close("value", value, control_flow(x, n));
            assert_close("value by hand", value, want.0);
            assert_close("df/dx", g, want.1);
            assert_close("adjoint x", control_flow_adjoint(x, n, SEED), SEED * want.1);
        }
    }
}

/// An early `return` of an `if` expression from inside a nested block, and a
/// `let` initialised by an `if` with a constant branch.
#[differentiate]
fn early_exits(x: f64, y: f64) -> f64 {
    let out = if x > y { x * y } else { 1.0 };
    {
        let adj = out + y;
        if adj > 10.0 {
            return if x > 0.0 { adj * x } else { adj };
        }
    }
    out * x
}

#[test]
fn early_exits_gradient() {
    // x > y, x y + y > 10, x > 0: f = (x y + y) x.
    let (x, y) = (4.0, 3.0);
    let (v, (gx, gy)) = early_exits_grad(x, y);
    assert_close("value", v, early_exits(x, y));
    assert_close("df/dx", gx, 2.0 * x * y + y);
    assert_close("df/dy", gy, x * x + x);
    // x > y, small: f = x^2 y.
    let (x, y) = (1.5, 0.5);
    let (v, (gx, gy)) = early_exits_grad(x, y);
    assert_close("value", v, early_exits(x, y));
    assert_close("df/dx", gx, 2.0 * x * y);
    assert_close("df/dy", gy, x * x);
    // x <= y: out = 1, f = x.
    let (x, y) = (0.5, 2.0);
    let (v, (gx, gy)) = early_exits_grad(x, y);
    assert_close("value", v, early_exits(x, y));
    assert_close("df/dx", gx, 1.0);
    assert_close("df/dy", gy, 0.0);
    // x <= y, 1 + y > 10, x <= 0: f = 1 + y.
    let (x, y) = (-1.0, 12.0);
    let (a0, a1) = early_exits_adjoint(x, y, SEED);
    assert_close("adjoint x", a0, 0.0);
    assert_close("adjoint y", a1, SEED);
}

/// Items declared inside the body.
#[differentiate]
fn with_items(x: f64) -> f64 {
    const HALF: f64 = 0.5;
    fn offset() -> f64 {
        1.5
    }
    x * x * HALF + offset() * x
}

#[test]
fn with_items_gradient() {
    let (v, g) = with_items_grad(2.0);
    assert_close("value", v, with_items(2.0));
    assert_close("df/dx", g, 2.0 + 1.5);
    assert_close("adjoint x", with_items_adjoint(2.0, SEED), SEED * 3.5);
}

// ---------------------------------------------------------------------------
// wrt, and parameters excluded from it.
// ---------------------------------------------------------------------------

/// Only `adj` is differentiated; `d_adj` is a constant parameter spelled like
/// its adjoint.
#[differentiate(wrt(adj))]
fn only_adj(x: f64, adj: f64, d_adj: f64) -> f64 {
    x * adj * adj + d_adj * adj
}

#[test]
fn only_adj_gradient() {
    for (x, adj, d_adj) in [(0.5, 1.5, -2.0), (2.0, -0.3, 0.7)] {
        let want = 2.0 * x * adj + d_adj;
        let (value, g) = only_adj_grad(x, adj, d_adj);
        assert_close("value", value, only_adj(x, adj, d_adj));
        assert_close("df/dadj", g, want);
        assert_close(
            "adjoint adj",
            only_adj_adjoint(x, adj, d_adj, SEED),
            SEED * want,
        );
    }
}

/// A parameter excluded by `wrt` that is overwritten with a value depending on
/// a differentiated one.
#[differentiate(wrt(x))]
fn rebinds_constant(x: f64, mut y: f64) -> f64 {
    y *= x;
    y + x
}

#[test]
fn rebinds_constant_gradient() {
    // f = y x + x
    let (value, g) = rebinds_constant_grad(2.0, 5.0);
    assert_close("value", value, rebinds_constant(2.0, 5.0));
    assert_close("df/dx", g, 5.0 + 1.0);
    assert_close(
        "adjoint x",
        rebinds_constant_adjoint(2.0, 5.0, SEED),
        SEED * 6.0,
    );
}

/// Four parameters, two of them spelled like the adjoints of the other two.
#[differentiate]
fn four(d_a: f64, a: f64, d_d: f64, d: f64) -> f64 {
    d_a * a + d_d * d + a * d
}

#[test]
fn four_gradient() {
    let (d_a, a, d_d, d) = (0.5, -1.5, 2.0, 0.25);
    let want = (a, d_a + d, d, d_d + a);
    let (v, grad) = four_grad(d_a, a, d_d, d);
    assert_close("value", v, four(d_a, a, d_d, d));
    assert_eq!(grad, want);
    let adj = four_adjoint(d_a, a, d_d, d, 2.0);
    assert_eq!(
        adj,
        (2.0 * want.0, 2.0 * want.1, 2.0 * want.2, 2.0 * want.3)
    );
}

/// Seven parameters: the most clippy accepts; `f_adjoint` has an eighth.
#[differentiate]
fn seven(a: f64, b: f64, c: f64, d: f64, e: f64, g: f64, h: f64) -> f64 {
    a * b + c * d + e * g * h
}

#[test]
fn seven_gradient() {
    let (v, grad) = seven_grad(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0);
    assert_close("value", v, seven(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0));
    assert_eq!(grad, (2.0, 1.0, 4.0, 3.0, 42.0, 35.0, 30.0));
    let adj = seven_adjoint(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 2.0);
    assert_eq!(adj, (4.0, 2.0, 8.0, 6.0, 84.0, 70.0, 60.0));
}

// ---------------------------------------------------------------------------
// f32.
// ---------------------------------------------------------------------------

#[differentiate]
fn single(x: f32, d_x: f32) -> f32 {
    let out = x * d_x;
    out.exp() - d_x
}

#[test]
fn single_gradient() {
    for (x, d_x) in [(0.5f32, 1.5f32), (-1.0, 0.25)] {
        let e = (x * d_x).exp();
        let want = (e * d_x, e * x - 1.0);
        let (value, (g0, g1)) = single_grad(x, d_x);
        assert_close32("value", value, single(x, d_x));
        assert_close32("df/dx", g0, want.0);
        assert_close32("df/dd_x", g1, want.1);
        let (a0, a1) = single_adjoint(x, d_x, 2.0);
        assert_close32("adjoint x", a0, 2.0 * want.0);
        assert_close32("adjoint d_x", a1, 2.0 * want.1);
    }
}

/// An `f32` accumulator promoted to active by `+=` in a loop.
#[differentiate]
fn single_sum(x: f32, n: u32) -> f32 {
    let mut out = 0.0;
    for k in 0..n {
        out += x.powi(k as i32);
    }
    out
}

#[test]
fn single_sum_gradient() {
    for x in [0.5f32, -1.25, 1.1] {
        for n in [0u32, 1, 4] {
            let mut want = 0.0f32;
            for k in 1..n {
                want += k as f32 * x.powi(k as i32 - 1);
            }
            let (value, g) = single_sum_grad(x, n);
            assert_close32("value", value, single_sum(x, n));
            assert_close32("df/dx", g, want);
            assert_close32("adjoint x", single_sum_adjoint(x, n, 2.0), 2.0 * want);
        }
    }
}

// ---------------------------------------------------------------------------
// `pub` functions in a module.
// ---------------------------------------------------------------------------

pub mod model {
    use gradmacro::differentiate;

    /// Public, with names that look like adjoints.
    #[must_use]
    #[differentiate]
    pub fn energy(d_x: f64, x_adj: f64) -> f64 {
        let tape = d_x * d_x;
        let s_1 = tape + x_adj.cosh();
        s_1 * 0.5
    }

    /// Crate-visible, `wrt` a parameter called `d_out`.
    #[differentiate(wrt(d_out))]
    pub(crate) fn scaled(out: f64, d_out: f64) -> f64 {
        out * d_out.tanh()
    }
}

#[test]
fn module_functions_gradient() {
    let (v, (g0, g1)) = model::energy_grad(0.8, -0.6);
    assert_close("value", v, model::energy(0.8, -0.6));
    assert_close("dE/dd_x", g0, 0.8);
    assert_close("dE/dx_adj", g1, 0.5 * (-0.6f64).sinh());
    let (a0, a1) = model::energy_adjoint(0.8, -0.6, SEED);
    assert_close("adjoint d_x", a0, SEED * 0.8);
    assert_close("adjoint x_adj", a1, SEED * 0.5 * (-0.6f64).sinh());

    let t = 0.4f64.tanh();
    let (v, g) = model::scaled_grad(3.0, 0.4);
    assert_close("value", v, model::scaled(3.0, 0.4));
    assert_close("ds/dd_out", g, 3.0 * (1.0 - t * t));
    assert_close(
        "adjoint d_out",
        model::scaled_adjoint(3.0, 0.4, SEED),
        SEED * 3.0 * (1.0 - t * t),
    );
}

/// The cores of second derivatives return nothing, so they leave out the
/// output's arithmetic: `e`'s and `g`'s first values, which only that
/// arithmetic read, and `b`, read only by a condition whose branch has nothing
/// to undo, must not be left unread there (unused_assignments).
#[differentiate(hessian)]
fn unread_without_the_value(mut x: f64, y: f64) -> f64 {
    let b = y * 0.5;
    let mut s = 0.0;
    for _ in 0..4 {
        if b < 0.6 {
            s = 0.5;
        }
    }
    let mut e: f64 = 1.0;
    if y > 0.0 {
        e = 1.0;
        x = e + y;
    } else if y < -1.0 {
        e = 2.0;
        x = e - y;
    }
    for _ in 0..2 {
        let mut g: f64 = 0.5;
        if y > 1.0 {
            g = 2.0;
            x += g;
        }
        s += g;
    }
    x.cos() * y + e + s
}

#[test]
fn second_derivatives_without_unread_values() {
    // Piecewise: f = y cos(x) + 2.5 for -1 <= y <= 0; y cos(1 + y) + 2.5 for
    // 0 < y <= 1; y cos(5 + y) + 5 for y > 1.2; y cos(2 - y) + 3.5 for y < -1.
    for (x, y) in [
        (0.4f64, -0.5f64),
        (1.3, -0.2),
        (0.7, 0.5),
        (-0.3, 0.9),
        (0.2, 2.0),
        (1.1, -1.7),
    ] {
        let (want_g, want_h): ([f64; 2], [[f64; 2]; 2]) = if (-1.0..=0.0).contains(&y) {
            (
                [-y * x.sin(), x.cos()],
                [[-y * x.cos(), -x.sin()], [-x.sin(), 0.0]],
            )
        } else if y > 0.0 && y <= 1.0 {
            let u = 1.0 + y;
            let d1 = u.cos() - y * u.sin();
            ([0.0, d1], [[0.0, 0.0], [0.0, -2.0 * u.sin() - y * u.cos()]])
        } else if y > 1.2 {
            let u = 5.0 + y;
            let d1 = u.cos() - y * u.sin();
            ([0.0, d1], [[0.0, 0.0], [0.0, -2.0 * u.sin() - y * u.cos()]])
        } else {
            let u = 2.0 - y;
            let d1 = y * u.sin() + u.cos();
            ([0.0, d1], [[0.0, 0.0], [0.0, 2.0 * u.sin() - y * u.cos()]])
        };
        let (value, grad, hess) = unread_without_the_value_hessian(x, y);
        assert_eq!(value.to_bits(), unread_without_the_value(x, y).to_bits());
        for i in 0..2 {
            assert_close("gradient", grad[i], want_g[i]);
            for j in 0..2 {
                assert_close("hessian", hess[i][j], want_h[i][j]);
            }
        }
    }
}

/// In the cores of second derivatives the decrements of `b` feed only one
/// another (`x + b` is left out there), and rustc counts no read by a write
/// that nothing reads: they must be left out too (program 3003212 of the
/// differential test, unused_assignments).
#[differentiate(hessian)]
fn decrements_read_by_nothing(x: f64, n: usize) -> f64 {
    let mut b: f64 = 1.0;
    for j in 0..n {
        b -= 0.5;
        if j >= 2 {
            b = x;
            return b.acosh();
        }
    }
    x + b
}

#[test]
fn second_derivatives_without_writes_read_by_nothing() {
    for x in [1.3f64, 2.0, 3.5] {
        for n in [0, 2, 3, 5] {
            let (value, grad, hess) = decrements_read_by_nothing_hessian(x, n);
            assert_eq!(value.to_bits(), decrements_read_by_nothing(x, n).to_bits());
            let (g, h) = if n <= 2 {
                (1.0, 0.0)
            } else {
                let q = x * x - 1.0;
                (1.0 / q.sqrt(), -x / (q * q.sqrt()))
            };
            assert_close("gradient", grad[0], g);
            assert_close("hessian", hess[0][0], h);
        }
    }
}

/// In the cores of second derivatives `x -= r` is left out (the output's
/// `+ x` is, and nothing else reads that `x`), which leaves `r`, written
/// once, read by nothing: it must go too (program 3104172 of the
/// differential test, unused_assignments).
#[differentiate(tangent, hessian)]
#[allow(clippy::assign_op_pattern, clippy::redundant_pattern_matching)]
fn written_once_read_by_nothing(y: f64, n: usize, mut x: f64) -> f64 {
    let (mut acc,): (f64,) = (1.0,);
    x = 0.5 + x;
    if let Some(_) = n.checked_sub(2) {
        acc = y * y;
        if x >= 2.3 {
            acc += x;
        }
    } else {
        let mk_r = || 0.9;
        let r: f64 = mk_r();
        x -= r;
    }
    acc + x
}

/// The same through a `match` binding: `b = rest * 0.75` is left out of the
/// cores of second derivatives, and `rest` with it (program 3202176).
#[differentiate(tangent, hessian)]
#[allow(clippy::ptr_arg, clippy::useless_vec)]
fn match_binding_read_by_nothing(y: f64, cfg: &Scaled, w: &Vec<f64>) -> f64 {
    let Some(_) = w.len().checked_sub(2) else {
        return 1.0;
    };
    let mk_b = || cfg.scale;
    let mut b = mk_b();
    let tmp = vec![b, 2.5, 1.0];
    match w.len().checked_sub(1) {
        Some(rest) => {
            b = (rest as f64) * 0.75;
        }
        None => {
            let Some(_) = tmp.len().checked_sub(1) else {
                return 1.0;
            };
        }
    }
    b + y * y
}

/// A parameter read by its field.
struct Scaled {
    scale: f64,
}

#[test]
fn second_derivatives_without_values_written_once_and_read_by_nothing() {
    for (y, x) in [(0.7f64, 2.5f64), (-1.2, 0.3), (1.6, 1.9), (0.4, -0.8)] {
        for n in [0, 1, 2, 4] {
            let (value, grad, hess) = written_once_read_by_nothing_hessian(y, n, x);
            assert_eq!(
                value.to_bits(),
                written_once_read_by_nothing(y, n, x).to_bits()
            );
            // f = y² + [x + 0.5 >= 2.3] (x + 0.5) + x + 0.5 for n >= 2,
            // else 1 + x - 0.4.
            let (g, h) = match (n >= 2, x + 0.5 >= 2.3) {
                (false, _) => ([0.0, 1.0], [[0.0, 0.0], [0.0, 0.0]]),
                (true, c) => (
                    [2.0 * y, if c { 2.0 } else { 1.0 }],
                    [[2.0, 0.0], [0.0, 0.0]],
                ),
            };
            for i in 0..2 {
                assert_close("gradient", grad[i], g[i]);
                for j in 0..2 {
                    assert_close("hessian", hess[i][j], h[i][j]);
                }
            }
            let (_, t) = written_once_read_by_nothing_tangent(y, n, x, 0.5, -2.0);
            assert_close("tangent", t, 0.5 * g[0] - 2.0 * g[1]);
        }
    }
    let cfg = Scaled { scale: 1.5 };
    for y in [0.7f64, -1.2, 1.6] {
        for w in [vec![2.0], vec![2.0, 4.0], vec![1.0, -3.0, 0.5]] {
            let (value, grad, hess) = match_binding_read_by_nothing_hessian(y, &cfg, &w);
            assert_eq!(
                value.to_bits(),
                match_binding_read_by_nothing(y, &cfg, &w).to_bits()
            );
            // f = 0.75 (len - 1) + y² from two elements on, else 1; the
            // elements themselves do not enter.
            let (dy, dyy) = if w.len() >= 2 {
                (2.0 * y, 2.0)
            } else {
                (0.0, 0.0)
            };
            assert_close("gradient", grad[0], dy);
            assert!(grad[1..].iter().all(|g| *g == 0.0));
            assert_close("hessian", hess[0][0], dyy);
            assert!(hess.iter().flatten().skip(1).all(|h| *h == 0.0));
            let t = vec![1.0; w.len()];
            let (_, dot) = match_binding_read_by_nothing_tangent(y, &cfg, &w, -2.0, &t);
            assert_close("tangent", dot, -2.0 * dy);
        }
    }
}
