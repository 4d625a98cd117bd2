//! `for` loops over integer ranges (over arrays, `array.rs` takes them
//! first), `while` and `loop`, each body lowered into a block of its own, and
//! what the reverse sweep needs to run a `for` loop backwards.

use super::{adaptors, rename, strip, Assigned, ForLoop, LoopBody, Lowerer, Val};
use crate::ir::*;
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

impl Lowerer<'_> {
    pub(crate) fn enter_loop(&mut self) {
        self.loop_depth += 1;
    }

    /// After a loop: a write in its body may or may not have happened.
    pub(crate) fn leave_loop(&mut self, before: Vec<Assigned>) {
        self.loop_depth -= 1;
        let after = std::mem::replace(&mut self.assigned, before);
        for (i, a) in after.iter().enumerate().take(self.assigned.len()) {
            if self.assigned[i] == Assigned::No && *a != Assigned::No {
                self.assigned[i] = Assigned::Maybe;
                self.vars[i].maybe_unassigned = true;
            }
        }
        self.assigned
            .extend_from_slice(&after[self.assigned.len()..]);
        self.diverged = false;
    }

    fn loop_body(
        &mut self,
        label: Option<&syn::Label>,
        body: LoopBody<'_>,
        binding: Option<&syn::Pat>,
    ) -> (Block, Option<VarId>) {
        if let Some(label) = label {
            self.cx.error(label, "labelled loops are not supported: use a `bool` flag, or move the inner loop into its own `#[differentiate]` function");
        }
        let mut bound = None;
        let block = self.in_loop_body(|l| {
            if let Some(pat) = binding {
                bound = l.loop_binding(pat);
            }
            l.loop_body_stmts(body)
        });
        (block, bound)
    }

    /// A loop's body, built by `f` in the loop's context; a variable it
    /// assigns may be unassigned after the loop (see `leave_loop`).
    pub(crate) fn in_loop_body(&mut self, f: impl FnOnce(&mut Self)) -> Block {
        let ctx = Ctx {
            nested: true,
            loop_depth: self.ctx.loop_depth + 1,
        };
        let before = self.assigned.clone();
        self.enter_loop();
        let (block, _) = self.construct_block(ctx, f);
        self.leave_loop(before);
        block
    }

    /// Lowers a loop's body into the current (loop) block.
    pub(crate) fn loop_body_stmts(&mut self, body: LoopBody<'_>) {
        match body {
            LoopBody::Stmts(stmts) => self.stmts(stmts, None),
            LoopBody::Fold {
                acc,
                acc_name,
                prim,
                value,
                mapped,
            } => {
                if let Some((name, map_body)) = mapped {
                    let val = self.expr(map_body);
                    let span = syn::spanned::Spanned::span(map_body);
                    let elem = self.fresh_var("mapped", VarKind::Active, span);
                    self.write(elem, val, map_body);
                    self.bind(name, elem);
                }
                if let Some(name) = acc_name {
                    self.bind(name, acc);
                }
                let val = self.expr(value);
                let val = match prim {
                    Some(prim) => {
                        let operand = self.operand(val);
                        let args = vec![Operand::Var(acc), operand];
                        Val::Pending(prim, args, syn::spanned::Spanned::span(value))
                    }
                    None => val,
                };
                self.write(acc, val, value);
            }
            LoopBody::Lowered(lower) => lower(self),
            LoopBody::Push { arr, value } => {
                let val = self.expr(value);
                let value = self.operand(val);
                self.vars[arr.0].reassigned = true;
                self.cur.push(Stmt::Push(Push { arr, value }));
            }
        }
    }

    fn loop_binding(&mut self, pat: &syn::Pat) -> Option<VarId> {
        match pat {
            syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                let v = self.declare(&p.ident, VarKind::Passive, p.ident.span());
                self.assigned[v.0] = Assigned::Yes;
                Some(v)
            }
            syn::Pat::Wild(_) => None,
            other => {
                self.cx.error(other, "this loop pattern is not supported: loop over an integer range with a plain name, `for i in 0..n`");
                None
            }
        }
    }

    pub(super) fn for_(&mut self, f: &syn::ExprForLoop) {
        self.for_loop(ForLoop {
            label: f.label.as_ref(),
            pat: &f.pat,
            iter: &f.expr,
            span: loop_span(f),
            body: LoopBody::Stmts(&f.body.stmts),
        });
    }

    pub(crate) fn for_loop(&mut self, f: ForLoop<'_>) {
        if self.array_loop(&f) {
            return;
        }
        let iter = if rename::mentions_active(f.iter, self) {
            match adaptors::unsupported_adaptor(f.iter) {
                Some(culprit) => self.cx.error(culprit, adaptors::adaptor_message(culprit)),
                None => self.cx.error(f.iter, "a `for` loop must run over integers (`0..n`, `(a..b).rev()`, `(a..=b).step_by(k)`) or over arrays (`x.iter()`, `&x[a..b]`, with `.zip(..)`, `.enumerate()`, `.rev()`, `.skip(n)`, `.take(n)`, `.step_by(k)`); the range cannot depend on a differentiated value"),
            }
            None
        } else {
            self.passive(f.iter)
        };
        let site = self.next_site();
        // A loop already reported for its iterator is not reported again for
        // a pattern only that iterator could have bound (`(i, v)`).
        let pat = match (&iter, f.pat) {
            (None, p) if !matches!(p, syn::Pat::Ident(_) | syn::Pat::Wild(_)) => None,
            (_, p) => Some(p),
        };
        let (body, binding) = self.loop_body(f.label, f.body, pat);
        if let Some(iter) = iter {
            let replay = match binding {
                Some(v) if !self.vars[v.0].reassigned => replay_of(f.iter),
                _ => None,
            };
            let reversed = match binding {
                Some(v) if self.vars[v.0].reassigned => None,
                _ => syn::parse2::<syn::Expr>(iter.tokens.clone())
                    .ok()
                    .and_then(|e| reversed_range(&e))
                    .map(|tokens| Passive {
                        tokens,
                        primary: true,
                        reads: iter.reads.clone(),
                    }),
            };
            self.cur.push(Stmt::Loop(Loop {
                id: StmtId::default(),
                site,
                kind: LoopKind::For {
                    binding,
                    iter,
                    replay,
                    reversed,
                    trips: literal_trips(f.iter),
                },
                body,
                ctx: self.ctx,
            }));
        }
    }

    pub(super) fn while_(&mut self, w: &syn::ExprWhile) {
        let site = self.next_site();
        let cond = self.cond(&w.cond);
        let (body, _) = self.loop_body(w.label.as_ref(), LoopBody::Stmts(&w.body.stmts), None);
        if let Some(cond) = cond {
            self.cur.push(Stmt::Loop(Loop {
                id: StmtId::default(),
                site,
                kind: LoopKind::While { cond },
                body,
                ctx: self.ctx,
            }));
        }
    }

    pub(super) fn loop_(&mut self, l: &syn::ExprLoop) {
        let site = self.next_site();
        let (body, _) = self.loop_body(l.label.as_ref(), LoopBody::Stmts(&l.body.stmts), None);
        self.cur.push(Stmt::Loop(Loop {
            id: StmtId::default(),
            site,
            kind: LoopKind::Infinite,
            body,
            ctx: self.ctx,
        }));
    }
}

