//! No-panic fuzzing of the expansion.
//!
//! Whatever tokens the compiler hands `#[differentiate]`, the macro must
//! answer with code or with `compile_error!`s: a panic in a proc macro is an
//! internal compiler error for the user, and a stack overflow kills rustc.
//! These tests call [`crate::expand::differentiate`] directly with:
//!
//! - random token trees (balanced, over a vocabulary of Rust's keywords,
//!   punctuation and literals), inside and outside a `fn` shape;
//! - random functions from a grammar of every syntax form, supported or not
//!   (match, closures, macros, async, unsafe, struct literals, tuples,
//!   indexing, references, labelled loops, let-else, if-let, ranges, method
//!   chains, turbofish, odd casts, nested items...), with odd signatures and
//!   attribute arguments, then token-level mutations of them;
//! - fixed edge cases, and 10,000-deep or long inputs, each in a child
//!   process on a thread with rustc's 8 MiB stack (or 2 MiB).
//!
//! Every output must contain a `compile_error!` or parse as Rust items. A
//! panic is shrunk (tokens deleted while the same panic location remains)
//! and reported with its message and location.
//!
//! ```text
//! cargo test -p gradmacro fuzz                  # CI: 3,000 random inputs, edge cases,
//!                                               # 10,000-deep and 10,000-statement inputs
//! GRADMACRO_FUZZ_ITERS=1000000 cargo test --release -p gradmacro fuzz::random -- --nocapture
//! GRADMACRO_FUZZ_STATEMENTS=100000 GRADMACRO_FUZZ_BIG_SECS=3600 \
//!     cargo test -p gradmacro fuzz::deep -- --nocapture
//! ```
//!
//! - `GRADMACRO_FUZZ_ITERS`: random inputs (default 3,000);
//! - `GRADMACRO_FUZZ_SEED`: which sequence of random inputs (default 1);
//! - `GRADMACRO_FUZZ_SHOW=<k>`: print the first `k` inputs and what the
//!   macro answered (to see what the generators reach);
//! - `GRADMACRO_FUZZ_DEPTH`: nesting of the deep inputs (default 10,000);
//! - `GRADMACRO_FUZZ_STATEMENTS`: statements of the long bodies (default
//!   10,000; the expansion time grows linearly with it);
//! - `GRADMACRO_FUZZ_BIG_SECS`: time allowed to each deep or long case in
//!   its child process (default 120 s);
//! - `GRADMACRO_FUZZ_STACKS`: the stack sizes, in MiB, the deep and long cases
//!   run with (default `8`, rustc's; `8,2` adds 2 MiB).

use crate::test_support::Rng;
use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::process::Command;
use std::sync::Once;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------
// Running the macro and catching what goes wrong.
// ---------------------------------------------------------------------------

thread_local! {
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A panic hook that records panics of fuzzing threads (message and
/// location) and leaves every other thread's panics to the previous hook.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CAPTURING.with(|c| c.get()) {
                let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
                    s.to_string()
                } else if let Some(s) = info.payload().downcast_ref::<String>() {
                    s.clone()
                } else {
                    "(non-string payload)".to_string()
                };
                let at = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{at}: {msg}")));
            } else {
                previous(info);
            }
        }));
    });
}

/// What the macro did with one input.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    /// Code, without errors.
    Code,
    /// The user's tokens (or stubs) plus `compile_error!`s.
    Errors,
    /// Panicked: `file:line: message`.
    Panic(String),
    /// Returned something that is neither a `compile_error!` nor Rust items.
    Unparsable(String),
}

/// Whether `compile_error` appears anywhere (without recursion: the output
/// of a deep input is deep).
fn has_compile_error(ts: &TokenStream) -> bool {
    let mut stack = vec![ts.clone()];
    while let Some(ts) = stack.pop() {
        for tt in ts {
            match tt {
                TokenTree::Ident(i) if i == "compile_error" => return true,
                TokenTree::Group(g) => stack.push(g.stream()),
                _ => {}
            }
        }
    }
    false
}

/// The expansion, or the panic it ended in.
fn expand(attr: &TokenStream, item: &TokenStream) -> Result<TokenStream, String> {
    install_hook();
    CAPTURING.with(|c| c.set(true));
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        crate::expand::differentiate(attr.clone(), item.clone())
    }));
    CAPTURING.with(|c| c.set(false));
    r.map_err(|_| {
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| "(no message)".into())
    })
}

fn run(attr: &TokenStream, item: &TokenStream) -> Verdict {
    match expand(attr, item) {
        Err(p) => Verdict::Panic(p),
        Ok(out) => {
            if has_compile_error(&out) {
                Verdict::Errors
            } else if syn::parse2::<syn::File>(out.clone()).is_ok() {
                Verdict::Code
            } else {
                Verdict::Unparsable(out.to_string().chars().take(300).collect())
            }
        }
    }
}

