/*
 * runtime/gil/gil.c - a CPython-style (3.2+) global interpreter lock.
 *
 * State (all of it global, reset by gil_init):
 *   gil_mu            the pthread mutex that protects every field below except
 *                     gil_drop_request.
 *   g.locked          1 while some thread holds the GIL.
 *   g.holder          tid of that thread (-1 when free); diagnostics and tests.
 *   g.switch_number   incremented each time a thread takes the GIL ("a hand-over").
 *   g.nwaiters        threads inside gil_take() that have not got the GIL yet.
 *   g.forced          1 when the last release was a drop on request (_gil_yield);
 *                     the next taker counts a hand-off and clears it.
 *   g.holder_site, g.holder_where, g.holder_tls
 *                     the holder's last block label and location (sync_where_at,
 *                     the place it resumes at) when it took the GIL: the other side
 *                     of the waits that begin while it holds (contention analysis);
 *                     and its gil_self, whose `note` a waiter that sets
 *                     gil_drop_request sets too (NULL while the GIL is free: a thread
 *                     that left is never written to).
 *   g.t0_ns           init time: the conflict log's clock.
 *   gil_drop_request  set by a waiter whose switch interval expired without any
 *                     hand-over; cleared by whoever takes the GIL. Atomic because the
 *                     holder polls it without the mutex at every sync_tick().
 *   gil_cond          signalled when the GIL is released (waiters wait on it with a
 *                     timeout of one switch interval).
 *   gil_switch_cond   broadcast when the GIL is taken (a dropper waits on it for the
 *                     switch number to change).
 *   pub_nwaiters, pub_switch_number
 *                     copies of g.nwaiters and g.switch_number, stored under gil_mu
 *                     after each change and read without it by the introspection
 *                     functions (tests, micro-benchmarks), so that a thread polling
 *                     them does not contend for gil_mu with the hand-over it watches.
 *                     Never used for a decision inside the GIL.
 *
 * Invariants:
 *   I1 (exclusion) at most one thread has gil_self.holding == 1, and it is the thread
 *      g.holder names; g.locked == 1 exactly then. Everything a workload touches
 *      outside the runtime is touched only by the holder, so the mutex's lock/unlock
 *      in release and take order all shared accesses (a release's unlock happens
 *      before the next taker's lock returns).
 *   I2 (atomic blocks) the GIL is released only in thread_exit and in _gil_yield,
 *      and _gil_yield is reached only from sync_tick() with gil_self.depth == 0. So
 *      an atomic block (depth > 0) runs from begin to end under one holding.
 *      (thread_exit inside a block is a caller bug.)
 *   I3 (liveness of requests) a thread sets gil_drop_request only while it is
 *      counted in g.nwaiters, under gil_mu, and only after waiting one whole switch
 *      interval during which g.switch_number did not change. A waiter leaves
 *      g.nwaiters only by taking the GIL, which clears the request. So whenever the
 *      request is set, a waiter exists, and a holder that drops will be replaced.
 *   I4 (forced switching) a thread that drops on request waits, before it competes
 *      again, until g.switch_number differs from its value at the drop. Since a
 *      waiter exists (I3) and the GIL is free, some other thread takes it, so the
 *      dropper cannot re-grab the GIL it just released.
 *   I5 (single thread never blocks) _gil_yield re-checks under gil_mu: if nobody is
 *      waiting (a stale request, or a request set by hand in a test), it clears the
 *      request and returns still holding the GIL. With one thread, sync_tick() never
 *      blocks.
 *   I6 (re-initialisation) gil_init resets every field, re-creates the condition
 *      variables and clears gil_drop_request, so several runs in one process start
 *      from the same state. It must not be called while a thread is entered.
 *
 * Contention analysis: a take that waited (or a dropper's retake: its wait starts at
 * its release, as gil_wait_ns's) logs one row of kind lock-wait in the taker's
 * statistics, whose wasted_ns is what it added to gil_wait_ns, so until sampling
 * starts the rows' waits sum to gil_wait_ns. The holder named is the one at the
 * wait's start: a long wait behind several holders is charged to the first.
 *
 * Memory ordering: gil_mu provides all ordering between threads. gil_drop_request is
 * a hint: every access is relaxed, because the only decisions taken on it outside the
 * mutex (the holder's "should I yield?") are re-checked under gil_mu (I5), and it
 * publishes no other data.
 */
