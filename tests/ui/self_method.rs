// A method taking `self` has state the gradient cannot see; the error must point
// at `&self` and suggest a free function taking the fields as parameters.
use gradmacro::differentiate;

pub struct Model {
    pub scale: f64,
}

impl Model {
    #[differentiate]
    pub fn eval(&self, x: f64) -> f64 {
        self.scale * x * x
    }
}

fn main() {
    let m = Model { scale: 2.0 };
    let _ = m.eval(1.0);
}
