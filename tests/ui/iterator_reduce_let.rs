// `reduce`'s closure is copied into the loop it stands for: a `let` in it is
// rejected, naming `fold` or a `for` loop.
use gradmacro::differentiate;

#[differentiate]
fn softer(x: &[f64]) -> f64 {
    x.iter()
        .copied()
        .reduce(|a, b| {
            let m = a.max(b);
            m + (a - m).exp() + (b - m).exp()
        })
        .unwrap()
}

fn main() {
    let _ = softer_grad(&[1.0]);
}
