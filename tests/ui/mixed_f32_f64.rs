// One function computes in one float type; an `f32` parameter in an `f64`
// function must be reported at its type.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64, y: f32) -> f64 {
    x * y as f64
}

fn main() {
    let _ = f_grad(1.0, 2.0);
    let _ = f_adjoint(1.0, 2.0, 1.0);
}
