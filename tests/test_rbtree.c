/*
 * tests/test_rbtree.c - the rbtree workload.
 *  - Directly through its descriptors (seq and locks): random operations with the
 *    red-black, order and replay checks after every single operation; the locks
 *    variant from 4 and 8 threads at once; knob validation.
 *  - The check catches corruption: a red root, a red-red pair, unequal black heights,
 *    keys out of order, a wrong parent reference, and logs that disagree with the tree.
 *  - Through the harness (stmbench_main): seq at 1 thread; mutex, gil, locks and stm
 *    at 1 and 2 threads (itm: tests/test_itm.c); a randomized stress of the locks
 *    variant at 4 and 8 threads.
 */
#define SYNC_RT seq
#include "runtime/sync.h"
#include "workloads/rbtree.h"
#include "workloads/workload.h"
#include "tests/stmbench_testutil.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "tests/wl_testutil.h"

extern const struct workload rbtree__seq, rbtree__locks;

static struct wl_args test_args(long size, long range, long update, long ops_per_tx,
                                int nthreads, uint64_t seed)
{
    struct wl_args a;
    memset(&a, 0, sizeof a);
    a.nthreads = nthreads;
    a.seed = seed;
    a.ops_per_tx = ops_per_tx;
    a.ival[RB_KNOB_SIZE] = size;
    a.ival[RB_KNOB_RANGE] = range;
    a.ival[RB_KNOB_UPDATE] = update;
    return a;
}

/* One thread, one operation at a time, every invariant checked after each. */
static void every_op_checked(const struct workload *w, long size, long range, long update,
                             int nops, uint64_t seed)
{
    struct wl_args a = test_args(size, range, update, 1, 1, seed);
    void *ctx = setup_ok(w, &a);
    struct wl_thread t;
    init_threads(&t, 1, seed);
    check_ok(w, ctx, &t, 1);
    for (int i = 0; i < nops; i++) {
        t.ops_target = t.ops + 1;
        w->thread_run(ctx, &t);
        assert_int_equal(t.ops, (uint64_t)i + 1);
        check_ok(w, ctx, &t, 1);
    }
    w->teardown(ctx);
}

static void test_seq_every_op(void **state)
{
    (void)state;
    every_op_checked(&rbtree__seq, 64, 128, 100, 4000, 1);
    every_op_checked(&rbtree__seq, 0, 16, 100, 2000, 2);     /* grows from empty */
    every_op_checked(&rbtree__seq, 300, 300, 60, 2000, 3);   /* full range */
}

static void test_locks_every_op(void **state)
{
    (void)state;
    every_op_checked(&rbtree__locks, 64, 128, 100, 4000, 4);
    every_op_checked(&rbtree__locks, 0, 16, 100, 2000, 5);
    every_op_checked(&rbtree__locks, 300, 300, 60, 2000, 6);
    every_op_checked(&rbtree__locks, 1, 3, 100, 2000, 7);    /* tiny: root-only cases */
}

static void test_seq_batches(void **state)
{
    (void)state;
    struct wl_args a = test_args(500, 0, 50, 9, 1, 11);
    void *ctx = setup_ok(&rbtree__seq, &a);
    struct wl_thread t;
    init_threads(&t, 1, 11);
    t.ops_target = 100001;                   /* not a multiple of 9: last batch shorter */
    rbtree__seq.thread_run(ctx, &t);
    assert_int_equal(t.ops, 100001);
    assert_int_equal(t.blocks, 100001 / 9 + 1);
    check_ok(&rbtree__seq, ctx, &t, 1);
    rbtree__seq.teardown(ctx);
}

/* The locks variant with n threads at once, each doing ops_each operations. */
static void locks_threads(int n, long size, long range, long update, uint64_t ops_each,
                          uint64_t seed)
{
    struct wl_args a = test_args(size, range, update, 1, n, seed);
    void *ctx = setup_ok(&rbtree__locks, &a);
    struct wl_thread *ts = aligned_alloc(SYNC_CACHELINE, (size_t)n * sizeof *ts);
    init_threads(ts, n, seed);
    run_threads(&rbtree__locks, ctx, ts, n, ops_each);
    for (int i = 0; i < n; i++)
        assert_int_equal(ts[i].ops, ops_each);
    check_ok(&rbtree__locks, ctx, ts, n);
    rbtree__locks.teardown(ctx);
    free(ts);
}

static void test_locks_four_threads_direct(void **state)
{
    (void)state;
    locks_threads(4, 16, 32, 100, 60000, 21);      /* a tiny, hot tree */
    locks_threads(4, 2000, 4000, 50, 60000, 22);
    locks_threads(3, 0, 8, 100, 60000, 23);
    /* Lock-free lookups among the updates, at 4 and 8 threads. */
    locks_threads(4, 1024, 2048, 20, 60000, 24);
    locks_threads(8, 64, 128, 50, 30000, 25);
    locks_threads(8, 1024, 2048, 20, 30000, 26);
}

