// Nested slices are not differentiable parameters: the error must say so at
// the parameter's type and suggest flattening the data into one slice.
use gradmacro::differentiate;

#[differentiate]
fn f(rows: &[&[f64]]) -> f64 {
    rows[0][0]
}

fn main() {
    let _ = f_grad(&[&[1.0]]);
}
