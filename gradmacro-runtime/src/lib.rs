//! Numerical checking for gradients produced by `gradmacro`.
