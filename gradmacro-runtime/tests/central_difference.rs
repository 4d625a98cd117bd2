use std::cell::Cell;

use approx::assert_relative_eq;
use gradmacro_runtime::central_difference;

const POINTS: [f64; 7] = [-3.7, -1.0, -0.2, 0.0, 0.4, 1.5, 12.0];

#[test]
fn sin_exp_cube_f64() {
    for &x in &POINTS {
        let d = central_difference(|p: &[f64]| p[0].sin(), &[x]);
        assert_relative_eq!(d[0], x.cos(), epsilon = 1e-9, max_relative = 1e-9);
        let d = central_difference(|p: &[f64]| p[0].exp(), &[x]);
        assert_relative_eq!(d[0], x.exp(), epsilon = 1e-9, max_relative = 1e-9);
        let d = central_difference(|p: &[f64]| p[0].powi(3), &[x]);
        assert_relative_eq!(d[0], 3.0 * x * x, epsilon = 1e-9, max_relative = 1e-9);
    }
}

#[test]
fn sin_exp_cube_f32() {
    for &x in &POINTS {
        let x = x as f32;
        let d = central_difference(|p: &[f32]| p[0].sin(), &[x]);
        assert_relative_eq!(d[0], x.cos(), epsilon = 1e-3, max_relative = 1e-3);
        let d = central_difference(|p: &[f32]| p[0].exp(), &[x]);
        assert_relative_eq!(d[0], x.exp(), epsilon = 1e-3, max_relative = 1e-3);
        let d = central_difference(|p: &[f32]| p[0].powi(3), &[x]);
        assert_relative_eq!(d[0], 3.0 * x * x, epsilon = 1e-3, max_relative = 1e-3);
    }
}

fn three(p: &[f64]) -> f64 {
    let (x, y, z) = (p[0], p[1], p[2]);
    x * y * z + x.exp() * z.sin() + y * y / z
}

fn three_grad(x: f64, y: f64, z: f64) -> [f64; 3] {
    [
        y * z + x.exp() * z.sin(),
        x * z + 2.0 * y / z,
        x * y + x.exp() * z.cos() - y * y / (z * z),
    ]
}

#[test]
fn three_parameters() {
    for &(x, y, z) in &[(0.3, -1.2, 2.0), (1.0, 2.0, 3.0), (-2.5, 0.7, -0.4)] {
        let d = central_difference(three, &[x, y, z]);
        for (numeric, analytic) in d.iter().zip(three_grad(x, y, z)) {
            assert_relative_eq!(*numeric, analytic, epsilon = 1e-8, max_relative = 1e-8);
        }
    }
}

#[test]
fn large_magnitudes() {
    // A fixed absolute step would drown in rounding here; the scaled one does not.
    let x = 1e8_f64;
    let d = central_difference(|p: &[f64]| p[0] * p[0], &[x]);
    assert_relative_eq!(d[0], 2.0 * x, max_relative = 1e-9);
    let d = central_difference(|p: &[f64]| p[0].ln(), &[x]);
    assert_relative_eq!(d[0], 1.0 / x, max_relative = 1e-9);
}

#[test]
fn denominator_is_the_representable_step() {
    // For f(x) = x the difference quotient is exactly 1 only if the divisor is
    // the distance between the rounded points; dividing by 2h would be off by
    // about ulp(x) / h, around 1e-5 for these f32 values.
    for &x in &[1000.1_f32, 12345.678, 0.3, -777.77] {
        assert_eq!(central_difference(|p: &[f32]| p[0], &[x]), [1.0]);
    }
    for &x in &[1e300_f64, 0.1, -123.456] {
        assert_eq!(central_difference(|p: &[f64]| p[0], &[x]), [1.0]);
    }
}

#[test]
fn perturbs_one_coordinate_at_a_time() {
    let x = [1.0, -2.0, 3.0];
    let calls = Cell::new(0);
    let d = central_difference(
        |p: &[f64]| {
            calls.set(calls.get() + 1);
            assert_eq!(p.len(), 3);
            let moved = p.iter().zip(&x).filter(|(a, b)| a != b).count();
            assert_eq!(moved, 1, "point {p:?}");
            p[0] + 10.0 * p[1] + 100.0 * p[2]
        },
        &x,
    );
    assert_eq!(calls.get(), 6);
    // Rounding of f (about 300 here) divided by h limits the accuracy.
    assert_relative_eq!(d[0], 1.0, max_relative = 1e-7);
    assert_relative_eq!(d[1], 10.0, max_relative = 1e-7);
    assert_relative_eq!(d[2], 100.0, max_relative = 1e-7);
}

#[test]
fn empty_point() {
    let d = central_difference(|_: &[f64]| panic!("must not be called"), &[]);
    assert!(d.is_empty());
}

#[test]
fn kink_gives_average_slope() {
    let d = central_difference(|p: &[f64]| p[0].abs(), &[0.0]);
    assert_eq!(d, [0.0]);
}

#[test]
fn leaving_the_domain_gives_nan() {
    let d = central_difference(|p: &[f64]| p[0].sqrt(), &[1e-12]);
    assert!(d[0].is_nan());
}
