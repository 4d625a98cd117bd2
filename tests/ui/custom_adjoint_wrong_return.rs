// With two float parameters the adjoint returns a pair of gradient entries; a
// single float must be reported at the adjoint's return type.
use gradmacro::custom_adjoint;

fn hypot2(x: f64, y: f64) -> f64 {
    x.hypot(y)
}

#[custom_adjoint(hypot2)]
fn hypot2_adjoint(x: f64, y: f64, d_out: f64) -> f64 {
    d_out * (x + y) / x.hypot(y)
}

fn main() {}
