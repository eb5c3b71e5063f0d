#!/usr/bin/env bash
# scripts/scaling.sh - the `make scaling` target: how each runtime scales from 1 thread
# to T threads on a few configurations, side by side, measured in one sitting. For the
# STM's "2 threads over 1 thread" figures and the ceiling they are held against (what
# `locks` reaches on the same configuration, in the same minutes).
#
# Each round runs every configuration under every runtime at 1 and at T threads, one
# run after the other, so that drift on the machine hits every figure alike; the table
# gives medians over the rounds (timings vary between sittings: compare the ratios of
# one table, never absolute figures of two).
#
# Variables (environment; `make scaling VAR=value` passes them):
#   SCALE_CONFIGS   configurations, separated by ';', each "WORKLOAD [FLAGS...]" as given
#                   after --workload (default: the STM's five 2-thread figures:
#                   rbtree --size 1024 --range 2048 --update 20; hashmap with the same
#                   knobs at 1,024 and at 131,072 buckets; bank --transfer-pct 100;
#                   interp --program counters --switch-interval 100)
#   SCALE_RUNTIMES  runtimes (default "stm locks")
#   SCALE_THREADS   T, the thread count compared with 1 (default: the cores hwloc sees;
#                   more threads than cores are run but the table says the timings mean
#                   nothing then)
#   SCALE_REPEAT    rounds (default 5)
#   SCALE_DURATION  seconds per run (default 2)
#   SCALE_PIN       --pin policy of every run (default: the harness's own)
#   SCALE_OUT       output directory (default results/scaling/<UTC date-time>); it must
#                   not hold a runs.csv already (earlier results are never overwritten)
#   BUILD, STMBENCH the build directory (default build/release) and harness binary
#
# Writes SCALE_OUT/runs.csv (every run, the harness's CSV with its context JSON),
# SCALE_OUT/transfer.csv (before each round, the one-way time of a cache line between
# the PUs of threads 0 and 1, `stmbench --line-transfer`: it sets what any cross-thread
# figure can reach, and it changes between sittings of a VM by a factor of four) and
# SCALE_OUT/floor.csv (before each round, `stmbench --log-floor --threads T`: appends
# per second to one shared log that every thread reads, with about 45 ns of work per
# append at 1 thread, at 1 and at T threads: the ceiling of any commit that appends to
# one log, in this sitting) and SCALE_OUT/scaling.md (the table with the median of each,
# then each round's ratios under its line transfer and log floor: `scripts/stmbench
# scaling`; also printed). Exit 0; 1 when a run failed (non-zero
# exit or a failed check: listed in SCALE_OUT/failures.txt, the rounds go on); 2 on bad
# variables; 3 when the harness cannot be run.
set -u
cd "$(dirname "$0")/.." || exit 3

die() { echo "scaling: $2" >&2; exit "$1"; }

BUILD=${BUILD:-build/release}
BIN=${STMBENCH:-$BUILD/stmbench}
REPEAT=${SCALE_REPEAT:-5}
DURATION=${SCALE_DURATION:-2}
RUNTIMES=${SCALE_RUNTIMES:-stm locks}
DEFAULT_CONFIGS="rbtree --size 1024 --range 2048 --update 20;\
hashmap --size 1024 --range 2048 --update 20;\
hashmap --size 1024 --range 2048 --update 20 --buckets 131072;\
bank --transfer-pct 100;\
interp --program counters --switch-interval 100"
CONFIGS=${SCALE_CONFIGS:-$DEFAULT_CONFIGS}

[[ $REPEAT =~ ^[0-9]+$ ]] && [ "$REPEAT" -ge 1 ] ||
    die 2 "SCALE_REPEAT='$REPEAT' is not a positive integer"
