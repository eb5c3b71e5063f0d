#!/usr/bin/env bash
# tests/test_conflicts_names.sh - the C workloads name the objects of their conflicts
# (issue 30: "never by an offset alone"): under stm, for bank, rbtree and hashmap, the
# top pair of `--report` names its object by the workload's description (`account 17`,
# `rbtree node key=412` or `rbtree root`, `hashmap bucket 93` or `hashmap node
# key=...`), and in the conflicts CSV every row with an object has an object_name.
# Three threads on any number of cores (a thread preempted inside its transaction makes
# the others conflict, so a busy machine conflicts too); a run with too few aborts is
# tried again (3 tries). Prints cmocka's summary lines.
set -u
cd "$(dirname "$0")/.." || exit 1
PY=${PYTHON:-/usr/bin/python3}
BIN=${STMBENCH:-build/release/stmbench}
. tests/sh_testutil.sh      # check, summary
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

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
summary
