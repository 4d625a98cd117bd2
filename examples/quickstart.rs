//! The seed example: one value reaching the output along two paths.
//!
//! Run with `cargo run --example quickstart`.

use gradmacro::differentiate;
use gradmacro_runtime::check_gradient;

/// `y = x·x + x`: `x` reaches `y` directly and through `q`.
#[differentiate]
fn f(x: f64) -> f64 {
    let q = x * x;
    q + x
}

fn main() {
    let x = 3.0;
    let (y, dy_dx) = f_grad(x);
    println!("f(x) = x*x + x at x = {x}");
    println!("  value       y     = {y}");
    println!("  derivative  dy/dx = {dy_dx}   (2x + 1: both paths from x add up)");
    println!("  pullback    2 * dy/dx = {}", f_adjoint(x, 2.0));

    let check = check_gradient(|p| f(p[0]), &[x], &[dy_dx]);
    println!("\ncentral finite differences (a diagnostic, not a proof):\n{check}");
    check.assert_within(1e-6);
}
