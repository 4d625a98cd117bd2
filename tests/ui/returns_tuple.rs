// Only scalar outputs are supported; a tuple return type must be rejected at the
// type, saying it must be `f64` or `f32`.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> (f64, f64) {
    (x * x, x)
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
