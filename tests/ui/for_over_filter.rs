// A `for` loop over an adaptor with no loop form names the adaptor, not
// "a `for` loop must run over integers".
use gradmacro::differentiate;

#[differentiate]
fn positive_sum(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for v in x.iter().filter(|v| **v > 0.0) {
        s += v;
    }
    s
}

fn main() {
    let _ = positive_sum_grad(&[1.0]);
}
