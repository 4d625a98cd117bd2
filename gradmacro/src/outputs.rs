//! Helpers with an output buffer: `fn step(x: &[f64], out: &mut [f64])`,
//! called by differentiated functions as `step(&x, &mut buf)`.
//!
//! The helper is rewritten, as source, into a function returning the buffer,
//! `step_outputs(x, out) -> Vec<f64>`: it copies `out` into a local, runs the
//! body on it and returns it. That is a vector output, whose pullback and
//! pushforward callers use (`lower/outputs.rs` rewrites their calls into
//! `let` + copy back). `out` is read as well as written (`proj[0] =
//! proj[0] * l;`), and its derivative reaches the caller's buffer as it was
//! before the call. `step_grad` and the rest are not generated: a gradient
//! needs a single output; return the array instead.

use crate::args::Args;
use crate::ctxt::Ctxt;
use crate::names::Names;
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, ToTokens};
use syn::visit_mut::VisitMut;
use syn::{FnArg, Pat, Type};

/// The suffix of the rewritten helper's name, known to callers.
pub const SUFFIX: &str = "outputs";

/// The suffix of `step_outputs_into`, which writes what `step_outputs`
/// returns into a caller's `Vec`.
pub const INTO: &str = "into";

/// The suffix of `__h_OUTPUTS`, which parameters of `h` are outputs: a
/// caller lending a buffer that may only be read (a mutable view passed
/// whole) copies it back only if it is one.
pub const FLAGS: &str = "OUTPUTS";

/// An output of a helper returning nothing: its position, name, element
/// type and what it is: a buffer (`&mut [f64]`, `&mut Vec<f64>`, `&mut [f64;
/// N]` with its length) or one float (`&mut f64`).
struct Output {
    index: usize,
    name: Ident,
    elem: Type,
    kind: Kind,
}

enum Kind {
    Buffer(Option<syn::Expr>),
    Scalar,
}

/// The helper's float type parameter (`T` of `T: Float`), if generic.
fn generic(f: &syn::ItemFn) -> Option<Ident> {
    crate::signature::generic_float(&f.sig.generics)
        .ok()
        .flatten()
}

