#!/usr/bin/env bash
# tests/test_mutants.sh BUILD - scripts/mutants.py (make mutants):
#  1. the mutation points of a tiny known input (tests/fixtures/sync-cost), kind by
#     kind, and what two of them do to the text;
#  2. a short real run on BUILD (bank under mutex): of its 4 atomic blocks the 3 only
#     setup, check and teardown reach are left out (no other thread runs then), and the
#     transfers' block, dropped, is caught by bank's checks; the summary says so.
# Run by scripts/run-tests.sh; prints cmocka's summary lines.
set -u
cd "$(dirname "$0")/.." || exit 1
unset MAKEFLAGS MFLAGS MAKELEVEL
build=${1:-build/release}
PY=${PYTHON:-/usr/bin/python3}
fx=tests/fixtures/sync-cost
. tests/sh_testutil.sh      # check, summary
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stmbench-test-mutants.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# 1. points: per variant and kind, as the fixture's comments place them
got=$("$PY" scripts/mutants.py --list --root "$fx" | cut -f2,3 | sort | uniq -c | awk '{print $2, $3, $1}')
want='itm drop-block 2
locks drop-lock 5
locks drop-unlock 5
locks early-unlock 4
locks relax 1
mutex drop-block 2
stm drop-barrier 3
stm drop-block 3'
check "mutation points of the fixture" "$([ "$got" = "$want" ]; echo $?)" "got:
$got"
r=0
"$PY" scripts/mutants.py --list --root "$fx" | grep 'toy.setup' | cut -f2 | grep -qvx stm && r=1
"$PY" scripts/mutants.py --list --root "$fx" | grep -q 'stm.*toy.setup' || r=1
check "a block only setup reaches is mutated under stm alone" $r "$("$PY" scripts/mutants.py --list --root "$fx" | grep toy.setup)"
r=0
"$PY" scripts/mutants.py --list --root "$fx" | grep -q 'toy_apart' && r=1   # not counted: not mutated
check "code marked not counted is not mutated" $r "toy_apart has points"

got=$(cd scripts && "$PY" - "$OLDPWD/$fx" <<'EOP'
import sys
from stmbench import mutants, sync_cost as sc
v = sc.Variant(sys.argv[1], "workloads/toy_locks.c")
pts = mutants.locks_points(v)
raw = v.raw["workloads/toy_locks.c"]
for m in pts:
    if m.kind in ("early-unlock", "drop-lock") and m.line in (28, 31):
        new = raw[:m.start] + m.new + raw[m.end:]
        print(m.kind, "|".join(l.strip() for l in new.split("\n")[27:31]))
EOP
)
want='drop-lock ((void)0);|wl_spin_lock(&x->lock);|x->n++;|wl_spin_unlock(&x->lock);
early-unlock pair_lock(b);|wl_spin_lock(&x->lock);|wl_spin_unlock(&x->lock);|x->n++;'
check "what a drop-lock and an early-unlock do to the text" "$([ "$got" = "$want" ]; echo $?)" "got:
$got"

# 2. a short real run
if [ -x "$build/stmbench" ]; then
    make -s BUILD="$build" mutants MUTANTS_WORKLOADS=bank MUTANTS_RUNTIMES=mutex \
        MUTANTS_OUT="$tmp/out" MUTANTS_DURATION=0.3 >"$tmp/log" 2>&1
    rc=$?
    csv=$tmp/out/mutants.csv
    r=0; m=""
    [ $rc -eq 0 ] || { r=1; m="make mutants exited $rc: $(tail -5 "$tmp/log")"; }
    [ "$(grep -c ',mutex,' "$csv" 2>/dev/null)" = 1 ] || { r=1; m="$m; not 1 mutex mutant"; }
    grep -q 'bank,mutex,1,3,drop-block,workloads/bank.c,[0-9]*,bank_block,.*,caught,' "$csv" ||
        { r=1; m="$m; the transfers' block dropped was not caught: $(cat "$csv")"; }
    grep -q '^| bank | mutex | 1 | 3 | 1 | 0 | 0 | 1 | 1 | 0 | 0 | 0 |$' "$tmp/out/summary.md" ||
        { r=1; m="$m; summary: $(grep '^| bank' "$tmp/out/summary.md")"; }
    check "make mutants on bank under mutex" $r "$m"
else
    check "make mutants on bank under mutex" 1 "no $build/stmbench"
fi

# bad variables: exit 2 before anything runs
MUTANTS_MAX=x "$PY" scripts/mutants.py >"$tmp/bad" 2>&1
rc=$?
check "a bad MUTANTS_MAX: exit 2" "$([ $rc -eq 2 ] && grep -q MUTANTS_MAX "$tmp/bad"; echo $?)" "exit $rc: $(cat "$tmp/bad")"

summary
