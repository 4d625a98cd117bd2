// An array assigned to a name declared without a value is not known as an
// array where it is assigned; the error must point at the assignment and say
// to declare the name with its array.
use gradmacro::differentiate;

#[differentiate]
fn f(x: f64) -> f64 {
    let mut v;
    v = [x, 1.0];
    v[1] = 2.0;
    v[0] * v[1]
}

fn main() {
    let _ = f_grad(1.0);
}