/// The panic location alone (`file:line`), to tell panics apart.
fn location(v: &Verdict) -> String {
    match v {
        Verdict::Panic(p) => p.split(": ").next().unwrap_or("").to_string(),
        Verdict::Unparsable(_) => "unparsable output".into(),
        Verdict::Code | Verdict::Errors => String::new(),
    }
}

impl Verdict {
    fn fine(&self) -> bool {
        matches!(self, Verdict::Code | Verdict::Errors)
    }
}

// ---------------------------------------------------------------------------
// Settings (randomness is `test_support::Rng`).
// ---------------------------------------------------------------------------

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

// ---------------------------------------------------------------------------
// Random token trees.
// ---------------------------------------------------------------------------

const WORDS: &[&str] = &[
    "fn",
    "let",
    "mut",
    "if",
    "else",
    "for",
    "in",
    "while",
    "loop",
    "return",
    "break",
    "continue",
    "match",
    "as",
    "move",
    "async",
    "await",
    "unsafe",
    "pub",
    "crate",
    "self",
    "Self",
    "super",
    "struct",
    "impl",
    "where",
    "const",
    "static",
    "ref",
    "dyn",
    "type",
    "use",
    "mod",
    "true",
    "false",
    "x",
    "y",
    "z",
    "n",
    "s",
    "t",
    "f",
    "g",
    "d_out",
    "out",
    "t1",
    "f64",
    "f32",
    "i32",
    "usize",
    "bool",
    "u8",
    "sin",
    "cos",
    "powi",
    "powf",
    "max",
    "clamp",
    "mul_add",
    "ln",
    "sqrt",
    "abs",
    "iter",
    "sum",
    "len",
    "rev",
    "step_by",
    "wrt",
    "vec",
    "Vec",
    "Some",
    "None",
    "Option",
    "_",
    "r#fn",
    "r#x",
    "differentiate",
];
const PUNCTS: &[&str] = &[
    "+", "-", "*", "/", "%", "=", "==", "!=", "<", ">", "<=", ">=", "!", "&", "&&", "|", "||", ";",
    ",", ".", "..", "..=", ":", "::", "->", "=>", "#", "?", "@", "^", "~", "$", "+=", "-=", "*=",
    "/=", "%=", "<<", ">>", "'",
];
const LITERALS: &[&str] = &[
    "0",
    "1",
    "2",
    "1.0",
    "0.5",
    "2.5",
    "1e10",
    "1e309",
    "1e-400",
    "0.0",
    "1_f32",
    "1.5f64",
    "0x10",
    "3usize",
    "\"s\"",
    "'c'",
    "b'a'",
    "b\"by\"",
    "r\"raw\"",
    "1u128",
    "340282366920938463463374607431768211455",
    "1.7976931348623157e308",
    "4.9e-324",
];

fn punct_tokens(p: &str) -> Vec<TokenTree> {
    let chars: Vec<char> = p.chars().collect();
    chars
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let spacing = if i + 1 < chars.len() {
                Spacing::Joint
            } else {
                Spacing::Alone
            };
            TokenTree::Punct(Punct::new(*c, spacing))
        })
        .collect()
}

fn word(w: &str) -> TokenTree {
    if let Some(raw) = w.strip_prefix("r#") {
        TokenTree::Ident(Ident::new_raw(raw, Span::call_site()))
    } else {
        TokenTree::Ident(Ident::new(w, Span::call_site()))
    }
}

fn random_tokens(rng: &mut Rng, depth: usize, len: usize) -> TokenStream {
    let mut out: Vec<TokenTree> = Vec::new();
    for _ in 0..len {
        match rng.index(10) {
            0..=3 => out.push(word(rng.pick(WORDS))),
            4..=6 => {
                let p = rng.pick(PUNCTS);
                if p == "'" {
                    // A lifetime: `'a`.
                    out.extend(punct_tokens("'"));
                    out.push(word("a"));
                } else {
                    out.extend(punct_tokens(p));
                }
            }
            7 => {
                let l: TokenStream = rng.pick(LITERALS).parse().unwrap();
                out.extend(l);
            }
            _ if depth > 0 => {
                let delim = match rng.index(4) {
                    0 => Delimiter::Parenthesis,
                    1 => Delimiter::Bracket,
                    2 => Delimiter::Brace,
                    _ => Delimiter::None,
                };
                let inner_len = rng.index(8);
                let inner = random_tokens(rng, depth - 1, inner_len);
                out.push(TokenTree::Group(Group::new(delim, inner)));
            }
            _ => out.push(TokenTree::Literal(Literal::f64_suffixed(1.5))),
        }
    }
    out.into_iter().collect()
}

// ---------------------------------------------------------------------------
// Random functions from a grammar of (nearly) every syntax form.
// ---------------------------------------------------------------------------

