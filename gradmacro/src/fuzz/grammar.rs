//! Random functions from a grammar of (nearly) every syntax form, supported
//! or not, with odd signatures and attribute arguments.

use crate::test_support::Rng;

pub(super) const SIGNATURES: &[&str] = &[
    "fn f(x: f64) -> f64",
    "fn f(x: f64, y: f64) -> f64",
    "fn f(x: f64, n: usize, flag: bool) -> f64",
    "fn f(mut x: f64, y: f64, n: i32) -> f64",
    "pub fn f(x: f64, y: f64, z: f64) -> f64",
    "pub(crate) fn f(x: f32, y: f32) -> f32",
    "fn f() -> f64",
    "fn f(x: f64)",
    "fn f(x: f64) -> !",
    "fn f(x: f64) -> ()",
    "fn f(x: f64) -> f32",
    "fn f(x: f32) -> f64",
    "fn f(x: f64, y: f32) -> f64",
    "fn f(x: &f64) -> f64",
    "fn f(x: &mut f64) -> f64",
    "fn f(x: &[f64]) -> f64",
    "fn f(x: &[f64], n: usize) -> f64",
    "fn f(x: Vec<f64>) -> f64",
    "fn f(x: [f64; 3]) -> f64",
    "fn f(x: &[f64; 3], y: f64) -> f64",
    "fn f(x: &[&[f64]]) -> f64",
    "fn f(x: (f64, f64)) -> f64",
    "fn f((a, b): (f64, f64)) -> f64",
    "fn f(_: f64) -> f64",
    "fn f(x: f64, x: f64) -> f64",
    "fn f<T>(x: T) -> f64",
    "fn f<'a>(x: &'a f64) -> f64",
    "fn f<const N: usize>(x: [f64; N]) -> f64",
    "fn f(x: f64) -> f64 where f64: Copy",
    "async fn f(x: f64) -> f64",
    "unsafe fn f(x: f64) -> f64",
    "const fn f(x: f64) -> f64",
    "extern \"C\" fn f(x: f64) -> f64",
    "fn f(self, x: f64) -> f64",
    "fn f(&self, x: f64) -> f64",
    "fn f(x: impl Into<f64>) -> f64",
    "fn f(x: Option<f64>) -> f64",
    "fn f(x: i128, y: u8, z: char) -> f64",
    "fn f(x: f64, y: bool) -> bool",
    "fn f(r#x: f64) -> f64",
    "fn r#fn(x: f64) -> f64",
    "fn f(x: f64) -> impl Fn(f64) -> f64",
    "fn f(x: f64) -> Self",
    "fn f(x: f64) -> (f64, f64)",
    "fn d_out(d_out: f64) -> f64",
    "fn f_grad(f_grad: f64, f_adjoint: f64) -> f64",
    "fn f(out: f64, value: f64, t1: f64, tape_s: f64) -> f64",
    "#[inline] fn f(x: f64) -> f64",
    "/// doc\n#[must_use] fn f(x: f64) -> f64",
    "fn f(x: ::core::primitive::f64) -> f64",
    "fn f(x: (f64)) -> (f64)",
    "fn f(x: f64, y: f64,) -> f64",
    "fn f(x: f64, n: u64, m: i8, b: bool, k: isize) -> f64",
    "fn f(x: Box<f64>) -> f64",
    "fn f(x: dyn Fn()) -> f64",
    "fn f(x: _) -> f64",
];

const ATTRS: &[&str] = &[
    "",
    "",
    "",
    "",
    "wrt(x)",
    "wrt(x, y)",
    "wrt(y)",
    "wrt()",
    "wrt(z)",
    "wrt(x, x)",
    "wrt(n)",
    "wrt",
    "wrt = x",
    "wrt(x) wrt(y)",
    "wrt(x),",
    "wrt(x), wrt(y)",
    "foo",
    "foo(x)",
    "1",
    "\"x\"",
    "wrt(1.0)",
    "wrt(x y)",
    "wrt[x]",
    "wrt{x}",
    "wrt(x,)",
    "wrt(r#x)",
    "wrt(self)",
    "wrt(x::y)",
    "(wrt(x))",
    ",",
    "wrt(flag)",
];

