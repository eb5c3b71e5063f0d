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
 * Invariant: v != 0 exactly while some thread holds the lock. A held word names its
 * holder for contention analysis: it is the holder's sync_lock_word[site] (bits 0-15
 * its thread index + 1, or SYNC_LOCK_ID_NONE outside the locks runtime: never 0; bits
 * 16 and up the site code of the call that took it, enum wl_spin_site, 0 none). The
 * acquiring CAS (acquire) pairs with the releasing store in wl_spin_unlock (release),
 * so everything the previous holder wrote under the lock is visible to the next
 * holder.
 *
 * Contention analysis (docs/contract.md "Conflict log", kind lock-wait): a thread
 * whose first CAS fails logs one row when it has the lock (wl_spin_wait, out of line):
 * the time it waited, the object the caller named, its own site and location, and
 * the holder seen in the word at its first try with that holder's site and location
 * (sync_where_at). The uncontended path is the CAS alone, as before: the holder's word
 * is one thread-local load where the constant 1 was.
 */
#ifndef WL_SPIN_H
#define WL_SPIN_H

#include "runtime/common.h"
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

/* Where a lock is taken: a code and the label of the rows (wl_spin_site_label), one
 * line each. The workloads' operation kinds index the hashmap's and rbtree's
 * (WL_AT_HASHMAP + HM_OP_INSERT...), so one addition names the operation. */
#define WL_SPIN_SITES(X)                                                                   \
    X(NONE, NULL)                    /* not named: the row's location says (interp) */     \
    X(BANK_TRANSFER, "bank.transfer")   /* bank: a transfer's accounts */                  \
    X(BANK_AUDIT, "bank.audit")      /* bank_lock_all: every account (audits) */           \
    X(HASHMAP, "hashmap.lookup")     /* + HM_OP_LOOKUP, HM_OP_INSERT, HM_OP_DELETE */      \
    X(HASHMAP_INSERT, "hashmap.insert")                                                    \
    X(HASHMAP_DELETE, "hashmap.delete")                                                    \
    X(RBTREE, "rbtree.lookup")       /* + RB_OP_...: a lookup's fallback, updates */       \
    X(RBTREE_INSERT, "rbtree.insert")                                                      \
    X(RBTREE_DELETE, "rbtree.delete")                                                      \
    X(COMPOSE_FIND, "compose.find")  /* compose: a find's fallback (a stripe) */           \
    X(COMPOSE_MOVE, "compose.move")  /* a move (its stripe) */                             \
    X(COMPOSE_TRANSFER, "compose.transfer") /* a transfer's accounts and ledger */         \
    X(COMPOSE_AUDIT, "compose.audit")   /* an audit's fallback (the ledger) */
#define WL_SPIN_SITE_ENUM(name, label) WL_AT_##name,
enum wl_spin_site { WL_SPIN_SITES(WL_SPIN_SITE_ENUM) WL_AT_NSITES };
_Static_assert(WL_AT_NSITES <= SYNC_LOCK_SITES, "a site code indexes sync_lock_word");
#define WL_SPIN_ID_MASK 0xffffu

/* The site's label ("bank.transfer"), NULL for WL_AT_NONE or a code it does not know. */
const char *wl_spin_site_label(unsigned site);

/* The slow path: the first CAS found the word `seen`; waits, takes the lock, logs the
 * wait. Under clang it preserves the caller's registers (preserve_most): a plain call
 * here made the interpreter's loop, which takes a lock per bytecode that touches an
 * object, reload values from its stack on the fast path (many more instructions per
 * bytecode under callgrind: commit 68e2568 has the counts). */
#if defined(__clang__)
#define WL_SPIN_COLD __attribute__((preserve_most, cold, noinline))
#else
#define WL_SPIN_COLD __attribute__((cold, noinline))
#endif
void wl_spin_wait(wl_spin_t *l, int seen, uintptr_t obj, unsigned site) WL_SPIN_COLD;

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

/* Takes the lock at `site`; a wait names `obj` (the object that holds the lock, as
 * the workload's describe_object knows it). */
static inline void wl_spin_lock_at(wl_spin_t *l, uintptr_t obj, unsigned site)
{
    int expect = 0;
    /* acquire: pairs with the release store in wl_spin_unlock of the last holder */
    if (__builtin_expect(atomic_compare_exchange_strong_explicit(
            &l->v, &expect, (int)sync_lock_word[site],
            memory_order_acquire, memory_order_relaxed), 1))
        return;
    wl_spin_wait(l, expect, obj, site);
}

/* A lock with no site: a wait names the lock itself as its object. */
static inline void wl_spin_lock(wl_spin_t *l)
{
    wl_spin_lock_at(l, (uintptr_t)l, WL_AT_NONE);
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
