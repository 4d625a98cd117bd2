// Only local variables can be written: storing into an element of an array
// parameter must be reported at the array, suggesting a local copy.
use gradmacro::differentiate;

#[differentiate]
fn f(mut xs: [f64; 2]) -> f64 {
    xs[0] = xs[1] * 2.0;
    xs[0] + xs[1]
}

fn main() {
    let _ = f_grad([1.0, 2.0]);
    let _ = f_adjoint([1.0, 2.0], 1.0);
}
