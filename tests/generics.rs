//! Functions generic over their float type, `T: num_traits::Float`,
//! differentiated once and called at `f64` and at `f32`.
//!
//! Every gradient is compared with one derived by hand on paper, at several
//! points, in both types (to a tolerance scaled by the type's epsilon: the
//! two sides round differently); the value returned by `f_grad` must be
//! bit-for-bit the function's own, in both types.

use gradmacro::differentiate;
use num_traits::{Float, FloatConst};
use std::fmt::Debug;

/// Agreement of a generated and a hand-derived derivative, in `T`'s own
/// precision.
#[track_caller]
fn assert_near<T: Float + Debug>(what: &str, got: T, want: T) {
    let (g, w) = (got.to_f64().unwrap(), want.to_f64().unwrap());
    let tol = T::epsilon().to_f64().unwrap() * 256.0 * w.abs().max(1.0);
    assert!(
        (g - w).abs() <= tol,
        "{what}: got {g:e}, want {w:e} (tolerance {tol:e})"
    );
}

#[track_caller]
fn assert_all_near<T: Float + Debug>(what: &str, got: &[T], want: &[T]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert_near(&format!("{what}[{i}]"), g, w);
    }
}

#[track_caller]
fn assert_bits<T: Float + Debug>(what: &str, got: T, want: T) {
    assert!(
        got.to_f64().unwrap().to_bits() == want.to_f64().unwrap().to_bits(),
        "{what}: got {got:?}, expected exactly {want:?}"
    );
}

fn c<T: Float>(v: f64) -> T {
    T::from(v).unwrap()
}

// ---------------------------------------------------------------------------
// Scalars, constants, bounds.
// ---------------------------------------------------------------------------

/// `x² y + 2.5 sin y - 1`: d/dx = 2xy, d/dy = x² + 2.5 cos y.
#[differentiate]
fn poly<T: Float>(x: T, y: T) -> T {
    x * x * y + T::from(2.5).unwrap() * y.sin() - T::one()
}

fn check_poly<T: Float + Debug>() {
    for (x, y) in [(1.5, 0.25), (-0.75, 2.0), (3.0, -1.25)] {
        let (x, y): (T, T) = (c(x), c(y));
        let (v, (dx, dy)) = poly_grad(x, y);
        assert_bits("poly value", v, poly(x, y));
        assert_near("dpoly/dx", dx, c::<T>(2.0) * x * y);
        assert_near("dpoly/dy", dy, x * x + c::<T>(2.5) * y.cos());
        let (ax, ay) = poly_adjoint(x, y, c(-1.75));
        assert_near("adjoint x", ax, c::<T>(-1.75) * dx);
        assert_near("adjoint y", ay, c::<T>(-1.75) * dy);
        let (mut bx, mut by) = (T::one(), T::zero());
        poly_adjoint_acc(x, y, T::one(), &mut bx, &mut by);
        assert_near("acc x", bx, T::one() + dx);
        assert_near("acc y", by, dy);
    }
}

#[test]
fn scalar_function_at_f64_and_f32() {
    check_poly::<f64>();
    check_poly::<f32>();
    // Explicit instantiation, as the API promises.
    let (v, (dx, _)) = poly_grad::<f32>(2.0, 0.5);
    assert_bits("turbofish", v, poly(2.0f32, 0.5f32));
    assert_near("turbofish dx", dx, 2.0f32);
}

/// The bound in a `where` clause, with an extra bound (`Debug`), the float
/// trait written as a full path; constants of every kind `T` offers:
/// `T::zero()`, `T::epsilon()`, `T::infinity()`, `T::max_value()`,
/// `T::from(i).unwrap()` for an integer `i`.
///
/// f = Σ_{i<n} (i+1) x² + max(x, ε) + min(y, ∞) · 1 + (y < max ⇒ 0)
///   d/dx = Σ (i+1) 2x + [x ≥ ε],  d/dy = 1.
#[differentiate]
fn constants<T>(x: T, y: T, n: usize) -> T
where
    T: num_traits::Float + Debug,
{
    let mut s = T::zero();
    for i in 0..n {
        s = s + T::from(i + 1).unwrap() * x.powi(2);
    }
    let big = if y < T::max_value() {
        T::zero()
    } else {
        T::nan()
    };
    s + x.max(T::epsilon()) + y.min(T::infinity()) + big
}

fn check_constants<T: Float + Debug>() {
    for (x, y, n) in [(0.5, 1.0, 3usize), (-2.0, -0.5, 1), (1.25, 4.0, 0)] {
        let (x, y): (T, T) = (c(x), c(y));
        let (v, (dx, dy)) = constants_grad(x, y, n);
        assert_bits("constants value", v, constants(x, y, n));
        let tri = T::from(n * (n + 1) / 2).unwrap();
        let kink = if x >= T::epsilon() {
            T::one()
        } else {
            T::zero()
        };
        assert_near("dconstants/dx", dx, tri * c::<T>(2.0) * x + kink);
        assert_near("dconstants/dy", dy, T::one());
    }
}

#[test]
fn where_clause_and_constants() {
    check_constants::<f64>();
    check_constants::<f32>();
}

/// `FloatConst` constants and the path form of a method (`T::sqrt(x)`):
/// f = sin(π x) / √2 + x³ / 3 + √x,
/// f' = π cos(π x) / √2 + x² + 1 / (2 √x).
#[differentiate]
fn wave<T: Float + FloatConst>(x: T) -> T {
    (T::PI() * x).sin() * T::FRAC_1_SQRT_2() + x.powi(3) / T::from(3).unwrap() + T::sqrt(x)
}

fn check_wave<T: Float + FloatConst + Debug>() {
    for x in [0.25, 1.0, 2.5] {
        let x: T = c(x);
        let (v, d) = wave_grad(x);
        assert_bits("wave value", v, wave(x));
        let want = T::PI() * (T::PI() * x).cos() * T::FRAC_1_SQRT_2()
            + x * x
            + T::one() / (c::<T>(2.0) * x.sqrt());
        assert_near("dwave/dx", d, want);
    }
}

