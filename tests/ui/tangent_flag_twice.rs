use gradmacro::differentiate;

#[differentiate(tangent, wrt(x), tangent)]
fn f(x: f64) -> f64 {
    x * x
}

fn main() {}
