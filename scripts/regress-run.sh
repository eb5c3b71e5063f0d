#!/usr/bin/env bash
# scripts/regress-run.sh - `make regress`: a quick bench compared with the committed
# baseline (results/baseline/) by scripts/regress. CI runs it after make test.
#
#  1. scripts/bench.sh into a temporary directory: every runtime and workload at 1 and 2
#     threads, REGRESS_DURATION seconds (default 0.5) x REGRESS_REPEAT runs (default 5),
#     tables but no figures (htm only where RTM works: bench.sh skips it elsewhere, with
#     one line).
#  2. If the baseline has instructions.csv: scripts/instr-count.sh, the callgrind
#     instruction counts per operation at 1 thread (deterministic).
#  3. scripts/regress CURRENT/runs.csv results/baseline. If that finds a regression, the
#     quick bench runs once more (other seeds) and the verdict is on both runs'
#     repeats together, so that one unlucky stretch of a noisy VM does not fail CI
#     (REGRESS_RETRY=0: no second run).
# Takes about 2-3 minutes on 2 cores, 4-5 with the second run.
#
# Environment: REGRESS_BASELINE (default results/baseline), REGRESS_OUT (default a new
# temporary directory, kept and printed so a CI log can point at it), REGRESS_DURATION,
# REGRESS_REPEAT, REGRESS_THREADS (default "1 2"), REGRESS_RETRY, INSTR_OPS (see instr-count.sh),
# BUILD / STMBENCH.
# Exit status: 0 no regression, or no baseline yet (said so); 1 a regression, a failed
# run or a failed instruction count; 2 bad input; 3 setup (no harness, no valgrind).
set -u
cd "$(dirname "$0")/.." || exit 3
BASE=${REGRESS_BASELINE:-results/baseline}

if [ ! -f "$BASE/runs.csv" ]; then
    echo "regress: no baseline yet ($BASE/runs.csv does not exist): nothing to compare."
    echo "regress: make one with 'make bench' then 'scripts/make-baseline.sh', and commit $BASE/."
    exit 0
fi
OUT=${REGRESS_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/stmbench-regress.XXXXXX")} || exit 3
mkdir -p "$OUT" || exit 3
echo "regress: quick bench into $OUT, compared with $BASE"

BENCH_OUT=$OUT BENCH_DURATION=${REGRESS_DURATION:-0.5} BENCH_REPEAT=${REGRESS_REPEAT:-5} \
BENCH_THREADS=${REGRESS_THREADS:-1 2} BENCH_PLOTS=0 BENCH_RUNTIMES= BENCH_WORKLOADS= \
BENCH_ARGS= BENCH_PIN= BENCH_SEED= BENCH_TIMEOUT= \
    scripts/bench.sh
brc=$?
case $brc in
    0|1) ;;                                   # 1: some runs failed; still compare the rest
    *) echo "regress: the quick bench could not run (exit $brc)" >&2; exit $brc ;;
esac
[ -s "$OUT/runs.csv" ] || { echo "regress: the quick bench wrote no results" >&2; exit 1; }

irc=0
if [ -f "$BASE/instructions.csv" ]; then
    echo "regress: counting instructions per operation under callgrind (single thread)"
    # htm is left out: valgrind runs no hardware transaction (the harness refuses htm there).
    instr_rt=${INSTR_RUNTIMES:-}
    if [ -z "$instr_rt" ]; then
        instr_rt=$("${STMBENCH:-${BUILD:-build}/stmbench}" --list 2>/dev/null |
                   awk '$1 == "runtime" && $2 != "htm" {print $2}' | tr '\n' ' ')
        echo "regress: skipped htm under callgrind: valgrind runs no hardware transaction"
    fi
    INSTR_RUNTIMES=$instr_rt scripts/instr-count.sh "$OUT/instructions.csv"
    irc=$?
    [ $irc -le 1 ] || { echo "regress: instruction counting could not run (exit $irc)" >&2; exit $irc; }
else
    echo "regress: $BASE has no instructions.csv: instruction counts not compared"
fi

scripts/regress "$OUT/runs.csv" "$BASE"
rrc=$?
[ $rrc -eq 2 ] && exit 2
if [ $rrc -eq 1 ] && [ "${REGRESS_RETRY:-1}" != 0 ]; then
    # A second opinion before failing CI on a noisy machine: as many repeats again,
    # with other seeds, and the verdict on all of them together (instruction counts
    # and failed checks do not change by this).
    echo "regress: a figure regressed; running the quick bench again for a verdict on twice the repeats"
    BENCH_OUT=$OUT/retry BENCH_DURATION=${REGRESS_DURATION:-0.5} BENCH_REPEAT=${REGRESS_REPEAT:-5} \
    BENCH_THREADS=${REGRESS_THREADS:-1 2} BENCH_PLOTS=0 BENCH_RUNTIMES= BENCH_WORKLOADS= \
    BENCH_ARGS= BENCH_PIN= BENCH_SEED=1001 BENCH_TIMEOUT= \
        scripts/bench.sh >"$OUT/retry.log" 2>&1
    [ $? -le 1 ] || { echo "regress: the second quick bench could not run (see $OUT/retry.log)" >&2; exit 1; }
    mkdir -p "$OUT/all" &&
        { cat "$OUT/runs.csv"; tail -n +2 "$OUT/retry/runs.csv"; } >"$OUT/all/runs.csv" ||
        { echo "regress: cannot merge the two benches" >&2; exit 1; }
    [ -f "$OUT/instructions.csv" ] && cp "$OUT/instructions.csv" "$OUT/all/"
    scripts/regress "$OUT/all/runs.csv" "$BASE"
    rrc=$?
    [ $rrc -eq 2 ] && exit 2
    grep -q . "$OUT/retry/failures.txt" 2>/dev/null && brc=1
fi
status=$rrc
if [ $brc -ne 0 ]; then
    echo "regress: FAILED: some runs of the quick bench failed (see $OUT/failures.txt)" >&2
    status=1
fi
if [ $irc -ne 0 ]; then
    echo "regress: FAILED: some configurations failed under callgrind (see above)" >&2
    status=1
fi
[ $status -eq 0 ] && echo "regress: no regression (details in $OUT)"
exit $status
