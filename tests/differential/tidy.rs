//! Keeps a program valid Rust that compiles without warnings, whatever the
//! generator or the shrinker did to it:
//!
//! - `resolve` binds every name to its declaration and checks types, scopes,
//!   and that `break`/`continue` sit in loops;
//! - a backward liveness pass deletes writes whose value is never read
//!   (`unused_assignments`), unused `let`s (`unused_variables`), and turns a
//!   `let` whose initial value is always overwritten into `let x;`;
//! - statements after one that always leaves the block are cut
//!   (`unreachable_code`);
//! - a forward pass over "maybe initialised" / "definitely initialised" sets
//!   decides every `mut` exactly as rustc's `unused_mut` does and rejects
//!   reads of possibly uninitialised variables;
//! - unused loop variables print as `_`, unused parameters as `_x`.
//!
//! The same rules as rustc's, on a structured language, so the test crate can
//! be built with `#![deny(warnings)]`: a warning there is then the macro's.

use super::ast::*;
use std::collections::BTreeSet;

type Set = BTreeSet<usize>;

/// One declaration (ids start at 1).
#[derive(Clone, Debug)]
pub struct Decl {
    pub name: String,
    pub ty: Ty,
}

pub struct Info {
    pub decls: Vec<Decl>,
    /// Number of reads of each declaration.
    pub reads: Vec<usize>,
    /// Number of writes after the declaration (assignments).
    pub writes: Vec<usize>,
}

// ---------------------------------------------------------------------------
// Resolution.
// ---------------------------------------------------------------------------

struct Resolver {
    decls: Vec<Decl>,
    reads: Vec<usize>,
    writes: Vec<usize>,
    scopes: Vec<Vec<(String, usize)>>,
    loops: usize,
    /// Inside a block expression: the first declaration id it owns.
    fblock_floor: Option<usize>,
    /// Nesting of closures, which cannot `return` from the function.
    closures: usize,
}

impl Resolver {
    fn declare(&mut self, n: &mut Name, ty: Ty) {
        self.decls.push(Decl {
            name: n.s.clone(),
            ty,
        });
        self.reads.push(0);
        self.writes.push(0);
        n.id = self.decls.len() - 1;
        if n.s != "_" {
            self.scopes.last_mut().unwrap().push((n.s.clone(), n.id));
        }
    }

    fn lookup(&self, n: &Name, ty: Ty) -> Result<usize, String> {
        // `cfg.scale`: a read of `cfg`, as the field's type.
        if let Some((owner, field)) = split_field(&n.s) {
            let Some(&(_, fty)) =
                fields_of(owner).and_then(|f| f.iter().find(|(f, _)| *f == field))
            else {
                return Err(format!("`{}` is not a field", n.s));
            };
            if !compatible(fty, ty) {
                return Err(format!("`{}` has the wrong type", n.s));
            }
            return self.lookup(&Name::new(owner), Ty::D);
        }
        for scope in self.scopes.iter().rev() {
            if let Some((_, id)) = scope.iter().rev().find(|(s, _)| *s == n.s) {
                if !compatible(self.decls[*id].ty, ty) {
                    return Err(format!("`{}` has the wrong type", n.s));
                }
                return Ok(*id);
            }
        }
        Err(format!("`{}` is not declared", n.s))
    }

    /// An array, for a walk, a reduction or an argument.
    fn read_arr(&mut self, n: &mut Name) -> Result<(), String> {
        self.read(n, Ty::A)
    }

    fn read(&mut self, n: &mut Name, ty: Ty) -> Result<(), String> {
        n.id = self.lookup(n, ty)?;
        self.reads[n.id] += 1;
        Ok(())
    }

