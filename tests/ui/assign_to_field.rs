// Only local variables can be written; storing a differentiated value into a
// struct field must be reported at the field.
use gradmacro::differentiate;

struct Acc {
    total: f64,
}

#[differentiate]
fn f(x: f64) -> f64 {
    let mut acc = Acc { total: 0.0 };
    acc.total += x * x;
    acc.total
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
