//! IR → Rust. `forward.rs` writes the forward sweep (the user's computation,
//! recording what the reverse sweep will need), `reverse.rs` the reverse sweep,
//! this file the generated functions around them.

mod forward;
mod fuse;
mod records;
mod reverse;
mod tangent;
mod wrappers;

pub(crate) use tangent::zeros_for_none;
pub(crate) use wrappers::{doc_link, entry_ty, float_ty, slot_ty};

use crate::analysis::{analyze, Analysis};
use crate::ir::*;
use crate::names::Names;
use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{format_ident, quote};
use records::Records;
use std::collections::{HashMap, HashSet};

/// State shared by both sweeps of one generated function.
pub struct Emitter<'a> {
    pub f: &'a Func,
    pub a: &'a Analysis,
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
    /// Forward mode only: emitting the tangent program that returns the
    /// output's tangent alone (`return t_out;`), which the reverse mode then
    /// differentiates again for second derivatives.
    pub dot_program: bool,
    /// Forward mode only: how many tangents each value carries at once
    /// (`[f64; L]`, so that one pass gives `L` columns of a Jacobian), and
    /// the name of the lane index; `None`: one.
    pub lanes: Option<(proc_macro2::Literal, Ident)>,
    /// Adjoints of `Vec`s made afresh in a loop body, declared once before
    /// the reverse sweep and refilled with zeros on each iteration, so that
    /// the loop allocates nothing for them.
    pub reused_adjoints: Vec<TokenStream>,
    /// The loop whose reverse runs inside it (see `fuse.rs`), and that
    /// reverse once emitted, for the forward sweep to place.
    pub fused: Option<StmtId>,
    pub fused_body: Option<TokenStream>,
    /// What runs before the fused loop: the top level's adjoints declared,
    /// and the reverses of the statements after the loop, which give the
    /// sum's adjoint.
    pub fused_prelude: Option<TokenStream>,
    /// The next block reversed is the fused loop's body, where the forward
    /// sweep's values are still in scope: none is computed again.
    pub in_scope: bool,
}

