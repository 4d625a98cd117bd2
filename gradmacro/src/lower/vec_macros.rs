//! The expressions inside every `vec![..]` of a function, parsed once for
//! all lowering attempts. syn leaves a macro's tokens unparsed, and an
//! attempt knows a declaration by its address (`decl_key`): a parse of its
//! own at each attempt would give a `let` inside `vec![..]` another address
//! each time, and could give a later declaration the address an earlier
//! attempt promoted, wrongly making it active.

use std::collections::HashMap;
use syn::visit::Visit;
use syn::Expr;

/// What it holds is on the heap, where it stays when the body moves.
pub(crate) enum VecBody {
    /// `vec![value; n]`.
    Repeat(Box<(Expr, Expr)>),
    /// `vec![a, b, ..]`.
    List(Vec<Expr>),
}

/// Each `vec![..]` body, by the address of its macro in the function or in
/// another body.
#[derive(Default)]
pub(crate) struct VecMacros(HashMap<usize, VecBody>);

impl VecMacros {
    pub(crate) fn of(block: &syn::Block) -> Self {
        let mut found = Found(Vec::new());
        found.visit_block(block);
        let mut all = VecMacros::default();
        all.add(found.0);
        all
    }

    fn add(&mut self, bodies: Vec<(usize, VecBody)>) {
        for (key, body) in bodies {
            let mut nested = Found(Vec::new());
            match &body {
                VecBody::Repeat(r) => {
                    let (value, n) = &**r;
                    nested.visit_expr(value);
                    nested.visit_expr(n);
                }
                VecBody::List(items) => items.iter().for_each(|e| nested.visit_expr(e)),
            }
            self.add(nested.0);
            self.0.insert(key, body);
        }
    }

    /// The body of `vec![..]` `m`, `None` if it is not a `vec!` or does not
    /// parse as one.
    pub(crate) fn get(&self, m: &syn::Macro) -> Option<&VecBody> {
        self.0.get(&key(m))
    }
}

fn key(m: &syn::Macro) -> usize {
    std::ptr::from_ref(m) as usize
}

/// The body of `vec![..]` `m`, parsed; `None` if it is not a `vec!` or
/// does not parse as one.
pub(crate) fn parse(m: &syn::Macro) -> Option<VecBody> {
    if !m.path.is_ident("vec") {
        return None;
    }
    if let Ok((value, n)) = m.parse_body_with(repeat) {
        return Some(VecBody::Repeat(Box::new((value, n))));
    }
    let list = syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated;
    let items = m.parse_body_with(list).ok()?;
    Some(VecBody::List(items.into_iter().collect()))
}

pub(crate) fn repeat(input: syn::parse::ParseStream) -> syn::Result<(Expr, Expr)> {
    let value: Expr = input.parse()?;
    input.parse::<syn::Token![;]>()?;
    Ok((value, input.parse()?))
}

/// The `vec![..]`s of a tree, outermost ones only (their bodies are searched
/// once parsed, where they stay).
struct Found(Vec<(usize, VecBody)>);

impl<'a> Visit<'a> for Found {
    fn visit_macro(&mut self, m: &'a syn::Macro) {
        if let Some(body) = parse(m) {
            self.0.push((key(m), body));
        }
    }
    fn visit_item(&mut self, _: &'a syn::Item) {}
}
