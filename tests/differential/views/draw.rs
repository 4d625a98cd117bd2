//! Drawing `Stmt::Views` and splicing it into a program.

use super::super::ast::{FExpr, FOp, Name, PTy, Param, Program, Stmt};
use super::super::rng::Rng;
use super::*;

/// What a part may read: float parameters, and array parameters with their
/// length and whether they are passed as `&w`.
pub struct Inputs {
    pub floats: Vec<String>,
    pub arrays: Vec<(String, usize, bool)>,
}

struct Draw<'a> {
    rng: &'a mut Rng,
    /// The draws of the forms added later (views of views, `chunks`,
    /// `windows`, `zip`, `iter_mut`), apart from `rng`, so that a program
    /// without them is the one its seed gave before they existed.
    more: &'a mut Rng,
    inputs: &'a Inputs,
}

impl Draw<'_> {
    /// `f` drawing from `more` instead of `rng`.
    fn later<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        std::mem::swap(&mut self.rng, &mut self.more);
        let out = f(self);
        std::mem::swap(&mut self.rng, &mut self.more);
        out
    }

    /// Now and then `shape` made again as a view of a view.
    fn reslice(&mut self, len: usize, shape: Shape) -> Shape {
        if matches!(shape, Shape::Split(_)) || !self.rng.chance(0.3) {
            return shape;
        }
        let lo = self.rng.below(len);
        Shape::Reslice(lo, self.rng.range(1, (len - lo) as i64) as usize)
    }

    /// A read by `chunks`, `chunks_exact`, `windows` or `zip`.
    fn later_use(&mut self, lens: &[usize]) -> Use {
        let view = self.rng.below(lens.len());
        let t = self.term();
        // Zipped more often when there is a parameter to zip with.
        let zip = if self.inputs.arrays.is_empty() { 2 } else { 6 };
        let how = match self.rng.weighted(&[4, 2, zip]) {
            0 => UseHow::Chunks {
                k: self.rng.range(2, 3) as usize,
                exact: self.rng.chance(0.5),
                t,
            },
            1 => UseHow::Windows(t),
            _ => {
                let arrays = &self.inputs.arrays;
                let with = if lens.len() == 2 && (arrays.is_empty() || self.rng.chance(0.3)) {
                    Zip::View(1 - view)
                } else if arrays.is_empty() {
                    Zip::View(view)
                } else {
                    Zip::Param(Name::new(&self.rng.pick(arrays).0))
                };
                UseHow::Zip(with, t)
            }
        };
        Use { view, how }
    }

    fn term(&mut self) -> Term {
        let lit = *self.rng.pick(SCALES);
        if self.inputs.floats.is_empty() || self.rng.chance(0.25) {
            return Term {
                var: None,
                fun: None,
                lit,
            };
        }
        let v = self.rng.pick(&self.inputs.floats).clone();
        let fun = match self.rng.below(4) {
            0 => Some("sin"),
            1 => Some("tanh"),
            _ => None,
        };
        Term {
            var: Some(Name::new(&v)),
            fun,
            lit,
        }
    }

    fn terms(&mut self, n: usize) -> Vec<Term> {
        (0..n).map(|_| self.term()).collect()
    }

    fn local(&mut self, min: usize) -> Base {
        let n = self.rng.range(min as i64, 5) as usize;
        Base::Local {
            vec: self.rng.chance(0.5),
            elems: self.terms(n),
        }
    }

    /// An array parameter at least `min` long, else a local array.
    fn base(&mut self, min: usize) -> Base {
        let fit: Vec<&(String, usize, bool)> =
            self.inputs.arrays.iter().filter(|a| a.1 >= min).collect();
        if fit.is_empty() || self.rng.chance(0.25) {
            return self.local(min);
        }
        let (name, len, amp) = (*self.rng.pick(&fit)).clone();
        Base::Param {
            name: Name::new(&name),
            len,
            amp,
        }
    }

    fn shape(&mut self, len: usize, split_ok: bool) -> Shape {
        let lo = self.rng.below(len);
        match self.rng.below(if split_ok { 6 } else { 5 }) {
            0 => Shape::Range(lo, self.rng.range(lo as i64 + 1, len as i64) as usize),
            1 => Shape::From(lo),
            2 => Shape::To(self.rng.range(1, len as i64) as usize),
            3 | 4 => Shape::FromVar(lo),
            _ => Shape::Split(self.rng.range(1, len as i64 - 1) as usize),
        }
    }

    fn use_of(&mut self, view: usize, len: usize) -> Use {
        let how = match self.rng.below(8) {
            0 => UseHow::Elem(self.rng.below(len), self.term()),
            1 => UseHow::Len,
            2 => UseHow::Sum,
            3 => UseHow::Map,
            4 | 5 => UseHow::Loop {
                t: self.term(),
                upto: self
                    .rng
                    .chance(0.4)
                    .then(|| self.rng.range(1, len as i64) as usize),
            },
            6 => UseHow::ForElem {
                t: self.term(),
                iter: self.rng.chance(0.5),
            },
            _ => UseHow::Call(self.term()),
        };
        Use { view, how }
    }

    /// Reads of each view, one to three in all, each view read at least
    /// once.
    fn uses(&mut self, lens: &[usize]) -> Vec<Use> {
        let mut uses: Vec<Use> = (0..lens.len()).map(|v| self.use_of(v, lens[v])).collect();
        for _ in 0..self.rng.below(2) {
            let v = self.rng.below(lens.len());
            uses.push(self.use_of(v, lens[v]));
        }
        uses
    }

    fn read(&mut self) -> Part {
        let base = self.base(2);
        let shape = self.shape(base.len(), true);
        let shape = self.later(|d| d.reslice(base.len(), shape));
        let lens = shape.lens(base.len());
        let mut uses = self.uses(&lens);
        if self.more.chance(0.6) {
            uses.push(self.later(|d| d.later_use(&lens)));
        }
        // Views of parameters are lent to a helper more often: those of
        // local arrays are lent with `gaps()` only.
        if matches!(base, Base::Param { .. }) && self.rng.chance(0.35) {
            let how = UseHow::Call(self.term());
            uses.push(Use { view: 0, how });
        }
        Part::Read {
            base,
            shape,
            uses,
            helper: self.rng.below(3),
        }
    }

    fn write(&mut self) -> Part {
        let len = self.rng.range(2, 5) as usize;
        let init = self.terms(len);
        let shape = self.shape(len, true);
        let shape = self.later(|d| d.reslice(len, shape));
        let lens = shape.lens(len);
        let mut writes = Vec::new();
        for _ in 0..1 + self.rng.below(3) {
            let view = self.rng.below(lens.len());
            let n = lens[view];
            let how = match self.rng.below(if lens.len() == 2 { 5 } else { 4 }) {
                0 => WriteHow::Set(self.rng.below(n), self.rng.below(n), self.term()),
                1 => WriteHow::Add(self.rng.below(n), self.term()),
                2 => WriteHow::Loop(self.term()),
                3 => WriteHow::Lend(self.term()),
                _ => WriteHow::Cross(
                    self.rng.below(n),
                    self.rng.below(lens[1 - view]),
                    self.term(),
                ),
            };
            writes.push(Write { view, how });
        }
        if self.more.chance(0.7) {
            writes.push(self.later(|d| {
                let view = d.rng.below(lens.len());
                let t = d.term();
                let arrays = &d.inputs.arrays;
                let zip = if arrays.is_empty() && lens.len() < 2 {
                    0
                } else {
                    4
                };
                let how = match d.rng.weighted(&[1, 1, zip]) {
                    0 => WriteHow::IterMut(t),
                    1 => WriteHow::IterMutEnum(t),
                    _ => WriteHow::IterMutZip(
                        if lens.len() == 2 && (arrays.is_empty() || d.rng.chance(0.5)) {
                            Zip::View(1 - view)
                        } else {
                            Zip::Param(Name::new(&d.rng.pick(arrays).0))
                        },
                        t,
                    ),
                };
                Write { view, how }
            }));
        }
        // Half the reads lend the view to a helper reading it (with
        // `gaps()` only: see there).
        let mut uses = if self.rng.chance(0.5) {
            let view = self.rng.below(lens.len());
            if self.rng.chance(0.5) {
                let how = UseHow::Call(self.term());
                vec![Use { view, how }]
            } else {
                vec![self.use_of(view, lens[view])]
            }
        } else {
            Vec::new()
        };
        let elem = self
            .rng
            .chance(0.4)
            .then(|| (self.rng.below(len), self.term()));
        if self.more.chance(0.35) {
            uses.push(self.later(|d| d.later_use(&lens)));
        }
        Part::Write {
            vec: self.rng.chance(0.5),
            init,
            shape,
            writes,
            uses,
            elem,
            helper: self.rng.below(3),
        }
    }

    fn lend(&mut self, len: usize) -> Lend {
        if self.rng.chance(0.5) {
            return Lend::Whole;
        }
        let lo = self.rng.below(len);
        Lend::Range(lo, self.rng.range(lo as i64 + 1, len as i64) as usize)
    }

    fn outs(&mut self) -> Part {
        let xs = (!self.inputs.arrays.is_empty() && self.rng.chance(0.6)).then(|| self.base(1));
        let t = self.term();
        let la = self.rng.range(2, 5) as usize;
        let a = self.terms(la);
        let a_lend = self.lend(la);
        let split = self
            .rng
            .chance(0.25)
            .then(|| self.rng.range(1, la as i64 - 1) as usize);
        let b = (split.is_none() && self.rng.chance(0.7)).then(|| {
            let lb = self.rng.range(2, 4) as usize;
            (self.terms(lb), self.lend(lb))
        });
        // At least two outputs.
        let need_e = split.is_none() && b.is_none();
        let e = (need_e || self.rng.chance(0.6)).then(|| {
            if self.rng.chance(0.6) {
                Ok(self.term())
            } else {
                let lq = self.rng.range(2, 3) as usize;
                let j = self.rng.below(lq);
                Err((self.terms(lq), j))
            }
        });
        Part::Outs {
            xs,
            t,
            a,
            a_lend,
            b,
            split,
            e,
            helper: self.rng.below(4),
        }
    }

    fn fixed(&mut self) -> Part {
        let n = self.rng.range(2, 3) as usize;
        let base = self.base(n);
        let len = base.len();
        let calls = (0..1 + self.rng.below(2))
            .map(|_| {
                let chunk = match self.rng.below(3) {
                    0 => Chunk::First,
                    1 => Chunk::Last,
                    _ => Chunk::At(self.rng.below(len - n + 1)),
                };
                let elem = self.rng.chance(0.5).then(|| self.rng.below(n));
                (chunk, elem, self.term())
            })
            .collect();
        Part::Fixed { base, n, calls }
    }
}

