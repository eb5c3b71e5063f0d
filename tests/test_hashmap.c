/*
 * tests/test_hashmap.c - the hashmap workload.
 *  - Directly through its descriptors (seq and locks): random operations with the
 *    check after every operation, including --buckets 1 (one chain); the locks
 *    variant from 4 and 8 threads at once; knob validation.
 *  - The check catches corruption: a key in the wrong bucket, a duplicate key, and
 *    logs that disagree with the map.
 *  - Through the harness: seq at 1 thread; mutex, gil, locks and stm at 1 and 2
 *    threads (itm: tests/test_itm.c); a randomized stress of the locks variant at 4
 *    and 8 threads, with --buckets 1 among the cases.
 */
#define SYNC_RT seq
#include "runtime/sync.h"
#include "workloads/hashmap.h"
#include "workloads/workload.h"
#include "tests/stmbench_testutil.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "tests/wl_testutil.h"

extern const struct workload hashmap__seq, hashmap__locks;

static struct wl_args test_args(long size, long range, long update, long buckets,
                                int nthreads, uint64_t seed)
{
    struct wl_args a;
    memset(&a, 0, sizeof a);
    a.nthreads = nthreads;
    a.seed = seed;
    a.ops_per_tx = 1;
    a.ival[HM_KNOB_SIZE] = size;
    a.ival[HM_KNOB_RANGE] = range;
    a.ival[HM_KNOB_UPDATE] = update;
    a.ival[HM_KNOB_BUCKETS] = buckets;
    return a;
}

static void every_op_checked(const struct workload *w, long size, long range, long update,
                             long buckets, int nops, uint64_t seed)
{
    struct wl_args a = test_args(size, range, update, buckets, 1, seed);
    void *ctx = setup_ok(w, &a);
    struct wl_thread t;
    init_threads(&t, 1, seed);
    check_ok(w, ctx, &t, 1);
    for (int i = 0; i < nops; i++) {
        t.ops_target = t.ops + 1;
        w->thread_run(ctx, &t);
        check_ok(w, ctx, &t, 1);
    }
    assert_int_equal(t.ops, (uint64_t)nops);
    w->teardown(ctx);
}

static void test_every_op(void **state)
{
    (void)state;
    const struct workload *ws[] = {&hashmap__seq, &hashmap__locks};
    for (int i = 0; i < 2; i++) {
        every_op_checked(ws[i], 64, 128, 100, 16, 3000, 1);
        every_op_checked(ws[i], 64, 128, 100, 1, 3000, 2);     /* one chain */
        every_op_checked(ws[i], 0, 8, 100, 1024, 2000, 3);     /* more buckets than keys */
        every_op_checked(ws[i], 200, 200, 50, 7, 2000, 4);     /* full range */
    }
}

static void locks_threads(int n, long size, long range, long update, long buckets,
                          uint64_t ops_each, uint64_t seed)
{
    struct wl_args a = test_args(size, range, update, buckets, n, seed);
    void *ctx = setup_ok(&hashmap__locks, &a);
    struct wl_thread *ts = aligned_alloc(SYNC_CACHELINE, (size_t)n * sizeof *ts);
    init_threads(ts, n, seed);
    run_threads(&hashmap__locks, ctx, ts, n, ops_each);
    check_ok(&hashmap__locks, ctx, ts, n);
    hashmap__locks.teardown(ctx);
    free(ts);
}

static void test_locks_four_threads_direct(void **state)
{
    (void)state;
    locks_threads(4, 64, 128, 100, 1, 50000, 11);     /* every key in one bucket */
    locks_threads(4, 64, 128, 100, 2, 50000, 12);
    locks_threads(4, 2000, 4000, 50, 1024, 100000, 13);
    /* Lock-free lookups among the updates, at 4 and 8 threads. */
    locks_threads(4, 64, 128, 50, 1, 50000, 14);
    locks_threads(8, 1024, 2048, 20, 16, 50000, 15);
    locks_threads(8, 1024, 2048, 20, 131072, 50000, 16);
}

static void test_validate(void **state)
{
    (void)state;
    char err[200] = "";
    struct wl_args a = test_args(100, 99, 20, 16, 1, 1);
    assert_int_not_equal(hashmap__seq.validate(&a, err, sizeof err), 0);
    assert_non_null(strstr(err, "99"));
    assert_int_not_equal(hashmap__locks.validate(&a, err, sizeof err), 0);
    a = test_args(100, 0, 20, 16, 1, 1);
    assert_int_equal(hashmap__seq.validate(&a, err, sizeof err), 0);
}

/* ---- corruption must be caught (generic layout from workloads/hashmap.h) ---- */

static struct hm_ctx *fresh(struct wl_thread *t)
{
    struct wl_args a = test_args(200, 400, 20, 16, 1, 5);
    struct hm_ctx *c = setup_ok(&hashmap__seq, &a);
    init_threads(t, 1, 5);
    check_ok(&hashmap__seq, c, t, 1);
    return c;
}