    fn scoped<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        self.scopes.push(Vec::new());
        let r = f(self);
        self.scopes.pop();
        r
    }

    /// A closure over `src`'s items (after `acc`, for a fold) and its body.
    fn closure(
        &mut self,
        src: &mut Source,
        acc: Option<&mut Name>,
        body: &mut FBlock,
    ) -> Result<(), String> {
        for a in src.arrays() {
            self.read_arr(a)?;
        }
        self.closures += 1;
        let r = self.scoped(|r| {
            let mut bound = src.bound();
            if let Some(acc) = acc {
                bound.insert(0, (acc, Ty::F));
            }
            let names: Vec<String> = bound.iter().map(|(n, _)| n.s.clone()).collect();
            if (1..names.len()).any(|i| names[i] != "_" && names[..i].contains(&names[i])) {
                return Err("a closure binds a name twice".into());
            }
            for (n, ty) in bound {
                r.declare(n, ty);
            }
            r.fblock(body)
        });
        self.closures -= 1;
        r
    }

    /// `|v| *v > rhs` over `arr`.
    fn pred(&mut self, pr: &mut Pred) -> Result<(), String> {
        self.read_arr(&mut pr.arr)?;
        self.closures += 1;
        let r = self.scoped(|r| {
            r.declare(&mut pr.elem, Ty::R);
            r.reads[pr.elem.id] += 1;
            r.fexpr(&mut pr.rhs)
        });
        self.closures -= 1;
        r
    }

    fn stmts(&mut self, list: &mut [Stmt]) -> Result<(), String> {
        self.scoped(|r| list.iter_mut().try_for_each(|s| r.stmt(s)))
    }

    fn stmt(&mut self, s: &mut Stmt) -> Result<(), String> {
        match s {
            Stmt::Let { name, ty, init, .. } => {
                match init {
                    Some(Val::F(e)) if *ty == Ty::F => self.fexpr(e)?,
                    Some(Val::I(e)) if *ty == Ty::I => self.iexpr(e)?,
                    None => {}
                    _ => return Err("`let` initialiser of the wrong type".into()),
                }
                self.declare(name, *ty);
            }
            Stmt::Assign { name, op, val } => {
                match val {
                    Val::F(e) => {
                        self.fexpr(e)?;
                        name.id = self.lookup(name, Ty::F)?;
                    }
                    Val::I(e) => {
                        self.iexpr(e)?;
                        name.id = self.lookup(name, Ty::I)?;
                        if !matches!(op, AOp::Set | AOp::Add | AOp::Mul) {
                            return Err("integer subtraction or division".into());
                        }
                    }
                }
                if name.s.contains('.') {
                    return Err("a field is written".into());
                }
                if let Some(floor) = self.fblock_floor {
                    if name.id < floor {
                        return Err("a block expression writes an outer variable".into());
                    }
                }
                self.writes[name.id] += 1;
                if *op != AOp::Set {
                    self.reads[name.id] += 1;
                }
            }
            Stmt::If { cond, then, els } => {
                self.cond(cond)?;
                if let Cond::Some(sp) = cond {
                    // `m` is seen by the `then` block (and a guard) alone.
                    let ty = sp.ty();
                    self.scoped(|r| -> Result<(), String> {
                        r.declare(&mut sp.bind, ty);
                        if sp.guard.is_some() {
                            r.reads[sp.bind.id] += 1;
                        }
                        r.stmts(then)
                    })?;
                } else {
                    self.stmts(then)?;
                }
                if let Some(e) = els {
                    self.stmts(e)?;
                }
            }
            Stmt::For { var, range, body } => {
                self.iexpr(&mut range.lo)?;
                self.iexpr(&mut range.hi)?;
                if range.step == Some(0) {
                    return Err("step_by(0)".into());
                }
                self.loops += 1;
                let r = self.scoped(|r| {
                    r.declare(var, Ty::I);
                    r.stmts(body)
                });
                self.loops -= 1;
                r?;
            }
            Stmt::While {
                guard, cond, body, ..
            } => {
                self.declare(guard, Ty::I);
                self.reads[guard.id] += 2;
                self.writes[guard.id] += 1;
                self.cond(cond)?;
                self.loops += 1;
                let r = self.stmts(body);
                self.loops -= 1;
                r?;
            }
            Stmt::Loop { guard, body, .. } => {
                self.declare(guard, Ty::I);
                self.reads[guard.id] += 2;
                self.writes[guard.id] += 1;
                self.loops += 1;
                let r = self.stmts(body);
                self.loops -= 1;
                r?;
            }
            Stmt::Block(b) => self.stmts(b)?,
            Stmt::Break | Stmt::Continue => {
                if self.loops == 0 || self.fblock_floor.is_some() {
                    return Err("`break`/`continue` outside a loop".into());
                }
            }
            Stmt::Return(e) => {
                if self.closures > 0 {
                    return Err("`return` in a closure".into());
                }
                self.fexpr(e)?
            }
            Stmt::LetElse { pat, ret } => {
                if self.closures > 0 || self.fblock_floor.is_some() {
                    return Err("`let .. else` in an expression".into());
                }
                if pat.len {
                    self.read_arr(&mut pat.of)?;
                } else {
                    self.read(&mut pat.of, Ty::I)?;
                }
                self.fexpr(ret)?;
                let ty = pat.ty();
                self.declare(&mut pat.bind, ty);
            }
            Stmt::Views(v) => {
                if self.closures > 0 || self.fblock_floor.is_some() {
                    return Err("views in an expression".into());
                }
                let mut read = Ok(());
                v.visit_outer(&mut |n, ty| {
                    if read.is_ok() {
                        read = self.read(n, ty);
                    }
                });
                read?;
                self.declare(&mut v.out, Ty::F);
            }
            Stmt::LetPush { name, idx, val, .. } => {
                self.declare(name, Ty::A);
                let r = self.scoped(|r| {
                    r.declare(idx, Ty::U);
                    r.fexpr(val)
                });
                r?;
                if self.reads[name.id] > 0 {
                    return Err("a vector pushed to reads itself".into());
                }
            }
            Stmt::LetArr { name, init, .. } => {
                match init {
                    ArrInit::Collect { src, body, .. } => self.closure(src, None, body)?,
                    ArrInit::Copy { of, .. } => self.read_arr(of)?,
                    ArrInit::Zeros { of: Some(w), .. } => self.read_arr(w)?,
                    ArrInit::Zeros { .. } => {}
                    ArrInit::List { elems, .. } => {
                        elems.iter_mut().try_for_each(|e| self.fexpr(e))?
                    }
                }
                if init.len() == 0 {
                    return Err("an empty buffer".into());
                }
                self.declare(name, Ty::A);
            }
            Stmt::Store {
                name, index, val, ..
            } => {
                self.iexpr(index)?;
                self.fexpr(val)?;
                name.id = self.lookup(name, Ty::A)?;
                if name.s.contains('.') {
                    return Err("a field is written".into());
                }
                if self.fblock_floor.is_some() {
                    return Err("a block expression writes an array".into());
                }
                // Element writes are not reads: a buffer only written is dead.
                self.writes[name.id] += 1;
            }
            Stmt::CallOut { name, call, .. } => {
                self.fexpr(call)?;
                name.id = self.lookup(name, Ty::A)?;
                if name.s.contains('.') {
                    return Err("a field is written".into());
                }
                if self.fblock_floor.is_some() {
                    return Err("a block expression writes an array".into());
                }
                // Like a store: a buffer only written is dead.
                self.writes[name.id] += 1;
            }
            Stmt::ForArr {
                walk,
                idx,
                elem,
                arr,
                body,
                ..
            } => {
                if !matches!(walk, Walk::Upto(_)) {
                    self.read_arr(arr)?;
                }
                self.loops += 1;
                let r = self.scoped(|r| {
                    r.declare(idx, Ty::U);
                    let elem_ty = match walk {
                        Walk::RefPat { .. } => Ty::F,
                        _ => Ty::R,
                    };
                    r.declare(elem, elem_ty);
                    r.stmts(body)
                });
                self.loops -= 1;
                r?;
            }
        }
        Ok(())
    }

    fn fexpr(&mut self, e: &mut FExpr) -> Result<(), String> {
        match e {
            FExpr::Var(n) => self.read(n, Ty::F)?,
            FExpr::Lit(_) | FExpr::Pi => {}
            FExpr::Cast(i) => self.iexpr(i)?,
            FExpr::Neg(a) => self.fexpr(a)?,
            FExpr::Bin(_, a, b) => {
                self.fexpr(a)?;
                self.fexpr(b)?;
            }
            FExpr::Call(f, _, args) => {
                if args.len() != f.arity() {
                    return Err("wrong arity".into());
                }
                args.iter_mut().try_for_each(|a| self.fexpr(a))?;
            }
            FExpr::Powi(_, a, _) => self.fexpr(a)?,
            FExpr::If(c, t, e) => {
                self.cond(c)?;
                self.fblock(t)?;
                self.fblock(e)?;
            }
            FExpr::Block(b) => self.fblock(b)?,
            FExpr::Index(n, i) => {
                self.read_arr(n)?;
                self.iexpr(i)?;
            }
            FExpr::Deref(n) => self.read(n, Ty::R)?,
            FExpr::Len(n) | FExpr::Sum(n) | FExpr::Product(n) => self.read_arr(n)?,
            FExpr::Elem(n) => self.read(n, Ty::R)?,
            FExpr::Reduce(src, r) => match &mut **r {
                Reduce::Fold { init, acc, body } => {
                    self.fexpr(init)?;
                    self.closure(src, Some(acc), body)?
                }
                Reduce::Map { body, .. }
                | Reduce::Extreme { body, .. }
                | Reduce::By { body, .. } => self.closure(src, None, body)?,
            },
            FExpr::Count(pr) => self.pred(pr)?,
            FExpr::Apply(_, args) => {
                for a in args {
                    match a {
                        Arg::F(e) => self.fexpr(e)?,
                        Arg::A(n, _) => self.read_arr(n)?,
                        Arg::D(n) => self.read(n, Ty::D)?,
                    }
                }
            }
        }
        Ok(())
    }

    fn fblock(&mut self, b: &mut FBlock) -> Result<(), String> {
        let saved = self.fblock_floor;
        if saved.is_none() {
            self.fblock_floor = Some(self.decls.len());
        }
        let r = self.scoped(|r| {
            b.stmts.iter_mut().try_for_each(|s| r.stmt(s))?;
            r.fexpr(&mut b.tail)
        });
        self.fblock_floor = saved;
        r
    }

    fn iexpr(&mut self, e: &mut IExpr) -> Result<(), String> {
        match e {
            IExpr::Var(n) => self.read(n, Ty::I),
            IExpr::Lit(_) => Ok(()),
            IExpr::Add(a, b) => {
                self.iexpr(a)?;
                self.iexpr(b)
            }
            IExpr::Mul(a, _) | IExpr::Rem(a, _) => self.iexpr(a),
        }
    }

    fn cond(&mut self, c: &mut Cond) -> Result<(), String> {
        match c {
            Cond::F(_, a, b) => {
                self.fexpr(a)?;
                self.fexpr(b)
            }
            Cond::I(_, a, b) => {
                self.iexpr(a)?;
                self.iexpr(b)
            }
            Cond::And(a, b) | Cond::Or(a, b) => {
                self.cond(a)?;
                self.cond(b)
            }
            Cond::Not(a) => self.cond(a),
            Cond::Var(n) => self.read(n, Ty::B),
            Cond::Any(pr) => self.pred(pr),
            Cond::Some(sp) => {
                if sp.len {
                    self.read_arr(&mut sp.of)
                } else {
                    self.read(&mut sp.of, Ty::I)
                }
            }
        }
    }
}

