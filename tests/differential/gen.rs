//! Random differentiable programs over the language `#[differentiate]`
//! supports, from a seed.
//!
//! Functions that are only defined (or only smooth) on part of the line get
//! arguments built to stay inside it: `ln` of `e * e + 0.5`, `asin` of
//! `e.sin() * 0.9`, `acosh` of a positive value plus one, `exp` of a bounded
//! value. What can still go wrong at a particular point (a comparison that is
//! almost a tie, an argument of `cbrt` near zero, a value that grew huge in a
//! loop) is detected when the point is tried, and the point is rejected.
//!
//! Every loop terminates: `for` ranges are small, and `while` / `loop` carry a
//! counter that is incremented first thing in the body, so `continue` cannot
//! skip it.

use super::ast::*;
use super::rng::Rng;
use super::tidy;

/// Float local names, then names the macro might also want for what it
/// generates (`out`, `t1`, `d_x`, `tape_s`...), used now and then to catch
/// hygiene bugs.
const FLOAT_NAMES: &[&str] = &[
    "a", "b", "c", "d", "e", "g", "h", "p", "q", "r", "s", "t", "u", "v", "acc",
];
const TRICKY_FLOAT_NAMES: &[&str] = &[
    "out", "t1", "t2", "d_x", "d_y", "d_a", "d_out", "tape_s", "value", "took", "s_1", "x_1",
    "y_new", "d_s_new", "iters1", "tape_a",
];
const INT_NAMES: &[&str] = &["k", "m", "cnt", "idx"];
const TRICKY_INT_NAMES: &[&str] = &["iters1", "i_next", "tape_i", "left1"];
const LITERALS: &[&str] = &[
    "0.5", "1.5", "2.0", "0.25", "0.1", "3.0", "0.75", "1.25", "0.3", "2.5", "0.9", "1.0", "0.01",
    "4.0", "0.6", "0.0", "1.75", "0.05",
];

/// Local buffers, index variables and element bindings: apart from the
/// float names, so that no walk or store is ever aimed at a float.
const BUF_NAMES: &[&str] = &["buf", "vs", "cells", "tmp", "vals"];
const INDEX_NAMES: &[&str] = &["i", "j", "l"];
const ELEM_NAMES: &[&str] = &["wi", "el", "xi", "elem"];
/// Every array the programs see has at least this many elements, so a
/// helper's slice parameter can take any of them.
const MIN_LEN: usize = 2;

#[derive(Clone, Debug)]
struct Slot {
    name: String,
    ty: Ty,
    /// Can be assigned to (a `let` or a float parameter; for an array, a
    /// local buffer, whose elements can be stored to).
    assignable: bool,
    /// Initialised (a `let x;` becomes readable once assigned on all paths).
    ready: bool,
    /// The variable of an enclosing `for`.
    loop_var: bool,
    /// A parameter (overwriting it before reading it draws a warning).
    param: bool,
    /// An array's length; an index's exclusive upper bound.
    len: usize,
    /// An array passed and walked as `&v` (it is not a reference).
    amp: bool,
    /// How an array is held, which decides how it can be copied.
    shape: Shape,
    /// A closure's `&f64` parameter, read bare in arithmetic.
    closure: bool,
}

/// How an array is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    NotArray,
    Param(ArrTy),
    LocalVec,
    LocalArray,
    /// A struct's array field (`cfg.w`, `self.c`): indexed, summed, its
    /// indices walked and passed to helpers, but not walked by element nor
    /// copied (see `Gen::data_slots`).
    Field,
}

/// Which of the array and call features a program uses.
#[derive(Clone, Copy, Debug, Default)]
struct Features {
    array_params: bool,
    buffers: bool,
    helpers: bool,
    /// Closures (`map`, `fold`, `any`...), `collect`, copies and `push`.
    iterators: bool,
}

/// What a call of a helper must pass: floats, arrays (of any length, all
/// being at least `MIN_LEN` long), and the settings struct.
#[derive(Clone, Debug)]
struct HelperSig {
    name: String,
    kinds: Vec<Ty>,
}

/// Which programs read structs of constants. Drawn from a generator of
/// their own, so that a program using neither is the one the same seed gave
/// before they existed.
#[derive(Clone, Copy, Debug, Default)]
struct DataUse {
    /// A `cfg: &Cfg` parameter (`Cfg` by value when `data.copy`), passed on
    /// to some helpers.
    cfg: bool,
    /// `f` is a method of `Model`.
    method: bool,
    data: Data,
    /// `f` differentiates with respect to `cfg` (then no helper takes it).
    wrt_cfg: bool,
    /// `f` differentiates with respect to `self`.
    wrt_self: bool,
    /// With a struct in `wrt(..)`, the float parameters are left out.
    struct_only: bool,
}

pub struct Gen {
    rng: Rng,
    scopes: Vec<Vec<Slot>>,
    loops: usize,
    /// Statements left to generate.
    budget: i64,
    guards: usize,
    /// Inside a block expression: only its own locals may be written.
    in_fblock: usize,
    /// Nesting of statements.
    depth: usize,
    features: Features,
    /// The helpers the function being generated may call.
    callable: Vec<HelperSig>,
    /// Arrays an enclosing loop walks by element: borrowed, so not stored to.
    borrowed: Vec<String>,
    /// Nesting of closures (a closure holds no reduction of its own).
    in_closure: usize,
    /// Every draw about structs of constants.
    side: Rng,
    uses: DataUse,
    /// Every draw about differentiating with respect to a struct, apart
    /// from `side`, so that a program without it is the one its seed gave
    /// before it existed.
    wrt_side: Rng,
    /// Generating the value of an integer `let` or assignment: the integer
    /// fields of a differentiated struct are not read there (the macro
    /// would take such a field for a float).
    int_value: bool,
    /// Every draw about helpers writing into an output buffer, apart from
    /// the others, so that a program without one is the one its seed gave
    /// before they existed.
    out_side: Rng,
    /// Every draw about patterns on integer data (`if let Some(m) =
    /// n.checked_sub(1)`, `match`), apart from the others.
    pat_side: Rng,
    /// This program matches patterns.
    pat_on: bool,
    /// Every draw about `filter` in reductions, apart from the others.
    filt_side: Rng,
    /// This program filters what it sums.
    filt_on: bool,
    /// Every draw about `max_by`/`min_by` in reductions, apart from the
    /// others.
    by_side: Rng,
    /// Every draw about views and helpers with several outputs
    /// (`views.rs`), apart from the others.
    view_side: Rng,
    /// The draws of the forms of views added later, apart from
    /// `view_side`.
    view_more: Rng,
    /// Every draw about a value that is a loop's sum (`sum_of_terms`),
    /// apart from the others.
    sum_side: Rng,
}

/// The seed of program number `index`: well mixed, so that neighbouring indices
/// give unrelated programs.
pub fn program_seed(index: u64) -> u64 {
    Rng::new(index ^ 0x6772_6164_6D61_6372).next_u64()
}

/// The program of a seed, tidied; `Err` only if the generator produced
/// something invalid (a bug of the generator, reported by the caller).
pub fn program(seed: u64) -> Result<Program, String> {
    let mut g = Gen {
        rng: Rng::new(seed),
        scopes: vec![Vec::new()],
        loops: 0,
        budget: 0,
        guards: 0,
        in_fblock: 0,
        depth: 0,
        features: Features::default(),
        callable: Vec::new(),
        borrowed: Vec::new(),
        in_closure: 0,
        side: Rng::new(seed ^ 0x5374_7275_6374_7321),
        uses: DataUse::default(),
        wrt_side: Rng::new(seed ^ 0x5772_7453_7472_7563),
        int_value: false,
        out_side: Rng::new(seed ^ 0x4f75_7442_7566_6572),
        pat_side: Rng::new(seed ^ 0x5061_7474_6572_6e73),
        pat_on: false,
        filt_side: Rng::new(seed ^ 0x4669_6c74_6572_5f73),
        filt_on: false,
        by_side: Rng::new(seed ^ 0x4d61_7842_795f_6f6e),
        view_side: Rng::new(seed ^ 0x5669_6577_735f_6f66),
        view_more: Rng::new(seed ^ 0x5265_736c_6963_6573),
        sum_side: Rng::new(seed ^ 0x5375_6d5f_6f66_5f74),
    };
    // A draw that tidying rejects (rare: say a parameter overwritten before
    // it is read) is replaced by the next draw of the same generator.
    let mut last = String::new();
    for _ in 0..20 {
        g.reset();
        let mut p = g.program();
        let raw = p.source();
        let tidied = tidy::tidy(&mut p)
            .and_then(|()| {
                // What tidying removed may have been the only use of a parameter.
                g.use_every_param(&mut p);
                for h in &mut p.helpers {
                    g.use_every_param(h);
                }
                tidy::tidy(&mut p)
            })
            .and_then(|()| g.read_struct_floats(&mut p));
        match tidied {
            Ok(()) => return Ok(p),
            Err(e) => last = format!("{e}, in\n{raw}"),
        }
    }
    Err(last)
}

impl Gen {
    fn reset(&mut self) {
        self.scopes = vec![Vec::new()];
        self.loops = 0;
        self.depth = 0;
        self.in_fblock = 0;
        self.in_closure = 0;
        self.borrowed.clear();
    }

    fn program(&mut self) -> Program {
        self.guards = 0;
        self.callable = Vec::new();
        self.pat_on = self.pat_side.chance(0.2);
        self.filt_on = self.filt_side.chance(0.7);
        self.uses = self.draw_data_use();
        self.features = self.draw_features();
        let mut helpers = Vec::new();
        if self.features.helpers {
            let n = 1 + usize::from(self.rng.chance(0.3));
            for k in 1..=n {
                helpers.push(self.helper(k));
            }
        }
        self.callable = helpers.iter().map(signature_of).collect();
        let mut params = self.scalar_params();
        if self.features.array_params {
            params.extend(self.array_params(&params));
        }
        if params.iter().all(|p| !p.ty.floats()) {
            params.push(float_param("x"));
        }
        // Shuffle (Fisher-Yates).
        for i in (1..params.len()).rev() {
            let j = self.rng.below(i + 1);
            params.swap(i, j);
        }
        let wrt = self.wrt(&params);
        let wrt = self.struct_wrt(&params, wrt);
        if self.uses.cfg {
            let at = self.side.below(params.len() + 1);
            params.insert(at, cfg_param(self.uses.data));
        }
        let method = self.uses.method;
        let (body, tail) = self.function_body(&params, method, 4, 26, 2, 10);
        for h in &mut helpers {
            h.data = self.uses.data;
        }
        let mut p = Program {
            helpers,
            name: "f".into(),
            wrt,
            receiver: method.then(|| Name::new("self")),
            data: self.uses.data,
            params,
            body,
            tail,
        };
        // Drawn from `out_side` alone (the main generator swapped out).
        std::mem::swap(&mut self.rng, &mut self.out_side);
        self.out_buffer_calls(&mut p);
        std::mem::swap(&mut self.rng, &mut self.out_side);
        super::views::splice(&mut self.view_side, &mut self.view_more, &mut p);
        p
    }

    /// About one program in seven also calls a helper writing into an
    /// output buffer, `h1(x, &w, &mut ob[1..4]);`, once or twice, on a
    /// local buffer `ob` the value then reads.
    fn out_buffer_calls(&mut self, p: &mut Program) {
        if !self.rng.chance(0.15) {
            return;
        }
        // Where to call it: at the top level, before the tail or the
        // final `return`, after no `let` that makes an integer of a float
        // parameter.
        let end = match (&p.tail, p.body.last()) {
            (Some(_), _) => p.body.len(),
            (None, Some(Stmt::Return(_))) => p.body.len() - 1,
            _ => return,
        };
        let at = self.rng.below(end + 1);
        let rebound: Vec<String> = p.body[..at]
            .iter()
            .filter_map(|s| match s {
                Stmt::Let { name, ty, .. } if *ty != Ty::F => Some(name.s.clone()),
                _ => None,
            })
            .collect();
        let floats: Vec<String> = p
            .params
            .iter()
            .filter(|q| q.ty == PTy::F64 && !rebound.contains(&q.name.s))
            .map(|q| q.name.s.clone())
            .collect();
        // An array parameter shadowed by a local copy (`let mut w =
        // w.to_vec();`) is lent as `&w`.
        let copied: Vec<String> = p.body[..at]
            .iter()
            .filter_map(|s| match s {
                Stmt::LetArr { name, .. } | Stmt::LetPush { name, .. } => Some(name.s.clone()),
                _ => None,
            })
            .collect();
        let arrays: Vec<(String, bool)> = p
            .params
            .iter()
            .filter(|q| matches!(q.ty, PTy::Arr(..)) && !rebound.contains(&q.name.s))
            .map(|q| {
                let amp = q.ty.owned_array() || copied.contains(&q.name.s);
                (q.name.s.clone(), amp)
            })
            .collect();
        if floats.is_empty() && arrays.is_empty() {
            return;
        }
        let h = self.out_helper(!arrays.is_empty());
        let kinds: Vec<Ty> = h
            .params
            .iter()
            .filter(|q| !matches!(q.ty, PTy::Out(_)))
            .map(|q| q.ty.ty())
            .collect();
        // The buffer.
        let len = self.rng.range(MIN_LEN as i64, 5) as usize;
        let vec = self.rng.chance(0.6);
        let init = if self.rng.chance(0.5) {
            ArrInit::Zeros { vec, len, of: None }
        } else {
            let elems = (0..len).map(|_| self.out_arg(&floats)).collect();
            ArrInit::List { vec, elems }
        };
        let buf = Name::new("ob");
        let mut stmts = vec![Stmt::LetArr {
            name: buf.clone(),
            mutable: true,
            annot: false,
            init,
        }];
        let calls = 1 + usize::from(self.rng.chance(0.3));
        for _ in 0..calls {
            let args = kinds
                .iter()
                .map(|k| match k {
                    Ty::A => {
                        let (a, amp) = self.rng.pick(&arrays).clone();
                        Arg::A(Name::new(&a), amp)
                    }
                    _ => Arg::F(self.out_arg(&floats)),
                })
                .collect();
            let range = if len > MIN_LEN && self.rng.chance(0.5) {
                let lo = self.rng.below(len - MIN_LEN + 1);
                let hi = self.rng.range((lo + MIN_LEN) as i64, len as i64) as usize;
                Some((lo, hi))
            } else {
                None
            };
            stmts.push(Stmt::CallOut {
                name: buf.clone(),
                range,
                call: FExpr::Apply(h.name.clone(), args),
            });
        }
        let read = if self.rng.chance(0.5) {
            FExpr::Sum(buf.clone())
        } else {
            FExpr::Index(buf.clone(), IExpr::Lit(self.rng.below(len) as i64))
        };
        let op = *self.rng.pick(&[FOp::Add, FOp::Sub, FOp::Mul]);
        let with = |e: FExpr| FExpr::Bin(op, Box::new(e), Box::new(read.clone()));
        match &mut p.tail {
            Some(t) => *t = with(t.clone()),
            None => {
                if let Some(Stmt::Return(e)) = p.body.last_mut() {
                    *e = with(e.clone());
                }
            }
        }
        p.body.splice(at..at, stmts);
        p.helpers.push(h);
    }

