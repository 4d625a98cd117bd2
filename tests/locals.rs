//! Tuples and closures local to a differentiated function: `let (a, b) =
//! (..);` and `let sq = |v: f64| v * v;` called with differentiated values,
//! against derivatives written by hand.
#![deny(warnings)]

mod support;

use gradmacro::differentiate;
use support::{assert_all_close, assert_bits, assert_close};

#[differentiate(tangent)]
fn tuples(x: f64, y: f64) -> f64 {
    let (a, b) = (x * 2.0, y.sin());
    let (a, b) = (b, a * x);
    let (p, q): (f64, f64) = (a + b, a * b);
    p * q
}

#[test]
fn tuple_lets_bind_in_order_and_swap() {
    for (x, y) in [(0.5, -1.0), (1.5, 0.3), (-0.7, 2.0)] {
        let (value, (gx, gy)) = tuples_grad(x, y);
        assert_bits("value", value, tuples(x, y));
        // a = sin y, b = 2x², p = a + b, q = a b; f = p q.
        let (a, b) = (y.sin(), 2.0 * x * x);
        let (p, q) = (a + b, a * b);
        let (da_y, db_x) = (y.cos(), 4.0 * x);
        let want_x = db_x * q + p * a * db_x;
        let want_y = da_y * q + p * da_y * b;
        assert_close("d/dx", gx, want_x, 1e-13, 1e-13);
        assert_close("d/dy", gy, want_y, 1e-13, 1e-13);
        assert_close(
            "tangent",
            tuples_tangent(x, y, 1.0, 0.0).1,
            want_x,
            1e-13,
            1e-13,
        );
    }
}

// Shrunk from the differential test: a tuple read by its fields, bound
// again under the same name (in its block and in a nested one), whose new
// value reads the old one.
#[differentiate]
fn rebound_tuple(x: f64, y: f64) -> f64 {
    let t = (x, y.sin());
    let c = t.0 * t.1;
    let t = (c, t.0 + 2.0);
    let c = t.0 * t.1;
    let t: (f64, f64) = (c * y, t.1);
    let d = {
        let t = (t.1, 0.5);
        t.0 * t.1
    };
    t.0 - t.1 + d
}

#[test]
fn a_tuple_bound_again_under_its_name() {
    for (x, y) in [(0.5, -1.0), (1.5, 0.3), (-0.7, 2.0)] {
        let (value, (gx, gy)) = rebound_tuple_grad(x, y);
        assert_bits("value", value, rebound_tuple(x, y));
        // f = x sin(y) (x + 2) y - (x + 2) / 2.
        let s = y.sin();
        let want_x = (2.0 * x + 2.0) * s * y - 0.5;
        let want_y = x * (x + 2.0) * (y.cos() * y + s);
        assert_close("d/dx", gx, want_x, 1e-13, 1e-13);
        assert_close("d/dy", gy, want_y, 1e-13, 1e-13);
    }
}

#[differentiate(tangent, hessian)]
#[allow(clippy::needless_range_loop)]
fn closures(x: f64, w: &[f64]) -> f64 {
    let k = 3.0;
    let sq = |v: f64| v * v;
    let scaled = |v: f64, s: f64| k * v * s + x;
    let mut total = 0.0;
    for i in 0..w.len() {
        total += sq(w[i] - x) + scaled(w[i], 0.5);
    }
    sq(total)
}

#[test]
fn closures_are_written_out_at_each_call() {
    let w = [0.5, -1.0, 2.0];
    for x in [-0.4, 0.2, 1.1] {
        let (value, (gx, gw)) = closures_grad(x, &w);
        assert_bits("value", value, closures(x, &w));
        let t: f64 = w.iter().map(|wi| (wi - x) * (wi - x) + 1.5 * wi + x).sum();
        let dt_dx: f64 = w.iter().map(|wi| -2.0 * (wi - x) + 1.0).sum();
        assert_close("d/dx", gx, 2.0 * t * dt_dx, 1e-12, 1e-12);
        for (i, wi) in w.iter().enumerate() {
            assert_close(
                "d/dw",
                gw[i],
                2.0 * t * (2.0 * (wi - x) + 1.5),
                1e-12,
                1e-12,
            );
        }
        let (_, _, h) = closures_hessian(x, &w);
        assert_close(
            "Hxx",
            h[0][0],
            2.0 * dt_dx * dt_dx + 2.0 * t * 6.0,
            1e-11,
            1e-11,
        );
    }
}

