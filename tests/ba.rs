//! The bundle-adjustment (BA) objective of the ADBench benchmarks, written
//! from its definition the way numeric Rust writes it: views of the camera
//! slice, helpers that write into an output buffer (`rodrigues_rotate_point`,
//! `project`) or update it in place (`radial_distort`), a cross product
//! returning its array, `assert!`s on the sizes in the body.
//!
//! Definition (ADBench, `microsoft/ADBench` `src/cpp/shared/ba.h`; the Rust
//! port in `EnzymeAD/Enzyme` `enzyme/benchmarks/ReverseMode/ba/src/safe.rs`
//! shows the idiomatic Rust shape): a camera has 11 parameters
//! `[r1 r2 r3 C1 C2 C3 f u0 v0 k1 k2]` (Rodrigues rotation `r`, centre `C`,
//! focal length `f`, principal point `(u0, v0)`, radial distortion `k1, k2`).
//! For a point `X`, weight `w` and measured feature `m`:
//!
//! ```text
//! Xcam = R(r) (X − C)                      (Rodrigues; R = I + [r]× when r = 0)
//! p    = (Xcam_0 / Xcam_2, Xcam_1 / Xcam_2)
//! p    ← p (1 + k1 ‖p‖² + k2 ‖p‖⁴)
//! err  = w (f p + (u0, v0) − m)            (2 residuals)
//! w_err = 1 − w²
//! ```
//!
//! `compute_reproj_error` is a vector output: its `_jacobian` is the 2 × 15
//! Jacobian with respect to `(cam, x, w)`. `ba_objective` sums the squares of
//! every residual of several observations (cameras and points picked by an
//! `obs` table) and is differentiated with respect to the cameras, the points
//! and the weights. Both are compared with forward-mode dual numbers run
//! through an independent implementation (an explicit rotation matrix
//! `cos θ I + sin θ [n]× + (1 − cos θ) n nᵀ` instead of Rodrigues' formula
//! applied to the point) at seeded points, and at a zero rotation, where the
//! first-order branch is taken.
//!
//! The helpers carry no flag: `compute_reproj_error` calls `project`, which
//! has no `tangent`, so its Jacobian is taken by rows in reverse mode. The
//! arrays `cross` and `compute_reproj_error` return are bound without their
//! type (`let err = compute_reproj_error(..);`): indexing or lending them
//! tells they are arrays.

#![deny(warnings)]
#![deny(clippy::all)]
// Index loops are how the functions under test are written.
#![allow(clippy::needless_range_loop)]

use gradmacro::differentiate;

mod support;

use support::dual::{forward_gradient, Dual};
use support::rng::Rng;
use support::{assert_all_close, assert_bits, assert_close, D_OUT};

/// Parameters of one camera.
const N_CAM: usize = 11;

/// `Σ v_i²`.
#[differentiate]
fn sqsum(v: &[f64]) -> f64 {
    v.iter().map(|a| a * a).sum()
}

