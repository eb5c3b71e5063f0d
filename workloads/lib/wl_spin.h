/*
 * workloads/lib/wl_spin.h - the small lock of the fine-grained `locks` variants of
 * rbtree and hashmap: one int per node or bucket, so it fits in object padding.
 *
 * Test-and-test-and-set with a CPU pause, then sched_yield() after a few spins: the
 * benchmark runs more threads than cores (4 threads on 2 cores in the stress tests),
 * and a waiter that spins while the holder is descheduled only burns the holder's
 * time slice.
 *
 * Invariant: v == 1 exactly while some thread holds the lock. The acquiring CAS
 * (acquire) pairs with the releasing store in wl_spin_unlock (release), so everything
 * the previous holder wrote under the lock is visible to the next holder.
 */
#ifndef WL_SPIN_H
#define WL_SPIN_H

#include "runtime/timeacct.h"

#include <sched.h>
#include <stdatomic.h>

typedef struct {
    atomic_int v;
} wl_spin_t;

#define WL_SPIN_YIELD_AFTER 64

#if defined(__x86_64__) || defined(__i386__)
#define WL_SPIN_PAUSE() __builtin_ia32_pause()
#else
#define WL_SPIN_PAUSE() ((void)0)
#endif

static inline void wl_spin_init(wl_spin_t *l)
{
    atomic_init(&l->v, 0);
}

static inline void wl_spin_lock(wl_spin_t *l)
{
    unsigned spins = 0;
    int waited = 0;
    for (;;) {
        int expect = 0;
        /* acquire: pairs with the release store in wl_spin_unlock of the last holder */
        if (__builtin_expect(atomic_compare_exchange_weak_explicit(
                &l->v, &expect, 1, memory_order_acquire, memory_order_relaxed), 1)) {
            if (waited)
                TA_TIMED_END();
            return;
        }
        if (!waited) {   /* the time breakdown's wait_lock: only a taken lock is timed */
            waited = 1;
            TA_TIMED_BEGIN(TA_WAIT_LOCK);
        }
        /* relaxed: only a hint that the lock looks free; the CAS above decides */
        while (atomic_load_explicit(&l->v, memory_order_relaxed)) {
            if (++spins < WL_SPIN_YIELD_AFTER) {
                WL_SPIN_PAUSE();
            } else {
                spins = 0;
                sched_yield();
            }
        }
    }
}

static inline void wl_spin_unlock(wl_spin_t *l)
{
    /* release: pairs with the acquire CAS of the next wl_spin_lock */
    atomic_store_explicit(&l->v, 0, memory_order_release);
}

#endif
