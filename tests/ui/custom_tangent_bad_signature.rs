use gradmacro::custom_tangent;

fn scale(x: f64, w: &[f64]) -> f64 {
    x * w[0]
}

// The tangents must follow the parameters, one per float parameter.
#[custom_tangent(scale)]
fn scale_rule(x: f64, w: &[f64], t_x: f64) -> (f64, f64) {
    (scale(x, w), t_x * w[0])
}

fn main() {}