#include "runtime/gil/sync_gil.h"
#include "runtime/sync.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

__thread struct gil_tls gil_self;
atomic_int gil_drop_request;

#define GIL_DEFAULT_INTERVAL_US 5000u

static pthread_mutex_t gil_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gil_cond;
static pthread_cond_t gil_switch_cond;
static int gil_conds_ready;

static atomic_int pub_nwaiters;
static _Atomic uint64_t pub_switch_number;

static struct {
    int locked;
    int holder;
    uint64_t switch_number;
    int nwaiters;
    int forced;
    uint64_t interval_ns;
    const char *holder_site;
    uint32_t holder_where;
    struct gil_tls *holder_tls;
    uint64_t t0_ns;
} g;

static void gil_deadline(struct timespec *ts, uint64_t ns)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    uint64_t nsec = (uint64_t)ts->tv_nsec + ns;
    ts->tv_sec += (time_t)(nsec / 1000000000u);
    ts->tv_nsec = (long)(nsec % 1000000000u);
}

/* Takes the GIL for the calling thread. Called with gil_mu held; returns with it held.
 * t0: when the thread stopped holding (a dropper's release time), or 0: the wait, if
 * any, starts now. */
static void gil_take_locked(int tid, uint64_t t0)
{
#if STMBENCH_WHERE
    /* the holder the wait is charged to, as the wait begins */
    int holder = g.locked ? g.holder : -1;
    const char *hsite = g.holder_site;
    uint32_t hwhere = g.holder_where;
#endif
    if (g.locked) {
        if (!t0)
            t0 = sync_now_ns();
        TA_TIMED_BEGIN(TA_WAIT_GIL);   /* a dropper's is open already (_gil_yield) */
        g.nwaiters++;
        /* relaxed: an observation copy for gil_waiters(); gil_mu orders the rest */
        atomic_store_explicit(&pub_nwaiters, g.nwaiters, memory_order_relaxed);
        while (g.locked) {
            uint64_t saved = g.switch_number;
            struct timespec dl;
            gil_deadline(&dl, g.interval_ns);
            int rc = pthread_cond_timedwait(&gil_cond, &gil_mu, &dl);
            /* A whole interval passed and nobody handed over: ask the holder to drop.
             * relaxed: see the header comment (a hint re-checked under gil_mu by the
             * holder; gil_mu orders everything else). */
            if (rc == ETIMEDOUT && g.locked && g.switch_number == saved) {
                atomic_store_explicit(&gil_drop_request, 1, memory_order_relaxed);
#if STMBENCH_WHERE
                /* relaxed: a hint for the holder's block ends (GIL_NOTE_SITE) */
                if (g.holder_tls)
                    atomic_store_explicit(&g.holder_tls->note, 1, memory_order_relaxed);
#endif
            }
        }
        g.nwaiters--;
        /* relaxed: an observation copy, as above */
        atomic_store_explicit(&pub_nwaiters, g.nwaiters, memory_order_relaxed);
    }
    if (t0) {
        uint64_t now = sync_now_ns();
        gil_self.stats.gil_wait_ns += now - t0;
#if STMBENCH_WHERE
        struct sync_conflict c = {
            .t_ns = now - g.t0_ns,
            .thread = tid,
            .other = holder,
            .kind = SYNC_KIND_LOCK_WAIT,
            .site = gil_self.site,
            .wasted_ns = now - t0,
            .where = sync_where_at(tid, 0),
            .other_site = holder >= 0 ? hsite : NULL,
            .other_where = holder >= 0 ? hwhere : 0,
            .object_s = "the GIL",
        };
        if (sync_waits_wanted)
            sync_stats_add_wait(&gil_self.stats, &c);
#endif
    }
    TA_TIMED_END();
    g.locked = 1;
    g.holder = tid;
#if STMBENCH_WHERE
    g.holder_site = gil_self.site;
    g.holder_where = sync_where_at(tid, 0);
    g.holder_tls = &gil_self;
    /* relaxed: our own flag; a waiter sets it only under gil_mu, as we clear it */
    atomic_store_explicit(&gil_self.note, 0, memory_order_relaxed);
#endif
    g.switch_number++;
    /* relaxed: an observation copy for gil_switch_number() */
    atomic_store_explicit(&pub_switch_number, g.switch_number, memory_order_relaxed);
    if (g.forced) {
        gil_self.stats.gil_handoffs++;
        g.forced = 0;
    }
    /* relaxed: written under gil_mu; a holder that still sees a stale 1 re-checks
     * under gil_mu in _gil_yield (I5). */
    atomic_store_explicit(&gil_drop_request, 0, memory_order_relaxed);
    gil_self.holding = 1;
    /* A thread that dropped on request waits for this change of switch number (I4). */
    pthread_cond_broadcast(&gil_switch_cond);
}

