/*
 * tests/test_breakdown.c - the time breakdown (runtime/timeacct.h) of every runtime
 * but the STM's protocol steps (tests/test_breakdown_stm.c has those):
 *  - a run of each runtime: the time_* columns add up to thread_time_ns within 2%,
 *    the threads' time is the run's (threads x duration, never more), a runtime shows
 *    time only in its own categories, and the op_* percentiles are ordered;
 *  - stepped waits land where they belong: a thread held at the GIL for 50 ms shows
 *    at least that in wait_gil; a dropper's hand-off shows in handoff; a thread held
 *    at a spin lock for 30 ms shows it in wait_lock; gil rbtree on 2 threads shows its
 *    hand-off stalls in op_max_ns (and in op_p99_999_ns where they are frequent
 *    enough to be one iteration in 100,000);
 *  - the op latency's two strata (sampled windows, exact stalls) weigh as they should.
 * Threads are stepped with semaphores and by polling the waiter's own state (it is in
 * its timed wait before the holder starts its sleep), so the only timing assertions are
 * lower bounds on waits the test injected itself.
 */
#define SYNC_RT gil
#include "runtime/sync.h"
#include "runtime/timeacct.h"
#include "tests/stmbench_testutil.h"
#include "workloads/lib/wl_spin.h"

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include <cmocka.h>

#include "tests/breakdown_testutil.h"

/* ---- one run per runtime, from the CSV ---- */

static uint64_t field_u64(const char *csv, const char *col)
{
    char f[64];
    if (tu_field(csv, 0, col, f, sizeof f) != 0)
        fail_msg("no column %s", col);
    return strtoull(f, NULL, 10);
}

/* The categories each runtime may show time in (the others must read 0). */
static int allowed(const char *rt, int cat)
{
    if (cat == TA_OUTSIDE || cat == TA_WORK)
        return 1;
    if (strcmp(rt, "stm") == 0)
        return cat != TA_WAIT_GIL && cat != TA_HANDOFF;
    if (strcmp(rt, "gil") == 0)
        return cat == TA_WAIT_GIL || cat == TA_HANDOFF;
    if (strcmp(rt, "mutex") == 0 || strcmp(rt, "locks") == 0)
        return cat == TA_WAIT_LOCK;
    return 0;   /* seq, itm, htm: inside and outside blocks only */
}

static void check_run(const char *rt, const char *wl)
{
    const char *csv = tu_path(0, "runs.csv");
    unlink(csv);
    const char *threads = strcmp(rt, "seq") == 0 ? "1" : "2";
    const char *extra[] = {"--duration", "0.3", NULL};
    int rc = tu_run_workload(wl, rt, threads, csv, extra);
    if (rc == 3 && strcmp(rt, "htm") == 0) {
        print_message("htm %s: not run (no working RTM on this CPU)\n", wl);
        return;
    }
    assert_int_equal(rc, 0);
    char *text = tu_read(csv, NULL);
    assert_non_null(text);
    uint64_t tt = field_u64(text, "thread_time_ns"), sum = 0;
    char col[64];
    for (int c = 0; c < TA_NCAT; c++) {
        snprintf(col, sizeof col, "time_%s_ns", ta_cat_name(c));
        uint64_t v = field_u64(text, col);
        if (!allowed(rt, c) && v != 0)
            fail_msg("%s %s: %s = %llu, but the runtime has no such state", rt, wl, col,
                     (unsigned long long)v);
        sum += v;
    }
    char f[64];
    assert_int_equal(tu_field(text, 0, "duration_s", f, sizeof f), 0);
    double run_ns = strtod(f, NULL) * 1e9 * atoi(threads);
    /* the categories add up to the threads' time ... */
    if (sum < tt * 0.98 || sum > tt * 1.02)
        fail_msg("%s %s: categories sum to %llu ns, thread time %llu ns", rt, wl,
                 (unsigned long long)sum, (unsigned long long)tt);
    /* ... which is the run's: each thread's window lies within start gate .. join */
    if (tt > run_ns * 1.001 + 1e6 || tt < run_ns * 0.5)
        fail_msg("%s %s: thread time %llu ns, threads x duration %.0f ns", rt, wl,
                 (unsigned long long)tt, run_ns);
    assert_true(field_u64(text, "time_work_ns") > 0);
    uint64_t p50 = field_u64(text, "op_p50_ns"), p99 = field_u64(text, "op_p99_ns"),
             p999 = field_u64(text, "op_p99_9_ns"), p9999 = field_u64(text, "op_p99_99_ns"),
             p99999 = field_u64(text, "op_p99_999_ns"), mx = field_u64(text, "op_max_ns");
    assert_true(p50 > 0);
    assert_true(p50 <= p99 && p99 <= p999 && p999 <= p9999 && p9999 <= p99999 &&
                p99999 <= mx);
    free(text);
}

