#!/usr/bin/env bash
# tests/test_conflicts_report.sh - conflict analysis end to end (docs/contract.md,
# "Conflict log" and "--report"): for three built-in interp programs that conflict under
# stm, the top pair of `--report` names the right object and the right lines on both
# sides (shared-counter and list-append: one line writing on both sides; read-mostly: a
# reader in `lookup` against a writer in `update`), and every figure of the top five
# equals the conflicts CSV's rows recomputed here (counts = sums of `weight`, times =
# sums of `wasted_ns`, ranked by time lost, then count, then the strings).
# Three threads with long slices (--switch-interval 5000) on any number of cores: a
# thread preempted inside its transaction makes the others conflict, so the programs
# conflict even on a busy machine; a run with too few aborts is tried again (3 tries).
# Also: the C workloads' objects named by their descriptions (bank "account 17",
# rbtree "rbtree node key=412", hashmap "hashmap bucket 93"), never by an offset alone.
# Also: --report twice is bad usage (exit 2); a conflicts file with the old header is
# refused with a clear message (exit 2). Prints cmocka's summary lines.
set -u
cd "$(dirname "$0")/.." || exit 1
PY=${PYTHON:-/usr/bin/python3}
BIN=${STMBENCH:-build/release/stmbench}
. tests/sh_testutil.sh      # check, summary
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# Recomputes the top five from CSV $1 in --report's words (the pair lines only) and
# compares with the report in $2; prints the differences, exit 1 when any.
recompute() {
    "$PY" - "$1" "$2" <<'PYEOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
pairs = {}
for r in rows:
    k = (r["kind"], r["object_name"], r["site"], r["where"], r["other_site"], r["other_where"])
    c, w = pairs.get(k, (0, 0))
    pairs[k] = (c + int(r["weight"]), w + int(r["wasted_ns"]))
order = sorted(pairs.items(), key=lambda kv: (-kv[1][1], -kv[1][0], kv[0]))
lost = sum(int(r["wasted_ns"]) for r in rows)
want = []
for i, (k, (c, w)) in enumerate(order[:5]):
    kind, obj, site, where, osite, owhere = k
    want.append(" #%d %s x%d, %.3f ms lost (%d ns, %.1f%%)" % (
        i + 1, kind, c, w / 1e6, w, 100.0 * w / lost if lost else 0.0))
    if obj:
        want.append("    object:  " + obj)
    side = lambda label, s, wh: ("    %s unknown" % label) if not s and not wh else \
        "    %s %s%s" % (label, s or "?", " at " + wh if wh else "")
    want.append(side("aborted:", site, where))
    want.append(side("other:  ", osite, owhere))
got = [l for l in open(sys.argv[2]).read().splitlines()
       if l.startswith(" #") or l.startswith("    object:  ") and not l.startswith("    object:  0x")
       and "unknown" not in l or l.startswith("    aborted:") or l.startswith("    other:")]
if got != want:
    print("report:\n" + "\n".join(got) + "\nrecomputed from the CSV:\n" + "\n".join(want))
    sys.exit(1)
PYEOF
}

# conflicts.md (scripts/stmbench_report.py) of folder $1: its interp/stm table's first
# row names object $2 and the sides at $3 and $4, with the count and time of the CSV's
# top pair recomputed here; the timeline figure exists.
md_pairs() {
    "$PY" - "$@" <<'PYEOF'
import csv, os, sys
d, obj, where, other = sys.argv[1:5]
pairs = {}
for r in csv.DictReader(open(d + "/conflicts.csv")):
    o = r["object_name"] or (r["object"] if int(r["object"], 0) else "")
    k = (r["kind"], o, r["site"], r["where"], r["other_site"], r["other_where"])
    c, w = pairs.get(k, (0, 0))
    pairs[k] = (c + int(r["weight"]), w + int(r["wasted_ns"]))
(kind, o, site, wh, osite, owh), (c, w) = sorted(pairs.items(),
                                                 key=lambda kv: (-kv[1][1], -kv[1][0], kv[0]))[0]
assert (o, wh, owh) == (obj, where, other), (o, wh, owh)
md = open(d + "/conflicts.md").read().split("### interp — stm", 1)[1].splitlines()
row = [l for l in md if l.startswith("| 1 |")][0]
cells = [x.strip() for x in row.strip("|").split("|")]
assert cells[1:6] == [kind, obj, "`%s` at %s" % (site, where), "`%s` at %s" % (osite, other),
                      str(c)], (cells, kind, c)
assert os.path.getsize(d + "/plots/conflict_timeline_interp.png") > 0
PYEOF
}

