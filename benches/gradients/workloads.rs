//! The workloads, each in five columns:
//!
//! - `f`: the function itself (the one under `#[differentiate]`);
//! - `hand`: value and the fastest hand-written gradient we could write (a
//!   fused pass, see `hand.rs`), checked against finite differences before
//!   anything is timed;
//! - `argmin`: for the optimisation test functions that `argmin_testfunctions`
//!   ships, its function and its hand-derived `*_derivative` (two calls, as a
//!   user of that crate makes them);
//! - `num-dual`: forward mode through num-dual's `gradient` helper (its
//!   recommended API), over `SVector<DualSVec64<N>, N>` when the size is
//!   fixed and `DVector<DualDVec64>` when it is not; the input vector is
//!   built once, outside the timed call;
//! - `tape`: reverse mode through RustQuant_autodiff's `Graph` (a Wengert
//!   list): one graph per workload, cleared at the start of each call so its
//!   storage is reused, the inputs recorded as variables, the function
//!   evaluated on them, then `accumulate` and `wrt`;
//! - `gradmacro`: the generated `f_grad`.
//!
//! Every gradient column returns the value with the gradient. The `run*`
//! methods are also used by the workloads defined in their own files
//! (`mgh.rs`).

use crate::check::{agrees, hand_matches_fd, Flat, Rng};
use crate::functions::*;
use crate::gmm::{gmm_hand, gmm_objective, gmm_objective_grad, Wishart};
use crate::hand::{ackley_hand, beale_hand, rastrigin_hand, rosenbrock2_hand, rosenbrock_hand};
use crate::straight_line::{
    straight_line, straight_line_dual, straight_line_grad, straight_line_hand, straight_line_tape,
    INPUTS,
};
use crate::timing::{measure, Bench, Config, Stats};
use argmin_testfunctions as atf;
use nalgebra::{DVector, SVector};
use num_dual::{first_derivative, gradient, Dual64, DualDVec64, DualNum, DualSVec64};
use std::f64::consts::PI;
use std::hint::black_box;
use RustQuant_autodiff::{Accumulate, Gradient, Graph, Powi};

/// Which targets a workload counts towards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A function of one or two scalars.
    Scalar,
    /// An n-dimensional test function (Rosenbrock, Rastrigin, Ackley,
    /// extended Powell, Broyden tridiagonal).
    NDim(usize),
    /// ADBench's Gaussian mixture objective in `d` dimensions with `k`
    /// components.
    Gmm { d: usize, k: usize },
    /// Everything else.
    Other,
}

/// The timings of one workload.
pub struct Row {
    pub name: String,
    pub kind: Kind,
    /// Entries of the gradient: the targets on `gradient / function` count
    /// the workloads with at least 10.
    pub inputs: usize,
    pub f: Stats,
    pub hand: Stats,
    /// `argmin_testfunctions`' function and derivative, where it has one.
    pub argmin: Option<Stats>,
    /// `None` where the column is not run (see [`Runner::run_with`]).
    pub dual: Option<Stats>,
    pub tape: Option<Stats>,
    pub gm: Stats,
}

/// A function over the flattened differentiable parameters, and the point
/// where its finite differences check the hand-written gradient.
pub type FdCheck<'a> = (&'a dyn Fn(&[f64]) -> f64, &'a [f64]);

/// The type of a column that is not run.
pub type Skipped = fn() -> (f64, Vec<f64>);

/// Checks and (unless `time` is off) measures the workloads.
pub struct Runner {
    pub cfg: Config,
    pub time: bool,
    pub filter: Vec<String>,
    pub rows: Vec<Row>,
    pub checked: usize,
}

impl Runner {
    /// Whether the filter selects the workload `name`.
    pub fn selected(&self, name: &str) -> bool {
        self.filter.is_empty() || self.filter.iter().any(|s| name.contains(s.as_str()))
    }

    /// One workload with all five columns. `fp` is the function over its
    /// flattened differentiable parameters and `point` their values, for the
    /// finite differences.
    #[allow(clippy::too_many_arguments)]
    pub fn run<F, H, D, T, G, RH, RD, RT, RG>(
        &mut self,
        name: &str,
        kind: Kind,
        fp: &dyn Fn(&[f64]) -> f64,
        point: &[f64],
        f: F,
        hand: H,
        dual: D,
        tape: T,
        gm: G,
    ) where
        F: FnMut() -> f64,
        H: FnMut() -> RH,
        D: FnMut() -> RD,
        T: FnMut() -> RT,
        G: FnMut() -> RG,
        RH: Flat,
        RD: Flat,
        RT: Flat,
        RG: Flat,
    {
        self.run_with(
            name,
            kind,
            Some((fp, point)),
            f,
            hand,
            None::<Skipped>,
            Some(dual),
            Some(tape),
            gm,
        );
    }