static void test_sums_every_runtime(void **state)
{
    (void)state;
    const struct sync_runtime *rt;
    for (int i = 0; (rt = sync_runtime_nth(i)); i++) {
        check_run(rt->name, "rbtree");
        check_run(rt->name, "bank");
    }
}

/* gil rbtree on 2 threads: each hand-off is a wait of at least one switch interval
 * (5 ms: a waiter asks only after a whole interval without a switch), and the op
 * latency's max includes it. */
static void test_gil_op_max_shows_handoffs(void **state)
{
    (void)state;
    const char *csv = tu_path(0, "gil.csv");
    unlink(csv);
    const char *extra[] = {"--duration", "0.3", NULL};
    assert_int_equal(tu_run_workload("rbtree", "gil", "2", csv, extra), 0);
    char *text = tu_read(csv, NULL);
    assert_non_null(text);
    assert_true(field_u64(text, "gil_handoffs") > 0);
    assert_true(field_u64(text, "time_wait_gil_ns") >= 5 * MS);
    assert_true(field_u64(text, "time_handoff_ns") > 0);
    assert_true(field_u64(text, "op_max_ns") >= 1 * MS);
    /* every hand-off's waiter met a stall of a switch interval: each is an iteration
     * counted exactly, and where they are more than one iteration in 100,000 (1.2 for
     * the rounding of the windows' count: commits include the up to 127 iterations
     * after a thread's last window) the 99.999th percentile is one. Measured: 385
     * stalls in 22 M iterations (1.75 in 100,000) in a 2 s run. */
    uint64_t stalls = field_u64(text, "op_stalls"), commits = field_u64(text, "commits");
    assert_true(stalls >= 1);
    if ((double)stalls >= 1.2e-5 * (double)commits + 2)
        assert_true(field_u64(text, "op_p99_999_ns") >= 1 * MS);
    free(text);
}

/* The two strata of the operation latency (timeacct.h): 1,000 windows of 100 ns, each
 * standing for TA_WINDOW_EVERY iterations, and 5 stalls of 5 ms counted exactly. Of
 * 128,005 iterations the 5 stalls are the top 0.0039%: above the 99.99th percentile,
 * below the 99.999th (rank 128,003.7). */
static void test_op_quantile_strata(void **state)
{
    (void)state;
    struct sync_stats s;
    memset(&s, 0, sizeof s);
    for (int i = 0; i < 1000; i++)
        lat_add(&s.op_hist, 100);
    for (int i = 0; i < 5; i++)
        lat_add(&s.op_stall_hist, 5 * MS);
    assert_int_equal(TA_WINDOW_EVERY, 128);
    assert_int_equal(sync_op_quantile(&s, TA_WINDOW_EVERY, 0.5), lat_bucket_low(lat_bucket(100)));
    assert_int_equal(sync_op_quantile(&s, TA_WINDOW_EVERY, 0.9999), lat_bucket_low(lat_bucket(100)));
    assert_int_equal(sync_op_quantile(&s, TA_WINDOW_EVERY, 0.99999),
                     lat_bucket_low(lat_bucket(5 * MS)));
    assert_true(sync_op_quantile(&s, TA_WINDOW_EVERY, 0.99999) >= 4 * MS);
    /* unweighted (each window one iteration), the stalls would be 0.5%: p99 */
    assert_int_equal(lat_quantile2(&s.op_hist, 1, &s.op_stall_hist, 1, 0.999),
                     lat_bucket_low(lat_bucket(5 * MS)));
    /* empty: 0 */
    struct sync_stats e;
    memset(&e, 0, sizeof e);
    assert_int_equal(sync_op_quantile(&e, TA_WINDOW_EVERY, 0.5), 0);
}

/* ---- stepped: a thread held 50 ms at the GIL ---- */

static sem_t g_entered;
static struct sync_stats g_st[2];

static void gil_up(uint64_t interval_us)
{
    char err[200];
    struct sync_config cfg = {.nthreads = 2, .seed = 1, .gil_interval_us = interval_us};
    assert_int_equal(sync_runtime_gil.init(&cfg, err, sizeof err), 0);
    memset(g_st, 0, sizeof g_st);
    bd_ta[0] = bd_ta[1] = NULL;
    bd_poll_failed = 0;
    sem_init(&g_entered, 0, 0);
}

