#!/usr/bin/env bash
# Compile-time benchmark of #[differentiate].
#
#   scripts/compile_time.sh          everything below (about 8 minutes on 2 cores)
#   scripts/compile_time.sh quick    only the 100 typical functions (about 2 minutes)
#
# Generates throwaway crates under target/compile-time/ (each a path
# dependency on the local gradmacro):
#   typical100  100 typical differentiated functions of 15 lines each: scalar
#               arithmetic, sqrt/tanh/exp/ln_1p, a `for` loop over a `&[f64]`
#               with an `if`/`else` accumulating into a local, every fourth
#               calling the one before it (scripts/gen_straight_line.py
#               typical 100);
#   many100     100 differentiated functions of mixed shapes (straight-line,
#               loops over slices, branches, nested loops);
#   line1000, line2000, line4000
#               one straight-line function of 1,000 / 2,000 / 4,000 statements
#               (scripts/gen_straight_line.py line N);
# and a "plain" copy of each without #[differentiate] as the baseline. It times
# building each crate alone (its dependencies are built beforehand, in a shared
# target directory) in the dev profile, the dev profile without debug info, and
# the release profile, reading rustc's own macro-expansion time from
# `-Z time-passes` (RUSTC_BOOTSTRAP=1, on the throwaway crates only); and the
# expansion itself, as the ignored unit test gradmacro/src/bench_expand.rs
# measures it:
#   cargo test --release -p gradmacro bench_expand -- --ignored --nocapture --exact bench_expand::bench_expand
#
# For typical100 it prints, against targets:
#   - the build-time ratio, attributed crate / plain crate, in dev and in
#     release: the median wall time of COMPILE_TIME_RUNS (default 3) builds of
#     each, alternating, all in the same run (target: at most 3);
#   - generated lines per source line: (E_attr - E_plain) / S, where E_attr and
#     E_plain are the line counts of the two crates expanded by rustc itself
#     (`RUSTC_BOOTSTRAP=1 cargo rustc --lib -- -Zunpretty=expanded`, dev
#     profile; every line of rustc's pretty-printed output counts), and S the
#     lines of the plain crate's src/lib.rs that are not blank (it has no
#     comments). E_attr - E_plain is what the attribute adds: the generated
#     functions, their doc attributes and the `use`. (target: at most 5)
#
# Then it replaces the compile-time section of benches/RESULTS.md (the
# run-time section, written by `cargo bench --bench gradients`, is kept) and
# prints it; `quick` replaces only the typical100 part of that section.
# The full run takes about 8 minutes on 2 cores, most of it the release build
# of the 4,000-statement crate.
set -euo pipefail

mode=${1:-full}
case $mode in
full | quick) ;;
*)
    echo "usage: $0 [quick]" >&2
    exit 2
    ;;
esac
runs=${COMPILE_TIME_RUNS:-3}

root=$(cd "$(dirname "$0")/.." && pwd)
work=$root/target/compile-time
gen=$root/scripts/gen_straight_line.py
results=$root/benches/RESULTS.md
mkdir -p "$work"

# make_crate NAME GENERATOR-ARGS...: a crate whose lib.rs the generator writes.
make_crate() {
    local name=$1
    shift
    mkdir -p "$work/$name/src"
    cat >"$work/$name/Cargo.toml" <<EOF
[package]
name = "$name"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
gradmacro = { path = "$root/gradmacro" }

[workspace]
EOF
    python3 "$gen" "$@" >"$work/$name/src/lib.rs.new"
    # Leave an unchanged file alone, so its build is not redone for nothing.
    if cmp -s "$work/$name/src/lib.rs.new" "$work/$name/src/lib.rs"; then
        rm "$work/$name/src/lib.rs.new"
    else
        mv "$work/$name/src/lib.rs.new" "$work/$name/src/lib.rs"
    fi
}

now() { date +%s.%N; }

