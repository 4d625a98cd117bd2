#!/usr/bin/env python3
"""Generates long straight-line functions for the benchmarks.

A straight-line function has no loops and no branches: N `let` statements,
each combining the previous value with one older value or an input through
one of seven shapes (tanh, sin, cos, division, exp, sqrt, linear
combination). Every value stays within about [-2.5, 2.5] for inputs in
[-1, 1], so the function is finite for any N. Statement `k` always reads
`v{k-1}`, so every value is used and the chain is as deep as the function is
long; the second operand is an input or a value up to 64 statements back.
The sequence is deterministic (SplitMix64 with a fixed seed).

    gen_straight_line.py bench N        the module `benches/gradients/straight_line.rs`:
                                        the function under `#[differentiate]`, its
                                        hand-written adjoint, and copies over num-dual
                                        and RustQuant_autodiff types
    gen_straight_line.py line N [--plain]
                                        a crate's `lib.rs` with one such function
    gen_straight_line.py many K [--plain]
                                        a crate's `lib.rs` with K differentiated
                                        functions of mixed shapes (straight-line, loops
                                        over slices, branches, nested loops)
    gen_straight_line.py typical K [--plain]
                                        a crate's `lib.rs` with K typical differentiated
                                        functions of 15 lines each: scalar arithmetic,
                                        `sqrt`, `tanh`, `exp`, `ln_1p`, a `for` loop over
                                        a `&[f64]` with an `if`/`else` accumulating into a
                                        local; every fourth calls the one before it

`--plain` leaves out `#[differentiate]`, for a baseline build.

Regenerate the benchmark module with `scripts/gen_straight_line.py bench 300`
(it runs rustfmt on the result). `gradmacro/src/bench_expand.rs` builds the
same statement shapes for the expansion timing.
"""

import subprocess
import sys

NX = 8  # inputs of the straight-line function
MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % n

    def constant(self, lo, hi):
        """A constant in [lo, hi) with two decimals, printed as a float literal."""
        steps = int(round((hi - lo) * 100))
        return "%.2f" % (lo + self.below(steps) / 100.0)


def statements(n, seed=0x5EED):
    """The statements as (kind, a, b, c1, c2) with operands as source text."""
    rng = SplitMix64(seed)
    out = []
    for k in range(n):
        a = "x[%d]" % (NX - 1) if k == 0 else "v%d" % (k - 1)
        if k < NX:
            # The first statements read every input, through a shape that
            # has a second operand.
            b = "x[%d]" % k
            kind = (0, 1, 2, 3, 6)[rng.below(5)]
        else:
            if rng.below(4) == 0:
                b = "x[%d]" % rng.below(NX)
            else:
                b = "v%d" % (k - 1 - rng.below(min(k, 64)))
            kind = rng.below(7)
        c1 = rng.constant(0.5, 1.5)
        c2 = rng.constant(0.1, 0.4)
        out.append((kind, a, b, c1, c2))
    return out


def rhs(kind, a, b, c1, c2):
    """The right-hand side of one statement; constants are on the right of
    every operator so the same text compiles for f64, duals and tape values."""
    if kind == 0:
        return "(%s * %s + %s).tanh()" % (a, c1, b)
    if kind == 1:
        return "(%s - %s).sin() * %s" % (a, b, c1)
    if kind == 2:
        return "%s * %s.cos()" % (a, b)
    if kind == 3:
        return "%s / (%s * %s + 1.0)" % (a, b, b)
    if kind == 4:
        return "(%s * %s).exp() * 0.5" % (a, c2)
    if kind == 5:
        return "(%s * %s * 0.5 + %s).sqrt()" % (a, a, c1)
    # Weights summing to less than 1 keep the combination bounded.
    return "%s * %s + %s * %s" % (a, c2, b, c2)


def body(stmts, indent="    "):
    lines = []
    for k, s in enumerate(stmts):
        lines.append("%slet v%d = %s;" % (indent, k, rhs(*s)))
    n = len(stmts)
    lines.append("%sv%d + v%d" % (indent, n - 1, n - 2))
    return "\n".join(lines)


def adjoint_name(operand):
    """`v12` -> `b12`, `x[3]` -> `g[3]`."""
    if operand.startswith("x["):
        return "g" + operand[1:]
    return "b" + operand[1:]


