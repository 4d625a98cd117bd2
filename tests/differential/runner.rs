//! The `main` of the generated test crate: for every program, draw points,
//! keep those where the dual-number evaluation says nothing is near a branch
//! flip, a kink or the edge of a domain, and compare there
//!
//! 1. the value of `f_grad` with `f`, bit for bit (and the oracle's value
//!    too, which checks the oracle's copy of the program);
//! 2. the gradient of `f_grad` with the dual numbers', to `REL` times the
//!    magnitude of the terms that summed to it, plus `ABS`;
//! 3. `f_adjoint(.., d_out)` with `d_out` times the dual gradient, likewise,
//!    and what `f_adjoint_acc(.., d_out, ..)` adds to buffers that start at
//!    `ACC_START`;
//! 4. the dual gradient with centered finite differences of `f`, where the
//!    step cannot cross a branch (a check of the oracle itself).
//!
//! An array parameter is one direction per element: the gradient of
//! `f(x: f64, w: &[f64])` is compared as the flat list `[d/dx, d/dw[0], ..]`,
//! the oracle seeding one element at a time.
//! A struct in `wrt(..)` is one direction per float field and per element
//! of its array field (`Kind::DataWrt`), in the order of its fields, a
//! differentiated receiver first as its gradient entry is; the glue
//! flattens the gradient struct the same way and reports an integer field
//! that is not the input's (`same_int`).
//!
//! One line per program goes to stdout: `START id` before it (so a crash can
//! be blamed), then `PROG id OK|SKIP|FAIL ...`. Everything is deterministic:
//! the points come from the program's seed.
//!
//! This file is copied into the generated crate as `src/runner.rs`.
#![allow(dead_code)]

use crate::dual::{self, D};
use crate::rng::Rng;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Relative tolerance of the gradient and adjoint comparisons, applied to
/// the magnitude `m` of the terms (see `dual.rs`).
pub const REL: f64 = 1e-9;
/// Absolute floor of the same comparisons.
pub const ABS: f64 = 1e-12;
/// Smallest accepted relative distance of a comparison or kink.
pub const MIN_MARGIN: f64 = 1e-3;
/// Largest accepted intermediate value or derivative magnitude.
pub const MAX_MAGNITUDE: f64 = 1e8;
/// The length of a struct's array field.
pub const DATA_LEN: usize = 3;
/// The `d_out` of `f_adjoint`, in turn: none a power of two.
pub const D_OUTS: [f64; 3] = [2.5, -0.75, 1.3];
/// What `f_adjoint_acc`'s buffers hold before the call: it must add.
pub const ACC_START: f64 = 0.375;

#[derive(Clone, Debug)]
pub enum Input {
    F(f64),
    I(i64),
    B(bool),
    /// The elements of an array parameter.
    S(Vec<f64>),
    /// A struct of constants (a parameter or the receiver): its float, its
    /// integer and its array field.
    Data(f64, i64, Vec<f64>),
}

