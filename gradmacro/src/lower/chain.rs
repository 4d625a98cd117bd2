//! Loops over iterator chains of arrays, as index loops whose bindings read
//! the elements in place: `for pat in chain` where `chain` walks parameters,
//! sub-slices (`&x[a..b]`), local buffers, constant data (`cfg.w`) and
//! ranges, through `iter`, `copied`, `cloned`, `zip`, `enumerate`, `rev`,
//! `skip(n)`, `take(n)` and `step_by(k)`. Iterator reductions
//! (`.map(..).sum()`, `.fold(..)`, `.collect()`) reach here too, as the loops
//! they stand for (`iter.rs`).
//!
//! A chain is read as what one position `p` of the loop binds: each element
//! is `x[index(p)]`, each count or range value an integer expression in `p`,
//! and the loop runs `p` over `0..len`. Adaptors rewrite those expressions:
//! `skip(s)` reads position `p + s` of what it skips over, `step_by(k)`
//! position `p * k`, an inner `rev()` position `len - 1 - p`; a `rev()`
//! outermost runs the positions backwards instead, so a loop of a parameter
//! walked backwards is replayed with no record.

use super::rename::{self, Alias, Resolve};
use super::{Assigned, ForLoop, Lowerer};
use crate::ir::*;
use quote::quote;
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat};

/// What a position binds, one name per leaf of the loop's pattern.
enum Item {
    /// An element of an array, `arr[index]`.
    Elem { arr: VarId, index: Expr },
    /// An element of constant data kept as written (`cfg.w[index]`).
    Data { data: Expr, index: Expr },
    /// An integer: the count of `enumerate`, a value of a range.
    Int(Expr),
    /// `zip` and `enumerate`: a pair.
    Pair(Box<Item>, Box<Item>),
}

impl Item {
    /// Every expression of the position reads `by` where it read `pos`.
    fn at(&mut self, pos: &syn::Ident, by: &Expr) {
        let mut sub = Position { pos, by };
        match self {
            Item::Elem { index, .. } | Item::Data { index, .. } | Item::Int(index) => {
                sub.visit_expr_mut(index)
            }
            Item::Pair(a, b) => {
                a.at(pos, by);
                b.at(pos, by);
            }
        }
    }

    fn reads_array(&self) -> bool {
        match self {
            Item::Elem { .. } => true,
            Item::Data { .. } | Item::Int(_) => false,
            Item::Pair(a, b) => a.reads_array() || b.reads_array(),
        }
    }
}

/// Replaces the position's name by an expression.
struct Position<'a> {
    pos: &'a syn::Ident,
    by: &'a Expr,
}

