//! Differentiating with respect to structs (`wrt(self)`, `wrt(p)`): the
//! gradient is a value of the struct's own type. Each function is checked
//! against a gradient derived by hand, at several points, with the value
//! bit-identical to the function's. The crate denies every warning and
//! clippy lint, and some fields are named like generated locals.

#![deny(warnings)]
#![deny(clippy::all)]
// Index loops are how the functions under test are written.
#![allow(clippy::needless_range_loop)]

use gradmacro::{differentiate, Differentiable};

mod support;

use support::rng::Rng as SplitMix64;

#[track_caller]
fn assert_close(got: f64, want: f64) {
    support::assert_close("derivative", got, want, 1e-12, 1e-12);
}

#[track_caller]
fn assert_all_close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert_close(*g, *w);
    }
}

/// A linear model: the prediction `w · x + b` against `y`, squared.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Line {
    pub w: Vec<f64>,
    pub b: f64,
    pub n: usize,
}

impl Line {
    #[differentiate(wrt(self))]
    pub fn loss(&self, x: &[f64], y: f64) -> f64 {
        let mut p = self.b;
        for i in 0..self.n {
            p += self.w[i] * x[i];
        }
        (p - y) * (p - y)
    }

    /// The gradient by hand: `2 (p - y) x_i` and `2 (p - y)`.
    fn loss_by_hand(&self, x: &[f64], y: f64) -> Line {
        let p = self.b + (0..self.n).map(|i| self.w[i] * x[i]).sum::<f64>();
        let r = 2.0 * (p - y);
        Line {
            w: x[..self.n].iter().map(|xi| r * xi).collect(),
            b: r,
            n: self.n,
        }
    }
}

#[test]
fn a_linear_model_gets_a_gradient_of_its_own_type() {
    let mut rng = SplitMix64::new(11);
    for _ in 0..5 {
        let line = Line {
            w: (0..3).map(|_| rng.uniform(-2.0, 2.0)).collect(),
            b: rng.uniform(-1.0, 1.0),
            n: 3,
        };
        let x: Vec<f64> = (0..3).map(|_| rng.uniform(-2.0, 2.0)).collect();
        let y = rng.uniform(-1.0, 1.0);
        let (value, g) = line.loss_grad(&x, y);
        assert_eq!(value.to_bits(), line.loss(&x, y).to_bits());
        let want = line.loss_by_hand(&x, y);
        assert_all_close(&g.w, &want.w);
        assert_close(g.b, want.b);
        assert_eq!(g.n, 3, "integer fields are copies of the input's");

        let a = line.loss_adjoint(&x, y, support::D_OUT);
        assert_all_close(
            &a.w,
            &g.w.iter().map(|v| v * support::D_OUT).collect::<Vec<_>>(),
        );
        assert_close(a.b, g.b * support::D_OUT);
    }
}

#[test]
fn adjoint_acc_adds_into_the_struct_s_float_fields() {
    let line = Line {
        w: vec![0.5, -1.5],
        b: 0.25,
        n: 2,
    };
    let (x, y) = ([1.0, 2.0], 0.5);
    let mut acc = Line {
        w: vec![1.0, 1.0],
        b: 1.0,
        n: 7,
    };
    line.loss_adjoint_acc(&x, y, 1.0, &mut acc);
    line.loss_adjoint_acc(&x, y, 1.0, &mut acc);
    let g = line.loss_by_hand(&x, y);
    assert_all_close(&acc.w, &[1.0 + 2.0 * g.w[0], 1.0 + 2.0 * g.w[1]]);
    assert_close(acc.b, 1.0 + 2.0 * g.b);
    assert_eq!(acc.n, 7, "data fields of the buffer are left alone");
}

#[test]
#[should_panic(expected = "has length 1 but `self.w` has length 2")]
fn adjoint_acc_checks_the_buffer_s_lengths() {
    let line = Line {
        w: vec![0.5, -1.5],
        b: 0.25,
        n: 2,
    };
    let mut acc = Line {
        w: vec![0.0],
        b: 0.0,
        n: 2,
    };
    line.loss_adjoint_acc(&[1.0, 2.0], 0.0, 1.0, &mut acc);
}

