/*
 * runtime/stm/alloc.c - allocation and freeing in the page-based STM: per-thread bump chunks of
 * whole granules, size-class free lists, and the limbo that holds freed objects until
 * their grace period is over. The invariants I1..I7 and the other files are listed in
 * stm_internal.h.
 *
 * Maintains I7 (an object freed at revision R is reused only once G.min_rev >= R, or
 * when the thread is alone) and the chunk rule behind I2 (a chunk, and each of its
 * granules, has one allocating thread).
 *
 * Maintains D1 (the depot): G.depot.cls[c] holds only ready objects (I7: past their
 * grace period for every thread, or freed by a private commit), each in exactly one of
 * the depot, a ready list, or use; G.depot.n[c] equals cls[c].n whenever the depot's
 * lock is free. A segment whose ready list of a class reaches STM_DEPOT_HIGH moves its
 * oldest entries down to DEPOT_KEEP into the depot; a segment whose list is empty takes
 * up to DEPOT_BATCH before it bump-allocates. So what one thread frees and another
 * allocates circulates instead of piling up in the freer's lists while the allocator
 * takes fresh heap (interp's work-queue and tracing collector under stm, issue 28).
 *
 * Memory order: G.min_rev is loaded with acquire (pairs with the release CAS in
 * stm_gc_own_entries, log.c); the heap cursor and nactive are relaxed (atomicity only,
 * and a hint re-checked in a commit window or under the lock, where it stands still).
 * The depot's lock is taken with an acquire exchange and released with a release
 * store, which order every access to cls[]; n[] is a relaxed hint, re-read under the
 * lock.
 */

#include "runtime/stm/sync_stm.h"
#include "runtime/sync.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/stm/stm_internal.h"

/* ------------------------------------------------------------ the depot (D1) */

/* a ready list of STM_DEPOT_HIGH entries spills down to DEPOT_KEEP (its newest:
 * cache-warm) */
#define DEPOT_KEEP (STM_DEPOT_HIGH / 4)
#define DEPOT_BATCH (STM_DEPOT_HIGH / 8) /* a take moves at most this many */

#ifdef STM_TEST_HOOKS
_Atomic unsigned long stm_test_depot_spills, stm_test_depot_takes;
#define DEPOT_COUNT(c) atomic_fetch_add_explicit(&(c), 1, memory_order_relaxed)
#else
#define DEPOT_COUNT(c) ((void)0)
#endif

static void depot_lock(void)
{
    /* acquire: pairs with the release in depot_unlock; cls[] is then ours */
    while (atomic_exchange_explicit(&G.depot.lock, 1, memory_order_acquire))
        while (atomic_load_explicit(&G.depot.lock, memory_order_relaxed))
            __builtin_ia32_pause();
}
static void depot_unlock(void)
{
    /* release: our changes to cls[] before the next holder's reads */
    atomic_store_explicit(&G.depot.lock, 0, memory_order_release);
}

/* Moves the oldest entries of s's ready list of cls to the depot, keeping DEPOT_KEEP. */
void stm_depot_spill(struct stm_seg *s, int cls)
{
    struct freelist *f = &s->ready[cls];
    size_t k = f->n - DEPOT_KEEP;
    STM_ASSERT(f->n > DEPOT_KEEP, "D1: a spill leaves DEPOT_KEEP entries");
    depot_lock();
    struct freelist *d = &G.depot.cls[cls];
    for (size_t i = 0; i < k; i++)
        freelist_push(d, f->v[i]);
    /* relaxed: a hint; takers re-read cls[].n under the lock */
    atomic_store_explicit(&G.depot.n[cls], (uint32_t)d->n, memory_order_relaxed);
    depot_unlock();
    memmove(f->v, f->v + k, (f->n - k) * sizeof *f->v);
    f->n -= k;
    s->depot_spills++;
    DEPOT_COUNT(stm_test_depot_spills);
}

/* Takes up to DEPOT_BATCH entries of cls from the depot into s's (empty) ready list. */
static void depot_take(struct stm_seg *s, int cls)
{
    struct freelist *f = &s->ready[cls];
    depot_lock();
    struct freelist *d = &G.depot.cls[cls];
    size_t k = d->n < DEPOT_BATCH ? d->n : DEPOT_BATCH;
    for (size_t i = 0; i < k; i++)
        freelist_push(f, freelist_pop(d));
    /* relaxed: as in stm_depot_spill */
    atomic_store_explicit(&G.depot.n[cls], (uint32_t)d->n, memory_order_relaxed);
    depot_unlock();
    if (k) {
        s->depot_takes++;
        DEPOT_COUNT(stm_test_depot_takes);
    }
}

/* ------------------------------------------------------------ allocation */

