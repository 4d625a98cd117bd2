// A differentiated struct is read field by field: passing it whole to a
// function is an error at the argument, saying to pass the fields.
use gradmacro::{differentiate, Differentiable};

#[derive(Differentiable)]
pub struct Model {
    pub w: Vec<f64>,
}

fn total(m: &Model) -> f64 {
    m.w.iter().sum()
}

#[differentiate(wrt(m))]
fn loss(m: &Model, x: f64) -> f64 {
    total(m) * x + m.w[0]
}

fn main() {}
