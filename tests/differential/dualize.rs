//! From the text of a `#[differentiate]` function (after the helpers it
//! calls), the oracle's copy of it and the glue that calls both.
//!
//! The copy is the same syntax tree with `f64` replaced by the dual number
//! type `D`: every float literal `c` becomes `D::c(c)` (inside `vec![..]`
//! too), every `e as f64` becomes `D::c(e as f64)`, every `f64::consts::..`
//! path `D::c(..)`, `f64::sin(x)` becomes `D::sin(x)`, `&[f64]` becomes
//! `&[D]`, `sum::<f64>()` becomes `sum::<D>()`, `fold(.., f64::max)`
//! becomes `fold(.., D::max)`, and a call of a helper `g(..)` calls its
//! copy `g_dual(..)`. A struct `Cfg` of constants becomes `CfgDual`, its
//! float fields `D`s the glue makes constants (`D::c`), or inputs seeded
//! like the float parameters when `wrt(..)` names the struct (`CfgDual`
//! does not derive `Differentiable`), and a method of `Model` a method of
//! `ModelDual`. Nothing else changes: the oracle evaluates the very program
//! the macro saw, with its own derivative rules.

use super::ast::DATA_LEN;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, Expr, FnArg, ItemFn, Lit, Pat, Type};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamTy {
    Float,
    /// An integer type, by name.
    Int(String),
    Bool,
    /// An array of floats of the given length.
    Array(ArrayKind, usize),
    /// A struct of constants.
    Data(DataTy),
}

/// A struct of constants the program defines, as a parameter or receiver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataTy {
    pub name: String,
    pub fields: Vec<(String, FieldTy)>,
    /// Passed by value (`cfg: Cfg`, `self`), else by reference.
    pub by_value: bool,
    /// Named in `wrt(..)`: its float fields are inputs, seeded like the
    /// float parameters, and its gradient entry is a value of its type.
    pub wrt: bool,
}

impl DataTy {
    /// The directions of its float fields, in order.
    fn directions(&self) -> usize {
        self.fields
            .iter()
            .map(|(_, t)| match t {
                FieldTy::Float => 1,
                FieldTy::Int(_) => 0,
                FieldTy::Vec => DATA_LEN,
                FieldTy::Array(n) => *n,
            })
            .sum()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldTy {
    Float,
    /// An integer type, by name.
    Int(String),
    Vec,
    /// `[f64; N]`.
    Array(usize),
}

/// How an array parameter is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrayKind {
    /// `&[f64]`
    Slice,
    /// `&Vec<f64>`
    VecRef,
    /// `[f64; N]`
    Owned,
    /// `&[f64; N]`
    Ref,
}

#[derive(Clone, Debug)]
pub struct Sig {
    pub name: String,
    pub params: Vec<(String, ParamTy)>,
    pub wrt: Option<Vec<String>>,
    /// The struct whose method the function is.
    pub receiver: Option<DataTy>,
}

impl Sig {
    /// Whether parameter `i` has a gradient entry.
    pub fn differentiable(&self, i: usize) -> bool {
        let (name, ty) = &self.params[i];
        matches!(ty, ParamTy::Float | ParamTy::Array(..))
            && self.wrt.as_ref().is_none_or(|w| w.contains(name))
    }

    pub fn n_differentiable(&self) -> usize {
        (0..self.params.len())
            .filter(|&i| self.differentiable(i))
            .count()
    }
}

pub fn is_f64(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident("f64"))
}

fn path_mentions_f64(p: &syn::Path) -> bool {
    p.segments.iter().any(|s| s.ident == "f64")
}

/// `f64::max`: a method used as a function value (constants are upper
/// case).
fn is_f64_method(p: &syn::Path) -> bool {
    p.segments.len() == 2
        && p.segments[0].ident == "f64"
        && p.segments[1]
            .ident
            .to_string()
            .starts_with(|c: char| c.is_ascii_lowercase())
}

/// `[f64]` or `[f64; N]` (with `N`), `Vec<f64>`.
fn array_elem(ty: &Type) -> Option<(bool, Option<usize>)> {
    match ty {
        Type::Slice(s) if is_f64(&s.elem) => Some((false, None)),
        Type::Array(a) if is_f64(&a.elem) => {
            let Expr::Lit(syn::ExprLit {
                lit: Lit::Int(n), ..
            }) = &a.len
            else {
                return None;
            };
            Some((false, n.base10_parse().ok()))
        }
        Type::Path(p) => {
            let seg = p.path.segments.last()?;
            let syn::PathArguments::AngleBracketed(args) = &seg.arguments else {
                return None;
            };
            let is_vec_f64 = seg.ident == "Vec"
                && matches!(args.args.first(), Some(syn::GenericArgument::Type(t)) if is_f64(t));
            is_vec_f64.then_some((true, None))
        }
        _ => None,
    }
}

