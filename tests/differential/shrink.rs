//! One-step reductions of a program, for shrinking a failure: delete a
//! statement, replace a compound statement by its body, replace an
//! expression by one of its operands, by a variable it reads, or by `1.0`,
//! simplify a condition or a loop range, drop an unused parameter.
//!
//! Every candidate is tidied (so it is still valid and warning-free), reads
//! a differentiated struct as the macro supports, and is strictly smaller
//! than the program it came from; the caller keeps the
//! first one that still fails the same way, and repeats.

use super::ast::*;
use super::tidy;
use std::collections::HashSet;

/// Candidates, smallest first.
pub fn candidates(p: &Program) -> Vec<Program> {
    let mut raw: Vec<Program> = Vec::new();
    for body in stmts_variants(&p.body) {
        raw.push(Program { body, ..p.clone() });
    }
    if let Some(t) = &p.tail {
        for t2 in fexpr_variants(t) {
            raw.push(Program {
                tail: Some(t2),
                ..p.clone()
            });
        }
    }
    if let (None, Some(Stmt::Return(e))) = (&p.tail, p.body.last()) {
        let mut q = p.clone();
        q.body.pop();
        q.tail = Some(e.clone());
        raw.push(q);
    }
    for (i, h) in p.helpers.iter().enumerate() {
        for body in stmts_variants(&h.body) {
            raw.push(with_helper(p, i, Program { body, ..h.clone() }));
        }
        if let Some(t) = &h.tail {
            for t2 in fexpr_variants(t) {
                raw.push(with_helper(
                    p,
                    i,
                    Program {
                        tail: Some(t2),
                        ..h.clone()
                    },
                ));
            }
        }
    }
    if p.wrt.is_some() {
        raw.push(Program {
            wrt: None,
            ..p.clone()
        });
    }
    for (i, q) in p.params.iter().enumerate() {
        if q.name.s.starts_with('_') {
            let mut c = p.clone();
            c.params.remove(i);
            if let Some(w) = &mut c.wrt {
                w.retain(|n| *n != q.name.s);
            }
            raw.push(c);
        }
    }
    // Replace every read of a local by a parameter: the local then dies.
    let mut resolved = p.clone();
    if let Ok(info) = tidy::resolve(&mut resolved) {
        let params: Vec<String> = resolved
            .params
            .iter()
            .filter(|q| q.ty == PTy::F64 && !q.name.s.starts_with('_'))
            .map(|q| q.name.s.clone())
            .collect();
        let first_local = resolved.params.len() + usize::from(resolved.receiver.is_some()) + 1;
        for id in first_local..info.decls.len() {
            if info.decls[id].ty != Ty::F || info.reads[id] == 0 {
                continue;
            }
            for param in &params {
                let mut c = resolved.clone();
                visit_fexprs(&mut c, &mut |e| {
                    if matches!(e, FExpr::Var(n) if n.id == id) {
                        *e = FExpr::Var(Name::new(param));
                    }
                });
                raw.push(c);
            }
        }
    }
    let size = p.size();
    let mut seen = HashSet::new();
    let mut out: Vec<(usize, Program)> = Vec::new();
    for mut c in raw {
        // Nor a form the macro rejects by design (a struct in `wrt(..)`
        // with no float field read as a value...).
        if tidy::tidy(&mut c).is_err() || !super::gen::supported_struct_reads(&c) {
            continue;
        }
        let s = c.size();
        if s >= size {
            continue;
        }
        if seen.insert(c.source()) {
            out.push((s, c));
        }
    }
    out.sort_by_key(|(s, _)| *s);
    out.into_iter().map(|(_, c)| c).collect()
}

fn with_helper(p: &Program, i: usize, h: Program) -> Program {
    let mut q = p.clone();
    q.helpers[i] = h;
    q
}

fn stmts_variants(list: &[Stmt]) -> Vec<Vec<Stmt>> {
    let mut out = Vec::new();
    if list.len() >= 4 {
        let h = list.len() / 2;
        out.push(list[h..].to_vec());
        out.push(list[..h].to_vec());
    }
    for i in 0..list.len() {
        let mut v = list.to_vec();
        v.remove(i);
        out.push(v);
    }
    for (i, s) in list.iter().enumerate() {
        for rep in stmt_variants(s) {
            let mut v = list[..i].to_vec();
            v.extend(rep);
            v.extend_from_slice(&list[i + 1..]);
            out.push(v);
        }
    }
    out
}

