// Macros (here `println!`) are opaque to the macro; the error must point at the
// `println!` and say that printing belongs in the caller.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    println!("x = {}", x);
    x * x
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
