// `hessian` does not reach into calls yet: the error is at the callee.
use gradmacro::differentiate;

#[differentiate(tangent)]
fn inner(x: f64) -> f64 {
    x * x
}

#[differentiate(hessian)]
fn outer(x: f64) -> f64 {
    inner(x.sin()) + x
}

fn main() {
    let _ = outer_hessian(1.0);
}
