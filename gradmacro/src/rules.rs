//! THE derivative table. Every primitive's name, arity, forward evaluation and
//! partial derivatives live here, as exhaustive `match`es over [`Prim`], so the
//! compiler checks that a new primitive is complete. Both sweeps read only this.
//!
//! Adding a primitive: one variant, one row in each `match` below.

use crate::generic;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Prim {
    Copy,
    Neg,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Exp,
    Exp2,
    ExpM1,
    Ln,
    Ln1p,
    Log,
    Log2,
    Log10,
    Sqrt,
    Cbrt,
    Powi,
    Powf,
    Hypot,
    Abs,
    Recip,
    MulAdd,
    Max,
    Min,
    Clamp,
    Signum,
    Floor,
    Ceil,
    Round,
    Trunc,
    Fract,
    ToDegrees,
    ToRadians,
}

use Prim::*;

/// Every primitive, for name lookup.
pub const ALL: &[Prim] = &[
    Copy, Neg, Add, Sub, Mul, Div, Rem, Sin, Cos, Tan, Asin, Acos, Atan, Atan2, Sinh, Cosh, Tanh,
    Asinh, Acosh, Atanh, Exp, Exp2, ExpM1, Ln, Ln1p, Log, Log2, Log10, Sqrt, Cbrt, Powi, Powf,
    Hypot, Abs, Recip, MulAdd, Max, Min, Clamp, Signum, Floor, Ceil, Round, Trunc, Fract,
    ToDegrees, ToRadians,
];

/// How one partial derivative multiplies the output's adjoint into an input's.
#[derive(Clone, Debug)]
pub enum Partial {
    /// Contributes nothing (piecewise-constant functions, integer exponents).
    Zero,
    /// `d_arg += d_out` (or `-=` when `neg`).
    Unit { neg: bool },
    /// `d_arg += d_out * expr`.
    Times { neg: bool, expr: TokenStream },
    /// `d_arg += d_out / expr`: dividing keeps the rounding of a hand-written rule.
    Over { neg: bool, expr: TokenStream },
    /// `if cond { d_arg += d_out; }`: selections such as `max` and `clamp`.
    When { cond: TokenStream },
}

fn unit() -> Partial {
    Partial::Unit { neg: false }
}
fn times(expr: TokenStream) -> Partial {
    Partial::Times { neg: false, expr }
}
fn neg_times(expr: TokenStream) -> Partial {
    Partial::Times { neg: true, expr }
}
fn over(expr: TokenStream) -> Partial {
    Partial::Over { neg: false, expr }
}
fn when(cond: TokenStream) -> Partial {
    Partial::When { cond }
}

