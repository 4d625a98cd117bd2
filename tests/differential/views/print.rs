//! `Stmt::Views` and its helpers as Rust source.

use super::*;
use std::fmt::Write as _;

impl ViewUse {
    /// The statement, indented by `ind` levels.
    pub fn text(&self, ind: usize) -> String {
        let pad = "    ".repeat(ind);
        let block = self.block && gaps();
        let inner = if block { ind + 1 } else { ind };
        let ipad = "    ".repeat(inner);
        let mut lines = Vec::new();
        let mut values = Vec::new();
        let vec_ok = !block || gaps();
        for (k, p) in self.parts.iter().enumerate() {
            let (l, v) = p.text(k, vec_ok);
            lines.extend(l);
            values.push(v);
        }
        let value = values.join(" + ");
        let mut s = String::new();
        if block {
            writeln!(s, "{pad}let {} = {{", self.out.s).unwrap();
        }
        for l in &lines {
            writeln!(s, "{ipad}{l}").unwrap();
        }
        if block {
            writeln!(s, "{ipad}{value}").unwrap();
            writeln!(s, "{pad}}};").unwrap();
        } else {
            writeln!(s, "{pad}let {} = {value};", self.out.s).unwrap();
        }
        s
    }

    /// The helpers the parts call, `#[differentiate]` functions.
    pub fn helpers(&self) -> String {
        let mut s = String::new();
        for (k, p) in self.parts.iter().enumerate() {
            s.push_str(&p.helpers(k));
        }
        s
    }
}

fn local_init(name: &str, vec: bool, mutable: bool, elems: &[Term]) -> String {
    let m = if mutable { "mut " } else { "" };
    let items: Vec<String> = elems.iter().map(Term::text).collect();
    if vec {
        format!("let {m}{name}: Vec<f64> = vec![{}];", items.join(", "))
    } else {
        format!(
            "let {m}{name}: [f64; {}] = [{}];",
            elems.len(),
            items.join(", ")
        )
    }
}

/// The base's declaration (a local), and how it is named in a slice.
fn base_text(base: &Base, local: &str, lines: &mut Vec<String>) -> (String, bool) {
    match base {
        Base::Param { name, amp, .. } => (name.s.clone(), *amp),
        Base::Local { vec, elems } => {
            lines.push(local_init(local, *vec, false, elems));
            (local.to_string(), true)
        }
    }
}

/// The views' declarations: their names, `_` for one never read.
fn views_text(
    shape: Shape,
    b: &str,
    k: usize,
    mutable: bool,
    used: &[bool],
    lines: &mut Vec<String>,
) -> Vec<String> {
    let m = if mutable { "mut " } else { "" };
    let names: Vec<String> = match (shape, mutable) {
        (Shape::Split(_), false) => vec![format!("lh{k}"), format!("rh{k}")],
        (Shape::Split(_), true) => vec![format!("pa{k}"), format!("pb{k}")],
        (_, false) => vec![format!("row{k}")],
        (_, true) => vec![format!("pa{k}")],
    };
    let v = &names[0];
    match shape {
        Shape::Range(lo, hi) => lines.push(format!("let {v} = &{m}{b}[{lo}..{hi}];")),
        Shape::From(lo) => lines.push(format!("let {v} = &{m}{b}[{lo}..];")),
        Shape::To(hi) => lines.push(format!("let {v} = &{m}{b}[..{hi}];")),
        Shape::Reslice(lo, p) => lines.push(format!("let {v} = &{m}{b}[{lo}..][..{p}];")),
        Shape::FromVar(lo) => {
            lines.push(format!("let vk{k} = {lo};"));
            lines.push(format!("let {v} = &{m}{b}[vk{k}..];"));
        }
        Shape::Split(at) => {
            let f = if mutable { "split_at_mut" } else { "split_at" };
            let named = |i: usize| match (used[i], gaps()) {
                (true, _) => names[i].clone(),
                (false, true) => "_".to_string(),
                (false, false) => format!("_{}", names[i]),
            };
            lines.push(format!("let ({}, {}) = {b}.{f}({at});", named(0), named(1)));
        }
    }
    names
}

