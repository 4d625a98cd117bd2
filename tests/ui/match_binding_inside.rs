use gradmacro::differentiate;

#[differentiate]
fn f(x: f64, o: Option<usize>) -> f64 {
    match o {
        Some(k) => x * k as f64,
        None => x,
    }
}

fn main() {}
