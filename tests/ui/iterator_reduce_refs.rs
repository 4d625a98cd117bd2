// `reduce` over references (`x.iter()` without `.copied()`) is rejected with
// the `.copied()` that makes it a reduction of values.
use gradmacro::differentiate;

#[differentiate]
fn largest(x: &[f64]) -> f64 {
    *x.iter().reduce(|a, b| if a > b { a } else { b }).unwrap()
}

fn main() {
    let _ = largest_grad(&[1.0]);
}