fn stmt_variants(s: &Stmt) -> Vec<Vec<Stmt>> {
    let mut out: Vec<Vec<Stmt>> = Vec::new();
    match s {
        Stmt::Let {
            init: Some(v),
            name,
            ty,
            annot,
            mutable,
        } => {
            let mk = |v: Val, annot: bool| Stmt::Let {
                name: name.clone(),
                ty: *ty,
                annot,
                mutable: *mutable,
                init: Some(v),
            };
            if *annot {
                out.push(vec![mk(v.clone(), false)]);
            }
            for v2 in val_variants(v) {
                out.push(vec![mk(v2, *annot)]);
            }
        }
        Stmt::Let { .. } => {}
        Stmt::Assign { name, op, val } => {
            let mk = |op: AOp, val: Val| Stmt::Assign {
                name: name.clone(),
                op,
                val,
            };
            if *op != AOp::Set {
                out.push(vec![mk(AOp::Set, val.clone())]);
            }
            for v2 in val_variants(val) {
                out.push(vec![mk(*op, v2)]);
            }
        }
        Stmt::If { cond, then, els } => {
            out.push(vec![Stmt::Block(then.clone())]);
            out.push(then.clone());
            if let Some(e) = els {
                out.push(vec![Stmt::Block(e.clone())]);
                out.push(e.clone());
                out.push(vec![Stmt::If {
                    cond: cond.clone(),
                    then: then.clone(),
                    els: None,
                }]);
                for e2 in stmts_variants(e) {
                    out.push(vec![Stmt::If {
                        cond: cond.clone(),
                        then: then.clone(),
                        els: Some(e2),
                    }]);
                }
            }
            for c2 in cond_variants(cond) {
                out.push(vec![Stmt::If {
                    cond: c2,
                    then: then.clone(),
                    els: els.clone(),
                }]);
            }
            for t2 in stmts_variants(then) {
                out.push(vec![Stmt::If {
                    cond: cond.clone(),
                    then: t2,
                    els: els.clone(),
                }]);
            }
        }
        Stmt::For { var, range, body } => {
            out.push(vec![Stmt::Block(body.clone())]);
            let mk = |range: Range, body: Vec<Stmt>| Stmt::For {
                var: var.clone(),
                range,
                body,
            };
            let mut simpler = Vec::new();
            if range.rev {
                simpler.push(Range {
                    rev: false,
                    ..range.clone()
                });
            }
            if range.step.is_some() {
                simpler.push(Range {
                    step: None,
                    ..range.clone()
                });
            }
            if range.inclusive {
                simpler.push(Range {
                    inclusive: false,
                    ..range.clone()
                });
            }
            for hi in [IExpr::Lit(1), IExpr::Lit(2), IExpr::Lit(3)] {
                if range.hi != hi {
                    simpler.push(Range {
                        hi,
                        ..range.clone()
                    });
                }
            }
            if range.lo != IExpr::Lit(0) {
                simpler.push(Range {
                    lo: IExpr::Lit(0),
                    ..range.clone()
                });
            }
            for r in simpler {
                out.push(vec![mk(r, body.clone())]);
            }
            for b2 in stmts_variants(body) {
                out.push(vec![mk(range.clone(), b2)]);
            }
        }
        Stmt::While {
            guard,
            limit,
            cond,
            body,
        } => {
            out.push(vec![Stmt::Block(body.clone())]);
            out.push(vec![Stmt::Loop {
                guard: guard.clone(),
                limit: *limit,
                body: body.clone(),
            }]);
            let mk = |limit: i64, cond: Cond, body: Vec<Stmt>| Stmt::While {
                guard: guard.clone(),
                limit,
                cond,
                body,
            };
            for l in 1..*limit {
                out.push(vec![mk(l, cond.clone(), body.clone())]);
            }
            for c2 in cond_variants(cond) {
                out.push(vec![mk(*limit, c2, body.clone())]);
            }
            for b2 in stmts_variants(body) {
                out.push(vec![mk(*limit, cond.clone(), b2)]);
            }
        }
        Stmt::Loop { guard, limit, body } => {
            out.push(vec![Stmt::Block(body.clone())]);
            for l in 1..*limit {
                out.push(vec![Stmt::Loop {
                    guard: guard.clone(),
                    limit: l,
                    body: body.clone(),
                }]);
            }
            for b2 in stmts_variants(body) {
                out.push(vec![Stmt::Loop {
                    guard: guard.clone(),
                    limit: *limit,
                    body: b2,
                }]);
            }
        }
        Stmt::Block(b) => {
            out.push(b.clone());
            for b2 in stmts_variants(b) {
                out.push(vec![Stmt::Block(b2)]);
            }
        }
        Stmt::Break | Stmt::Continue => {}
        Stmt::Return(e) => {
            for e2 in fexpr_variants(e) {
                out.push(vec![Stmt::Return(e2)]);
            }
        }
        Stmt::LetArr { .. } => out.extend(let_arr_variants(s)),
        Stmt::Views(v) => {
            for w in v.smaller() {
                out.push(vec![Stmt::Views(Box::new(w))]);
            }
        }
        Stmt::LetElse { pat, ret } => {
            for e2 in fexpr_variants(ret) {
                out.push(vec![Stmt::LetElse {
                    pat: pat.clone(),
                    ret: e2,
                }]);
            }
        }
        Stmt::CallOut { name, range, call } => {
            let mk = |range: Option<(usize, usize)>, call: FExpr| {
                vec![Stmt::CallOut {
                    name: name.clone(),
                    range,
                    call,
                }]
            };
            if range.is_some() {
                out.push(mk(None, call.clone()));
            }
            for c2 in fexpr_variants(call) {
                if matches!(c2, FExpr::Apply(..)) {
                    out.push(mk(*range, c2));
                }
            }
        }
        Stmt::LetPush { val, .. } => {
            for v2 in fexpr_variants(val) {
                let mut c = s.clone();
                if let Stmt::LetPush { val, .. } = &mut c {
                    *val = v2;
                }
                out.push(vec![c]);
            }
        }
        Stmt::Store {
            name,
            index,
            op,
            val,
        } => {
            let mk = |index: IExpr, op: AOp, val: FExpr| {
                vec![Stmt::Store {
                    name: name.clone(),
                    index,
                    op,
                    val,
                }]
            };
            if *op != AOp::Set {
                out.push(mk(index.clone(), AOp::Set, val.clone()));
            }
            if !matches!(index, IExpr::Lit(_)) {
                out.push(mk(IExpr::Lit(0), *op, val.clone()));
            }
            for v2 in fexpr_variants(val) {
                out.push(mk(index.clone(), *op, v2));
            }
        }
        Stmt::ForArr { rev, body, .. } => {
            out.push(vec![Stmt::Block(body.clone())]);
            let mk = |rev: bool, body: Vec<Stmt>| {
                let mut c = s.clone();
                if let Stmt::ForArr {
                    rev: r, body: b, ..
                } = &mut c
                {
                    *r = rev;
                    *b = body;
                }
                vec![c]
            };
            if *rev {
                out.push(mk(false, body.clone()));
            }
            for b2 in stmts_variants(body) {
                out.push(mk(*rev, b2));
            }
        }
    }
    out
}

