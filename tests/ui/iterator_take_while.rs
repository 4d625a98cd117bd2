// `take_while` stops at a value: the error must point at the adaptor and list
// what is supported instead.
use gradmacro::differentiate;

#[differentiate]
fn leading_sum(x: &[f64]) -> f64 {
    x.iter().take_while(|v| **v > 0.0).sum::<f64>()
}

fn main() {
    let _ = leading_sum_grad(&[1.0]);
}
