use gradmacro::differentiate;
use num_traits::Float;

#[differentiate]
fn pair<T: Float>(a: &[T; 2]) -> [T; 2] {
    [a[0] * a[1], a[1]]
}

// In generic code the array a call returns needs its type written.
#[differentiate]
fn f<T: Float>(x: T, y: T) -> T {
    let v = [x, y];
    let c = pair(&v);
    x * c[0] + c[1]
}

fn main() {
    let _ = f(1.0, 2.0);
}
