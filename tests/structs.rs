//! Methods with a constant receiver and struct parameters read as data,
//! each against a derivative written out by hand at several points. The
//! crate denies every warning and clippy lint, and some fields are named
//! like generated locals (`d_w`, `out`, `d_out`).

#![deny(warnings)]
#![deny(clippy::all)]

use gradmacro::differentiate;

mod support;

/// Derivatives written by hand agree with the generated ones to rounding.
#[track_caller]
fn assert_close(got: f64, want: f64) {
    support::assert_close("derivative", got, want, 1e-12, 1e-12);
}

/// A spring: its energy at extension `x` reads the stiffness and rest
/// length as constants.
pub struct Spring {
    pub k: f64,
    pub rest: f64,
}

impl Spring {
    #[differentiate]
    pub fn energy(&self, x: f64) -> f64 {
        let d = x - self.rest;
        0.5 * self.k * d * d
    }

    /// Total energy of a chain of points, each joined to the next by this
    /// spring.
    #[differentiate]
    pub fn chain_energy(&self, p: &[f64]) -> f64 {
        let mut e = 0.0;
        for i in 1..p.len() {
            let d = p[i] - p[i - 1] - self.rest;
            e += 0.5 * self.k * d * d;
        }
        e
    }
}

#[test]
fn a_method_reads_its_receiver_as_constants() {
    let s = Spring { k: 3.0, rest: 0.5 };
    for x in [-1.0, 0.25, 2.0] {
        let (value, dx) = s.energy_grad(x);
        assert_eq!(value.to_bits(), s.energy(x).to_bits());
        assert_close(dx, s.k * (x - s.rest));
        assert_close(s.energy_adjoint(x, -2.0), -2.0 * s.k * (x - s.rest));
        let mut acc = 1.0;
        s.energy_adjoint_acc(x, 1.0, &mut acc);
        assert_close(acc, 1.0 + s.k * (x - s.rest));
    }
}

#[test]
fn a_method_over_a_slice() {
    let s = Spring { k: 2.0, rest: 1.0 };
    for p in [
        vec![0.0, 1.5, 2.0, 4.0],
        vec![-1.0, 0.0],
        vec![3.0, 1.0, -2.0],
    ] {
        let (value, dp) = s.chain_energy_grad(&p);
        assert_eq!(value.to_bits(), s.chain_energy(&p).to_bits());
        let mut want = vec![0.0; p.len()];
        for i in 1..p.len() {
            let f = s.k * (p[i] - p[i - 1] - s.rest);
            want[i] += f;
            want[i - 1] -= f;
        }
        for (g, w) in dp.iter().zip(&want) {
            assert_close(*g, *w);
        }
    }
}

/// `self` by value, for a `Copy` type.
#[derive(Clone, Copy)]
pub struct Affine {
    pub a: f64,
    pub b: f64,
}

impl Affine {
    #[differentiate]
    pub fn apply(self, x: f64) -> f64 {
        (self.a * x + self.b).tanh()
    }
}

#[test]
fn a_method_taking_self_by_value() {
    let m = Affine { a: 1.5, b: -0.25 };
    for x in [-2.0, 0.1, 0.7] {
        let (value, dx) = m.apply_grad(x);
        assert_eq!(value.to_bits(), m.apply(x).to_bits());
        let t = (m.a * x + m.b).tanh();
        assert_close(dx, m.a * (1.0 - t * t));
    }
}

/// Settings passed to every function: a loop bound and a factor.
pub struct Config {
    pub steps: usize,
    pub scale: f64,
    pub name: String,
}

/// `steps` damped steps `s ← s − scale·sin(s)` from `x`.
#[differentiate]
fn relax(x: f64, cfg: &Config) -> f64 {
    let mut s = x;
    for _ in 0..cfg.steps {
        s -= cfg.scale * s.sin();
    }
    s
}

/// A caller passing the configuration on: the callee's pullback gets it too.
#[differentiate]
fn relax_twice(x: f64, cfg: &Config) -> f64 {
    let y = relax(x, cfg);
    relax(y * y, cfg)
}