/// Expressions of the supported language; `E` is a hole for a sub-expression.
const EXPRS: &[&str] = &[
    "x",
    "y",
    "z",
    "x",
    "y",
    "1.0",
    "0.5",
    "2",
    "s",
    "a",
    "(E)",
    "E + E",
    "E - E",
    "E * E",
    "E / E",
    "E % E",
    "-E",
    "E.sin()",
    "f64::cos(E)",
    "E.powi(2)",
    "E.powi(n)",
    "E.powf(E)",
    "E.max(E)",
    "E.min(E)",
    "E.clamp(E, E)",
    "E.mul_add(E, E)",
    "E.atan2(E)",
    "E.hypot(E)",
    "E.log(E)",
    "E.ln()",
    "E.sqrt()",
    "E.exp()",
    "E.tanh()",
    "E.abs()",
    "E.signum()",
    "E.floor()",
    "E.fract()",
    "E.recip()",
    "E.to_degrees()",
    "f64::powi(E, 3)",
    "f64::max(E, E)",
    "f64::mul_add(E, E, E)",
    "E as f64",
    "(n as f64)",
    "if E > E { E } else { E }",
    "if E < E { E } else if E == E { E } else { E }",
    "if flag { E } else { E }",
    "{ let t = E; t }",
    "{ E }",
    "{ let mut t = E; t += E; t }",
    "std::f64::consts::PI",
    "f64::consts::E",
    "f64::MAX",
    "1e309",
    "0.0",
    "E.sin().cos().tan()",
    "E.powi(-1)",
    "i as f64",
    "(i + 1) as f64",
    "k as f64",
    "E.powf(0.5)",
    "E.exp_m1()",
    "E.ln_1p()",
    "E.cbrt()",
    "E.asinh()",
    "E.acosh()",
    "E.atanh()",
    "E.log2()",
    "E.log10()",
    "E.exp2()",
    "E.trunc()",
    "E.round()",
    "E.ceil()",
    "E.to_radians()",
    "E.asin()",
    "E.acos()",
    "E.atan()",
    "E.sinh()",
    "E.cosh()",
    "E.tan()",
    "out",
    "d_out",
    "t1",
    "tape_s",
];

/// Expressions the macro must reject (or that do not type-check); same holes.
const EXPRS_BAD: &[&str] = &[
    "n",
    "flag",
    "!E",
    "f32::sin(E)",
    "E as i32",
    "E as u8",
    "E as f32",
    "E as _",
    "E as usize as f64",
    "E as bool",
    "if E > E { E }",
    "match E { _ => E }",
    "match n { 0 => E, _ => E }",
    "|a: f64| a * E",
    "(|a| a)(E)",
    "vec![E, E]",
    "[E, E][0]",
    "[E; 3]",
    "(E, E).0",
    "&E",
    "*&E",
    "E?",
    "g(E)",
    "unknown::func(E)",
    "E.unknown_method()",
    "E.sin::<f64>()",
    "<f64>::sin(E)",
    "<f64 as Float>::sin(E)",
    "Self::C",
    "S { a: E }.a",
    "s.a",
    "async { E }",
    "unsafe { E }",
    "loop { break E }",
    "'a: { break 'a E }",
    "E..E",
    "..",
    "(x += E)",
    "(x = E)",
    "E == E",
    "E && E",
    "E || E",
    "E.is_nan()",
    "E.total_cmp(&E)",
    "f64::NAN",
    "f64::INFINITY",
    "1e-400",
    "1_f32",
    "1.5f64",
    "u128::MAX as f64",
    "'c' as u8 as f64",
    "b'a' as f64",
    "\"s\".len() as f64",
    "E.hypot()",
    "E.sin(E)",
    "f64::atan2(E)",
    "E.powi(E)",
    "E.powi(2.0)",
    "dbg!(E)",
    "format!(\"{}\", E)",
    "E.await",
    "yield E",
    "box E",
    "const { 1.0 }",
    "try { E }",
    "(E,)",
    "()",
    "[]",
    "v[0]",
    "v[n]",
    "x[0]",
    "x.len() as f64",
    "x.iter().sum::<f64>()",
    "x.0",
    "matches!(E, _)",
    "if let Some(a) = Some(E) { a } else { E }",
    "loop {}",
    "return E",
    "break",
    "continue",
    "#[allow(unused)] E",
    "-(E as f64)",
    "E << 2",
    "E & E",
    "E ^ E",
    "E | E",
    "!flag",
    "x.sin_cos().0",
    "gradmacro_runtime::no_grad(E)",
    "detach(E)",
    "f(E)",
    "f_grad(E)",
    "f_adjoint(E, E)",
];

/// Statements of the supported language; `E` is an expression hole, `B` a block of statements.
const STMTS: &[&str] = &[
    "let a = E;",
    "let mut s = E;",
    "let s: f64 = E;",
    "let mut s = 0.0;",
    "let a: f64;",
    "let x = E;",
    "let x = x * E;",
    "s = E;",
    "s += E;",
    "s -= E;",
    "s *= E;",
    "s /= E;",
    "s %= E;",
    "x = E;",
    "x += E;",
    "if E > E { B }",
    "if E > E { B } else { B }",
    "if E < E { B } else if E > E { B } else { B }",
    "if flag { B }",
    "if n > 2 { B }",
    "while E < E { B }",
    "for i in 0..n { B }",
    "for i in 0..=3 { B }",
    "for i in (0..3).rev() { B }",
    "for i in (0..n).step_by(2) { B }",
    "loop { B break; }",
    "break;",
    "continue;",
    "return E;",
    "{ B }",
    "E;",
    "fn g(a: f64) -> f64 { a }",
    "const C: f64 = 1.0;",
    "use std::f64::consts::PI;",
    "let mut k = 0usize;",
    "k += 1;",
    "let b = flag && E > 1.0;",
    "let mut i = 0; while i < 3 { B i += 1; }",
    "let t: f64 = { B E };",
];