const SIGNATURES: &[&str] = &[
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

struct Grammar<'r> {
    rng: &'r mut Rng,
    /// Probability of an unsupported form at each node.
    bad: f64,
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

    fn function(&mut self) -> (String, String) {
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

/// Token-level mutations: delete, duplicate, swap, replace, insert.
fn mutate(rng: &mut Rng, ts: TokenStream, rate: f64) -> TokenStream {
    let mut out: Vec<TokenTree> = Vec::new();
    let items: Vec<TokenTree> = ts.into_iter().collect();
    for tt in items {
        if !rng.chance(rate) {
            match tt {
                TokenTree::Group(g) => {
                    let inner = mutate(rng, g.stream(), rate);
                    out.push(TokenTree::Group(Group::new(g.delimiter(), inner)));
                }
                other => out.push(other),
            }
            continue;
        }
        match rng.index(6) {
            0 => {}
            1 => {
                out.push(tt.clone());
                out.push(tt);
            }
            2 => {
                let last = out.pop();
                out.push(tt);
                out.extend(last);
            }
            3 => out.extend(random_tokens(rng, 1, 1)),
            4 => {
                out.extend(random_tokens(rng, 1, 2));
                out.push(tt);
            }
            _ => match tt {
                TokenTree::Group(g) => {
                    let delim = [
                        Delimiter::Parenthesis,
                        Delimiter::Bracket,
                        Delimiter::Brace,
                        Delimiter::None,
                    ][rng.index(4)];
                    out.push(TokenTree::Group(Group::new(delim, g.stream())));
                }
                other => out.push(other),
            },
        }
    }
    out.into_iter().collect()
}

const MODES: [&str; 4] = ["noise", "noise in a fn", "grammar", "mutated grammar"];

/// One random input, drawn from one of four generators (`MODES`).
fn random_input(rng: &mut Rng) -> (usize, TokenStream, TokenStream) {
    let m = rng.index(10);
    let mode = match m {
        0 => 0,
        1 | 2 => 1,
        3..=6 => 2,
        _ => 3,
    };
    let (a, i) = random_input_of(rng, m);
    (mode, a, i)
}

fn random_input_of(rng: &mut Rng, m: usize) -> (TokenStream, TokenStream) {
    match m {
        // Pure noise.
        0 => {
            let (alen, len) = (rng.index(3), rng.index(30));
            let attr = random_tokens(rng, 0, alen);
            (attr, random_tokens(rng, 3, len))
        }
        // Noise inside a function's shape.
        1 | 2 => {
            let len = rng.index(40);
            let body = random_tokens(rng, 3, len);
            let sig: TokenStream = rng.pick(SIGNATURES).parse().unwrap();
            let mut item: Vec<TokenTree> = sig.into_iter().collect();
            item.push(TokenTree::Group(Group::new(Delimiter::Brace, body)));
            (TokenStream::new(), item.into_iter().collect())
        }
        // Grammar: mostly the supported language, or anything.
        3..=6 => {
            let bad = [0.0, 0.03, 0.3][rng.index(3)];
            let (attr, item) = Grammar { rng, bad }.function();
            (attr.parse().unwrap(), item.parse().unwrap())
        }
        // Grammar, mutated.
        _ => {
            let bad = [0.0, 0.3][rng.index(2)];
            let (attr, item) = Grammar { rng, bad }.function();
            let item: TokenStream = item.parse().unwrap();
            let attr: TokenStream = attr.parse().unwrap();
            let rate = [0.02, 0.05, 0.15][rng.index(3)];
            (mutate(rng, attr, rate), mutate(rng, item, rate))
        }
    }
}

// ---------------------------------------------------------------------------
// Shrinking a panic.
// ---------------------------------------------------------------------------

/// The leaves of a token stream as text, with group boundaries as their own
/// entries, so that deleting entries keeps the text lexable when brackets are
/// deleted in pairs (otherwise the candidate is simply skipped).
fn pieces(ts: &TokenStream, out: &mut Vec<String>) {
    for tt in ts.clone() {
        match tt {
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::None => ("", ""),
                };
                out.push(open.to_string());
                pieces(&g.stream(), out);
                out.push(close.to_string());
            }
            TokenTree::Punct(p) => {
                let mut s = p.as_char().to_string();
                if p.spacing() == Spacing::Alone {
                    s.push(' ');
                }
                out.push(s);
            }
            other => out.push(format!("{other} ")),
        }
    }
}

