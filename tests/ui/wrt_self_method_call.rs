// With `wrt(self)`, a call of another method of `self` would lose that
// method's derivative with respect to the fields: an error at the method,
// saying to compute it here or pass the fields to a function.
use gradmacro::{differentiate, Differentiable};

#[derive(Differentiable)]
pub struct Model {
    pub w: Vec<f64>,
    pub b: f64,
}

impl Model {
    pub fn bias(&self) -> f64 {
        self.b
    }

    #[differentiate(wrt(self))]
    pub fn loss(&self, x: f64) -> f64 {
        self.w[0] * x + self.bias()
    }
}

fn main() {}
