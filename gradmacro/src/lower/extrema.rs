//! `iter.max_by(cmp)`, `.min_by(cmp)` and `.reduce(f)`, unwrapped
//! (`.unwrap()`, `.expect(msg)`, `.unwrap_or(d)`, after `.copied()` on the
//! `Option` too), as the loop the standard library runs:
//!
//! ```text
//! let mut best = 0.0; let mut found = false;
//! for elem in chain {
//!     let item = elem;
//!     // max_by: the later of equals wins; min_by: the earlier
//!     if !found || cmp(&best, &item).is_le() { best = item; found = true; }
//!     // reduce: if found { best = f(best, item); } else { best = item; found = true; }
//! }
//! assert!(found, ..);          // or `if !found { best = d; }`
//! ```
//!
//! `cmp` is called on the same pairs, in the same order, as `Iterator::max_by`
//! calls it (the running best first), so the value is the one `f` computes;
//! the comparison is evaluated on values and the derivative follows the
//! element chosen. A `.map(|p| e)` just before is the loop `for p in ..`
//! with `item = e`.

use super::{strip, ForLoop, LoopBody, Lowerer, Val};
use crate::ir::{Passive, VarKind};
use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::Expr;

#[derive(Clone, Copy, PartialEq)]
enum Pick {
    Max,
    Min,
    Reduce,
}

/// What the chain before `max_by` yields.
enum Items<'a> {
    /// `&f64`: `x.iter()`, with `skip`, `take`, `rev`, `step_by`.
    Refs,
    /// `f64`: after `.copied()` or `.cloned()`.
    Values,
    /// `f64`: `inner.map(closure)`.
    Mapped(&'a syn::ExprClosure, &'a Expr),
}

/// How the `Option` is opened.
enum End<'a> {
    Unwrap,
    Expect(&'a Expr),
    UnwrapOr(&'a Expr),
}

struct Extremum<'a> {
    pick: Pick,
    chain: &'a Expr,
    items: Items<'a>,
    by: &'a Expr,
    end: End<'a>,
    /// `.copied()` on the `Option`: the result is a value, not a reference.
    copied: bool,
}

type Problem = (TokenStream, String);

/// An unwrapped `max_by`, `min_by` or `reduce`, its chain not yet read.
struct Opened<'a> {
    pick: Pick,
    method: &'a syn::Ident,
    chain: &'a Expr,
    by: &'a Expr,
    end: End<'a>,
    copied: bool,
}

fn opened(e: &Expr) -> Option<Opened<'_>> {
    let Expr::MethodCall(m) = strip(e) else {
        return None;
    };
    let end = match (m.method.to_string().as_str(), m.args.len()) {
        ("unwrap", 0) => End::Unwrap,
        ("expect", 1) => End::Expect(&m.args[0]),
        ("unwrap_or", 1) => End::UnwrapOr(&m.args[0]),
        _ => return None,
    };
    let (mut opt, mut copied) = (strip(&m.receiver), false);
    if let Expr::MethodCall(c) = opt {
        if (c.method == "copied" || c.method == "cloned") && c.args.is_empty() {
            (opt, copied) = (strip(&c.receiver), true);
        }
    }
    let Expr::MethodCall(r) = opt else {
        return None;
    };
    let pick = match (r.method.to_string().as_str(), r.args.len()) {
        ("max_by", 1) => Pick::Max,
        ("min_by", 1) => Pick::Min,
        ("reduce", 1) => Pick::Reduce,
        _ => return None,
    };
    Some(Opened {
        pick,
        method: &r.method,
        chain: strip(&r.receiver),
        by: &r.args[0],
        end,
        copied,
    })
}

/// `e` as an unwrapped extremum or reduction: `None` if it is not of that
/// shape at all, an error if it is but cannot be lowered.
fn parse(e: &Expr) -> Option<Result<Extremum<'_>, Problem>> {
    let o = opened(e)?;
    let items = match items(o.chain, true) {
        Ok(items) => items,
        Err(msg) => return Some(Err((o.method.to_token_stream(), msg))),
    };
    if o.pick == Pick::Reduce && matches!(items, Items::Refs) {
        return Some(Err((
            o.method.to_token_stream(),
            "`.reduce(..)` over references is not supported: write `.copied()` before it \
             (`x.iter().copied().reduce(f64::max)`)"
                .to_string(),
        )));
    }
    Some(Ok(Extremum {
        pick: o.pick,
        chain: o.chain,
        items,
        by: o.by,
        end: o.end,
        copied: o.copied,
    }))
}

