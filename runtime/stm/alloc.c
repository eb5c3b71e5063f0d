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
 * Memory order: G.min_rev is loaded with acquire (pairs with the release CAS in
 * stm_gc_own_entries, log.c); the heap cursor and nactive are relaxed (atomicity only,
 * and a hint re-checked in a commit window or under the lock, where it stands still).
 */

#include "runtime/stm/sync_stm.h"
#include "runtime/sync.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime/stm/stm_internal.h"

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
        freelist_push(&s->ready[l->cls], l->off);
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
    stm_self.dirty = 1;
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
    stm_self.dirty = 1;
}