/// `a × b`.
#[differentiate]
fn cross(a: &[f64], b: &[f64]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// `pt` rotated by the angle-axis vector `rot`, into `rotated`.
#[differentiate]
fn rodrigues_rotate_point(rot: &[f64], pt: &[f64], rotated: &mut [f64]) {
    let sqtheta = sqsum(rot);
    if sqtheta != 0.0 {
        let theta = sqtheta.sqrt();
        let (sin, cos) = theta.sin_cos();
        let axis: Vec<f64> = rot.iter().map(|r| r / theta).collect();
        let axis_cross_pt = cross(&axis, pt);
        let along = axis.iter().zip(pt).map(|(a, p)| a * p).sum::<f64>() * (1.0 - cos);
        for i in 0..3 {
            rotated[i] = pt[i] * cos + axis_cross_pt[i] * sin + axis[i] * along;
        }
    } else {
        // First order in `rot`: the limit of the formula above.
        let rot_cross_pt = cross(rot, pt);
        for i in 0..3 {
            rotated[i] = pt[i] + rot_cross_pt[i];
        }
    }
}

/// Scales the projected point by the radial distortion factor, in place.
#[differentiate]
fn radial_distort(k: &[f64], proj: &mut [f64]) {
    let rsq = sqsum(proj);
    let l = 1.0 + k[0] * rsq + k[1] * rsq * rsq;
    proj[0] *= l;
    proj[1] *= l;
}

/// The image of `x` in camera `cam`, into `proj`.
#[differentiate]
fn project(cam: &[f64], x: &[f64], proj: &mut [f64]) {
    let rot = &cam[..3];
    let centre = &cam[3..6];
    let focal = cam[6];
    let principal = &cam[7..9];
    let distortion = &cam[9..];
    let relative: Vec<f64> = x.iter().zip(centre).map(|(a, c)| a - c).collect();
    let mut in_camera = [0.0; 3];
    rodrigues_rotate_point(rot, &relative, &mut in_camera);
    proj[0] = in_camera[0] / in_camera[2];
    proj[1] = in_camera[1] / in_camera[2];
    radial_distort(distortion, proj);
    proj[0] = proj[0] * focal + principal[0];
    proj[1] = proj[1] * focal + principal[1];
}

/// The weighted reprojection error of one observation.
#[differentiate(wrt(cam, x, w))]
fn compute_reproj_error(cam: &[f64], x: &[f64], w: f64, feat: &[f64]) -> [f64; 2] {
    assert_eq!(cam.len(), N_CAM);
    assert_eq!(x.len(), 3);
    assert_eq!(feat.len(), 2);
    let mut proj = [0.0; 2];
    project(cam, x, &mut proj);
    [w * (proj[0] - feat[0]), w * (proj[1] - feat[1])]
}

/// Zach's weight error `1 − w²`.
#[differentiate]
fn compute_zach_weight_error(w: f64) -> f64 {
    1.0 - w * w
}

/// The sum of the squares of every residual: two per observation `i`, of
/// camera `obs[2i]` and point `obs[2i + 1]`, and one per weight.
#[differentiate(wrt(cams, x, w))]
fn ba_objective(cams: &[f64], x: &[f64], w: &[f64], obs: &[usize], feats: &[f64]) -> f64 {
    let p = w.len();
    assert_eq!(obs.len(), 2 * p);
    assert_eq!(feats.len(), 2 * p);
    let mut total = 0.0;
    for (i, pair) in obs.chunks_exact(2).enumerate() {
        let cam = &cams[pair[0] * N_CAM..][..N_CAM];
        let point = &x[pair[1] * 3..][..3];
        let err = compute_reproj_error(cam, point, w[i], &feats[2 * i..2 * i + 2]);
        total += sqsum(&err);
    }
    for &wi in w {
        let e = compute_zach_weight_error(wi);
        total += e * e;
    }
    total
}

// ---------------------------------------------------------------------------
// The oracle: the same model on dual numbers, written independently.

impl<const N: usize> Dual<N> {
    fn cos(self) -> Self {
        self.chain(self.v.cos(), -self.v.sin())
    }

    fn sqrt(self) -> Self {
        let r = self.v.sqrt();
        self.chain(r, 0.5 / r)
    }
}

/// The two residuals of one observation, with the rotation as a matrix.
fn reproj_dual<const N: usize>(
    cam: &[Dual<N>],
    x: &[Dual<N>],
    w: Dual<N>,
    feat: &[f64],
) -> [Dual<N>; 2] {
    let r = [cam[0], cam[1], cam[2]];
    let d = [x[0] - cam[3], x[1] - cam[4], x[2] - cam[5]];
    let theta_sq = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
    let one = Dual::cst(1.0);
    let zero = Dual::cst(0.0);
    let rotation: [[Dual<N>; 3]; 3] = if theta_sq.v == 0.0 {
        // I + [r]×
        [[one, -r[2], r[1]], [r[2], one, -r[0]], [-r[1], r[0], one]]
    } else {
        let theta = theta_sq.sqrt();
        let n = [r[0] / theta, r[1] / theta, r[2] / theta];
        let (s, c) = (theta.sin(), theta.cos());
        let skew = [
            [zero, -n[2], n[1]],
            [n[2], zero, -n[0]],
            [-n[1], n[0], zero],
        ];
        let mut m = [[zero; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                let diag = if i == j { c } else { zero };
                m[i][j] = diag + s * skew[i][j] + (one - c) * n[i] * n[j];
            }
        }
        m
    };
    let y: Vec<Dual<N>> = rotation
        .iter()
        .map(|row| row[0] * d[0] + row[1] * d[1] + row[2] * d[2])
        .collect();
    let (u, v) = (y[0] / y[2], y[1] / y[2]);
    let r2 = u * u + v * v;
    let scale = cam[6] * (one + cam[9] * r2 + cam[10] * r2 * r2);
    [
        w * (scale * u + cam[7] - feat[0]),
        w * (scale * v + cam[8] - feat[1]),
    ]
}

/// The whole objective on dual numbers, over `p = [cams, x, w]` flattened.
fn objective_dual(
    p: &[Dual<1>],
    n_cams: usize,
    n_points: usize,
    obs: &[usize],
    feats: &[f64],
) -> Dual<1> {
    let (cams, rest) = p.split_at(n_cams * N_CAM);
    let (x, w) = rest.split_at(n_points * 3);
    let mut squares = Vec::new();
    for i in 0..w.len() {
        let (c, j) = (obs[2 * i], obs[2 * i + 1]);
        let e = reproj_dual(
            &cams[c * N_CAM..c * N_CAM + N_CAM],
            &x[3 * j..3 * j + 3],
            w[i],
            &feats[2 * i..],
        );
        squares.push(e[0] * e[0] + e[1] * e[1]);
    }
    for &wi in w {
        let e = Dual::cst(1.0) - wi * wi;
        squares.push(e * e);
    }
    squares.into_iter().sum()
}

/// A camera looking down the z axis from near the origin, turned by at most
/// `turn` radians about each axis, with mild distortion.
fn random_camera(rng: &mut Rng, turn: f64) -> Vec<f64> {
    let mut cam = rng.vec(3, -turn, turn);
    cam.extend(rng.vec(3, -0.5, 0.5));
    cam.push(rng.uniform(0.8, 1.5));
    cam.extend(rng.vec(2, -0.2, 0.2));
    cam.extend(rng.vec(2, -0.1, 0.1));
    cam
}

/// A point in front of the cameras.
fn random_point(rng: &mut Rng) -> Vec<f64> {
    vec![
        rng.uniform(-1.0, 1.0),
        rng.uniform(-1.0, 1.0),
        rng.uniform(3.0, 5.0),
    ]
}

/// Checks `compute_reproj_error_jacobian` and `_adjoint` at one observation
/// against `Dual<15>` (one direction per parameter).
fn check_reproj(cam: &[f64], x: &[f64], w: f64, feat: &[f64], rng: &mut Rng) {
    let (value, jac) = compute_reproj_error_jacobian(cam, x, w, feat);
    let f = compute_reproj_error(cam, x, w, feat);
    support::assert_bits("err[0]", value[0], f[0]);
    support::assert_bits("err[1]", value[1], f[1]);

    let dual_cam: Vec<Dual<15>> = (0..N_CAM).map(|i| Dual::var(cam[i], i)).collect();
    let dual_x: Vec<Dual<15>> = (0..3).map(|i| Dual::var(x[i], N_CAM + i)).collect();
    let want = reproj_dual(&dual_cam, &dual_x, Dual::var(w, 14), feat);
    assert_eq!(jac.len(), 2, "rows");
    for row in 0..2 {
        assert_close("value", want[row].v, f[row], 1e-12, 1e-12);
        assert_all_close(&format!("row {row}"), &jac[row], &want[row].d, 1e-12, 1e-10);
    }

    let d = rng.vec(2, -1.0, 1.0);
    let (dcam, dx, dw) = compute_reproj_error_adjoint(cam, x, w, feat, &d);
    let got: Vec<f64> = dcam.iter().chain(&dx).copied().chain([dw]).collect();
    let jt_d: Vec<f64> = (0..15)
        .map(|j| want[0].d[j] * d[0] + want[1].d[j] * d[1])
        .collect();
    assert_all_close("Jᵀ·d", &got, &jt_d, 1e-12, 1e-10);
}

#[test]
fn reprojection_jacobian_against_dual_numbers() {
    let mut rng = Rng::new(41);
    for _ in 0..6 {
        let cam = random_camera(&mut rng, 0.4);
        let x = random_point(&mut rng);
        let w = rng.uniform(0.5, 1.5);
        let feat = rng.vec(2, -0.5, 0.5);
        check_reproj(&cam, &x, w, &feat, &mut rng);
    }
}

#[test]
fn reprojection_jacobian_at_zero_rotation() {
    let mut rng = Rng::new(42);
    let mut cam = random_camera(&mut rng, 0.0);
    cam[..3].copy_from_slice(&[0.0, 0.0, 0.0]);
    let x = random_point(&mut rng);
    let feat = rng.vec(2, -0.5, 0.5);
    check_reproj(&cam, &x, 0.9, &feat, &mut rng);
}

#[test]
fn weight_error() {
    for w in [-1.5, 0.25, 0.8, 2.0] {
        let (value, dw) = compute_zach_weight_error_grad(w);
        assert_bits("value", value, compute_zach_weight_error(w));
        let want = (Dual::<1>::cst(1.0) - Dual::var(w, 0) * Dual::var(w, 0)).d[0];
        assert_close("d/dw", dw, want, 1e-15, 1e-15);
        assert_close(
            "adjoint",
            compute_zach_weight_error_adjoint(w, D_OUT),
            D_OUT * want,
            1e-15,
            1e-15,
        );
    }
}

fn check_objective(n_cams: usize, n_points: usize, n_obs: usize, zero_rotation: bool, seed: u64) {
    let mut rng = Rng::new(seed);
    for _ in 0..3 {
        let mut cams = Vec::new();
        for _ in 0..n_cams {
            cams.extend(random_camera(&mut rng, 0.4));
        }
        if zero_rotation {
            cams[..3].copy_from_slice(&[0.0, 0.0, 0.0]);
        }
        let mut x = Vec::new();
        for _ in 0..n_points {
            x.extend(random_point(&mut rng));
        }
        let w = rng.vec(n_obs, 0.5, 1.5);
        let mut obs = Vec::new();
        for i in 0..n_obs {
            // Every camera and every point is observed at least once.
            obs.push(if i < n_cams { i } else { rng.below(n_cams) });
            obs.push(if i < n_points { i } else { rng.below(n_points) });
        }
        let feats = rng.vec(2 * n_obs, -0.5, 0.5);

        let (value, (dc, dx, dw)) = ba_objective_grad(&cams, &x, &w, &obs, &feats);
        let f = ba_objective(&cams, &x, &w, &obs, &feats);
        assert_bits("value", value, f);
        let p: Vec<f64> = cams.iter().chain(&x).chain(&w).copied().collect();
        let oracle = |q: &[Dual<1>]| objective_dual(q, n_cams, n_points, &obs, &feats);
        let dual_value = oracle(&p.iter().map(|v| Dual::cst(*v)).collect::<Vec<_>>()).v;
        assert_close("value", dual_value, f, 1e-12, 1e-12);
        let want = forward_gradient(oracle, &p);
        let got: Vec<f64> = dc.iter().chain(&dx).chain(&dw).copied().collect();
        assert_all_close("gradient", &got, &want, 1e-12, 1e-10);

        let (ac, ax, aw) = ba_objective_adjoint(&cams, &x, &w, &obs, &feats, D_OUT);
        let adj: Vec<f64> = ac.iter().chain(&ax).chain(&aw).copied().collect();
        let scaled: Vec<f64> = got.iter().map(|g| g * D_OUT).collect();
        assert_all_close("adjoint", &adj, &scaled, 1e-12, 1e-12);
    }
}

#[test]
fn objective_3_cameras_5_points_against_dual_numbers() {
    check_objective(3, 5, 8, false, 43);
}

#[test]
fn objective_with_an_unrotated_camera_against_dual_numbers() {
    check_objective(2, 4, 6, true, 44);
}
