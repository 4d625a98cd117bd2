use gradmacro::differentiate;

#[differentiate]
fn swapped_indices(x: &[f64]) -> f64 {
    let (mut a, mut b) = (0, x.len() - 1);
    let mut s = 0.0;
    for _ in 0..3 {
        s = s * 0.5 + x[a] * x[b].sin();
        std::mem::swap(&mut a, &mut b);
    }
    s
}

fn main() {}
