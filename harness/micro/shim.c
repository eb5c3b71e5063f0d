/*
 * harness/micro/shim.c - the micro-benchmark operations, written once against
 * runtime/sync.h and compiled once per runtime that has atomic blocks of its own
 * (the Makefile's `make micro`, with that runtime's flags: -DSYNC_RT=<rt>
 * -DSYNC_RT_<RT>; the exported table is micro_rt_<rt>, named from SYNC_RT_ID unless
 * MICRO_PREFIX is given). See shim.h for the timing convention.
 *
 * The generic operations run under every runtime, so each row has its `seq` baseline.
 * Three are runtime-specific because only that runtime has the mechanism:
 *   page_unshare, abort_retry   (stm: copy-on-write pages, aborts)
 *   gil_tick_stale, gil_handoff (gil: drop requests, forced switching)
 *
 * The calling thread (google-benchmark's main thread) enters the runtime as tid 0
 * at setup and stays entered. Operations that need a second thread start it, step it
 * with semaphores, and stop it again before they return, so no idle thread holds
 * back the STM's log collection or the GIL between calls.
 *
 * Locals changed inside an STM atomic block would be indeterminate after an abort
 * (the block is re-entered by longjmp), so such state lives in static variables.
 */
#include "runtime/sync.h"
#include "harness/micro/shim.h"

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#ifndef MICRO_PREFIX
#define MICRO_PREFIX SYNC_RT_ID
#endif
#define MICRO_CAT_(a, b) a##b
#define MICRO_CAT(a, b) MICRO_CAT_(a, b)
#define MICRO_RT_FN MICRO_CAT(micro_rt_, MICRO_PREFIX)
#define MICRO_DESC MICRO_CAT(sync_runtime_, SYNC_RT_ID)

typedef struct micro_obj {
    SYNC_OBJECT_HEADER;
    long v;
    long pad;
} micro_obj;
typedef SYNC_REF(micro_obj) obj_ref;

_Static_assert(sizeof(micro_obj) == 24, "micro_obj is 24 bytes (32 with alignment)");

#define POOL 256            /* objects read by read_barrier */
#define WPOOL 256           /* objects written by write_first / write_repeat */

static obj_ref pool[POOL];
static obj_ref wpool[WPOOL];
static obj_ref small_a, small_b;

static int setup_state;     /* 0 not yet, 1 ready, -1 failed */
static char errbuf[256];

/* The clock, read inside atomic blocks. Under itm gcc would make a block
 * serial-irrevocable (uninstrumented) before calling clock_gettime, which is not
 * transaction-safe, and time something else than its barriers: so the clock is
 * declared transaction_pure there (SYNC_TM_PURE), and kept out of line so that the
 * declaration is what gcc sees. */
static uint64_t micro_now(void) SYNC_TM_PURE SYNC_NOINLINE;
static uint64_t micro_now(void)
{
    return sync_now_ns();
}

/* Keeps results alive without a volatile access in the measured loop. */
static long sink;
static void keep(long v)
{
#if !defined(SYNC_RT_ITM)
    __asm__ __volatile__("" : : "r"(v) : "memory");
#endif
    sink += v;
}

/* The runtime could not be set up: every benchmark of it is skipped with this. */
static void setup_failed(const char *step, const char *err)
{
    snprintf(errbuf, sizeof errbuf, "%s runtime %s failed, its benchmarks are skipped: %s",
             SYNC_RT_NAME, step, err[0] ? err : "(no reason given)");
}

__attribute__((unused)) static int64_t fail(const char *msg)
{
    snprintf(errbuf, sizeof errbuf, "%s: %s", SYNC_RT_NAME, msg);
    return -1;
}

static const char *rt_error(void)
{
    return errbuf;
}

#if defined(SYNC_RT_STM)
#define PAGES 4096          /* page_unshare's pool: one object per page */
static obj_ref pages[PAGES];
static size_t pages_next;
static int build_pages(void);
#endif

