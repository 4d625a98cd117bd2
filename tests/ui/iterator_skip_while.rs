// `skip_while` starts at a value: the error must point at the adaptor and
// list what is supported instead.
use gradmacro::differentiate;

#[differentiate]
fn trailing_sum(x: &[f64]) -> f64 {
    x.iter().skip_while(|v| **v > 0.0).sum::<f64>()
}

fn main() {
    let _ = trailing_sum_grad(&[1.0]);
}