fn output_of(ty: &Type, generic: Option<&Ident>) -> Option<(Type, Kind)> {
    let Type::Reference(r) = ty else { return None };
    r.mutability?;
    let float = |t: &Type| crate::signature::is_float(t, generic);
    match &*r.elem {
        Type::Slice(s) if float(&s.elem) => Some(((*s.elem).clone(), Kind::Buffer(None))),
        Type::Array(a) if float(&a.elem) => {
            Some(((*a.elem).clone(), Kind::Buffer(Some(a.len.clone()))))
        }
        t if float(t) => Some((t.clone(), Kind::Scalar)),
        Type::Path(p) => {
            let last = p.path.segments.last()?;
            let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
                return None;
            };
            match (last.ident == "Vec", a.args.first()) {
                (true, Some(syn::GenericArgument::Type(t))) if float(t) => {
                    Some((t.clone(), Kind::Buffer(None)))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether `f` is a helper writing into an output buffer (and returning
/// nothing).
pub fn wanted(f: &syn::ItemFn) -> bool {
    let generic = generic(f);
    matches!(f.sig.output, syn::ReturnType::Default)
        && f.sig.inputs.iter().any(|i| match i {
            FnArg::Typed(pt) => output_of(&pt.ty, generic.as_ref()).is_some(),
            FnArg::Receiver(_) => false,
        })
}

pub fn expand(f: &syn::ItemFn, args: &Args, cx: &mut Ctxt) -> Option<TokenStream> {
    let mut outputs = Vec::new();
    let generic = generic(f);
    for (index, input) in f.sig.inputs.iter().enumerate() {
        let FnArg::Typed(pt) = input else { continue };
        let Some((elem, kind)) = output_of(&pt.ty, generic.as_ref()) else {
            continue;
        };
        match &*pt.pat {
            Pat::Ident(pi) => outputs.push(Output {
                index,
                name: pi.ident.clone(),
                elem,
                kind,
            }),
            other => cx.error(
                other,
                "bind the output buffer to a plain name (`out: &mut [f64]`)",
            ),
        }
    }
    if outputs.is_empty() {
        return None;
    }
    if let Some(wrt) = &args.wrt {
        for w in wrt.iter().filter(|w| outputs.iter().any(|o| o.name == **w)) {
            cx.error(w, "an output buffer is not a parameter to differentiate with respect to: its value before the call is differentiated along with the other float parameters");
        }
    }
    if args.hessian || !args.checks.is_empty() {
        cx.error_at(
            args.hessian_flag.as_ref().map_or(f.sig.ident.span(), |a| a.span()),
            "a helper writing into an output buffer takes no `hessian` or `check(..)`: check or take second derivatives of the functions calling it",
        );
    }
    if cx.has_errors() {
        return None;
    }
    let (helper, inputs) = rewrite(f, &outputs);
    let into = into(f, &helper, &outputs);
    let flags_name = format_ident!("__{}_{}", f.sig.ident, FLAGS);
    let n = f.sig.inputs.len();
    let is_output = (0..n).map(|i| outputs.iter().any(|o| o.index == i));
    let vis = &f.vis;
    let flags = quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals, dead_code)]
        #vis const #flags_name: [bool; #n] = [#(#is_output),*];
    };
    // One slice: the body uses its copy as a slice, which may live inline.
    let slice = matches!(&outputs[..], [o] if matches!(o.kind, Kind::Buffer(None))
        && matches!(&f.sig.inputs[o.index], FnArg::Typed(pt)
            if matches!(&*pt.ty, Type::Reference(r) if matches!(&*r.elem, Type::Slice(_)))));
    let inline = inputs.first().filter(|_| slice);
    let for_callers = crate::vector::for_callers_only(&helper, args.tangent, inline, cx)?;
    let elem = &outputs[0].elem;
    let no_tangent = if args.tangent {
        quote!()
    } else {
        let name = &f.sig.ident;
        let message = format!("`{name}` is called by a function with `tangent` but does not have it: write `#[differentiate(tangent)]` on `{name}`");
        crate::emit::placeholders(
            &helper,
            None,
            "has_no_tangent",
            (
                &message,
                "called here by a function with `tangent` or `hessian`",
            ),
            &[(
                "pushforward",
                (2, 0),
                quote!((::std::vec::Vec<#elem>, ::std::vec::Vec<#elem>)),
            )],
        )
    };
    let message = format!(
        "`{}` writes into an output buffer: it has no gradient of its own (a gradient needs one output); call it from a differentiated function, or make it return the array (`-> [f64; N]` or `-> Vec<f64>`) and use `{}_jacobian`",
        f.sig.ident, f.sig.ident
    );
    let placeholders = crate::emit::placeholders(
        f,
        None,
        "writes_an_output_buffer",
        (&message, "not generated for a helper writing into a buffer"),
        &[
            ("grad", (1, 0), quote!()),
            ("adjoint", (1, 1), quote!()),
            ("adjoint_acc", (2, 1), quote!()),
        ],
    );
    Some(quote!(#helper #into #flags #for_callers #no_tangent #placeholders))
}

/// `fn f(.., out: &mut [f64])` as `fn f_outputs(.., out: &[f64]) ->
/// Vec<f64>`: the body runs on a local copy of `out`, returned. Several
/// outputs are returned one after another in parameter order, a `&mut f64`
/// as one element. Also returns the parameters that replace the outputs.
fn rewrite(f: &syn::ItemFn, outputs: &[Output]) -> (syn::ItemFn, Vec<Ident>) {
    let mut names = Names::avoiding(f.to_token_stream());
    let k = names.fresh("k");
    let elem = &outputs[0].elem;
    let zero = crate::generic::lit(&elem.to_token_stream(), "0.0");
    let mut sig = f.sig.clone();
    sig.ident = format_ident!("{}_{}", f.sig.ident, SUFFIX);
    sig.output = syn::parse_quote!(-> ::std::vec::Vec<#elem>);
    let mut locals = Vec::new();
    let mut inputs = Vec::new();
    for out in outputs {
        let input = names.fresh(&format!("{}_in", out.name));
        inputs.push(input.clone());
        let (name, elem) = (&out.name, &out.elem);
        let (in_ty, local): (Type, TokenStream) = match &out.kind {
            // A slice, so that a caller may lend a range of a longer buffer.
            Kind::Buffer(Some(n)) => (
                syn::parse_quote!(&[#elem]),
                quote!(let mut #name: [#elem; #n] = [#zero; #n];),
            ),
            Kind::Buffer(None) => (
                syn::parse_quote!(&[#elem]),
                quote!(let mut #name: ::std::vec::Vec<#elem> = vec![#zero; #input.len()];),
            ),
            Kind::Scalar => (
                syn::parse_quote!(#elem),
                quote!(let mut #name: #elem = #input;),
            ),
        };
        sig.inputs[out.index] = syn::parse_quote!(#input: #in_ty);
        locals.push(local);
        if !matches!(out.kind, Kind::Scalar) {
            locals.push(quote!(for #k in 0..#input.len() { #name[#k] = #input[#k]; }));
        }
    }
    let mut body = (*f.block).clone();
    let buffers = outputs.iter().map(|o| o.name.clone()).collect();
    MutArgs(Scope::new(buffers)).visit_block_mut(&mut body);
    let scalars = outputs.iter().filter(|o| matches!(o.kind, Kind::Scalar));
    Derefs(Scope::new(scalars.map(|o| o.name.clone()).collect())).visit_block_mut(&mut body);
    let stmts = &body.stmts;
    let value = match outputs {
        [Output {
            name,
            kind: Kind::Buffer(None),
            ..
        }] => quote!(#name),
        [Output {
            name,
            kind: Kind::Buffer(Some(_)),
            ..
        }] => quote!(#name.to_vec()),
        _ => joined(outputs, &names.fresh("all"), &k, &zero),
    };
    let block: syn::Block = syn::parse_quote!({
        #(#locals)*
        #(#stmts)*
        #value
    });
    let vis = &f.vis;
    let helper = syn::ItemFn {
        attrs: vec![
            syn::parse_quote!(#[doc = " The helper's output buffers as a value, for differentiated callers."]),
            syn::parse_quote!(#[doc(hidden)]),
            // A copy of the user's body: its lints are reported on the original.
            syn::parse_quote!(#[allow(unused, clippy::all)]),
        ],
        vis: vis.clone(),
        sig,
        block: Box::new(block),
    };
    (helper, inputs)
}

/// `fn f_outputs_into(.., out: &[f64], to: &mut Vec<f64>)`: what
/// `f_outputs` returns, written into `to`. A caller's loop calls it on one
/// `Vec` iteration after iteration, so its storage is allocated once. One
/// output buffer is written in place by `f` itself; other shapes go through
/// `f_outputs`.
fn into(f: &syn::ItemFn, helper: &syn::ItemFn, outputs: &[Output]) -> TokenStream {
    let mut names = Names::avoiding(f.to_token_stream());
    let to = names.fresh("to");
    let mut sig = helper.sig.clone();
    sig.ident = format_ident!("{}_{}", helper.sig.ident, INTO);
    sig.output = syn::ReturnType::Default;
    let mut args = Vec::new();
    let mut this = None;
    for (i, input) in sig.inputs.iter_mut().enumerate() {
        match input {
            FnArg::Receiver(_) => {
                this = Some(quote!(Self::));
                args.push(quote!(self));
            }
            FnArg::Typed(pt) => {
                let a = names.fresh(&format!("a{i}"));
                *pt.pat = syn::parse_quote!(#a);
                args.push(a.to_token_stream());
            }
        }
    }
    let elem = &outputs[0].elem;
    sig.inputs
        .push(syn::parse_quote!(#to: &mut ::std::vec::Vec<#elem>));
    let body = match outputs {
        [Output {
            index,
            kind: Kind::Buffer(None),
            ..
        }] => {
            let input = &args[*index];
            let whole_vec = matches!(&f.sig.inputs[*index], FnArg::Typed(pt)
                if matches!(&*pt.ty, Type::Reference(r) if matches!(&*r.elem, Type::Path(_))));
            let mut user_args = args.clone();
            user_args[*index] = if whole_vec {
                quote!(#to)
            } else {
                quote!(&mut #to[..])
            };
            let name = &f.sig.ident;
            quote! {
                #to.clear();
                #to.extend_from_slice(#input);
                #this #name(#(#user_args),*);
            }
        }
        _ => {
            let name = &helper.sig.ident;
            quote!(*#to = #this #name(#(#args),*);)
        }
    };
    let vis = &f.vis;
    quote! {
        #[doc(hidden)]
        #[inline]
        #[allow(dead_code, clippy::too_many_arguments)]
        #vis #sig {
            #body
        }
    }
}

/// The outputs one after another in a new `Vec`, as a block.
fn joined(outputs: &[Output], all: &Ident, k: &Ident, zero: &TokenStream) -> TokenStream {
    let len = |o: &Output| -> TokenStream {
        let name = &o.name;
        match o.kind {
            Kind::Scalar => quote!(1),
            Kind::Buffer(_) => quote!(#name.len()),
        }
    };
    let mut at = vec![quote!(0)];
    let mut copies = Vec::new();
    for o in outputs {
        let name = &o.name;
        copies.push(match o.kind {
            Kind::Scalar => quote!(#all[#(#at)+*] = #name;),
            Kind::Buffer(_) => {
                quote!(for #k in 0..#name.len() { #all[#(#at)+* + #k] = #name[#k]; })
            }
        });
        at.push(len(o));
    }
    let total = &at[1..];
    let elem = &outputs[0].elem;
    quote! {
        let mut #all: ::std::vec::Vec<#elem> = vec![#zero; #(#total)+*];
        #(#copies)*
        #all
    }
}

/// The output names still in scope while a visitor walks the body: a local
/// of the same name (`let out = x;`) hides one for the rest of its block, a
/// closure parameter or a loop or `match` pattern for its body.
struct Scope {
    outputs: Vec<Ident>,
    hidden: Vec<String>,
}

impl Scope {
    fn new(outputs: Vec<Ident>) -> Self {
        Scope {
            outputs,
            hidden: Vec::new(),
        }
    }

    /// The output `p` names, unless hidden.
    fn output(&self, p: &syn::ExprPath) -> Option<&Ident> {
        let found = self.outputs.iter().find(|n| p.path.is_ident(*n))?;
        (!self.hidden.contains(&found.to_string())).then_some(found)
    }

    fn hide(&mut self, p: &Pat) {
        self.hidden.extend(crate::lower::rename::pattern_names(p));
    }
}

/// Walks `body` with `v`, hiding outputs where the user's own bindings of
/// the same name are in scope; `scope` reaches the visitor's `Scope`.
macro_rules! scoped_visits {
    () => {
        fn visit_block_mut(&mut self, b: &mut syn::Block) {
            let depth = self.scope().hidden.len();
            for s in &mut b.stmts {
                self.visit_stmt_mut(s);
                if let syn::Stmt::Local(l) = s {
                    self.scope().hide(&l.pat);
                }
            }
            self.scope().hidden.truncate(depth);
        }
        fn visit_expr_closure_mut(&mut self, c: &mut syn::ExprClosure) {
            let depth = self.scope().hidden.len();
            for p in &c.inputs {
                self.scope().hide(p);
            }
            self.visit_expr_mut(&mut c.body);
            self.scope().hidden.truncate(depth);
        }
        fn visit_expr_for_loop_mut(&mut self, f: &mut syn::ExprForLoop) {
            self.visit_expr_mut(&mut f.expr);
            let depth = self.scope().hidden.len();
            self.scope().hide(&f.pat);
            self.visit_block_mut(&mut f.body);
            self.scope().hidden.truncate(depth);
        }
        fn visit_arm_mut(&mut self, a: &mut syn::Arm) {
            let depth = self.scope().hidden.len();
            self.scope().hide(&a.pat);
            if let Some((_, g)) = &mut a.guard {
                self.visit_expr_mut(g);
            }
            self.visit_expr_mut(&mut a.body);
            self.scope().hidden.truncate(depth);
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    };
}

/// `*out` of a `&mut f64` output, now a local float, as `out`.
struct Derefs(Scope);

impl Derefs {
    fn scope(&mut self) -> &mut Scope {
        &mut self.0
    }
}

impl VisitMut for Derefs {
    fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
        if let syn::Expr::Unary(u) = e {
            if let (syn::UnOp::Deref(_), syn::Expr::Path(p)) = (&u.op, &*u.expr) {
                if self.0.output(p).is_some() {
                    *e = syn::Expr::Path(p.clone());
                    return;
                }
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
    scoped_visits!();
}

/// The buffer passed on whole, `g(x, out)`, now a local: lent mutably to a
/// call that is a statement of its own (a helper writing into it, `g(x,
/// &mut out);`), read by a call whose value is used (`let s = sq(&out);`).
struct MutArgs(Scope);

impl MutArgs {
    fn scope(&mut self) -> &mut Scope {
        &mut self.0
    }

    fn lend(&self, c: &mut syn::ExprCall, mutably: bool) {
        for a in &mut c.args {
            let syn::Expr::Path(p) = a else { continue };
            if let Some(name) = self.0.output(p) {
                // Parenthesised: the callee may only read it (see
                // `lower/outputs.rs`).
                *a = if mutably {
                    syn::parse_quote!((&mut #name))
                } else {
                    syn::parse_quote!(&#name)
                };
            }
        }
    }
}

impl VisitMut for MutArgs {
    fn visit_stmt_mut(&mut self, s: &mut syn::Stmt) {
        if let syn::Stmt::Expr(syn::Expr::Call(c), Some(_)) = s {
            self.lend(c, true);
        }
        syn::visit_mut::visit_stmt_mut(self, s);
    }
    fn visit_expr_call_mut(&mut self, c: &mut syn::ExprCall) {
        self.lend(c, false);
        syn::visit_mut::visit_expr_call_mut(self, c);
    }
    scoped_visits!();
}
