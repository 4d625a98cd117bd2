//! A two-layer tanh network written the way one writes it by hand: nested
//! index loops over flat, row-major weight slices, one hidden buffer reused
//! for every example, and a mean squared error over the batch. The data
//! `xs`, `ys` are constants, excluded by `wrt(w1, b1, w2, b2)`.
//!
//! The generated gradient is checked two independent ways:
//!
//! - against backpropagation written out by hand below (same float type, so
//!   the two agree to rounding: relative `1e-11`);
//! - against central finite differences of the loss over the concatenated
//!   parameters (`gradmacro_runtime::check_gradient`, tolerance `1e-6`).
//!
//! Then `_adjoint_acc` summed over single-example losses is checked against
//! the full-batch gradient, the way a training loop accumulates a minibatch.

mod support;

use gradmacro::differentiate;
use gradmacro_runtime::check_gradient;
use support::rng::Rng;

/// Relative tolerance between the generated gradient and hand-written
/// backpropagation.
const REL: f64 = 1e-11;
/// Absolute floor for entries that are zero or nearly so.
const ABS: f64 = 1e-13;
/// Finite-difference tolerance (absolute or relative).
const FD_TOL: f64 = 1e-6;

/// The gradient: one `Vec` per parameter slice, in order `w1, b1, w2, b2`.
type Grads = (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>);
/// The signature of `loss_grad`: the data get no gradient entry.
type LossGrad = fn(&[f64], &[f64], &[f64], &[f64], &[f64], &[f64]) -> (f64, Grads);

/// Mean squared error of the network `y = W2 tanh(W1 x + b1) + b2` over the
/// examples in `xs` (rows of `inputs`) and targets in `ys` (rows of
/// `outputs`). `w1` is `hidden x inputs`, `w2` is `outputs x hidden`, both
/// row-major; the sizes are read off the slice lengths.
#[differentiate(wrt(w1, b1, w2, b2))]
fn loss(w1: &[f64], b1: &[f64], w2: &[f64], b2: &[f64], xs: &[f64], ys: &[f64]) -> f64 {
    let hidden = b1.len();
    let outputs = b2.len();
    let inputs = w1.len() / hidden;
    let examples = ys.len() / outputs;
    let mut h = vec![0.0; hidden];
    let mut total = 0.0;
    for e in 0..examples {
        for j in 0..hidden {
            let mut a = b1[j];
            for k in 0..inputs {
                a += w1[j * inputs + k] * xs[e * inputs + k];
            }
            h[j] = a.tanh();
        }
        for o in 0..outputs {
            let mut y = b2[o];
            for j in 0..hidden {
                y += w2[o * hidden + j] * h[j];
            }
            let r = y - ys[e * outputs + o];
            total += r * r;
        }
    }
    total / (examples * outputs) as f64
}

/// The same loss by hand-written backpropagation: forward pass per example,
/// then the chain rule layer by layer.
fn backprop(
    w1: &[f64],
    b1: &[f64],
    w2: &[f64],
    b2: &[f64],
    xs: &[f64],
    ys: &[f64],
) -> (f64, Grads) {
    let (hidden, outputs) = (b1.len(), b2.len());
    let inputs = w1.len() / hidden;
    let examples = ys.len() / outputs;
    let scale = 1.0 / (examples * outputs) as f64;
    let (mut dw1, mut db1) = (vec![0.0; w1.len()], vec![0.0; hidden]);
    let (mut dw2, mut db2) = (vec![0.0; w2.len()], vec![0.0; outputs]);
    let mut total = 0.0;
    for e in 0..examples {
        let x = &xs[e * inputs..(e + 1) * inputs];
        let t = &ys[e * outputs..(e + 1) * outputs];
        // Forward.
        let h: Vec<f64> = (0..hidden)
            .map(|j| {
                let row = &w1[j * inputs..(j + 1) * inputs];
                (b1[j] + row.iter().zip(x).map(|(w, x)| w * x).sum::<f64>()).tanh()
            })
            .collect();
        let y: Vec<f64> = (0..outputs)
            .map(|o| {
                let row = &w2[o * hidden..(o + 1) * hidden];
                b2[o] + row.iter().zip(&h).map(|(w, h)| w * h).sum::<f64>()
            })
            .collect();
        // Backward.
        let mut dh = vec![0.0; hidden];
        for o in 0..outputs {
            let r = y[o] - t[o];
            total += r * r;
            let dy = 2.0 * r * scale;
            db2[o] += dy;
            for j in 0..hidden {
                dw2[o * hidden + j] += dy * h[j];
                dh[j] += dy * w2[o * hidden + j];
            }
        }
        for j in 0..hidden {
            let da = dh[j] * (1.0 - h[j] * h[j]);
            db1[j] += da;
            for k in 0..inputs {
                dw1[j * inputs + k] += da * x[k];
            }
        }
    }
    (total * scale, (dw1, db1, dw2, db2))
}

