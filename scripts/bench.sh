#!/usr/bin/env bash
# scripts/bench.sh - the `make bench` sweep: every runtime x workload x thread count,
# repeated, into a folder of its own, results/bench/<machine>-<cores>c-<UTC date-time>/
# (results/latest links to it), then the overhead table, the conflict report and the
# plots (scripts/plots.sh). The folder is what `make report` merges with other
# machines' folders and what `make pack` sends back.
#
# Variables (environment; `make bench VAR=value` passes them):
#   BENCH_DURATION  seconds per run (default 5: on 2 cores, with 5 runtimes besides
#                   seq, the sweep is 4 workloads x 16 points (seq; 1, 2 and 4 threads,
#                   4 oversubscribed) x 3 repeats: about 12 minutes, then the length
#                   sweep and interp's memory modes: make bench takes about 18 minutes)
#   BENCH_OVERSUB_DURATION  seconds per run of the oversubscribed point (default 1:
#                   its figures are counts, aborts per commit and the like, never
#                   timings, and 1 s gives them; 4 minutes less on 2 cores)
#   BENCH_COMPOSE_DURATION  seconds per run of the compose workload (default 1: about
#                   40 s more on 2 cores)
#   BENCH_REPEAT    runs per point (default 3; the tables use medians)
#   BENCH_THREADS   thread counts, e.g. "1 2 4" (default 1..N with N the cores hwloc
#                   sees; above 8 cores 1 2 4 8 ... and N)
#   BENCH_OVERSUB   1 (default, except with BENCH_PLOTS=0, where it is 0): one more
#                   point, oversubscribed, at 2 x the hardware threads (hwloc's PUs: 2 x
#                   the cores where a core runs one thread), for every runtime but seq,
#                   marked "oversubscribed" in the tables and figures; 0 leaves it out.
#                   Any run with more threads than PUs is marked so (the context's pus)
#   BENCH_MACHINE   the machine's name in the folder's name and in make report (default
#                   the short host name); letters, digits, '.', '_', '-'
#   BENCH_RUNTIMES  runtimes (default: every one `stmbench --list` prints)
#   BENCH_WORKLOADS workloads (default: every one `stmbench --list` prints)
#   BENCH_PIN       --pin policy passed to every run (default: the harness's own)
#   BENCH_ARGS      more arguments for every run (e.g. "--ops-per-tx 4")
#   BENCH_SEED      seed of repeat 1; repeat r uses BENCH_SEED+r-1, the same for every
#                   runtime, so each runtime runs the same operation sequence (default 1)
#   BENCH_TIMEOUT   seconds before one run is killed (default 3 x duration + 120)
#   BENCH_OUT       output directory (default: a new results/bench/<machine>-<cores>c-
#                   <YYYYMMDD-HHMMSS>/, UTC; results/latest then links to it and
#                   results/previous to the folder it linked to before, or, where
#                   results/latest is still a folder of an older bench, that folder is
#                   moved to results/previous/); a named folder must not hold a runs.csv
#   BENCH_PLOTS     0: tables only, no figures (scripts/regress-run.sh uses it)
#   BENCH_SWEEP     1 (default, except with BENCH_PLOTS=0, the tables-only runs of make
#                   regress, where it is 0): after the main sweep, the transaction-length sweep into
#                   sweep.csv: per workload, lengths 1 10 100 1000 10000 ops per
#                   transaction (interp: switch intervals 10 ... 100000) and `auto`, at 1
#                   thread and at the cores hwloc sees, for gil, stm, locks, itm and htm
#                   where they run (BENCH_SWEEP_RUNTIMES); 0: none. A reduced sweep by
#                   default (0.5 s runs, 1 repeat: about 3 minutes on 2 cores)
#   BENCH_SWEEP_DURATION, BENCH_SWEEP_REPEAT  seconds per sweep run (0.5), repeats (1)
#   BENCH_INTERP    1 (default, except with BENCH_PLOTS=0): then interp's memory modes
#                   (scripts/interp-memory.sh: interp_memory.csv, .md and the plot;
#                   INTERP_DURATION 0.5 s, INTERP_REPEAT 3: about 3 minutes on 2 cores);
#                   0 leaves them out
#   BUILD, STMBENCH the build directory (default build/release) and harness binary
#
# bench-config.txt records the variables and the sitting: before the first run and after
# the last, `stmbench --line-transfer` (the one-way time of a cache line between the PUs
# of threads 0 and 1) and `stmbench --log-floor --threads T` (T: the largest of
# BENCH_THREADS, at least 2), as line_transfer_start/_end= and log_floor_start/_end=
# followed by the harness's line, or "unmeasured: <reason>" (a harness without these
# modes, a machine with one PU). Every cross-thread figure of the sitting is a few such
# transfers, and their time changes between sittings of a VM by a factor of four.
#
# At the end (and when interrupted) every context JSON of the folder gets a "bench"
# object (scripts/stmbench machines stamp, from bench-config.txt): what a merge of
# several machines' folders needs beyond the harness's context.
#
# seq runs only at 1 thread. Runs are interleaved (for each repeat, every point) so
# that drift on the machine hits every configuration alike. A failed run (non-zero
# exit, a failed check, a timeout) is recorded in failures.txt and the sweep goes on;
# the script exits 1 at the end if any run failed, 2 on bad variables, 3 when the
# harness cannot be run at all.
set -u
cd "$(dirname "$0")/.." || exit 3

