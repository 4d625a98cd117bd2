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
    /// `mem::swap(&mut a, &mut b)`, `mem::take`, `mem::replace`.
    MemMove,
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
            Unsupported::MemMove => {
                "`mem::swap`, `mem::take` and `mem::replace` are not supported in a differentiated function: assign the values (`let t = a; a = b; b = t;`), or copy a buffer element by element (`for k in 0..a.len() { a[k] = b[k]; }`)"
            }
        }
    }
}

/// Whether `c` is `mem::swap`, `mem::take` or `mem::replace` (by any path
/// ending in `mem::..`).
pub fn is_mem_move(c: &syn::ExprCall) -> bool {
    let syn::Expr::Path(p) = &*c.func else {
        return false;
    };
    let segs: Vec<&syn::Ident> = p.path.segments.iter().map(|s| &s.ident).collect();
    matches!(&segs[..], [.., module, name]
        if *module == "mem" && ["swap", "take", "replace"].iter().any(|m| name == m))
}
