//! The walk over the body: what use each construct makes of the field paths
//! it reads (the context an expression gives its operands), and which
//! locals a `let` binds, in scope.

use super::{key, Reads, Use, Walker};
use proc_macro2::TokenStream;
use quote::ToTokens;
use std::collections::HashMap;
use syn::visit::{self, Visit};
use syn::{BinOp, Expr, Lit};

/// `p.a.b` (named fields down to a root) as the root and the fields.
fn chain<'e>(e: &'e Expr, roots: &[String]) -> Option<(String, Vec<&'e syn::Ident>)> {
    let mut fields = Vec::new();
    let mut cur = e;
    loop {
        match cur {
            Expr::Field(f) => match &f.member {
                syn::Member::Named(i) => {
                    fields.push(i);
                    cur = &f.base;
                }
                syn::Member::Unnamed(_) => return None,
            },
            Expr::Paren(p) => cur = &p.expr,
            Expr::Group(g) => cur = &g.expr,
            Expr::Path(p) if p.qself.is_none() => {
                let root = p.path.get_ident()?.to_string();
                if fields.is_empty() || !roots.contains(&root) {
                    return None;
                }
                fields.reverse();
                return Some((root, fields));
            }
            _ => return None,
        }
    }
}

fn root_of(e: &Expr, roots: &[String]) -> Option<String> {
    match e {
        Expr::Path(p) if p.qself.is_none() => {
            let r = p.path.get_ident()?.to_string();
            roots.contains(&r).then_some(r)
        }
        Expr::Paren(p) => root_of(&p.expr, roots),
        Expr::Reference(r) => root_of(&r.expr, roots),
        _ => None,
    }
}

fn int_literal(e: &Expr) -> bool {
    match crate::lower::strip(e) {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => !matches!(i.suffix(), "f32" | "f64"),
            _ => false,
        },
        Expr::Unary(u) => int_literal(&u.expr),
        _ => false,
    }
}

fn float_literal(e: &Expr) -> bool {
    match crate::lower::strip(e) {
        Expr::Lit(l) => match &l.lit {
            Lit::Float(_) => true,
            Lit::Int(i) => matches!(i.suffix(), "f32" | "f64"),
            _ => false,
        },
        Expr::Unary(u) => float_literal(&u.expr),
        _ => false,
    }
}

const ARRAY_METHODS: &[&str] = &[
    "iter",
    "into_iter",
    "to_vec",
    "to_owned",
    "clone",
    "first",
    "last",
    "chunks",
    "chunks_exact",
    "windows",
    "split_at",
    "get",
    "as_slice",
];

const INT_METHODS: &[&str] = &[
    "pow",
    "count_ones",
    "count_zeros",
    "leading_zeros",
    "trailing_zeros",
    "is_power_of_two",
    "next_power_of_two",
    "checked_add",
    "checked_sub",
    "checked_mul",
    "checked_div",
    "wrapping_add",
    "wrapping_sub",
    "wrapping_mul",
    "saturating_add",
    "saturating_sub",
    "saturating_mul",
    "abs_diff",
    "is_positive",
    "is_negative",
];

/// Methods of integers and floats alike: an integer literal argument says
/// which (`n.max(1)`).
const SHARED_METHODS: &[&str] = &[
    "max",
    "min",
    "clamp",
    "abs",
    "signum",
    "rem_euclid",
    "div_euclid",
];

fn is_float_type(ty: &syn::Type) -> bool {
    crate::signature::float_name(ty).is_some()
}

