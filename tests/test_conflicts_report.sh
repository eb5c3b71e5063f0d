#!/usr/bin/env bash
# tests/test_conflicts_report.sh - conflict analysis end to end (docs/contract.md,
# "Conflict log" and "--report"), in two parts.
# Aborts: for three built-in interp programs that conflict under stm, the top pair of
# `--report` names the right object and the right lines on both sides (shared-counter
# and list-append: one line writing on both sides; read-mostly: a reader in `lookup`
# against a writer in `update`), and every figure of the top five equals the conflicts
# CSV's rows recomputed here (counts = sums of `weight`, times = sums of `wasted_ns`,
# ranked by time lost, then count, then the strings); make bench's conflicts.md has the
# same top pair, and its timeline figure. The C workloads' objects are named by their
# descriptions (bank "account 17", rbtree "rbtree node key=412", hashmap "hashmap
# bucket 93"), never by an offset alone.
# Waits: under the runtimes that wait instead of aborting (gil, mutex, locks), the same
# programs produce a contention ranking whose top entry names the lock and both places,
# the waiter's and the holder's (the GIL or the mutex and the bytecodes where the threads
# stand between slices; under locks the program's object and the lines that take it:
# read-mostly's reader in `lookup` against its writer in `update`); its figures and
# every figure of the top five equal the CSV's lock-wait rows recomputed here (a lock's
# count and time summed over its rows, locks ranked by time, then count, then name; its
# pair the most waited (site, where, other_site, other_where), by time, then count, then
# the strings); and the waits are not aborts (aborts=0, no "conflicts:" section). Bank
# and rbtree under locks name their lock by the workload's description ("account N",
# "rbtree writer lock") and both sites.
# Three threads with long slices (--switch-interval 5000) on any number of cores: a
# thread preempted inside its transaction, or holding a lock, makes the others conflict
# or wait, so the programs do so even on a busy machine; a run with too few rows is
# tried again (5 tries: on a machine loaded by other jobs, a run's threads seldom
# overlap, and 3 tries of list-append under stm, base and change alike, fell short).
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

# Recomputes the contention section's top five from CSV $1 in --report's words (the
# entry lines only) and compares with the report in $2; prints the differences, exit 1
# when any.
recompute_waits() {
    "$PY" - "$1" "$2" <<'PYEOF'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["kind"] == "lock-wait"]
waited = sum(int(r["wasted_ns"]) for r in rows)
pairs = {}
for r in rows:
    lock = r["object_name"] or r["object"]
    k = (lock, r["site"], r["where"], r["other_site"], r["other_where"])
    c, w = pairs.get(k, (0, 0))
    pairs[k] = (c + int(r["weight"]), w + int(r["wasted_ns"]))
locks = {}
for k, (c, w) in pairs.items():
    lc, lw, n, best = locks.get(k[0], (0, 0, 0, None))
    if best is None or (-w, -c, k[1:]) < (-best[2], -best[1], best[0][1:]):
        best = (k, c, w)
    locks[k[0]] = (lc + c, lw + w, n + 1, best)
order = sorted(locks.items(), key=lambda kv: (-kv[1][1], -kv[1][0], kv[0]))
def side(label, site, where):
    if not site and not where:
        return "    %s unknown" % label
    return "    %s %s" % (label, " at ".join(x for x in (site, where) if x))
want = []
for i, (lock, (c, w, n, (k, pc, pw))) in enumerate(order[:5]):
    want.append(" #%d lock-wait x%d, %.3f ms waited (%d ns, %.1f%%)" % (
        i + 1, c, w / 1e6, w, 100.0 * w / waited if waited else 0.0))
    want.append("    lock:    " + (lock if not lock.startswith("0x") else
                                  "%s (not described by the workload)" % lock))
    want.append(side("waiter: ", k[1], k[2]))
    want.append(side("holder: ", k[3], k[4]))
    want.append("    pair:    x%d, %.3f ms waited (%d ns), the most of the lock's %d pair%s" % (
        pc, pw / 1e6, pw, n, "" if n == 1 else "s"))