impl Prim {
    /// The `f64`/`f32` method this primitive is spelled as (`x.sin()`), if any.
    pub fn method(self) -> Option<&'static str> {
        Some(match self {
            Copy | Neg | Add | Sub | Mul | Div | Rem => return None,
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Atan2 => "atan2",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Asinh => "asinh",
            Acosh => "acosh",
            Atanh => "atanh",
            Exp => "exp",
            Exp2 => "exp2",
            ExpM1 => "exp_m1",
            Ln => "ln",
            Ln1p => "ln_1p",
            Log => "log",
            Log2 => "log2",
            Log10 => "log10",
            Sqrt => "sqrt",
            Cbrt => "cbrt",
            Powi => "powi",
            Powf => "powf",
            Hypot => "hypot",
            Abs => "abs",
            Recip => "recip",
            MulAdd => "mul_add",
            Max => "max",
            Min => "min",
            Clamp => "clamp",
            Signum => "signum",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            Trunc => "trunc",
            Fract => "fract",
            ToDegrees => "to_degrees",
            ToRadians => "to_radians",
        })
    }

    /// Number of operands, the receiver of a method included.
    pub fn arity(self) -> usize {
        match self {
            Copy | Neg | Sin | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh | Asinh
            | Acosh | Atanh | Exp | Exp2 | ExpM1 | Ln | Ln1p | Log2 | Log10 | Sqrt | Cbrt | Abs
            | Recip | Signum | Floor | Ceil | Round | Trunc | Fract | ToDegrees | ToRadians => 1,
            Add | Sub | Mul | Div | Rem | Atan2 | Log | Powi | Powf | Hypot | Max | Min => 2,
            MulAdd | Clamp => 3,
        }
    }

    /// Whether operand `i` is an integer (`powi`'s exponent), not a float.
    pub fn integer_operand(self, i: usize) -> bool {
        matches!((self, i), (Powi, 1))
    }

    pub fn commutative(self) -> bool {
        matches!(self, Add | Mul)
    }

    /// The compound assignment performing this binary operation in place.
    pub fn compound(self) -> Option<TokenStream> {
        Some(match self {
            Add => quote!(+=),
            Sub => quote!(-=),
            Mul => quote!(*=),
            Div => quote!(/=),
            Rem => quote!(%=),
            _ => return None,
        })
    }

    pub fn from_method(name: &str) -> Option<Prim> {
        ALL.iter().copied().find(|p| p.method() == Some(name))
    }

    /// Forward evaluation, in exactly the operation the user wrote so the value is
    /// bit-identical. Operands must already be primary expressions.
    /// `span` is the user's operator, so a type error in generated code points at it.
    pub fn eval(self, a: &[TokenStream], span: proc_macro2::Span) -> TokenStream {
        match self {
            Copy => a[0].clone(),
            Neg => {
                let v = &a[0];
                quote!(-#v)
            }
            Add => binop(a, quote_spanned!(span=> +)),
            Sub => binop(a, quote_spanned!(span=> -)),
            Mul => binop(a, quote_spanned!(span=> *)),
            Div => binop(a, quote_spanned!(span=> /)),
            Rem => binop(a, quote_spanned!(span=> %)),
            _ => {
                let name = proc_macro2::Ident::new(self.method().unwrap_or("unreachable"), span);
                let (recv, rest) = (&a[0], &a[1..]);
                quote!(#recv.#name(#(#rest),*))
            }
        }
    }

    /// Partial derivatives with respect to each operand, in terms of the
    /// operands `a`, the output `y` and the float type `t` (`f64` or `f32`).
    /// Conventions at kinks are written on their rows.
    pub fn partials(self, a: &[TokenStream], y: &TokenStream, t: &TokenStream) -> Vec<Partial> {
        let c = |name| generic::consts(t, name);
        let l = |c| generic::lit(t, c);
        let lazy = |c| generic::LazyLit { ty: t, c };
        let (zero, one, two, three) = (lazy("0.0"), lazy("1.0"), lazy("2.0"), lazy("3.0"));
        let x = &a[0];
        match self {
            Copy => vec![unit()],
            Neg => vec![Partial::Unit { neg: true }],
            Add => vec![unit(), unit()],
            Sub => vec![unit(), Partial::Unit { neg: true }],
            Mul => vec![times(a[1].clone()), times(x.clone())],
            // In terms of the operands, not `y / b`: inside a loop the quotient
            // would have to be taped, and where `y` is at hand `x / b` is the
            // same expression (bit for bit), which the optimiser reuses.
            Div => {
                let b = &a[1];
                vec![over(b.clone()), neg_times(quote!((#x / #b / #b)))]
            }
            // d(a % b)/db = -trunc(a / b), away from the jumps at multiples of b.
            Rem => {
                let b = &a[1];
                vec![unit(), neg_times(quote!((#x / #b).trunc()))]
            }
            Sin => vec![times(quote!(#x.cos()))],
            Cos => vec![neg_times(quote!(#x.sin()))],
            Tan => vec![times(quote!((#one + #y * #y)))],
            // `1 − x²` as `(1 − x)(1 + x)`: near |x| = 1 the difference is
            // exact, where `1 − x·x` would lose the digits that `x·x` rounds.
            Asin => vec![over(quote!(((#one - #x) * (#one + #x)).sqrt()))],
            Acos => vec![Partial::Over {
                neg: true,
                expr: quote!(((#one - #x) * (#one + #x)).sqrt()),
            }],
            Atan => vec![over(quote!((#one + #x * #x)))],
            Atan2 => {
                let b = &a[1];
                let r2 = quote!((#x * #x + #b * #b));
                vec![times(quote!((#b / #r2))), neg_times(quote!((#x / #r2)))]
            }
            Sinh => vec![times(quote!(#x.cosh()))],
            Cosh => vec![times(quote!(#x.sinh()))],
            // 1 − y² from the value while |y| < 0.9, where y's rounding costs
            // at most a few ulps; beyond, where tanh saturates (tanh(16) =
            // 1 − 2.5e-14) 1 − y would keep only the digits y has left, so
            // sech² comes from x, as 4e / (1 + e)² with e = exp(−2|x|): no
            // overflow, nor in its own derivative (1 / cosh² has inf / inf
            // there, NaN in a Hessian).
            Tanh => {
                let (edge, four) = (l("0.9"), l("4.0"));
                let e = quote!((-(#two * #x.abs())).exp());
                vec![times(quote!((if #y.abs() < #edge {
                    (#one - #y) * (#one + #y)
                } else {
                    #four * #e / ((#one + #e) * (#one + #e))
                })))]
            }
            Asinh => vec![over(quote!((#x * #x + #one).sqrt()))],
            Acosh => vec![over(quote!(((#x - #one) * (#x + #one)).sqrt()))],
            Atanh => vec![over(quote!(((#one - #x) * (#one + #x))))],
            Exp => vec![times(y.clone())],
            Exp2 => {
                let ln_2 = c("LN_2");
                vec![times(quote!((#y * #ln_2)))]
            }
            ExpM1 => vec![times(quote!((#y + #one)))],
            Ln => vec![over(x.clone())],
            Ln1p => vec![over(quote!((#one + #x)))],
            Log => {
                let b = &a[1];
                vec![
                    over(quote!((#x * #b.ln()))),
                    neg_times(quote!((#y / (#b * #b.ln())))),
                ]
            }
            Log2 => {
                let ln_2 = c("LN_2");
                vec![over(quote!((#x * #ln_2)))]
            }
            Log10 => {
                let ln_10 = c("LN_10");
                vec![over(quote!((#x * #ln_10)))]
            }
            Sqrt => vec![over(quote!((#two * #y)))],
            Cbrt => vec![over(quote!((#three * #y * #y)))],
            // The exponent is an integer: it has no derivative. `x⁰` is
            // constant: its derivative is 0, even at x = 0 (not 0·x⁻¹ = NaN).
            Powi => {
                let n = &a[1];
                let n_t = generic::from_int(t, n);
                vec![
                    times(quote!((if #n == 0 { #zero } else { #n_t * #x.powi(#n - 1) }))),
                    Partial::Zero,
                ]
            }
            // d/db uses ln(a): NaN for a <= 0 when the exponent is active.
            Powf => {
                let b = &a[1];
                vec![
                    times(quote!((#b * #x.powf(#b - #one)))),
                    times(quote!((#y * #x.ln()))),
                ]
            }
            Hypot => {
                let b = &a[1];
                vec![times(quote!((#x / #y))), times(quote!((#b / #y)))]
            }
            // |x|' = 0 at x = 0 (the subgradient nearest zero), sign(x) elsewhere.
            Abs => vec![times(
                quote!((if #x > #zero { #one } else if #x < #zero { -#one } else { #zero })),
            )],
            Recip => vec![neg_times(quote!((#y * #y)))],
            MulAdd => vec![times(a[1].clone()), times(x.clone()), unit()],
            // At a tie the whole derivative goes to the receiver (`self`).
            Max => {
                let b = &a[1];
                vec![when(quote!(#x >= #b)), when(quote!(#x < #b))]
            }
            Min => {
                let b = &a[1];
                vec![when(quote!(#x <= #b)), when(quote!(#x > #b))]
            }
            // Inside [lo, hi], bounds included, the derivative goes to `self`
            // (`clamp` leaves exactly those unchanged).
            Clamp => {
                let (lo, hi) = (&a[1], &a[2]);
                vec![
                    when(quote!(#x.clamp(#lo, #hi) == #x)),
                    when(quote!(#x < #lo)),
                    when(quote!(#x > #hi)),
                ]
            }
            // Piecewise constant: derivative 0 everywhere it exists.
            Signum | Floor | Ceil | Round | Trunc => vec![Partial::Zero],
            Fract => vec![unit()],
            ToDegrees => {
                let (deg, pi) = (l("180.0"), c("PI"));
                vec![times(quote!((#deg / #pi)))]
            }
            ToRadians => {
                let (deg, pi) = (l("180.0"), c("PI"));
                vec![times(quote!((#pi / #deg)))]
            }
        }
    }
}

/// One term of a tangent: a partial times an operand's tangent, negated or not.
#[derive(Clone, Debug)]
pub struct Term {
    pub neg: bool,
    pub expr: TokenStream,
}

impl Partial {
    /// Forward mode: this partial times the operand's tangent `dot`, as a
    /// term of the output's tangent; `None` where it contributes nothing.
    /// The same partial the reverse sweep multiplies into the adjoint.
    pub fn tangent_term(&self, dot: &TokenStream, t: &TokenStream) -> Option<Term> {
        let (neg, expr) = match self {
            Partial::Zero => return None,
            Partial::Unit { neg } => (*neg, dot.clone()),
            Partial::Times { neg, expr } => (*neg, quote!(#dot * #expr)),
            Partial::Over { neg, expr } => (*neg, quote!(#dot / #expr)),
            Partial::When { cond } => {
                let zero = generic::lit(t, "0.0");
                (false, quote!((if #cond { #dot } else { #zero })))
            }
        };
        Some(Term { neg, expr })
    }
}

impl Prim {
    /// Forward mode: the terms whose sum is the output's tangent, one per
    /// operand with a tangent (`None` for a constant) and a nonzero partial:
    /// [`Prim::partials`] times that tangent. `a`, `y`, `t` as for `partials`.
    pub fn tangent_terms(
        self,
        a: &[TokenStream],
        y: &TokenStream,
        t: &TokenStream,
        dots: &[Option<TokenStream>],
    ) -> Vec<Term> {
        self.partials(a, y, t)
            .iter()
            .zip(dots)
            .filter_map(|(p, dot)| p.tangent_term(dot.as_ref()?, t))
            .collect()
    }
}

/// A tangent from its terms: their sum, `0.0` for none. A negated term is
/// subtracted (`-(a * b)` and `-a * b` are the same float).
pub fn sum_terms(terms: &[Term], t: &TokenStream) -> TokenStream {
    let mut out = TokenStream::new();
    for (i, t) in terms.iter().enumerate() {
        let e = &t.expr;
        out.extend(match (i, t.neg) {
            (0, false) => quote!(#e),
            (0, true) => quote!(-#e),
            (_, false) => quote!(+ #e),
            (_, true) => quote!(- #e),
        });
    }
    if out.is_empty() {
        generic::lit(t, "0.0")
    } else {
        out
    }
}

/// Reductions of a whole array to one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    Sum,
    Product,
}

impl Reduction {
    pub fn from_method(name: &str) -> Option<Reduction> {
        match name {
            "sum" => Some(Reduction::Sum),
            "product" => Some(Reduction::Product),
            _ => None,
        }
    }

    /// Whether the pullback reads the array's values.
    pub fn reads_array(self) -> bool {
        match self {
            Reduction::Sum => false,
            Reduction::Product => true,
        }
    }

    /// The user's own iterator call, so the value is bit-identical.
    pub fn eval(self, arr: &TokenStream, t: &TokenStream) -> TokenStream {
        match self {
            Reduction::Sum => quote!(#arr.iter().sum::<#t>()),
            Reduction::Product => quote!(#arr.iter().product::<#t>()),
        }
    }

    /// Forward mode: the output's tangent from the array's tangents `t_arr`.
    pub fn tangent(self, arr: &TokenStream, t_arr: &TokenStream, t: &TokenStream) -> TokenStream {
        match self {
            Reduction::Sum => quote!(#t_arr.iter().sum::<#t>()),
            // Σ_k t_arr[k] · Π_{j≠k} arr[j], from prefix and suffix products
            // as in the pullback.
            Reduction::Product => {
                let (zero, one) = (generic::lit(t, "0.0"), generic::lit(t, "1.0"));
                let add = generic::update(
                    t,
                    quote!(dot),
                    "+=",
                    quote!(#t_arr[k] * (prefix * suffix[k + 1])),
                );
                let mul = generic::update(t, quote!(prefix), "*=", quote!(#arr[k]));
                let suffix = suffix_products(arr, t);
                quote! {
                    {
                        #suffix
                        let mut prefix: #t = #one;
                        let mut dot: #t = #zero;
                        for k in 0..#arr.len() {
                            #add
                            #mul
                        }
                        dot
                    }
                }
            }
        }
    }

    /// Adds `seed * d(out)/d(arr[k])` into `d_arr[k]` for every `k`.
    pub fn pullback(
        self,
        arr: &TokenStream,
        d_arr: &TokenStream,
        seed: &TokenStream,
        t: &TokenStream,
    ) -> TokenStream {
        match self {
            Reduction::Sum => {
                let add = generic::update(t, quote!(*d), "+=", seed.clone());
                quote! {
                    for d in #d_arr.iter_mut() {
                        #add
                    }
                }
            }
            // The product of all the other elements, from prefix and suffix
            // products: exact where an element is zero, unlike `out / x[k]`.
            Reduction::Product => {
                let one = generic::lit(t, "1.0");
                let add = generic::update(
                    t,
                    quote!(*d),
                    "+=",
                    quote!(#seed * (prefix * suffix[k + 1])),
                );
                let mul = generic::update(t, quote!(prefix), "*=", quote!(#arr[k]));
                let suffix = suffix_products(arr, t);
                quote! {
                    {
                        #suffix
                        let mut prefix: #t = #one;
                        for (k, d) in #d_arr.iter_mut().enumerate() {
                            #add
                            #mul
                        }
                    }
                }
            }
        }
    }
}

fn binop(a: &[TokenStream], op: TokenStream) -> TokenStream {
    let (l, r) = (&a[0], &a[1]);
    quote!(#l #op #r)
}

/// `suffix[k]`, the product of `arr[k..]`, for every `k` (`suffix[len] = 1`):
/// with the running prefix product, each element's product of all the
/// others.
fn suffix_products(arr: &TokenStream, t: &TokenStream) -> TokenStream {
    let one = crate::generic::lit(t, "1.0");
    quote! {
        let mut suffix: ::std::vec::Vec<#t> = ::std::vec![#one; #arr.len() + 1];
        for k in (0..#arr.len()).rev() {
            suffix[k] = suffix[k + 1] * #arr[k];
        }
    }
}
