/*
 * tests/test_gil.c - the GIL runtime, driven directly (no harness).
 *
 * Threads are ordered with semaphores, and a holder that wants to hand over spins
 * until a waiter has asked (gil_drop_request), so every assertion below follows from
 * the protocol, not from timing. Worker threads never call cmocka's asserts (they are
 * not thread-safe): they record the first failure, and the main thread asserts it.
 */
#define SYNC_RT gil
#include "runtime/sync.h"

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static char worker_msg[256];
static atomic_int failed;

static void worker_fail(const char *msg, long a, long b)
{
    int expected = 0;
    /* relaxed: the main thread reads it after pthread_join, which orders it. */
    if (atomic_compare_exchange_strong_explicit(&failed, &expected, 1, memory_order_relaxed,
                                                memory_order_relaxed))
        snprintf(worker_msg, sizeof worker_msg, "%s (%ld, %ld)", msg, a, b);
}

static void check_workers(void)
{
    if (atomic_load_explicit(&failed, memory_order_relaxed))
        fail_msg("%s", worker_msg);
}

static void rt_init(uint64_t interval_us)
{
    struct sync_config cfg = {.nthreads = 2, .seed = 1, .gil_interval_us = interval_us};
    char err[200];
    atomic_store_explicit(&failed, 0, memory_order_relaxed);
    worker_msg[0] = 0;
    assert_int_equal(sync_runtime_gil.init(&cfg, err, sizeof err), 0);
}

static void rt_enter(int tid)
{
    char err[200];
    if (sync_runtime_gil.thread_enter(tid, err, sizeof err) != 0)
        worker_fail("thread_enter failed", tid, 0);
}

/* Spins (holding the GIL) until a waiter asked for it, or until *stop is set.
 * relaxed: a hint, and the GIL's mutex orders everything the test checks. */
static int wait_request(const atomic_int *stop)
{
    while (!atomic_load_explicit(&gil_drop_request, memory_order_relaxed)) {
        if (stop && atomic_load_explicit(stop, memory_order_relaxed))
            return 0;
        sched_yield();
    }
    return 1;
}

static void run2(void *(*fn)(void *))
{
    pthread_t th[2];
    for (long i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, fn, (void *)i), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    sync_runtime_gil.fini();
    check_workers();
}

/* Thread 0 enters first; thread 1 enters only after that (so it has to wait). */
static sem_t entered0;

static void enter_in_order(int tid)
{
    if (tid == 1)
        sem_wait(&entered0);
    rt_enter(tid);
    if (tid == 0)
        sem_post(&entered0);
}

/* ---- (a) hand-offs happen: two threads ticking in a loop both make progress ---- */

#define TURNS 20
static struct {
    int last;
    int turns[2];
    int done[2];
    struct sync_stats st[2];
} ta;

static void *turns_thread(void *arg)
{
    int tid = (int)(long)arg;
    enter_in_order(tid);
    for (;;) {
        /* relaxed: a hint; we hold the GIL, so a set request stays set until we drop */
        if (atomic_load_explicit(&gil_drop_request, memory_order_relaxed)) {
            /* Someone waits (I3 in gil.c), so this tick must switch twice: to the
             * waiter, and back to us. */
            uint64_t sw = gil_switch_number();
            sync_tick();
            if (gil_switch_number() < sw + 2) {
                worker_fail("a tick with a pending request did not hand over", (long)sw,
                            (long)gil_switch_number());
                break;
            }
        }
        sync_tick();
        /* Plain accesses: only the GIL holder touches ta. */
        if (ta.last != tid) {
            ta.last = tid;
            ta.turns[tid]++;
        }
        if (ta.turns[tid] >= TURNS || ta.done[1 - tid])
            break;
    }
    ta.done[tid] = 1;
    sync_runtime_gil.thread_exit(&ta.st[tid]);
    return NULL;
}

static void test_handoffs_happen(void **state)
{
    (void)state;
    memset(&ta, 0, sizeof ta);
    ta.last = -1;
    sem_init(&entered0, 0, 0);
    rt_init(200);
    run2(turns_thread);
    /* Whichever finished first had TURNS turns, so the other ran in between each. */
    assert_true(ta.turns[0] >= TURNS - 1 && ta.turns[1] >= TURNS - 1);
    assert_true(ta.turns[0] >= TURNS || ta.turns[1] >= TURNS);
    /* Every turn but the first of each thread and the last (taken on thread_exit)
     * was a hand-off on request. */
    uint64_t h = ta.st[0].gil_handoffs + ta.st[1].gil_handoffs;
    assert_true(h >= (uint64_t)(ta.turns[0] + ta.turns[1] - 3));
    assert_true(ta.st[1].gil_wait_ns > 0);
    sync_stats_free(&ta.st[0]);
    sync_stats_free(&ta.st[1]);
}

/* ---- (b) an atomic block is never interrupted, even with ticks inside ---- */

#define STEPS 5
static struct {
    long counter;
    int marker;          /* 1 once thread 1 has held the GIL */
    long counter_seen;   /* counter when thread 1 first held the GIL */
    atomic_int gone1;    /* thread 1 has held the GIL and is leaving */
    uint64_t commits0;
    struct sync_stats st[2];
} tb;