/// The span of a `for` loop, as `Spanned::span` gives it on a stable
/// compiler (its first token), without printing the whole loop to find it:
/// for loops nested n deep that printing was quadratic.
fn loop_span(f: &syn::ExprForLoop) -> Span {
    if f.attrs.is_empty() && f.label.is_none() {
        f.for_token
            .span
            .join(f.body.brace_token.span.close())
            .unwrap_or(f.for_token.span)
    } else {
        syn::spanned::Spanned::span(f)
    }
}

/// `a..b` and `a..=b` run backwards as `(a..b).rev()`, and `(a..b).rev()` as
/// `a..b` (the tokens are already renamed).
fn reversed_range(e: &syn::Expr) -> Option<TokenStream> {
    let full = |r: &syn::ExprRange| r.start.is_some() && r.end.is_some();
    match strip(e) {
        syn::Expr::Range(r) if full(r) => {
            let r = r.to_token_stream();
            Some(quote::quote!((#r).rev()))
        }
        syn::Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() => {
            match strip(&m.receiver) {
                syn::Expr::Range(r) if full(r) => Some(r.to_token_stream()),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `a..b` with a literal start counts up from it; nothing else is replayed.
fn replay_of(e: &syn::Expr) -> Option<Replay> {
    match strip(e) {
        syn::Expr::Range(r) => match r.start.as_deref().map(strip) {
            Some(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            })) if i.base10_digits() == "0" => Some(Replay::UpFromZero),
            Some(syn::Expr::Lit(l)) if matches!(l.lit, syn::Lit::Int(_)) => {
                Some(Replay::Up(l.to_token_stream()))
            }
            _ => None,
        },
        _ => None,
    }
}

/// The length of `a..b`, `a..=b` or `(a..b).rev()` with integer literals.
fn literal_trips(e: &syn::Expr) -> Option<u64> {
    let r = match strip(e) {
        syn::Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() => strip(&m.receiver),
        other => other,
    };
    let syn::Expr::Range(r) = r else { return None };
    let int = |e: &Option<Box<syn::Expr>>| -> Option<u64> {
        match strip(e.as_deref()?) {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => i.base10_parse().ok(),
            _ => None,
        }
    };
    let (start, end) = (int(&r.start)?, int(&r.end)?);
    match r.limits {
        syn::RangeLimits::HalfOpen(_) => Some(end.saturating_sub(start)),
        syn::RangeLimits::Closed(_) => Some((end + 1).saturating_sub(start)),
    }
}
