// A `&mut [f64]` parameter would let the function write into its inputs; the
// error must point at the type and suggest `&[f64]` and returning values.
use gradmacro::differentiate;

#[differentiate]
fn f(xs: &mut [f64]) -> f64 {
    xs[0] * xs[1]
}

fn main() {
    let mut v = [1.0, 2.0];
    let _ = f_grad(&mut v);
    let _ = f_adjoint(&mut v, 1.0);
}
