//! Every construct `#[differentiate]` rejects, one file per mistake in
//! `tests/ui/`: each must fail to compile with one clear error at the offending
//! syntax, saying what to write instead, and with no follow-on errors.
//!
//! Regenerate the expected output with
//! `TRYBUILD=overwrite cargo test --test compile_fail`, then read the diff.

#[test]
fn compile_fail() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