static int rt_setup(void)
{
    if (setup_state)
        return setup_state > 0 ? 0 : -1;
    setup_state = -1;
    struct sync_config cfg = {.nthreads = 2, .seed = 1, .heap_bytes = 256u << 20,
                              .gil_interval_us = 0};
    char err[200] = "";
    if (MICRO_DESC.init(&cfg, err, sizeof err) != 0) {
        setup_failed("init", err);
        return -1;
    }
    if (MICRO_DESC.thread_enter(0, err, sizeof err) != 0) {
        setup_failed("thread_enter", err);
        return -1;
    }
    SYNC_ATOMIC("micro.setup") {
        for (int i = 0; i < POOL; i++) {
            pool[i] = SYNC_ALLOC(micro_obj);
            pool[i]->v = i;
        }
        for (int i = 0; i < WPOOL; i++)
            wpool[i] = SYNC_ALLOC(micro_obj);
        small_a = SYNC_ALLOC(micro_obj);
        small_b = SYNC_ALLOC(micro_obj);
    }
#if defined(SYNC_RT_STM)
    if (build_pages() != 0)
        return -1;
#endif
    setup_state = 1;
    return 0;
}

/* ------------------------------------------------------------ generic operations */

/* One read barrier and one field load, inside a running (read-only) transaction. */
static int64_t op_read_barrier(uint64_t n)
{
    static uint64_t t0, t1;
    SYNC_ATOMIC("micro.read") {
        long s = 0;
        t0 = micro_now();
        for (uint64_t i = 0; i < n; i++) {
            obj_ref o = pool[i & (POOL - 1)];
            SYNC_READ(o);
            s += o->v;
        }
        t1 = micro_now();
        keep(s);
    }
    return (int64_t)(t1 - t0);
}

/* The first write barrier of an object in a transaction, and one store (its page
 * is already private: page_unshare measures the other case). */
static int64_t op_write_first(uint64_t n)
{
    static uint64_t t0, t1;
    uint64_t total = 0;
    for (uint64_t done = 0; done < n;) {
        uint64_t k = n - done < WPOOL ? n - done : WPOOL;
        SYNC_ATOMIC("micro.write_first") {
            t0 = micro_now();
            for (uint64_t i = 0; i < k; i++) {
                obj_ref o = wpool[i];
                SYNC_WRITE(o);
                o->v++;
            }
            t1 = micro_now();
        }
        total += t1 - t0;
        done += k;
    }
    return (int64_t)total;
}

/* A write barrier and store to an object this transaction already wrote. */
static int64_t op_write_repeat(uint64_t n)
{
    static uint64_t t0, t1;
    SYNC_ATOMIC("micro.write_repeat") {
        for (int i = 0; i < WPOOL; i++) {
            SYNC_WRITE(wpool[i]);
            wpool[i]->v++;
        }
        t0 = micro_now();
        for (uint64_t i = 0; i < n; i++) {
            obj_ref o = wpool[i & (WPOOL - 1)];
            SYNC_WRITE(o);
            o->v++;
        }
        t1 = micro_now();
    }
    return (int64_t)(t1 - t0);
}

/* A whole empty atomic block: begin and commit (mutex: lock/unlock; gil: a depth
 * count, since the holder never releases around a block). */
static int64_t op_empty_commit(uint64_t n)
{
    uint64_t t0 = micro_now();
    for (uint64_t i = 0; i < n; i++) {
        SYNC_ATOMIC("micro.empty") {
            SYNC_COMPILER_BARRIER();
        }
    }
    return (int64_t)(micro_now() - t0);
}

/* A whole small atomic block: one read, one write, commit. */
static int64_t op_small_commit(uint64_t n)
{
    uint64_t t0 = micro_now();
    for (uint64_t i = 0; i < n; i++) {
        SYNC_ATOMIC("micro.small") {
            SYNC_READ(small_a);
            long x = small_a->v;
            SYNC_WRITE(small_b);
            small_b->v = x + 1;
            SYNC_COMPILER_BARRIER(); /* seq: keep one block per iteration */
        }
    }
    return (int64_t)(micro_now() - t0);
}

/* sync_tick() with nothing to do (the GIL's inline poll; a no-op elsewhere). */
static int64_t op_tick(uint64_t n)
{
    uint64_t t0 = micro_now();
    for (uint64_t i = 0; i < n; i++) {
        sync_tick();
        SYNC_COMPILER_BARRIER();
    }
    return (int64_t)(micro_now() - t0);
}

/* ------------------------------------------------------------ stm only */
#if defined(SYNC_RT_STM)

