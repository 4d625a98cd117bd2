// A map's closure parameter named like a variable the code after the map
// reads: written as one closure or one loop, the name would change meaning.
// The errors must point at the parameters and say to rename them.
use gradmacro::differentiate;

#[differentiate]
fn f(x: &[f64], a: f64) -> f64 {
    let mut s = 0.0;
    for v in x.iter().map(|a| a * 2.0) {
        s += v * a;
    }
    s
}

#[differentiate]
fn g(x: &[f64], a: f64) -> f64 {
    x.iter().map(|a| a * 2.0).map(|d| d * a).sum()
}

fn main() {
    let _ = f_grad(&[1.0], 2.0);
    let _ = g_grad(&[1.0], 2.0);
}