/// Whether `e` is the position of the element `max_by`/`min_by` choose,
/// `x.iter().enumerate().max_by(..).unwrap().0`: an index, evaluated on
/// values like any other.
pub(crate) fn is_position(e: &Expr) -> bool {
    let Expr::Field(f) = strip(e) else {
        return false;
    };
    if !matches!(&f.member, syn::Member::Unnamed(i) if i.index == 0) {
        return false;
    }
    let Some(o) = opened(&f.base) else {
        return false;
    };
    let mut chain = o.chain;
    while let Expr::MethodCall(m) = chain {
        match m.method.to_string().as_str() {
            "enumerate" => return o.pick != Pick::Reduce,
            "rev" | "skip" | "take" | "step_by" => chain = strip(&m.receiver),
            _ => return false,
        }
    }
    false
}

/// What `chain` yields; `outer` if nothing follows it but `max_by`.
fn items(chain: &Expr, outer: bool) -> Result<Items<'_>, String> {
    let Expr::MethodCall(m) = strip(chain) else {
        return Err(UNSUPPORTED_CHAIN.to_string());
    };
    match (m.method.to_string().as_str(), m.args.len()) {
        ("iter", 0) => Ok(Items::Refs),
        ("copied" | "cloned", 0) => Ok(Items::Values),
        ("rev" | "skip" | "take" | "step_by", _) => match items(&m.receiver, false)? {
            Items::Mapped(..) => Err(UNSUPPORTED_CHAIN.to_string()),
            other => Ok(other),
        },
        ("map", 1) if outer => match strip(&m.args[0]) {
            Expr::Closure(c) if c.inputs.len() == 1 => Ok(Items::Mapped(c, strip(&m.receiver))),
            _ => Err(
                "write the `map` before `max_by`/`min_by`/`reduce` with a closure of \
                      one argument (`.map(|v| v * v)`)"
                    .to_string(),
            ),
        },
        ("zip" | "enumerate", _) if outer => Err("`max_by`/`min_by`/`reduce` over pairs is not \
             supported: map the pairs to floats first (`.map(|(a, b)| a * b)`), or write a \
             `for` loop keeping the best value and its index"
            .to_string()),
        _ => Err(UNSUPPORTED_CHAIN.to_string()),
    }
}

const UNSUPPORTED_CHAIN: &str = "`max_by`, `min_by` and `reduce` are supported over \
    `x.iter()` (with `skip`, `take`, `rev`, `step_by`), after `.copied()` or `.cloned()`, and \
    after a final `.map(|v| ..)` of such a chain, of a `zip` or of a range; otherwise write a \
    `for` loop keeping the best value";

/// Whether `e` is an unwrapped `max_by`, `min_by` or `reduce`, lowerable
/// or not.
pub(crate) fn is_extremum(e: &Expr) -> bool {
    parse(e).is_some()
}

/// Whether `e` is an unwrapped `max_by`/`min_by` over references
/// (`x.iter().max_by(..).unwrap()`, a `&f64`), read as the value itself.
pub(crate) fn yields_reference(e: &Expr) -> bool {
    matches!(parse(e), Some(Ok(x)) if matches!(x.items, Items::Refs) && !x.copied)
}

