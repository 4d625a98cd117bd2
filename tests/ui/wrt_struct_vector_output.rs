// A vector output with a struct in `wrt(..)` is not supported yet: the error
// must point at the return type and say what to write instead.
use gradmacro::{differentiate, Differentiable};

#[derive(Differentiable)]
pub struct Layer {
    pub w: Vec<f64>,
}

impl Layer {
    #[differentiate(wrt(self))]
    pub fn forward(&self, x: f64) -> Vec<f64> {
        self.w.iter().map(|w| w * x).collect()
    }
}

fn main() {}