/* Builds PAGES objects, each alone at the start of its own page (a 32-byte object
 * followed by a filler up to the next page), so that the first write to each one
 * unshares exactly one page. */
static int build_pages(void)
{
    static int bad;
    bad = 0;
    SYNC_ATOMIC("micro.setup_pages") {
        /* Small objects until the next allocation starts a page. */
        for (int i = 0; i < 4096 / 16; i++) {
            obj_ref o = (obj_ref)sync_alloc(16);
            if (((SYNC_REF_ID(o) + 16) & 4095) == 0)
                break;
        }
        for (int i = 0; i < PAGES; i++) {
            pages[i] = SYNC_ALLOC(micro_obj);
            (void)sync_alloc(4096 - 32);
            if ((SYNC_REF_ID(pages[i]) & 4095) != 0)
                bad = 1;
        }
    }
    if (bad) {
        fail("page_unshare objects are not page-aligned (allocator changed?)");
        return -1;
    }
    pages_next = PAGES; /* the first call re-enters, so every page starts shared */
    return 0;
}

/* Leaves and re-enters the runtime: every page of this thread's segment is shared
 * again. Checks that the writes since the last re-entry did unshare their pages. */
static int reenter(uint64_t expect_unshared)
{
    struct sync_stats st;
    memset(&st, 0, sizeof st);
    char err[200] = "";
    MICRO_DESC.thread_exit(&st);
    uint64_t got = st.unshared_pages;
    sync_stats_free(&st);
    if (MICRO_DESC.thread_enter(0, err, sizeof err) != 0) {
        setup_state = -1;
        setup_failed("re-entry (thread_enter)", err);
        return -1;
    }
    if (got < expect_unshared) {
        char m[160];
        snprintf(m, sizeof m, "page_unshare: %llu writes but only %llu pages unshared",
                 (unsigned long long)expect_unshared, (unsigned long long)got);
        fail(m);
        return -1;
    }
    return 0;
}

/* The first write barrier of an object whose page is still shared with the committed
 * state: the slow path unshares (copies and remaps) the page. Timed: the barrier
 * alone; the commit and the periodic re-entry that re-shares the pages are not. */
static int64_t op_page_unshare(uint64_t n)
{
    static uint64_t t0, t1;
    int64_t total = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (pages_next == PAGES) {
            /* The setup's own allocation unshared the pages: expect 0 then. */
            static int first = 1;
            if (reenter(first ? 0 : PAGES) != 0)
                return -1;
            first = 0;
            pages_next = 0;
        }
        obj_ref o = pages[pages_next++];
        SYNC_ATOMIC("micro.page_unshare") {
            t0 = micro_now();
            SYNC_WRITE(o);
            t1 = micro_now();
            o->v++;
        }
        total += (int64_t)(t1 - t0);
    }
    return total;
}

/* A helper thread (tid 1) of an STM operation: helper_enter, on the helper, enters
 * the runtime and tells helper_start, on the caller, which waited for it, whether it
 * could (err empty) or why not. */
static int helper_enter(sem_t *ready, char *err, size_t errlen)
{
    if (MICRO_DESC.thread_enter(1, err, errlen) != 0) {
        sem_post(ready);
        return -1;
    }
    err[0] = 0;
    sem_post(ready);
    return 0;
}

/* Starts fn as the helper and waits until it entered; 0, or -1 with the reason in err
 * (the helper is joined). */
static int helper_start(const char *op, pthread_t *th, void *(*fn)(void *), sem_t *ready,
                        char *err, size_t errlen)
{
    snprintf(err, errlen, "helper did not start");
    if (pthread_create(th, NULL, fn, NULL) != 0) {
        snprintf(err, errlen, "%s: cannot create the helper thread", op);
        return -1;
    }
    sem_wait(ready);
    if (err[0]) {
        pthread_join(*th, NULL);
        return -1;
    }
    return 0;
}

/* read_barrier_marked: read_barrier with a second thread entered (and parked), so
 * the caller's transactions store their read markers; read_barrier alone measures a
 * thread alone, whose transactions do not mark (runtime/stm/DESIGN.md). */
static sem_t rm_ready, rm_stop;
static char rm_err[200];

static void *marked_helper(void *arg)
{
    (void)arg;
    if (helper_enter(&rm_ready, rm_err, sizeof rm_err) != 0)
        return NULL;
    sem_wait(&rm_stop);
    MICRO_DESC.thread_exit(NULL);
    return NULL;
}