/// Whether a declaration of type `have` can be read as a `want`: indices
/// are integers too.
fn compatible(have: Ty, want: Ty) -> bool {
    have == want || (have == Ty::U && want == Ty::I)
}

/// Binds names to declarations (filling every `Name::id`) and checks the
/// program is well formed.
pub fn resolve(p: &mut Program) -> Result<Info, String> {
    let mut r = Resolver {
        decls: vec![Decl {
            name: String::new(),
            ty: Ty::F,
        }],
        reads: vec![0],
        writes: vec![0],
        scopes: vec![Vec::new()],
        loops: 0,
        fblock_floor: None,
        closures: 0,
    };
    if let Some(me) = &mut p.receiver {
        r.declare(me, Ty::D);
    }
    let mut seen = Vec::new();
    for param in &mut p.params {
        if seen.contains(&param.name.s) {
            return Err("duplicate parameter".into());
        }
        seen.push(param.name.s.clone());
        r.declare(&mut param.name, param.ty.ty());
    }
    let floats: Vec<&str> = p
        .params
        .iter()
        .filter(|q| q.ty.floats())
        .map(|q| q.name.s.as_str())
        .collect();
    // A struct can be named too: `wrt(cfg, x)`, `wrt(self)`.
    let structs: Vec<&str> = p
        .params
        .iter()
        .filter(|q| matches!(q.ty, PTy::Cfg(_)))
        .map(|q| q.name.s.as_str())
        .chain(p.receiver.as_ref().map(|_| "self"))
        .collect();
    match &p.wrt {
        Some(w) => {
            let known = |n: &str| floats.contains(&n) || structs.contains(&n);
            if w.is_empty() || w.iter().any(|n| !known(n)) {
                return Err("bad wrt".into());
            }
        }
        None => {
            if floats.is_empty() {
                return Err("no float parameter".into());
            }
        }
    }
    r.scoped(|r| -> Result<(), String> {
        p.body.iter_mut().try_for_each(|s| r.stmt(s))?;
        if let Some(t) = &mut p.tail {
            r.fexpr(t)?;
        }
        Ok(())
    })?;
    Ok(Info {
        decls: r.decls,
        reads: r.reads,
        writes: r.writes,
    })
}

// ---------------------------------------------------------------------------
// Divergence.
// ---------------------------------------------------------------------------

pub fn diverges(s: &Stmt) -> bool {
    match s {
        Stmt::Break | Stmt::Continue | Stmt::Return(_) => true,
        Stmt::If {
            then, els: Some(e), ..
        } => block_diverges(then) && block_diverges(e),
        Stmt::Block(b) => block_diverges(b),
        _ => false,
    }
}

pub fn block_diverges(list: &[Stmt]) -> bool {
    list.iter().any(diverges)
}

/// Cuts statements after one that always leaves its block; returns whether
/// anything changed.
fn cut_unreachable(list: &mut Vec<Stmt>) -> bool {
    let mut changed = false;
    for s in list.iter_mut() {
        changed |= match s {
            Stmt::If { then, els, .. } => {
                cut_unreachable(then) | els.as_mut().is_some_and(cut_unreachable)
            }
            Stmt::For { body, .. }
            | Stmt::ForArr { body, .. }
            | Stmt::While { body, .. }
            | Stmt::Loop { body, .. } => cut_unreachable(body),
            Stmt::Block(b) => cut_unreachable(b),
            _ => false,
        };
    }
    if let Some(i) = list.iter().position(diverges) {
        if i + 1 < list.len() {
            list.truncate(i + 1);
            changed = true;
        }
    }
    changed
}

// ---------------------------------------------------------------------------
// Liveness.
// ---------------------------------------------------------------------------

struct Live<'a> {
    info: &'a Info,
    mutate: bool,
    changed: bool,
    breaks: Vec<Set>,
    conts: Vec<Set>,
}

fn union(a: &Set, b: &Set) -> Set {
    a.union(b).copied().collect()
}

