/*
 * runtime/gil/sync_gil.h - a CPython-style (3.2+) global interpreter lock.
 *
 * A thread holds the GIL from thread_enter to thread_exit, except at a sync_tick()
 * where it gives it away: a thread that has waited a whole switch interval sets
 * gil_drop_request; the holder sees it at its next tick outside any atomic block,
 * releases, and waits until another thread has taken the GIL (forced switching: it
 * cannot re-grab it first). An atomic block never releases the GIL (`with atomic:`).
 *
 * Contention analysis (docs/contract.md "Conflict log", kind lock-wait): every take of
 * the GIL that had to wait logs one row (gil.c): the wait, the waiter's last block and
 * location, and the holder at the wait's start with its last block and its location
 * when it took the GIL. A thread's last block is the label of the last block that
 * ended while a drop was requested of it (GIL_NOTE_SITE): the block before the tick
 * that drops, the only one that matters. The waiter that sets gil_drop_request also
 * sets the holder's own `note` (gil.c); a block's end tests it, one thread-local load
 * and a branch, all the contention analysis costs outside the waits (STMBENCH_WHERE):
 * the label is evaluated only when the note is asked for, and the rest is recorded by
 * the taker once per switch interval.
 */
#ifndef SYNC_GIL_H
#define SYNC_GIL_H

#include "runtime/plain_heap.h"
#include "runtime/common.h"
#include "runtime/timeacct.h"

#include <stdatomic.h>

#define SYNC_RT_NAME "gil"
#define SYNC_RT_ID gil

struct gil_tls {
    int depth;        /* atomic-block nesting; the GIL is never dropped while > 0
                       * (an outermost block in a window adds GIL_WINDOW_BIAS) */
    int ta_window;    /* a window of the time breakdown is open (SYNC_LOOP_WINDOW) */
    int holding;      /* this thread holds the GIL */
    /* Contention analysis: set (relaxed, under gil_mu) by the waiter that asks this
     * thread, the holder, to drop; cleared by the thread when it takes the GIL. */
    _Atomic int note;
    const char *site; /* the last block that ended while `note` was set */
    struct sync_stats stats;
};
extern __thread struct gil_tls gil_self;
/* Set (relaxed is enough: it is a hint re-checked under the GIL's mutex) by a waiter
 * whose switch interval expired; cleared by the thread that takes the GIL. */
extern atomic_int gil_drop_request;
/* Slow path of sync_tick(): drop the GIL, wait until another thread took it, retake it.
 * Does nothing (but clear the request) when no thread is waiting, so one thread alone
 * never blocks. */
void _gil_yield(void);

/* Introspection for tests and micro-benchmarks (take the GIL's mutex; cold path). */
int gil_holder(void);              /* tid of the holder, -1 when free */
uint64_t gil_switch_number(void);  /* number of times the GIL was taken since init */
int gil_waiters(void);             /* threads waiting to take it */

/* The time breakdown's block hooks. The begin tests the loop's window, a flag in
 * gil_self beside the depth it updates anyway (testing ta_self's flag, a TLS address
 * of its own, cost the hashmap block several times the GIL's own block in callgrind
 * instructions: commit 3145d4d has the counts). The end tests nothing more than the depth it counts
 * down: a block begun in a window (outermost) adds GIL_WINDOW_BIAS to the depth, so
 * its end does not reach 0 and takes the slow path (out of line, as is the end of a
 * nested block), which leaves the window's block and takes the bias off. A block
 * outside a window, the common case, costs one test at its begin. The window is
 * opened and closed by the thread loop only, outside blocks (SYNC_LOOP_WINDOW), so the
 * bias never outlives a block. */
#define SYNC_LOOP_WINDOW(on) ((void)(gil_self.ta_window = (on)))
#define GIL_WINDOW_BIAS 0x40000000
void _gil_begin_window(void);
void _gil_end_nonzero(void);
SYNC_INLINE int _gil_begin(void)
{
    gil_self.depth++;
#if STMBENCH_TIMEACCT
    if (SYNC_UNLIKELY(gil_self.ta_window))
        _gil_begin_window();
#endif
    return 1;
}

SYNC_INLINE int _gil_end(void)
{
    if (SYNC_LIKELY(--gil_self.depth == 0))
        gil_self.stats.commits++;
#if STMBENCH_TIMEACCT
    else
        _gil_end_nonzero();    /* a nested block, or one of a window */
#endif
    return 0;
}

/* A block ends while a drop is asked of this thread: the tick after it drops, so the
 * thread notes the block's label for the rows of that hand-off (gil.c). A macro, so
 * that the label is evaluated only then. relaxed: a hint, as the request is at the
 * tick (one set after this test leaves the label of an earlier block noted). */
#if STMBENCH_WHERE
#define GIL_NOTE_SITE(label)                                                               \
    ((void)(SYNC_UNLIKELY(atomic_load_explicit(&gil_self.note, memory_order_relaxed))      \
                ? (gil_self.site = (label)) : NULL))
#else
#define GIL_NOTE_SITE(label) ((void)(0 && (label)))   /* named, never evaluated */
#endif

#define SYNC_ATOMIC(site)                                                                   \
    for (int _sync_once = _gil_begin(); _sync_once;                                         \
         _sync_once = (GIL_NOTE_SITE(site), _gil_end()))
/* relaxed: a stale 0 only delays the hand-off to the next tick. */
#define sync_tick()                                                                        \
    do {                                                                                   \
        if (SYNC_UNLIKELY(atomic_load_explicit(&gil_drop_request, memory_order_relaxed)) && \
            gil_self.depth == 0)                                                           \
            _gil_yield();                                                                  \
    } while (0)
#define sync_inevitable() ((void)0)

#endif