static void test_validate(void **state)
{
    (void)state;
    char err[200] = "";
    struct wl_args a = test_args(100, 99, 20, 1, 1, 1);
    assert_int_not_equal(rbtree__seq.validate(&a, err, sizeof err), 0);
    assert_non_null(strstr(err, "99"));
    assert_int_not_equal(rbtree__locks.validate(&a, err, sizeof err), 0);
    a = test_args(100, 100, 20, 1, 1, 1);
    assert_int_equal(rbtree__seq.validate(&a, err, sizeof err), 0);
    a = test_args(100, 0, 20, 1, 1, 1);        /* 0: 2 x size */
    assert_int_equal(rbtree__seq.validate(&a, err, sizeof err), 0);
}

/* ---- corruption must be caught (generic layout from workloads/rbtree.h) ---- */

static struct rb_ctx *fresh(struct wl_thread *t)
{
    struct wl_args a = test_args(200, 400, 20, 1, 1, 5);
    struct rb_ctx *c = setup_ok(&rbtree__seq, &a);
    init_threads(t, 1, 5);
    check_ok(&rbtree__seq, c, t, 1);
    return c;
}

/* Some node at depth >= 2 with the given colour. */
static struct rb_node *find_colour(struct rb_node *n, int red, int depth)
{
    if (!n)
        return NULL;
    if (depth >= 2 && n->red == red)
        return n;
    struct rb_node *x = find_colour(n->link[0], red, depth + 1);
    return x ? x : find_colour(n->link[1], red, depth + 1);
}

static void test_check_catches_red_root(void **state)
{
    (void)state;
    struct wl_thread t;
    struct rb_ctx *c = fresh(&t);
    c->tree->root->red = 1;
    check_fails(&rbtree__seq, c, &t, 1, "root is red");
    rbtree__seq.teardown(c);
}

static void test_check_catches_red_red(void **state)
{
    (void)state;
    struct wl_thread t;
    struct rb_ctx *c = fresh(&t);
    struct rb_node *r = find_colour(c->tree->root, 1, 0);
    assert_non_null(r);
    r->parent->red = 1;                      /* a red node's parent made red */
    char msg[300] = "";
    assert_int_not_equal(rbtree__seq.check(c, &t, 1, msg, sizeof msg), 0);
    assert_true(strstr(msg, "red-red") || strstr(msg, "black heights"));
    rbtree__seq.teardown(c);
}

/* A red leaf (red, no children) somewhere at depth >= 2. */
static struct rb_node *find_red_leaf(struct rb_node *n, int depth)
{
    if (!n)
        return NULL;
    if (depth >= 2 && n->red && !n->link[0] && !n->link[1])
        return n;
    struct rb_node *x = find_red_leaf(n->link[0], depth + 1);
    return x ? x : find_red_leaf(n->link[1], depth + 1);
}

static void test_check_catches_black_height(void **state)
{
    (void)state;
    struct wl_thread t;
    struct rb_ctx *c = fresh(&t);
    /* A red leaf made black: no red-red pair, but one more black node on its paths. */
    struct rb_node *leaf = find_red_leaf(c->tree->root, 0);
    assert_non_null(leaf);
    leaf->red = 0;
    check_fails(&rbtree__seq, c, &t, 1, "unequal black heights");
    leaf->red = 1;
    check_ok(&rbtree__seq, c, &t, 1);
    /* A black inner node made red: red-red or unequal heights, either way caught. */
    struct rb_node *b = find_colour(c->tree->root, 0, 0);
    assert_non_null(b);
    b->red = 1;
    char msg[300] = "";
    assert_int_not_equal(rbtree__seq.check(c, &t, 1, msg, sizeof msg), 0);
    assert_true(strstr(msg, "black heights") || strstr(msg, "red-red"));
    rbtree__seq.teardown(c);
}

static void test_check_catches_order(void **state)
{
    (void)state;
    struct wl_thread t;
    struct rb_ctx *c = fresh(&t);
    struct rb_node *r = c->tree->root, *l = r->link[0];
    int64_t k = r->key;
    r->key = l->key;
    l->key = k;
    check_fails(&rbtree__seq, c, &t, 1, "out of order");
    rbtree__seq.teardown(c);
}

static void test_check_catches_parent(void **state)
{
    (void)state;
    struct wl_thread t;
    struct rb_ctx *c = fresh(&t);
    c->tree->root->link[1]->parent = c->tree->root->link[0];
    check_fails(&rbtree__seq, c, &t, 1, "parent");
    rbtree__seq.teardown(c);
}

