//! Training a small tanh network by gradient descent with `#[differentiate]`.
//!
//! Run with `cargo run --example train`.
//!
//! The model is one hidden layer of tanh units and a linear output, fitted
//! to noisy samples of a smooth function of two inputs. The data come from
//! a small deterministic generator written inline, so every run prints the
//! same numbers.
//!
//! Three loops are shown:
//!
//! 1. Full-batch gradient descent. Each step calls `batch_loss_grad`, which
//!    returns a gradient computed afresh for the current weights: nothing is
//!    carried over from the previous step, so there is nothing to reset.
//! 2. Minibatch gradient descent with `example_loss_adjoint_acc`, which ADDS
//!    `d_out` times one example's gradient into caller-owned buffers. Summing
//!    over a minibatch is then deliberate: with `d_out = 1 / batch` the
//!    buffers end up holding the minibatch-mean gradient. The buffers are
//!    zeroed at the start of every step.
//! 3. The same minibatch loop with the zeroing forgotten. Every step then
//!    also applies the gradients of all earlier steps, taken at weights the
//!    model no longer has. Gradients of independent steps must not mix; the
//!    printed loss shows what happens when they do.

use gradmacro::differentiate;

/// Inputs per example.
const INPUTS: usize = 2;
/// Hidden tanh units.
const HIDDEN: usize = 8;
/// Training examples.
const EXAMPLES: usize = 64;

/// Squared error of the network on one example `(x, y)`:
/// `(w2 . tanh(W1 x + b1) + b2 - y)^2`, `W1` stored row-major in `w1`.
/// The example is data, so only the weights are differentiated.
#[differentiate(wrt(w1, b1, w2, b2))]
fn example_loss(w1: &[f64], b1: &[f64], w2: &[f64], b2: f64, x: &[f64], y: f64) -> f64 {
    let inputs = x.len();
    let mut out = b2;
    for j in 0..b1.len() {
        let mut a = b1[j];
        for k in 0..inputs {
            a += w1[j * inputs + k] * x[k];
        }
        out += w2[j] * a.tanh();
    }
    let r = out - y;
    r * r
}

/// Mean squared error over the whole data set (`xs` holds the examples one
/// after another). The loop repeats `example_loss`'s body, so the batch
/// gradient is a single reverse sweep over the data.
#[differentiate(wrt(w1, b1, w2, b2))]
fn batch_loss(w1: &[f64], b1: &[f64], w2: &[f64], b2: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let inputs = xs.len() / ys.len();
    let mut total = 0.0;
    for e in 0..ys.len() {
        let mut out = b2;
        for j in 0..b1.len() {
            let mut a = b1[j];
            for k in 0..inputs {
                a += w1[j * inputs + k] * xs[e * inputs + k];
            }
            out += w2[j] * a.tanh();
        }
        let r = out - ys[e];
        total += r * r;
    }
    total / ys.len() as f64
}

/// SplitMix64: a tiny deterministic generator, enough for test data.
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

/// The network's parameters.
#[derive(Clone)]
struct Model {
    w1: Vec<f64>,
    b1: Vec<f64>,
    w2: Vec<f64>,
    b2: f64,
}

impl Model {
    fn new(rng: &mut Rng) -> Model {
        Model {
            w1: (0..HIDDEN * INPUTS)
                .map(|_| rng.uniform(-1.0, 1.0))
                .collect(),
            b1: (0..HIDDEN).map(|_| rng.uniform(-0.5, 0.5)).collect(),
            w2: (0..HIDDEN).map(|_| rng.uniform(-0.5, 0.5)).collect(),
            b2: 0.0,
        }
    }

    fn loss(&self, xs: &[f64], ys: &[f64]) -> f64 {
        batch_loss(&self.w1, &self.b1, &self.w2, self.b2, xs, ys)
    }
}

/// Gradient buffers with the shapes of the model's parameters.
struct Grads {
    w1: Vec<f64>,
    b1: Vec<f64>,
    w2: Vec<f64>,
    b2: f64,
}

impl Grads {
    fn zeros() -> Grads {
        Grads {
            w1: vec![0.0; HIDDEN * INPUTS],
            b1: vec![0.0; HIDDEN],
            w2: vec![0.0; HIDDEN],
            b2: 0.0,
        }
    }

    fn zero(&mut self) {
        self.w1.fill(0.0);
        self.b1.fill(0.0);
        self.w2.fill(0.0);
        self.b2 = 0.0;
    }
}

/// `p -= lr * g` for every parameter.
fn descend(m: &mut Model, g: (&[f64], &[f64], &[f64], f64), lr: f64) {
    for (p, d) in m.w1.iter_mut().zip(g.0) {
        *p -= lr * d;
    }
    for (p, d) in m.b1.iter_mut().zip(g.1) {
        *p -= lr * d;
    }
    for (p, d) in m.w2.iter_mut().zip(g.2) {
        *p -= lr * d;
    }
    m.b2 -= lr * g.3;
}

