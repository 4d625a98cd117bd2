// A float field passed whole to a function, and read nowhere else, cannot be
// told from an integer: it is taken for data, and the compiler's check that
// it is one fails at the field, saying how to mark it as a float.
use gradmacro::{differentiate, Differentiable};

#[derive(Differentiable)]
pub struct Model {
    pub w: Vec<f64>,
    pub scale: f64,
}

#[differentiate]
fn times(a: f64, b: f64) -> f64 {
    a * b
}

#[differentiate(wrt(m))]
fn loss(m: &Model, x: f64) -> f64 {
    times(m.scale, x) + m.w[0]
}

fn main() {
    let m = Model { w: vec![1.0], scale: 2.0 };
    let _ = loss_grad(&m, 1.0);
}
