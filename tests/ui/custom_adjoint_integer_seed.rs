// The last parameter of an adjoint is the output's adjoint, a float: an integer
// there must be reported at its type.
use gradmacro::custom_adjoint;

fn softplus(x: f64) -> f64 {
    x.exp().ln_1p()
}

#[custom_adjoint(softplus)]
fn softplus_adjoint(x: f64, d_out: i32) -> f64 {
    d_out as f64 / (1.0 + (-x).exp())
}

fn main() {}
