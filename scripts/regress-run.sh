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
#  3. Code layouts: each side is linked again with 32, 64, 96 and 128 bytes of padding
#     in front of its code (scripts/layout-link.sh; REGRESS_LAYOUTS), the same
#     instructions at other addresses, since placement alone moves some figures by
#     several percent; a configuration's repeats are spread over the layouts.
#     Timed runs, interleaved: for each repeat, every configuration runs on both sides
#     at each layout back to back (A B in odd repeats, B A in even ones, so drift and
#     the order within a pair cancel), the same seed (REGRESS_SEED + repeat - 1) and the
#     harness's default pinning on both sides; every runtime x workload at 1 thread and
#     at N threads (N = the cores hwloc sees; seq at 1 thread only).
#  4. Counts under callgrind with cache simulation (scripts/instr-count.sh --cache-sim):
#     instructions, L1 and LL misses and estimated cycles per operation at 1 thread,
#     deterministic; cached per binary in $BUILD/regress/counts/, which starts with the
#     baseline's committed counts ($REGRESS_BASELINE/counts-cache/: used only where A's
#     code, valgrind and this CPU's caches are those they were counted with).
#  5. scripts/stmbench ab: the verdict per figure (ratio B/A with its confidence
#     interval, widened by the spread the layouts show; each side's layout spread),
#     a markdown table (printed, and verdict.md), verdict.csv, layouts.csv and plots.
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
#   REGRESS_LAYOUTS   the code layouts: bytes of padding in front of the code, each
#                     side linked once per value ("0 32 64 96 128"; "0": as built)
#   REGRESS_REPEAT    pairs of each 1-thread configuration (10), over the layouts:
#                     ceil(REGRESS_REPEAT / layouts) at each
#   REGRESS_REPEAT_N  pairs of each N-thread configuration (5), the same way
#   REGRESS_THREADS   thread counts (default "1 N")
#   REGRESS_SEED      seed of repeat 1 (1)
#   REGRESS_COUNTS    0: no callgrind counts
#   REGRESS_SAVE_COUNTS  a folder that side A's counts are also written to (with
#                     results/baseline/counts-cache: refresh the committed cache)
#   REGRESS_REV       compare with this revision instead of the baseline's
#   REGRESS_OUT       output directory (default $BUILD/regress/last, replaced each run)
#   REGRESS_HISTORY   append the verdict to this CSV file
#   REGRESS_CONFIRM   0: no second round for timed figures that regressed (default 1)
#   REGRESS_A_BIN / REGRESS_B_BIN  use these binaries as A / B (no build of A; an A/A
#                     noise measurement passes the same binary twice); with either,
#                     one layout (a binary of unknown origin cannot be linked again)...
#   REGRESS_A_SRC / REGRESS_B_SRC  ...unless this names the source folder whose
#                     Makefile built it (scripts/layout-link.sh then links it again)
#   REGRESS_TOL_*     tolerances, passed to scripts/stmbench ab verdict (see its --help)
#   BUILD             the build folder (build)
# Exit status: 0 no regression; 1 a regression or a failed run; 2 bad input; 3 setup.
set -u
cd "$(dirname "$0")/.." || exit 3
die() { echo "regress: $2" >&2; exit "$1"; }

