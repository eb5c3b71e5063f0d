/*
 * workloads/interp/freelist.h - the counting modes' free boxes (refcount, biased), as
 * CPython 3.14's per-thread freelist of ints (both builds; Objects/longobject.c) and
 * mimalloc's per-thread heaps: a box that dies goes back to its owner's list, and the
 * owner's next box comes from there, not from the allocator.
 *
 * Where: the runtimes whose heap is process memory and whose blocks are never rolled
 * back (seq, gil, mutex, locks: IV_BOX_FREELIST). Under stm, itm and htm a pop inside
 * a block that is thrown away would have to be undone; their boxes come from the
 * runtime's allocator as before.
 *
 * Invariants:
 *  - A box's memory is a box until teardown: it is never given back to the allocator
 *    while a program runs (type-stable memory), and its owner never changes (it goes
 *    back to the list of the thread that allocated it first, and only that thread
 *    takes it again). So a thread that reads a reference to a box that has just died
 *    reads a box's header, and one whose owner field is its own tid knows that nobody
 *    else can hand the memory out again.
 *  - mem.boxes is touched by its owner only. mem.remote is a stack other threads push
 *    onto (locks: a compare-and-swap; elsewhere one slice runs at a time and a push is
 *    plain) and that the owner empties whole (an exchange), never popping one: no
 *    ABA.
 *  - teardown (no thread running) frees every list.
 *
 * Memory orders: at each atomic below.
 */
#ifndef IV_FREELIST_H
#define IV_FREELIST_H

#include "workloads/interp/state.h"

#if (defined(SYNC_RT_SEQ) || defined(SYNC_RT_GIL) || defined(SYNC_RT_MUTEX) ||              \
     defined(SYNC_RT_LOCKS)) && !defined(IV_NO_BOX_FREELIST)
#define IV_BOX_FREELIST 1
#else
#define IV_BOX_FREELIST 0
#endif

#if IV_BOX_FREELIST
/* The next box of a list is kept in the free box's value. */
static inline iv_box_ref iv_box_next(iv_box_ref b) { return (iv_box_ref)(uintptr_t)b->value; }

/* A dead box (its elements none: a box holds an int) goes back to its owner's list. */
static inline __attribute__((always_inline)) void iv_box_free(const struct iv_ctx *cx,
                                                              struct iv_thread *th, iv_box_ref b)
{
    int owner = b->h.owner;
    struct iv_mem *m = owner == th->tid ? &th->mem : cx->mems[owner];
    if (SYNC_LIKELY(m == &th->mem) || !IV_COUNT_ATOMIC) {
        b->value = (int64_t)(uintptr_t)m->boxes;
        m->boxes = b;
        return;
    }
    /* release: the box's last accesses (this thread's and, through the decrement's
     * acquire, the other holders') come before the owner takes it again (its exchange
     * is acquire). relaxed on failure: the loop reads the head again. */
    uintptr_t head = __atomic_load_n(&m->remote, __ATOMIC_RELAXED);
    do {
        b->value = (int64_t)head;
    } while (!__atomic_compare_exchange_n(&m->remote, &head, (uintptr_t)b, true,
                                          __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

/* A box from th's own list, or NULL. Its header is as its last life left it; the
 * caller sets what the allocation hook does not. */
static inline __attribute__((always_inline)) iv_box_ref iv_box_take(struct iv_thread *th)
{
    struct iv_mem *m = &th->mem;
    iv_box_ref b = m->boxes;
    if (SYNC_UNLIKELY(b == NULL)) {
        /* relaxed: a hint; acquire on the exchange: pairs with the pushers' release */
        if (!__atomic_load_n(&m->remote, __ATOMIC_RELAXED))
            return NULL;
        b = (iv_box_ref)__atomic_exchange_n(&m->remote, (uintptr_t)0, __ATOMIC_ACQUIRE);
    }
    m->boxes = iv_box_next(b);
    return b;
}

/* Teardown (no thread running): every thread's free boxes go back to the allocator. */
static inline void iv_boxes_teardown(struct iv_ctx *cx)
{
    for (int t = 0; t < cx->nthreads; t++) {
        struct iv_mem *m = &cx->th[t].mem;
        iv_box_ref b = m->boxes;
        while (b) {
            iv_box_ref n = iv_box_next(b);
            SYNC_FREE(b);
            b = n;
        }
        b = (iv_box_ref)__atomic_load_n(&m->remote, __ATOMIC_RELAXED);   /* none runs */
        while (b) {
            iv_box_ref n = iv_box_next(b);
            SYNC_FREE(b);
            b = n;
        }
        m->boxes = NULL;
        m->remote = 0;
    }
}

#endif /* IV_BOX_FREELIST */

#endif
