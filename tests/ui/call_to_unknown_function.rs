// `helper` is not `#[differentiate]`d, so its derivative is unknown; the error
// must point at the callee, name it, and say to differentiate it or inline it.
use gradmacro::differentiate;

fn helper(t: f64) -> f64 {
    t * t + 1.0
}

#[differentiate]
fn f(x: f64) -> f64 {
    helper(x) * 2.0
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