impl Lowerer<'_> {
    /// Lowers `e` if it is an unwrapped `max_by`, `min_by` or `reduce`.
    pub(crate) fn extremum(&mut self, e: &Expr) -> Option<Val> {
        let x = match parse(e)? {
            Ok(x) => x,
            Err((tokens, msg)) => {
                self.cx.error(tokens, msg);
                return Some(self.passive_val_silent());
            }
        };
        let span = e.span();
        let names = Names {
            best: self.names.fresh("best"),
            found: self.names.fresh("found"),
            item: self.names.fresh("item"),
        };
        let test = match test(&x, &names) {
            Ok(test) => test,
            Err((tokens, msg)) => {
                self.cx.error(tokens, msg);
                return Some(self.passive_val_silent());
            }
        };
        let ty = crate::emit::float_ty(&self.float);
        let best = self.fresh_var("best", VarKind::Active, span);
        self.write(best, constant(crate::generic::lit(&ty, "0.0")), e);
        let found = self.fresh_var("found", VarKind::Passive, span);
        self.write(found, constant(quote!(false)), e);
        self.bind(&names.best, best);
        self.bind(&names.found, found);

        let elem = self.names.fresh("elem");
        let elem_pat: syn::Pat = syn::parse_quote!(#elem);
        let elem_value: Expr = match x.items {
            Items::Refs => syn::parse_quote!(*#elem),
            _ => syn::parse_quote!(#elem),
        };
        // The map closure's body is read where it stands in the user's tree.
        let (pat, iter, item): (&syn::Pat, &Expr, &Expr) = match x.items {
            Items::Mapped(c, inner) => (super::iter::untyped(&c.inputs[0]), inner, &c.body),
            _ => (&elem_pat, x.chain, &elem_value),
        };
        let reduce_params = reduce_params(&x);
        let body = |l: &mut Lowerer<'_>| {
            let val = l.expr(item);
            let kind = match val {
                Val::Const(_) => VarKind::Passive,
                _ => VarKind::Active,
            };
            let v = l.fresh_var("item", kind, span);
            l.write(v, val, item);
            l.bind(&names.item, v);
            if let Some((acc, next)) = reduce_params {
                l.bind(acc, best);
                l.bind(next, v);
            }
            l.stmt_public(&test);
        };
        self.for_loop(ForLoop {
            label: None,
            pat,
            iter,
            span,
            body: LoopBody::Lowered(&body),
        });
        let (best_name, found_name) = (&names.best, &names.found);
        let after: syn::Stmt = match x.end {
            End::Unwrap => syn::parse_quote!(
                assert!(#found_name, "called `Option::unwrap()` on a `None` value");
            ),
            End::Expect(msg) => syn::parse_quote!(assert!(#found_name, "{}", #msg);),
            End::UnwrapOr(d) => {
                let d = match (strip(d), &x.items, x.copied) {
                    (Expr::Reference(r), Items::Refs, false) => (*r.expr).clone(),
                    (_, Items::Refs, false) => syn::parse_quote!(*#d),
                    _ => d.clone(),
                };
                syn::parse_quote!(if !#found_name { #best_name = #d; })
            }
        };
        self.stmt_public(&after);
        Some(Val::Var(best))
    }
}

/// The statement run for each item: the comparison or the combination.
fn test(x: &Extremum<'_>, n: &Names) -> Result<syn::Stmt, Problem> {
    let (best, found, item) = (&n.best, &n.found, &n.item);
    let take = quote!({ #best = #item; #found = true; });
    if x.pick == Pick::Reduce {
        let combined: Expr = match strip(x.by) {
            Expr::Path(f) => syn::parse_quote!(#f(#best, #item)),
            // Its parameters are bound to the running value and the item.
            Expr::Closure(c) if reduce_params(x).is_some() && c.asyncness.is_none() => {
                copy_problem(&c.body)?;
                (*c.body).clone()
            }
            other => return Err((other.to_token_stream(), BY_MESSAGE.to_string())),
        };
        return Ok(syn::parse_quote!(if #found { #best = #combined; } else #take));
    }
    // The comparator's arguments are references to the items.
    let depth = match x.items {
        Items::Refs => 2,
        _ => 1,
    };
    let ordering: Expr = match strip(x.by) {
        Expr::Path(f) => {
            let amps = refs(depth);
            syn::parse_quote!(#f(#amps #best, #amps #item))
        }
        Expr::Closure(c) if c.inputs.len() == 2 && c.asyncness.is_none() => {
            copy_problem(&c.body)?;
            let mut body = (*c.body).clone();
            for (p, value) in c.inputs.iter().zip([best, item]) {
                bind_by_substitution(p, value, depth, &mut body)?;
            }
            syn::parse_quote!((#body))
        }
        other => return Err((other.to_token_stream(), BY_MESSAGE.to_string())),
    };
    // `max_by` keeps the running best only if it compares greater (the
    // last of equal elements wins), `min_by` takes the item only then.
    let keep = match x.pick {
        Pick::Max => quote!(::core::cmp::Ordering::is_le(#ordering)),
        _ => quote!(::core::cmp::Ordering::is_gt(#ordering)),
    };
    Ok(syn::parse_quote!(if !#found || #keep #take))
}

const BY_MESSAGE: &str = "write the comparison as a closure (`|a, b| a.total_cmp(b)`, \
    `|a, b| a.partial_cmp(b).unwrap()`) or a path (`f64::total_cmp`), and the combination of \
    `reduce` as a closure of two plain names (`|a, b| a + b`) or a path (`f64::max`)";

/// Replaces, in `body`, the name `p` binds by what it stands for: `value`
/// behind `depth` references, less one for each `&` of the pattern
/// (`|a, b|` over `&&f64` reads `a` as `(&&best)`, `|&a, &b|` as `(&best)`).
/// The body declares no names of its own (`copy_problem`), so none hides `p`.
fn bind_by_substitution(
    p: &syn::Pat,
    value: &syn::Ident,
    depth: usize,
    body: &mut Expr,
) -> Result<(), Problem> {
    match p {
        syn::Pat::Type(t) => bind_by_substitution(&t.pat, value, depth, body),
        syn::Pat::Reference(r) if depth > 0 && r.mutability.is_none() => {
            bind_by_substitution(&r.pat, value, depth - 1, body)
        }
        syn::Pat::Wild(_) => Ok(()),
        syn::Pat::Ident(i) if i.by_ref.is_none() && i.subpat.is_none() => {
            let amps = refs(depth);
            let value: Expr = syn::parse_quote!((#amps #value));
            syn::visit_mut::VisitMut::visit_expr_mut(
                &mut super::filters::Substitute {
                    name: &i.ident,
                    value: &value,
                    strip_deref: false,
                },
                body,
            );
            Ok(())
        }
        other => Err((
            other.to_token_stream(),
            "bind the comparator's arguments to plain names: `|a, b| a.total_cmp(b)`".to_string(),
        )),
    }
}

struct Names {
    best: syn::Ident,
    found: syn::Ident,
    item: syn::Ident,
}

/// The names `reduce`'s closure gives the running value and the item.
fn reduce_params<'a>(x: &Extremum<'a>) -> Option<(&'a syn::Ident, &'a syn::Ident)> {
    if x.pick != Pick::Reduce {
        return None;
    }
    let Expr::Closure(c) = strip(x.by) else {
        return None;
    };
    let [a, b] = &c.inputs.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    Some((
        super::pat_ident(super::iter::untyped(a))?,
        super::pat_ident(super::iter::untyped(b))?,
    ))
}

/// The first `let` or `return` in a closure body copied into the function,
/// outside nested closures and items.
struct Finder(Option<Span>);

impl<'ast> Visit<'ast> for Finder {
    fn visit_local(&mut self, l: &'ast syn::Local) {
        self.0.get_or_insert(l.let_token.span);
    }
    fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
        self.0.get_or_insert(r.return_token.span);
    }
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Where `body`, copied into the loop, has what a copy cannot keep.
fn copy_problem(body: &Expr) -> Result<(), Problem> {
    let mut f = Finder(None);
    f.visit_expr(body);
    match f.0 {
        None => Ok(()),
        Some(span) => Err((
            quote::quote_spanned!(span=> return),
            "`return` or `let` inside the closure of `max_by`/`min_by`/`reduce` is not \
             supported: write a `for` loop keeping the best value (or `.fold(init, |acc, x| ..)`)"
                .to_string(),
        )),
    }
}

/// `depth` borrows: `& &`.
fn refs(depth: usize) -> TokenStream {
    (0..depth).map(|_| quote!(&)).collect()
}

fn constant(tokens: TokenStream) -> Val {
    Val::Const(Passive {
        tokens,
        primary: true,
        reads: Vec::new(),
    })
}