impl Live<'_> {
    fn block(&mut self, list: &mut Vec<Stmt>, out: Set) -> Set {
        let mut live = out;
        let mut keep = vec![true; list.len()];
        for i in (0..list.len()).rev() {
            let (before, remove) = self.stmt(&mut list[i], live.clone());
            if remove && self.mutate {
                keep[i] = false;
                self.changed = true;
            } else {
                live = before;
            }
        }
        if self.mutate {
            let mut k = keep.into_iter();
            list.retain(|_| k.next().unwrap());
        }
        live
    }

    /// Returns the live set before `s`, and whether `s` is dead.
    fn stmt(&mut self, s: &mut Stmt, after: Set) -> (Set, bool) {
        match s {
            Stmt::Let { name, init, .. } => {
                let id = name.id;
                let reads = self.info.reads[id];
                let mut before = after.clone();
                before.remove(&id);
                if !after.contains(&id) {
                    if reads == 0 {
                        return (after, true);
                    }
                    if init.is_some() && self.mutate {
                        *init = None;
                        self.changed = true;
                    }
                }
                if let Some(v) = init {
                    before = self.val(v, before);
                }
                (before, false)
            }
            Stmt::Assign { name, op, val } => {
                let id = name.id;
                if !after.contains(&id) {
                    return (after, true);
                }
                let mut before = after;
                if *op == AOp::Set {
                    before.remove(&id);
                }
                before = self.val(val, before);
                (before, false)
            }
            Stmt::If { cond, then, els } => {
                let mut a = self.block(then, after.clone());
                if let Cond::Some(sp) = cond {
                    a.remove(&sp.bind.id);
                }
                let b = match els {
                    Some(e) => self.block(e, after.clone()),
                    None => after,
                };
                if self.mutate {
                    if els.as_ref().is_some_and(|e| e.is_empty()) {
                        *els = None;
                        self.changed = true;
                    }
                    if then.is_empty() && els.is_none() {
                        return (b, true);
                    }
                }
                (self.cond(cond, union(&a, &b)), false)
            }
            Stmt::For { var, range, body } => {
                let head = self.fixpoint(body, &after, &Set::new());
                let mut before = head;
                before.remove(&var.id);
                before = self.iexpr(&range.lo, before);
                before = self.iexpr(&range.hi, before);
                (before, false)
            }
            Stmt::While {
                guard, cond, body, ..
            } => {
                let mut extra = Set::new();
                extra.insert(guard.id);
                extra = self.cond(cond, extra);
                let mut before = self.fixpoint(body, &after, &extra);
                before.remove(&guard.id);
                (before, false)
            }
            Stmt::Loop { guard, body, .. } => {
                let mut extra = Set::new();
                extra.insert(guard.id);
                let mut before = self.fixpoint(body, &after, &extra);
                before.remove(&guard.id);
                (before, false)
            }
            Stmt::Block(b) => {
                let before = self.block(b, after);
                (before, false)
            }
            Stmt::LetArr { name, init, .. } => {
                if self.info.reads[name.id] == 0 {
                    return (after, true);
                }
                let mut before = after;
                before.remove(&name.id);
                match init {
                    ArrInit::Zeros { of: Some(w), .. } => {
                        before.insert(w.id);
                    }
                    ArrInit::Zeros { .. } => {}
                    ArrInit::List { elems, .. } => {
                        for e in elems.iter_mut() {
                            before = self.fexpr(e, before);
                        }
                    }
                    ArrInit::Collect { src, body, .. } => {
                        before = self.closure(src, body, before);
                    }
                    ArrInit::Copy { of, .. } => {
                        before.insert(of.id);
                    }
                }
                (before, false)
            }
            Stmt::LetPush { name, idx, val, .. } => {
                if self.info.reads[name.id] == 0 {
                    return (after, true);
                }
                let mut before = after;
                before.remove(&name.id);
                before = self.fexpr(val, before);
                before.remove(&idx.id);
                (before, false)
            }
            Stmt::Store {
                name, index, val, ..
            } => {
                // rustc's liveness sees a store into an array as an
                // assignment ("value assigned is never read") that does not
                // end the other elements' lives.
                if self.info.reads[name.id] == 0 || !after.contains(&name.id) {
                    return (after, true);
                }
                let mut before = after;
                before.insert(name.id);
                before = self.iexpr(index, before);
                (self.fexpr(val, before), false)
            }
            Stmt::CallOut { name, call, .. } => {
                // A call that fills a buffer never read is dropped whole.
                if self.info.reads[name.id] == 0 || !after.contains(&name.id) {
                    return (after, true);
                }
                let mut before = after;
                before.insert(name.id);
                (self.fexpr(call, before), false)
            }
            Stmt::ForArr {
                walk,
                idx,
                elem,
                arr,
                body,
                ..
            } => {
                let mut extra = Set::new();
                if !matches!(walk, Walk::Upto(_)) {
                    extra.insert(arr.id);
                }
                let mut before = self.fixpoint(body, &after, &extra);
                before.remove(&idx.id);
                before.remove(&elem.id);
                (before, false)
            }
            Stmt::Break => (self.breaks.last().cloned().unwrap_or_default(), false),
            Stmt::Continue => (self.conts.last().cloned().unwrap_or_default(), false),
            Stmt::Return(e) => (self.fexpr(e, Set::new()), false),
            Stmt::Views(v) => {
                if !after.contains(&v.out.id) {
                    return (after, true);
                }
                let mut before = after;
                before.remove(&v.out.id);
                before.extend(v.outer().into_iter().map(|(n, _)| n.id));
                (before, false)
            }
            Stmt::LetElse { pat, ret } => {
                // It may return: never dropped.
                let mut before = after;
                before.remove(&pat.bind.id);
                before.insert(pat.of.id);
                (union(&before, &self.fexpr(ret, Set::new())), false)
            }
        }
    }

    /// Live set at the head of a loop whose exit leads to `after`, whose head
    /// reads `extra`, and that may run its body zero or more times.
    fn fixpoint(&mut self, body: &mut Vec<Stmt>, after: &Set, extra: &Set) -> Set {
        let mutate = std::mem::replace(&mut self.mutate, false);
        let mut head = union(after, extra);
        loop {
            self.breaks.push(after.clone());
            self.conts.push(head.clone());
            let inside = self.block(body, head.clone());
            self.breaks.pop();
            self.conts.pop();
            let next = union(&union(after, extra), &inside);
            if next == head {
                break;
            }
            head = next;
        }
        self.mutate = mutate;
        if mutate {
            self.breaks.push(after.clone());
            self.conts.push(head.clone());
            self.block(body, head.clone());
            self.breaks.pop();
            self.conts.pop();
        }
        head
    }

    fn val(&mut self, v: &mut Val, live: Set) -> Set {
        match v {
            Val::F(e) => self.fexpr(e, live),
            Val::I(e) => self.iexpr(e, live),
        }
    }

    fn fexpr(&mut self, e: &mut FExpr, mut live: Set) -> Set {
        match e {
            FExpr::Var(n) => {
                live.insert(n.id);
                live
            }
            FExpr::Lit(_) | FExpr::Pi => live,
            FExpr::Cast(i) => self.iexpr(i, live),
            FExpr::Neg(a) => self.fexpr(a, live),
            FExpr::Bin(_, a, b) => {
                let live = self.fexpr(a, live);
                self.fexpr(b, live)
            }
            FExpr::Call(_, _, args) => args.iter_mut().fold(live, |l, a| self.fexpr(a, l)),
            FExpr::Powi(_, a, _) => self.fexpr(a, live),
            FExpr::If(c, t, e) => {
                let a = self.fblock(t, live.clone());
                let b = self.fblock(e, live);
                self.cond(c, union(&a, &b))
            }
            FExpr::Block(b) => self.fblock(b, live),
            FExpr::Index(n, i) => {
                live.insert(n.id);
                self.iexpr(i, live)
            }
            FExpr::Deref(n)
            | FExpr::Len(n)
            | FExpr::Sum(n)
            | FExpr::Product(n)
            | FExpr::Elem(n) => {
                live.insert(n.id);
                live
            }
            FExpr::Reduce(src, r) => {
                if let Reduce::Fold { init, .. } = &mut **r {
                    live = self.fexpr(init, live);
                }
                self.closure(src, r.body_mut(), live)
            }
            FExpr::Count(pr) => {
                live.insert(pr.arr.id);
                self.fexpr(&mut pr.rhs, live)
            }
            FExpr::Apply(_, args) => args.iter_mut().fold(live, |mut l, a| match a {
                Arg::F(e) => self.fexpr(e, l),
                Arg::A(n, _) | Arg::D(n) => {
                    l.insert(n.id);
                    l
                }
            }),
        }
    }

    /// A closure reads its arrays and what its body reads, all before the
    /// enclosing statement.
    fn closure(&mut self, src: &mut Source, body: &mut FBlock, mut live: Set) -> Set {
        for a in src.arrays() {
            live.insert(a.id);
        }
        self.fblock(body, live)
    }

    /// A block expression only declares and writes its own locals, so what
    /// it reads from outside is read before the enclosing statement.
    fn fblock(&mut self, b: &mut FBlock, live: Set) -> Set {
        let tail = self.fexpr(&mut b.tail, Set::new());
        let inner = self.block(&mut b.stmts, tail);
        union(&live, &inner)
    }

    fn iexpr(&mut self, e: &IExpr, mut live: Set) -> Set {
        match e {
            IExpr::Var(n) => {
                live.insert(n.id);
                live
            }
            IExpr::Lit(_) => live,
            IExpr::Add(a, b) => {
                let live = self.iexpr(a, live);
                self.iexpr(b, live)
            }
            IExpr::Mul(a, _) | IExpr::Rem(a, _) => self.iexpr(a, live),
        }
    }

    fn cond(&mut self, c: &mut Cond, live: Set) -> Set {
        match c {
            Cond::F(_, a, b) => {
                let live = self.fexpr(a, live);
                self.fexpr(b, live)
            }
            Cond::I(_, a, b) => {
                let live = self.iexpr(a, live);
                self.iexpr(b, live)
            }
            Cond::And(a, b) | Cond::Or(a, b) => {
                let live = self.cond(a, live);
                self.cond(b, live)
            }
            Cond::Not(a) => self.cond(a, live),
            Cond::Var(n) => {
                let mut live = live;
                live.insert(n.id);
                live
            }
            Cond::Any(pr) => {
                let mut live = live;
                live.insert(pr.arr.id);
                self.fexpr(&mut pr.rhs, live)
            }
            Cond::Some(sp) => {
                let mut live = live;
                live.insert(sp.of.id);
                live
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Initialisation and `mut`.
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
struct State {
    def: Set,
    maybe: Set,
}

fn join(a: Option<State>, b: Option<State>) -> Option<State> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(a), Some(b)) => Some(State {
            def: a.def.intersection(&b.def).copied().collect(),
            maybe: union(&a.maybe, &b.maybe),
        }),
    }
}

