//! The LSTM objective of the ADBench benchmarks, written from its definition
//! the way numeric Rust writes it: views of the parameter slices per layer,
//! helpers that update a state buffer in place (`lstm_model`, `lstm_predict`),
//! `assert!`s on the sizes in the body, integer sizes as data.
//!
//! Definition (ADBench, `microsoft/ADBench` `src/cpp/shared/lstm.h`; the Rust
//! port in `EnzymeAD/Enzyme` `enzyme/benchmarks/ReverseMode/lstm/src/safe.rs`
//! shows the idiomatic Rust shape). With `l` layers, `b` bits per character
//! and `c` characters:
//!
//! - `main_params` holds, per layer, 4b weights then 4b biases, each group of
//!   four ordered forget, input, output gate and change; `extra_params` the
//!   input weights, output weights and output biases (b each); `state` the
//!   hidden then cell state (b each) per layer; `sequence` the `c` characters
//!   (b each).
//! - One layer step, elementwise, from input `x` and state `(h, s)`:
//!   `f = σ(x w_f + b_f)`, `i = σ(h w_i + b_i)`, `o = σ(x w_o + b_o)`,
//!   `g = tanh(h w_g + b_g)`, then `s ← s f + i g`, `h ← o tanh(s)`.
//! - A prediction scales the character by the input weights, runs it up the
//!   layers (each layer's input is the new hidden state of the one below) and
//!   maps the top hidden state to `y = h w_out + b_out`.
//! - The loss is `−Σ_t Σ_i gold_{t+1,i} (y_{t,i} − lse(y_t)) / ((c − 1) b)`,
//!   with ADBench's `lse(v) = ln(Σ exp(v_i) + 2)`, the state carried from one
//!   character to the next (starting from a copy of `state`).
//!
//! The gradient with respect to `main_params` and `extra_params` is compared
//! with forward-mode dual numbers run through an independent implementation
//! (per-layer `Vec`s of hidden and cell states, the gates computed as whole
//! vectors) at seeded points of two sizes.
//!
//! Written differently from the idiomatic form because the macro rejects it:
//!
//! - `lstm_model` takes the layer's state as one buffer (hidden then cell, as
//!   ADBench lays it out) instead of two, `hidden: &mut [f64], cell: &mut
//!   [f64]`: a helper may write into one output buffer. For the same reason it
//!   indexes `state[i]` and `state[b + i]` instead of splitting the buffer
//!   with `state.split_at_mut(b)` (not supported on the output buffer).
//! - ADBench's `lstm_predict` writes both the state and the prediction; here
//!   `lstm_predict` writes the state only and `lstm_output` returns the
//!   prediction as a `Vec` (one output buffer per helper; a function returning
//!   a value may not write into a parameter).
//! - `lstm_objective` takes the initial state as `&[f64]` and copies it
//!   (ADBench takes it by value) rather than `&mut [f64]`: a function returning
//!   a value may not write into a parameter.
//! - `lstm_predict` copies each layer's new hidden state into the next
//!   layer's input with `layer_input.copy_from_slice(..)` instead of
//!   `layer_input = state[..].to_vec();` (a `Vec` can only be re-created with
//!   `vec![..]` or written element by element). Lending the state's hidden
//!   part directly, as ADBench does, needs `split_at_mut` in Rust, see above.

#![deny(warnings)]
#![deny(clippy::all)]
// Index loops are how the functions under test are written.
#![allow(clippy::needless_range_loop)]

use gradmacro::differentiate;

mod support;

use support::dual::{forward_gradient, Dual};
use support::rng::Rng;
use support::{assert_all_close, assert_bits, assert_close, D_OUT};

/// `1 / (1 + e^-x)`.
#[differentiate]
fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// ADBench's `ln(Σ exp(v_i) + 2)`.
#[differentiate]
fn logsumexp(v: &[f64]) -> f64 {
    let s: f64 = v.iter().map(|a| a.exp()).sum();
    (s + 2.0).ln()
}