static void test_check_catches_log_mismatch(void **state)
{
    (void)state;
    struct wl_thread t;
    struct rb_ctx *c = fresh(&t);
    int64_t present = c->tree->root->key;
    /* A logged successful delete of a key still in the tree. */
    oplog_record(c->tls[0].log, (uint64_t)present, -1);
    check_fails(&rbtree__seq, c, &t, 1, "imply it is absent");
    oplog_record(c->tls[0].log, (uint64_t)present, +1);
    check_ok(&rbtree__seq, c, &t, 1);
    /* Two logged inserts of a key that was already there. */
    oplog_record(c->tls[0].log, (uint64_t)present, +1);
    check_fails(&rbtree__seq, c, &t, 1, "no serial order");
    oplog_record(c->tls[0].log, (uint64_t)present, -1);
    /* A logged insert of a key that never made it into the tree. */
    int64_t absent = 0;
    while (absent < c->range) {
        int in = 0;
        for (size_t i = 0; i < c->ninitial; i++)
            in |= c->initial[i] == absent;
        if (!in)
            break;
        absent++;
    }
    assert_true(absent < c->range);
    oplog_record(c->tls[0].log, (uint64_t)absent, +1);
    check_fails(&rbtree__seq, c, &t, 1, "missing from the tree");
    rbtree__seq.teardown(c);
}

/* ---- through the harness ---- */

static int run(const char *rt, const char *threads, const char *const *extra)
{
    return tu_run_workload("rbtree", rt, threads, tu_path(0, "rbtree.csv"), extra);
}

static void expect_pass(const char *rt, const char *threads, const char *const *extra)
{
    int rc = run(rt, threads, extra);
    if (rc != 0)
        fail_msg("rbtree under %s with %s threads exited %d", rt, threads, rc);
}

static void test_harness_every_runtime(void **state)
{
    (void)state;
    static const char *const small[] = {"--ops", "20000", "--size", "256", NULL};
    static const char *const hot[] = {"--ops", "20000", "--size", "32", "--range", "64",
                                      "--update", "100", "--ops-per-tx", "4", NULL};
    static const char *const dur[] = {"--duration", "0.2", NULL};
    expect_pass("seq", "1", small);
    expect_pass("seq", "1", hot);
    expect_pass("seq", "1", dur);
    const char *rts[] = {"mutex", "gil", "locks", "stm"};
    for (int r = 0; r < 4; r++)
        for (int th = 1; th <= 2; th++) {
            const char *ts = th == 1 ? "1" : "2";
            expect_pass(rts[r], ts, small);
            expect_pass(rts[r], ts, hot);
            expect_pass(rts[r], ts, dur);
        }
    char *text = tu_read(tu_path(0, "rbtree.csv"), NULL);
    assert_non_null(text);
    assert_null(strstr(text, ",fail,"));
    free(text);
}

static void test_harness_bad_input(void **state)
{
    (void)state;
    static const char *const bad_range[] = {"--ops", "10", "--size", "100", "--range", "50", NULL};
    static const char *const bad_update[] = {"--ops", "10", "--update", "101", NULL};
    assert_int_equal(run("seq", "1", bad_range), 2);
    assert_int_equal(run("locks", "1", bad_range), 2);
    assert_int_equal(run("mutex", "1", bad_update), 2);
}

/* Randomized stress of the locks variant at 4 and 8 threads: seeds, sizes and mixes
 * vary. */
static void test_harness_locks_stress(void **state)
{
    (void)state;
    uint64_t s = 0x1234567ull;
    for (int i = 0; i < 8; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        char seed[32], size[32], range[32], update[32];
        long sz = 1 + (long)((s >> 20) % 3000);
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)(s >> 33));
        snprintf(size, sizeof size, "%ld", sz);
        snprintf(range, sizeof range, "%ld", sz + (long)((s >> 40) % (unsigned long)(2 * sz)));
        snprintf(update, sizeof update, "%d", 20 + (int)((s >> 50) % 81));
        const char *const args[] = {"--duration", "0.3", "--seed", seed, "--size", size,
                                    "--range", range, "--update", update, NULL};
        expect_pass("locks", i % 2 ? "8" : "4", args);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_seq_every_op),
        cmocka_unit_test(test_locks_every_op),
        cmocka_unit_test(test_seq_batches),
        cmocka_unit_test(test_locks_four_threads_direct),
        cmocka_unit_test(test_check_catches_red_root),
        cmocka_unit_test(test_check_catches_red_red),
        cmocka_unit_test(test_check_catches_black_height),
        cmocka_unit_test(test_check_catches_order),
        cmocka_unit_test(test_check_catches_parent),
        cmocka_unit_test(test_check_catches_log_mismatch),
        cmocka_unit_test_setup_teardown(test_harness_every_runtime, tu_setup_dir, tu_teardown_dir),
        cmocka_unit_test_setup_teardown(test_harness_bad_input, tu_setup_dir, tu_teardown_dir),
        cmocka_unit_test_setup_teardown(test_harness_locks_stress, tu_setup_dir, tu_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
