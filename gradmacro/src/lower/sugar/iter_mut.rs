//! `iter_mut` loops (also `.enumerate()`d, or zipped with another
//! iterable) as loops over the buffer's indices, the element read and written
//! in place as `buf[k]`.

use super::{indexed_loop, Substitute};
use quote::format_ident;
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat};

/// `for v in buf.iter_mut() { .. *v .. }` and `for (i, v) in
/// buf.iter_mut().enumerate() { .. }` as loops over the indices, `*v` (or `v`)
/// read and written as `buf[k]`.
pub(super) fn in_place(f: &syn::ExprForLoop, n: usize) -> Option<Expr> {
    let (call, enumerate) = match &*f.expr {
        Expr::MethodCall(m) if m.method == "enumerate" && m.args.is_empty() => (&*m.receiver, true),
        other => (other, false),
    };
    let Expr::MethodCall(m) = call else {
        return None;
    };
    if m.method == "zip" && m.args.len() == 1 {
        return zipped_in_place(f, n, m, enumerate);
    }
    let buf = iter_mut_of(call)?;
    let (index, elem) = match (&*f.pat, enumerate) {
        (Pat::Ident(v), false) => (None, v.ident.clone()),
        (Pat::Tuple(t), true) if t.elems.len() == 2 => match (&t.elems[0], &t.elems[1]) {
            (i, Pat::Ident(v)) => (Some(i.clone()), v.ident.clone()),
            _ => return None,
        },
        _ => return None,
    };
    let k = match &index {
        Some(Pat::Ident(i)) => i.ident.clone(),
        _ => format_ident!("__gm_k{}", n),
    };
    let place: Expr = syn::parse_quote!(#buf[#k]);
    let len: Expr = syn::parse_quote!(#buf.len());
    indexed_loop(f, index.as_ref(), &k, &len, elem.to_string(), place)
}

/// The buffer `buf` of `buf.iter_mut()`.
fn iter_mut_of(e: &Expr) -> Option<syn::Ident> {
    let Expr::MethodCall(m) = e else {
        return None;
    };
    if m.method != "iter_mut" || !m.args.is_empty() {
        return None;
    }
    let Expr::Path(buf) = &*m.receiver else {
        return None;
    };
    buf.path.get_ident().cloned()
}

/// `for (v, w) in buf.iter_mut().zip(other)`, `for (w, v) in
/// other.zip(buf.iter_mut())`, each also `.enumerate()`d, as a `zip` of the
/// other side with the indices, `for (k, w) in (0..buf.len()).zip(other)`,
/// `*v` read and written as `buf[k]`: the zip of a range with any iterable
/// but a range is lowered already.
fn zipped_in_place(
    f: &syn::ExprForLoop,
    n: usize,
    zip: &syn::ExprMethodCall,
    enumerate: bool,
) -> Option<Expr> {
    let (index, pair) = match (&*f.pat, enumerate) {
        (Pat::Tuple(t), true) if t.elems.len() == 2 => (Some(&t.elems[0]), &t.elems[1]),
        (p, false) => (None, p),
        _ => return None,
    };
    let Pat::Tuple(pair) = pair else {
        return None;
    };
    if pair.elems.len() != 2 {
        return None;
    }
    let left = iter_mut_of(&zip.receiver);
    let (buf, elem, other_pat, mut_first) = match (left, iter_mut_of(&zip.args[0])) {
        (Some(buf), None) => (buf, &pair.elems[0], &pair.elems[1], true),
        (None, Some(buf)) => (buf, &pair.elems[1], &pair.elems[0], false),
        _ => return None,
    };
    let other = if mut_first {
        &zip.args[0]
    } else {
        &*zip.receiver
    };
    // A range zipped with the indices is a loop over two ranges, which the
    // lowering does not take.
    if matches!(super::strip(other), Expr::Range(_)) {
        return None;
    }
    let Pat::Ident(elem) = elem else {
        return None;
    };
    let k = match index {
        Some(Pat::Ident(i)) => i.ident.clone(),
        _ => format_ident!("__gm_k{}", n),
    };
    let mut body = f.body.clone();
    let mut sub = Substitute {
        name: elem.ident.to_string(),
        by: syn::parse_quote!(#buf[#k]),
        shadowed: false,
    };
    sub.visit_block_mut(&mut body);
    if sub.shadowed {
        return None;
    }
    let label = &f.label;
    let indices: Expr = syn::parse_quote!((0..#buf.len()));
    Some(if mut_first {
        syn::parse_quote!(#label for (#k, #other_pat) in #indices.zip(#other) #body)
    } else {
        syn::parse_quote!(#label for (#other_pat, #k) in #other.zip(0..#buf.len()) #body)
    })
}
