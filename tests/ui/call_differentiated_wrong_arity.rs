// Too few arguments to a differentiated callee: rustc's arity error at the call.
// Ideally the only error; the generated sweeps now add three follow-ons.
use gradmacro::differentiate;

#[differentiate]
fn g(a: f64, b: f64) -> f64 {
    a * b
}

#[differentiate]
fn f(x: f64) -> f64 {
    g(x) + x
}

fn main() {
    let _ = f_grad(1.0);
}
