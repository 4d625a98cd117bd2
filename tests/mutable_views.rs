//! Mutable views: `let v = &mut buf[a..b];` and `let (p, q) =
//! buf.split_at_mut(k);` (of views too), written through (`p[i] = ..`,
//! `for e in q.iter_mut()`) and lent to helpers writing into them (`h(x, p,
//! q)`), as an LSTM cell carves its gates out of one buffer. Gradients are
//! checked against central differences with a tolerance a wrong derivative
//! cannot meet, and against a derivative by hand; values are bit-identical
//! to the function's.

#![deny(warnings)]
#![deny(clippy::all)]
// Index loops are how the functions under test are written.
#![allow(clippy::needless_range_loop)]

use gradmacro::differentiate;
use gradmacro_runtime::central_difference;

mod support;

use support::{assert_all_close, assert_bits};

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// An LSTM cell: four gates carved out of one buffer by `split_at_mut`,
/// `hidden` and `cell` updated in place.
#[differentiate]
fn lstm_cell(
    h: usize,
    weight: &[f64],
    bias: &[f64],
    hidden: &mut [f64],
    cell: &mut [f64],
    input: &[f64],
) {
    let mut gates = vec![0.0; 4 * h];
    let (a, b) = gates.split_at_mut(2 * h);
    let (forget, ingate) = a.split_at_mut(h);
    let (outgate, change) = b.split_at_mut(h);
    for i in 0..h {
        forget[i] = 1.0 / (1.0 + (-(input[i] * weight[i] + bias[i])).exp());
        ingate[i] = 1.0 / (1.0 + (-(hidden[i] * weight[h + i] + bias[h + i])).exp());
        outgate[i] = 1.0 / (1.0 + (-(input[i] * weight[2 * h + i] + bias[2 * h + i])).exp());
        change[i] = (hidden[i] * weight[3 * h + i] + bias[3 * h + i]).tanh();
    }
    for i in 0..h {
        cell[i] = cell[i] * forget[i] + ingate[i] * change[i];
    }
    for i in 0..h {
        hidden[i] = outgate[i] * cell[i].tanh();
    }
}

/// The same cell without views, for the oracle.
fn lstm_cell_plain(
    h: usize,
    weight: &[f64],
    bias: &[f64],
    hidden: &mut [f64],
    cell: &mut [f64],
    input: &[f64],
) {
    for i in 0..h {
        let forget = sigmoid(input[i] * weight[i] + bias[i]);
        let ingate = sigmoid(hidden[i] * weight[h + i] + bias[h + i]);
        let outgate = sigmoid(input[i] * weight[2 * h + i] + bias[2 * h + i]);
        let change = (hidden[i] * weight[3 * h + i] + bias[3 * h + i]).tanh();
        cell[i] = cell[i] * forget + ingate * change;
        hidden[i] = outgate * cell[i].tanh();
    }
}

/// Two layers over one state buffer `[hidden₀ cell₀ hidden₁ cell₁]`, each
/// layer's halves lent by `split_at_mut` of a mutable view.
#[differentiate(wrt(weight, bias))]
fn two_layers(weight: &[f64], bias: &[f64], x: &[f64]) -> f64 {
    let h = x.len();
    let mut state = vec![0.25; 4 * h];
    let (s1, s2) = state.split_at_mut(h);
    lstm_cell(h, &weight[..4 * h], &bias[..4 * h], s1, &mut s2[..h], x);
    let below = state[..h].to_vec();
    let layer = &mut state[2 * h..];
    let (s3, s4) = layer.split_at_mut(h);
    lstm_cell(h, &weight[4 * h..], &bias[4 * h..], s3, s4, &below);
    let mut s = 0.0;
    for (i, v) in state.iter().enumerate() {
        s += (i as f64 + 1.0) * v;
    }
    s
}