    /// [`Runner::run`] with an `argmin` column: `argmin_testfunctions`'
    /// value and derivative, timed beside the fastest hand-written one.
    #[allow(clippy::too_many_arguments)]
    fn run_argmin<F, H, A, D, T, G, RH, RA, RD, RT, RG>(
        &mut self,
        name: &str,
        kind: Kind,
        fp: &dyn Fn(&[f64]) -> f64,
        point: &[f64],
        f: F,
        hand: H,
        argmin: A,
        dual: D,
        tape: T,
        gm: G,
    ) where
        F: FnMut() -> f64,
        H: FnMut() -> RH,
        A: FnMut() -> RA,
        D: FnMut() -> RD,
        T: FnMut() -> RT,
        G: FnMut() -> RG,
        RH: Flat,
        RA: Flat,
        RD: Flat,
        RT: Flat,
        RG: Flat,
    {
        self.run_with(
            name,
            kind,
            Some((fp, point)),
            f,
            hand,
            Some(argmin),
            Some(dual),
            Some(tape),
            gm,
        );
    }

    /// One workload, the argmin, num-dual and tape columns optional
    /// (`None`: not run, shown as "–"), and the finite-difference check of
    /// the hand-written gradient optional (`None`: the caller has checked
    /// it, at a size where finite differences are affordable).
    #[allow(clippy::too_many_arguments)]
    pub fn run_with<F, H, A, D, T, G, RH, RA, RD, RT, RG>(
        &mut self,
        name: &str,
        kind: Kind,
        fd: Option<FdCheck>,
        mut f: F,
        mut hand: H,
        mut argmin: Option<A>,
        mut dual: Option<D>,
        mut tape: Option<T>,
        mut gm: G,
    ) where
        F: FnMut() -> f64,
        H: FnMut() -> RH,
        A: FnMut() -> RA,
        D: FnMut() -> RD,
        T: FnMut() -> RT,
        G: FnMut() -> RG,
        RH: Flat,
        RA: Flat,
        RD: Flat,
        RT: Flat,
        RG: Flat,
    {
        if !self.selected(name) {
            return;
        }
        let h = hand().flat();
        if let Some((fp, point)) = fd {
            hand_matches_fd(name, fp, point, &h);
        }
        let value = f();
        let g = gm().flat();
        assert_eq!(
            g.0.to_bits(),
            value.to_bits(),
            "{name}: gradmacro's value {:e} is not f's {value:e}",
            g.0
        );
        agrees(name, "gradmacro", &g, &h);
        if let Some(argmin) = argmin.as_mut() {
            agrees(name, "argmin", &argmin().flat(), &h);
        }
        if let Some(dual) = dual.as_mut() {
            agrees(name, "num-dual", &dual().flat(), &h);
        }
        if let Some(tape) = tape.as_mut() {
            agrees(name, "tape", &tape().flat(), &h);
        }
        self.checked += 1;
        if !self.time {
            println!("{name}: every column agrees with the hand-written gradient");
            return;
        }
        let mut columns: Vec<&mut dyn Bench> = vec![&mut f, &mut hand];
        if let Some(argmin) = argmin.as_mut() {
            columns.push(argmin);
        }
        if let Some(dual) = dual.as_mut() {
            columns.push(dual);
        }
        if let Some(tape) = tape.as_mut() {
            columns.push(tape);
        }
        columns.push(&mut gm);
        let mut s = measure(&mut columns, &self.cfg).into_iter();
        let mut next = || s.next().expect("one figure per column");
        let row = Row {
            name: name.to_string(),
            kind,
            inputs: h.1.len(),
            f: next(),
            hand: next(),
            argmin: argmin.is_some().then(&mut next),
            dual: dual.is_some().then(&mut next),
            tape: tape.is_some().then(&mut next),
            gm: next(),
        };
        let opt = |s: Option<Stats>| s.map_or("–".to_string(), |s| crate::report::time(s.median));
        eprintln!(
            "{name:<24} f {:>10}  hand {:>10}  argmin {:>10}  num-dual {:>10}  tape {:>10}  gradmacro {:>10}",
            crate::report::time(row.f.median),
            crate::report::time(row.hand.median),
            opt(row.argmin),
            opt(row.dual),
            opt(row.tape),
            crate::report::time(row.gm.median),
        );
        self.rows.push(row);
    }
}