/* Releases the GIL. Called with gil_mu held. */
static void gil_release_locked(int forced)
{
    g.locked = 0;
    g.holder = -1;
    g.holder_tls = NULL;
    g.forced = forced;
    gil_self.holding = 0;
    pthread_cond_signal(&gil_cond);
}

/* The time breakdown's block hooks in a window (sync_gil.h): every block begun in the
 * window is timed; the outermost one adds the bias its end finds. */
void _gil_begin_window(void)
{
    ta_block_enter_slow();
    if (gil_self.depth == 1)
        gil_self.depth += GIL_WINDOW_BIAS;
}

/* Reached from a block's end when the depth did not reach 0: a nested block ends, or
 * a block of the window (the depth at or above the bias; an outermost one takes the
 * bias off and counts its commit). */
void _gil_end_nonzero(void)
{
    if (gil_self.depth < GIL_WINDOW_BIAS)
        return;
    ta_block_leave_slow();
    if (gil_self.depth == GIL_WINDOW_BIAS) {
        gil_self.depth = 0;
        gil_self.stats.commits++;
    }
}

void _gil_yield(void)
{
    if (!gil_self.holding || gil_self.depth != 0)
        return;
    pthread_mutex_lock(&gil_mu);
    if (g.nwaiters == 0) {
        /* Nobody to hand over to (I5): keep the GIL. relaxed: under gil_mu. */
        atomic_store_explicit(&gil_drop_request, 0, memory_order_relaxed);
        pthread_mutex_unlock(&gil_mu);
        return;
    }
    int tid = g.holder;
    uint64_t dropped_at = g.switch_number;
    uint64_t t0 = sync_now_ns();
    /* Time breakdown: the hand-off lasts until another thread holds the GIL; from
     * then on this thread waits to take it back. */
    TA_TIMED_BEGIN(TA_HANDOFF);
    gil_release_locked(1);
    /* Forced switching (I4): a waiter exists, so the switch number will change. */
    while (g.switch_number == dropped_at)
        pthread_cond_wait(&gil_switch_cond, &gil_mu);
    TA_TIMED_BEGIN(TA_WAIT_GIL);
    gil_take_locked(tid, t0);
    pthread_mutex_unlock(&gil_mu);
}

int gil_holder(void)
{
    pthread_mutex_lock(&gil_mu);
    int h = g.locked ? g.holder : -1;
    pthread_mutex_unlock(&gil_mu);
    return h;
}

