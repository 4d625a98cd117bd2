//! Unit tests of the expansion itself (the behaviour of generated code is
//! tested by the workspace's `tests/`).

use proc_macro2::TokenStream;

/// Expands `#[differentiate(attr)] item` and pretty-prints the result.
pub fn expand(attr: &str, item: &str) -> String {
    let attr: TokenStream = attr.parse().expect("attr tokens");
    let item: TokenStream = item.parse().expect("item tokens");
    let out = crate::expand::differentiate(attr, item);
    match syn::parse2::<syn::File>(out.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(_) => out.to_string(),
    }
}

#[test]
fn print_expansion() {
    if let Ok(src) = std::env::var("GM_EXPAND") {
        let attr = std::env::var("GM_ATTR").unwrap_or_default();
        println!("{}", expand(&attr, &src));
    }
}
