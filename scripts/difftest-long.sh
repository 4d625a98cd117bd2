#!/usr/bin/env bash
# The long run of the differential test (tests/differential.rs): PROGRAMS
# random programs from index FIRST on, in chunks of CHUNK programs, each
# chunk one `cargo test` (so one chunk's failures do not stop the others).
# Reports go to target/tmp/gradmacro-difftest/report-<first>-<end>.txt and
# a summary line per chunk to target/tmp/gradmacro-difftest/long-run.log.
#
#   scripts/difftest-long.sh                  # 20000 programs from 0
#   scripts/difftest-long.sh 50000 20000      # 50000 more, from index 20000
#   CHUNK=2000 PROFILE=release scripts/difftest-long.sh 10000
#
# Exit status: 0 if every chunk passed.
set -uo pipefail
cd "$(dirname "$0")/.."

PROGRAMS=${1:-20000}
FIRST=${2:-0}
CHUNK=${CHUNK:-5000}
PROFILE=${PROFILE:-debug}
LOG=target/tmp/gradmacro-difftest/long-run.log
mkdir -p "$(dirname "$LOG")"

profile_flag=()
if [ "$PROFILE" = release ]; then
    profile_flag=(--release)
fi

status=0
start=$(date +%s)
end=$((FIRST + PROGRAMS))
echo "$(date -u +%FT%TZ) long run: programs $FIRST..$end in chunks of $CHUNK ($PROFILE)" | tee -a "$LOG"
for ((i = FIRST; i < end; i += CHUNK)); do
    n=$((end - i < CHUNK ? end - i : CHUNK))
    t0=$(date +%s)
    if GRADMACRO_DIFFTEST_PROGRAMS=$n GRADMACRO_DIFFTEST_SEED=$i \
        GRADMACRO_DIFFTEST_BATCH=${BATCH:-1000} \
        GRADMACRO_DIFFTEST_SHRINK=${SHRINK:-1} \
        cargo test "${profile_flag[@]}" --test differential generated_programs \
        -- --nocapture >"target/tmp/gradmacro-difftest/long-$i.out" 2>&1; then
        verdict=passed
    else
        verdict=FAILED
        status=1
    fi
    summary=$(grep -m1 '^differential test:' "target/tmp/gradmacro-difftest/long-$i.out")
    echo "$(date -u +%FT%TZ) chunk $i..$((i + n)) $verdict in $(($(date +%s) - t0)) s: $summary" | tee -a "$LOG"
done
echo "$(date -u +%FT%TZ) long run done in $(($(date +%s) - start)) s, status $status" | tee -a "$LOG"
exit $status
