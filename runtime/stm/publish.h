/*
 * runtime/stm/publish.h - the commit windows: their entry and exit, inline because every
 * writing commit passes through them (a thread alone commits in its window). The
 * windows, the commit lock that excludes them and the lazy publication are described,
 * with their invariants (I2, I4) and memory orders, at the top of publish.c, which holds
 * the rest of that code.
 *
 * Memory order: a window's flag store and lock load are seq_cst (the window's half of a
 * Dekker handshake with the lock's CAS and flag loads, publish.c); leaving a window is a
 * release store, paired with the lock's flag loads.
 */
#ifndef STM_PUBLISH_H
#define STM_PUBLISH_H

#include <stdatomic.h>

#include "runtime/stm/stm_internal.h"
#include "runtime/timeacct.h"

/* Enters this thread's commit window (publish.c's head): raises the flag, and lowers it
 * again to wait while the lock is held. */
SYNC_INLINE void stm_window_enter(struct stm_seg *s)
{
    STM_ASSERT(!stm_in_commit(s), "commit window: entered once, without the lock");
    int timed = 0;
    for (int spins = 0;; spins++) {
        /* seq_cst, both: see publish.c's head */
        atomic_store_explicit(&s->committing, 1, memory_order_seq_cst);
        if (!atomic_load_explicit(&G.lock, memory_order_seq_cst))
            break;
        /* release: nothing was done in the window, but a lowering that the lock's
         * holder acquires should carry what this thread did before it, as
         * stm_window_leave's does */
        atomic_store_explicit(&s->committing, 0, memory_order_release);
        if (!timed++)
            TA_TIMED_BEGIN(TA_WAIT_LOCK);
        /* relaxed: only waits for the lock to look free before trying again */
        while (atomic_load_explicit(&G.lock, memory_order_relaxed))
            stm_spin_round(++spins);
    }
    s->in_window = 1;
    if (timed)
        TA_TIMED_END();
}

SYNC_INLINE void stm_window_leave(struct stm_seg *s)
{
    STM_ASSERT(s->in_window, "commit window: left by the thread in it");
    s->in_window = 0;
    /* release: pairs with the seq_cst (acquire) load in stm_commit_lock; everything the
     * commit did in the window (its link, `newest`, its publishing flag) is visible to
     * the lock's next holder */
    atomic_store_explicit(&s->committing, 0, memory_order_release);
}

/* Leaves whichever critical section this thread's commit is in: its window or the lock
 * (at the end of a commit, or at an abort from the validation, log.c). */
SYNC_INLINE void stm_commit_leave(struct stm_seg *s)
{
    if (s->in_window)
        stm_window_leave(s);
    else
        stm_commit_unlock();
}

#endif
