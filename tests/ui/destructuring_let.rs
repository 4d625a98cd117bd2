// A destructuring `let` binds several values at once; the error must point at
// the pattern and suggest one `let` per name.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let (a, b) = (x * x, x + 1.0);
    a * b
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