    /// An argument of an output helper's call in `f`: a float parameter,
    /// scaled or through a function, or a literal.
    fn out_arg(&mut self, floats: &[String]) -> FExpr {
        if floats.is_empty() || self.rng.chance(0.2) {
            return FExpr::Lit(self.lit());
        }
        let v = FExpr::Var(Name::new(&self.rng.pick(floats).clone()));
        match self.rng.below(3) {
            0 => v,
            1 => FExpr::Bin(FOp::Mul, Box::new(v), Box::new(FExpr::Lit(self.lit()))),
            _ => FExpr::Call(*self.rng.pick(&[Fun::Sin, Fun::Tanh]), false, vec![v]),
        }
    }

    /// `h1(x[, y][, w: &[f64]], out: &mut [f64])`, returning nothing:
    /// every element of `out` updated from itself in a loop over its
    /// indices, and now and then its first two elements mixed.
    fn out_helper(&mut self, with_array: bool) -> Program {
        self.reset();
        let mut params = vec![float_param("x")];
        if self.rng.chance(0.4) {
            params.push(float_param("y"));
        }
        if with_array && self.rng.chance(0.6) {
            params.push(Param {
                name: Name::new("w"),
                ty: PTy::Arr(ArrTy::Slice, MIN_LEN),
                mutable: false,
            });
        }
        let out = Name::new("out");
        params.push(Param {
            name: out.clone(),
            ty: PTy::Out(MIN_LEN),
            mutable: false,
        });
        let callable = std::mem::take(&mut self.callable);
        let borrowed = std::mem::take(&mut self.borrowed);
        for q in &params {
            if matches!(q.ty, PTy::Out(_)) {
                continue;
            }
            self.scopes[0].push(Slot {
                name: q.name.s.clone(),
                ty: q.ty.ty(),
                assignable: false,
                ready: true,
                loop_var: false,
                param: true,
                len: if q.ty == PTy::F64 { 0 } else { MIN_LEN },
                amp: false,
                shape: match q.ty {
                    PTy::Arr(kind, _) => Shape::Param(kind),
                    _ => Shape::NotArray,
                },
                closure: false,
            });
        }
        self.budget = 2;
        self.scopes.push(Vec::new());
        let mut body = Vec::new();
        if self.rng.chance(0.3) {
            let init = self.fexpr(1);
            self.declare("t", Ty::F, false, true);
            body.push(Stmt::Let {
                name: Name::new("t"),
                ty: Ty::F,
                annot: false,
                mutable: false,
                init: Some(Val::F(init)),
            });
        }
        // `for i in 0..out.len()`: `i` may pass any array's length, so it
        // indexes `out` alone (others by `(i + 1) % n`).
        self.scopes.push(Vec::new());
        self.declare_sized("i", Ty::U, false, true, usize::MAX / 2);
        let me = FExpr::Index(out.clone(), IExpr::Var(Name::new("i")));
        let f1 = self.factor();
        let f2 = self.fexpr(1);
        let val = match self.rng.below(3) {
            0 => FExpr::Bin(
                FOp::Add,
                Box::new(FExpr::Bin(FOp::Mul, Box::new(me), Box::new(f1))),
                Box::new(f2),
            ),
            1 => self.through_fun(me, f2),
            _ => FExpr::Bin(
                FOp::Add,
                Box::new(FExpr::Bin(FOp::Mul, Box::new(me), Box::new(f1))),
                Box::new(FExpr::Var(Name::new("x"))),
            ),
        };
        let op = if self.rng.chance(0.2) {
            AOp::Add
        } else {
            AOp::Set
        };
        let store = Stmt::Store {
            name: out.clone(),
            index: IExpr::Var(Name::new("i")),
            op,
            val,
        };
        self.scopes.pop();
        body.push(Stmt::ForArr {
            walk: Walk::Indices,
            idx: Name::new("i"),
            elem: Name::new("_"),
            arr: out.clone(),
            amp: false,
            rev: self.rng.chance(0.2),
            body: vec![store],
        });
        if self.rng.chance(0.4) {
            // An element written from another one: `out[1] += out[0] * e`.
            let k = self.rng.below(MIN_LEN) as i64;
            let other = FExpr::Index(out.clone(), IExpr::Lit(1 - k));
            let e = self.fexpr(1);
            body.push(Stmt::Store {
                name: out.clone(),
                index: IExpr::Lit(k),
                op: AOp::Add,
                val: FExpr::Bin(FOp::Mul, Box::new(other), Box::new(e)),
            });
        }
        self.scopes.pop();
        self.reset();
        self.callable = callable;
        self.borrowed = borrowed;
        Program {
            helpers: Vec::new(),
            name: "h1".into(),
            wrt: None,
            receiver: None,
            data: self.uses.data,
            params,
            body,
            tail: None,
        }
    }

    /// About a fifth of the programs take a settings struct, about one in
    /// eight is a method (a few both).
    fn draw_data_use(&mut self) -> DataUse {
        let r = &mut self.side;
        let cfg = r.chance(0.2);
        let method = r.chance(0.12);
        let data = Data {
            copy: r.chance(0.35),
            i32: r.chance(0.4),
        };
        // About two in five of those differentiate with respect to them.
        let w = &mut self.wrt_side;
        let (wrt_cfg, wrt_self, struct_only) = (w.chance(0.4), w.chance(0.4), w.chance(0.25));
        DataUse {
            cfg,
            method,
            data,
            wrt_cfg: cfg && wrt_cfg,
            wrt_self: method && wrt_self,
            struct_only,
        }
    }

    /// With a struct differentiated: `wrt(self, cfg, ..)`, the floats
    /// being those `wrt` named (all when it named none), or none.
    fn struct_wrt(&mut self, params: &[Param], wrt: Option<Vec<String>>) -> Option<Vec<String>> {
        let u = self.uses;
        if !u.wrt_cfg && !u.wrt_self {
            return wrt;
        }
        let mut names: Vec<String> = Vec::new();
        if u.wrt_self {
            names.push("self".into());
        }
        if u.wrt_cfg {
            names.push("cfg".into());
        }
        if !u.struct_only {
            names.extend(wrt.unwrap_or_else(|| {
                params
                    .iter()
                    .filter(|p| p.ty.floats())
                    .map(|p| p.name.s.clone())
                    .collect()
            }));
        }
        if self.wrt_side.chance(0.3) {
            names.rotate_left(1);
        }
        Some(names)
    }

    /// Each differentiated struct gets a float field read as a value (else
    /// the macro has nothing to differentiate), and a float field passed
    /// whole to a call another read as a value (else the macro takes it for
    /// data): `+ cfg.scale` at the end.
    fn read_struct_floats(&mut self, p: &mut Program) -> Result<(), String> {
        for n in struct_reads(p).missing {
            let op = *self
                .wrt_side
                .pick(&[FOp::Add, FOp::Add, FOp::Sub, FOp::Mul]);
            let v = FExpr::Var(Name::new(&n));
            let with = |e: FExpr| FExpr::Bin(op, Box::new(e), Box::new(v.clone()));
            match &mut p.tail {
                Some(t) => *t = with(t.clone()),
                None => match p.body.last_mut() {
                    Some(Stmt::Return(e)) => *e = with(e.clone()),
                    _ => return Err("no tail to read a struct's float field in".into()),
                },
            }
        }
        tidy::resolve(&mut p.clone()).map(|_| ())
    }

    /// About a third of the programs use arrays, local buffers or calls,
    /// about a fifth closures and the other iterator forms (on arrays).
    fn draw_features(&mut self) -> Features {
        if !self.rng.chance(0.44) {
            let iterators = self.rng.chance(0.06);
            return Features {
                array_params: iterators,
                iterators,
                ..Features::default()
            };
        }
        loop {
            let mut f = Features {
                array_params: self.rng.chance(0.55),
                buffers: self.rng.chance(0.6),
                helpers: self.rng.chance(0.5),
                iterators: self.rng.chance(0.4),
            };
            f.array_params |= f.iterators && self.rng.chance(0.8);
            if f.array_params || f.buffers || f.helpers {
                return f;
            }
        }
    }

    /// The float parameters (`x`, `y`, `z`, now and then named like what
    /// the macro generates), and now and then an integer `n` and a `flag`.
    fn scalar_params(&mut self) -> Vec<Param> {
        let r = &mut self.rng;
        let mut nf = 1 + r.weighted(&[25, 45, 30]);
        if self.features.array_params && r.chance(0.25) {
            // The array alone: a gradient that is a bare `Vec`.
            nf = 0;
        }
        let mut params: Vec<Param> = Vec::new();
        let mut float_names = ["x", "y", "z"];
        if nf > 0 && r.chance(0.06) {
            let tricky = *r.pick(&["d_out", "out", "value", "t1", "d_x"]);
            float_names[r.below(nf)] = tricky;
        }
        for name in float_names.iter().take(nf) {
            params.push(float_param(name));
        }
        if r.chance(0.35) {
            let ty = if r.chance(0.6) { PTy::Usize } else { PTy::I32 };
            // One integer type per program: the fields' is the parameter's.
            self.uses.data.i32 = ty == PTy::I32;
            params.push(Param {
                name: Name::new("n"),
                ty,
                mutable: false,
            });
        }
        if r.chance(0.2) {
            params.push(Param {
                name: Name::new("flag"),
                ty: PTy::Bool,
                mutable: false,
            });
        }
        params
    }

    /// One or two array parameters, mostly `&[f64]`, of length 2 to 5.
    fn array_params(&mut self, taken: &[Param]) -> Vec<Param> {
        let n = 1 + usize::from(self.rng.chance(0.25));
        let mut out = Vec::new();
        for name in ["w", "xs"].iter().take(n) {
            let kind = *self.rng.pick(&[
                ArrTy::Slice,
                ArrTy::Slice,
                ArrTy::Slice,
                ArrTy::VecRef,
                ArrTy::Array,
                ArrTy::ArrayRef,
            ]);
            let len = self.rng.range(MIN_LEN as i64, 5) as usize;
            if !taken.iter().any(|p| p.name.s == *name) {
                out.push(Param {
                    name: Name::new(name),
                    ty: PTy::Arr(kind, len),
                    mutable: false,
                });
            }
        }
        out
    }

    /// Now and then `wrt(..)` names some of the differentiable parameters.
    fn wrt(&mut self, params: &[Param]) -> Option<Vec<String>> {
        let floats: Vec<String> = params
            .iter()
            .filter(|p| p.ty.floats())
            .map(|p| p.name.s.clone())
            .collect();
        if floats.len() < 2 || !self.rng.chance(0.1) {
            return None;
        }
        let r = &mut self.rng;
        let mut keep: Vec<String> = floats.iter().filter(|_| r.chance(0.5)).cloned().collect();
        if keep.is_empty() || keep.len() == floats.len() {
            keep = vec![floats[r.below(floats.len())].clone()];
        }
        Some(keep)
    }

    /// The body and tail of a function of `params`: a budget of `lo..=hi`
    /// statements, `top_lo..=top_hi` of them at the top level.
    fn function_body(
        &mut self,
        params: &[Param],
        method: bool,
        lo: i64,
        hi: i64,
        top_lo: i64,
        top_hi: i64,
    ) -> (Vec<Stmt>, Option<FExpr>) {
        for p in params {
            let len = match p.ty {
                PTy::Arr(_, n) => n,
                _ => 0,
            };
            self.scopes[0].push(Slot {
                name: p.name.s.clone(),
                ty: p.ty.ty(),
                assignable: p.ty == PTy::F64,
                ready: true,
                loop_var: false,
                param: true,
                len,
                amp: p.ty.owned_array(),
                shape: match p.ty {
                    PTy::Arr(kind, _) => Shape::Param(kind),
                    _ => Shape::NotArray,
                },
                closure: false,
            });
            if matches!(p.ty, PTy::Cfg(_)) {
                self.data_slots("cfg");
            }
        }
        if method {
            self.data_slots("self");
        }
        self.budget = self.rng.range(lo, hi);
        let top = self.rng.range(top_lo, top_hi) as usize;
        self.scopes.push(Vec::new());
        let body = self.stmts(top);
        let (body, tail) = if !tidy::block_diverges(&body) && self.rng.chance(0.05) {
            let mut body = body;
            let e = self.tail();
            body.push(Stmt::Return(e));
            (body, None)
        } else if tidy::block_diverges(&body) {
            (body, None)
        } else {
            let t = self.tail();
            match self.sum_of_terms(&t) {
                Some((sum, value)) => {
                    let mut body = body;
                    body.extend(sum);
                    (body, Some(value))
                }
                None => (body, Some(t)),
            }
        };
        self.scopes.pop();
        (body, tail)
    }

