#!/usr/bin/env bash
# scripts/ci-smoke.sh - CI's smoke test of the make targets the documentation names
# (.ci/run runs it after `make test` and `make regress`, which it runs in full). Each
# target runs once, as a user would type it, with the variables it already has set
# so that it lasts seconds, and its output goes to a temporary folder: results/ (the
# baseline, results/latest, results/history.csv) is never written, and the step
# "results/ untouched" checks that. A step passes when make exits 0 and the target
# wrote what it should (rows, figures, a verdict...).
#
#   make bench            every runtime and workload, 1 and 2 threads, 0.05 s runs,
#                         the length sweep for stm (0.02 s runs), tables, no figures
#   make plots            the figures of that bench (PLOTS_DIR)
#   make micro            one repetition, minimal time per benchmark
#   make scaling          one round of two configurations, 0.1 s runs, T = 2
#   make stress           0.1 min budget, 0.05 s phase-2 runs, 2 threads (one round)
#   make fuzz             10 s in all (both targets)
#   make regress-history  2 repeats of 0.02 s, layouts 0 and 32, no counts, scratch history
#   make anchors          arith alone, 1 repeat of 0.05 s (pypy3 where installed)
#   make deps, make clean (a scratch BUILD folder)
#
# Every `make <target>` named in README.md or docs/contract.md must be a step here or
# one of those .ci/run runs itself (CI_OWN); otherwise the step "documented targets
# covered" fails, so a newly documented target cannot go unexercised.
#
# Prints one line per step, "PASS <step> (Ns)" or "FAIL <step> (...)" followed by the
# end of its log, then "N passed, M failed". Exit 0 when all passed, 1 otherwise.
# Environment: BUILD (default build/release), SMOKE_KEEP=1 keeps the temporary folder,
# SMOKE_TIMEOUT seconds before one step is killed (default 600).
set -u
cd "$(dirname "$0")/.." || exit 3
CI_OWN="test regress"
BUILD=${BUILD:-build/release}
tmo=${SMOKE_TIMEOUT:-600}
[[ $tmo =~ ^[0-9]+$ ]] && [ "$tmo" -ge 1 ] ||
    { echo "ci-smoke: SMOKE_TIMEOUT='$tmo' is not a positive integer" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stmbench-smoke.XXXXXX") || exit 3
if [ "${SMOKE_KEEP:-0}" = 1 ]; then
    echo "ci-smoke: output kept in $tmp"
else
    trap 'rm -rf "$tmp"' EXIT
fi
passed=0 failed=0 covered=""

results_state() { find results -type f -printf '%p %s %T@\n' 2>/dev/null | sort | sha256sum; }
before=$(results_state)

# step NAME CHECK -- make arguments...: runs make, then CHECK (a shell condition; $log
# is the step's log) when make succeeded; one PASS/FAIL line.
step() {
    local name=$1 check=$2 log t0 rc why=""
    shift 3
    log="$tmp/$(tr ' /' '__' <<<"$name").log"
    t0=$(date +%s)
    timeout --kill-after=10 "$tmo" make --no-print-directory BUILD="$BUILD" "$@" >"$log" 2>&1
    rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        why="timed out after ${tmo}s"
    elif [ $rc -ne 0 ]; then
        why="exit $rc"
    elif ! (eval "$check") >>"$log" 2>&1; then
        why="exit 0, but it did not produce its output: $check"
    fi
    covered="$covered $1"
    report "$name" "$why" "$(( $(date +%s) - t0 ))" "$log"
}
report() { # NAME WHY(empty: passed) SECONDS [LOG]
    if [ -z "$2" ]; then
        echo "PASS $1 (${3}s)"
        passed=$((passed + 1))
    else
        echo "FAIL $1 ($2, ${3}s)"
        [ -n "${4:-}" ] && tail -n 15 "$4" | sed 's/^/    | /'
        failed=$((failed + 1))
    fi
}
rows() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }

B=$tmp/bench
step "make bench" 'rows "$B/runs.csv" 20 && rows "$B/sweep.csv" 2 && [ -s "$B/overhead.md" ]' -- \
    bench BENCH_OUT="$B" BENCH_DURATION=0.05 BENCH_REPEAT=1 BENCH_THREADS="1 2" \
    BENCH_PLOTS=0 BENCH_SWEEP=1 BENCH_SWEEP_DURATION=0.02 BENCH_SWEEP_RUNTIMES=stm
step "make plots" 'ls "$B"/plots/*.png' -- \
    plots PLOTS_DIR="$B"
