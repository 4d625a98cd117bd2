//! IR → Rust. `forward.rs` writes the forward sweep (the user's computation,
//! recording what the reverse sweep will need), `reverse.rs` the reverse sweep,
//! this file the generated functions around them.

mod forward;
mod records;
mod reverse;

use crate::analysis::{analyze, Analysis};
use crate::ir::*;
use crate::names::Names;
use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{format_ident, quote};
use records::Records;
use std::collections::{HashMap, HashSet};

/// Which generated function is being written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `f_grad`: value and gradient, seed 1.
    Grad,
    /// `f_adjoint`: pullback of a given seed, returned as a fresh gradient.
    Adjoint,
    /// `f_adjoint_acc`: pullback added into caller-owned buffers.
    AdjointAcc,
    /// `f_pullback`: what a differentiated caller calls, one entry per
    /// parameter (`()` for constants), every float parameter included.
    Pullback,
}

/// State shared by both sweeps of one generated function.
pub struct Emitter<'a> {
    pub f: &'a Func,
    pub a: &'a Analysis,
    pub mode: Mode,
    pub names: Names,
    pub ty: TokenStream,
    pub rec: Records,
    adjoints: HashMap<VarId, Ident>,
    /// The seed: the output's adjoint.
    pub seed: Ident,
    /// Adjoints written after their declaration (need `let mut`).
    pub written: HashSet<VarId>,
    /// Adjoints that are `&mut` buffers of the caller (`*d_x += ...`).
    buffers: HashSet<VarId>,
    pub label: syn::Lifetime,
    /// A long function body: its top-level values and adjoints are declared
    /// a few dozen to a `let`, since thousands of nested `let` scopes crash
    /// rustc's debug-info generation.
    pub compact: bool,
    pub compact_values: Vec<VarId>,
    pub compact_adjoints: Vec<VarId>,
    /// For each loop being emitted, innermost last: the tapes its body pushes
    /// to directly, reserved before the loop when its length is known.
    pub pushed: Vec<Vec<Ident>>,
    /// Value tapes that fit in a fixed array, with its length.
    pub stack_caps: HashMap<VarId, u64>,
}

impl<'a> Emitter<'a> {
    fn new(f: &'a Func, a: &'a Analysis, mode: Mode, names: Names) -> Self {
        let mut names = names;
        let seed = names.fresh("d_out");
        let ty = match f.float {
            Float::F64 => quote!(f64),
            Float::F32 => quote!(f32),
        };
        let mut e = Emitter {
            f,
            a,
            mode,
            names,
            ty,
            rec: Records::default(),
            adjoints: HashMap::new(),
            seed,
            written: HashSet::new(),
            buffers: HashSet::new(),
            label: syn::Lifetime::new("'body", Span::mixed_site()),
            compact: !f.has_return && f.body.stmts.len() > COMPACT_ABOVE,
            compact_values: Vec::new(),
            compact_adjoints: Vec::new(),
            pushed: Vec::new(),
            stack_caps: records::stack_tapes(f, a),
        };
        // Adjoints are named in parameter order first, so `f_adjoint_acc`'s
        // buffer parameters read `d_x`, `d_w`, ... whatever the body does.
        for v in f.wrt().collect::<Vec<_>>() {
            e.adj(v);
        }
        e
    }

    /// Notes that the loop being emitted pushes to `tape` once per iteration
    /// at most.
    pub fn note_push(&mut self, tape: &Ident) {
        if let Some(top) = self.pushed.last_mut() {
            if !top.contains(tape) {
                top.push(tape.clone());
            }
        }
    }

    pub fn live(&self, v: VarId) -> bool {
        match self.mode {
            Mode::Grad => self.a.live_grad[v.0],
            Mode::Adjoint | Mode::AdjointAcc | Mode::Pullback => self.a.live_adjoint[v.0],
        }
    }

    pub fn var(&self, v: VarId) -> Ident {
        self.f.var(v).ident.clone()
    }

    pub fn adj(&mut self, v: VarId) -> Ident {
        if v == self.f.output {
            return self.seed.clone();
        }
        if let Some(i) = self.adjoints.get(&v) {
            return i.clone();
        }
        let i = self.names.adjoint(&self.f.var(v).ident);
        self.adjoints.insert(v, i.clone());
        i
    }