    /// Now and then (draws of its own), the value is what a last loop
    /// sums: `let mut s = 0.0; for ti in range { let t = ..; s += t * c; }`
    /// (or `if cond { s += .. } else { s -= .. }`), then `s`, `s * 0.5` or
    /// `value + s`, the shape whose reverse runs inside the loop when it
    /// records nothing.
    fn sum_of_terms(&mut self, value: &FExpr) -> Option<(Vec<Stmt>, FExpr)> {
        if !self.sum_side.chance(0.2) {
            return None;
        }
        let acc = Name::new("sum_t");
        self.declare("sum_t", Ty::F, true, true);
        let hi = match self.visible(Ty::I).into_iter().find(|s| s.name == "n") {
            Some(n) if self.sum_side.chance(0.4) => IExpr::Var(Name::new(&n.name)),
            _ => IExpr::Lit(self.sum_side.range(1, 5)),
        };
        self.scopes.push(Vec::new());
        self.declare("ti", Ty::I, false, true);
        self.scopes.last_mut().unwrap().last_mut().unwrap().loop_var = true;
        self.loops += 1;
        self.depth += 1;
        let mut body = Vec::new();
        for _ in 0..1 + self.sum_side.below(2) {
            let name = self.fresh_name(Ty::F);
            let init = self.fexpr(2);
            body.push(Stmt::Let {
                name: Name::new(&name),
                ty: Ty::F,
                annot: false,
                mutable: false,
                init: Some(Val::F(init)),
            });
            self.declare(&name, Ty::F, false, true);
        }
        let terms: Vec<String> = self
            .scopes
            .last()
            .unwrap()
            .iter()
            .filter(|s| s.ty == Ty::F)
            .map(|s| s.name.clone())
            .collect();
        let term = |g: &mut Gen| {
            let t = FExpr::Var(Name::new(&g.sum_side.pick(&terms).clone()));
            let step = FExpr::Cast(IExpr::Var(Name::new("ti")));
            match g.sum_side.below(3) {
                0 => t,
                1 => FExpr::Bin(FOp::Mul, Box::new(t), Box::new(FExpr::Lit(g.lit()))),
                _ => FExpr::Bin(FOp::Add, Box::new(t), Box::new(step)),
            }
        };
        let add = |op, val| Stmt::Assign {
            name: acc.clone(),
            op,
            val: Val::F(val),
        };
        if self.sum_side.chance(0.4) {
            let cond = self.cond(1);
            let (a, b) = (term(self), term(self));
            body.push(Stmt::If {
                cond,
                then: vec![add(AOp::Add, a)],
                els: Some(vec![add(AOp::Sub, b)]),
            });
        } else {
            let t = term(self);
            body.push(add(AOp::Add, t));
        }
        self.depth -= 1;
        self.loops -= 1;
        self.scopes.pop();
        let stmts = vec![
            Stmt::Let {
                name: acc.clone(),
                ty: Ty::F,
                annot: false,
                mutable: true,
                init: Some(Val::F(FExpr::Lit("0.0".to_string()))),
            },
            Stmt::For {
                var: Name::new("ti"),
                range: Range {
                    lo: IExpr::Lit(0),
                    hi,
                    inclusive: false,
                    rev: false,
                    step: None,
                },
                body,
            },
        ];
        let sum = FExpr::Var(acc);
        let value = match self.sum_side.below(5) {
            0 | 1 => sum,
            2 => FExpr::Bin(
                FOp::Mul,
                Box::new(sum),
                Box::new(FExpr::Lit("0.5".to_string())),
            ),
            3 => FExpr::Bin(FOp::Add, Box::new(value.clone()), Box::new(sum)),
            _ => FExpr::Bin(FOp::Add, Box::new(sum), Box::new(value.clone())),
        };
        Some((stmts, value))
    }

    /// The fields of `owner` (`cfg`, `self`), readable, never written.
    fn data_slots(&mut self, owner: &str) {
        for (field, ty) in fields_of(owner).unwrap() {
            self.scopes[0].push(Slot {
                name: format!("{owner}.{field}"),
                ty: *ty,
                assignable: false,
                ready: true,
                loop_var: false,
                param: false,
                len: if *ty == Ty::A { DATA_LEN } else { 0 },
                amp: true,
                // `for v in cfg.w.iter()` and closures over `cfg.w` expand
                // to code that does not compile (the element of a struct's
                // array is bound by reference); `for &v in &cfg.w`, `.zip`,
                // `.enumerate()` and `.fold(.., |acc, &v| ..)` over it are
                // rejected by the macro: a field array is read by index,
                // unless `GRADMACRO_DIFFTEST_FIELD_WALKS` is set.
                shape: match ty {
                    Ty::A if field_walks() && self.uses.data.copy => Shape::LocalArray,
                    Ty::A if field_walks() => Shape::LocalVec,
                    Ty::A => Shape::Field,
                    _ => Shape::NotArray,
                },
                closure: false,
            });
        }
    }

    /// A helper `g<k>(x[, y][, w: &[f64]][, cfg])`, short, calling no helper.
    fn helper(&mut self, k: usize) -> Program {
        self.reset();
        let mut params = vec![float_param("x")];
        if self.rng.chance(0.5) {
            params.push(float_param("y"));
        }
        if self.rng.chance(0.5) {
            params.push(Param {
                name: Name::new("w"),
                ty: PTy::Arr(ArrTy::Slice, MIN_LEN),
                mutable: false,
            });
            if self.rng.chance(0.3) {
                params.remove(0);
            }
        }
        // A differentiated struct is read field by field: not passed whole.
        if self.uses.cfg && self.side.chance(0.6) && !self.uses.wrt_cfg {
            params.push(cfg_param(self.uses.data));
        }
        let (body, tail) = self.function_body(&params, false, 1, 8, 1, 4);
        self.reset();
        Program {
            helpers: Vec::new(),
            name: format!("g{k}"),
            wrt: None,
            receiver: None,
            data: self.uses.data,
            params,
            body,
            tail,
        }
    }

    /// The tail: an expression over a few of the visible float variables
    /// and arrays, so that what the body computed reaches the output.
    fn tail(&mut self) -> FExpr {
        let mut e = self.fexpr(2);
        let vars: Vec<String> = self.visible(Ty::F).into_iter().map(|s| s.name).collect();
        for v in vars {
            if self.rng.chance(0.6) {
                let op = *self.rng.pick(&[FOp::Add, FOp::Add, FOp::Sub, FOp::Mul]);
                e = FExpr::Bin(op, Box::new(e), Box::new(FExpr::Var(Name::new(&v))));
            }
        }
        if !self.callable.is_empty() && self.rng.chance(0.5) {
            let call = self.helper_calls(1);
            e = FExpr::Bin(FOp::Add, Box::new(e), Box::new(call));
        }
        for a in self.visible(Ty::A) {
            if self.rng.chance(0.6) {
                let read = if self.rng.chance(0.6) {
                    FExpr::Sum(Name::new(&a.name))
                } else {
                    let k = self.rng.below(a.len) as i64;
                    FExpr::Index(Name::new(&a.name), IExpr::Lit(k))
                };
                let op = *self.rng.pick(&[FOp::Add, FOp::Sub, FOp::Mul]);
                e = FExpr::Bin(op, Box::new(e), Box::new(read));
            }
        }
        e
    }

    /// Adds each unread float parameter to the value (a parameter that never
    /// reaches the output is legal, but a gradient of zeros tests little).
    fn use_every_param(&mut self, p: &mut Program) {
        let mut probe = p.clone();
        let Ok(info) = tidy::resolve(&mut probe) else {
            return;
        };
        for q in &probe.params {
            if matches!(q.ty, PTy::Cfg(_)) && info.reads[q.name.id] == 0 {
                // A settings struct no field of which is read tests nothing.
                let name = q.name.s.trim_start_matches('_').to_string();
                for r in &mut p.params {
                    if r.name.s == q.name.s {
                        r.name.s = name.clone();
                    }
                }
                for w in p.wrt.iter_mut().flatten() {
                    if *w == q.name.s {
                        *w = name.clone();
                    }
                }
                let v = FExpr::Var(Name::new(&format!("{name}.scale")));
                let add = |e: FExpr| FExpr::Bin(FOp::Mul, Box::new(e), Box::new(v.clone()));
                match &mut p.tail {
                    Some(t) => *t = add(t.clone()),
                    None => {
                        if let Some(Stmt::Return(e)) = p.body.last_mut() {
                            *e = add(e.clone());
                        }
                    }
                }
            }
            if q.ty.floats() && info.reads[q.name.id] == 0 {
                let name = q.name.s.trim_start_matches('_');
                for r in &mut p.params {
                    if r.name.s == q.name.s {
                        r.name.s = name.to_string();
                    }
                }
                if let Some(w) = &mut p.wrt {
                    for n in w.iter_mut() {
                        if *n == q.name.s {
                            *n = name.to_string();
                        }
                    }
                }
                let n = Name::new(name);
                let v = match q.ty {
                    PTy::F64 => FExpr::Var(n),
                    _ if self.rng.chance(0.5) => FExpr::Sum(n),
                    _ => FExpr::Index(n, IExpr::Lit(0)),
                };
                let v = if self.rng.chance(0.5) {
                    FExpr::Call(Fun::Sin, false, vec![v])
                } else {
                    v
                };
                let add = |e: FExpr| FExpr::Bin(FOp::Add, Box::new(e), Box::new(v.clone()));
                match &mut p.tail {
                    Some(t) => *t = add(t.clone()),
                    None => {
                        if let Some(Stmt::Return(e)) = p.body.last_mut() {
                            *e = add(e.clone());
                        }
                    }
                }
            }
        }
    }

    // -- scopes --------------------------------------------------------------

    fn visible(&self, ty: Ty) -> Vec<Slot> {
        let mut out: Vec<Slot> = Vec::new();
        for scope in self.scopes.iter().rev() {
            for s in scope.iter().rev() {
                if out.iter().any(|o| o.name == s.name) {
                    continue;
                }
                out.push(s.clone());
            }
        }
        out.retain(|s| s.ty == ty && s.ready);
        out
    }

    fn all_names(&self) -> Vec<String> {
        self.scopes
            .iter()
            .flatten()
            .map(|s| s.name.clone())
            .collect()
    }

    fn declare(&mut self, name: &str, ty: Ty, assignable: bool, ready: bool) {
        self.declare_sized(name, ty, assignable, ready, 0);
    }

    /// `len`: an array's length, an index's bound.
    fn declare_sized(&mut self, name: &str, ty: Ty, assignable: bool, ready: bool, len: usize) {
        self.scopes.last_mut().unwrap().push(Slot {
            name: name.to_string(),
            ty,
            assignable,
            ready,
            loop_var: false,
            param: false,
            len,
            amp: ty == Ty::A,
            shape: if ty == Ty::A {
                Shape::LocalVec
            } else {
                Shape::NotArray
            },
            closure: false,
        });
    }

    /// A local array of `len` elements, held as `shape`.
    fn declare_array(&mut self, name: &str, len: usize, shape: Shape) {
        self.declare_sized(name, Ty::A, true, true, len);
        self.scopes.last_mut().unwrap().last_mut().unwrap().shape = shape;
    }

    /// A name from `pool` not visible anywhere, else `<pool[0]><k>`.
    fn fresh_from(&mut self, pool: &[&str]) -> String {
        let taken = self.all_names();
        let free: Vec<&str> = pool
            .iter()
            .copied()
            .filter(|n| !taken.iter().any(|t| t == n))
            .collect();
        if !free.is_empty() {
            return self.rng.pick(&free).to_string();
        }
        (1..)
            .map(|i| format!("{}{i}", pool[0]))
            .find(|n| !taken.contains(n))
            .unwrap()
    }

    fn set_ready(&mut self, name: &str) {
        for scope in self.scopes.iter_mut().rev() {
            if let Some(s) = scope.iter_mut().rev().find(|s| s.name == name) {
                s.ready = true;
                return;
            }
        }
    }

    fn fresh_name(&mut self, ty: Ty) -> String {
        let taken = self.all_names();
        let (plain, tricky) = match ty {
            Ty::F => (FLOAT_NAMES, TRICKY_FLOAT_NAMES),
            _ => (INT_NAMES, TRICKY_INT_NAMES),
        };
        let pool = if self.rng.chance(0.08) { tricky } else { plain };
        for _ in 0..8 {
            let n = *self.rng.pick(pool);
            if !taken.iter().any(|t| t == n) {
                return n.to_string();
            }
        }
        let base = match ty {
            Ty::F => "v",
            _ => "k",
        };
        (1..)
            .map(|i| format!("{base}{i}"))
            .find(|n| !taken.contains(n))
            .unwrap()
    }

    /// A name for a new `let`: fresh, or shadowing a visible one.
    fn let_name(&mut self, ty: Ty) -> String {
        if self.in_fblock == 0 && self.rng.chance(0.25) {
            let bindable = |v: Vec<Slot>| -> Vec<Slot> {
                v.into_iter().filter(|s| !s.name.contains('.')).collect()
            };
            let same = bindable(self.visible(ty));
            let other = bindable(self.visible(if ty == Ty::F { Ty::I } else { Ty::F }));
            if self.rng.chance(0.1) && !other.is_empty() {
                return self.rng.pick(&other).name.clone();
            }
            if !same.is_empty() {
                return self.rng.pick(&same).name.clone();
            }
        }
        self.fresh_name(ty)
    }

    // -- statements ----------------------------------------------------------

    fn stmts(&mut self, n: usize) -> Vec<Stmt> {
        let mut out = Vec::new();
        for _ in 0..n {
            if self.budget <= 0 {
                break;
            }
            self.budget -= 1;
            let s = self.stmt();
            out.extend(s);
            if tidy::block_diverges(&out) {
                break;
            }
        }
        out
    }

    /// A nested block of `1..=max` statements in a new scope.
    fn block(&mut self, max: usize) -> Vec<Stmt> {
        self.block_then(max, |_, _| {})
    }

