use approx::assert_relative_eq;
use gradmacro_runtime::default_step;

#[test]
fn small_x_uses_cbrt_eps() {
    assert_eq!(default_step(0.5_f64), f64::EPSILON.cbrt());
    assert_eq!(default_step(0.0_f64), default_step(1.0_f64));
    assert_eq!(default_step(0.5_f32), f32::EPSILON.cbrt());
    // The f32 step is much coarser, as its epsilon is.
    assert!(default_step(0.5_f32) > 100.0 * default_step(0.5_f64) as f32);
}

#[test]
fn step_scales_with_magnitude() {
    assert_relative_eq!(
        default_step(1e6_f64) / default_step(0.5_f64),
        1e6,
        max_relative = 1e-12
    );
    assert_relative_eq!(
        default_step(1e6_f32) / default_step(0.5_f32),
        1e6,
        max_relative = 1e-6
    );
    assert_eq!(default_step(-1e6_f64), default_step(1e6_f64));
    assert_eq!(default_step(-3.0_f32), 3.0 * f32::EPSILON.cbrt());
}

#[test]
fn non_finite_x_gives_non_finite_step() {
    assert!(default_step(f64::NAN).is_nan());
    assert!(default_step(f32::INFINITY).is_infinite());
}
