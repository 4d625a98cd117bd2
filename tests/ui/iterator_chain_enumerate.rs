// `chain` is supported in `for` loops and reductions over the chain itself;
// an adaptor after it that counts positions (`enumerate`) is not, and the
// message says to write one loop for each part.
use gradmacro::differentiate;

#[differentiate]
fn weighted(x: &[f64], y: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, v) in x.iter().chain(y).enumerate() {
        s += v * i as f64;
    }
    s
}

fn main() {
    let _ = weighted_grad(&[1.0], &[2.0]);
}
