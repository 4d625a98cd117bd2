//! Special functions that `#[differentiate]` can call: `erf`, `erfc`, `gamma`
//! and `lgamma`, evaluated by the `libm` crate, with hand-written adjoints.
//!
//! Enabled by the `libm` feature. Each function `f` comes with `f_adjoint(x,
//! d_out) -> f64`, which is `d_out * f'(x)`, and the hidden `f_pullback` that
//! differentiated callers use. A differentiated function calling `f(..)` looks
//! for `f_pullback` under the same path, so either call through the module,
//!
//! ```
//! use gradmacro::differentiate;
//! use gradmacro_runtime::special;
//! use std::f64::consts::{PI, SQRT_2};
//!
//! /// The standard normal distribution function.
//! #[differentiate]
//! fn normal_cdf(x: f64) -> f64 {
//!     0.5 * special::erfc(-x / SQRT_2)
//! }
//!
//! // Its derivative is the normal density.
//! let (p, density) = normal_cdf_grad(1.0);
//! assert!((p - 0.8413447460685429).abs() < 1e-15);
//! assert!((density - (-0.5f64).exp() / (2.0 * PI).sqrt()).abs() < 1e-15);
//! ```
//!
//! or import everything, pullbacks included, with `use
//! gradmacro_runtime::special::*;`. Importing the function alone (`use
//! gradmacro_runtime::special::erf;`) is not enough: the call then fails with
//! "cannot find function `erf_pullback`".
//!
//! The derivatives:
//!
//! | function | derivative |
//! | --- | --- |
//! | [`erf`] | `2 / sqrt(pi) * exp(-x^2)` |
//! | [`erfc`] | `-2 / sqrt(pi) * exp(-x^2)` |
//! | [`gamma`] | `gamma(x) * digamma(x)` |
//! | [`lgamma`] | `digamma(x)` |
//!
//! [`digamma`] itself is provided for these adjoints and for direct use; it
//! has no adjoint (a differentiated function may call it only with constant
//! arguments).
//!
//! At the poles of `gamma` (`0, -1, -2, ...`) the derivatives of `gamma` and
//! `lgamma` are NaN. Where `gamma` overflows (`x > 171.6...`) its derivative
//! is infinite.

use core::f64::consts::{FRAC_2_SQRT_PI, PI};

use gradmacro::custom_adjoint;

/// The error function, `erf(x) = 2 / sqrt(pi) * integral from 0 to x of
/// exp(-t^2) dt` (`libm::erf`).
///
/// ```
/// use gradmacro_runtime::special::erf;
/// assert!((erf(1.0) - 0.8427007929497149).abs() < 1e-15);
/// assert_eq!(erf(0.0), 0.0);
/// ```
#[inline]
pub fn erf(x: f64) -> f64 {
    libm::erf(x)
}

/// The complementary error function, `erfc(x) = 1 - erf(x)`, accurate where
/// `erf(x)` is close to 1 (`libm::erfc`).
///
/// ```
/// use gradmacro_runtime::special::erfc;
/// assert!((erfc(1.0) - 0.15729920705028513).abs() < 1e-15);
/// ```
#[inline]
pub fn erfc(x: f64) -> f64 {
    libm::erfc(x)
}

/// The gamma function, `gamma(n) = (n - 1)!` for positive integers
/// (`libm::tgamma`). NaN at the poles `-1, -2, ...`, `±inf` at `±0`.
///
/// ```
/// use gradmacro_runtime::special::gamma;
/// assert!((gamma(5.0) - 24.0).abs() < 1e-12);
/// ```
#[inline]
pub fn gamma(x: f64) -> f64 {
    libm::tgamma(x)
}

/// The logarithm of the absolute value of the gamma function,
/// `ln |gamma(x)|` (`libm::lgamma`); `+inf` at the poles `0, -1, -2, ...`.
///
/// ```
/// use gradmacro_runtime::special::lgamma;
/// assert!((lgamma(10.0) - 362880f64.ln()).abs() < 1e-12);
/// ```
#[inline]
pub fn lgamma(x: f64) -> f64 {
    libm::lgamma(x)
}