/// A dense layer: `n_out` rows of `n_in` weights, row-major.
#[derive(Differentiable, Clone, Debug)]
pub struct Layer {
    pub w: Vec<f64>,
    pub b: Vec<f64>,
    pub n_in: usize,
}

/// Two layers: tanh hidden units, a linear output.
#[derive(Differentiable, Clone, Debug)]
pub struct Mlp {
    pub l1: Layer,
    pub l2: Layer,
}

impl Mlp {
    /// Half the squared error of the network's outputs against `y`.
    #[differentiate(wrt(self))]
    pub fn loss(&self, x: &[f64], y: &[f64]) -> f64 {
        let n_hidden = self.l1.b.len();
        let mut h = vec![0.0; n_hidden];
        for j in 0..n_hidden {
            let row = &self.l1.w[j * self.l1.n_in..(j + 1) * self.l1.n_in];
            let s: f64 = row.iter().zip(x).map(|(wji, xi)| wji * xi).sum::<f64>();
            h[j] = (s + self.l1.b[j]).tanh();
        }
        let mut loss = 0.0;
        for k in 0..self.l2.b.len() {
            let mut s = self.l2.b[k];
            let n = self.l2.n_in;
            for j in 0..n {
                s += self.l2.w[k * n + j] * h[j];
            }
            let e = s - y[k];
            loss += 0.5 * e * e;
        }
        loss
    }

    /// Backpropagation written by hand.
    fn backprop(&self, x: &[f64], y: &[f64]) -> Mlp {
        let (l1, l2) = (&self.l1, &self.l2);
        let h: Vec<f64> = (0..l1.b.len())
            .map(|j| {
                let s: f64 = (0..l1.n_in).map(|i| l1.w[j * l1.n_in + i] * x[i]).sum();
                (s + l1.b[j]).tanh()
            })
            .collect();
        let mut g = Mlp {
            l1: Layer {
                w: vec![0.0; l1.w.len()],
                b: vec![0.0; l1.b.len()],
                n_in: l1.n_in,
            },
            l2: Layer {
                w: vec![0.0; l2.w.len()],
                b: vec![0.0; l2.b.len()],
                n_in: l2.n_in,
            },
        };
        let mut dh = vec![0.0; h.len()];
        for k in 0..l2.b.len() {
            let s: f64 = l2.b[k]
                + (0..l2.n_in)
                    .map(|j| l2.w[k * l2.n_in + j] * h[j])
                    .sum::<f64>();
            let e = s - y[k];
            g.l2.b[k] = e;
            for j in 0..l2.n_in {
                g.l2.w[k * l2.n_in + j] = e * h[j];
                dh[j] += e * l2.w[k * l2.n_in + j];
            }
        }
        for j in 0..h.len() {
            let ds = dh[j] * (1.0 - h[j] * h[j]);
            g.l1.b[j] = ds;
            for i in 0..l1.n_in {
                g.l1.w[j * l1.n_in + i] = ds * x[i];
            }
        }
        g
    }
}

fn random_mlp(rng: &mut SplitMix64, n_in: usize, n_hidden: usize, n_out: usize) -> Mlp {
    let mut layer = |rows: usize, cols: usize| Layer {
        w: (0..rows * cols).map(|_| rng.uniform(-1.0, 1.0)).collect(),
        b: (0..rows).map(|_| rng.uniform(-0.5, 0.5)).collect(),
        n_in: cols,
    };
    let l1 = layer(n_hidden, n_in);
    let l2 = layer(n_out, n_hidden);
    Mlp { l1, l2 }
}

