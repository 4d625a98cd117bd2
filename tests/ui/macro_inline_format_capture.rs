use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let y = x * x;
    println!("y = {y}");
    y
}

fn main() {}
