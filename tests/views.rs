//! Views (`&x[a..b]`) in differentiated functions.

use gradmacro::differentiate;

/// A view of a slice excluded by `wrt`: the weight's gradient reads the
/// viewed element. (The generated pullback once declared the view a float
/// and failed to compile, E0608.)
#[differentiate(wrt(w))]
fn first_of_view(w: f64, x: &[f64]) -> f64 {
    let row = &x[0..2];
    row[0] * w
}

/// A caller that passes the excluded slice as data: it needs no adjoint
/// for it, so the callee's pullback serves it.
#[differentiate(wrt(w))]
fn calls_first_of_view(w: f64, x: &[f64]) -> f64 {
    first_of_view(w * w, x) + w
}

#[test]
fn a_view_of_data_excluded_by_wrt() {
    for (w, x) in [
        (1.5, [2.0, -1.0, 4.0]),
        (-0.25, [-3.0, 0.5, 1.0]),
        (3.0, [0.1, 0.2, 0.3]),
    ] {
        let (value, dw) = first_of_view_grad(w, &x);
        assert_eq!(value.to_bits(), first_of_view(w, &x).to_bits());
        assert_eq!(dw, x[0]);
        let (value, dw) = calls_first_of_view_grad(w, &x);
        assert_eq!(value.to_bits(), calls_first_of_view(w, &x).to_bits());
        // d/dw (w² x0 + w) = 2 w x0 + 1
        assert!((dw - (2.0 * w * x[0] + 1.0)).abs() <= 1e-12 * (1.0 + dw.abs()));
    }
}

/// A caller that differentiates with respect to the slice `first_of_view`
/// excluded: its pullback over every float parameter (views are read in
/// place, so the body allows it) gives that derivative too.
#[differentiate]
fn differentiates_the_excluded_slice(w: f64, x: &[f64]) -> f64 {
    first_of_view(w, x)
}

#[test]
fn the_excluded_slice_derivative_reaches_callers() {
    let x = [2.0, -1.0, 4.0];
    let (value, (dw, dx)) = differentiates_the_excluded_slice_grad(1.5, &x);
    assert_eq!(value, 3.0);
    assert_eq!(dw, 2.0);
    assert_eq!(dx, vec![1.5, 0.0, 0.0]);
}
