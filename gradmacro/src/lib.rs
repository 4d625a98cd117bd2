//! Compile-time reverse-mode automatic differentiation.
