// A `check(...)` point that names no parameter of the function (a typo) is
// reported at the name, listing the parameters.
use gradmacro::differentiate;

#[differentiate(check(x = 1.5, why = 2.0))]
fn f(x: f64, y: f64) -> f64 {
    x * y
}

fn main() {
    let _ = f_grad(1.0, 2.0);
}