/// Deletes pieces of `item` (delta debugging, then one by one) while the
/// macro still panics at `at`. Returns the smallest source found.
fn shrink_panic(attr: &TokenStream, item: &TokenStream, at: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut cur = Vec::new();
    pieces(item, &mut cur);
    let still = |p: &[String]| -> bool {
        let Ok(ts) = p.concat().parse::<TokenStream>() else {
            return false;
        };
        location(&run(attr, &ts)) == at
    };
    let mut chunk = cur.len() / 2;
    while chunk >= 1 && Instant::now() < deadline {
        let mut i = 0;
        let mut progress = false;
        while i < cur.len() && Instant::now() < deadline {
            let end = (i + chunk).min(cur.len());
            let mut cand = cur[..i].to_vec();
            cand.extend_from_slice(&cur[end..]);
            if still(&cand) {
                cur = cand;
                progress = true;
            } else {
                i += chunk;
            }
        }
        if !progress {
            chunk /= 2;
        }
    }
    cur.concat()
}

// ---------------------------------------------------------------------------
// The tests.
// ---------------------------------------------------------------------------

struct Findings {
    /// Location -> (count, first message, minimal input).
    panics: BTreeMap<String, (usize, String, String)>,
}

impl Findings {
    fn record(&mut self, attr: &TokenStream, item: &TokenStream, v: &Verdict) {
        let at = location(v);
        let entry = self.panics.entry(at.clone());
        let e = entry.or_insert_with(|| {
            let msg = match v {
                Verdict::Panic(p) | Verdict::Unparsable(p) => p.clone(),
                Verdict::Code | Verdict::Errors => String::new(),
            };
            let small = if matches!(v, Verdict::Panic(_)) {
                shrink_panic(attr, item, &at)
            } else {
                item.to_string()
            };
            (0, msg, format!("#[differentiate({attr})] {small}"))
        });
        e.0 += 1;
    }

    fn report(&self) -> String {
        let mut s = String::new();
        for (at, (n, msg, input)) in &self.panics {
            s.push_str(&format!(
                "\n{n} input(s) end at {at}\n  message: {msg}\n  minimal input: {input}\n"
            ));
        }
        s
    }
}

/// Random inputs: `GRADMACRO_FUZZ_ITERS` of them (default 3,000), from
/// `GRADMACRO_FUZZ_SEED`.
#[test]
fn random_inputs_never_panic() {
    let iters = env_u64("GRADMACRO_FUZZ_ITERS", 3000);
    let seed = env_u64("GRADMACRO_FUZZ_SEED", 1);
    let mut rng = Rng::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
    let mut findings = Findings {
        panics: BTreeMap::new(),
    };
    let start = Instant::now();
    let (mut code, mut errors) = (0u64, 0u64);
    let mut by_mode = [[0u64; 2]; 4];
    // GRADMACRO_FUZZ_SHOW=<k>: print the first k inputs and the first error
    // each was answered with (to see what the generators reach).
    let show = env_u64("GRADMACRO_FUZZ_SHOW", 0);
    for i in 0..iters {
        let (mode, attr, item) = random_input(&mut rng);
        let v = run(&attr, &item);
        if i < show {
            let out = expand(&attr, &item)
                .map(|o| o.to_string())
                .unwrap_or_default();
            let err = out
                .find("compile_error")
                .map(|k| out[k..].chars().take(160).collect::<String>())
                .unwrap_or_default();
            println!(
                "--- [{}] #[differentiate({attr})] {item}\n    => {v:?} {err}",
                MODES[mode]
            );
        }
        match v {
            Verdict::Code => {
                code += 1;
                by_mode[mode][0] += 1;
            }
            Verdict::Errors => {
                errors += 1;
                by_mode[mode][1] += 1;
            }
            _ => findings.record(&attr, &item, &v),
        }
    }
    let modes: Vec<String> = MODES
        .iter()
        .zip(by_mode)
        .map(|(m, [c, e])| format!("{m}: {c} code, {e} errors"))
        .collect();
    println!(
        "fuzz: {iters} inputs (seed {seed}) in {:.1} s: {code} expanded to code, {errors} to \
         compile errors ({}), {} distinct failures{}",
        start.elapsed().as_secs_f64(),
        modes.join("; "),
        findings.panics.len(),
        findings.report()
    );
    assert!(
        findings.panics.is_empty(),
        "the macro panicked or emitted unparsable code:{}",
        findings.report()
    );
}

