// `let (s, c) = x.sin_cos();` is the idiomatic use of `sin_cos`; the error should
// name `sin_cos` and suggest `x.sin()` and `x.cos()`, not only the pattern.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let (s, c) = x.sin_cos();
    s * c
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
