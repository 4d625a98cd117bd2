use gradmacro::differentiate;

#[differentiate(hessian)]
fn polar(r: f64, theta: f64) -> [f64; 2] {
    [r * theta.cos(), r * theta.sin()]
}

fn main() {}
