use std::panic::{catch_unwind, AssertUnwindSafe};

use approx::assert_relative_eq;
use gradmacro_runtime::check_gradient;

fn f(x: f64, y: f64) -> f64 {
    x.sin() * y + (x * y).exp() / 10.0
}

fn f_grad(x: f64, y: f64) -> (f64, (f64, f64)) {
    let e = (x * y).exp() / 10.0;
    (f(x, y), (x.cos() * y + y * e, x.sin() + x * e))
}

const POINTS: [(f64, f64); 5] = [
    (1.0, 2.0),
    (-0.7, 0.3),
    (0.0, 0.0),
    (2.5, -1.5),
    (-3.0, 1.1),
];

fn panic_message(run: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(run)).expect_err("expected a panic");
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => p.downcast_ref::<&str>().unwrap().to_string(),
    }
}

#[test]
fn correct_gradient_passes_f64() {
    for &(x, y) in &POINTS {
        let (_, (gx, gy)) = f_grad(x, y);
        let check = check_gradient(|p| f(p[0], p[1]), &[x, y], &[gx, gy]);
        check.assert_within(1e-6);
        // Far tighter than the tolerance: the noise is of order eps^(2/3).
        assert!(check.worst_abs() < 1e-8, "{check}");
    }
}

#[test]
fn correct_gradient_passes_f32() {
    for &(x, y) in &POINTS {
        let (x, y) = (x as f32, y as f32);
        let g = |x: f32, y: f32| x.sin() * y + (x * y).exp() / 10.0;
        let e = (x * y).exp() / 10.0;
        let grad = [x.cos() * y + y * e, x.sin() + x * e];
        check_gradient(|p| g(p[0], p[1]), &[x, y], &grad).assert_within(1e-3);
    }
}

#[test]
fn single_parameter_functions() {
    for &x in &[-2.0_f64, -0.5, 0.1, 1.0, 7.0] {
        check_gradient(|p| p[0].sin(), &[x], &[x.cos()]).assert_within(1e-6);
        check_gradient(|p| p[0].exp(), &[x], &[x.exp()]).assert_within(1e-6);
        check_gradient(|p| p[0].powi(3), &[x], &[3.0 * x * x]).assert_within(1e-6);
        // sin' = -cos is wrong wherever cos x is not tiny.
        assert!(!check_gradient(|p| p[0].sin(), &[x], &[-x.cos()]).passes(1e-6));
    }
}

#[test]
fn three_parameters() {
    let h = |p: &[f64]| p[0] * p[1] * p[2] + p[0].exp() * p[2].sin();
    let (x, y, z): (f64, f64, f64) = (0.4, -1.3, 2.2);
    let grad = [y * z + x.exp() * z.sin(), x * z, x * y + x.exp() * z.cos()];
    let check = check_gradient(h, &[x, y, z], &grad);
    check.assert_within(1e-6);
    assert_eq!(check.entries().len(), 3);

    // Forgetting the product rule on one term is caught and located.
    let wrong = [grad[0], grad[1], x * y];
    let check = check_gradient(h, &[x, y, z], &wrong);
    assert!(!check.passes(1e-6));
    let failing: Vec<usize> = check
        .entries()
        .iter()
        .filter(|e| !e.passes(1e-6))
        .map(|e| e.index)
        .collect();
    assert_eq!(failing, [2]);
}

#[test]
fn slightly_wrong_gradient_fails() {
    // Off by one part in 1e4: well above the finite-difference noise, so a
    // tolerance of 1e-6 must reject it while 1e-3 accepts it.
    let (_, (gx, gy)) = f_grad(1.0, 2.0);
    let check = check_gradient(|p| f(p[0], p[1]), &[1.0, 2.0], &[gx * (1.0 + 1e-4), gy]);
    assert!(!check.passes(1e-6));
    assert!(check.passes(1e-3));
    assert_relative_eq!(check.worst_rel(), 1e-4, max_relative = 1e-3);
}

#[test]
fn slightly_wrong_gradient_fails_f32() {
    let grad = [3.0_f32.cos() * 1.01];
    let check = check_gradient(|p: &[f32]| p[0].sin(), &[3.0], &grad);
    assert!(!check.passes(1e-3));
    assert!(check.passes(2e-2));
}

#[test]
#[should_panic(expected = "gradient check failed")]
fn assert_within_panics_on_wrong_gradient() {
    let (_, (gx, gy)) = f_grad(1.0, 2.0);
    check_gradient(|p| f(p[0], p[1]), &[1.0, 2.0], &[gx, -gy]).assert_within(1e-6);
}

#[test]
fn panic_message_is_a_readable_table() {
    let (_, (gx, gy)) = f_grad(1.0, 2.0);
    let check = check_gradient(|p| f(p[0], p[1]), &[1.0, 2.0], &[gx, gy + 0.5]);
    let msg = panic_message(|| check.assert_within(1e-6));
    assert!(msg.contains("1 of 2 parameters"), "{msg}");
    assert!(msg.contains("tolerance 1e-6"), "{msg}");
    assert!(msg.contains("worst abs err 5.00e-1"), "{msg}");
    let lines: Vec<&str> = msg.lines().collect();
    // Summary, header, one row per parameter, worst errors.
    assert_eq!(lines.len(), 5, "{msg}");
    assert!(lines[1].contains("analytic") && lines[1].contains("rel err"));
    assert!(!lines[2].contains("FAIL"), "{msg}");
    assert!(lines[3].contains("FAIL"), "{msg}");
}

