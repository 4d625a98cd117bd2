// `break` with a value in a `loop` that is the function's tail expression: the
// error must point at the `break` and suggest a variable declared before the loop.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let mut y = x;
    loop {
        y *= 0.5;
        if y < 1.0 {
            break y * 3.0;
        }
    }
}

fn main() {
    let _ = f_grad(4.0);
    let _ = f_adjoint(4.0, 1.0);
}
