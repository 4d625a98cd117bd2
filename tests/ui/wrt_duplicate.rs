// A parameter listed twice in `wrt(...)` is almost certainly a typo for another
// one; the second occurrence must be reported.
use gradmacro::differentiate;

#[differentiate(wrt(x, x))]
fn f(x: f64, y: f64) -> f64 {
    x * y
}

fn main() {
    let _ = f_grad(1.0, 2.0);
    let _ = f_adjoint(1.0, 2.0, 1.0);
}
