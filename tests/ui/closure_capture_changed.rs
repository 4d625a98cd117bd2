use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let k = 2.0;
    let scale = move |v: f64| v * k;
    let k = x * 3.0;
    scale(x) + k
}

fn main() {}
