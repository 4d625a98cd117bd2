//! A function and its gradient as an [argmin](https://docs.rs/argmin) problem
//! (feature `argmin`).
//!
//! argmin's solvers ask for the cost and the gradient in separate calls,
//! usually at the same point one after the other (`cost(x)`, then
//! `gradient(x)`). A generated `f_grad` computes both in one run, so
//! [`Problem`] keeps the last point with everything computed there and answers
//! the second call from it: at every point argmin visits, the gradient code
//! runs once.
//!
//! ```
//! use argmin::core::{CostFunction, Executor, State};
//! use argmin::solver::linesearch::MoreThuenteLineSearch;
//! use argmin::solver::quasinewton::LBFGS;
//! use gradmacro::differentiate;
//! use gradmacro_runtime::argmin::Problem;
//!
//! #[differentiate]
//! fn bowl(x: &[f64]) -> f64 {
//!     (x[0] - 1.0) * (x[0] - 1.0) + 10.0 * (x[1] + 2.0) * (x[1] + 2.0)
//! }
//!
//! let problem = Problem::new(bowl, bowl_grad);
//! assert_eq!(problem.cost(&vec![1.0, -2.0]).unwrap(), 0.0);
//!
//! let solver = LBFGS::new(MoreThuenteLineSearch::new(), 5);
//! let result = Executor::new(problem, solver)
//!     .configure(|state| state.param(vec![0.0, 0.0]).max_iters(50))
//!     .run()
//!     .unwrap();
//! let best = result.state().get_best_param().unwrap();
//! assert!((best[0] - 1.0).abs() < 1e-8 && (best[1] + 2.0).abs() < 1e-8);
//! ```

use std::sync::{Mutex, MutexGuard};

use argmin::core::{CostFunction, Error, Gradient, Hessian};

/// A cost function with its gradient (and optionally its Hessian) for
/// argmin's solvers, with `Param = Vec<f64>`.
///
/// Built from two closures over `&[f64]`: `cost` returns the value and
/// `value_and_grad` the value and gradient, typically `f` and `f_grad` from
/// `#[differentiate]`; data the function needs besides the parameters go in
/// the closures (`move |p: &[f64]| f_grad(p, &data)`). Both must describe
/// the same function: the value from either may be the one argmin sees.
///
/// # The cache
///
/// The problem remembers the last point it was asked about and what it
/// computed there. A call at that point that needs no more than was computed
/// runs nothing; so `cost(x)` followed by `gradient(x)`, the order argmin's
/// line searches use, runs `value_and_grad` once, not `cost` and then
/// `value_and_grad`.
///
/// That needs a guess: `cost` at a new point runs `value_and_grad` when the
/// solver has so far gone on to ask for the gradient wherever it asked for
/// the cost. When a gradient computed that way goes unused (a line search
/// trying points it then rejects) the problem stops guessing and `cost`
/// runs the cheap `cost` closure; when the gradient is then asked for at such
/// a point, it guesses again. With [`with_hessian`](Problem::with_hessian),
/// the same holds one level up, for solvers that ask for the Hessian
/// wherever they ask for the gradient.
///
/// The cache sits behind a [`Mutex`], so a `Problem` is [`Sync`] when its
/// closures are, as argmin's `rayon` feature requires; the closures run
/// outside the lock.
pub struct Problem<C, G, H = NoHessian> {
    cost: C,
    value_and_grad: G,
    hessian: H,
    cache: Mutex<Cache>,
}

/// The Hessian of a [`Problem`] built without
/// [`with_hessian`](Problem::with_hessian): there is none, and argmin's
/// `Hessian` trait is not implemented.
///
/// ```
/// use gradmacro_runtime::argmin::{MaybeHessian, NoHessian};
///
/// assert!(!NoHessian.has_hessian());
/// assert!(NoHessian.value_grad_hessian(&[1.0]).is_none());
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHessian;

/// How much is known at a point: the value, also the gradient, also the
/// Hessian. Ordered, so that "enough" is `>=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Cost,
    Gradient,
    Hessian,
}

/// The last point and what was computed there.
#[derive(Debug)]
struct Cache {
    point: Option<Vec<f64>>,
    value: f64,
    grad: Option<Vec<f64>>,
    hessian: Option<Vec<Vec<f64>>>,
    /// The most any call has asked for at `point`.
    used: Level,
    /// What a call at a new point computes at least: the guess.
    guess: Level,
}

impl Cache {
    fn computed(&self) -> Level {
        match (&self.grad, &self.hessian) {
            (_, Some(_)) => Level::Hessian,
            (Some(_), None) => Level::Gradient,
            (None, None) => Level::Cost,
        }
    }

