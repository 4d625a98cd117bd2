use gradmacro::differentiate;

#[differentiate]
fn weighted(x: &[f64]) -> f64 {
    let mut c = vec![3.0, 1.0, 2.0];
    c.push(0.5);
    let mut s = 0.0;
    for i in 0..x.len() {
        s += c[i] * x[i] * x[i];
        c.sort_by(|a, b| a.partial_cmp(b).unwrap());
    }
    s
}

fn main() {}
