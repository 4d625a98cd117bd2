// `chunks` of an expression that is not a plain name: the message says to
// name the sub-slice first.
use gradmacro::differentiate;

#[differentiate]
fn heads(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for c in x[1..].chunks(2) {
        s += c[0];
    }
    s
}

fn main() {
    let _ = heads_grad(&[1.0, 2.0, 3.0]);
}