fn forget(s: Option<State>, ids: &Set) -> Option<State> {
    s.map(|mut s| {
        s.def.retain(|i| !ids.contains(i));
        s.maybe.retain(|i| !ids.contains(i));
        s
    })
}

/// Every declaration inside `list`, at any depth.
fn declared_in(list: &[Stmt], out: &mut Set) {
    for s in list {
        match s {
            Stmt::Let { name, init, .. } => {
                out.insert(name.id);
                if let Some(Val::F(e)) = init {
                    declared_in_expr(e, out);
                }
            }
            Stmt::LetElse { pat, ret } => {
                out.insert(pat.bind.id);
                declared_in_expr(ret, out);
            }
            Stmt::If { then, els, .. } => {
                declared_in(then, out);
                if let Some(e) = els {
                    declared_in(e, out);
                }
            }
            Stmt::For { var, body, .. } => {
                out.insert(var.id);
                declared_in(body, out);
            }
            Stmt::ForArr {
                idx, elem, body, ..
            } => {
                out.insert(idx.id);
                out.insert(elem.id);
                declared_in(body, out);
            }
            Stmt::LetArr { name, init, .. } => {
                out.insert(name.id);
                if let ArrInit::List { elems, .. } = init {
                    elems.iter().for_each(|e| declared_in_expr(e, out));
                }
            }
            Stmt::Store { val, .. } | Stmt::CallOut { call: val, .. } => declared_in_expr(val, out),
            Stmt::LetPush { name, idx, .. } => {
                out.insert(name.id);
                out.insert(idx.id);
            }
            Stmt::Views(v) => {
                out.insert(v.out.id);
            }
            Stmt::While { guard, body, .. } | Stmt::Loop { guard, body, .. } => {
                out.insert(guard.id);
                declared_in(body, out);
            }
            Stmt::Block(b) => declared_in(b, out),
            Stmt::Assign { val: Val::F(e), .. } | Stmt::Return(e) => declared_in_expr(e, out),
            _ => {}
        }
    }
}

fn declared_in_expr(e: &FExpr, out: &mut Set) {
    match e {
        FExpr::If(_, t, e) => {
            declared_in(&t.stmts, out);
            declared_in(&e.stmts, out);
        }
        FExpr::Block(b) => declared_in(&b.stmts, out),
        FExpr::Neg(a) | FExpr::Powi(_, a, _) => declared_in_expr(a, out),
        FExpr::Bin(_, a, b) => {
            declared_in_expr(a, out);
            declared_in_expr(b, out);
        }
        FExpr::Call(_, _, args) => args.iter().for_each(|a| declared_in_expr(a, out)),
        FExpr::Apply(_, args) => {
            for a in args {
                if let Arg::F(e) = a {
                    declared_in_expr(e, out);
                }
            }
        }
        _ => {}
    }
}

struct Init {
    needs_mut: Vec<bool>,
    error: Option<String>,
    breaks: Vec<Vec<State>>,
    conts: Vec<Vec<State>>,
}

impl Init {
    fn need(&mut self, st: &State, id: usize) {
        if !st.def.contains(&id) && self.error.is_none() {
            self.error = Some(format!("variable #{id} may be read uninitialised"));
        }
    }

    fn block(&mut self, list: &[Stmt], st: State) -> Option<State> {
        let cur = self.run(list, st);
        // Locals of this block die at its end (their next iteration starts
        // uninitialised).
        let mut shallow = Set::new();
        for s in list {
            match s {
                Stmt::Let { name, .. } | Stmt::LetArr { name, .. } | Stmt::LetPush { name, .. } => {
                    shallow.insert(name.id);
                }
                Stmt::Views(v) => {
                    shallow.insert(v.out.id);
                }
                Stmt::While { guard, .. } | Stmt::Loop { guard, .. } => {
                    shallow.insert(guard.id);
                }
                _ => {}
            }
        }
        forget(cur, &shallow)
    }

    /// The statements of a block, its locals still alive at the end.
    fn run(&mut self, list: &[Stmt], st: State) -> Option<State> {
        let mut cur = Some(st);
        for s in list {
            let Some(st) = cur else { break };
            cur = self.stmt(s, st);
        }
        cur
    }

    fn write(&mut self, st: &mut State, id: usize) {
        if st.maybe.contains(&id) {
            self.needs_mut[id] = true;
        }
        st.def.insert(id);
        st.maybe.insert(id);
    }

    fn stmt(&mut self, s: &Stmt, mut st: State) -> Option<State> {
        match s {
            Stmt::Let { name, init, .. } => {
                if let Some(v) = init {
                    self.val(v, &st);
                    st.def.insert(name.id);
                    st.maybe.insert(name.id);
                }
                Some(st)
            }
            Stmt::Assign { name, op, val } => {
                self.val(val, &st);
                if *op != AOp::Set {
                    self.need(&st, name.id);
                    self.needs_mut[name.id] = true;
                }
                self.write(&mut st, name.id);
                Some(st)
            }
            Stmt::If { cond, then, els } => {
                self.cond(cond, &st);
                let mut inner = st.clone();
                if let Cond::Some(sp) = cond {
                    inner.def.insert(sp.bind.id);
                    inner.maybe.insert(sp.bind.id);
                }
                let a = self.block(then, inner);
                let b = match els {
                    Some(e) => self.block(e, st),
                    None => Some(st),
                };
                join(a, b)
            }
            Stmt::For { var, range, body } => {
                self.iexpr(&range.lo, &st);
                self.iexpr(&range.hi, &st);
                let mut entry = st;
                entry.def.insert(var.id);
                entry.maybe.insert(var.id);
                self.looped(body, entry, None, true)
            }
            Stmt::While {
                guard, cond, body, ..
            } => {
                st.def.insert(guard.id);
                st.maybe.insert(guard.id);
                self.looped(body, st, Some(cond), true)
            }
            Stmt::Loop { guard, body, .. } => {
                st.def.insert(guard.id);
                st.maybe.insert(guard.id);
                self.looped(body, st, None, true)
            }
            Stmt::Block(b) => self.block(b, st),
            Stmt::Break => {
                self.breaks.last_mut().unwrap().push(st);
                None
            }
            Stmt::Continue => {
                self.conts.last_mut().unwrap().push(st);
                None
            }
            Stmt::Return(e) => {
                self.fexpr(e, &st);
                None
            }
            Stmt::LetElse { pat, ret } => {
                self.need(&st, pat.of.id);
                self.fexpr(ret, &st);
                st.def.insert(pat.bind.id);
                st.maybe.insert(pat.bind.id);
                Some(st)
            }
            Stmt::LetArr { name, init, .. } => {
                match init {
                    ArrInit::Zeros { of: Some(w), .. } => self.need(&st, w.id),
                    ArrInit::Zeros { .. } => {}
                    ArrInit::List { elems, .. } => elems.iter().for_each(|e| self.fexpr(e, &st)),
                    ArrInit::Collect { src, body, .. } => self.closure(src, &[], body, &st),
                    ArrInit::Copy { of, .. } => self.need(&st, of.id),
                }
                st.def.insert(name.id);
                st.maybe.insert(name.id);
                Some(st)
            }
            Stmt::LetPush { name, idx, val, .. } => {
                let mut inside = st.clone();
                inside.def.insert(idx.id);
                self.fexpr(val, &inside);
                st.def.insert(name.id);
                st.maybe.insert(name.id);
                self.needs_mut[name.id] = true;
                Some(st)
            }
            Stmt::Store {
                name, index, val, ..
            } => {
                self.iexpr(index, &st);
                self.fexpr(val, &st);
                self.need(&st, name.id);
                self.needs_mut[name.id] = true;
                Some(st)
            }
            Stmt::CallOut { name, call, .. } => {
                self.fexpr(call, &st);
                self.need(&st, name.id);
                self.needs_mut[name.id] = true;
                Some(st)
            }
            Stmt::Views(v) => {
                for (n, _) in v.outer() {
                    self.need(&st, n.id);
                }
                st.def.insert(v.out.id);
                st.maybe.insert(v.out.id);
                Some(st)
            }
            Stmt::ForArr {
                walk,
                idx,
                elem,
                arr,
                body,
                ..
            } => {
                if !matches!(walk, Walk::Upto(_)) {
                    self.need(&st, arr.id);
                }
                let mut entry = st;
                for id in [idx.id, elem.id] {
                    entry.def.insert(id);
                    entry.maybe.insert(id);
                }
                self.looped(body, entry, None, true)
            }
        }
    }

