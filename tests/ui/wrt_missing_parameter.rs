// `wrt(...)` must only name parameters of the function; a typo must be reported
// at the misspelled name inside `wrt(...)`.
use gradmacro::differentiate;

#[differentiate(wrt(x, z))]
fn f(x: f64, y: f64) -> f64 {
    x * y
}

fn main() {
    let _ = f_grad(1.0, 2.0);
    let _ = f_adjoint(1.0, 2.0, 1.0);
}
