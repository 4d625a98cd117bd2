//! Data-flow facts both sweeps need: which adjoints carry anything, which
//! primal values the reverse sweep reads, which forward statements are live,
//! and which writes must record the value they destroy.

mod unread;

use crate::ir::*;
use crate::rules::{Partial, Prim};
use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::quote;
use std::collections::{HashMap, HashSet};

/// What one partial derivative of a primitive needs.
#[derive(Clone)]
pub struct PartialUse {
    pub nonzero: bool,
    /// Operand positions whose values it reads.
    pub args: Vec<usize>,
    /// It reads the primitive's output.
    pub out: bool,
}

/// Reads the rules table with placeholder operands to learn what each partial
/// uses, so no second table of "what reads what" exists.
pub fn partial_uses(prim: Prim) -> Vec<PartialUse> {
    thread_local! {
        static CACHE: std::cell::RefCell<HashMap<Prim, Vec<PartialUse>>> = Default::default();
    }
    CACHE.with(|c| {
        c.borrow_mut()
            .entry(prim)
            .or_insert_with(|| read_partials(prim))
            .clone()
    })
}

fn read_partials(prim: Prim) -> Vec<PartialUse> {
    let args: Vec<TokenStream> = (0..prim.arity())
        .map(|i| {
            let id = Ident::new(&format!("__gm_a{i}"), Span::call_site());
            quote!(#id)
        })
        .collect();
    let out = quote!(__gm_y);
    prim.partials(&args, &out, &quote!(f64))
        .into_iter()
        .map(|p| {
            let ts = match &p {
                Partial::Zero | Partial::Unit { .. } => TokenStream::new(),
                Partial::Times { expr, .. } | Partial::Over { expr, .. } => expr.clone(),
                Partial::When { cond } => cond.clone(),
            };
            let mut names = Vec::new();
            idents(ts, &mut names);
            PartialUse {
                nonzero: !matches!(p, Partial::Zero),
                args: (0..prim.arity())
                    .filter(|i| names.contains(&format!("__gm_a{i}")))
                    .collect(),
                out: names.iter().any(|n| n == "__gm_y"),
            }
        })
        .collect()
}

fn idents(ts: TokenStream, out: &mut Vec<String>) {
    for tt in ts {
        match tt {
            proc_macro2::TokenTree::Ident(i) => out.push(i.to_string()),
            proc_macro2::TokenTree::Group(g) => idents(g.stream(), out),
            _ => {}
        }
    }
}

/// Visits every statement, nested ones included, in program order.
pub fn walk<'a>(block: &'a Block, f: &mut impl FnMut(&'a Stmt)) {
    for s in &block.stmts {
        f(s);
        match s {
            Stmt::If(i) => {
                walk(&i.then, f);
                walk(&i.els, f);
            }
            Stmt::Loop(l) => walk(&l.body, f),
            _ => {}
        }
    }
}

/// A statement seen as data flow: `dst` gets a value from `srcs` (operands
/// whose partial is nonzero). Control flow and passive code are not flows.
struct Flow {
    dst: VarId,
    srcs: Vec<VarId>,
}

fn flows(f: &Func) -> Vec<Flow> {
    let mut out = Vec::new();
    walk(&f.body, &mut |s| match s {
        Stmt::Step(st) => {
            let uses = partial_uses(st.prim);
            let srcs = st
                .args
                .iter()
                .zip(&uses)
                .filter(|(_, u)| u.nonzero)
                .filter_map(|(a, _)| a.var())
                .collect();
            out.push(Flow { dst: st.dst, srcs });
        }
        Stmt::Store(s) => out.push(Flow {
            dst: s.arr,
            srcs: s.value.var().into_iter().collect(),
        }),
        Stmt::Push(p) => out.push(Flow {
            dst: p.arr,
            srcs: p.value.var().into_iter().collect(),
        }),
        Stmt::Reduce(r) => out.push(Flow {
            dst: r.dst,
            srcs: Vec::new(),
        }),
        Stmt::Call(c) => out.push(Flow {
            dst: c.dst,
            srcs: c.args.iter().filter_map(CallArg::target).collect(),
        }),
        _ => {}
    });
    out
}

pub struct Analysis {
    /// `if`s and loops that may leave their enclosing block early (a `break`,
    /// `continue` or `return` inside them reaches past them).
    pub escaping: HashSet<SiteId>,
    /// The variable's adjoint can be nonzero and reaches a gradient entry.
    pub adj: Vec<bool>,
    /// The reverse sweep reads the variable's primal value.
    pub needed: Vec<bool>,
    /// An array with an adjoint: the reverse sweep sizes the adjoint from it.
    pub scoped: Vec<bool>,
    /// Declared inside a construct but used by the reverse sweep: declared at
    /// the top of the function instead.
    pub hoisted: Vec<bool>,
    /// The forward sweep must compute the variable: the core returns the
    /// value, so the output and everything it reads are live.
    pub live: Vec<bool>,
    /// Declared by a `let v;` statement (rather than by its first write).
    pub declared: Vec<bool>,
    /// Some write of the variable records the old value.
    pub restored: Vec<bool>,
    /// A loop binding the reverse sweep rebuilds (from the iteration count, or
    /// by running the range backwards).
    pub replayed: Vec<bool>,
    /// Loops the reverse sweep runs over their own range backwards, recording
    /// nothing: they never break and their range cannot change.
    pub reversible: HashSet<SiteId>,
    /// Values inside loops that the reverse sweep computes again from inputs
    /// that cannot have changed, instead of recording them (see `recomputable`).
    pub recomputed: Vec<bool>,
    /// `if`s inside loops whose condition the reverse sweep evaluates again
    /// (it reads only values that cannot have changed, and calls nothing
    /// but float methods), instead of recording which branch was taken.
    pub recomputed_cond: HashSet<SiteId>,
    /// A scalar of the function's float type: annotated so, or written or
    /// read whole by a float step (a declaration can name its type).
    pub floats: Vec<bool>,
    /// Number of steps writing the variable whose reverse reads its adjoint.
    writers: Vec<usize>,
    /// Writes whose old value nothing reads (see `unneeded_saves`).
    unneeded: HashSet<StmtId>,
    /// Integer increments (`at += 1`) the reverse sweep undoes by the inverse
    /// update instead of recording the old value, with that update's
    /// operator (`-=` for `+=`; see `invertible`).
    pub inverted: HashMap<StmtId, &'static str>,
    /// Writes whose value nothing emitted reads (see `unread`): left out, a
    /// first one (`let v = ..;`) declaring the variable without its value.
    pub unread: HashSet<StmtId>,
    /// Variables with unread writes that the rest of the forward sweep writes
    /// at most once per declaration: a `let` without a value takes that
    /// write without `mut`.
    pub written_once: Vec<bool>,
    /// Variables whose every write is unread: nothing reads them, so they
    /// are not declared at all.
    pub undeclared: Vec<bool>,
}

impl Analysis {
    /// Whether the variable's `let` needs `mut` in the forward sweep.
    pub fn mutable(&self, f: &Func, v: VarId) -> bool {
        (f.var(v).reassigned || self.restored[v.0]) && !self.written_once[v.0]
    }

    /// Whether the write statement `key` (see [`write_key`]) of `dst` must
    /// record the value it destroys.
    pub fn saves_at(&self, f: &Func, dst: VarId, write: Write, key: StmtId) -> bool {
        self.saves(f, dst, write)
            && !self.unneeded.contains(&key)
            && !self.inverted.contains_key(&key)
    }

    /// Whether a write of `dst` of this kind must record the value it destroys.
    pub fn saves(&self, f: &Func, dst: VarId, write: Write) -> bool {
        self.needed[dst.0]
            && !self.replayed[dst.0]
            && !self.recomputed[dst.0]
            && (write == Write::Overwrite || f.var(dst).decl.loop_depth > 0)
    }

    /// Whether re-creating the array `dst` must record the old array (moved,
    /// not copied): the reverse sweep sizes its adjoint from it, or reads it.
    /// Re-creating an array with an adjoint sizes that adjoint afresh from
    /// the old array: the new array's length may differ, and its adjoints,
    /// already passed on, must not reach the old elements.
    pub fn saves_array(&self, f: &Func, dst: VarId, write: Write) -> bool {
        let resized = write == Write::Overwrite && self.adj[dst.0];
        (self.needed[dst.0] || self.scoped[dst.0] || resized)
            && (write == Write::Overwrite || f.var(dst).decl.loop_depth > 0)
    }

    /// Whether the reverse of re-creating `dst` starts the old array's
    /// adjoint afresh (see `saves_array`).
    pub fn resets_adjoint(&self, dst: VarId, write: Write) -> bool {
        write == Write::Overwrite && self.adj[dst.0]
    }

    /// Whether a store into `arr` must record the element it overwrites.
    pub fn saves_element(&self, arr: VarId) -> bool {
        self.needed[arr.0]
    }

    /// Whether the reverse of overwriting step `st` must clear the adjoint it
    /// consumed: only if something later in the reverse sweep reads it again.
    pub fn zero_needed(&self, f: &Func, st: &Step) -> bool {
        let own = usize::from(self.contributes(st));
        // A parameter's adjoint is read at the end, as its gradient entry.
        let param = f.is_param(st.dst);
        param || self.writers[st.dst.0] > own || st.ctx.loop_depth > f.var(st.dst).decl.loop_depth
    }

    fn contributes(&self, st: &Step) -> bool {
        let uses = partial_uses(st.prim);
        st.args
            .iter()
            .zip(&uses)
            .any(|(a, u)| u.nonzero && a.var().is_some_and(|v| self.adj[v.0]))
    }
}

pub fn analyze(f: &Func) -> Analysis {
    let n = f.vars.len();
    let flows = flows(f);
    let mut reduce_srcs: Vec<(VarId, VarId)> = Vec::new();
    walk(&f.body, &mut |s| {
        if let Stmt::Reduce(r) = s {
            reduce_srcs.push((r.dst, r.arr));
        }
    });

    // Varied: depends on a differentiated parameter.
    let mut varied = vec![false; n];
    for p in f.wrt() {
        varied[p.0] = true;
    }
    fixpoint(|| {
        let mut changed = false;
        for fl in &flows {
            if !varied[fl.dst.0] && fl.srcs.iter().any(|v| varied[v.0]) {
                varied[fl.dst.0] = true;
                changed = true;
            }
        }
        for &(dst, arr) in &reduce_srcs {
            if !varied[dst.0] && varied[arr.0] {
                varied[dst.0] = true;
                changed = true;
            }
        }
        changed
    });
    // Useful: influences the output.
    let mut useful = vec![false; n];
    useful[f.output.0] = true;
    // Backwards, so a chain of n statements settles in one pass, not n.
    fixpoint(|| {
        let mut changed = false;
        for fl in flows.iter().rev() {
            if useful[fl.dst.0] {
                for v in &fl.srcs {
                    changed |= !useful[v.0];
                    useful[v.0] = true;
                }
            }
        }
        for &(dst, arr) in reduce_srcs.iter().rev() {
            if useful[dst.0] {
                changed |= !useful[arr.0];
                useful[arr.0] = true;
            }
        }
        changed
    });
    let adj: Vec<bool> = (0..n).map(|i| varied[i] && useful[i]).collect();

    let mut needed = vec![false; n];
    let need = |vs: &[VarId], needed: &mut Vec<bool>| vs.iter().for_each(|v| needed[v.0] = true);
    // Arrays with an adjoint: the reverse sweep sizes it from the array, and
    // an array created in a loop is restored whole for each iteration.
    let mut scoped = vec![false; n];
    for (i, v) in f.vars.iter().enumerate() {
        scoped[i] = adj[i] && v.shape.is_array();
    }
    walk(&f.body, &mut |s| {
        let (reads, out) = reverse_reads(s, &adj);
        need(&reads, &mut needed);
        if let (true, Some(dst)) = (out, written(s)) {
            needed[dst.0] = true;
        }
    });
    let mut reversible = HashSet::new();
    reversible_loops(f, &f.body, &mut Vec::new(), &mut reversible);
    walk(&f.body, &mut |s| {
        if let Stmt::Loop(Loop {
            site,
            kind: LoopKind::For {
                reversed: Some(r), ..
            },
            ..
        }) = s
        {
            if reversible.contains(site) {
                need(&r.reads, &mut needed);
            }
        }
    });
    let mut replayed = vec![false; n];
    walk(&f.body, &mut |s| {
        if let Stmt::Loop(Loop {
            site,
            kind: LoopKind::For {
                binding: Some(v), ..
            },
            ..
        }) = s
        {
            if reversible.contains(site) {
                replayed[v.0] = true;
            }
        }
        if let Stmt::Loop(Loop {
            kind:
                LoopKind::For {
                    binding: Some(v),
                    replay: Some(_),
                    ..
                },
            ..
        }) = s
        {
            replayed[v.0] = true;
        }
    });
    // A variable declared by `let v;` is written in branches: not once, in
    // its own block, so it is never recomputed.
    let mut candidates = vec![false; n];
    let mut deferred = vec![false; n];
    walk(&f.body, &mut |s| {
        if let Stmt::Declare(v) = s {
            deferred[v.0] = true;
        }
    });
    let _ = recomputable(f, &f.body, &replayed, &deferred, &mut candidates);
    // Recompute what the reverse sweep reads, and what that is made from.
    let mut recomputed: Vec<bool> = (0..n).map(|i| candidates[i] && needed[i]).collect();
    let recomputed_cond = conditions_to_recompute(f, &replayed, &candidates);
    // An `if` whose branches the reverse sweep leaves alone has no reverse:
    // its condition is not evaluated again (`if c { for _ in 0..n {} }`, or
    // `if b < 0.6 { s = 0.5; }` with `s` read by nothing backwards). What the
    // reverse sweep reads grows with the conditions it evaluates, so the two
    // settle together.
    let replays = |i: &If, needed: &[bool], recomputed: &[bool]| {
        recomputed_cond.contains(&i.site)
            && [&i.then, &i.els]
                .iter()
                .any(|b| has_reverse(b, &adj, needed, recomputed))
    };
    let all = statements(f);
    fixpoint(|| {
        let before = needed.iter().filter(|v| **v).count();
        walk(&f.body, &mut |s| {
            if let Stmt::If(i) = s {
                if replays(i, &needed, &recomputed) {
                    for u in &i.cond.reads {
                        if candidates[u.0] {
                            recomputed[u.0] = true;
                        }
                    }
                }
            }
        });
        fixpoint(|| {
            let mut changed = false;
            for s in all.iter().rev() {
                let (dst, reads) = match s {
                    Stmt::Step(st) => (st.dst, st.args.iter().flat_map(Operand::reads).collect()),
                    Stmt::Assign(pa) => (pa.dst, pa.value.reads.clone()),
                    _ => continue,
                };
                if recomputed[dst.0] {
                    for v in reads {
                        if candidates[v.0] && !recomputed[v.0] {
                            recomputed[v.0] = true;
                            changed = true;
                        }
                    }
                }
            }
            changed
        });
        let mut reads: Vec<VarId> = Vec::new();
        walk(&f.body, &mut |s| match s {
            Stmt::Step(st) if recomputed[st.dst.0] => {
                // Its inputs are read again, backwards.
                st.args.iter().for_each(|a| reads.extend(a.reads()));
            }
            Stmt::Assign(pa) if recomputed[pa.dst.0] => reads.extend(&pa.value.reads),
            Stmt::If(i) if replays(i, &needed, &recomputed) => reads.extend(&i.cond.reads),
            // Restoring an overwritten element of a needed array reads its index.
            Stmt::Store(st) if needed[st.arr.0] => reads.extend(&st.index.reads),
            _ => {}
        });
        need(&reads, &mut needed);
        needed.iter().filter(|v| **v).count() != before
    });
    let hoisted: Vec<bool> = (0..n)
        .map(|i| {
            (needed[i] || scoped[i])
                && !replayed[i]
                && !recomputed[i]
                && f.vars[i].decl.nested
                && VarId(i) != f.output
        })
        .collect();
    // A recomputed value is made again by the reverse sweep: the forward
    // sweep computes it only if something else there reads it.
    let seeds: Vec<bool> = (0..n).map(|i| needed[i] && !recomputed[i]).collect();
    // What the reverse sweep writes: adjoints, and values it computes again
    // (inside the branch they were computed in, which it then replays).
    let in_reverse: Vec<bool> = (0..n).map(|i| adj[i] || recomputed[i]).collect();
    let live = liveness(f, &seeds, &scoped, &in_reverse);
    let mut declared = vec![false; n];
    walk(&f.body, &mut |s| {
        if let Stmt::Declare(v) = s {
            declared[v.0] = true;
        }
    });
    // Annotated with the function's float type, or read or written by a
    // float step.
    let float_ty = crate::emit::float_ty(&f.float).to_string();
    let mut floats: Vec<bool> = f
        .vars
        .iter()
        .map(|v| v.ty.as_ref().is_some_and(|t| t.to_string() == float_ty))
        .collect();
    for p in &f.params {
        floats[p.id.0] |= !p.shape.is_array() && p.ty.to_string() == float_ty;
    }
    walk(&f.body, &mut |s| {
        if let Stmt::Step(st) = s {
            floats[st.dst.0] = true;
            for (i, a) in st.args.iter().enumerate() {
                if st.prim.integer_operand(i) {
                    continue;
                }
                match a {
                    Operand::Var(v) => floats[v.0] = true,
                    Operand::Const(c)
                        if c.reads.len() == 1
                            && (one_name(c) || float_method_of(c, &f.var(c.reads[0]).ident)) =>
                    {
                        floats[c.reads[0].0] = true
                    }
                    _ => {}
                }
            }
        }
    });
    copied_floats(f, &mut floats);
    let mut sites = ExitSites::default();
    exits(&f.body, &mut sites);
    let mut a = Analysis {
        escaping: sites.escaping,
        adj,
        needed,
        scoped,
        hoisted,
        live,
        declared,
        restored: vec![false; n],
        replayed,
        reversible,
        recomputed,
        recomputed_cond,
        floats,
        writers: vec![0; n],
        unneeded: HashSet::new(),
        inverted: HashMap::new(),
        unread: HashSet::new(),
        written_once: vec![false; n],
        undeclared: vec![false; n],
    };
    let _ = unneeded_saves(&f.body, &a.adj, &mut a.unneeded);
    a.inverted = invertible(f, &a);
    let mut restored = vec![false; n];
    let mut writers = vec![0; n];
    walk(&f.body, &mut |s| match s {
        Stmt::Step(st) => {
            restored[st.dst.0] |= a.saves_at(f, st.dst, st.write, write_key(s));
            writers[st.dst.0] += usize::from(a.contributes(st));
        }
        Stmt::Assign(p) => {
            restored[p.dst.0] |=
                a.saves_at(f, p.dst, p.write, p.id) || a.inverted.contains_key(&p.id)
        }
        Stmt::Reduce(r) => {
            restored[r.dst.0] |= a.saves_at(f, r.dst, r.write, write_key(s));
            writers[r.dst.0] += usize::from(a.adj[r.arr.0]);
        }
        Stmt::Call(c) => {
            restored[c.dst.0] |= a.saves_at(f, c.dst, c.write, write_key(s));
            writers[c.dst.0] += 1;
        }
        Stmt::ArrayDef(d) => restored[d.dst.0] |= a.saves_array(f, d.dst, d.write),
        Stmt::Store(s) => restored[s.arr.0] |= a.saves_element(s.arr),
        Stmt::Loop(Loop {
            kind: LoopKind::For {
                binding: Some(v), ..
            },
            ..
        }) => restored[v.0] |= a.saves(f, *v, Write::Def),
        _ => {}
    });
    a.restored = restored;
    a.writers = writers;
    unread_writes(f, &mut a);
    a
}

/// A passive copy (`let t = acc;`, `t = acc.sin();`) has its source's type:
/// a float through any chain of copies (a generic `T` has no `Default` to
/// declare it with).
fn copied_floats(f: &Func, floats: &mut [bool]) {
    let mut copies = Vec::new();
    walk(&f.body, &mut |s| {
        if let Stmt::Assign(p) = s {
            if let ([src], false) = (&p.value.reads[..], f.var(p.dst).shape.is_array()) {
                if one_name(&p.value) || float_method_of(&p.value, &f.var(*src).ident) {
                    copies.push((p.dst.0, src.0));
                }
            }
        }
    });
    let mut changed = true;
    while changed {
        changed = false;
        for &(dst, src) in &copies {
            if floats[dst] != floats[src] {
                floats[dst] = true;
                floats[src] = true;
                changed = true;
            }
        }
    }
}

/// Finds the unread writes of variables the forward sweep alone reads (the
/// reverse sweep neither reads nor restores them), written only by steps and
/// assignments, and decides which of them still need `mut`.
fn unread_writes(f: &Func, a: &mut Analysis) {
    let mut candidates: Vec<bool> = (0..f.vars.len())
        .map(|i| {
            let v = &f.vars[i];
            a.live[i]
                && !(a.needed[i] || a.recomputed[i] || a.scoped[i])
                && !(a.declared[i] || a.hoisted[i] || a.restored[i])
                && !v.shape.is_array()
                && VarId(i) != f.output
                && !f.is_param(VarId(i))
        })
        .collect();
    walk(&f.body, &mut |s| match s {
        Stmt::Step(_) | Stmt::Assign(_) => {}
        Stmt::Loop(Loop {
            kind: LoopKind::For {
                binding: Some(v), ..
            },
            ..
        }) => candidates[v.0] = false,
        s => {
            if let Some(v) = written(s) {
                candidates[v.0] = false;
            }
        }
    });
    a.unread = unread::unread_writes(f, &a.live, &candidates);
    if a.unread.is_empty() {
        return;
    }
    let mut firsts = Vec::new();
    walk(&f.body, &mut |s| match s {
        Stmt::Step(st) if st.write == Write::Def && a.unread.contains(&st.id) => {
            firsts.push((st.dst, st.id))
        }
        Stmt::Assign(p) if p.write == Write::Def && a.unread.contains(&p.id) => {
            firsts.push((p.dst, p.id))
        }
        _ => {}
    });
    for (v, first) in firsts {
        let kept = most_writes(&f.body, v, first, a);
        a.written_once[v.0] = kept <= 1;
        a.undeclared[v.0] = kept == 0;
    }
}

/// How many times, at most, one run of the variable's declaration is
/// followed by writes of it the forward sweep keeps (not unread); 2 stands
/// for "more than one". The larger of two branches, a loop's writes twice
/// unless the loop holds the declaration. Exits are ignored, which can only
/// count more.
fn most_writes(b: &Block, v: VarId, first: StmtId, a: &Analysis) -> usize {
    let mut n = 0;
    for s in &b.stmts {
        n += match s {
            Stmt::Step(st) if st.dst == v && a.live[v.0] && !a.unread.contains(&st.id) => 1,
            Stmt::Assign(p) if p.dst == v && a.live[v.0] && !a.unread.contains(&p.id) => 1,
            Stmt::If(i) => most_writes(&i.then, v, first, a).max(most_writes(&i.els, v, first, a)),
            Stmt::Loop(l) => {
                let mut holds = false;
                walk(&l.body, &mut |s| holds |= write_key(s) == first);
                let body = most_writes(&l.body, v, first, a);
                if holds || body == 0 {
                    body
                } else {
                    2
                }
            }
            _ => 0,
        };
    }
    n.min(2)
}

/// The primal values the reverse of `s` reads (operands of its partials,
/// indices of its adjoint targets, arguments of a pullback), and whether it
/// reads the value it wrote itself.
fn reverse_reads(s: &Stmt, adj: &[bool]) -> (Vec<VarId>, bool) {
    let mut reads = Vec::new();
    let mut out = false;
    let elem_index = |a: &Operand, reads: &mut Vec<VarId>| {
        if let Operand::Elem(b, j) = a {
            if adj[b.0] {
                reads.extend(j.reads.iter().copied());
            }
        }
    };
    match s {
        Stmt::Step(st) if adj[st.dst.0] => {
            let uses = partial_uses(st.prim);
            for (a, pu) in st.args.iter().zip(&uses) {
                let contributes = pu.nonzero && a.var().is_some_and(|v| adj[v.0]);
                if !contributes {
                    continue;
                }
                elem_index(a, &mut reads);
                for &j in &pu.args {
                    reads.extend(st.args[j].reads());
                }
                out |= pu.out;
            }
        }
        Stmt::Store(s) if adj[s.arr.0] => {
            reads.extend(s.index.reads.iter().copied());
            elem_index(&s.value, &mut reads);
        }
        Stmt::Push(p) if adj[p.arr.0] => elem_index(&p.value, &mut reads),
        Stmt::Reduce(r) if adj[r.dst.0] && adj[r.arr.0] && r.op.reads_array() => {
            reads.push(r.arr);
        }
        // The pullback runs the callee again on the same arguments.
        Stmt::Call(c) if adj[c.dst.0] => {
            for a in &c.args {
                reads.extend(a.value.reads.iter().copied());
            }
        }
        _ => {}
    }
    (reads, out)
}

/// Finds the `for` loops whose reverse can run their range backwards: no
/// `break` or `return` leaves them, and every variable their range reads is
/// written once outside all loops, or is the binding of an enclosing loop that
/// the reverse sweep rebuilds too. `bound` holds those enclosing bindings.
fn reversible_loops(f: &Func, b: &Block, bound: &mut Vec<VarId>, out: &mut HashSet<SiteId>) {
    let mut sites = ExitSites::default();
    let _ = exits(b, &mut sites);
    reversible_loops_in(f, b, &sites.breaking, bound, out);
}

fn reversible_loops_in(
    f: &Func,
    b: &Block,
    breaking: &HashSet<SiteId>,
    bound: &mut Vec<VarId>,
    out: &mut HashSet<SiteId>,
) {
    for s in &b.stmts {
        match s {
            Stmt::If(i) => {
                reversible_loops_in(f, &i.then, breaking, bound, out);
                reversible_loops_in(f, &i.els, breaking, bound, out);
            }
            Stmt::Loop(l) => {
                let mut pushed = false;
                if let LoopKind::For {
                    reversed: Some(r),
                    binding,
                    replay,
                    ..
                } = &l.kind
                {
                    let fixed = |v: &VarId| {
                        bound.contains(v)
                            || (!f.var(*v).reassigned && f.var(*v).decl.loop_depth == 0)
                    };
                    if !breaking.contains(&l.site) && r.reads.iter().all(fixed) {
                        out.insert(l.site);
                    }
                    if let (Some(v), true) = (binding, out.contains(&l.site) || replay.is_some()) {
                        bound.push(*v);
                        pushed = true;
                    }
                }
                reversible_loops_in(f, &l.body, breaking, bound, out);
                if pushed {
                    bound.pop();
                }
            }
            _ => {}
        }
    }
}

/// Marks the loop-body values the reverse sweep can compute again rather than
/// record: written once, by a step reached on every run of its block (no
/// earlier statement of the block can leave it, so recomputing cannot fail
/// where the forward sweep did not run), from inputs that cannot have changed
/// since: parameters and top-level values never reassigned, rebuilt loop
/// bindings, and other recomputed values. `t = 1.0 - x[i]` costs a subtraction
/// backwards instead of a push and a pop.
///
/// Returns what [`leaves`] would of `b`, outside a loop and inside one,
/// gathered on the way: asking `escapes` of every statement would walk each
/// nested construct again at every level of nesting.
fn recomputable(
    f: &Func,
    b: &Block,
    replayed: &[bool],
    deferred: &[bool],
    out: &mut Vec<bool>,
) -> Leaves {
    let mut left = false;
    let mut leaves = Leaves::default();
    for s in &b.stmts {
        // Whether `s` may leave `b` early (`escapes`), and what it leaves.
        let (escapes, inner) = match s {
            Stmt::If(i) => {
                let then = recomputable(f, &i.then, replayed, deferred, out);
                let els = recomputable(f, &i.els, replayed, deferred, out);
                let inner = Leaves {
                    block: then.block || els.block,
                    loop_body: then.loop_body || els.loop_body,
                };
                (inner.block, inner)
            }
            Stmt::Loop(l) => {
                let body = recomputable(f, &l.body, replayed, deferred, out);
                // Inside a loop, only `return` leaves it.
                let inner = Leaves {
                    block: body.loop_body,
                    loop_body: body.loop_body,
                };
                (inner.loop_body, inner)
            }
            Stmt::Exit(e) => {
                let ret = matches!(e, Exit::Return);
                (
                    true,
                    Leaves {
                        block: true,
                        loop_body: ret,
                    },
                )
            }
            // A passive value made afresh each iteration from values that
            // cannot have changed (`let i = 4 * j;`): an index the reverse
            // sweep computes again rather than records.
            Stmt::Assign(pa) => {
                let v = f.var(pa.dst);
                if !left
                    && pa.op.is_none()
                    && !deferred[pa.dst.0]
                    && pa.write == Write::Def
                    && !v.reassigned
                    && v.decl.loop_depth > 0
                    && !v.shape.is_array()
                    && pa
                        .value
                        .reads
                        .iter()
                        .all(|u| unchanged(f, replayed, out, *u))
                    && pure(&pa.value.tokens)
                {
                    out[pa.dst.0] = true;
                }
                (false, Leaves::default())
            }
            Stmt::Step(st) => {
                let v = f.var(st.dst);
                let inputs = st.args.iter().all(|a| {
                    a.reads()
                        .into_iter()
                        .all(|u| unchanged(f, replayed, out, u))
                });
                if !left
                    && !deferred[st.dst.0]
                    && st.write == Write::Def
                    && !v.reassigned
                    && v.decl.loop_depth > 0
                    && !v.shape.is_array()
                    && inputs
                {
                    out[st.dst.0] = true;
                }
                (false, Leaves::default())
            }
            _ => (false, Leaves::default()),
        };
        left |= escapes;
        leaves.block |= inner.block;
        leaves.loop_body |= inner.loop_body;
    }
    leaves
}

/// Whether the reverse sweep reads `u` with the value the forward sweep read:
/// it can compute it again (`recomputable`), or it is a parameter, a value
/// defined before any loop and never reassigned, or a replayed loop index.
fn unchanged(f: &Func, replayed: &[bool], recomputable: &[bool], u: VarId) -> bool {
    let var = f.var(u);
    let param = f.is_param(u);
    recomputable[u.0]
        || !var.reassigned && (param || replayed[u.0] || var.decl.loop_depth == 0 && !f.has_return)
}

/// The `if`s inside loops whose condition can be evaluated again by the
/// reverse sweep: every value it reads is a parameter, a value defined before
/// any loop and never reassigned, a replayed loop index, or a value the
/// reverse sweep can compute again (`candidates`); and it calls nothing that
/// could have an effect or give another answer the second time.
fn conditions_to_recompute(f: &Func, replayed: &[bool], candidates: &[bool]) -> HashSet<SiteId> {
    let fixed = |u: &VarId| unchanged(f, replayed, candidates, *u);
    let mut sites = HashSet::new();
    walk(&f.body, &mut |s| {
        if let Stmt::If(i) = s {
            if i.ctx.loop_depth > 0 && i.cond.reads.iter().all(fixed) && pure(&i.cond.tokens) {
                sites.insert(i.site);
            }
        }
    });
    sites
}

/// Code that calls no function, macro or closure, and no method but the float
/// methods and `len`: evaluating it again gives the same answer.
fn pure(tokens: &TokenStream) -> bool {
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let before = |k: usize, back: usize| k.checked_sub(back).map(|j| &trees[j]);
    let punct =
        |t: Option<&TokenTree>, c: char| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == c);
    trees.iter().enumerate().all(|(k, t)| match t {
        TokenTree::Group(g) => {
            let call = g.delimiter() == proc_macro2::Delimiter::Parenthesis;
            let allowed = match (before(k, 2), before(k, 1)) {
                // `v.sin()`, `v.len()`: a method call.
                (Some(dot), Some(TokenTree::Ident(name))) if call && punct(Some(dot), '.') => {
                    let name = name.to_string();
                    name == "len" || crate::rules::Prim::from_method(&name).is_some()
                }
                // `f(..)`: a function call; `m!(..)`: a macro.
                (_, Some(TokenTree::Ident(_))) if call => false,
                (Some(TokenTree::Ident(_)), Some(bang)) if punct(Some(bang), '!') => false,
                _ => true,
            };
            allowed && pure(&g.stream())
        }
        // A lone `|` opens a closure (or is a bitwise or: treated alike).
        TokenTree::Punct(p) if p.as_char() == '|' => {
            punct(trees.get(k + 1), '|') || punct(before(k, 1), '|')
        }
        _ => true,
    })
}

