#!/usr/bin/env bash
# tests/test_anchors.sh [BUILD] - make anchors (scripts/anchors.sh, scripts/anchors/
# programs.py, scripts/stmbench anchors): each Python program passes its check under
# /usr/bin/python3 at 1 and 2 threads with a positive rate (and under pypy3 where it is
# installed), keeps to Python 3.9's syntax (PyPy 7.3), fails its check when a result is
# perturbed, refuses bad arguments; the model's bytecodes per run match the binary's;
# a tiny sitting without pypy3 on PATH notes it and writes the expected rows and
# table; a failed run is recorded and exits 1; an existing anchors.csv is never
# overwritten. About 15 s.
set -u
cd "$(dirname "$0")/.." || exit 1
build=${1:-build/release}
PY=/usr/bin/python3
PROG=scripts/anchors/programs.py
PROGRAMS="arith memo-cache parallel-map work-queue"
. tests/checks.sh      # $tmp, check, checks_summary

# field NAME LINE: the value of NAME=... in a programs.py output line
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }

passes() { # INTERPRETER: every program at 1 and 2 threads, check=pass, runs/s > 0
    local py=$1 p t line
    for p in $PROGRAMS; do
        for t in 1 2; do
            line=$("$py" "$PROG" "$p" --threads "$t" --duration 0.1 2>"$tmp/err") ||
                { echo "$py $p threads=$t: exit $?: $(cat "$tmp/err")"; return 1; }
            if [ "$(field check "$line")" != pass ] || [ "$(field threads "$line")" != "$t" ] ||
                ! awk -v r="$(field runs "$line")" -v x="$(field runs_per_s "$line")" \
                    'BEGIN { exit !(r > 0 && x > 0) }'; then
                echo "$py $p threads=$t: $line"
                return 1
            fi
        done
    done
}
check "each program passes its check under python3 at 1 and 2 threads, runs/s > 0" \
    passes "$PY"

pypy_too() {
    local pypy
    pypy=$(command -v pypy3) || { echo "(pypy3 not installed: skipped)"; return 0; }
    passes "$pypy" && "$pypy" "$PROG" arith --duration 0.05 | grep -q "interpreter=pypy-7\."
}
check "each program passes under pypy3 where it is installed" pypy_too

syntax39() {
    "$PY" -c 'import ast, sys; ast.parse(open(sys.argv[1]).read(), feature_version=(3, 9))' \
        "$PROG"
}
check "programs.py parses at Python 3.9's level (PyPy 7.3)" syntax39

perturbed() { # the hidden --perturb: thread 0's first run publishes one too many
    local p line
    for p in $PROGRAMS; do
        line=$("$PY" "$PROG" "$p" --threads 2 --duration 0.05 --perturb 2>"$tmp/err")
        [ $? -eq 1 ] && [ "$(field check "$line")" = fail ] &&
            grep -q "^anchors $p: \`.expect .*\` fails" "$tmp/err" ||
            { echo "$p: $line / $(cat "$tmp/err")"; return 1; }
    done
}
check "a perturbed result fails the check (exit 1, the .expect named)" perturbed

usage() {
    local args
    for args in "nope" "arith --threads 0" "arith --duration -1" "arith --iterations x" ""; do
        # shellcheck disable=SC2086  # each case is a word list
        "$PY" "$PROG" $args >/dev/null 2>"$tmp/err"
        [ $? -eq 2 ] && grep -q "error:" "$tmp/err" || { echo "args '$args'"; return 1; }
    done
}
check "bad arguments: a message and exit 2" usage