# NAME OBJECT ABORTED-WHERE OTHER-WHERE
for spec in "shared-counter|int counter|shared-counter:14 in main (STORE_GLOBAL counter)|shared-counter:14 in main (STORE_GLOBAL counter)" \
            "list-append|list log|list-append:13 in main (LIST_APPEND log)|list-append:13 in main (LIST_APPEND log)" \
            "read-mostly|int setting|read-mostly:40 in lookup (LOAD_GLOBAL setting)|read-mostly:31 in update (STORE_GLOBAL setting)"; do
    IFS='|' read -r prog obj where other <<<"$spec"
    csvf=$tmp/$prog.csv rep=$tmp/$prog.txt
    for try in 1 2 3; do
        rm -f "$csvf"
        rm -f "$tmp/$prog-runs.csv"
        "$BIN" --runtime stm --workload interp --program "$prog" --threads 3 --pin none \
            --switch-interval 5000 --duration 0.5 --conflicts "$csvf" --report \
            --csv "$tmp/$prog-runs.csv" >"$rep" 2>&1
        rc=$?
        n=$(($(wc -l <"$csvf") - 1))
        [ "$rc" -eq 0 ] && [ "$n" -ge 20 ] && break
    done
    check "$prog: run (exit $rc, $n conflict rows)" "$([ "$rc" -eq 0 ] && [ "$n" -ge 20 ]; echo $?)" "$(cat "$rep")"
    top=$(sed -n '/^ #1 /,/^ #2 /p' "$rep")
    r=0
    grep -qxF "    object:  $obj" <<<"$top" || r=1
    grep -qxF "    aborted: interp.slice at $where" <<<"$top" || r=1
    grep -qxF "    other:   interp.slice at $other" <<<"$top" || r=1
    grep -q '^    advice:  .' <<<"$top" || r=1
    check "$prog: the top pair names $obj and both lines" $r "$top"
    out=$(recompute "$csvf" "$rep" 2>&1)
    check "$prog: the report's top five equal the CSV's rows" $? "$out"
    # make bench's conflicts.md and timeline figure, from the same run
    md=$tmp/md-$prog
    mkdir -p "$md" && cp "$csvf" "$md/conflicts.csv" && cp "$tmp/$prog-runs.csv" "$md/runs.csv"
    out=$("$PY" scripts/stmbench_report.py conflicts "$md" 2>&1 && "$PY" scripts/plot.py "$md" 2>&1 &&
          md_pairs "$md" "$obj" "$where" "$other" 2>&1)
    check "$prog: conflicts.md's top pair and its timeline (plots/conflict_timeline_interp)" $? "$out"
done

# The C workloads name the objects of their conflicts ("never by an offset alone"):
# under stm, for bank, rbtree and hashmap, the top pair of `--report` names its object
# by the workload's description, and every conflicts row with an object has one.
# WORKLOAD ARGS|PATTERN of the object's name (an extended regex, whole line)
for spec in "bank --accounts 64|account [0-9]+" \
            "rbtree --size 256|rbtree (root|node key=-?[0-9]+)" \
            "hashmap --buckets 16|hashmap (bucket [0-9]+|node key=-?[0-9]+ \\(bucket [0-9]+\\))"; do
    IFS='|' read -r args pat <<<"$spec"
    wl=${args%% *}
    csvf=$tmp/$wl.csv rep=$tmp/$wl.txt
    for try in 1 2 3; do
        rm -f "$csvf"
        # shellcheck disable=SC2086
        "$BIN" --runtime stm --workload $args --threads 3 --pin none --ops-per-tx 8 \
            --duration 0.5 --conflicts "$csvf" --report >"$rep" 2>&1
        rc=$?
        n=$(($(wc -l <"$csvf") - 1))
        [ "$rc" -eq 0 ] && [ "$n" -ge 20 ] && break
    done
    check "$wl: run (exit $rc, $n conflict rows)" "$([ "$rc" -eq 0 ] && [ "$n" -ge 20 ]; echo $?)" \
        "$(cat "$rep")"
    top=$(sed -n '/^ #1 /,/^ #2 /p' "$rep" | sed -n 's/^    object:  //p' | head -1)
    check "$wl: the top pair's object is named ('$top')" \
        "$(grep -qxE "$pat" <<<"$top"; echo $?)" "$(cat "$rep")"
    out=$("$PY" - "$csvf" "$pat" <<'PYEOF'
import csv, re, sys
pat = re.compile(sys.argv[2])
rows = [r for r in csv.DictReader(open(sys.argv[1])) if int(r["object"], 0)]
bad = [r for r in rows if not pat.fullmatch(r["object_name"])]
if not rows or bad:
    print("%d rows with an object, %d not named as '%s', e.g. %s"
          % (len(rows), len(bad), sys.argv[2], bad[:1]))
    sys.exit(1)
PYEOF
)
    check "$wl: every conflict row with an object names it" $? "$out"
done

# Bad usage and an old conflicts file.
"$BIN" --runtime stm --workload interp --report --report --ops 10 >"$tmp/o" 2>&1
check "--report twice: exit 2" "$([ $? -eq 2 ]; echo $?)" "$(cat "$tmp/o")"
echo "run_id,t_ns,thread,other_thread,kind,object,page,site,wasted_ns" >"$tmp/old.csv"
"$BIN" --runtime stm --workload interp --ops 10 --conflicts "$tmp/old.csv" >"$tmp/o" 2>&1
rc=$?
check "an old conflicts file: exit 2, says so" \
    "$([ $rc -eq 2 ] && grep -q 'different header' "$tmp/o"; echo $?)" "exit $rc: $(cat "$tmp/o")"
summary
