#!/usr/bin/env bash
# scripts/anchors.sh OUT - "make anchors": the interpreter model against the real
# interpreters. interp's four object-model programs run as Python
# (scripts/anchors/programs.py) under Debian's CPython (/usr/bin/python3) and PyPy
# (pypy3, where `command -v` finds it), and in the model as the harness's rows
# `--runtime gil --workload interp --memory refcount`, at 1 and 2 threads, interleaved
# (for each repeat, every point), into OUT/anchors.csv (one row per run: program,
# interpreter, threads, repeat, seconds, runs, runs_per_s), then OUT/anchors.md (the
# table: scripts/stmbench anchors table). The harness's own rows stay in
# OUT/anchors_stmbench.csv; runs of the model are derived from its ops (bytecodes:
# scripts/stmbench/anchors.py). `make anchors` runs it into results/latest/.
#
# Variables: ANCHORS_DURATION (seconds per run, default 1), ANCHORS_REPEAT (5),
# ANCHORS_PROGRAMS (default: arith memo-cache parallel-map work-queue),
# ANCHORS_THREADS ("1 2"), ANCHORS_ITERATIONS (ITER, 1000 as the harness's default),
# BUILD / STMBENCH (the harness). A missing interpreter is one note and its rows are
# left out. The interpreters' versions and the sitting's cache-line transfer
# (before and after) go to OUT/anchors.config and the table's head.
# Exit status: 0, 1 when a run failed (recorded in OUT/anchors_failures.txt), 2 bad
# input (or OUT/anchors.csv exists: never overwritten), 3 no harness or no folder.
set -u
out=${1:-}
if [ -z "$out" ]; then
    echo "usage: scripts/anchors.sh OUT" >&2
    exit 2
fi
here=$(dirname "$0")
DUR=${ANCHORS_DURATION:-1}
REP=${ANCHORS_REPEAT:-5}
PROGRAMS=${ANCHORS_PROGRAMS:-arith memo-cache parallel-map work-queue}
THREADS=${ANCHORS_THREADS:-1 2}
ITER=${ANCHORS_ITERATIONS:-1000}
bad() { echo "anchors: $1" >&2; exit 2; }
case "$REP" in ''|*[!0-9]*|0*) bad "ANCHORS_REPEAT must be a positive integer, not '$REP'";; esac
case "$ITER" in ''|*[!0-9]*|0*) bad "ANCHORS_ITERATIONS must be a positive integer, not '$ITER'";; esac
if ! [[ $DUR =~ ^[0-9]*\.?[0-9]+$ ]] || ! awk -v d="$DUR" 'BEGIN { exit !(d > 0) }'; then
    bad "ANCHORS_DURATION must be a positive number of seconds, not '$DUR'"
fi
[ -n "${THREADS// /}" ] || bad "ANCHORS_THREADS is empty"
for t in $THREADS; do
    case "$t" in *[!0-9]*|0*) bad "ANCHORS_THREADS: '$t' is not a positive integer";; esac
done
[ -n "${PROGRAMS// /}" ] || bad "ANCHORS_PROGRAMS is empty"
known="arith memo-cache parallel-map work-queue"
for p in $PROGRAMS; do
    case " $known " in
    *" $p "*) ;;
    *) bad "ANCHORS_PROGRAMS: '$p' is not one of $known";;
    esac
done
BIN=${STMBENCH:-${BUILD:-build/release}/stmbench}
if [ ! -x "$BIN" ]; then
    echo "anchors: no harness at $BIN (make first)" >&2
    exit 3
fi
mkdir -p "$out" || exit 3
csv="$out/anchors.csv"
fails="$out/anchors_failures.txt"
vmcsv="$out/anchors_stmbench.csv"
if [ -e "$csv" ]; then
    echo "anchors: $csv exists: not overwritten (choose another folder)" >&2
    exit 2
fi

# The Python interpreters to run; a missing one is a note and no rows.
PY=/usr/bin/python3
pythons=()
if [ -x "$PY" ]; then
    pythons+=("$PY")
else
    echo "anchors: $PY not found (Debian: apt-get install python3): CPython's rows are left out"
fi
if pypy=$(command -v pypy3); then
    pythons+=("$pypy")
else
    echo "anchors: pypy3 not found (Debian: apt-get install pypy3): its rows are left out"
fi
version() { "$1" --version 2>&1 | tr '\n' ' ' | sed 's/ *$//'; }

echo "program,interpreter,threads,repeat,seconds,runs,runs_per_s" >"$csv"
: >"$fails"
# a run's wall-clock limit: its duration and a minute
limit=$(awk -v d="$DUR" 'BEGIN { printf "%d", d + 60.999 }')
lt_start=$("$BIN" --line-transfer 2>&1 | tail -1)
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }
n=0
for rep in $(seq 1 "$REP"); do
    for p in $PROGRAMS; do
        for t in $THREADS; do
            for py in "${pythons[@]+"${pythons[@]}"}"; do
                n=$((n + 1))
                line=$(timeout "$limit" "$py" "$here/anchors/programs.py" "$p" --threads "$t" \
                    --duration "$DUR" --iterations "$ITER" 2>>"$fails.log")
                rc=$?
                runs=$(field runs "$line")
                if [ $rc -ne 0 ] || [ "$(field check "$line")" != pass ] || [ -z "$runs" ]; then
                    echo "$py $p threads=$t repeat=$rep: exit $rc" >>"$fails"
                    continue
                fi
                echo "$p,$(field interpreter "$line"),$t,$rep,$(field seconds "$line"),$runs,$(field runs_per_s "$line")" >>"$csv"
            done
            n=$((n + 1))
            if ! timeout "$limit" "$BIN" --runtime gil --workload interp --program "$p" \
                    --memory refcount --threads "$t" --duration "$DUR" --iterations "$ITER" \
                    --seed "$rep" --csv "$vmcsv" >/dev/null 2>>"$fails.log" ||
                ! "$PY" "$here/stmbench" anchors vm-row "$vmcsv" --repeat "$rep" \
                    >>"$csv" 2>>"$fails.log"; then
                echo "stmbench gil $p memory=refcount threads=$t repeat=$rep" >>"$fails"
            fi
        done
    done
done
lt_end=$("$BIN" --line-transfer 2>&1 | tail -1)
{
    echo "line_transfer_start=$lt_start"
    echo "line_transfer_end=$lt_end"
    for py in "${pythons[@]+"${pythons[@]}"}"; do
        echo "$py: $(version "$py")"
    done
    echo "model: $BIN --runtime gil --workload interp --memory refcount"
    echo "duration=$DUR repeat=$REP iterations=$ITER threads=$THREADS runs=$n"
} >"$out/anchors.config"
table=ok
"$PY" "$here/stmbench" anchors table "$csv" --config "$out/anchors.config" \
    >"$out/anchors.md" || table=failed
if [ -s "$fails" ]; then
    echo "anchors: $(wc -l <"$fails") run(s) failed: $fails (messages: $fails.log)" >&2
    exit 1
fi
[ "$table" = ok ] || exit 1
rm -f "$fails" "$fails.log"
echo "anchors: $n runs; the table is $out/anchors.md"