    /// A block, and `tail` adding to its end while the block's own names are
    /// still in scope: what it draws reads what is visible there (a copy
    /// shadowing an array parameter, say), not what is visible outside.
    fn block_then(&mut self, max: usize, tail: impl FnOnce(&mut Gen, &mut Vec<Stmt>)) -> Vec<Stmt> {
        self.scopes.push(Vec::new());
        self.depth += 1;
        let n = 1 + self.rng.below(max);
        let mut b = self.stmts(n);
        // Usually hand what the block computed to an outer variable, so that
        // it is not dead code.
        let inner: Vec<String> = self
            .scopes
            .last()
            .unwrap()
            .iter()
            .filter(|s| s.ty == Ty::F && s.ready)
            .map(|s| s.name.clone())
            .collect();
        if !inner.is_empty() && !tidy::block_diverges(&b) && self.rng.chance(0.7) {
            let local = self.rng.pick(&inner).clone();
            let outer: Vec<Slot> = self
                .visible(Ty::F)
                .into_iter()
                .filter(|s| s.assignable && !inner.contains(&s.name))
                .collect();
            if !outer.is_empty() {
                let target = self.rng.pick(&outer).name.clone();
                let v = FExpr::Var(Name::new(&local));
                let val = if self.rng.chance(0.5) {
                    v
                } else {
                    let f = self.factor();
                    FExpr::Bin(FOp::Mul, Box::new(v), Box::new(f))
                };
                b.push(Stmt::Assign {
                    name: Name::new(&target),
                    op: *self.rng.pick(&[AOp::Add, AOp::Add, AOp::Sub]),
                    val: Val::F(val),
                });
            }
        }
        tail(self, &mut b);
        self.depth -= 1;
        self.scopes.pop();
        b
    }

    fn stmt(&mut self) -> Vec<Stmt> {
        if self.pat_on && self.depth < 3 && self.pat_side.chance(0.12) {
            if let Some(s) = self.pattern_stmt() {
                return vec![s];
            }
        }
        if self.pat_on && self.in_fblock == 0 && self.in_closure == 0 && self.pat_side.chance(0.04)
        {
            if let Some(s) = self.let_else() {
                return vec![s];
            }
        }
        let floats: Vec<Slot> = self
            .visible(Ty::F)
            .into_iter()
            .filter(|s| s.assignable)
            .collect();
        let ints: Vec<Slot> = self
            .visible(Ty::I)
            .into_iter()
            .filter(|s| s.assignable)
            .collect();
        let nested_ok = self.depth < 3;
        let arrays = self.visible(Ty::A);
        let buffers = self.buffers().len();
        let walks_ok = !arrays.is_empty() && nested_ok && self.loops < 2;
        let w = [
            28,                                           // let float
            5,                                            // let int
            3 * u32::from(nested_ok),                     // let x; if .. { x = } else { x = }
            if floats.is_empty() { 0 } else { 18 },       // float assignment
            if ints.is_empty() { 0 } else { 4 },          // int assignment
            12 * u32::from(nested_ok),                    // if
            7 * u32::from(nested_ok && self.loops < 2),   // for
            3 * u32::from(nested_ok && self.loops < 2),   // while
            2 * u32::from(nested_ok && self.loops < 2),   // loop
            3 * u32::from(nested_ok),                     // block
            if self.loops > 0 { 7 } else { 0 },           // break / continue
            4,                                            // return
            if self.features.buffers { 12 } else { 0 },   // let buffer
            if buffers > 0 { 14 } else { 0 },             // store
            8 * u32::from(walks_ok),                      // walk
            if self.features.iterators { 12 } else { 0 }, // collect, copy, push
        ];
        match self.rng.weighted(&w) {
            0 => {
                let init = self.let_init();
                let name = self.let_name(Ty::F);
                let annot = self.rng.chance(0.15);
                self.declare(&name, Ty::F, true, true);
                vec![Stmt::Let {
                    name: Name::new(&name),
                    ty: Ty::F,
                    annot,
                    mutable: false,
                    init: Some(Val::F(init)),
                }]
            }
            1 => {
                self.int_value = true;
                let init = self.iexpr_value();
                self.int_value = false;
                let name = self.let_name(Ty::I);
                self.declare(&name, Ty::I, true, true);
                vec![Stmt::Let {
                    name: Name::new(&name),
                    ty: Ty::I,
                    annot: false,
                    mutable: false,
                    init: Some(Val::I(init)),
                }]
            }
            2 => self.let_then_branches(),
            3 => vec![self.float_assign(&floats)],
            4 => {
                let target = self.rng.pick(&ints).name.clone();
                self.int_value = true;
                let val = match self.rng.below(3) {
                    0 => (AOp::Add, IExpr::Lit(self.rng.range(1, 3))),
                    1 => (AOp::Add, self.iexpr_small()),
                    _ => (AOp::Set, self.iexpr_value()),
                };
                self.int_value = false;
                vec![Stmt::Assign {
                    name: Name::new(&target),
                    op: val.0,
                    val: Val::I(val.1),
                }]
            }
            5 => vec![self.if_stmt()],
            6 => vec![self.for_stmt()],
            7 => self.while_stmt(),
            8 => self.loop_stmt(),
            9 => vec![Stmt::Block(self.block(4))],
            10 => self.exit_stmt(),
            11 => self.return_stmt(),
            12 => vec![self.let_buffer()],
            13 => vec![self.store()],
            14 => vec![self.walk()],
            _ => self.iter_stmts(),
        }
    }

    fn let_init(&mut self) -> FExpr {
        match self.rng.weighted(&[80, 8, 5, 7]) {
            0 => self.fexpr_up_to(3),
            1 => self.if_expr(),
            2 => self.block_expr(),
            _ => FExpr::Lit(self.lit()),
        }
    }

    /// `g(me) + e` for a bounded `g`.
    fn through_fun(&mut self, me: FExpr, e: FExpr) -> FExpr {
        let f = *self.rng.pick(&[Fun::Sin, Fun::Tanh, Fun::Atan, Fun::Cos]);
        FExpr::Bin(
            FOp::Add,
            Box::new(FExpr::Call(f, false, vec![me])),
            Box::new(e),
        )
    }

    /// `+= e`, `-= e`, `*= factor` or `/= positive` (choices 1 to 4).
    fn compound_update(&mut self, choice: usize) -> (AOp, FExpr) {
        match choice {
            1 => (AOp::Add, self.fexpr_up_to(2)),
            2 => (AOp::Sub, self.fexpr_up_to(2)),
            3 => (AOp::Mul, self.factor()),
            _ => (AOp::Div, self.pos(1)),
        }
    }

    fn float_assign(&mut self, floats: &[Slot]) -> Stmt {
        let slot = self.rng.pick(floats).clone();
        let target = slot.name.clone();
        let me = || FExpr::Var(Name::new(&target));
        let (op, val) = match self.rng.weighted(&[45, 25, 10, 12, 8]) {
            0 => {
                let e = self.fexpr_up_to(2);
                let v = match self.rng.below(5) {
                    0 if !slot.param => e,
                    1 => FExpr::Bin(FOp::Add, Box::new(me()), Box::new(e)),
                    2 => FExpr::Bin(
                        FOp::Add,
                        Box::new(FExpr::Bin(
                            FOp::Mul,
                            Box::new(me()),
                            Box::new(FExpr::Lit(
                                self.rng.pick(&["0.5", "0.9", "0.75", "1.1"]).to_string(),
                            )),
                        )),
                        Box::new(e),
                    ),
                    3 | 0 => FExpr::Bin(FOp::Mul, Box::new(me()), Box::new(self.factor())),
                    _ => self.through_fun(me(), e),
                };
                (AOp::Set, v)
            }
            k => self.compound_update(k),
        };
        Stmt::Assign {
            name: Name::new(&target),
            op,
            val: Val::F(val),
        }
    }

    /// A multiplier of modest size, so that loops do not blow values up.
    fn factor(&mut self) -> FExpr {
        match self.rng.below(3) {
            0 => FExpr::Lit(
                self.rng
                    .pick(&["0.5", "0.9", "1.1", "1.5", "0.75"])
                    .to_string(),
            ),
            1 => {
                let e = self.fexpr(1);
                let f = *self.rng.pick(&[Fun::Sin, Fun::Cos, Fun::Tanh]);
                FExpr::Call(f, false, vec![e])
            }
            _ => {
                // e.cos() * 0.5 + 1.0
                let e = self.fexpr(1);
                FExpr::Bin(
                    FOp::Add,
                    Box::new(FExpr::Bin(
                        FOp::Mul,
                        Box::new(FExpr::Call(Fun::Cos, false, vec![e])),
                        Box::new(FExpr::Lit("0.5".into())),
                    )),
                    Box::new(FExpr::Lit("1.0".into())),
                )
            }
        }
    }

    /// `let a; if c { ..; a = e1; } else { ..; a = e2; }`.
    fn let_then_branches(&mut self) -> Vec<Stmt> {
        let name = self.fresh_name(Ty::F);
        let annot = self.rng.chance(0.5);
        self.declare(&name, Ty::F, true, false);
        let chain = self.rng.chance(0.3);
        let branch = |g: &mut Gen| {
            g.scopes.push(Vec::new());
            g.depth += 1;
            let mut b = if g.rng.chance(0.4) {
                g.stmts(1)
            } else {
                Vec::new()
            };
            // A branch that left early assigns nothing: keep it simple.
            b.retain(|s| !tidy::diverges(s));
            b.push(Stmt::Assign {
                name: Name::new(&name),
                op: AOp::Set,
                val: Val::F(g.fexpr(2)),
            });
            g.depth -= 1;
            g.scopes.pop();
            b
        };
        let c = self.cond(2);
        let then = branch(self);
        let els = if chain {
            let c2 = self.cond(2);
            let t2 = branch(self);
            let e2 = branch(self);
            vec![Stmt::If {
                cond: c2,
                then: t2,
                els: Some(e2),
            }]
        } else {
            branch(self)
        };
        self.set_ready(&name);
        vec![
            Stmt::Let {
                name: Name::new(&name),
                ty: Ty::F,
                annot,
                mutable: false,
                init: None,
            },
            Stmt::If {
                cond: c,
                then,
                els: Some(els),
            },
        ]
    }

    fn if_stmt(&mut self) -> Stmt {
        let cond = self.cond(2);
        let then = self.block(4);
        let els = match self.rng.weighted(&[45, 40, 15]) {
            0 => None,
            1 => Some(self.block(3)),
            _ => Some(vec![self.if_stmt()]),
        };
        Stmt::If { cond, then, els }
    }

    /// `if let Some(m) = n.checked_sub(1) { .. } else { .. }`, or a
    /// `match` on it (`Some(m) if m > 1 => .., _ => ..`), on the integer
    /// parameter or an array's length; the `then` arm reads `m as f64`.
    fn pattern_stmt(&mut self) -> Option<Stmt> {
        let Some(Stmt::If {
            cond: Cond::Some(head),
            ..
        }) = self.pattern_head()
        else {
            return None;
        };
        let r = &mut self.pat_side;
        let matched = r.chance(0.45);
        let guard = (matched && r.chance(0.5)).then(|| r.range(0, 2));
        let with_else = matched || r.chance(0.6);
        let sp = SomePat {
            matched,
            guard,
            ..*head
        };
        let bind = sp.bind.s.clone();
        // `m` is never an index (`usize::MAX / 2`): it may pass the length
        // of a helper's slice.
        self.scopes.push(Vec::new());
        self.declare_sized(&bind, sp.ty(), false, true, usize::MAX / 2);
        let mut then = self.block(3);
        let outer: Vec<Slot> = self
            .visible(Ty::F)
            .into_iter()
            .filter(|s| s.assignable && s.ready && self.in_fblock == 0)
            .collect();
        if !outer.is_empty() && !tidy::block_diverges(&then) {
            let target = self.pat_side.pick(&outer).name.clone();
            let m = FExpr::Cast(IExpr::Var(Name::new(&bind)));
            let e = self.fexpr_up_to(1);
            then.insert(
                0,
                Stmt::Assign {
                    name: Name::new(&target),
                    op: AOp::Add,
                    val: Val::F(FExpr::Bin(FOp::Mul, Box::new(m), Box::new(e))),
                },
            );
        }
        self.scopes.pop();
        let els = with_else.then(|| self.block(3));
        Some(Stmt::If {
            cond: Cond::Some(Box::new(sp)),
            then,
            els,
        })
    }

    /// `let Some(m) = n.checked_sub(1) else { return e; };`, `m` then
    /// visible to the rest of the block.
    fn let_else(&mut self) -> Option<Stmt> {
        let Some(Stmt::If {
            cond: Cond::Some(sp),
            ..
        }) = self.pattern_head()
        else {
            return None;
        };
        // The value returned is drawn before `m` exists.
        let ret = self.fexpr_up_to(2);
        let pat = SomePat {
            matched: false,
            guard: None,
            ..*sp
        };
        self.declare_sized(&pat.bind.s, pat.ty(), false, true, usize::MAX / 2);
        Some(Stmt::LetElse { pat, ret })
    }

    /// The condition of a pattern statement, in an `if` with empty blocks.
    fn pattern_head(&mut self) -> Option<Stmt> {
        let ints: Vec<Slot> = self
            .visible(Ty::I)
            .into_iter()
            .filter(|s| s.param && !s.name.contains('.'))
            .collect();
        let arrays: Vec<Slot> = self
            .visible(Ty::A)
            .into_iter()
            .filter(|a| a.shape != Shape::Field)
            .collect();
        let r = &mut self.pat_side;
        let len = match (ints.is_empty(), arrays.is_empty()) {
            (true, true) => return None,
            (false, false) => r.chance(0.4),
            (ints_empty, _) => ints_empty,
        };
        let of = if len {
            r.pick(&arrays).name.clone()
        } else {
            r.pick(&ints).name.clone()
        };
        let sub = r.range(1, 2);
        let bind = self.fresh_from(&["m", "rest", "prev"]);
        Some(Stmt::If {
            cond: Cond::Some(Box::new(SomePat {
                bind: Name::new(&bind),
                of: Name::new(&of),
                len,
                sub,
                matched: false,
                guard: None,
            })),
            then: Vec::new(),
            els: None,
        })
    }

