// A function with only integer parameters has an empty gradient; the error must
// say there is nothing to differentiate.
use gradmacro::differentiate;

#[differentiate]
fn f(n: i32) -> f64 {
    n as f64 * 0.5
}

fn main() {
    let _ = f_grad(3);
    let _ = f_adjoint(3, 1.0);
}
