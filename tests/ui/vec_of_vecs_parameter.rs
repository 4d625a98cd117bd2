// `Vec<Vec<f64>>` is an array of arrays: rejected at the type with a hint to
// flatten it and index with `i * cols + j`.
use gradmacro::differentiate;

#[differentiate]
fn f(m: Vec<Vec<f64>>) -> f64 {
    m[0][0]
}

fn main() {
    let _ = f_grad(vec![vec![1.0]]);
}