#[differentiate]
fn polar(r: f64, theta: f64) -> f64 {
    let (s, c) = theta.sin_cos();
    r * s * c
}

#[test]
fn sin_cos_destructured() {
    for th in [-1.0, 0.4, 2.5] {
        let (value, (gr, gt)) = polar_grad(2.0, th);
        assert_bits("value", value, polar(2.0, th));
        assert_close("d/dr", gr, th.sin() * th.cos(), 1e-14, 1e-14);
        assert_close("d/dθ", gt, 2.0 * (2.0 * th).cos(), 1e-14, 1e-14);
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Activation {
    Tanh,
    Relu,
    Identity,
}

#[differentiate(tangent, hessian)]
fn matched(x: f64, n: usize, flag: bool, act: Activation) -> f64 {
    let scale = match n {
        0 => 1.0,
        1 | 2 => x,
        3..=5 => x * x,
        k if k > 10 => x.sin() * k as f64,
        _ => 0.5 * x,
    };
    let y = match act {
        Activation::Tanh => (scale * x).tanh(),
        Activation::Relu => (scale * x).max(0.0),
        Activation::Identity => scale * x,
    };
    match flag {
        true => y * y,
        false => y + x,
    }
}

fn matched_by_hand(x: f64, n: usize, flag: bool, act: Activation) -> f64 {
    // The derivative, written out.
    let (s, ds) = match n {
        0 => (1.0, 0.0),
        1 | 2 => (x, 1.0),
        3..=5 => (x * x, 2.0 * x),
        k if k > 10 => (x.sin() * k as f64, x.cos() * k as f64),
        _ => (0.5 * x, 0.5),
    };
    let (u, du) = (s * x, ds * x + s);
    let (y, dy) = match act {
        Activation::Tanh => (u.tanh(), (1.0 - u.tanh() * u.tanh()) * du),
        Activation::Relu => (u.max(0.0), if u >= 0.0 { du } else { 0.0 }),
        Activation::Identity => (u, du),
    };
    if flag {
        2.0 * y * dy
    } else {
        dy + 1.0
    }
}

#[test]
fn match_on_integers_bools_and_enums() {
    for n in [0, 1, 2, 4, 7, 12] {
        for flag in [true, false] {
            for act in [Activation::Tanh, Activation::Relu, Activation::Identity] {
                for x in [-0.8, 0.3, 1.4] {
                    let (value, g) = matched_grad(x, n, flag, act);
                    assert_bits("value", value, matched(x, n, flag, act));
                    assert_close("d/dx", g, matched_by_hand(x, n, flag, act), 1e-12, 1e-12);
                    let (_, t) = matched_tangent(x, n, flag, act, 1.0);
                    assert_close("tangent", t, g, 1e-12, 1e-12);
                    let (_, hg, _) = matched_hessian(x, n, flag, act);
                    assert_close("hessian's gradient", hg[0], g, 1e-12, 1e-12);
                }
            }
        }
    }
}

#[differentiate]
fn match_on_a_comparison(x: f64) -> f64 {
    match x > 0.0 {
        true => x * x,
        false => -x,
    }
}

#[test]
fn match_on_a_value_computed_once() {
    assert_eq!(match_on_a_comparison_grad(1.5), (2.25, 3.0));
    assert_eq!(match_on_a_comparison_grad(-2.0), (2.0, -1.0));
}

// Shrunk from the differential test: a tuple element that is a `match`, a
// tuple `let` whose variable becomes differentiated in a loop, a closure
// whose body accumulates into its own local.

struct Model;

impl Model {
    #[differentiate]
    fn f(&self, y: f64) -> f64 {
        let (acc,) = (match -y / -2.5 >= 0.1 {
            true => y,
            false => -1.0,
        },);
        acc * y
    }
}

#[differentiate]
fn promoted_in_a_loop(x: f64) -> f64 {
    let (mut q,): (f64,) = (1.30,);
    for _ in 0..3 {
        q = q * 0.5 + x;
    }
    q
}

#[differentiate]
fn closure_with_a_loop(x: f64, w: &[f64]) -> f64 {
    let weighted = |k: f64| {
        let mut acc = 0.0;
        for wi in w {
            acc += wi * k;
        }
        acc
    };
    weighted(x) * weighted(x * x)
}

#[test]
fn shrunk_programs() {
    assert_eq!(Model.f_grad(2.0), (4.0, 4.0));
    assert_eq!(Model.f_grad(-2.0), (2.0, -1.0));
    // q = 1.3/8 + x (1 + 1/2 + 1/4).
    assert_eq!(promoted_in_a_loop_grad(1.0).1, 1.75);
    let w = [0.5, 1.5];
    let (_, (gx, _)) = closure_with_a_loop_grad(2.0, &w);
    // (s x)(s x²) with s = Σw = 2: d/dx = 3 s² x².
    assert_close("closure d/dx", gx, 3.0 * 4.0 * 4.0, 1e-12, 1e-12);
}

#[differentiate]
fn nested_closures(x: f64) -> f64 {
    let mk_r = || {
        let mk_r = || 1.0;
        let r: f64 = mk_r();
        r * x
    };
    let r = mk_r();
    r * 2.0
}

#[test]
fn nested_closures_of_the_same_name() {
    assert_eq!(nested_closures_grad(3.0), (6.0, 2.0));
}

#[differentiate(tangent)]
fn in_place(x: f64, w: &[f64]) -> f64 {
    let mut buf = vec![0.0; w.len()];
    for (i, b) in buf.iter_mut().enumerate() {
        *b = w[i] * x;
    }
    for b in buf.iter_mut() {
        *b += x;
        *b *= 0.5;
    }
    let mut outer = [1.0; 2];
    for o in outer.iter_mut() {
        for b in buf.iter_mut() {
            *b += *o * x;
        }
        *o = x;
    }
    buf.iter().sum::<f64>() * outer[1]
}

#[test]
fn in_place_iteration() {
    let w = [0.5, -1.5, 2.0];
    for x in [-0.6, 0.9, 1.7] {
        let (value, (gx, gw)) = in_place_grad(x, &w);
        assert_bits("value", value, in_place(x, &w));
        // b_i = (w_i x + x)/2, then each pass of the outer loop adds o·x
        // to every b with o = 1 both times (outer[k] is set after its own
        // pass); outer[1] = x. So f = x² ((Σw + n)/2 + 2n).
        let n = w.len() as f64;
        let sum_w: f64 = w.iter().sum();
        let c = (sum_w + n) / 2.0 + 2.0 * n;
        assert_close("d/dx", gx, 2.0 * x * c, 1e-12, 1e-12);
        for g in gw {
            assert_close("d/dw", g, x / 2.0 * x, 1e-12, 1e-12);
        }
        let (_, t) = in_place_tangent(x, &w, 1.0, &[0.0; 3]);
        assert_close("tangent", t, gx, 1e-12, 1e-12);
    }
}

/// In-place iteration zipped with another sequence, the buffer on either
/// side, enumerated or not, the other side a parameter, a sub-slice, a range
/// or a local buffer.
#[differentiate(tangent)]
fn zipped_in_place(x: f64, w: &[f64]) -> f64 {
    let mut buf = vec![1.0; w.len()];
    for (b, wi) in buf.iter_mut().zip(w) {
        *b *= wi * x;
    }
    for (&wi, b) in w[1..].iter().zip(buf.iter_mut()) {
        *b += wi;
    }
    let ones = [1.0, 1.0];
    for (i, (b, &c)) in buf.iter_mut().zip(ones.iter()).enumerate() {
        *b -= (i as f64 + i as f64 * c) * x;
    }
    let copy = buf.clone();
    for (j, (c, b)) in copy.iter().zip(buf.iter_mut()).enumerate() {
        *b = *b * c + j as f64;
    }
    buf.iter().sum::<f64>()
}

#[test]
fn in_place_iteration_zipped() {
    let w = [0.5, -1.5, 2.0];
    for x in [-0.6, 0.9, 1.7] {
        let (value, (gx, gw)) = zipped_in_place_grad(x, &w);
        assert_bits("value", value, zipped_in_place(x, &w));
        // b_i = w_i x + w_{i+1} (i < 2) - 2 i x (i < 2), then b_i² + i.
        let mut want_x = 0.0;
        let mut want_w = [0.0; 3];
        let mut want_value = 0.0;
        for i in 0..3 {
            let next = if i < 2 { w[i + 1] } else { 0.0 };
            let shift = if i < 2 { 2.0 * i as f64 } else { 0.0 };
            let b = w[i] * x + next - shift * x;
            want_value += b * b + i as f64;
            want_x += 2.0 * b * (w[i] - shift);
            want_w[i] += 2.0 * b * x;
            if i < 2 {
                want_w[i + 1] += 2.0 * b;
            }
        }
        assert_close("value", value, want_value, 1e-12, 1e-12);
        assert_close("d/dx", gx, want_x, 1e-12, 1e-12);
        assert_all_close("d/dw", &gw, &want_w, 1e-12, 1e-12);
        let (_, t) = zipped_in_place_tangent(x, &w, 1.0, &[0.0; 3]);
        assert_close("tangent", t, gx, 1e-12, 1e-12);
    }
}

/// Shrunk from the differential test: a tuple `let` inside `vec![..]`.
#[differentiate]
#[allow(clippy::useless_vec)]
fn tuple_in_vec(w: &[f64]) -> f64 {
    let cells = vec![
        1.0,
        1.0,
        {
            let (a,): (f64,) = (1.0,);
            w[0] - a
        },
        match w.len() {
            3 => w[1],
            _ => 0.0,
        },
    ];
    cells.iter().sum::<f64>()
}

#[test]
fn sugar_inside_vec_macros() {
    assert_eq!(
        tuple_in_vec_grad(&[2.0, 3.0, 4.0]),
        (6.0, vec![1.0, 1.0, 0.0])
    );
}

/// A local tuple read by its fields: `t.0`, `t.1`, and `sc.1` of
/// `x.sin_cos()`.
#[differentiate]
fn tuple_fields(x: f64, y: f64) -> f64 {
    let t = (x * 2.0, y.sin());
    let sc = x.sin_cos();
    t.0 * t.1 + sc.1
}

#[test]
fn tuple_fields_read_as_their_elements() {
    for (x, y) in [(0.5, -1.0), (1.5, 0.25), (-2.0, 3.0)] {
        let (value, (dx, dy)) = tuple_fields_grad(x, y);
        assert_eq!(value.to_bits(), tuple_fields(x, y).to_bits());
        support::assert_close("d/dx", dx, 2.0 * y.sin() - x.sin(), 1e-12, 1e-12);
        support::assert_close("d/dy", dy, 2.0 * x * y.cos(), 1e-12, 1e-12);
    }
}

// Shrunk from the differential test: a tuple read by its fields inside a
// block inside `vec![..]`, and a closure whose block body sums what a
// filter keeps, called in a loop.
#[differentiate]
#[allow(clippy::useless_vec)]
fn tuple_and_filter_in_blocks(x: f64, w: &[f64]) -> f64 {
    let cells = vec![
        {
            let pair = (w[0] * x, 2.0);
            pair.0 * pair.1
        },
        1.5,
    ];
    let mut s = 0.0;
    for _ in 0..2 {
        let big = || {
            let (n,) = (w.iter().filter(|v| **v > 1.0).map(|v| v * x).sum::<f64>(),);
            n
        };
        s += big();
    }
    cells[0] * cells[1] + s
}

#[test]
fn tuples_and_filtered_sums_in_nested_blocks() {
    for (x, w) in [(0.5, [2.0, 0.5, 3.0]), (-1.5, [0.25, 1.25, -2.0])] {
        let (value, (gx, gw)) = tuple_and_filter_in_blocks_grad(x, &w);
        assert_bits("value", value, tuple_and_filter_in_blocks(x, &w));
        // f = 3 w₀ x + 2 x Σ_{wᵢ > 1} wᵢ.
        let big: f64 = w.iter().filter(|v| **v > 1.0).sum();
        assert_close("d/dx", gx, 3.0 * w[0] + 2.0 * big, 1e-13, 1e-13);
        for i in 0..3 {
            let want = if i == 0 { 3.0 * x } else { 0.0 } + if w[i] > 1.0 { 2.0 * x } else { 0.0 };
            assert_close("d/dw", gw[i], want, 1e-13, 1e-13);
        }
    }
}