def hand_adjoint(stmts):
    """A textbook adjoint: the forward statements, then one block per statement
    in reverse order, each propagating `b{k}` (complete by then, since every
    use of `v{k}` comes later) to its operands."""
    n = len(stmts)
    lines = [body(stmts).rsplit("\n", 1)[0]]
    lines.append("    let value = v%d + v%d;" % (n - 1, n - 2))
    lines.append("    let mut g = vec![0.0; x.len()];")
    for k in range(n - 2):
        lines.append("    let mut b%d = 0.0;" % k)
    lines.append("    let mut b%d = 1.0;" % (n - 2))
    lines.append("    let b%d = 1.0;" % (n - 1))
    for k in reversed(range(n)):
        kind, a, b, c1, c2 = stmts[k]
        ba, bb = adjoint_name(a), adjoint_name(b)
        bk = "b%d" % k
        if kind == 0:
            lines.append("    let d = %s * (1.0 - v%d * v%d);" % (bk, k, k))
            lines.append("    %s += d * %s;" % (ba, c1))
            lines.append("    %s += d;" % bb)
        elif kind == 1:
            lines.append("    let d = %s * %s * (%s - %s).cos();" % (bk, c1, a, b))
            lines.append("    %s += d;" % ba)
            lines.append("    %s -= d;" % bb)
        elif kind == 2:
            lines.append("    %s += %s * %s.cos();" % (ba, bk, b))
            lines.append("    %s -= %s * %s * %s.sin();" % (bb, bk, a, b))
        elif kind == 3:
            lines.append("    let q = %s * %s + 1.0;" % (b, b))
            lines.append("    %s += %s / q;" % (ba, bk))
            lines.append("    %s -= %s * v%d * 2.0 * %s / q;" % (bb, bk, k, b))
        elif kind == 4:
            lines.append("    %s += %s * v%d * %s;" % (ba, bk, k, c2))
        elif kind == 5:
            lines.append("    %s += %s * %s * 0.5 / v%d;" % (ba, bk, a, k))
        else:
            lines.append("    %s += %s * %s;" % (ba, bk, c2))
            lines.append("    %s += %s * %s;" % (bb, bk, c2))
    lines.append("    (value, g)")
    return "\n".join(lines)


def bench_module(n):
    stmts = statements(n)
    b = body(stmts)
    return f"""//! A straight-line function of {n} statements, generated by
//! `scripts/gen_straight_line.py bench {n}`: do not edit by hand.
//!
//! The same body appears four times: as the function under `#[differentiate]`,
//! as its hand-written adjoint (forward sweep, then one block per statement in
//! reverse), and over num-dual and RustQuant_autodiff value types.

use gradmacro::differentiate;
use num_dual::{{DualNum, DualSVec64}};
use RustQuant_autodiff::Variable;

/// Number of inputs.
pub const INPUTS: usize = {NX};

/// The function: {n} statements, no loops, no branches.
#[differentiate]
pub fn straight_line(x: &[f64]) -> f64 {{
{b}
}}

/// Value and gradient, written out by hand as a textbook adjoint.
pub fn straight_line_hand(x: &[f64]) -> (f64, Vec<f64>) {{
{hand_adjoint(stmts)}
}}

/// The same body over forward-mode dual numbers with {NX} derivative slots.
pub fn straight_line_dual(x: &[DualSVec64<{NX}>]) -> DualSVec64<{NX}> {{
{b}
}}

/// The same body over tape variables.
pub fn straight_line_tape<'v>(x: &[Variable<'v>]) -> Variable<'v> {{
{b}
}}
"""


def line_crate(n, plain):
    attr = "" if plain else "#[differentiate]\n"
    use = "" if plain else "use gradmacro::differentiate;\n\n"
    return f"""//! One straight-line function of {n} statements (generated).
#![allow(clippy::all)]

{use}{attr}pub fn straight_line(x: &[f64]) -> f64 {{
{body(statements(n))}
}}
"""


