//! Arrays whose length cannot change: a range over `0..buf.len()` of such
//! an array can be run again backwards even though its elements change
//! (a helper's output copied back into `buf` on every iteration).

use super::walk;
use crate::ir::*;
use proc_macro2::{Delimiter, Ident, TokenStream, TokenTree};

/// Per variable, its one definition, if it is an array defined once by a
/// `let` outside every loop and branch and never defined again, pushed to,
/// assigned a call's value or declared without a value (`let v;`): its
/// length cannot change after it.
pub(crate) fn sole_definitions(f: &Func) -> Vec<Option<&ArrayDef>> {
    let n = f.vars.len();
    let mut defs: Vec<Option<&ArrayDef>> = vec![None; n];
    let mut moved = vec![false; n];
    walk(&f.body, &mut |s| match s {
        Stmt::ArrayDef(d) => {
            let v = d.dst.0;
            moved[v] |=
                defs[v].is_some() || d.write != Write::Def || d.ctx.loop_depth > 0 || d.ctx.nested;
            defs[v] = Some(d);
        }
        Stmt::Push(p) => moved[p.arr.0] = true,
        Stmt::Call(c) => moved[c.dst.0] = true,
        Stmt::Declare(v) => moved[v.0] = true,
        _ => {}
    });
    defs.into_iter()
        .zip(moved)
        .map(|(d, moved)| d.filter(|_| !moved))
        .collect()
}

/// Per variable: an active array of one definition (see `sole_definitions`;
/// the lowering rejects every method that would change an active array's
/// length but `push`, while a passive one may be changed by code kept as
/// written). Not an inline buffer: its values may not be computed at all,
/// and a range reading its length would need them.
pub(super) fn fixed_lengths(f: &Func) -> Vec<bool> {
    sole_definitions(f)
        .iter()
        .zip(&f.vars)
        .map(|(d, v)| v.kind == VarKind::Active && v.shape.is_array() && !v.on_stack && d.is_some())
        .collect()
}

/// Whether every mention of `name` in `tokens` is `name.len()`.
pub(super) fn only_length(tokens: &TokenStream, name: &Ident) -> bool {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    trees.iter().enumerate().all(|(k, t)| match t {
        TokenTree::Ident(i) if i == name => matches!(
            &trees[k + 1..],
            [TokenTree::Punct(dot), TokenTree::Ident(len), TokenTree::Group(g), ..]
                if dot.as_char() == '.' && len == "len"
                    && g.delimiter() == Delimiter::Parenthesis && g.stream().is_empty()
        ),
        TokenTree::Group(g) => only_length(&g.stream(), name),
        _ => true,
    })
}
