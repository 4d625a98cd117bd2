//! The constructs lowering rejects wherever they appear, each message written
//! once: the check of code kept as written (`rename.rs`) and the lowering of
//! differentiated expressions (`expr.rs`) say the same thing of the same
//! syntax.

/// A construct a differentiated function cannot contain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unsupported {
    Macro,
    Async,
    AsyncClosure,
    Unsafe,
    Try,
    Yield,
    Assign,
    CompoundAssign,
    /// `return`, `break`, `continue` used as a value.
    ExitInExpression,
}

impl Unsupported {
    /// What is wrong and what to write instead.
    pub fn message(self) -> &'static str {
        match self {
            Unsupported::Macro => {
                "macros are not supported in a differentiated function body: write the expression out"
            }
            Unsupported::Async => {
                "`async`/`.await` are not supported in a differentiated function"
            }
            Unsupported::AsyncClosure => "async closures are not supported",
            Unsupported::Unsafe => {
                "`unsafe` blocks are not supported in a differentiated function"
            }
            Unsupported::Try => {
                "the `?` operator is not supported: a differentiated function returns a float, not a `Result`"
            }
            Unsupported::Yield => "`yield` is not supported",
            Unsupported::Assign => {
                "assignment inside an expression is not supported: assign in a statement of its own"
            }
            Unsupported::CompoundAssign => {
                "compound assignment inside an expression is not supported: assign in a statement of its own"
            }
            Unsupported::ExitInExpression => {
                "`return`, `break` and `continue` are not supported inside an expression: use them as statements"
            }
        }
    }
}