/// Parameters and data of one network.
struct Net {
    w1: Vec<f64>,
    b1: Vec<f64>,
    w2: Vec<f64>,
    b2: Vec<f64>,
    xs: Vec<f64>,
    ys: Vec<f64>,
}

impl Net {
    fn random(seed: u64, inputs: usize, hidden: usize, outputs: usize, examples: usize) -> Net {
        let mut rng = Rng::new(seed);
        Net {
            w1: rng.vec(hidden * inputs, -1.0, 1.0),
            b1: rng.vec(hidden, -0.5, 0.5),
            w2: rng.vec(outputs * hidden, -1.0, 1.0),
            b2: rng.vec(outputs, -0.5, 0.5),
            xs: rng.vec(examples * inputs, -2.0, 2.0),
            ys: rng.vec(examples * outputs, -1.0, 1.0),
        }
    }

    /// All parameters, concatenated in gradient order.
    fn params(&self) -> Vec<f64> {
        [&self.w1[..], &self.b1, &self.w2, &self.b2].concat()
    }

    /// The loss as a function of the concatenated parameters.
    fn loss_of(&self, p: &[f64]) -> f64 {
        let (w1, rest) = p.split_at(self.w1.len());
        let (b1, rest) = rest.split_at(self.b1.len());
        let (w2, b2) = rest.split_at(self.w2.len());
        loss(w1, b1, w2, b2, &self.xs, &self.ys)
    }
}

fn concat(g: &Grads) -> Vec<f64> {
    [&g.0[..], &g.1, &g.2, &g.3].concat()
}

/// `(inputs, hidden, outputs, examples)` of the networks checked.
const SHAPES: [(usize, usize, usize, usize); 5] = [
    (1, 1, 1, 1),
    (2, 3, 1, 5),
    (3, 4, 2, 8),
    (1, 6, 3, 4),
    (5, 8, 3, 16),
];

#[test]
fn gradient_matches_hand_written_backprop() {
    let grad: LossGrad = loss_grad;
    for (s, &(i, h, o, m)) in SHAPES.iter().enumerate() {
        for seed in 0..3 {
            let n = Net::random(100 * s as u64 + seed, i, h, o, m);
            let (v, g) = grad(&n.w1, &n.b1, &n.w2, &n.b2, &n.xs, &n.ys);
            let value = loss(&n.w1, &n.b1, &n.w2, &n.b2, &n.xs, &n.ys);
            assert_eq!(
                v.to_bits(),
                value.to_bits(),
                "shape {:?}: _grad value",
                SHAPES[s]
            );

            let (bv, bg) = backprop(&n.w1, &n.b1, &n.w2, &n.b2, &n.xs, &n.ys);
            assert!(
                (bv - value).abs() <= 1e-13 * value.abs().max(1.0),
                "loss {value} vs {bv}"
            );
            let names = ["w1", "b1", "w2", "b2"];
            let parts = [(&g.0, &bg.0), (&g.1, &bg.1), (&g.2, &bg.2), (&g.3, &bg.3)];
            for (name, (got, want)) in names.iter().zip(parts) {
                assert_eq!(got.len(), want.len(), "{name} length");
                for (k, (&a, &b)) in got.iter().zip(want.iter()).enumerate() {
                    let tol = REL * a.abs().max(b.abs()) + ABS;
                    assert!(
                        (a - b).abs() <= tol,
                        "shape {:?} seed {seed}: d/d{name}[{k}]: generated {a:e}, backprop {b:e}",
                        SHAPES[s]
                    );
                }
            }
        }
    }
}

