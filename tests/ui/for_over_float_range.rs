// The trip count of a `for` loop must not depend on a differentiated value; the
// error must point at the range expression.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let mut y = 1.0;
    for _ in 0..(x as i32) {
        y *= x;
    }
    y
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