    fn for_stmt(&mut self) -> Stmt {
        let outer_loop_vars: Vec<String> = self
            .scopes
            .iter()
            .flatten()
            .filter(|s| s.loop_var)
            .map(|s| s.name.clone())
            .collect();
        // The parameter `n`, or a struct's integer field (`cfg.n`).
        let int_param = self
            .visible(Ty::I)
            .into_iter()
            .find(|s| s.name == "n" || (s.name.contains('.') && s.ty == Ty::I));
        let bound = int_param
            .as_ref()
            .map_or("n".to_string(), |s| s.name.clone());
        let int_locals: Vec<String> = self
            .visible(Ty::I)
            .into_iter()
            .filter(|s| s.assignable)
            .map(|s| s.name)
            .collect();
        let lo = match self.rng.weighted(&[65, 20, 15]) {
            0 => IExpr::Lit(0),
            1 => IExpr::Lit(1),
            _ => match outer_loop_vars.first() {
                Some(v) => IExpr::Var(Name::new(v)),
                None => IExpr::Lit(0),
            },
        };
        let hi = match self.rng.weighted(&[40, 20, 5, 15, 10, 10]) {
            1 if int_param.is_some() => IExpr::Var(Name::new(&bound)),
            2 if int_param.is_some() => IExpr::Add(
                Box::new(IExpr::Var(Name::new(&bound))),
                Box::new(IExpr::Lit(1)),
            ),
            3 if !outer_loop_vars.is_empty() => IExpr::Add(
                Box::new(IExpr::Var(Name::new(
                    &self.rng.pick(&outer_loop_vars).clone(),
                ))),
                Box::new(IExpr::Lit(1)),
            ),
            4 if !int_locals.is_empty() => IExpr::Rem(
                Box::new(IExpr::Var(Name::new(&self.rng.pick(&int_locals).clone()))),
                4,
            ),
            5 if !outer_loop_vars.is_empty() => {
                IExpr::Var(Name::new(&self.rng.pick(&outer_loop_vars).clone()))
            }
            _ => IExpr::Lit(self.rng.range(1, 4)),
        };
        // A struct's integer field is the loop bound it is meant to be.
        let field = self
            .visible(Ty::I)
            .into_iter()
            .find(|s| s.name.contains('.'));
        let hi = match field {
            Some(f) if self.side.chance(0.3) => IExpr::Var(Name::new(&f.name)),
            _ => hi,
        };
        let inclusive = self.rng.chance(0.2);
        let rev = self.rng.chance(0.15);
        let step = (!rev && self.rng.chance(0.12)).then(|| self.rng.range(2, 3) as u32);
        let var = if outer_loop_vars.iter().any(|v| v == "i") {
            if self.rng.chance(0.15) {
                "i".to_string()
            } else {
                "j".to_string()
            }
        } else {
            "i".to_string()
        };
        self.scopes.push(Vec::new());
        self.declare(&var, Ty::I, false, true);
        self.scopes.last_mut().unwrap().last_mut().unwrap().loop_var = true;
        self.loops += 1;
        let body = self.block(4);
        self.loops -= 1;
        self.scopes.pop();
        Stmt::For {
            var: Name::new(&var),
            range: Range {
                lo,
                hi,
                inclusive,
                rev,
                step,
            },
            body,
        }
    }

    fn guard(&mut self) -> String {
        self.guards += 1;
        format!("w{}", self.guards)
    }

    fn while_stmt(&mut self) -> Vec<Stmt> {
        let guard = self.guard();
        let limit = self.rng.range(2, 6);
        self.declare(&guard, Ty::I, false, true);
        let cond = self.cond(2);
        self.loops += 1;
        let body = self.block(4);
        self.loops -= 1;
        vec![Stmt::While {
            guard: Name::new(&guard),
            limit,
            cond,
            body,
        }]
    }

    fn loop_stmt(&mut self) -> Vec<Stmt> {
        let guard = self.guard();
        let limit = self.rng.range(2, 5);
        self.declare(&guard, Ty::I, false, true);
        self.loops += 1;
        let body = self.block_then(4, |g, body| {
            if !tidy::block_diverges(body) && g.rng.chance(0.6) {
                let c = g.cond(2);
                body.push(Stmt::If {
                    cond: c,
                    then: vec![Stmt::Break],
                    els: None,
                });
            }
        });
        self.loops -= 1;
        vec![Stmt::Loop {
            guard: Name::new(&guard),
            limit,
            body,
        }]
    }

    /// `if c { ..; break; }`, `if c { continue; }`, or a bare `break;`.
    fn exit_stmt(&mut self) -> Vec<Stmt> {
        let exit = if self.rng.chance(0.5) {
            Stmt::Break
        } else {
            Stmt::Continue
        };
        if self.rng.chance(0.12) {
            return vec![exit];
        }
        let cond = self.cond(2);
        let mut then = if self.rng.chance(0.4) {
            self.block(2)
        } else {
            Vec::new()
        };
        if !tidy::block_diverges(&then) {
            then.push(exit);
        }
        vec![Stmt::If {
            cond,
            then,
            els: None,
        }]
    }

    fn return_stmt(&mut self) -> Vec<Stmt> {
        let cond = self.cond(2);
        // The returned value is drawn outside the block's scope: the block
        // stays one, so that none of its `let`s (a shadowing copy of an
        // array, say) is in scope at the `return`.
        let mut then = if self.rng.chance(0.3) {
            vec![Stmt::Block(self.block(2))]
        } else {
            Vec::new()
        };
        if !tidy::block_diverges(&then) {
            let e = self.fexpr(2);
            then.push(Stmt::Return(e));
        }
        vec![Stmt::If {
            cond,
            then,
            els: None,
        }]
    }

    // -- expressions ---------------------------------------------------------

    fn lit(&mut self) -> String {
        if self.rng.chance(0.8) {
            self.rng.pick(LITERALS).to_string()
        } else {
            format!("{}.{:02}", self.rng.below(4), self.rng.below(100))
        }
    }

    fn nonzero_lit(&mut self) -> String {
        loop {
            let l = self.lit();
            if l.parse::<f64>().unwrap().abs() > 0.04 {
                return l;
            }
        }
    }

    fn leaf(&mut self) -> FExpr {
        let floats = self.visible(Ty::F);
        let ints = self.visible(Ty::I);
        let elems = self.visible(Ty::R);
        let arrays = self.visible(Ty::A);
        let indices = self.visible(Ty::U);
        let w = [
            if floats.is_empty() { 0 } else { 70 },
            22,
            if ints.is_empty() { 0 } else { 6 },
            1,
            if elems.is_empty() { 0 } else { 40 },
            if arrays.is_empty() { 0 } else { 25 },
            if indices.is_empty() { 0 } else { 4 },
        ];
        match self.rng.weighted(&w) {
            0 => FExpr::Var(Name::new(&self.rng.pick(&floats).name)),
            1 => FExpr::Lit(self.lit()),
            2 => {
                let i = self.iexpr_small();
                FExpr::Cast(i)
            }
            3 => FExpr::Pi,
            4 => {
                let e = self.rng.pick(&elems);
                let n = Name::new(&e.name);
                if e.closure {
                    FExpr::Elem(n)
                } else {
                    FExpr::Deref(n)
                }
            }
            5 => self.array_read(),
            _ => FExpr::Cast(IExpr::Var(Name::new(&self.rng.pick(&indices).name))),
        }
    }

    fn fexpr_up_to(&mut self, max: i64) -> FExpr {
        let d = self.rng.range(0, max) as u32;
        self.fexpr(d)
    }

    pub fn fexpr(&mut self, depth: u32) -> FExpr {
        if depth == 0 || self.rng.chance(0.2) {
            return self.leaf();
        }
        let d = depth - 1;
        let calls = if self.callable.is_empty() { 0 } else { 8 };
        let reductions = if self.features.iterators && self.in_closure == 0 {
            7
        } else {
            0
        };
        let w = [18, 12, 5, 4, 24, 12, 3, 2, 3, calls, reductions];
        match self.rng.weighted(&w) {
            0 => {
                let op = if self.rng.chance(0.6) {
                    FOp::Add
                } else {
                    FOp::Sub
                };
                FExpr::Bin(op, Box::new(self.fexpr(d)), Box::new(self.fexpr(d)))
            }
            1 => FExpr::Bin(FOp::Mul, Box::new(self.fexpr(d)), Box::new(self.fexpr(d))),
            2 => {
                let den = match self.rng.below(3) {
                    0 => FExpr::Lit(self.nonzero_lit()),
                    1 => self.pos(d),
                    // Anything: a point where it is near zero is rejected.
                    _ => self.fexpr(d),
                };
                FExpr::Bin(FOp::Div, Box::new(self.fexpr(d)), Box::new(den))
            }
            3 => FExpr::Neg(Box::new(self.fexpr(d))),
            4 => self.unary(d),
            5 => self.binary(d),
            6 if self.depth < 4 => self.if_expr(),
            7 if self.depth < 4 => self.block_expr(),
            8 => {
                let n = *self.rng.pick(&[-2, -1, 0, 1, 2, 3, 4]);
                let a = if n <= 0 { self.pos(d) } else { self.fexpr(d) };
                FExpr::Powi(self.rng.chance(0.25), Box::new(a), n)
            }
            9 => self.helper_calls(d),
            10 => self.reduction(),
            _ => self.leaf(),
        }
    }

    fn call1(&mut self, f: Fun, a: FExpr) -> FExpr {
        FExpr::Call(f, self.rng.chance(0.25), vec![a])
    }

    fn unary(&mut self, d: u32) -> FExpr {
        use Fun::*;
        let free = [
            Sin, Cos, Atan, Tanh, Asinh, Abs, Signum, Floor, Ceil, Round, Trunc, Fract, ToDegrees,
            ToRadians, Cbrt,
        ];
        let bounded = [Sinh, Cosh, Exp, Exp2, ExpM1, Tan];
        let unit = [Asin, Acos, Atanh];
        let pos = [Ln, Log2, Log10, Sqrt, Recip, Ln1p];
        match self.rng.weighted(&[45, 20, 12, 18, 5]) {
            0 => {
                let f = *self.rng.pick(&free);
                let a = self.fexpr(d);
                self.call1(f, a)
            }
            1 => {
                let f = *self.rng.pick(&bounded);
                let a = self.bounded(d);
                self.call1(f, a)
            }
            2 => {
                let f = *self.rng.pick(&unit);
                let a = self.unit(d);
                self.call1(f, a)
            }
            3 => {
                let f = *self.rng.pick(&pos);
                let a = self.pos(d);
                self.call1(f, a)
            }
            _ => {
                let a = self.gt1(d);
                self.call1(Acosh, a)
            }
        }
    }

    fn binary(&mut self, d: u32) -> FExpr {
        use Fun::*;
        let path = self.rng.chance(0.25);
        let lit_recv = self.rng.chance(0.12);
        let recv = |g: &mut Gen, e: FExpr| {
            if lit_recv {
                FExpr::Lit(g.nonzero_lit())
            } else {
                e
            }
        };
        match self.rng.weighted(&[10, 8, 10, 8, 12, 12, 10, 10]) {
            0 => {
                let a = self.fexpr(d);
                let a = recv(self, a);
                FExpr::Call(Atan2, path, vec![a, self.fexpr(d)])
            }
            1 => {
                let a = self.fexpr(d);
                let a = recv(self, a);
                FExpr::Call(Hypot, path, vec![a, self.fexpr(d)])
            }
            2 => {
                let a = self.pos(d);
                let a = recv(self, a);
                let b = if self.rng.chance(0.4) {
                    FExpr::Lit(self.lit())
                } else {
                    self.bounded(d)
                };
                FExpr::Call(Powf, path, vec![a, b])
            }
            3 => {
                let a = self.pos(d);
                let a = recv(self, a);
                let b = if self.rng.chance(0.6) {
                    FExpr::Lit(self.rng.pick(&["2.0", "3.0", "10.0", "0.5"]).to_string())
                } else {
                    // e * e + 1.5 > 1: its logarithm is never zero.
                    let e = self.fexpr(d);
                    FExpr::Bin(
                        FOp::Add,
                        Box::new(FExpr::Bin(FOp::Mul, Box::new(e.clone()), Box::new(e))),
                        Box::new(FExpr::Lit("1.5".into())),
                    )
                };
                FExpr::Call(Log, path, vec![a, b])
            }
            4 => {
                let a = self.fexpr(d);
                let a = recv(self, a);
                FExpr::Call(Max, path, vec![a, self.fexpr(d)])
            }
            5 => {
                let a = self.fexpr(d);
                let a = recv(self, a);
                FExpr::Call(Min, path, vec![a, self.fexpr(d)])
            }
            6 => FExpr::Call(
                MulAdd,
                path,
                vec![self.fexpr(d), self.fexpr(d), self.fexpr(d)],
            ),
            _ => {
                let x = self.fexpr(d);
                let (lo, hi) = if self.rng.chance(0.6) {
                    let a: f64 = self.lit().parse().unwrap();
                    let lo = format!("{:.2}", -a - 0.25);
                    let hi = format!("{:.2}", a + 0.5);
                    (
                        FExpr::Neg(Box::new(FExpr::Lit(lo.trim_start_matches('-').to_string()))),
                        FExpr::Lit(hi),
                    )
                } else {
                    // Both bounds active: e - c <= e + c.
                    let e = self.fexpr(d);
                    let c = self.lit();
                    (
                        FExpr::Bin(
                            FOp::Sub,
                            Box::new(e.clone()),
                            Box::new(FExpr::Lit(c.clone())),
                        ),
                        FExpr::Bin(FOp::Add, Box::new(e), Box::new(FExpr::Lit(c))),
                    )
                };
                FExpr::Call(Clamp, path, vec![x, lo, hi])
            }
        }
    }

    /// A value in about [-1.6, 1.6].
    fn bounded(&mut self, d: u32) -> FExpr {
        use Fun::*;
        let e = self.fexpr(d);
        match self.rng.below(6) {
            0 => FExpr::Call(Sin, false, vec![e]),
            1 => FExpr::Call(Cos, false, vec![e]),
            2 => FExpr::Call(Tanh, false, vec![e]),
            3 => FExpr::Call(Atan, false, vec![e]),
            4 => FExpr::Bin(
                FOp::Mul,
                Box::new(FExpr::Call(Sin, false, vec![e])),
                Box::new(FExpr::Lit(
                    self.rng.pick(&["0.5", "1.5", "0.3"]).to_string(),
                )),
            ),
            _ => FExpr::Lit(self.lit()),
        }
    }

