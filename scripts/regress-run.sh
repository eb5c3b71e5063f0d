#!/usr/bin/env bash
# scripts/regress-run.sh - `make regress`: the current tree (B) against the baseline
# revision (A, the git revision results/baseline/runs.csv records), both measured here,
# in one sitting. CI runs it after make test.
#
#  1. A: the baseline revision is checked out from this repository's history as a git
#     worktree in $BUILD/regress/base/src and built by its own Makefile (kept between
#     runs; rebuilt only when the revision changes). B: $BUILD/stmbench (make all).
#  2. Runtimes and workloads from each binary's `--list`; only those both sides have are
#     compared (the others are named in one line each). A runtime that cannot be set up
#     here (exit 3, e.g. htm without RTM) is skipped with one line.
#  3. Timed runs, interleaved: for each repeat, every configuration runs on both sides
#     back to back (A B in odd repeats, B A in even ones, so drift and the order within
#     a pair cancel), the same seed (REGRESS_SEED + repeat - 1) and the harness's default
#     pinning on both sides; every runtime x workload at 1 thread and at N threads
#     (N = the cores hwloc sees; seq at 1 thread only).
#  4. Counts under callgrind with cache simulation (scripts/instr-count.sh --cache-sim):
#     instructions, L1 and LL misses and estimated cycles per operation at 1 thread,
#     deterministic; cached per binary in $BUILD/regress/counts/.
#  5. scripts/stmbench ab: the verdict per figure (ratio B/A with its confidence
#     interval), a markdown table (printed, and verdict.md), verdict.csv and plots.
#  6. A timed figure that regressed is measured again with fresh pairs and counts as a
#     regression only if the second round regresses too (REGRESS_CONFIRM).
#     With REGRESS_HISTORY=FILE (make regress-history) the verdict rows are appended to
#     FILE (results/history.csv).
#
# Fallback: when the baseline revision cannot be built (a shallow clone without it, no
# git, a build failure), one line says so and the quick bench is compared with the
# committed results/baseline/runs.csv instead (scripts/stmbench regress, wide tolerances).
#
# Environment (defaults chosen from measurements, see docs/regress.md):
#   REGRESS_DURATION  seconds per timed run (0.2)
#   REGRESS_REPEAT    repeats of each 1-thread configuration (9)
#   REGRESS_REPEAT_N  repeats of each N-thread configuration (5)
#   REGRESS_THREADS   thread counts (default "1 N")
#   REGRESS_SEED      seed of repeat 1 (1)
#   REGRESS_COUNTS    0: no callgrind counts
#   REGRESS_REV       compare with this revision instead of the baseline's
#   REGRESS_OUT       output directory (default $BUILD/regress/last, replaced each run)
#   REGRESS_HISTORY   append the verdict to this CSV file
#   REGRESS_CONFIRM   0: no second round for timed figures that regressed (default 1)
#   REGRESS_A_BIN / REGRESS_B_BIN  use these binaries as A / B (no build of A; an A/A
#                     noise measurement passes the same binary twice)
#   REGRESS_TOL_*     tolerances, passed to scripts/stmbench ab verdict (see its --help)
#   BUILD             the build folder (build)
# Exit status: 0 no regression; 1 a regression or a failed run; 2 bad input; 3 setup.
set -u
cd "$(dirname "$0")/.." || exit 3
die() { echo "regress: $2" >&2; exit "$1"; }

