// A function generic over its float type: one error at the generics should be
// enough; the uses of `T` in the signature are consequences of it.
use gradmacro::differentiate;

#[differentiate]
fn f<T: std::ops::Mul<Output = T> + Copy>(x: T) -> T {
    x * x
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
