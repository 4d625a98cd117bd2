// An `async fn` returns a future, not a float; the error must point at the
// `async` keyword and suggest removing it.
use gradmacro::differentiate;

#[differentiate]
async fn f(x: f64) -> f64 {
    x * x
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
