//! From the text of a `#[differentiate]` function, the oracle's copy of it and
//! the glue that calls both.
//!
//! The copy is the same syntax tree with `f64` replaced by the dual number
//! type `D`: every float literal `c` becomes `D::c(c)`, every `e as f64`
//! becomes `D::c(e as f64)`, every `f64::consts::..` path `D::c(..)`, and
//! `f64::sin(x)`
//! becomes `D::sin(x)`. Nothing else changes: the oracle evaluates the very
//! program the macro saw, with its own derivative rules.

use quote::{format_ident, quote, ToTokens};
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, Expr, FnArg, ItemFn, Lit, Pat, Type};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamTy {
    Float,
    /// An integer type, by name.
    Int(String),
    Bool,
}

#[derive(Clone, Debug)]
pub struct Sig {
    pub name: String,
    pub params: Vec<(String, ParamTy)>,
    pub wrt: Option<Vec<String>>,
}

impl Sig {
    /// Whether parameter `i` has a gradient entry.
    pub fn differentiable(&self, i: usize) -> bool {
        let (name, ty) = &self.params[i];
        *ty == ParamTy::Float && self.wrt.as_ref().is_none_or(|w| w.contains(name))
    }

    pub fn n_differentiable(&self) -> usize {
        (0..self.params.len())
            .filter(|&i| self.differentiable(i))
            .count()
    }
}

fn is_f64(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident("f64"))
}

fn path_mentions_f64(p: &syn::Path) -> bool {
    p.segments.iter().any(|s| s.ident == "f64")
}

struct ToDual;

