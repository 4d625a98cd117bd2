// One generic float type per function: a second would need conversions the
// macro does not differentiate.
use gradmacro::differentiate;
use num_traits::Float;

#[differentiate]
fn f<T: Float, U: Float>(x: T, y: U) -> T {
    x * T::from(y).unwrap()
}

fn main() {}