/// Every workload, in table order.
pub fn all(r: &mut Runner) {
    seed(r);
    beale2(r);
    rosenbrock2(r);
    for n in [10, 100, 1000] {
        rosenbrock_n(r, n);
    }
    for n in [10, 100, 1000] {
        rastrigin_n(r, n);
    }
    for n in [10, 100, 1000] {
        ackley_n(r, n);
    }
    crate::mgh::extended_powell_n(r, 100);
    crate::mgh::broyden_tridiagonal_n(r, 100);
    dense(r);
    horner_1000(r);
    newton(r);
    straight(r);
    for (d, k) in [(2, 5), (10, 25)] {
        gmm(r, d, k);
    }
}

// ---------------------------------------------------------------------------
// The seed example.
// ---------------------------------------------------------------------------

fn seed(r: &mut Runner) {
    let x = 0.73;
    let graph = Graph::new();
    r.run(
        "seed `q = x*x; q + x`",
        Kind::Scalar,
        &|p| seed_fn(p[0]),
        &[x],
        || seed_fn(black_box(x)),
        || {
            let x = black_box(x);
            (x * x + x, 2.0 * x + 1.0)
        },
        || {
            first_derivative(
                |x: Dual64| {
                    let q = x * x;
                    q + x
                },
                black_box(x),
            )
        },
        || {
            graph.clear();
            let v = graph.var(black_box(x));
            let q = v * v;
            let y = q + v;
            let a: Vec<f64> = y.accumulate();
            (y.value(), a.wrt(&v))
        },
        || seed_fn_grad(black_box(x)),
    );
}

// ---------------------------------------------------------------------------
// Beale and Rosenbrock in two dimensions, over two scalars.
// ---------------------------------------------------------------------------

fn beale_dual(x: DualSVec64<2>, y: DualSVec64<2>) -> DualSVec64<2> {
    (x * y - x + 1.5).powi(2)
        + (x * y.powi(2) - x + 2.25).powi(2)
        + (x * y.powi(3) - x + 2.625).powi(2)
}

fn beale_tape(g: &Graph, p: [f64; 2]) -> (f64, Vec<f64>) {
    g.clear();
    let (x, y) = (g.var(p[0]), g.var(p[1]));
    let out = (1.5 - x + x * y).powi(2)
        + (2.25 - x + x * y.powi(2)).powi(2)
        + (2.625 - x + x * y.powi(3)).powi(2);
    let a: Vec<f64> = out.accumulate();
    (out.value(), vec![a.wrt(&x), a.wrt(&y)])
}

fn beale2(r: &mut Runner) {
    let p = [1.3, 0.4];
    let graph = Graph::new();
    let sv = SVector::from(p);
    r.run_argmin(
        "Beale 2-D",
        Kind::Scalar,
        &|q| beale_fn(q[0], q[1]),
        &p,
        || beale_fn(black_box(p[0]), black_box(p[1])),
        || beale_hand(black_box(p[0]), black_box(p[1])),
        || {
            let q = black_box(p);
            (atf::beale(&q), atf::beale_derivative(&q))
        },
        || {
            gradient(
                |v: SVector<DualSVec64<2>, 2>| beale_dual(v[0], v[1]),
                black_box(&sv),
            )
        },
        || beale_tape(&graph, black_box(p)),
        || beale_fn_grad(black_box(p[0]), black_box(p[1])),
    );
}

fn rosenbrock2_tape(g: &Graph, p: [f64; 2]) -> (f64, Vec<f64>) {
    g.clear();
    let (x, y) = (g.var(p[0]), g.var(p[1]));
    let out = (1.0 - x).powi(2) + 100.0 * (y - x * x).powi(2);
    let a: Vec<f64> = out.accumulate();
    (out.value(), vec![a.wrt(&x), a.wrt(&y)])
}

