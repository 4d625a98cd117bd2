//! Maps written one after another, or looped over, as the one map or the
//! plain loop they stand for:
//!
//! - `r.map(|a| e).map(|d| g)` becomes `r.map(|a| { let d = e; g })`, so
//!   the chain has the one map its lowering reads;
//! - `for v in r.map(|a| e) { .. }` becomes `for a in r { let v = e; .. }`;
//! - `r.map(f64::exp)` becomes `r.map(|__gm_arg| f64::exp(__gm_arg))`.
//!
//! A closure whose body holds `return` is left alone: moved into a block,
//! the `return` would leave the other closure, or the function.

use quote::ToTokens;
use syn::{Expr, ExprClosure, Pat};

/// A rewrite, or why the code cannot be rewritten (an error at the tokens)
/// and what stands in its place, so that nothing else is reported for it.
pub(super) type Rewrite = Result<Expr, (proc_macro2::TokenStream, String, Expr)>;

/// `r.map(|a| e).map(|d| g)` as one map, `None` if `e` is not that.
pub(super) fn fused(e: &Expr) -> Option<Rewrite> {
    let (outer, second) = map_of(e)?;
    let (inner, first) = map_of(&outer.receiver)?;
    let binding = binding(second)?;
    let (param, body, tail) = (&first.inputs[0], &first.body, &second.body);
    // In the one closure, the second body would see the first's parameter.
    if let Some(name) = reads_any(tail.to_token_stream(), param, binding) {
        let (tokens, msg) = shadowed(param, &name, "the next map's closure");
        return Some(Err((tokens, msg, (*outer.receiver).clone())));
    }
    let receiver = &inner.receiver;
    Some(Ok(
        syn::parse_quote!(#receiver.map(|#param| { let #binding = #body; #tail })),
    ))
}

/// `for v in r.map(|a| e) { .. }` as a loop over `r`, `None` if `f` is not
/// that.
pub(super) fn looped(e: &Expr) -> Option<Rewrite> {
    let Expr::ForLoop(f) = e else {
        return None;
    };
    let (map, closure) = map_of(&f.expr)?;
    let binding = binding_pat(&f.pat)?;
    // A loop's pattern has no type: `|a: &f64|` binds `a`.
    let param = match &closure.inputs[0] {
        Pat::Type(t) => &*t.pat,
        p => p,
    };
    let (value, receiver) = (&closure.body, &map.receiver);
    let (label, attrs, body) = (&f.label, &f.attrs, &f.body.stmts);
    // The loop's body would see the closure's parameter.
    if let Some(name) = reads_any(f.body.to_token_stream(), param, binding) {
        let (tokens, msg) = shadowed(param, &name, "the loop's body");
        return Some(Err((tokens, msg, syn::parse_quote!({}))));
    }
    Some(Ok(syn::parse_quote!(
        #(#attrs)* #label for #param in #receiver { let #binding = #value; #(#body)* }
    )))
}

/// The error for a map whose closure's parameter has the name of a variable
/// that code after the map reads.
fn shadowed(param: &Pat, name: &str, reader: &str) -> (proc_macro2::TokenStream, String) {
    (
        param.to_token_stream(),
        format!(
            "this closure's parameter `{name}` has the name of a variable {reader} reads: \
             give the parameter another name"
        ),
    )
}

/// `r.map(f)` of a function named by a path as a map of a closure calling
/// it, `None` if `e` is not that.
pub(super) fn called(e: &Expr) -> Option<Expr> {
    let Expr::MethodCall(m) = e else {
        return None;
    };
    if m.method != "map" || m.args.len() != 1 {
        return None;
    }
    let Expr::Path(f) = super::strip(&m.args[0]) else {
        return None;
    };
    // A reserved name: a local closure written out at the call may read an
    // outer variable by any other.
    let item = syn::Ident::new("__gm_arg", proc_macro2::Span::call_site());
    let mut m = m.clone();
    m.args[0] = syn::parse_quote!(|#item| #f(#item));
    Some(Expr::MethodCall(m))
}

/// `r.map(|p| body)` with a closure of one parameter and no `return`.
fn map_of(e: &Expr) -> Option<(&syn::ExprMethodCall, &ExprClosure)> {
    let Expr::MethodCall(m) = super::strip(e) else {
        return None;
    };
    if m.method != "map" || m.args.len() != 1 {
        return None;
    }
    let Expr::Closure(c) = super::strip(&m.args[0]) else {
        return None;
    };
    let plain = c.inputs.len() == 1 && c.asyncness.is_none() && c.capture.is_none();
    (plain && !holds_return(&c.body)).then_some((m, c))
}

/// The parameter of a closure as a `let` pattern: a name, typed or not.
fn binding(c: &ExprClosure) -> Option<&Pat> {
    binding_pat(&c.inputs[0])
}

fn binding_pat(p: &Pat) -> Option<&Pat> {
    match p {
        Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => Some(p),
        Pat::Type(t) if matches!(&*t.pat, Pat::Ident(_)) => Some(p),
        _ => None,
    }
}

/// A name `pat` binds that `tokens` mention, other than those `rebound`
/// binds again before them.
fn reads_any(tokens: proc_macro2::TokenStream, pat: &Pat, rebound: &Pat) -> Option<String> {
    let mut names = std::collections::HashSet::new();
    super::pat_names(pat, &mut names);
    let mut again = std::collections::HashSet::new();
    super::pat_names(rebound, &mut again);
    let mut names: Vec<String> = names.difference(&again).cloned().collect();
    names.sort();
    names
        .into_iter()
        .find(|n| super::mentions(tokens.clone(), n))
}

fn holds_return(e: &Expr) -> bool {
    e.to_token_stream().into_iter().any(|t| holds(&t))
}

fn holds(t: &proc_macro2::TokenTree) -> bool {
    match t {
        proc_macro2::TokenTree::Ident(i) => i == "return",
        proc_macro2::TokenTree::Group(g) => g.stream().into_iter().any(|t| holds(&t)),
        _ => false,
    }
}
