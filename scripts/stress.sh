#!/usr/bin/env bash
# scripts/stress.sh [BUILD] - the `make stress` target: a long randomized stress of
# every runtime with invariant checks, and of the STM in its chaos mode (STM_CHAOS).
# Minutes long; not part of `make test` or CI.
#
# Phases:
#   1. BUILD/tests/test_stm_stress (bank audits checked inside every transaction, a
#      lost-update counter, list churn with alloc/free; at 1, 2 and 8 threads, with and
#      without chaos), once with its own seeds, then repeated with STRESS_SCALE set so
#      that it fills its share of the time and a random STRESS_CHAOS seed each time.
#   2. Every runtime (seq at 1 thread only) x workload variant x thread count, run by
#      BUILD/stmbench with contention-heavy knobs, a random --seed and --pin; the stm
#      runs twice per round, once with STM_CHAOS=<random non-zero seed> and once
#      without. Rounds (each in a new random order, with new seeds) repeat until the
#      time is spent. A run must exit 0: 1 is a failed invariant, anything else a
#      crash or an error; a run still alive at its deadline is a hang (its threads'
#      backtraces are taken with gdb when available, then it is killed).
#   3. A summary: runs, minutes per thread count, commits and aborts by kind, and every
#      failure with the exact command line that reproduces it (seed, STM_CHAOS).
#
# Variables (environment; `make stress VAR=value` passes them):
#   STRESS_MINUTES  total wall-time budget in minutes, split across the phases
#                   (default 10; phase 1 gets a fifth, phase 2 the rest)
#   STRESS_THREADS  thread counts for the multi-threaded runtimes (default "2 8", plus
#                   the number of cores hwloc sees when that is larger)
#   STRESS_SEED     seed of this script's own random choices (default: random); the
#                   same seed and budget give the same commands in the same order
#   STRESS_OUT      output directory (default results/stress; the files of the
#                   previous stress run there are moved to STRESS_OUT/previous/)
#   STRESS_DURATION seconds per phase-2 run instead of the share of the budget (which
#                   is 0.5 to 10 s): the first round always runs whole, so a short value
#                   makes a short smoke test (CI: scripts/ci-smoke.sh)
#   STRESS_TIMEOUT  seconds before a phase-2 run counts as hung (default 3 x its
#                   duration + 60)
#   STRESS_RUNTIMES runtimes of phase 2, a subset of `stmbench --list`'s (default: all)
#   STRESS_STM_MODES the stm's phase-2 modes: "plain chaos" (default), "chaos" alone (a
#                   chaos sitting: STRESS_RUNTIMES=stm STRESS_STM_MODES=chaos) or "plain"
#   STMBENCH        the harness binary (default BUILD/stmbench)
#
# Output (in STRESS_OUT): stress.csv (one row per run, the harness's --csv; with its
# .context.json), runs.tsv (every run: status, exit code, STM_CHAOS, run_id, command),
# conflicts/*.csv.gz (the harness's --conflicts for a few stm chaos runs: one row per
# abort, checked against the run's abort count, then compressed), logs/ (output of failed runs and of
# phase 1, backtraces of hangs).
#
# Exit status: 0 every run passed; 1 a run failed, crashed or hung; 2 bad variables;
# 3 the binaries cannot be run at all.
set -u
cd "$(dirname "$0")/.." || exit 3

die() { echo "stress: $2" >&2; exit "$1"; }

BUILD=${1:-${BUILD:-build/release}}
BIN=${STMBENCH:-$BUILD/stmbench}
TEST_BIN=$BUILD/tests/test_stm_stress
OUT=${STRESS_OUT:-results/stress}
MINUTES=${STRESS_MINUTES:-10}

