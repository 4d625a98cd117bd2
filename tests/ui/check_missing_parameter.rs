// A `check(...)` point must give every parameter a value, constants included,
// to call the function; the error is at `check` and names what is missing.
use gradmacro::differentiate;

#[differentiate(check(x = 1.5), check(x = 0.5, n = 2))]
fn f(x: f64, w: &[f64], n: usize) -> f64 {
    x * w[0] * n as f64
}

fn main() {
    let _ = f_grad(1.0, &[2.0], 3);
}
