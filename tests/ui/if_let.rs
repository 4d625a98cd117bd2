// `if let` patterns are not supported; the error must point at the `let` in the
// condition and suggest a comparison.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64, n: u32) -> f64 {
    if let Some(m) = n.checked_sub(1) {
        x * m as f64
    } else {
        x
    }
}

fn main() {
    let _ = f_grad(1.0, 3);
    let _ = f_adjoint(1.0, 3, 1.0);
}
