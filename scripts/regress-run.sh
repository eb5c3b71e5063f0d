#!/usr/bin/env bash
# scripts/regress-run.sh - `make regress`: a quick bench compared with the committed
# baseline (results/baseline/) by scripts/regress. CI runs it after make test.
#
#  1. scripts/bench.sh into a temporary directory: every runtime and workload at 1 and 2
#     threads, REGRESS_DURATION seconds (default 0.5) x REGRESS_REPEAT runs (default 5),
#     tables but no figures.
#  2. If the baseline has instructions.csv: scripts/instr-count.sh, the callgrind
#     instruction counts per operation at 1 thread (deterministic).
#  3. scripts/regress CURRENT/runs.csv results/baseline.
# Takes about 2-5 minutes on 2 cores.
#
# Environment: REGRESS_BASELINE (default results/baseline), REGRESS_OUT (default a new
# temporary directory, kept and printed so a CI log can point at it), REGRESS_DURATION,
# REGRESS_REPEAT, REGRESS_THREADS (default "1 2"), INSTR_OPS (see instr-count.sh),
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
    scripts/instr-count.sh "$OUT/instructions.csv"
    irc=$?
    [ $irc -le 1 ] || { echo "regress: instruction counting could not run (exit $irc)" >&2; exit $irc; }
else
    echo "regress: $BASE has no instructions.csv: instruction counts not compared"
fi

scripts/regress "$OUT/runs.csv" "$BASE"
rrc=$?
[ $rrc -eq 2 ] && exit 2
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