BUILD=${BUILD:-build}
BASE=${REGRESS_BASELINE:-results/baseline}
DURATION=${REGRESS_DURATION:-0.2}
REPEAT1=${REGRESS_REPEAT:-10}
REPEATN=${REGRESS_REPEAT_N:-5}
read -r -a LAYOUTS <<<"${REGRESS_LAYOUTS-0 32 64 96 128}"
[ ${#LAYOUTS[@]} -gt 0 ] || LAYOUTS=(0)
SEED=${REGRESS_SEED:-1}
PY=/usr/bin/python3
[[ $DURATION =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] && awk -v d="$DURATION" 'BEGIN{exit !(d > 0)}' ||
    die 2 "REGRESS_DURATION='$DURATION' is not a positive number of seconds"
for v in REPEAT1:$REPEAT1 REPEATN:$REPEATN SEED:$SEED; do
    [[ ${v#*:} =~ ^[0-9]+$ ]] || die 2 "REGRESS_${v%%:*}='${v#*:}' is not a non-negative integer"
done
[ "$REPEAT1" -ge 2 ] && [ "$REPEATN" -ge 2 ] || die 2 "REGRESS_REPEAT and REGRESS_REPEAT_N must be at least 2"
for v in "${LAYOUTS[@]}"; do
    [[ $v =~ ^[0-9]+$ ]] && [ "$v" -le 4096 ] ||
        die 2 "REGRESS_LAYOUTS: '$v' is not a padding of 0 to 4096 bytes"
    [ "$(printf '%s\n' "${LAYOUTS[@]}" | grep -cx -- "$v")" -eq 1 ] ||
        die 2 "REGRESS_LAYOUTS: $v is named twice"
done

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
A_SRC=${REGRESS_A_SRC:-} B_SRC=${REGRESS_B_SRC:-}
[ -z "${REGRESS_A_BIN:-}" ] && A_SRC=
[ -z "${REGRESS_B_BIN:-}" ] && [ -z "${STMBENCH:-}" ] && B_SRC=.
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
    A_SRC=$SRC
fi
B_REV=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- 2>/dev/null || echo -dirty)

OUT=${REGRESS_OUT:-$BUILD/regress/last}
rm -rf "$OUT" && mkdir -p "$OUT" || die 3 "cannot create '$OUT'"
LOG=$OUT/runs.log
: >"$LOG"

# ------------------------------------------------------------------ layouts
# Each side linked again per padding (scripts/layout-link.sh: the same objects, the
# padding first); padding 0 is the binary as built. One layout where a side's binary
# was given (REGRESS_A_BIN, REGRESS_B_BIN, STMBENCH: no Makefile to take the link from)
# or a link fails: one line says so.
declare -A LBIN=([A0]=$A_BIN [B0]=$B_BIN)
if [ "${LAYOUTS[*]}" != 0 ]; then
    if [ -z "$A_SRC" ] || [ -z "$B_SRC" ]; then
        echo "regress: one code layout: a binary was given (REGRESS_A_BIN, REGRESS_B_BIN or STMBENCH) without its source folder (REGRESS_A_SRC, REGRESS_B_SRC)"
        LAYOUTS=(0)
    else
        mkdir -p "$BUILD/regress/layouts" || die 3 "cannot create $BUILD/regress/layouts"
        for pad in "${LAYOUTS[@]}"; do
            [ "$pad" -eq 0 ] && continue
            for side in A B; do
                src=$A_SRC bin=$A_BIN
                [ $side = B ] && src=$B_SRC bin=$B_BIN
                lb=$BUILD/regress/layouts/$side-$pad
                if ! scripts/layout-link.sh "$src" "$(realpath "$bin")" "$pad" "$lb" >>"$OUT/layouts.log" 2>&1; then
                    echo "regress: one code layout: linking side $side with $pad bytes of padding failed ($(tail -n 1 "$OUT/layouts.log"))"
                    LAYOUTS=(0)
                    break 2
                fi
                LBIN[$side$pad]=$lb
            done
        done
    fi
fi
# The repeats of one layout: the pairs asked for, spread over the layouts (rounded up).
NL=${#LAYOUTS[@]}
REPEAT1=$(( (REPEAT1 + NL - 1) / NL )) REPEATN=$(( (REPEATN + NL - 1) / NL ))
# Where each layout's runs go: OUT itself for one layout, else OUT/layout-<pad>/.
ldir() { if [ ${#LAYOUTS[@]} -eq 1 ]; then echo "$1"; else echo "$1/layout-$2"; fi; }

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
    echo "repeat_1=$((REPEAT1 * NL))"
    echo "repeat_n=$((REPEATN * NL))"
    echo "threads=$THREADS"
    echo "seed=$SEED"
    echo "layouts=${LAYOUTS[*]}"
    echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$OUT/meta.txt"

# ------------------------------------------------------------------ timed runs
maxrep=$REPEAT1; [ "$REPEATN" -gt "$maxrep" ] && maxrep=$REPEATN
total=0
for c in "${CONFIGS[@]}"; do
    read -r rt wl t <<<"$c"
    [ "$t" -eq 1 ] && total=$((total + 2 * REPEAT1)) || total=$((total + 2 * REPEATN))
done
total=$((total * ${#LAYOUTS[@]}))
echo "regress: A = $A_REV ($A_BIN), B = $B_REV ($B_BIN)"
echo "regress: $total timed runs of ${DURATION}s, interleaved A/B: ${#CONFIGS[@]} configurations" \
     "(threads $THREADS) at ${#LAYOUTS[@]} code layout(s) (padding ${LAYOUTS[*]} bytes)," \
     "$REPEAT1 repeat(s) per layout at 1 thread, $REPEATN above;" \
     "about $(awk -v n=$total -v d="$DURATION" 'BEGIN{printf "%d", n * (d + 0.03)}') s"
timeout_s=$(awk -v d="$DURATION" 'BEGIN{printf "%d", 10 * d + 60}')
nfail=0 ndone=0 start=$(date +%s)
run_one() { # side bin rt wl t seed dir
    local rc
    echo "=== $1: $2 --runtime $3 --workload $4 --threads $5 --seed $6" >>"$LOG"
    { timeout --kill-after=10 "$timeout_s" "$2" --runtime "$3" --workload "$4" --threads "$5" \
        --duration "$DURATION" --seed "$6" --csv "$7/$1.csv" >>"$LOG" 2>&1; } 2>/dev/null
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "$1 $3 $4 threads=$5 seed=$6 ($2): exit $rc" >>"$OUT/failures.txt"
        echo "regress: side $1: $3 $4 threads=$5 seed=$6 failed (exit $rc; see $LOG)" >&2
        [ "$1" = B ] && nfail=$((nfail + 1))   # the baseline's own failures are only shown
    fi
}
# One round of pairs: run_pairs FIRST_SEED VERBOSE CONFIG... (each "rt wl threads"),
# each pair at every layout in turn, into $OUT's layout folders.
run_pairs() {
    local seed0=$1 verbose=$2 rep c rt wl t seed k li pad a b d
    shift 2
    for pad in "${LAYOUTS[@]}"; do mkdir -p "$(ldir "$OUT" "$pad")" || die 3 "cannot create a layout folder in $OUT"; done
    for ((rep = 1; rep <= maxrep; rep++)); do
        seed=$((seed0 + rep - 1))
        for c in "$@"; do
            read -r rt wl t <<<"$c"
            if [ "$t" -eq 1 ]; then [ $rep -le "$REPEAT1" ] || continue
            else [ $rep -le "$REPEATN" ] || continue; fi
            # the layouts in an order rotated each repeat, so that none always runs
            # first after another configuration
            for ((k = 0; k < NL; k++)); do
                li=$(( (k + rep - 1) % NL )) pad=${LAYOUTS[$(( (k + rep - 1) % NL ))]}
                a=${LBIN[A$pad]} b=${LBIN[B$pad]} d=$(ldir "$OUT" "$pad")
                if [ $(((rep + li) % 2)) -eq 1 ]; then
                    run_one A "$a" "$rt" "$wl" "$t" "$seed" "$d"; run_one B "$b" "$rt" "$wl" "$t" "$seed" "$d"
                else
                    run_one B "$b" "$rt" "$wl" "$t" "$seed" "$d"; run_one A "$a" "$rt" "$wl" "$t" "$seed" "$d"
                fi
                ndone=$((ndone + 2))
            done
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
    # The baseline's counts, as committed: a key names A's code, valgrind's version and
    # this CPU's caches, so a clone built by another compiler or run on another CPU
    # finds none of them and counts A itself.
    if [ -d "$BASE/counts-cache" ] && mkdir -p "$BUILD/regress/counts"; then
        for f in "$BASE/counts-cache"/*; do
            [ -f "$f" ] && [ ! -e "$BUILD/regress/counts/${f##*/}" ] && cp "$f" "$BUILD/regress/counts/"
        done
    fi
    for side in A B; do
        bin=$A_BIN; [ $side = B ] && bin=$B_BIN
        also=; [ $side = A ] && also=${REGRESS_SAVE_COUNTS:-}
        INSTR_RUNTIMES="${rts[*]}" INSTR_WORKLOADS="${WORKLOADS[*]}" INSTR_CACHE_SIM=1 \
        INSTR_CACHE_DIR=$BUILD/regress/counts INSTR_CACHE_ALSO=$also STMBENCH=$bin \
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
    [ ${#counts[@]} -eq 4 ] && echo "regress: callgrind counts (cache simulation) done in $(( $(date +%s) - t0 )) s" \
        "($(grep -c '(cached)$' "$OUT/counts.log") configurations found counted before)"
fi

# ------------------------------------------------------------------ verdict
# One results file per side and layout, in LAYOUTS's order.
files() { # dir side
    local pad
    for pad in "${LAYOUTS[@]}"; do echo "$(ldir "$1" "$pad")/$2.csv"; done
}
mapfile -t AF < <(files "$OUT" A)
mapfile -t BF < <(files "$OUT" B)
for f in "${AF[@]}" "${BF[@]}"; do
    [ -s "$f" ] || die 1 "the timed runs wrote no results to $f (see $LOG)"
done
hist=()
[ -n "${REGRESS_HISTORY:-}" ] && hist=(--history "$REGRESS_HISTORY")
tols=()
for k in 1 N COUNT MISS; do
    v=REGRESS_TOL_$k
    [ -n "${!v:-}" ] && tols+=("--tol-${k,,}" "${!v}")
done
$PY scripts/stmbench ab verdict --a "${AF[@]}" --b "${BF[@]}" "${counts[@]}" \
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
        OUT_SAVED=$OUT; OUT=$COUT       # run_pairs writes into $OUT's layout folders
        run_pairs $((SEED + 1000)) 0 "${ctimed[@]}"
        OUT=$OUT_SAVED
        cp "$OUT/meta.txt" "$COUT/meta.txt"
        mapfile -t CAF < <(files "$COUT" A)
        mapfile -t CBF < <(files "$COUT" B)
        $PY scripts/stmbench ab verdict --a "${CAF[@]}" --b "${CBF[@]}" \
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