/// `d_out` times the derivative of [`erf`], `2 / sqrt(pi) * exp(-x^2)`.
///
/// ```
/// use gradmacro_runtime::special::erf_adjoint;
/// use std::f64::consts::FRAC_2_SQRT_PI;
/// assert!((erf_adjoint(0.0, 3.0) - 3.0 * FRAC_2_SQRT_PI).abs() < 1e-15);
/// ```
#[custom_adjoint(erf)]
pub fn erf_adjoint(x: f64, d_out: f64) -> f64 {
    d_out * (FRAC_2_SQRT_PI * (-x * x).exp())
}

/// `d_out` times the derivative of [`erfc`], `-2 / sqrt(pi) * exp(-x^2)`.
///
/// ```
/// use gradmacro_runtime::special::erfc_adjoint;
/// use std::f64::consts::FRAC_2_SQRT_PI;
/// assert!((erfc_adjoint(0.0, 1.0) + FRAC_2_SQRT_PI).abs() < 1e-15);
/// ```
#[custom_adjoint(erfc)]
pub fn erfc_adjoint(x: f64, d_out: f64) -> f64 {
    -d_out * (FRAC_2_SQRT_PI * (-x * x).exp())
}

/// `d_out` times the derivative of [`gamma`], `gamma(x) * digamma(x)`.
///
/// ```
/// use gradmacro_runtime::special::gamma_adjoint;
/// // gamma'(1) is minus the Euler-Mascheroni constant.
/// assert!((gamma_adjoint(1.0, 1.0) + 0.5772156649015329).abs() < 1e-12);
/// ```
#[custom_adjoint(gamma)]
pub fn gamma_adjoint(x: f64, d_out: f64) -> f64 {
    d_out * (gamma(x) * digamma(x))
}

/// `d_out` times the derivative of [`lgamma`], `digamma(x)`.
///
/// ```
/// use gradmacro_runtime::special::lgamma_adjoint;
/// assert!((lgamma_adjoint(2.0, 2.0) - 2.0 * (1.0 - 0.5772156649015329)).abs() < 1e-12);
/// ```
#[custom_adjoint(lgamma)]
pub fn lgamma_adjoint(x: f64, d_out: f64) -> f64 {
    d_out * digamma(x)
}

/// Below this, the recurrence `digamma(x) = digamma(x + 1) - 1 / x` moves the
/// argument up before the asymptotic series is used. At 10 the first omitted
/// term of the series (`B_16 / (16 x^16)`, about `4e-17`) is below half an
/// ulp of the result; at 6 it would be about `1.6e-13`, measured as some
/// 600 times `f64::EPSILON` near `x = 1`.
const ASYMPTOTIC_FROM: f64 = 10.0;

