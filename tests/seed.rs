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