impl<'a> Emitter<'a> {
    fn new(f: &'a Func, a: &'a Analysis, names: Names) -> Self {
        let mut names = names;
        let seed = names.fresh("d_out");
        let ty = wrappers::float_ty(&f.float);
        let mut e = Emitter {
            f,
            a,
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
            dot_program: false,
            lanes: None,
            reused_adjoints: Vec::new(),
            fused: None,
            fused_body: None,
            fused_prelude: None,
            in_scope: false,
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

    /// A float constant in the function's type: `0.0`, or `T::zero()`.
    pub fn lit(&self, c: &str) -> TokenStream {
        crate::generic::lit(&self.ty, c)
    }

    /// `lhs op rhs;` for a compound assignment `op` (`+=`), in the
    /// function's type (see [`crate::generic::update`]).
    pub fn update(
        &self,
        lhs: impl quote::ToTokens,
        op: &str,
        rhs: impl quote::ToTokens,
    ) -> TokenStream {
        crate::generic::update(&self.ty, &lhs.to_token_stream(), op, &rhs.to_token_stream())
    }

    /// `elem = value;`, `elem += value;` or `elem -= value;`. In generic
    /// code an element of the array `value` reads (`v[k] += v[1 + k] * c`,
    /// a view of the same buffer) would be borrowed mutably before `value`
    /// is evaluated: written `elem = elem + (value);` (see `update`).
    pub fn store(&self, elem: TokenStream, op: StoreOp, value: TokenStream) -> TokenStream {
        match op {
            StoreOp::Set => quote!(#elem = #value;),
            StoreOp::Add => self.update(elem, "+=", value),
            StoreOp::Sub => self.update(elem, "-=", value),
        }
    }

    /// The core returns the value, so every primal value it reads is live.
    pub fn live(&self, v: VarId) -> bool {
        self.a.live[v.0]
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
                if crate::lower::has_float_literal(&c.tokens) {
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
        let zero = self.lit("0.0");
        match &self.f.var(v).shape {
            Shape::Scalar => quote!(let #m #d: #ty = #zero;),
            Shape::Array { len: Some(n) } => quote!(let #m #d: [#ty; #n] = [#zero; #n];),
            Shape::Array { len: None } if self.f.var(v).decl.loop_depth > 0 => {
                self.reused_adjoints
                    .push(quote!(let mut #d: ::std::vec::Vec<#ty> = ::std::vec::Vec::new();));
                quote!(#d.clear(); #d.resize(#var.len(), #zero);)
            }
            Shape::Array { len: None } => {
                quote!(let #m #d: ::std::vec::Vec<#ty> = ::std::vec![#zero; #var.len()];)
            }
        }
    }
}

/// The generated functions of `f`: one core per set of differentiable
/// parameters, holding the forward and the reverse sweep once, and the public
/// entry points as thin wrappers over it. `all_floats` is `f` lowered with
/// every float parameter differentiable, when `wrt(...)` excluded some:
/// differentiated callers need every float argument's adjoint (`f_pullback`),
/// `f_grad` and its siblings only those of `wrt`, and computing the others
/// would cost them time and memory. `unavailable` marks the float parameters
/// whose derivatives could not be had that way.
pub fn generate(
    f: &Func,
    all_floats: Option<(&Func, Names)>,
    unavailable: &[bool],
    receiver: Option<&syn::Receiver>,
    names: Names,
    user: &syn::ItemFn,
    modes: Modes,
) -> TokenStream {
    let name = &user.sig.ident;
    // A method's generated functions are methods too, reached through `Self`.
    let this = receiver.map(|_| quote!(Self::));
    let turbofish = &f.generics.turbofish;
    let user_fn = quote!(#this #name #turbofish);
    let link = wrappers::doc_link(name, receiver);
    let private = syn::Visibility::Inherited;
    let core_name = format_ident!("__{}_core", name);
    let a = analyze(f);
    let core = Emitter::new(f, &a, names.clone()).core(&core_name, &private, (&user_fn, receiver));
    let (all_name, all_core, all_f) = match &all_floats {
        Some((g, g_names)) => {
            let ga = analyze(g);
            let all_name = format_ident!("__{}_core_all", name);
            let all_core = Emitter::new(g, &ga, g_names.clone()).core(
                &all_name,
                &private,
                (&user_fn, receiver),
            );
            let doc = format!(
                " The pullback of {link} with respect to every float parameter, `wrt(..)` or not."
            );
            (all_name, quote!(#[doc = #doc] #all_core), *g)
        }
        None => (core_name.clone(), quote!(), f),
    };
    let core_doc = format!(
        " The forward and the reverse sweep of {link}, once: returns `{name}(..)` and adds `d_out` times each argument's share of the gradient into the slot lent for it (`None`: not wanted; `()`: a constant)."
    );
    let (core_path, all_path) = (quote!(#this #core_name), quote!(#this #all_name));
    let names_for_tangent = names.clone();
    let wrappers = wrappers::wrappers(
        f,
        (all_f, unavailable),
        names,
        user,
        receiver,
        (&core_path, &all_path),
    );
    let ty = wrappers::float_ty(&f.float);
    let mut forward_mode = if modes.tangent {
        forward_mode(
            f,
            all_floats.as_ref(),
            unavailable,
            receiver,
            names_for_tangent,
            user,
        )
    } else {
        quote!()
    };
    forward_mode.extend(missing_modes(user, receiver, modes, &ty));
    quote! {
        #wrappers
        #[doc = #core_doc]
        #core
        #all_core
        #forward_mode
    }
}

/// Without `tangent` (or `hessian`), placeholders for what a caller with
/// the flag calls (`f_pushforward`, `f_dot`, `f_dot_pullback`) whose first
/// argument cannot satisfy its bound: the caller gets an error at the call,
/// naming `f` and the flag to add, instead of "cannot find function".
fn missing_modes(
    user: &syn::ItemFn,
    receiver: Option<&syn::Receiver>,
    modes: Modes,
    ty: &TokenStream,
) -> TokenStream {
    let name = &user.sig.ident;
    let dot = [
        ("dot", (2, 0), quote!(#ty)),
        ("dot_pullback", (4, 1), quote!()),
    ];
    let (marker, flag, fns) = match (modes.tangent, modes.hessian) {
        (_, true) => return quote!(),
        (true, false) => ("has_no_hessian", "hessian", dot.to_vec()),
        // A caller with `hessian` calls `f_pushforward` too: the first error
        // asks for `tangent`, and then (below) for `hessian`.
        (false, false) => (
            "has_no_tangent",
            "tangent",
            vec![("pushforward", (2, 0), quote!((#ty, #ty)))],
        ),
    };
    let message = format!(
        "`{name}` is called by a function with `{flag}` but does not have it: write `#[differentiate({flag})]` on `{name}` (keeping any `wrt(..)`)"
    );
    let label = "called here by a function with `tangent` or `hessian`";
    placeholders(user, receiver, marker, (&message, label), &fns)
}

/// Placeholder functions `f_<suffix>` that differentiated callers would
/// call, each taking `per_param` × the parameter count + `extra` arguments
/// (the arguments, a slot for each, a seed), whose
/// first argument cannot satisfy a bound that reports `message` at the call.
/// (Not for methods: a trait cannot be declared in an `impl` block.)
pub(crate) fn placeholders(
    user: &syn::ItemFn,
    receiver: Option<&syn::Receiver>,
    marker: &str,
    (message, label): (&str, &str),
    fns: &[(&str, (usize, usize), TokenStream)],
) -> TokenStream {
    let n = user.sig.inputs.len();
    if receiver.is_some() || n == 0 {
        return quote!();
    }
    let (vis, name) = (&user.vis, &user.sig.ident);
    let generics = crate::generic::Generics::of(&user.sig);
    let (gp, wc) = (&generics.params, &generics.where_clause);
    let marker = format_ident!("__{}_{}", name, marker);
    let fns = fns.iter().map(|(suffix, (per_param, extra), ret)| {
        let f = format_ident!("{}_{}", name, suffix);
        let rest = (1..per_param * n + extra).map(|_| quote!(_: impl ::core::marker::Sized));
        let ret = if ret.is_empty() {
            quote!()
        } else {
            quote!(-> #ret)
        };
        quote! {
            #[doc(hidden)]
            #[allow(dead_code, clippy::too_many_arguments)]
            #vis fn #f #gp(_: impl #marker, #(#rest),*) #ret #wc {
                ::core::unreachable!()
            }
        }
    });
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #[diagnostic::on_unimplemented(message = #message, label = #label)]
        #vis trait #marker {}
        #(#fns)*
    }
}

/// The tangent program of `f` as a function named `name` (see
/// `Emitter::dot_program`), and its tangent parameters' names.
pub fn dot_program(
    f: &Func,
    names: Names,
    name: &Ident,
    receiver: Option<&syn::Receiver>,
) -> (TokenStream, Vec<Ident>) {
    let a = analyze(f);
    Emitter::new(f, &a, names).dot_program(name, receiver)
}

/// A private core (`fn name(params.., d_out, slots..) -> value`) for `g`,
/// naming `user_fn` so that using it uses the user's function.
pub fn private_core(
    g: &Func,
    names: Names,
    name: &Ident,
    (user_fn, receiver): (&TokenStream, Option<&syn::Receiver>),
) -> TokenStream {
    let a = analyze(g);
    let private = syn::Visibility::Inherited;
    Emitter::new(g, &a, names).core(name, &private, (user_fn, receiver))
}

/// A private tangent core for `g` returning `out` (of type `out_ty`) and its
/// tangent: `fn name(params.., tangents..) -> (out_ty, out_ty)`. With
/// `lanes`, each tangent is a `[f64; LANES]`: `LANES` directions in one pass
/// (only for functions that call no other differentiated function, whose
/// pushforwards carry one tangent).
pub fn jvp_core(
    g: &Func,
    names: Names,
    name: &Ident,
    (user_fn, receiver): (&TokenStream, Option<&syn::Receiver>),
    (out, out_ty): (VarId, &TokenStream),
    lanes: bool,
) -> TokenStream {
    let a = analyze(g);
    let mut e = Emitter::new(g, &a, names);
    if lanes {
        let lane = e.names.fresh("lane");
        e.lanes = Some((proc_macro2::Literal::usize_unsuffixed(LANES), lane));
    }
    e.tangent_core(name, (user_fn, receiver), Some((out, out_ty)))
}

/// Tangents carried at once by [`jvp_core`] with lanes: 16 columns of a
/// Jacobian per pass.
pub const LANES: usize = 16;

/// The optional modes the attribute's flags ask for.
#[derive(Clone, Copy, Debug, Default)]
pub struct Modes {
    pub tangent: bool,
    pub hessian: bool,
}

/// `f_tangent` and `f_pushforward` over tangent cores of `f` (and of
/// `all_floats`, as for the reverse mode).
fn forward_mode(
    f: &Func,
    all_floats: Option<&(&Func, Names)>,
    unavailable: &[bool],
    receiver: Option<&syn::Receiver>,
    names: Names,
    user: &syn::ItemFn,
) -> TokenStream {
    let name = &user.sig.ident;
    let this = receiver.map(|_| quote!(Self::));
    let turbofish = &f.generics.turbofish;
    let user_fn = quote!(#this #name #turbofish);
    let core_name = format_ident!("__{}_tangent_core", name);
    let a = analyze(f);
    let core =
        Emitter::new(f, &a, names.clone()).tangent_core(&core_name, (&user_fn, receiver), None);
    let (all_name, all_core, all_f) = match all_floats {
        Some((g, g_names)) => {
            let ga = analyze(g);
            let all_name = format_ident!("__{}_tangent_core_all", name);
            let all_core = Emitter::new(g, &ga, g_names.clone()).tangent_core(
                &all_name,
                (&user_fn, receiver),
                None,
            );
            (all_name, all_core, *g)
        }
        None => (core_name.clone(), quote!(), f),
    };
    let (core_path, all_path) = (quote!(#this #core_name), quote!(#this #all_name));
    let wrappers = tangent::tangent_wrappers(
        f,
        (all_f, unavailable),
        &names,
        user,
        receiver,
        (&core_path, &all_path),
    );
    quote! {
        #wrappers
        #core
        #all_core
    }
}

impl Emitter<'_> {
    /// The core: the user's parameters, the seed, then one slot per parameter
    /// (`Option<&mut f64>`, `Option<&mut [f64]>`, or `()` for a constant, so
    /// a caller can pass `Default::default()` for any argument it needs
    /// nothing from). Returns the value.
    fn core(
        mut self,
        name: &Ident,
        vis: &syn::Visibility,
        (user_fn, receiver): (&TokenStream, Option<&syn::Receiver>),
    ) -> TokenStream {
        let ty = self.ty.clone();
        let mut slot_names = HashMap::new();
        for v in self.f.wrt().collect::<Vec<_>>() {
            let d = if v == self.f.output {
                self.names.adjoint(&self.f.var(v).ident)
            } else {
                self.adj(v)
            };
            slot_names.insert(v, d.clone());
            // Arrays, and scalars the reverse sweep never rewinds, accumulate
            // straight into the lent slot; the others into a local, added to
            // the slot at the end.
            let var = self.f.var(v);
            let direct = var.shape.is_array()
                || !var.reassigned && !self.a.restored[v.0] && v != self.f.output;
            if direct {
                self.buffers.insert(v);
            } else {
                let local = self.names.fresh(&format!("{d}_local"));
                self.adjoints.insert(v, local);
            }
        }
        self.fused = fuse::fused_loop(self.f, self.a, &self.buffers);
        // Reverse first: it decides what the forward sweep must record.
        let reverse = self.reverse_function();
        let forward = self.forward_function();
        let mut hoisted = self.hoisted_decls();
        if self.compact {
            let values: Vec<(Ident, bool)> = self
                .compact_values
                .iter()
                .map(|&v| (self.var(v), self.a.mutable(self.f, v)))
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
        let seed_param = if self.a.adj[self.f.output.0] {
            let m = if self.written.contains(&self.f.output) {
                quote!(mut)
            } else {
                quote!()
            };
            quote!(#m #seed: #ty)
        } else {
            let i = format_ident!("_{}", seed);
            quote!(#i: #ty)
        };
        let mut out = self.var(self.f.output);
        let mut capture = quote!();
        if self.a.restored[self.f.output.0] {
            // The reverse sweep rewinds the output variable: keep the value.
            let value = self.names.fresh("value");
            capture = quote!(let #value = #out;);
            out = value;
        }

        let mut slots = Vec::new();
        let mut bind = Vec::new();
        let mut finish = Vec::new();
        let zero = self.lit("0.0");
        for p in &self.f.params {
            let Some(v) = p.var else {
                slots.push(quote!(_: ()));
                continue;
            };
            let d = slot_names[&v].clone();
            let slot_ty = wrappers::slot_ty(&p.shape, &ty);
            if !self.a.adj[v.0] {
                let i = format_ident!("_{}", d);
                slots.push(quote!(#i: #slot_ty));
                continue;
            }
            slots.push(quote!(#d: #slot_ty));
            if p.shape.is_array() {
                // expands to something like
                //     let mut d_w_own: Vec<f64>;
                //     let d_w: &mut [f64] = match d_w { Some(b) => b, None => { .. } };
                let own = self.names.fresh(&format!("{d}_own"));
                let x = self.var(v);
                // Sliced to the parameter's length, so that the optimiser
                // knows both lengths are equal and drops bounds checks.
                bind.push(quote! {
                    let mut #own: ::std::vec::Vec<#ty>;
                    let #d: &mut [#ty] = match #d {
                        ::core::option::Option::Some(b) => &mut b[..#x.len()],
                        ::core::option::Option::None => {
                            #own = ::std::vec![#zero; #x.len()];
                            &mut #own
                        }
                    };
                });
            } else if self.buffers.contains(&v) {
                let own = self.names.fresh(&format!("{d}_own"));
                bind.push(quote! {
                    let mut #own: #ty = #zero;
                    let #d: &mut #ty = match #d {
                        ::core::option::Option::Some(b) => b,
                        ::core::option::Option::None => &mut #own,
                    };
                });
            } else {
                let local = self.adj(v);
                let add = self.update(quote!(*b), "+=", &local);
                finish.push(quote! {
                    if let ::core::option::Option::Some(b) = #d {
                        #add
                    }
                });
            }
        }
        let (ret, out, capture) = if self.f.value_unused {
            (quote!(), quote!(), quote!())
        } else {
            (quote!(-> #ty), quote!(#out), capture)
        };
        let mut params = self.params(&[&hoisted, &forward, &capture, &reverse, &out]);
        if let Some(r) = receiver {
            params.insert(0, quote!(#r));
        }
        let allow = many_args(params.len() + 1 + slots.len());
        let ptr = vec_refs(self.f);
        let (gp, wc) = (&self.f.generics.params, &self.f.generics.where_clause);
        quote! {
            #[inline]
            #allow
            #ptr
            #vis fn #name #gp(#(#params,)* #seed_param, #(#slots),*) #ret #wc {
                // What uses the generated functions uses the function too.
                let _ = #user_fn;
                #(#bind)*
                #hoisted
                #forward
                #capture
                #reverse
                #(#finish)*
                #out
            }
        }
    }

    /// The user's parameters, renamed `_x` where the body does not mention
    /// them and `mut` where the reverse sweep rewinds them.
    fn params(&self, body: &[&TokenStream]) -> Vec<TokenStream> {
        let mut unseen: Vec<String> = self.f.params.iter().map(|p| p.ident.to_string()).collect();
        for part in body {
            strike_mentioned((*part).clone(), &mut unseen);
        }
        let mut out = Vec::new();
        for p in &self.f.params {
            let ident = &p.ident;
            let ty = &p.ty;
            let used = !unseen.contains(&ident.to_string())
                || p.shape.is_array() && p.var.is_some_and(|v| self.a.adj[v.0]);
            let mutable = self.f.var(p.id).reassigned || self.a.restored[p.id.0];
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

/// Removes from `unseen` the names `ts` mentions; stops once none is left
/// (usually within the first statements: the body is long).
fn strike_mentioned(ts: TokenStream, unseen: &mut Vec<String>) {
    for tt in ts {
        if unseen.is_empty() {
            return;
        }
        match tt {
            TokenTree::Ident(i) => unseen.retain(|n| i != n),
            TokenTree::Group(g) => strike_mentioned(g.stream(), unseen),
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
                let zeros = chunk.iter().map(|_| crate::generic::lit(ty, "0.0"));
                quote!(let (#(#pats,)*): (#(#tys,)*) = (#(#zeros,)*);)
            } else {
                quote!(let (#(#pats,)*): (#(#tys,)*);)
            }
        })
        .collect()
}

/// Clippy's limit is seven parameters; a generated signature can exceed it
/// where the user's does not (`f_adjoint_acc` adds a buffer per parameter).
pub(crate) fn many_args(n: usize) -> TokenStream {
    if n > 7 {
        quote!(#[allow(clippy::too_many_arguments)])
    } else {
        quote!()
    }
}

/// A `&Vec<f64>` parameter is the user's choice (clippy's `ptr_arg` would say
/// `&[f64]`); the generated functions repeat it and must not be blamed.
pub(crate) fn vec_refs(f: &Func) -> TokenStream {
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