    /// A value bounded away from zero from above.
    fn pos(&mut self, d: u32) -> FExpr {
        use Fun::*;
        let c = || FExpr::Lit("0.5".to_string());
        match self.rng.weighted(&[40, 15, 10, 10, 10, 5, 10]) {
            0 => {
                let e = self.fexpr(d);
                let k = self.rng.pick(&["0.5", "1.0", "0.25", "2.0"]).to_string();
                FExpr::Bin(
                    FOp::Add,
                    Box::new(FExpr::Bin(FOp::Mul, Box::new(e.clone()), Box::new(e))),
                    Box::new(FExpr::Lit(k)),
                )
            }
            1 => {
                let b = self.bounded(d);
                FExpr::Call(Exp, self.rng.chance(0.2), vec![b])
            }
            2 => {
                let e = self.fexpr(d);
                FExpr::Bin(
                    FOp::Add,
                    Box::new(FExpr::Call(Abs, false, vec![e])),
                    Box::new(c()),
                )
            }
            3 => {
                let e = self.fexpr(d);
                FExpr::Call(Hypot, false, vec![e, c()])
            }
            4 => {
                let e = self.fexpr(d);
                FExpr::Bin(
                    FOp::Add,
                    Box::new(FExpr::Call(Sin, false, vec![e])),
                    Box::new(FExpr::Lit("1.5".into())),
                )
            }
            5 => {
                let b = self.bounded(d);
                FExpr::Call(Cosh, false, vec![b])
            }
            _ => FExpr::Lit(self.nonzero_lit()),
        }
    }

    /// A value in about [-0.95, 0.95].
    fn unit(&mut self, d: u32) -> FExpr {
        use Fun::*;
        let e = self.fexpr(d);
        let f = *self.rng.pick(&[Sin, Cos, Tanh]);
        let k = self.rng.pick(&["0.9", "0.8", "0.5", "0.95"]).to_string();
        if self.rng.chance(0.15) {
            // e / (e * e + 1.0) lies in [-0.5, 0.5].
            return FExpr::Bin(
                FOp::Div,
                Box::new(e.clone()),
                Box::new(FExpr::Bin(
                    FOp::Add,
                    Box::new(FExpr::Bin(FOp::Mul, Box::new(e.clone()), Box::new(e))),
                    Box::new(FExpr::Lit("1.0".into())),
                )),
            );
        }
        FExpr::Bin(
            FOp::Mul,
            Box::new(FExpr::Call(f, false, vec![e])),
            Box::new(FExpr::Lit(k)),
        )
    }

    /// A value above one.
    fn gt1(&mut self, d: u32) -> FExpr {
        let p = self.pos(d);
        FExpr::Bin(
            FOp::Add,
            Box::new(p),
            Box::new(FExpr::Lit(
                self.rng.pick(&["1.0", "1.5", "1.25"]).to_string(),
            )),
        )
    }

    fn if_expr(&mut self) -> FExpr {
        let c = self.cond(1);
        let t = self.fblock();
        let e = if self.rng.chance(0.2) {
            FBlock {
                stmts: Vec::new(),
                tail: self.if_expr(),
            }
        } else {
            self.fblock()
        };
        FExpr::If(Box::new(c), Box::new(t), Box::new(e))
    }

    fn block_expr(&mut self) -> FExpr {
        let mut b = self.fblock();
        if b.stmts.is_empty() {
            b = self.fblock();
        }
        FExpr::Block(Box::new(b))
    }

    /// `{ let t = ..; ..; tail }`: only its own locals, and now and then an
    /// early `return`.
    fn fblock(&mut self) -> FBlock {
        self.scopes.push(Vec::new());
        self.in_fblock += 1;
        self.depth += 1;
        let mut stmts = Vec::new();
        for _ in 0..self.rng.below(3) {
            // (`return` inside an expression is a documented limitation.)
            if self.rng.chance(0.0) {
                let c = self.cond(1);
                let e = self.fexpr(1);
                stmts.push(Stmt::If {
                    cond: c,
                    then: vec![Stmt::Return(e)],
                    els: None,
                });
                continue;
            }
            let init = self.fexpr(2);
            let name = self.fresh_name(Ty::F);
            self.declare(&name, Ty::F, false, true);
            stmts.push(Stmt::Let {
                name: Name::new(&name),
                ty: Ty::F,
                annot: false,
                mutable: false,
                init: Some(Val::F(init)),
            });
        }
        let tail = self.fexpr(2);
        self.depth -= 1;
        self.in_fblock -= 1;
        self.scopes.pop();
        FBlock { stmts, tail }
    }

    // -- integers and conditions ---------------------------------------------

    fn int_var(&mut self) -> Option<IExpr> {
        let mut ints = self.visible(Ty::I);
        if self.int_value {
            let (c, s) = (self.uses.wrt_cfg, self.uses.wrt_self);
            ints.retain(|i| !(c && i.name.starts_with("cfg.") || s && i.name.starts_with("self.")));
        }
        if ints.is_empty() {
            return None;
        }
        Some(IExpr::Var(Name::new(&self.rng.pick(&ints).name)))
    }

    fn iexpr_small(&mut self) -> IExpr {
        match self.int_var() {
            Some(v) if self.rng.chance(0.8) => match self.rng.below(5) {
                0 => IExpr::Add(Box::new(v), Box::new(IExpr::Lit(1))),
                1 => IExpr::Rem(Box::new(v), 3),
                _ => v,
            },
            _ => IExpr::Lit(self.rng.range(0, 4)),
        }
    }

    fn iexpr_value(&mut self) -> IExpr {
        match self.rng.below(4) {
            0 => IExpr::Lit(self.rng.range(0, 3)),
            1 => {
                let a = self.iexpr_small();
                IExpr::Mul(Box::new(a), 2)
            }
            2 => {
                let a = self.iexpr_small();
                let b = self.iexpr_small();
                IExpr::Add(Box::new(a), Box::new(b))
            }
            _ => self.iexpr_small(),
        }
    }

    fn cond(&mut self, depth: u32) -> Cond {
        let has_int = !self.visible(Ty::I).is_empty();
        let bools = self.visible(Ty::B);
        let indices = self.visible(Ty::U);
        let w = [
            50,
            if has_int { 20 } else { 0 },
            if bools.is_empty() { 0 } else { 8 },
            if depth > 0 { 8 } else { 0 },
            if depth > 0 { 7 } else { 0 },
            if depth > 0 { 5 } else { 0 },
            if indices.is_empty() { 0 } else { 8 },
            if self.iterators_here() { 6 } else { 0 },
        ];
        let ops = [CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge];
        match self.rng.weighted(&w) {
            0 => {
                let op = if self.rng.chance(0.03) {
                    *self.rng.pick(&[CmpOp::Eq, CmpOp::Ne])
                } else {
                    *self.rng.pick(&ops)
                };
                let a = self.fexpr_up_to(2);
                let b = if self.rng.chance(0.5) {
                    FExpr::Lit(self.lit())
                } else {
                    self.fexpr(1)
                };
                Cond::F(op, a, b)
            }
            1 => {
                let a = self.int_var().unwrap();
                if self.rng.chance(0.25) {
                    let op = *self.rng.pick(&[CmpOp::Eq, CmpOp::Ne]);
                    let k = self.rng.range(0, 1);
                    Cond::I(op, IExpr::Rem(Box::new(a), 2), IExpr::Lit(k))
                } else {
                    let op = *self.rng.pick(&ops);
                    let b = match self.int_var() {
                        Some(v) if self.rng.chance(0.3) => v,
                        _ => IExpr::Lit(self.rng.range(1, 4)),
                    };
                    Cond::I(op, a, b)
                }
            }
            2 => Cond::Var(Name::new(&self.rng.pick(&bools).name)),
            3 => Cond::And(
                Box::new(self.cond(depth - 1)),
                Box::new(self.cond(depth - 1)),
            ),
            4 => Cond::Or(
                Box::new(self.cond(depth - 1)),
                Box::new(self.cond(depth - 1)),
            ),
            5 => Cond::Not(Box::new(self.cond(depth - 1))),
            7 => Cond::Any(Box::new(self.pred())),
            _ => {
                // Compared with literals only: an index is a `usize`, the
                // other integers may be `i32`.
                let i = IExpr::Var(Name::new(&self.rng.pick(&indices).name));
                if self.rng.chance(0.3) {
                    let op = *self.rng.pick(&[CmpOp::Eq, CmpOp::Ne]);
                    Cond::I(op, IExpr::Rem(Box::new(i), 2), IExpr::Lit(0))
                } else {
                    let op = *self.rng.pick(&ops);
                    Cond::I(op, i, IExpr::Lit(self.rng.range(1, 3)))
                }
            }
        }
    }
}

fn float_param(name: &str) -> Param {
    Param {
        name: Name::new(name),
        ty: PTy::F64,
        mutable: false,
    }
}

fn signature_of(h: &Program) -> HelperSig {
    HelperSig {
        name: h.name.clone(),
        kinds: h.params.iter().map(|p| p.ty.ty()).collect(),
    }
}

/// Whether sums filter what they map (`w.iter().filter(..).map(|v| ..)
/// .sum::<f64>()`), unless `GRADMACRO_DIFFTEST_FILTER_SUMS=0`.
fn filter_sums() -> bool {
    !std::env::var("GRADMACRO_DIFFTEST_FILTER_SUMS").is_ok_and(|v| v == "0")
}

/// Whether the arrays of structs are walked and copied like local arrays
/// (`GRADMACRO_DIFFTEST_FIELD_WALKS=1`), which the macro does not support
/// yet.
fn field_walks() -> bool {
    std::env::var_os("GRADMACRO_DIFFTEST_FIELD_WALKS").is_some_and(|v| v == "1")
}

fn cfg_param(data: Data) -> Param {
    Param {
        name: Name::new("cfg"),
        ty: PTy::Cfg(data.copy),
        mutable: false,
    }
}

// -- arrays and calls ---------------------------------------------------------

impl Gen {
    fn pick_slot(&mut self, slots: &[Slot]) -> Slot {
        self.rng.pick(slots).clone()
    }

    /// An index into an array of `len` elements that cannot be out of
    /// bounds: a literal, an index variable whose range fits, or one
    /// wrapped by `% len`.
    fn index_into(&mut self, len: usize) -> IExpr {
        let indices = self.visible(Ty::U);
        let fitting: Vec<Slot> = indices.iter().filter(|s| s.len <= len).cloned().collect();
        let w = [
            25,
            if fitting.is_empty() { 0 } else { 60 },
            if indices.is_empty() { 0 } else { 15 },
        ];
        match self.rng.weighted(&w) {
            0 => IExpr::Lit(self.rng.below(len) as i64),
            1 => IExpr::Var(Name::new(&self.pick_slot(&fitting).name)),
            _ => {
                let i = IExpr::Var(Name::new(&self.pick_slot(&indices).name));
                let shifted = IExpr::Add(Box::new(i), Box::new(IExpr::Lit(1)));
                IExpr::Rem(Box::new(shifted), len as i64)
            }
        }
    }

    /// `w[k]`, `w.iter().sum::<f64>()` or `w.len() as f64`.
    fn array_read(&mut self) -> FExpr {
        let arrays = self.visible(Ty::A);
        let a = self.pick_slot(&arrays);
        let name = Name::new(&a.name);
        let product = if self.features.iterators { 8 } else { 0 };
        match self.rng.weighted(&[60, 30, 10, product]) {
            0 => FExpr::Index(name, self.index_into(a.len)),
            1 => FExpr::Sum(name),
            2 => FExpr::Len(name),
            _ => FExpr::Product(name),
        }
    }

    /// A call of a helper, or now and then two sharing an argument.
    fn helper_calls(&mut self, d: u32) -> FExpr {
        let Some(first) = self.helper_call(d) else {
            return self.leaf();
        };
        if !self.rng.chance(0.25) {
            return first;
        }
        let FExpr::Apply(f, args) = &first else {
            unreachable!()
        };
        // The same call with one float argument changed.
        let mut args2 = args.clone();
        let floats: Vec<usize> = (0..args.len())
            .filter(|&i| matches!(args[i], Arg::F(_)))
            .collect();
        if let Some(&i) = floats.get(self.rng.below(floats.len().max(1))) {
            args2[i] = Arg::F(self.fexpr(d));
        }
        let second = FExpr::Apply(f.clone(), args2);
        let op = *self.rng.pick(&[FOp::Add, FOp::Mul, FOp::Sub]);
        FExpr::Bin(op, Box::new(first), Box::new(second))
    }

    fn helper_call(&mut self, d: u32) -> Option<FExpr> {
        let sig = self.rng.pick(&self.callable).clone();
        let arrays = self.visible(Ty::A);
        if sig.kinds.contains(&Ty::A) && arrays.is_empty() {
            return None;
        }
        let mut args = Vec::new();
        for &kind in &sig.kinds {
            match kind {
                Ty::A => {
                    let a = self.pick_slot(&arrays);
                    args.push(Arg::A(Name::new(&a.name), a.amp));
                }
                // Passed on as received: every function has the same `cfg`.
                Ty::D => args.push(Arg::D(Name::new("cfg"))),
                _ => args.push(Arg::F(self.fexpr(d))),
            }
        }
        Some(FExpr::Apply(sig.name, args))
    }

    /// `let mut v = vec![0.0; 3];`, `[0.0; 4]`, `vec![0.0; w.len()]`,
    /// `vec![a, b]`, `[a, b, c]`.
    fn let_buffer(&mut self) -> Stmt {
        let vec = self.rng.chance(0.7);
        let params: Vec<Slot> = self
            .visible(Ty::A)
            .into_iter()
            .filter(|a| a.param)
            .collect();
        let init = if self.rng.chance(0.6) {
            let of = (vec && !params.is_empty() && self.rng.chance(0.6))
                .then(|| self.pick_slot(&params));
            let len = match &of {
                Some(a) => a.len,
                None => self.rng.range(MIN_LEN as i64, 5) as usize,
            };
            ArrInit::Zeros {
                vec,
                len,
                of: of.map(|a| Name::new(&a.name)),
            }
        } else {
            let n = self.rng.range(MIN_LEN as i64, 4);
            let elems = (0..n).map(|_| self.fexpr_up_to(2)).collect();
            ArrInit::List { vec, elems }
        };
        let name = self.fresh_from(BUF_NAMES);
        let annot = self.rng.chance(0.2);
        let shape = if vec {
            Shape::LocalVec
        } else {
            Shape::LocalArray
        };
        self.declare_array(&name, init.len(), shape);
        Stmt::LetArr {
            name: Name::new(&name),
            mutable: false,
            annot,
            init,
        }
    }

