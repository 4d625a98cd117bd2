//! `argmin_testfunctions`' functions are generic over
//! `T: Float + FromPrimitive + ..`: written here generically with
//! `#[differentiate]` (loops and `T::from(..)` constants, as generic code
//! writes them, with only `T: Float`) and differentiated at `f64` and `f32`,
//! against the crate's hand-written derivatives (`rosenbrock_derivative`,
//! ...) instantiated at the same type.
//!
//! At each point the value of `f_grad` is bit-for-bit the function's, agrees
//! with the crate's value, and the gradient agrees with the crate's to a
//! tolerance scaled by the type's epsilon and the gradient's largest entry
//! (both sides round differently, in the type's own precision).

mod support;

use argmin_testfunctions as atf;
use gradmacro::differentiate;
use num_traits::Float;
use std::fmt::Debug;
use support::rng::Rng;

const TAU: f64 = 2.0 * std::f64::consts::PI;

/// `Σ (1 - x_i)² + 100 (x_{i+1} - x_i²)²`.
#[differentiate]
fn rosenbrock<T: Float>(x: &[T]) -> T {
    let (a, b) = (T::one(), T::from(100.0).unwrap());
    let mut s = T::zero();
    for i in 1..x.len() {
        s = s + (a - x[i - 1]).powi(2) + b * (x[i] - x[i - 1].powi(2)).powi(2);
    }
    s
}

/// `Σ x_i²`.
#[differentiate]
fn sphere<T: Float>(x: &[T]) -> T {
    let mut s = T::zero();
    for xi in x.iter() {
        s = s + xi.powi(2);
    }
    s
}

/// `10 n + Σ (x_i² - 10 cos(2π x_i))`.
#[differentiate]
fn rastrigin<T: Float>(x: &[T]) -> T {
    let a = T::from(10.0).unwrap();
    let tau = T::from(TAU).unwrap();
    let mut s = T::zero();
    for xi in x.iter() {
        s = s + (xi.powi(2) - a * (tau * *xi).cos());
    }
    a * T::from(x.len()).unwrap() + s
}

/// `-20 exp(-0.2 √(Σ x_i² / n)) - exp(Σ cos(2π x_i) / n) + 20 + e`.
#[differentiate]
fn ackley<T>(x: &[T]) -> T
where
    T: Float + Debug,
{
    let (a, b, c) = (
        T::from(20.0).unwrap(),
        T::from(0.2).unwrap(),
        T::from(TAU).unwrap(),
    );
    let n = T::from(x.len()).unwrap();
    let mut sq = T::zero();
    let mut cs = T::zero();
    for xi in x.iter() {
        sq = sq + xi.powi(2);
        cs = cs + (c * *xi).cos();
    }
    let one = T::one();
    -a * (-b * ((one / n) * sq).sqrt()).exp() - ((one / n) * cs).exp() + a + one.exp()
}

/// `(x² + y - 11)² + (x + y² - 7)²`.
#[differentiate]
fn himmelblau<T: Float>(p: &[T; 2]) -> T {
    let (x1, x2) = (p[0], p[1]);
    (x1.powi(2) + x2 - T::from(11.0).unwrap()).powi(2)
        + (x1 + x2.powi(2) - T::from(7.0).unwrap()).powi(2)
}

/// `(x + 2y - 7)² + (2x + y - 5)²`.
#[differentiate]
fn booth<T: Float>(p: &[T; 2]) -> T {
    let two = T::from(2.0).unwrap();
    (p[0] + two * p[1] - T::from(7.0).unwrap()).powi(2)
        + (two * p[0] + p[1] - T::from(5.0).unwrap()).powi(2)
}

/// `0.26 (x² + y²) - 0.48 x y`.
#[differentiate]
fn matyas<T: Float>(p: &[T; 2]) -> T {
    T::from(0.26).unwrap() * (p[0].powi(2) + p[1].powi(2)) - T::from(0.48).unwrap() * p[0] * p[1]
}

/// `sin(x + y) + (x - y)² - 1.5 x + 2.5 y + 1`.
#[differentiate]
fn mccormick<T: Float>(p: &[T; 2]) -> T {
    let (x1, x2) = (p[0], p[1]);
    (x1 + x2).sin() + (x1 - x2).powi(2) - T::from(1.5).unwrap() * x1
        + T::from(2.5).unwrap() * x2
        + T::one()
}

