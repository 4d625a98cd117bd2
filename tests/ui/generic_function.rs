// A function can be generic over its float type only (`T: num_traits::Float`):
// a parameter without that bound is rejected, and the error must point at it
// and say what to write.
use gradmacro::differentiate;

#[differentiate]
fn f<T: Into<f64>>(x: f64, k: T) -> f64 {
    x * k.into()
}

fn main() {
    let _ = f_grad(1.0, 2.0_f32);
    let _ = f_adjoint(1.0, 2.0_f32, 1.0);
}
