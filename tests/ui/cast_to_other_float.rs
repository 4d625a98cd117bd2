// Casting a differentiated `f64` to `f32` changes the float type mid-function;
// the error must point at the cast.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let y = x as f32;
    y.sin() as f64
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
