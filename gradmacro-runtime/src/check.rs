//! Comparison of an analytic gradient with a finite-difference estimate.

use core::fmt;

use crate::{central_difference, Float};

/// Compares an analytic gradient `grad` (for example the gradient part of an
/// `f_grad` result) with [`central_difference`]`(f, x)`.
///
/// `f` takes the point as a slice; wrap a function of several scalars as
/// `|p| f(p[0], p[1])`. The returned [`GradientCheck`] holds one
/// [`ParamCheck`] per coordinate; call [`GradientCheck::passes`] or
/// [`GradientCheck::assert_within`] with a tolerance to judge it.
///
/// # Panics
///
/// If `grad.len() != x.len()`: a gradient of the wrong length means the
/// caller paired the wrong function and gradient, and there is nothing
/// meaningful to compare.
///
/// ```
/// use gradmacro_runtime::check_gradient;
///
/// // f(x, y) = x^2 y, so df/dx = 2xy and df/dy = x^2.
/// let check = check_gradient(|p: &[f64]| p[0] * p[0] * p[1], &[3.0, 2.0], &[12.0, 9.0]);
/// assert!(check.passes(1e-6));
/// assert_eq!(check.entries()[1].analytic, 9.0);
/// ```
#[track_caller]
pub fn check_gradient<T: Float, F: Fn(&[T]) -> T>(f: F, x: &[T], grad: &[T]) -> GradientCheck {
    assert!(
        grad.len() == x.len(),
        "check_gradient: the analytic gradient has {} entries but the point has {} coordinates",
        grad.len(),
        x.len()
    );
    let numeric = central_difference(f, x);
    let entries = x
        .iter()
        .zip(grad)
        .zip(numeric)
        .enumerate()
        .map(|(index, ((&xi, &a), n))| ParamCheck::new(index, xi.to_f64(), a.to_f64(), n.to_f64()))
        .collect();
    GradientCheck { entries }
}

/// The comparison for one parameter (one coordinate of the point).
///
/// ```
/// use gradmacro_runtime::check_gradient;
///
/// // d/dx x^3 at 2 is 12; 12.1 is off by 0.1 absolute, about 0.8% relative.
/// let check = check_gradient(|p: &[f64]| p[0].powi(3), &[2.0], &[12.1]);
/// let entry = check.entries()[0];
/// assert_eq!((entry.index, entry.x, entry.analytic), (0, 2.0, 12.1));
/// assert!((entry.numeric - 12.0).abs() < 1e-6);
/// assert!((entry.abs_err - 0.1).abs() < 1e-6);
/// assert!(entry.passes(1e-2) && !entry.passes(1e-3));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamCheck {
    /// Position of the parameter in the point.
    pub index: usize,
    /// The parameter's value at the point checked.
    pub x: f64,
    /// The derivative supplied by the caller.
    pub analytic: f64,
    /// The centered-difference estimate.
    pub numeric: f64,
    /// `|analytic - numeric|`; NaN if either is NaN.
    pub abs_err: f64,
    /// `abs_err / max(|analytic|, |numeric|)`, or `0` when the two agree
    /// exactly (so that two zero derivatives do not give `0 / 0`).
    pub rel_err: f64,
}

impl ParamCheck {
    pub(crate) fn new(index: usize, x: f64, analytic: f64, numeric: f64) -> Self {
        let abs_err = (analytic - numeric).abs();
        let rel_err = if abs_err == 0.0 {
            0.0
        } else {
            abs_err / analytic.abs().max(numeric.abs())
        };
        Self {
            index,
            x,
            analytic,
            numeric,
            abs_err,
            rel_err,
        }
    }

    /// Whether `abs_err <= tol` or `rel_err <= tol`.
    ///
    /// The absolute test covers derivatives near zero, where any relative
    /// error is large; the relative test covers large derivatives, where the
    /// finite-difference error grows with their size. NaN errors (and a NaN
    /// `tol`) never pass.
    pub fn passes(&self, tol: f64) -> bool {
        self.abs_err <= tol || self.rel_err <= tol
    }
}

