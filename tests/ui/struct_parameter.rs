// A struct parameter is a constant, so a function whose only parameter is a
// struct has nothing to differentiate: the error must say so at its name.
use gradmacro::differentiate;

#[derive(Clone, Copy)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

#[differentiate]
fn f(p: Point) -> f64 {
    p.x * p.y
}

fn main() {
    let p = Point { x: 1.0, y: 2.0 };
    let _ = f_grad(p);
    let _ = f_adjoint(p, 1.0);
}
