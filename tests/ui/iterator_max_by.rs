// `max_by` has no loop form: the message names the `fold` that does.
use gradmacro::differentiate;

#[differentiate]
fn largest(x: &[f64]) -> f64 {
    x.iter().copied().max_by(|a, b| a.total_cmp(b)).unwrap()
}

fn main() {
    let _ = largest_grad(&[1.0]);
}