    /// A loop entered with `entry`; its head state joins the entry, the end
    /// of the body and every `continue`; it is left from the head (zero
    /// trips, a false condition, or the guard) or by `break`.
    fn looped(
        &mut self,
        body: &[Stmt],
        entry: State,
        cond: Option<&Cond>,
        exits_at_head: bool,
    ) -> Option<State> {
        let mut inner = Set::new();
        declared_in(body, &mut inner);
        let mut head = entry.clone();
        loop {
            if let Some(c) = cond {
                self.cond(c, &head);
            }
            self.breaks.push(Vec::new());
            self.conts.push(Vec::new());
            let end = self.block(body, head.clone());
            let breaks = self.breaks.pop().unwrap();
            let conts = self.conts.pop().unwrap();
            let mut next = join(Some(entry.clone()), forget(end, &inner));
            for c in conts {
                next = join(next, forget(Some(c), &inner));
            }
            let next = next.unwrap();
            if next == head {
                let mut out = if exits_at_head { Some(head) } else { None };
                for b in breaks {
                    out = join(out, forget(Some(b), &inner));
                }
                return out;
            }
            head = next;
        }
    }

    fn val(&mut self, v: &Val, st: &State) {
        match v {
            Val::F(e) => self.fexpr(e, st),
            Val::I(e) => self.iexpr(e, st),
        }
    }

    fn fexpr(&mut self, e: &FExpr, st: &State) {
        match e {
            FExpr::Var(n) => self.need(st, n.id),
            FExpr::Lit(_) | FExpr::Pi => {}
            FExpr::Cast(i) => self.iexpr(i, st),
            FExpr::Neg(a) | FExpr::Powi(_, a, _) => self.fexpr(a, st),
            FExpr::Bin(_, a, b) => {
                self.fexpr(a, st);
                self.fexpr(b, st);
            }
            FExpr::Call(_, _, args) => args.iter().for_each(|a| self.fexpr(a, st)),
            FExpr::If(c, t, e) => {
                self.cond(c, st);
                self.fblock(t, st);
                self.fblock(e, st);
            }
            FExpr::Block(b) => self.fblock(b, st),
            FExpr::Index(n, i) => {
                self.need(st, n.id);
                self.iexpr(i, st);
            }
            FExpr::Deref(n)
            | FExpr::Len(n)
            | FExpr::Sum(n)
            | FExpr::Product(n)
            | FExpr::Elem(n) => self.need(st, n.id),
            FExpr::Reduce(src, r) => match &**r {
                Reduce::Fold { init, acc, body } => {
                    self.fexpr(init, st);
                    self.closure(src, &[acc.id], body, st);
                }
                _ => self.closure(src, &[], r.body(), st),
            },
            FExpr::Count(pr) => self.pred(pr, st),
            FExpr::Apply(_, args) => {
                for a in args {
                    match a {
                        Arg::F(e) => self.fexpr(e, st),
                        Arg::A(n, _) | Arg::D(n) => self.need(st, n.id),
                    }
                }
            }
        }
    }

    /// A closure's body, its parameters (and `extra`, an accumulator)
    /// bound.
    fn closure(&mut self, src: &Source, extra: &[usize], body: &FBlock, st: &State) {
        let mut src = src.clone();
        for a in src.arrays() {
            self.need(st, a.id);
        }
        let mut inside = st.clone();
        let ids = src.bound().iter().map(|(n, _)| n.id).collect::<Vec<_>>();
        inside.def.extend(ids.iter().chain(extra));
        self.fblock(body, &inside);
    }

    fn pred(&mut self, pr: &Pred, st: &State) {
        self.need(st, pr.arr.id);
        let mut inside = st.clone();
        inside.def.insert(pr.elem.id);
        self.fexpr(&pr.rhs, &inside);
    }

    fn fblock(&mut self, b: &FBlock, st: &State) {
        let mut cur = Some(st.clone());
        for s in &b.stmts {
            let Some(s0) = cur else { break };
            cur = self.stmt(s, s0);
        }
        match cur {
            Some(end) => self.fexpr(&b.tail, &end),
            None => {
                self.error
                    .get_or_insert_with(|| "a block expression always leaves".into());
            }
        }
    }

    fn iexpr(&mut self, e: &IExpr, st: &State) {
        match e {
            IExpr::Var(n) => self.need(st, n.id),
            IExpr::Lit(_) => {}
            IExpr::Add(a, b) => {
                self.iexpr(a, st);
                self.iexpr(b, st);
            }
            IExpr::Mul(a, _) | IExpr::Rem(a, _) => self.iexpr(a, st),
        }
    }

    fn cond(&mut self, c: &Cond, st: &State) {
        match c {
            Cond::F(_, a, b) => {
                self.fexpr(a, st);
                self.fexpr(b, st);
            }
            Cond::I(_, a, b) => {
                self.iexpr(a, st);
                self.iexpr(b, st);
            }
            Cond::And(a, b) | Cond::Or(a, b) => {
                self.cond(a, st);
                self.cond(b, st);
            }
            Cond::Not(a) => self.cond(a, st),
            Cond::Var(n) => self.need(st, n.id),
            Cond::Any(pr) => self.pred(pr, st),
            Cond::Some(sp) => self.need(st, sp.of.id),
        }
    }
}