#[test]
fn a_two_layer_network_matches_backpropagation_by_hand() {
    let mut rng = SplitMix64::new(5);
    for (n_in, n_hidden, n_out) in [(2, 3, 1), (3, 5, 2), (4, 2, 3)] {
        let mlp = random_mlp(&mut rng, n_in, n_hidden, n_out);
        let x: Vec<f64> = (0..n_in).map(|_| rng.uniform(-1.0, 1.0)).collect();
        let y: Vec<f64> = (0..n_out).map(|_| rng.uniform(-1.0, 1.0)).collect();
        let (value, g) = mlp.loss_grad(&x, &y);
        assert_eq!(value.to_bits(), mlp.loss(&x, &y).to_bits());
        let want = mlp.backprop(&x, &y);
        assert_all_close(&g.l1.w, &want.l1.w);
        assert_all_close(&g.l1.b, &want.l1.b);
        assert_all_close(&g.l2.w, &want.l2.w);
        assert_all_close(&g.l2.b, &want.l2.b);
        assert_eq!((g.l1.n_in, g.l2.n_in), (n_in, n_hidden));
    }
}

/// A Gaussian's parameters; `terms` is data.
#[derive(Differentiable, Clone, Copy, Debug, PartialEq)]
pub struct Gauss {
    pub mu: f64,
    pub sigma: f64,
    pub terms: u32,
}

/// `terms` times the negative log-likelihood of `x`, up to a constant.
#[differentiate(wrt(g, x))]
fn nll(g: Gauss, x: f64) -> f64 {
    let mut s = 0.0;
    for _ in 0..g.terms {
        let z = (x - g.mu) / g.sigma;
        s += 0.5 * z * z + g.sigma.ln();
    }
    s
}

/// The same through a reference, with only the struct differentiated.
#[differentiate(wrt(g))]
fn nll_ref(g: &Gauss, x: f64) -> f64 {
    let z = (x - g.mu) / g.sigma;
    0.5 * z * z + g.sigma.ln()
}

#[test]
fn a_struct_parameter_by_value_and_by_reference() {
    for (mu, sigma, x) in [(0.5, 1.5, -0.25), (-1.0, 0.7, 2.0), (2.0, 3.0, 2.5)] {
        let g = Gauss {
            mu,
            sigma,
            terms: 3,
        };
        let z = (x - mu) / sigma;
        let (d_mu, d_sigma, d_x) = (-z / sigma, -z * z / sigma + 1.0 / sigma, z / sigma);

        let (value, (dg, dx)) = nll_grad(g, x);
        assert_eq!(value.to_bits(), nll(g, x).to_bits());
        assert_close(dg.mu, 3.0 * d_mu);
        assert_close(dg.sigma, 3.0 * d_sigma);
        assert_eq!(dg.terms, 3);
        assert_close(dx, 3.0 * d_x);

        let (value, dg) = nll_ref_grad(&g, x);
        assert_eq!(value.to_bits(), nll_ref(&g, x).to_bits());
        assert_close(dg.mu, d_mu);
        assert_close(dg.sigma, d_sigma);
    }
}

/// A spring, `Copy`: its energy by value, differentiated with respect to
/// the spring and the extension.
#[derive(Differentiable, Clone, Copy)]
pub struct Spring {
    pub k: f64,
    pub rest: f64,
}

impl Spring {
    #[differentiate(wrt(self, x))]
    pub fn energy(self, x: f64) -> f64 {
        let d = x - self.rest;
        0.5 * self.k * d * d
    }
}

#[test]
fn wrt_self_and_a_float_gives_a_pair() {
    for (k, rest, x) in [(3.0, 0.5, 1.5), (0.5, -1.0, 2.0), (10.0, 0.0, -0.1)] {
        let s = Spring { k, rest };
        let (value, (ds, dx)) = s.energy_grad(x);
        assert_eq!(value.to_bits(), s.energy(x).to_bits());
        let d = x - rest;
        assert_close(ds.k, 0.5 * d * d);
        assert_close(ds.rest, -k * d);
        assert_close(dx, k * d);
    }
}

