// An `unsafe fn` is rejected so the generated functions never hide unsafety;
// the error must point at `unsafe` and suggest a safe wrapper.
use gradmacro::differentiate;

#[differentiate]
unsafe fn f(x: f64) -> f64 {
    x * x
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