[[ $DURATION =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] && awk -v d="$DURATION" 'BEGIN{exit !(d > 0)}' ||
    die 2 "SCALE_DURATION='$DURATION' is not a positive number of seconds"
[ -n "${RUNTIMES// /}" ] || die 2 "SCALE_RUNTIMES is empty"

[ -x "$BIN" ] || die 3 "no harness binary '$BIN': run make first"
listing=$("$BIN" --list 2>&1) || die 3 "'$BIN --list' failed: $listing"
for rt in $RUNTIMES; do
    grep -qx "runtime $rt" <<<"$listing" ||
        die 2 "SCALE_RUNTIMES: '$rt' is not a runtime of $BIN (see $BIN --list)"
done

# Cores: from hwloc, like the harness's pinning and make bench.
. scripts/cores.sh     # ncores, from hwloc
T=${SCALE_THREADS:-$ncores}
[[ $T =~ ^[0-9]+$ ]] && [ "$T" -ge 2 ] ||
    die 2 "SCALE_THREADS='$T' is not a thread count of 2 or more"

IFS=';' read -r -a confs <<<"$CONFIGS"
clean=()
for c in "${confs[@]}"; do
    c=$(echo "$c" | xargs) # trim
    [ -n "$c" ] && clean+=("$c")
done
[ ${#clean[@]} -ge 1 ] || die 2 "SCALE_CONFIGS holds no configuration"
confs=("${clean[@]}")

PIN=()
[ -n "${SCALE_PIN:-}" ] && PIN=(--pin "$SCALE_PIN")

# Every configuration must parse before the sitting starts: a typo should cost nothing.
for c in "${confs[@]}"; do
    for rt in $RUNTIMES; do
        # shellcheck disable=SC2086 # a configuration is words by design
        out=$("$BIN" --runtime "$rt" --workload $c --threads 1 --duration 0.01 "${PIN[@]}" 2>&1)
        rc=$?
        [ $rc -eq 2 ] && die 2 "SCALE_CONFIGS: '$c' under $rt: $(tail -1 <<<"$out")"
    done
done

OUT=${SCALE_OUT:-results/scaling/$(date -u +%Y%m%d-%H%M%S)}
[ -e "$OUT/runs.csv" ] && die 2 "$OUT/runs.csv exists: choose another SCALE_OUT (results are never overwritten)"
mkdir -p "$OUT" || die 3 "cannot create $OUT"
: >"$OUT/failures.txt" && : >"$OUT/index.txt" || die 3 "cannot write in $OUT"

echo "scaling: ${#confs[@]} configurations x runtimes ($RUNTIMES) x threads 1 and $T x $REPEAT rounds of ${DURATION} s ($ncores cores) into $OUT"
nfail=0
echo "round,line_transfer_ns,min_ns,max_ns,pus" >"$OUT/transfer.csv"
echo "round,threads,work,ops_per_s_1,ops_per_s_T,ratio,ns_per_op_1" >"$OUT/floor.csv"
for r in $(seq 1 "$REPEAT"); do
    # The sitting's cross-core transfer time, before the round (a failed measurement is
    # recorded as empty: it does not stop the rounds).
    lt=$("$BIN" --line-transfer "${PIN[@]}" 2>&1)
    if [[ $lt =~ line_transfer_ns=([0-9.]+)\ min_ns=([0-9.]+)\ max_ns=([0-9.]+).*pus=([^ ]+) ]]; then
        echo "$r,${BASH_REMATCH[1]},${BASH_REMATCH[2]},${BASH_REMATCH[3]},\"${BASH_REMATCH[4]}\"" >>"$OUT/transfer.csv"
    else
        echo "$r,,,," >>"$OUT/transfer.csv"
        echo "scaling: round $r: the line transfer was not measured: $(tail -1 <<<"$lt")" >&2
    fi
    lf=$("$BIN" --log-floor --threads "$T" "${PIN[@]}" 2>&1)
    if [[ $lf =~ work=([0-9]+)\ ops_per_s_1=([0-9]+)\ ops_per_s_[0-9]+=([0-9]+)\ ratio=([0-9.]+)\ ns_per_op_1=([0-9.]+) ]]; then
        echo "$r,$T,${BASH_REMATCH[1]},${BASH_REMATCH[2]},${BASH_REMATCH[3]},${BASH_REMATCH[4]},${BASH_REMATCH[5]}" >>"$OUT/floor.csv"
    else
        echo "$r,$T,,,,," >>"$OUT/floor.csv"
        echo "scaling: round $r: the log floor was not measured: $(tail -1 <<<"$lf")" >&2
    fi
    for i in "${!confs[@]}"; do
        for rt in $RUNTIMES; do
            for t in 1 "$T"; do
                before=0; [ -f "$OUT/runs.csv" ] && before=$(wc -l <"$OUT/runs.csv")
                # shellcheck disable=SC2086
                out=$("$BIN" --runtime "$rt" --workload ${confs[$i]} --threads "$t" \
                    --duration "$DURATION" --seed "$r" "${PIN[@]}" --csv "$OUT/runs.csv" 2>&1)
                rc=$?
                after=0; [ -f "$OUT/runs.csv" ] && after=$(wc -l <"$OUT/runs.csv")
                # which configuration each row of runs.csv ran (its line number)
                [ "$after" -gt "$before" ] && echo "$after $i" >>"$OUT/index.txt"
                if [ $rc -ne 0 ] || ! grep -q "check=pass" <<<"$out"; then
                    nfail=$((nfail + 1))
                    echo "round $r: --runtime $rt --workload ${confs[$i]} --threads $t --seed $r: exit $rc: $(tail -1 <<<"$out")" >>"$OUT/failures.txt"
                fi
            done
        done
    done
    echo "scaling: round $r of $REPEAT done"
done

[ -s "$OUT/runs.csv" ] || die 1 "no run succeeded (see $OUT/failures.txt)"
/usr/bin/python3 scripts/stmbench scaling "$OUT" --threads "$T" --cores "$ncores" \
    --runtimes "$RUNTIMES" --configs "$(IFS=';'; echo "${confs[*]}")" >"$OUT/scaling.md" ||
    die 1 "the table could not be made"
cat "$OUT/scaling.md"
if [ "$nfail" -gt 0 ]; then
    echo "scaling: $nfail runs failed (see $OUT/failures.txt)" >&2
    exit 1
fi
