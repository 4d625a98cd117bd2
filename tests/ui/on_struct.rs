// The attribute only applies to free functions; on a struct the error must say
// so once, without further errors.
use gradmacro::differentiate;

#[differentiate]
struct S {
    x: f64,
}

fn main() {
    let _ = S { x: 1.0 }.x;
}
