// `match` on a differentiated value has no derivative rule; the error must
// point at the `match` and suggest `if` / `else if` with comparisons.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    match x > 0.0 {
        true => x * x,
        false => -x,
    }
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