/// Inputs written out: the edges of the grammar.
#[test]
fn edge_cases_never_panic() {
    let cases: &[(&str, &str)] = &[
        ("", "fn f() {}"),
        ("", "fn f(x: f64) -> f64 {}"),
        ("", "fn f(x: f64) {}"),
        ("", "fn f(x: f64) -> ! { loop {} }"),
        ("", "fn f(x: f64) -> ! { panic!() }"),
        ("", "fn f(x: f64) -> f64 { return; }"),
        ("", "fn f(x: f64) -> f64 { return }"),
        ("", "fn f(x: f64) -> f64 { loop {} }"),
        ("", "fn f(x: f64) -> f64 { loop { break; } }"),
        ("", "fn f(x: f64) -> f64 { loop { return x; } }"),
        ("", "fn f(x: f64) -> f64 { while true { return x; } }"),
        ("", "fn f(x: f64) -> f64 { x; }"),
        ("", "fn f(x: f64) -> f64 { ; ; ; x }"),
        ("", "fn f(x: f64) -> f64 { 1e309 * x }"),
        ("", "fn f(x: f64) -> f64 { 1e-400 * x }"),
        ("", "fn f(x: f64) -> f64 { x * 340282366920938463463374607431768211455.0 }"),
        ("", "fn f(x: f64) -> f64 { x.powi(2147483647) + x.powi(-2147483648) }"),
        ("", "fn f(x: f64) -> f64 { x.powi(99999999999) }"),
        ("", "fn f(x: f64, n: u128) -> f64 { x * n as f64 }"),
        ("", "fn f(x: f64) -> f64 { let x = x; let x = x; let x = x; x }"),
        ("", "fn f(x: f64) -> f64 { { { { { x } } } } }"),
        ("", "fn f(x: f64) -> f64 { (((((x))))) }"),
        ("", "fn f(x: f64) -> f64 { - - - - x }"),
        ("", "fn f(x: f64) -> f64 { !x }"),
        ("", "fn f(x: f64) -> f64 { x = x; x }"),
        ("", "fn f(mut x: f64) -> f64 { x = x; x }"),
        ("", "fn f(x: f64) -> f64 { let a: f64; a }"),
        ("", "fn f(x: f64) -> f64 { let a; a = x; a = a; a }"),
        ("", "fn f(x: f64) -> f64 { for i in 0..0 {} x }"),
        ("", "fn f(x: f64) -> f64 { for i in 0.. { break; } x }"),
        ("", "fn f(x: f64) -> f64 { for i in .. { break; } x }"),
        ("", "fn f(x: f64) -> f64 { for i in 0..3 { let i = x; } x }"),
        ("", "fn f(x: f64) -> f64 { for x in 0..3 { } x }"),
        ("", "fn f(x: f64) -> f64 { let mut s = x; for _ in 0..3 { s = s; } s }"),
        ("", "fn f(x: f64) -> f64 { if x > 0.0 {} else {} x }"),
        ("", "fn f(x: f64) -> f64 { if x > 0.0 { return x } else { return -x } }"),
        ("", "fn f(x: f64) -> f64 { if x > 0.0 { x } }"),
        ("", "fn f(x: f64) -> f64 { if x { x } else { x } }"),
        ("", "fn f(x: f64) -> f64 { if true { x } else { 1.0 } }"),
        ("", "fn f(x: f64) -> f64 { while x > 0.0 {} x }"),
        ("", "fn f(x: f64) -> f64 { break; x }"),
        ("", "fn f(x: f64) -> f64 { continue; }"),
        ("", "fn f(x: f64) -> f64 { 'a: loop { loop { break 'a; } } x }"),
        ("", "fn f(x: f64) -> f64 { 'a: { break 'a; } x }"),
        ("", "fn f(x: f64) -> f64 { let y = loop { break x; }; y }"),
        ("", "fn f(x: f64) -> f64 { match x { _ => x } }"),
        ("", "fn f(x: f64) -> f64 { let c = |a: f64| a; c(x) }"),
        ("", "fn f(x: f64) -> f64 { async { x }; x }"),
        ("", "fn f(x: f64) -> f64 { unsafe { x } }"),
        ("", "fn f(x: f64) -> f64 { let s = S { a: x }; s.a }"),
        ("", "fn f(x: f64) -> f64 { let t = (x, x); t.0 }"),
        ("", "fn f(x: f64) -> f64 { let r = &x; *r }"),
        ("", "fn f(x: f64) -> f64 { let Some(a) = Some(x) else { return x; }; a }"),
        ("", "fn f(x: f64) -> f64 { if let Some(a) = Some(x) { a } else { x } }"),
        ("", "fn f(x: f64) -> f64 { (0..3).map(|i| i as f64 * x).sum() }"),
        ("", "fn f(x: f64) -> f64 { x.sin::<f64>() }"),
        ("", "fn f(x: f64) -> f64 { <f64>::sin(x) }"),
        ("", "fn f(x: f64) -> f64 { f64::sin::<>(x) }"),
        ("", "fn f(x: f64) -> f64 { x as f32 as f64 }"),
        ("", "fn f(x: f64) -> f64 { x as _ }"),
        ("", "fn f(x: f64) -> f64 { (x as u8) as f64 }"),
        ("", "fn f(x: f64) -> f64 { fn g(a: f64) -> f64 { a } g(x) }"),
        ("", "fn f(x: f64) -> f64 { #[differentiate] fn g(a: f64) -> f64 { a } x }"),
        ("", "fn f(x: f64) -> f64 { x.sin(1.0) }"),
        ("", "fn f(x: f64) -> f64 { f64::sin() }"),
        ("", "fn f(x: f64) -> f64 { f64::atan2(x) }"),
        ("", "fn f(x: f64) -> f64 { f64::mul_add(x) }"),
        ("", "fn f(x: f64) -> f64 { x.clamp() }"),
        ("", "fn f(x: f64) -> f64 { x.powi(x) }"),
        ("", "fn f(x: f64) -> f64 { x.powi() }"),
        ("", "fn f(x: f64) -> f64 { x + }"),
        ("", "fn f(x: f64) -> f64 { x ++ x }"),
        ("", "fn f(x: f64) -> f64 { x +=+= x }"),
        ("", "fn f(x: f64) -> f64 { let = x; }"),
        ("", "fn f(x: f64) -> f64 { let mut; }"),
        ("", "fn f(x: f64) -> f64 { x[] }"),
        ("", "fn f(x: f64) -> f64 { x.0.0.0 }"),
        ("", "fn f(x: f64) -> f64 { x?? }"),
        ("", "fn f(x: f64) -> f64 { x.await }"),
        ("", "fn f(x: f64) -> f64 { yield x }"),
        ("", "fn f(x: f64) -> f64 { become g(x) }"),
        ("", "fn f(x: f64) -> f64 { const { 1.0 } * x }"),
        ("", "fn f(x: f64) -> f64 { dbg!(x) }"),
        ("", "fn f(x: f64) -> f64 { m!{} }"),
        ("", "fn f(x: f64) -> f64 { x } fn g() {}"),
        ("", "fn f(x: f64) -> f64 { x } extra tokens"),
        ("", "fn f(x: f64) -> f64"),
        ("", "fn f(x: f64) -> f64;"),
        ("", "fn"),
        ("", ""),
        ("", "struct S;"),
        ("", "impl S { fn f(&self) -> f64 { 1.0 } }"),
        ("", "const C: f64 = 1.0;"),
        ("", "mod m { fn f(x: f64) -> f64 { x } }"),
        ("", "#[differentiate] fn f(x: f64) -> f64 { x }"),
        ("", "#[cfg(any())] fn f(x: f64) -> f64 { x }"),
        ("", "pub(in crate) fn f(x: f64) -> f64 { x }"),
        ("", "fn f(x: f64, y: f64, z: f64, w: f64, v: f64, u: f64, t: f64, s: f64, r: f64, q: f64, p: f64, o: f64, a13: f64) -> f64 { x }"),
        ("wrt(x)", "fn f(x: f64, y: f64) -> f64 { x * y }"),
        ("wrt()", "fn f(x: f64) -> f64 { x }"),
        ("wrt(x, x)", "fn f(x: f64) -> f64 { x }"),
        ("wrt(n)", "fn f(x: f64, n: usize) -> f64 { x }"),
        ("wrt(q)", "fn f(x: f64) -> f64 { x }"),
        ("wrt", "fn f(x: f64) -> f64 { x }"),
        ("wrt = x", "fn f(x: f64) -> f64 { x }"),
        ("wrt(x) wrt(x)", "fn f(x: f64) -> f64 { x }"),
        ("wrt(x),,", "fn f(x: f64) -> f64 { x }"),
        ("wrt(x::y)", "fn f(x: f64) -> f64 { x }"),
        ("wrt(1)", "fn f(x: f64) -> f64 { x }"),
        ("foo bar baz", "fn f(x: f64) -> f64 { x }"),
        ("#", "fn f(x: f64) -> f64 { x }"),
        ("wrt(r#x)", "fn f(r#x: f64) -> f64 { r#x }"),
        ("", "fn r#fn(r#let: f64) -> f64 { r#let }"),
        ("", "fn f(d_out: f64, out: f64, value: f64) -> f64 { d_out * out * value }"),
        ("", "fn f(x: f64) -> f64 { let d_x = x; let tape_d_x = d_x; let iters1 = 1.0; d_x * tape_d_x * iters1 }"),
        ("", "fn f_grad(x: f64) -> f64 { x }"),
        ("", "fn f(x: f64) -> f64 { let f_grad = x; f_grad }"),
        // Found by the random run: `()` lost its parentheses (`s *= ;`).
        ("wrt(x)", "fn f(x: f64, flag: bool) -> f64 { let mut s = x; for _ in 0..3 { if flag { s *= (); } s += 1.0; } s }"),
        ("", "fn f(x: f64) -> f64 { let mut s = x; s *= (x, 1.0); s }"),
    ];
    let mut findings = Findings {
        panics: BTreeMap::new(),
    };
    for (attr, item) in cases {
        let attr: TokenStream = attr.parse().unwrap();
        let item: TokenStream = item.parse().unwrap();
        let v = run(&attr, &item);
        if !v.fine() {
            findings.record(&attr, &item, &v);
        }
    }
    assert!(findings.panics.is_empty(), "{}", findings.report());
}