static void gil_enter(int tid)
{
    char err[200];
    if (sync_runtime_gil.thread_enter(tid, err, sizeof err) != 0)
        abort();
}

static void *held_holder(void *arg)
{
    (void)arg;
    gil_enter(0);
    sem_post(&g_entered);
    bd_await_timed(1, TA_WAIT_GIL);             /* thread 1 is waiting for the GIL */
    bd_sleep_ms(50);                            /* holding it */
    sync_runtime_gil.thread_exit(NULL);
    return NULL;
}

static void *held_waiter(void *arg)
{
    (void)arg;
    sem_wait(&g_entered);
    ta_thread_start();
    bd_ta[1] = &ta_self;
    gil_enter(1);                            /* waits until thread 0 leaves */
    ta_thread_stop(&g_st[1]);
    sync_runtime_gil.thread_exit(&g_st[1]);
    return NULL;
}

static void test_gil_held_50ms_is_wait_gil(void **state)
{
    (void)state;
    gil_up(1000);
    pthread_t th[2];
    pthread_create(&th[0], NULL, held_holder, NULL);
    pthread_create(&th[1], NULL, held_waiter, NULL);
    pthread_join(th[0], NULL);
    pthread_join(th[1], NULL);
    sync_runtime_gil.fini();
    assert_false(bd_poll_failed);
    if (g_st[1].time_ns[TA_WAIT_GIL] < 45 * MS)
        fail_msg("held 50 ms at the GIL, wait_gil %llu ns",
                 (unsigned long long)g_st[1].time_ns[TA_WAIT_GIL]);
    assert_true(g_st[1].gil_wait_ns >= 45 * MS);
    bd_assert_sum(&g_st[1]);
    sync_stats_free(&g_st[1]);
}

/* ---- gil: the window's block hooks, nested blocks in and out of a window ---- */

/* The GIL's block end tests only its depth: a block begun in a window carries a bias
 * its end must take off (sync_gil.h). Nested blocks, in a window and out of one, must
 * leave the depth at 0, count one commit per outermost block, time the window's block
 * as work once, and keep sync_tick from dropping the GIL inside any block. */
static void window_nesting(void)
{
    ta_thread_start();
    gil_enter(0);
    uint64_t c0 = gil_self.stats.commits;
    ta_window_start();
    SYNC_LOOP_WINDOW(1);
    SYNC_ATOMIC("test.window.outer") {
        assert_int_equal(ta_self.depth, 1);
        assert_true(gil_self.depth > 1);        /* the bias: the end is not at 0 */
        SYNC_ATOMIC("test.window.inner") {
            assert_int_equal(ta_self.depth, 2);
            bd_sleep_ms(2);                   /* work, in the window's block */
        }
        assert_int_equal(ta_self.depth, 1);
        assert_int_equal(gil_self.stats.commits, c0);   /* not yet: still inside */
    }
    assert_int_equal(ta_self.depth, 0);
    assert_int_equal(gil_self.depth, 0);
    assert_int_equal(gil_self.stats.commits, c0 + 1);
    ta_window_block_done();
    uint64_t block_ns = ta_window_stop();
    SYNC_LOOP_WINDOW(0);
    assert_true(block_ns >= 2 * MS);
    assert_int_equal(ta_self.windows, 1);
    uint64_t work = ta_self.sampled[TA_WORK] + ta_self.sampled_spoiled[TA_WORK];
    double work_ns = (double)work * ta_ns_per_tick();
    if (work_ns < 2 * MS || work_ns > 50 * MS)
        fail_msg("the window's 2 ms block shows %.0f ns of work", work_ns);
    /* out of a window: nested blocks cost no hook and still count one commit */
    SYNC_ATOMIC("test.nowindow.outer") {
        assert_int_equal(gil_self.depth, 1);
        SYNC_ATOMIC("test.nowindow.inner") {
            assert_int_equal(gil_self.depth, 2);
        }
        assert_int_equal(gil_self.depth, 1);
    }
    assert_int_equal(gil_self.depth, 0);
    assert_int_equal(ta_self.depth, 0);
    assert_int_equal(gil_self.stats.commits, c0 + 2);
    ta_thread_stop(&g_st[0]);
    sync_runtime_gil.thread_exit(&g_st[0]);
}

