// `max_by` over pairs (after `zip` or `enumerate`) has no loop form: the
// message says to map the pairs to floats first, or to write a loop.
use gradmacro::differentiate;

#[differentiate]
fn largest_product(x: &[f64], y: &[f64]) -> f64 {
    let best = x
        .iter()
        .zip(y)
        .max_by(|p, q| (p.0 * p.1).total_cmp(&(q.0 * q.1)))
        .unwrap();
    best.0 * best.1
}

fn main() {
    let _ = largest_product_grad(&[1.0], &[2.0]);
}
