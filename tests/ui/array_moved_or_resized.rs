use gradmacro::differentiate;

#[differentiate]
fn double_buffer(x: &[f64]) -> f64 {
    let mut cur = vec![0.0; 2];
    let mut next = vec![1.0; 2];
    let mut s = 0.0;
    for i in 0..x.len() {
        next[0] = cur[1] * x[i];
        next[1] = cur[0] + x[i];
        s += next[0];
        std::mem::swap(&mut cur, &mut next);
    }
    let tail = next.split_off(1);
    next.dedup();
    s + tail[0]
}

fn main() {}