fn let_arr_variants(s: &Stmt) -> Vec<Vec<Stmt>> {
    let Stmt::LetArr {
        name,
        mutable,
        annot,
        init,
    } = s
    else {
        unreachable!()
    };
    let mk = |annot: bool, init: ArrInit| {
        vec![Stmt::LetArr {
            name: name.clone(),
            mutable: *mutable,
            annot,
            init,
        }]
    };
    let mut out = Vec::new();
    if *annot {
        out.push(mk(false, init.clone()));
    }
    match init {
        ArrInit::Zeros {
            vec,
            len,
            of: Some(_),
        } => out.push(mk(
            *annot,
            ArrInit::Zeros {
                vec: *vec,
                len: *len,
                of: None,
            },
        )),
        ArrInit::Zeros { .. } | ArrInit::Copy { .. } => {}
        ArrInit::Collect {
            src,
            body,
            turbofish,
            len,
        } => {
            for b2 in fblock_variants(body) {
                let c = ArrInit::Collect {
                    src: src.clone(),
                    body: b2,
                    turbofish: *turbofish,
                    len: *len,
                };
                out.push(mk(*annot, c));
            }
        }
        ArrInit::List { vec, elems } => {
            for i in 0..elems.len() {
                for e2 in fexpr_variants(&elems[i]) {
                    let mut v = elems.clone();
                    v[i] = e2;
                    out.push(mk(
                        *annot,
                        ArrInit::List {
                            vec: *vec,
                            elems: v,
                        },
                    ));
                }
            }
        }
    }
    out
}

fn val_variants(v: &Val) -> Vec<Val> {
    match v {
        Val::F(e) => fexpr_variants(e).into_iter().map(Val::F).collect(),
        Val::I(e) => iexpr_variants(e).into_iter().map(Val::I).collect(),
    }
}

