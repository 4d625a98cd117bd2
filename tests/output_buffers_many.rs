//! Helpers writing into several output buffers, and into a `&mut f64`, as
//! ADBench's objectives write them (`preprocess_qs(icf, sum_qs, qdiags)`
//! fills two buffers; the LSTM cell updates `hidden` and `cell` in place;
//! the bundle adjustment's weight error goes into `&mut w_err[i]`). Every
//! gradient is checked against one derived by hand, or against central
//! differences with a tolerance a wrong derivative cannot meet, at several
//! points; values are bit-identical to the function's.

#![deny(warnings)]
#![deny(clippy::all)]
// Index loops, element copies and `a = a + b` are how the functions under
// test are written (as ADBench writes them).
#![allow(
    clippy::needless_range_loop,
    clippy::manual_memcpy,
    clippy::assign_op_pattern
)]

use gradmacro::differentiate;
use gradmacro_runtime::central_difference;

mod support;

use support::{assert_all_close, assert_bits, assert_close};

/// Per block of `d` entries: its sum into `sums`, the exponentials into
/// `exps` (two buffers, filled in one loop).
#[differentiate]
fn sums_and_exps(d: usize, q: &[f64], sums: &mut [f64], exps: &mut [f64]) {
    for b in 0..sums.len() {
        sums[b] = 0.0;
        for j in 0..d {
            let v = q[b * d + j];
            sums[b] = sums[b] + v;
            exps[b * d + j] = v.exp();
        }
    }
}

/// `Σ_b sums_b² + Σ exps`, through the two buffers.
#[differentiate]
fn blocks(q: &[f64], d: usize) -> f64 {
    let k = q.len() / d;
    let mut sums = vec![0.0; k];
    let mut exps = vec![0.0; k * d];
    sums_and_exps(d, q, &mut sums, &mut exps);
    let mut s = 0.0;
    for b in 0..k {
        s += sums[b] * sums[b];
    }
    s + exps.iter().sum::<f64>()
}

#[test]
fn two_buffers_filled_at_once() {
    for (q, d) in [
        (vec![0.5, -1.0, 0.25, 2.0], 2),
        (vec![0.1, 0.2, 0.3, -0.4, 0.5, -0.6], 3),
        (vec![1.5, -0.5], 1),
    ] {
        let (value, dq) = blocks_grad(&q, d);
        assert_bits("value", value, blocks(&q, d));
        // d/dq_bj = 2 Σ_j' q_bj' + exp(q_bj).
        let want: Vec<f64> = (0..q.len())
            .map(|i| {
                let b = i / d;
                2.0 * q[b * d..(b + 1) * d].iter().sum::<f64>() + q[i].exp()
            })
            .collect();
        assert_all_close("d/dq", &dq, &want, 1e-12, 1e-12);
    }
}

/// One step of a gated cell: `hidden` and `cell` read and written in place.
#[differentiate]
fn cell_step(w: &[f64], input: &[f64], hidden: &mut [f64], cell: &mut [f64]) {
    let n = hidden.len();
    for i in 0..n {
        let forget = 1.0 / (1.0 + (-(input[i] * w[i])).exp());
        let change = (hidden[i] * w[n + i]).tanh();
        cell[i] = cell[i] * forget + change;
    }
    for i in 0..n {
        hidden[i] = cell[i].tanh();
    }
}

/// Two steps of the cell on one state, the state then summed with weights.
#[differentiate(wrt(w, x))]
fn two_steps(w: &[f64], x: &[f64]) -> f64 {
    let n = x.len() / 2;
    let mut state = vec![0.5; 2 * n];
    let mut hidden = vec![0.0; n];
    let mut cell = vec![0.0; n];
    for i in 0..n {
        hidden[i] = state[i];
        cell[i] = state[n + i];
    }
    cell_step(w, &x[..n], &mut hidden, &mut cell);
    cell_step(w, &x[n..], &mut hidden, &mut cell);
    for i in 0..n {
        state[i] = hidden[i];
        state[n + i] = cell[i];
    }
    let mut s = 0.0;
    for (i, v) in state.iter().enumerate() {
        s += (i as f64 + 1.0) * v;
    }
    s
}

#[test]
fn a_cell_updating_two_buffers_in_place() {
    for (w, x) in [
        (vec![0.3, -0.7, 1.1, 0.4], vec![0.2, -0.5, 0.9, 0.1]),
        (vec![-0.2, 0.5, 0.8, -1.3], vec![1.0, 0.3, -0.4, 0.6]),
        (
            vec![0.1, 0.2, 0.3, -0.1, -0.2, -0.3],
            vec![0.5, 0.4, 0.3, 0.2, 0.1, 0.0],
        ),
    ] {
        let (value, (dw, dx)) = two_steps_grad(&w, &x);
        assert_bits("value", value, two_steps(&w, &x));
        let fd_w = central_difference(|v: &[f64]| two_steps(v, &x), &w);
        let fd_x = central_difference(|v: &[f64]| two_steps(&w, v), &x);
        assert_all_close("d/dw", &dw, &fd_w, 1e-7, 1e-7);
        assert_all_close("d/dx", &dx, &fd_x, 1e-7, 1e-7);
    }
}

