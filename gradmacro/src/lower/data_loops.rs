//! A loop over the elements of a struct's array field, `for w in
//! cfg.w.iter()` (or `&cfg.w`), binds copies, `for w in
//! cfg.w.iter().copied()`, its body reading `*w` as `w`: the reverse sweep
//! keeps each element it reads, and a copy can be kept where a reference
//! could not be made up before the first iteration.

use syn::visit_mut::VisitMut;
use syn::{Expr, Pat};

/// `a.b` (a field of a name, at any depth).
fn field_path(e: &Expr) -> bool {
    match super::strip(e) {
        Expr::Field(f) => matches!(super::strip(&f.base), Expr::Path(_)) || field_path(&f.base),
        _ => false,
    }
}

/// The field iterated by reference: `x.iter()` or `&x`.
fn iterated_field(e: &Expr) -> Option<&Expr> {
    match super::strip(e) {
        Expr::MethodCall(m)
            if m.method == "iter" && m.args.is_empty() && field_path(&m.receiver) =>
        {
            Some(&m.receiver)
        }
        Expr::Reference(r) if r.mutability.is_none() && field_path(&r.expr) => Some(&r.expr),
        _ => None,
    }
}

/// `*name` as `name`.
struct Deref<'a>(&'a syn::Ident);

impl VisitMut for Deref<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Unary(u) = e {
            if matches!(u.op, syn::UnOp::Deref(_))
                && matches!(super::strip(&u.expr), Expr::Path(p) if p.path.is_ident(self.0))
            {
                let name = self.0;
                *e = syn::parse_quote!(#name);
                return;
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

struct Loops;

impl VisitMut for Loops {
    fn visit_expr_for_loop_mut(&mut self, f: &mut syn::ExprForLoop) {
        syn::visit_mut::visit_expr_for_loop_mut(self, f);
        let Pat::Ident(p) = &*f.pat else { return };
        if p.by_ref.is_some() || p.subpat.is_some() {
            return;
        }
        let Some(field) = iterated_field(&f.expr).cloned() else {
            return;
        };
        let name = p.ident.clone();
        *f.expr = syn::parse_quote!(#field.iter().copied());
        Deref(&name).visit_block_mut(&mut f.body);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Rewrites every loop over a struct field's elements in `block`.
pub(crate) fn desugar(block: &mut syn::Block) {
    Loops.visit_block_mut(block);
}