/// Whether a block contains an exit that leaves it: `block` as [`leaves`]
/// answers for a block outside any loop, `loop_body` for a loop's body (where
/// only `return` leaves).
#[derive(Clone, Copy, Default)]
struct Leaves {
    block: bool,
    loop_body: bool,
}

/// The recorded writes `v += c` / `v -= c` with `c` an integer literal (so `v`
/// is an integer, and the update exact), of variables whose every other
/// write is an assignment recorded too, or its first definition outside
/// loops: the reverse sweep then reaches each such write with `v` as the write
/// left it, and `v -= c` puts back what `v` held before, as a tape would.
fn invertible(f: &Func, a: &Analysis) -> HashMap<StmtId, &'static str> {
    let mut others_recorded = vec![true; f.vars.len()];
    let mut candidates = Vec::new();
    walk(&f.body, &mut |s| match s {
        Stmt::Assign(p) => {
            let first = p.write == Write::Def && f.var(p.dst).decl.loop_depth == 0;
            if a.saves_at(f, p.dst, p.write, p.id) {
                if let Some(inverse) = int_increment(p) {
                    candidates.push((p.id, p.dst, inverse));
                }
            } else if !first {
                others_recorded[p.dst.0] = false;
            }
        }
        Stmt::Loop(Loop {
            kind: LoopKind::For {
                binding: Some(v), ..
            },
            ..
        }) => others_recorded[v.0] = false,
        _ => {
            if let Some(v) = written(s) {
                others_recorded[v.0] = false;
            }
        }
    });
    candidates
        .into_iter()
        .filter(|(_, v, _)| others_recorded[v.0])
        .map(|(id, _, inverse)| (id, inverse))
        .collect()
}

