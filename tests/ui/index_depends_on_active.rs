// An index computed from a differentiated value (`table[x as usize]`) is not
// supported; the error must point at the index expression.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let table = [1.0, 2.0, 4.0, 8.0];
    table[x as usize] * x
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