fn rosenbrock2(r: &mut Runner) {
    let p = [-0.7, 1.2];
    let graph = Graph::new();
    let sv = SVector::from(p);
    r.run_argmin(
        "Rosenbrock 2-D",
        Kind::Scalar,
        &|q| rosenbrock2_fn(q[0], q[1]),
        &p,
        || rosenbrock2_fn(black_box(p[0]), black_box(p[1])),
        || rosenbrock2_hand(black_box(p[0]), black_box(p[1])),
        || {
            let q = black_box(p);
            (atf::rosenbrock(&q), atf::rosenbrock_derivative_const(&q))
        },
        || {
            gradient(
                |v: SVector<DualSVec64<2>, 2>| {
                    (v[0] - 1.0).powi(2) + (v[1] - v[0] * v[0]).powi(2) * 100.0
                },
                black_box(&sv),
            )
        },
        || rosenbrock2_tape(&graph, black_box(p)),
        || rosenbrock2_fn_grad(black_box(p[0]), black_box(p[1])),
    );
}

// ---------------------------------------------------------------------------
// n-dimensional test functions, written the way a user writes them for the
// macro (the same parameterisation as argmin_testfunctions' defaults).
// ---------------------------------------------------------------------------

fn rosenbrock_dual(x: &[DualDVec64]) -> DualDVec64 {
    let mut s = DualDVec64::from_re(0.0);
    for i in 0..x.len() - 1 {
        s += (x[i].clone() - 1.0).powi(2) + (&x[i + 1] - x[i].powi(2)).powi(2) * 100.0;
    }
    s
}

fn rosenbrock_tape(g: &Graph, x: &[f64]) -> (f64, Vec<f64>) {
    g.clear();
    let v = g.vars(x);
    let mut s = g.var(0.0);
    for i in 0..v.len() - 1 {
        s = s + (1.0 - v[i]).powi(2) + 100.0 * (v[i + 1] - v[i].powi(2)).powi(2);
    }
    let a: Vec<f64> = s.accumulate();
    (s.value(), a.wrt(&v[..]))
}

fn rosenbrock_n(r: &mut Runner, n: usize) {
    let x = Rng::new(0x5EED + n as u64).vec(n, -2.0, 2.0);
    let xd = DVector::from_column_slice(&x);
    let graph = Graph::new();
    r.run_argmin(
        &format!("Rosenbrock n = {n}"),
        Kind::NDim(n),
        &|p| rosenbrock(p),
        &x,
        || rosenbrock(black_box(&x)),
        || rosenbrock_hand(black_box(&x)),
        || {
            let x = black_box(&x[..]);
            (atf::rosenbrock(x), atf::rosenbrock_derivative(x))
        },
        || {
            gradient(
                |v: DVector<DualDVec64>| rosenbrock_dual(v.as_slice()),
                black_box(&xd),
            )
        },
        || rosenbrock_tape(&graph, black_box(&x)),
        || rosenbrock_grad(black_box(&x)),
    );
}

fn rastrigin_dual(x: &[DualDVec64]) -> DualDVec64 {
    let mut s = DualDVec64::from_re(0.0);
    for xi in x {
        s += xi.powi(2) - (xi.clone() * (2.0 * PI)).cos() * 10.0;
    }
    s + 10.0 * x.len() as f64
}

fn rastrigin_tape(g: &Graph, x: &[f64]) -> (f64, Vec<f64>) {
    g.clear();
    let v = g.vars(x);
    let mut s = g.var(0.0);
    for &xi in &v {
        s = s + xi.powi(2) - 10.0 * (2.0 * PI * xi).cos();
    }
    let out = 10.0 * x.len() as f64 + s;
    let a: Vec<f64> = out.accumulate();
    (out.value(), a.wrt(&v[..]))
}

fn rastrigin_n(r: &mut Runner, n: usize) {
    let x = Rng::new(0xA57 + n as u64).vec(n, -5.12, 5.12);
    let xd = DVector::from_column_slice(&x);
    let graph = Graph::new();
    r.run_argmin(
        &format!("Rastrigin n = {n}"),
        Kind::NDim(n),
        &|p| rastrigin(p),
        &x,
        || rastrigin(black_box(&x)),
        || rastrigin_hand(black_box(&x)),
        || {
            let x = black_box(&x[..]);
            (atf::rastrigin(x), atf::rastrigin_derivative(x))
        },
        || {
            gradient(
                |v: DVector<DualDVec64>| rastrigin_dual(v.as_slice()),
                black_box(&xd),
            )
        },
        || rastrigin_tape(&graph, black_box(&x)),
        || rastrigin_grad(black_box(&x)),
    );
}