    /// `v[k] = ..`, `v[k] += ..`: a visible buffer, often reading the
    /// element it overwrites.
    /// The buffers that can be stored to here.
    fn buffers(&self) -> Vec<Slot> {
        self.visible(Ty::A)
            .into_iter()
            .filter(|a| a.assignable && !self.borrowed.contains(&a.name))
            .collect()
    }

    fn store(&mut self) -> Stmt {
        let buffers = self.buffers();
        let b = self.pick_slot(&buffers);
        let index = self.index_into(b.len);
        self.store_at(&b, index)
    }

    fn store_at(&mut self, b: &Slot, index: IExpr) -> Stmt {
        let me = || FExpr::Index(Name::new(&b.name), index.clone());
        let (op, val) = match self.rng.weighted(&[45, 35, 8, 7, 5]) {
            0 => {
                let e = self.fexpr_up_to(2);
                let v = match self.rng.below(3) {
                    0 => e,
                    1 => FExpr::Bin(
                        FOp::Add,
                        Box::new(FExpr::Bin(
                            FOp::Mul,
                            Box::new(me()),
                            Box::new(self.factor()),
                        )),
                        Box::new(e),
                    ),
                    _ => self.through_fun(me(), e),
                };
                (AOp::Set, v)
            }
            k => self.compound_update(k),
        };
        Stmt::Store {
            name: Name::new(&b.name),
            index: index.clone(),
            op,
            val,
        }
    }

    /// A loop over an array: by index, by element, by reference pattern or
    /// enumerated; often storing into a buffer at the loop's index.
    fn walk(&mut self) -> Stmt {
        // Buffers are walked by index half the time, to be overwritten.
        let buffers = self.buffers();
        let by_index = !buffers.is_empty() && self.rng.chance(0.5);
        let arrays = if by_index {
            buffers
        } else {
            self.visible(Ty::A)
        };
        let a = self.pick_slot(&arrays);
        let w = if by_index {
            [1, 1, 0, 0, 1]
        } else if a.shape == Shape::Field {
            [12, 25, 0, 0, 0]
        } else {
            [12, 25, 20, 20, 23]
        };
        let walk = match self.rng.weighted(&w) {
            0 => Walk::Upto(self.rng.range(1, a.len as i64) as usize),
            1 => Walk::Indices,
            2 => Walk::Iter,
            3 => Walk::RefPat {
                iter: self.rng.chance(0.3),
            },
            _ => Walk::Enumerate,
        };
        let rev = !matches!(walk, Walk::RefPat { iter: false }) && self.rng.chance(0.15);
        let f = &mut self.filt_side;
        let walk = if walk == Walk::Iter && self.filt_on && f.chance(0.7) {
            let op = *f.pick(&[CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge]);
            Walk::Filter(op, LITERALS[f.below(LITERALS.len())])
        } else {
            walk
        };
        let has_idx = matches!(walk, Walk::Upto(_) | Walk::Indices | Walk::Enumerate);
        let has_elem = !matches!(walk, Walk::Upto(_) | Walk::Indices);
        let bound = match walk {
            Walk::Upto(n) => n,
            _ => a.len,
        };
        self.scopes.push(Vec::new());
        let idx = if has_idx {
            let n = self.fresh_from(INDEX_NAMES);
            self.declare_sized(&n, Ty::U, false, true, bound);
            n
        } else {
            "_".to_string()
        };
        let elem = if has_elem {
            let n = self.fresh_from(ELEM_NAMES);
            let ty = if matches!(walk, Walk::RefPat { .. }) {
                Ty::F
            } else {
                Ty::R
            };
            self.declare(&n, ty, false, true);
            n
        } else {
            "_".to_string()
        };
        // Walking by element borrows the array for the whole loop.
        let borrows = has_elem && a.assignable;
        if borrows {
            self.borrowed.push(a.name.clone());
        }
        self.loops += 1;
        // A store at the end is drawn inside the body's scope, one at the
        // start outside it.
        let store = has_idx && self.rng.chance(0.75);
        let mut at_start = store && self.rng.chance(0.5);
        let mut body = self.block_then(4, |g, body| {
            if store && !at_start && !tidy::block_diverges(body) {
                g.store_in_walk(body, &idx, bound, false);
            } else if store {
                at_start = true;
            }
        });
        if at_start {
            self.store_in_walk(&mut body, &idx, bound, true);
        }
        self.loops -= 1;
        if borrows {
            self.borrowed.pop();
        }
        self.scopes.pop();
        Stmt::ForArr {
            walk,
            idx: Name::new(&idx),
            elem: Name::new(&elem),
            arr: Name::new(&a.name),
            amp: a.amp,
            rev,
            body,
        }
    }

    /// `v[i] = ..` with the loop's own index: every iteration overwrites
    /// an element, the bug class of tapes that record too little.
    fn store_in_walk(&mut self, body: &mut Vec<Stmt>, idx: &str, bound: usize, at_start: bool) {
        let buffers: Vec<Slot> = self
            .buffers()
            .into_iter()
            .filter(|b| b.len >= bound)
            .collect();
        if buffers.is_empty() {
            return;
        }
        let b = self.pick_slot(&buffers);
        let st = self.store_at(&b, IExpr::Var(Name::new(idx)));
        if at_start {
            body.insert(0, st);
        } else {
            body.push(st);
        }
    }
}

// -- closures, collections and copies -----------------------------------------

/// Names of closure parameters, apart from the other pools so that a
/// closure shadows an outer variable only when it means to.
const CLOSURE_NAMES: &[&str] = &["v", "q", "el", "c", "wv"];
const ACC_NAMES: &[&str] = &["acc", "tot", "run"];

impl Gen {
    /// The arrays that can be walked by element and copied: not a struct's.
    fn walkable(&self) -> Vec<Slot> {
        self.visible(Ty::A)
            .into_iter()
            .filter(|a| a.shape != Shape::Field)
            .collect()
    }

    /// Whether the iterator forms can be drawn here.
    fn iterators_here(&self) -> bool {
        self.features.iterators && self.in_closure == 0 && !self.visible(Ty::A).is_empty()
    }

    /// `|v| *v > e` over a visible array (its parameter always fresh: the
    /// right-hand side reads outer variables).
    fn pred(&mut self) -> Pred {
        let arrays = self.visible(Ty::A);
        let a = self.pick_slot(&arrays);
        let rhs = if self.rng.chance(0.6) {
            FExpr::Lit(self.lit())
        } else {
            self.fexpr(1)
        };
        Pred {
            arr: Name::new(&a.name),
            elem: Name::new(&self.fresh_from(CLOSURE_NAMES)),
            op: *self.rng.pick(&[CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge]),
            rhs,
        }
    }

    /// A reduction through a closure, a product, or a count.
    fn reduction(&mut self) -> FExpr {
        let arrays = !self.visible(Ty::A).is_empty();
        let w = [
            40,
            25,
            16,
            if arrays { 8 } else { 0 },
            if arrays { 6 } else { 0 },
        ];
        match self.rng.weighted(&w) {
            0 => {
                let mut src = self.source();
                let prod = self.rng.chance(0.2);
                if let Source::Iter { filter, .. } = &mut src {
                    let f = &mut self.filt_side;
                    if !prod && self.filt_on && f.chance(0.8) && filter_sums() {
                        let op = *f.pick(&[CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge]);
                        *filter = Some((op, f.pick(LITERALS).to_string()));
                    }
                }
                let body = self.closure(&src, None);
                let unfiltered = !matches!(
                    &src,
                    Source::Iter {
                        filter: Some(_),
                        ..
                    }
                );
                let reduce = if !prod && unfiltered && self.by_side.chance(0.5) {
                    let min = self.by_side.chance(0.5);
                    Reduce::By { min, body }
                } else {
                    Reduce::Map { prod, body }
                };
                FExpr::Reduce(Box::new(src), Box::new(reduce))
            }
            1 => self.fold(),
            2 => {
                let src = self.source();
                let body = self.closure(&src, None);
                let min = self.rng.chance(0.5);
                let init = self.rng.chance(0.2).then(|| self.lit());
                FExpr::Reduce(Box::new(src), Box::new(Reduce::Extreme { min, init, body }))
            }
            3 => {
                let a = self.pick_slot(&self.visible(Ty::A));
                FExpr::Product(Name::new(&a.name))
            }
            _ => FExpr::Count(Box::new(self.pred())),
        }
    }

    /// `src.fold(init, |acc, v| ..)`, often Horner's `acc * x + c`.
    fn fold(&mut self) -> FExpr {
        let mut src = self.source();
        if let Source::Iter { rev, .. } = &mut src {
            // Horner's scheme walks the coefficients from the top.
            *rev |= self.rng.chance(0.4);
        }
        let init = if self.rng.chance(0.7) {
            FExpr::Lit(self.rng.pick(&["0.0", "1.0", "0.5"]).to_string())
        } else {
            self.fexpr(1)
        };
        let mut taken: Vec<String> = src
            .clone()
            .bound()
            .iter()
            .map(|(n, _)| n.s.clone())
            .collect();
        taken.push(String::new());
        let mut acc = String::new();
        while taken.contains(&acc) {
            acc = self.closure_name(ACC_NAMES);
        }
        let body = self.closure(&src, Some(&acc));
        FExpr::Reduce(
            Box::new(src),
            Box::new(Reduce::Fold {
                init,
                acc: Name::new(&acc),
                body,
            }),
        )
    }

    /// A name for a closure parameter: now and then one that shadows a
    /// visible float.
    fn closure_name(&mut self, pool: &[&str]) -> String {
        let floats: Vec<Slot> = self
            .visible(Ty::F)
            .into_iter()
            .filter(|s| !s.name.contains('.'))
            .collect();
        if !floats.is_empty() && self.rng.chance(0.3) {
            return self.rng.pick(&floats).name.clone();
        }
        self.fresh_from(pool)
    }

    /// What a closure walks: an array's elements (reversed, copied, bound
    /// by `&v`), two arrays zipped, an enumeration, or a range of indices.
    fn source(&mut self) -> Source {
        let arrays = self.walkable();
        let w = if arrays.is_empty() {
            [0, 0, 0, 1]
        } else {
            [50, 18, 14, 18]
        };
        let mut names: Vec<String> = Vec::new();
        let mut fresh = |g: &mut Gen| {
            let n = loop {
                let n = g.closure_name(CLOSURE_NAMES);
                if !names.contains(&n) {
                    break n;
                }
            };
            names.push(n.clone());
            Name::new(&n)
        };
        match self.rng.weighted(&w) {
            0 => {
                let a = self.pick_slot(&arrays);
                let copied = self.rng.chance(0.2);
                Source::Iter {
                    arr: Name::new(&a.name),
                    rev: self.rng.chance(0.25),
                    copied,
                    pat: !copied && self.rng.chance(0.3),
                    elem: fresh(self),
                    filter: None,
                }
            }
            1 => {
                let a = self.pick_slot(&arrays);
                let b = self.pick_slot(&arrays);
                // `.zip(b)` yields `&f64` only for a reference.
                let reference = matches!(b.shape, Shape::Param(k) if k != ArrTy::Array);
                Source::Zip {
                    a: Name::new(&a.name),
                    b: Name::new(&b.name),
                    direct: reference && self.rng.chance(0.7),
                    p: fresh(self),
                    q: fresh(self),
                }
            }
            2 => {
                let a = self.pick_slot(&arrays);
                Source::Enumerate {
                    arr: Name::new(&a.name),
                    idx: Name::new(&self.fresh_from(INDEX_NAMES)),
                    elem: fresh(self),
                }
            }
            _ => Source::Range {
                n: self.rng.range(1, 4) as usize,
                idx: Name::new(&self.fresh_from(INDEX_NAMES)),
            },
        }
    }

    /// The number of items `src` yields.
    fn source_len(&self, src: &Source) -> usize {
        let len = |n: &Name| {
            self.visible(Ty::A)
                .iter()
                .find(|s| s.name == n.s)
                .map_or(0, |s| s.len)
        };
        match src {
            Source::Iter { arr, .. } | Source::Enumerate { arr, .. } => len(arr),
            Source::Zip { a, b, .. } => len(a).min(len(b)),
            Source::Range { n, .. } => *n,
        }
    }

    /// The body of a closure over `src` (after `acc`, for a fold): an
    /// expression or a block with `let`s, reading the items, the
    /// accumulator and outer variables, never leaving.
    fn closure(&mut self, src: &Source, acc: Option<&str>) -> FBlock {
        let len = self.source_len(src);
        self.scopes.push(Vec::new());
        self.in_closure += 1;
        if let Some(acc) = acc {
            self.declare(acc, Ty::F, false, true);
        }
        let mut items = Vec::new();
        for (n, ty) in src.clone().bound() {
            // An index is bounded by the walk: it can index what is that long.
            self.declare_sized(&n.s, ty, false, true, len);
            self.scopes.last_mut().unwrap().last_mut().unwrap().closure = ty == Ty::R;
            items.push((n.s.clone(), ty));
        }
        let mut body = if self.rng.chance(0.3) {
            self.fblock()
        } else {
            FBlock {
                stmts: Vec::new(),
                tail: self.fexpr_up_to(2),
            }
        };
        let item = self.item_read(&items);
        body.tail = match acc {
            // Horner: `acc * x + c`.
            Some(acc) if self.rng.chance(0.4) => {
                let x = self.fexpr(1);
                let acc = FExpr::Var(Name::new(acc));
                let scaled = FExpr::Bin(FOp::Mul, Box::new(acc), Box::new(x));
                FExpr::Bin(FOp::Add, Box::new(scaled), Box::new(item))
            }
            Some(acc) => {
                let acc = FExpr::Var(Name::new(acc));
                let e = FExpr::Bin(FOp::Mul, Box::new(item), Box::new(body.tail));
                FExpr::Bin(FOp::Add, Box::new(acc), Box::new(e))
            }
            None if self.rng.chance(0.75) => {
                let op = *self.rng.pick(&[FOp::Add, FOp::Mul, FOp::Sub]);
                FExpr::Bin(op, Box::new(item), Box::new(body.tail))
            }
            None => body.tail,
        };
        self.in_closure -= 1;
        self.scopes.pop();
        body
    }

