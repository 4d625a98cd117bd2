// Taking a reference to a differentiated value is not supported; the error must
// point at the `&` expression.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let r = &x;
    *r * 2.0
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
