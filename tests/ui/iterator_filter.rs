// Only `map(..).sum()`, `map(..).product()` and `fold(..)` become loops;
// other iterator adaptors must say which forms work and suggest a `for` loop.
use gradmacro::differentiate;

#[differentiate]
fn positive_part(x: &[f64]) -> f64 {
    x.iter().filter(|v| **v > 0.0).sum::<f64>()
}

fn main() {
    let _ = positive_part_grad(&[1.0]);
}