static void *block_thread(void *arg)
{
    int tid = (int)(long)arg;
    enter_in_order(tid);
    if (tid == 1) {
        tb.marker = 1;
        tb.counter_seen = tb.counter;
        /* relaxed: only tells thread 0 to stop waiting for requests (no data). */
        atomic_store_explicit(&tb.gone1, 1, memory_order_relaxed);
        sync_runtime_gil.thread_exit(&tb.st[1]);
        return NULL;
    }
    SYNC_ATOMIC("test.outer") {
        tb.marker = 0;
        for (int step = 0; step < STEPS; step++) {
            tb.counter++;
            if (!wait_request(&tb.gone1)) {   /* thread 1 is asking for the GIL */
                worker_fail("thread 1 ran inside the atomic block", step, 0);
                break;
            }
            sync_tick();                  /* must not drop: depth > 0 */
            SYNC_ATOMIC("test.inner") {
                sync_tick();              /* nor here: depth 2 */
            }
            sync_tick();                  /* nor here: back at depth 1 */
            if (tb.marker != 0 || tb.counter != step + 1)
                worker_fail("another thread ran inside the atomic block", tb.marker, tb.counter);
            /* relaxed: nobody took the GIL, so the request is still pending */
            if (!atomic_load_explicit(&gil_drop_request, memory_order_relaxed))
                worker_fail("drop request vanished while the block ran", step, 0);
        }
    }
    tb.commits0 = gil_self.stats.commits;
    sync_tick();                          /* outside the block: hands over */
    if (tb.marker != 1)
        worker_fail("the waiter did not run at the tick after the block", tb.marker, 0);
    sync_runtime_gil.thread_exit(&tb.st[0]);
    return NULL;
}

static void test_atomic_block_not_interrupted(void **state)
{
    (void)state;
    memset(&tb, 0, sizeof tb);
    sem_init(&entered0, 0, 0);
    rt_init(100);
    run2(block_thread);
    assert_int_equal(tb.counter_seen, STEPS);
    assert_int_equal(tb.marker, 1);
    assert_int_equal(tb.commits0, 1);     /* the nested blocks joined the outer one */
    assert_int_equal(tb.st[0].commits, 1);
    assert_int_equal(tb.st[1].gil_handoffs, 1);
    sync_stats_free(&tb.st[0]);
    sync_stats_free(&tb.st[1]);
}

/* ---- (c) mutual exclusion: plain increments between ticks are never lost ---- */

#define INCS 200000
static struct {
    long counter;
    int owner;           /* the thread running the current increment */
    atomic_int gone[2];  /* the thread has finished its increments */
    struct sync_stats st[2];
} tc;

static void *incr_thread(void *arg)
{
    int tid = (int)(long)arg;
    enter_in_order(tid);
    if (tid == 0)   /* thread 1 waits: the loop below will hand over */
        wait_request(&tc.gone[1]);
    for (int i = 0; i < INCS; i++) {
        tc.owner = tid;
        long v = tc.counter;
        SYNC_COMPILER_BARRIER();
        tc.counter = v + 1;
        SYNC_COMPILER_BARRIER();
        if (tc.owner != tid) {
            worker_fail("both threads ran between two ticks", tid, i);
            break;
        }
        sync_tick();
    }
    /* relaxed: only stops thread 0's wait for a request (no data). */
    atomic_store_explicit(&tc.gone[tid], 1, memory_order_relaxed);
    sync_runtime_gil.thread_exit(&tc.st[tid]);
    return NULL;
}

static void test_mutual_exclusion(void **state)
{
    (void)state;
    memset(&tc, 0, sizeof tc);
    sem_init(&entered0, 0, 0);
    rt_init(20);
    run2(incr_thread);
    assert_int_equal(tc.counter, 2L * INCS);
    assert_true(tc.st[0].gil_handoffs + tc.st[1].gil_handoffs >= 1);
    sync_stats_free(&tc.st[0]);
    sync_stats_free(&tc.st[1]);
}

/* ---- (d) forced switching: a dropper never gets the GIL back before the waiter;
 *      and contention analysis: each wait is one row naming the holder, with both
 *      threads' last blocks (each runs one labelled block before it drops) ---- */

#define ROUNDS 100
static const char *const pp_label[2] = {"test.t0", "test.t1"};
static struct {
    int log[4 * ROUNDS];
    int n;
    atomic_int done[2];
    struct sync_stats st[2];
} td;

static void *pingpong_thread(void *arg)
{
    int tid = (int)(long)arg;
    enter_in_order(tid);
    for (int r = 0;; r++) {
        td.log[td.n++] = tid;             /* a turn starts: this thread holds the GIL */
        if (r == ROUNDS)
            break;
        if (!wait_request(&td.done[1 - tid]))
            break;                        /* the other thread has left */
        SYNC_ATOMIC(pp_label[tid]) {
            /* empty: it ends while the drop is asked of us, so it notes its label */
        }
        uint64_t sw = gil_switch_number();
        sync_tick();                      /* drops, and must not re-grab first */
        if (gil_switch_number() < sw + 2)
            worker_fail("dropper got the GIL back without a switch", (long)sw,
                        (long)gil_switch_number());
        if (td.log[td.n - 1] == tid)
            worker_fail("dropper re-grabbed the GIL before the waiter ran", r, tid);
    }
    /* relaxed: read by the other thread only as a hint to stop spinning. */
    atomic_store_explicit(&td.done[tid], 1, memory_order_relaxed);
    sync_runtime_gil.thread_exit(&td.st[tid]);
    return NULL;
}