die() { echo "bench: $2" >&2; exit "$1"; }

BUILD=${BUILD:-build/release}
BIN=${STMBENCH:-$BUILD/stmbench}
DEFAULT_OUT=results/latest
OUT=${BENCH_OUT:-$DEFAULT_OUT}
PY=/usr/bin/python3
DURATION=${BENCH_DURATION:-5}
REPEAT=${BENCH_REPEAT:-3}
SEED=${BENCH_SEED:-1}

[[ $DURATION =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] && awk -v d="$DURATION" 'BEGIN{exit !(d > 0)}' ||
    die 2 "BENCH_DURATION='$DURATION' is not a positive number of seconds"
[[ $REPEAT =~ ^[0-9]+$ ]] && [ "$REPEAT" -ge 1 ] ||
    die 2 "BENCH_REPEAT='$REPEAT' is not a positive integer"
[[ $SEED =~ ^[0-9]+$ ]] || die 2 "BENCH_SEED='$SEED' is not a non-negative integer"
COMPOSE_DURATION=${BENCH_COMPOSE_DURATION:-1}
[[ $COMPOSE_DURATION =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] &&
    awk -v d="$COMPOSE_DURATION" 'BEGIN{exit !(d > 0)}' ||
    die 2 "BENCH_COMPOSE_DURATION='$COMPOSE_DURATION' is not a positive number of seconds"
OVERSUB_DURATION=${BENCH_OVERSUB_DURATION:-1}
[[ $OVERSUB_DURATION =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] &&
    awk -v d="$OVERSUB_DURATION" 'BEGIN{exit !(d > 0)}' ||
    die 2 "BENCH_OVERSUB_DURATION='$OVERSUB_DURATION' is not a positive number of seconds"
TIMEOUT=${BENCH_TIMEOUT:-$(awk -v d="$DURATION" 'BEGIN{printf "%d", 3 * d + 120}')}
[[ $TIMEOUT =~ ^[0-9]+$ ]] && [ "$TIMEOUT" -ge 1 ] ||
    die 2 "BENCH_TIMEOUT='$TIMEOUT' is not a positive integer number of seconds"

[ -x "$BIN" ] || die 3 "no harness binary '$BIN': run make first"
listing=$("$BIN" --list 2>&1) || die 3 "'$BIN --list' failed: $listing"
all_rt=$(awk '$1 == "runtime" {print $2}' <<<"$listing")
all_wl=$(awk '$1 == "workload" {print $2}' <<<"$listing")
[ -n "$all_rt" ] && [ -n "$all_wl" ] ||
    die 3 "'$BIN --list' printed no 'runtime NAME' / 'workload NAME' lines"

# The requested names, checked against the harness's list.
pick() { # what requested available
    local what=$1 req=$2 avail=$3 x
    [ -n "$req" ] || { echo $avail; return; }
    for x in $req; do
        grep -qx -- "$x" <<<"$avail" ||
            die 2 "BENCH_${what^^}S: unknown $what '$x' (allowed: $(echo $avail))"
    done
    echo $req
}
RUNTIMES=$(pick runtime "${BENCH_RUNTIMES:-}" "$all_rt") || exit 2
WORKLOADS=$(pick workload "${BENCH_WORKLOADS:-}" "$all_wl") || exit 2

# Cores: from hwloc, like the harness's pinning.
. scripts/cores.sh     # ncores, from hwloc
if [ -n "${BENCH_THREADS:-}" ]; then
    THREADS=$BENCH_THREADS
    for t in $THREADS; do
        [[ $t =~ ^[0-9]+$ ]] && [ "$t" -ge 1 ] ||
            die 2 "BENCH_THREADS: '$t' is not a positive integer (e.g. BENCH_THREADS=\"1 2 4\")"
    done
elif [ "$ncores" -le 8 ]; then
    THREADS=$(seq 1 "$ncores" | tr '\n' ' ')
else
    THREADS="" t=1
    while [ $t -lt "$ncores" ]; do THREADS+="$t "; t=$((t * 2)); done
    THREADS+="$ncores"
fi
THREADS=$(tr ' ' '\n' <<<"$THREADS" | grep . | sort -n -u | tr '\n' ' ')

# The oversubscribed point: 2 x the hardware threads, unless BENCH_THREADS has it.
# Not in THREADS: the log floor's thread count and the length sweep keep theirs.
[ "${BENCH_PLOTS:-1}" = 0 ] && oversub_default=0 || oversub_default=1
OVERSUB=${BENCH_OVERSUB:-$oversub_default}
[[ $OVERSUB =~ ^[01]$ ]] || die 2 "BENCH_OVERSUB='$OVERSUB' is not 0 or 1"
OVER_T=""
if [ "$OVERSUB" = 1 ] && ! grep -qw "$((2 * npus))" <<<"$THREADS"; then
    OVER_T=$((2 * npus))
fi
MACHINE=${BENCH_MACHINE:-$(hostname -s 2>/dev/null | sed 's/[^A-Za-z0-9._-]/_/g')}
MACHINE=${MACHINE:-machine}
[[ $MACHINE =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] ||
    die 2 "BENCH_MACHINE='$MACHINE': letters, digits, '.', '_' and '-' only, a letter or digit first"

read -r -a extra <<<"${BENCH_ARGS:-}"

# Which runtime x workload pairs this build has: a workload lands runtime by runtime
# (e.g. its locks variant later). One tiny probe run each (--ops 1); a pair the harness
# refuses as bad input (exit 2) is skipped and listed, not counted as a failure. A
# runtime that needs hardware this machine lacks (htm without working RTM: exit 3,
# "no working RTM") is skipped whole, with one line, not counted as a failure either.
skipped=() nohw=()
declare -A usable nohw_rt
for wl in $WORKLOADS; do
    for rt in $RUNTIMES; do
        [ -n "${nohw_rt[$rt]:-}" ] && continue
        msg=$(timeout 120 "$BIN" --runtime "$rt" --workload "$wl" --threads 1 --ops 1 \
              --pin none "${extra[@]}" 2>&1 >/dev/null)
        rc=$?
        if [ $rc -eq 2 ]; then
            skipped+=("$rt $wl: $(grep -v '^[[:space:]]*$' <<<"$msg" | tail -n 1)")
        elif [ $rc -eq 3 ] && grep -q 'no working RTM' <<<"$msg"; then
            nohw_rt[$rt]=1
            nohw+=("bench: skipped $rt on this machine: $(grep -o "$rt: no working RTM.*" <<<"$msg" | head -n 1)")
        else
            usable["$rt $wl"]=1
        fi
    done
done
if [ ${#usable[@]} -eq 0 ]; then
    echo "bench: the harness refused every runtime x workload pair:" >&2
    printf '  %s\n' "${skipped[@]+"${skipped[@]}"}" "${nohw[@]+"${nohw[@]}"}" >&2
    exit 2
fi

# The points, in sweep order.
points=()
for wl in $WORKLOADS; do
    for rt in $RUNTIMES; do
        [ -n "${usable["$rt $wl"]:-}" ] || continue
        for t in $THREADS $OVER_T; do
            [ "$rt" = seq ] && [ "$t" -ne 1 ] && continue
            points+=("$rt $wl $t")
        done
    done
done
[ ${#points[@]} -gt 0 ] || die 2 "nothing to run (seq runs only at 1 thread; BENCH_THREADS='$THREADS')"
total=$((${#points[@]} * REPEAT))

# A fresh output directory: by default a new folder named after the machine and the
# date, with results/latest and results/previous linking to the newest two.
if [ "$OUT" = "$DEFAULT_OUT" ]; then
    base=$MACHINE-${ncores}c-$(date -u +%Y%m%d-%H%M%S) n=1
    name=$base
    while [ -e "results/bench/$name" ]; do n=$((n + 1)); name=$base-$n; done
    OUT=results/bench/$name
    mkdir -p "$OUT" || die 3 "cannot create '$OUT'"
    if [ -L results/latest ]; then
        ln -sfn "$(readlink results/latest)" results/previous ||
            die 3 "could not link results/previous"
    elif [ -e results/latest ]; then    # a folder of an older bench
        rm -rf results/previous && mv results/latest results/previous ||
            die 3 "could not move the old results/latest to results/previous"
    fi
    [ -e results/previous ] && echo "bench: the previous results are in results/previous/"
    ln -sfn "bench/$name" results/latest.new && mv -T results/latest.new results/latest ||
        die 3 "could not link results/latest to $OUT"
elif [ -e "$OUT/runs.csv" ]; then
    die 2 "BENCH_OUT='$OUT' already holds results (runs.csv): choose an empty directory"
fi
mkdir -p "$OUT" || die 3 "cannot create '$OUT'"
CSV=$OUT/runs.csv CONF=$OUT/conflicts.csv LOG=$OUT/bench.log FAILS=$OUT/failures.txt
: >"$LOG"
: >"$FAILS"
pin=()
[ -n "${BENCH_PIN:-}" ] && pin=(--pin "$BENCH_PIN")
{
    echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "binary=$BIN"
    echo "cores=$ncores"
    echo "pus=$npus"
    echo "machine=$MACHINE"
    echo "BENCH_DURATION=$DURATION"
    echo "BENCH_COMPOSE_DURATION=$COMPOSE_DURATION"
    echo "BENCH_REPEAT=$REPEAT"
    echo "BENCH_THREADS=$THREADS"
    echo "BENCH_OVERSUB=$OVERSUB"
    echo "oversub_threads=$OVER_T"
    echo "BENCH_OVERSUB_DURATION=$OVERSUB_DURATION"
    echo "BENCH_RUNTIMES=$(echo $RUNTIMES)"
    echo "BENCH_WORKLOADS=$(echo $WORKLOADS)"
    echo "BENCH_PIN=${BENCH_PIN:-}"
    echo "BENCH_ARGS=${BENCH_ARGS:-}"
    echo "BENCH_SEED=$SEED"
} >"$OUT/bench-config.txt"

# The sitting's line transfer and log floor (see the head of this file), appended to
# bench-config.txt with the tag start or end.
floor_threads=2
for t in $THREADS; do [ "$t" -gt "$floor_threads" ] && floor_threads=$t; done
sitting() {
    local tag=$1 out
    if out=$("$BIN" --line-transfer "${pin[@]}" 2>&1); then
        echo "line_transfer_$tag=$out"
    else
        echo "line_transfer_$tag=unmeasured: $(tail -1 <<<"$out")"
    fi
    if out=$("$BIN" --log-floor --threads "$floor_threads" "${pin[@]}" 2>&1); then
        echo "log_floor_$tag=$out"
    else
        echo "log_floor_$tag=unmeasured: $(tail -1 <<<"$out")"
    fi
}
sitting start >>"$OUT/bench-config.txt"

hms() { # seconds -> 1m02s / 1h03m04s
    local s=$1
    if [ "$s" -ge 3600 ]; then printf '%dh%02dm%02ds' $((s / 3600)) $((s % 3600 / 60)) $((s % 60))
    else printf '%dm%02ds' $((s / 60)) $((s % 60)); fi
}

echo "bench: $total runs: ${#points[@]} points x $REPEAT repeats, ${DURATION}s each${OVER_T:+ (${OVERSUB_DURATION}s oversubscribed)};" \
     "runtimes: $(echo $RUNTIMES); workloads: $(echo $WORKLOADS); threads: $THREADS${OVER_T:+$OVER_T (oversubscribed) }($ncores cores, $npus hardware threads)"
echo "bench: output in $OUT/ (harness messages in $LOG)"
for x in "${skipped[@]+"${skipped[@]}"}"; do echo "bench: skipped (not in this build) $x"; done
for x in "${nohw[@]+"${nohw[@]}"}"; do echo "$x" | tee -a "$LOG"; done

# The "bench" object of the context JSON (see the head of this file).
stamp() {
    "$PY" scripts/stmbench machines stamp "$OUT" ||
        echo "bench: warning: the context JSON in $OUT/ lacks the bench's settings" >&2
}
nfail=0 k=0
start=$(date +%s)
interrupted() {
    echo
    stamp
    echo "bench: interrupted after $k of $total runs; partial results in $OUT/" >&2
    exit 130
}
trap interrupted INT TERM

for ((rep = 1; rep <= REPEAT; rep++)); do
    seed=$((SEED + rep - 1))
    for p in "${points[@]}"; do
        read -r rt wl t <<<"$p"
        k=$((k + 1))
        now=$(date +%s) el=$((now - start))
        if [ $k -gt 1 ]; then
            left=$(( el * (total - k + 1) / (k - 1) ))
        else
            left=$(awk -v n="$total" -v d="$DURATION" 'BEGIN{printf "%d", n * (d + 0.5)}')
        fi
        printf '[%d/%d] %s %s threads=%d rep=%d  elapsed %s, ~%s left\n' \
            "$k" "$total" "$rt" "$wl" "$t" "$rep" "$(hms $el)" "$(hms $left)"
        d=$DURATION
        [ "$wl" = compose ] && d=$COMPOSE_DURATION
        [ -n "$OVER_T" ] && [ "$t" = "$OVER_T" ] && d=$OVERSUB_DURATION
        cmd=("$BIN" --runtime "$rt" --workload "$wl" --threads "$t" --duration "$d"
             --seed "$seed" "${pin[@]}" --csv "$CSV" --conflicts "$CONF" "${extra[@]}")
        echo "=== [$k/$total] ${cmd[*]}" >>"$LOG"
        runlog=$(mktemp) runerr=$(mktemp)
        # The braces' 2>/dev/null only silences bash's own "Segmentation fault" notice;
        # the harness's messages go to $runerr.
        { timeout --kill-after=10 "$TIMEOUT" "${cmd[@]}" >"$runlog" 2>"$runerr"; } 2>/dev/null
        rc=$?
        cat "$runerr" "$runlog" >>"$LOG"
        if [ $rc -ne 0 ]; then
            case $rc in
                1) why="a check failed" ;;
                2) why="bad usage or input" ;;
                3) why="runtime setup failed" ;;
                124|137) why="timed out after ${TIMEOUT}s" ;;
                *) if [ $rc -gt 128 ]; then
                       why="crashed (SIG$(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128))))"
                   else why="exit $rc"; fi ;;
            esac
            # The harness's first message on stderr names the failed invariant.
            msg=$(grep -v '^[[:space:]]*$' "$runerr" | head -n 1)
            [ -n "$msg" ] || msg=$(grep -v '^[[:space:]]*$' "$runlog" | tail -n 1)
            echo "    FAILED ($why): ${msg:-no message}"
            echo "$rt $wl threads=$t rep=$rep seed=$seed: $why: ${msg:-no message}" >>"$FAILS"
            nfail=$((nfail + 1))
        fi
        rm -f "$runlog" "$runerr"
    done
done
trap - INT TERM
el=$(( $(date +%s) - start ))
echo "bench: $total runs in $(hms $el), $nfail failed"

# The transaction-length sweep (docs/txlen.md): its own CSV, so the main
# tables above keep today's default lengths (make regress compares those).
[ "${BENCH_PLOTS:-1}" = 0 ] && sweep_default=0 || sweep_default=1
if [ "${BENCH_SWEEP:-$sweep_default}" != 0 ]; then
    SWD=${BENCH_SWEEP_DURATION:-0.5} SWR=${BENCH_SWEEP_REPEAT:-1}
    [[ $SWD =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] || die 2 "BENCH_SWEEP_DURATION='$SWD' is not a number"
    [[ $SWR =~ ^[0-9]+$ ]] && [ "$SWR" -ge 1 ] || die 2 "BENCH_SWEEP_REPEAT='$SWR' is not a positive integer"
    SWEEP=$OUT/sweep.csv
    swt=$(printf '%s\n' 1 "$ncores" | sort -n -u | tr '\n' ' ')
    sweep=()
    for wl in $WORKLOADS; do
        [ "$wl" = compose ] && continue     # its lengths say nothing the others do not
        if [ "$wl" = interp ]; then lens="10 100 1000 10000 100000 auto" flag=--switch-interval
        else lens="1 10 100 1000 10000 auto" flag=--ops-per-tx; fi
        for rt in ${BENCH_SWEEP_RUNTIMES:-gil stm locks itm htm}; do
            [ -n "${usable["$rt $wl"]:-}" ] || continue
            for t in $swt; do
                for L in $lens; do sweep+=("$rt $wl $t $flag $L"); done
            done
        done
    done
    ns=$((${#sweep[@]} * SWR)) ks=0
    echo "bench: length sweep: $ns runs of ${SWD}s into $SWEEP (threads: $swt)"
    for ((rep = 1; rep <= SWR; rep++)); do
        for p in "${sweep[@]}"; do
            read -r rt wl t flag L <<<"$p"
            ks=$((ks + 1))
            printf '[sweep %d/%d] %s %s threads=%d %s %s\n' "$ks" "$ns" "$rt" "$wl" "$t" "$flag" "$L"
            cmd=("$BIN" --runtime "$rt" --workload "$wl" --threads "$t" --duration "$SWD"
                 --seed "$((SEED + rep - 1))" "${pin[@]}" --csv "$SWEEP" "$flag" "$L")
            echo "=== [sweep $ks/$ns] ${cmd[*]}" >>"$LOG"
            if ! timeout --kill-after=10 "$TIMEOUT" "${cmd[@]}" >>"$LOG" 2>&1; then
                echo "    FAILED: see $LOG"
                echo "sweep: $rt $wl threads=$t $flag $L rep=$rep: failed (see bench.log)" >>"$FAILS"
                nfail=$((nfail + 1))
            fi
        done
    done
fi

# The interpreter as CPython and PyPy run it (scripts/interp-memory.sh): interp's
# object-model programs in every memory mode; not in make regress's tables-only runs.
[ "${BENCH_PLOTS:-1}" = 0 ] && interp_default=0 || interp_default=1
if [ "${BENCH_INTERP:-$interp_default}" != 0 ] && printf '%s\n' $WORKLOADS | grep -qx interp; then
    echo "bench: the interpreter's memory modes (scripts/interp-memory.sh)"
    if ! STMBENCH="$BIN" scripts/interp-memory.sh "$OUT"; then
        echo "interp-memory: failed (see $OUT/interp_failures.txt)" >>"$FAILS"
        nfail=$((nfail + 1))
    fi
fi

sitting end >>"$OUT/bench-config.txt"
stamp

# What each runtime asks of the programmer, counted from the sources, and the last
# `make mutants` summary if there is one: overhead.md puts them beside the n% table.
/usr/bin/python3 scripts/stmbench sync-cost --details --out "$OUT/programmer-cost.md" ||
    echo "bench: warning: scripts/stmbench sync-cost failed: no programmer-cost table" >&2
[ -f results/mutants/summary.md ] && cp results/mutants/summary.md "$OUT/mutants.md"

status=0
if [ ! -s "$CSV" ]; then
    echo "bench: no run wrote a row to $CSV: nothing to tabulate" >&2
    status=1
else
    ls "$OUT"/*.context.json >/dev/null 2>&1 ||
        echo "bench: warning: the harness wrote no context JSON beside $CSV" >&2
    # No abort at all in the sweep: a conflicts file with just the header.
    [ -s "$CONF" ] || echo "run_id,t_ns,thread,other_thread,kind,object,page,site,wasted_ns,where,other_site,other_where,object_name,weight" >"$CONF"
    if [ "${BENCH_PLOTS:-1}" = 0 ]; then
        "$PY" scripts/stmbench report all "$OUT" >/dev/null || status=1
    else
        scripts/plots.sh "$OUT" || status=1
    fi
    if [ -f "$OUT/overhead.md" ]; then
        echo
        # The headline: the n% table (second section of overhead.md), and after it what
        # each runtime asks of the programmer and how fragile each variant is.
        awk '/^## n% slower/ {p = 1} /^## Throughput/ {p = 0} p' "$OUT/overhead.md"
    fi
fi
for x in "${skipped[@]+"${skipped[@]}"}"; do echo "bench: skipped (not in this build) $x"; done
if [ $nfail -gt 0 ]; then
    echo "bench: $nfail of $total runs FAILED (listed in $FAILS):" >&2
    head -n 20 "$FAILS" >&2
    [ $nfail -gt 20 ] && echo "  ... and $((nfail - 20)) more" >&2
    status=1
fi
[ -s "$CSV" ] && echo "bench: results in $OUT/: runs.csv, conflicts.csv, overhead.csv, overhead.md, conflicts.md$([ "${BENCH_PLOTS:-1}" = 0 ] || echo ', plots/')"
exit $status
