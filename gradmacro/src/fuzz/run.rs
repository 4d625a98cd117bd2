//! Running the macro on one input and catching what goes wrong: a panic
//! (its message and location, recorded by a hook), or output that is
//! neither a `compile_error!` nor Rust items.

use proc_macro2::{TokenStream, TokenTree};
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A panic hook that records panics of fuzzing threads (message and
/// location) and leaves every other thread's panics to the previous hook.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CAPTURING.with(|c| c.get()) {
                let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
                    s.to_string()
                } else if let Some(s) = info.payload().downcast_ref::<String>() {
                    s.clone()
                } else {
                    "(non-string payload)".to_string()
                };
                let at = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{at}: {msg}")));
            } else {
                previous(info);
            }
        }));
    });
}

/// What the macro did with one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Code, without errors.
    Code,
    /// The user's tokens (or stubs) plus `compile_error!`s.
    Errors,
    /// Panicked: `file:line: message`.
    Panic(String),
    /// Returned something that is neither a `compile_error!` nor Rust items.
    Unparsable(String),
}

/// Whether `compile_error` appears anywhere (without recursion: the output
/// of a deep input is deep).
pub(super) fn has_compile_error(ts: &TokenStream) -> bool {
    let mut stack = vec![ts.clone()];
    while let Some(ts) = stack.pop() {
        for tt in ts {
            match tt {
                TokenTree::Ident(i) if i == "compile_error" => return true,
                TokenTree::Group(g) => stack.push(g.stream()),
                _ => {}
            }
        }
    }
    false
}

/// The expansion, or the panic it ended in.
pub(super) fn expand(attr: &TokenStream, item: &TokenStream) -> Result<TokenStream, String> {
    install_hook();
    CAPTURING.with(|c| c.set(true));
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        crate::expand::differentiate(attr.clone(), item.clone())
    }));
    CAPTURING.with(|c| c.set(false));
    r.map_err(|_| {
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| "(no message)".into())
    })
}

pub(super) fn run(attr: &TokenStream, item: &TokenStream) -> Verdict {
    match expand(attr, item) {
        Err(p) => Verdict::Panic(p),
        Ok(out) => {
            if has_compile_error(&out) {
                Verdict::Errors
            } else if syn::parse2::<syn::File>(out.clone()).is_ok() {
                Verdict::Code
            } else {
                Verdict::Unparsable(out.to_string().chars().take(300).collect())
            }
        }
    }
}

/// The panic location alone (`file:line`), to tell panics apart.
pub(super) fn location(v: &Verdict) -> String {
    match v {
        Verdict::Panic(p) => p.split(": ").next().unwrap_or("").to_string(),
        Verdict::Unparsable(_) => "unparsable output".into(),
        Verdict::Code | Verdict::Errors => String::new(),
    }
}

impl Verdict {
    pub(super) fn fine(&self) -> bool {
        matches!(self, Verdict::Code | Verdict::Errors)
    }
}