fn set_mut(list: &mut [Stmt], needs: &[bool], elementwise: &Set) {
    for s in list {
        match s {
            Stmt::LetArr {
                name,
                mutable,
                annot,
                init,
            } => {
                *mutable = needs[name.id];
                if let ArrInit::List { elems, .. } = init {
                    elems.iter_mut().for_each(|e| set_mut_expr(e, needs));
                }
                // `v[0].sin()` does not compile on a `Vec<{float}>`.
                let untyped = match init {
                    ArrInit::Zeros { .. } => true,
                    ArrInit::List { elems, .. } => !elems.iter().any(typed),
                    ArrInit::Collect { body, .. } => {
                        set_mut_fblock(body, needs);
                        false
                    }
                    ArrInit::Copy { .. } => false,
                };
                if untyped && elementwise.contains(&name.id) {
                    *annot = true;
                }
            }
            Stmt::Store { val, .. }
            | Stmt::LetPush { val, .. }
            | Stmt::CallOut { call: val, .. } => set_mut_expr(val, needs),
            Stmt::ForArr { body, .. } => set_mut(body, needs, elementwise),
            Stmt::Let {
                name,
                mutable,
                init,
                ty,
                annot,
            } => {
                *mutable = needs[name.id];
                if let Some(Val::F(e)) = init {
                    set_mut_expr(e, needs);
                }
                // `let a = 0.5;` leaves `a` a `{float}`: `a.sin()` would not
                // compile.
                if *ty == Ty::F
                    && !init
                        .as_ref()
                        .is_some_and(|v| matches!(v, Val::F(e) if typed(e)))
                {
                    *annot = true;
                }
            }
            Stmt::If { cond, then, els } => {
                set_mut_cond(cond, needs);
                set_mut(then, needs, elementwise);
                if let Some(e) = els {
                    set_mut(e, needs, elementwise);
                }
            }
            Stmt::While { cond, body, .. } => {
                set_mut_cond(cond, needs);
                set_mut(body, needs, elementwise)
            }
            Stmt::For { body, .. } | Stmt::Loop { body, .. } => set_mut(body, needs, elementwise),
            Stmt::Block(b) => set_mut(b, needs, elementwise),
            Stmt::Assign { val: Val::F(e), .. }
            | Stmt::Return(e)
            | Stmt::LetElse { ret: e, .. } => set_mut_expr(e, needs),
            _ => {}
        }
    }
}

/// Conditions hold float expressions too, with blocks and `let`s of their own.
fn set_mut_cond(c: &mut Cond, needs: &[bool]) {
    match c {
        Cond::F(_, a, b) => {
            set_mut_expr(a, needs);
            set_mut_expr(b, needs);
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            set_mut_cond(a, needs);
            set_mut_cond(b, needs);
        }
        Cond::Not(a) => set_mut_cond(a, needs),
        Cond::Any(pr) => set_mut_expr(&mut pr.rhs, needs),
        Cond::Some(_) => {}
        Cond::I(..) | Cond::Var(_) => {}
    }
}

fn set_mut_fblock(b: &mut FBlock, needs: &[bool]) {
    set_mut(&mut b.stmts, needs, &Set::new());
    set_mut_expr(&mut b.tail, needs);
}

fn set_mut_expr(e: &mut FExpr, needs: &[bool]) {
    match e {
        FExpr::If(c, t, e) => {
            set_mut_cond(c, needs);
            set_mut(&mut t.stmts, needs, &Set::new());
            set_mut_expr(&mut t.tail, needs);
            set_mut(&mut e.stmts, needs, &Set::new());
            set_mut_expr(&mut e.tail, needs);
        }
        FExpr::Block(b) => {
            set_mut(&mut b.stmts, needs, &Set::new());
            set_mut_expr(&mut b.tail, needs);
        }
        FExpr::Neg(a) | FExpr::Powi(_, a, _) => set_mut_expr(a, needs),
        FExpr::Bin(_, a, b) => {
            set_mut_expr(a, needs);
            set_mut_expr(b, needs);
        }
        FExpr::Call(_, _, args) => args.iter_mut().for_each(|a| set_mut_expr(a, needs)),
        FExpr::Apply(_, args) => {
            for a in args {
                if let Arg::F(e) = a {
                    set_mut_expr(e, needs);
                }
            }
        }
        FExpr::Reduce(_, r) => {
            if let Reduce::Fold { init, .. } = &mut **r {
                set_mut_expr(init, needs);
            }
            set_mut_fblock(r.body_mut(), needs);
        }
        FExpr::Count(pr) => set_mut_expr(&mut pr.rhs, needs),
        _ => {}
    }
}

/// The arrays whose elements are read one by one (indexed or walked).
fn elementwise_reads(p: &Program) -> Set {
    let mut probe = p.clone();
    let mut out = Set::new();
    visit_fexprs(&mut probe, &mut |e| {
        if let FExpr::Index(n, _) = e {
            out.insert(n.id);
        }
    });
    visit_stmt_lists(&mut probe.body, &mut |list| {
        for s in list.iter() {
            if let Stmt::ForArr { walk, arr, .. } = s {
                if !matches!(walk, Walk::Upto(_)) {
                    out.insert(arr.id);
                }
            }
        }
    });
    out
}

fn underscore_unused_loop_vars(list: &mut [Stmt], info: &Info) {
    for s in list {
        match s {
            Stmt::For { var, body, .. } => {
                if var.s != "_" && info.reads[var.id] == 0 {
                    var.s = "_".into();
                }
                underscore_unused_loop_vars(body, info);
            }
            Stmt::If { cond, then, els } => {
                if let Cond::Some(sp) = cond {
                    if info.reads[sp.bind.id] == 0 {
                        sp.bind.s = "_".into();
                    }
                }
                underscore_unused_loop_vars(then, info);
                if let Some(e) = els {
                    underscore_unused_loop_vars(e, info);
                }
            }
            Stmt::ForArr {
                idx, elem, body, ..
            } => {
                for v in [idx, elem] {
                    if v.s != "_" && info.reads[v.id] == 0 {
                        v.s = "_".into();
                    }
                }
                underscore_unused_loop_vars(body, info);
            }
            Stmt::While { body, .. } | Stmt::Loop { body, .. } | Stmt::Block(body) => {
                underscore_unused_loop_vars(body, info)
            }
            Stmt::LetElse { pat, .. } if info.reads[pat.bind.id] == 0 => {
                pat.bind.s = "_".into();
            }
            _ => {}
        }
    }
}

/// Closure parameters and push loop indices never read print as `_`
/// (rustc's `unused_variables`).
fn underscore_unused_closure_params(p: &mut Program, info: &Info) {
    let mut hide = |n: &mut Name| {
        if n.s != "_" && info.reads[n.id] == 0 {
            n.s = "_".into();
        }
    };
    let hide_source = |src: &mut Source, hide: &mut dyn FnMut(&mut Name)| {
        for (n, _) in src.bound() {
            hide(n);
        }
    };
    visit_fexprs(p, &mut |e| {
        if let FExpr::Reduce(src, r) = e {
            hide_source(src, &mut hide);
            if let Reduce::Fold { acc, .. } = &mut **r {
                hide(acc);
            }
        }
    });
    visit_stmt_lists(&mut p.body, &mut |list| {
        for s in list.iter_mut() {
            match s {
                Stmt::LetArr {
                    init: ArrInit::Collect { src, .. },
                    ..
                } => hide_source(src, &mut hide),
                Stmt::LetPush { idx, .. } => hide(idx),
                _ => {}
            }
        }
    });
}