/// For `v += c` / `v -= c` with `c` an integer literal: the inverse operator.
pub fn int_increment(p: &PassiveAssign) -> Option<&'static str> {
    let inverse = match p.op.as_ref()?.to_string().as_str() {
        "+=" => "-=",
        "-=" => "+=",
        _ => return None,
    };
    let mut tokens = p.value.tokens.clone().into_iter();
    let (Some(proc_macro2::TokenTree::Literal(l)), None) = (tokens.next(), tokens.next()) else {
        return None;
    };
    let text = l.to_string();
    let suffix = text.trim_start_matches(|c: char| c.is_ascii_digit() || c == '_');
    let integer = text.starts_with(|c: char| c.is_ascii_digit())
        && (suffix.is_empty() || crate::signature::INTEGERS.contains(&suffix));
    integer.then_some(inverse)
}

/// The variable a simple statement writes.
fn written(s: &Stmt) -> Option<VarId> {
    match s {
        Stmt::Step(st) => Some(st.dst),
        Stmt::Assign(a) => Some(a.dst),
        Stmt::Reduce(r) => Some(r.dst),
        Stmt::Call(c) => Some(c.dst),
        _ => None,
    }
}

/// Identifies a write statement (its address, stable while `f` is borrowed).
pub fn write_key(s: &Stmt) -> StmtId {
    match s {
        Stmt::Step(st) => st.id,
        Stmt::Assign(a) => a.id,
        Stmt::Reduce(r) => r.id,
        Stmt::Call(c) => c.id,
        Stmt::Store(st) => st.id,
        Stmt::ArrayDef(d) => d.id,
        Stmt::Loop(l) => l.id,
        // Writes nothing that is recorded: an id no statement has.
        _ => StmtId(usize::MAX),
    }
}

