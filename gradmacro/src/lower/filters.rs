//! A reduction over a filtered iterator, `chain.filter(pred).map(|v|
//! body).sum()` (or `.product()`, or without `map`), as the loop it stands
//! for, the predicate evaluated on values:
//!
//! ```text
//! let mut acc = -0.0;
//! for item in chain { if pred_of_item { acc += body_of_item; } }
//! .. acc ..
//! ```
//!
//! the loop placed before the statement holding the reduction (statements
//! are lowered alike whether they carry derivatives or only data). A
//! reduction in a condition stays as written, evaluated on values.
//! `take_while(pred)` is the same loop left at the first item failing the
//! test (`else { break; }`). The sum starts from -0.0, as `Sum for f64` does
//! (an empty sum is -0.0).
//!
//! Which elements count is piecewise constant: only the summed values carry
//! derivatives. A `for` loop over a filtered iterator is the loop with its
//! body under the test; over `take_while(pred)`, the loop left by `break`
//! once the test fails.

use super::ACC;
use proc_macro2::TokenStream;
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat, Stmt};

const ITEM: &str = "__gm_item";

/// What an item failing the test does.
#[derive(Clone, Copy, PartialEq)]
enum Failing {
    /// `filter`: it is skipped.
    Skipped,
    /// `take_while`: it ends the iteration.
    Ends,
}