fn ackley_dual(x: &[DualDVec64]) -> DualDVec64 {
    let n = x.len() as f64;
    let mut squares = DualDVec64::from_re(0.0);
    let mut cosines = DualDVec64::from_re(0.0);
    for xi in x {
        squares += xi.powi(2);
        cosines += (xi.clone() * (2.0 * PI)).cos();
    }
    let rms = (squares / n).sqrt();
    (rms * -0.2).exp() * -20.0 - (cosines / n).exp() + 20.0 + 1.0f64.exp()
}

fn ackley_tape(g: &Graph, x: &[f64]) -> (f64, Vec<f64>) {
    g.clear();
    let v = g.vars(x);
    let n = x.len() as f64;
    let mut squares = g.var(0.0);
    let mut cosines = g.var(0.0);
    for &xi in &v {
        squares += xi.powi(2);
        cosines += (2.0 * PI * xi).cos();
    }
    let out =
        -20.0 * (-0.2 * (squares / n).sqrt()).exp() - (cosines / n).exp() + 20.0 + 1.0f64.exp();
    let a: Vec<f64> = out.accumulate();
    (out.value(), a.wrt(&v[..]))
}

fn ackley_n(r: &mut Runner, n: usize) {
    let x = Rng::new(0xAC1E + n as u64).vec(n, -5.0, 5.0);
    let xd = DVector::from_column_slice(&x);
    let graph = Graph::new();
    r.run_argmin(
        &format!("Ackley n = {n}"),
        Kind::NDim(n),
        &|p| ackley(p),
        &x,
        || ackley(black_box(&x)),
        || ackley_hand(black_box(&x)),
        || {
            let x = black_box(&x[..]);
            (atf::ackley(x), atf::ackley_derivative(x))
        },
        || {
            gradient(
                |v: DVector<DualDVec64>| ackley_dual(v.as_slice()),
                black_box(&xd),
            )
        },
        || ackley_tape(&graph, black_box(&x)),
        || ackley_grad(black_box(&x)),
    );
}

// ---------------------------------------------------------------------------
// A dense tanh layer with mean squared error: gradient with respect to the
// weights and biases; the data `x`, `y` and the sizes are constants.
// ---------------------------------------------------------------------------

const BATCH: usize = 32;
const N_IN: usize = 16;
const N_OUT: usize = 8;

fn dense_dual(p: &[DualDVec64], x: &[f64], y: &[f64]) -> DualDVec64 {
    let (w, b) = p.split_at(N_OUT * N_IN);
    let mut loss = DualDVec64::from_re(0.0);
    for (xs, ys) in x.chunks_exact(N_IN).zip(y.chunks_exact(N_OUT)) {
        for j in 0..N_OUT {
            let mut z = b[j].clone();
            for k in 0..N_IN {
                z += w[j * N_IN + k].clone() * xs[k];
            }
            let e = z.tanh() - ys[j];
            loss += &e * &e;
        }
    }
    loss / (BATCH * N_OUT) as f64
}

fn dense_tape(g: &Graph, w: &[f64], b: &[f64], x: &[f64], y: &[f64]) -> (f64, Vec<f64>) {
    g.clear();
    let wv = g.vars(w);
    let bv = g.vars(b);
    let mut loss = g.var(0.0);
    for (xs, ys) in x.chunks_exact(N_IN).zip(y.chunks_exact(N_OUT)) {
        for j in 0..N_OUT {
            let mut z = bv[j];
            for k in 0..N_IN {
                z += wv[j * N_IN + k] * xs[k];
            }
            let e = z.tanh() - ys[j];
            loss += e * e;
        }
    }
    let out = loss / (BATCH * N_OUT) as f64;
    let a: Vec<f64> = out.accumulate();
    let mut grad = a.wrt(&wv[..]);
    grad.extend(a.wrt(&bv[..]));
    (out.value(), grad)
}