/* Moves limbo entries whose grace period is over to the ready lists (I7). */
static void reclaim_limbo(struct stm_seg *s)
{
    /* acquire: pairs with the release CAS in gc_own_entries */
    uint64_t min = atomic_load_explicit(&G.min_rev, memory_order_acquire);
    /* A thread alone can reuse everything it freed: its own snapshot has the frees
     * committed, and a thread entering now starts from segment 0, which has them too
     * (relaxed: nactive only grows under the lock, by entering threads). */
    STM_ASSERT(min <= atomic_load_explicit(&s->rev, memory_order_relaxed),
               "I7: G.min_rev never passes an active thread's rev");
    if (atomic_load_explicit(&G.nactive, memory_order_relaxed) == 1)
        min = UINT64_MAX;
    while (s->limbo_head < s->nlimbo && s->limbo[s->limbo_head].rev <= min) {
        struct limbo_entry *l = &s->limbo[s->limbo_head++];
        STM_ASSERT(l->rev <= atomic_load_explicit(&s->rev, memory_order_relaxed),
                   "I7: reused only after the freeing commit, from our snapshot on");
        ready_push(s, l->cls, l->off);
    }
    if (s->limbo_head == s->nlimbo)
        s->limbo_head = s->nlimbo = 0;
}

static void new_chunk(struct stm_seg *s, size_t need)
{
    if (s->bump != s->range_start)
        push_range(s, s->range_start, s->bump);
    /* Whole granules, so a chunk (and each granule) has one allocating thread. */
    size_t sz = (need + CHUNK - 1) & ~(CHUNK - 1);
    uintptr_t off = 0;
    for (size_t i = 0; i < s->nspares; i++)
        if (s->spares[i].size >= sz) { /* a chunk of an aborted attempt, ours already */
            off = s->spares[i].off;
            sz = s->spares[i].size;
            s->spares[i] = s->spares[--s->nspares];
            break;
        }
    /* relaxed: only atomicity matters; the chunk is ours alone */
    if (!off)
        off = atomic_fetch_add_explicit(&G.heap_cursor, sz, memory_order_relaxed);
    if (off + sz > G.rm_size + G.heap_size) {
        /* Not a protocol failure but a resource one: say so and exit 3 (the runtime
         * could not go on), leaving every results file untouched. */
        fprintf(stderr, "stmbench: stm: the shared heap (%zu MiB per segment) is exhausted; "
                "run with a larger --heap-mb\n", G.heap_size >> 20);
        fflush(stderr);
        _exit(3);
    }
    STM_ASSERT((off - G.rm_size) % CHUNK == 0 && sz % CHUNK == 0,
               "I2: a chunk is whole granules, one allocating thread each");
    /* Recorded first: bringing it in may fill other granules too (a fill-all), which can
     * abort (pages.c), and an aborted attempt's chunks become spares. */
    push_chunk(&s->tx_chunks, &s->ntx_chunks, &s->tx_chunks_cap, off, sz);
    ensure_accessible(off, sz, 1);
    s->chunk_start = s->bump = s->range_start = off;
    s->bump_end = off + sz;
}

void __seg_gs *_stm_alloc(size_t size)
{
    struct stm_seg *s = stm_me;
    if (SYNC_UNLIKELY(stm_self.depth == 0))
        stm_fatal("%s outside an atomic block", "sync_alloc");
    size_t n = (size + 15) & ~(size_t)15;
    if (n == 0)
        n = 16;
    if (size > UINT32_MAX)
        stm_fatal("object too large (%s)", "size > 4 GiB");
    uintptr_t off;
    int cls = stm_size_class(n);
    if (cls >= 0 && s->nlimbo)
        reclaim_limbo(s);
    /* relaxed: a hint (D1); an empty list looks in the depot before taking fresh heap */
    if (cls >= 0 && !s->ready[cls].n &&
        atomic_load_explicit(&G.depot.n[cls], memory_order_relaxed))
        depot_take(s, cls);
    if (cls >= 0 && s->ready[cls].n) {
        /* Brought in before it leaves the list: a fill can abort (pages.c). */
        ensure_accessible(s->ready[cls].v[s->ready[cls].n - 1], n, 0);
        off = freelist_pop(&s->ready[cls]);
        STM_ASSERT((atomic_load_explicit(wlock_slot(off), memory_order_relaxed) & 0xffff) == 0,
                   "I3, I7: a reused object has no owner");
        push_recycled(s, off, (uint32_t)n, cls);
    } else {
        if (s->bump + n > s->bump_end)
            new_chunk(s, n);
        off = s->bump;
        s->bump += n;
    }
    STM_ASSERT(off >= G.rm_size && off + n <= G.rm_size + G.heap_size && s->bump <= s->bump_end,
               "an allocation lies in the heap");
    char *p = seg_addr(s->idx, off);
    memset(p, 0, n);
    struct sync_hdr *h = (struct sync_hdr *)p;
    h->flags = 0; /* new in this transaction: no write barrier needed */
    h->size = (uint32_t)size;
    stm_self.dirty = STM_DIRTY_OTHER;
    SYNC_COMPILER_BARRIER(); /* the caller reads it back through %gs */
    return (void __seg_gs *)off;
}

void _stm_free(void __seg_gs *obj)
{
    struct stm_seg *s = stm_me;
    if (SYNC_UNLIKELY(stm_self.depth == 0))
        stm_fatal("%s outside an atomic block", "SYNC_FREE");
    if (!obj)
        return;
    stm_write_barrier(obj); /* a free is a write: concurrent readers must abort */
    uintptr_t off = (uintptr_t)obj;
    uint32_t size = ((const struct sync_hdr __seg_gs *)obj)->size;
    push_free(s, off, (size + 15) & ~15u);
    stm_self.dirty = STM_DIRTY_OTHER;
}
