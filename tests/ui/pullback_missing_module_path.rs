// `helpers::smooth` is a plain function: called with a differentiated argument it
// has no `smooth_pullback`; rustc must say so at the call, in `helpers`.
use gradmacro::differentiate;

mod helpers {
    pub fn smooth(t: f64) -> f64 {
        (t * t + 1.0).sqrt()
    }
}

#[differentiate]
fn f(x: f64) -> f64 {
    helpers::smooth(x) * 2.0
}

fn main() {
    let _ = f_grad(1.0);
}
