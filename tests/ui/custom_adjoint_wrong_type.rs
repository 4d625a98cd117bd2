// The adjoint's parameter types must be the primal's: an `f64` adjoint on an `f32`
// primal must be reported at the attribute's argument.
use gradmacro::custom_adjoint;

fn softsign(x: f32) -> f32 {
    x / (1.0 + x.abs())
}

#[custom_adjoint(softsign)]
fn softsign_adjoint(x: f64, d_out: f64) -> f64 {
    d_out / ((1.0 + x.abs()) * (1.0 + x.abs()))
}

fn main() {}