static void test_check_catches_wrong_bucket(void **state)
{
    (void)state;
    struct wl_thread t;
    struct hm_ctx *c = fresh(&t);
    /* Move the head node of bucket 0 to the front of bucket 1. */
    struct hm_bucket *b0 = c->buckets[0], *b1 = c->buckets[1];
    struct hm_node *n = b0->head;
    assert_non_null(n);
    b0->head = n->next;
    n->next = b1->head;
    b1->head = n;
    check_fails(&hashmap__seq, c, &t, 1, "hashes to bucket 0");
    hashmap__seq.teardown(c);
}

static void test_check_catches_duplicate(void **state)
{
    (void)state;
    struct wl_thread t;
    struct hm_ctx *c = fresh(&t);
    struct hm_bucket *b = c->buckets[3];
    assert_non_null(b->head);
    struct hm_node *dup = SYNC_ALLOC(struct hm_node);
    dup->key = b->head->key;
    dup->next = b->head;
    b->head = dup;
    check_fails(&hashmap__seq, c, &t, 1, "twice");
    hashmap__seq.teardown(c);
}

static void test_check_catches_log_mismatch(void **state)
{
    (void)state;
    struct wl_thread t;
    struct hm_ctx *c = fresh(&t);
    int64_t present = c->buckets[0]->head->key;
    oplog_record(c->tls[0].log, (uint64_t)present, -1);
    check_fails(&hashmap__seq, c, &t, 1, "imply it is absent");
    oplog_record(c->tls[0].log, (uint64_t)present, +1);
    check_ok(&hashmap__seq, c, &t, 1);
    /* A key silently dropped from its chain. */
    struct hm_node *n = c->buckets[5]->head;
    assert_non_null(n);
    c->buckets[5]->head = n->next;
    char want[64];
    snprintf(want, sizeof want, "key %lld is missing from the map", (long long)n->key);
    check_fails(&hashmap__seq, c, &t, 1, want);
    SYNC_FREE(n);
    hashmap__seq.teardown(c);
}

/* ---- through the harness ---- */

static int run(const char *rt, const char *threads, const char *const *extra)
{
    return tu_run_workload("hashmap", rt, threads, tu_path(0, "hashmap.csv"), extra);
}

static void expect_pass(const char *rt, const char *threads, const char *const *extra)
{
    int rc = run(rt, threads, extra);
    if (rc != 0)
        fail_msg("hashmap under %s with %s threads exited %d", rt, threads, rc);
}

static void test_harness_every_runtime(void **state)
{
    (void)state;
    static const char *const small[] = {"--ops", "20000", "--size", "256", NULL};
    static const char *const one[] = {"--ops", "20000", "--size", "64", "--buckets", "1",
                                      "--update", "100", "--ops-per-tx", "4", NULL};
    static const char *const dur[] = {"--duration", "0.2", NULL};
    expect_pass("seq", "1", small);
    expect_pass("seq", "1", one);
    expect_pass("seq", "1", dur);
    const char *rts[] = {"mutex", "gil", "locks", "stm"};
    for (int r = 0; r < 4; r++)
        for (int th = 1; th <= 2; th++) {
            const char *ts = th == 1 ? "1" : "2";
            expect_pass(rts[r], ts, small);
            expect_pass(rts[r], ts, one);
            expect_pass(rts[r], ts, dur);
        }
    char *text = tu_read(tu_path(0, "hashmap.csv"), NULL);
    assert_non_null(text);
    assert_null(strstr(text, ",fail,"));
    free(text);
}

static void test_harness_bad_input(void **state)
{
    (void)state;
    static const char *const bad_range[] = {"--ops", "10", "--size", "100", "--range", "50", NULL};
    static const char *const bad_buckets[] = {"--ops", "10", "--buckets", "0", NULL};
    assert_int_equal(run("seq", "1", bad_range), 2);
    assert_int_equal(run("locks", "1", bad_range), 2);
    assert_int_equal(run("gil", "1", bad_buckets), 2);
}

static void test_harness_locks_stress(void **state)
{
    (void)state;
    uint64_t s = 0x7654321ull;
    for (int i = 0; i < 8; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        char seed[32], size[32], range[32], update[32], buckets[32];
        long sz = 1 + (long)((s >> 20) % 3000);
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)(s >> 33));
        snprintf(size, sizeof size, "%ld", sz);
        snprintf(range, sizeof range, "%ld", sz + (long)((s >> 40) % (unsigned long)(2 * sz)));
        snprintf(update, sizeof update, "%d", 20 + (int)((s >> 50) % 81));
        snprintf(buckets, sizeof buckets, "%d", i % 3 == 0 ? 1 : 1 + (int)((s >> 12) % 2048));
        const char *const args[] = {"--duration", "0.3", "--seed", seed, "--size", size,
                                    "--range", range, "--update", update, "--buckets", buckets,
                                    NULL};
        expect_pass("locks", i % 2 ? "8" : "4", args);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_every_op),
        cmocka_unit_test(test_locks_four_threads_direct),
        cmocka_unit_test(test_check_catches_wrong_bucket),
        cmocka_unit_test(test_check_catches_duplicate),
        cmocka_unit_test(test_check_catches_log_mismatch),
        cmocka_unit_test_setup_teardown(test_harness_every_runtime, tu_setup_dir, tu_teardown_dir),
        cmocka_unit_test_setup_teardown(test_harness_bad_input, tu_setup_dir, tu_teardown_dir),
        cmocka_unit_test_setup_teardown(test_harness_locks_stress, tu_setup_dir, tu_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