text = open(sys.argv[2]).read().splitlines()
sect = text[next(i for i, l in enumerate(text) if l.startswith("contention: top")):]
got = [l for l in sect if l.startswith(" #") or l.startswith("    lock:") or
       l.startswith("    waiter:") or l.startswith("    holder:") or l.startswith("    pair:")]
if got != want:
    print("report:\n" + "\n".join(got) + "\nrecomputed from the CSV:\n" + "\n".join(want))
    sys.exit(1)
PYEOF
}

# run NAME RUNTIME WORKLOAD MIN-ROWS ARGS...: up to 5 tries until it exits 0 with at
# least MIN-ROWS rows (under stm any row, elsewhere lock-wait rows); sets rc, n, csvf,
# rep and runs ($tmp/NAME.csv, .txt and -runs.csv: the conflicts, the output, the runs
# CSV).
run() {
    local name=$1 rt=$2 wl=$3 min=$4
    shift 4
    csvf=$tmp/$name.csv rep=$tmp/$name.txt runs=$tmp/$name-runs.csv
    for try in 1 2 3 4 5; do
        rm -f "$csvf" "$runs"
        "$BIN" --runtime "$rt" --workload "$wl" --threads 3 --pin none --duration 0.5 \
            --conflicts "$csvf" --csv "$runs" --report "$@" >"$rep" 2>&1
        rc=$?
        if [ "$rt" = stm ]; then
            n=$(($(wc -l <"$csvf" 2>/dev/null || echo 0) - 1))
        else
            n=$(grep -c ',lock-wait,' "$csvf" 2>/dev/null)
        fi
        [ "$rc" -eq 0 ] && [ "${n:-0}" -ge "$min" ] && break
    done
    check "$name: run (exit $rc, $n rows)" \
        "$([ "$rc" -eq 0 ] && [ "${n:-0}" -ge "$min" ]; echo $?)" "$(cat "$rep")"
}

# entry SECTION: the #1 entry of $rep's section whose first line starts with SECTION,
# in $top. has REGEX...: each extended regex, and an advice line, matches a whole line
# of $top. q TEXT: TEXT as an extended regex matching itself.
entry() { top=$(sed -n "/^$1/,\$p" "$rep" | sed -n '/^ #1 /,/^ #2 /p'); }
has() {
    local x
    for x in "$@" '    advice:  .+'; do
        grep -qxE -- "$x" <<<"$top" || return 1
    done
}
q() { sed 's/[][\.*^$()+?{}|]/\\&/g' <<<"$1"; }

# The waits' top entry of $rep: lock LOCK (a regex), the waiter's and holder's places
# matching WAITER and HOLDER; its figures recomputed; no abort.
top_entry() { # NAME LOCK WAITER HOLDER
    entry "contention: top"
    has "    lock:    $2" "    waiter:  $3" "    holder:  $4"
    check "$1: the top lock is $2, with both places" $? "$top"
    out=$(recompute_waits "$csvf" "$rep" 2>&1)
    check "$1: the report's top five equal the CSV's lock-wait rows" $? "$out"
    grep -q ' aborts=0 ' "$rep" && ! grep -q '^conflicts:' "$rep"
    check "$1: waits are not aborts" $? "$(head -3 "$rep")"
}

# A bytecode of program $1: "PROG:LINE in FUNC (OP...)", as a regex.
at() { echo "$1:[0-9]+ in [a-z_]+ \\([A-Z_]+( [a-z0-9_]+)?\\)"; }