static int64_t op_read_barrier_marked(uint64_t n)
{
    sem_init(&rm_ready, 0, 0);
    sem_init(&rm_stop, 0, 0);
    pthread_t th;
    if (helper_start("read_barrier_marked", &th, marked_helper, &rm_ready, rm_err, sizeof rm_err) != 0)
        return fail(rm_err);
    int marked = 0;
    SYNC_ATOMIC("micro.read.marked.probe") {
        marked = stm_self.mark;
    }
    int64_t t = op_read_barrier(n);
    sem_post(&rm_stop);
    pthread_join(th, NULL);
    sem_destroy(&rm_ready);
    sem_destroy(&rm_stop);
    if (!marked)
        return fail("read_barrier_marked: the transaction did not mark its reads");
    return t;
}

/* abort_retry: the calling thread reads X and writes Y (a read-only transaction
 * would serialise at its snapshot and never abort); a helper thread (tid 1) then
 * commits a write to X; the caller's commit finds the read-write conflict, aborts and
 * re-runs the block, which commits. Timed: the whole block, both attempts, minus the
 * wait for the helper. */
static sem_t ab_go, ab_done;
static atomic_int ab_stop;
static obj_ref ab_x, ab_y;
static char ab_err[200];
static int ab_attempts;
static uint64_t ab_waited;

static void *abort_helper(void *arg)
{
    (void)arg;
    if (helper_enter(&ab_done, ab_err, sizeof ab_err) != 0)
        return NULL;
    for (;;) {
        sem_wait(&ab_go);
        /* relaxed: sem_wait already ordered the store before sem_post */
        if (atomic_load_explicit(&ab_stop, memory_order_relaxed))
            break;
        SYNC_ATOMIC("micro.abort.helper") {
            SYNC_WRITE(ab_x);
            ab_x->v++;
        }
        sem_post(&ab_done);
    }
    MICRO_DESC.thread_exit(NULL);
    return NULL;
}

static int64_t op_abort_retry(uint64_t n)
{
    if (!ab_x) {
        SYNC_ATOMIC("micro.abort.setup") {
            ab_x = SYNC_ALLOC(micro_obj);
            ab_y = SYNC_ALLOC(micro_obj);
        }
    }
    sem_init(&ab_go, 0, 0);
    sem_init(&ab_done, 0, 0);
    atomic_store_explicit(&ab_stop, 0, memory_order_relaxed); /* published by pthread_create */
    pthread_t th;
    if (helper_start("abort_retry", &th, abort_helper, &ab_done, ab_err, sizeof ab_err) != 0)
        return fail(ab_err);
    int64_t total = 0;
    int bad = 0;
    for (uint64_t i = 0; i < n; i++) {
        ab_attempts = 0;
        ab_waited = 0;
        uint64_t t0 = micro_now();
        SYNC_ATOMIC("micro.abort") {
            SYNC_READ(ab_x);
            long x = ab_x->v;
            SYNC_WRITE(ab_y);
            ab_y->v = x;
            if (ab_attempts++ == 0) {
                uint64_t w0 = micro_now();
                sem_post(&ab_go);
                sem_wait(&ab_done);
                ab_waited += micro_now() - w0;
            }
        }
        total += (int64_t)(micro_now() - t0 - ab_waited);
        if (ab_attempts != 2)
            bad = 1;
    }
    /* relaxed: sem_post below orders it for the helper */
    atomic_store_explicit(&ab_stop, 1, memory_order_relaxed);
    sem_post(&ab_go);
    pthread_join(th, NULL);
    sem_destroy(&ab_go);
    sem_destroy(&ab_done);
    if (bad)
        return fail("abort_retry: a block did not abort exactly once");
    return total;
}
#endif /* SYNC_RT_STM */

/* ------------------------------------------------------------ gil only */
#if defined(SYNC_RT_GIL)

/* A tick that finds a drop request but nobody waiting (a stale request): the slow
 * path takes the GIL's mutex, sees no waiter, clears the request, keeps the GIL. */
