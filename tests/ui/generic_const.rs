// Const generic parameters are not supported: take a slice instead.
use gradmacro::differentiate;
use num_traits::Float;

#[differentiate]
fn f<T: Float, const N: usize>(x: T, w: &[T; N]) -> T {
    x * w[0]
}

fn main() {}