[[ $MINUTES =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] && awk -v m="$MINUTES" 'BEGIN{exit !(m > 0)}' ||
    die 2 "STRESS_MINUTES='$MINUTES' is not a positive number of minutes"
if [ -n "${STRESS_SEED:-}" ]; then
    [[ $STRESS_SEED =~ ^[0-9]+$ ]] && [ "${#STRESS_SEED}" -le 9 ] ||
        die 2 "STRESS_SEED='$STRESS_SEED' is not an integer 0..999999999"
    SSEED=$((10#$STRESS_SEED))
else
    SSEED=$(( (RANDOM << 15 | RANDOM) % 1000000000 ))
fi
RANDOM=$SSEED

if [ -n "${STRESS_DURATION:-}" ]; then
    [[ $STRESS_DURATION =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] &&
        awk -v d="$STRESS_DURATION" 'BEGIN{exit !(d > 0)}' ||
        die 2 "STRESS_DURATION='$STRESS_DURATION' is not a positive number of seconds"
fi
[[ ${STRESS_TIMEOUT:-1} =~ ^[0-9]+$ ]] && [ "${STRESS_TIMEOUT:-1}" -ge 1 ] ||
    die 2 "STRESS_TIMEOUT='$STRESS_TIMEOUT' is not a positive integer number of seconds"

. scripts/cores.sh     # ncores, from hwloc
if [ -n "${STRESS_THREADS:-}" ]; then
    THREADS=$STRESS_THREADS
    for t in $THREADS; do
        [[ $t =~ ^[0-9]+$ ]] && [ "$t" -ge 1 ] && [ "$t" -le 4096 ] ||
            die 2 "STRESS_THREADS: '$t' is not an integer 1..4096 (e.g. STRESS_THREADS=\"2 8\")"
    done
else
    THREADS="2 8"
    [ "$ncores" -gt 8 ] && THREADS="$THREADS $ncores"
fi

[ -x "$BIN" ] || die 3 "no harness binary '$BIN': run make first"
[ -x "$TEST_BIN" ] || die 3 "no test binary '$TEST_BIN': run make first"
listing=$("$BIN" --list 2>&1) || die 3 "'$BIN --list' failed: $listing"
RUNTIMES=$(awk '$1 == "runtime" {print $2}' <<<"$listing")
WORKLOADS=$(awk '$1 == "workload" {print $2}' <<<"$listing")
[ -n "$RUNTIMES" ] && [ -n "$WORKLOADS" ] ||
    die 3 "'$BIN --list' printed no 'runtime NAME' / 'workload NAME' lines"
if [ -n "${STRESS_RUNTIMES:-}" ]; then
    for rt in $STRESS_RUNTIMES; do
        grep -qx -- "$rt" <<<"$RUNTIMES" ||
            die 2 "STRESS_RUNTIMES: '$rt' is not a runtime of '$BIN --list' ($(echo $RUNTIMES))"
    done
    RUNTIMES=$(tr ' ' '\n' <<<"$STRESS_RUNTIMES" | grep -v '^$')
fi
STM_MODES=${STRESS_STM_MODES:-plain chaos}
for m in $STM_MODES; do
    [ "$m" = plain ] || [ "$m" = chaos ] ||
        die 2 "STRESS_STM_MODES: '$m' is not plain or chaos (e.g. STRESS_STM_MODES=chaos)"
done
[ -n "$(echo $STM_MODES)" ] || die 2 "STRESS_STM_MODES is empty (plain, chaos or both)"
# htm needs RTM that commits: where the harness refuses it (exit 3), it is left out,
# with one line, as make bench does.
if grep -qx htm <<<"$RUNTIMES"; then
    msg=$("$BIN" --runtime htm --workload "$(head -n 1 <<<"$WORKLOADS")" --ops 1 --pin none 2>&1 >/dev/null)
    if [ $? -eq 3 ] && grep -q 'no working RTM' <<<"$msg"; then
        echo "stress: skipped htm on this machine: $(grep -o 'htm: no working RTM.*' <<<"$msg" | head -n 1)"
        RUNTIMES=$(grep -vx htm <<<"$RUNTIMES")
    fi
fi
[ -n "$RUNTIMES" ] || die 3 "no runtime left to stress on this machine (STRESS_RUNTIMES)"
have_gdb=0
command -v gdb >/dev/null 2>&1 && have_gdb=1

# ---------------------------------------------------------------- output directory
mkdir -p "$OUT" || die 3 "cannot create '$OUT'"
if [ -e "$OUT/stress.csv" ] || [ -e "$OUT/runs.tsv" ]; then
    rm -rf "$OUT/previous" && mkdir -p "$OUT/previous" || die 3 "cannot create '$OUT/previous'"
    for f in stress.csv stress.context.json runs.tsv conflicts logs; do
        [ -e "$OUT/$f" ] && mv "$OUT/$f" "$OUT/previous/"
    done
fi
mkdir -p "$OUT/conflicts" "$OUT/logs" || die 3 "cannot create '$OUT/conflicts', '$OUT/logs'"
CSV=$OUT/stress.csv
RUNS=$OUT/runs.tsv
printf 'n\tphase\tstatus\trc\twall_s\truntime\tworkload\tthreads\tchaos\trun_id\tcommand\n' >"$RUNS"

# ---------------------------------------------------------------- helpers
now() { date +%s.%N; }
fsub() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", a - b}'; }
fgt() { awk -v a="$1" -v b="$2" 'BEGIN{exit !(a > b)}'; }
# The random helpers set R instead of printing: a $(...) subshell would not advance
# this shell's RANDOM, and the same STRESS_SEED must give the same commands.
rand64() { # R = a random integer 1..2^60-1
    R=$(( (RANDOM << 45) | (RANDOM << 30) | (RANDOM << 15) | RANDOM ))
    [ "$R" -ne 0 ] || R=1
}
pick() { # R = one of the arguments
    local a=("$@")
    R=${a[RANDOM % ${#a[@]}]}
}
# The shell-quoted command line, with the environment it ran in.
cmdline() { # chaos args...
    local chaos=$1 s=""; shift
    [ -n "$chaos" ] && s="STM_CHAOS=$chaos "
    printf '%s%s' "$s" "$(printf '%q ' "$@" | sed 's/ $//')"
}

nruns=0 npass=0 nfail=0 ncrash=0 nhang=0
failures=()

# run_one PHASE RUNTIME WORKLOAD THREADS CHAOS TIMEOUT_S -- command...
# Runs the command (STM_CHAOS set only when CHAOS is non-empty) with a watchdog that
# takes backtraces and kills it at TIMEOUT_S. Sets STATUS (pass, fail, crash, hang,
# error) and appends the run to runs.tsv.
run_one() {
    local phase=$1 rt=$2 wl=$3 th=$4 chaos=$5 tmo=$6
    shift 7
    nruns=$((nruns + 1))
    local n=$nruns log="$OUT/logs/run-$nruns.log" mark="$OUT/logs/run-$nruns.hang"
    local rows_before=0 run_id="" t0 t1 rc pid
    [ -e "$CSV" ] && rows_before=$(wc -l <"$CSV")
    t0=$(now)
    if [ -n "$chaos" ]; then
        STM_CHAOS=$chaos "$@" >"$log" 2>&1 &
    else
        env -u STM_CHAOS "$@" >"$log" 2>&1 &
    fi
    pid=$!
    # Watchdog: polls, so it ends on its own soon after the run; at the deadline it
    # records the hang, takes every thread's backtrace, then TERM, then KILL.
    (
        deadline=$(awk -v t="$t0" -v d="$tmo" 'BEGIN{printf "%d", t + d}')
        while kill -0 "$pid" 2>/dev/null; do
            if [ "$(date +%s)" -ge "$deadline" ]; then
                echo "hang after ${tmo}s" >"$mark"
                if [ "$have_gdb" = 1 ]; then
                    timeout 60 gdb -p "$pid" -batch -ex "thread apply all bt" \
                        >"$OUT/logs/run-$n.backtrace" 2>&1
                fi
                kill -TERM "$pid" 2>/dev/null
                sleep 5
                kill -KILL "$pid" 2>/dev/null
                exit 0
            fi
            sleep 0.5
        done
    ) &
    wait "$pid"
    rc=$?
    t1=$(now)
    if [ -e "$mark" ]; then
        wait $! 2>/dev/null # the watchdog is done with this run
        STATUS=hang
    elif [ "$rc" -eq 0 ]; then
        STATUS=pass
    elif [ "$rc" -eq 1 ]; then
        STATUS=fail
    elif [ "$rc" -gt 128 ]; then
        STATUS=crash
    else
        STATUS=error
    fi
    # The run's CSV row, if it wrote one (a crashed or killed run writes none).
    if [ "$phase" = 2 ] && [ -e "$CSV" ] && [ "$(wc -l <"$CSV")" -gt "$rows_before" ]; then
        run_id=$(tail -n 1 "$CSV" | cut -d, -f1)
    fi
    local cmd why
    cmd=$(cmdline "$chaos" "$@")
    printf '%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$phase" "$STATUS" "$rc" \
        "$(fsub "$t1" "$t0")" "$rt" "$wl" "$th" "${chaos:--}" "${run_id:--}" "$cmd" >>"$RUNS"
    case $STATUS in
    pass) npass=$((npass + 1)) ;;
    fail) nfail=$((nfail + 1)); why="a check failed (exit 1)" ;;
    crash) ncrash=$((ncrash + 1)); why="crashed: signal $(kill -l $((rc - 128)) 2>/dev/null || echo $((rc - 128)))" ;;
    error) nfail=$((nfail + 1)); why="exit $rc" ;;
    hang) nhang=$((nhang + 1)); why="hang: still running after ${tmo}s, killed" ;;
    esac
    if [ "$STATUS" != pass ]; then
        local msg
        msg=$(grep -v '^\s*$' "$log" | tail -n 3 | sed 's/^/        /')
        failures+=("run $n, $why: (cd $PWD && $cmd)
        log: $log$( [ -s "$OUT/logs/run-$n.backtrace" ] && echo ", backtraces: $OUT/logs/run-$n.backtrace")
$msg")
        echo "  !! run $n $STATUS: $cmd"
    elif [ "$phase" = 2 ]; then
        rm -f "$log"
    fi
}

budget=$(awk -v m="$MINUTES" 'BEGIN{printf "%.1f", m * 60}')
t_start=$(now)
end_all=$(awk -v t="$t_start" -v b="$budget" 'BEGIN{printf "%.3f", t + b}')
echo "stress: $MINUTES min budget, threads: $THREADS, runtimes: $(echo $RUNTIMES)," \
    "workloads: $(echo $WORKLOADS), STRESS_SEED=$SSEED, output: $OUT/"

# ---------------------------------------------------------------- phase 1
b1=$(awk -v b="$budget" 'BEGIN{printf "%.1f", b / 5}')
end1=$(awk -v t="$t_start" -v b="$b1" 'BEGIN{printf "%.3f", t + b}')
echo "== phase 1: $TEST_BIN (about ${b1}s)"
# Calibration run: the test's own seeds at STRESS_SCALE=1.
t0=$(now)
run_one 1 stm test_stm_stress - "" 600 -- env -u STRESS_CHAOS STRESS_SCALE=1 "$TEST_BIN"
t_cal=$(fsub "$(now)" "$t0")
echo "   scale 1, own chaos seeds: $STATUS in ${t_cal}s"
left1=$(fsub "$end1" "$(now)")
if [ "$STATUS" = pass ] && fgt "$left1" "$(awk -v c="$t_cal" 'BEGIN{print 2 * c}')"; then
    # Up to three more runs with random chaos seeds, each scaled to fill a third of
    # what is left (the iteration counts, hence the time, grow linearly with the scale).
    reps=3
    scale=$(awk -v l="$left1" -v c="$t_cal" -v r=$reps 'BEGIN{s = int(l / r / c); print s < 1 ? 1 : s}')
    for ((i = 0; i < reps; i++)); do
        left1=$(fsub "$end1" "$(now)")
        fgt "$left1" "$(awk -v c="$t_cal" -v s="$scale" 'BEGIN{print 0.5 * c * s}')" || break
        rand64
        cs=$R
        run_one 1 stm test_stm_stress - "" "$(awk -v c="$t_cal" -v s="$scale" 'BEGIN{printf "%d", 4 * c * s + 120}')" \
            -- env STRESS_SCALE="$scale" STRESS_CHAOS="$cs" "$TEST_BIN"
        echo "   scale $scale, STRESS_CHAOS=$cs: $STATUS"
        [ "$STATUS" = pass ] || break
    done
fi
# The test's per-case lines (threads, chaos, commits, aborts by kind) for the record.
for ((i = 1; i <= nruns; i++)); do
    grep -h '^threads=' "$OUT/logs/run-$i.log" 2>/dev/null | sed "s/^/     run $i: /"
done

# ---------------------------------------------------------------- phase 2
# Workload variants: name|knobs, contention-heavy. Knobs that vary per run are chosen
# in variant_args. Workloads the harness lists but this script does not know run with
# their default knobs.
variants=()
for wl in $WORKLOADS; do
    case $wl in
    bank) variants+=("bank|--accounts 16") ;;
    rbtree) variants+=("rbtree|--size 64 --range 128 --update 50") ;;
    hashmap) variants+=("hashmap|--size 64 --range 128 --update 50") ;;
    compose) variants+=("compose|--keys 16 --accounts 8 --ledger 16 --move-pct 50") ;;
    interp)
        for p in shared-counter mixed list-append counters; do
            variants+=("interp|--program $p")
        done
        ;;
    *) variants+=("$wl|") ;;
    esac