/// Statements the macro must reject (or that do not type-check); same holes.
const STMTS_BAD: &[&str] = &[
    "let s: f32 = E;",
    "let (a, b) = (E, E);",
    "let [a, b] = [E, E];",
    "let _ = E;",
    "let a;",
    "let Some(a) = Some(E) else { return E; };",
    "let ref r = E;",
    "let a @ _ = E;",
    "s <<= 1;",
    "*s = E;",
    "v[0] = E;",
    "v[0] += E;",
    "s.a = E;",
    "(s, t) = (E, E);",
    "if let Some(a) = E { B }",
    "while let Some(a) = E { B }",
    "for a in v.iter() { B }",
    "for (i, a) in v.iter().enumerate() { B }",
    "for _ in 0..E { B }",
    "for i in E..E { B }",
    "for &a in x { B }",
    "for i in 0..x.len() { B }",
    "'outer: loop { B break 'outer; }",
    "'a: for i in 0..3 { continue 'a; }",
    "break E;",
    "return;",
    "unsafe { B }",
    "struct S { a: f64 }",
    "static Z: f64 = 1.0;",
    "macro_rules! m { () => { 1.0 } }",
    "println!(\"{}\", E);",
    "assert!(E > 0.0);",
    "#[differentiate] fn inner(x: f64) -> f64 { x }",
    "impl S { fn m(&self) {} }",
    "enum Q { A }",
    "trait T {}",
    "mod m {}",
    "type T = f64;",
    "extern \"C\" { fn c(); }",
    "#[cfg(any())] let z = 1;",
    "/// doc\nlet d = E;",
    ";",
    "match E { a if a > 0.0 => { B } _ => {} }",
    "let c = |a: f64| -> f64 { a * E };",
    "async fn af() {}",
    "let v = vec![E; 3];",
    "let mut v = Vec::new(); v.push(E);",
    "let mut v = vec![0.0; n];",
    "let n2 = n + 1;",
    "let u = if flag { E } else { return E; };",
    "let w = loop { break E; };",
    "#[allow(unused)] let q = E;",
    "drop(E);",
    "E?;",
    "x.sin();",
];

pub(super) struct Grammar<'r> {
    pub(super) rng: &'r mut Rng,
    /// Probability of an unsupported form at each node.
    pub(super) bad: f64,
}

impl Grammar<'_> {
    fn fill(&mut self, template: &str, depth: usize) -> String {
        let mut out = String::new();
        for c in template.chars() {
            match c {
                'E' => {
                    // Compound operands parenthesised (mostly: precedence
                    // surprises are also worth a try now and then).
                    let e = self.expr(depth + 1);
                    if e.contains(' ') && !self.rng.chance(0.05) {
                        out.push('(');
                        out.push_str(&e);
                        out.push(')');
                    } else {
                        out.push_str(&e);
                    }
                }
                'B' => {
                    let b = self.block(depth + 1);
                    out.push_str(&b);
                }
                _ => out.push(c),
            }
        }
        out
    }

    fn expr(&mut self, depth: usize) -> String {
        if depth > 5 || self.rng.chance(0.3) {
            return self.rng.pick(&EXPRS[..8]).to_string();
        }
        let t = if self.rng.chance(self.bad) {
            self.rng.pick(EXPRS_BAD)
        } else {
            self.rng.pick(EXPRS)
        };
        // `E` inside names like `f64::consts::E` is not a hole.
        if t.contains("consts::E") {
            return t.to_string();
        }
        self.fill(t, depth)
    }

    fn stmt(&mut self, depth: usize) -> String {
        let t = if self.rng.chance(self.bad) {
            self.rng.pick(STMTS_BAD)
        } else {
            self.rng.pick(STMTS)
        };
        if t.contains("consts::E") {
            return t.to_string();
        }
        self.fill(t, depth)
    }

    fn block(&mut self, depth: usize) -> String {
        if depth > 4 {
            return String::new();
        }
        let n = self.rng.index(4);
        (0..n)
            .map(|_| self.stmt(depth))
            .collect::<Vec<_>>()
            .join(" ")
            + " "
    }

    pub(super) fn function(&mut self) -> (String, String) {
        let attr = if self.bad < 0.1 {
            self.rng.pick(&["", "", "", "wrt(x)"]).to_string()
        } else {
            self.rng.pick(ATTRS).to_string()
        };
        let sig = if self.rng.chance(self.bad) {
            self.rng.pick(SIGNATURES)
        } else {
            self.rng.pick(&SIGNATURES[..5])
        };
        let n = self.rng.index(8);
        let mut body: Vec<String> = Vec::new();
        if self.bad < 0.1 {
            // Declare every name the templates use, so that most programs
            // are in the supported language.
            body.push(
                "let y = x; let z = y; let n = 3usize; let flag = x > 0.5; let mut s = x; \
                 let mut a = 1.0; let mut k = 0usize; let i = 2; let t1 = x; let out = y; \
                 let d_out = s; let tape_s = a;"
                    .to_string(),
            );
        }
        body.extend((0..n).map(|_| self.stmt(0)));
        if self.rng.chance(0.8) {
            body.push(self.expr(0));
        }
        (attr, format!("{sig} {{ {} }}", body.join("\n")))
    }
}