// ---------------------------------------------------------------------------
// Deep and huge inputs, in child processes (a stack overflow aborts).
// ---------------------------------------------------------------------------

/// The input of a named deep or huge case.
pub(crate) fn big_case(name: &str, n: usize) -> TokenStream {
    let wrap = |inner: TokenStream, delim: Delimiter| -> TokenStream {
        TokenTree::Group(Group::new(delim, inner)).into()
    };
    let ts = |s: &str| -> TokenStream { s.parse().unwrap() };
    let body: TokenStream = match name {
        // ((((x)))) built as tokens, without any recursion.
        "parens" => {
            let mut e = ts("x");
            for _ in 0..n {
                e = wrap(e, Delimiter::Parenthesis);
            }
            e
        }
        // x + (x + (x + ...)).
        "sums" => {
            let mut e = ts("x");
            for _ in 0..n {
                let mut s = ts("x +");
                s.extend(wrap(e, Delimiter::Parenthesis));
                e = s;
            }
            e
        }
        // x * x * x * ... : left-nested without any parentheses.
        "flat products" => {
            let mut s = String::from("x");
            for _ in 0..n {
                s.push_str(" * x");
            }
            ts(&s)
        }
        // - - - - x
        "negations" => {
            let mut s = String::new();
            for _ in 0..n {
                s.push_str("- ");
            }
            s.push('x');
            ts(&s)
        }
        // x.sin().sin().sin()...
        "method chain" => {
            let mut s = String::from("x");
            for _ in 0..n {
                s.push_str(".sin()");
            }
            ts(&s)
        }
        // { { { x } } }
        "blocks" => {
            let mut e = ts("x");
            for _ in 0..n {
                e = wrap(e, Delimiter::Brace);
            }
            e
        }
        // if x > 0.0 { x } else if ... else { x }
        "else-if chain" => {
            let mut s = String::new();
            for _ in 0..n {
                s.push_str("if x > 0.5 { x } else ");
            }
            s.push_str("{ x }");
            ts(&s)
        }
        // if x > 0.0 { if x > 0.0 { ... } else { x } } else { x }
        "nested ifs" => {
            let mut e = ts("x");
            for _ in 0..n {
                let mut s = ts("if x > 0.5");
                s.extend(wrap(e, Delimiter::Brace));
                s.extend(ts("else { x }"));
                e = s;
            }
            e
        }
        // for i in 0..1 { for i in 0..1 { ... s += x; } }
        "nested loops" => {
            let mut e = ts("s += x;");
            for _ in 0..n {
                let mut s = ts("for _ in 0..1");
                s.extend(wrap(e, Delimiter::Brace));
                e = s;
            }
            let mut b = ts("let mut s = 0.0;");
            b.extend(e);
            b.extend(ts("s"));
            b
        }
        // let v1 = x * 1.0001; let v2 = v1 * 1.0001; ... vN
        "statements" => {
            let mut s = String::from("let v0 = x;\n");
            for i in 1..=n {
                s.push_str(&format!("let v{i} = v{} * 1.0001;\n", i - 1));
            }
            s.push_str(&format!("v{n}"));
            ts(&s)
        }
        // let mut s = x; s += x; s *= 0.5; ... s
        "compound statements" => {
            let mut s = String::from("let mut s = x;\n");
            for i in 0..n {
                s.push_str(if i % 2 == 0 {
                    "s += x;\n"
                } else {
                    "s *= 0.5;\n"
                });
            }
            s.push('s');
            ts(&s)
        }
        other => panic!("unknown case {other}"),
    };
    let mut item = ts("fn f(x: f64) -> f64");
    item.extend(wrap(body, Delimiter::Brace));
    item
}

