// A rejected function still gets placeholders for every generated function,
// `_pullback` included, so its differentiated callers show no error of their own.
use gradmacro::differentiate;

#[differentiate]
fn inner(x: f64) -> f64 {
    x.rem_euclid(2.0)
}

#[differentiate]
fn outer(x: f64, w: &[f64]) -> f64 {
    inner(x) + inner(w[0])
}

fn main() {
    let _ = outer_grad(1.0, &[2.0]);
}