#[test]
fn float_const_bound() {
    check_wave::<f64>();
    check_wave::<f32>();
}

/// Methods with several operands and a branch:
/// x ≥ 0: f = fma(x, y, 1) + hypot(x, y) + atan2(y, x)
/// x < 0: f = exp(x) · y
#[differentiate]
fn methods<T: Float>(x: T, y: T) -> T {
    if x >= T::zero() {
        x.mul_add(y, T::one()) + x.hypot(y) + y.atan2(x)
    } else {
        x.exp() * y
    }
}

fn check_methods<T: Float + Debug>() {
    for (x, y) in [(0.5, 1.5), (2.0, -0.75), (-1.0, 0.5), (-0.25, -2.0)] {
        let (x, y): (T, T) = (c(x), c(y));
        let (v, (dx, dy)) = methods_grad(x, y);
        assert_bits("methods value", v, methods(x, y));
        let (wx, wy) = if x >= T::zero() {
            let r = x.hypot(y);
            let r2 = x * x + y * y;
            (y + x / r - y / r2, x + y / r + x / r2)
        } else {
            (x.exp() * y, x.exp())
        };
        assert_near("dmethods/dx", dx, wx);
        assert_near("dmethods/dy", dy, wy);
    }
}

#[test]
fn methods_and_branches() {
    check_methods::<f64>();
    check_methods::<f32>();
}

// ---------------------------------------------------------------------------
// Arrays, loops, calls.
// ---------------------------------------------------------------------------

/// Softplus of each `w_i x`, summed, in a loop with a branch (the stable
/// form): d/dx = Σ w_i σ(w_i x), d/dw_i = x σ(w_i x).
#[differentiate]
fn softplus<T>(x: T, w: &[T]) -> T
where
    T: Float,
{
    let mut s = T::zero();
    for wi in w.iter() {
        let z = *wi * x;
        if z > T::zero() {
            s = s + z + (-z).exp().ln_1p();
        } else {
            s = s + z.exp().ln_1p();
        }
    }
    s
}

fn sigmoid<T: Float>(z: T) -> T {
    T::one() / (T::one() + (-z).exp())
}

fn check_softplus<T: Float + Debug>() {
    let w: Vec<T> = [0.5, -1.25, 2.0, 0.0, -0.3].iter().map(|&v| c(v)).collect();
    for x in [0.75, -1.5, 2.25] {
        let x: T = c(x);
        let (v, (dx, dw)) = softplus_grad(x, &w);
        assert_bits("softplus value", v, softplus(x, &w));
        let want_dx = w.iter().fold(T::zero(), |a, &wi| a + wi * sigmoid(wi * x));
        assert_near("dsoftplus/dx", dx, want_dx);
        let want_dw: Vec<T> = w.iter().map(|&wi| x * sigmoid(wi * x)).collect();
        assert_all_near("dsoftplus/dw", &dw, &want_dw);
        let mut acc_x = T::zero();
        let mut acc_w = vec![T::zero(); w.len()];
        softplus_adjoint_acc(x, &w, T::one(), &mut acc_x, &mut acc_w);
        assert_near("acc x", acc_x, dx);
        assert_all_near("acc w", &acc_w, &dw);
    }
}

#[test]
fn arrays_loops_branches() {
    check_softplus::<f64>();
    check_softplus::<f32>();
}

/// `inner(x, w) = Σ w_i sin(x + i)`, via a `fold`.
#[differentiate]
fn inner<T: Float>(x: T, w: &[T]) -> T {
    w.iter().enumerate().fold(T::zero(), |acc, (i, &wi)| {
        acc + wi * (x + T::from(i).unwrap()).sin()
    })
}

/// A generic differentiated function calling another, with and without a
/// turbofish: outer = inner(x, w) · x + inner(x², w).
#[differentiate]
fn outer<T: Float>(x: T, w: &[T]) -> T {
    inner(x, w) * x + inner::<T>(x * x, w)
}

fn check_outer<T: Float + Debug>() {
    let w: Vec<T> = [1.5, -0.5, 0.25].iter().map(|&v| c(v)).collect();
    let inner_at = |x: T| -> (T, T, Vec<T>) {
        // value, d/dx, d/dw by hand
        let mut v = T::zero();
        let mut dx = T::zero();
        let mut dw = Vec::new();
        for (i, &wi) in w.iter().enumerate() {
            let a = x + T::from(i).unwrap();
            v = v + wi * a.sin();
            dx = dx + wi * a.cos();
            dw.push(a.sin());
        }
        (v, dx, dw)
    };
    for x in [0.3, -1.1, 1.7] {
        let x: T = c(x);
        let (v, (dx, dw)) = outer_grad(x, &w);
        assert_bits("outer value", v, outer(x, &w));
        let (i1, i1x, i1w) = inner_at(x);
        let (_, i2x, i2w) = inner_at(x * x);
        assert_near("douter/dx", dx, i1x * x + i1 + i2x * c::<T>(2.0) * x);
        let want_dw: Vec<T> = i1w.iter().zip(&i2w).map(|(&a, &b)| a * x + b).collect();
        assert_all_near("douter/dw", &dw, &want_dw);
    }
}

#[test]
fn generic_calls_generic() {
    check_outer::<f64>();
    check_outer::<f32>();
}

// ---------------------------------------------------------------------------
// Forward mode, Hessians, vector outputs.
// ---------------------------------------------------------------------------

/// f = x³ y + sin(x y): ∇f = (3x² y + y cos(xy), x³ + x cos(xy)),
/// H = [[6xy − y² sin, 3x² + cos − xy sin], [., −x² sin]].
#[differentiate(tangent, hessian)]
fn curvy<T: Float>(x: T, y: T) -> T {
    x.powi(3) * y + (x * y).sin()
}

