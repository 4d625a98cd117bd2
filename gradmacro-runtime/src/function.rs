//! Checking a function's generated `f_grad` and `f_adjoint` together at one
//! point: what `#[differentiate(check(..))]` runs.

use core::fmt;
use core::ops::Range;

use crate::{check_gradient, Float, ParamCheck};

/// The adjoint seed `f_adjoint` is called with: not 1, so that an adjoint
/// ignoring its `d_out` fails.
const D_OUT: f64 = -1.75;

/// Random directions checked besides the coordinate axes.
const DIRECTIONS: usize = 3;

/// A point at which to check the functions `#[differentiate]` generated for
/// `f` against central differences of `f` itself.
///
/// The point lists `f`'s differentiable parameters in order, each a scalar
/// or an array; the closures given to [`run`](FunctionCheck::run) take them
/// flattened into one slice, [`range`](FunctionCheck::range) saying where
/// each parameter lies. `#[differentiate(check(x = 1.5, w = [1.0, -2.0]))]`
/// generates exactly such a call in a `#[test]`; it can be written by hand
/// too:
///
/// ```
/// use gradmacro::differentiate;
/// use gradmacro_runtime::FunctionCheck;
///
/// #[differentiate]
/// fn f(x: f64, w: &[f64]) -> f64 {
///     x.sin() * w[0] + x * w[1] * w[1]
/// }
///
/// let check = FunctionCheck::new("f").scalar("x", 1.5).array("w", &[1.0, -2.0]);
/// let (x, w) = (check.range(0).start, check.range(1));
/// check
///     .run(
///         |p| f(p[x], &p[w.clone()]),
///         |p| {
///             let (value, (dx, dw)) = f_grad(p[x], &p[w.clone()]);
///             (value, [vec![dx], dw].concat())
///         },
///         |p, d_out| {
///             let (dx, dw) = f_adjoint(p[x], &p[w.clone()], d_out);
///             [vec![dx], dw].concat()
///         },
///     )
///     .assert_passes();
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionCheck<T> {
    function: String,
    params: Vec<(String, Range<usize>, bool)>,
    point: Vec<T>,
    tol: f64,
}

impl<T: Float> FunctionCheck<T> {
    /// An empty point for the function named `function` (the name is only
    /// for the report), with the default tolerance: `1e-6` for `f64`, `1e-3`
    /// for `f32` (see the [crate docs](crate) for why).
    pub fn new(function: &str) -> Self {
        let tol = if T::EPSILON.to_f64() < 1e-10 {
            1e-6
        } else {
            1e-3
        };
        FunctionCheck {
            function: function.to_string(),
            params: Vec::new(),
            point: Vec::new(),
            tol,
        }
    }

    /// Adds a scalar parameter.
    pub fn scalar(mut self, name: &str, value: T) -> Self {
        let at = self.point.len();
        self.point.push(value);
        self.params.push((name.to_string(), at..at + 1, false));
        self
    }

    /// Adds an array parameter (a slice, `Vec` or fixed array).
    pub fn array(mut self, name: &str, values: &[T]) -> Self {
        let at = self.point.len();
        self.point.extend_from_slice(values);
        self.params
            .push((name.to_string(), at..at + values.len(), true));
        self
    }

    /// Replaces the tolerance: each derivative passes when its absolute or
    /// its relative error is at most `tol` (see [`ParamCheck::passes`]).
    pub fn tolerance(mut self, tol: f64) -> Self {
        self.tol = tol;
        self
    }

    /// The flattened point: every parameter's values, in order.
    pub fn point(&self) -> &[T] {
        &self.point
    }

    /// Where the `index`-th parameter lies in the flattened point.
    ///
    /// # Panics
    ///
    /// If there are not that many parameters.
    pub fn range(&self, index: usize) -> Range<usize> {
        self.params[index].1.clone()
    }

