#!/usr/bin/env bash
# scripts/interp-rss.sh OUT - memory stays bounded in interp's object model: for every
# runtime that runs here (but seq; INTERP_RSS_RUNTIMES: only those) and every memory
# mode, a run of INTERP_RSS_SECONDS (default 30) at 2 threads of each program of
# INTERP_RSS_PROGRAMS (default arith, work-queue), with the process's resident set
# (VmRSS) read at INTERP_RSS_EARLY seconds (default 5) and last before the end (read
# every second). A run passes when the late RSS is at
# most twice the early one and its check passes. INTERP_RSS_JOBS runs (default 4) go
# at once, except those of the runtimes in INTERP_RSS_ALONE (default stm), which run
# one at a time with nothing else of this script running: the STM frees memory (objects
# and commit-log entries, I7 of runtime/stm/DESIGN.md) only once every thread has moved
# past it, so on an oversubscribed CPU its RSS follows how long the scheduler leaves a
# thread off, not the program (the figures are in the commit that made it so). The
# other runtimes' RSS does not depend on the speed. Writes OUT/interp_rss.csv (never over an existing one) and prints
# a line per run; exit 1 when any run failed, 2 bad input.
# `make memcheck` runs it into results/latest/.
set -u
out=${1:-}
[ -n "$out" ] || { echo "usage: scripts/interp-rss.sh OUT" >&2; exit 2; }
BIN=${STMBENCH:-${BUILD:-build/release}/stmbench}
[ -x "$BIN" ] || { echo "interp-rss: no harness at $BIN (make first)" >&2; exit 3; }
SECS=${INTERP_RSS_SECONDS:-30}
EARLY=${INTERP_RSS_EARLY:-5}
JOBS=${INTERP_RSS_JOBS:-4}
PROGRAMS=${INTERP_RSS_PROGRAMS:-arith work-queue}
MODES=${INTERP_RSS_MODES:-raw tracing refcount biased buffered}
for v in "$SECS" "$EARLY" "$JOBS"; do
    case "$v" in ''|*[!0-9]*|0) echo "interp-rss: seconds and jobs must be positive integers" >&2; exit 2;; esac
done
[ "$EARLY" -lt "$SECS" ] || { echo "interp-rss: INTERP_RSS_EARLY must be below INTERP_RSS_SECONDS" >&2; exit 2; }
mkdir -p "$out" || exit 3
csv=$out/interp_rss.csv
[ -e "$csv" ] && { echo "interp-rss: $csv exists: not overwritten" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rts=""
want=" ${INTERP_RSS_RUNTIMES:-} "
for rt in $("$BIN" --list 2>/dev/null | awk '$1 == "runtime" {print $2}'); do
    [ "$rt" = seq ] && continue
    [ "$want" = "  " ] || case "$want" in *" $rt "*) ;; *) continue;; esac
    "$BIN" --runtime "$rt" --workload interp --threads 2 --ops 2 >/dev/null 2>&1 && rts="$rts $rt"
done
[ -n "$rts" ] || { echo "interp-rss: no runtime found in '$BIN --list'" >&2; exit 3; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
one() { # runtime mode program -> a CSV line in $tmp
    local rt=$1 m=$2 p=$3 f=$tmp/$1-$2-$3 pid early late rc
    "$BIN" --runtime "$rt" --workload interp --program "$p" --memory "$m" --threads 2 \
        --duration "$SECS" >"$f.out" 2>&1 &
    pid=$!
    # every second: the reading at EARLY seconds, and the last before the process ends
    local i=0 r
    early="" late=""
    while kill -0 $pid 2>/dev/null; do
        sleep 1
        i=$((i + 1))
        r=$(rss_kb $pid)
        [ -n "$r" ] || break
        late=$r
        [ $i -eq "$EARLY" ] && early=$r
    done
    wait $pid
    rc=$?
    local verdict=pass
    if [ -z "$early" ] || [ -z "$late" ] || [ $rc -ne 0 ] || [ "$late" -gt $((2 * early)) ]; then
        verdict=fail
    fi
    echo "$rt,$m,$p,$SECS,${early:-},${late:-},$rc,$verdict" >"$f.csv"
    echo "interp-rss: $rt $m $p: RSS ${early:-?} kB at ${EARLY}s, ${late:-?} kB at the end ($i s), exit $rc: $verdict"
}
ALONE=" ${INTERP_RSS_ALONE-stm} "
n=0
for pass in alone together; do
    k=0
    for p in $PROGRAMS; do
        for m in $MODES; do
            for rt in $rts; do
                [ "$m" = raw ] && [ "$p" != arith ] && continue     # the others need objects
                case "$ALONE" in *" $rt "*) [ $pass = alone ] || continue;;
                                 *) [ $pass = together ] || continue;; esac
                one "$rt" "$m" "$p" &
                n=$((n + 1))
                k=$((k + 1))
                [ $pass = alone ] || [ $((k % JOBS)) -eq 0 ] && wait
            done
        done
    done
    wait
done
{
    echo "runtime,memory,program,seconds,rss_early_kb,rss_late_kb,exit,verdict"
    cat "$tmp"/*.csv
} >"$csv"
bad=$(grep -c ',fail$' "$csv")
echo "interp-rss: $n runs, $bad failed: $csv"
[ "$bad" -eq 0 ]