# Aborts. NAME OBJECT ABORTED-WHERE OTHER-WHERE
for spec in "shared-counter|int counter|shared-counter:14 in main (STORE_GLOBAL counter)|shared-counter:14 in main (STORE_GLOBAL counter)" \
            "list-append|list log|list-append:13 in main (LIST_APPEND log)|list-append:13 in main (LIST_APPEND log)" \
            "read-mostly|int setting|read-mostly:40 in lookup (LOAD_GLOBAL setting)|read-mostly:31 in update (STORE_GLOBAL setting)"; do
    IFS='|' read -r prog obj where other <<<"$spec"
    run "$prog" stm interp 20 --program "$prog" --switch-interval 5000
    entry "conflicts: top"
    has "    object:  $(q "$obj")" "    aborted: $(q "interp.slice at $where")" \
        "    other:   $(q "interp.slice at $other")"
    check "$prog: the top pair names $obj and both lines" $? "$top"
    out=$(recompute "$csvf" "$rep" 2>&1)
    check "$prog: the report's top five equal the CSV's rows" $? "$out"
    # make bench's conflicts.md and timeline figure, from the same run
    md=$tmp/md-$prog
    mkdir -p "$md" && cp "$csvf" "$md/conflicts.csv" && cp "$runs" "$md/runs.csv"
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
    # shellcheck disable=SC2086
    run "$wl" stm "$wl" 20 ${args#"$wl"} --ops-per-tx 8
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

# Waits. Under gil and mutex the lock is the runtime's, the places bytecodes of the
# program (wherever the slices end); under locks the program's object and its lines.
for prog in shared-counter read-mostly list-append; do
    for rt in gil mutex; do
        lock="the GIL"
        [ $rt = mutex ] && lock="the mutex"
        run "$prog-$rt" $rt interp 5 --program "$prog" --switch-interval 5000
        top_entry "$prog-$rt" "$lock" "interp\\.slice at $(at "$prog")" \
            "interp\\.slice at $(at "$prog")"
    done
done
run shared-counter-locks locks interp 20 --program shared-counter --switch-interval 5000
top_entry shared-counter-locks "int counter" "shared-counter:10 in main \\(ATOMIC_BEGIN\\)" \
    "shared-counter:1[0-4] in main \\([A-Z_]+( counter)?\\)"
rm_lines="read-mostly:(40 in lookup \\(LOAD_GLOBAL setting\\)|31 in update \\(STORE_GLOBAL setting\\))"
run read-mostly-locks locks interp 20 --program read-mostly --switch-interval 5000
top_entry read-mostly-locks "int setting" "$rm_lines" "$rm_lines"
# (each append is followed by a LIST_LEN of the list: both take its lock)
la_line="list-append:(13 in main \\(LIST_APPEND log\\)|14 in main \\(LIST_LEN log\\))"
run list-append-locks locks interp 20 --program list-append --switch-interval 5000
top_entry list-append-locks "list log" "$la_line" "$la_line"

# C workloads under locks: the lock named by the workload, both sites named.
run bank-locks locks bank 5 --accounts 16
top_entry bank-locks "account [0-9]+" "bank\\.(transfer|audit)" "bank\\.(transfer|audit)"
run rbtree-locks locks rbtree 5 --update 100
top_entry rbtree-locks "rbtree writer lock" "rbtree\\.(insert|delete|lookup)" \
    "rbtree\\.(insert|delete|lookup)"

# Bad usage and an old conflicts file.
"$BIN" --runtime stm --workload interp --report --report --ops 10 >"$tmp/o" 2>&1
check "--report twice: exit 2" "$([ $? -eq 2 ]; echo $?)" "$(cat "$tmp/o")"
echo "run_id,t_ns,thread,other_thread,kind,object,page,site,wasted_ns" >"$tmp/old.csv"
"$BIN" --runtime stm --workload interp --ops 10 --conflicts "$tmp/old.csv" >"$tmp/o" 2>&1
rc=$?
check "an old conflicts file: exit 2, says so" \
    "$([ $rc -eq 2 ] && grep -q 'different header' "$tmp/o"; echo $?)" "exit $rc: $(cat "$tmp/o")"
summary