    /// Compares, at the point, `f`'s value with `grad`'s, `grad`'s gradient
    /// and `adjoint`'s (divided by the `d_out` it is given) with central
    /// differences of `f`, coordinate by coordinate and along a few
    /// pseudo-random directions.
    ///
    /// `f(p)`, `grad(p) -> (value, gradient)` and `adjoint(p, d_out) ->
    /// gradient * d_out` take the flattened point and return flattened
    /// gradients, one entry per coordinate.
    ///
    /// # Panics
    ///
    /// If a gradient does not have one entry per coordinate.
    pub fn run(
        &self,
        f: impl Fn(&[T]) -> T,
        grad: impl Fn(&[T]) -> (T, Vec<T>),
        adjoint: impl Fn(&[T], T) -> Vec<T>,
    ) -> FunctionReport {
        let n = self.point.len();
        let value = f(&self.point).to_f64();
        let (grad_value, g) = grad(&self.point);
        let d_out = T::from_f64(D_OUT);
        let a = adjoint(&self.point, d_out);
        for (what, len) in [("the gradient", g.len()), ("the adjoint", a.len())] {
            assert!(
                len == n,
                "{what} of `{}` has {len} entries but the point has {n} coordinates",
                self.function
            );
        }
        let d_out = d_out.to_f64();
        let per_adjoint: Vec<T> = a.iter().map(|v| T::from_f64(v.to_f64() / d_out)).collect();
        let coordinates = check_gradient(&f, &self.point, &g)
            .entries()
            .iter()
            .zip(check_gradient(&f, &self.point, &per_adjoint).entries())
            .map(|(by_grad, by_adjoint)| (*by_grad, *by_adjoint))
            .collect();

        let directions = directions(n, seed(&self.function, &self.point))
            .map(|v| {
                // A centered difference along `v`, step as for one
                // coordinate of the point's size. The moved points are
                // rounded to `T`, so the analytic side is taken along the
                // displacement actually made, not along `v`.
                let size = self
                    .point
                    .iter()
                    .fold(1.0, |m: f64, p| m.max(p.to_f64().abs()));
                let h = T::EPSILON.to_f64().cbrt() * size;
                let moved = |sign: f64| -> Vec<T> {
                    self.point
                        .iter()
                        .zip(&v)
                        .map(|(p, v)| T::from_f64(p.to_f64() + sign * h * v))
                        .collect()
                };
                let (plus, minus) = (moved(1.0), moved(-1.0));
                let numeric = (f(&plus).to_f64() - f(&minus).to_f64()) / (2.0 * h);
                let dot = |g: &[T]| -> f64 {
                    let along: f64 = g
                        .iter()
                        .zip(plus.iter().zip(&minus))
                        .map(|(g, (a, b))| g.to_f64() * (a.to_f64() - b.to_f64()))
                        .sum();
                    along / (2.0 * h)
                };
                let by_grad = dot(&g);
                let by_adjoint = dot(&per_adjoint);
                (
                    ParamCheck::new(0, 0.0, by_grad, numeric),
                    ParamCheck::new(0, 0.0, by_adjoint, numeric),
                )
            })
            .collect();

        FunctionReport {
            check: self.clone().widen(),
            value,
            grad_value: grad_value.to_f64(),
            coordinates,
            directions,
        }
    }

    fn widen(self) -> FunctionCheck<f64> {
        FunctionCheck {
            function: self.function,
            params: self.params,
            point: self.point.iter().map(|v| v.to_f64()).collect(),
            tol: self.tol,
        }
    }
}

/// FNV-1a over the name and the point's bits: each check point draws its
/// own directions, the same on every run.
fn seed<T: Float>(name: &str, point: &[T]) -> u64 {
    let bytes = name.bytes().chain(
        point
            .iter()
            .flat_map(|v| v.to_f64().to_bits().to_le_bytes()),
    );
    bytes.fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Unit vectors with entries drawn by SplitMix64, uniform in `[-1, 1)`
/// before normalisation.
fn directions(n: usize, mut state: u64) -> impl Iterator<Item = Vec<f64>> {
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        2.0 * ((z >> 11) as f64 / (1u64 << 53) as f64) - 1.0
    };
    (0..DIRECTIONS).map(move |_| {
        let v: Vec<f64> = (0..n).map(|_| next()).collect();
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.into_iter().map(|x| x / norm).collect()
    })
}