fn dense(r: &mut Runner) {
    let mut rng = Rng::new(0xDE25E);
    let w = rng.vec(N_OUT * N_IN, -0.5, 0.5);
    let b = rng.vec(N_OUT, -0.5, 0.5);
    let x = rng.vec(BATCH * N_IN, -1.0, 1.0);
    let y = rng.vec(BATCH * N_OUT, -0.9, 0.9);
    let point = [&w[..], &b[..]].concat();
    let pd = DVector::from_column_slice(&point);
    let graph = Graph::new();
    let nw = w.len();
    r.run(
        "dense tanh + MSE (136 w)",
        Kind::Other,
        &|p| dense_mse(&p[..nw], &p[nw..], &x, &y, N_IN, N_OUT),
        &point,
        || {
            dense_mse(
                black_box(&w),
                black_box(&b),
                black_box(&x),
                black_box(&y),
                N_IN,
                N_OUT,
            )
        },
        || {
            dense_mse_hand(
                black_box(&w),
                black_box(&b),
                black_box(&x),
                black_box(&y),
                N_IN,
                N_OUT,
            )
        },
        || {
            let (x, y) = (black_box(&x), black_box(&y));
            gradient(
                |v: DVector<DualDVec64>| dense_dual(v.as_slice(), x, y),
                black_box(&pd),
            )
        },
        || {
            dense_tape(
                &graph,
                black_box(&w),
                black_box(&b),
                black_box(&x),
                black_box(&y),
            )
        },
        || {
            dense_mse_grad(
                black_box(&w),
                black_box(&b),
                black_box(&x),
                black_box(&y),
                N_IN,
                N_OUT,
            )
        },
    );
}

// ---------------------------------------------------------------------------
// Horner's rule for a polynomial of 1,000 coefficients: gradient with
// respect to all the coefficients and to x.
// ---------------------------------------------------------------------------

fn horner_dual(p: &[DualDVec64]) -> DualDVec64 {
    let (c, x) = p.split_at(p.len() - 1);
    let mut acc = DualDVec64::from_re(0.0);
    for ci in c.iter().rev() {
        acc = acc * &x[0] + ci;
    }
    acc
}

fn horner_tape(g: &Graph, c: &[f64], x: f64) -> (f64, Vec<f64>) {
    g.clear();
    let cv = g.vars(c);
    let xv = g.var(x);
    let mut p = g.var(0.0);
    for &ci in cv.iter().rev() {
        p = p * xv + ci;
    }
    let a: Vec<f64> = p.accumulate();
    let mut grad = a.wrt(&cv[..]);
    grad.push(a.wrt(&xv));
    (p.value(), grad)
}

fn horner_1000(r: &mut Runner) {
    let c = Rng::new(0x4042).vec(1000, -1.0, 1.0);
    let x = 0.999;
    let point: Vec<f64> = c.iter().copied().chain([x]).collect();
    let pd = DVector::from_column_slice(&point);
    let graph = Graph::new();
    let n = c.len();
    r.run(
        "Horner, 1000 coeffs",
        Kind::Other,
        &|p| horner(&p[..n], p[n]),
        &point,
        || horner(black_box(&c), black_box(x)),
        || horner_hand(black_box(&c), black_box(x)),
        || {
            gradient(
                |v: DVector<DualDVec64>| horner_dual(v.as_slice()),
                black_box(&pd),
            )
        },
        || horner_tape(&graph, black_box(&c), black_box(x)),
        || horner_grad(black_box(&c), black_box(x)),
    );
}

fn newton(r: &mut Runner) {
    let a = 2.7;
    let graph = Graph::new();
    r.run(
        "Newton sqrt, 20 steps",
        Kind::Other,
        &|p| newton_sqrt(p[0]),
        &[a],
        || newton_sqrt(black_box(a)),
        || newton_sqrt_hand(black_box(a)),
        || {
            first_derivative(
                |a: Dual64| {
                    let mut r = a;
                    for _ in 0..20 {
                        r = (r + a / r) * 0.5;
                    }
                    r
                },
                black_box(a),
            )
        },
        || {
            graph.clear();
            let av = graph.var(black_box(a));
            let mut rv = av;
            for _ in 0..20 {
                rv = 0.5 * (rv + av / rv);
            }
            let g: Vec<f64> = rv.accumulate();
            (rv.value(), g.wrt(&av))
        },
        || newton_sqrt_grad(black_box(a)),
    );
}

// ---------------------------------------------------------------------------
// A long straight-line function (generated; see straight_line.rs).
// ---------------------------------------------------------------------------

fn straight_tape(g: &Graph, x: &[f64]) -> (f64, Vec<f64>) {
    g.clear();
    let v = g.vars(x);
    let out = straight_line_tape(&v);
    let a: Vec<f64> = out.accumulate();
    (out.value(), a.wrt(&v[..]))
}

