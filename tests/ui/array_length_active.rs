// An array's length computed from a differentiated value: the error must point
// at the length. (Repeating a differentiated value, `vec![x; n]`, is supported.)
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let v = vec![x; x as usize];
    v[0] * x
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
