/*
 * tests/wl_testutil.h - helpers for the tests that drive a workload's descriptors
 * directly (test_rbtree, test_hashmap, test_compose): per-thread state, setup and
 * check with cmocka assertions, and n threads running one copy at once. Include after
 * <cmocka.h> and workloads/workload.h, in one source file per test program (all static).
 */
#ifndef WL_TESTUTIL_H
#define WL_TESTUTIL_H

#include "workloads/workload.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static atomic_int no_stop;

/* n threads' state, seeded from seed, never told to stop (they run to ops_target). */
static __attribute__((unused)) void init_threads(struct wl_thread *ts, int n, uint64_t seed)
{
    memset(ts, 0, (size_t)n * sizeof *ts);
    for (int i = 0; i < n; i++) {
        ts[i].tid = i;
        ts[i].nthreads = n;
        ts[i].rng = seed * 0x9E3779B97F4A7C15ull + (uint64_t)i + 1;
        ts[i].stop = &no_stop;
    }
}

static __attribute__((unused)) void *setup_ok(const struct workload *w, const struct wl_args *a)
{
    char err[200] = "";
    assert_int_equal(w->validate(a, err, sizeof err), 0);
    void *ctx = w->setup(a, err, sizeof err);
    if (!ctx)
        fail_msg("setup failed: %s", err);
    return ctx;
}

/* The check passes, and no thread recorded a failure during the run. */
static __attribute__((unused)) void check_ok(const struct workload *w, void *ctx,
                                             struct wl_thread *ts, int n)
{
    char msg[300] = "";
    if (w->check(ctx, ts, n, msg, sizeof msg) != 0)
        fail_msg("%s/%s: check failed: %s", w->name, w->runtime, msg);
    for (int i = 0; i < n; i++)
        if (ts[i].failed)
            fail_msg("%s/%s: thread %d failed: %s", w->name, w->runtime, i, ts[i].fail_msg);
}

static __attribute__((unused)) void check_fails(const struct workload *w, void *ctx,
                                                struct wl_thread *ts, int n, const char *expect)
{
    char msg[300] = "";
    assert_int_not_equal(w->check(ctx, ts, n, msg, sizeof msg), 0);
    if (!strstr(msg, expect))
        fail_msg("check message \"%s\" does not mention \"%s\"", msg, expect);
}

struct wl_tu_runner {
    const struct workload *w;
    void *ctx;
    struct wl_thread *t;
};

static void *wl_tu_runner_main(void *p)
{
    struct wl_tu_runner *r = p;
    r->w->thread_run(r->ctx, r->t);
    return NULL;
}

/* Threads ts[0..n) (up to 64) run w's copy at once, each to ops_each operations. */
static __attribute__((unused)) void run_threads(const struct workload *w, void *ctx,
                                                struct wl_thread *ts, int n, uint64_t ops_each)
{
    pthread_t th[64];
    struct wl_tu_runner rs[64];
    assert_true(n <= 64);
    for (int i = 0; i < n; i++) {
        ts[i].ops_target = ops_each;
        rs[i] = (struct wl_tu_runner){w, ctx, &ts[i]};
        assert_int_equal(pthread_create(&th[i], NULL, wl_tu_runner_main, &rs[i]), 0);
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
}

#endif