    fn holds(&self, p: &[f64]) -> bool {
        // Bit patterns, not `==`: a point with a NaN is still the same point,
        // and 0.0 and -0.0 may give different results.
        self.point.as_ref().is_some_and(|q| {
            q.len() == p.len() && q.iter().zip(p).all(|(a, b)| a.to_bits() == b.to_bits())
        })
    }
}

/// What one computation produced.
struct Computed {
    value: f64,
    grad: Option<Vec<f64>>,
    hessian: Option<Vec<Vec<f64>>>,
}

impl<C, G> Problem<C, G>
where
    C: Fn(&[f64]) -> f64,
    G: Fn(&[f64]) -> (f64, Vec<f64>),
{
    /// A problem from a cost function and its value-and-gradient function.
    ///
    /// ```
    /// use argmin::core::{CostFunction, Gradient};
    /// use gradmacro_runtime::argmin::Problem;
    ///
    /// let scale = 3.0;
    /// let problem = Problem::new(
    ///     move |p: &[f64]| scale * p[0] * p[0],
    ///     move |p: &[f64]| (scale * p[0] * p[0], vec![2.0 * scale * p[0]]),
    /// );
    /// assert_eq!(problem.cost(&vec![2.0]).unwrap(), 12.0);
    /// assert_eq!(problem.gradient(&vec![2.0]).unwrap(), vec![12.0]);
    /// ```
    pub fn new(cost: C, value_and_grad: G) -> Self {
        Problem {
            cost,
            value_and_grad,
            hessian: NoHessian,
            cache: Mutex::new(Cache {
                point: None,
                value: 0.0,
                grad: None,
                hessian: None,
                used: Level::Cost,
                guess: Level::Gradient,
            }),
        }
    }

    /// Adds a Hessian: `hessian(p)` returns the value, the gradient and the
    /// Hessian (a `Vec` of rows) at `p`, and the problem then implements
    /// argmin's `Hessian` trait too, for Newton-type solvers.
    ///
    /// ```
    /// use argmin::core::{Gradient, Hessian};
    /// use gradmacro_runtime::argmin::Problem;
    ///
    /// // f(x, y) = x^2 y
    /// let problem = Problem::new(
    ///     |p: &[f64]| p[0] * p[0] * p[1],
    ///     |p: &[f64]| (p[0] * p[0] * p[1], vec![2.0 * p[0] * p[1], p[0] * p[0]]),
    /// )
    /// .with_hessian(|p: &[f64]| {
    ///     let (x, y) = (p[0], p[1]);
    ///     (x * x * y, vec![2.0 * x * y, x * x], vec![vec![2.0 * y, 2.0 * x], vec![2.0 * x, 0.0]])
    /// });
    /// assert_eq!(problem.hessian(&vec![1.0, 2.0]).unwrap(), vec![vec![4.0, 2.0], vec![2.0, 0.0]]);
    /// assert_eq!(problem.gradient(&vec![1.0, 2.0]).unwrap(), vec![4.0, 1.0]);
    /// ```
    pub fn with_hessian<H>(self, hessian: H) -> Problem<C, G, H>
    where
        H: Fn(&[f64]) -> (f64, Vec<f64>, Vec<Vec<f64>>),
    {
        Problem {
            cost: self.cost,
            value_and_grad: self.value_and_grad,
            hessian,
            cache: self.cache,
        }
    }
}

/// Whether a [`Problem`] has a Hessian, and computing it.
///
/// Implemented for [`NoHessian`] and for every
/// `Fn(&[f64]) -> (f64, Vec<f64>, Vec<Vec<f64>>)`, and sealed: there is
/// nothing to implement yourself.
///
/// ```
/// use gradmacro_runtime::argmin::MaybeHessian;
///
/// // f(x) = x^3
/// let hessian = |p: &[f64]| (p[0].powi(3), vec![3.0 * p[0] * p[0]], vec![vec![6.0 * p[0]]]);
/// assert!(hessian.has_hessian());
/// assert_eq!(hessian.value_grad_hessian(&[2.0]), Some((8.0, vec![12.0], vec![vec![12.0]])));
/// ```
pub trait MaybeHessian: sealed::Sealed {
    /// Whether there is a Hessian to compute.
    fn has_hessian(&self) -> bool;

    /// The value, gradient and Hessian at `p`; `None` for [`NoHessian`].
    fn value_grad_hessian(&self, p: &[f64]) -> Option<(f64, Vec<f64>, Vec<Vec<f64>>)>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::NoHessian {}
    impl<H: Fn(&[f64]) -> (f64, Vec<f64>, Vec<Vec<f64>>)> Sealed for H {}
}

impl MaybeHessian for NoHessian {
    fn has_hessian(&self) -> bool {
        false
    }

    fn value_grad_hessian(&self, _: &[f64]) -> Option<(f64, Vec<f64>, Vec<Vec<f64>>)> {
        None
    }
}