fn iexpr_variants(e: &IExpr) -> Vec<IExpr> {
    let mut out = Vec::new();
    match e {
        IExpr::Lit(v) => {
            if *v > 1 {
                out.push(IExpr::Lit(1));
            }
        }
        IExpr::Var(_) => {
            out.push(IExpr::Lit(1));
            out.push(IExpr::Lit(0));
        }
        IExpr::Add(a, b) => {
            out.push((**a).clone());
            out.push((**b).clone());
        }
        IExpr::Mul(a, _) | IExpr::Rem(a, _) => out.push((**a).clone()),
    }
    out
}

/// Float variables read inside `e`.
fn vars_in(e: &FExpr, out: &mut Vec<String>) {
    let mut push = |s: &str| {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    };
    match e {
        FExpr::Var(n) => push(&n.s),
        FExpr::Neg(a) | FExpr::Powi(_, a, _) => vars_in(a, out),
        FExpr::Bin(_, a, b) => {
            vars_in(a, out);
            vars_in(b, out);
        }
        FExpr::Call(_, _, args) => args.iter().for_each(|a| vars_in(a, out)),
        FExpr::If(_, t, e) => {
            vars_in(&t.tail, out);
            vars_in(&e.tail, out);
        }
        FExpr::Block(b) => vars_in(&b.tail, out),
        FExpr::Apply(_, args) => {
            for a in args {
                if let Arg::F(e) = a {
                    vars_in(e, out);
                }
            }
        }
        _ => {}
    }
}

fn fexpr_variants(e: &FExpr) -> Vec<FExpr> {
    let mut out = Vec::new();
    let one = || FExpr::Lit("1.0".into());
    let composite = !matches!(e, FExpr::Var(_) | FExpr::Lit(_) | FExpr::Pi);
    if composite {
        out.push(one());
        let mut vars = Vec::new();
        vars_in(e, &mut vars);
        for v in vars {
            out.push(FExpr::Var(Name::new(&v)));
        }
    }
    match e {
        FExpr::Var(_) | FExpr::Pi => out.push(one()),
        FExpr::Lit(_) | FExpr::Deref(_) | FExpr::Len(_) | FExpr::Sum(_) | FExpr::Elem(_) => {}
        FExpr::Product(n) => out.push(FExpr::Sum(n.clone())),
        FExpr::Reduce(src, r) => out.extend(reduce_variants(src, r)),
        FExpr::Count(pr) => {
            for rhs in fexpr_variants(&pr.rhs) {
                out.push(FExpr::Count(Box::new(Pred {
                    rhs,
                    ..(**pr).clone()
                })));
            }
        }
        FExpr::Index(n, i) => {
            for i2 in iexpr_variants(i) {
                out.push(FExpr::Index(n.clone(), i2));
            }
        }
        FExpr::Apply(f, args) => {
            for (i, a) in args.iter().enumerate() {
                let Arg::F(e) = a else { continue };
                out.push(e.clone());
                for e2 in fexpr_variants(e) {
                    let mut v = args.clone();
                    v[i] = Arg::F(e2);
                    out.push(FExpr::Apply(f.clone(), v));
                }
            }
        }
        FExpr::Cast(i) => {
            for i2 in iexpr_variants(i) {
                out.push(FExpr::Cast(i2));
            }
        }
        FExpr::Neg(a) => {
            out.push((**a).clone());
            for a2 in fexpr_variants(a) {
                out.push(FExpr::Neg(Box::new(a2)));
            }
        }
        FExpr::Bin(op, a, b) => {
            out.push((**a).clone());
            out.push((**b).clone());
            for a2 in fexpr_variants(a) {
                out.push(FExpr::Bin(*op, Box::new(a2), b.clone()));
            }
            for b2 in fexpr_variants(b) {
                out.push(FExpr::Bin(*op, a.clone(), Box::new(b2)));
            }
        }
        FExpr::Call(f, path, args) => {
            if *path {
                out.push(FExpr::Call(*f, false, args.clone()));
            }
            for a in args {
                out.push(a.clone());
            }
            for i in 0..args.len() {
                for a2 in fexpr_variants(&args[i]) {
                    let mut v = args.clone();
                    v[i] = a2;
                    out.push(FExpr::Call(*f, *path, v));
                }
            }
        }
        FExpr::Powi(path, a, n) => {
            if *path {
                out.push(FExpr::Powi(false, a.clone(), *n));
            }
            out.push((**a).clone());
            if *n != 1 {
                out.push(FExpr::Powi(*path, a.clone(), 1));
            }
            for a2 in fexpr_variants(a) {
                out.push(FExpr::Powi(*path, Box::new(a2), *n));
            }
        }
        FExpr::If(c, t, e) => {
            out.push(FExpr::Block(t.clone()));
            out.push(FExpr::Block(e.clone()));
            for c2 in cond_variants(c) {
                out.push(FExpr::If(Box::new(c2), t.clone(), e.clone()));
            }
            for t2 in fblock_variants(t) {
                out.push(FExpr::If(c.clone(), Box::new(t2), e.clone()));
            }
            for e2 in fblock_variants(e) {
                out.push(FExpr::If(c.clone(), t.clone(), Box::new(e2)));
            }
        }
        FExpr::Block(b) => {
            for b2 in fblock_variants(b) {
                out.push(FExpr::Block(Box::new(b2)));
            }
        }
    }
    out
}