done
variant_args() { # workload -> VARGS, its randomized knobs
    VARGS=()
    case $1 in
    bank)
        pick 90 90 50; VARGS+=(--transfer-pct "$R")
        pick 1 1 4; VARGS+=(--ops-per-tx "$R")
        ;;
    rbtree) pick 1 1 4; VARGS+=(--ops-per-tx "$R") ;;
    hashmap)
        pick 1 1 4; VARGS+=(--buckets "$R")
        pick 1 1 4; VARGS+=(--ops-per-tx "$R")
        ;;
    interp) pick 1 10 100; VARGS+=(--switch-interval "$R") ;;
    compose)
        pick 0 50 50 100; VARGS+=(--bank-pct "$R")
        pick 1 1 4; VARGS+=(--ops-per-tx "$R")
        ;;
    esac
}

# One round: every (runtime, variant, threads, chaos) point.
points=()
for rt in $RUNTIMES; do
    for v in "${variants[@]}"; do
        if [ "$rt" = seq ]; then
            points+=("seq|1|-|$v")
            continue
        fi
        for th in $THREADS; do
            if [ "$rt" != stm ]; then
                points+=("$rt|$th|-|$v")
                continue
            fi
            for m in $STM_MODES; do
                [ "$m" = chaos ] && points+=("$rt|$th|chaos|$v") || points+=("$rt|$th|-|$v")
            done
        done
    done
