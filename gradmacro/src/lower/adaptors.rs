//! Iterator methods no loop or reduction stands for: found in a chain, and
//! named in an error saying what to write instead.

use crate::rules::Prim;
use syn::Expr;

/// Iterator methods: named in their own error, since the list of float
/// methods would not help.
pub(super) const ITERATOR_METHODS: &[&str] = &[
    "map",
    "fold",
    "sum",
    "product",
    "filter",
    "filter_map",
    "flat_map",
    "for_each",
    "reduce",
    "scan",
    "max_by",
    "min_by",
    "max_by_key",
    "min_by_key",
    "take",
    "skip",
    "step_by",
    "chain",
    "rev",
    "zip",
    "enumerate",
    "collect",
    "last",
    "nth",
    "windows",
    "chunks",
    "chunks_exact",
    "iter",
    "into_iter",
    "copied",
    "cloned",
    "try_fold",
    "take_while",
    "skip_while",
    "map_while",
    "inspect",
    "peekable",
    "flatten",
    "cycle",
];

/// The iterator method in the chain `e` that keeps it from being a
/// supported loop or reduction (`filter` in `x.iter().filter(..).sum()`).
pub(crate) fn unsupported_adaptor(e: &Expr) -> Option<&syn::Ident> {
    const LOOP_FORMS: &[&str] = &[
        "iter",
        "into_iter",
        "copied",
        "cloned",
        "zip",
        "enumerate",
        "rev",
        "skip",
        "take",
        "step_by",
        "map",
        "sum",
        "product",
        "fold",
        "collect",
    ];
    let mut culprit = None;
    let mut e = e;
    let mut top = true;
    while let Expr::MethodCall(inner) = crate::lower::strip(e) {
        // `x.iter().max_by(..).unwrap()` inside is lowered on its own.
        if super::extrema::is_extremum(e) {
            break;
        }
        let method = inner.method.to_string();
        // So is the receiver of a float method (`.sum::<f64>().sin()`), and
        // its chain looked at then: walking `x.sin().sin()..` at each
        // level was quadratic.
        if !top
            && Prim::from_method(&method).is_some()
            && !ITERATOR_METHODS.contains(&method.as_str())
        {
            break;
        }
        if !LOOP_FORMS.contains(&method.as_str()) {
            culprit = Some(&inner.method);
        }
        e = &inner.receiver;
        top = false;
    }
    culprit
}

/// Why the iterator method `culprit` cannot be differentiated, and what to
/// write instead.
pub(crate) fn adaptor_message(culprit: &syn::Ident) -> String {
    match culprit.to_string().as_str() {
        "max_by" | "min_by" | "reduce" => format!(
            "`.{culprit}(..)` is supported opened at once, as a value: \
             `x.iter().{culprit}(..).unwrap()`, `.expect(..)`, `.unwrap_or(d)`, `.copied().unwrap()`; \
             `if let`/`match` on its `Option` is not: test the iterator's length first"
        ),
        "max" | "min" | "max_by_key" | "min_by_key" => format!(
            "`.{culprit}` on an iterator of differentiated values is not supported: write the \
             maximum as `.copied().fold(f64::NEG_INFINITY, f64::max)` (the minimum with \
             `f64::INFINITY, f64::min`), whose derivative goes to the element chosen"
        ),
        "last" => "`.last()` gives a reference to the last element, in an `Option`: read it by \
             value, `*x.last().unwrap()` or `x.last().copied().unwrap()`, or index it \
             (`x[x.len() - 1]`)"
            .to_string(),
        "chain" => "`.chain(..)` is supported right in a `for` loop (`for v in a.iter().chain(b)`, \
             also followed by `.copied()`) and before `.sum()`, `.product()`, `.fold(..)` or \
             `.map(..).sum()`; other adaptors after it (`enumerate`, `zip`, `skip`, ...) are not: \
             write one loop for each part"
            .to_string(),
        "chunks" | "chunks_exact" | "windows" => format!(
            "`.{culprit}(k)` is supported on a slice named by a plain name, in a `for` loop \
             (`for c in x.{culprit}(2)`, also after `.enumerate()`) or before `.map(|c| ..)` \
             or `.fold(..)`: bind a sub-slice to a name first (`let v = &x[1..];`)"
        ),
        _ => format!(
            "`.{culprit}` on an iterator is not supported here; supported are `for` loops, \
             `.map(|x| ..).sum()`, `.map(|x| ..).product()`, `.fold(init, |acc, x| ..)` and \
             `let v: Vec<f64> = .. .map(|x| ..).collect();` over `v.iter()`, sub-slices \
             `&v[a..b]` and ranges, with `.copied()`, `.cloned()`, `.zip(..)`, `.enumerate()`, \
             `.rev()`, `.skip(n)`, `.take(n)` and `.step_by(k)`, and `v.iter().sum()`, \
             `.filter(|v| ..)` or `.take_while(|v| ..)` just before `.sum()`, `.map(..).sum()` or \
             `.product()` and in `for` loops; otherwise write a `for` loop over the indices"
        ),
    }
}
