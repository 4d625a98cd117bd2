// A method differentiated with respect to its receiver reads the receiver's
// fields; `&mut self` would let it write them: the error must point at it.
use gradmacro::{differentiate, Differentiable};

#[derive(Differentiable)]
pub struct Spring {
    pub k: f64,
}

impl Spring {
    #[differentiate(wrt(self))]
    pub fn energy(&mut self, x: f64) -> f64 {
        0.5 * self.k * x * x
    }
}

fn main() {}