impl Walker<'_> {
    fn with<R>(&mut self, ctx: Use, f: impl FnOnce(&mut Self) -> R) -> R {
        let old = std::mem::replace(&mut self.ctx, ctx);
        let r = f(self);
        self.ctx = old;
        r
    }

    fn read(&mut self, root: String, fields: &[&syn::Ident], array: bool, u: Use) {
        let names: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
        let k = (root, names);
        if !self.reads.contains_key(&k) {
            self.order.push(k.clone());
        }
        let (_, r) = self.reads.entry(k).or_insert_with(|| {
            (
                fields.iter().map(|&f| f.clone()).collect(),
                Reads::default(),
            )
        });
        r.array |= array;
        r.uses.insert(key(u));
        r.span.get_or_insert(fields.last().expect("a field").span());
        if u == Use::Value {
            if let Some(b) = &self.binding {
                r.flows_into.insert(b.clone());
            }
        }
    }

    /// The key of the binding `name` refers to here.
    fn key_of(&self, name: &str) -> String {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name).cloned())
            .unwrap_or_else(|| name.to_string())
    }

    /// A new binding of `name` in the innermost scope, and its key.
    fn bind(&mut self, name: &str) -> String {
        self.bindings += 1;
        let key = format!("{name}#{}", self.bindings);
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), key.clone());
        }
        key
    }

    /// Binds every name of a pattern (loop variables, closure parameters).
    fn bind_pat(&mut self, p: &syn::Pat) {
        struct Names(Vec<String>);
        impl<'a> Visit<'a> for Names {
            fn visit_pat_ident(&mut self, i: &'a syn::PatIdent) {
                self.0.push(i.ident.to_string());
                visit::visit_pat_ident(self, i);
            }
        }
        let mut n = Names(Vec::new());
        n.visit_pat(p);
        for name in n.0 {
            self.bind(&name);
        }
    }

    fn scoped(&mut self, f: impl FnOnce(&mut Self)) {
        self.scopes.push(HashMap::new());
        f(self);
        self.scopes.pop();
    }

    fn local(&mut self, name: String) {
        let name = self.key_of(&name);
        match self.ctx {
            Use::Data => {
                self.data_names.insert(name);
            }
            Use::Value => {
                if let Some(b) = &self.binding {
                    self.local_flows.entry(b.clone()).or_default().insert(name);
                }
            }
            _ => {}
        }
    }

    fn error(&mut self, tokens: impl ToTokens, msg: String) {
        self.errors.push((tokens.to_token_stream(), msg));
    }

    /// `e` indexed or lent: a field path read as an array, else an
    /// expression like any other.
    fn array_or_expr(&mut self, e: &Expr) {
        match chain(e, self.roots) {
            Some((root, fields)) => {
                let ctx = self.ctx;
                self.read(root, &fields, true, ctx);
            }
            None => self.visit_expr(e),
        }
    }

    /// An argument of a function or of a method the macro cannot see into.
    fn arg(&mut self, a: &Expr) {
        match chain(a, self.roots) {
            Some((root, fields)) => self.read(root, &fields, false, Use::Arg),
            None => self.with(Use::Value, |w| w.visit_expr(a)),
        }
    }

    /// Expressions inside `vec![..]`, `assert!(..)` and the like.
    fn macro_args(&mut self, tokens: &TokenStream) {
        use syn::parse::Parser;
        let list = syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated;
        if let Ok(args) = list.parse2(tokens.clone()) {
            for a in &args {
                self.with(Use::Value, |w| w.visit_expr(a));
            }
            return;
        }
        let repeat = |input: syn::parse::ParseStream| -> syn::Result<(Expr, Expr)> {
            let v: Expr = input.parse()?;
            input.parse::<syn::Token![;]>()?;
            Ok((v, input.parse()?))
        };
        if let Ok((v, n)) = repeat.parse2(tokens.clone()) {
            self.with(Use::Value, |w| w.visit_expr(&v));
            self.with(Use::Data, |w| w.visit_expr(&n));
        }
    }
}