impl<H: Fn(&[f64]) -> (f64, Vec<f64>, Vec<Vec<f64>>)> MaybeHessian for H {
    fn has_hessian(&self) -> bool {
        true
    }

    fn value_grad_hessian(&self, p: &[f64]) -> Option<(f64, Vec<f64>, Vec<Vec<f64>>)> {
        Some(self(p))
    }
}

impl<C, G, H> Problem<C, G, H>
where
    C: Fn(&[f64]) -> f64,
    G: Fn(&[f64]) -> (f64, Vec<f64>),
    H: MaybeHessian,
{
    fn lock(&self) -> MutexGuard<'_, Cache> {
        // A closure that panicked did so outside the lock; a poisoned cache
        // can only come from a panic here, and is still consistent.
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Answers from the cache, or computes at least `need` at `p` and
    /// caches it. Returns the cache, locked, holding `p` with `need`.
    fn at(&self, p: &[f64], need: Level) -> Result<MutexGuard<'_, Cache>, Error> {
        let level = {
            let mut cache = self.lock();
            if cache.holds(p) {
                if cache.computed() >= need {
                    cache.used = cache.used.max(need);
                    return Ok(cache);
                }
                // Asked for more at the same point: guessing would have
                // saved a run.
                cache.guess = cache.guess.max(need);
                need
            } else {
                if cache.point.is_some() && cache.computed() > cache.used {
                    // What was computed at the last point went unused.
                    cache.guess = cache.used;
                }
                let most = if self.hessian.has_hessian() {
                    Level::Hessian
                } else {
                    Level::Gradient
                };
                need.max(cache.guess.min(most))
            }
        };
        let computed = self.compute(p, level)?;
        let mut cache = self.lock();
        let same = cache.holds(p);
        if !same {
            cache.point = Some(p.to_vec());
            cache.used = need;
        } else {
            cache.used = cache.used.max(need);
        }
        cache.value = computed.value;
        if computed.grad.is_some() || !same {
            cache.grad = computed.grad;
        }
        if computed.hessian.is_some() || !same {
            cache.hessian = computed.hessian;
        }
        Ok(cache)
    }

    fn compute(&self, p: &[f64], level: Level) -> Result<Computed, Error> {
        let n = p.len();
        let check = |what: &str, len: usize| {
            if len == n {
                Ok(())
            } else {
                Err(Error::msg(format!(
                    "{what} has {len} entries at a point of {n} coordinates"
                )))
            }
        };
        Ok(match level {
            Level::Cost => Computed {
                value: (self.cost)(p),
                grad: None,
                hessian: None,
            },
            Level::Gradient => {
                let (value, grad) = (self.value_and_grad)(p);
                check("the gradient", grad.len())?;
                Computed {
                    value,
                    grad: Some(grad),
                    hessian: None,
                }
            }
            Level::Hessian => {
                let (value, grad, hessian) = self
                    .hessian
                    .value_grad_hessian(p)
                    .expect("a Hessian is asked for only when there is one");
                check("the gradient", grad.len())?;
                check("the Hessian", hessian.len())?;
                for row in &hessian {
                    check("a row of the Hessian", row.len())?;
                }
                Computed {
                    value,
                    grad: Some(grad),
                    hessian: Some(hessian),
                }
            }
        })
    }
}

impl<C, G, H> CostFunction for Problem<C, G, H>
where
    C: Fn(&[f64]) -> f64,
    G: Fn(&[f64]) -> (f64, Vec<f64>),
    H: MaybeHessian,
{
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, p: &Vec<f64>) -> Result<f64, Error> {
        Ok(self.at(p, Level::Cost)?.value)
    }
}

impl<C, G, H> Gradient for Problem<C, G, H>
where
    C: Fn(&[f64]) -> f64,
    G: Fn(&[f64]) -> (f64, Vec<f64>),
    H: MaybeHessian,
{
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;

    fn gradient(&self, p: &Vec<f64>) -> Result<Vec<f64>, Error> {
        let cache = self.at(p, Level::Gradient)?;
        Ok(cache.grad.clone().expect("computed at the gradient level"))
    }
}

impl<C, G, H> Hessian for Problem<C, G, H>
where
    C: Fn(&[f64]) -> f64,
    G: Fn(&[f64]) -> (f64, Vec<f64>),
    H: Fn(&[f64]) -> (f64, Vec<f64>, Vec<Vec<f64>>),
{
    type Param = Vec<f64>;
    type Hessian = Vec<Vec<f64>>;

    fn hessian(&self, p: &Vec<f64>) -> Result<Vec<Vec<f64>>, Error> {
        let cache = self.at(p, Level::Hessian)?;
        Ok(cache
            .hessian
            .clone()
            .expect("computed at the Hessian level"))
    }
}
