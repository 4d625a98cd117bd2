// The `?` operator needs a `Result`/`Option` return type; the macro must reject
// it at the `?` expression (rustc also rejects the original function).
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64, s: u32) -> f64 {
    let k = s.checked_mul(2)?;
    x * k as f64
}

fn main() {
    let _ = f_grad(1.0, 3);
    let _ = f_adjoint(1.0, 3, 1.0);
}