impl VisitMut for ToDual {
    fn visit_type_mut(&mut self, t: &mut Type) {
        if is_f64(t) {
            *t = parse_quote!(D);
        } else {
            visit_mut::visit_type_mut(self, t);
        }
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::Lit(l) if matches!(l.lit, Lit::Float(_)) => {
                let l = l.clone();
                *e = parse_quote!(D::c(#l));
            }
            Expr::Cast(c) if is_f64(&c.ty) => {
                let c = c.clone();
                *e = parse_quote!(D::c(#c));
            }
            Expr::Path(p) if path_mentions_f64(&p.path) => {
                let p = p.clone();
                *e = parse_quote!(D::c(#p));
            }
            Expr::Call(c) => {
                if let Expr::Path(p) = &mut *c.func {
                    let segs = &mut p.path.segments;
                    if segs.len() == 2 && segs[0].ident == "f64" {
                        segs[0].ident = format_ident!("D");
                    }
                }
                for a in c.args.iter_mut() {
                    self.visit_expr_mut(a);
                }
            }
            _ => visit_mut::visit_expr_mut(self, e),
        }
    }
}

/// `wrt(a, b)` from the attribute's arguments.
fn parse_wrt(tokens: proc_macro2::TokenStream) -> Result<Vec<String>, String> {
    use syn::parse::Parser;
    let parser = |input: syn::parse::ParseStream| -> syn::Result<Vec<String>> {
        let key: syn::Ident = input.parse()?;
        if key != "wrt" {
            return Err(input.error("expected wrt"));
        }
        let content;
        syn::parenthesized!(content in input);
        let names =
            syn::punctuated::Punctuated::<syn::Ident, syn::Token![,]>::parse_terminated(&content)?;
        Ok(names.iter().map(|n| n.to_string()).collect())
    };
    parser.parse2(tokens).map_err(|e| e.to_string())
}

/// The signature of the `#[differentiate]` function in `src`, and the text of
/// its dual-number copy, named `<name>_dual`.
pub fn dualize(src: &str) -> Result<(Sig, String), String> {
    let f: ItemFn = syn::parse_str(src).map_err(|e| format!("cannot parse the program: {e}"))?;
    let mut wrt = None;
    for a in &f.attrs {
        if a.path().is_ident("differentiate") {
            if let syn::Meta::List(l) = &a.meta {
                wrt = Some(parse_wrt(l.tokens.clone())?);
            }
        }
    }
    let mut params = Vec::new();
    for arg in &f.sig.inputs {
        let FnArg::Typed(pt) = arg else {
            return Err("a method".into());
        };
        let Pat::Ident(pi) = &*pt.pat else {
            return Err("a parameter pattern".into());
        };
        let ty = match &*pt.ty {
            t if is_f64(t) => ParamTy::Float,
            Type::Path(p) if p.path.is_ident("bool") => ParamTy::Bool,
            Type::Path(p) if p.path.get_ident().is_some() => {
                ParamTy::Int(p.path.get_ident().unwrap().to_string())
            }
            other => return Err(format!("parameter type {}", other.to_token_stream())),
        };
        params.push((pi.ident.to_string(), ty));
    }
    let sig = Sig {
        name: f.sig.ident.to_string(),
        params,
        wrt,
    };
    let mut d = f.clone();
    // The copy is printed by prettyplease, whose one-line blocks (`{ for
    // .. {} }`) draw layout-dependent lints the program itself does not.
    d.attrs = vec![parse_quote!(#[allow(unused_braces, unused_parens)])];
    d.vis = parse_quote!(pub);
    d.sig.ident = format_ident!("{}_dual", f.sig.ident);
    ToDual.visit_item_fn_mut(&mut d);
    let file = syn::File {
        shebang: None,
        attrs: Vec::new(),
        items: vec![syn::Item::Fn(d)],
    };
    Ok((sig, prettyplease::unparse(&file)))
}

/// The module of one case in the generated crate: the program, its dual
/// copy, and `PROG` describing how to call them. Returns the text and the
/// 1-based line ranges (inclusive) of the program and of the dual copy.
pub fn module(
    id: usize,
    seed: u64,
    src: &str,
    sig: &Sig,
    dual: &str,
) -> (String, (usize, usize), (usize, usize)) {
    let name = format_ident!("{}", sig.name);
    let grad = format_ident!("{}_grad", sig.name);
    let adjoint = format_ident!("{}_adjoint", sig.name);
    let dual_name = format_ident!("{}_dual", sig.name);
    let n = sig.n_differentiable();
    let mut args = Vec::new();
    let mut dargs = Vec::new();
    let mut kinds = Vec::new();
    let mut dir = 0usize;
    for (i, (_, ty)) in sig.params.iter().enumerate() {
        match ty {
            ParamTy::Float => {
                args.push(quote!(p[#i].f()));
                if sig.differentiable(i) {
                    dargs.push(quote!(p[#i].d(dir == #dir)));
                    kinds.push(quote!(Kind::F(true)));
                    dir += 1;
                } else {
                    dargs.push(quote!(p[#i].d(false)));
                    kinds.push(quote!(Kind::F(false)));
                }
            }
            ParamTy::Int(t) => {
                let t = format_ident!("{}", t);
                args.push(quote!(p[#i].i() as #t));
                dargs.push(quote!(p[#i].i() as #t));
                kinds.push(quote!(Kind::I));
            }
            ParamTy::Bool => {
                args.push(quote!(p[#i].b()));
                dargs.push(quote!(p[#i].b()));
                kinds.push(quote!(Kind::B));
            }
        }
    }
    let gs: Vec<_> = (0..n).map(|i| format_ident!("g{}", i)).collect();
    let (gpat, gvec) = if n == 1 {
        (quote!(g0), quote!(vec![g0]))
    } else {
        (quote!((#(#gs),*)), quote!(vec![#(#gs),*]))
    };
    let uses_dir = dir > 0;
    let dir_param = if uses_dir { quote!(dir) } else { quote!(_dir) };
    let glue = quote! {
        fn primal(p: &[Input]) -> f64 {
            #name(#(#args),*)
        }
        fn grad(p: &[Input]) -> (f64, Vec<f64>) {
            let (v, #gpat) = #grad(#(#args),*);
            (v, #gvec)
        }
        fn adjoint(p: &[Input], d_out: f64) -> Vec<f64> {
            let #gpat = #adjoint(#(#args,)* d_out);
            #gvec
        }
        fn dual(p: &[Input], #dir_param: usize) -> D {
            #dual_name(#(#dargs),*)
        }
        pub const PROG: Prog = Prog {
            id: #id,
            seed: #seed,
            kinds: &[#(#kinds),*],
            primal,
            grad,
            adjoint,
            dual,
        };
    };
    let header = "use crate::dual::*;\nuse crate::runner::{Input, Kind, Prog};\nuse gradmacro::differentiate;\n\n";
    let mut text = String::from(header);
    let u0 = text.lines().count() + 1;
    text.push_str(src.trim_end());
    text.push('\n');
    let u1 = text.lines().count();
    text.push('\n');
    let d0 = text.lines().count() + 1;
    text.push_str(dual);
    text.push('\n');
    let d1 = text.lines().count();
    text.push('\n');
    text.push_str(&glue.to_string());
    text.push('\n');
    (text, (u0, u1), (d0, d1))
}