/// One to three parts: views read (most), buffers written through mutable
/// views, helpers with several outputs, fixed-size views.
pub fn draw(rng: &mut Rng, more: &mut Rng, inputs: &Inputs) -> ViewUse {
    let mut d = Draw { rng, more, inputs };
    let n = 1 + usize::from(d.rng.chance(0.4)) + usize::from(d.rng.chance(0.15));
    let parts = (0..n)
        .map(|_| match d.rng.weighted(&[35, 25, 25, 15]) {
            0 => d.read(),
            1 => d.write(),
            2 => d.outs(),
            _ => d.fixed(),
        })
        .collect();
    ViewUse {
        out: Name::new("vw"),
        block: d.rng.chance(0.3),
        parts,
    }
}

/// About three programs in ten (from `rng`, a generator of draws of its
/// own, so that the others stay as they were) get a `Stmt::Views` at the
/// top level, before the value or the final `return`, which then adds or
/// subtracts its float. Parts read the parameters no earlier top-level
/// statement declares again. `more` draws the forms added later.
pub fn splice(rng: &mut Rng, more: &mut Rng, p: &mut Program) {
    if !rng.chance(0.3) {
        return;
    }
    let end = match (&p.tail, p.body.last()) {
        (Some(_), _) => p.body.len(),
        (None, Some(Stmt::Return(_))) => p.body.len() - 1,
        _ => return,
    };
    let at = rng.below(end + 1);
    let declared: Vec<&str> = p.body[..at]
        .iter()
        .filter_map(|s| match s {
            Stmt::Let { name, .. } | Stmt::LetArr { name, .. } | Stmt::LetPush { name, .. } => {
                Some(name.s.as_str())
            }
            Stmt::LetElse { pat, .. } => Some(pat.bind.s.as_str()),
            Stmt::While { guard, .. } | Stmt::Loop { guard, .. } => Some(guard.s.as_str()),
            _ => None,
        })
        .collect();
    let free = |q: &&Param| !declared.contains(&q.name.s.as_str());
    let source = p.source();
    let viewable = |q: &&Param| gaps() || !declared_again(&source, &q.name.s);
    let inputs = Inputs {
        floats: p
            .params
            .iter()
            .filter(free)
            .filter(|q| q.ty == PTy::F64)
            .map(|q| q.name.s.clone())
            .collect(),
        arrays: p
            .params
            .iter()
            .filter(free)
            .filter(viewable)
            .filter_map(|q| match q.ty {
                PTy::Arr(_, n) => Some((q.name.s.clone(), n, q.ty.owned_array())),
                _ => None,
            })
            .collect(),
    };
    let v = draw(rng, more, &inputs);
    let read = FExpr::Var(v.out.clone());
    let op = if rng.chance(0.7) { FOp::Add } else { FOp::Sub };
    let with = |e: FExpr| FExpr::Bin(op, Box::new(e), Box::new(read.clone()));
    match &mut p.tail {
        Some(t) => *t = with(t.clone()),
        None => {
            if let Some(Stmt::Return(e)) = p.body.last_mut() {
                *e = with(e.clone());
            }
        }
    }
    p.body.insert(at, Stmt::Views(Box::new(v)));
}

/// Whether a `let` anywhere in `source` declares `name` again.
fn declared_again(source: &str, name: &str) -> bool {
    [" ", ":", ","].iter().any(|after| {
        source.contains(&format!("let {name}{after}"))
            || source.contains(&format!("let mut {name}{after}"))
            || source.contains(&format!("let ({name}{after}"))
            || source.contains(&format!("let (mut {name}{after}"))
    })
}