/// A weight's error term into a `&mut f64`.
#[differentiate]
fn weight_error(w: f64, err: &mut f64) {
    *err = 1.0 - w * w;
}

/// A float read and updated through `&mut f64`, and an array's range and a
/// float written by one helper.
#[differentiate]
fn bump(x: f64, acc: &mut f64, pair: &mut [f64]) {
    *acc += x * x;
    *acc = *acc * 0.5;
    pair[0] = *acc + pair[1];
    pair[1] = x.sin();
}

/// `Σ_i err_i²` with `err_i = 1 − w_i²` written into `errs[i]`, then a
/// float accumulated through `bump`.
#[differentiate]
fn weights(w: &[f64], y: f64) -> f64 {
    let mut errs = vec![0.0; w.len()];
    for i in 0..w.len() {
        weight_error(w[i], &mut errs[i]);
    }
    let mut e = 0.0;
    weight_error(y, &mut e);
    let mut acc = y;
    let mut buf = [1.0; 4];
    bump(y * 2.0, &mut acc, &mut buf[1..3]);
    let mut s = 0.0;
    for v in errs.iter() {
        s += v * v;
    }
    s + e * e + acc * buf[1] + buf[2]
}

#[test]
fn floats_written_through_mut_references() {
    for (w, y) in [
        (vec![0.5, -1.5, 2.0], 0.3),
        (vec![0.1], -0.7),
        (vec![1.2, 0.4], 1.1),
    ] {
        let (value, (dw, dy)) = weights_grad(&w, y);
        assert_bits("value", value, weights(&w, y));
        // d/dw_i (1 − w_i²)² = −4 w_i (1 − w_i²).
        let want: Vec<f64> = w.iter().map(|v| -4.0 * v * (1.0 - v * v)).collect();
        assert_all_close("d/dw", &dw, &want, 1e-12, 1e-12);
        // With u = 2y: acc = (y + u²)/2, buf1 = acc + 1, buf2 = sin u:
        // e² + acc·(acc + 1) + sin u.
        let u = 2.0 * y;
        let acc = 0.5 * (y + u * u);
        let dacc = 0.5 * (1.0 + 8.0 * y);
        let want_y = -4.0 * y * (1.0 - y * y) + dacc * (2.0 * acc + 1.0) + 2.0 * u.cos();
        assert_close("d/dy", dy, want_y, 1e-12, 1e-12);
    }
}

/// `weight_error` and `cell_step` for callers in forward mode.
#[differentiate(tangent)]
fn weight_error_t(w: f64, err: &mut f64) {
    *err = 1.0 - w * w;
}

#[differentiate(tangent)]
fn cell_step_t(w: &[f64], input: &[f64], hidden: &mut [f64], cell: &mut [f64]) {
    let n = hidden.len();
    for i in 0..n {
        cell[i] = cell[i] * (input[i] * w[i]).tanh() + hidden[i];
        hidden[i] = cell[i].sin();
    }
}

#[differentiate(tangent)]
fn forward_through(w: &[f64], x: &[f64]) -> f64 {
    let mut hidden = x.to_vec();
    let mut cell = vec![0.5; x.len()];
    cell_step_t(w, x, &mut hidden, &mut cell);
    let mut e = 0.0;
    weight_error_t(hidden[0], &mut e);
    e * cell.iter().sum::<f64>()
}

#[test]
fn forward_mode_through_several_outputs() {
    for (w, x, tw, tx) in [
        ([0.3, -0.7], [0.2, -0.5], [1.0, 0.5], [-0.25, 2.0]),
        ([1.1, 0.4], [0.9, 0.1], [0.0, 1.0], [1.0, 0.0]),
    ] {
        let (value, tangent) = forward_through_tangent(&w, &x, &tw, &tx);
        assert_bits("value", value, forward_through(&w, &x));
        let fd_w = central_difference(|v: &[f64]| forward_through(v, &x), &w);
        let fd_x = central_difference(|v: &[f64]| forward_through(&w, v), &x);
        let want: f64 = (0..2).map(|i| fd_w[i] * tw[i] + fd_x[i] * tx[i]).sum();
        assert_close("tangent", tangent, want, 1e-7, 1e-7);
    }
}
