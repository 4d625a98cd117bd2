//! The workloads, each in five columns:
//!
//! - `f`: the function itself (the one under `#[differentiate]`);
//! - `hand`: value and hand-written gradient. For the optimisation test
//!   functions these are `argmin_testfunctions`' function and its
//!   hand-derived `*_derivative` (two calls, as a user of that crate makes
//!   them); for the others they are written here and checked against finite
//!   differences before anything is timed;
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
//! Every gradient column returns the value with the gradient.

use crate::check::{agrees, hand_matches_fd, Flat, Rng};
use crate::functions::*;
use crate::straight_line::{
    straight_line, straight_line_dual, straight_line_grad, straight_line_hand, straight_line_tape,
    INPUTS,
};
use crate::timing::{measure, Config, Stats};
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
    /// An n-dimensional test function (Rosenbrock, Rastrigin, Ackley).
    NDim(usize),
    /// Everything else.
    Other,
}

/// The five timings of one workload.
pub struct Row {
    pub name: String,
    pub kind: Kind,
    pub f: Stats,
    pub hand: Stats,
    pub dual: Stats,
    pub tape: Stats,
    pub gm: Stats,
}

/// Checks and (unless `time` is off) measures the workloads.
pub struct Runner {
    pub cfg: Config,
    pub time: bool,
    pub filter: Vec<String>,
    pub rows: Vec<Row>,
    pub checked: usize,
}

impl Runner {
    /// One workload. `fp` is the function over its flattened differentiable
    /// parameters and `point` their values, for the finite differences.
    #[allow(clippy::too_many_arguments)]
    fn run<F, H, D, T, G, RH, RD, RT, RG>(
        &mut self,
        name: &str,
        kind: Kind,
        fp: &dyn Fn(&[f64]) -> f64,
        point: &[f64],
        mut f: F,
        mut hand: H,
        mut dual: D,
        mut tape: T,
        mut gm: G,
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
        if !self.filter.is_empty() && !self.filter.iter().any(|s| name.contains(s.as_str())) {
            return;
        }
        let h = hand().flat();
        hand_matches_fd(name, fp, point, &h);
        let value = f();
        let g = gm().flat();
        assert_eq!(
            g.0.to_bits(),
            value.to_bits(),
            "{name}: gradmacro's value {:e} is not f's {value:e}",
            g.0
        );
        agrees(name, "gradmacro", &g, &h);
        agrees(name, "num-dual", &dual().flat(), &h);
        agrees(name, "tape", &tape().flat(), &h);
        self.checked += 1;
        if !self.time {
            println!("{name}: every column agrees with the hand-written gradient");
            return;
        }
        let s = measure(
            &mut [&mut f, &mut hand, &mut dual, &mut tape, &mut gm],
            &self.cfg,
        );
        let row = Row {
            name: name.to_string(),
            kind,
            f: s[0],
            hand: s[1],
            dual: s[2],
            tape: s[3],
            gm: s[4],
        };
        eprintln!(
            "{name:<24} f {:>10}  hand {:>10}  num-dual {:>10}  tape {:>10}  gradmacro {:>10}",
            crate::report::time(row.f.median),
            crate::report::time(row.hand.median),
            crate::report::time(row.dual.median),
            crate::report::time(row.tape.median),
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
    dense(r);
    horner_1000(r);
    newton(r);
    straight(r);
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
    r.run(
        "Beale 2-D",
        Kind::Scalar,
        &|q| beale_fn(q[0], q[1]),
        &p,
        || beale_fn(black_box(p[0]), black_box(p[1])),
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
    r.run(
        "Rosenbrock 2-D",
        Kind::Scalar,
        &|q| rosenbrock2_fn(q[0], q[1]),
        &p,
        || rosenbrock2_fn(black_box(p[0]), black_box(p[1])),
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
    r.run(
        &format!("Rosenbrock n = {n}"),
        Kind::NDim(n),
        &|p| rosenbrock(p),
        &x,
        || rosenbrock(black_box(&x)),
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
    r.run(
        &format!("Rastrigin n = {n}"),
        Kind::NDim(n),
        &|p| rastrigin(p),
        &x,
        || rastrigin(black_box(&x)),
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
    r.run(
        &format!("Ackley n = {n}"),
        Kind::NDim(n),
        &|p| ackley(p),
        &x,
        || ackley(black_box(&x)),
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
