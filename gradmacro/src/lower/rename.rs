//! Passive code is kept as the user wrote it, with local variables renamed to
//! their generated names. This module does that renaming and the checks that
//! make it safe.

use super::reject::Unsupported;
use crate::ir::VarId;
use proc_macro2::Ident;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::Expr;

/// A name bound by a desugared array loop to an element, `x[k]`, rather than
/// to a variable of its own: uses read the element in place.
#[derive(Clone)]
pub struct Alias {
    pub operand: crate::ir::Operand,
    /// The element as passive code, locals already renamed.
    pub expr: Expr,
    pub reads: Vec<VarId>,
    pub active: bool,
    /// The user's code sees a reference: `*x` reads as `x`.
    pub by_ref: bool,
}

#[derive(Clone)]
pub enum Binding {
    Var(VarId),
    Alias(Box<Alias>),
    /// `let sq = |v: f64| v * v;`, whose calls were written out before
    /// lowering (`sugar/mod.rs`): any other use is an error.
    Closure,
}

/// Resolves a user identifier to what it names, if it is a local.
pub trait Resolve {
    fn lookup(&self, name: &str) -> Option<Binding>;
    fn ident_of(&self, var: VarId) -> Ident;
    fn is_active(&self, var: VarId) -> bool;
    fn deref_transparent(&self, var: VarId) -> bool;

    /// The variable `name` is bound to, if it is a plain variable.
    fn resolve(&self, name: &str) -> Option<VarId> {
        match self.lookup(name)? {
            Binding::Var(v) => Some(v),
            Binding::Alias(_) | Binding::Closure => None,
        }
    }

    fn binding_is_active(&self, name: &str) -> bool {
        match self.lookup(name) {
            Some(Binding::Var(v)) => self.is_active(v),
            Some(Binding::Alias(a)) => a.active,
            // Its body may read differentiated values: a call is lowered.
            Some(Binding::Closure) => true,
            None => false,
        }
    }

    /// `*name` means just `name` here.
    fn transparent(&self, name: &str) -> bool {
        match self.lookup(name) {
            Some(Binding::Var(v)) => self.deref_transparent(v),
            Some(Binding::Alias(a)) => a.by_ref,
            Some(Binding::Closure) | None => false,
        }
    }
}

/// The single identifier of a plain path expression (`x`), if that is what `e` is.
pub fn local_name(e: &Expr) -> Option<&syn::Ident> {
    match e {
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => p.path.get_ident(),
        Expr::Paren(p) => local_name(&p.expr),
        Expr::Group(g) => local_name(&g.expr),
        _ => None,
    }
}

/// Does `e` read any active variable?
pub fn mentions_active(e: &Expr, r: &dyn Resolve) -> bool {
    struct Finder<'a> {
        r: &'a dyn Resolve,
        found: bool,
    }
    impl<'ast> Visit<'ast> for Finder<'_> {
        // Stops at the first active name.
        fn visit_expr(&mut self, e: &'ast Expr) {
            if !self.found {
                syn::visit::visit_expr(self, e);
            }
        }
        // A name first, then the other operand: in a chain (`x * y * z * ..`,
        // `x + (y + (..))`) the other one holds the rest of it.
        fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
            let name = |e: &Expr| matches!(super::strip(e), Expr::Path(_));
            if name(&b.left) && !name(&b.right) {
                self.visit_expr(&b.left);
                self.visit_expr(&b.right);
            } else {
                self.visit_expr(&b.right);
                self.visit_expr(&b.left);
            }
        }
        fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
            if let Some(id) = p.path.get_ident() {
                self.found |= self.r.binding_is_active(&id.to_string());
            }
        }
        // The length of an array, or of a sub-slice `x[a..b]`, does not
        // depend on its values (only on the bounds).
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let len = matches!(m.method.to_string().as_str(), "len" | "is_empty");
            match super::strip(&m.receiver) {
                _ if !len => self.visit_expr(&m.receiver),
                r if local_name(r).is_some() => {}
                Expr::Index(ix)
                    if local_name(&ix.expr).is_some()
                        && matches!(super::strip(&ix.index), Expr::Range(_)) =>
                {
                    self.visit_expr(&ix.index)
                }
                r => self.visit_expr(r),
            }
            for a in &m.args {
                self.visit_expr(a);
            }
        }
        // syn leaves a macro's tokens unparsed: `vec![x; n]` reads `x`.
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            use super::vec_macros::{parse, VecBody};
            if self.found {
                return;
            }
            match parse(m) {
                Some(VecBody::Repeat(r)) => {
                    self.visit_expr(&r.0);
                    self.visit_expr(&r.1);
                }
                Some(VecBody::List(items)) => items.iter().for_each(|e| self.visit_expr(e)),
                None => {}
            }
        }
        // A nested item cannot see the function's locals.
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut f = Finder { r, found: false };
    f.visit_expr(e);
    f.found
}

