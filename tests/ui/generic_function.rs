// Generic functions cannot be differentiated: the generated code is specific to
// one float type. The error must point at the generic parameters.
use gradmacro::differentiate;

#[differentiate]
fn f<T: Into<f64>>(x: f64, k: T) -> f64 {
    x * k.into()
}

fn main() {
    let _ = f_grad(1.0, 2.0_f32);
    let _ = f_adjoint(1.0, 2.0_f32, 1.0);
}