static int64_t op_gil_tick_stale(uint64_t n)
{
    uint64_t t0 = micro_now();
    for (uint64_t i = 0; i < n; i++) {
        /* relaxed: as every access to the request (see gil.c) */
        atomic_store_explicit(&gil_drop_request, 1, memory_order_relaxed);
        sync_tick();
    }
    return (int64_t)(micro_now() - t0);
}

/* gil_handoff: the caller and a helper thread pass the GIL back and forth by forced
 * switching. Each side, once the other waits, raises the drop request itself (instead
 * of letting the waiter's switch interval expire) and ticks. Timed: the caller's tick,
 * i.e. one round trip of two hand-offs (caller -> helper -> caller). */
static atomic_int gh_stop;
static char gh_err[200];

static void wait_for_waiter(void)
{
    while (gil_waiters() == 0)
        sched_yield();
}

static void *gil_helper(void *arg)
{
    (void)arg;
    if (MICRO_DESC.thread_enter(1, gh_err, sizeof gh_err) != 0)
        return NULL;
    /* relaxed: set before the caller's last hand-over, which orders it (gil_mu) */
    while (!atomic_load_explicit(&gh_stop, memory_order_relaxed)) {
        wait_for_waiter();
        /* relaxed: a hint; gil_mu orders the hand-over */
        atomic_store_explicit(&gil_drop_request, 1, memory_order_relaxed);
        sync_tick();
    }
    MICRO_DESC.thread_exit(NULL);
    return NULL;
}

static int64_t op_gil_handoff(uint64_t n)
{
    gh_err[0] = 0;
    atomic_store_explicit(&gh_stop, 0, memory_order_relaxed); /* published by pthread_create */
    pthread_t th;
    if (pthread_create(&th, NULL, gil_helper, NULL) != 0)
        return fail("gil_handoff: cannot create the helper thread");
    uint64_t sw0 = gil_switch_number();
    int64_t total = 0;
    for (uint64_t i = 0; i < n; i++) {
        wait_for_waiter();
        atomic_store_explicit(&gil_drop_request, 1, memory_order_relaxed); /* hint */
        uint64_t t0 = micro_now();
        sync_tick();
        total += (int64_t)(micro_now() - t0);
    }
    /* relaxed: the hand-over below (gil_mu) publishes it to the helper */
    atomic_store_explicit(&gh_stop, 1, memory_order_relaxed);
    wait_for_waiter();
    atomic_store_explicit(&gil_drop_request, 1, memory_order_relaxed); /* hint */
    sync_tick();
    pthread_join(th, NULL);
    if (gh_err[0])
        return fail(gh_err);
    if (gil_switch_number() - sw0 < 2 * n)
        return fail("gil_handoff: fewer hand-overs than ticks");
    return total;
}
#endif /* SYNC_RT_GIL */

/* ------------------------------------------------------------ the table */

static const struct micro_op ops[] = {
    {"read_barrier", "read barrier + load, inside a transaction", 4096, op_read_barrier},
    {"write_barrier_first", "first write barrier of an object in a transaction + store",
     WPOOL, op_write_first},
    {"write_barrier_repeat", "write barrier of an already written object + store", 4096,
     op_write_repeat},
    {"empty_commit", "an empty atomic block (begin + commit)", 1024, op_empty_commit},
    {"small_commit", "atomic block with one read and one write", 1024, op_small_commit},
    {"tick", "sync_tick() with nothing pending", 4096, op_tick},
#if defined(SYNC_RT_STM)
    {"page_unshare", "first write barrier on a page still shared with segment 0", 64,
     op_page_unshare},
    {"abort_retry", "read-write conflict: abort at commit, retry, commit", 64,
     op_abort_retry},
    {"read_barrier_marked", "read barrier + load, another thread entered (markers stored)",
     4096, op_read_barrier_marked},
#endif
#if defined(SYNC_RT_GIL)
    {"gil_tick_stale", "tick with a drop request and no waiter (GIL kept)", 1024,
     op_gil_tick_stale},
    {"gil_handoff", "round trip: forced switch to another thread and back", 32,
     op_gil_handoff},
#endif
};

static const struct micro_rt rt = {
    .name = SYNC_RT_NAME,
    .setup = rt_setup,
    .error = rt_error,
    .ops = ops,
    .nops = (int)(sizeof ops / sizeof ops[0]),
};

const struct micro_rt *MICRO_RT_FN(void)
{
    return &rt;
}