/// Fields named like generated locals, a fixed-size array, an integer
/// array used as indices, an integer count cast to a float, and data bound
/// to locals first.
#[derive(Differentiable, Clone, Debug)]
pub struct Hostile {
    pub d_w: [f64; 3],
    pub out: f64,
    pub d_out: Vec<f64>,
    pub value: usize,
    pub idx: Vec<usize>,
    pub on: bool,
}

#[differentiate(wrt(d_self))]
fn hostile(d_self: &Hostile, x: &[f64]) -> f64 {
    let n = d_self.value;
    let mut s = d_self.out;
    for i in 0..n {
        s += d_self.d_w[i] * x[d_self.idx[i]];
    }
    if d_self.on {
        s *= d_self.out;
    }
    let mean = d_self.d_out.iter().sum::<f64>() / d_self.d_out.len() as f64;
    s + mean * (n as f64)
}

#[test]
fn hostile_field_names_and_data_fields() {
    let x = [0.5, -1.0, 2.0, 3.0];
    for on in [false, true] {
        let p = Hostile {
            d_w: [1.0, 2.0, -0.5],
            out: 1.5,
            d_out: vec![0.25, 0.75],
            value: 3,
            idx: vec![3, 0, 2],
            on,
        };
        let (value, g) = hostile_grad(&p, &x);
        assert_eq!(value.to_bits(), hostile(&p, &x).to_bits());
        let dot: f64 = (0..3).map(|i| p.d_w[i] * x[p.idx[i]]).sum();
        let (d_s, d_out_field) = if on {
            (p.out, (p.out + dot) + p.out)
        } else {
            (1.0, 1.0)
        };
        for i in 0..3 {
            assert_close(g.d_w[i], d_s * x[p.idx[i]]);
        }
        assert_close(g.out, d_out_field);
        assert_all_close(&g.d_out, &[1.5, 1.5]);
        assert_eq!((g.value, g.idx.clone(), g.on), (3, vec![3, 0, 2], on));
    }
}

/// A struct of `f32`s.
#[derive(Differentiable, Clone)]
pub struct Poly32 {
    pub c: Vec<f32>,
}

impl Poly32 {
    #[differentiate(wrt(self, x))]
    pub fn eval(&self, x: f32) -> f32 {
        let mut s = 0.0;
        for i in (0..self.c.len()).rev() {
            s = s * x + self.c[i];
        }
        s
    }
}

#[test]
fn a_struct_of_f32() {
    let p = Poly32 {
        c: vec![1.0, -2.0, 0.5],
    };
    for x in [0.5f32, -1.25, 2.0] {
        let (value, (g, dx)) = p.eval_grad(x);
        assert_eq!(value.to_bits(), p.eval(x).to_bits());
        assert_eq!(g.c, vec![1.0, x, x * x]);
        assert!((dx - (-2.0 + x)).abs() < 1e-6);
    }
}

/// The README's example, as written there.
#[derive(Differentiable, Clone)]
pub struct ReadmeLayer {
    pub w: Vec<f64>, // n_out rows of n_in weights
    pub b: Vec<f64>,
    pub n_in: usize,
}

impl ReadmeLayer {
    /// Half the squared error of tanh(W x + b) against y.
    #[differentiate(wrt(self))]
    pub fn loss(&self, x: &[f64], y: &[f64]) -> f64 {
        let mut loss = 0.0;
        for j in 0..self.b.len() {
            let row = &self.w[j * self.n_in..(j + 1) * self.n_in];
            let s = row.iter().zip(x).map(|(w, xi)| w * xi).sum::<f64>();
            let e = (s + self.b[j]).tanh() - y[j];
            loss += 0.5 * e * e;
        }
        loss
    }
}

#[test]
fn readme_example() {
    let layer = ReadmeLayer {
        w: vec![0.5, -0.25],
        b: vec![0.1],
        n_in: 2,
    };
    let (x, y) = ([1.0, 2.0], [0.3]);
    let (loss, g): (f64, ReadmeLayer) = layer.loss_grad(&x, &y);
    assert_eq!(loss.to_bits(), layer.loss(&x, &y).to_bits());
    let t = (0.5 * 1.0 - 0.25 * 2.0 + 0.1f64).tanh();
    let ds = (t - 0.3) * (1.0 - t * t);
    assert_all_close(&g.w, &[ds * 1.0, ds * 2.0]);
    assert_all_close(&g.b, &[ds]);
    assert_eq!(g.n_in, 2);
}

