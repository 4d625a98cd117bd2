//! IR → Rust. `forward/` writes the forward sweep (the user's computation,
//! recording what the reverse sweep will need), `reverse/` the reverse sweep,
//! `core_fn.rs` the core holding both, `tangent/` forward mode, this file the
//! generated functions around them.

mod core_fn;
mod forward;
mod fuse;
mod inline;
mod operands;
mod placeholders;
mod records;
mod reverse;
mod tangent;
mod wrappers;

pub(crate) use inline::eligible as inline_eligible;
pub(crate) use placeholders::placeholders;
pub(crate) use tangent::zeros_for_none;
pub(crate) use wrappers::{doc_link, entry_ty, float_ty, slot_ty};

use crate::analysis::{analyze, Analysis};
use crate::ir::*;
use crate::names::Names;
use placeholders::missing_modes;
use proc_macro2::{Ident, Span, TokenStream};
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
    /// For each loop being emitted, innermost last: what its body pushes,
    /// reserved before the loop when its length is known.
    pub pushed: Vec<Pushes>,
    /// How many `if` branches enclose the statement being emitted.
    pub branch_depth: usize,
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
    /// While the forward sweep is printed: the folded temporaries (see
    /// `Analysis::folded`) met so far, each as its expression and how
    /// tightly that binds, for the one step that reads it.
    pub folds: Option<HashMap<VarId, (TokenStream, operands::Binds)>>,
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
            branch_depth: 0,
            stack_caps: records::stack_tapes(f, a),
            dot_program: false,
            lanes: None,
            reused_adjoints: Vec::new(),
            fused: None,
            fused_body: None,
            fused_prelude: None,
            in_scope: false,
            folds: None,
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
        let depth = self.branch_depth;
        if let Some(top) = self.pushed.last_mut() {
            top.conditional |= depth > top.branch_depth;
            if !top.direct.contains(tape) {
                top.direct.push(tape.clone());
            }
        }
    }
}

/// What one loop being emitted pushes on each iteration, for reserving its
/// tapes before it runs.
#[derive(Default)]
pub struct Pushes {
    /// Tapes its body pushes to directly, once per iteration at most.
    pub direct: Vec<Ident>,
    /// Tapes pushed by inner loops that run in full on every iteration, each
    /// with how many values it gets per iteration (an expression that cannot
    /// change while the loop runs) and the variables that expression reads.
    pub nested: Vec<(Ident, TokenStream, Vec<VarId>)>,
    /// Some push is inside an `if`.
    pub conditional: bool,
    /// The `if` branches around the loop.
    pub branch_depth: usize,
    /// Whether its number of iterations is known before it runs.
    pub counted: bool,
    /// The loops directly in its body.
    pub children: HashSet<SiteId>,
    /// Its depth, and binding.
    pub depth: u32,
    pub binding: Option<VarId>,
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

/// Top-level statements above which declarations are grouped (see `compact`).
const COMPACT_ABOVE: usize = 150;

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