uint64_t gil_switch_number(void)
{
    /* relaxed: a snapshot for observers; the caller's own hand-overs (gil_mu) order
     * it after every switch this thread took part in. */
    return atomic_load_explicit(&pub_switch_number, memory_order_relaxed);
}

int gil_waiters(void)
{
    /* relaxed: a snapshot for observers (may be stale by the time it is used) */
    return atomic_load_explicit(&pub_nwaiters, memory_order_relaxed);
}

static int gil_init(const struct sync_config *cfg, char *err, size_t errlen)
{
    pthread_condattr_t attr;
    int rc;
    pthread_mutex_lock(&gil_mu);
    if (gil_conds_ready) {
        pthread_cond_destroy(&gil_cond);
        pthread_cond_destroy(&gil_switch_cond);
        gil_conds_ready = 0;
    }
    if ((rc = pthread_condattr_init(&attr)) != 0 ||
        (rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)) != 0 ||
        (rc = pthread_cond_init(&gil_cond, &attr)) != 0) {
        pthread_mutex_unlock(&gil_mu);
        snprintf(err, errlen, "gil: cannot create its condition variable: %s", strerror(rc));
        return -1;
    }
    pthread_condattr_destroy(&attr);
    if ((rc = pthread_cond_init(&gil_switch_cond, NULL)) != 0) {
        pthread_cond_destroy(&gil_cond);
        pthread_mutex_unlock(&gil_mu);
        snprintf(err, errlen, "gil: cannot create its condition variable: %s", strerror(rc));
        return -1;
    }
    gil_conds_ready = 1;
    memset(&g, 0, sizeof g);
    g.holder = -1;
    /* relaxed: no thread is entered during init (I6) */
    atomic_store_explicit(&pub_nwaiters, 0, memory_order_relaxed);
    atomic_store_explicit(&pub_switch_number, 0, memory_order_relaxed);
    uint64_t us = cfg && cfg->gil_interval_us ? cfg->gil_interval_us : GIL_DEFAULT_INTERVAL_US;
    g.interval_ns = us * 1000u;
    g.t0_ns = sync_now_ns();
    /* relaxed: no thread is entered during init (I6); gil_mu's unlock publishes it. */
    atomic_store_explicit(&gil_drop_request, 0, memory_order_relaxed);
    pthread_mutex_unlock(&gil_mu);
    return 0;
}

static void gil_fini(void)
{
    pthread_mutex_lock(&gil_mu);
    if (gil_conds_ready) {
        pthread_cond_destroy(&gil_cond);
        pthread_cond_destroy(&gil_switch_cond);
        gil_conds_ready = 0;
    }
    memset(&g, 0, sizeof g);
    g.holder = -1;
    pthread_mutex_unlock(&gil_mu);
}

static int gil_enter(int tid, char *err, size_t errlen)
{
    if (!gil_conds_ready) {
        snprintf(err, errlen, "gil: thread %d entered before init", tid);
        return -1;
    }
    if (gil_self.holding) {
        snprintf(err, errlen, "gil: thread %d entered twice without thread_exit", tid);
        return -1;
    }
    memset(&gil_self, 0, sizeof gil_self);
    pthread_mutex_lock(&gil_mu);
    gil_take_locked(tid, 0);
    pthread_mutex_unlock(&gil_mu);
    return 0;
}

static void gil_exit(struct sync_stats *out)
{
    if (gil_self.holding) {
        pthread_mutex_lock(&gil_mu);
        gil_release_locked(0);
        pthread_mutex_unlock(&gil_mu);
    }
    if (out)
        sync_stats_merge(out, &gil_self.stats);
    else
        sync_stats_free(&gil_self.stats);
}

const struct sync_runtime sync_runtime_gil = {
    .name = "gil",
    .summary = "a CPython-style GIL (3.2+ design: switch interval, drop request, forced hand-off)",
    .max_threads = 0,
    .init = gil_init, .fini = gil_fini,
    .thread_enter = gil_enter, .thread_exit = gil_exit,
};