/// The text of a read: statements before, and its value.
/// (`mutable`: the views are `&mut [f64]`, walked by `.iter()`; `local`:
/// they view a local array.)
fn use_text(
    u: &Use,
    views: &[String],
    (k, n): (usize, usize),
    shape: Shape,
    (mutable, local): (bool, bool),
) -> (Vec<String>, String) {
    let v = &views[u.view];
    let acc = format!("vs{k}_{n}");
    // The index of a loop over a view whose bound is a name binds that
    // name again.
    let idx = if matches!(shape, Shape::FromVar(_)) {
        format!("vk{k}")
    } else {
        format!("vi{k}")
    };
    match &u.how {
        UseHow::Elem(j, t) => (vec![], format!("{v}[{j}] * {}", t.text())),
        UseHow::Len => (vec![], format!("{v}.len() as f64")),
        UseHow::Sum => (vec![], format!("{v}.iter().sum::<f64>()")),
        UseHow::Map => (vec![], format!("{v}.iter().map(|e| e * e).sum::<f64>()")),
        UseHow::Loop { t, upto } => {
            let hi = upto.map_or(format!("{v}.len()"), |n| n.to_string());
            (
                vec![
                    format!("let mut {acc} = 0.0;"),
                    format!("for {idx} in 0..{hi} {{"),
                    format!(
                        "    {acc} += {v}[{idx}] * {} + {idx} as f64 * 0.25;",
                        t.text()
                    ),
                    "}".into(),
                ],
                acc,
            )
        }
        UseHow::ForElem { t, iter } => {
            let e = format!("ve{k}_{n}");
            let (head, body) = if *iter {
                (
                    format!("for {e} in {v}.iter() {{"),
                    format!("{e} * {}", t.text()),
                )
            } else {
                (
                    format!("for &{e} in {v}{} {{", if mutable { ".iter()" } else { "" }),
                    format!("{e}.sin() * {}", t.text()),
                )
            };
            (
                vec![
                    format!("let mut {acc} = 0.0;"),
                    head,
                    format!("    {acc} += {body};"),
                    "}".into(),
                ],
                acc,
            )
        }
        // A view of a local array is lent to a helper with `gaps()` only.
        UseHow::Call(t) if !lend_ok(local) => {
            (vec![], format!("{v}.iter().sum::<f64>() * {}", t.text()))
        }
        UseHow::Call(t) => (vec![], format!("vread{k}({v}, {})", t.text())),
        UseHow::Chunks { .. } | UseHow::Windows(_) | UseHow::Zip(..) => {
            let (head, body) = walk_text(&u.how, v, views, (k, n));
            let lines = vec![
                format!("let mut {acc} = 0.0;"),
                head,
                format!("    {acc} += {body};"),
                "}".into(),
            ];
            (lines, acc)
        }
    }
}

/// The head of the loop of a read by `chunks`, `windows` or `zip`, and what
/// it adds up.
fn walk_text(how: &UseHow, v: &str, views: &[String], (k, n): (usize, usize)) -> (String, String) {
    let c = format!("vc{k}_{n}");
    match how {
        UseHow::Chunks { k: m, exact, t } => {
            let (f, j) = if *exact {
                ("chunks_exact", m - 1)
            } else {
                ("chunks", 0)
            };
            (
                format!("for {c} in {v}.{f}({m}) {{"),
                format!("{c}[{j}] * {}", t.text()),
            )
        }
        UseHow::Windows(t) => (
            format!("for {c} in {v}.windows(2) {{"),
            format!("({c}[1] - {c}[0]) * {}", t.text()),
        ),
        UseHow::Zip(z, t) => {
            let w = match z {
                Zip::Param(p) => &p.s,
                Zip::View(i) => &views[*i],
            };
            let d = format!("vd{k}_{n}");
            (
                format!("for ({c}, {d}) in {v}.iter().zip({w}.iter()) {{"),
                format!("{c} * {d} * {}", t.text()),
            )
        }
        _ => unreachable!("not a walk"),
    }
}

fn uses_text(
    uses: &[Use],
    views: &[String],
    (k, shape, mutable, local): (usize, Shape, bool, bool),
    lines: &mut Vec<String>,
) -> Vec<String> {
    let mut values = Vec::new();
    for (n, u) in uses.iter().enumerate() {
        let (l, v) = use_text(u, views, (k, n), shape, (mutable, local));
        lines.extend(l);
        values.push(v);
    }
    values
}