impl VisitMut for Position<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if matches!(e, Expr::Path(p) if p.path.is_ident(self.pos)) {
            *e = self.by.clone();
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

/// A chain read as one position `pos`.
struct Chain {
    item: Item,
    /// How many positions; `None` for an endless range (`1..`).
    len: Option<Expr>,
    /// The length is that of parameters alone, which cannot change: a loop
    /// running it backwards can be replayed forwards from the count.
    fixed: bool,
}

impl Lowerer<'_> {
    /// `for pat in chain { .. }` over at least one array (see the module
    /// documentation). Returns false if `f` is not such a loop.
    pub(crate) fn array_loop(&mut self, f: &ForLoop<'_>) -> bool {
        let mut e = super::strip(f.iter);
        let mut rev = false;
        // `.rev()` last, or before `.copied()` / `.cloned()`.
        while let Expr::MethodCall(m) = e {
            match m.method.to_string().as_str() {
                "rev" if m.args.is_empty() && !rev => rev = true,
                "copied" | "cloned" if m.args.is_empty() => {}
                _ => break,
            }
            e = super::strip(&m.receiver);
        }
        // Never emitted: replaced by the loop's binding.
        let pos = syn::Ident::new("__gm_pos", proc_macro2::Span::call_site());
        let Some(chain) = self.chain(e, &pos) else {
            return false;
        };
        if !chain.item.reads_array() {
            return false;
        }
        let Some(len) = chain.len else {
            self.cx.error(
                f.iter,
                "this loop never ends: `zip` an endless range (`1..`) with an array, or `take(n)` of it",
            );
            return true;
        };
        if let Some(label) = f.label {
            self.cx
                .error(label, "labelled loops are not supported: use a `bool` flag");
        }
        let Some(len) = self.passive(&len) else {
            return true;
        };
        let len_tokens = len.tokens;
        let (iter, back) = if rev {
            (quote!((0..#len_tokens).rev()), quote!(0..#len_tokens))
        } else {
            (quote!(0..#len_tokens), quote!((0..#len_tokens).rev()))
        };
        let replay = match (rev, chain.fixed) {
            (false, _) => Some(Replay::UpFromZero),
            (true, true) => Some(Replay::Down(len_tokens.clone())),
            (true, false) => None,
        };
        let site = self.next_site();
        let mut binding = None;
        let item = chain.item;
        let body = self.in_loop_body(|l| {
            // The position is the loop's binding: the user's name for it
            // when `enumerate` counts the positions themselves.
            let counted = match (&item, f.pat) {
                (Item::Pair(i, _), Pat::Tuple(t)) if t.elems.len() == 2 => {
                    match (&**i, super::pat_ident(&t.elems[0])) {
                        (Item::Int(Expr::Path(p)), Some(id)) if p.path.is_ident(&pos) => Some(id),
                        _ => None,
                    }
                }
                _ => None,
            };
            let k = match counted {
                Some(id) => l.declare(id, VarKind::Passive, id.span()),
                None => l.new_var("k", VarKind::Passive, f.span),
            };
            l.assigned[k.0] = Assigned::Yes;
            binding = Some(k);
            l.bind(&pos, k);
            let ok = match (&item, f.pat, counted) {
                (Item::Pair(_, rest), Pat::Tuple(t), Some(_)) => {
                    l.bind_item(&t.elems[1], rest, &pos)
                }
                _ => l.bind_item(f.pat, &item, &pos),
            };
            if ok {
                l.loop_body_stmts(f.body);
            }
        });
        self.cur.push(Stmt::Loop(Loop {
            id: StmtId::default(),
            site,
            kind: LoopKind::For {
                binding,
                iter: Passive {
                    tokens: iter,
                    primary: false,
                    reads: len.reads.clone(),
                },
                replay,
                reversed: Some(Passive {
                    tokens: back,
                    primary: false,
                    reads: len.reads,
                }),
                trips: None,
            },
            body,
            ctx: self.ctx,
        }));
        true
    }

    /// Whether `e` is a chain over at least one array (`x.iter().skip(1)`).
    pub(crate) fn walks_array(&mut self, e: &Expr) -> bool {
        let pos = syn::Ident::new("__gm_pos", proc_macro2::Span::call_site());
        let mark = self.cx.len();
        let found = self.chain(e, &pos).is_some_and(|c| c.item.reads_array());
        // Asked in passing: the loop the chain becomes reports its errors.
        self.cx.truncate(mark);
        found
    }

    /// Binds the names of `pat` to what the position reads; false (with an
    /// error) if the pattern does not fit the chain.
    fn bind_item(&mut self, pat: &Pat, item: &Item, pos: &syn::Ident) -> bool {
        let pat = match pat {
            Pat::Type(t) => &*t.pat,
            p => p,
        };
        if let Item::Pair(a, b) = item {
            return match pat {
                Pat::Tuple(t) if t.elems.len() == 2 => {
                    self.bind_item(&t.elems[0], a, pos) && self.bind_item(&t.elems[1], b, pos)
                }
                Pat::Wild(_) => true,
                other => {
                    self.cx.error(other, "this loop pattern is not supported: use `(i, x)` for `enumerate` and `(a, b)` for `zip`");
                    false
                }
            };
        }
        // A plain name sees a reference (`x.iter()`): `*v` reads as `v`;
        // `&v` binds the value.
        let (name, by_ref) = match pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() && p.mutability.is_none() => {
                (p.ident.clone(), !matches!(item, Item::Int(_)))
            }
            Pat::Reference(r) if !matches!(item, Item::Int(_)) => match &*r.pat {
                Pat::Ident(p) if p.subpat.is_none() && p.mutability.is_none() => {
                    (p.ident.clone(), false)
                }
                Pat::Wild(_) => return true,
                other => {
                    self.cx.error(other, "bind the element to a plain name");
                    return false;
                }
            },
            Pat::Wild(_) => return true,
            other => {
                self.cx
                    .error(other, "bind the element to a plain name (`x` or `&x`)");
                return false;
            }
        };
        let is_pos = |e: &Expr| matches!(e, Expr::Path(p) if p.path.is_ident(pos));
        let alias = match item {
            Item::Elem { arr, index } => {
                let Some(index) = self.position_index(index, pos) else {
                    return false;
                };
                let arr_ident = self.vars[arr.0].ident.clone();
                let i = &index.tokens;
                let expr: Expr = syn::parse_quote!(#arr_ident[#i]);
                let mut reads = vec![*arr];
                reads.extend(index.reads.iter().copied());
                Alias {
                    operand: Operand::Elem(*arr, index),
                    expr,
                    reads,
                    active: self.is_active(*arr),
                    by_ref,
                }
            }
            Item::Data { data, index } => {
                let value: Expr = syn::parse_quote!(#data[#index]);
                let Some(value) = self.passive(&value) else {
                    return false;
                };
                alias_of(value, by_ref)
            }
            Item::Int(e) if is_pos(e) => {
                let k = self
                    .resolve(&pos.to_string())
                    .expect("the position is bound");
                self.bind(&name, k);
                return true;
            }
            Item::Int(e) => {
                let Some(value) = self.passive(&syn::parse_quote!((#e))) else {
                    return false;
                };
                alias_of(value, false)
            }
            Item::Pair(..) => unreachable!("pairs are matched above"),
        };
        self.bind_alias(&name, alias);
        true
    }

    /// The index of an element: the loop's binding itself where it is the
    /// position (so `x.iter()` reads `x[k]`), else an expression in it.
    fn position_index(&mut self, index: &Expr, pos: &syn::Ident) -> Option<Passive> {
        if matches!(index, Expr::Path(p) if p.path.is_ident(pos)) {
            let k = self.resolve(&pos.to_string())?;
            let ident = self.vars[k.0].ident.clone();
            return Some(Passive {
                tokens: quote!(#ident),
                primary: true,
                reads: vec![k],
            });
        }
        self.passive(index)
    }

    /// Reads `e` as a chain (see the module documentation); `None` if it is
    /// not one.
    fn chain(&mut self, e: &Expr, pos: &syn::Ident) -> Option<Chain> {
        let e = super::strip(e);
        let p: Expr = syn::parse_quote!(#pos);
        match e {
            Expr::MethodCall(m) => {
                let method = m.method.to_string();
                let recv = &*m.receiver;
                match (method.as_str(), m.args.len()) {
                    ("iter" | "into_iter" | "copied" | "cloned", 0) => self.chain(recv, pos),
                    ("rev", 0) => {
                        let mut c = self.chain(recv, pos)?;
                        let n = c.len.clone()?;
                        c.item.at(pos, &syn::parse_quote!((#n - 1 - #p)));
                        Some(c)
                    }
                    ("enumerate", 0) => {
                        let c = self.chain(recv, pos)?;
                        Some(Chain {
                            item: Item::Pair(Box::new(Item::Int(p)), Box::new(c.item)),
                            ..c
                        })
                    }
                    ("skip" | "take" | "step_by", 1) => {
                        let mut c = self.chain(recv, pos)?;
                        let arg = self.count(&m.args[0])?;
                        c.fixed = false;
                        match method.as_str() {
                            "skip" => {
                                c.item.at(pos, &syn::parse_quote!((#p + #arg)));
                                c.len = c
                                    .len
                                    .map(|n| syn::parse_quote!(usize::saturating_sub(#n, #arg)));
                            }
                            "take" => {
                                c.len = Some(match c.len {
                                    Some(n) => syn::parse_quote!(usize::min(#n, #arg)),
                                    None => syn::parse_quote!((#arg)),
                                });
                            }
                            _ => {
                                let n = c.len.clone()?;
                                c.item.at(pos, &syn::parse_quote!((#p * #arg)));
                                c.len = Some(syn::parse_quote!(usize::div_ceil(#n, #arg)));
                            }
                        }
                        Some(c)
                    }
                    ("zip", 1) => {
                        let a = self.chain(recv, pos)?;
                        let b = self.chain(&m.args[0], pos)?;
                        let len = match (a.len, b.len) {
                            (Some(x), Some(y)) => Some(syn::parse_quote!(usize::min(#x, #y))),
                            (x, y) => x.or(y),
                        };
                        Some(Chain {
                            item: Item::Pair(Box::new(a.item), Box::new(b.item)),
                            len,
                            fixed: a.fixed && b.fixed,
                        })
                    }
                    _ => None,
                }
            }
            Expr::Reference(r) if r.mutability.is_none() => self.chain(&r.expr, pos),
            // `a..b`, `a..`: the integers themselves.
            Expr::Range(r) if matches!(r.limits, syn::RangeLimits::HalfOpen(_)) => {
                let start = r.start.as_deref()?;
                if rename::mentions_active(e, self) {
                    return None;
                }
                let zero = matches!(super::strip(start), Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) if i.base10_digits() == "0");
                let value = if zero {
                    p
                } else {
                    syn::parse_quote!((#start + #p))
                };
                let len = r.end.as_ref().map(|_| syn::parse_quote!((#r).len()));
                Some(Chain {
                    item: Item::Int(value),
                    len,
                    fixed: false,
                })
            }
            // `x[a..b]`: a sub-slice.
            Expr::Index(ix) => {
                let Expr::Range(r) = super::strip(&ix.index) else {
                    return None;
                };
                if !matches!(r.limits, syn::RangeLimits::HalfOpen(_)) {
                    return None;
                }
                let arr = self.array_var(&ix.expr)?;
                if r.start
                    .iter()
                    .chain(&r.end)
                    .any(|b| rename::mentions_active(b, self))
                {
                    return None;
                }
                let x = &ix.expr;
                let index = match &r.start {
                    None => p,
                    Some(a) => syn::parse_quote!((#a + #p)),
                };
                let len: Expr = syn::parse_quote!(#x[#r].len());
                Some(Chain {
                    item: Item::Elem { arr, index },
                    len: Some(len),
                    fixed: false,
                })
            }
            _ => {
                if let Some(arr) = self.array_var(e) {
                    return Some(Chain {
                        item: Item::Elem { arr, index: p },
                        len: Some(syn::parse_quote!(#e.len())),
                        fixed: self.is_param(arr),
                    });
                }
                // Constant data: a field of a struct of constants.
                if !matches!(e, Expr::Field(_)) || rename::mentions_active(e, self) {
                    return None;
                }
                Some(Chain {
                    item: Item::Data {
                        data: e.clone(),
                        index: p,
                    },
                    len: Some(syn::parse_quote!(#e.len())),
                    fixed: false,
                })
            }
        }
    }

    /// The argument of `skip`, `take` or `step_by`: an integer that does not
    /// depend on a differentiated value.
    fn count(&mut self, e: &Expr) -> Option<Expr> {
        if rename::mentions_active(e, self) {
            self.cx.error(
                e,
                "the count of `skip`, `take` or `step_by` must be an integer that does not depend on a differentiated value",
            );
            return None;
        }
        Some(match super::strip(e) {
            e @ (Expr::Lit(_) | Expr::Path(_)) => e.clone(),
            e => syn::parse_quote!((#e)),
        })
    }
}

/// A name bound to a passive value: uses read `value` in its place.
fn alias_of(value: Passive, by_ref: bool) -> Alias {
    let tokens = &value.tokens;
    let expr: Expr = syn::parse_quote!((#tokens));
    Alias {
        expr,
        reads: value.reads.clone(),
        active: false,
        by_ref,
        operand: Operand::Const(Passive {
            tokens: quote!((#tokens)),
            primary: true,
            reads: value.reads,
        }),
    }
}
