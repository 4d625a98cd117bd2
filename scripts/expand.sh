#!/usr/bin/env bash
# Prints what #[differentiate] generates for one function, as `cargo expand`
# would, without installing cargo-expand:
#
#   scripts/expand.sh 'fn f(x: f64) -> f64 { let q = x * x; q + x }'
#   scripts/expand.sh 'fn dot(w: &[f64], x: &[f64]) -> f64 { .. }' 'wrt(w)'
#
# The function goes into a throwaway crate under target/expand/ (a path
# dependency on the local gradmacro, with the workspace's Cargo.lock), which
# rustc expands with `-Z unpretty=expanded` (RUSTC_BOOTSTRAP=1, on that crate
# only). The pinned expansions in gradmacro/snapshots/ are printed by
# prettyplease instead, so the layout differs; the code is the same.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 'fn f(x: f64) -> f64 { .. }' ['wrt(x)']" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
work=$root/target/expand
mkdir -p "$work/src"
cat >"$work/Cargo.toml" <<EOF
[package]
name = "gradmacro-expand"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
gradmacro = { path = "$root/gradmacro" }
# Generic functions over T: num_traits::Float name it.
num-traits = "0.2"

# Its own workspace, inside the gradmacro workspace's target dir.
[workspace]
EOF
cp "$root/Cargo.lock" "$work/Cargo.lock"
printf '#[gradmacro::differentiate(%s)]\n%s\n' "${2:-}" "$1" >"$work/src/lib.rs"

# The prelude rustc injects is not part of the expansion.
RUSTC_BOOTSTRAP=1 cargo rustc --quiet --manifest-path "$work/Cargo.toml" --lib \
    -- -Z unpretty=expanded |
    grep -v -e '^#!\[feature(prelude_import)\]$' -e '^#\[prelude_import\]$' \
        -e '^use std::prelude::rust_20[0-9]*::\*;$' -e '^#\[macro_use\]$' \
        -e '^extern crate std;$'