/// Overwrites whose old value nothing reads. Within one block, when `v` is
/// written at `p` and overwritten at `w` with nothing in between reading `v`
/// backwards, `p`'s own reverse not reading its output, and `w` not reading
/// the old `v` itself, the value `w` destroys is never needed: `s *= x;
/// s += 1.0;` records `s` once per iteration, not twice. Returns what the
/// block does, nested statements included, for the construct holding it.
fn unneeded_saves(b: &Block, adj: &[bool], out: &mut HashSet<StmtId>) -> Effects {
    let mut last: HashMap<VarId, (bool, bool)> = HashMap::new(); // var -> (prev reads out, read since)
    let mut effects = Effects::default();
    for s in &b.stmts {
        let mut inner = match s {
            Stmt::If(i) => {
                unneeded_saves(&i.then, adj, out).merge(unneeded_saves(&i.els, adj, out))
            }
            Stmt::Loop(l) => unneeded_saves(&l.body, adj, out),
            _ => {
                let (reads, reads_out) = reverse_reads(s, adj);
                for v in &reads {
                    if let Some(entry) = last.get_mut(v) {
                        entry.1 = true;
                    }
                }
                if let Some(v) = written(s) {
                    if let Some(&(prev_out, read_since)) = last.get(&v) {
                        if !prev_out && !read_since && !reads.contains(&v) {
                            out.insert(write_key(s));
                        }
                    }
                    last.insert(v, (reads_out, false));
                    if reads_out {
                        effects.reads.insert(v);
                    }
                    effects.writes.entry(v).or_default().push(write_key(s));
                }
                effects.reads.extend(reads);
                continue;
            }
        };
        let kept = unread_inside(&mut inner, &last, out);
        last.clear();
        last.extend(kept);
        effects = effects.merge(inner);
    }
    effects
}

