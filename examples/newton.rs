//! Newton's method on the 2-D Rosenbrock function with the Hessian from
//! `#[differentiate(hessian)]`: from (-1.2, 1) it reaches the minimum at (1, 1)
//! in 22 steps, the last ones quadratically (the gradient's norm roughly
//! squares from one step to the next).
//!
//! ```sh
//! cargo run --example newton
//! ```

use gradmacro::differentiate;

#[differentiate(hessian)]
fn rosenbrock(x: f64, y: f64) -> f64 {
    let a = 1.0 - x;
    let b = y - x * x;
    a * a + 100.0 * b * b
}

/// Solves `h · d = g` for a symmetric positive definite 2×2 `h`.
fn solve2(h: &[Vec<f64>], g: &[f64]) -> [f64; 2] {
    let det = h[0][0] * h[1][1] - h[0][1] * h[1][0];
    [
        (h[1][1] * g[0] - h[0][1] * g[1]) / det,
        (h[0][0] * g[1] - h[1][0] * g[0]) / det,
    ]
}

fn main() {
    let (mut x, mut y) = (-1.2, 1.0);
    let mut norms = Vec::new();
    for step in 0..100 {
        let (value, g, h) = rosenbrock_hessian(x, y);
        let norm = g[0].hypot(g[1]);
        println!("step {step:2}: f = {value:.3e}, |grad| = {norm:.3e}, at ({x:.12}, {y:.12})");
        norms.push(norm);
        if norm < 1e-12 {
            break;
        }
        let d = solve2(&h, &g);
        // Backtracking keeps the far-away steps from overshooting; near the
        // minimum the full Newton step is always taken.
        let mut t = 1.0;
        while rosenbrock(x - t * d[0], y - t * d[1]) > value && t > 1e-10 {
            t *= 0.5;
        }
        x -= t * d[0];
        y -= t * d[1];
    }
    let last = norms.len() - 1;
    assert!(
        norms[last] < 1e-12,
        "did not converge: |grad| = {}",
        norms[last]
    );
    assert!((x - 1.0).abs() < 1e-12 && (y - 1.0).abs() < 1e-12);
    // Quadratic convergence: over the last steps the error roughly squares.
    let (a, b, c) = (norms[last - 3], norms[last - 2], norms[last - 1]);
    let order = (c / b).ln() / (b / a).ln();
    println!(
        "converged in {last} steps to ({x}, {y}); order of convergence over the last steps: {order:.2}"
    );
    assert!(order > 1.7, "convergence is not quadratic: order {order}");
}
