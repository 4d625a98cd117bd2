//! The scalar types a gradient check can work in.

/// A floating-point scalar that gradients can be checked in: implemented for
/// `f32` and `f64`.
///
/// The trait is sealed so that methods can be added later without breaking
/// anyone; the checks only ever need the two primitive float types.
///
/// ```
/// use gradmacro_runtime::Float;
///
/// fn halfway<T: Float>(a: T, b: T) -> T {
///     T::from_f64((a.to_f64() + b.to_f64()) / 2.0)
/// }
///
/// assert_eq!(halfway(1.0f32, 2.0f32), 1.5f32);
/// assert_eq!(<f64 as Float>::EPSILON, f64::EPSILON);
/// ```
pub trait Float:
    Copy + PartialOrd + core::fmt::Debug + core::fmt::Display + 'static + sealed::Sealed
{
    /// Machine epsilon of the type: the gap between `1` and the next
    /// representable value.
    const EPSILON: Self;

    /// Widens to `f64`, exactly.
    fn to_f64(self) -> f64;

    /// Narrows from `f64`, rounding to the nearest representable value.
    fn from_f64(v: f64) -> Self;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

impl Float for f32 {
    const EPSILON: Self = f32::EPSILON;

    fn to_f64(self) -> f64 {
        f64::from(self)
    }

    fn from_f64(v: f64) -> Self {
        // `as` rounds to nearest, which is what a narrowing conversion should do.
        v as f32
    }
}

impl Float for f64 {
    const EPSILON: Self = f64::EPSILON;

    fn to_f64(self) -> f64 {
        self
    }

    fn from_f64(v: f64) -> Self {
        v
    }
}