impl<'ast> Visit<'ast> for Walker<'_> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        if let Some((root, fields)) = chain(e, self.roots) {
            let ctx = self.ctx;
            self.read(root, &fields, false, ctx);
            return;
        }
        if let Some(root) = root_of(e, self.roots) {
            if matches!(e, Expr::Path(_) | Expr::Reference(_) | Expr::Paren(_)) {
                let msg = format!("`{root}` is differentiated: read its fields here (`{root}.w[i]`, `{root}.b`); passing, copying or binding the whole struct is not supported: pass the fields a callee needs (`f(&{root}.w, ..)`)");
                self.error(e, msg);
                return;
            }
        }
        if let Expr::Path(p) = e {
            if let Some(i) = p.path.get_ident() {
                self.local(i.to_string());
            }
        }
        visit::visit_expr(self, e);
    }

    fn visit_expr_index(&mut self, ix: &'ast syn::ExprIndex) {
        self.array_or_expr(&ix.expr);
        self.with(Use::Data, |w| w.visit_expr(&ix.index));
    }

    fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
        self.array_or_expr(&r.expr);
    }

    fn visit_expr_range(&mut self, r: &'ast syn::ExprRange) {
        self.with(Use::Data, |w| {
            if let Some(s) = &r.start {
                w.visit_expr(s);
            }
            if let Some(e) = &r.end {
                w.visit_expr(e);
            }
        });
    }

    fn visit_expr_cast(&mut self, c: &'ast syn::ExprCast) {
        let u = if is_float_type(&c.ty) {
            Use::FloatCast
        } else {
            Use::Neutral
        };
        self.with(u, |w| w.visit_expr(&c.expr));
    }

    fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
        let comparison = matches!(
            b.op,
            BinOp::Lt(_) | BinOp::Le(_) | BinOp::Gt(_) | BinOp::Ge(_) | BinOp::Eq(_) | BinOp::Ne(_)
        );
        let logic = matches!(b.op, BinOp::And(_) | BinOp::Or(_));
        let u = if int_literal(&b.left) || int_literal(&b.right) {
            Use::Data
        } else if float_literal(&b.left) || float_literal(&b.right) {
            Use::Value
        } else if comparison || logic {
            Use::Neutral
        } else {
            self.ctx
        };
        self.with(u, |w| {
            w.visit_expr(&b.left);
            w.visit_expr(&b.right);
        });
    }

    fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
        self.with(Use::Neutral, |w| w.visit_expr(&i.cond));
        self.with(Use::Value, |w| {
            w.visit_block(&i.then_branch);
            if let Some((_, e)) = &i.else_branch {
                w.visit_expr(e);
            }
        });
    }

    fn visit_expr_while(&mut self, wh: &'ast syn::ExprWhile) {
        self.with(Use::Neutral, |w| w.visit_expr(&wh.cond));
        self.with(Use::Value, |w| w.visit_block(&wh.body));
    }

    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        self.with(Use::Neutral, |w| w.visit_expr(&m.expr));
        for arm in &m.arms {
            if let Some((_, g)) = &arm.guard {
                self.with(Use::Neutral, |w| w.visit_expr(g));
            }
            self.with(Use::Value, |w| w.visit_expr(&arm.body));
        }
    }

    fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
        self.visit_expr(&f.expr);
        self.scoped(|w| {
            w.bind_pat(&f.pat);
            w.with(Use::Value, |w| w.visit_block(&f.body));
        });
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let name = m.method.to_string();
        let literal_args = |pred: fn(&Expr) -> bool| m.args.iter().any(pred);
        if let Some((root, fields)) = chain(&m.receiver, self.roots) {
            let ctx = self.ctx;
            if name == "len" || name == "is_empty" {
                self.read(root, &fields, true, Use::Neutral);
            } else if ARRAY_METHODS.contains(&name.as_str()) {
                self.read(root, &fields, true, ctx);
            } else if INT_METHODS.contains(&name.as_str())
                || SHARED_METHODS.contains(&name.as_str()) && literal_args(int_literal)
            {
                self.read(root, &fields, false, Use::Data);
            } else if crate::rules::Prim::from_method(&name).is_some() {
                self.read(root, &fields, false, Use::Value);
            } else {
                let path: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
                let msg = format!("`.{name}()` on `{root}.{}`, a field of a differentiated struct: the macro cannot see into it; read the field's values here, or call a differentiated function with them (`f(&{root}.{}, ..)`)", path.join("."), path.join("."));
                self.error(&m.method, msg);
            }
        } else if let Some(root) = root_of(&m.receiver, self.roots) {
            let msg = format!("`{root}.{name}(..)`: calling a method of `{root}`, which is differentiated, is not supported (its derivative with respect to `{root}`'s fields would be lost): compute it here, or call a function of the fields it reads (`f(&{root}.w, ..)`)");
            self.error(&m.method, msg);
            return;
        } else if matches!(name.as_str(), "len" | "is_empty" | "count") {
            // A length reads no values, nor does a count (what it counts
            // is told by conditions): `as f64` casts the count, not what
            // the iterator walks.
            self.with(Use::Neutral, |w| w.visit_expr(&m.receiver));
        } else {
            self.visit_expr(&m.receiver);
        }
        let float_method = crate::rules::Prim::from_method(&name).is_some();
        for (k, a) in m.args.iter().enumerate() {
            match name.as_str() {
                "powi" | "get" => self.with(Use::Data, |w| w.visit_expr(a)),
                // The start of a fold, or the default of an `Option`, is
                // of the result's type: used as the result is.
                "fold" | "unwrap_or" if k == 0 => {
                    let ctx = self.ctx;
                    self.with(ctx, |w| w.visit_expr(a));
                }
                _ if float_method => self.with(Use::Value, |w| w.visit_expr(a)),
                _ => self.arg(a),
            }
        }
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        for a in &c.args {
            self.arg(a);
        }
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        let (name, ty) = match &l.pat {
            syn::Pat::Ident(p) => (Some(p.ident.to_string()), None),
            syn::Pat::Type(t) => match &*t.pat {
                syn::Pat::Ident(p) => (Some(p.ident.to_string()), Some(&*t.ty)),
                _ => (None, Some(&*t.ty)),
            },
            _ => (None, None),
        };
        let u = match ty {
            Some(t) if crate::signature::integer(t) => Use::Data,
            _ => Use::Value,
        };
        // The initialiser reads the bindings before this one.
        let key = name.as_deref().map(|n| {
            self.bindings += 1;
            format!("{n}#{}", self.bindings)
        });
        if let Some(init) = &l.init {
            let old = std::mem::replace(&mut self.binding, key.clone());
            self.with(u, |w| w.visit_expr(&init.expr));
            self.binding = old;
            if let Some((_, e)) = &init.diverge {
                self.with(Use::Value, |w| w.visit_expr(e));
            }
        }
        match (name, key) {
            (Some(n), Some(k)) => {
                if let Some(s) = self.scopes.last_mut() {
                    s.insert(n, k);
                }
            }
            _ => self.bind_pat(&l.pat),
        }
    }

    fn visit_block(&mut self, b: &'ast syn::Block) {
        self.scoped(|w| visit::visit_block(w, b));
    }

    fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
        self.scoped(|w| {
            for p in &c.inputs {
                w.bind_pat(p);
            }
            w.visit_expr(&c.body);
        });
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.macro_args(&m.tokens);
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}