/// d relax / dx: the product of the steps' derivatives, by hand.
fn relax_derivative(x: f64, cfg: &Config) -> (f64, f64) {
    let (mut s, mut d) = (x, 1.0);
    for _ in 0..cfg.steps {
        d *= 1.0 - cfg.scale * s.cos();
        s -= cfg.scale * s.sin();
    }
    (s, d)
}

#[test]
fn a_config_struct_is_read_as_data() {
    let cfg = Config {
        steps: 7,
        scale: 0.3,
        name: "damped".to_string(),
    };
    assert_eq!(cfg.name, "damped");
    for x in [-1.2, 0.4, 2.5] {
        let (value, dx) = relax_grad(x, &cfg);
        assert_eq!(value.to_bits(), relax(x, &cfg).to_bits());
        assert_close(dx, relax_derivative(x, &cfg).1);

        let (y, dy) = relax_derivative(x, &cfg);
        let (_, dz) = relax_derivative(y * y, &cfg);
        let (value, dx) = relax_twice_grad(x, &cfg);
        assert_eq!(value.to_bits(), relax_twice(x, &cfg).to_bits());
        assert_close(dx, dz * 2.0 * y * dy);
    }
}

/// A struct by value, and a `String` constant beside it.
#[derive(Clone, Copy)]
pub struct Wishart {
    pub gamma: f64,
    pub m: i32,
}

#[differentiate]
fn log_prior(q: &[f64], w: Wishart, label: &str) -> f64 {
    let mut s = 0.0;
    for qi in q {
        s += qi.exp() * qi.exp();
    }
    let _ = label.len();
    0.5 * w.gamma * w.gamma * s - w.m as f64 * q.iter().sum::<f64>()
}

#[test]
fn a_struct_by_value_and_a_string() {
    let w = Wishart { gamma: 1.5, m: 3 };
    for q in [vec![0.1, -0.2], vec![1.0, 0.5, -1.0]] {
        let (value, dq) = log_prior_grad(&q, w, "prior");
        assert_eq!(value.to_bits(), log_prior(&q, w, "prior").to_bits());
        for (g, qi) in dq.iter().zip(&q) {
            let want = w.gamma * w.gamma * (2.0 * qi).exp() - w.m as f64;
            assert_close(*g, want);
        }
    }
}

/// Field names spelled like the generated code's own names.
pub struct Hostile {
    pub d_w: f64,
    pub out: Vec<f64>,
    pub d_out: usize,
}

impl Hostile {
    #[differentiate]
    pub fn eval(&self, w: &[f64], d_x: f64) -> f64 {
        let mut out = self.d_w * d_x;
        let mut i = 0;
        while i < self.d_out {
            out += self.out[i] * w[i] * w[i] * (i + 1) as f64;
            i += 1;
        }
        out
    }
}

#[test]
fn fields_named_like_generated_names() {
    let h = Hostile {
        d_w: 0.5,
        out: vec![1.0, -2.0, 3.0],
        d_out: 2,
    };
    let w = [1.5, -0.5, 4.0];
    for d_x in [-1.0, 0.5, 2.0] {
        let (value, (dw, dd)) = h.eval_grad(&w, d_x);
        assert_eq!(value.to_bits(), h.eval(&w, d_x).to_bits());
        assert_close(dd, h.d_w);
        assert_close(dw[0], 2.0 * h.out[0] * w[0]);
        assert_close(dw[1], 4.0 * h.out[1] * w[1]);
        assert_close(dw[2], 0.0);
    }
}

impl Spring {
    /// Two springs in a row: a method calling a differentiated method of its
    /// own type (through `self.energy_pullback`).
    #[differentiate]
    pub fn pair_energy(&self, x: f64, y: f64) -> f64 {
        self.energy(x) + 2.0 * self.energy(y - x)
    }
}