done
np=${#points[@]}
left2=$(fsub "$end_all" "$(now)")
# Duration per run: one round in the time left (0.15 s per run of start and check),
# between 0.5 s and 10 s; when 10 s leaves time, more rounds follow with new seeds.
D=$(awk -v l="$left2" -v n="$np" 'BEGIN{d = l / n - 0.15; if (d < 0.5) d = 0.5; if (d > 10) d = 10; printf "%.1f", d}')
[ -n "${STRESS_DURATION:-}" ] && D=$STRESS_DURATION
TMO=${STRESS_TIMEOUT:-$(awk -v d="$D" 'BEGIN{printf "%d", 3 * d + 60}')}
maxth=0
for th in $THREADS; do [ "$th" -gt "$maxth" ] && maxth=$th; done
echo "== phase 2: $np runs per round, ${D}s each (deadline ${TMO}s), until the budget is spent"
round=0
declare -A conflicts_done=()
while :; do
    round=$((round + 1))
    # A new random order each round (Fisher-Yates with the seeded RANDOM).
    order=("${points[@]}")
    for ((i = ${#order[@]} - 1; i > 0; i--)); do
        j=$((RANDOM % (i + 1)))
        tmp=${order[i]}; order[i]=${order[j]}; order[j]=$tmp
    done
    for p in "${order[@]}"; do
        # Stop when the next run would end past the budget (always finish round 1).
        if [ "$round" -gt 1 ]; then
            fgt "$(fsub "$end_all" "$(now)")" "$(awk -v d="$D" 'BEGIN{print d + 0.15}')" || break 2
        fi
        IFS='|' read -r rt th mode wl knobs <<<"$p"
        chaos=""
        [ "$mode" = chaos ] && rand64 && chaos=$R
        rand64
        args=(--runtime "$rt" --workload "$wl" --threads "$th" --duration "$D" --seed "$R")
        pick compact scatter none
        args+=(--pin "$R")
        variant_args "$wl"
        # An interp thread finishes its program run after the stop (the check needs
        # whole runs): 1,000 iterations of 1-bytecode transactions at 64 threads under
        # chaos took 53 s alone and 394 s beside two more such runs, which the
        # deadline called hangs (results/stress-20261206-chaos). Past 8 threads the
        # runs are 20 iterations: the same interleavings, a drain a fiftieth as long.
        [ "$wl" = interp ] && [ "$th" -gt 8 ] && VARGS+=(--iterations 20)
        # shellcheck disable=SC2206 # knobs are words by design
        args+=($knobs "${VARGS[@]}" --csv "$CSV")
        # Round 1: every abort logged for the stm chaos run of each variant at the
        # largest thread count, for at most 1 s (about 10 MB of rows per second).
        key="$wl $knobs"
        if [ "$round" = 1 ] && [ "$mode" = chaos ] && [ "$th" = "$maxth" ] &&
            [ -z "${conflicts_done[$key]:-}" ]; then
            conflicts_done[$key]=1
            fgt "$D" 1 && args[7]=1
            args+=(--conflicts "$OUT/conflicts/run-$((nruns + 1)).csv")
        fi
        run_one 2 "$rt" "$wl" "$th" "$chaos" "$TMO" -- "$BIN" "${args[@]}"
        label=$wl
        [ "$wl" = interp ] && label="$wl ${knobs##* }"
        printf '   [round %d, run %3d] %-5s %-6s %-21s threads=%-3s%s\n' "$round" "$nruns" \
            "$STATUS" "$rt" "$label" "$th" "${chaos:+ STM_CHAOS=$chaos}"
    done
done

# ---------------------------------------------------------------- phase 3: summary
# Conflict logs: one row per abort, so their row count must equal the run's aborts
# (waits for a lock, kind lock-wait in column 5, are rows but no aborts: not counted).
conflict_mismatch=()
for f in "$OUT"/conflicts/run-*.csv; do
    [ -e "$f" ] || continue
    n=${f##*/run-}; n=${n%.csv}
    rid=$(awk -F'\t' -v n="$n" '$1 == n {print $10}' "$RUNS")
    [ -n "$rid" ] && [ "$rid" != - ] || continue
    aborts=$(awk -F, -v r="$rid" 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i; next}
        $c["run_id"] == r {print $c["aborts"]}' "$CSV")
    rows=$(awk -F, -v r="$rid" '$1 == r && $5 != "lock-wait"' "$f" | wc -l)
    if [ "$aborts" != "$rows" ]; then
        conflict_mismatch+=("run $n ($rid): $aborts aborts in stress.csv but $rows rows in $f")
    fi
    gzip -f -1 "$f"
done

echo
echo "== summary (STRESS_SEED=$SSEED, $(fsub "$(now)" "$t_start")s)"
# Per runtime x threads x chaos: runs, minutes, commits, aborts by kind, failed checks.
awk -F'\t' 'FNR == NR { if (FNR > 1 && $10 != "-") chaos[$10] = ($9 == "-" ? "off" : "on"); next }
    FNR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    ($c["run_id"] in chaos) {
        k = sprintf("%-6s %-8s %3s  %-3s", $c["runtime"], $c["workload"], $c["threads"], chaos[$c["run_id"]])
        if (!(k in runs)) keys[++nk] = k
        runs[k]++; sec[k] += $c["duration_s"]; com[k] += $c["commits"]
        ww[k] += $c["aborts_write_write"]; rw[k] += $c["aborts_read_write"]
        ot[k] += $c["aborts_other"]; iv[k] += ("aborts_inevitable" in c) ? $c["aborts_inevitable"] : 0
        if ($c["check"] != "pass") bad[k]++
        t = $c["threads"]; tsec[t] += $c["duration_s"]; truns[t]++
        if ($c["runtime"] == "stm" && chaos[$c["run_id"]] == "on") { csec[t] += $c["duration_s"]; cruns[t]++ }
    }
    END {
        for (i = 2; i <= nk; i++) # insertion sort of the fixed-width keys
            for (j = i; j > 1 && keys[j - 1] > keys[j]; j--) { t = keys[j]; keys[j] = keys[j - 1]; keys[j - 1] = t }
        printf "%-6s %-8s %3s  %-3s %5s %7s %12s %10s %10s %8s %8s %6s\n", "rt", "workload", "th",
            "chaos", "runs", "min", "commits", "ab_ww", "ab_rw", "ab_inev", "ab_other", "fails"
        for (i = 1; i <= nk; i++) { k = keys[i]
            printf "%s %5d %7.2f %12d %10d %10d %8d %8d %6d\n", k, runs[k], sec[k] / 60, com[k],
                ww[k], rw[k], iv[k], ot[k], bad[k] }
        for (t = 1; t <= 4096; t++)
            if (t in tsec)
                printf "threads %d: %d runs, %.2f min (stm with STM_CHAOS: %d runs, %.2f min)\n",
                    t, truns[t], tsec[t] / 60, cruns[t], csec[t] / 60
    }' "$RUNS" FS=, "$CSV"
echo "runs: $nruns ($npass passed, $nfail failed, $ncrash crashed, $nhang hung);" \
    "conflict logs checked: $(ls "$OUT"/conflicts/run-*.csv.gz 2>/dev/null | wc -l)," \
    "mismatched: ${#conflict_mismatch[@]}"
for m in "${conflict_mismatch[@]+"${conflict_mismatch[@]}"}"; do echo "  conflict log: $m"; done
for f in "${failures[@]+"${failures[@]}"}"; do echo "  FAILED $f"; done
echo "files: $CSV, $RUNS, $OUT/conflicts/, $OUT/logs/"
[ $((nfail + ncrash + nhang)) -eq 0 ] && [ "${#conflict_mismatch[@]}" -eq 0 ] && [ "$npass" -gt 0 ]