static void test_gil_window_nesting(void **state)
{
    (void)state;
    gil_up(1000);
    window_nesting();    /* on this thread: cmocka's asserts must fail here */
    sync_runtime_gil.fini();
    assert_int_equal(g_st[0].commits, 2);
    bd_assert_sum(&g_st[0]);
    sync_stats_free(&g_st[0]);
}

/* ---- stepped: a holder that drops on request times its hand-off ---- */

static void *drop_holder(void *arg)
{
    (void)arg;
    ta_thread_start();
    bd_ta[0] = &ta_self;
    gil_enter(0);
    sem_post(&g_entered);
    /* relaxed: a hint; we hold the GIL, so a set request stays set until we drop */
    while (!atomic_load_explicit(&gil_drop_request, memory_order_relaxed))
        sched_yield();
    sync_tick();                             /* hands over, waits, takes it back */
    ta_thread_stop(&g_st[0]);
    sync_runtime_gil.thread_exit(&g_st[0]);
    return NULL;
}

static void *drop_waiter(void *arg)
{
    (void)arg;
    sem_wait(&g_entered);
    gil_enter(1);
    bd_sleep_ms(20);                            /* holds it while thread 0 waits */
    sync_runtime_gil.thread_exit(NULL);
    return NULL;
}

static void test_gil_drop_is_handoff_then_wait(void **state)
{
    (void)state;
    gil_up(1000);
    pthread_t th[2];
    pthread_create(&th[0], NULL, drop_holder, NULL);
    pthread_create(&th[1], NULL, drop_waiter, NULL);
    pthread_join(th[0], NULL);
    pthread_join(th[1], NULL);
    sync_runtime_gil.fini();
    /* from its drop until thread 1 held the GIL: hand-off; then it waited while
     * thread 1 held it for 20 ms */
    assert_true(g_st[0].time_ns[TA_HANDOFF] > 0);
    assert_true(g_st[0].time_ns[TA_WAIT_GIL] > 0);
    assert_true(g_st[0].time_ns[TA_HANDOFF] + g_st[0].time_ns[TA_WAIT_GIL] >= 20 * MS);
    bd_assert_sum(&g_st[0]);
    sync_stats_free(&g_st[0]);
}

/* ---- stepped: a thread held 30 ms at a spin lock (the locks runtime's lock) ---- */

static wl_spin_t g_lock;
static struct sync_stats g_spin_st;

static void *spin_holder(void *arg)
{
    (void)arg;
    wl_spin_lock(&g_lock);
    sem_post(&g_entered);
    bd_await_timed(1, TA_WAIT_LOCK);            /* thread 1 is waiting for the lock */
    bd_sleep_ms(30);
    wl_spin_unlock(&g_lock);
    return NULL;
}

static void *spin_waiter(void *arg)
{
    (void)arg;
    sem_wait(&g_entered);
    ta_thread_start();
    bd_ta[1] = &ta_self;
    wl_spin_lock(&g_lock);
    wl_spin_unlock(&g_lock);
    ta_thread_stop(&g_spin_st);
    return NULL;
}

static void test_spin_lock_held_30ms_is_wait_lock(void **state)
{
    (void)state;
    wl_spin_init(&g_lock);
    memset(&g_spin_st, 0, sizeof g_spin_st);
    bd_ta[0] = bd_ta[1] = NULL;
    bd_poll_failed = 0;
    sem_init(&g_entered, 0, 0);
    pthread_t th[2];
    pthread_create(&th[0], NULL, spin_holder, NULL);
    pthread_create(&th[1], NULL, spin_waiter, NULL);
    pthread_join(th[0], NULL);
    pthread_join(th[1], NULL);
    assert_false(bd_poll_failed);
    if (g_spin_st.time_ns[TA_WAIT_LOCK] < 27 * MS)
        fail_msg("held 30 ms at a spin lock, wait_lock %llu ns",
                 (unsigned long long)g_spin_st.time_ns[TA_WAIT_LOCK]);
    bd_assert_sum(&g_spin_st);
    sync_stats_free(&g_spin_st);
}

/* Past SYNC_CONFLICTS_CAP rows a thread keeps a weighted sample: the rows stay at most
 * the cap, their weights add up to the aborts offered (to within one stride), and
 * merging the threads keeps each one's rows and sums what they saw. */