counts() { # ops of `--ops once + 3 runs + 1` under seq: 4 whole runs, and vm-row says 4
    local p it want ops row
    for p in $PROGRAMS; do
        for it in 10 1000; do
            read -r want ops < <("$PY" -c 'import sys; sys.path.insert(0, "scripts")
from stmbench.anchors import PER_RUN, once
p, it = sys.argv[1], int(sys.argv[2]); a, b = PER_RUN[p]
print(once(p, it) + 4 * (a * it + b), once(p, it) + 3 * (a * it + b) + 1)' "$p" "$it")
            rm -f "$tmp/seq.csv"
            "$build/stmbench" --runtime seq --workload interp --program "$p" --memory refcount \
                --iterations "$it" --ops "$ops" --csv "$tmp/seq.csv" >"$tmp/seq.out" 2>&1 ||
                { cat "$tmp/seq.out"; return 1; }
            row=$("$PY" scripts/stmbench anchors vm-row "$tmp/seq.csv" --repeat 7) ||
                { echo "$p ITER=$it: vm-row failed"; return 1; }
            grep -q " ops=$want " "$tmp/seq.out" && [ "$(cut -d, -f1-4,6 <<<"$row")" = \
                "$p,stmbench-seq-refcount,1,7,4" ] ||
                { echo "$p ITER=$it: want ops=$want, 4 runs: $(cat "$tmp/seq.out") / $row"; return 1; }
        done
    done
}
check "the model's bytecodes per run match the binary (4 runs read back)" counts

# A PATH of the tools scripts/anchors.sh uses, and no pypy3 (wherever it is installed).
mkdir -p "$tmp/bin"
for c in bash awk sed seq timeout tail tr wc mkdir rm dirname cat; do
    ln -s "$(command -v "$c")" "$tmp/bin/$c" || exit 1
done
sitting() { # OUT [VAR=value...]
    local out=$1; shift
    env PATH="$tmp/bin" STMBENCH="$build/stmbench" ANCHORS_DURATION=0.1 ANCHORS_REPEAT=1 \
        ANCHORS_PROGRAMS=arith "$@" scripts/anchors.sh "$out" >"$tmp/log" 2>&1
}

tiny() {
    sitting "$tmp/out" || { cat "$tmp/log"; return 1; }
    local cpy
    cpy=cpython-$("$PY" -c 'import platform; print(platform.python_version())')
    grep -q "^anchors: pypy3 not found (Debian: apt-get install pypy3): its rows are left out" \
        "$tmp/log" || { cat "$tmp/log"; return 1; }
    # the header, then one row per interpreter and thread count, in the order run
    cut -d, -f1-4 "$tmp/out/anchors.csv" >"$tmp/keys"
    printf '%s\n' "program,interpreter,threads,repeat" "arith,$cpy,1,1" \
        "arith,stmbench-gil-refcount,1,1" "arith,$cpy,2,1" "arith,stmbench-gil-refcount,2,1" |
        diff - "$tmp/keys" || return 1
    # runs > 0 and runs_per_s = runs / seconds
    awk -F, 'NR > 1 && !($6 > 0 && ($7 - $6 / $5) ^ 2 < 1e-2 * $7 ^ 2) { bad = 1; print }
        END { exit bad }' "$tmp/out/anchors.csv" || return 1
    grep -q "^line_transfer_start=line_transfer_ns=" "$tmp/out/anchors.config" &&
        grep -q "^line_transfer_end=line_transfer_ns=" "$tmp/out/anchors.config" &&
        grep -q "^$PY: Python 3" "$tmp/out/anchors.config" &&
        [ ! -e "$tmp/out/anchors_failures.txt" ] &&
        [ "$(grep -c ',interp,' "$tmp/out/anchors_stmbench.csv")" -eq 2 ]
}
check "a sitting without pypy3: the note, one row per run, the config" tiny

cells() { # the table's rows recomputed from the CSV (one repeat: the medians are the rows)
    "$PY" - "$tmp/out/anchors.csv" "$tmp/out/anchors.md" <<'EOF'
import csv, sys
rows = {(r["interpreter"], int(r["threads"])): float(r["runs_per_s"])
        for r in csv.DictReader(open(sys.argv[1]))}
md = open(sys.argv[2]).read()
assert "## arith" in md, "no arith section"
model = "stmbench-gil-refcount"
m = rows[(model, 2)] / rows[(model, 1)]
for it in sorted({k[0] for k in rows}):
    label = it + " (model)" if it == model else it
    line = [l for l in md.splitlines() if l.startswith("| %s |" % label)]
    assert line, "no row for %s" % it
    cells = [c.strip() for c in line[0].strip("|").split("|")]
    r = rows[(it, 2)] / rows[(it, 1)]
    want = [label, "%.0f" % rows[(it, 1)], "%.0f" % rows[(it, 2)], "%.2f" % r,
            "–" if it == model else "%+.2f" % (r - m)]
    assert cells[:5] == want, "table %s, recomputed %s" % (cells[:5], want)
EOF
}
check "the table's cells are the CSV's: runs/s, 2T/1T, less the model's" cells

kept() {
    local sum
    sum=$(md5sum <"$tmp/out/anchors.csv")
    sitting "$tmp/out"
    [ $? -eq 2 ] && grep -q "anchors.csv exists: not overwritten" "$tmp/log" &&
        [ "$(md5sum <"$tmp/out/anchors.csv")" = "$sum" ]
}
check "an existing anchors.csv is never overwritten (exit 2)" kept

failed_run() { # a harness whose runs fail (its --line-transfer works): recorded, exit 1
    # shellcheck disable=SC2016  # $1 and $@ are the stub's own
    printf '#!/bin/sh\ncase "$1" in --line-transfer) exec "%s" "$@";; esac\nexit 1\n' \
        "$(cd "$build" && pwd)/stmbench" >"$tmp/failing"
    chmod +x "$tmp/failing"
    sitting "$tmp/out2" STMBENCH="$tmp/failing" ANCHORS_THREADS=1 ANCHORS_DURATION=0.05
    [ $? -eq 1 ] && grep -q "^stmbench gil arith memory=refcount threads=1 repeat=1$" \
        "$tmp/out2/anchors_failures.txt" && grep -q "1 run(s) failed" "$tmp/log" &&
        [ "$(grep -c '^arith,cpython-' "$tmp/out2/anchors.csv")" -eq 1 ] ||
        { cat "$tmp/log"; return 1; }
}
check "a failed run is recorded in anchors_failures.txt and exits 1" failed_run

checks_summary