/// Minibatch gradient descent through `example_loss_adjoint_acc`; with
/// `zero_each_step == false` the buffers are (wrongly) never reset.
fn minibatch_epochs(
    model: &mut Model,
    xs: &[f64],
    ys: &[f64],
    epochs: usize,
    zero_each_step: bool,
    mut report: impl FnMut(usize, f64),
) {
    const BATCH: usize = 8;
    const LR: f64 = 0.1;
    let mut g = Grads::zeros();
    for epoch in 1..=epochs {
        for start in (0..EXAMPLES).step_by(BATCH) {
            if zero_each_step {
                g.zero();
            }
            for e in start..start + BATCH {
                example_loss_adjoint_acc(
                    &model.w1,
                    &model.b1,
                    &model.w2,
                    model.b2,
                    &xs[e * INPUTS..(e + 1) * INPUTS],
                    ys[e],
                    1.0 / BATCH as f64,
                    &mut g.w1,
                    &mut g.b1,
                    &mut g.w2,
                    &mut g.b2,
                );
            }
            descend(model, (&g.w1, &g.b1, &g.w2, g.b2), LR);
        }
        report(epoch, model.loss(xs, ys));
    }
}

fn main() {
    let mut rng = Rng(2024);

    // Noisy samples of y = sin(2 x0) + x0 x1 on [-1, 1]^2.
    let mut xs = Vec::with_capacity(EXAMPLES * INPUTS);
    let mut ys = Vec::with_capacity(EXAMPLES);
    for _ in 0..EXAMPLES {
        let (x0, x1) = (rng.uniform(-1.0, 1.0), rng.uniform(-1.0, 1.0));
        xs.extend([x0, x1]);
        ys.push((2.0 * x0).sin() + x0 * x1 + rng.uniform(-0.01, 0.01));
    }
    let start = Model::new(&mut rng);
    let initial = start.loss(&xs, &ys);
    println!(
        "{EXAMPLES} examples, {INPUTS} inputs, {HIDDEN} tanh units; initial loss {initial:.5}"
    );

    // 1. Full batch: a fresh gradient at the current weights every step.
    println!("full-batch gradient descent (a fresh batch_loss_grad each step):");
    let mut model = start.clone();
    for step in 0..=1000 {
        let (loss, (d_w1, d_b1, d_w2, d_b2)) =
            batch_loss_grad(&model.w1, &model.b1, &model.w2, model.b2, &xs, &ys);
        if step % 250 == 0 {
            println!("  step {step:>4}  loss {loss:.5}");
        }
        descend(&mut model, (&d_w1, &d_b1, &d_w2, d_b2), 0.3);
    }
    let full = model;

    // 2. Minibatches summed on purpose, buffers zeroed every step.
    const EPOCHS: usize = 100;
    const MIXED_EPOCHS: usize = 6;
    println!("minibatches of 8 (example_loss_adjoint_acc, buffers zeroed each step):");
    let mut model = start.clone();
    let mut zeroed = Vec::new();
    minibatch_epochs(&mut model, &xs, &ys, EPOCHS, true, |epoch, loss| {
        if epoch % 25 == 0 {
            println!("  epoch {epoch:>3}  loss {loss:.5}");
        }
        zeroed.push(loss);
    });
    let minibatch = zeroed[EPOCHS - 1];

    // 3. The same, but the buffers are never zeroed: each step also applies
    // every earlier step's gradient, taken at weights long since changed.
    let mut model = start.clone();
    let mut mixed = Vec::new();
    minibatch_epochs(&mut model, &xs, &ys, MIXED_EPOCHS, false, |_, loss| {
        mixed.push(loss)
    });
    let show = |losses: &[f64]| {
        let shown: Vec<String> = losses.iter().map(|l| format!("{l:.4}")).collect();
        shown.join(" ")
    };
    println!("first {MIXED_EPOCHS} epochs, loss per epoch:");
    println!(
        "  buffers zeroed each step:   {}",
        show(&zeroed[..MIXED_EPOCHS])
    );
    println!("  buffers never zeroed:       {}", show(&mixed));

    // The per-example loss is an ordinary function as well.
    let worst = (0..EXAMPLES)
        .map(|e| {
            let m = &full;
            example_loss(
                &m.w1,
                &m.b1,
                &m.w2,
                m.b2,
                &xs[e * INPUTS..(e + 1) * INPUTS],
                ys[e],
            )
        })
        .fold(0.0, f64::max);
    println!("largest squared error on one example after full-batch training: {worst:.5}");

    let full_batch = full.loss(&xs, &ys);
    println!(
        "final loss: full batch {full_batch:.5}, minibatch {minibatch:.5} (initial {initial:.5})"
    );
    assert!(
        full_batch < initial / 20.0,
        "full-batch training did not converge"
    );
    assert!(
        minibatch < initial / 10.0,
        "minibatch training did not converge"
    );
    let (z, m) = (zeroed[MIXED_EPOCHS - 1], mixed[MIXED_EPOCHS - 1]);
    assert!(
        m.is_nan() || m > z,
        "mixing stale gradients should not beat zeroing the buffers"
    );
}