/// Run by `deep_and_huge_inputs` in a child process: one case
/// (`GRADMACRO_FUZZ_CHILD=<case>/<n>/<stack KiB>/<stage>`), on a thread with
/// the given stack; prints `RESULT <verdict>` and the time taken. `stage`
/// is `syn` (parsing only) or `macro` (the whole expansion).
#[test]
#[ignore = "run by deep_and_huge_inputs in a child process"]
fn deep_case_child() {
    let Ok(spec) = std::env::var("GRADMACRO_FUZZ_CHILD") else {
        return;
    };
    let parts: Vec<&str> = spec.split('/').collect();
    let (name, n, kib, stage) = (
        parts[0].to_string(),
        parts[1].parse::<usize>().unwrap(),
        parts[2].parse::<usize>().unwrap(),
        parts[3].to_string(),
    );
    let handle = std::thread::Builder::new()
        .stack_size(kib * 1024)
        .spawn(move || {
            let item = big_case(&name, n);
            let start = Instant::now();
            let verdict = if stage == "syn" {
                match syn::parse2::<syn::ItemFn>(item) {
                    Ok(f) => {
                        drop(f);
                        "parsed".to_string()
                    }
                    Err(e) => format!("parse error: {e}"),
                }
            } else {
                // The expansion only: checking its output would parse it
                // again, as deep as the input.
                match expand(&TokenStream::new(), &item) {
                    Ok(out) => {
                        let errors = if has_compile_error(&out) {
                            "compile errors"
                        } else {
                            "code"
                        };
                        format!("fine ({errors})")
                    }
                    Err(p) => format!("Panic({p})"),
                }
            };
            format!("{verdict} in {:.2} s", start.elapsed().as_secs_f64())
        })
        .unwrap();
    let result = handle.join().unwrap_or_else(|_| "thread panicked".into());
    println!("RESULT {result}");
}

