//! A local tuple read by its fields, `let t = (x * 2.0, y.sin()); t.0 * t.1`,
//! as the destructuring `let (t_0, t_1) = (..);` it stands for (which
//! `sugar/tuples.rs` turns into one `let` per element), its fields as those names.
//! Only where every mention of `t` in its scope (which a `let` binding `t`
//! again ends, in the block or in a nested one) is a field `t.N`, and no
//! other pattern binds `t`.

use crate::names::Names;
use quote::ToTokens;
use std::collections::HashMap;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat, Stmt};

/// How the statements after a tuple's `let` mention it.
#[derive(Default)]
struct Uses {
    name: String,
    fields: usize,
    bare: usize,
    rebound: bool,
}

impl Uses {
    /// Statements of a block the tuple is in scope in, up to a `let` binding
    /// its name again, whose initialiser still reads the tuple.
    fn tail(&mut self, stmts: &[Stmt]) {
        for st in stmts {
            if let Some(init) = rebinding(st, &self.name) {
                if let Some(i) = init {
                    self.visit_local_init(i);
                }
                return;
            }
            self.visit_stmt(st);
        }
    }
}

impl<'ast> Visit<'ast> for Uses {
    fn visit_block(&mut self, b: &'ast syn::Block) {
        self.tail(&b.stmts);
    }
    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Field(f)
                if matches!(f.member, syn::Member::Unnamed(_))
                    && matches!(&*f.base, Expr::Path(p) if p.path.is_ident(&self.name)) =>
            {
                self.fields += 1;
            }
            Expr::Path(p) if p.path.is_ident(&self.name) => self.bare += 1,
            _ => syn::visit::visit_expr(self, e),
        }
    }
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        if p.ident == self.name {
            self.rebound = true;
        }
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // `vec![..]` is read as the expressions it holds.
        let mut copy = m.clone();
        let mut parsed = false;
        super::sugar::in_vec_macro(&mut copy, |e| {
            parsed = true;
            self.visit_expr(e);
        });
        if parsed {
            return;
        }
        // Tokens the visitor cannot see into: a mention there counts as bare.
        let mentions = m
            .tokens
            .clone()
            .into_iter()
            .any(|t| matches!(t, proc_macro2::TokenTree::Ident(i) if i == self.name));
        self.bare += usize::from(mentions);
    }
}

/// `t.N` as the name chosen for field `N`.
struct Fields<'a> {
    name: &'a str,
    names: &'a HashMap<u32, syn::Ident>,
}

impl Fields<'_> {
    /// As [`Uses::tail`]: the statements the tuple is in scope in.
    fn tail(&mut self, stmts: &mut [Stmt]) {
        for st in stmts {
            if rebinding(st, self.name).is_some() {
                if let Stmt::Local(syn::Local { init: Some(i), .. }) = st {
                    self.visit_local_init_mut(i);
                }
                return;
            }
            self.visit_stmt_mut(st);
        }
    }
}

impl VisitMut for Fields<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        self.tail(&mut b.stmts);
    }
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        super::sugar::in_vec_macro(m, |e| self.visit_expr_mut(e));
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Field(f) = e {
            if let (syn::Member::Unnamed(i), Expr::Path(p)) = (&f.member, &*f.base) {
                if p.path.is_ident(self.name) {
                    if let Some(n) = self.names.get(&i.index) {
                        *e = syn::parse_quote!(#n);
                        return;
                    }
                }
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

/// The number of elements of a tuple-valued initialiser the sugar knows.
fn arity(init: &Expr) -> Option<usize> {
    match super::strip(init) {
        Expr::Tuple(t) => Some(t.elems.len()),
        Expr::MethodCall(m) if m.method == "sin_cos" || m.method == "split_at" => Some(2),
        _ => None,
    }
}

fn rewrite(stmts: &mut [Stmt], names: &mut Names) {
    for k in 0..stmts.len() {
        let Stmt::Local(l) = &stmts[k] else { continue };
        let (pat, ty) = match &l.pat {
            Pat::Type(pt) => (&*pt.pat, Some((*pt.ty).clone())),
            p => (p, None),
        };
        let Pat::Ident(pi) = pat else { continue };
        if pi.by_ref.is_some() || pi.mutability.is_some() || pi.subpat.is_some() {
            continue;
        }
        let Some(init) = l.init.as_ref().filter(|i| i.diverge.is_none()) else {
            continue;
        };
        let Some(n) = arity(&init.expr) else { continue };
        let name = pi.ident.to_string();
        let mut uses = Uses {
            name: name.clone(),
            ..Uses::default()
        };
        uses.tail(&stmts[k + 1..]);
        if uses.bare > 0 || uses.rebound || uses.fields == 0 {
            continue;
        }
        let fields: Vec<syn::Ident> = (0..n)
            .map(|i| {
                let fresh = names.fresh(&format!("{name}_{i}"));
                syn::Ident::new(&fresh.to_string(), pi.ident.span())
            })
            .collect();
        let by_index: HashMap<u32, syn::Ident> =
            (0..n as u32).zip(fields.iter().cloned()).collect();
        let init = &init.expr;
        let ty = ty.map(|t| quote::quote!(: #t));
        stmts[k] = syn::parse_quote!(let (#(#fields),*) #ty = #init;);
        let mut sub = Fields {
            name: &name,
            names: &by_index,
        };
        sub.tail(&mut stmts[k + 1..]);
    }
}

/// For a `let` binding `name` at the top of its pattern (`let t = ..`,
/// `let t: T = ..`, `let mut t;`): its initialiser, if any.
fn rebinding<'s>(st: &'s Stmt, name: &str) -> Option<Option<&'s syn::LocalInit>> {
    let Stmt::Local(l) = st else { return None };
    let pat = match &l.pat {
        Pat::Type(pt) => &*pt.pat,
        p => p,
    };
    matches!(pat, Pat::Ident(pi) if pi.ident == name).then_some(l.init.as_ref())
}

struct Blocks<'a>(&'a mut Names);

impl VisitMut for Blocks<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        rewrite(&mut b.stmts, self.0);
        syn::visit_mut::visit_block_mut(self, b);
    }
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        super::sugar::in_vec_macro(m, |e| self.visit_expr_mut(e));
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Rewrites every local tuple read only by its fields in `block`.
pub(crate) fn desugar(block: &mut syn::Block) {
    // Most bodies read no tuple field: they are not printed to find names.
    let mut any = AnyTupleField(false);
    any.visit_block(block);
    if !any.0 {
        return;
    }
    let mut names = Names::avoiding(block.to_token_stream());
    Blocks(&mut names).visit_block_mut(block);
}

/// Whether a block may read a field `t.N`.
struct AnyTupleField(bool);

impl<'ast> Visit<'ast> for AnyTupleField {
    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Field(f) if matches!(f.member, syn::Member::Unnamed(_)) => self.0 = true,
            _ if self.0 => {}
            _ => syn::visit::visit_expr(self, e),
        }
    }
    // A macro's tokens are not searched: it counts as a read.
    fn visit_macro(&mut self, _: &'ast syn::Macro) {
        self.0 = true;
    }
}