# build NAME PROFILE: builds the crate alone (its dependencies are up to date)
# from a clean state of the crate itself, with rustc's `-Z time-passes`
# (RUSTC_BOOTSTRAP=1 on every build of this script, so the dependencies'
# fingerprints never change). Prints "wall-seconds expansion-seconds status".
# PROFILE is dev, dev-nodebug (dev with debug = 0, its own target directory)
# or release.
build() {
    local name=$1 profile=$2
    local flag= target=$work/target debug=
    case $profile in
    release) flag=--release ;;
    dev-nodebug)
        target=$work/target-nodebug
        debug=0
        ;;
    esac
    local log=$work/$name.$profile.log
    (
        cd "$work/$name"
        export CARGO_TARGET_DIR=$target RUSTC_BOOTSTRAP=1
        [ -n "$debug" ] && export CARGO_PROFILE_DEV_DEBUG=$debug
        cargo clean -q -p "$name" $flag 2>/dev/null || true
        local start end rc=0
        start=$(now)
        cargo rustc -q $flag --lib -- -Z time-passes >"$log" 2>&1 || rc=$?
        end=$(now)
        local expand
        expand=$(awk '/^time:/ && $NF == "expand_crate" { printf "%.2f", $2; found = 1; exit }
            END { if (!found) printf "-" }' "$log")
        local status=ok
        if [ $rc -ne 0 ]; then
            if grep -q SIGSEGV "$log"; then status=SIGSEGV; else status=failed; fi
        fi
        echo "$start $end" | awk -v e="$expand" -v s="$status" '{ printf "%.2f %s %s", $2 - $1, e, s }'
    )
}

# warm PROFILE: builds the dependencies for that profile.
warm() {
    build warm "$1" >/dev/null
}

echo "generating crates in $work"
make_crate warm line 10
make_crate typical100 typical 100
make_crate typical100_plain typical 100 --plain
if [ "$mode" = full ]; then
    make_crate many100 many 100
    make_crate many100_plain many 100 --plain
    for n in 1000 2000 4000; do
        make_crate "line$n" line "$n"
        make_crate "line${n}_plain" line "$n" --plain
    done
    profiles=(dev dev-nodebug release)
else
    profiles=(dev release)
fi

echo "building the dependencies (gradmacro, syn, quote, proc-macro2) once per profile"
for p in "${profiles[@]}"; do warm "$p"; done

# median RESULT...: of results as `build` prints them, the one of median wall
# time, or the first failure.
median() {
    local failed
    failed=$(printf '%s\n' "$@" | awk '$3 != "ok" { print; exit }')
    if [ -n "$failed" ]; then
        echo "$failed"
        return
    fi
    printf '%s\n' "$@" | sort -n -k1,1 | awk -v n=$# 'NR == int((n + 1) / 2)'
}

# expanded_lines NAME: lines of the crate as rustc expands it (dev profile).
expanded_lines() {
    (
        cd "$work/$1"
        export CARGO_TARGET_DIR=$work/target RUSTC_BOOTSTRAP=1
        cargo clean -q -p "$1" 2>/dev/null || true
        cargo rustc -q --lib -- -Zunpretty=expanded >"$work/$1.expanded.rs"
        wc -l <"$work/$1.expanded.rs"
    )
}

met_le() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t) ? "met" : "**missed**" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else printf "-" }'; }

echo "timing typical100 (median of $runs builds, alternating with the plain crate)"
declare -A typ
for p in dev release; do
    with=() without=()
    for ((r = 1; r <= runs; r++)); do
        with+=("$(build typical100 "$p")")
        without+=("$(build typical100_plain "$p")")
    done
    typ[$p]=$(median "${with[@]}")
    typ[$p.plain]=$(median "${without[@]}")
    echo "  typical100 ($p): ${typ[$p]}; plain: ${typ[$p.plain]}"
done
lines_with=$(expanded_lines typical100)
lines_plain=$(expanded_lines typical100_plain)
source_lines=$(grep -c . "$work/typical100_plain/src/lib.rs")
per_line=$(awk -v a="$lines_with" -v b="$lines_plain" -v s="$source_lines" \
    'BEGIN { printf "%.1f", (a - b) / s }')
echo "  typical100 expanded: $lines_with lines; plain: $lines_plain; source: $source_lines"

# typical_row PROFILE: the row of that profile in the table below.
typical_row() {
    local p=$1 wall expand status pwall pstatus
    read -r wall expand status <<<"${typ[$p]}"
    read -r pwall _ pstatus <<<"${typ[$p.plain]}"
    if [ "$status" != ok ] || [ "$pstatus" != ok ]; then
        echo "| $p | $status after $wall s | $pstatus after $pwall s | - | - | ≤ 3 | **missed** |"
        return
    fi
    local r
    r=$(ratio "$wall" "$pwall")
    echo "| $p | $wall s | $pwall s | $r | $expand s | ≤ 3 | $(met_le "$r" 3) |"
}