#[test]
fn display_shows_every_parameter() {
    let check = check_gradient(|p: &[f64]| p[0] * p[1], &[3.0, 4.0], &[4.0, 3.0]);
    let table = check.to_string();
    assert_eq!(table.lines().count(), 4, "{table}");
    assert!(table.contains("3.000000e0") && table.contains("4.000000e0"));
    assert!(!table.contains("FAIL") && !table.contains("tolerance"));
}

#[test]
fn entries_record_the_comparison() {
    let check = check_gradient(|p: &[f64]| p[0] * p[0], &[3.0], &[7.0]);
    let e = check.entries()[0];
    assert_eq!((e.index, e.x, e.analytic), (0, 3.0, 7.0));
    assert_relative_eq!(e.numeric, 6.0, max_relative = 1e-9);
    assert_relative_eq!(e.abs_err, 1.0, max_relative = 1e-8);
    assert_relative_eq!(e.rel_err, 1.0 / 7.0, max_relative = 1e-8);
    assert_eq!(check.worst_abs(), e.abs_err);
    assert_eq!(check.worst_rel(), e.rel_err);
}

#[test]
fn absolute_or_relative_is_enough() {
    // Derivative 3e12: the absolute error is far above 1e-6, the relative one is not.
    let big = check_gradient(|p: &[f64]| p[0].powi(3), &[1e6], &[3e12]);
    assert!(big.worst_abs() > 1e-6 && big.passes(1e-6), "{big}");
    // Derivative 0: every nonzero error is 100% relative, but tiny in absolute terms.
    let flat = check_gradient(|p: &[f64]| p[0].cos(), &[0.0], &[0.0]);
    assert!(flat.passes(1e-6), "{flat}");
    let tiny = check_gradient(|_: &[f64]| 1.0, &[0.0], &[1e-9]);
    assert_eq!(tiny.entries()[0].rel_err, 1.0);
    assert!(tiny.passes(1e-6));
    assert!(!tiny.passes(1e-10));
}

#[test]
fn zero_and_zero_agree() {
    let check = check_gradient(|_: &[f64]| 5.0, &[1.0, 2.0], &[0.0, 0.0]);
    assert_eq!(check.worst_abs(), 0.0);
    assert_eq!(check.worst_rel(), 0.0);
    assert!(check.passes(0.0));
}

#[test]
#[should_panic(expected = "the analytic gradient has 2 entries but the point has 3 coordinates")]
fn length_mismatch_panics() {
    check_gradient(|p: &[f64]| p.iter().sum(), &[1.0, 2.0, 3.0], &[1.0, 1.0]);
}

#[test]
#[should_panic(expected = "the analytic gradient has 1 entries but the point has 0 coordinates")]
fn length_mismatch_panics_for_empty_point() {
    check_gradient(|_: &[f32]| 0.0, &[], &[1.0]);
}

#[test]
fn nan_analytic_fails() {
    let check = check_gradient(|p: &[f64]| p[0] * p[1], &[1.0, 2.0], &[2.0, f64::NAN]);
    assert!(!check.passes(1e-6));
    assert!(!check.passes(f64::INFINITY));
    assert!(check.worst_abs().is_nan() && check.worst_rel().is_nan());
    assert!(panic_message(|| check.assert_within(1e-6)).contains("FAIL"));
}

#[test]
fn nan_numeric_fails() {
    // sqrt at 0 is outside the domain on one side of the step.
    let check = check_gradient(|p: &[f64]| p[0].sqrt(), &[0.0], &[0.0]);
    assert!(check.entries()[0].numeric.is_nan());
    assert!(!check.passes(f64::INFINITY));
}

#[test]
fn nan_is_not_hidden_by_a_later_finite_error() {
    let check = check_gradient(|p: &[f32]| p[0] + p[1], &[1.0, 1.0], &[f32::NAN, 3.0]);
    assert!(check.worst_abs().is_nan());
    assert!(!check.passes(1e9));
}

#[test]
fn nan_tolerance_never_passes() {
    let check = check_gradient(|p: &[f64]| p[0], &[1.0], &[1.0]);
    assert!(check.passes(1e-6));
    assert!(!check.passes(f64::NAN));
}

#[test]
fn infinite_gradients_fail() {
    let check = check_gradient(|p: &[f64]| p[0], &[1.0], &[f64::INFINITY]);
    assert!(!check.passes(1e-6));
}

#[test]
fn empty_point_passes_trivially() {
    let check = check_gradient(|_: &[f64]| 0.0, &[], &[]);
    assert!(check.entries().is_empty());
    assert_eq!(check.worst_abs(), 0.0);
    check.assert_within(0.0);
}