fn two_layers_plain(weight: &[f64], bias: &[f64], x: &[f64]) -> f64 {
    let h = x.len();
    let mut state = vec![0.25; 4 * h];
    let (mut h0, mut c0) = (state[..h].to_vec(), state[h..2 * h].to_vec());
    lstm_cell_plain(h, &weight[..4 * h], &bias[..4 * h], &mut h0, &mut c0, x);
    let (mut h1, mut c1) = (state[2 * h..3 * h].to_vec(), state[3 * h..].to_vec());
    lstm_cell_plain(h, &weight[4 * h..], &bias[4 * h..], &mut h1, &mut c1, &h0);
    state[..h].copy_from_slice(&h0);
    state[h..2 * h].copy_from_slice(&c0);
    state[2 * h..3 * h].copy_from_slice(&h1);
    state[3 * h..].copy_from_slice(&c1);
    state
        .iter()
        .enumerate()
        .map(|(i, v)| (i as f64 + 1.0) * v)
        .sum()
}

#[test]
fn an_lstm_cell_carved_by_split_at_mut() {
    for h in [1, 2, 3] {
        let weight: Vec<f64> = (0..8 * h)
            .map(|i| 0.3 * ((i * 7 % 11) as f64 - 5.0) / 5.0)
            .collect();
        let bias: Vec<f64> = (0..8 * h)
            .map(|i| 0.1 * ((i * 3 % 5) as f64 - 2.0))
            .collect();
        let x: Vec<f64> = (0..h).map(|i| 0.5 - 0.4 * i as f64).collect();
        let (value, (dw, db)) = two_layers_grad(&weight, &bias, &x);
        assert_bits("value", value, two_layers(&weight, &bias, &x));
        let plain = two_layers_plain(&weight, &bias, &x);
        assert!(
            (value - plain).abs() <= 1e-12 * plain.abs().max(1.0),
            "{value} vs {plain}"
        );
        let fd_w = central_difference(|w: &[f64]| two_layers_plain(w, &bias, &x), &weight);
        let fd_b = central_difference(|b: &[f64]| two_layers_plain(&weight, b, &x), &bias);
        assert_all_close("d/dweight", &dw, &fd_w, 1e-7, 1e-7);
        assert_all_close("d/dbias", &db, &fd_b, 1e-7, 1e-7);
    }
}

/// Writes through a mutable view: by index, by `+=`, and by `iter_mut`.
#[differentiate]
fn through_a_view(x: &[f64]) -> f64 {
    let n = x.len();
    let mut buf = vec![1.0; 2 * n];
    let tail = &mut buf[n..];
    for i in 0..n {
        tail[i] = x[i] * x[i];
        tail[i] += x[i];
    }
    for v in tail.iter_mut() {
        *v *= 2.0;
    }
    buf.iter().sum()
}

#[test]
fn writes_through_a_mutable_view() {
    for x in [vec![0.5, -1.0, 2.0], vec![3.0], vec![-0.25, 0.75]] {
        let (value, dx) = through_a_view_grad(&x);
        assert_bits("value", value, through_a_view(&x));
        // n + Σ 2 (x² + x): d/dx = 4x + 2.
        let want: Vec<f64> = x.iter().map(|v| 4.0 * v + 2.0).collect();
        assert_all_close("d/dx", &dx, &want, 1e-12, 1e-12);
    }
}

/// Scales a buffer in place.
#[differentiate]
fn scale_all(k: f64, out: &mut [f64]) {
    for i in 0..out.len() {
        out[i] *= k;
    }
}

#[differentiate]
fn sum_sq(v: &[f64]) -> f64 {
    v.iter().map(|e| e * e).sum()
}

/// Views carved in a block that returns them as a tuple, checked by an
/// `assert_eq!` on a view, lent to a helper, written through; a buffer
/// passed to a reader as `buf.as_mut()`.
#[differentiate]
fn carve(x: &[f64]) -> f64 {
    let mut buf = vec![0.0; 6];
    buf.copy_from_slice(x);
    let (lo, hi) = {
        let tail = &mut buf[2..];
        let (a, b) = tail.split_at_mut(2);
        (a, b)
    };
    assert_eq!(lo.len(), 2);
    scale_all(3.0, lo);
    hi[0] *= lo[1];
    let s = sum_sq(buf.as_mut());
    buf.iter().sum::<f64>() + 0.1 * s
}

