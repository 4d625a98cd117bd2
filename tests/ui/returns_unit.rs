// A function with no return type has nothing to differentiate; the error must
// point at the function name and suggest adding `-> f64`.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) {
    let _ = x * x;
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
