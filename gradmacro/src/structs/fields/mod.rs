//! Which field paths of a differentiated struct the body reads as floats.
//!
//! The macro cannot see the struct's definition, only how the body uses each
//! field path (`p.b`, `p.l1.w`, `self.n_in`): a path used where only an
//! integer fits (a range bound, an index, arithmetic with an integer literal,
//! an integer method, a `let` that ends up used so) is data; a path read only
//! by conditions, casts, `.len()` and `.count()` is data too (its derivative
//! there is zero); any other read is a float, differentiated. A wrong guess
//! is never a wrong gradient: a float parameter given an integer fails to
//! type-check, and a path taken for data but read as a value is checked to be
//! an integer or `bool` (`witnesses`).

mod walk;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use std::collections::{HashMap, HashSet};
use syn::visit::Visit;

/// How one read of a field path uses it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Use {
    /// Where only an integer fits.
    Data,
    /// As a value: arithmetic, an argument, a `let`, the result.
    Value,
    /// The operand of `as f64`/`as f32`.
    FloatCast,
    /// A whole argument of a call: a float or an integer, by the callee.
    Arg,
    /// Conditions, casts to integers, `.len()`: reads with no derivative.
    Neutral,
}

/// A field path of a differentiated struct that the body reads.
pub struct Leaf {
    /// The struct: `self` or the parameter's name.
    pub root: String,
    pub path: Vec<syn::Ident>,
    /// Read by index or as a slice (`p.w[i]`, `&p.w`, `p.w.iter()`).
    pub array: bool,
    /// Differentiated; else read as data from the struct.
    pub float: bool,
    /// Data that some read uses as a value: checked to be an integer.
    pub needs_witness: bool,
    /// The last field of its first read, where errors about it point.
    pub span: Span,
}

impl Leaf {
    /// `p.l1.w` as tokens, spanned at the user's field.
    pub fn place(&self, root: &TokenStream) -> TokenStream {
        let path = &self.path;
        quote::quote_spanned!(self.span=> #root #(.#path)*)
    }

    pub fn dotted(&self) -> String {
        let mut s = self.root.clone();
        for p in &self.path {
            s.push('.');
            s.push_str(&p.to_string());
        }
        s
    }
}

#[derive(Default)]
struct Reads {
    array: bool,
    uses: HashSet<UseKey>,
    span: Option<Span>,
    /// The locals whose `let` this path's value flows into.
    flows_into: HashSet<String>,
}

type UseKey = u8;

fn key(u: Use) -> UseKey {
    u as UseKey
}

struct Walker<'a> {
    roots: &'a [String],
    ctx: Use,
    reads: HashMap<(String, Vec<String>), (Vec<syn::Ident>, Reads)>,
    order: Vec<(String, Vec<String>)>,
    /// Locals read where only an integer fits.
    data_names: HashSet<String>,
    /// For each local, the locals its `let` reads as values.
    local_flows: HashMap<String, HashSet<String>>,
    /// The local whose `let` initialiser is being read.
    binding: Option<String>,
    /// The bindings in scope, innermost last: each `let` a key of its own
    /// (`n#3`), so a shadowing `let` is another local.
    scopes: Vec<HashMap<String, String>>,
    bindings: usize,
    pub errors: Vec<(TokenStream, String)>,
}

/// The field paths of `roots` that `body` reads, classified, and the errors
/// for reads that cannot be differentiated.
pub fn leaves(body: &syn::Block, roots: &[String]) -> (Vec<Leaf>, Vec<(TokenStream, String)>) {
    let mut w = Walker {
        roots,
        ctx: Use::Value,
        reads: HashMap::new(),
        order: Vec::new(),
        data_names: HashSet::new(),
        local_flows: HashMap::new(),
        binding: None,
        scopes: vec![HashMap::new()],
        bindings: 0,
        errors: Vec::new(),
    };
    w.visit_block(body);
    // A local read where only an integer fits makes every local its `let`
    // reads data too.
    let mut data = w.data_names.clone();
    loop {
        let more: Vec<String> = data
            .iter()
            .filter_map(|d| w.local_flows.get(d))
            .flatten()
            .filter(|n| !data.contains(*n))
            .cloned()
            .collect();
        if more.is_empty() {
            break;
        }
        data.extend(more);
    }
    let mut out = Vec::new();
    let mut errors = std::mem::take(&mut w.errors);
    for k in &w.order {
        let (path, r) = &w.reads[k];
        let has = |u: Use| r.uses.contains(&key(u));
        let is_data = has(Use::Data) || r.flows_into.iter().any(|n| data.contains(n));
        let float = !is_data && has(Use::Value);
        out.push(Leaf {
            root: k.0.clone(),
            path: path.clone(),
            array: r.array,
            float,
            needs_witness: !float && (has(Use::Value) || has(Use::FloatCast) || has(Use::Arg)),
            span: r.span.unwrap_or_else(Span::call_site),
        });
    }
    // A path that another extends is a struct inside the struct.
    for l in &out {
        let nested = out.iter().any(|m| {
            m.root == l.root && m.path.len() > l.path.len() && m.path.starts_with(&l.path)
        });
        if nested {
            let name = l.dotted();
            let at = l.path.last().expect("a field").to_token_stream();
            errors.push((
                at,
                format!("`{name}` is a struct inside a differentiated struct: read its fields here (`{name}.w[i]`); passing or binding it whole is not supported"),
            ));
        }
    }
    (out, errors)
}
