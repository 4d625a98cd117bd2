// A type parameter with arithmetic bounds but no `Float` bound: one error at the
// generics, saying what to write; the uses of `T` in the signature follow from it.
use gradmacro::differentiate;

#[differentiate]
fn f<T: std::ops::Mul<Output = T> + Copy>(x: T) -> T {
    x * x
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
