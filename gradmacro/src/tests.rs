//! Unit tests of the expansion itself; the behaviour of generated code is
//! tested by the workspace's `tests/`.

use proc_macro2::TokenStream;

/// Expands `#[differentiate(attr)] item` and pretty-prints the result.
pub fn expand(attr: &str, item: &str) -> String {
    let attr: TokenStream = attr.parse().expect("attr tokens");
    let item: TokenStream = item.parse().expect("item tokens");
    let out = crate::expand::differentiate(attr, item);
    match syn::parse2::<syn::File>(out.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(_) => out.to_string(),
    }
}

/// Pins the generated code of `name`: readability is part of the product, and
/// the README quotes `seed` (`tests/seed.rs` keeps the two equal).
/// `GRADMACRO_BLESS=1` rewrites the snapshots; `scripts/expand.sh` prints the
/// expansion of any other function.
fn snapshot(name: &str, attr: &str, item: &str) {
    let path = format!("{}/snapshots/{name}.rs", env!("CARGO_MANIFEST_DIR"));
    let got = expand(attr, item);
    if std::env::var_os("GRADMACRO_BLESS").is_some() {
        std::fs::write(&path, &got).expect("write snapshot");
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        got == want,
        "expansion of `{name}` changed; review it and rerun with GRADMACRO_BLESS=1\n--- got ---\n{got}"
    );
}

#[test]
fn seed_snapshot() {
    snapshot("seed", "", "fn f(x: f64) -> f64 { let q = x * x; q + x }");
}

#[test]
fn reassignment_snapshot() {
    snapshot(
        "reassignment",
        "",
        "fn f(x: f64, y: f64) -> f64 { let mut s = x; s *= s; s += y.sin(); s / y }",
    );
}

#[test]
fn loop_snapshot() {
    snapshot(
        "horner",
        "",
        "fn horner(x: f64, c: &[f64]) -> f64 { let mut acc = 0.0; for ci in c.iter().rev() { acc = acc * x + ci; } acc }",
    );
}

#[test]
fn branch_and_return_snapshot() {
    snapshot(
        "branch",
        "",
        "fn f(x: f64) -> f64 { if x < 0.0 { return -x; } let y = if x > 1.0 { x.ln() } else { x - 1.0 }; y * x }",
    );
}

#[test]
fn wrt_snapshot() {
    snapshot(
        "dot",
        "wrt(w)",
        "fn dot(w: &[f64], x: &[f64]) -> f64 { let mut s = 0.0; for (wi, xi) in w.iter().zip(x.iter()) { s += wi * xi; } s }",
    );
}

/// A loop whose iterations read only the parameters, through an index made
/// afresh from the loop's counter (`let i = 4 * j;`), records nothing: the
/// reverse sweep computes the index and the values again.
#[test]
fn independent_iterations_record_nothing() {
    let got = expand(
        "",
        "fn powell(x: &[f64]) -> f64 { let mut s = 0.0; for j in 0..x.len() / 4 { let i = 4 * j; s += (x[i] + 10.0 * x[i + 1]).powi(2) + (x[i + 2] - x[i + 3]).powi(4); } s }",
    );
    assert!(!got.contains("tape_"), "{got}");
    assert!(got.contains("let i = 4 * j;"), "{got}");
}

/// An integer counter stepped by a literal (`at += 1`, as in a packed
/// triangular matrix) is not recorded: the reverse sweep steps it back.
#[test]
fn integer_counters_are_stepped_back() {
    let got = expand(
        "",
        "fn tri(below: &[f64], v: &[f64]) -> f64 { let mut s = 0.0; let mut at = 0; for col in 0..v.len() { for row in col + 1..v.len() { s += below[at] * v[col] * v[row]; at += 1; } } s }",
    );
    assert!(!got.contains("tape_at"), "{got}");
    assert!(got.contains("at -= 1;"), "{got}");
}

/// A counter also reset in a loop: the reset is recorded (the reverse sweep
/// needs the value it destroyed), the increments are stepped back.
#[test]
fn counters_reset_in_a_loop_record_only_the_reset() {
    let got = expand(
        "",
        "fn f(w: &[f64]) -> f64 { let mut s = 0.0; let mut at = 0; for _ in 0..3 { at = 0; for k in 0..w.len() { s += w[at] * w[k]; at += 1; } } s }",
    );
    assert!(got.contains("tape_at.push(at);"), "{got}");
    assert!(got.contains("at -= 1;"), "{got}");
    assert!(got.contains("at = tape_at.pop().unwrap();"), "{got}");
}

/// A value summed up in an inner loop and read backwards only after it
/// (`z.tanh()` reads `z`) is recorded once, where the outer loop overwrites
/// it, not at every increment.
#[test]
fn sums_read_after_their_loop_record_once_per_outer_iteration() {
    let got = expand(
        "wrt(w)",
        "fn f(w: &[f64], x: &[f64], n: usize) -> f64 { let mut l = 0.0; for j in 0..n { let mut z = 0.5; for k in 0..x.len() { z += w[j * x.len() + k] * x[k]; } l += z.tanh(); } l }",
    );
    let core = &got[got.find("fn __f_core(").unwrap()..];
    let core = &core[..core.find("fn __f_core_all(").unwrap_or(core.len())];
    assert_eq!(core.matches("tape_z.push").count(), 1, "{core}");
    assert_eq!(core.matches("tape_z.pop").count(), 1, "{core}");
}

/// The cores of second derivatives return nothing, so they leave out the
/// output's arithmetic. A first value only that arithmetic read is declared
/// without it, and without `mut` when each run of the declaration is followed
/// by one write at most (`e` in either branch, `g` once per iteration); a
/// value read only by the condition of a branch with nothing to undo (`b`)
/// is not computed.
#[test]
fn second_derivative_cores_leave_out_what_only_the_value_read() {
    let got = expand(
        "hessian",
        "fn f(mut x: f64, y: f64) -> f64 { let b = y * 0.5; let mut s = 0.0; for _ in 0..4 { if b < 0.6 { s = 0.5; } } let mut e: f64 = 1.0; if y > 0.0 { e = 1.0; x = e + y; } else if y < -1.0 { e = 2.0; x = e - y; } for _ in 0..2 { let mut g: f64 = 0.5; if y > 1.0 { g = 2.0; x += g; } s += g; } x.cos() * y + e + s }",
    );
    let core = &got[got.find("fn __f_hvp_core(").unwrap()..];
    assert!(core.contains("let e: f64;"), "{core}");
    assert!(core.contains("let g: f64;"), "{core}");
    assert!(!core.contains("let b"), "{core}");
    let value = &got[got.find("fn __f_core(").unwrap()..];
    assert!(value.contains("let mut e: f64 = 1.0;"), "{value}");
}