BUILD=${BUILD:-build}
BASE=${REGRESS_BASELINE:-results/baseline}
DURATION=${REGRESS_DURATION:-0.2}
REPEAT1=${REGRESS_REPEAT:-9}
REPEATN=${REGRESS_REPEAT_N:-5}
SEED=${REGRESS_SEED:-1}
PY=/usr/bin/python3
[[ $DURATION =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] && awk -v d="$DURATION" 'BEGIN{exit !(d > 0)}' ||
    die 2 "REGRESS_DURATION='$DURATION' is not a positive number of seconds"
for v in REPEAT1:$REPEAT1 REPEATN:$REPEATN SEED:$SEED; do
    [[ ${v#*:} =~ ^[0-9]+$ ]] || die 2 "REGRESS_${v%%:*}='${v#*:}' is not a non-negative integer"
done
[ "$REPEAT1" -ge 2 ] && [ "$REPEATN" -ge 2 ] || die 2 "REGRESS_REPEAT and REGRESS_REPEAT_N must be at least 2"

# ------------------------------------------------------------------ the fallback
# Today's quick bench against the committed CSV (made in another sitting, so only
# within-file ratios with wide tolerances are compared).
fallback() { # reason
    echo "regress: FALLBACK: $1; comparing a quick bench with the committed $BASE/runs.csv instead (scripts/stmbench regress, tolerances -40%/-50%)"
    local out
    out=$(mktemp -d "${TMPDIR:-/tmp}/stmbench-regress.XXXXXX") || exit 3
    BENCH_OUT=$out BENCH_DURATION=0.5 BENCH_REPEAT=5 BENCH_THREADS="1 2" BENCH_PLOTS=0 \
    BENCH_RUNTIMES= BENCH_WORKLOADS= BENCH_ARGS= BENCH_PIN= BENCH_SEED= BENCH_TIMEOUT= \
        scripts/bench.sh >"$out/bench.out" 2>&1
    local brc=$?
    [ $brc -le 1 ] || { cat "$out/bench.out" >&2; die "$brc" "the quick bench could not run (exit $brc)"; }
    $PY scripts/stmbench regress "$out/runs.csv" "$BASE"
    local rrc=$?
    [ $brc -eq 0 ] || { echo "regress: FAILED: some runs failed (see $out/failures.txt)" >&2; rrc=1; }
    exit $rrc
}

# ------------------------------------------------------------------ A and B
B_BIN=${REGRESS_B_BIN:-${STMBENCH:-$BUILD/stmbench}}
[ -x "$B_BIN" ] || die 3 "no harness binary '$B_BIN': run make first"
A_BIN=${REGRESS_A_BIN:-}
A_REV=-
if [ -z "$A_BIN" ]; then
    if [ -n "${REGRESS_REV:-}" ]; then
        A_REV=$REGRESS_REV
    else
        [ -f "$BASE/runs.csv" ] || {
            echo "regress: no baseline yet ($BASE/runs.csv does not exist): nothing to compare."
            echo "regress: make one with 'make bench' then 'scripts/make-baseline.sh', and commit $BASE/."
            exit 0; }
        A_REV=$($PY scripts/stmbench ab baseline-rev "$BASE/runs.csv") || exit 2
    fi
    command -v git >/dev/null || fallback "git is not installed"
    git rev-parse --git-dir >/dev/null 2>&1 || fallback "this is not a git checkout"
    full=$(git rev-parse --verify -q "$A_REV^{commit}") || {
        shallow=$(git rev-parse --is-shallow-repository 2>/dev/null)
        [ "$shallow" = true ] && fallback "the baseline revision $A_REV is not in this shallow clone (git fetch --unshallow gives it)"
        fallback "the baseline revision $A_REV is not in this repository"; }
    SRC=$BUILD/regress/base/src
    mkdir -p "$BUILD/regress/base" || die 3 "cannot create $BUILD/regress/base"
    if [ "$(git -C "$SRC" rev-parse HEAD 2>/dev/null)" != "$full" ] ||
       [ "$(git -C "$SRC" rev-parse --show-toplevel 2>/dev/null)" != "$(cd "$SRC" 2>/dev/null && pwd -P)" ]; then
        git worktree remove --force "$SRC" >/dev/null 2>&1
        rm -rf "$SRC"
        git worktree prune
        git worktree add --detach "$SRC" "$full" >"$BUILD/regress/base/worktree.log" 2>&1 ||
            fallback "git worktree add of $A_REV failed ($(tail -n 1 "$BUILD/regress/base/worktree.log"))"
    fi
    echo "regress: building the baseline revision $A_REV with its own Makefile in $SRC"
    # Its own default target and flags; only the parallelism is ours.
    if ! make -C "$SRC" -j2 --no-print-directory >"$BUILD/regress/base/build.log" 2>&1; then
        fallback "the baseline revision $A_REV does not build here ($(grep -m1 -i error "$BUILD/regress/base/build.log" || tail -n 1 "$BUILD/regress/base/build.log"))"
    fi
    A_BIN=$SRC/build/stmbench
    [ -x "$A_BIN" ] || A_BIN=$(find "$SRC" -name stmbench -type f -perm -u+x -printf '%T@ %p\n' |
                              sort -n | tail -n 1 | cut -d' ' -f2-)
    [ -n "$A_BIN" ] && [ -x "$A_BIN" ] || fallback "the baseline revision $A_REV built no stmbench binary"
fi
B_REV=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- 2>/dev/null || echo -dirty)

OUT=${REGRESS_OUT:-$BUILD/regress/last}
rm -rf "$OUT" && mkdir -p "$OUT" || die 3 "cannot create '$OUT'"
LOG=$OUT/runs.log
: >"$LOG"

# Runtimes and workloads both sides list, in B's order.
names() { awk -v k="$1" '$1 == k {print $2}' <<<"$2"; }
la=$("$A_BIN" --list 2>&1) || die 3 "'$A_BIN --list' failed: $la"
lb=$("$B_BIN" --list 2>&1) || die 3 "'$B_BIN --list' failed: $lb"
RUNTIMES=() WORKLOADS=()
for k in runtime workload; do
    for x in $(names $k "$lb"); do
        if grep -qx -- "$x" <<<"$(names $k "$la")"; then
            [ $k = runtime ] && RUNTIMES+=("$x") || WORKLOADS+=("$x")
        else
            echo "regress: $k $x is new (not in the baseline revision): not compared"
        fi
    done
    for x in $(names $k "$la"); do
        grep -qx -- "$x" <<<"$(names $k "$lb")" ||
            echo "regress: $k $x of the baseline revision is gone from the current tree: not compared"
    done
done
[ ${#RUNTIMES[@]} -gt 0 ] && [ ${#WORKLOADS[@]} -gt 0 ] ||
    die 2 "the two binaries have no runtime or no workload in common"

. scripts/cores.sh     # ncores, from hwloc
THREADS=${REGRESS_THREADS:-$( [ "$ncores" -gt 1 ] && echo "1 $ncores" || echo 1)}
for t in $THREADS; do
    [[ $t =~ ^[0-9]+$ ]] && [ "$t" -ge 1 ] || die 2 "REGRESS_THREADS: '$t' is not a positive integer"
done

# Probes (tiny runs, not timed): a runtime that cannot be set up here on either side
# (exit 3) is skipped; a configuration a side refuses (exit 2: seq above 1 thread, a
# thread count it does not allow) is left out.
probe() { "$1" --runtime "$2" --workload "$3" --threads "$4" --ops "$((100 * $4))" --pin none >/dev/null 2>"$OUT/probe.err"; }
declare -A skip_rt
CONFIGS=()
for rt in "${RUNTIMES[@]}"; do
    for side in A B; do
        bin=$A_BIN; [ $side = B ] && bin=$B_BIN
        probe "$bin" "$rt" "${WORKLOADS[0]}" 1
        if [ $? -eq 3 ]; then
            echo "regress: runtime $rt cannot be set up here on side $side (exit 3: $(tail -n 1 "$OUT/probe.err")): skipped"
            skip_rt[$rt]=1
            break
        fi
    done
done
for t in $THREADS; do
    for wl in "${WORKLOADS[@]}"; do
        for rt in "${RUNTIMES[@]}"; do
            [ -n "${skip_rt[$rt]:-}" ] && continue
            ok=1
            for bin in "$A_BIN" "$B_BIN"; do
                probe "$bin" "$rt" "$wl" "$t"; rc=$?
                [ $rc -eq 2 ] && ok=0
            done
            [ $ok = 1 ] && CONFIGS+=("$rt $wl $t")
        done
    done
done
[ ${#CONFIGS[@]} -gt 0 ] || die 2 "no configuration runs on both sides"
{
    echo "a_rev=$A_REV"
    echo "b_rev=$B_REV"
    echo "a_bin=$A_BIN"
    echo "b_bin=$B_BIN"
    echo "cores=$ncores"
    echo "duration=$DURATION"
    echo "repeat_1=$REPEAT1"
    echo "repeat_n=$REPEATN"
    echo "threads=$THREADS"
    echo "seed=$SEED"
    echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$OUT/meta.txt"

# ------------------------------------------------------------------ timed runs
maxrep=$REPEAT1; [ "$REPEATN" -gt "$maxrep" ] && maxrep=$REPEATN
total=0
for c in "${CONFIGS[@]}"; do
    read -r rt wl t <<<"$c"
    [ "$t" -eq 1 ] && total=$((total + 2 * REPEAT1)) || total=$((total + 2 * REPEATN))
done
echo "regress: A = $A_REV ($A_BIN), B = $B_REV ($B_BIN)"
echo "regress: $total timed runs of ${DURATION}s, interleaved A/B: ${#CONFIGS[@]} configurations" \
     "(threads $THREADS), $REPEAT1 repeats at 1 thread, $REPEATN above; about $(awk -v n=$total -v d="$DURATION" 'BEGIN{printf "%d", n * (d + 0.03)}') s"
timeout_s=$(awk -v d="$DURATION" 'BEGIN{printf "%d", 10 * d + 60}')
nfail=0 ndone=0 start=$(date +%s)
run_one() { # side bin rt wl t seed
    local rc
    echo "=== $1: $2 --runtime $3 --workload $4 --threads $5 --seed $6" >>"$LOG"
    { timeout --kill-after=10 "$timeout_s" "$2" --runtime "$3" --workload "$4" --threads "$5" \
        --duration "$DURATION" --seed "$6" --csv "$OUT/$1.csv" >>"$LOG" 2>&1; } 2>/dev/null
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "$1 $3 $4 threads=$5 seed=$6: exit $rc" >>"$OUT/failures.txt"
        echo "regress: side $1: $3 $4 threads=$5 seed=$6 failed (exit $rc; see $LOG)" >&2
        [ "$1" = B ] && nfail=$((nfail + 1))   # the baseline's own failures are only shown
    fi
}
# One round of pairs: run_pairs FIRST_SEED VERBOSE CONFIG... (each "rt wl threads").
run_pairs() {
    local seed0=$1 verbose=$2 rep c rt wl t seed
    shift 2
    for ((rep = 1; rep <= maxrep; rep++)); do
        seed=$((seed0 + rep - 1))
        for c in "$@"; do
            read -r rt wl t <<<"$c"
            if [ "$t" -eq 1 ]; then [ $rep -le "$REPEAT1" ] || continue
            else [ $rep -le "$REPEATN" ] || continue; fi
            if [ $((rep % 2)) -eq 1 ]; then
                run_one A "$A_BIN" "$rt" "$wl" "$t" "$seed"; run_one B "$B_BIN" "$rt" "$wl" "$t" "$seed"
            else
                run_one B "$B_BIN" "$rt" "$wl" "$t" "$seed"; run_one A "$A_BIN" "$rt" "$wl" "$t" "$seed"
            fi
            ndone=$((ndone + 2))
        done
        [ "$verbose" = 1 ] &&
            echo "regress: repeat $rep done ($ndone of $total runs, $(( $(date +%s) - start )) s)"
    done
}
run_pairs "$SEED" 1 "${CONFIGS[@]}"

# ------------------------------------------------------------------ counts
counts=()
if [ "${REGRESS_COUNTS:-1}" != 0 ]; then
    rts=() wls=()
    for rt in "${RUNTIMES[@]}"; do [ -n "${skip_rt[$rt]:-}" ] || rts+=("$rt"); done
    # htm never runs under valgrind, which executes no hardware transaction
    if [[ " ${rts[*]} " == *" htm "* ]]; then
        echo "regress: htm left out of the callgrind counts: valgrind runs no hardware transaction"
        rts=("${rts[@]/htm}")
    fi
    t0=$(date +%s)
    for side in A B; do
        bin=$A_BIN; [ $side = B ] && bin=$B_BIN
        INSTR_RUNTIMES="${rts[*]}" INSTR_WORKLOADS="${WORKLOADS[*]}" INSTR_CACHE_SIM=1 \
        INSTR_CACHE_DIR=$BUILD/regress/counts STMBENCH=$bin \
            scripts/instr-count.sh "$OUT/counts-$side.csv" >>"$OUT/counts.log" 2>&1
        rc=$?
        if [ $rc -gt 1 ]; then
            echo "regress: callgrind counts could not run on side $side (exit $rc, see $OUT/counts.log): counts not compared"
            counts=()
            break
        fi
        [ $rc -eq 1 ] && echo "regress: some configurations failed under callgrind on side $side (see $OUT/counts.log)"
        counts+=(--counts-$side "$OUT/counts-$side.csv")
    done
    [ ${#counts[@]} -eq 4 ] && echo "regress: callgrind counts (cache simulation) done in $(( $(date +%s) - t0 )) s"
fi

# ------------------------------------------------------------------ verdict
[ -s "$OUT/A.csv" ] && [ -s "$OUT/B.csv" ] || die 1 "the timed runs wrote no results (see $LOG)"
hist=()
[ -n "${REGRESS_HISTORY:-}" ] && hist=(--history "$REGRESS_HISTORY")
tols=()
for k in 1 N COUNT MISS; do
    v=REGRESS_TOL_$k
    [ -n "${!v:-}" ] && tols+=("--tol-${k,,}" "${!v}")
done
$PY scripts/stmbench ab verdict --a "$OUT/A.csv" --b "$OUT/B.csv" "${counts[@]}" \
    --meta "$OUT/meta.txt" --out "$OUT" "${hist[@]}" "${tols[@]}"
status=$?
[ $status -eq 2 ] && exit 2

# ------------------------------------------------------------------ confirmation
# A timed figure that regressed is measured again, with fresh pairs (other seeds, the
# same repeats and order rule), and stays a regression only if it regresses again: a
# slowdown of the code shows in both rounds, a spell of the machine (this VM has slow
# spells of a minute or more) seldom twice. Count figures are deterministic and are not
# re-measured. REGRESS_CONFIRM=0 turns this off.
if [ $status -eq 1 ] && [ $nfail -eq 0 ] && [ "${REGRESS_CONFIRM:-1}" != 0 ]; then
    mapfile -t flagged < <($PY - "$OUT/verdict.csv" <<'PYEOF'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["verdict"] == "REGRESSION":
        timed = r["figure"].startswith("ops/s")
        print(("timed " if timed else "count ") + " ".join((r["runtime"], r["workload"], r["threads"])))
PYEOF
)
    ncount=0 ctimed=()
    for f in "${flagged[@]}"; do
        case $f in count*) ncount=$((ncount + 1)) ;; timed*) ctimed+=("${f#timed }") ;; esac
    done
    if [ $ncount -eq 0 ] && [ ${#ctimed[@]} -gt 0 ]; then
        COUT=$OUT/confirm
        rm -rf "$COUT" && mkdir -p "$COUT" || die 3 "cannot create '$COUT'"
        echo "regress: ${#ctimed[@]} timed figure(s) regressed; measuring them again with fresh pairs"
        OUT_SAVED=$OUT; OUT=$COUT       # run_one writes $OUT/A.csv and $OUT/B.csv
        run_pairs $((SEED + 1000)) 0 "${ctimed[@]}"
        OUT=$OUT_SAVED
        cp "$OUT/meta.txt" "$COUT/meta.txt"
        $PY scripts/stmbench ab verdict --a "$COUT/A.csv" --b "$COUT/B.csv" \
            --meta "$COUT/meta.txt" --out "$COUT" "${tols[@]}" >"$COUT/verdict.txt"
        cstatus=$?
        [ $cstatus -eq 2 ] && exit 2
        if [ $nfail -eq 0 ] && [ $cstatus -eq 0 ]; then
            echo "regress: not confirmed: the second round of the flagged figure(s) is within tolerance (details in $COUT): no regression"
            status=0
        else
            grep -m1 'figures:' "$COUT/verdict.txt"
            echo "regress: confirmed by a second round with fresh pairs (details in $COUT)"
        fi
    fi
fi
if [ $nfail -ne 0 ]; then
    echo "regress: FAILED: $nfail timed run(s) failed (see $OUT/failures.txt)" >&2
    status=1
fi
[ $status -eq 0 ] && echo "regress: no regression (details in $OUT)"
[ $status -eq 1 ] && echo "regress: REGRESSION (details in $OUT)"
exit $status