/// The result of [`check_gradient`]: one [`ParamCheck`] per parameter.
///
/// Its [`Display`](fmt::Display) output is a table with one row per
/// parameter and the worst errors.
///
/// ```
/// use gradmacro_runtime::check_gradient;
///
/// // f(x, y) = x y: the gradient (y, x) = (3, 2), the second entry given wrong.
/// let check = check_gradient(|p: &[f64]| p[0] * p[1], &[2.0, 3.0], &[3.0, 2.5]);
/// assert!(!check.passes(1e-6));
/// assert!((check.worst_abs() - 0.5).abs() < 1e-6);
/// assert!((check.worst_rel() - 0.2).abs() < 1e-6);
/// assert!(check.to_string().contains("worst abs err"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GradientCheck {
    entries: Vec<ParamCheck>,
}

impl GradientCheck {
    /// The per-parameter comparisons, in parameter order.
    pub fn entries(&self) -> &[ParamCheck] {
        &self.entries
    }

    /// The largest absolute error over all parameters; NaN if any is NaN,
    /// `0` if there are no parameters.
    pub fn worst_abs(&self) -> f64 {
        worst(self.entries.iter().map(|e| e.abs_err))
    }

    /// The largest relative error over all parameters; NaN if any is NaN,
    /// `0` if there are no parameters.
    pub fn worst_rel(&self) -> f64 {
        worst(self.entries.iter().map(|e| e.rel_err))
    }

    /// True when every parameter has `abs_err <= tol` or `rel_err <= tol`
    /// (see [`ParamCheck::passes`]).
    ///
    /// A NaN in either gradient always fails. Passing means agreement within
    /// `tol` at this point only: it is evidence for the analytic gradient,
    /// not a proof (see the [crate docs](crate)).
    pub fn passes(&self, tol: f64) -> bool {
        self.entries.iter().all(|e| e.passes(tol))
    }

    /// Panics with a table of every parameter, the failing rows marked, the
    /// worst errors and the tolerance, unless [`passes`](Self::passes)`(tol)`.
    #[track_caller]
    pub fn assert_within(&self, tol: f64) {
        if self.passes(tol) {
            return;
        }
        let failing = self.entries.iter().filter(|e| !e.passes(tol)).count();
        panic!(
            "gradient check failed: {failing} of {} parameters exceed the tolerance {tol:e} \
             (each needs abs err <= tol or rel err <= tol)\n{}",
            self.entries.len(),
            Table {
                check: self,
                tol: Some(tol)
            }
        );
    }
}

impl fmt::Display for GradientCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Table {
            check: self,
            tol: None,
        }
        .fmt(f)
    }
}

/// The maximum that lets NaN win, unlike `f64::max`, so that a NaN error is
/// never hidden behind a finite one.
fn worst(errors: impl Iterator<Item = f64>) -> f64 {
    errors.fold(
        0.0,
        |acc: f64, e| if e.is_nan() || e > acc { e } else { acc },
    )
}

/// The table shared by `Display` and `assert_within`; with a tolerance, rows
/// that fail it are marked.
struct Table<'a> {
    check: &'a GradientCheck,
    tol: Option<f64>,
}

impl fmt::Display for Table<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:>5}  {:>14}  {:>14}  {:>14}  {:>10}  {:>10}",
            "param", "x", "analytic", "numeric", "abs err", "rel err"
        )?;
        for e in &self.check.entries {
            write!(
                f,
                "{:>5}  {:>14.6e}  {:>14.6e}  {:>14.6e}  {:>10.2e}  {:>10.2e}",
                e.index, e.x, e.analytic, e.numeric, e.abs_err, e.rel_err
            )?;
            match self.tol {
                Some(tol) if !e.passes(tol) => writeln!(f, "  <- FAIL")?,
                _ => writeln!(f)?,
            }
        }
        write!(
            f,
            "worst abs err {:.2e}, worst rel err {:.2e}",
            self.check.worst_abs(),
            self.check.worst_rel()
        )?;
        if let Some(tol) = self.tol {
            write!(f, ", tolerance {tol:e}")?;
        }
        Ok(())
    }
}
