// `return` in the closure of `.map(..).sum()` leaves the closure, not the
// function: the loop the macro writes could not express it.
use gradmacro::differentiate;

#[differentiate]
fn capped(x: &[f64]) -> f64 {
    x.iter()
        .map(|v| {
            if *v > 1.0 {
                return 1.0;
            }
            v * v
        })
        .sum::<f64>()
}

fn main() {
    let _ = capped_grad(&[1.0]);
}
