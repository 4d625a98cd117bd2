// The attribute takes only `wrt(...)`; any other argument must be reported at
// that argument, naming the one that exists.
use gradmacro::differentiate;

#[differentiate(respect_to(x))]
fn f(x: f64, y: f64) -> f64 {
    x * y
}

fn main() {
    let _ = f_grad(1.0, 2.0);
    let _ = f_adjoint(1.0, 2.0, 1.0);
}
