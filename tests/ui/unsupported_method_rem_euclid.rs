// `rem_euclid` is a stable float method without a derivative rule; the error
// must point at the method name and list the supported methods.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    x.rem_euclid(2.0) * x
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