/// Field access forms: iteration, zips, views, nested structs, fixed arrays,
/// float methods, two structs in `wrt(..)`, a struct beside a constant receiver.
#[derive(Differentiable, Clone, Debug)]
pub struct Inner2 {
    pub scale: f64,
}
#[derive(Differentiable, Clone, Debug)]
pub struct Forms {
    pub w: Vec<f64>,
    pub pos: [f64; 2],
    pub b: f64,
    pub e: f64,
    pub inner: Inner2,
}
impl Forms {
    #[differentiate(wrt(self))]
    pub fn a1(&self, x: &[f64]) -> f64 {
        let mut s = 0.0;
        for (wi, xi) in self.w.iter().zip(x) {
            s += wi * xi;
        }
        s
    }
    #[differentiate(wrt(self))]
    pub fn a2(&self, x: f64) -> f64 {
        let w = &self.w;
        w[0] * x + w[1]
    }
    #[differentiate(wrt(self))]
    pub fn a3(&self) -> f64 {
        self.w.iter().map(|v| v * v).sum::<f64>()
    }
    #[differentiate(wrt(self, x))]
    pub fn a4(&self, x: &[f64]) -> f64 {
        let n = self.w.len();
        let mut s = 0.0;
        for i in 0..n {
            s += self.w[i] * x[i];
        }
        s
    }
    #[differentiate(wrt(self))]
    pub fn a5(&self) -> f64 {
        self.pos[0] * self.pos[1] + self.inner.scale * self.b.exp()
    }
    #[differentiate(wrt(self))]
    pub fn a6(&self, x: f64) -> f64 {
        self.b.max(0.0)
            + self.b.powi(2)
            + x.powf(self.e)
            + if self.b > 0.0 { self.b } else { -self.b }
    }
    #[differentiate(wrt(self))]
    pub fn a7(&self, x: &[f64]) -> f64 {
        x.iter().zip(self.w.iter()).map(|(a, b)| a * b).sum::<f64>() * self.inner.scale
    }
    #[differentiate(wrt(self))]
    pub fn a8(&self, x: &[f64]) -> f64 {
        let mut s = 0.0;
        for &v in self.w.iter() {
            s += v * x[0];
        }
        for v in &self.w {
            s += v;
        }
        s
    }
}
#[differentiate(wrt(a, b))]
pub fn two(a: &Forms, b: &Inner2, x: f64) -> f64 {
    a.b * b.scale * x
}
pub struct Factor {
    pub k: f64,
}
impl Factor {
    #[differentiate(wrt(p))]
    pub fn c(&self, p: &Forms) -> f64 {
        self.k * p.b * p.w[1]
    }
}
/// Each form of field access the README lists, against derivatives by hand.
#[test]
fn field_access_forms() {
    let m = Forms {
        w: vec![1.0, 2.0],
        pos: [3.0, 4.0],
        b: 0.5,
        e: 1.5,
        inner: Inner2 { scale: 2.0 },
    };
    let x = [0.5, -1.0];
    assert_eq!(m.a1_grad(&x).1.w, vec![0.5, -1.0]);
    assert_eq!(m.a2_grad(3.0).1.w, vec![3.0, 1.0]);
    assert_eq!(m.a3_grad().1.w, vec![2.0, 4.0]);
    let (_, (g, dx)) = m.a4_grad(&x);
    assert_eq!(g.w, vec![0.5, -1.0]);
    assert_eq!(dx, vec![1.0, 2.0]);
    let g = m.a5_grad().1;
    assert_eq!(g.pos, [4.0, 3.0]);
    assert_eq!(g.inner.scale, 0.5f64.exp());
    assert_eq!(g.b, 2.0 * 0.5f64.exp());
    let g = m.a6_grad(2.0).1;
    assert!((g.b - (1.0 + 1.0 + 1.0)).abs() < 1e-12);
    assert!((g.e - 2f64.powf(1.5) * 2f64.ln()).abs() < 1e-12);
    let g = m.a7_grad(&x).1;
    assert_eq!(g.w, vec![1.0, -2.0]);
    assert_eq!(g.inner.scale, 0.5 - 2.0);
    let g = m.a8_grad(&x).1;
    assert_eq!(g.w, vec![1.5, 1.5]);
    let (_, (ga, gb)) = two_grad(&m, &Inner2 { scale: 2.0 }, 3.0);
    assert_eq!(ga.b, 6.0);
    assert_eq!(gb.scale, 1.5);
    let g = Factor { k: 2.0 }.c_grad(&m).1;
    assert_eq!(g.b, 4.0);
    assert_eq!(g.w, vec![0.0, 1.0]);
}