fn check_curvy<T: Float + Debug>() {
    for (x, y) in [(0.5, 1.5), (-1.25, 0.75), (2.0, -0.5)] {
        let (x, y): (T, T) = (c(x), c(y));
        let (s, co) = ((x * y).sin(), (x * y).cos());
        let gx = c::<T>(3.0) * x * x * y + y * co;
        let gy = x.powi(3) + x * co;
        let hxx = c::<T>(6.0) * x * y - y * y * s;
        let hxy = c::<T>(3.0) * x * x + co - x * y * s;
        let hyy = -x * x * s;
        let (tx, ty): (T, T) = (c(0.25), c(-2.0));
        let (v, d) = curvy_tangent(x, y, tx, ty);
        assert_bits("curvy tangent value", v, curvy(x, y));
        assert_near("curvy tangent", d, gx * tx + gy * ty);
        let (v, g, h) = curvy_hessian(x, y);
        assert_bits("curvy hessian value", v, curvy(x, y));
        assert_all_near("curvy gradient", &g, &[gx, gy]);
        assert_all_near("curvy H row 0", &h[0], &[hxx, hxy]);
        assert_all_near("curvy H row 1", &h[1], &[hxy, hyy]);
        let (_, _, hv) = curvy_hvp(x, y, &[tx, ty]);
        assert_all_near("curvy Hv", &hv, &[hxx * tx + hxy * ty, hxy * tx + hyy * ty]);
    }
}

#[test]
fn tangent_and_hessian_flags() {
    check_curvy::<f64>();
    check_curvy::<f32>();
}

/// A vector output: (x y, x + y²); J = [[y, x], [1, 2y]].
#[differentiate]
fn pair<T: Float>(x: T, y: T) -> [T; 2] {
    [x * y, x + y * y]
}

fn check_pair<T: Float + Debug>() {
    for (x, y) in [(0.5, 1.5), (-2.0, 0.25)] {
        let (x, y): (T, T) = (c(x), c(y));
        let (v, j) = pair_jacobian(x, y);
        assert_eq!(v, pair(x, y));
        assert_all_near("J row 0", &j[0], &[y, x]);
        assert_all_near("J row 1", &j[1], &[T::one(), c::<T>(2.0) * y]);
        let (ax, ay) = pair_adjoint(x, y, &[c(2.0), c(-1.0)]);
        assert_near("Jᵀw x", ax, c::<T>(2.0) * y - T::one());
        assert_near("Jᵀw y", ay, c::<T>(2.0) * x - c::<T>(2.0) * y);
    }
}

#[test]
fn vector_output() {
    check_pair::<f64>();
    check_pair::<f32>();
}

/// A method generic in its float type, reading an `f64` field.
pub struct Gain {
    pub k: f64,
}
impl Gain {
    #[differentiate]
    pub fn m<T: Float>(&self, x: T) -> T {
        x * x * T::from(self.k).unwrap()
    }
}
/// `wrt(..)` naming a generic float parameter.
#[differentiate(wrt(x))]
fn generic_wrt<T: Float>(x: T, w: &[T]) -> T {
    let mut s = T::zero();
    for wi in w.iter() {
        s = s + *wi * x.sin();
    }
    s
}
#[test]
fn a_generic_method_and_wrt_of_a_generic_parameter() {
    let s = Gain { k: 3.0 };
    assert_eq!(s.m_grad(2.0f64), (12.0, 12.0));
    assert_eq!(s.m_grad(2.0f32), (12.0, 12.0));
    let (v, g) = generic_wrt_grad(0.5f32, &[1.0, 2.0]);
    assert_eq!(v, generic_wrt(0.5f32, &[1.0, 2.0]));
    assert!((g - 3.0 * 0.5f32.cos()).abs() < 1e-6);
}

/// The README's example, as written there.
#[differentiate]
fn readme_loss<T: Float>(x: T, w: &[T]) -> T {
    let mut s = T::zero();
    for (i, wi) in w.iter().enumerate() {
        s = s + *wi * (x * T::from(i + 1).unwrap()).sin();
    }
    s * T::from(0.5).unwrap() + x.powi(2)
}

#[test]
fn readme_example() {
    let w = [1.0, -2.0];
    let x = 1.5f64;
    let (value, (dx, dw)) = readme_loss_grad(x, &w);
    assert_eq!(value.to_bits(), readme_loss(x, &w).to_bits());
    let want_dx = 0.5 * (w[0] * x.cos() + 2.0 * w[1] * (2.0 * x).cos()) + 2.0 * x;
    assert!((dx - want_dx).abs() < 1e-12);
    assert!((dw[0] - 0.5 * x.sin()).abs() < 1e-12 && (dw[1] - 0.5 * (2.0 * x).sin()).abs() < 1e-12);
    let (value32, (dx32, _)) = readme_loss_grad::<f32>(1.5, &[1.0, -2.0]);
    assert_eq!(
        value32.to_bits(),
        readme_loss(1.5f32, &[1.0, -2.0]).to_bits()
    );
    assert!((dx32 as f64 - want_dx).abs() < 1e-4);
}

/// A generic helper writing into an output buffer, called twice with the
/// caller's buffer; a generic vector output bound as `Vec<T>`; a constant
/// tuple element assigned in a branch and read by the reverse sweep. After
/// the two calls `ob = [x, x²]`; `h` gives `[x, x y]`; the branch gives
/// `p = 2x` when `x < 1` else `x`. f = x + x² + x + x y + p:
/// df/dx = 2 + 2x + y + (2 if x < 1 else 1), df/dy = x.
#[differentiate]
fn scale_into<T: Float>(x: T, y: T, out: &mut [T]) {
    out[0] = x * y;
    out[1] = out[1] * x;
}
#[differentiate]
fn two<T: Float>(x: T, y: T) -> Vec<T> {
    vec![x, x * y]
}
#[differentiate]
fn buffers_and_outputs<T: Float>(x: T, y: T) -> T {
    let mut ob = vec![T::one(), T::one()];
    scale_into(x, x, &mut ob);
    scale_into(x, T::one(), &mut ob);
    let v: Vec<T> = two(x, y);
    let (p,) = (if x < T::one() {
        let pair = (x, T::from(2.0).unwrap());
        pair.0 * pair.1
    } else {
        x
    },);
    ob[0] + ob[1] + v[0] + v[1] + p
}