fn read_helper(k: usize, which: usize) -> String {
    let body = match which {
        0 => "s += v[i] * y + 0.25;",
        1 => "s += (v[i] * y).sin();",
        _ => "s = s * 0.5 + v[i] * v[i] * y;",
    };
    format!(
        "#[differentiate]\nfn vread{k}(v: &[f64], y: f64) -> f64 {{\n    let mut s = 0.0;\n    \
         for i in 0..v.len() {{\n        {body}\n    }}\n    s\n}}\n\n"
    )
}

fn write_helper(k: usize, which: usize) -> String {
    let body = match which {
        0 => "out[i] = out[i] * y + 0.5;",
        1 => "out[i] = (out[i] + y).sin();",
        _ => "out[i] += y * 0.25;",
    };
    format!(
        "#[differentiate]\nfn vwrite{k}(y: f64, out: &mut [f64]) {{\n    \
         for i in 0..out.len() {{\n        {body}\n    }}\n}}\n\n"
    )
}

fn outs_helper(k: usize, xs: bool, b: bool, e: bool, which: usize) -> String {
    let mut params = Vec::new();
    if xs {
        params.push("xs: &[f64]");
    }
    params.push("y: f64");
    params.push("a: &mut [f64]");
    if b {
        params.push("b: &mut [f64]");
    }
    if e {
        params.push("e: &mut f64");
    }
    let mut s = format!(
        "#[differentiate]\nfn hm{k}({}) {{\n    for i in 0..a.len() {{\n",
        params.join(", ")
    );
    s.push_str(match which % 2 {
        0 => "        a[i] = a[i] * y + 0.5;\n",
        _ => "        a[i] = (a[i] + y).tanh();\n",
    });
    s.push_str("    }\n");
    if xs {
        s.push_str("    for i in 0..xs.len() {\n        a[0] += xs[i] * y;\n    }\n");
    }
    if b {
        s.push_str("    for i in 0..b.len() {\n        b[i] = b[i] * 0.5 + a[0] * y;\n    }\n");
    }
    if e {
        let read_b = if b { " + b[0]" } else { "" };
        if which / 2 == 0 {
            writeln!(s, "    *e = *e * 0.5 + a[0] * y{read_b};").unwrap();
        } else {
            writeln!(s, "    *e += a[0] * y{read_b};").unwrap();
            s.push_str("    *e = *e * (*e).tanh();\n");
        }
    }
    s.push_str("}\n\n");
    s
}

impl Part {
    fn helpers(&self, k: usize) -> String {
        let calls_read = |uses: &[Use]| uses.iter().any(|u| matches!(u.how, UseHow::Call(_)));
        match self {
            Part::Read {
                base, uses, helper, ..
            } if calls_read(uses) && lend_ok(matches!(base, Base::Local { .. })) => {
                read_helper(k, *helper)
            }
            Part::Read { .. } => String::new(),
            Part::Write {
                writes,
                uses,
                helper,
                ..
            } => {
                let mut s = String::new();
                if writes.iter().any(|w| matches!(w.how, WriteHow::Lend(_))) {
                    s.push_str(&write_helper(k, *helper));
                }
                if calls_read(uses) && lend_ok(true) {
                    s.push_str(&read_helper(k, *helper));
                }
                s
            }
            Part::Outs {
                xs,
                b,
                split,
                e,
                helper,
                ..
            } => outs_helper(
                k,
                xs.is_some(),
                b.is_some() || split.is_some(),
                e.is_some(),
                *helper,
            ),
            Part::Fixed { n, calls, .. } => {
                let mut s = String::new();
                let last = n - 1;
                if calls.iter().any(|c| c.1.is_none()) {
                    write!(
                        s,
                        "#[differentiate]\nfn hf{k}(a: &[f64; {n}], y: f64) -> f64 {{\n    \
                         a[0] * y + a[{last}].sin()\n}}\n\n"
                    )
                    .unwrap();
                }
                if calls.iter().any(|c| c.1.is_some()) {
                    let elems: Vec<String> = (0..*n)
                        .map(|i| format!("a[{i}] * a[{}]", (i + 1) % n))
                        .collect();
                    write!(
                        s,
                        "#[differentiate]\nfn hc{k}(a: &[f64; {n}]) -> [f64; {n}] {{\n    [{}]\n}}\n\n",
                        elems.join(", ")
                    )
                    .unwrap();
                }
                s
            }
        }
    }

