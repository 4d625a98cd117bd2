//! The function rewritten, as source, into the scalar `w · f(args)` the
//! ordinary pipeline differentiates: one more constant parameter `w`, the
//! output's length checked against it.

use super::{CHECK, OUT, W};
use crate::ctxt::Ctxt;
use crate::emit;
use crate::ir::{Float, Shape};
use proc_macro2::{Ident, Span};
use quote::{format_ident, quote};
use syn::visit::Visit;

/// `fn __f_vjp(args.., __gm_w: &[f64], __gm_check: bool) -> f64`: the body,
/// its value into `__gm_out`, then `Σ __gm_out[i] * __gm_w[i]`. `len`: a
/// parameter as long as the output, whose length the sum runs over (reading
/// the output's would keep it alive in a pullback that needs only its
/// adjoint).
pub(super) fn rewrite(
    f: &syn::ItemFn,
    float: Float,
    len: Option<&Ident>,
    cx: &mut Ctxt,
) -> Option<syn::ItemFn> {
    let ty = emit::float_ty(&float);
    let name = &f.sig.ident;
    let mut returns = Returns(Vec::new());
    returns.visit_block(&f.block);
    for r in returns.0 {
        cx.error(
            r,
            "`return` is not supported in a function returning an array yet: end the function with its value",
        );
    }
    let mut stmts = f.block.stmts.clone();
    let tail = match stmts.pop() {
        Some(syn::Stmt::Expr(e, None)) => e,
        other => {
            let span = other.map_or(name.span(), |s| syn::spanned::Spanned::span(&s));
            cx.error_at(
                span,
                "the function must end with its value: add a tail expression (without `;`)",
            );
            return None;
        }
    };
    if cx.has_errors() {
        return None;
    }
    let generic = crate::signature::generic_float(&f.sig.generics)
        .ok()
        .flatten();
    let ret = match &f.sig.output {
        syn::ReturnType::Type(_, t) => t.clone(),
        syn::ReturnType::Default => return None,
    };
    let (w, check, out) = (ident(W), ident(CHECK), ident(OUT));
    let msg = format!("{name}_adjoint: `d_out` has length {{}} but the output has length {{}}");
    let mut sig = f.sig.clone();
    sig.ident = format_ident!("__{}_vjp", name);
    sig.output = syn::parse_quote!(-> #ty);
    sig.inputs.push(syn::parse_quote!(#w: &[#ty]));
    sig.inputs.push(syn::parse_quote!(#check: bool));
    let zero = crate::generic::lit(&ty, "0.0");
    // A local `Vec` returned by name is read in place: binding it to
    // `__gm_out` would copy it, and its adjoint, on every call.
    let (out, bind) = match (&tail, crate::signature::param_shape(&ret, generic.as_ref())) {
        (syn::Expr::Path(p), Ok(Some(Shape::Array { len: None })))
            if p.path.get_ident().is_some_and(|i| is_local(&stmts, i)) =>
        {
            (p.path.get_ident()?.clone(), quote!())
        }
        _ => {
            let bind = quote!(let #out: #ret = #tail;);
            (out, bind)
        }
    };
    let add = crate::generic::update(
        &ty,
        quote!(__gm_sum),
        "+=",
        quote!(#out[__gm_i] * #w[__gm_i]),
    );
    let out_len = match len {
        Some(p) => quote!(#p.len()),
        None => quote!(#out.len()),
    };
    let block: syn::Block = syn::parse_quote!({
        #(#stmts)*
        #bind
        fn __gm_len(check: bool, w: usize, out: usize) -> usize {
            if check {
                ::core::assert!(w == out, #msg, w, out);
            }
            w
        }
        let mut __gm_sum: #ty = #zero;
        for __gm_i in 0..__gm_len(#check, #w.len(), #out_len) {
            #add
        }
        __gm_sum
    });
    Some(syn::ItemFn {
        attrs: Vec::new(),
        vis: syn::Visibility::Inherited,
        sig,
        block: Box::new(block),
    })
}

/// Whether `name` is bound by a `let` among the body's top-level statements
/// (a parameter, or a name bound only inside a block, is not read in place).
fn is_local(stmts: &[syn::Stmt], name: &Ident) -> bool {
    stmts.iter().any(|s| match s {
        syn::Stmt::Local(l) => {
            let pat = match &l.pat {
                syn::Pat::Type(pt) => &*pt.pat,
                p => p,
            };
            matches!(pat, syn::Pat::Ident(pi) if pi.ident == *name)
        }
        _ => false,
    })
}

fn ident(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

/// Every `return` of the body, outside closures and nested items.
struct Returns(Vec<syn::ExprReturn>);

impl<'a> Visit<'a> for Returns {
    fn visit_expr_return(&mut self, r: &'a syn::ExprReturn) {
        self.0.push(r.clone());
    }
    fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'a syn::Item) {}
}