fn check_buffers_and_outputs<T: Float + Debug>() {
    for (x, y) in [(0.5, 1.5), (-2.0, 0.25), (1.75, -0.5)] {
        let (x, y): (T, T) = (c(x), c(y));
        let (value, (dx, dy)) = buffers_and_outputs_grad(x, y);
        assert_bits("value", value, buffers_and_outputs(x, y));
        let branch = if x < T::one() { c(2.0) } else { T::one() };
        assert_near("d/dx", dx, c::<T>(2.0) + c::<T>(2.0) * x + y + branch);
        assert_near("d/dy", dy, x);
    }
}

#[test]
fn generic_output_buffers_vector_calls_and_branch_constants() {
    check_buffers_and_outputs::<f64>();
    check_buffers_and_outputs::<f32>();
}

/// A generic helper called with constant float arguments (`T::from(3.0)
/// .unwrap()`, a local annotated `T`), under `tangent` and `hessian`, whose
/// tangent for them is zero; a typed constant assigned in a loop and read by
/// the reverse sweep. With k = 0.5: f = Σ_{i<2} (3 w₀ + k w₁) x + x² k,
/// df/dx = 2 (3 w₀ + k w₁) + 2 x k, df/dw = (6x, 2 k x), d²f/dx² = 2k.
#[differentiate(tangent, hessian)]
fn weigh<T: Float>(a: T, w: &[T]) -> T {
    a * w[0]
}
#[differentiate(tangent, hessian)]
fn constant_arguments<T: Float>(x: T, w: &[T]) -> T {
    let k: T = T::from(0.5).unwrap();
    let mut s = T::zero();
    for _ in 0..2 {
        let e: T = T::from(0.5).unwrap();
        s = s
            + (weigh(T::from(3.0).unwrap(), w) + weigh(k, &w[1..])) * x
            + x * x * e / T::from(2.0).unwrap();
    }
    s
}

fn check_constant_arguments<T: Float + Debug>() {
    for (x, w0, w1) in [(0.5, 1.5, -1.0), (-2.0, 0.25, 3.0)] {
        let (x, w): (T, [T; 2]) = (c(x), [c(w0), c(w1)]);
        let (value, (dx, dw)) = constant_arguments_grad(x, &w);
        assert_bits("value", value, constant_arguments(x, &w));
        let k: T = c(0.5);
        let two: T = c(2.0);
        assert_near(
            "d/dx",
            dx,
            two * (c::<T>(3.0) * w[0] + k * w[1]) + two * x * k,
        );
        assert_all_near("d/dw", &dw, &[c::<T>(6.0) * x, two * k * x]);
        let (_, t) = constant_arguments_tangent(x, &w, T::one(), &[T::zero(), T::zero()]);
        assert_near("tangent", t, dx);
        let (_, _, h) = constant_arguments_hessian(x, &w);
        assert_near("d²f/dx²", h[0][0], two * k);
        assert_near("d²f/dx dw₀", h[0][1], c(6.0));
    }
}

#[test]
fn constant_float_arguments_of_generic_calls() {
    check_constant_arguments::<f64>();
    check_constant_arguments::<f32>();
}

/// Shrunk from the differential test's generic programs: a count made a
/// float by `T::from(..).unwrap()` beside differentiated elements; an
/// element of a constant float buffer overwritten in a branch (its old
/// value recorded); a typed constant array and a float parameter assigned
/// in a branch. With c = #{wᵢ < 1}: f = (Σw + x + c) · (z' − 1) · Σcells
/// + 1.5 + x, z' = 2 when w has more than 1 element, else z.
#[differentiate]
#[allow(clippy::needless_range_loop, clippy::useless_vec)]
fn counted<T: Float>(x: T, w: &[T], mut z: T) -> T {
    let vals = [
        w.iter().fold(T::zero(), |a, b| a + *b),
        x,
        T::from(w.iter().filter(|q| **q < T::one()).count()).unwrap(),
    ];
    let mut cells = vec![T::from(0.5).unwrap(); 3];
    if w.len() > 1 {
        cells[0] = cells[0] / T::from(2.0).unwrap();
        z = T::from(2).unwrap();
    }
    let fixed: [T; 3] = [T::from(1.5).unwrap(), x, T::zero()];
    let mut s = T::zero();
    for i in 0..3 {
        s = s + vals[i];
    }
    s * (z - T::one()) * (cells[0] + cells[1] + cells[2]) + fixed[0] + fixed[1]
}

fn check_counted<T: Float + Debug>() {
    for (x, w, z) in [(0.5, vec![1.5, -1.0], 3.0), (-2.0, vec![0.25], 0.75)] {
        let (x, z): (T, T) = (c(x), c(z));
        let w: Vec<T> = w.into_iter().map(c).collect();
        let (value, (dx, dw, dz)) = counted_grad(x, &w, z);
        assert_bits("value", value, counted(x, &w, z));
        let many = w.len() > 1;
        let cells: T = if many { c(1.25) } else { c(1.5) };
        let zz = if many { c(2.0) } else { z };
        let k = (zz - T::one()) * cells;
        assert_near("d/dx", dx, k + T::one());
        assert_all_near("d/dw", &dw, &vec![k; w.len()]);
        let sum = w.iter().fold(T::zero(), |a, b| a + *b)
            + x
            + c(w.iter().filter(|q| **q < T::one()).count() as f64);
        assert_near("d/dz", dz, if many { T::zero() } else { sum * cells });
    }
}

