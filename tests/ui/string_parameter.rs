// A `String` parameter is neither differentiable nor an integer constant; the
// error must point at the type and say which parameter types are accepted.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64, label: String) -> f64 {
    let _ = label;
    x * x
}

fn main() {
    let _ = f_grad(1.0, String::new());
    let _ = f_adjoint(1.0, String::new(), 1.0);
}
