// Several unrelated mistakes in one function must all be reported in a single
// compile, each at its own syntax, with no follow-on errors.
use gradmacro::differentiate;

fn helper(t: f64) -> f64 {
    t + 1.0
}

#[differentiate]
fn f(x: f64, n: u32) -> f64 {
    println!("start");
    let g = |t: f64| t * x;
    let y = match n {
        0 => x,
        _ => x * 2.0,
    };
    let z = helper(y);
    let w = x.rem_euclid(3.0);
    g(1.0) + z + w
}

fn main() {
    let _ = f_grad(1.0, 3);
    let _ = f_adjoint(1.0, 3, 1.0);
}