#[test]
fn a_method_calls_a_differentiated_method() {
    let s = Spring { k: 3.0, rest: 0.5 };
    for (x, y) in [(1.0, 2.5), (-0.5, 0.3), (2.0, 1.0)] {
        let (value, (dx, dy)) = s.pair_energy_grad(x, y);
        assert_eq!(value.to_bits(), s.pair_energy(x, y).to_bits());
        // energy'(u) = k (u - rest)
        let (e1, e2) = (s.k * (x - s.rest), s.k * (y - x - s.rest));
        assert_close(dx, e1 - 2.0 * e2);
        assert_close(dy, 2.0 * e2);
        assert_close(s.pair_energy_adjoint(x, y, -0.5).1, -0.5 * 2.0 * e2);
    }
}

/// Forward mode and Hessians of methods with a constant receiver, one
/// calling another, against derivatives by hand.
pub struct Loaded {
    pub k: f64,
    pub rest: f64,
}

impl Loaded {
    #[differentiate(tangent, hessian)]
    pub fn energy(&self, x: f64, y: f64) -> f64 {
        let d = x - self.rest;
        0.5 * self.k * d * d * y
    }

    #[differentiate(tangent, hessian)]
    pub fn twice(&self, x: f64) -> f64 {
        self.energy(x, 2.0) + x
    }
}

#[test]
fn later_modes_of_methods_with_a_constant_receiver() {
    let s = Loaded { k: 3.0, rest: 0.5 };
    for (x, y) in [(1.5, 2.0), (-0.5, 0.25), (2.0, -1.0)] {
        let d = x - s.rest;
        let (v, t) = s.energy_tangent(x, y, 1.0, -2.0);
        assert_eq!(v.to_bits(), s.energy(x, y).to_bits());
        assert_close(t, s.k * d * y - 2.0 * 0.5 * s.k * d * d);
        let (_, g, h) = s.energy_hessian(x, y);
        assert_close(g[0], s.k * d * y);
        assert_close(g[1], 0.5 * s.k * d * d);
        assert_close(h[0][0], s.k * y);
        assert_close(h[0][1], s.k * d);
        assert_close(h[1][0], s.k * d);
        assert_close(h[1][1], 0.0);
        let (_, g, h) = s.twice_hessian(x);
        assert_close(g[0], 2.0 * s.k * d + 1.0);
        assert_close(h[0][0], 2.0 * s.k);
    }
}

/// Field-init shorthand in a body: `Wishart { gamma, m }` builds a constant
/// struct from renamed locals.
#[derive(Clone, Copy)]
pub struct Prior {
    pub gamma: f64,
    pub m: i32,
}

#[differentiate(wrt(x))]
fn with_shorthand(x: f64, gamma: f64, m: i32) -> f64 {
    let w = Prior { gamma, m };
    x * x * w.gamma + w.m as f64
}

#[test]
fn a_struct_built_with_field_init_shorthand() {
    for (x, gamma) in [(1.5, 2.0), (-0.5, 0.25)] {
        let (value, dx) = with_shorthand_grad(x, gamma, 3);
        assert_eq!(value.to_bits(), with_shorthand(x, gamma, 3).to_bits());
        assert_close(dx, 2.0 * x * gamma);
    }
}

/// Loops over a constant struct's array field by element (`for w in
/// cfg.w.iter()`, `for v in &cfg.w`), the gradient reading each element.
pub struct Weights {
    pub w: Vec<f64>,
}

#[differentiate]
fn over_field_elements(cfg: &Weights, x: f64) -> f64 {
    let mut s = 0.0;
    for w in cfg.w.iter() {
        s += x / *w;
    }
    for v in &cfg.w {
        s += v * x * x;
    }
    s
}

#[test]
fn loops_over_a_constant_field_by_element() {
    let cfg = Weights {
        w: vec![2.0, 4.0, -0.5],
    };
    for x in [1.0, -0.75, 2.5] {
        let (value, dx) = over_field_elements_grad(&cfg, x);
        assert_eq!(value.to_bits(), over_field_elements(&cfg, x).to_bits());
        let want: f64 = cfg.w.iter().map(|w| 1.0 / w + 2.0 * w * x).sum();
        assert_close(dx, want);
    }
}