static void test_conflict_log_is_bounded(void **state)
{
    (void)state;
    struct sync_stats a, b, total;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&total, 0, sizeof total);
    const uint64_t n = 3 * (uint64_t)SYNC_CONFLICTS_CAP + 7;
    for (uint64_t i = 0; i < n; i++) {
        struct sync_conflict c = {.t_ns = i, .thread = 0, .other = 1};
        sync_stats_add_conflict(&a, &c);
    }
    assert_true(a.nconflicts <= SYNC_CONFLICTS_CAP);
    assert_int_equal(a.conflicts_seen, n);
    assert_true(a.conflicts_stride >= 4);
    uint64_t w = 0;
    for (size_t i = 0; i < a.nconflicts; i++)
        w += a.conflicts[i].weight;
    assert_true(w <= n && n - w < a.conflicts_stride);
    for (int i = 0; i < 5; i++) {
        struct sync_conflict c = {.t_ns = (uint64_t)i, .thread = 1, .other = 0};
        sync_stats_add_conflict(&b, &c);
    }
    size_t na = a.nconflicts;
    sync_stats_merge(&total, &a);
    sync_stats_merge(&total, &b);
    assert_int_equal(total.nconflicts, na + 5);
    assert_int_equal(total.conflicts_seen, n + 5);
    assert_int_equal(total.conflicts[na].thread, 1);
    assert_int_equal(total.conflicts[na].weight, 1);
    sync_stats_free(&total);
}

/* Waits become rows by pair and window (common.h, SYNC_WAIT_WINDOW_NS): the waits of
 * one pair in one window make one row (weight their count, wasted_ns their sum, t_ns
 * the first's); a new window, or more open pairs than the table keeps, closes the open
 * ones in t_ns order; a merge closes what is open; aborts stay one row each. */
static void test_waits_aggregate(void **state)
{
    (void)state;
    static const char lk_a[] = "a", lk_b[] = "b";
    struct sync_stats s, total;
    memset(&s, 0, sizeof s);
    memset(&total, 0, sizeof total);
    const uint64_t W = SYNC_WAIT_WINDOW_NS;
    /* window 0: pair A three times, pair B (another site) twice, interleaved */
    for (int i = 0; i < 5; i++) {
        struct sync_conflict c = {.t_ns = 10 + (uint64_t)i, .thread = 0, .other = 1,
                                  .kind = SYNC_KIND_LOCK_WAIT, .object = 64,
                                  .site = i % 2 ? lk_b : lk_a, .where = 7,
                                  .wasted_ns = 100 + (uint64_t)i};
        sync_stats_add_wait(&s, &c);
    }
    assert_int_equal(s.nconflicts, 0);            /* still open */
    /* an abort is a row at once */
    struct sync_conflict ab = {.t_ns = 20, .kind = SYNC_ABORT_WRITE_WRITE, .wasted_ns = 9};
    sync_stats_add_conflict(&s, &ab);
    assert_int_equal(s.nconflicts, 1);
    /* window 1: pair A again closes window 0's two rows */
    struct sync_conflict a1 = {.t_ns = W + 5, .thread = 0, .other = 1,
                               .kind = SYNC_KIND_LOCK_WAIT, .object = 64, .site = lk_a,
                               .where = 7, .wasted_ns = 50};
    sync_stats_add_wait(&s, &a1);
    assert_int_equal(s.nconflicts, 3);
    const struct sync_conflict *r = &s.conflicts[1];
    assert_ptr_equal(r[0].site, lk_a);            /* first wait at t 10 */
    assert_int_equal(r[0].t_ns, 10);
    assert_int_equal(r[0].weight, 3);
    assert_int_equal(r[0].wasted_ns, 100 + 102 + 104);
    assert_ptr_equal(r[1].site, lk_b);
    assert_int_equal(r[1].t_ns, 11);
    assert_int_equal(r[1].weight, 2);
    assert_int_equal(r[1].wasted_ns, 101 + 103);
    /* a different holder, location or object is another pair */
    struct sync_conflict a2 = a1;
    a2.t_ns = W + 6;
    a2.other = 2;
    sync_stats_add_wait(&s, &a2);
    a2.other = 1;
    a2.other_where = 3;
    sync_stats_add_wait(&s, &a2);
    a2.other_where = 0;
    a2.object = 128;
    sync_stats_add_wait(&s, &a2);
    sync_stats_add_wait(&s, &a1);
    assert_int_equal(s.waits_open->n, 4);
    /* the merge closes them: 4 more rows, a1's pair weighing 2 */
    sync_stats_merge(&total, &s);
    assert_int_equal(total.nconflicts, 7);
    assert_int_equal(total.conflicts[3].weight, 2);
    assert_int_equal(total.conflicts[3].wasted_ns, 100);
    uint64_t w = 0;
    for (size_t i = 0; i < total.nconflicts; i++)
        w += total.conflicts[i].weight;
    assert_int_equal(w, 1 + 5 + 5);
    assert_int_equal(total.conflicts_seen, 11);
    sync_stats_free(&total);
    /* more pairs than the table keeps open: closed early, none lost. Pair p differs
     * from the others in one field only (object, holder, either site or location), so a
     * comparison that ignores a field merges pairs that meet in the table. */
    memset(&s, 0, sizeof s);
    enum { NPAIRS = 3 * SYNC_WAIT_SLOTS };
    uint32_t per_pair[NPAIRS + 1] = {0};
    static const char lab[NPAIRS + 1];         /* &lab[p]: pair p's site label */
    for (unsigned i = 0; i < 2 * NPAIRS; i++) {
        uint32_t p = 1 + i % NPAIRS;
        struct sync_conflict c = {.t_ns = i, .kind = SYNC_KIND_LOCK_WAIT, .wasted_ns = 1,
                                  .object = p % 6 == 0 ? 8 * (uint64_t)p : 0,
                                  .other = p % 6 == 1 ? (int32_t)p : 0,
                                  .where = p % 6 == 2 ? p : 0,
                                  .other_where = p % 6 == 3 ? p : 0,
                                  .site = p % 6 == 4 ? &lab[p] : NULL,
                                  .other_site = p % 6 == 5 ? &lab[p] : NULL};
        sync_stats_add_wait(&s, &c);
        assert_true(s.waits_open->n <= SYNC_WAIT_SLOTS * 3 / 4);
    }
    sync_stats_close_waits(&s);
    w = 0;
    uint64_t ns = 0;
    for (size_t i = 0; i < s.nconflicts; i++) {
        const struct sync_conflict *c = &s.conflicts[i];
        uint64_t p = c->object / 8 + (uint64_t)c->other + c->where + c->other_where +
                     (c->site ? (uint64_t)(c->site - lab) : 0) +
                     (c->other_site ? (uint64_t)(c->other_site - lab) : 0);
        assert_true(p >= 1 && p <= NPAIRS);
        per_pair[p] += c->weight;
        w += c->weight;
        ns += c->wasted_ns;
        assert_true(i == 0 || c->t_ns >= s.conflicts[i - 1].t_ns);
    }
    for (unsigned p = 1; p <= NPAIRS; p++)
        assert_int_equal(per_pair[p], 2);
    assert_int_equal(w, 2 * NPAIRS);
    assert_int_equal(ns, 2 * NPAIRS);
    sync_stats_free(&s);
}