/// Points of dimension `n` in `[lo, hi)^n`, the same on every run.
fn points<T: Float>(seed: u64, n: usize, lo: f64, hi: f64) -> Vec<Vec<T>> {
    let mut rng = Rng::new(seed);
    (0..4)
        .map(|_| {
            rng.vec(n, lo, hi)
                .into_iter()
                .map(|v| T::from(v).unwrap())
                .collect()
        })
        .collect()
}

/// Relative tolerance for `T`: a few hundred units in the last place.
fn rel<T: Float>() -> f64 {
    T::epsilon().to_f64().unwrap() * 512.0
}

#[track_caller]
fn compare<T: Float + Debug>(
    what: &str,
    x: &[T],
    value: T,
    own: T,
    theirs: T,
    grad: &[T],
    want: &[T],
) {
    assert_eq!(
        value.to_f64().unwrap().to_bits(),
        own.to_f64().unwrap().to_bits(),
        "{what} at {x:?}: f_grad's value is not the function's"
    );
    let scale = want
        .iter()
        .fold(1.0f64, |m, w| m.max(w.to_f64().unwrap().abs()));
    let (v, t) = (value.to_f64().unwrap(), theirs.to_f64().unwrap());
    assert!(
        (v - t).abs() <= rel::<T>() * v.abs().max(t.abs()).max(1.0),
        "{what} at {x:?}: value {v:e}, the crate's {t:e}"
    );
    assert_eq!(grad.len(), want.len());
    for (i, (g, w)) in grad.iter().zip(want).enumerate() {
        let (g, w) = (g.to_f64().unwrap(), w.to_f64().unwrap());
        assert!(
            (g - w).abs() <= rel::<T>() * scale,
            "{what}[{i}] at {x:?}: got {g:e}, the crate's derivative {w:e}"
        );
    }
}

fn check_slices<T>()
where
    T: Float + Debug + num_traits::FromPrimitive + std::iter::Sum + std::ops::AddAssign + Into<f64>,
{
    for n in [1, 2, 3, 10, 50] {
        for x in points::<T>(1 + n as u64, n, -2.0, 2.0) {
            let (v, g) = rosenbrock_grad(&x);
            let want = atf::rosenbrock_derivative(&x);
            compare(
                "rosenbrock",
                &x,
                v,
                rosenbrock(&x),
                atf::rosenbrock(&x),
                &g,
                &want,
            );
            let (v, g) = sphere_grad(&x);
            let want = atf::sphere_derivative(&x);
            compare("sphere", &x, v, sphere(&x), atf::sphere(&x), &g, &want);
        }
        for x in points::<T>(100 + n as u64, n, -5.12, 5.12) {
            let (v, g) = rastrigin_grad(&x);
            let want = atf::rastrigin_derivative(&x);
            compare(
                "rastrigin",
                &x,
                v,
                rastrigin(&x),
                atf::rastrigin(&x),
                &g,
                &want,
            );
        }
        for x in points::<T>(200 + n as u64, n, -4.0, 4.0) {
            let (v, g) = ackley_grad(&x);
            let want = atf::ackley_derivative(&x);
            compare("ackley", &x, v, ackley(&x), atf::ackley(&x), &g, &want);
        }
    }
}

fn check_pairs<T: Float + Debug + num_traits::FromPrimitive>() {
    for x in points::<T>(7, 2, -4.0, 4.0) {
        let p = [x[0], x[1]];
        let (v, g) = himmelblau_grad(&p);
        let want = atf::himmelblau_derivative(&p);
        compare(
            "himmelblau",
            &x,
            v,
            himmelblau(&p),
            atf::himmelblau(&p),
            &g,
            &want,
        );
        let (v, g) = booth_grad(&p);
        let want = atf::booth_derivative(&p);
        compare("booth", &x, v, booth(&p), atf::booth(&p), &g, &want);
        let (v, g) = matyas_grad(&p);
        let want = atf::matyas_derivative(&p);
        compare("matyas", &x, v, matyas(&p), atf::matyas(&p), &g, &want);
        let (v, g) = mccormick_grad(&p);
        let want = atf::mccormick_derivative(&p);
        compare(
            "mccormick",
            &x,
            v,
            mccormick(&p),
            atf::mccormick(&p),
            &g,
            &want,
        );
    }
}

#[test]
fn n_dimensional_at_f64() {
    check_slices::<f64>();
}

#[test]
fn n_dimensional_at_f32() {
    check_slices::<f32>();
}

#[test]
fn two_dimensional_at_f64_and_f32() {
    check_pairs::<f64>();
    check_pairs::<f32>();
}
