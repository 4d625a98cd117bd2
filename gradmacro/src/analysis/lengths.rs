//! Arrays whose length cannot change: a range over `0..buf.len()` of such
//! an array can be run again backwards even though its elements change
//! (a helper's output copied back into `buf` on every iteration).

use super::walk;
use crate::ir::*;
use proc_macro2::{Delimiter, Ident, TokenStream, TokenTree};

/// Per variable: an active array (the lowering rejects every method that
/// would change its length but `push`; a passive one may be changed by code
/// kept as written) defined once, outside every loop and branch, and never
/// defined again, pushed to or assigned a call's value. Not an inline
/// buffer: its values may not be computed at all, and a range reading its
/// length would need them.
pub(super) fn fixed_lengths(f: &Func) -> Vec<bool> {
    let n = f.vars.len();
    let mut defs = vec![0usize; n];
    let mut moved = vec![false; n];
    walk(&f.body, &mut |s| match s {
        Stmt::ArrayDef(d) => {
            defs[d.dst.0] += 1;
            moved[d.dst.0] |= d.write != Write::Def || d.ctx.loop_depth > 0 || d.ctx.nested;
        }
        Stmt::Push(p) => moved[p.arr.0] = true,
        Stmt::Call(c) => moved[c.dst.0] = true,
        Stmt::Declare(v) => moved[v.0] = true,
        _ => {}
    });
    (0..n)
        .map(|i| {
            let v = &f.vars[i];
            v.kind == VarKind::Active
                && v.shape.is_array()
                && !v.on_stack
                && defs[i] == 1
                && !moved[i]
        })
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
