// `sin_cos` returns a tuple and is not a differentiable primitive; the error
// must name `sin_cos` and point the user at `x.sin()` and `x.cos()`.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    x.sin_cos().0 * 2.0
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