#[test]
fn views_carved_in_a_block() {
    for x in [
        vec![0.5, -1.0, 2.0, 0.25, 1.5, -0.5],
        vec![1.0, 0.3, -0.7, 2.2, -0.4, 0.9],
    ] {
        let (value, dx) = carve_grad(&x);
        assert_bits("value", value, carve(&x));
        // buf = [x0, x1, 3 x2, 3 x3, 3 x3 x4, x5]; value = Σ buf + 0.1 Σ buf².
        let b = [x[0], x[1], 3.0 * x[2], 3.0 * x[3], 3.0 * x[3] * x[4], x[5]];
        let g = |i: usize| 1.0 + 0.2 * b[i];
        let want = [
            g(0),
            g(1),
            3.0 * g(2),
            3.0 * g(3) + 3.0 * x[4] * g(4),
            3.0 * x[3] * g(4),
            g(5),
        ];
        assert_all_close("d/dx", &dx, &want, 1e-12, 1e-12);
        let fd = central_difference(|v: &[f64]| carve(v), &x);
        assert_all_close("d/dx (differences)", &dx, &fd, 1e-7, 1e-7);
    }
}

/// Both layers in a helper writing into the whole state: the second layer's
/// input is a mutable view (`below`) passed where the cell only reads, as
/// ADBench's LSTM passes its previous layer's state.
#[differentiate]
fn stacked(weight: &[f64], bias: &[f64], state: &mut [f64], x: &[f64]) {
    let h = x.len();
    let (s1, s2) = state.split_at_mut(h);
    lstm_cell(h, &weight[..4 * h], &bias[..4 * h], s1, &mut s2[..h], x);
    let (below, layer) = state.split_at_mut(2 * h);
    let (s3, s4) = layer.split_at_mut(h);
    lstm_cell(h, &weight[4 * h..], &bias[4 * h..], s3, s4, below);
}

#[differentiate(wrt(weight, bias))]
fn stacked_loss(weight: &[f64], bias: &[f64], x: &[f64]) -> f64 {
    let mut state = vec![0.25; 4 * x.len()];
    stacked(weight, bias, &mut state, x);
    let mut s = 0.0;
    for (i, v) in state.iter().enumerate() {
        s += (i as f64 + 1.0) * v;
    }
    s
}

#[test]
fn a_mutable_view_lent_where_it_is_only_read() {
    for h in [1, 2, 3] {
        let weight: Vec<f64> = (0..8 * h)
            .map(|i| 0.2 * ((i * 5 % 7) as f64 - 3.0) / 3.0)
            .collect();
        let bias: Vec<f64> = (0..8 * h)
            .map(|i| 0.1 * ((i * 3 % 4) as f64 - 1.5))
            .collect();
        let x: Vec<f64> = (0..h).map(|i| 0.3 + 0.25 * i as f64).collect();
        let (value, (dw, db)) = stacked_loss_grad(&weight, &bias, &x);
        assert_bits("value", value, stacked_loss(&weight, &bias, &x));
        let plain = two_layers_plain(&weight, &bias, &x);
        assert!(
            (value - plain).abs() <= 1e-12 * plain.abs().max(1.0),
            "{value} vs {plain}"
        );
        let fd_w = central_difference(|w: &[f64]| two_layers_plain(w, &bias, &x), &weight);
        let fd_b = central_difference(|b: &[f64]| two_layers_plain(&weight, b, &x), &bias);
        assert_all_close("d/dweight", &dw, &fd_w, 1e-7, 1e-7);
        assert_all_close("d/dbias", &db, &fd_b, 1e-7, 1e-7);
    }
}

