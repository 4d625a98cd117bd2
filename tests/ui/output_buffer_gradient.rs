// A helper writing into an output buffer has no gradient of its own (a
// gradient needs one output): asking for it is an error at the call, saying
// to call the helper from a differentiated function or to return the array.
use gradmacro::differentiate;

#[differentiate]
fn scale_into(k: f64, out: &mut [f64]) {
    for v in out.iter_mut() {
        *v *= k;
    }
}

fn main() {
    let mut buf = [1.0, 2.0];
    let _ = scale_into_grad(2.0, &mut buf);
}