#[test]
fn counts_constant_buffers_and_branch_assignments_in_generic_code() {
    check_counted::<f64>();
    check_counted::<f32>();
}

/// Shrunk from the differential test: constants a closure computes, read by
/// the reverse sweep of a function that may `return` early (what the
/// reverse sweep reads is then declared before the forward sweep, as a zero
/// of `T`). f = x · max(k, 2) · k / 2 = x k, k = cos 0.5 (x when x > 3).
#[differentiate]
#[allow(clippy::needless_late_init, clippy::never_loop)]
fn early_constants<T: Float>(x: T) -> T {
    let s: T;
    s = T::from(0.5).unwrap().cos();
    let big = || s.max(T::from(2.0).unwrap());
    let b = big();
    let mut tries = 0;
    loop {
        tries += 1;
        if tries > 5 {
            break;
        }
        if x > T::from(3.0).unwrap() {
            return x;
        }
        break;
    }
    let k = s;
    x * b * w_sum(&[k, k]) * T::from(0.5).unwrap()
}
#[differentiate]
fn w_sum<T: Float>(w: &[T]) -> T {
    w[0] + w[1] - w[1]
}

#[test]
fn generic_constants_before_an_early_return() {
    for x in [0.5f64, -1.25, 4.0] {
        let (value, dx) = early_constants_grad(x);
        assert_bits("value", value, early_constants(x));
        let k = 0.5f64.cos();
        assert_near("d/dx", dx, if x > 3.0 { 1.0 } else { k });
    }
    let (_, dx) = early_constants_grad(0.5f32);
    assert_near("d/dx f32", dx, 0.5f32.cos());
}

/// Shrunk from the differential test: a constant array a call returns,
/// written `[T; 2]`, read by the reverse sweep of a function that may
/// `return` early. f = (w₀ + w₁²) y, or 1 when n > 1.
#[differentiate(wrt(y))]
fn constant_array_call<T: Float>(w: &[T], n: usize, y: T) -> T {
    let c: [T; 2] = pair(w[0], w[1]);
    if n > 1 {
        return T::one();
    }
    c[1] * y
}

#[test]
fn a_constant_array_before_an_early_return() {
    for (w, n, y) in [
        ([0.5, 1.5], 0, 2.0),
        ([-1.0, 0.25], 1, -0.5),
        ([2.0, 2.0], 3, 1.0),
    ] {
        let (value, dy) = constant_array_call_grad(&w, n, y);
        assert_bits("value", value, constant_array_call(&w, n, y));
        assert_near("d/dy", dy, if n > 1 { 0.0 } else { w[0] + w[1] * w[1] });
    }
}

/// Shrunk from the differential test: a constant chosen by an `if` whose
/// condition reads `x`, before which the function may `return`.
/// f = ⌊p⌋ x + atan p, p = 3 when cos x > 0.6 else 2.5; x when x > 5.
#[differentiate]
fn branch_constant<T: Float>(x: T) -> T {
    for _ in 0..=3 {
        if x > T::from(5.0).unwrap() {
            return x;
        }
    }
    let p = if x.cos() > T::from(0.6).unwrap() {
        T::from(std::f64::consts::PI).unwrap().floor()
    } else {
        T::from(2.5).unwrap()
    };
    p.floor() * x + p.atan()
}

#[test]
fn a_constant_chosen_by_a_branch_before_an_early_return() {
    for (x, want) in [(0.5, 3.0), (2.0, 2.0), (6.0, 1.0)] {
        let (value, dx) = branch_constant_grad(x);
        assert_bits("value", value, branch_constant(x));
        assert_near("d/dx", dx, want);
    }
}

/// Shrunk from the differential test (program 900288): constant arrays of a
/// float excluded by `wrt`, `[y, y]` and `[y; 2]`, filled by a
/// differentiated helper, before which the function may `return`.
/// `fill(a, out)`: out = [a, a + 1]. f = x (y + 1)², or y when y < 1.25.
#[differentiate(wrt(x))]
fn constant_arrays_of_a_parameter<T: Float>(x: T, y: T) -> T {
    if y < T::from(1.25).unwrap() {
        return y;
    }
    let mut a = [y, y];
    let mut b = [y; 2];
    fill(y, &mut a);
    fill(y, &mut b);
    x * a[1] * b[1]
}
#[differentiate]
fn fill<T: Float>(v: T, out: &mut [T]) {
    for o in out.iter_mut() {
        *o = v;
    }
    out[1] = out[1] + T::one();
}

/// A caller differentiating with respect to `y` too: the callee's pullback
/// over every float parameter repeats a differentiated `y` (`[y; 2]`).
#[differentiate]
fn calls_constant_arrays_of_a_parameter<T: Float>(x: T, y: T) -> T {
    constant_arrays_of_a_parameter(x, y) * y
}

#[test]
fn constant_arrays_of_a_parameter_before_an_early_return() {
    for (x, y) in [(0.5f64, 2.0), (-1.5, 1.0), (3.0, 1.75)] {
        let (value, (dx, dy)) = calls_constant_arrays_of_a_parameter_grad(x, y);
        assert_bits("value", value, calls_constant_arrays_of_a_parameter(x, y));
        let (f, df_dx, df_dy) = if y < 1.25 {
            (y, 0.0, 1.0)
        } else {
            (
                x * (y + 1.0) * (y + 1.0),
                (y + 1.0) * (y + 1.0),
                2.0 * x * (y + 1.0),
            )
        };
        assert_near("d/dx", dx, df_dx * y);
        assert_near("d/dy", dy, df_dy * y + f);
    }
    for (x, y) in [(0.5f64, 2.0), (-1.5, 1.0), (3.0, 1.75)] {
        let (value, dx) = constant_arrays_of_a_parameter_grad(x, y);
        assert_bits("value", value, constant_arrays_of_a_parameter(x, y));
        assert_near(
            "d/dx",
            dx,
            if y < 1.25 { 0.0 } else { (y + 1.0) * (y + 1.0) },
        );
    }
}

