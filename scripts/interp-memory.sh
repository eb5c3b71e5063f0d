#!/usr/bin/env bash
# scripts/interp-memory.sh OUT - "the interpreter as CPython and PyPy run it": interp's
# object-model programs in every memory mode under seq, gil, locks, stm (and htm where
# RTM works), at 1 and 2 threads, interleaved (for each repeat, every point), into
# OUT/interp_memory.csv (the harness's rows), then OUT/interp_memory.md (the table:
# scripts/stmbench interp-memory) and, unless INTERP_PLOTS=0, OUT/plots/interp_memory.png.
# make bench runs it at its end (BENCH_INTERP=0 leaves it out); `make interp-memory`
# runs it alone into results/latest/.
#
# Variables: INTERP_DURATION (seconds per run, default 0.5), INTERP_REPEAT (3),
# INTERP_PROGRAMS (default: arith memo-cache parallel-map work-queue), INTERP_MODES
# (tracing refcount biased buffered), INTERP_RUNTIMES (seq gil locks stm htm: those
# the harness lists and that run here), INTERP_THREADS ("1 2"), BUILD / STMBENCH.
# The sitting's cache-line transfer is recorded before and after (interp_memory.md).
# Exit status: 0, 1 when a run failed (recorded in interp_failures.txt), 2 bad input.
set -u
out=${1:-}
if [ -z "$out" ]; then
    echo "usage: scripts/interp-memory.sh OUT" >&2
    exit 2
fi
mkdir -p "$out" || exit 3
BIN=${STMBENCH:-${BUILD:-build/release}/stmbench}
if [ ! -x "$BIN" ]; then
    echo "interp-memory: no harness at $BIN (make first)" >&2
    exit 3
fi
DUR=${INTERP_DURATION:-0.5}
REP=${INTERP_REPEAT:-3}
PROGRAMS=${INTERP_PROGRAMS:-arith memo-cache parallel-map work-queue}
MODES=${INTERP_MODES:-tracing refcount biased buffered}
THREADS=${INTERP_THREADS:-1 2}
want=${INTERP_RUNTIMES:-seq gil locks stm htm}
case "$REP" in ''|*[!0-9]*|0) echo "interp-memory: INTERP_REPEAT must be a positive integer" >&2; exit 2;; esac
listed=$("$BIN" --list 2>/dev/null)
RUNTIMES=""
for rt in $want; do
    if ! printf '%s\n' "$listed" | grep -qw -- "$rt"; then
        echo "interp-memory: runtime $rt is not in this build: left out"
        continue
    fi
    if ! "$BIN" --runtime "$rt" --workload interp --threads 1 --ops 1 >/dev/null 2>&1; then
        echo "interp-memory: runtime $rt does not run here (e.g. htm without RTM): left out"
        continue
    fi
    RUNTIMES="$RUNTIMES $rt"
done
csv="$out/interp_memory.csv"
fails="$out/interp_failures.txt"
if [ -e "$csv" ]; then
    echo "interp-memory: $csv exists: not overwritten (choose another folder)" >&2
    exit 2
fi
: >"$fails"
lt_start=$("$BIN" --line-transfer 2>&1 | tail -1)
n=0
for rep in $(seq 1 "$REP"); do
    for p in $PROGRAMS; do
        for m in $MODES; do
            for rt in $RUNTIMES; do
                for t in $THREADS; do
                    [ "$rt" = seq ] && [ "$t" != 1 ] && continue
                    n=$((n + 1))
                    if ! timeout 120 "$BIN" --runtime "$rt" --workload interp --program "$p" \
                            --memory "$m" --threads "$t" --duration "$DUR" --seed "$rep" \
                            --csv "$csv" >/dev/null 2>>"$fails.log"; then
                        echo "$rt $p memory=$m threads=$t repeat=$rep" >>"$fails"
                    fi
                done
            done
        done
    done
done
lt_end=$("$BIN" --line-transfer 2>&1 | tail -1)
{
    echo "line_transfer_start=$lt_start"
    echo "line_transfer_end=$lt_end"
    echo "duration=$DUR repeat=$REP runs=$n"
} >"$out/interp_memory.config"
plots=()
[ "${INTERP_PLOTS:-1}" = 0 ] || plots=(--plot "$out/plots/interp_memory")
/usr/bin/python3 "$(dirname "$0")/stmbench" interp-memory "$csv" --config "$out/interp_memory.config" \
    "${plots[@]}" >"$out/interp_memory.md" || exit 1
rm -f "$fails.log"
if [ -s "$fails" ]; then
    echo "interp-memory: $(wc -l <"$fails") run(s) failed: $fails" >&2
    exit 1
fi
rm -f "$fails"
echo "interp-memory: $n runs; the table is $out/interp_memory.md"