typical_section=$(
    cat <<EOF
<!-- typical100: written by scripts/compile_time.sh -->

### 100 typical functions

- Machine: $(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(grep -c '^processor' /proc/cpuinfo) logical cores
- Date: $(date -u '+%Y-%m-%d %H:%M UTC')
- Compiler: $(rustc --version)
- Commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " with uncommitted changes")
- Command: \`scripts/compile_time.sh quick\` (also part of the full run)

100 functions of 15 lines (\`scripts/gen_straight_line.py typical 100\`): scalar
arithmetic, \`sqrt\`, \`tanh\`, \`exp\`, \`ln_1p\`, a \`for\` loop over a \`&[f64]\`
with an \`if\`/\`else\` accumulating into a local; every fourth calls the one
before it (so its reverse sweep runs the callee's \`_pullback\`); a last function
calls every \`t_i_grad\` once (the plain crate: every \`t_i\`), since generated
functions are \`#[inline]\` and cost a build only where they are used. Wall time of
building the crate alone, its dependencies already built: the median of $runs
builds, alternating with the plain crate (the same source without
\`#[differentiate]\`). The expansion column is rustc's \`expand_crate\` time
(\`-Z time-passes\`) in that median build.

| profile | with \`#[differentiate]\` | plain | ratio | expansion inside rustc | target | status |
| --- | ---: | ---: | ---: | ---: | --- | --- |
$(typical_row dev)
$(typical_row release)

Generated lines per source line: (E_attr − E_plain) / S, E being the lines of
the crate as rustc expands it (\`RUSTC_BOOTSTRAP=1 cargo rustc --lib -- -Zunpretty=expanded\`,
every line of its output) and S the non-blank lines of the plain crate's source:
($lines_with − $lines_plain) / $source_lines = **$per_line**; target ≤ 5: $(met_le "$per_line" 5).
<!-- typical100 end -->
EOF
)

if [ "$mode" = quick ]; then
    # Replace only the typical100 part of the compile-time section, or add it
    # at the end of the file, where the compile-time section is.
    start='<!-- typical100: written by scripts/compile_time.sh -->'
    end='<!-- typical100 end -->'
    printf '%s\n' "$typical_section" >"$work/typical100.section"
    if [ -f "$results" ] && grep -qxF "$start" "$results"; then
        awk -v start="$start" -v end="$end" -v file="$work/typical100.section" '
            $0 == start { while ((getline line < file) > 0) print line; skip = 1; next }
            skip { if ($0 == end) skip = 0; next }
            { print }
        ' "$results" >"$results.new"
    else
        if [ -f "$results" ]; then cp "$results" "$results.new"; else : >"$results.new"; fi
        printf '\n%s\n' "$typical_section" >>"$results.new"
    fi
    mv "$results.new" "$results"
    printf '\n%s\n\n' "$typical_section"
    echo "wrote $results"
    exit 0
fi

# one SECONDS: rounded to a tenth.
one() { awk -v v="$1" 'BEGIN { printf "%.1f", v }'; }

# cell RESULT PLAIN-RESULT: "12.3 s (plain 1.2 s)", or the failure.
cell() {
    local wall status pwall pstatus plain
    read -r wall _ status <<<"$1"
    read -r pwall _ pstatus <<<"$2"
    case $pstatus in
    ok) plain="plain $(one "$pwall") s" ;;
    SIGSEGV) plain="plain: rustc crashes too, after $(one "$pwall") s" ;;
    *) plain="plain fails after $(one "$pwall") s" ;;
    esac
    case $status in
    ok) echo "$(one "$wall") s ($plain)" ;;
    SIGSEGV) echo "**rustc crashes** (SIGSEGV after $(one "$wall") s; $plain)" ;;
    *) echo "**fails** (after $(one "$wall") s; $plain)" ;;
    esac
}

declare -A res
crates=(many100 line1000 line2000 line4000)
for c in "${crates[@]}"; do
    for p in "${profiles[@]}"; do
        res[$c.$p]=$(build "$c" "$p")
        res[$c.plain.$p]=$(build "${c}_plain" "$p")
        echo "  $c ($p): ${res[$c.$p]}; plain: ${res[$c.plain.$p]}"
    done
done
expansion_in_rustc() { read -r _ e _ <<<"${res[$1.release]}"; echo "$e s"; }

echo "timing the expansion alone (ignored unit test, release build of the macro)"
expand_out=$(cd "$root" && cargo test -q --release -p gradmacro bench_expand -- --ignored --nocapture --exact bench_expand::bench_expand 2>&1)
declare -A expand_ms
while read -r n ms; do
    expand_ms[$n]=$(awk -v v="$ms" 'BEGIN { printf "%.0f", v }')
done < <(echo "$expand_out" | sed -n 's/^EXPAND n=\([0-9]*\) ms=\([0-9.]*\)$/\1 \2/p')
if [ -z "${expand_ms[2000]:-}" ]; then
    echo "$expand_out" >&2
    echo "the expansion test printed no timing" >&2
    exit 1
fi

cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
cores=$(grep -c '^processor' /proc/cpuinfo)
met() { awk -v v="$1" -v t="$2" 'BEGIN { print (v < t) ? "met" : "**missed**" }'; }
per_stmt() { awk -v ms="$1" -v n="$2" 'BEGIN { printf "%.0f", ms * 1000 / n }'; }

section=$(
    cat <<EOF
<!-- compile-time section: written by scripts/compile_time.sh -->

## Compile time

- Machine: $cpu, $cores logical cores
- Date: $(date -u '+%Y-%m-%d %H:%M UTC')
- Compiler: $(rustc --version)
- Commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo " with uncommitted changes")
- Command: \`scripts/compile_time.sh\`

Wall time of building one throwaway crate, its dependencies already built (*plain*:
the same crate without \`#[differentiate]\`, so the difference is what the macro
costs: expanding, then compiling \`f_grad\`, \`f_adjoint\`, \`f_adjoint_acc\` and
\`f_pullback\` beside each function). *dev, debug = 0* is the dev profile without
debug info. The last column is rustc's own \`expand_crate\` time in the release
build (\`-Z time-passes\`): the macro as it runs inside the compiler.

| crate | dev | dev, debug = 0 | release | expansion inside rustc |
| --- | --- | --- | --- | ---: |
| 100 functions, mixed shapes | $(cell "${res[many100.dev]}" "${res[many100.plain.dev]}") | $(cell "${res[many100.dev-nodebug]}" "${res[many100.plain.dev-nodebug]}") | $(cell "${res[many100.release]}" "${res[many100.plain.release]}") | $(expansion_in_rustc many100) |
| 1 function, 1,000 statements | $(cell "${res[line1000.dev]}" "${res[line1000.plain.dev]}") | $(cell "${res[line1000.dev-nodebug]}" "${res[line1000.plain.dev-nodebug]}") | $(cell "${res[line1000.release]}" "${res[line1000.plain.release]}") | $(expansion_in_rustc line1000) |
| 1 function, 2,000 statements | $(cell "${res[line2000.dev]}" "${res[line2000.plain.dev]}") | $(cell "${res[line2000.dev-nodebug]}" "${res[line2000.plain.dev-nodebug]}") | $(cell "${res[line2000.release]}" "${res[line2000.plain.release]}") | $(expansion_in_rustc line2000) |
| 1 function, 4,000 statements | $(cell "${res[line4000.dev]}" "${res[line4000.plain.dev]}") | $(cell "${res[line4000.dev-nodebug]}" "${res[line4000.plain.dev-nodebug]}") | $(cell "${res[line4000.release]}" "${res[line4000.plain.release]}") | $(expansion_in_rustc line4000) |

Expansion alone: \`expand::differentiate\` on the token stream of a straight-line
function, in the ignored unit test \`gradmacro/src/bench_expand.rs\` (release build,
median of 3 to 5 runs; the linear growth shows as a constant time per statement):

| statements | expansion | per statement |
| ---: | ---: | ---: |
| 500 | ${expand_ms[500]} ms | $(per_stmt "${expand_ms[500]}" 500) µs |
| 1,000 | ${expand_ms[1000]} ms | $(per_stmt "${expand_ms[1000]}" 1000) µs |
| 2,000 | ${expand_ms[2000]} ms | $(per_stmt "${expand_ms[2000]}" 2000) µs |
| 4,000 | ${expand_ms[4000]} ms | $(per_stmt "${expand_ms[4000]}" 4000) µs |

Target: expansion of a 2,000-statement function under 200 ms: ${expand_ms[2000]} ms, $(met "${expand_ms[2000]}" 200).
<!-- expand-2000-ms: ${expand_ms[2000]} -->

$typical_section
EOF
)

# Keep the run-time section; replace the compile-time one and the expansion
# row of the targets table.
marker='<!-- compile-time section: written by scripts/compile_time.sh -->'
status=$(met "${expand_ms[2000]}" 200)
row="| Expansion of a 2,000-statement function < 200 ms | ${expand_ms[2000]} ms (scripts/compile_time.sh) | $status |"
if [ -f "$results" ]; then
    awk -v marker="$marker" -v row="$row" '
        $0 == marker { exit }
        index($0, "| Expansion of a 2,000-statement function") == 1 { print row; next }
        { print }
    ' "$results" >"$results.new"
else
    printf '# Benchmark results\n\nRun `cargo bench --bench gradients` for the run-time section.\n\n' >"$results.new"
fi
printf '%s\n' "$section" >>"$results.new"
mv "$results.new" "$results"

printf '\n%s\n' "$section"
echo
echo "wrote $results"
