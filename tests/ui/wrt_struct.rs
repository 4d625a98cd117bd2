// A struct parameter is a constant; naming it in `wrt(..)` asks for a gradient
// with respect to it, which is not supported yet: the error must point at the
// name and say to pass the fields to differentiate as float parameters.
use gradmacro::differentiate;

#[derive(Clone, Copy)]
pub struct Params {
    pub a: f64,
    pub b: f64,
}

#[differentiate(wrt(x, p))]
fn f(x: f64, p: Params) -> f64 {
    p.a * x + p.b
}

fn main() {
    let p = Params { a: 1.0, b: 2.0 };
    let _ = f_grad(1.0, p);
}
