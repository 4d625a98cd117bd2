// `let ... else` diverges on a pattern mismatch; the error must point at the
// `else` and suggest `if`.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64, n: u32) -> f64 {
    let Some(m) = n.checked_sub(1) else {
        return x;
    };
    x * m as f64
}

fn main() {
    let _ = f_grad(1.0, 3);
    let _ = f_adjoint(1.0, 3, 1.0);
}