/// A copy of `e` with every local renamed; returns it with the variables it reads.
pub fn rename(e: &Expr, r: &dyn Resolve) -> (Expr, Vec<VarId>) {
    struct Renamer<'a> {
        r: &'a dyn Resolve,
        reads: Vec<VarId>,
        /// Parameters of the closures being visited: they hide locals.
        shadowed: Vec<String>,
    }
    impl Renamer<'_> {
        fn read(&mut self, v: VarId) {
            if !self.reads.contains(&v) {
                self.reads.push(v);
            }
        }
        fn lookup(&self, name: &syn::Ident) -> Option<Binding> {
            let name = name.to_string();
            if self.shadowed.contains(&name) {
                return None;
            }
            self.r.lookup(&name)
        }
    }
    impl VisitMut for Renamer<'_> {
        fn visit_expr_closure_mut(&mut self, c: &mut syn::ExprClosure) {
            let depth = self.shadowed.len();
            for p in &c.inputs {
                self.shadowed.extend(pattern_names(p));
            }
            self.visit_expr_mut(&mut c.body);
            self.shadowed.truncate(depth);
        }
        // A `let` inside copied code hides the function's local of that name
        // for the rest of its block.
        fn visit_block_mut(&mut self, b: &mut syn::Block) {
            let depth = self.shadowed.len();
            for s in &mut b.stmts {
                match s {
                    syn::Stmt::Local(l) => {
                        if let Some(init) = &mut l.init {
                            self.visit_local_init_mut(init);
                        }
                        self.shadowed.extend(pattern_names(&l.pat));
                    }
                    other => self.visit_stmt_mut(other),
                }
            }
            self.shadowed.truncate(depth);
        }
        fn visit_expr_for_loop_mut(&mut self, f: &mut syn::ExprForLoop) {
            self.visit_expr_mut(&mut f.expr);
            let depth = self.shadowed.len();
            self.shadowed.extend(pattern_names(&f.pat));
            self.visit_block_mut(&mut f.body);
            self.shadowed.truncate(depth);
        }
        fn visit_arm_mut(&mut self, a: &mut syn::Arm) {
            let depth = self.shadowed.len();
            self.shadowed.extend(pattern_names(&a.pat));
            if let Some((_, guard)) = &mut a.guard {
                self.visit_expr_mut(guard);
            }
            self.visit_expr_mut(&mut a.body);
            self.shadowed.truncate(depth);
        }
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            if let Expr::Unary(u) = e {
                if let (syn::UnOp::Deref(_), Some(name)) = (&u.op, local_name(&u.expr)) {
                    let transparent = match self.lookup(name) {
                        Some(Binding::Var(v)) => self.r.deref_transparent(v),
                        Some(Binding::Alias(a)) => a.by_ref,
                        Some(Binding::Closure) | None => false,
                    };
                    if transparent {
                        *e = (*u.expr).clone();
                    }
                }
            }
            if let Some(name) = local_name(e).filter(|_| matches!(e, Expr::Path(_))) {
                if let Some(Binding::Alias(a)) = self.lookup(name) {
                    for v in &a.reads {
                        self.read(*v);
                    }
                    *e = a.expr.clone();
                    return;
                }
            }
            syn::visit_mut::visit_expr_mut(self, e);
        }
        fn visit_expr_path_mut(&mut self, p: &mut syn::ExprPath) {
            if p.qself.is_some() {
                return;
            }
            let Some(id) = p.path.get_ident() else { return };
            if let Some(Binding::Var(v)) = self.lookup(id) {
                let new = self.r.ident_of(v);
                let new = Ident::new(&new.to_string(), new.span().located_at(id.span()));
                p.path.segments[0].ident = new;
                self.read(v);
            }
        }
        // `S { g }` prints its value as the field's name: once the value is
        // renamed, the field must be written out (`S { g: g_1 }`).
        fn visit_field_value_mut(&mut self, fv: &mut syn::FieldValue) {
            if matches!(fv.member, syn::Member::Named(_)) {
                fv.colon_token.get_or_insert_with(Default::default);
            }
            syn::visit_mut::visit_field_value_mut(self, fv);
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    let mut e = e.clone();
    let mut rn = Renamer {
        r,
        reads: Vec::new(),
        shadowed: Vec::new(),
    };
    rn.visit_expr_mut(&mut e);
    (e, rn.reads)
}