/* Sampled rows carry the time of the events they stand for: past the cap, the sum of
 * wasted_ns stays within a stride of the time offered (each abort 10 ns here). */
static void test_sampled_rows_keep_time(void **state)
{
    (void)state;
    struct sync_stats a;
    memset(&a, 0, sizeof a);
    const uint64_t n = 3 * (uint64_t)SYNC_CONFLICTS_CAP + 7;
    for (uint64_t i = 0; i < n; i++) {
        struct sync_conflict c = {.t_ns = i, .wasted_ns = 10};
        sync_stats_add_conflict(&a, &c);
    }
    assert_true(a.conflicts_stride >= 4);
    uint64_t ns = 0;
    for (size_t i = 0; i < a.nconflicts; i++) {
        ns += a.conflicts[i].wasted_ns;
        assert_int_equal(a.conflicts[i].wasted_ns, 10 * (uint64_t)a.conflicts[i].weight);
    }
    assert_true(ns <= 10 * n && 10 * n - ns < 10 * (uint64_t)a.conflicts_stride);
    sync_stats_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sums_every_runtime, tu_setup_dir, tu_teardown_dir),
        cmocka_unit_test_setup_teardown(test_gil_op_max_shows_handoffs, tu_setup_dir,
                                        tu_teardown_dir),
        cmocka_unit_test(test_op_quantile_strata),
        cmocka_unit_test(test_conflict_log_is_bounded),
        cmocka_unit_test(test_waits_aggregate),
        cmocka_unit_test(test_sampled_rows_keep_time),
        cmocka_unit_test(test_gil_held_50ms_is_wait_gil),
        cmocka_unit_test(test_gil_drop_is_handoff_then_wait),
        cmocka_unit_test(test_gil_window_nesting),
        cmocka_unit_test(test_spin_lock_held_30ms_is_wait_lock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
