// A closure that captures nothing is copied as it is, but calling it with a
// differentiated value would hide the arithmetic: the error is at the call.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let square = |t: f64| t * t;
    square(x) + 1.0
}

fn main() {
    let _ = f_grad(1.0);
}