/// How one case went in a child process.
fn child(case: &str, n: usize, kib: usize, stage: &str, timeout: Duration) -> String {
    let exe = std::env::current_exe().unwrap();
    let mut c = Command::new(exe)
        .args([
            "fuzz::deep_case_child",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env("GRADMACRO_FUZZ_CHILD", format!("{case}/{n}/{kib}/{stage}"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = c.try_wait().unwrap() {
            let mut out = String::new();
            let mut err = String::new();
            use std::io::Read;
            c.stdout.take().unwrap().read_to_string(&mut out).unwrap();
            c.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            if let Some(line) = out.lines().find_map(|l| l.strip_prefix("RESULT ")) {
                return line.to_string();
            }
            if err.contains("overflowed its stack") {
                return "STACK OVERFLOW".into();
            }
            return format!("died ({status}): {}", err.lines().last().unwrap_or(""));
        }
        if start.elapsed() > timeout {
            let _ = c.kill();
            let _ = c.wait();
            return format!("TIMEOUT after {} s", timeout.as_secs());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// 10,000-deep expressions and blocks, and long bodies, with rustc's 8 MiB
/// stack (and 2 MiB with `GRADMACRO_FUZZ_STACKS=8,2`). Where `syn` itself
/// cannot parse the input on that stack, that is recorded and the macro is
/// not blamed; a case that does not finish in time fails.
///
/// `GRADMACRO_FUZZ_DEPTH` and `GRADMACRO_FUZZ_STATEMENTS` change the sizes
/// (defaults 10,000 and 10,000); `GRADMACRO_FUZZ_BIG_SECS` the time allowed
/// to each case (default 120 s). Expansion time is linear in the size for
/// every shape here (`bench_expand::bench_expand_shapes` measures it by
/// stage); the 100,000-statement body takes `GRADMACRO_FUZZ_STATEMENTS=100000`.
#[test]
fn deep_and_huge_inputs() {
    let depth = env_u64("GRADMACRO_FUZZ_DEPTH", 10_000) as usize;
    let stmts = env_u64("GRADMACRO_FUZZ_STATEMENTS", 10_000) as usize;
    let timeout = Duration::from_secs(env_u64("GRADMACRO_FUZZ_BIG_SECS", 120));
    // rustc's 8 MiB by default; `GRADMACRO_FUZZ_STACKS=8,2` adds 2 MiB.
    let stacks: Vec<usize> = std::env::var("GRADMACRO_FUZZ_STACKS")
        .unwrap_or_else(|_| "8".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let deep = [
        "parens",
        "sums",
        "flat products",
        "negations",
        "method chain",
        "blocks",
        "else-if chain",
        "nested ifs",
        "nested loops",
    ];
    let huge = ["statements", "compound statements"];
    let jobs: Vec<(&str, usize, usize)> = deep
        .iter()
        .map(|c| (*c, depth))
        .chain(huge.iter().map(|c| (*c, stmts)))
        .flat_map(|(c, n)| stacks.iter().map(move |mib| (c, n, mib * 1024)))
        .collect();
    // Two child processes at a time.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let lines = std::sync::Mutex::new(vec![(String::new(), false); jobs.len()]);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(&(case, n, kib)) = jobs.get(k) else {
                    break;
                };
                let parsed = child(case, n, kib, "syn", timeout);
                let expanded = if parsed.starts_with("parsed") {
                    child(case, n, kib, "macro", timeout)
                } else {
                    "not run: syn cannot parse it on this stack".into()
                };
                let line = format!(
                    "{case} (n = {n}), {} MiB stack: syn: {parsed}; macro: {expanded}",
                    kib / 1024
                );
                let failed = parsed.starts_with("parsed") && !expanded.starts_with("fine");
                lines.lock().unwrap()[k] = (line, failed);
            });
        }
    });
    let lines = lines.into_inner().unwrap();
    let report: String = lines.iter().map(|(l, _)| format!("{l}\n")).collect();
    let failures: Vec<&String> = lines.iter().filter(|(_, f)| *f).map(|(l, _)| l).collect();
    println!("{report}");
    assert!(
        failures.is_empty(),
        "the macro failed on inputs syn parses:\n{}",
        failures
            .iter()
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
