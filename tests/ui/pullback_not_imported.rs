// Importing only `erf` leaves its pullback `erf_pullback` out of scope; the error
// must point at the call and name the missing `erf_pullback`.
use gradmacro::differentiate;
use gradmacro_runtime::special::erf;

#[differentiate]
fn f(x: f64) -> f64 {
    erf(x * 0.5) + x
}

fn main() {
    let _ = f_grad(1.0);
}
