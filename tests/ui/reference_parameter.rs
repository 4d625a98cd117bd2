// Parameters are taken by value: `&f64` must be rejected at the type with a
// hint to pass the `f64` itself.
use gradmacro::differentiate;

#[differentiate]
fn f(x: &f64) -> f64 {
    *x * *x
}

fn main() {
    let _ = f_grad(&1.0);
    let _ = f_adjoint(&1.0, 1.0);
}
