// A struct named in `wrt(..)` must derive `gradmacro::Differentiable`, which
// makes its gradient (a value of the same type): without it, the error must
// point at the parameter's type and name the derive.
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
