//! Forward mode, Jacobians and Hessians against num-dual, on a table of their
//! own: `f` (the function itself), num-dual (its `first_derivative`,
//! `jacobian` and `hessian` helpers, over `SVector`s of static duals where the
//! size is small and `DVector`s where it is 100), and gradmacro's
//! `f_tangent`, `f_jacobian` and `f_hessian`. Each gradmacro result is
//! checked against num-dual's before anything is timed.

use crate::check::Rng;
use crate::functions::{chain, chain_tangent, residuals, residuals_jacobian, rosenbrock_h};
use crate::functions::{rosenbrock_h_hessian, rosenbrock_h_tangent};
use crate::timing::{measure, Config, Stats};
use nalgebra::{DVector, SVector};
use num_dual::{
    first_derivative, hessian, jacobian, Dual2DVec64, Dual2SVec64, Dual64, DualDVec64, DualNum,
    DualSVec64,
};
use std::hint::black_box;

pub struct ModeRow {
    pub name: String,
    pub n: usize,
    pub f: Stats,
    pub dual: Stats,
    pub gm: Stats,
}

fn close(what: &str, a: f64, b: f64) {
    assert!(
        (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs())),
        "{what}: gradmacro {a:e}, num-dual {b:e}"
    );
}

fn chain_dual<D: DualNum<Primitive = f64> + Copy>(x: D) -> D {
    let a = (x * x + 1.0).ln();
    let b = (a.sin() * x).exp();
    let c = (b + x.cos()).sqrt();
    c * a.atan() + b.tanh()
}

fn rosenbrock_dual<D: DualNum<Primitive = f64>>(x: &[D]) -> D {
    let mut s = D::from(0.0);
    for i in 0..x.len() - 1 {
        let a = -x[i].clone() + 1.0;
        let b = x[i + 1].clone() - x[i].clone() * x[i].clone();
        s += a.clone() * a + b.clone() * b * 100.0;
    }
    s
}

fn residuals_dual<D: DualNum<Primitive = f64>>(x: &[D]) -> Vec<D> {
    let mut r = Vec::with_capacity(2 * x.len());
    for i in 0..x.len() - 1 {
        r.push(-x[i].clone() + 1.0);
        r.push((x[i + 1].clone() - x[i].clone() * x[i].clone()) * 10.0);
    }
    r
}

