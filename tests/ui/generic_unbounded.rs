// A type parameter without any bound is not a float the macro can compute in:
// the error names the bound to add.
use gradmacro::differentiate;

#[differentiate]
fn f<T>(x: T) -> T {
    x
}

fn main() {}
