// Lifetime parameters are not supported on a differentiated function, even
// beside a float type parameter.
use gradmacro::differentiate;
use num_traits::Float;

#[differentiate]
fn f<'a, T: Float>(x: T, w: &'a [T]) -> T {
    x * w[0]
}

fn main() {}