#[test]
fn gradient_matches_finite_differences() {
    for (s, &(i, h, o, m)) in SHAPES.iter().enumerate() {
        for seed in 0..2 {
            let n = Net::random(7 + 100 * s as u64 + seed, i, h, o, m);
            let (_, g) = loss_grad(&n.w1, &n.b1, &n.w2, &n.b2, &n.xs, &n.ys);
            let check = check_gradient(|p| n.loss_of(p), &n.params(), &concat(&g));
            assert!(
                check.passes(FD_TOL),
                "shape {:?} seed {seed}:\n{check}",
                SHAPES[s]
            );
        }
    }
}

#[test]
fn finite_difference_check_catches_a_wrong_entry() {
    // The tolerance is tight enough to fail: one entry off by 1e-4.
    let n = Net::random(42, 3, 4, 2, 8);
    let (_, g) = loss_grad(&n.w1, &n.b1, &n.w2, &n.b2, &n.xs, &n.ys);
    let mut flat = concat(&g);
    flat[5] += 1e-4;
    let check = check_gradient(|p| n.loss_of(p), &n.params(), &flat);
    assert!(!check.passes(FD_TOL), "{check}");
}

#[test]
fn adjoint_is_the_scaled_gradient() {
    let n = Net::random(5, 3, 4, 2, 8);
    let (_, g) = loss_grad(&n.w1, &n.b1, &n.w2, &n.b2, &n.xs, &n.ys);
    let a = loss_adjoint(&n.w1, &n.b1, &n.w2, &n.b2, &n.xs, &n.ys, -0.75);
    for (got, want) in concat(&a).iter().zip(concat(&g)) {
        assert!((got + 0.75 * want).abs() <= REL * want.abs() + ABS);
    }
}

#[test]
fn minibatch_accumulation_equals_the_batch_gradient() {
    // The batch loss is the mean of the per-example losses, so adding
    // `d_out = 1 / m` times each example's gradient into zeroed buffers
    // gives the batch gradient.
    let (inputs, outputs, m) = (3, 2, 6);
    let n = Net::random(9, inputs, 5, outputs, m);
    let (_, g) = loss_grad(&n.w1, &n.b1, &n.w2, &n.b2, &n.xs, &n.ys);
    let mut d = (
        vec![0.0; n.w1.len()],
        vec![0.0; n.b1.len()],
        vec![0.0; n.w2.len()],
        vec![0.0; n.b2.len()],
    );
    for e in 0..m {
        let x = &n.xs[e * inputs..(e + 1) * inputs];
        let y = &n.ys[e * outputs..(e + 1) * outputs];
        loss_adjoint_acc(
            &n.w1,
            &n.b1,
            &n.w2,
            &n.b2,
            x,
            y,
            1.0 / m as f64,
            &mut d.0,
            &mut d.1,
            &mut d.2,
            &mut d.3,
        );
    }
    for (k, (got, want)) in concat(&d).iter().zip(concat(&g)).enumerate() {
        assert!(
            (got - want).abs() <= 1e-12 * want.abs().max(1e-3),
            "entry {k}: accumulated {got:e}, batch {want:e}"
        );
    }
}

#[test]
#[should_panic(expected = "parameter `b2`")]
fn accumulation_rejects_a_buffer_of_the_wrong_length() {
    let n = Net::random(1, 2, 3, 2, 4);
    let mut d = (
        vec![0.0; n.w1.len()],
        vec![0.0; n.b1.len()],
        vec![0.0; n.w2.len()],
        vec![0.0; n.b2.len() + 1],
    );
    loss_adjoint_acc(
        &n.w1, &n.b1, &n.w2, &n.b2, &n.xs, &n.ys, 1.0, &mut d.0, &mut d.1, &mut d.2, &mut d.3,
    );
}
