//! Float-ness of scalars no step touches: a passive copy of a float, or a
//! float method called on a variable, makes a float, so a generic `T` is
//! never declared with `Default`.

use super::walk;
use crate::ir::*;

/// A passive copy (`let t = acc;`, `t = acc.sin();`) has its source's type:
/// a float through any chain of copies (a generic `T` has no `Default` to
/// declare it with).
pub(super) fn copied_floats(f: &Func, floats: &mut [bool]) {
    let mut copies = Vec::new();
    walk(&f.body, &mut |s| {
        if let Stmt::Assign(p) = s {
            if let ([src], false) = (&p.value.reads[..], f.var(p.dst).shape.is_array()) {
                if one_name(&p.value) || float_method_of(&p.value, &f.var(*src).ident) {
                    copies.push((p.dst.0, src.0));
                }
            }
        }
    });
    let mut changed = true;
    while changed {
        changed = false;
        for &(dst, src) in &copies {
            if floats[dst] != floats[src] {
                floats[dst] = true;
                floats[src] = true;
                changed = true;
            }
        }
    }
}

/// Whether a passive value is one variable alone (`pair.1`'s `pair_1`,
/// `acc`).
pub(super) fn one_name(c: &Passive) -> bool {
    let mut t = c.tokens.clone().into_iter();
    matches!(
        (t.next(), t.next()),
        (Some(proc_macro2::TokenTree::Ident(_)), None)
    )
}

/// Whether `c` is a chain of float methods called on `v` (`y.cbrt().tanh()`)
/// and nothing more (`y.cbrt() <= 0.6` is a `bool`): the first one that
/// integers do not have, so `v` is a float, and each a float's own.
pub(super) fn float_method_of(c: &Passive, v: &proc_macro2::Ident) -> bool {
    use proc_macro2::TokenTree::{Group, Ident, Punct};
    let tokens: Vec<proc_macro2::TokenTree> = c.tokens.clone().into_iter().collect();
    let [Ident(recv), calls @ ..] = &tokens[..] else {
        return false;
    };
    if recv != v || calls.is_empty() || calls.len() % 3 != 0 {
        return false;
    }
    calls.chunks(3).enumerate().all(|(k, call)| match call {
        [Punct(dot), Ident(m), Group(args)]
            if dot.as_char() == '.' && args.delimiter() == proc_macro2::Delimiter::Parenthesis =>
        {
            let m = m.to_string();
            (k > 0 || !["abs", "signum", "max", "min", "clamp"].contains(&m.as_str()))
                && crate::rules::Prim::from_method(&m).is_some()
        }
        _ => false,
    })
}
