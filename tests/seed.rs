//! The worked example the project grew from (x = 3, q = x·x, y = q + x): it must
//! hold exactly, forever.

use gradmacro::differentiate;

#[differentiate]
fn seed(x: f64) -> f64 {
    let q = x * x;
    q + x
}

#[test]
fn value_is_12_and_gradient_is_7_exactly() {
    assert_eq!(seed_grad(3.0), (12.0, 7.0));
}

#[test]
fn pullback_scales_the_gradient() {
    assert_eq!(seed_adjoint(3.0, 1.0), 7.0);
    assert_eq!(seed_adjoint(3.0, -2.0), -14.0);
}

#[test]
fn both_operand_positions_of_x_times_x_contribute() {
    // d/dx (x·x + x) = 2x + 1 at other points: a rule that let one operand's
    // contribution overwrite the other's would give x + 1.
    for x in [-2.5, 0.0, 0.5, 10.0] {
        let (y, g) = seed_grad(x);
        assert_eq!(y.to_bits(), seed(x).to_bits());
        assert_eq!(g, 2.0 * x + 1.0);
    }
}

#[test]
fn gradients_do_not_leak_between_calls() {
    // Fresh per call: the second call must not see the first call's gradient.
    let first = seed_grad(3.0).1;
    let second = seed_grad(3.0).1;
    assert_eq!(first, second);
    assert_eq!(seed_grad(1.0).1, 3.0);
}

#[test]
fn central_difference_agrees() {
    let check = gradmacro_runtime::check_gradient(|p| seed(p[0]), &[3.0], &[seed_grad(3.0).1]);
    check.assert_within(1e-8);
}

/// The README's `cargo expand` listing of this example is the pinned
/// expansion, `gradmacro/snapshots/seed.rs`: when the generated code changes
/// and the snapshot is blessed, the README must follow.
#[test]
fn readme_listing_is_the_seed_snapshot() {
    let root = env!("CARGO_MANIFEST_DIR");
    let read = |path: &str| {
        std::fs::read_to_string(format!("{root}/{path}"))
            .unwrap_or_else(|e| panic!("reading {path}: {e}"))
    };
    let readme = read("README.md");
    let snapshot = read("gradmacro/snapshots/seed.rs");
    // The first `rust` block after the sentence that introduces the listing.
    let intro = "This is the real output of `cargo expand";
    let after = &readme[readme.find(intro).expect("the listing's introduction")..];
    let start = after
        .find("```rust\n")
        .expect("the listing's opening fence")
        + 8;
    let len = after[start..]
        .find("\n```\n")
        .expect("the listing's closing fence")
        + 1;
    let listing = &after[start..start + len];
    let tidy = |s: &str| {
        let lines: Vec<&str> = s.lines().map(str::trim_end).collect();
        lines.join("\n").trim_end().to_string()
    };
    assert!(
        tidy(listing) == tidy(&snapshot),
        "README.md's `cargo expand` listing differs from gradmacro/snapshots/seed.rs; \
         copy the snapshot into the README\n--- README ---\n{listing}\n--- snapshot ---\n{snapshot}"
    );
}
