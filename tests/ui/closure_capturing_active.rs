// A closure that captures a differentiated value hides arithmetic from the
// macro; the error must point at the closure and suggest writing it inline.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let scale = |t: f64| t * x;
    scale(2.0)
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
