#!/usr/bin/env bash
# tests/test_interp_memory.sh [BUILD] - make bench's table of interp's memory modes
# (scripts/interp-memory.sh, scripts/interp_memory.py): a tiny sitting writes its CSV,
# table and plot; a cell of the table (n%, 2T/1T, aborts per commit) is recomputed here
# from the CSV, independently of the script; an existing CSV is never overwritten; a
# CSV without the object columns is refused with exit 2.
set -u
cd "$(dirname "$0")/.." || exit 1
build=${1:-build/release}
PY=/usr/bin/python3
. tests/checks.sh      # $tmp, check, checks_summary

sitting() {
    env STMBENCH="$build/stmbench" INTERP_DURATION=0.05 INTERP_REPEAT=3 \
        INTERP_PROGRAMS="arith memo-cache" INTERP_MODES="tracing buffered" \
        INTERP_RUNTIMES="seq gil stm" scripts/interp-memory.sh "$tmp/out" >"$tmp/log" 2>&1 ||
        { cat "$tmp/log"; return 1; }
    [ -s "$tmp/out/interp_memory.md" ] && [ -s "$tmp/out/plots/interp_memory.png" ] &&
        grep -q "^## arith" "$tmp/out/interp_memory.md" &&
        grep -q "^## The roads compared" "$tmp/out/interp_memory.md"
}
check "a sitting writes the CSV, the table and the plot" sitting

cells() {
    # stm/buffered/arith recomputed: medians of ops_per_s and of aborts/commits
    "$PY" - "$tmp/out/interp_memory.csv" "$tmp/out/interp_memory.md" <<'EOF'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if "program=arith;" in r["params"]
        and "memory=buffered" in r["params"]]
def med(rt, t, f):
    return statistics.median(f(r) for r in rows if r["runtime"] == rt and int(r["threads"]) == t)
ops = lambda r: float(r["ops_per_s"])
npct = (med("seq", 1, ops) / med("stm", 1, ops) - 1) * 100
ratio = med("stm", 2, ops) / med("stm", 1, ops)
apc = med("stm", 2, lambda r: int(r["aborts"]) / max(1, int(r["commits"])))
md = open(sys.argv[2]).read().split("## arith", 1)[1].split("##", 1)[0]
line = [l for l in md.splitlines() if l.startswith("| stm | buffered |")][0]
cells = [c.strip() for c in line.strip("|").split("|")]
want = ["stm", "buffered", "%+.0f" % npct, "%.2f" % ratio, "%.3f" % apc]
if cells[:5] != want:
    sys.exit("table %s, recomputed %s" % (cells[:5], want))
EOF
}
check "the table's cells are the CSV's medians" cells

kept() {
    local sum
    sum=$(md5sum <"$tmp/out/interp_memory.csv")
    env STMBENCH="$build/stmbench" INTERP_PROGRAMS=arith scripts/interp-memory.sh "$tmp/out" \
        >"$tmp/log" 2>&1
    [ $? -eq 2 ] && grep -q "not overwritten" "$tmp/log" &&
        [ "$(md5sum <"$tmp/out/interp_memory.csv")" = "$sum" ]
}
check "an existing interp_memory.csv is never overwritten (exit 2)" kept

refused() {
    printf 'runtime,workload,params\nstm,interp,program=arith\n' >"$tmp/old.csv"
    "$PY" scripts/interp_memory.py "$tmp/old.csv" >"$tmp/log" 2>&1
    [ $? -eq 2 ] && grep -q "lacks column" "$tmp/log"
}
check "a CSV without the object columns is refused (exit 2)" refused

checks_summary