/// One layer step: `params` is the layer's 4b weights then 4b biases,
/// `state` its hidden then cell state, updated in place.
#[differentiate]
fn lstm_model(params: &[f64], state: &mut [f64], input: &[f64]) {
    let b = input.len();
    assert_eq!(params.len(), 8 * b);
    assert_eq!(state.len(), 2 * b);
    let (weight, bias) = params.split_at(4 * b);
    for i in 0..b {
        let forget = sigmoid(input[i] * weight[i] + bias[i]);
        let ingate = sigmoid(state[i] * weight[b + i] + bias[b + i]);
        let outgate = sigmoid(input[i] * weight[2 * b + i] + bias[2 * b + i]);
        let change = (state[i] * weight[3 * b + i] + bias[3 * b + i]).tanh();
        state[b + i] = state[b + i] * forget + ingate * change;
        state[i] = outgate * state[b + i].tanh();
    }
}

/// Runs one character up the layers, updating every layer's state.
#[differentiate]
fn lstm_predict(main_params: &[f64], extra_params: &[f64], state: &mut [f64], input: &[f64]) {
    let b = input.len();
    let l = state.len() / (2 * b);
    assert_eq!(main_params.len(), 8 * l * b);
    assert_eq!(extra_params.len(), 3 * b);
    let mut layer_input: Vec<f64> = input
        .iter()
        .zip(&extra_params[..b])
        .map(|(x, w)| x * w)
        .collect();
    for layer in 0..l {
        lstm_model(
            &main_params[8 * b * layer..8 * b * (layer + 1)],
            &mut state[2 * b * layer..2 * b * (layer + 1)],
            &layer_input,
        );
        // Not `layer_input = state[..].to_vec();`: see the header.
        layer_input.copy_from_slice(&state[2 * b * layer..2 * b * layer + b]);
    }
}

/// The prediction from the top layer's hidden state.
#[differentiate]
fn lstm_output(extra_params: &[f64], hidden: &[f64]) -> Vec<f64> {
    let b = hidden.len();
    (0..b)
        .map(|i| hidden[i] * extra_params[b + i] + extra_params[2 * b + i])
        .collect()
}

/// The loss of predicting each character of `sequence` from the ones before.
#[differentiate(wrt(main_params, extra_params))]
fn lstm_objective(
    l: usize,
    c: usize,
    b: usize,
    main_params: &[f64],
    extra_params: &[f64],
    state: &[f64],
    sequence: &[f64],
) -> f64 {
    assert!(b > 0 && c > 1);
    assert_eq!(state.len(), 2 * l * b);
    assert_eq!(sequence.len(), c * b);
    let mut state = state.to_vec();
    let mut total = 0.0;
    for t in 0..c - 1 {
        let input = &sequence[t * b..(t + 1) * b];
        lstm_predict(main_params, extra_params, &mut state, input);
        let ypred: Vec<f64> = lstm_output(extra_params, &state[2 * b * (l - 1)..][..b]);
        let lse = logsumexp(&ypred);
        let ygold = &sequence[(t + 1) * b..(t + 2) * b];
        total += ygold
            .iter()
            .zip(&ypred)
            .map(|(y, p)| y * (p - lse))
            .sum::<f64>();
    }
    -total / ((c - 1) * b) as f64
}

// ---------------------------------------------------------------------------
// The oracle: the same model on dual numbers, written independently.

type D = Dual<1>;

impl<const N: usize> Dual<N> {
    fn tanh(self) -> Self {
        let t = self.v.tanh();
        self.chain(t, 1.0 - t * t)
    }
}

fn sigmoid_dual(x: D) -> D {
    D::cst(1.0) / (D::cst(1.0) + (-x).exp())
}

