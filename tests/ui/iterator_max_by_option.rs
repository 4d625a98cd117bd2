// The `Option` of `max_by` is supported opened at once (`.unwrap()`,
// `.unwrap_or(d)`); kept in a variable it is not, and the message says so.
use gradmacro::differentiate;

#[differentiate]
fn largest(x: &[f64]) -> f64 {
    let m = x.iter().copied().max_by(|a, b| a.total_cmp(b));
    m.unwrap_or(0.0)
}

fn main() {
    let _ = largest_grad(&[1.0]);
}