def many_crate(k, plain):
    """K functions of four shapes, with constants varied per function."""
    rng = SplitMix64(0xC0DE)
    attr = "" if plain else "#[differentiate]\n"
    parts = ["//! %d differentiated functions of mixed shapes (generated).\n" % k]
    parts.append("#![allow(clippy::all)]\n\n")
    if not plain:
        parts.append("use gradmacro::differentiate;\n\n")
    for i in range(k):
        c = [rng.constant(0.5, 1.5) for _ in range(4)]
        shape = i % 4
        if shape == 0:
            stmts = statements(20, seed=0x1000 + i)
            parts.append(f"{attr}pub fn f{i}(x: &[f64]) -> f64 {{\n{body(stmts)}\n}}\n\n")
        elif shape == 1:
            parts.append(
                f"""{attr}pub fn f{i}(x: &[f64]) -> f64 {{
    let mut s = 0.0;
    for i in 0..x.len() - 1 {{
        s += ({c[0]} - x[i]).powi(2) + {c[1]} * (x[i + 1] - x[i] * x[i]).powi(2);
    }}
    s
}}

"""
            )
        elif shape == 2:
            parts.append(
                f"""{attr}pub fn f{i}(x: f64, y: f64) -> f64 {{
    let r = (x * x + y * y + {c[0]}).sqrt();
    if r > {c[1]} {{
        (r * {c[2]}).sin() / r
    }} else if x > y {{
        x * y.exp() - r
    }} else {{
        (x - y).tanh() * {c[3]}
    }}
}}

"""
            )
        else:
            parts.append(
                f"""{attr}pub fn f{i}(w: &[f64], n: usize) -> f64 {{
    let mut acc = 0.0;
    for i in 0..n {{
        let mut row = 0.0;
        for j in 0..w.len() / n {{
            row += w[i * (w.len() / n) + j] * {c[0]};
        }}
        acc += (row - {c[1]}).tanh().powi(2);
    }}
    acc / n as f64
}}

"""
            )
    return "".join(parts)


def typical_crate(k, plain):
    """K functions of 15 lines (signature and closing brace included), the
    same shape with constants varied per function. Function `t{i}` with
    `i % 4 == 3` calls `t{i-1}`, which calls nothing: under
    `#[differentiate]` the caller's reverse sweep runs the callee's
    `_pullback`. No comments, so every line of the plain crate is a line of
    code and the expanded-lines ratio of compile_time.sh reads directly."""
    rng = SplitMix64(0x7E1CA1)
    attr = "" if plain else "#[differentiate]\n"
    parts = ["#![allow(clippy::all)]\n\n"]
    if not plain:
        parts.append("use gradmacro::differentiate;\n\n")
    for i in range(k):
        c = [rng.constant(0.5, 1.5) for _ in range(3)] + [rng.constant(0.1, 0.4) for _ in range(3)]
        if i % 4 == 3:
            last = f"y + t{i - 1}(x, b, a) * {c[5]}"
        else:
            last = f"y * b - a * {c[5]}"
        parts.append(
            f"""{attr}pub fn t{i}(x: &[f64], a: f64, b: f64) -> f64 {{
    let r = (a * a + b * b + {c[0]}).sqrt();
    let g = (a * {c[1]} - b).tanh();
    let mut s = 0.0;
    for &v in x.iter() {{
        if v > g {{
            s += (v * r * {c[3]}).exp();
        }} else {{
            s += (v * v).ln_1p() * {c[2]} - g;
        }}
    }}
    let m = s / (x.len() as f64 + 1.0);
    let y = m * r + g * {c[4]};
    {last}
}}

"""
        )
    # Every gradient used once (every function, in the plain crate): code
    # that is generated but never called (an `#[inline]` function) costs a
    # build nothing, so a crate that calls nothing would flatter the macro.
    parts.append("pub fn use_all(x: &[f64]) -> f64 {\n    let mut s = 0.0;\n")
    for i in range(k):
        if plain:
            parts.append(f"    s += t{i}(x, 0.5, 1.5);\n")
        else:
            parts.append(f"    let (v, (dx, da, db)) = t{i}_grad(x, 0.5, 1.5);\n")
            parts.append("    s += v + dx[0] + da + db;\n")
    parts.append("    s\n}\n")
    return "".join(parts)


def rustfmt(path):
    subprocess.run(["rustfmt", "--edition", "2021", path], check=True)


def main(argv):
    if len(argv) < 3 or argv[1] not in ("bench", "line", "many", "typical"):
        sys.exit(__doc__)
    what, n = argv[1], int(argv[2])
    plain = "--plain" in argv[3:]
    if what == "bench":
        path = "benches/gradients/straight_line.rs"
        with open(path, "w") as f:
            f.write(bench_module(n))
        rustfmt(path)
        print("wrote", path)
    elif what == "line":
        sys.stdout.write(line_crate(n, plain))
    elif what == "many":
        sys.stdout.write(many_crate(n, plain))
    else:
        sys.stdout.write(typical_crate(n, plain))


if __name__ == "__main__":
    main(sys.argv)