/// A plainer reduction: the sum of the array walked, a sum for a product,
/// a simpler closure or initial value.
fn reduce_variants(src: &Source, r: &Reduce) -> Vec<FExpr> {
    let mut out = Vec::new();
    let mk = |r: Reduce| FExpr::Reduce(Box::new(src.clone()), Box::new(r));
    if let Source::Iter { arr, filter, .. } = src {
        out.push(FExpr::Sum(arr.clone()));
        if filter.is_some() {
            let mut plain = src.clone();
            if let Source::Iter { filter, .. } = &mut plain {
                *filter = None;
            }
            out.push(FExpr::Reduce(Box::new(plain), Box::new(r.clone())));
        }
    }
    match r {
        Reduce::Map { prod: true, body } => out.push(mk(Reduce::Map {
            prod: false,
            body: body.clone(),
        })),
        Reduce::Fold { init, acc, body } => {
            for i2 in fexpr_variants(init) {
                out.push(mk(Reduce::Fold {
                    init: i2,
                    acc: acc.clone(),
                    body: body.clone(),
                }));
            }
        }
        Reduce::Extreme { body, .. } | Reduce::By { body, .. } => out.push(mk(Reduce::Map {
            prod: false,
            body: body.clone(),
        })),
        Reduce::Map { .. } => {}
    }
    for b2 in fblock_variants(r.body()) {
        let mut r2 = r.clone();
        *r2.body_mut() = b2;
        out.push(mk(r2));
    }
    out
}

fn fblock_variants(b: &FBlock) -> Vec<FBlock> {
    let mut out = Vec::new();
    for s2 in stmts_variants(&b.stmts) {
        out.push(FBlock {
            stmts: s2,
            tail: b.tail.clone(),
        });
    }
    for t2 in fexpr_variants(&b.tail) {
        out.push(FBlock {
            stmts: b.stmts.clone(),
            tail: t2,
        });
    }
    out
}

fn cond_variants(c: &Cond) -> Vec<Cond> {
    let mut out = Vec::new();
    match c {
        Cond::And(a, b) | Cond::Or(a, b) => {
            out.push((**a).clone());
            out.push((**b).clone());
            let both = |a: Cond, b: Cond| match c {
                Cond::And(..) => Cond::And(Box::new(a), Box::new(b)),
                _ => Cond::Or(Box::new(a), Box::new(b)),
            };
            for a2 in cond_variants(a) {
                out.push(both(a2, (**b).clone()));
            }
            for b2 in cond_variants(b) {
                out.push(both((**a).clone(), b2));
            }
        }
        Cond::Not(a) => {
            out.push((**a).clone());
            for a2 in cond_variants(a) {
                out.push(Cond::Not(Box::new(a2)));
            }
        }
        Cond::F(op, a, b) => {
            for a2 in fexpr_variants(a) {
                out.push(Cond::F(*op, a2, b.clone()));
            }
            for b2 in fexpr_variants(b) {
                out.push(Cond::F(*op, a.clone(), b2));
            }
        }
        Cond::I(op, a, b) => {
            for a2 in iexpr_variants(a) {
                out.push(Cond::I(*op, a2, b.clone()));
            }
            for b2 in iexpr_variants(b) {
                out.push(Cond::I(*op, a.clone(), b2));
            }
        }
        Cond::Var(_) => {}
        Cond::Some(sp) => {
            if sp.guard.is_some() {
                out.push(Cond::Some(Box::new(SomePat {
                    guard: None,
                    ..(**sp).clone()
                })));
            }
        }
        Cond::Any(pr) => {
            for rhs in fexpr_variants(&pr.rhs) {
                out.push(Cond::Any(Box::new(Pred {
                    rhs,
                    ..(**pr).clone()
                })));
            }
        }
    }
    out
}