step "make micro" 'rows "$tmp/micro/micro.csv" 3' -- \
    micro MICRO_OUT="$tmp/micro" \
    MICRO_ARGS="--benchmark_min_time=0.001 --benchmark_repetitions=1"
step "make scaling" '[ -s "$tmp/scaling/scaling.md" ] && rows "$tmp/scaling/runs.csv" 9' -- \
    scaling SCALE_OUT="$tmp/scaling" SCALE_REPEAT=1 SCALE_DURATION=0.1 SCALE_THREADS=2 \
    SCALE_CONFIGS="bank --transfer-pct 100;interp --program counters"
step "make stress" 'rows "$tmp/stress/runs.tsv" 10 && [ -s "$tmp/stress/stress.csv" ]' -- \
    stress STRESS_OUT="$tmp/stress" STRESS_MINUTES=0.1 STRESS_DURATION=0.05 \
    STRESS_THREADS=2 STRESS_SEED=1
step "make fuzz" '[ "$(grep -c "^fuzz: fuzz_[a-z]*: exit 0, [0-9]* inputs run" "$log")" -ge 2 ]' -- \
    fuzz FUZZ_SECONDS=10 FUZZ_JOBS=1
step "make regress-history" 'rows "$tmp/history.csv" 2 && [ -s "$tmp/regress/verdict.md" ]' -- \
    regress-history REGRESS_HISTORY="$tmp/history.csv" REGRESS_OUT="$tmp/regress" \
    REGRESS_DURATION=0.02 REGRESS_REPEAT=2 REGRESS_REPEAT_N=2 REGRESS_LAYOUTS="0 32" REGRESS_COUNTS=0 \
    REGRESS_CONFIRM=0
step "make report" '[ -s "$tmp/report/machines.md" ]' -- \
    report RESULTS="$B" REPORT_OUT="$tmp/report"
step "make pack" '[ -s "$tmp/pack.tar.gz" ]' -- pack RESULTS="$B" PACK="$tmp/pack.tar.gz"
step "make interp-memory" '[ -s "$tmp/im/interp_memory.md" ] && rows "$tmp/im/interp_memory.csv" 7' -- \
    interp-memory INTERP_OUT="$tmp/im" INTERP_DURATION=0.05 INTERP_REPEAT=1 \
    INTERP_PROGRAMS=arith INTERP_MODES="tracing buffered" INTERP_PLOTS=0
step "make anchors" '[ -s "$tmp/an/anchors.md" ] && rows "$tmp/an/anchors.csv" 5' -- \
    anchors ANCHORS_OUT="$tmp/an" ANCHORS_DURATION=0.05 ANCHORS_REPEAT=1 ANCHORS_PROGRAMS=arith
step "make memcheck" 'rows "$tmp/mc/interp_rss.csv" 2' -- \
    memcheck MEMCHECK_OUT="$tmp/mc" INTERP_RSS_SECONDS=3 INTERP_RSS_EARLY=1 \
    INTERP_RSS_PROGRAMS=arith INTERP_RSS_MODES=raw
step "make mutants" '[ -s "$tmp/mutants/summary.md" ] && rows "$tmp/mutants/mutants.csv" 2' -- \
    mutants MUTANTS_OUT="$tmp/mutants" MUTANTS_WORKLOADS=bank MUTANTS_RUNTIMES=mutex \
    MUTANTS_MAX=1 MUTANTS_DURATION=0.1 MUTANTS_TIMEOUT=4
step "make deps" 'true' -- deps
mkdir -p "$tmp/cleanme/obj" && touch "$tmp/cleanme/obj/x.o"
step "make clean" '[ ! -e "$tmp/cleanme" ]' -- clean BUILD="$tmp/cleanme"

# results/ untouched by all of the above
t0=$(date +%s)
if [ "$(results_state)" = "$before" ]; then
    report "results/ untouched" "" 0
else
    report "results/ untouched" "a step wrote into results/ (git status results/)" 0
fi

# every documented target covered
documented=$(grep -ohE '`make [a-z][a-z-]*' README.md docs/contract.md | sed 's/^`make //' | sort -u)
missing=""
for t in $documented; do
    case " $covered $CI_OWN " in *" $t "*) ;; *) missing="$missing $t" ;; esac
done
if [ -z "$missing" ]; then
    report "documented targets covered ($(echo $documented))" "" 0
else
    report "documented targets covered" "no smoke step for:$missing (add one here)" 0
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
