/*
 * workloads/lib/wl_qsbr.h - quiescent-state-based reclamation (QSBR) for the `locks`
 * variants whose lookups take no lock (rbtree, hashmap): a node unlinked while a
 * lock-free reader may still hold it is not freed until every worker has passed a
 * quiescent state (a point between two operations, where it holds no node).
 *
 * The scheme is the epoch form of QSBR (McKenney's RCU; Fraser's epoch-based
 * reclamation): a global epoch E; each worker's slot records `seen`, the E it read at
 * its last quiescent state (or OFFLINE while it runs no operation). A node retired
 * with tag t (the E its deleter read after unlinking it) is freed once E >= t + 3.
 * E moves from e to e + 1 only when every online slot has seen == e.
 *
 * Why freeing at t + 3 is safe (R a reader holding node N, D its deleter):
 *   - R got N before D unlinked it, during an operation that began at a quiescent
 *     state where R read E = e (R only stores what it reads, so seen == e or less).
 *   - E reached e while D was online, so D had announced at least e - 1 before that;
 *     D's read of E after the unlink comes after its own announcement in program
 *     order, so (coherence) t >= e - 1, and t + 3 >= e + 2.
 *   - E moves from e + 1 to e + 2 only after R announces e + 1, which R does at a
 *     quiescent state after the operation that held N. So N is freed only after R
 *     dropped it. No fence is needed: coherence alone gives t >= e - 1, which is why
 *     the rule waits for t + 3 rather than the textbook t + 2 (that one needs a
 *     seq_cst fence between the unlink and the read of E).
 *   - Happens-before for the free (what ThreadSanitizer checks): R's reads of N are
 *     sequenced before R's release store of seen = e + 1; the advancer's acquire load
 *     of that slot precedes its acq_rel CAS of E; D's acquire load of E (>= t + 3)
 *     precedes the free.
 *
 * Why our own and not liburcu: liburcu's call_rcu frees in a helper thread (another
 * allocator's thread in every measurement), its QSBR flavour needs the same quiescent
 * calls as this file, and its atomics are inline assembly ThreadSanitizer cannot
 * follow; this file is C11 atomics only, and the deleting worker frees its own
 * retired nodes at its quiescent states.
 *
 * Cost on the fast path: wl_qsbr_quiescent is one load of E (a line written only when
 * E advances, once per WL_QSBR_BATCH retirements at most) and a store to the worker's
 * own slot line when E has changed; retiring is an append to a per-thread array.
 *
 * Threads: slots [0, nthreads) are the workers; each slot's limbo list is touched only
 * by its owner, and by wl_qsbr_destroy after every worker was joined.
 */
#ifndef WL_QSBR_H
#define WL_QSBR_H

#include "runtime/common.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define WL_QSBR_OFFLINE UINT64_MAX
/* Retired nodes a worker collects before it tries to advance E and free. */
#define WL_QSBR_BATCH 64

struct wl_qsbr_slot {
    atomic_uint_least64_t seen;      /* E at the last quiescent state, or OFFLINE */
    /* The owner's limbo list, in retirement order (tags never decrease). */
    void **ptr;
    uint64_t *tag;
    size_t head, n, cap;             /* live entries are [head, n) */
} SYNC_CL_ALIGNED;

struct wl_qsbr {                     /* allocated line-aligned by wl_qsbr_new */
    atomic_uint_least64_t epoch;     /* E; its own line (the struct is line-aligned) */
    char pad[SYNC_CACHELINE - sizeof(atomic_uint_least64_t)];
    int nthreads;
    void (*free_fn)(void *);
    struct wl_qsbr_slot *slots;      /* [nthreads] */
} SYNC_CL_ALIGNED;                   /* (so its size is a multiple of the line) */

/* A reclaimer for nthreads workers that frees with free_fn; NULL when out of memory.
 * Every slot starts offline. */
struct wl_qsbr *wl_qsbr_new(int nthreads, void (*free_fn)(void *));
/* Frees everything still retired, then q; no worker may run. NULL is allowed. */
void wl_qsbr_free(struct wl_qsbr *q);

/* A worker starts (before its first operation) / stops (after its last). */
void wl_qsbr_online(struct wl_qsbr *q, int tid);
void wl_qsbr_offline(struct wl_qsbr *q, int tid);

/* Hands p (already unlinked: no new reader can reach it) to the reclaimer. Out of
 * memory for the limbo list aborts, as sync_alloc does. */
void wl_qsbr_retire(struct wl_qsbr *q, int tid, void *p);

/* Tries to advance E and frees what is old enough; called by wl_qsbr_quiescent. */
void wl_qsbr_reclaim(struct wl_qsbr *q, int tid);

/* The worker holds no node: between two operations. */
static inline void wl_qsbr_quiescent(struct wl_qsbr *q, int tid)
{
    struct wl_qsbr_slot *s = &q->slots[tid];
    /* acquire: pairs with the acq_rel CAS that advanced E, so what the advancer saw
     * (every slot at the previous E) happens before this worker's next operation */
    uint64_t e = atomic_load_explicit(&q->epoch, memory_order_acquire);
    /* relaxed: the slot's own value, written only by this thread */
    if (atomic_load_explicit(&s->seen, memory_order_relaxed) != e)
        /* release: the reads of the operations before it happen before an advancer's
         * acquire load of the slot (the start of a free's happens-before chain) */
        atomic_store_explicit(&s->seen, e, memory_order_release);
    if (SYNC_UNLIKELY(s->n - s->head >= WL_QSBR_BATCH))
        wl_qsbr_reclaim(q, tid);
}

#endif
