// A check point on a method has no receiver to call it on; it must be an
// error at `check`, never a point silently left unchecked.
use gradmacro::differentiate;

pub struct Spring {
    pub k: f64,
}

impl Spring {
    #[differentiate(check(x = 1.5))]
    pub fn energy(&self, x: f64) -> f64 {
        0.5 * self.k * x * x
    }
}

fn main() {
    let s = Spring { k: 2.0 };
    let _ = s.energy_grad(1.0);
}