/// The lengths the doc comment states: `` /// `w.len() == 3` ``.
fn stated_lengths(attrs: &[syn::Attribute]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for a in attrs {
        let syn::Meta::NameValue(nv) = &a.meta else {
            continue;
        };
        let Expr::Lit(syn::ExprLit {
            lit: Lit::Str(doc), ..
        }) = &nv.value
        else {
            continue;
        };
        let text = doc.value();
        let text = text.trim().trim_matches('`');
        if let Some((name, n)) = text.split_once(".len() == ") {
            if let Ok(n) = n.trim().parse() {
                out.push((name.trim().to_string(), n));
            }
        }
    }
    out
}

/// The fields of a struct item, with their types.
fn struct_fields(s: &syn::ItemStruct) -> Result<Vec<(String, FieldTy)>, String> {
    let mut out = Vec::new();
    for f in &s.fields {
        let name = f.ident.as_ref().ok_or("a tuple struct")?.to_string();
        let ty = match &f.ty {
            t if is_f64(t) => FieldTy::Float,
            t => match array_elem(t) {
                Some((true, None)) => FieldTy::Vec,
                Some((false, Some(n))) => FieldTy::Array(n),
                _ => match t {
                    Type::Path(p) if p.path.get_ident().is_some() => {
                        FieldTy::Int(p.path.get_ident().unwrap().to_string())
                    }
                    _ => return Err(format!("field type {}", t.to_token_stream())),
                },
            },
        };
        out.push((name, ty));
    }
    Ok(out)
}

/// The struct `ty` names (`Cfg`, `&Cfg`), if the program defines it.
fn data_ty(ty: &Type, structs: &[(String, Vec<(String, FieldTy)>)]) -> Option<DataTy> {
    let (inner, by_value) = match ty {
        Type::Reference(r) if r.mutability.is_none() => (&*r.elem, false),
        t => (t, true),
    };
    let Type::Path(p) = inner else { return None };
    let id = p.path.get_ident()?.to_string();
    let (_, fields) = structs.iter().find(|(n, _)| *n == id)?;
    Some(DataTy {
        name: id,
        fields: fields.clone(),
        by_value,
        wrt: false,
    })
}

fn param_ty(ty: &Type, name: &str, lens: &[(String, usize)]) -> Result<ParamTy, String> {
    let stated = || {
        lens.iter()
            .find(|(n, _)| n == name)
            .map(|(_, l)| *l)
            .ok_or_else(|| format!("no stated length for `{name}`"))
    };
    match ty {
        t if is_f64(t) => Ok(ParamTy::Float),
        Type::Path(p) if p.path.is_ident("bool") => Ok(ParamTy::Bool),
        Type::Path(p) if p.path.get_ident().is_some() => {
            Ok(ParamTy::Int(p.path.get_ident().unwrap().to_string()))
        }
        Type::Reference(r) if r.mutability.is_none() => match array_elem(&r.elem) {
            Some((true, None)) => Ok(ParamTy::Array(ArrayKind::VecRef, stated()?)),
            Some((false, None)) => Ok(ParamTy::Array(ArrayKind::Slice, stated()?)),
            Some((false, Some(n))) => Ok(ParamTy::Array(ArrayKind::Ref, n)),
            _ => Err(format!("parameter type {}", ty.to_token_stream())),
        },
        t => match array_elem(t) {
            Some((false, Some(n))) => Ok(ParamTy::Array(ArrayKind::Owned, n)),
            _ => Err(format!("parameter type {}", t.to_token_stream())),
        },
    }
}

/// Rewrites a program to dual numbers; `helpers` are the functions whose
/// calls go to their `_dual` copies.
struct ToDual {
    helpers: Vec<String>,
    /// Structs the program defines: `Cfg` becomes `CfgDual`.
    structs: Vec<String>,
}