/// The names a pattern binds.
pub(crate) fn pattern_names(p: &syn::Pat) -> Vec<String> {
    struct Names(Vec<String>);
    impl<'ast> Visit<'ast> for Names {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.0.push(p.ident.to_string());
            syn::visit::visit_pat_ident(self, p);
        }
    }
    let mut n = Names(Vec::new());
    n.visit_pat(p);
    n.0
}

/// Syntax that passive code may not contain, found anywhere in `e`: returns the
/// offending node and what to say about it.
pub fn forbidden(e: &Expr) -> Vec<(proc_macro2::TokenStream, &'static str)> {
    struct Finder {
        found: Vec<(proc_macro2::TokenStream, &'static str)>,
        /// Inside a closure, where `return` leaves the closure.
        closures: usize,
        /// Names bound inside `e` and in scope: assigning to one (the
        /// accumulator of a filtered sum written out as a block) is
        /// computation on values, kept as written.
        locals: Vec<String>,
    }
    impl Finder {
        fn local(&self, target: &Expr) -> bool {
            let target = match target {
                Expr::Index(ix) => &*ix.expr,
                t => t,
            };
            local_name(target).is_some_and(|n| self.locals.contains(&n.to_string()))
        }
    }
    impl<'ast> Visit<'ast> for Finder {
        fn visit_block(&mut self, b: &'ast syn::Block) {
            let depth = self.locals.len();
            for s in &b.stmts {
                self.visit_stmt(s);
                if let syn::Stmt::Local(l) = s {
                    self.locals.extend(pattern_names(&l.pat));
                }
            }
            self.locals.truncate(depth);
        }
        fn visit_expr(&mut self, e: &'ast Expr) {
            let msg = match e {
                Expr::Assign(a) if self.local(&a.left) => None,
                Expr::Binary(b) if is_compound_assign(&b.op) && self.local(&b.left) => None,
                // A closure evaluated on values (in a condition, or over
                // constant data) is copied as it is; one capturing a
                // differentiated value in arithmetic never gets here.
                Expr::Closure(c) if c.asyncness.is_none() => {
                    self.closures += 1;
                    self.visit_expr(&c.body);
                    self.closures -= 1;
                    return;
                }
                Expr::Closure(_) => Some(Unsupported::AsyncClosure.message()),
                Expr::Return(_) | Expr::Break(_) | Expr::Continue(_) if self.closures > 0 => None,
                // The unreachable arm of a part read out of a `match` arm
                // already taken (`matching.rs`).
                Expr::Macro(m)
                    if m.mac
                        .path
                        .segments
                        .last()
                        .is_some_and(|s| s.ident == "unreachable") =>
                {
                    None
                }
                Expr::Macro(_) => Some(Unsupported::Macro.message()),
                Expr::Async(_) | Expr::Await(_) => Some(Unsupported::Async.message()),
                Expr::Unsafe(_) => Some(Unsupported::Unsafe.message()),
                Expr::Try(_) | Expr::TryBlock(_) => Some(Unsupported::Try.message()),
                Expr::Yield(_) => Some(Unsupported::Yield.message()),
                Expr::Call(c) if super::reject::is_mem_move(c) => {
                    Some(Unsupported::MemMove.message())
                }
                Expr::Assign(_) => Some(Unsupported::Assign.message()),
                Expr::Binary(b) if is_compound_assign(&b.op) => {
                    Some(Unsupported::CompoundAssign.message())
                }
                Expr::Return(_) | Expr::Break(_) | Expr::Continue(_) => {
                    Some(Unsupported::ExitInExpression.message())
                }
                Expr::Block(_)
                | Expr::If(_)
                | Expr::Match(_)
                | Expr::Loop(_)
                | Expr::While(_)
                | Expr::ForLoop(_)
                | Expr::Let(_) => None,
                _ => None,
            };
            if let Some(msg) = msg {
                self.found.push((quote::ToTokens::to_token_stream(e), msg));
                return;
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
        fn visit_stmt_macro(&mut self, m: &'ast syn::StmtMacro) {
            self.found.push((
                quote::ToTokens::to_token_stream(m),
                Unsupported::Macro.message(),
            ));
        }
    }
    let mut f = Finder {
        found: Vec::new(),
        closures: 0,
        locals: Vec::new(),
    };
    f.visit_expr(e);
    f.found
}

pub fn is_compound_assign(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitXorAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}

/// Needs no parentheses as an operand or a method receiver.
pub fn is_primary(e: &Expr) -> bool {
    match e {
        Expr::Lit(_)
        | Expr::Path(_)
        | Expr::Paren(_)
        | Expr::MethodCall(_)
        | Expr::Call(_)
        | Expr::Field(_)
        | Expr::Index(_)
        | Expr::Tuple(_)
        | Expr::Array(_) => true,
        Expr::Group(g) => is_primary(&g.expr),
        _ => false,
    }
}