/// Shrunk from the differential test (program 1015368): an element of a
/// constant float buffer passed to a differentiated callee. Its tangent and
/// adjoint slots take zeros of `T`, which has no `Default`.
/// f = x · scaled(buf₀, x) = x · buf₀ x² with buf₀ = 1.5: f' = 4.5 x².
#[differentiate(tangent)]
#[allow(clippy::useless_vec)]
fn buffer_element_argument<T: Float>(x: T) -> T {
    let mut buf = vec![T::from(0.5).unwrap(); 3];
    buf[0] = buf[0] * T::from(3.0).unwrap();
    x * scaled(buf[0], x)
}
#[differentiate(tangent)]
fn scaled<T: Float>(c: T, x: T) -> T {
    c * x * x
}

#[test]
fn an_element_of_a_constant_buffer_as_an_argument() {
    for x in [0.5f64, -1.25, 2.0] {
        let want = 4.5 * x * x;
        let (value, dx) = buffer_element_argument_grad(x);
        assert_bits("value", value, buffer_element_argument(x));
        assert_near("d/dx", dx, want);
        let (value, t) = buffer_element_argument_tangent(x, 2.0);
        assert_bits("tangent value", value, buffer_element_argument(x));
        assert_near("tangent", t, 2.0 * want);
    }
}

/// Shrunk from the differential test (program 1104198): a copy of a
/// constant array parameter of known length, `*w`, declared before the
/// forward sweep (the body ends in `return`). It is `[T; 5]` of zeros there.
/// f = x w₁.
#[differentiate(wrt(x))]
#[allow(clippy::needless_return)]
fn copied_array_parameter<T: Float>(_n: usize, x: T, w: &[T; 5]) -> T {
    let tmp = *w;
    return x * tmp[1];
}

#[test]
fn a_copy_of_a_constant_array_parameter() {
    let w = [0.5, -1.5, 2.0, 0.25, 3.0];
    for x in [0.5f64, -1.25, 2.0] {
        let (value, dx) = copied_array_parameter_grad(0, x, &w);
        assert_bits("value", value, copied_array_parameter(0, x, &w));
        assert_near("d/dx", dx, w[1]);
    }
}

#[differentiate(tangent, hessian)]
fn product_of<T: Float>(x: T, y: T) -> T {
    x * y
}

#[differentiate(tangent, hessian)]
fn square_of<T: Float>(x: T) -> T {
    x * x
}

/// Shrunk from the differential test (program 1312868): a constant
/// argument that is itself a call of a generic float constant,
/// `square_of(T::from(2.5).unwrap())`, got `Default::default()` for its
/// tangent, which `T` is not. f = 6.25 x y + y.
#[differentiate(tangent, hessian)]
fn call_of_a_constant<T: Float>(x: T, y: T) -> T {
    product_of(square_of(T::from(2.5).unwrap()), x) * y + y
}

#[test]
fn a_call_of_a_constant_as_an_argument() {
    for (x, y) in [(0.5f64, 1.5), (-1.25, 0.75), (2.0, -3.0)] {
        let (value, (dx, dy)) = call_of_a_constant_grad(x, y);
        assert_bits("value", value, call_of_a_constant(x, y));
        assert_near("d/dx", dx, 6.25 * y);
        assert_near("d/dy", dy, 6.25 * x + 1.0);
        let (_, t) = call_of_a_constant_tangent(x, y, 1.0, 2.0);
        assert_near("tangent", t, 6.25 * y + 2.0 * (6.25 * x + 1.0));
        let (_, _, h) = call_of_a_constant_hessian(x, y);
        assert_near("d2/dxdy", h[0][1], 6.25);
        let (v32, (dx32, _)) = call_of_a_constant_grad(x as f32, y as f32);
        assert_bits("f32 value", v32, call_of_a_constant(x as f32, y as f32));
        assert!((dx32 - 6.25 * y as f32).abs() < 1e-5);
    }
}

/// Shrunk from the differential test (program 1603028): a constant argument
/// that is the least of an iterator of generic float constants,
/// `(0..2).map(|_| T::from(1.5).unwrap()).min_by(..).unwrap_or(T::zero())`,
/// got `Default::default()` for its tangent. f = 1.5 x y + y.
#[differentiate(tangent, hessian)]
fn least_of_constants<T: Float>(x: T, y: T) -> T {
    product_of(
        x,
        (0..2)
            .map(|_| T::from(1.5).unwrap())
            .min_by(|p, q| p.partial_cmp(q).unwrap())
            .unwrap_or(T::zero()),
    ) * y
        + y
}

#[test]
fn the_least_of_constants_as_an_argument() {
    for (x, y) in [(0.5f64, 1.5), (-1.25, 0.75), (2.0, -3.0)] {
        let (value, (dx, dy)) = least_of_constants_grad(x, y);
        assert_bits("value", value, least_of_constants(x, y));
        assert_near("d/dx", dx, 1.5 * y);
        assert_near("d/dy", dy, 1.5 * x + 1.0);
        let (_, t) = least_of_constants_tangent(x, y, 1.0, 2.0);
        assert_near("tangent", t, 1.5 * y + 2.0 * (1.5 * x + 1.0));
        let (_, _, h) = least_of_constants_hessian(x, y);
        assert_near("d2/dxdy", h[0][1], 1.5);
    }
}

