/*
 * tests/test_breakdown_stm.c - the STM's time breakdown (runtime/timeacct.h), stepped:
 *  - a committer blocked behind an inevitable transaction for 50 ms shows at least
 *    that in wait_inevitable;
 *  - an attempt that ran 20 ms and then aborted (read-write) shows at least that in
 *    wasted, and the operation's latency (a window around the block, as the thread
 *    loop takes it) includes the retry;
 *  - in both, the categories add up to the thread's time within 2%.
 * Two threads stepped with semaphores and by polling the other thread's own state
 * (its open timed interval), so the only timing assertions are lower bounds on waits
 * the test injected itself.
 */
#define SYNC_RT stm
#include "runtime/sync.h"
#include "runtime/timeacct.h"

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "tests/breakdown_testutil.h"

typedef struct cell {
    SYNC_OBJECT_HEADER;
    long v;
} cell_t;
typedef SYNC_REF(cell_t) cell_ref;

static cell_ref X, Y;
static sem_t s_a, s_b;
static struct sync_stats st[2];
static pthread_barrier_t entered;

static void rt_up(void)
{
    char err[256] = "";
    struct sync_config cfg = {.nthreads = 2, .heap_bytes = 64u << 20};
    assert_int_equal(sync_runtime_stm.init(&cfg, err, sizeof err), 0);
    memset(st, 0, sizeof st);
    bd_ta[0] = bd_ta[1] = NULL;
    sem_init(&s_a, 0, 0);
    sem_init(&s_b, 0, 0);
    pthread_barrier_init(&entered, NULL, 2);
    assert_int_equal(sync_runtime_stm.thread_enter(0, err, sizeof err), 0);
    SYNC_ATOMIC("test.setup") {
        X = SYNC_ALLOC(cell_t);
        Y = SYNC_ALLOC(cell_t);
    }
    sync_runtime_stm.thread_exit(NULL);
}

static void rt_down(void)
{
    sync_stats_free(&st[0]);
    sync_stats_free(&st[1]);
    pthread_barrier_destroy(&entered);
    sync_runtime_stm.fini();
}

/* Starts the thread's accounting and enters; both threads are entered before either
 * goes on (so each sees the other active: ownership taken, attempts timed). */
static void start(int tid)
{
    char err[256];
    ta_thread_start();
    bd_ta[tid] = &ta_self;
    if (sync_runtime_stm.thread_enter(tid, err, sizeof err) != 0)
        abort();
    pthread_barrier_wait(&entered);
}

static void finish(int tid)
{
    ta_thread_stop(&st[tid]);
    sync_runtime_stm.thread_exit(&st[tid]);
}

static void run2(void *(*a)(void *), void *(*b)(void *))
{
    pthread_t ta, tb;
    pthread_create(&ta, NULL, a, NULL);
    pthread_create(&tb, NULL, b, NULL);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
}

/* ---- a committer behind an inevitable transaction ---- */

static void *inev_a(void *arg)
{
    (void)arg;
    start(0);
    SYNC_ATOMIC("test.inev.a") {
        sync_inevitable();
        sem_post(&s_b);                              /* B: write X and commit */
        bd_await_timed(1, TA_WAIT_INEVITABLE);           /* B waits behind us */
        bd_sleep_ms(50);
        SYNC_WRITE(Y);
        Y->v = 1;
    }
    finish(0);
    return NULL;
}

static void *inev_b(void *arg)
{
    (void)arg;
    start(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.inev.b") {
        SYNC_WRITE(X);
        X->v = 2;
    }
    finish(1);
    return NULL;
}

static void test_blocked_behind_inevitable(void **state)
{
    (void)state;
    rt_up();
    bd_poll_failed = 0;
    run2(inev_a, inev_b);
    assert_false(bd_poll_failed);
    if (st[1].time_ns[TA_WAIT_INEVITABLE] < 45 * MS)
        fail_msg("blocked 50 ms behind an inevitable transaction, wait_inevitable %llu ns",
                 (unsigned long long)st[1].time_ns[TA_WAIT_INEVITABLE]);
    assert_int_equal(sync_stats_aborts(&st[1]), 0);
    assert_int_equal(st[0].inevitable, 1);
    bd_assert_sum(&st[0]);
    bd_assert_sum(&st[1]);
    rt_down();
}

/* ---- an aborted attempt's time is wasted, and the op's latency has the retry ---- */

static int rw_attempts;
static uint64_t rw_block_ns;

static uint64_t rw_block(void)
{
    SYNC_ATOMIC("test.rw.a") {
        rw_attempts++;
        SYNC_READ(X);
        long x = X->v;
        if (rw_attempts == 1) {
            sem_post(&s_b);          /* B: commit your write to X now */
            sem_wait(&s_a);          /* ... done */
            bd_sleep_ms(20);            /* the attempt goes on 20 ms, then aborts */
        }
        SYNC_WRITE(Y);
        Y->v = x + 1;
    }
    return 1;
}

static void *rw_a(void *arg)
{
    (void)arg;
    start(0);
    ta_window_start();               /* as WL_LOOP does for a sampled iteration */
    rw_block();
    ta_window_block_done();
    rw_block_ns = ta_window_stop();
    finish(0);
    return NULL;
}

static void *rw_b(void *arg)
{
    (void)arg;
    start(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.rw.b") {
        SYNC_WRITE(X);
        X->v = 100;
    }
    sem_post(&s_a);
    finish(1);
    return NULL;
}

static void test_aborted_attempt_is_wasted(void **state)
{
    (void)state;
    rt_up();
    rw_attempts = 0;
    run2(rw_a, rw_b);
    assert_int_equal(rw_attempts, 2);
    assert_int_equal(st[0].aborts[SYNC_ABORT_READ_WRITE], 1);
    if (st[0].time_ns[TA_WASTED] < 20 * MS)
        fail_msg("an attempt of 20 ms aborted, wasted %llu ns",
                 (unsigned long long)st[0].time_ns[TA_WASTED]);
    /* the operation met a stall of at least 20 ms (the aborted attempt): it is counted
     * exactly, as one long stall, and its window is not counted twice */
    assert_int_equal(st[0].op_stall_hist.count, 1);
    assert_true(st[0].op_stall_hist.max_ns >= 20 * MS);
    assert_int_equal(st[0].op_hist.count, 0);
    assert_true(sync_op_quantile(&st[0], TA_WINDOW_EVERY, 0.5) >= 18 * MS);
    assert_true(st[0].op_max_ns >= 20 * MS);
    assert_true(rw_block_ns >= 20 * MS);
    bd_assert_sum(&st[0]);
    rt_down();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocked_behind_inevitable),
        cmocka_unit_test(test_aborted_attempt_is_wasted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
