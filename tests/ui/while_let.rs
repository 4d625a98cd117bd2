// `while let` is not supported; the error must point at the `let` in
// the condition and suggest `loop` with `let ... else`, or a comparison.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64, n: u32) -> f64 {
    let mut k = n;
    let mut y = x;
    while let Some(m) = k.checked_sub(1) {
        k = m;
        y *= x;
    }
    y
}

fn main() {
    let _ = f_grad(1.0, 3);
    let _ = f_adjoint(1.0, 3, 1.0);
}