/// Shrunk from the differential test (program 2401868): a constant bound in
/// a loop by a tuple pattern from a block (`let (y,) = ({ .. b.sin() },);`),
/// read by the reverse sweep only through float methods (`y.cbrt()`). Its
/// record was declared `Default::default()`, which `T` is not. With c =
/// tanh(cbrt(sin 1)), f = 2 x (1 − c)² below 1.64, 2 x above.
#[differentiate(wrt(x))]
fn tuple_of_a_block_in_a_loop<T: Float>(n: i32, mut x: T) -> T {
    for _ in 0..2 {
        let (y,) = ({
            let one = || T::one();
            let b: T = one();
            b.sin()
        },);
        if x > T::from(1.64).unwrap() {
            continue;
        }
        x = x - x * y.cbrt().tanh();
    }
    for _ in 0..n {}
    x + x
}

#[test]
fn a_tuple_of_a_block_read_by_float_methods() {
    let c = 1.0f64.sin().cbrt().tanh();
    for (x, want) in [
        (0.5f64, 2.0 * (1.0 - c) * (1.0 - c)),
        (-1.0, 2.0 * (1.0 - c) * (1.0 - c)),
        (3.0, 2.0),
    ] {
        let (value, dx) = tuple_of_a_block_in_a_loop_grad(2, x);
        assert_bits("value", value, tuple_of_a_block_in_a_loop(2, x));
        assert_near("d/dx", dx, want);
        let (v32, dx32) = tuple_of_a_block_in_a_loop_grad(2, x as f32);
        assert_bits("f32 value", v32, tuple_of_a_block_in_a_loop(2, x as f32));
        assert!((dx32 as f64 - want).abs() < 1e-5);
    }
}

/// Shrunk from the differential test (program 2512648): a constant argument
/// that is a block whose tail is a name it binds, `{ let (a,) =
/// (T::from(2.5).unwrap(),); a }`, got `Default::default()` for its tangent.
/// f = 2.5 x y + y.
#[differentiate(tangent, hessian)]
fn block_bound_constant<T: Float>(x: T, y: T) -> T {
    product_of(
        {
            let (a,) = (T::from(2.5).unwrap(),);
            a
        },
        x,
    ) * y
        + y
}

#[test]
fn a_block_binding_a_constant_as_an_argument() {
    for (x, y) in [(0.5f64, 1.5), (-1.25, 0.75), (2.0, -3.0)] {
        let (value, (dx, dy)) = block_bound_constant_grad(x, y);
        assert_bits("value", value, block_bound_constant(x, y));
        assert_near("d/dx", dx, 2.5 * y);
        assert_near("d/dy", dy, 2.5 * x + 1.0);
        let (_, t) = block_bound_constant_tangent(x, y, 1.0, 2.0);
        assert_near("tangent", t, 2.5 * y + 2.0 * (2.5 * x + 1.0));
        let (_, _, h) = block_bound_constant_hessian(x, y);
        assert_near("d2/dxdy", h[0][1], 2.5);
    }
}

/// Shrunk from the differential test (program 2814498): a constant argument
/// that is a block whose tail is a float method of a name it binds, negated,
/// `{ let (c,) = (T::from(0.3).unwrap().sin(),); -c.fract() }`, got
/// `Default::default()` for its tangent. f = -c x y + y, c = sin(0.3).
#[differentiate(tangent, hessian)]
fn block_method_of_a_bound_constant<T: Float>(x: T, y: T) -> T {
    product_of(
        {
            let (c,): (T,) = (T::from(0.3).unwrap().sin(),);
            -c.fract()
        },
        x,
    ) * y
        + y
}

#[test]
fn a_float_method_of_a_block_binding_as_an_argument() {
    let c = 0.3f64.sin();
    for (x, y) in [(0.5f64, 1.5), (-1.25, 0.75), (2.0, -3.0)] {
        let (value, (dx, dy)) = block_method_of_a_bound_constant_grad(x, y);
        assert_bits("value", value, block_method_of_a_bound_constant(x, y));
        assert_near("d/dx", dx, -c * y);
        assert_near("d/dy", dy, -c * x + 1.0);
        let (_, t) = block_method_of_a_bound_constant_tangent(x, y, 1.0, 2.0);
        assert_near("tangent", t, -c * y + 2.0 * (-c * x + 1.0));
        let (_, _, h) = block_method_of_a_bound_constant_hessian(x, y);
        assert_near("d2/dxdy", h[0][1], -c);
        assert_near("d2/dx2", h[0][0], 0.0);
    }
}

/// Shrunk from the differential test (program 1403483): a constant `Vec`
/// filled by `push` with generic floats, one element overwritten, before an
/// early `return`. The overwritten element's record is declared before the
/// forward sweep; it was `Default::default()`, which `T` is not.
/// f = 3.5 w₂ (1 when `flag`).
#[differentiate]
fn pushed_constants<T: Float>(flag: bool, w: &[T]) -> T {
    let buf: [T; 4] = [T::from(0.5).unwrap(); 4];
    let mut tmp = Vec::with_capacity(4);
    for _ in 0..4 {
        tmp.push(buf[2]);
    }
    tmp[2] = T::from(2.0).unwrap();
    if flag {
        return T::one();
    }
    tmp.iter().fold(T::zero(), |a, b| a + *b) * w[2]
}

#[test]
fn a_pushed_constant_buffer_before_an_early_return() {
    let w = [0.5, -1.5, 2.0];
    let (value, g) = pushed_constants_grad(false, &w);
    assert_bits("value", value, pushed_constants(false, &w));
    assert_eq!(g, vec![0.0, 0.0, 3.5]);
    let (value, g) = pushed_constants_grad(true, &w);
    assert_bits("value when flag", value, 1.0);
    assert_eq!(g, vec![0.0; 3]);
    let (value32, g32) = pushed_constants_grad(false, &[0.5f32, -1.5, 2.0]);
    assert_bits(
        "f32 value",
        value32,
        pushed_constants(false, &[0.5f32, -1.5, 2.0]),
    );
    assert_eq!(g32, vec![0.0, 0.0, 3.5]);
}

