// A function with `hessian` calls one with `tangent` only: the error is at
// the call and names the flag to add.
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
