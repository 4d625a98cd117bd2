// Parameters must be plain names so they can be gradient entries; a tuple
// pattern must be rejected at the pattern with a hint to bind a name.
use gradmacro::differentiate;

#[differentiate]
fn f((x, y): (f64, f64)) -> f64 {
    x * y
}

fn main() {
    let _ = f_grad((1.0, 2.0));
    let _ = f_adjoint((1.0, 2.0), 1.0);
}
