// A function returning an integer has no derivative; the error must point at the
// return type and say it must be `f64` or `f32`.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> i32 {
    (x * x) as i32
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
