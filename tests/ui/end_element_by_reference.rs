// `x.last().unwrap()` and `x.first().unwrap()` are `&f64`s: the errors must
// say how to read the element by value.
use gradmacro::differentiate;

#[differentiate]
fn f(x: &[f64]) -> f64 {
    x.last().unwrap() * 2.0
}

#[differentiate]
fn g(x: &[f64]) -> f64 {
    x.first().unwrap() * 2.0
}

fn main() {
    let _ = f_grad(&[1.0]);
    let _ = f_adjoint(&[1.0], 1.0);
    let _ = g_grad(&[1.0]);
}