/// The objective over `p = [main_params, extra_params]`.
fn objective_dual(p: &[D], l: usize, c: usize, b: usize, state: &[f64], sequence: &[f64]) -> D {
    let (main, extra) = p.split_at(8 * l * b);
    let (w_in, rest) = extra.split_at(b);
    let (w_out, b_out) = rest.split_at(b);
    // Gate `gate` (0 forget, 1 input, 2 output, 3 change) of layer `k`.
    let weight = |k: usize, gate: usize| &main[8 * b * k + gate * b..][..b];
    let bias = |k: usize, gate: usize| &main[8 * b * k + 4 * b + gate * b..][..b];
    let mut hidden: Vec<Vec<D>> = (0..l)
        .map(|k| state[2 * b * k..][..b].iter().map(|&v| D::cst(v)).collect())
        .collect();
    let mut cell: Vec<Vec<D>> = (0..l)
        .map(|k| {
            state[2 * b * k + b..][..b]
                .iter()
                .map(|&v| D::cst(v))
                .collect()
        })
        .collect();
    let chars: Vec<&[f64]> = sequence.chunks(b).collect();
    let mut terms = Vec::new();
    for t in 0..c - 1 {
        let mut x: Vec<D> = (0..b).map(|i| w_in[i] * chars[t][i]).collect();
        for k in 0..l {
            let affine = |gate: usize, v: &[D]| -> Vec<D> {
                (0..b)
                    .map(|i| v[i] * weight(k, gate)[i] + bias(k, gate)[i])
                    .collect()
            };
            let f: Vec<D> = affine(0, &x).into_iter().map(sigmoid_dual).collect();
            let i_gate: Vec<D> = affine(1, &hidden[k])
                .into_iter()
                .map(sigmoid_dual)
                .collect();
            let o: Vec<D> = affine(2, &x).into_iter().map(sigmoid_dual).collect();
            let g: Vec<D> = affine(3, &hidden[k]).into_iter().map(D::tanh).collect();
            let new_cell: Vec<D> = (0..b)
                .map(|i| cell[k][i] * f[i] + i_gate[i] * g[i])
                .collect();
            let new_hidden: Vec<D> = (0..b).map(|i| o[i] * new_cell[i].tanh()).collect();
            cell[k] = new_cell;
            hidden[k] = new_hidden.clone();
            x = new_hidden;
        }
        let y: Vec<D> = (0..b).map(|i| x[i] * w_out[i] + b_out[i]).collect();
        let lse = (y.iter().map(|v| v.exp()).sum::<D>() + 2.0).ln();
        for i in 0..b {
            terms.push(chars[t + 1][i] * (y[i] - lse));
        }
    }
    let n = ((c - 1) * b) as f64;
    -(terms.into_iter().sum::<D>()) / D::cst(n)
}

fn check_size(l: usize, c: usize, b: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    for _ in 0..3 {
        let main = rng.vec(8 * l * b, -1.0, 1.0);
        let extra = rng.vec(3 * b, -1.0, 1.0);
        let state = rng.vec(2 * l * b, -0.5, 0.5);
        let sequence = rng.vec(c * b, -1.0, 1.0);

        let (value, (dm, de)) = lstm_objective_grad(l, c, b, &main, &extra, &state, &sequence);
        let f = lstm_objective(l, c, b, &main, &extra, &state, &sequence);
        assert_bits("value", value, f);
        let p: Vec<f64> = main.iter().chain(&extra).copied().collect();
        let oracle = |q: &[D]| objective_dual(q, l, c, b, &state, &sequence);
        let dual_value = oracle(&p.iter().map(|v| D::cst(*v)).collect::<Vec<_>>()).v;
        assert_close("value", dual_value, f, 1e-12, 1e-12);
        let want = forward_gradient(oracle, &p);
        let got: Vec<f64> = dm.iter().chain(&de).copied().collect();
        assert_all_close("gradient", &got, &want, 1e-12, 1e-10);

        let (am, ae) = lstm_objective_adjoint(l, c, b, &main, &extra, &state, &sequence, D_OUT);
        let adj: Vec<f64> = am.iter().chain(&ae).copied().collect();
        let scaled: Vec<f64> = got.iter().map(|g| g * D_OUT).collect();
        assert_all_close("adjoint", &adj, &scaled, 1e-12, 1e-12);
    }
}

#[test]
fn lstm_l2_c4_b4_against_dual_numbers() {
    check_size(2, 4, 4, 51);
}

#[test]
fn lstm_l3_c5_b3_against_dual_numbers() {
    check_size(3, 5, 3, 52);
}