/// What a block does backwards, nested statements included: the variables
/// the reverse sweep reads there, and the writes of each variable whose old
/// value is not yet known to be unread. Summed from the innermost blocks
/// out, smaller into larger, so each statement is looked at once.
#[derive(Default)]
struct Effects {
    reads: HashSet<VarId>,
    writes: HashMap<VarId, Vec<StmtId>>,
}

impl Effects {
    fn merge(mut self, mut other: Effects) -> Effects {
        if self.reads.len() < other.reads.len() {
            std::mem::swap(&mut self.reads, &mut other.reads);
        }
        self.reads.extend(other.reads);
        if self.writes.len() < other.writes.len() {
            std::mem::swap(&mut self.writes, &mut other.writes);
        }
        for (v, mut keys) in other.writes {
            let mine = self.writes.entry(v).or_default();
            if mine.len() < keys.len() {
                std::mem::swap(mine, &mut keys);
            }
            mine.extend(keys);
        }
        self
    }
}

/// A loop or an `if` (`inner`, what its blocks do) seen as one write of each
/// variable it writes: where nothing in it reads `v` backwards and, in the
/// enclosing block, `v` was written before (`last`, as in
/// [`unneeded_saves`]) with nothing since reading it backwards, what the
/// construct destroys is never read, and its writes of `v` record nothing:
/// `z = b[j]; for k in .. { z += w[k] * x[k]; } a = z.tanh();` records `z`
/// once per `j` (at `z = b[j]`), not once per `k`. Returns, for the block,
/// the variables whose writes count as one whose old value is not read.
fn unread_inside(
    inner: &mut Effects,
    last: &HashMap<VarId, (bool, bool)>,
    out: &mut HashSet<StmtId>,
) -> Vec<(VarId, (bool, bool))> {
    let free = |v: &VarId, reads: &HashSet<VarId>| {
        !reads.contains(v) && matches!(last.get(v), Some(&(false, false)))
    };
    let found: Vec<VarId> = if last.len() <= inner.writes.len() {
        last.keys()
            .filter(|v| inner.writes.contains_key(v) && free(v, &inner.reads))
            .copied()
            .collect()
    } else {
        inner
            .writes
            .keys()
            .filter(|v| free(v, &inner.reads))
            .copied()
            .collect()
    };
    // Once found, a write needs no second look from an enclosing construct.
    for v in &found {
        out.extend(
            inner
                .writes
                .get_mut(v)
                .map(std::mem::take)
                .unwrap_or_default(),
        );
    }
    found.into_iter().map(|v| (v, (false, false))).collect()
}