    /// Where contributions to an operand's adjoint go: `d_x`, `*d_x` (a
    /// caller's buffer) or `d_v[i]`.
    pub fn adj_place(&mut self, a: &Operand) -> Option<TokenStream> {
        match a {
            Operand::Var(v) => {
                let d = self.adj(*v);
                self.written.insert(*v);
                Some(
                    if self.buffers.contains(v) && !self.f.var(*v).shape.is_array() {
                        quote!(*#d)
                    } else {
                        quote!(#d)
                    },
                )
            }
            Operand::Elem(arr, i) => {
                let d = self.adj(*arr);
                self.written.insert(*arr);
                let i = &i.tokens;
                Some(quote!(#d[#i]))
            }
            Operand::Const(_) => None,
        }
    }

    /// An operand as tokens; `wrap` parenthesises non-primary passive code for
    /// use as a method receiver or a binary operand.
    pub fn operand(&mut self, a: &Operand, wrap: bool) -> TokenStream {
        match a {
            Operand::Var(v) => {
                let i = self.var(*v);
                quote!(#i)
            }
            Operand::Elem(arr, i) => {
                let a = self.var(*arr);
                let i = &i.tokens;
                quote!(#a[#i])
            }
            Operand::Const(c) => {
                let t = &c.tokens;
                if wrap && !c.primary {
                    quote!((#t))
                } else {
                    t.clone()
                }
            }
        }
    }

    /// The operands of a step, ready for its rule's `eval`.
    pub fn step_args(&mut self, st: &Step) -> Vec<TokenStream> {
        let wrap = |i: usize| i == 0 || st.args.len() == 2;
        st.args
            .iter()
            .enumerate()
            .map(|(i, a)| {
                if i == 0 && st.prim.method().is_some() {
                    // `f64::max(3.0, y)` becomes `3.0f64.max(y)`: a bare
                    // literal receiver would be an ambiguous float.
                    self.partial_operand(a)
                } else {
                    self.operand(a, st.prim != crate::rules::Prim::Copy && wrap(i))
                }
            })
            .collect()
    }

    /// An operand inside a partial derivative: literals get the float type,
    /// since `3.0.ln()` is ambiguous to rustc.
    pub fn partial_operand(&mut self, a: &Operand) -> TokenStream {
        match a {
            Operand::Const(c) => {
                if let Some(lit) = suffixed(&c.tokens, &self.ty) {
                    return lit;
                }
                if crate::lower_array::has_float_literal(&c.tokens) {
                    // `(0.3 * 0.3 + 1.0).ln()` is ambiguous too: name the type.
                    let (t, ty) = (unparen(c.tokens.clone()), &self.ty);
                    return quote!(::core::convert::identity::<#ty>(#t));
                }
                self.operand(a, true)
            }
            _ => self.operand(a, true),
        }
    }

    pub fn passive(&mut self, p: &Passive) -> TokenStream {
        p.tokens.clone()
    }

    /// The type of a gradient entry for a parameter of this shape.
    fn grad_ty(&self, shape: &Shape) -> TokenStream {
        let ty = &self.ty;
        match shape {
            Shape::Scalar => quote!(#ty),
            Shape::Array { len: None } => quote!(::std::vec::Vec<#ty>),
            Shape::Array { len: Some(n) } => quote!([#ty; #n]),
        }
    }

    /// The gradient entry of a parameter nothing flows into: zeros of its shape.
    fn zero_entry(&self, v: VarId) -> TokenStream {
        let var = self.var(v);
        match &self.f.var(v).shape {
            Shape::Scalar => quote!(0.0),
            Shape::Array { len: Some(n) } => quote!([0.0; #n]),
            Shape::Array { len: None } => quote!(::std::vec![0.0; #var.len()]),
        }
    }

    /// A fresh, zeroed adjoint for `v`.
    pub fn zero_adjoint(&mut self, v: VarId) -> TokenStream {
        let ty = self.ty.clone();
        let d = self.adj(v);
        let m = if self.written.contains(&v) {
            quote!(mut)
        } else {
            quote!()
        };
        let var = self.var(v);
        match &self.f.var(v).shape {
            Shape::Scalar => quote!(let #m #d: #ty = 0.0;),
            Shape::Array { len: Some(n) } => quote!(let #m #d: [#ty; #n] = [0.0; #n];),
            Shape::Array { len: None } => {
                quote!(let #m #d: ::std::vec::Vec<#ty> = ::std::vec![0.0; #var.len()];)
            }
        }
    }
}

/// The generated `f_grad`, `f_adjoint`, `f_adjoint_acc` and `f_pullback`,
/// with their docs. `all_floats` is `f` lowered with every float parameter
/// differentiable, when `wrt(...)` excluded some.
pub fn generate(
    f: &Func,
    all_floats: Option<(&Func, Names)>,
    names: Names,
    user: &syn::ItemFn,
) -> TokenStream {
    let a = analyze(f);
    let vis = &user.vis;
    let name = &user.sig.ident;
    let grad_name = format_ident!("{}_grad", name);
    let adjoint_name = format_ident!("{}_adjoint", name);
    let acc_name = format_ident!("{}_adjoint_acc", name);
    let wrt: Vec<String> = f.wrt().map(|v| f.var(v).ident.to_string()).collect();
    let shape = if wrt.len() == 1 {
        format!("`d{name}/d{}`", wrt[0])
    } else {
        let parts: Vec<String> = wrt.iter().map(|w| format!("d{name}/d{w}")).collect();
        format!("the tuple `({})`", parts.join(", "))
    };
    let buffers: Vec<String> = wrt.iter().map(|w| format!("`d_{w}`")).collect();
    let grad_doc = [
        format!(" Value and gradient of [`{name}`]: returns `({name}(..), gradient)`, the gradient being {shape}."),
        String::new(),
        format!(" The value is bit-identical to `{name}`'s; the gradient is computed afresh on every call."),
        " Generated by `#[differentiate]`.".to_string(),
    ];
    let adjoint_doc = [
        format!(" Pullback of [`{name}`]: returns `d_out` times the gradient ({shape})."),
        String::new(),
        " Generated by `#[differentiate]`.".to_string(),
    ];
    let acc_doc = [
        format!(
            " Pullback of [`{name}`], accumulated: ADDS `d_out` times the gradient into {},",
            buffers.join(", ")
        ),
        " one buffer per differentiable parameter, allocating nothing for them.".to_string(),
        String::new(),
        " Use it to sum gradients over a minibatch on purpose; zero the buffers between steps."
            .to_string(),
        " Panics if a buffer's length differs from its parameter's.".to_string(),
        String::new(),
        " Generated by `#[differentiate]`.".to_string(),
    ];
    let grad = Emitter::new(f, &a, Mode::Grad, names.clone()).function(&grad_name, vis);
    let adjoint = Emitter::new(f, &a, Mode::Adjoint, names.clone()).function(&adjoint_name, vis);
    let acc = Emitter::new(f, &a, Mode::AdjointAcc, names.clone()).function(&acc_name, vis);
    let pullback_name = format_ident!("{}_pullback", name);
    let pullback = match all_floats {
        Some((g, g_names)) => {
            let ga = analyze(g);
            Emitter::new(g, &ga, Mode::Pullback, g_names).function(&pullback_name, vis)
        }
        None => Emitter::new(f, &a, Mode::Pullback, names).function(&pullback_name, vis),
    };
    let pullback_doc = format!(
        " Pullback of [`{name}`] for differentiated callers: adds `d_out` times each argument's share of the gradient into the slot lent for it (`None`: not wanted; `()`: a constant)."
    );
    quote! {
        #(#[doc = #grad_doc])*
        #grad
        #(#[doc = #adjoint_doc])*
        #adjoint
        #(#[doc = #acc_doc])*
        #acc
        #[doc = #pullback_doc]
        #[doc(hidden)]
        #pullback
    }
}

impl Emitter<'_> {
    fn function(mut self, name: &Ident, vis: &syn::Visibility) -> TokenStream {
        let ty = self.ty.clone();
        let wrt: Vec<VarId> = self.f.wrt().collect();
        let mut buffer_names = HashMap::new();
        if matches!(self.mode, Mode::Pullback | Mode::AdjointAcc) {
            // Parameters accumulate straight into the caller's buffers where
            // they can (arrays; for `f_adjoint_acc`, scalars never
            // overwritten); the others into a local, added at the end.
            for &v in &wrt {
                let d = if v == self.f.output {
                    self.names.adjoint(&self.f.var(v).ident)
                } else {
                    self.adj(v)
                };
                buffer_names.insert(v, d.clone());
                let var = self.f.var(v);
                let direct = match self.mode {
                    Mode::Pullback => var.shape.is_array(),
                    _ => !var.reassigned && !self.a.restored[v.0] && v != self.f.output,
                };
                if direct {
                    self.buffers.insert(v);
                } else {
                    let local = self.names.fresh(&format!("{d}_local"));
                    self.adjoints.insert(v, local);
                }
            }
        }
        // Reverse first: it decides what the forward sweep must record.
        let reverse = self.reverse_function();
        let forward = self.forward_function();
        let mut hoisted = self.hoisted_decls();
        if self.compact {
            let values: Vec<(Ident, bool)> = self
                .compact_values
                .iter()
                .map(|&v| {
                    (
                        self.var(v),
                        self.f.var(v).reassigned || self.a.restored[v.0],
                    )
                })
                .collect();
            let adjoints: Vec<(Ident, bool)> = self
                .compact_adjoints
                .clone()
                .into_iter()
                .map(|v| (self.adj(v), self.written.contains(&v)))
                .collect();
            hoisted.extend(grouped_lets(&values, &ty, false));
            hoisted.extend(grouped_lets(&adjoints, &ty, true));
        }
        let seed = self.seed.clone();
        let out_adj = self.a.adj[self.f.output.0];
        let seed_mut = if self.written.contains(&self.f.output) {
            quote!(mut)
        } else {
            quote!()
        };
        let grads: Vec<TokenStream> = wrt
            .iter()
            .map(|&v| {
                if self.a.adj[v.0] {
                    let d = self.adj(v);
                    quote!(#d)
                } else {
                    self.zero_entry(v)
                }
            })
            .collect();
        let grad = if grads.len() == 1 {
            grads[0].clone()
        } else {
            quote!((#(#grads),*))
        };
        let grad_tys: Vec<TokenStream> = wrt
            .iter()
            .map(|v| self.grad_ty(&self.f.var(*v).shape))
            .collect();
        let grad_ty = if grad_tys.len() == 1 {
            grad_tys[0].clone()
        } else {
            quote!((#(#grad_tys),*))
        };

        let mut out = self.var(self.f.output);
        let mut capture = quote!();
        if self.a.restored[self.f.output.0] {
            // The reverse sweep rewinds the output variable: keep the value.
            let value = self.names.fresh("value");
            capture = quote!(let #value = #out;);
            out = value;
        }
        let body_tokens = if matches!(self.mode, Mode::AdjointAcc | Mode::Pullback) {
            quote!(#hoisted #forward #reverse)
        } else {
            quote!(#hoisted #forward #capture #reverse #out #grad)
        };
        let params = self.params(&body_tokens);
        let seed_param = if out_adj {
            quote!(#seed_mut #seed: #ty)
        } else {
            let i = format_ident!("_{}", seed);
            quote!(#i: #ty)
        };
        match self.mode {
            Mode::Grad => {
                let seed_decl = if out_adj {
                    quote!(let #seed_mut #seed: #ty = 1.0;)
                } else {
                    quote!()
                };
                let allow = many_args(params.len());
                let ptr = vec_refs(self.f);
                quote! {
                    #allow
                    #ptr
                    #vis fn #name(#(#params),*) -> (#ty, #grad_ty) {
                        #hoisted
                        #forward
                        #capture
                        #seed_decl
                        #reverse
                        (#out, #grad)
                    }
                }
            }
            Mode::Adjoint => {
                let allow = many_args(params.len() + 1);
                let ptr = vec_refs(self.f);
                let dead = unread_primal(self.f);
                quote! {
                    #allow
                    #ptr
                    #dead
                    #vis fn #name(#(#params,)* #seed_param) -> #grad_ty {
                        #hoisted
                        #forward
                        #reverse
                        #grad
                    }
                }
            }
            Mode::Pullback => {
                // One slot per parameter: `Option<&mut f64>`, `Option<&mut [f64]>`
                // or `()` for constants, so a caller can pass
                // `Default::default()` for any argument it needs nothing from.
                let mut slots = Vec::new();
                let mut bind = Vec::new();
                let mut finish = Vec::new();
                for p in &self.f.params {
                    let Some(v) = p.var else {
                        slots.push(quote!(_: ()));
                        continue;
                    };
                    let d = buffer_names[&v].clone();
                    let used = self.a.adj[v.0] && (v != self.f.output || p.shape.is_array());
                    let slot_ty = if p.shape.is_array() {
                        quote!(::core::option::Option<&mut [#ty]>)
                    } else {
                        quote!(::core::option::Option<&mut #ty>)
                    };
                    if !self.a.adj[v.0] {
                        let i = format_ident!("_{}", d);
                        slots.push(quote!(#i: #slot_ty));
                        continue;
                    }
                    slots.push(quote!(#d: #slot_ty));
                    let _ = used;
                    if p.shape.is_array() {
                        let own = self.names.fresh(&format!("{d}_own"));
                        let x = self.var(v);
                        bind.push(quote! {
                            let mut #own: ::std::vec::Vec<#ty>;
                            let #d: &mut [#ty] = match #d {
                                ::core::option::Option::Some(b) => b,
                                ::core::option::Option::None => {
                                    #own = ::std::vec![0.0; #x.len()];
                                    &mut #own
                                }
                            };
                        });
                    } else {
                        let local = self.adj(v);
                        finish.push(quote! {
                            if let ::core::option::Option::Some(b) = #d {
                                *b += #local;
                            }
                        });
                    }
                }
                let allow = many_args(params.len() + 1 + slots.len());
                let ptr = vec_refs(self.f);
                let dead = unread_primal(self.f);
                quote! {
                    #allow
                    #ptr
                    #dead
                    #vis fn #name(#(#params,)* #seed_param, #(#slots),*) {
                        #(#bind)*
                        #hoisted
                        #forward
                        #reverse
                        #(#finish)*
                    }
                }
            }
            Mode::AdjointAcc => {
                let mut buffer_params = Vec::new();
                let mut checks = Vec::new();
                let mut finish = Vec::new();
                for &v in &wrt {
                    let d = buffer_names[&v].clone();
                    let x = self.var(v);
                    if self.f.var(v).shape.is_array() {
                        buffer_params.push(quote!(#d: &mut [#ty]));
                        let msg = format!("{name}: the buffer `{d}` has length {{}} but the parameter `{x}` has length {{}}");
                        checks.push(quote!(::core::assert!(#d.len() == #x.len(), #msg, #d.len(), #x.len());));
                    } else {
                        buffer_params.push(quote!(#d: &mut #ty));
                    }
                    if !self.buffers.contains(&v) && self.a.adj[v.0] {
                        let local = self.adj(v);
                        finish.push(quote!(*#d += #local;));
                    }
                }
                let allow = many_args(params.len() + 1 + buffer_params.len());
                let ptr = vec_refs(self.f);
                let dead = unread_primal(self.f);
                quote! {
                    #allow
                    #ptr
                    #dead
                    #vis fn #name(#(#params,)* #seed_param, #(#buffer_params),*) {
                        #(#checks)*
                        #hoisted
                        #forward
                        #reverse
                        #(#finish)*
                    }
                }
            }
        }
    }

    /// The user's parameters, renamed `_x` where the body does not mention
    /// them and `mut` where the reverse sweep rewinds them.
    fn params(&self, body: &TokenStream) -> Vec<TokenStream> {
        let mut mentioned = HashSet::new();
        collect_idents(body.clone(), &mut mentioned);
        let mut out = Vec::new();
        for p in &self.f.params {
            let var = Some(p.id);
            let ident = &p.ident;
            let ty = &p.ty;
            let used = mentioned.contains(&ident.to_string())
                || self.mode == Mode::AdjointAcc && p.shape.is_array() && p.var.is_some()
                || self.mode == Mode::Pullback
                    && p.shape.is_array()
                    && p.var.is_some_and(|v| self.a.adj[v.0]);
            let mutable = var.is_some_and(|v| self.f.var(v).reassigned || self.a.restored[v.0]);
            out.push(match (used, mutable) {
                (false, _) => {
                    let i = format_ident!("_{}", ident);
                    quote!(#i: #ty)
                }
                (true, true) => quote!(mut #ident: #ty),
                (true, false) => quote!(#ident: #ty),
            });
        }
        out
    }
}

fn collect_idents(ts: TokenStream, out: &mut HashSet<String>) {
    for tt in ts {
        match tt {
            TokenTree::Ident(i) => {
                out.insert(i.to_string());
            }
            TokenTree::Group(g) => collect_idents(g.stream(), out),
            _ => {}
        }
    }
}

/// An unsuffixed float literal with the function's float type attached.
fn suffixed(tokens: &TokenStream, ty: &TokenStream) -> Option<TokenStream> {
    let mut it = tokens.clone().into_iter();
    let (Some(TokenTree::Literal(l)), None) = (it.next(), it.next()) else {
        return None;
    };
    let text = l.to_string();
    let float = text.contains('.') || text.contains('e') || text.contains('E');
    if !float || text.ends_with("f64") || text.ends_with("f32") || text.starts_with("0x") {
        return None;
    }
    let mut lit: proc_macro2::Literal = format!("{text}{ty}").parse().ok()?;
    lit.set_span(l.span());
    Some(quote!(#lit))
}

/// Top-level statements above which declarations are grouped (see `compact`).
const COMPACT_ABOVE: usize = 150;

/// Declares `vars` a few dozen to a `let`: `let (a, mut b): (f64, f64);`, or
/// with `= (0.0, 0.0)` when `zero`.
fn grouped_lets(vars: &[(Ident, bool)], ty: &TokenStream, zero: bool) -> TokenStream {
    vars.chunks(32)
        .map(|chunk| {
            let pats = chunk
                .iter()
                .map(|(i, m)| if *m { quote!(mut #i) } else { quote!(#i) });
            let tys = chunk.iter().map(|_| ty);
            if zero {
                let zeros = chunk.iter().map(|_| quote!(0.0));
                quote!(let (#(#pats,)*): (#(#tys,)*) = (#(#zeros,)*);)
            } else {
                quote!(let (#(#pats,)*): (#(#tys,)*);)
            }
        })
        .collect()
}

/// Clippy's limit is seven parameters; a generated signature can exceed it
/// where the user's does not (`f_adjoint_acc` adds a buffer per parameter).
fn many_args(n: usize) -> TokenStream {
    if n > 7 {
        quote!(#[allow(clippy::too_many_arguments)])
    } else {
        quote!()
    }
}

/// Functions that return only the gradient drop the primal computations
/// nothing reads, and with them the reads of some reassigned values: the
/// first value of `let mut k = 4;`, overwritten in a loop and read only by
/// dropped code, would be reported as never read.
fn unread_primal(f: &Func) -> TokenStream {
    if f.vars.iter().any(|v| v.reassigned) {
        quote!(#[allow(unused_assignments)])
    } else {
        quote!()
    }
}

/// A `&Vec<f64>` parameter is the user's choice (clippy's `ptr_arg` would say
/// `&[f64]`); the generated functions repeat it and must not be blamed.
fn vec_refs(f: &Func) -> TokenStream {
    let by_ref_vec = f.params.iter().any(|p| {
        let t = p.ty.to_string();
        t.starts_with('&') && t.contains("Vec")
    });
    if by_ref_vec {
        quote!(#[allow(clippy::ptr_arg)])
    } else {
        quote!()
    }
}

/// `(a + b)` as `a + b`: after a compound assignment the parentheses are
/// redundant (and rustc says so).
pub(super) fn unparen(tokens: TokenStream) -> TokenStream {
    let mut it = tokens.clone().into_iter();
    match (it.next(), it.next()) {
        (Some(proc_macro2::TokenTree::Group(g)), None)
            if g.delimiter() == proc_macro2::Delimiter::Parenthesis && !is_tuple(&g.stream()) =>
        {
            g.stream()
        }
        _ => tokens,
    }
}

/// The inside of `()` or `(a, b)`: without its parentheses it is no longer
/// the same expression.
fn is_tuple(inner: &TokenStream) -> bool {
    inner.is_empty()
        || inner
            .clone()
            .into_iter()
            .any(|t| matches!(t, proc_macro2::TokenTree::Punct(p) if p.as_char() == ','))
}
