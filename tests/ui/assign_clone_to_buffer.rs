// A buffer re-created by assignment from `.clone()` of another is not
// recognised (`clone` may copy anything); the message names the copies that
// are: `v = w.to_vec();`, `v = x[a..b].to_vec();`, `Vec::from(..)`.
use gradmacro::differentiate;

#[differentiate]
fn f(x: &[f64]) -> f64 {
    let w = x.to_vec();
    let mut v = vec![0.0; 2];
    v = w.clone();
    v[0] * v[1]
}

fn main() {
    let _ = f_grad(&[1.0, 2.0]);
}
