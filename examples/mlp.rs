//! A two-layer network written as structs and methods, trained with
//! `#[differentiate(wrt(self))]`.
//!
//! Run with `cargo run --release --example mlp`.
//!
//! `Mlp::loss` is an ordinary method. Its gradient, `loss_grad`, returns an
//! `Mlp` whose float fields hold the derivatives with respect to the model's
//! (its `n_in` fields are copies). Before training, the example compares it
//! with backpropagation written by hand; then it trains by minibatch gradient
//! descent, summing each minibatch's gradient with `loss_adjoint_acc` into a
//! gradient struct zeroed at every step.

// Index loops read like the formulas they implement.
#![allow(clippy::needless_range_loop)]

use gradmacro::{differentiate, Differentiable};

/// A dense layer: `b.len()` rows of `n_in` weights, row-major in `w`.
#[derive(Differentiable, Clone, Debug)]
pub struct Layer {
    pub w: Vec<f64>,
    pub b: Vec<f64>,
    pub n_in: usize,
}

/// tanh hidden units, then a linear output layer.
#[derive(Differentiable, Clone, Debug)]
pub struct Mlp {
    pub l1: Layer,
    pub l2: Layer,
}

impl Mlp {
    /// Half the squared error of the outputs for input `x` against `y`.
    #[differentiate(wrt(self))]
    pub fn loss(&self, x: &[f64], y: &[f64]) -> f64 {
        let mut h = vec![0.0; self.l1.b.len()];
        for j in 0..h.len() {
            let row = &self.l1.w[j * self.l1.n_in..(j + 1) * self.l1.n_in];
            let s = row.iter().zip(x).map(|(w, xi)| w * xi).sum::<f64>();
            h[j] = (s + self.l1.b[j]).tanh();
        }
        let mut loss = 0.0;
        for k in 0..self.l2.b.len() {
            let mut out = self.l2.b[k];
            for j in 0..self.l2.n_in {
                out += self.l2.w[k * self.l2.n_in + j] * h[j];
            }
            let e = out - y[k];
            loss += 0.5 * e * e;
        }
        loss
    }

    /// The same gradient by backpropagation, written by hand.
    fn backprop(&self, x: &[f64], y: &[f64]) -> Mlp {
        let (l1, l2) = (&self.l1, &self.l2);
        let h: Vec<f64> = (0..l1.b.len())
            .map(|j| {
                let s: f64 = (0..l1.n_in).map(|i| l1.w[j * l1.n_in + i] * x[i]).sum();
                (s + l1.b[j]).tanh()
            })
            .collect();
        let mut g = self.zeroed();
        let mut dh = vec![0.0; h.len()];
        for k in 0..l2.b.len() {
            let row = &l2.w[k * l2.n_in..(k + 1) * l2.n_in];
            let out = l2.b[k] + row.iter().zip(&h).map(|(w, hj)| w * hj).sum::<f64>();
            let e = out - y[k];
            g.l2.b[k] = e;
            for j in 0..l2.n_in {
                g.l2.w[k * l2.n_in + j] = e * h[j];
                dh[j] += e * row[j];
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

    /// A model of the same shape with every weight zero: a gradient buffer.
    fn zeroed(&self) -> Mlp {
        let zero = |l: &Layer| Layer {
            w: vec![0.0; l.w.len()],
            b: vec![0.0; l.b.len()],
            n_in: l.n_in,
        };
        Mlp {
            l1: zero(&self.l1),
            l2: zero(&self.l2),
        }
    }

    /// Sets every weight to zero: a gradient buffer starts each step empty.
    fn clear(&mut self) {
        for l in [&mut self.l1, &mut self.l2] {
            l.w.fill(0.0);
            l.b.fill(0.0);
        }
    }

    /// `p -= lr * g` for every weight.
    fn descend(&mut self, g: &Mlp, lr: f64) {
        for (l, d) in [(&mut self.l1, &g.l1), (&mut self.l2, &g.l2)] {
            for (p, dp) in
                l.w.iter_mut()
                    .chain(l.b.iter_mut())
                    .zip(d.w.iter().chain(&d.b))
            {
                *p -= lr * dp;
            }
        }
    }

    fn mean_loss(&self, xs: &[Vec<f64>], ys: &[Vec<f64>]) -> f64 {
        xs.iter().zip(ys).map(|(x, y)| self.loss(x, y)).sum::<f64>() / xs.len() as f64
    }
}

/// SplitMix64: a tiny deterministic generator, enough for example data.
struct Rng(u64);

impl Rng {
    /// Uniform in `[lo, hi)`.
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        lo + (hi - lo) * ((z >> 11) as f64 / (1u64 << 53) as f64)
    }
}

fn main() {
    const INPUTS: usize = 2;
    const HIDDEN: usize = 8;
    const OUTPUTS: usize = 2;
    const EXAMPLES: usize = 64;
    const BATCH: usize = 8;
    const LR: f64 = 0.2;
    let mut rng = Rng(7);
    let mut layer = |rows: usize, cols: usize, scale: f64| Layer {
        w: (0..rows * cols)
            .map(|_| rng.uniform(-scale, scale))
            .collect(),
        b: vec![0.0; rows],
        n_in: cols,
    };
    let mut model = Mlp {
        l1: layer(HIDDEN, INPUTS, 1.0),
        l2: layer(OUTPUTS, HIDDEN, 0.5),
    };

    // Two smooth targets of two inputs on [-1, 1]^2.
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for _ in 0..EXAMPLES {
        let x = vec![rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0)];
        ys.push(vec![(2.0 * x[0]).sin() * 0.5, x[0] * x[1]]);
        xs.push(x);
    }

    // The generated gradient against backpropagation by hand.
    let mut worst: f64 = 0.0;
    for (x, y) in xs.iter().zip(&ys).take(8) {
        let (value, g) = model.loss_grad(x, y);
        assert_eq!(value.to_bits(), model.loss(x, y).to_bits());
        let want = model.backprop(x, y);
        let pairs = [
            (&g.l1.w, &want.l1.w),
            (&g.l1.b, &want.l1.b),
            (&g.l2.w, &want.l2.w),
            (&g.l2.b, &want.l2.b),
        ];
        for (got, hand) in pairs {
            for (a, b) in got.iter().zip(hand.iter()) {
                worst = worst.max((a - b).abs() / b.abs().max(1.0));
            }
        }
    }
    println!("largest difference from hand-written backpropagation: {worst:.1e}");
    assert!(worst < 1e-13, "the gradient disagrees with backpropagation");

    // Minibatch gradient descent: each step's gradient is summed afresh.
    let start = model.mean_loss(&xs, &ys);
    println!("epoch   0: mean loss {start:.5}");
    let mut g = model.zeroed();
    for epoch in 1..=200 {
        for batch in (0..EXAMPLES).step_by(BATCH) {
            g.clear();
            for e in batch..batch + BATCH {
                model.loss_adjoint_acc(&xs[e], &ys[e], 1.0 / BATCH as f64, &mut g);
            }
            model.descend(&g, LR);
        }
        if epoch % 50 == 0 {
            println!(
                "epoch {epoch:3}: mean loss {:.5}",
                model.mean_loss(&xs, &ys)
            );
        }
    }
    let end = model.mean_loss(&xs, &ys);
    assert!(
        end < start / 10.0,
        "training did not reduce the loss tenfold"
    );
}
