/*
 * runtime/stm/debug.c - introspection of the page-based STM for its tests (declared in
 * stm_internal.h). The invariants I1..I7 and the other files are listed there.
 *
 * Maintains no invariant; reads only. Memory order: G.rev and ownership words are read
 * with acquire (pairing with the committer's release stores), the heap cursor relaxed.
 */

#include "runtime/stm/sync_stm.h"
#include "runtime/sync.h"

#include <stdatomic.h>

#include "runtime/stm/stm_internal.h"

#ifdef STM_TEST_HOOKS

/* ------------------------------------------------------------ introspection */

int stm_debug_eager_pages(void)
{
    return G.eager;
}

int stm_debug_page_accessible(int tid, const void __seg_gs *obj)
{
    return G.segs[tid + 1].gstate[granule_of((uintptr_t)obj)] == G_OWN;
}

uint64_t stm_debug_gshare(const void __seg_gs *obj)
{
    /* acquire: a test reads it after the transitions it checks */
    return atomic_load_explicit(&G.gshare[granule_of((uintptr_t)obj)], memory_order_acquire);
}

void stm_debug_abort_self(void)
{
    stm_abort(SYNC_ABORT_OTHER, -1, 0);
}

uintptr_t stm_debug_heap_cursor(void)
{
    return atomic_load_explicit(&G.heap_cursor, memory_order_relaxed);
}

/* The newest revision a thread has reached: G.rev lags (the lazy publication), while a
 * committer's rev is its entry's right after its link, and an entered thread's its last
 * import. Exact when no commit is between its link and its rev's store. */
uint64_t stm_debug_rev(void)
{
    uint64_t r = atomic_load_explicit(&G.rev, memory_order_acquire);
    for (int i = 1; i <= G.nseg; i++) {
        /* acquire: pairs with the release store of a segment's rev */
        uint64_t x = atomic_load_explicit(&G.segs[i].rev, memory_order_acquire);
        r = x > r ? x : r;
    }
    return r;
}

const void *stm_debug_committed(const void __seg_gs *obj)
{
    return seg_addr(0, (uintptr_t)obj);
}

int stm_debug_owner(const void __seg_gs *obj)
{
    uint64_t w = atomic_load_explicit(wlock_slot((uintptr_t)obj), memory_order_acquire);
    return (int)(w & 0xffff) - 1;
}

#endif /* STM_TEST_HOOKS */
