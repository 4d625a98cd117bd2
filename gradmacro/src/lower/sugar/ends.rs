//! The first and the last element of a named array, read by value, as the
//! element they are:
//!
//! - `*x.first().unwrap()`, `x.first().copied().unwrap()` (`.cloned()`,
//!   `.expect(..)`) become `x[0]`;
//! - `*x.last().unwrap()` and the same forms of `last` become
//!   `x[x.len() - 1]`.
//!
//! An empty array panics either way, with the index's message instead of
//! the `Option`'s.

use syn::{Expr, UnOp};

/// `e` as an element read, `None` if it is not one of the forms above.
pub(super) fn end_element(e: &Expr) -> Option<Expr> {
    let (opened, by_value) = match e {
        Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => (super::strip(&u.expr), false),
        e => (e, true),
    };
    let Expr::MethodCall(open) = opened else {
        return None;
    };
    let opens = match open.method.to_string().as_str() {
        "unwrap" => open.args.is_empty(),
        "expect" => open.args.len() == 1,
        _ => false,
    };
    if !opens {
        return None;
    }
    let mut inner = super::strip(&open.receiver);
    // `.copied()` or `.cloned()` give the value; without them only `*` does.
    let copied = match inner {
        Expr::MethodCall(m)
            if (m.method == "copied" || m.method == "cloned") && m.args.is_empty() =>
        {
            inner = super::strip(&m.receiver);
            true
        }
        _ => false,
    };
    if copied != by_value {
        return None;
    }
    let Expr::MethodCall(end) = inner else {
        return None;
    };
    if !end.args.is_empty() {
        return None;
    }
    let Expr::Path(arr) = super::strip(&end.receiver) else {
        return None;
    };
    arr.path.get_ident()?;
    match end.method.to_string().as_str() {
        "first" => Some(syn::parse_quote!(#arr[0])),
        "last" => Some(syn::parse_quote!(#arr[#arr.len() - 1])),
        _ => None,
    }
}