/// `chain.filter(|v| pred)` (or `take_while`) as the chain, the predicate on
/// the item `item` (the closure's parameter is `&item`), and what failing it
/// does.
fn filter<'e>(
    e: &'e Expr,
    item: &syn::Ident,
    pair: Option<&[syn::Ident; 2]>,
) -> Option<(&'e Expr, Expr, Failing)> {
    let Expr::MethodCall(m) = super::strip(e) else {
        return None;
    };
    let failing = match m.method.to_string().as_str() {
        "filter" => Failing::Skipped,
        "take_while" => Failing::Ends,
        _ => return None,
    };
    if m.args.len() != 1 {
        return None;
    }
    let Expr::Closure(c) = super::strip(&m.args[0]) else {
        return None;
    };
    let [pat] = &c.inputs.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    if let Some(pair) = pair {
        let mut pred = (*c.body).clone();
        substitute_pair(pat, pair, &mut pred)?;
        return Some((&m.receiver, pred, failing));
    }
    // What the parameter's name stands for, and whether `*name` is `item`.
    let (name, value, strip_deref): (&syn::Ident, Expr, bool) = match pat {
        Pat::Ident(p) => (&p.ident, syn::parse_quote!(#item), true),
        Pat::Reference(r) => match &*r.pat {
            Pat::Ident(p) => (&p.ident, syn::parse_quote!(#item), false),
            Pat::Reference(rr) => match &*rr.pat {
                Pat::Ident(p) => (&p.ident, syn::parse_quote!((*#item)), false),
                _ => return None,
            },
            _ => return None,
        },
        _ => return None,
    };
    let mut pred = (*c.body).clone();
    Substitute {
        name,
        value: &value,
        strip_deref,
    }
    .visit_expr_mut(&mut pred);
    Some((&m.receiver, pred, failing))
}

/// The closure's parameter replaced by what it stands for: `*v` is the
/// item itself when `v` is `&item`.
pub(crate) struct Substitute<'a> {
    pub name: &'a syn::Ident,
    pub value: &'a Expr,
    pub strip_deref: bool,
}

impl VisitMut for Substitute<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let is_name =
            |x: &Expr| matches!(super::strip(x), Expr::Path(p) if p.path.is_ident(self.name));
        match e {
            Expr::Unary(u)
                if self.strip_deref && matches!(u.op, syn::UnOp::Deref(_)) && is_name(&u.expr) =>
            {
                *e = self.value.clone();
            }
            _ if is_name(e) => *e = self.value.clone(),
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
}

/// The statements a filtered reduction stands for, if `e` is one, leaving
/// its value in `acc`.
fn rewrite(e: &Expr, ty: &TokenStream, acc: &syn::Ident) -> Option<Vec<Stmt>> {
    let Expr::MethodCall(r) = super::strip(e) else {
        return None;
    };
    let (zero, op) = match (r.method.to_string().as_str(), r.args.len()) {
        ("sum", 0) => (crate::generic::lit(ty, "-0.0"), "+="),
        ("product", 0) => (crate::generic::lit(ty, "1.0"), "*="),
        _ => return None,
    };
    let item = syn::Ident::new(ITEM, r.method.span());
    let (chain, pred, failing, body) = match super::strip(&r.receiver) {
        Expr::MethodCall(m) if m.method == "map" && m.args.len() == 1 => {
            let Expr::Closure(c) = super::strip(&m.args[0]) else {
                return None;
            };
            let [pat] = &c.inputs.iter().collect::<Vec<_>>()[..] else {
                return None;
            };
            // Pairs (`enumerate`, `zip`): the loop binds both, by fresh names.
            if pair_pattern(pat).is_some() {
                let pair = [0u32, 1].map(|k| quote::format_ident!("{}_{}", ITEM, k));
                let (chain, pred, failing) = filter(&m.receiver, &item, Some(&pair))?;
                let mut body = (*c.body).clone();
                substitute_pair(pat, &pair, &mut body)?;
                let [a, b] = &pair;
                return Some(reduction(
                    (ty, acc, zero, op),
                    quote::quote!((#a, #b)),
                    chain,
                    pred,
                    failing,
                    body,
                ));
            }
            let (chain, pred, failing) = filter(&m.receiver, &item, None)?;
            let body = applied(c, &item)?;
            (chain, pred, failing, body)
        }
        other => {
            let (chain, pred, failing) = filter(other, &item, None)?;
            let body: Expr = syn::parse_quote!(#item);
            (chain, pred, failing, body)
        }
    };
    Some(reduction(
        (ty, acc, zero, op),
        quote::quote!(#item),
        chain,
        pred,
        failing,
        body,
    ))
}

/// `let mut acc = zero; for pat in chain { if pred { acc op body; } }`,
/// the item first made by a map before the filter if `chain` ends in one.
fn reduction(
    (ty, acc, zero, op): (&TokenStream, &syn::Ident, TokenStream, &str),
    pat: TokenStream,
    chain: &Expr,
    pred: Expr,
    failing: Failing,
    body: Expr,
) -> Vec<Stmt> {
    // Over pairs the item is two names, which a map before the filter
    // cannot make.
    let single = syn::parse2::<syn::Ident>(pat.clone()).is_ok();
    let (chain, pat, made) = match mapped(chain, &pat).filter(|_| single) {
        Some((source, src, made)) => (source, quote::quote!(#src), Some(made)),
        None => (chain, pat, None),
    };
    // `acc += v` (`acc = acc + (v)` for a generic `T`, which has no `+=`).
    let add = crate::generic::update(ty, quote::quote!(#acc), op, quote::quote!(#body));
    let stop = match failing {
        Failing::Skipped => quote::quote!(),
        Failing::Ends => quote::quote!(else { break; }),
    };
    vec![
        syn::parse_quote!(let mut #acc: #ty = #zero;),
        syn::parse_quote!(for #pat in #chain {
            #made
            if #pred {
                #add
            } #stop
        }),
    ]
}

/// `source.map(|v| e)` before a filter whose item is `item`: the source, the
/// name the loop binds its elements to, and `let item = e;` reading them.
fn mapped<'e>(chain: &'e Expr, item: &TokenStream) -> Option<(&'e Expr, syn::Ident, Stmt)> {
    let Expr::MethodCall(m) = super::strip(chain) else {
        return None;
    };
    if m.method != "map" || m.args.len() != 1 {
        return None;
    }
    let Expr::Closure(c) = super::strip(&m.args[0]) else {
        return None;
    };
    let src = quote::format_ident!("{}_src", ITEM);
    let e = applied(c, &src)?;
    Some((&m.receiver, src, syn::parse_quote!(let #item = #e;)))
}

/// The body of a map's closure of one parameter applied to `item`: the
/// parameter's name read as the item itself (`|v|`, `|v: f64|`), or as what
/// it points to (`|&v|`); `None` for other patterns.
fn applied(c: &syn::ExprClosure, item: &syn::Ident) -> Option<Expr> {
    let [pat] = &c.inputs.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let named: Option<(&syn::Ident, Expr)> = match pat {
        Pat::Ident(p) => Some((&p.ident, syn::parse_quote!(#item))),
        Pat::Type(t) => match &*t.pat {
            Pat::Ident(p) => Some((&p.ident, syn::parse_quote!(#item))),
            _ => return None,
        },
        Pat::Reference(r) => match &*r.pat {
            Pat::Ident(p) => Some((&p.ident, syn::parse_quote!((*#item)))),
            Pat::Wild(_) => None,
            _ => return None,
        },
        Pat::Wild(_) => None,
        _ => return None,
    };
    let mut body = (*c.body).clone();
    if let Some((name, value)) = named {
        Substitute {
            name,
            value: &value,
            strip_deref: false,
        }
        .visit_expr_mut(&mut body);
    }
    Some(body)
}

/// The two element patterns of a pair's pattern, `(a, b)` or `&(a, b)`.
fn pair_pattern(pat: &Pat) -> Option<[&Pat; 2]> {
    let pat = match pat {
        Pat::Reference(r) => &*r.pat,
        p => p,
    };
    let Pat::Tuple(t) = pat else { return None };
    let [a, b] = &t.elems.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    Some([*a, *b])
}

/// `e` with the names `pat` binds in a pair read as the loop's bindings
/// `pair`: `name` and `*name` (through the reference a closure over `&item`
/// sees) are the binding, `&name` in the pattern (`|(i, &v)|`) is `*binding`.
/// `None` for a pattern other than names, `_` and `&name`.
fn substitute_pair(pat: &Pat, pair: &[syn::Ident; 2], e: &mut Expr) -> Option<()> {
    for (p, binding) in pair_pattern(pat)?.into_iter().zip(pair) {
        let (name, value): (&syn::Ident, Expr) = match p {
            Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => {
                (&i.ident, syn::parse_quote!(#binding))
            }
            Pat::Reference(r) => match &*r.pat {
                Pat::Ident(i) => (&i.ident, syn::parse_quote!((*#binding))),
                _ => return None,
            },
            Pat::Wild(_) => continue,
            _ => return None,
        };
        Substitute {
            name,
            value: &value,
            strip_deref: true,
        }
        .visit_expr_mut(e);
    }
    Some(())
}

/// Takes the filtered reductions out of one statement (not out of its
/// conditions, which are evaluated on values as written, nor out of nested
/// blocks and closures, which have statements of their own): each becomes
/// its accumulator, computed by statements placed before.
struct Hoist<'a> {
    ty: &'a TokenStream,
    count: &'a mut usize,
    before: Vec<Stmt>,
}

impl VisitMut for Hoist<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::If(_)
            | Expr::While(_)
            | Expr::ForLoop(_)
            | Expr::Loop(_)
            | Expr::Block(_)
            | Expr::Closure(_)
            | Expr::Match(_) => return,
            Expr::Macro(m) => {
                super::sugar::in_vec_macro(&mut m.mac, |x| self.visit_expr_mut(x));
                return;
            }
            _ => {}
        }
        syn::visit_mut::visit_expr_mut(self, e);
        // Only a method call can be a filtered reduction: no name is made
        // for the other expressions of a long body.
        if !matches!(super::strip(e), Expr::MethodCall(_)) {
            return;
        }
        *self.count += 1;
        let acc = quote::format_ident!("{}_{}", ACC, *self.count);
        match rewrite(e, self.ty, &acc) {
            Some(stmts) => {
                self.before.extend(stmts);
                *e = syn::parse_quote!(#acc);
            }
            None => *self.count -= 1,
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

struct Filters<'a> {
    ty: &'a TokenStream,
    count: usize,
}

impl VisitMut for Filters<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        let mut out = Vec::with_capacity(b.stmts.len());
        for mut st in b.stmts.drain(..) {
            // Nested blocks first: their statements take their own.
            syn::visit_mut::visit_stmt_mut(self, &mut st);
            let mut h = Hoist {
                ty: self.ty,
                count: &mut self.count,
                before: Vec::new(),
            };
            h.visit_stmt_mut(&mut st);
            out.extend(h.before);
            out.push(st);
        }
        b.stmts = out;
    }
    fn visit_expr_if_mut(&mut self, i: &mut syn::ExprIf) {
        self.condition(&mut i.cond);
        self.visit_block_mut(&mut i.then_branch);
        if let Some((_, els)) = &mut i.else_branch {
            self.visit_expr_mut(els);
        }
    }
    fn visit_expr_macro_mut(&mut self, m: &mut syn::ExprMacro) {
        super::sugar::in_vec_macro(&mut m.mac, |x| self.visit_expr_mut(x));
    }
    /// The operands of a comparison or of `&&`/`||` are evaluated on values,
    /// as a condition's are (`let e = (if c { 1.0 } else { sum }) < 0.02;`).
    fn visit_expr_binary_mut(&mut self, b: &mut syn::ExprBinary) {
        use syn::BinOp::*;
        if matches!(
            b.op,
            Lt(_) | Le(_) | Gt(_) | Ge(_) | Eq(_) | Ne(_) | And(_) | Or(_)
        ) {
            self.condition(&mut b.left);
            self.condition(&mut b.right);
        } else {
            syn::visit_mut::visit_expr_binary_mut(self, b);
        }
    }
    /// An integer cast's operand too (`(if c { 1.0 } else { sum }) as usize`);
    /// a float cast carries the derivative through.
    fn visit_expr_cast_mut(&mut self, c: &mut syn::ExprCast) {
        let to_float = matches!(&*c.ty, syn::Type::Path(p)
            if p.path.is_ident("f64") || p.path.is_ident("f32"));
        if to_float {
            syn::visit_mut::visit_expr_cast_mut(self, c);
        } else {
            self.condition(&mut c.expr);
        }
    }
    fn visit_expr_while_mut(&mut self, w: &mut syn::ExprWhile) {
        self.condition(&mut w.cond);
        self.visit_block_mut(&mut w.body);
    }
    /// The scrutinee and guards are conditions of the `if`s a `match`
    /// stands for, evaluated on values.
    fn visit_expr_match_mut(&mut self, m: &mut syn::ExprMatch) {
        for arm in &mut m.arms {
            self.visit_expr_mut(&mut arm.body);
        }
    }
    /// `for v in chain.filter(pred) { body }` as `for v in chain { if pred
    /// { body } }`, over `take_while(pred)` as `for v in chain { if !(pred)
    /// { break; } body }`.
    fn visit_expr_for_loop_mut(&mut self, f: &mut syn::ExprForLoop) {
        syn::visit_mut::visit_expr_for_loop_mut(self, f);
        // `for _ in ..` still needs a name for the predicate to read.
        let item = syn::Ident::new(ITEM, proc_macro2::Span::call_site());
        if matches!(&*f.pat, Pat::Wild(_)) && filter(&f.expr, &item, None).is_some() {
            *f.pat = syn::parse_quote!(#item);
        }
        let Pat::Ident(p) = &*f.pat else { return };
        if p.by_ref.is_some() || p.subpat.is_some() {
            return;
        }
        let Some((chain, pred, failing)) = filter(&f.expr, &p.ident, None) else {
            return;
        };
        let (chain, body) = (chain.clone(), &f.body);
        f.body = match failing {
            Failing::Skipped => syn::parse_quote!({ if #pred #body }),
            Failing::Ends => {
                let stmts = &body.stmts;
                syn::parse_quote!({
                    if !(#pred) {
                        break;
                    }
                    #(#stmts)*
                })
            }
        };
        *f.expr = chain;
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

impl Filters<'_> {
    /// A condition is evaluated on values as written, closures and all,
    /// however deep its reduction (`if (if c { sum } else { 1.0 }) > 0.5`:
    /// a loop placed before a statement of the inner block could not be
    /// lowered there). Only a block that is the condition itself has its
    /// statements lowered one by one, like any block's.
    fn condition(&mut self, cond: &mut Expr) {
        let mut cond = cond;
        while let Expr::Paren(syn::ExprParen { expr, .. })
        | Expr::Group(syn::ExprGroup { expr, .. }) = cond
        {
            cond = expr;
        }
        if let Expr::Block(b) = cond {
            self.visit_block_mut(&mut b.block);
        }
    }
}

/// Rewrites every filtered (or `take_while`) sum or product, and loop, in
/// `block`; `ty` is the float type.
pub(crate) fn desugar(block: &mut syn::Block, ty: &TokenStream) {
    Filters { ty, count: 0 }.visit_block_mut(block);
}