/// Whether the reverse sweep may do anything for a block: pass on an
/// adjoint, restore or compute again a value it reads, or call a pullback.
/// Errs towards `true`: a branch replayed whose condition the forward sweep
/// did not compute would not compile.
fn has_reverse(b: &Block, adj: &[bool], needed: &[bool], recomputed: &[bool]) -> bool {
    let matters = |v: &VarId| adj[v.0] || needed[v.0] || recomputed[v.0];
    let mut any = false;
    walk(b, &mut |s| {
        any |= match s {
            Stmt::Call(_) | Stmt::Exit(_) => true,
            Stmt::Store(st) => matters(&st.arr),
            Stmt::Push(p) => matters(&p.arr),
            Stmt::ArrayDef(d) => matters(&d.dst),
            Stmt::Loop(Loop {
                kind: LoopKind::For {
                    binding: Some(v), ..
                },
                ..
            }) => matters(v),
            s => written(s).is_some_and(|v| matters(&v)),
        };
    });
    any
}

/// Every statement, nested ones included, in program order.
fn statements(f: &Func) -> Vec<&Stmt> {
    let mut all = Vec::new();
    walk(&f.body, &mut |s| all.push(s));
    all
}

fn fixpoint(mut step: impl FnMut() -> bool) {
    while step() {}
}

