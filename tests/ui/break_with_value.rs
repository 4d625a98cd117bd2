// `break` with a value (a `loop` used as an expression) is not supported; the
// error must point at the `break <value>` and suggest a variable.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let mut y = x;
    let z = loop {
        y *= 0.5;
        if y < 1.0 {
            break y * 3.0;
        }
    };
    z + x
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