    /// Its statements, and its value; its local arrays are `[..]` unless
    /// `vec_ok`.
    fn text(&self, k: usize, vec_ok: bool) -> (Vec<String>, String) {
        let local_init = |name: &str, vec: bool, mutable: bool, elems: &[Term]| {
            local_init(name, vec && vec_ok, mutable, elems)
        };
        let base_text = |base: &Base, local: &str, lines: &mut Vec<String>| match base {
            Base::Local { vec, elems } => {
                lines.push(local_init(local, *vec, false, elems));
                (local.to_string(), true)
            }
            _ => base_text(base, local, lines),
        };
        let mut lines = Vec::new();
        match self {
            Part::Read {
                base, shape, uses, ..
            } => {
                let (b, _) = base_text(base, &format!("vb{k}"), &mut lines);
                let used: Vec<bool> = (0..2).map(|i| reads_view(uses, i)).collect();
                let views = views_text(*shape, &b, k, false, &used, &mut lines);
                let local = matches!(base, Base::Local { .. });
                let values = uses_text(uses, &views, (k, *shape, false, local), &mut lines);
                let value = format!("vp{k}");
                lines.push(format!("let {value} = {};", sum_or_zero(&values)));
                (lines, value)
            }
            Part::Write {
                vec,
                init,
                shape,
                writes,
                uses,
                elem,
                ..
            } => {
                let b = format!("vb{k}");
                lines.push(local_init(&b, *vec, true, init));
                let used: Vec<bool> = (0..2)
                    .map(|i| {
                        reads_view(uses, i) || writes.iter().any(|w| {
                            w.view == i
                                || matches!(w.how, WriteHow::Cross(..) if w.view != i)
                                || matches!(w.how, WriteHow::IterMutZip(Zip::View(j), _) if j == i)
                        })
                    })
                    .collect();
                let views = views_text(*shape, &b, k, true, &used, &mut lines);
                for w in writes {
                    let v = &views[w.view];
                    match &w.how {
                        WriteHow::Set(i, j, t) => {
                            lines.push(format!("{v}[{i}] = {v}[{j}] * {} + 0.5;", t.text()))
                        }
                        WriteHow::Add(i, t) => lines.push(format!("{v}[{i}] += {};", t.text())),
                        WriteHow::Cross(i, j, t) => {
                            let o = &views[1 - w.view];
                            lines.push(format!("{v}[{i}] += {o}[{j}] * {};", t.text()))
                        }
                        WriteHow::Loop(t) => {
                            lines.push(format!("for vi{k} in 0..{v}.len() {{"));
                            lines.push(format!("    {v}[vi{k}] = {v}[vi{k}] * {};", t.text()));
                            lines.push("}".into());
                        }
                        WriteHow::Lend(t) => lines.push(format!("vwrite{k}({}, {v});", t.text())),
                        WriteHow::IterMut(t) => {
                            lines.push(format!("for pe{k} in {v}.iter_mut() {{"));
                            lines.push(format!("    *pe{k} += {};", t.text()));
                            lines.push(format!("    *pe{k} *= 0.5;"));
                            lines.push("}".into());
                        }
                        WriteHow::IterMutZip(z, t) => {
                            let w = match z {
                                Zip::Param(p) => &p.s,
                                Zip::View(i) => &views[*i],
                            };
                            lines.push(format!(
                                "for (pe{k}, pz{k}) in {v}.iter_mut().zip({w}.iter()) {{"
                            ));
                            lines.push(format!("    *pe{k} += *pz{k} * {};", t.text()));
                            lines.push("}".into());
                        }
                        WriteHow::IterMutEnum(t) => {
                            // Over `&vb0[vk0..]` the index binds `vk0` again, as
                            // the reads' loops do.
                            let i = if matches!(shape, Shape::FromVar(_)) {
                                "vk"
                            } else {
                                "vi"
                            };
                            lines.push(format!(
                                "for ({i}{k}, pe{k}) in {v}.iter_mut().enumerate() {{"
                            ));
                            lines.push(format!(
                                "    *pe{k} = *pe{k} * {} + {i}{k} as f64 * 0.25;",
                                t.text()
                            ));
                            lines.push("}".into());
                        }
                    }
                }
                let mut values = uses_text(uses, &views, (k, *shape, true, true), &mut lines);
                if !values.is_empty() {
                    lines.push(format!("let vp{k} = {};", values.join(" + ")));
                    values = vec![format!("vp{k}")];
                }
                values.push(match elem {
                    Some((j, t)) => format!("{b}[{j}] * {}", t.text()),
                    None => format!("{b}.iter().sum::<f64>()"),
                });
                (lines, values.join(" + "))
            }
            Part::Outs {
                xs,
                t,
                a,
                a_lend,
                b,
                split,
                e,
                ..
            } => {
                let mut args = Vec::new();
                let mut values = Vec::new();
                if let Some(x) = xs {
                    let (n, amp) = base_text(x, &format!("vx{k}"), &mut lines);
                    args.push(if amp { format!("&{n}") } else { n });
                }
                args.push(t.text());
                let va = format!("vb{k}");
                lines.push(local_init(&va, true, true, a));
                values.push(format!("{va}.iter().sum::<f64>()"));
                if let Some(m) = split {
                    lines.push(format!("let (pa{k}, pb{k}) = {va}.split_at_mut({m});"));
                    args.push(format!("pa{k}"));
                    args.push(format!("pb{k}"));
                } else {
                    args.push(lend_text(&va, a_lend));
                    if let Some((elems, lend)) = b {
                        let vo = format!("vo{k}");
                        lines.push(local_init(&vo, false, true, elems));
                        args.push(lend_text(&vo, lend));
                        values.push(format!("{vo}[0] * 0.5"));
                    }
                }
                match e {
                    Some(Ok(init)) => {
                        lines.push(format!("let mut ve{k} = {};", init.text()));
                        args.push(format!("&mut ve{k}"));
                        values.push(format!("ve{k}"));
                    }
                    Some(Err((elems, j))) => {
                        let vq = format!("vq{k}");
                        lines.push(local_init(&vq, false, true, elems));
                        args.push(format!("&mut {vq}[{j}]"));
                        values.push(format!("{vq}[{j}] + {vq}[0] * 0.25"));
                    }
                    None => {}
                }
                lines.push(format!("hm{k}({});", args.join(", ")));
                (lines, values.join(" + "))
            }
            Part::Fixed { base, n, calls } => {
                let (b, _) = base_text(base, &format!("vb{k}"), &mut lines);
                let mut values = Vec::new();
                for (c, (chunk, elem, t)) in calls.iter().enumerate() {
                    let arg = match chunk {
                        Chunk::First => format!("{b}.first_chunk::<{n}>().unwrap()"),
                        Chunk::Last => format!("{b}.last_chunk::<{n}>().unwrap()"),
                        Chunk::At(lo) => format!("{b}[{lo}..{}].try_into().unwrap()", lo + n),
                    };
                    match elem {
                        None => values.push(format!("hf{k}({arg}, {})", t.text())),
                        Some(j) => {
                            lines.push(format!("let fc{k}_{c} = hc{k}({arg});"));
                            values.push(format!("fc{k}_{c}[{j}] * {}", t.text()));
                        }
                    }
                }
                (lines, values.join(" + "))
            }
        }
    }
}

fn lend_text(b: &str, lend: &Lend) -> String {
    match lend {
        Lend::Whole => format!("&mut {b}"),
        Lend::Range(lo, hi) => format!("&mut {b}[{lo}..{hi}]"),
    }
}

/// Whether a read reads view `i`, zipped with another view included.
fn reads_view(uses: &[Use], i: usize) -> bool {
    uses.iter()
        .any(|u| u.view == i || matches!(u.how, UseHow::Zip(Zip::View(j), _) if j == i))
}

fn sum_or_zero(values: &[String]) -> String {
    if values.is_empty() {
        "0.0".into()
    } else {
        values.join(" + ")
    }
}

/// Whether views are lent to a helper reading them: those of a local array
/// only with `gaps()` (see there).
fn lend_ok(local: bool) -> bool {
    !local || gaps()
}