/// Variables the forward sweep must compute: read by control flow that is
/// emitted, by passive statements, by the reverse sweep, or returned.
///
/// An `if` or a loop none of whose statements does anything in either sweep
/// is not emitted: what only its condition or range reads is not live
/// (after `let b = g(); if b < 1.0 { for _ in 0..n {} }`, `b` would be
/// computed in vain), unless it reads a live value written more than once
/// (`evaluated`).
/// Whether a construct does anything depends on what is live, so both
/// settle together.
fn liveness(f: &Func, needed: &[bool], scoped: &[bool], in_reverse: &[bool]) -> Vec<bool> {
    let mut live: Vec<bool> = needed.iter().zip(scoped).map(|(a, b)| *a || *b).collect();
    live[f.output.0] |= !f.value_unused;
    let all = statements(f);
    fixpoint(|| {
        let mut changed = false;
        let mut mark = |live: &mut Vec<bool>, vs: &[VarId]| {
            for v in vs {
                changed |= !live[v.0];
                live[v.0] = true;
            }
        };
        let mut control: Vec<&[VarId]> = Vec::new();
        effective(&f.body, f, &live, in_reverse, &mut control);
        for reads in control {
            mark(&mut live, reads);
        }
        for s in all.iter().rev() {
            let (dst, reads): (VarId, Vec<VarId>) = match s {
                Stmt::Step(st) => (st.dst, st.args.iter().flat_map(Operand::reads).collect()),
                Stmt::Assign(a) => (a.dst, a.value.reads.clone()),
                Stmt::Store(s) => (
                    s.arr,
                    s.value
                        .reads()
                        .into_iter()
                        .chain(s.index.reads.iter().copied())
                        .collect(),
                ),
                Stmt::Push(p) => (p.arr, p.value.reads()),
                Stmt::ArrayDef(d) => (d.dst, d.init.reads.clone()),
                Stmt::Reduce(r) => (r.dst, vec![r.arr]),
                Stmt::Call(c) => (
                    c.dst,
                    c.args.iter().flat_map(|a| a.value.reads.clone()).collect(),
                ),
                _ => continue,
            };
            if live[dst.0] {
                mark(&mut live, &reads);
            }
        }
        changed
    });
    live
}