fn straight(r: &mut Runner) {
    let x = Rng::new(0x57A1).vec(INPUTS, -1.0, 1.0);
    let xs: SVector<f64, INPUTS> = SVector::from_column_slice(&x);
    let graph = Graph::new();
    r.run(
        "straight line, 300 stmts",
        Kind::Other,
        &|p| straight_line(p),
        &x,
        || straight_line(black_box(&x)),
        || straight_line_hand(black_box(&x)),
        || {
            gradient(
                |v: SVector<DualSVec64<INPUTS>, INPUTS>| straight_line_dual(v.as_slice()),
                black_box(&xs),
            )
        },
        || straight_tape(&graph, black_box(&x)),
        || straight_line_grad(black_box(&x)),
    );
}

// ---------------------------------------------------------------------------
// ADBench's Gaussian mixture model objective (see gmm.rs): gradient with
// respect to the weights, means and inverse covariance factors; the points
// and the prior are constants.
// ---------------------------------------------------------------------------

/// Points of the timed GMM workloads.
const GMM_POINTS: usize = 1000;

/// Seeded parameters and points: `(alphas, means, icf, x)`.
fn gmm_data(seed: u64, d: usize, k: usize, n: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut rng = Rng::new(seed);
    let alphas = rng.vec(k, -1.0, 1.0);
    let means = rng.vec(k * d, -1.0, 1.0);
    let icf = rng.vec(k * d * (d + 1) / 2, -0.5, 0.5);
    let x = rng.vec(n * d, -1.5, 1.5);
    (alphas, means, icf, x)
}

/// The objective over its flattened parameters `[alphas, means, icf]`.
fn gmm_flat(p: &[f64], x: &[f64], prior: Wishart, d: usize, k: usize) -> f64 {
    let (alphas, rest) = p.split_at(k);
    let (means, icf) = rest.split_at(k * d);
    gmm_objective(alphas, means, icf, x, prior, d, k)
}

/// At the workload's `d` and `k` but on a few points, where finite
/// differences over every parameter are cheap, and with a prior whose every
/// term counts (`m ≠ 0`, `γ ≠ 1`): the hand-written gradient against finite
/// differences, gradmacro's against the hand-written one.
fn gmm_small_check(name: &str, d: usize, k: usize) {
    let prior = Wishart { gamma: 0.7, m: 3 };
    let (alphas, means, icf, x) = gmm_data(0x6A3 + (d * k) as u64, d, k, 5);
    let point = [&alphas[..], &means[..], &icf[..]].concat();
    let what = format!("{name}, on 5 points");
    let h = gmm_hand(&alphas, &means, &icf, &x, prior, d, k).flat();
    hand_matches_fd(&what, &|p| gmm_flat(p, &x, prior, d, k), &point, &h);
    let g = gmm_objective_grad(&alphas, &means, &icf, &x, prior, d, k).flat();
    agrees(&what, "gradmacro", &g, &h);
}

fn gmm(r: &mut Runner, d: usize, k: usize) {
    let name = format!("GMM d = {d}, k = {k}, n = {GMM_POINTS}");
    if !r.selected(&name) {
        return;
    }
    gmm_small_check(&name, d, k);
    // ADBench's prior.
    let prior = Wishart { gamma: 1.0, m: 0 };
    let (alphas, means, icf, x) = gmm_data(0x6A4 + (d * k) as u64, d, k, GMM_POINTS);
    let point = [&alphas[..], &means[..], &icf[..]].concat();
    let fp = |p: &[f64]| gmm_flat(p, &x, prior, d, k);
    // Finite differences on all 1,000 points only where the parameters are
    // few (30 at d = 2, k = 5; 1,650 at d = 10, k = 25 are checked on the
    // few points above).
    let fd = (point.len() <= 100).then_some((&fp as &dyn Fn(&[f64]) -> f64, &point[..]));
    r.run_with(
        &name,
        Kind::Gmm { d, k },
        fd,
        || {
            gmm_objective(
                black_box(&alphas),
                black_box(&means),
                black_box(&icf),
                black_box(&x),
                prior,
                d,
                k,
            )
        },
        || {
            gmm_hand(
                black_box(&alphas),
                black_box(&means),
                black_box(&icf),
                black_box(&x),
                prior,
                d,
                k,
            )
        },
        None::<Skipped>,
        None::<Skipped>,
        None::<Skipped>,
        || {
            gmm_objective_grad(
                black_box(&alphas),
                black_box(&means),
                black_box(&icf),
                black_box(&x),
                prior,
                d,
                k,
            )
        },
    );
}