/// Forward mode with a struct in `wrt(..)`: the tangent of a struct is a
/// value of its type.
#[derive(Differentiable, Clone)]
pub struct Quad {
    pub a: Vec<f64>,
    pub c: f64,
    pub n: usize,
}

impl Quad {
    #[differentiate(wrt(self, x), tangent)]
    pub fn eval(&self, x: f64) -> f64 {
        let mut s = self.c;
        for i in 0..self.n {
            s = s * x + self.a[i];
        }
        s * s
    }
}

#[test]
fn the_tangent_along_a_struct_direction() {
    let q = Quad {
        a: vec![0.5, -1.0, 2.0],
        c: 1.5,
        n: 3,
    };
    let dir = Quad {
        a: vec![1.0, 0.5, -2.0],
        c: 0.25,
        n: 3,
    };
    for (x, tx) in [(0.5, 1.0), (-1.25, 0.0), (2.0, -0.5)] {
        let (value, (g, dx)) = q.eval_grad(x);
        let (v, t) = q.eval_tangent(x, &dir, tx);
        assert_eq!(v.to_bits(), value.to_bits());
        let want = g.a.iter().zip(&dir.a).map(|(a, b)| a * b).sum::<f64>() + g.c * dir.c + dx * tx;
        assert_close(t, want);
        // The gradient itself by hand: s = ((c x + a0) x + a1) x + a2.
        let s = ((q.c * x + q.a[0]) * x + q.a[1]) * x + q.a[2];
        assert_all_close(&g.a, &[2.0 * s * x * x, 2.0 * s * x, 2.0 * s]);
        assert_close(g.c, 2.0 * s * x * x * x);
    }
}

#[derive(Differentiable)]
pub struct Reg {
    pub a: f64,
    pub w: Vec<f64>,
}
#[differentiate(wrt(p))]
pub fn fa(p: &Reg) -> f64 {
    p.a.powi(2)
}
#[differentiate(wrt(p))]
pub fn fb(p: &Reg) -> f64 {
    let v = [p.w[0], 1.0];
    let mut s = 0.0;
    for i in 0..v.len() {
        s += v[i];
    }
    s
}
#[derive(Differentiable)]
pub struct Shadow {
    pub k: f64,
}
impl Shadow {
    #[differentiate(wrt(self, z))]
    pub fn fc(&self, z: f64, n: usize) -> f64 {
        if n < 2 {
            return z;
        }
        let n = self.k;
        z * n
    }
}
/// Found by the differential test: `powi` of a float field, the length of
/// a local holding field values as a loop bound, and a local shadowing an
/// integer read as data.
#[test]
fn struct_field_classification_regressions() {
    let p = Reg {
        a: 3.0,
        w: vec![2.0],
    };
    assert_eq!(fa_grad(&p).1.a, 6.0);
    assert_eq!(fb_grad(&p).1.w, vec![1.0]);
    let m = Shadow { k: 2.0 };
    let (_, (g, dz)) = m.fc_grad(3.0, 5);
    assert_eq!((g.k, dz), (3.0, 2.0));
}