static void test_forced_switching(void **state)
{
    (void)state;
    memset(&td, 0, sizeof td);
    sem_init(&entered0, 0, 0);
    rt_init(100);
    run2(pingpong_thread);
    assert_true(td.n >= 2 * ROUNDS + 1);
    for (int i = 1; i < td.n; i++)
        if (td.log[i] == td.log[i - 1])
            fail_msg("thread %d ran twice in a row at log entry %d", td.log[i], i);
    /* Every turn but the two first and the last (taken on thread_exit) was taken
     * from a dropper. */
    assert_true(td.st[0].gil_handoffs + td.st[1].gil_handoffs >= (uint64_t)td.n - 3);
    /* Every timed wait in a row (the rows' weights count them, their times sum to
     * gil_wait_ns), never an abort; once both have run a block, a wait names the other
     * thread and both blocks (not with make WHERE=0, which logs none). Waits of one
     * pair in one window share a row (common.h, SYNC_WAIT_WINDOW_NS). */
    for (int tid = 0; tid < 2 && STMBENCH_WHERE; tid++) {
        const struct sync_stats *s = &td.st[tid];
        uint64_t sum = 0, waits = 0;
        uint32_t named = 0;
        assert_int_equal(sync_stats_aborts(s), 0);
        for (size_t i = 0; i < s->nconflicts; i++) {
            const struct sync_conflict *c = &s->conflicts[i];
            assert_int_equal(c->kind, SYNC_KIND_LOCK_WAIT);
            assert_int_equal(c->thread, tid);
            assert_true(c->weight >= 1);
            assert_true(i == 0 || c->t_ns >= s->conflicts[i - 1].t_ns);
            assert_string_equal(c->object_s, "the GIL");
            sum += c->wasted_ns;
            waits += c->weight;
            if (c->other == 1 - tid && c->site && c->other_site &&
                strcmp(c->site, pp_label[tid]) == 0 && strcmp(c->other_site, pp_label[1 - tid]) == 0)
                named += c->weight;
        }
        assert_true(waits >= ROUNDS / 2);
        assert_true(s->nconflicts <= waits);
        assert_int_equal(sum, s->gil_wait_ns);
        assert_true(named >= ROUNDS / 2);
    }
    sync_stats_free(&td.st[0]);
    sync_stats_free(&td.st[1]);
}

/* ---- one thread alone never blocks at a tick; init resets everything ---- */

static void test_single_thread_never_blocks(void **state)
{
    (void)state;
    for (int round = 0; round < 3; round++) {
        /* A request left over from an earlier run: init must clear it. */
        atomic_store_explicit(&gil_drop_request, round, memory_order_relaxed);
        rt_init(round == 0 ? 0 : 50);
        assert_int_equal(atomic_load_explicit(&gil_drop_request, memory_order_relaxed), 0);
        assert_int_equal(gil_holder(), -1);
        assert_int_equal(gil_switch_number(), 0);
        rt_enter(0);
        assert_int_equal(gil_holder(), 0);
        {   /* entering twice would deadlock on itself: refused */
            char err[200] = "";
            assert_int_equal(sync_runtime_gil.thread_enter(0, err, sizeof err), -1);
            assert_non_null(strstr(err, "twice"));
        }
        /* A stale request with nobody waiting: the tick keeps the GIL and clears it. */
        atomic_store_explicit(&gil_drop_request, 1, memory_order_relaxed);
        for (int i = 0; i < 1000; i++)
            sync_tick();
        assert_int_equal(atomic_load_explicit(&gil_drop_request, memory_order_relaxed), 0);
        assert_int_equal(gil_holder(), 0);
        assert_int_equal(gil_switch_number(), 1);
        SYNC_ATOMIC("test.single") {
            sync_tick();
        }
        struct sync_stats st = {0};
        sync_runtime_gil.thread_exit(&st);
        assert_int_equal(st.commits, 1);
        assert_int_equal(st.gil_handoffs, 0);
        assert_int_equal(st.nconflicts, 0);     /* alone: no wait, no row */
        assert_int_equal(gil_holder(), -1);
        sync_stats_free(&st);
        if (round != 1)                   /* round 1: init again without fini */
            sync_runtime_gil.fini();
    }
    check_workers();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_thread_never_blocks),
        cmocka_unit_test(test_handoffs_happen),
        cmocka_unit_test(test_atomic_block_not_interrupted),
        cmocka_unit_test(test_mutual_exclusion),
        cmocka_unit_test(test_forced_switching),
    };
    return cmocka_run_group_tests_name("gil", tests, NULL, NULL);
}