impl Input {
    pub fn f(&self) -> f64 {
        match *self {
            Input::F(v) => v,
            _ => panic!("not a float input"),
        }
    }
    pub fn i(&self) -> i64 {
        match *self {
            Input::I(v) => v,
            _ => panic!("not an integer input"),
        }
    }
    pub fn b(&self) -> bool {
        match *self {
            Input::B(v) => v,
            _ => panic!("not a bool input"),
        }
    }
    /// The float input as a dual number, seeded when `seed`.
    pub fn d(&self, seed: bool) -> D {
        dual::input(self.f(), seed)
    }
    pub fn s(&self) -> &Vec<f64> {
        match self {
            Input::S(v) => v,
            _ => panic!("not an array input"),
        }
    }
    pub fn arr<const N: usize>(&self) -> [f64; N] {
        self.s().as_slice().try_into().expect("the stated length")
    }
    /// The array as dual numbers, element `k` seeded (none if out of range).
    pub fn ds(&self, k: usize) -> Vec<D> {
        self.s()
            .iter()
            .enumerate()
            .map(|(i, &v)| dual::input(v, i == k))
            .collect()
    }
    pub fn ds_arr<const N: usize>(&self, k: usize) -> [D; N] {
        self.ds(k).try_into().expect("the stated length")
    }
    pub fn df(&self) -> f64 {
        match self {
            Input::Data(v, ..) => *v,
            _ => panic!("not a struct input"),
        }
    }
    pub fn di(&self) -> i64 {
        match self {
            Input::Data(_, v, _) => *v,
            _ => panic!("not a struct input"),
        }
    }
    pub fn da(&self) -> &Vec<f64> {
        match self {
            Input::Data(.., v) => v,
            _ => panic!("not a struct input"),
        }
    }
    pub fn da_arr<const N: usize>(&self) -> [f64; N] {
        self.da().as_slice().try_into().expect("the field's length")
    }
    /// The array field as dual-number constants.
    pub fn dual_arr<const N: usize>(&self) -> [D; N] {
        let v: Vec<D> = self.da().iter().map(|&v| D::c(v)).collect();
        v.try_into().expect("the field's length")
    }
    /// The array field of a differentiated struct as dual numbers, element
    /// `k` seeded (none if out of range).
    pub fn dda(&self, k: usize) -> Vec<D> {
        self.da()
            .iter()
            .enumerate()
            .map(|(i, &v)| dual::input(v, i == k))
            .collect()
    }
    pub fn dda_arr<const N: usize>(&self, k: usize) -> [D; N] {
        self.dda(k).try_into().expect("the field's length")
    }
    /// The value a direction moves: the float, one element, a struct's
    /// float field or one element of its array field.
    fn at(&self, at: At) -> f64 {
        match at {
            At::Whole => self.f(),
            At::Elem(k) => self.s()[k],
            At::Field => self.df(),
            At::FieldElem(k) => self.da()[k],
        }
    }
    fn set(&mut self, at: At, v: f64) {
        match (self, at) {
            (Input::S(a), At::Elem(k)) => a[k] = v,
            (Input::Data(f, ..), At::Field) => *f = v,
            (Input::Data(.., a), At::FieldElem(k)) => a[k] = v,
            (me, _) => *me = Input::F(v),
        }
    }
}

/// What a direction of differentiation moves in its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    Whole,
    Elem(usize),
    Field,
    FieldElem(usize),
}