/// The cell and the stack again, for callers in forward mode.
#[differentiate(tangent)]
fn cell_t(h: usize, w: &[f64], hidden: &mut [f64], cell: &mut [f64], input: &[f64]) {
    let mut gates = vec![0.0; 2 * h];
    let (forget, change) = gates.split_at_mut(h);
    for i in 0..h {
        forget[i] = (input[i] * w[i]).tanh();
        change[i] = (hidden[i] * w[h + i]).sin();
    }
    for i in 0..h {
        cell[i] = cell[i] * forget[i] + change[i];
        hidden[i] = cell[i].tanh();
    }
}

#[differentiate(tangent)]
fn stacked_t(w: &[f64], state: &mut [f64], x: &[f64]) {
    let h = x.len();
    let (s1, s2) = state.split_at_mut(h);
    cell_t(h, &w[..2 * h], s1, &mut s2[..h], x);
    let (below, layer) = state.split_at_mut(2 * h);
    let (s3, s4) = layer.split_at_mut(h);
    cell_t(h, &w[2 * h..], s3, s4, below);
}

#[differentiate(tangent)]
fn stacked_t_loss(w: &[f64], x: &[f64]) -> f64 {
    let mut state = vec![0.5; 4 * x.len()];
    stacked_t(w, &mut state, x);
    state.iter().map(|v| v * v).sum()
}

#[test]
fn forward_mode_through_mutable_views() {
    for h in [1, 2, 3] {
        let w: Vec<f64> = (0..4 * h).map(|i| 0.4 - 0.15 * i as f64).collect();
        let x: Vec<f64> = (0..h).map(|i| 0.2 + 0.3 * i as f64).collect();
        let tw: Vec<f64> = (0..4 * h)
            .map(|i| if i % 2 == 0 { 1.0 } else { -0.5 })
            .collect();
        let tx: Vec<f64> = (0..h).map(|i| 0.25 * (i as f64 + 1.0)).collect();
        let (value, tangent) = stacked_t_loss_tangent(&w, &x, &tw, &tx);
        assert_bits("value", value, stacked_t_loss(&w, &x));
        let (_, (dw, dx)) = stacked_t_loss_grad(&w, &x);
        let want: f64 = dw.iter().zip(&tw).map(|(a, b)| a * b).sum::<f64>()
            + dx.iter().zip(&tx).map(|(a, b)| a * b).sum::<f64>();
        assert!(
            (tangent - want).abs() <= 1e-12 * want.abs().max(1.0),
            "{tangent} vs {want}"
        );
        let fd_w = central_difference(|v: &[f64]| stacked_t_loss(v, &x), &w);
        assert_all_close("d/dw", &dw, &fd_w, 1e-7, 1e-7);
    }
}

/// Views of a whole local buffer written `&vb[0..]` / `&mut vb[0..]`,
/// passed to a function that reads them.
#[differentiate]
fn whole_views_of_a_local(x: &[f64]) -> f64 {
    let mut vb = x.to_vec();
    let row = &vb[0..];
    let a = sum_sq(row);
    let pa = &mut vb[0..];
    pa[0] *= 2.0;
    let b = sum_sq(pa);
    a + b
}

#[test]
fn whole_views_of_a_local_read_by_a_callee() {
    for x in [vec![0.5, -1.0, 2.0], vec![1.5], vec![-0.25, 0.75]] {
        let (value, dx) = whole_views_of_a_local_grad(&x);
        assert_bits("value", value, whole_views_of_a_local(&x));
        // Σ x² + 4 x0² + Σ_{i>0} x_i²: 10 x0, then 4 x_i.
        let want: Vec<f64> = (0..x.len())
            .map(|i| if i == 0 { 10.0 * x[0] } else { 4.0 * x[i] })
            .collect();
        assert_all_close("d/dx", &dx, &want, 1e-12, 1e-12);
    }
}