/// Whether `continue` occurs in `list` for the loop around it (not for a
/// loop inside it).
fn continues(list: &[Stmt]) -> bool {
    list.iter().any(|s| match s {
        Stmt::Continue => true,
        Stmt::If { then, els, .. } => continues(then) || els.as_deref().is_some_and(continues),
        Stmt::Block(b) => continues(b),
        _ => false,
    })
}

/// A `while` whose body always leaves it (by `break` or `return`, never
/// `continue`) makes its counter's increment dead: rustc warns.
fn while_always_leaves(list: &[Stmt]) -> bool {
    list.iter().any(|s| match s {
        Stmt::While { body, .. } => {
            (block_diverges(body) && !continues(body)) || while_always_leaves(body)
        }
        Stmt::If { then, els, .. } => {
            while_always_leaves(then) || els.as_deref().is_some_and(while_always_leaves)
        }
        Stmt::For { body, .. }
        | Stmt::ForArr { body, .. }
        | Stmt::Loop { body, .. }
        | Stmt::Block(body) => while_always_leaves(body),
        _ => false,
    })
}

/// Replaces block expressions without statements by their value.
fn unwrap_blocks(p: &mut Program) {
    visit_fexprs(p, &mut |e| {
        while let FExpr::Block(b) = e {
            if !b.stmts.is_empty() {
                break;
            }
            let tail = std::mem::replace(&mut b.tail, FExpr::Pi);
            *e = tail;
        }
    });
}

/// Removes `x = x;`, empty blocks, and blocks whose only statement is a
/// block.
fn drop_noops(list: &mut Vec<Stmt>) -> bool {
    let mut changed = false;
    for s in list.iter_mut() {
        changed |= match s {
            Stmt::If { then, els, .. } => drop_noops(then) | els.as_mut().is_some_and(drop_noops),
            Stmt::For { body, .. }
            | Stmt::ForArr { body, .. }
            | Stmt::While { body, .. }
            | Stmt::Loop { body, .. } => drop_noops(body),
            Stmt::Block(b) => {
                let mut c = drop_noops(b);
                if let [Stmt::Block(inner)] = b.as_mut_slice() {
                    let inner = std::mem::take(inner);
                    *b = inner;
                    c = true;
                }
                c
            }
            _ => false,
        };
    }
    let before = list.len();
    list.retain(|s| match s {
        Stmt::Assign {
            name,
            op: AOp::Set,
            val: Val::F(FExpr::Var(v)),
        } => v.id != name.id,
        Stmt::Assign {
            name,
            op: AOp::Set,
            val: Val::I(IExpr::Var(v)),
        } => v.id != name.id,
        Stmt::Block(b) => !b.is_empty(),
        _ => true,
    });
    changed || list.len() != before
}

/// Makes `p` and its helpers valid and warning-free, or says why they
/// cannot be. A helper no longer called is dropped (`dead_code`).
pub fn tidy(p: &mut Program) -> Result<(), String> {
    for h in &mut p.helpers {
        if !h.helpers.is_empty() {
            return Err("a helper with helpers".into());
        }
        tidy_function(h)?;
    }
    tidy_function(p)?;
    let called = called_helpers(p);
    for name in &called {
        if !p.helpers.iter().any(|h| h.name == *name) {
            return Err(format!("`{name}` is not a helper"));
        }
    }
    p.helpers.retain(|h| called.contains(&h.name));
    Ok(())
}

/// The names of the helpers `p`'s body calls.
pub fn called_helpers(p: &Program) -> Vec<String> {
    let mut probe = p.clone();
    let mut out: Vec<String> = Vec::new();
    visit_fexprs(&mut probe, &mut |e| {
        if let FExpr::Apply(f, _) = e {
            if !out.contains(f) {
                out.push(f.clone());
            }
        }
    });
    visit_stmt_lists(&mut probe.body, &mut |list| {
        for s in list.iter() {
            if let Stmt::CallOut {
                call: FExpr::Apply(f, _),
                ..
            } = s
            {
                if !out.contains(f) {
                    out.push(f.clone());
                }
            }
        }
    });
    out
}

/// A helper with an output buffer, which returns nothing.
pub fn returns_nothing(p: &Program) -> bool {
    p.params.iter().any(|q| matches!(q.ty, PTy::Out(_)))
}

fn tidy_function(p: &mut Program) -> Result<(), String> {
    for round in 0.. {
        if round > 100 {
            return Err("tidy does not converge".into());
        }
        let info = resolve(p)?;
        let mut changed = cut_unreachable(&mut p.body);
        if block_diverges(&p.body) {
            changed |= p.tail.take().is_some();
        } else if p.tail.is_none() && !returns_nothing(p) {
            return Err("the body ends without a value".into());
        }
        let mut live = Live {
            info: &info,
            mutate: true,
            changed: false,
            breaks: Vec::new(),
            conts: Vec::new(),
        };
        let out = match &mut p.tail {
            Some(t) => live.fexpr(t, Set::new()),
            // What a helper writes into its output buffer is its result.
            None => p
                .params
                .iter()
                .filter(|q| matches!(q.ty, PTy::Out(_)))
                .map(|q| q.name.id)
                .collect(),
        };
        let entry = live.block(&mut p.body, out);
        changed |= live.changed;
        changed |= drop_noops(&mut p.body);
        if !changed {
            // A parameter overwritten before it is read draws "value passed
            // to `x` is never read".
            for q in &p.params {
                if info.reads[q.name.id] > 0 && !entry.contains(&q.name.id) {
                    return Err(format!("parameter `{}` is overwritten unread", q.name.s));
                }
            }
            break;
        }
    }
    unwrap_blocks(p);
    if while_always_leaves(&p.body) {
        return Err("a `while` body always leaves the loop".into());
    }
    let info = resolve(p)?;
    let mut init = Init {
        needs_mut: vec![false; info.decls.len()],
        error: None,
        breaks: Vec::new(),
        conts: Vec::new(),
    };
    let mut st = State {
        def: Set::new(),
        maybe: Set::new(),
    };
    for q in p.params.iter().map(|q| &q.name).chain(&p.receiver) {
        st.def.insert(q.id);
        st.maybe.insert(q.id);
    }
    let end = init.run(&p.body, st);
    if let (Some(end), Some(t)) = (&end, &p.tail) {
        init.fexpr(t, end);
    }
    if let Some(e) = init.error {
        return Err(e);
    }
    let elementwise = elementwise_reads(p);
    set_mut(&mut p.body, &init.needs_mut, &elementwise);
    if let Some(t) = &mut p.tail {
        set_mut_expr(t, &init.needs_mut);
    }
    for q in &mut p.params {
        // `out: &mut [f64]` is written through, not rebound.
        q.mutable = init.needs_mut[q.name.id] && !matches!(q.ty, PTy::Out(_));
        if info.reads[q.name.id] == 0 && !q.name.s.starts_with('_') {
            if info.writes[q.name.id] > 0 {
                return Err("a parameter is written but never read".into());
            }
            let new = format!("_{}", q.name.s);
            if let Some(w) = &mut p.wrt {
                for n in w.iter_mut() {
                    if *n == q.name.s {
                        *n = new.clone();
                    }
                }
            }
            q.name.s = new;
        }
    }
    underscore_unused_loop_vars(&mut p.body, &info);
    underscore_unused_closure_params(p, &info);
    resolve(p)?;
    Ok(())
}