thread_local! {
    /// The first integer field of a struct gradient that differs from the
    /// input's, since the last `take_mismatch`.
    static MISMATCH: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// An integer field of a struct's gradient entry (or `f_adjoint_acc`
/// buffer) must be the input's.
pub fn same_int(what: &str, got: i64, want: i64) {
    if got != want {
        MISMATCH.with(|m| {
            m.borrow_mut().get_or_insert_with(|| {
                format!("the gradient's {what} is {got}, not the input's {want}")
            });
        });
    }
}

fn take_mismatch() -> Option<String> {
    MISMATCH.with(|m| m.borrow_mut().take())
}

/// Gradient entries, flattened: a float, or an array's elements in order.
pub trait Flat {
    fn flat(&self, out: &mut Vec<f64>);
}

impl Flat for f64 {
    fn flat(&self, out: &mut Vec<f64>) {
        out.push(*self);
    }
}

impl Flat for Vec<f64> {
    fn flat(&self, out: &mut Vec<f64>) {
        out.extend_from_slice(self);
    }
}

impl<const N: usize> Flat for [f64; N] {
    fn flat(&self, out: &mut Vec<f64>) {
        out.extend_from_slice(self);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A float parameter; `true` when it has a gradient entry.
    F(bool),
    I,
    B,
    /// An array parameter of the given length; `true` when differentiable.
    S(bool, usize),
    /// A struct of constants.
    Data,
    /// A struct named in `wrt(..)` (`true`: the receiver), with its fields
    /// in order: one direction per float, per element of a float array.
    DataWrt(bool, &'static [Field]),
}

/// A field of a differentiated struct, as the runner moves it: the
/// struct's float (`Input::Data`'s first), its integer, or its array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    F,
    I,
    A(usize),
}

/// The directions of differentiation: (input, what it moves), in the
/// gradient's order: a differentiated receiver (the last input) first.
fn directions(kinds: &[Kind]) -> Vec<(usize, At)> {
    let mut out = Vec::new();
    let data = |out: &mut Vec<(usize, At)>, i: usize, fields: &[Field]| {
        for f in fields {
            match *f {
                Field::F => out.push((i, At::Field)),
                Field::I => {}
                Field::A(n) => out.extend((0..n).map(|e| (i, At::FieldElem(e)))),
            }
        }
    };
    for (i, k) in kinds.iter().enumerate() {
        if let Kind::DataWrt(true, fields) = *k {
            data(&mut out, i, fields);
        }
    }
    for (i, k) in kinds.iter().enumerate() {
        match *k {
            Kind::F(true) => out.push((i, At::Whole)),
            Kind::S(true, n) => out.extend((0..n).map(|e| (i, At::Elem(e)))),
            Kind::DataWrt(false, fields) => data(&mut out, i, fields),
            _ => {}
        }
    }
    out
}

pub struct Prog {
    pub id: usize,
    pub seed: u64,
    pub kinds: &'static [Kind],
    pub primal: fn(&[Input]) -> f64,
    pub grad: fn(&[Input]) -> (f64, Vec<f64>),
    pub adjoint: fn(&[Input], f64) -> Vec<f64>,
    /// `f_adjoint_acc` into buffers starting at `ACC_START`, then flattened.
    pub adjoint_acc: fn(&[Input], f64) -> Vec<f64>,
    /// The dual version, seeded along the `dir`-th direction.
    pub dual: fn(&[Input], usize) -> D,
    /// `f_tangent` along the `dir`-th direction, for programs with `tangent`.
    pub tangent: Option<fn(&[Input], usize) -> (f64, f64)>,
    /// `f_hvp` along `v`, for programs with `hessian`.
    pub hvp: Option<fn(&[Input], &[f64]) -> (f64, Vec<f64>, Vec<f64>)>,
    /// `f_vec_jacobian`, for programs given a vector-output twin `f_vec`:
    /// the same body, its value `v` then returned as the vector
    /// `[sin(v · (k + 0.5)) for k in 0..=n]`, one row more than there are
    /// directions (so the Jacobian is made by columns, in forward mode).
    pub jacobian: Option<fn(&[Input]) -> (Vec<f64>, Vec<Vec<f64>>)>,
}

fn draw_float(rng: &mut Rng) -> f64 {
    let r = match rng.below(10) {
        0..=6 => 2.5,
        7 | 8 => 0.7,
        _ => 5.0,
    };
    (rng.unit() * 2.0 - 1.0) * r
}

fn draw(rng: &mut Rng, kinds: &[Kind]) -> Vec<Input> {
    kinds
        .iter()
        .map(|k| match k {
            Kind::F(_) => Input::F(draw_float(rng)),
            Kind::I => Input::I(rng.below(5) as i64),
            Kind::B => Input::B(rng.below(2) == 1),
            Kind::S(_, n) => Input::S((0..*n).map(|_| draw_float(rng)).collect()),
            Kind::Data | Kind::DataWrt(..) => Input::Data(
                draw_float(rng),
                rng.below(5) as i64,
                (0..DATA_LEN).map(|_| draw_float(rng)).collect(),
            ),
        })
        .collect()
}

fn panic_text(e: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = e.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = e.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic)".into()
    }
}

fn one_line(s: &str) -> String {
    s.replace('\n', " | ")
}

