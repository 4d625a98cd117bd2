//! A `check(..)` point catches a wrong `#[custom_adjoint]` below the checked
//! function and passes the right one. The failing test cannot live in this
//! suite, so tests/check_fixture/ is a crate of its own, and this test runs
//! its `cargo test` and reads the outcome.

use std::path::Path;
use std::process::Command;

#[test]
fn a_wrong_custom_adjoint_fails_its_check_and_a_right_one_passes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let output = Command::new(cargo)
        .args(["test", "--locked", "-j", "1", "--manifest-path"])
        .arg(root.join("tests/check_fixture/Cargo.toml"))
        .arg("--target-dir")
        .arg(Path::new(env!("CARGO_TARGET_TMPDIR")).join("check_fixture"))
        .args(["--lib", "--", "--test-threads", "1"])
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let all = format!("{stdout}\n{stderr}");
    assert!(
        stdout.contains("test right_check_0 ... ok"),
        "the check on the right adjoint did not pass:\n{all}"
    );
    assert!(
        stdout.contains("test wrong_check_0 ... FAILED"),
        "the check on the wrong adjoint did not fail:\n{all}"
    );
    assert!(!output.status.success());
    // The failure names the function and marks the parameters that are off.
    assert!(stdout.contains("gradient check of `wrong` FAILED"), "{all}");
    let failing: Vec<&str> = stdout
        .lines()
        .filter(|l| l.ends_with("<- FAIL"))
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    assert!(failing.contains(&"x") && failing.contains(&"w[0]"), "{all}");
    assert!(!failing.contains(&"w[1]"), "{all}");
}