/// Shrunk from the differential test (program 3201253): a constant bound
/// through a block and a tuple, copied (`let t = acc;`) after an early
/// `return`, then read by a call argument. The copy is declared before the
/// forward sweep; it was `Default::default()`, which `T` is not.
/// f = 1 when `stop`, else x·(2.5 in radians) - Σw.
#[differentiate(tangent, hessian)]
#[allow(clippy::let_and_return)]
fn copied_constant_after_a_return<T: Float + for<'a> std::iter::Sum<&'a T>>(
    stop: bool,
    x: T,
    w: &[T],
) -> T {
    let (acc,) = ({
        let (q,): (T,) = (T::from(2.5).unwrap(),);
        {
            let iters1 = q;
            iters1
        }
    },);
    if stop {
        return T::one();
    }
    let t = acc;
    product_of(
        {
            let pair_s = (t, T::from(2.0).unwrap());
            let s = pair_s.0 * pair_s.1 * T::from(0.5).unwrap();
            s.to_radians()
        },
        x,
    ) - w.iter().sum::<T>()
}

#[test]
fn a_constant_copied_after_a_return() {
    let c = 2.5f64.to_radians();
    for stop in [false, true] {
        for (x, w) in [(0.5f64, [1.0, -2.0]), (-1.25, [0.3, 4.0])] {
            let (value, (dx, dw)) = copied_constant_after_a_return_grad(stop, x, &w);
            assert_bits("value", value, copied_constant_after_a_return(stop, x, &w));
            let (gx, gw) = if stop { (0.0, 0.0) } else { (c, -1.0) };
            assert_near("d/dx", dx, gx);
            assert_all_near("d/dw", &dw, &[gw, gw]);
            let (_, _, h) = copied_constant_after_a_return_hessian(stop, x, &w);
            assert!(h.iter().flatten().all(|h| *h == 0.0), "hessian {h:?}");
            let (v32, (dx32, _)) =
                copied_constant_after_a_return_grad(stop, x as f32, &[1.0f32, 2.0]);
            assert_bits(
                "value f32",
                v32,
                copied_constant_after_a_return(stop, x as f32, &[1.0, 2.0]),
            );
            assert_near("d/dx f32", dx32, gx as f32);
        }
    }
}

/// A differentiated callee in the closure of an adaptor over a passive array:
/// its tangent argument for the element is a zero of `T` (`T` need not be
/// `Default`). f = x + x · min_c (x² sin c) = x + x³ m, m = min_c sin(c²)
/// over c in w: f' = 1 + 3 x² m, the direction (tx) scaling it.
#[differentiate(tangent)]
fn scaled_sine<T: Float>(x: T, y: T) -> T {
    x * y.sin()
}

#[differentiate(wrt(x), tangent)]
fn least_scaled_sine<T: Float>(x: T, w: &[T]) -> T {
    let buf = w.iter().map(|v| *v * *v).collect::<Vec<T>>();
    x + x * buf
        .iter()
        .copied()
        .map(|c| scaled_sine(x * x, c))
        .fold(T::infinity(), T::min)
}

/// A function of `(x, w)` generic over `T`, with `wrt(x), tangent`: the
/// function, its `_grad` and its `_tangent`.
type InX<T> = (
    fn(T, &[T]) -> T,
    fn(T, &[T]) -> (T, T),
    fn(T, &[T], T) -> (T, T),
);

/// The tangent and the gradient in `x` of `f(x, w)` against `want(x)` at
/// three points, values bit for bit.
fn check_in_x<T: Float + Debug>((f, grad, tangent): InX<T>, w: &[T], want: impl Fn(T) -> T) {
    for x in [0.75, -1.25, 2.5] {
        let (x, tx): (T, T) = (c(x), c(-0.5));
        let (v, d) = tangent(x, w, tx);
        assert_bits("value", v, f(x, w));
        assert_near("tangent", d, want(x) * tx);
        let (v, dx) = grad(x, w);
        assert_bits("gradient's value", v, f(x, w));
        assert_near("gradient", dx, want(x));
    }
}

fn check_least_scaled_sine<T: Float + Debug>() {
    let w: Vec<T> = [0.5, -1.5, 2.0].iter().map(|v| c(*v)).collect();
    let m = w
        .iter()
        .map(|v| (*v * *v).sin())
        .fold(T::infinity(), T::min);
    let fns: InX<T> = (
        least_scaled_sine,
        least_scaled_sine_grad,
        least_scaled_sine_tangent,
    );
    check_in_x(fns, &w, |x| T::one() + c::<T>(3.0) * x * x * m);
}

#[test]
fn a_differentiated_call_on_the_elements_of_a_passive_array() {
    check_least_scaled_sine::<f64>();
    check_least_scaled_sine::<f32>();
}

/// The same through a reference: an element a loop binds by reference is
/// passed on as `*elem`. f = x Σ sin(c) over c in w: f' = Σ sin(c).
#[differentiate(wrt(x), tangent)]
fn sines_of_elements<T: Float>(x: T, w: &[T]) -> T {
    let mut acc = T::zero();
    for elem in w.iter() {
        acc = acc + scaled_sine(x, *elem);
    }
    acc
}

fn check_sines_of_elements<T: Float + Debug>() {
    let w: Vec<T> = [0.5, -1.5, 2.0].iter().map(|v| c(*v)).collect();
    let sum = w.iter().fold(T::zero(), |s, v| s + v.sin());
    let fns: InX<T> = (
        sines_of_elements,
        sines_of_elements_grad,
        sines_of_elements_tangent,
    );
    check_in_x(fns, &w, |_| sum);
}

#[test]
fn a_differentiated_call_on_a_dereferenced_element() {
    check_sines_of_elements::<f64>();
    check_sines_of_elements::<f32>();
}