/// What happened at one point.
enum Point {
    /// Compared, all good; `fd_checked` when finite differences were too.
    Ok {
        fd_checked: bool,
    },
    /// Not a usable point (near a flip, a kink, a singularity, or huge).
    Reject,
    Fail(&'static str, String),
}

struct Oracle {
    value: f64,
    grad: Vec<D>,
    margin: f64,
    largest: f64,
}

fn oracle(p: &Prog, x: &[Input]) -> Option<Oracle> {
    let ndiff = directions(p.kinds).len();
    let mut grad = Vec::new();
    let mut value = None::<f64>;
    let mut margin = f64::INFINITY;
    let mut largest: f64 = 0.0;
    for dir in 0..ndiff {
        dual::reset();
        let r = catch_unwind(|| (p.dual)(x, dir)).ok()?;
        if !dual::domain_ok() || !r.v.is_finite() {
            return None;
        }
        margin = margin.min(dual::margin());
        largest = largest.max(dual::largest());
        if let Some(v) = value {
            if v.to_bits() != r.v.to_bits() {
                return None;
            }
        }
        value = Some(r.v);
        grad.push(r);
    }
    if margin < MIN_MARGIN || largest > MAX_MAGNITUDE {
        return None;
    }
    Some(Oracle {
        value: value?,
        grad,
        margin,
        largest,
    })
}

fn show(x: &[Input]) -> String {
    let parts: Vec<String> = x
        .iter()
        .map(|i| match i {
            Input::F(v) => format!("{v:?}"),
            Input::I(v) => format!("{v}"),
            Input::B(v) => format!("{v}"),
            Input::S(v) => format!("{v:?}"),
            Input::Data(f, i, a) => format!("{{ {f:?}, {i}, {a:?} }}"),
        })
        .collect();
    format!("({})", parts.join(", "))
}

fn close(got: f64, want: f64, scale: f64) -> bool {
    (got - want).abs() <= REL * scale + ABS
}

/// The dual-number copy computes each value as `f64` does, but in a release
/// build the optimiser may fold a constant subexpression of `f` (`3.37_f64
/// .powi(3)`) with another rounding than the call made at run time: a few
/// units in the last place, far less than any change of path.
fn same_path_value(f: f64, dual: f64) -> bool {
    const ULPS: u64 = 8;
    if f.to_bits() == dual.to_bits() {
        return true;
    }
    f.is_finite()
        && dual.is_finite()
        && f.signum() == dual.signum()
        && f.to_bits().abs_diff(dual.to_bits()) <= ULPS
}

fn point(p: &Prog, x: &[Input], d_out: f64) -> Point {
    let Some(o) = oracle(p, x) else {
        return Point::Reject;
    };
    let Ok(fv) = catch_unwind(|| (p.primal)(x)) else {
        // The plain function panics (an overflow?): not a usable point.
        return Point::Reject;
    };
    let at = show(x);
    if !same_path_value(fv, o.value) {
        return Point::Fail(
            "oracle",
            format!(
                "at {at}: f = {fv:?} but its dual-number copy gives {:?}",
                o.value
            ),
        );
    }
    take_mismatch();
    let (gv, g) = match catch_unwind(|| (p.grad)(x)) {
        Ok(r) => r,
        Err(e) => return Point::Fail("panic", format!("f_grad{at} panicked: {}", panic_text(e))),
    };
    if let Some(m) = take_mismatch() {
        return Point::Fail("grad", format!("at {at}: f_grad: {m}"));
    }
    if gv.to_bits() != fv.to_bits() {
        return Point::Fail(
            "value",
            format!("at {at}: f_grad's value {gv:?} is not f's {fv:?}"),
        );
    }
    if g.len() != o.grad.len() {
        return Point::Fail(
            "grad",
            format!(
                "at {at}: f_grad's gradient has {} entries, expected {} ({g:?})",
                g.len(),
                o.grad.len()
            ),
        );
    }
    for (i, (gi, di)) in g.iter().zip(&o.grad).enumerate() {
        if !close(*gi, di.d, di.m) {
            return Point::Fail(
                "grad",
                format!(
                    "at {at}: gradient entry {i}: f_grad gives {gi:?}, dual numbers {:?} \
                     (term magnitude {:e}; all: f_grad {g:?}, dual {:?})",
                    di.d,
                    di.m,
                    o.grad.iter().map(|d| d.d).collect::<Vec<_>>()
                ),
            );
        }
    }
    let a = match catch_unwind(|| (p.adjoint)(x, d_out)) {
        Ok(r) => r,
        Err(e) => {
            return Point::Fail(
                "panic",
                format!(
                    "f_adjoint{at} with d_out {d_out} panicked: {}",
                    panic_text(e)
                ),
            )
        }
    };
    if let Some(m) = take_mismatch() {
        return Point::Fail("adjoint", format!("at {at}: f_adjoint: {m}"));
    }
    if let Some(fail) = check_adjoint("adjoint", "f_adjoint", &a, 0.0, &o, d_out, &at) {
        return fail;
    }
    let acc = match catch_unwind(|| (p.adjoint_acc)(x, d_out)) {
        Ok(r) => r,
        Err(e) => {
            return Point::Fail(
                "panic",
                format!(
                    "f_adjoint_acc{at} with d_out {d_out} panicked: {}",
                    panic_text(e)
                ),
            )
        }
    };
    if let Some(m) = take_mismatch() {
        return Point::Fail("acc", format!("at {at}: f_adjoint_acc's buffer: {m}"));
    }
    if let Some(fail) = check_adjoint("acc", "f_adjoint_acc", &acc, ACC_START, &o, d_out, &at) {
        return fail;
    }
    if let Some(fail) = check_tangent(p, x, &o, fv, &at) {
        return fail;
    }
    if let Some(fail) = check_hvp(p, x, &o, (fv, &g), &at) {
        return fail;
    }
    if let Some(fail) = check_jacobian(p, x, &o, fv, &at) {
        return fail;
    }
    // Finite differences, where a step cannot move any compared quantity
    // across its tie: the step moves intermediates by about h * largest.
    let mut fd_checked = false;
    for (dir, &(i, elem)) in directions(p.kinds).iter().enumerate() {
        let xi = x[i].at(elem);
        let scale = xi.abs().max(1.0);
        let want = o.grad[dir];
        let tol = 1e-6 * (1.0 + want.d.abs() + want.m) + 1e-7 * o.largest;
        // Three steps: a strongly curved function (a cosine of a large,
        // fast-moving argument) needs a small one, rounding a large one.
        let mut fds = Vec::new();
        for h in [1e-5 * scale, 1e-6 * scale, 1e-7 * scale] {
            if h * o.largest * 10.0 > o.margin {
                continue;
            }
            let mut xp = x.to_vec();
            let mut xm = x.to_vec();
            xp[i].set(elem, xi + h);
            xm[i].set(elem, xi - h);
            let (Ok(fp), Ok(fm)) = (
                catch_unwind(|| (p.primal)(&xp)),
                catch_unwind(|| (p.primal)(&xm)),
            ) else {
                continue;
            };
            fds.push((h, (fp - fm) / ((xi + h) - (xi - h))));
        }
        if fds.is_empty() {
            continue;
        }
        if fds.iter().any(|(_, fd)| (fd - want.d).abs() <= tol) {
            fd_checked = true;
            continue;
        }
        // No step agrees. Blame the oracle only if the differences agree
        // with each other (they have converged, to something else).
        let converged = fds.windows(2).any(|w| (w[0].1 - w[1].1).abs() <= tol);
        if converged {
            return Point::Fail(
                "fd",
                format!(
                    "at {at}: dual-number derivative {i} is {:?} but centered differences \
                     give {fds:?} (f_grad agrees with the dual numbers)",
                    want.d
                ),
            );
        }
    }
    Point::Ok { fd_checked }
}

/// `f_tangent` along each direction against the dual numbers' derivative.
fn check_tangent(p: &Prog, x: &[Input], o: &Oracle, fv: f64, at: &str) -> Option<Point> {
    let t = p.tangent?;
    for (dir, want) in o.grad.iter().enumerate() {
        let (tv, td) = match catch_unwind(|| t(x, dir)) {
            Ok(r) => r,
            Err(e) => {
                return Some(Point::Fail(
                    "panic",
                    format!("f_tangent{at} along {dir} panicked: {}", panic_text(e)),
                ))
            }
        };
        if tv.to_bits() != fv.to_bits() {
            return Some(Point::Fail(
                "tangent",
                format!("at {at}: f_tangent's value {tv:?} is not f's {fv:?}"),
            ));
        }
        if !close(td, want.d, want.m) {
            return Some(Point::Fail(
                "tangent",
                format!(
                    "at {at}: f_tangent along direction {dir} gives {td:?}, dual numbers {:?} \
                     (term magnitude {:e})",
                    want.d, want.m
                ),
            ));
        }
    }
    None
}

/// The vector-output twin's Jacobian: row `k` is `(k + 0.5) cos(v (k + 0.5))`
/// times the dual numbers' gradient, its value bit for bit `sin(v (k + 0.5))`.
fn check_jacobian(p: &Prog, x: &[Input], o: &Oracle, fv: f64, at: &str) -> Option<Point> {
    let jacobian = p.jacobian?;
    let (value, jac) = match catch_unwind(|| jacobian(x)) {
        Ok(r) => r,
        Err(e) => {
            return Some(Point::Fail(
                "panic",
                format!("f_vec_jacobian{at} panicked: {}", panic_text(e)),
            ))
        }
    };
    let rows = o.grad.len() + 1;
    if value.len() != rows || jac.len() != rows {
        return Some(Point::Fail(
            "jacobian",
            format!(
                "at {at}: f_vec_jacobian gives {} values and {} rows, expected {rows}",
                value.len(),
                jac.len()
            ),
        ));
    }
    for (k, (vk, row)) in value.iter().zip(&jac).enumerate() {
        let c = k as f64 + 0.5;
        let want_v = (fv * c).sin();
        if vk.to_bits() != want_v.to_bits() {
            return Some(Point::Fail(
                "jacobian",
                format!("at {at}: f_vec_jacobian's value {k} is {vk:?}, not sin(f · {c}) = {want_v:?}"),
            ));
        }
        if row.len() != o.grad.len() {
            return Some(Point::Fail(
                "jacobian",
                format!("at {at}: f_vec_jacobian's row {k} has {} entries", row.len()),
            ));
        }
        let outer = c * (fv * c).cos();
        for (dir, (got, want)) in row.iter().zip(&o.grad).enumerate() {
            if !close(*got, outer * want.d, c * want.m) {
                return Some(Point::Fail(
                    "jacobian",
                    format!(
                        "at {at}: f_vec_jacobian[{k}][{dir}] is {got:?}, expected {:?} \
                         ({c} cos(f · {c}) times the dual numbers' {:?})",
                        outer * want.d,
                        want.d
                    ),
                ));
            }
        }
    }
    None
}

/// The direction `f_hvp` is checked along: fixed, no entry zero.
fn hvp_direction(n: usize) -> Vec<f64> {
    (0..n).map(|k| [0.7, -1.3, 0.4, 1.1, -0.6][k % 5]).collect()
}

/// `f_hvp`: its value is `f`'s, its gradient `f_grad`'s, and `H·v` agrees
/// with centered differences of `f_grad` along `v` (where no step can cross
/// a branch; a disagreement counts only if the differences have converged).
fn check_hvp(p: &Prog, x: &[Input], o: &Oracle, (fv, g): (f64, &[f64]), at: &str) -> Option<Point> {
    let hvp = p.hvp?;
    let dirs = directions(p.kinds);
    let v = hvp_direction(dirs.len());
    let (hv_value, hg, hv) = match catch_unwind(|| hvp(x, &v)) {
        Ok(r) => r,
        Err(e) => return Some(Point::Fail("panic", format!("f_hvp{at} panicked: {}", panic_text(e)))),
    };
    if hv_value.to_bits() != fv.to_bits() {
        return Some(Point::Fail("hvp", format!("at {at}: f_hvp's value {hv_value:?} is not f's {fv:?}")));
    }
    for (i, (a, b)) in hg.iter().zip(g).enumerate() {
        if !close(*a, *b, o.grad[i].m) || hg.len() != g.len() {
            return Some(Point::Fail(
                "hvp",
                format!("at {at}: f_hvp's gradient {hg:?} is not f_grad's {g:?} (entry {i})"),
            ));
        }
    }
    if hv.len() != g.len() {
        return Some(Point::Fail("hvp", format!("at {at}: f_hvp's H·v has {} entries", hv.len())));
    }
    let mut fds = Vec::new();
    for h in [1e-4, 1e-5, 1e-6] {
        if h * o.largest * 10.0 > o.margin {
            continue;
        }
        let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
        for (k, &(i, elem)) in dirs.iter().enumerate() {
            let xi = x[i].at(elem);
            xp[i].set(elem, xi + h * v[k]);
            xm[i].set(elem, xi - h * v[k]);
        }
        let (Ok(gp), Ok(gm)) = (catch_unwind(|| (p.grad)(&xp)), catch_unwind(|| (p.grad)(&xm))) else {
            continue;
        };
        let fd: Vec<f64> = gp.1.iter().zip(&gm.1).map(|(a, b)| (a - b) / (2.0 * h)).collect();
        fds.push(fd);
    }
    if fds.is_empty() {
        return None;
    }
    let agree = |a: &[f64], b: &[f64]| {
        a.iter().zip(b).all(|(u, w)| (u - w).abs() <= 1e-5 * (1.0 + u.abs() + w.abs()) + 1e-7 * o.largest)
    };
    if fds.iter().any(|fd| agree(fd, &hv)) {
        return None;
    }
    if fds.windows(2).any(|w| agree(&w[0], &w[1])) {
        return Some(Point::Fail(
            "hvp",
            format!("at {at}: f_hvp's H·v along {v:?} is {hv:?} but centered differences of f_grad give {fds:?}"),
        ));
    }
    None
}

/// `got` (from `what`) against `start + d_out *` the dual gradient.
fn check_adjoint(
    kind: &'static str,
    what: &str,
    got: &[f64],
    start: f64,
    o: &Oracle,
    d_out: f64,
    at: &str,
) -> Option<Point> {
    if got.len() != o.grad.len() {
        return Some(Point::Fail(
            kind,
            format!(
                "at {at}: {what} gives {} entries, expected {} ({got:?})",
                got.len(),
                o.grad.len()
            ),
        ));
    }
    for (i, (ai, di)) in got.iter().zip(&o.grad).enumerate() {
        let want = start + d_out * di.d;
        if !close(*ai, want, d_out.abs() * di.m + start) {
            return Some(Point::Fail(
                kind,
                format!(
                    "at {at}: {what}(.., d_out = {d_out}) entry {i} is {ai:?}, expected \
                     {start} + {d_out} * {:?} = {want:?}",
                    di.d
                ),
            ));
        }
    }
    None
}

fn check(p: &Prog, points: usize, tries: usize) -> String {
    let mut rng = Rng::new(p.seed ^ 0x5eed_0f_9011_75);
    let mut accepted = 0;
    let mut tried = 0;
    let mut fd = 0;
    while accepted < points && tried < tries {
        let x = draw(&mut rng, p.kinds);
        let d_out = D_OUTS[tried % D_OUTS.len()];
        tried += 1;
        match point(p, &x, d_out) {
            Point::Ok { fd_checked } => {
                accepted += 1;
                fd += usize::from(fd_checked);
            }
            Point::Reject => {}
            Point::Fail(kind, msg) => {
                return format!("PROG {} FAIL {kind} {}", p.id, one_line(&msg))
            }
        }
    }
    if accepted == 0 {
        format!("PROG {} SKIP {tried}", p.id)
    } else {
        format!("PROG {} OK {accepted} {tried} {fd}", p.id)
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

pub fn main(progs: &[Prog]) {
    std::panic::set_hook(Box::new(|_| {}));
    let points = env_usize("DIFFTEST_POINTS", 3);
    let tries = env_usize("DIFFTEST_TRIES", 40);
    let skip: Vec<usize> = std::env::var("DIFFTEST_SKIP")
        .unwrap_or_default()
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let out = std::io::stdout();
    let mut out = out.lock();
    for p in progs {
        if skip.contains(&p.id) {
            continue;
        }
        writeln!(out, "START {}", p.id).unwrap();
        out.flush().unwrap();
        let line = catch_unwind(AssertUnwindSafe(|| check(p, points, tries)))
            .unwrap_or_else(|e| format!("PROG {} FAIL panic {}", p.id, one_line(&panic_text(e))));
        writeln!(out, "{line}").unwrap();
        out.flush().unwrap();
    }
    writeln!(out, "DONE").unwrap();
}
