#!/usr/bin/env bash
# tests/test_sync_cost.sh - scripts/sync_cost.py on a tiny known input
# (tests/fixtures/sync-cost: a workload `toy` with a generic file that reuses another
# workload's header and a locks variant, each line's part written in the fixture's
# comments), then its handling of bad input. Run by scripts/run-tests.sh; prints
# cmocka's summary lines, so run-tests.sh counts its cases.
set -u
cd "$(dirname "$0")/.." || exit 1
PY=${PYTHON:-/usr/bin/python3}
fx=tests/fixtures/sync-cost
. tests/sh_testutil.sh      # check, summary

# 1. The counts: every column of every row, as the fixture's comments work them out.
want='workload,runtimes,sync_lines,sync_lines_own,lock_sites,lock_orderings,retry_loops,atomic_blocks,files
toy,mutex,3,3,0,0,0,3,workloads/toy.c workloads/toy.h workloads/shelf.h
toy,stm,7,6,0,0,0,3,workloads/toy.c workloads/toy.h workloads/shelf.h
toy,locks,16,16,5,2,1,0,workloads/toy_locks.c workloads/toy.h
toy,itm,4,4,0,0,0,3,workloads/toy.c workloads/toy.h workloads/shelf.h'
got=$("$PY" scripts/sync_cost.py --root "$fx" --format csv 2>&1)
check "counts of the fixture" "$([ "$got" = "$want" ]; echo $?)" "got:
$got"

# 2. The orderings it names, in the markdown form make bench prints.
got=$("$PY" scripts/sync_cost.py --root "$fx" --details 2>&1)
r=0
grep -q '^| toy | locks | 16 (16) | 5 | 2 | 1 | 0 |$' <<<"$got" || r=1
grep -q 'toy (locks): pair.lock before bin.lock; pair.lock before pair.lock\.' <<<"$got" || r=1
check "markdown table and orderings" $r "$got"

# 3. Each rule moves its count: a second nested lock (a new ordering and site), a
#    retry loop, a block, all in a copy of the fixture.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stmbench-test-sync-cost.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cp -r "$fx"/. "$tmp"/
cat >>"$tmp/workloads/toy_locks.c" <<'EOC'

static void toy_nest(struct bin *x, struct pair *a)
{
    long v = 0;
    wl_spin_lock(&x->lock);
    while (!atomic_compare_exchange_weak_explicit(&a->v, &v, v + 1, memory_order_relaxed,
                                                  memory_order_relaxed))
        x->n++;
    pair_lock(a);
    pair_unlock(a);
    wl_spin_unlock(&x->lock);
}
EOC
printf '\nstatic void toy_three(void)\n{\n    SYNC_ATOMIC("toy.three") {\n    }\n}\n' >>"$tmp/workloads/toy.c"
got=$("$PY" scripts/sync_cost.py --root "$tmp" --format csv 2>&1)
r=0
grep -q '^toy,locks,21,21,7,3,2,0,' <<<"$got" || r=1     # +5 lines, +2 sites, bin before pair, a CAS loop
grep -q '^toy,mutex,4,4,0,0,0,4,' <<<"$got" || r=1
check "each rule moves its count" $r "$got"

# 3b. Calls the syntax hides: a name pasted in a macro (toy_##name##_one(g)) calls the
#     units it can make; a unit passed as an argument (a function pointer) is taken as
#     called there. Each gives its ordering: bin before gate, pair before gate.
rm -rf "$tmp/paste" && mkdir "$tmp/paste" && cp -r "$fx"/. "$tmp/paste"/
cat >>"$tmp/paste/workloads/toy_locks.c" <<'EOC'

struct gate {
    wl_spin_t lock;
};
static void toy_gate_one(struct gate *g)
{
    wl_spin_lock(&g->lock);
    wl_spin_unlock(&g->lock);
}
#define TOY_CALL_(name, g) toy_##name##_one(g)
static void toy_via_paste(struct bin *x, struct gate *g)
{
    wl_spin_lock(&x->lock);
    TOY_CALL_(gate, g);
    wl_spin_unlock(&x->lock);
}
static void toy_apply(void (*f)(struct gate *), struct gate *g)
{
    f(g);
}
static void toy_via_pointer(struct pair *a, struct gate *g)
{
    pair_lock(a);
    toy_apply(toy_gate_one, g);
    pair_unlock(a);
}
EOC
got=$("$PY" scripts/sync_cost.py --root "$tmp/paste" --details 2>&1)
r=0
grep -q 'toy (locks):.*bin.lock before gate.lock' <<<"$got" || r=1
grep -q 'toy (locks):.*pair.lock before gate.lock' <<<"$got" || r=1
check "pasted names and function pointers are followed" $r "$got"

# 4. Bad input: exit 2 with a message naming the file.
"$PY" scripts/sync_cost.py --root "$tmp/nowhere" >"$tmp/out" 2>&1
rc=$?
check "a tree without runtime/runtimes.h: exit 2" "$([ $rc -eq 2 ] && grep -q 'runtimes.h' "$tmp/out"; echo $?)" \
    "exit $rc: $(cat "$tmp/out")"

summary
