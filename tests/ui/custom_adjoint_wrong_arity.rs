// The adjoint's parameters (before `d_out`) must be the primal's: an adjoint for
// one parameter on a primal of two must be reported at the attribute's argument.
use gradmacro::custom_adjoint;

fn scale(x: f64, k: f64) -> f64 {
    x * k
}

#[custom_adjoint(scale)]
fn scale_adjoint(x: f64, d_out: f64) -> f64 {
    d_out * x
}

fn main() {}
