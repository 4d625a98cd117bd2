// An integer parameter is a constant and cannot be differentiated; naming it in
// `wrt(...)` must be reported at that name.
use gradmacro::differentiate;

#[differentiate(wrt(x, n))]
fn f(x: f64, n: i32) -> f64 {
    x.powi(n)
}

fn main() {
    let _ = f_grad(1.0, 3);
    let _ = f_adjoint(1.0, 3, 1.0);
}