/// Applies `f` to the expressions of `vec![e; n]` or `vec![a, b]` (whose
/// tokens syn leaves unparsed); `false` if they are neither.
pub fn in_vec_macro(m: &mut syn::Macro, mut f: impl FnMut(&mut Expr)) -> bool {
    use syn::parse::Parser;
    let repeat = |input: syn::parse::ParseStream| -> syn::Result<(Expr, Expr)> {
        let value: Expr = input.parse()?;
        input.parse::<syn::Token![;]>()?;
        Ok((value, input.parse()?))
    };
    if let Ok((mut value, mut len)) = repeat.parse2(m.tokens.clone()) {
        f(&mut value);
        f(&mut len);
        m.tokens = quote!(#value; #len);
        return true;
    }
    let list = syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated;
    match list.parse2(m.tokens.clone()) {
        Ok(mut elems) => {
            elems.iter_mut().for_each(f);
            m.tokens = quote!(#elems);
            true
        }
        Err(_) => false,
    }
}

impl VisitMut for ToDual {
    fn visit_type_mut(&mut self, t: &mut Type) {
        if is_f64(t) {
            *t = parse_quote!(D);
        } else if let Some(id) = struct_ident(t, &self.structs) {
            *t = Type::Path(syn::TypePath {
                qself: None,
                path: format_ident!("{id}Dual").into(),
            });
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
                // `w.iter().filter(|v| **v > 0.5).count() as f64` compares
                // duals inside.
                self.visit_expr_mut(&mut c.expr);
                let c = c.clone();
                *e = parse_quote!(D::c(#c));
            }
            Expr::Path(p) if is_f64_method(&p.path) => {
                // `fold(.., f64::max)`: the function, not a constant.
                p.path.segments[0].ident = format_ident!("D");
            }
            Expr::Path(p) if path_mentions_f64(&p.path) => {
                let p = p.clone();
                *e = parse_quote!(D::c(#p));
            }
            Expr::Macro(m) if m.mac.path.is_ident("vec") => {
                in_vec_macro(&mut m.mac, |e| self.visit_expr_mut(e));
            }
            Expr::Binary(b) if matches!(&*b.left, Expr::Index(_)) => {
                visit_mut::visit_expr_binary_mut(self, b);
                if let Some(op) = plain_op(&b.op) {
                    // `v[i] += v[j]` borrows `v` mutably, then reads it, when
                    // `+=` is `D`'s `AddAssign`: written `v[i] = v[i] + v[j]`,
                    // the same value.
                    let (l, r) = (&b.left, &b.right);
                    *e = parse_quote!(#l = #l #op (#r));
                }
            }
            Expr::Call(c) => {
                if let Expr::Path(p) = &mut *c.func {
                    let segs = &mut p.path.segments;
                    if segs.len() == 2 && segs[0].ident == "f64" {
                        segs[0].ident = format_ident!("D");
                    } else if segs.len() == 1 && self.helpers.iter().any(|h| segs[0].ident == h) {
                        segs[0].ident = format_ident!("{}_dual", segs[0].ident);
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

/// `Cfg`, when `t` names a struct of the program.
fn struct_ident(t: &Type, structs: &[String]) -> Option<String> {
    let Type::Path(p) = t else { return None };
    let id = p.path.get_ident()?.to_string();
    structs.contains(&id).then_some(id)
}

/// The operator of a compound assignment (`+` of `+=`).
fn plain_op(op: &syn::BinOp) -> Option<syn::BinOp> {
    use syn::BinOp::*;
    Some(match op {
        AddAssign(_) => parse_quote!(+),
        SubAssign(_) => parse_quote!(-),
        MulAssign(_) => parse_quote!(*),
        DivAssign(_) => parse_quote!(/),
        _ => return None,
    })
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
        // `self` too, which `Ident`'s own parser refuses.
        let names =
            syn::punctuated::Punctuated::<syn::Ident, syn::Token![,]>::parse_terminated_with(
                &content,
                syn::ext::IdentExt::parse_any,
            )?;
        Ok(names.iter().map(|n| n.to_string()).collect())
    };
    parser.parse2(tokens).map_err(|e| e.to_string())
}

/// The signature of the last `#[differentiate]` function in `src` (the
/// others are the helpers it calls), and the text of the dual-number copies
/// of all of them, each named `<name>_dual`.
pub fn dualize(src: &str) -> Result<(Sig, String), String> {
    let file: syn::File =
        syn::parse_str(src).map_err(|e| format!("cannot parse the program: {e}"))?;
    // The functions, each with the struct it is a method of.
    let mut fns: Vec<(ItemFn, Option<String>)> = Vec::new();
    let mut structs: Vec<(String, Vec<(String, FieldTy)>)> = Vec::new();
    let mut struct_items = Vec::new();
    for item in &file.items {
        match item {
            syn::Item::Fn(f) => fns.push((f.clone(), None)),
            syn::Item::Struct(s) => {
                structs.push((s.ident.to_string(), struct_fields(s)?));
                struct_items.push(s.clone());
            }
            syn::Item::Impl(i) => {
                let Some(owner) = struct_ident(&i.self_ty, &struct_names(&structs)) else {
                    return Err("an impl of what is not a struct of the program".into());
                };
                for it in &i.items {
                    let syn::ImplItem::Fn(m) = it else {
                        return Err("an impl item that is not a method".into());
                    };
                    let f = ItemFn {
                        attrs: m.attrs.clone(),
                        vis: m.vis.clone(),
                        sig: m.sig.clone(),
                        block: Box::new(m.block.clone()),
                    };
                    fns.push((f, Some(owner.clone())));
                }
            }
            _ => return Err("an item that is not a function or a struct".to_string()),
        }
    }
    let Some((f, owner)) = fns.last() else {
        return Err("no function".into());
    };
    let mut wrt = None;
    for a in &f.attrs {
        if a.path().is_ident("differentiate") {
            if let syn::Meta::List(l) = &a.meta {
                wrt = Some(parse_wrt(l.tokens.clone())?);
            }
        }
    }
    let lens = stated_lengths(&f.attrs);
    let mut params = Vec::new();
    let mut receiver = None;
    for arg in &f.sig.inputs {
        let pt = match arg {
            FnArg::Typed(pt) => pt,
            FnArg::Receiver(r) => {
                let owner = owner.as_ref().ok_or("`self` outside an impl")?;
                let (_, fields) = structs.iter().find(|(n, _)| n == owner).unwrap();
                receiver = Some(DataTy {
                    name: owner.clone(),
                    fields: fields.clone(),
                    by_value: r.reference.is_none(),
                    wrt: wrt.iter().flatten().any(|w| w == "self"),
                });
                continue;
            }
        };
        let Pat::Ident(pi) = &*pt.pat else {
            return Err("a parameter pattern".into());
        };
        let name = pi.ident.to_string();
        let ty = match data_ty(&pt.ty, &structs) {
            Some(d) => ParamTy::Data(DataTy {
                wrt: wrt.iter().flatten().any(|w| *w == name),
                ..d
            }),
            None => param_ty(&pt.ty, &name, &lens)?,
        };
        params.push((name, ty));
    }
    let sig = Sig {
        name: f.sig.ident.to_string(),
        params,
        wrt,
        receiver,
    };
    let helpers: Vec<String> = fns
        .iter()
        .filter(|(_, owner)| owner.is_none())
        .map(|(f, _)| f.sig.ident.to_string())
        .collect();
    let mut to_dual = ToDual {
        helpers,
        structs: struct_names(&structs),
    };
    let mut items: Vec<syn::Item> = struct_items
        .into_iter()
        .map(|mut s| {
            to_dual.visit_item_struct_mut(&mut s);
            s.ident = format_ident!("{}Dual", s.ident);
            // Not `Differentiable`: its fields are dual numbers.
            let copy = s.attrs.iter().any(|a| {
                a.path().is_ident("derive") && a.to_token_stream().to_string().contains("Copy")
            });
            s.attrs.retain(|a| !a.path().is_ident("derive"));
            if copy {
                s.attrs.push(parse_quote!(#[derive(Clone, Copy)]));
            }
            // Named by the `pub` functions of the copy.
            s.vis = parse_quote!(pub);
            syn::Item::Struct(s)
        })
        .collect();
    items.extend(fns.iter().map(|(f, owner)| {
        let mut d = f.clone();
        // The copy is printed by prettyplease, whose one-line blocks
        // (`{ for .. {} }`) draw layout-dependent lints the program
        // itself does not.
        d.attrs = vec![parse_quote!(#[allow(unused_braces, unused_parens)])];
        d.vis = parse_quote!(pub);
        d.sig.ident = format_ident!("{}_dual", f.sig.ident);
        to_dual.visit_item_fn_mut(&mut d);
        match owner {
            None => syn::Item::Fn(d),
            Some(owner) => {
                let ty = format_ident!("{owner}Dual");
                let m = syn::ImplItemFn {
                    attrs: d.attrs,
                    vis: d.vis,
                    defaultness: None,
                    sig: d.sig,
                    block: *d.block,
                };
                parse_quote!(impl #ty { #m })
            }
        }
    }));
    let file = syn::File {
        shebang: None,
        attrs: Vec::new(),
        items,
    };
    Ok((sig, prettyplease::unparse(&file)))
}

fn struct_names(structs: &[(String, Vec<(String, FieldTy)>)]) -> Vec<String> {
    structs.iter().map(|(n, _)| n.clone()).collect()
}

/// The value of a struct from input `i`, for the program or (`dual`) for
/// its dual copy, where every float is a constant, or, when the struct is
/// differentiated, an input seeded along its direction (its first being
/// `base`).
fn data_value(d: &DataTy, i: usize, dual: bool, base: usize) -> TokenStream {
    let name = if dual {
        format_ident!("{}Dual", d.name)
    } else {
        format_ident!("{}", d.name)
    };
    let mut dir = base;
    let fields = d.fields.iter().map(|(f, ty)| {
        let f = format_ident!("{}", f);
        let here = dir;
        dir += match ty {
            FieldTy::Float => 1,
            FieldTy::Int(_) => 0,
            FieldTy::Vec => DATA_LEN,
            FieldTy::Array(n) => *n,
        };
        let v = match (ty, dual) {
            (FieldTy::Float, false) => quote!(p[#i].df()),
            (FieldTy::Float, true) if d.wrt => quote!(crate::dual::input(p[#i].df(), dir == #here)),
            (FieldTy::Vec, true) if d.wrt => quote!(p[#i].dda(dir.wrapping_sub(#here))),
            (FieldTy::Array(n), true) if d.wrt => {
                quote!(p[#i].dda_arr::<#n>(dir.wrapping_sub(#here)))
            }
            (FieldTy::Float, true) => quote!(D::c(p[#i].df())),
            (FieldTy::Int(t), _) => {
                let t = format_ident!("{}", t);
                quote!(p[#i].di() as #t)
            }
            (FieldTy::Vec, false) => quote!(p[#i].da().clone()),
            (FieldTy::Vec, true) => quote!(p[#i].da().iter().map(|&v| D::c(v)).collect()),
            (FieldTy::Array(n), false) => quote!(p[#i].da_arr::<#n>()),
            (FieldTy::Array(n), true) => quote!(p[#i].dual_arr::<#n>()),
        };
        quote!(#f: #v)
    });
    quote!(#name { #(#fields),* })
}

/// A differentiated struct's `f_adjoint_acc` buffer: its float fields at
/// `ACC_START`, the rest the input's.
fn data_buffer(d: &DataTy, i: usize) -> TokenStream {
    let name = format_ident!("{}", d.name);
    let fields = d.fields.iter().map(|(f, ty)| {
        let f = format_ident!("{}", f);
        let v = match ty {
            FieldTy::Float => quote!(ACC_START),
            FieldTy::Int(t) => {
                let t = format_ident!("{}", t);
                quote!(p[#i].di() as #t)
            }
            FieldTy::Vec => quote!(vec![ACC_START; #DATA_LEN]),
            FieldTy::Array(n) => quote!([ACC_START; #n]),
        };
        quote!(#f: #v)
    });
    quote!(#name { #(#fields),* })
}

/// Flattens gradient entry `g` into `out`: a differentiated struct's float
/// fields in order, its integer fields checked to be input `i`'s.
fn flatten_entry(g: &syn::Ident, data: Option<(&DataTy, usize)>) -> TokenStream {
    let Some((d, i)) = data else {
        return quote!(#g.flat(&mut out););
    };
    let fields = d.fields.iter().map(|(f, ty)| {
        let what = format!("{}'s field `{f}`", d.name);
        let f = format_ident!("{}", f);
        match ty {
            FieldTy::Int(_) => quote!(crate::runner::same_int(#what, #g.#f as i64, p[#i].di());),
            _ => quote!(#g.#f.flat(&mut out);),
        }
    });
    quote!(#(#fields)*)
}

/// How the runner sees a struct's fields.
fn field_kinds(d: &DataTy) -> TokenStream {
    let fields = d.fields.iter().map(|(_, ty)| match ty {
        FieldTy::Float => quote!(crate::runner::Field::F),
        FieldTy::Int(_) => quote!(crate::runner::Field::I),
        FieldTy::Vec => quote!(crate::runner::Field::A(#DATA_LEN)),
        FieldTy::Array(n) => quote!(crate::runner::Field::A(#n)),
    });
    quote!(&[#(#fields),*])
}

/// Line ranges (1-based, inclusive) of the parts of a case's module.
#[derive(Clone, Copy, Debug)]
pub struct Regions {
    /// The program under `#[differentiate]`.
    pub user: (usize, usize),
    /// The program alone, without the attributes: an error there is the
    /// generator's, not the macro's.
    pub plain: (usize, usize),
    pub dual: (usize, usize),
}

/// The expressions passing parameter `i` to the program and to its dual
/// copy (seeded along `dir` when the parameter is differentiable, its
/// first direction being `base`), and its `Kind`.
fn param_glue(
    i: usize,
    ty: &ParamTy,
    differentiable: bool,
    base: usize,
) -> (TokenStream, TokenStream, TokenStream) {
    match ty {
        ParamTy::Float => {
            let seed = if differentiable {
                quote!(dir == #base)
            } else {
                quote!(false)
            };
            (
                quote!(p[#i].f()),
                quote!(p[#i].d(#seed)),
                quote!(Kind::F(#differentiable)),
            )
        }
        ParamTy::Int(t) => {
            let t = format_ident!("{}", t);
            (
                quote!(p[#i].i() as #t),
                quote!(p[#i].i() as #t),
                quote!(Kind::I),
            )
        }
        ParamTy::Bool => (quote!(p[#i].b()), quote!(p[#i].b()), quote!(Kind::B)),
        ParamTy::Data(d) => {
            let (v, dv) = (data_value(d, i, false, base), data_value(d, i, true, base));
            let (arg, darg) = if d.by_value {
                (v, dv)
            } else {
                (quote!(&#v), quote!(&#dv))
            };
            let kind = if d.wrt {
                let fields = field_kinds(d);
                quote!(Kind::DataWrt(false, #fields))
            } else {
                quote!(Kind::Data)
            };
            (arg, darg, kind)
        }
        ParamTy::Array(kind, n) => {
            // The element `k` is seeded when `dir == base + k`.
            let k = if differentiable {
                quote!(dir.wrapping_sub(#base))
            } else {
                quote!(usize::MAX)
            };
            let (arg, darg) = match kind {
                ArrayKind::Slice | ArrayKind::VecRef => (quote!(p[#i].s()), quote!(&p[#i].ds(#k))),
                ArrayKind::Owned => (quote!(p[#i].arr::<#n>()), quote!(p[#i].ds_arr::<#n>(#k))),
                ArrayKind::Ref => (quote!(&p[#i].arr::<#n>()), quote!(&p[#i].ds_arr::<#n>(#k))),
            };
            (arg, darg, quote!(Kind::S(#differentiable, #n)))
        }
    }
}

/// A zeroed buffer for `f_adjoint_acc`, its `&mut` argument.
fn acc_buffer(j: usize, ty: &ParamTy) -> (TokenStream, TokenStream) {
    let b = format_ident!("b{}", j);
    match ty {
        ParamTy::Array(_, n) => (
            quote!(let mut #b: Vec<f64> = vec![ACC_START; #n];),
            quote!(&mut #b),
        ),
        _ => (quote!(let mut #b: f64 = ACC_START;), quote!(&mut #b)),
    }
}

/// The module of one case in the generated crate: the program, the program
/// alone, its dual copy, and `PROG` describing how to call them. Returns the
/// text and where each part is.
pub fn module(id: usize, seed: u64, src: &str, sig: &Sig, dual: &str) -> (String, Regions) {
    // Every other program also gets forward mode, every fourth second
    // derivatives (callees too, as they must); not with a struct in
    // `wrt(..)`, which does not support them yet.
    let structs_wrt = sig.receiver.as_ref().is_some_and(|d| d.wrt)
        || sig
            .params
            .iter()
            .any(|(_, t)| matches!(t, ParamTy::Data(d) if d.wrt));
    // Nor through a callee returning `[f64; N]`, whose result bound
    // without its type does not compile in forward mode yet, nor has
    // second derivatives (`views::gaps`).
    let array_result = src.contains(") -> [f64; ") && !super::views::gaps();
    let tangent = id & 1 == 0 && !structs_wrt && !array_result;
    // A helper writing into an output buffer (`&mut [f64]`) has no
    // second derivatives: neither has a function calling it.
    let hessian = id & 3 == 0 && !structs_wrt && !src.contains("&mut [f64]") && !array_result;
    let flags = match (tangent, hessian) {
        (_, true) => "tangent, hessian",
        (true, false) => "tangent",
        _ => "",
    };
    let flagged;
    let src = if tangent {
        flagged = src
            .replace("#[differentiate]", &format!("#[differentiate({flags})]"))
            .replace("#[differentiate(", &format!("#[differentiate({flags}, "))
            .replace(
                &format!("#[differentiate({flags}, {flags})]"),
                &format!("#[differentiate({flags})]"),
            );
        flagged.as_str()
    } else {
        src
    };
    // Every fourth program (with `tangent`, so its callees have it too) also
    // gets a vector-output twin, where the body allows one.
    let twin = if id % 4 == 2 && tangent {
        vector_twin(src, sig)
    } else {
        None
    };
    let with_twin;
    let src = match &twin {
        Some(t) => {
            with_twin = format!("{}\n\n{t}", src.trim_end());
            with_twin.as_str()
        }
        None => src,
    };
    // Every fifth program (but those with structs) is made generic over its
    // float type, and called at `f64`.
    let generic_text;
    let src = match (id % 5 == 3).then(|| super::generic::twin(src)).flatten() {
        Some(t) => {
            generic_text = t;
            generic_text.as_str()
        }
        None => src,
    };
    let name = format_ident!("{}", sig.name);
    let tangent_fn = format_ident!("{}_tangent", sig.name);
    let hvp_fn = format_ident!("{}_hvp", sig.name);
    let grad = format_ident!("{}_grad", sig.name);
    let adjoint = format_ident!("{}_adjoint", sig.name);
    let acc = format_ident!("{}_adjoint_acc", sig.name);
    let dual_name = format_ident!("{}_dual", sig.name);
    let mut args = Vec::new();
    let mut dargs = Vec::new();
    let mut kinds = Vec::new();
    let mut buffers = Vec::new();
    let mut buffer_args = Vec::new();
    let mut targs = Vec::new();
    // What each gradient entry flattens to (a struct's are its fields).
    let mut flats: Vec<Option<(&DataTy, usize)>> = Vec::new();
    let mut dir = 0usize;
    // A differentiated receiver's entry comes first, and its directions.
    let recv_base = dir;
    if let Some(d) = sig.receiver.as_ref().filter(|d| d.wrt) {
        let i = sig.params.len();
        let v = data_buffer(d, i);
        buffers.push(quote!(let mut b0 = #v;));
        buffer_args.push(quote!(&mut b0));
        flats.push(Some((d, i)));
        dir += d.directions();
    }
    for (i, (_, ty)) in sig.params.iter().enumerate() {
        let differentiable = sig.differentiable(i);
        let (arg, darg, kind) = param_glue(i, ty, differentiable, dir);
        if differentiable {
            targs.push(match ty {
                ParamTy::Array(_, n) => quote! {
                    &(0..#n).map(|k| if dir == #dir + k { 1.0 } else { 0.0 }).collect::<Vec<f64>>()
                },
                _ => quote!(if dir == #dir { 1.0 } else { 0.0 }),
            });
        }
        args.push(arg);
        dargs.push(darg);
        kinds.push(kind);
        if differentiable {
            let (decl, arg) = acc_buffer(buffers.len(), ty);
            buffers.push(decl);
            buffer_args.push(arg);
            flats.push(None);
            dir += match ty {
                ParamTy::Array(_, n) => *n,
                _ => 1,
            };
        }
        if let ParamTy::Data(d) = ty {
            if d.wrt {
                let b = format_ident!("b{}", buffers.len());
                let v = data_buffer(d, i);
                buffers.push(quote!(let mut #b = #v;));
                buffer_args.push(quote!(&mut #b));
                flats.push(Some((d, i)));
                dir += d.directions();
            }
        }
    }
    // A method's receiver is the last input: `me.f_grad(..)`.
    let (me, dme, call) = match &sig.receiver {
        Some(d) => {
            let i = sig.params.len();
            kinds.push(if d.wrt {
                let fields = field_kinds(d);
                quote!(Kind::DataWrt(true, #fields))
            } else {
                quote!(Kind::Data)
            });
            let (v, dv) = (
                data_value(d, i, false, recv_base),
                data_value(d, i, true, recv_base),
            );
            (quote!(let me = #v;), quote!(let me = #dv;), quote!(me.))
        }
        None => (quote!(), quote!(), quote!()),
    };
    let n = buffers.len();
    let gs: Vec<_> = (0..n).map(|i| format_ident!("g{}", i)).collect();
    let bs: Vec<_> = (0..n).map(|i| format_ident!("b{}", i)).collect();
    let g_flat: Vec<_> = gs
        .iter()
        .zip(&flats)
        .map(|(g, d)| flatten_entry(g, *d))
        .collect();
    let b_flat: Vec<_> = bs
        .iter()
        .zip(&flats)
        .map(|(b, d)| flatten_entry(b, *d))
        .collect();
    let gpat = if n == 1 {
        quote!(g0)
    } else {
        quote!((#(#gs),*))
    };
    let dir_param = if dir > 0 { quote!(dir) } else { quote!(_dir) };
    let mut extra = quote!();
    let (mut tangent_field, mut hvp_field, mut jacobian_field) =
        (quote!(None), quote!(None), quote!(None));
    if twin.is_some() {
        let jacobian_fn = format_ident!("{}_vec_jacobian", sig.name);
        extra.extend(quote! {
            fn jacobian(p: &[Input]) -> (Vec<f64>, Vec<Vec<f64>>) {
                #jacobian_fn(#(#args),*)
            }
        });
        jacobian_field = quote!(Some(jacobian));
    }
    if tangent {
        extra.extend(quote! {
            fn tangent(p: &[Input], #dir_param: usize) -> (f64, f64) {
                #me
                #call #tangent_fn(#(#args,)* #(#targs),*)
            }
        });
        tangent_field = quote!(Some(tangent));
    }
    if hessian {
        extra.extend(quote! {
            fn hvp(p: &[Input], v: &[f64]) -> (f64, Vec<f64>, Vec<f64>) {
                #me
                #call #hvp_fn(#(#args,)* v)
            }
        });
        hvp_field = quote!(Some(hvp));
    }
    let glue = quote! {
        fn primal(p: &[Input]) -> f64 {
            #me
            #call #name(#(#args),*)
        }
        fn grad(p: &[Input]) -> (f64, Vec<f64>) {
            #me
            let (v, #gpat) = #call #grad(#(#args),*);
            let mut out = Vec::new();
            #(#g_flat)*
            (v, out)
        }
        fn adjoint(p: &[Input], d_out: f64) -> Vec<f64> {
            #me
            let #gpat = #call #adjoint(#(#args,)* d_out);
            let mut out = Vec::new();
            #(#g_flat)*
            out
        }
        fn adjoint_acc(p: &[Input], d_out: f64) -> Vec<f64> {
            #me
            #(#buffers)*
            #call #acc(#(#args,)* d_out, #(#buffer_args),*);
            let mut out = Vec::new();
            #(#b_flat)*
            out
        }
        #extra
        fn dual(p: &[Input], #dir_param: usize) -> D {
            #dme
            #call #dual_name(#(#dargs),*)
        }
        pub const PROG: Prog = Prog {
            id: #id,
            seed: #seed,
            kinds: &[#(#kinds),*],
            primal,
            grad,
            adjoint,
            adjoint_acc,
            dual,
            tangent: #tangent_field,
            hvp: #hvp_field,
            jacobian: #jacobian_field,
        };
    };
    let header = "use crate::dual::*;\nuse crate::runner::{Flat, Input, Kind, Prog, ACC_START};\nuse gradmacro::differentiate;\n\n";
    let mut text = String::from(header);
    let user = append(&mut text, src.trim_end());
    // Only `dead_code` is allowed: every other warning of the program is
    // the generator's to avoid.
    text.push_str("#[allow(dead_code)]\nmod plain {\n");
    let alone: Vec<&str> = src
        .trim_end()
        .lines()
        .filter(|l| !l.trim_start().starts_with("#[differentiate"))
        .collect();
    let plain = append(&mut text, &alone.join("\n"));
    text.push_str("}\n\n");
    let dual = append(&mut text, dual.trim_end());
    text.push_str(&glue.to_string());
    text.push('\n');
    (text, Regions { user, plain, dual })
}

/// `f_vec`: `f`'s body, its value `v` then returned as
/// `[sin(v · (k + 0.5)) for k in 0..=n]` (`n` directions), pushed in a loop,
/// with `f`'s attribute. `None` for a method, a struct parameter, a `return`
/// (not supported in a vector output), or nothing differentiable.
fn vector_twin(src: &str, sig: &Sig) -> Option<String> {
    let data = sig
        .params
        .iter()
        .any(|(_, t)| matches!(t, ParamTy::Data(_)));
    if sig.receiver.is_some() || data || src.contains("return") {
        return None;
    }
    let rows: usize = 1 + sig
        .params
        .iter()
        .enumerate()
        .filter(|(i, _)| sig.differentiable(*i))
        .map(|(_, (_, t))| match t {
            ParamTy::Array(_, n) => *n,
            _ => 1,
        })
        .sum::<usize>();
    if rows == 1 {
        return None;
    }
    let file: syn::File = syn::parse_str(src).ok()?;
    let mut f = file.items.into_iter().find_map(|item| match item {
        syn::Item::Fn(f) if f.sig.ident == sig.name => Some(f),
        _ => None,
    })?;
    let Some(syn::Stmt::Expr(mut tail, None)) = f.block.stmts.pop() else {
        return None;
    };
    // `let v = { e };` would be linted (`unused_braces`): `let v = e;`.
    while let Expr::Block(b) = &tail {
        match b.block.stmts.as_slice() {
            [syn::Stmt::Expr(e, None)] if b.label.is_none() => tail = e.clone(),
            _ => break,
        }
    }
    f.sig.ident = format_ident!("{}_vec", sig.name);
    f.sig.output = parse_quote!(-> Vec<f64>);
    f.attrs.retain(|a| a.path().is_ident("differentiate"));
    f.block.stmts.extend::<Vec<syn::Stmt>>(parse_quote! {
        let vec_v: f64 = #tail;
        let mut vec_out: Vec<f64> = Vec::with_capacity(#rows);
        for vec_k in 0..#rows {
            vec_out.push((vec_v * (vec_k as f64 + 0.5)).sin());
        }
        vec_out
    });
    // Each attribute on a line of its own, as the program without the macro
    // drops them.
    let attrs: Vec<String> = std::mem::take(&mut f.attrs)
        .iter()
        .map(|a| format!("#[{}]\n", a.meta.to_token_stream()))
        .collect();
    // Printed from tokens on one line, braces a program wrote over several
    // lines (`true => {\n 1.0\n }`) are linted as unnecessary.
    Some(format!(
        "{}#[allow(unused_braces)]\n{}",
        attrs.concat(),
        f.into_token_stream()
    ))
}

/// Appends `part` and a blank line; returns the lines `part` occupies.
fn append(text: &mut String, part: &str) -> (usize, usize) {
    let first = text.lines().count() + 1;
    text.push_str(part);
    text.push('\n');
    let last = text.lines().count();
    text.push('\n');
    (first, last)
}
