// A function with `tangent` calls one without: the error is at the call and
// names the flag to add.
use gradmacro::differentiate;

#[differentiate]
fn inner(x: f64, w: &[f64]) -> f64 {
    x * w[0]
}

#[differentiate(tangent)]
fn outer(x: f64, w: &[f64]) -> f64 {
    inner(x.sin(), w) + x
}

fn main() {
    let _ = outer_tangent(1.0, &[2.0], 1.0, &[0.0]);
}