    /// A read of one of a closure's items: the element, or an array at
    /// the index.
    fn item_read(&mut self, items: &[(String, Ty)]) -> FExpr {
        let (n, ty) = self.rng.pick(items).clone();
        match ty {
            Ty::R => FExpr::Elem(Name::new(&n)),
            Ty::U => {
                let arrays: Vec<Slot> = self
                    .visible(Ty::A)
                    .into_iter()
                    .filter(|a| a.len >= self.source_len_of_index(&n))
                    .collect();
                if arrays.is_empty() || self.rng.chance(0.2) {
                    FExpr::Cast(IExpr::Var(Name::new(&n)))
                } else {
                    let a = self.pick_slot(&arrays);
                    FExpr::Index(Name::new(&a.name), IExpr::Var(Name::new(&n)))
                }
            }
            _ => FExpr::Var(Name::new(&n)),
        }
    }

    /// The bound of the index variable `n`.
    fn source_len_of_index(&self, n: &str) -> usize {
        self.visible(Ty::U)
            .iter()
            .find(|s| s.name == n)
            .map_or(usize::MAX, |s| s.len)
    }

    /// `let v: Vec<f64> = ...collect();`, a copy of an array, or a vector
    /// filled by `push`; often written, then read into an outer float so
    /// that it is not dead.
    fn iter_stmts(&mut self) -> Vec<Stmt> {
        let arrays = self.walkable();
        let w = [30, if arrays.is_empty() { 0 } else { 50 }, 20];
        let made = match self.rng.weighted(&w) {
            0 => self.let_collect(),
            1 => self.let_copy(),
            _ => self.let_push(),
        };
        let (Stmt::LetArr { name, .. } | Stmt::LetPush { name, .. }) = &made else {
            unreachable!()
        };
        let v = self
            .visible(Ty::A)
            .into_iter()
            .find(|a| a.name == name.s)
            .unwrap();
        let mut out = vec![made];
        if !self.borrowed.contains(&v.name) && self.rng.chance(0.6) {
            let index = self.index_into(v.len);
            out.push(self.store_at(&v, index));
        }
        let floats: Vec<Slot> = self
            .visible(Ty::F)
            .into_iter()
            .filter(|s| s.assignable)
            .collect();
        if !floats.is_empty() && self.rng.chance(0.6) {
            let target = self.pick_slot(&floats).name;
            let read = if self.rng.chance(0.5) {
                FExpr::Sum(Name::new(&v.name))
            } else {
                FExpr::Index(Name::new(&v.name), self.index_into(v.len))
            };
            out.push(Stmt::Assign {
                name: Name::new(&target),
                op: AOp::Add,
                val: Val::F(read),
            });
        }
        out
    }

    fn let_collect(&mut self) -> Stmt {
        let src = self.source();
        let len = self.source_len(&src);
        let body = self.closure(&src, None);
        let name = self.fresh_from(BUF_NAMES);
        let turbofish = self.rng.chance(0.4);
        self.declare_array(&name, len, Shape::LocalVec);
        Stmt::LetArr {
            name: Name::new(&name),
            mutable: false,
            annot: false,
            init: ArrInit::Collect {
                src,
                body,
                turbofish,
                len,
            },
        }
    }

    /// `let mut s = x;`, `*x`, `w.to_vec()`, `w.clone()`, `w.to_owned()`,
    /// now and then shadowing the array copied.
    fn let_copy(&mut self) -> Stmt {
        let arrays = self.walkable();
        // Fixed arrays are rarer, and have the most ways to be copied.
        let fixed: Vec<Slot> = arrays
            .iter()
            .filter(|a| {
                matches!(
                    a.shape,
                    Shape::LocalArray | Shape::Param(ArrTy::Array | ArrTy::ArrayRef)
                )
            })
            .cloned()
            .collect();
        let a = if !fixed.is_empty() && self.rng.chance(0.7) {
            self.pick_slot(&fixed)
        } else {
            self.pick_slot(&arrays)
        };
        use CopyHow::*;
        let ways: &[(CopyHow, bool)] = match a.shape {
            Shape::Param(ArrTy::Array) => &[
                (Plain, false),
                (Plain, false),
                (Plain, false),
                (Clone, false),
                (ToOwned, false),
                (ToVec, true),
            ],
            Shape::Param(ArrTy::ArrayRef) => &[
                (Deref, false),
                (Clone, false),
                (ToOwned, false),
                (ToVec, true),
            ],
            Shape::Param(ArrTy::Slice) => &[(ToVec, true), (ToOwned, true)],
            Shape::LocalArray => &[
                (Plain, false),
                (Plain, false),
                (Plain, false),
                (ToVec, true),
            ],
            _ => &[(ToVec, true), (Clone, true), (ToOwned, true)],
        };
        let (how, vec) = *self.rng.pick(ways);
        let shadow = a.param && matches!(how, ToVec | ToOwned | Clone) && self.rng.chance(0.5);
        let name = if shadow {
            a.name.clone()
        } else {
            self.fresh_from(BUF_NAMES)
        };
        let shape = if vec {
            Shape::LocalVec
        } else {
            Shape::LocalArray
        };
        self.declare_array(&name, a.len, shape);
        Stmt::LetArr {
            name: Name::new(&name),
            mutable: false,
            annot: self.rng.chance(0.15),
            init: ArrInit::Copy {
                of: Name::new(&a.name),
                how,
                vec,
                len: a.len,
            },
        }
    }

    /// `let mut v = Vec::with_capacity(n); for i in 0..n { v.push(..); }`.
    fn let_push(&mut self) -> Stmt {
        let n = self.rng.range(MIN_LEN as i64, 4) as usize;
        self.scopes.push(Vec::new());
        let idx = self.fresh_from(INDEX_NAMES);
        self.declare_sized(&idx, Ty::U, false, true, n);
        self.in_fblock += 1;
        let val = self.fexpr_up_to(2);
        self.in_fblock -= 1;
        self.scopes.pop();
        let name = self.fresh_from(BUF_NAMES);
        self.declare_array(&name, n, Shape::LocalVec);
        Stmt::LetPush {
            name: Name::new(&name),
            annot: self.rng.chance(0.3),
            n,
            idx: Name::new(&idx),
            val,
        }
    }
}

/// What a function with structs in `wrt(..)` lacks: the float fields to
/// read as values (see `Gen::read_struct_floats`); and whether it reads an
/// integer field of one as the value of an integer `let` or assignment.
struct StructReads {
    missing: Vec<String>,
    int_value: bool,
}

fn struct_reads(p: &Program) -> StructReads {
    let mut reads = FieldReads::default();
    for s in &p.body {
        reads.stmt(s);
    }
    if let Some(t) = &p.tail {
        reads.fexpr(t, true);
    }
    let mut missing = Vec::new();
    let mut int_value = false;
    for owner in p.wrt.iter().flatten().filter(|w| fields_of(w).is_some()) {
        let fields = fields_of(owner).unwrap();
        let name = |f: &str| format!("{owner}.{f}");
        for (f, _) in fields.iter().filter(|(_, t)| *t == Ty::F) {
            let n = name(f);
            if reads.bare.contains(&n) && !reads.value.contains(&n) {
                missing.push(n);
            }
        }
        let any = fields
            .iter()
            .any(|(f, t)| *t != Ty::I && reads.value.contains(&name(f)));
        if !any && missing.iter().all(|a| !a.starts_with(&format!("{owner}."))) {
            let (f, _) = fields.iter().find(|(_, t)| *t == Ty::F).unwrap();
            missing.push(name(f));
        }
        int_value |= reads
            .int_values
            .iter()
            .any(|v| v.starts_with(&format!("{owner}.")));
    }
    StructReads { missing, int_value }
}

/// Whether a program reads its differentiated structs as the macro
/// supports (a shrunk program must, to fail the way the original did).
pub fn supported_struct_reads(p: &Program) -> bool {
    let r = struct_reads(p);
    r.missing.is_empty() && !r.int_value
}

/// Which fields of the structs a function reads as values (arithmetic, a
/// `let`, the result), and which it passes whole to a call (`g1(cfg.scale)`,
/// `f64::sin(self.k)`), as the macro tells them apart. Reads in conditions
/// and under casts are neither; where unsure, not a value.
#[derive(Default)]
struct FieldReads {
    value: Vec<String>,
    bare: Vec<String>,
    /// The variables the value of an integer `let` or assignment reads.
    int_values: Vec<String>,
}

impl FieldReads {
    fn field(&mut self, n: &Name, value: bool) {
        if value && split_field(&n.s).is_some() {
            self.value.push(n.s.clone());
        }
    }

    /// A whole argument of a call.
    fn arg(&mut self, e: &FExpr, value: bool) {
        match e {
            FExpr::Var(n) if split_field(&n.s).is_some() => self.bare.push(n.s.clone()),
            _ => self.fexpr(e, value),
        }
    }

    fn fexpr(&mut self, e: &FExpr, value: bool) {
        match e {
            FExpr::Var(n) | FExpr::Index(n, _) | FExpr::Sum(n) | FExpr::Product(n) => {
                self.field(n, value)
            }
            FExpr::Lit(_)
            | FExpr::Pi
            | FExpr::Cast(_)
            | FExpr::Deref(_)
            | FExpr::Len(_)
            | FExpr::Elem(_) => {}
            FExpr::Neg(a) => self.fexpr(a, value),
            FExpr::Bin(_, a, b) => {
                self.fexpr(a, value);
                self.fexpr(b, value);
            }
            FExpr::Call(_, true, args) => args.iter().for_each(|a| self.arg(a, value)),
            FExpr::Call(_, false, args) => args.iter().for_each(|a| self.fexpr(a, value)),
            FExpr::Powi(true, a, _) => self.arg(a, value),
            // `self.k.powi(2)`: an integer literal argument.
            FExpr::Powi(false, a, _) => self.fexpr(a, value && split_field(&name_of(a)).is_none()),
            FExpr::If(c, a, b) => {
                self.cond(c);
                self.fblock(a, value);
                self.fblock(b, value);
            }
            FExpr::Block(b) => self.fblock(b, value),
            FExpr::Apply(_, args) => {
                for a in args {
                    match a {
                        Arg::F(e) => self.arg(e, value),
                        Arg::A(n, _) => self.field(n, value),
                        Arg::D(_) => {}
                    }
                }
            }
            FExpr::Reduce(_, r) => {
                if let Reduce::Fold { init, .. } = &**r {
                    self.fexpr(init, value);
                }
                self.fblock(r.body(), value);
            }
            FExpr::Count(p) => self.fexpr(&p.rhs, false),
        }
    }

    fn cond(&mut self, c: &Cond) {
        match c {
            Cond::F(_, a, b) => {
                self.fexpr(a, false);
                self.fexpr(b, false);
            }
            Cond::And(a, b) | Cond::Or(a, b) => {
                self.cond(a);
                self.cond(b);
            }
            Cond::Not(a) => self.cond(a),
            Cond::Any(p) => self.fexpr(&p.rhs, false),
            Cond::I(..) | Cond::Var(_) | Cond::Some(_) => {}
        }
    }

    fn fblock(&mut self, b: &FBlock, value: bool) {
        for s in &b.stmts {
            self.stmt(s);
        }
        self.fexpr(&b.tail, value);
    }

    fn stmts(&mut self, list: &[Stmt]) {
        list.iter().for_each(|s| self.stmt(s));
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let {
                init: Some(Val::F(e)),
                ..
            }
            | Stmt::Assign { val: Val::F(e), .. }
            | Stmt::Return(e)
            | Stmt::Store { val: e, .. } => self.fexpr(e, true),
            // `v.push(self.k)`: a whole argument of a method, which the
            // macro cannot tell from an integer.
            Stmt::LetPush { val: e, .. } => self.arg(e, true),
            Stmt::CallOut { call, .. } | Stmt::LetElse { ret: call, .. } => self.fexpr(call, true),
            Stmt::Let {
                init: Some(Val::I(e)),
                ..
            }
            | Stmt::Assign { val: Val::I(e), .. } => int_vars(e, &mut self.int_values),
            // It reads float and array parameters, never a struct.
            Stmt::Let { .. } | Stmt::Break | Stmt::Continue | Stmt::Views(_) => {}
            Stmt::If { cond, then, els } => {
                self.cond(cond);
                self.stmts(then);
                if let Some(e) = els {
                    self.stmts(e);
                }
            }
            Stmt::While { cond, body, .. } => {
                self.cond(cond);
                self.stmts(body);
            }
            Stmt::For { body, .. }
            | Stmt::Loop { body, .. }
            | Stmt::Block(body)
            | Stmt::ForArr { body, .. } => self.stmts(body),
            Stmt::LetArr { init, .. } => match init {
                ArrInit::List { elems, .. } => elems.iter().for_each(|e| self.fexpr(e, true)),
                ArrInit::Collect { body, .. } => self.fblock(body, true),
                ArrInit::Zeros { .. } | ArrInit::Copy { .. } => {}
            },
        }
    }
}

/// The variable an expression is, if it is one.
fn name_of(e: &FExpr) -> String {
    match e {
        FExpr::Var(n) => n.s.clone(),
        _ => String::new(),
    }
}

fn int_vars(e: &IExpr, out: &mut Vec<String>) {
    match e {
        IExpr::Var(n) => out.push(n.s.clone()),
        IExpr::Lit(_) => {}
        IExpr::Add(a, b) => {
            int_vars(a, out);
            int_vars(b, out);
        }
        IExpr::Mul(a, _) | IExpr::Rem(a, _) => int_vars(a, out),
    }
}
