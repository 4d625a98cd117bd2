// Labelled loops and `break 'label` are not supported; the errors must point at
// the label and suggest a `bool` flag.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64, n: i32) -> f64 {
    let mut acc = 0.0;
    'outer: for i in 0..n {
        for j in 0..n {
            if i * j > 6 {
                break 'outer;
            }
            acc += x;
        }
    }
    acc
}

fn main() {
    let _ = f_grad(1.0, 3);
    let _ = f_adjoint(1.0, 3, 1.0);
}
