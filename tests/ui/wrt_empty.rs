// An empty `wrt()` would leave nothing to differentiate; the error must point at
// `wrt` and show how to name a parameter.
use gradmacro::differentiate;

#[differentiate(wrt())]
fn f(x: f64, y: f64) -> f64 {
    x * y
}

fn main() {
    let _ = f_grad(1.0, 2.0);
    let _ = f_adjoint(1.0, 2.0, 1.0);
}
