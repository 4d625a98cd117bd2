//! The machinery of the differential test (`tests/differential.rs`), also
//! used by `tests/regressions.rs`:
//!
//! - `rng`: the deterministic generator every random choice comes from
//!   (`tests/support/rng.rs`: the crate root declares `mod support;`);
//! - `ast`: the programs, as syntax trees over the language the macro
//!   supports, printed as Rust;
//! - `gen`: random programs from a seed;
//! - `tidy`: keeps a program valid and free of warnings;
//! - `shrink`: one-step reductions of a failing program;
//! - `views`: views of arrays and helpers with several outputs, a statement
//!   of their own;
//! - `dual`: the dual numbers the oracle computes with;
//! - `dualize`: the oracle's copy of a program, derived from its text;
//! - `generic`: a program's twin generic over its float type;
//! - `harness`: builds and runs cases in a scratch crate (whose `main` is
//!   `runner.rs`, included as text).
#![allow(dead_code)]

pub mod ast;
pub mod dual;
pub mod dualize;
pub mod gen;
pub mod generic;
pub mod harness;
pub use crate::support::rng;
pub mod shrink;
pub mod tidy;
pub mod views;
