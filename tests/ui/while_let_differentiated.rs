// `while let` is the loop it stands for, its pattern tested on data; popping
// differentiated values out of a `Vec` is not, and the error says so.
use gradmacro::differentiate;

#[differentiate]
fn drain(x: &[f64]) -> f64 {
    let mut stack = x.to_vec();
    let mut s = 0.0;
    while let Some(v) = stack.pop() {
        s += v * v;
    }
    s
}

fn main() {
    let _ = drain_grad(&[1.0]);
}