/// Checks and (if `time`) measures every row.
pub fn all(cfg: &Config, time: bool, filter: &[String]) -> Vec<ModeRow> {
    let mut rows = Vec::new();
    let mut run = |name: String, n: usize, cols: &mut [&mut dyn crate::timing::Bench]| {
        if !filter.is_empty() && !filter.iter().any(|s| name.contains(s.as_str())) {
            return;
        }
        if !time {
            println!("{name}: gradmacro agrees with num-dual");
            return;
        }
        let s = measure(cols, cfg);
        eprintln!(
            "{name:<28} f {:>10}  num-dual {:>10}  gradmacro {:>10}",
            crate::report::time(s[0].median),
            crate::report::time(s[1].median),
            crate::report::time(s[2].median)
        );
        rows.push(ModeRow {
            name,
            n,
            f: s[0],
            dual: s[1],
            gm: s[2],
        });
    };

    // The first derivative of a scalar function.
    {
        let x = 0.7;
        let (v, d) = chain_tangent(x, 1.0);
        let (dv, dd) = first_derivative(chain_dual::<Dual64>, x);
        close("chain value", v, dv);
        close("chain derivative", d, dd);
        run(
            "tangent: scalar chain".into(),
            1,
            &mut [
                &mut || chain(black_box(x)),
                &mut || first_derivative(chain_dual::<Dual64>, black_box(x)),
                &mut || chain_tangent(black_box(x), 1.0),
            ],
        );
    }
    // Directional derivatives of Rosenbrock: one dual per input, seeded with v.
    for n in [10, 100] {
        let mut rng = Rng::new(0xD1 + n as u64);
        let x = rng.vec(n, -2.0, 2.0);
        let v = rng.vec(n, -1.0, 1.0);
        let dual_dir = |x: &[f64], v: &[f64]| {
            let xd: Vec<Dual64> = x.iter().zip(v).map(|(a, b)| Dual64::new(*a, *b)).collect();
            let r = rosenbrock_dual(&xd);
            (r.re, r.eps)
        };
        let (tv, td) = rosenbrock_h_tangent(&x, &v);
        let (dv, dd) = dual_dir(&x, &v);
        close("rosenbrock tangent value", tv, dv);
        close("rosenbrock tangent", td, dd);
        run(
            format!("tangent: Rosenbrock n = {n}"),
            n,
            &mut [
                &mut || rosenbrock_h(black_box(&x)),
                &mut || dual_dir(black_box(&x), black_box(&v)),
                &mut || rosenbrock_h_tangent(black_box(&x), black_box(&v)),
            ],
        );
    }
    // Jacobians of Rosenbrock's residual vector.
    for n in [2, 10, 100] {
        let x = Rng::new(0x1AC + n as u64).vec(n, -2.0, 2.0);
        let (_, jac) = residuals_jacobian(&x);
        let xd = DVector::from_column_slice(&x);
        let (_, want) = jacobian(
            |v: DVector<DualDVec64>| DVector::from_vec(residuals_dual(v.as_slice())),
            &xd,
        );
        for (i, row) in jac.iter().enumerate() {
            for (j, g) in row.iter().enumerate() {
                close("jacobian", *g, want[(i, j)]);
            }
        }
        let name = format!("Jacobian: residuals n = {n}");
        let f = &mut || residuals(black_box(&x));
        let gm = &mut || residuals_jacobian(black_box(&x));
        match n {
            2 => {
                let xs = SVector::<f64, 2>::from_column_slice(&x);
                let d = &mut || {
                    jacobian(
                        |v: SVector<DualSVec64<2>, 2>| {
                            let r = residuals_dual(v.as_slice());
                            SVector::<DualSVec64<2>, 2>::from_column_slice(&r)
                        },
                        black_box(&xs),
                    )
                };
                run(name, n, &mut [f, d, gm]);
            }
            10 => {
                let xs = SVector::<f64, 10>::from_column_slice(&x);
                let d = &mut || {
                    jacobian(
                        |v: SVector<DualSVec64<10>, 10>| {
                            let r = residuals_dual(v.as_slice());
                            SVector::<DualSVec64<10>, 18>::from_column_slice(&r)
                        },
                        black_box(&xs),
                    )
                };
                run(name, n, &mut [f, d, gm]);
            }
            _ => {
                let d = &mut || {
                    jacobian(
                        |v: DVector<DualDVec64>| DVector::from_vec(residuals_dual(v.as_slice())),
                        black_box(&xd),
                    )
                };
                run(name, n, &mut [f, d, gm]);
            }
        }
    }
    // Hessians of Rosenbrock.
    for n in [2, 10, 100] {
        let x = Rng::new(0x4E5 + n as u64).vec(n, -2.0, 2.0);
        let (_, _, h) = rosenbrock_h_hessian(&x);
        let xd = DVector::from_column_slice(&x);
        let (_, _, want) = hessian(|v: DVector<Dual2DVec64>| rosenbrock_dual(v.as_slice()), &xd);
        for (i, row) in h.iter().enumerate() {
            for (j, g) in row.iter().enumerate() {
                close("hessian", *g, want[(i, j)]);
            }
        }
        let name = format!("Hessian: Rosenbrock n = {n}");
        let f = &mut || rosenbrock_h(black_box(&x));
        let gm = &mut || rosenbrock_h_hessian(black_box(&x));
        match n {
            2 => {
                let xs = SVector::<f64, 2>::from_column_slice(&x);
                let d = &mut || {
                    hessian(
                        |v: SVector<Dual2SVec64<2>, 2>| rosenbrock_dual(v.as_slice()),
                        black_box(&xs),
                    )
                };
                run(name, n, &mut [f, d, gm]);
            }
            10 => {
                let xs = SVector::<f64, 10>::from_column_slice(&x);
                let d = &mut || {
                    hessian(
                        |v: SVector<Dual2SVec64<10>, 10>| rosenbrock_dual(v.as_slice()),
                        black_box(&xs),
                    )
                };
                run(name, n, &mut [f, d, gm]);
            }
            _ => {
                let d = &mut || {
                    hessian(
                        |v: DVector<Dual2DVec64>| rosenbrock_dual(v.as_slice()),
                        black_box(&xd),
                    )
                };
                run(name, n, &mut [f, d, gm]);
            }
        }
    }
    rows
}

/// The section of `RESULTS.md` for these rows.
pub fn render(rows: &[ModeRow]) -> String {
    let mut md = String::from(
        "\n## Forward mode, Jacobians and Hessians\n\n\
         Median time per call; num-dual's helpers over static duals (n ≤ 10) or dynamic ones \
         (n = 100). `gradmacro / num-dual` below 1 is faster; `/ (n·f)` is the Hessian's cost \
         per column in calls of `f` (target ≤ 4).\n\n\
         | workload | f | num-dual | gradmacro | gradmacro / num-dual | gradmacro / f | / (n·f) |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for r in rows {
        let per_col = r.gm.median / (r.n as f64 * r.f.median);
        md.push_str(&format!(
            "| {} | {} | {} | {} | {:.2} | {:.1} | {:.1} |\n",
            r.name,
            crate::report::time(r.f.median),
            crate::report::time(r.dual.median),
            crate::report::time(r.gm.median),
            r.gm.median / r.dual.median,
            r.gm.median / r.f.median,
            per_col,
        ));
    }
    md
}