/// The digamma function `psi(x) = gamma'(x) / gamma(x)`, the derivative of
/// `ln |gamma(x)|`.
///
/// Computed with the recurrence `psi(x) = psi(x + 1) - 1 / x` up to `x >= 10`,
/// then the asymptotic series `ln x - 1 / (2x) - sum B_2k / (2k x^2k)` through
/// `x^-14`; negative non-integers use the reflection `psi(x) = psi(1 - x) - pi
/// / tan(pi x)`. For `x > 0` the error is within `8 * f64::EPSILON * max(1,
/// |psi(x)|)`: relative, except near the zero at 1.4616... where it is
/// absolute. For `x < 0` add the rounding of the two reflection terms: within
/// `8 * f64::EPSILON * max(1, |psi(x)|, |psi(1 - x)|, |pi / tan(pi x)|)`. NaN at
/// the poles `0, -1, -2, ...` and at `-inf`; `+inf` at `+inf`.
///
/// ```
/// use gradmacro_runtime::special::digamma;
///
/// assert!((digamma(1.0) + 0.5772156649015329).abs() < 1e-15); // -Euler's gamma
/// assert!(digamma(-2.0).is_nan());
/// ```
///
/// ```
/// use gradmacro_runtime::special::digamma;
/// assert!((digamma(1.0) + 0.5772156649015329).abs() < 1e-12);
/// ```
pub fn digamma(x: f64) -> f64 {
    if x.is_nan() || x == f64::NEG_INFINITY {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return f64::INFINITY;
    }
    if x <= 0.0 {
        if x == x.floor() {
            return f64::NAN;
        }
        // tan(pi x) has period 1: reduce exactly to [-1/2, 1/2] first, so that
        // a large |x| loses nothing in `pi * x`.
        let r = x - x.round();
        return digamma(1.0 - x) - PI / (PI * r).tan();
    }
    // shift = -sum 1 / (x + k), summed with Kahan's compensation (`lost` is
    // what the running sum dropped): the shift and the series nearly cancel
    // for x between 1 and 2, so the shift's rounding matters.
    let mut x = x;
    let (mut shift, mut lost) = (0.0f64, 0.0f64);
    while x < ASYMPTOTIC_FROM {
        let term = -1.0 / x - lost;
        let sum = shift + term;
        lost = (sum - shift) - term;
        shift = sum;
        x += 1.0;
    }
    let z = 1.0 / (x * x);
    // B_2k / (2k): 1/12, -1/120, 1/252, -1/240, 1/132, -691/32760, 1/12.
    let tail = z
        * (1.0 / 12.0
            - z * (1.0 / 120.0
                - z * (1.0 / 252.0
                    - z * (1.0 / 240.0 - z * (1.0 / 132.0 - z * (691.0 / 32760.0 - z / 12.0))))));
    (shift - lost) + (x.ln() - 0.5 / x - tail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{central_difference, check_gradient};

    /// `(x, digamma(x))`, the reference computed with mpmath at 40 digits
    /// for the exact binary value of `x`, then rounded to f64: special
    /// values, points around the switch to the asymptotic series, the zero
    /// at 1.4616..., tiny and huge arguments, then points drawn at random.
    const DIGAMMA: [(f64, f64); 61] = [
        (1.0, -0.5772156649015329),
        (0.5, -1.9635100260214235),
        (2.0, 0.42278433509846713),
        (3.0, 0.9227843350984671),
        (0.25, -4.2274535333762655),
        (0.75, -1.0858608797864722),
        (0.3333333333333333, -3.1320337800208065),
        (1.4616321449683622, -9.241265521729427e-17),
        (0.1, -10.423754940411076),
        (0.001, -1000.5755719318103),
        (1e-08, -100000000.57721564),
        (5.5, 1.6110931485817512),
        (6.0, 1.7061176684318005),
        (9.99, 2.250700372831201),
        (10.0, 2.251752589066721),
        (10.5, 2.3030010342976865),
        (30.0, 3.384438132685525),
        (100.0, 4.600161852738087),
        (1000.0, 6.907255195648812),
        (1000000.0, 13.815510057964191),
        (1000000000000000.0, 34.538776394910684),
        (-0.5, 0.03648997397857652),
        (-1.5, 0.7031566406452432),
        (-2.25, 4.158583564657972),
        (-3.7, -0.8450768588704194),
        (-10.3, 4.662403493582087),
        (-0.001, 999.4211381978913),
        (-100.5, 4.6151246013380645),
        (-1e-09, 999999999.4227843),
        (0.999999, -0.5772173098368019),
        (171.5, 5.141664981433999),
        (3.885993, 1.2232283514768187),
        (1.81019, 0.29247412842168374),
        (7.811214, 1.9901862951906752),
        (0.869235, -0.8156379966011874),
        (6.430584, 1.7813015421739258),
        (4.388267, 1.3606886810859968),
        (0.695987, -1.231448688387244),
        (6.089229, 1.7221677853844266),
        (0.449948, -2.233846325928112),
        (5.203748, 1.5502282996367724),
        (0.838265, -0.8801253373889354),
        (1.088556, -0.440280647460822),
        (-6.90577, -8.297484118850871),
        (-2.077775, 13.553751706464453),
        (-10.514376, 2.2575623079508276),
        (-9.321132, 4.263046160730304),
        (-4.470801, 1.894249226649474),
        (-0.627493, -1.18082495460367),
        (-5.074765, 14.847949453466805),
        (-7.239834, 5.396028336192524),
        (-0.284939, 2.331467746452387),
        (-11.441008, 3.0692568432791036),
        (-1.698378, -1.462074335382155),
        (-8.524689, 1.9563140627065652),
        (0.000394995, -2532.254182284006),
        (0.000131905, -7581.790751032532),
        (0.357004, -2.907498943521026),
        (490088000.0, 20.01009552376077),
        (0.00179091, -558.9496246637551),
        (29430.9, 10.289783432756485),
    ];

    /// Non-integer points on both sides of 0, for derivative checks.
    const POINTS: [f64; 12] = [
        0.3, 0.5, 1.0, 1.7, 2.5, 4.2, 7.9, 12.5, -0.4, -1.3, -2.6, -5.5,
    ];

    /// `|got - want| <= abs + rel * |want|`.
    fn near(got: f64, want: f64, abs: f64, rel: f64) -> bool {
        (got - want).abs() <= abs + rel * want.abs()
    }

    /// The error bound `digamma` documents for the value `psi` at `x`.
    fn digamma_tolerance(x: f64, psi: f64) -> f64 {
        let mut scale = psi.abs().max(1.0);
        if x < 0.0 {
            let r = x - x.round();
            scale = scale
                .max(digamma(1.0 - x).abs())
                .max((PI / (PI * r).tan()).abs());
        }
        8.0 * f64::EPSILON * scale
    }

    #[test]
    fn digamma_matches_reference_values() {
        for (x, want) in DIGAMMA {
            let got = digamma(x);
            assert!(
                (got - want).abs() <= digamma_tolerance(x, want),
                "digamma({x:e}) = {got:e}, expected {want:e} (error {:.1} eps)",
                (got - want).abs() / f64::EPSILON / want.abs().max(1.0)
            );
        }
    }

    #[test]
    fn digamma_special_values() {
        let euler = 0.5772156649015329;
        assert!((digamma(1.0) + euler).abs() <= digamma_tolerance(1.0, euler));
        for pole in [0.0, -0.0, -1.0, -2.0, -17.0, -1e16] {
            assert!(digamma(pole).is_nan(), "digamma({pole}) is a pole");
        }
        assert!(digamma(f64::NAN).is_nan());
        assert!(digamma(f64::NEG_INFINITY).is_nan());
        assert_eq!(digamma(f64::INFINITY), f64::INFINITY);
        // Tiny positive x: -1/x - Euler's gamma.
        assert!((digamma(1e-300) / -1e300 - 1.0).abs() <= 2.0 * f64::EPSILON);
        assert!(digamma(f64::MAX).is_finite());
    }

    #[test]
    fn digamma_satisfies_recurrence_and_reflection() {
        // Multiples of 1/64, so that x + 1 and 1 - x are exact.
        for k in 0..1280 {
            let x = k as f64 / 64.0 - 10.0;
            if x == x.floor() {
                continue;
            }
            // psi(x + 1) - psi(x) = 1 / x, within the error of the two values.
            let (a, b) = (digamma(x + 1.0), digamma(x));
            let tol = digamma_tolerance(x + 1.0, a) + digamma_tolerance(x, b);
            assert!(
                near(a - b, 1.0 / x, tol, 2.0 * f64::EPSILON),
                "recurrence at {x}: {a} - {b} vs {}",
                1.0 / x
            );
        }
        // psi(1 - x) - psi(x) = pi cot(pi x), for 0 < x < 1 where neither side
        // goes through the reflection.
        for k in 1..256 {
            let x = k as f64 / 256.0;
            let (c, d) = (digamma(1.0 - x), digamma(x));
            // Reduced to [-1/2, 1/2] first: pi * x near pi would lose the
            // digits of tan's small result.
            let cot = PI / (PI * (x - x.round())).tan();
            let tol = digamma_tolerance(1.0 - x, c) + digamma_tolerance(x, d);
            assert!(
                near(c - d, cot, tol, 4.0 * f64::EPSILON),
                "reflection at {x}: {c} - {d} vs {cot}"
            );
        }
    }

    #[test]
    fn digamma_is_the_derivative_of_lgamma() {
        let mut points = POINTS.to_vec();
        points.extend([0.05, 25.0, 150.0, -7.25, -0.95]);
        for x in points {
            let check = check_gradient(|p| lgamma(p[0]), &[x], &[digamma(x)]);
            assert!(check.passes(1e-7), "digamma({x}) against lgamma'\n{check}");
        }
    }

    #[test]
    fn wrappers_call_the_right_functions() {
        assert_eq!(gamma(5.0), 24.0);
        assert!(near(gamma(0.5), PI.sqrt(), 0.0, 4.0 * f64::EPSILON));
        assert!(near(lgamma(10.0), 362880f64.ln(), 0.0, 4.0 * f64::EPSILON));
        assert!(near(
            lgamma(-0.5),
            (2.0 * PI.sqrt()).ln(),
            0.0,
            4.0 * f64::EPSILON
        ));
        assert_eq!(erf(0.0), 0.0);
        assert!(near(erf(1.0), 0.8427007929497149, 0.0, 2.0 * f64::EPSILON));
        assert!(near(
            erfc(1.0),
            0.15729920705028513,
            0.0,
            2.0 * f64::EPSILON
        ));
        assert!(near(
            erfc(10.0),
            2.088487583762545e-45,
            0.0,
            4.0 * f64::EPSILON
        ));
    }

    #[test]
    fn adjoints_match_finite_differences() {
        type Pair = (&'static str, fn(f64) -> f64, fn(f64, f64) -> f64);
        let pairs: [Pair; 4] = [
            ("erf", erf, erf_adjoint),
            ("erfc", erfc, erfc_adjoint),
            ("gamma", gamma, gamma_adjoint),
            ("lgamma", lgamma, lgamma_adjoint),
        ];
        for (name, f, adjoint) in pairs {
            for x in POINTS {
                let d = adjoint(x, 1.0);
                let check = check_gradient(|p| f(p[0]), &[x], &[d]);
                assert!(check.passes(1e-7), "{name}'({x})\n{check}");
                // The seed scales the derivative.
                assert!(near(adjoint(x, -2.5), -2.5 * d, 0.0, 2.0 * f64::EPSILON));
                assert_eq!(adjoint(x, 0.0), 0.0, "{name}: zero seed");
            }
        }
        // A wrong derivative fails the same check.
        let wrong = 2.0 * (-1.0f64).exp(); // erf'(1) without 1/sqrt(pi)
        assert!(!check_gradient(|p| erf(p[0]), &[1.0], &[wrong]).passes(1e-7));
    }

    #[test]
    fn adjoints_match_the_formulas() {
        for x in POINTS {
            let e = 2.0 / PI.sqrt() * (-x * x).exp();
            assert!(near(erf_adjoint(x, 1.0), e, 0.0, 4.0 * f64::EPSILON));
            assert!(near(erfc_adjoint(x, 1.0), -e, 0.0, 4.0 * f64::EPSILON));
            assert_eq!(lgamma_adjoint(x, 1.0), digamma(x));
            assert_eq!(gamma_adjoint(x, 1.0), gamma(x) * digamma(x));
        }
        // gamma'(1) = -Euler's gamma, gamma'(2) = 1 - Euler's gamma.
        assert!(near(
            gamma_adjoint(1.0, 1.0),
            -0.5772156649015329,
            0.0,
            4.0 * f64::EPSILON
        ));
        assert!(near(
            gamma_adjoint(2.0, 1.0),
            0.42278433509846713,
            0.0,
            4.0 * f64::EPSILON
        ));
    }

    #[test]
    fn derivatives_at_the_edges() {
        // Poles: NaN derivatives.
        for pole in [0.0, -1.0, -3.0] {
            assert!(gamma_adjoint(pole, 1.0).is_nan(), "gamma' at {pole}");
            assert!(lgamma_adjoint(pole, 1.0).is_nan(), "lgamma' at {pole}");
        }
        // Overflow of gamma: infinite derivative, finite for lgamma.
        assert_eq!(gamma_adjoint(200.0, 1.0), f64::INFINITY);
        assert!(lgamma_adjoint(200.0, 1.0).is_finite());
        // Far tails of erf: the derivative underflows to zero, not NaN.
        assert_eq!(erf_adjoint(40.0, 1.0), 0.0);
        assert_eq!(erfc_adjoint(-40.0, 1.0), -0.0);
        // Tiny steps near 0 still agree with the difference quotient.
        let numeric = central_difference(|p: &[f64]| erf(p[0]), &[1e-3])[0];
        assert!(near(erf_adjoint(1e-3, 1.0), numeric, 1e-9, 0.0));
    }

    #[test]
    fn pullbacks_have_the_shape_callers_expect() {
        // A pullback adds its share into the slot a caller lends it.
        let pullbacks: [fn(f64, f64, Option<&mut f64>); 4] =
            [erf_pullback, erfc_pullback, gamma_pullback, lgamma_pullback];
        let adjoints: [fn(f64, f64) -> f64; 4] =
            [erf_adjoint, erfc_adjoint, gamma_adjoint, lgamma_adjoint];
        for (pullback, adjoint) in pullbacks.iter().zip(adjoints) {
            for x in POINTS {
                let mut g = 0.25;
                pullback(x, 1.5, Some(&mut g));
                assert_eq!(g, 0.25 + adjoint(x, 1.5));
            }
        }
    }
}