/// The outcome of [`FunctionCheck::run`]; its [`Display`](fmt::Display)
/// output is the report [`assert_passes`](FunctionReport::assert_passes)
/// panics with.
///
/// ```
/// use gradmacro_runtime::FunctionCheck;
///
/// // f(x) = x^2 with a wrong derivative, 3x.
/// let check = FunctionCheck::new("square").scalar("x", 1.5);
/// let report = check.run(
///     |p| p[0] * p[0],
///     |p| (p[0] * p[0], vec![3.0 * p[0]]),
///     |p, d_out| vec![3.0 * p[0] * d_out],
/// );
/// assert!(report.value_matches());
/// assert!(!report.passes());
/// assert!(report.to_string().contains("<- FAIL"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionReport {
    check: FunctionCheck<f64>,
    value: f64,
    grad_value: f64,
    /// Per coordinate: `f_grad`'s and `f_adjoint`'s derivative against the
    /// central difference.
    coordinates: Vec<(ParamCheck, ParamCheck)>,
    /// Per direction: the same, for the directional derivative.
    directions: Vec<(ParamCheck, ParamCheck)>,
}

impl FunctionReport {
    /// Whether `f_grad`'s value is `f`'s, bit for bit.
    pub fn value_matches(&self) -> bool {
        self.value.to_bits() == self.grad_value.to_bits()
            || (self.value.is_nan() && self.grad_value.is_nan())
    }

    /// Whether every derivative is within the tolerance and the values match.
    pub fn passes(&self) -> bool {
        let tol = self.check.tol;
        self.value_matches()
            && self
                .coordinates
                .iter()
                .chain(&self.directions)
                .all(|(g, a)| g.passes(tol) && a.passes(tol))
    }

    /// Panics with the report unless [`passes`](Self::passes).
    #[track_caller]
    pub fn assert_passes(&self) {
        if !self.passes() {
            panic!("{self}");
        }
    }
}

impl fmt::Display for FunctionReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let check = &self.check;
        let tol = check.tol;
        let verdict = if self.passes() { "passed" } else { "FAILED" };
        writeln!(
            f,
            "gradient check of `{}` {verdict} (err: the smaller of abs and rel err, tolerance {tol:e}; \
             f_adjoint called with d_out = {D_OUT} and divided by it)",
            check.function
        )?;
        if !self.value_matches() {
            writeln!(
                f,
                "value: f = {:e} but f_grad's value = {:e}  <- FAIL",
                self.value, self.grad_value
            )?;
        }
        writeln!(
            f,
            "{:>12}  {:>13}  {:>13}  {:>13}  {:>13}  {:>9}  {:>9}",
            "param", "at", "numeric", "f_grad", "f_adjoint", "grad err", "adj err"
        )?;
        let mark = |g: &ParamCheck, a: &ParamCheck| {
            if g.passes(tol) && a.passes(tol) {
                ""
            } else {
                "  <- FAIL"
            }
        };
        for (name, range, array) in &check.params {
            for i in range.clone() {
                let label = if *array {
                    format!("{name}[{}]", i - range.start)
                } else {
                    name.clone()
                };
                let (g, a) = &self.coordinates[i];
                writeln!(
                    f,
                    "{label:>12}  {:>13.6e}  {:>13.6e}  {:>13.6e}  {:>13.6e}  {:>9.2e}  {:>9.2e}{}",
                    check.point[i],
                    g.numeric,
                    g.analytic,
                    a.analytic,
                    g.rel_err.min(g.abs_err),
                    a.rel_err.min(a.abs_err),
                    mark(g, a)
                )?;
            }
        }
        for (k, (g, a)) in self.directions.iter().enumerate() {
            writeln!(
                f,
                "{:>12}  {:>13}  {:>13.6e}  {:>13.6e}  {:>13.6e}  {:>9.2e}  {:>9.2e}{}",
                format!("direction {k}"),
                "random",
                g.numeric,
                g.analytic,
                a.analytic,
                g.rel_err.min(g.abs_err),
                a.rel_err.min(a.abs_err),
                mark(g, a)
            )?;
        }
        Ok(())
    }
}