/// Whether a block may do anything in the forward or the reverse sweep: a
/// write of a live value or of one the reverse sweep writes (an adjoint, or
/// a value it computes again, inside the replayed branch), passive code kept
/// as written, an exit, or an infinite loop. Errs towards `true`: a construct
/// emitted whose condition was not computed would not compile. Collects in
/// `reads` what the conditions and ranges of the constructs it finds
/// effective read, and what passive code reads: one walk, from the innermost
/// constructs out.
fn effective<'a>(
    b: &'a Block,
    f: &Func,
    live: &[bool],
    in_reverse: &[bool],
    reads: &mut Vec<&'a [VarId]>,
) -> bool {
    let matters = |v: &VarId| live[v.0] || in_reverse[v.0];
    let mut any = false;
    for s in &b.stmts {
        any |= match s {
            Stmt::Step(st) => matters(&st.dst),
            Stmt::Assign(a) => matters(&a.dst),
            Stmt::Store(st) => matters(&st.arr),
            Stmt::Push(p) => matters(&p.arr),
            Stmt::ArrayDef(d) => matters(&d.dst),
            Stmt::Reduce(r) => matters(&r.dst),
            Stmt::Call(c) => matters(&c.dst),
            Stmt::Declare(v) => matters(v),
            Stmt::Verbatim(_, r) => {
                reads.push(r);
                true
            }
            Stmt::Exit(_) => true,
            Stmt::If(i) => {
                let then = effective(&i.then, f, live, in_reverse, reads);
                let els = effective(&i.els, f, live, in_reverse, reads);
                let any = then || els || evaluated(f, &i.cond.reads, live);
                if any {
                    reads.push(&i.cond.reads);
                }
                any
            }
            Stmt::Loop(l) => {
                let body = effective(&l.body, f, live, in_reverse, reads);
                let header = match &l.kind {
                    LoopKind::For { iter, .. } => Some(&iter.reads),
                    LoopKind::While { cond } => Some(&cond.reads),
                    LoopKind::Infinite => None,
                };
                let runs = body || header.is_none_or(|r| evaluated(f, r, live));
                if let Some(r) = header.filter(|_| runs) {
                    reads.push(r);
                }
                runs
            }
        };
    }
    any
}

/// Whether the condition or range of a construct that does nothing is still
/// evaluated in its place (`let _ = u > 1.0;`): when it reads a live value
/// written more than once, it may be the one read of a value the function
/// then overwrites, which unread would be an unused assignment.
pub(crate) fn evaluated(f: &Func, reads: &[VarId], live: &[bool]) -> bool {
    reads.iter().any(|v| live[v.0] && f.var(*v).reassigned)
}

impl Analysis {
    /// The site of a statement that may leave its enclosing block early.
    pub fn escapes(&self, s: &Stmt) -> Option<SiteId> {
        let site = match s {
            Stmt::If(i) => i.site,
            Stmt::Loop(l) => l.site,
            _ => return None,
        };
        self.escaping.contains(&site).then_some(site)
    }
}

/// The `if`s and loops that exits leave, found in one walk from the
/// innermost constructs out (asking each construct in turn walked the nested
/// ones again at every level).
#[derive(Default)]
struct ExitSites {
    /// `if`s and loops that may leave their enclosing block early.
    escaping: HashSet<SiteId>,
    /// Loops whose body leaves them: a `break`, or a `return` anywhere.
    breaking: HashSet<SiteId>,
}

/// What a block holds, seen from outside it.
#[derive(Clone, Copy, Default)]
struct Exits {
    /// Any `break`, `continue` or `return` outside nested loops, or a
    /// `return` anywhere: it leaves the block if the block is not a loop body.
    any: bool,
    /// A `break` outside nested loops, or a `return` anywhere: it leaves the
    /// loop whose body the block is.
    breaks: bool,
    /// A `return` anywhere.
    returns: bool,
}

fn exits(b: &Block, sites: &mut ExitSites) -> Exits {
    let mut all = Exits::default();
    for s in &b.stmts {
        let e = match s {
            Stmt::Exit(e) => Exits {
                any: true,
                breaks: *e != Exit::Continue,
                returns: *e == Exit::Return,
            },
            Stmt::If(i) => {
                let (t, e) = (exits(&i.then, sites), exits(&i.els, sites));
                if t.any || e.any {
                    sites.escaping.insert(i.site);
                }
                Exits {
                    any: t.any || e.any,
                    breaks: t.breaks || e.breaks,
                    returns: t.returns || e.returns,
                }
            }
            Stmt::Loop(l) => {
                let body = exits(&l.body, sites);
                if body.breaks {
                    sites.breaking.insert(l.site);
                }
                // A loop's own `break`s and `continue`s stay inside it.
                if body.returns {
                    sites.escaping.insert(l.site);
                }
                Exits {
                    any: body.returns,
                    breaks: body.returns,
                    returns: body.returns,
                }
            }
            _ => Exits::default(),
        };
        all.any |= e.any;
        all.breaks |= e.breaks;
        all.returns |= e.returns;
    }
    all
}

pub fn stmt_ctx(s: &Stmt) -> Ctx {
    match s {
        Stmt::If(i) => i.ctx,
        Stmt::Loop(l) => l.ctx,
        _ => Ctx::default(),
    }
}

/// Whether a passive value is one variable alone (`pair.1`'s `pair_1`,
/// `acc`).
fn one_name(c: &Passive) -> bool {
    let mut t = c.tokens.clone().into_iter();
    matches!(
        (t.next(), t.next()),
        (Some(proc_macro2::TokenTree::Ident(_)), None)
    )
}

/// Whether `c` starts with a float method called on `v` (`y.cbrt().tanh()`):
/// one that integers do not have, so `v` is a float.
fn float_method_of(c: &Passive, v: &proc_macro2::Ident) -> bool {
    use proc_macro2::TokenTree::{Ident, Punct};
    let mut t = c.tokens.clone().into_iter();
    match (t.next(), t.next(), t.next()) {
        (Some(Ident(recv)), Some(Punct(dot)), Some(Ident(m)))
            if recv == *v && dot.as_char() == '.' =>
        {
            let m = m.to_string();
            !["abs", "signum", "max", "min", "clamp"].contains(&m.as_str())
                && crate::rules::Prim::from_method(&m).is_some()
        }
        _ => false,
    }
}
