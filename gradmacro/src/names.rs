//! Every generated name comes from here. Names derive from the user's (`d_q`,
//! `s_1`, `tape_s`) and are textually distinct from every identifier in the
//! user's function, so `cargo expand` output is unambiguous; they are also
//! created with `Span::mixed_site()`, so hygiene keeps them apart even where
//! text alone would not (a user parameter called `d_x` cannot capture them).

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use std::collections::{HashMap, HashSet};

#[derive(Clone)]
pub struct Names {
    /// Identifiers written by the user anywhere in the function.
    user: HashSet<String>,
    /// Identifiers handed out so far.
    used: HashSet<String>,
    /// For each base given to `fresh`, the suffix of the name it last
    /// returned: every smaller suffix was taken then, and stays taken.
    last_suffix: HashMap<String, usize>,
}

impl Names {
    pub fn new(user: HashSet<String>) -> Self {
        Names {
            user,
            used: HashSet::new(),
            last_suffix: HashMap::new(),
        }
    }

    /// Names distinct from every identifier in `user` (the user's item and
    /// anything else of theirs the generated code sits beside).
    pub fn avoiding(user: TokenStream) -> Self {
        let mut set = HashSet::new();
        collect_idents(user, &mut set);
        Names::new(set)
    }

    /// A name for one of the user's own variables: the user's spelling the first
    /// time, a fresh variant (`s_1`) for later versions of it.
    pub fn user_var(&mut self, name: &str) -> Ident {
        let base = strip_raw(name);
        if !self.used.contains(base) && !is_keyword(base) {
            self.used.insert(base.to_string());
            return ident(base);
        }
        self.fresh(base)
    }

    /// A name that nobody has used: `base`, else `base_1`, `base_2`, ...
    /// The search resumes after the suffix last returned for `base`, so the
    /// 10,000th version of `s` costs one lookup, not 10,000.
    pub fn fresh(&mut self, base: &str) -> Ident {
        let base = strip_raw(base);
        let (mut n, mut candidate) = match self.last_suffix.get(base) {
            Some(&k) => (k + 1, format!("{base}_{}", k + 1)),
            None => (0, base.to_string()),
        };
        while candidate.is_empty()
            || is_keyword(&candidate)
            || self.user.contains(&candidate)
            || self.used.contains(&candidate)
        {
            n += 1;
            candidate = format!("{base}_{n}");
        }
        self.used.insert(candidate.clone());
        self.last_suffix.insert(base.to_string(), n);
        ident(&candidate)
    }

    /// The adjoint of a variable: `d_<name>`.
    pub fn adjoint(&mut self, of: &Ident) -> Ident {
        self.fresh(&format!("d_{}", strip_raw(&of.to_string())))
    }
}

fn collect_idents(ts: TokenStream, set: &mut HashSet<String>) {
    for tt in ts {
        match tt {
            TokenTree::Ident(i) => {
                set.insert(strip_raw(&i.to_string()).to_string());
            }
            TokenTree::Group(g) => collect_idents(g.stream(), set),
            _ => {}
        }
    }
}

fn strip_raw(name: &str) -> &str {
    name.strip_prefix("r#").unwrap_or(name)
}

fn is_keyword(name: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
        "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move",
        "mut", "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait",
        "true", "type", "unsafe", "use", "where", "while", "abstract", "become", "box", "do",
        "final", "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try",
        "gen", "_",
    ];
    KEYWORDS.contains(&name)
}

fn ident(name: &str) -> Ident {
    Ident::new(name, Span::mixed_site())
}
