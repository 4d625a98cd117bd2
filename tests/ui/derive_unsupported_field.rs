// `Differentiable` holds floats, arrays and `Vec`s of them, integers, `bool`s
// and structs that derive it too: every other field is an error at its type
// saying what fits, all reported at once.
use gradmacro::Differentiable;

#[derive(Differentiable)]
pub struct Model<'a> {
    pub w: Vec<f64>,
    pub name: String,
    pub data: &'a [f64],
    pub pairs: Vec<(f64, f64)>,
}

fn main() {}
