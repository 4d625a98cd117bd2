// `vec![x; n]` repeats a differentiated value into an array; the error must point
// at the repeated value and suggest a constant fill followed by assignments.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let v = vec![x; 3];
    v[0] * v[2]
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
