/*
 * workloads/lib/wl_spin.h - the one spin lock of the workloads' fine-grained `locks`
 * variants (bank's accounts, rbtree's nodes, hashmap's buckets, interp's objects):
 * one int, so it fits in object padding.
 *
 * Test-and-test-and-set with a CPU pause, then sched_yield() after a few spins: the
 * benchmark runs more threads than cores (4 and 8 threads on 2 cores in the stress
 * tests), and a waiter that spins while the holder is descheduled only burns the
 * holder's time slice.
 *
 * Why our own and not Concurrency Kit's ck_spinlock: CK's locks spin without ever
 * yielding (the oversubscribed runs above then crawl), and its ck_pr operations are
 * inline assembly that ThreadSanitizer cannot see, so every lock-protected field
 * would be reported as a race under `make SAN=thread`. This header is C11 atomics
 * only, which both compilers and TSan understand; it is the same test-and-test-and-set
 * CK's ck_spinlock_fas implements, plus the yield.
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

/* Waits the way wl_spin_lock does: a pause, and a yield every WL_SPIN_YIELD_AFTER
 * calls; *spins counts the calls. For other waits on a word another thread changes. */
static inline void wl_spin_backoff(unsigned *spins)
{
    if (++*spins < WL_SPIN_YIELD_AFTER) {
        WL_SPIN_PAUSE();
    } else {
        *spins = 0;
        sched_yield();
    }
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
        while (atomic_load_explicit(&l->v, memory_order_relaxed))
            wl_spin_backoff(&spins);
    }
}

static inline void wl_spin_unlock(wl_spin_t *l)
{
    /* release: pairs with the acquire CAS of the next wl_spin_lock */
    atomic_store_explicit(&l->v, 0, memory_order_release);
}

/* Single-threaded checks after the run: is the lock held? */
static inline int wl_spin_is_held(const wl_spin_t *l)
{
    /* relaxed: no worker runs (joined), so there is nothing to order with */
    return atomic_load_explicit(&l->v, memory_order_relaxed) != 0;
}

#endif
