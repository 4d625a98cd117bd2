// A differentiated method reads its receiver's fields as constants; `&mut self`
// would let it write them, so the error must point at `&mut self` and say to
// take `&self`.
use gradmacro::differentiate;

pub struct Counter {
    pub scale: f64,
}

impl Counter {
    #[differentiate]
    pub fn eval(&mut self, x: f64) -> f64 {
        self.scale * x * x
    }
}

fn main() {
    let mut c = Counter { scale: 2.0 };
    let _ = c.eval(1.0);
}
