// An `unsafe` block in the body is rejected; the error must point at the block
// rather than at the attribute or the whole function.
use gradmacro::differentiate;

/// # Safety
/// Always safe; `unsafe` only to need an `unsafe` block at the call.
unsafe fn twice(t: f64) -> f64 {
    t * 2.0
}

#[differentiate]
fn f(x: f64) -> f64 {
    let y = unsafe { twice(x) };
    y * x
}

fn main() {
    let _ = f_grad(1.0);
    let _ = f_adjoint(1.0, 1.0);
}
