/*
 * workloads/interp/mem_biased.h - --memory biased: PEP 703's counts (CPython 3.14's
 * free-threaded build). The owner (the allocating thread) counts in h.rc plainly, the
 * others in h.rcs; constants, the globals' first values and the declared containers
 * are immortal (owner IV_IMMORTAL: no count; iv_biased_program_object).
 *
 * Under locks (IV_COUNT_ATOMIC: no global lock), h.rcs is atomic and holds the count
 * in units of 8 above three flags (merged, queued, shared), as biased reference
 * counting (Choi et al., PACT 2018) and CPython's ob_ref_shared: when the owner's
 * count reaches 0 it frees at once if the shared word is 0 (nobody else ever counted
 * it), else merges, and the shared count decides from then on; a non-owner that takes
 * the shared count below 0 queues the object to its owner (its inbox), which merges
 * it at its next safe point; a non-owner's first increment sets SHARED, so the word
 * is never 0 again. Reads without a lock (loop_obj.h) count with try_incref, which
 * refuses a word of 0 and a merged count of 0. Elsewhere (one slice at a time: gil,
 * stm, htm, itm, mutex, seq) both fields are plain or transactional and their sum
 * decides at once.
 *
 * Invariants: those of mem_refcount.h (one count per place that holds a reference; a
 * reference read out of a container under its lock is counted before the lock is
 * released), and:
 *  - Only the owner writes h.rc, and only the owner sets MERGED (at its count's 0 or
 *    in the drain), so the owner's relaxed test of MERGED reads its own write.
 *  - An object is in at most one inbox at a time (QUEUED is set once, by the one
 *    non-owner that took the shared count below 0, and cleared only by the owner's
 *    merge); while QUEUED, the drain decides its fate, no decrement frees it.
 *  - The owner frees without a read-modify-write only when it reads the shared word
 *    as 0 with its own count at 0: the sum is 0, so no thread holds a reference, and
 *    none can count one later (a reader without a lock fails on a word of 0, and a
 *    reader under a lock reads it from a holder that would make the sum above 0).
 *  - A box's memory stays a box of the same owner (freelist.h): try_incref on one
 *    that died reads a box's header and fails.
 *
 * Memory orders: at each atomic below; the decrements are acq_rel as refcount's.
 */
#ifndef IV_MEM_BIASED_H
#define IV_MEM_BIASED_H

#include "workloads/interp/mem_refcount.h"

#define IV_MEM_COUNTS_biased 1
#define IV_MEM_BOXES_biased 1          /* its dead boxes go to freelist.h's lists */
#define IV_BRC_MERGED 1
#define IV_BRC_QUEUED 2
#define IV_BRC_SHARED 4               /* another thread counted it once: see below */
#define IV_BRC_SHIFT 3                /* the shared count, above its flags */
#define IV_BRC_ONE ((int64_t)1 << IV_BRC_SHIFT)

/* A thread's state (locks only): the objects others queued to it as their owner. */
struct iv_biased_thread {
    pthread_mutex_t inbox_mu;
    iv_val *inbox;
    size_t ninbox, capinbox;
};
IV_MODE_FITS(struct iv_biased_thread, IV_MODE_THREAD_BYTES);
#define IV_BIASED(m) IV_MODE_STATE(struct iv_biased_thread, (m))

#if IV_COUNT_ATOMIC
static IV_OBJ_TEXT void iv_brc_queue(struct iv_biased_thread *owner, iv_val w)
{
    pthread_mutex_lock(&owner->inbox_mu);
    iv_grow(&owner->inbox, &owner->capinbox, owner->ninbox + 1);
    owner->inbox[owner->ninbox++] = w;
    pthread_mutex_unlock(&owner->inbox_mu);
}
#endif

#if IV_COUNT_ATOMIC
/* The decrement of a reference not counted in the owner's plain count: another
 * thread's, or any after the merge. 1 when it took the count to 0. */
static IV_OBJ_TEXT SYNC_NOINLINE int iv_biased_dec_shared(const struct iv_ctx *cx, iv_val w,
                                                          int owner)
{
    iv_oref o = iv_vref(w);
    /* acq_rel: as refcount's decrement (mem_refcount.h) */
    int64_t now = __atomic_sub_fetch(&o->rcs, IV_BRC_ONE, __ATOMIC_ACQ_REL);
    if (now & IV_BRC_MERGED)
        return !(now & IV_BRC_QUEUED) && (now >> IV_BRC_SHIFT) == 0;   /* queued: the drain's */
    /* relaxed: QUEUED only elects the one thread that queues; the inbox's mutex
     * orders the object's hand-over to its owner */
    if ((now >> IV_BRC_SHIFT) < 0 && !(now & IV_BRC_QUEUED) &&
        !(__atomic_fetch_or(&o->rcs, IV_BRC_QUEUED, __ATOMIC_RELAXED) & IV_BRC_QUEUED))
        iv_brc_queue(IV_BIASED(cx->mems[owner]), w);   /* the owner merges it */
    return 0;
}

/* The owner's count reached 0 (not merged): 1 when the object is dead. */
static IV_OBJ_TEXT SYNC_NOINLINE int iv_biased_merge_zero(iv_oref o)
{
    /* merge: from now on the shared count decides. acq_rel as the decrements. An
     * object in this owner's inbox is the drain's to decide (iv_brc_drain). */
    int64_t old = __atomic_fetch_or(&o->rcs, IV_BRC_MERGED, __ATOMIC_ACQ_REL);
    return !(old & IV_BRC_QUEUED) && (old >> IV_BRC_SHIFT) == 0;
}
#endif

/* -1 on w's object (not a small int); 1 when it reached 0 (the caller frees it). The
 * owner's path is inline; the others' out of line. */
static inline __attribute__((always_inline)) IV_OBJ_TEXT int
iv_biased_dec(const struct iv_ctx *cx, struct iv_thread *th, iv_val w)
{
    iv_oref o = iv_vref(w);
    int tid = th->tid;
#if IV_COUNT_ATOMIC
    int owner = o->owner;
    if (owner == IV_IMMORTAL)
        return 0;
    /* relaxed: only the owner sets MERGED, and reads it here */
    if (SYNC_LIKELY(owner == tid && !(__atomic_load_n(&o->rcs, __ATOMIC_RELAXED) & IV_BRC_MERGED))) {
        if (--o->rc > 0)
            return 0;
        /* The owner's count reached 0. A shared word of 0 (no count, no flag: no other
         * thread holds a reference or queued it) means the sum is 0 now, so nobody
         * can make a new reference: dead, with no read-modify-write (CPython's
         * _Py_MergeZeroLocalRefcount). acquire: pairs with the acq_rel decrement that
         * brought another thread's count back to 0, so its accesses come before the
         * free. */
        if (__atomic_load_n(&o->rcs, __ATOMIC_ACQUIRE) == 0)
            return 1;
        return iv_biased_merge_zero(o);
    }
    return iv_biased_dec_shared(cx, w, owner);
#else
    SYNC_READ(o);
    if (o->owner == IV_IMMORTAL)
        return 0;
    SYNC_WRITE(o);
    if (o->owner != tid)
        o->rcs--;
    else
        o->rc--;
    return o->rc + o->rcs == 0;
#endif
}

static IV_OBJ_TEXT SYNC_NOINLINE void iv_biased_release(const struct iv_ctx *cx,
                                                        struct iv_thread *th, iv_val w)
{
    iv_release_with(cx, th, w, iv_biased_dec);
}

#if IV_COUNT_ATOMIC
/* At a safe point: merge the objects others queued to this owner (their shared count
 * went below 0), freeing those whose total is 0. */
static IV_OBJ_TEXT SYNC_NOINLINE void iv_brc_drain(const struct iv_ctx *cx, struct iv_thread *th)
{
    struct iv_biased_thread *m = IV_BIASED(&th->mem);
    pthread_mutex_lock(&m->inbox_mu);
    size_t n = m->ninbox;
    iv_val *q = m->inbox;
    m->inbox = NULL;
    m->ninbox = m->capinbox = 0;
    pthread_mutex_unlock(&m->inbox_mu);
    for (size_t i = 0; i < n; i++) {
        iv_oref o = iv_vref(q[i]);
        int64_t local = o->rc, old, now;
        o->rc = 0;
        /* adds the owner's count, merges and leaves the inbox in one step, so that a
         * decrement after it decides alone and one before it left the free to us.
         * acq_rel: as the decrements */
        old = __atomic_load_n(&o->rcs, __ATOMIC_RELAXED);
        do {
            now = ((old & ~(int64_t)IV_BRC_QUEUED) + local * IV_BRC_ONE) | IV_BRC_MERGED;
        } while (!__atomic_compare_exchange_n(&o->rcs, &old, now, false, __ATOMIC_ACQ_REL,
                                              __ATOMIC_RELAXED));
        if ((now >> IV_BRC_SHIFT) == 0)
            iv_biased_release(cx, th, q[i]);
    }
    free(q);
}
#endif

static inline IV_OBJ_TEXT void iv_biased_setup(struct iv_ctx *cx)
{
    for (int t = 0; t < cx->nthreads; t++)
        pthread_mutex_init(&IV_BIASED(&cx->th[t].mem)->inbox_mu, NULL);
}

/* Every object of the program is immortal here, the declared containers too: they
 * live until teardown whatever their count, and CPython defers the counts of what a
 * module holds for the life of the program (modules and their dicts, functions,
 * types: deferred reference counting, PEP 703; LOAD_GLOBAL pushes such a value
 * uncounted), so that threads reading one global do not write its count. */
static inline IV_OBJ_TEXT void iv_biased_program_object(const struct iv_ctx *cx, iv_oref o, int tid,
                                            bool container)
{
    o->owner = IV_IMMORTAL;
    o->rc = container ? 1 : 2;
}

static inline IV_OBJ_TEXT void iv_biased_allocated(const struct iv_ctx *cx, struct iv_thread *th,
                                       iv_oref o, iv_val w)
{
    o->rc = 1;                        /* the reference the creator pushes */
}

#if IV_COUNT_ATOMIC
/* Another thread's increment: counted in the shared word, which it marks SHARED the
 * first time, so that the owner's death merges from then on and try_incref can tell
 * the object alive. relaxed: an increment only needs to be counted (as refcount's). */
static inline __attribute__((always_inline)) void iv_biased_inc_shared(iv_oref o)
{
    if (SYNC_UNLIKELY(!(__atomic_load_n(&o->rcs, __ATOMIC_RELAXED) & IV_BRC_SHARED)))
        __atomic_fetch_or(&o->rcs, IV_BRC_SHARED, __ATOMIC_RELAXED);
    __atomic_fetch_add(&o->rcs, IV_BRC_ONE, __ATOMIC_RELAXED);
}
#endif

static inline IV_OBJ_TEXT void iv_biased_incref(const struct iv_ctx *cx, struct iv_thread *th, iv_val w)
{
    if (iv_vtype(w) == IV_T_INT)
        return;
    iv_oref o = iv_vref(w);
    int tid = th->tid;
#if IV_COUNT_ATOMIC
    int owner = o->owner;                /* written once, before the object is shared */
    if (owner == IV_IMMORTAL)
        return;
    /* relaxed: only the owner writes the flags' merged bit, and reads it here */
    if (owner == tid && !(__atomic_load_n(&o->rcs, __ATOMIC_RELAXED) & IV_BRC_MERGED))
        o->rc++;                         /* the owner's own count: plain */
    else
        iv_biased_inc_shared(o);
#else
    SYNC_READ(o);
    if (o->owner == IV_IMMORTAL)
        return;
    SYNC_WRITE(o);
    if (o->owner != tid)
        o->rcs++;
    else
        o->rc++;
#endif
}

/* locks: w (a box) was read from a cell with no lock held and may have died (its
 * memory is still a box of the same owner: freelist.h). Counts it if it is alive. */
static inline IV_OBJ_TEXT bool iv_biased_try_incref(const struct iv_ctx *cx, struct iv_thread *th,
                                                iv_val w)
{
#if IV_COUNT_ATOMIC
    iv_oref o = iv_vref(w);
    int owner = o->owner;               /* never changes: freelist.h */
    if (owner == IV_IMMORTAL)
        return true;
    /* relaxed: only the owner sets MERGED, and reads it here */
    if (owner == th->tid && !(__atomic_load_n(&o->rcs, __ATOMIC_RELAXED) & IV_BRC_MERGED)) {
        if (o->rc <= 0)
            return false;               /* dead: on this thread's free boxes */
        o->rc++;
        return true;
    }
    /* Dead, or may be: a shared word of 0 (the owner frees at its own 0 without a
     * look back: iv_biased_dec), or merged with a count of 0 (freed, or the drain's
     * to free). Any other word keeps the owner from freeing without the merge, whose
     * read-modify-write then sees this increment. seq_cst on success, as refcount's
     * try_incref (mem_refcount.h); relaxed loads: a failure only reads again */
    int64_t n = __atomic_load_n(&o->rcs, __ATOMIC_RELAXED);
    do {
        if (n == 0 || ((n & IV_BRC_MERGED) && (n >> IV_BRC_SHIFT) <= 0))
            return false;
    } while (!__atomic_compare_exchange_n(&o->rcs, &n, n + IV_BRC_ONE, true, __ATOMIC_SEQ_CST,
                                          __ATOMIC_RELAXED));
    return true;
#else
    iv_biased_incref(cx, th, w);
    return true;
#endif
}

static inline IV_OBJ_TEXT void iv_biased_decref(const struct iv_ctx *cx, struct iv_thread *th,
                                    struct iv_vm *vm, iv_val w)
{
    if (iv_vtype(w) != IV_T_INT && iv_biased_dec(cx, th, w))
        iv_biased_release(cx, th, w);
}

static inline IV_OBJ_TEXT void iv_biased_safepoint(struct iv_ctx *cx, struct iv_thread *th)
{
#if IV_COUNT_ATOMIC
    /* relaxed: a hint; the drain takes the inbox under its mutex */
    if (__atomic_load_n(&IV_BIASED(&th->mem)->ninbox, __ATOMIC_RELAXED)) {
        iv_brc_drain(cx, th);
        th->mem.frees_mark = th->mem.frees;
    }
#endif
}

static inline IV_OBJ_TEXT void iv_biased_block_begin(const struct iv_ctx *cx, struct iv_thread *th) {}
static inline IV_OBJ_TEXT void iv_biased_block_end(const struct iv_ctx *cx, struct iv_thread *th,
                                       struct iv_vm *vm) {}
static inline IV_OBJ_TEXT void iv_biased_block_done(struct iv_ctx *cx, struct iv_thread *th) {}
static inline IV_OBJ_TEXT void iv_biased_thread_start(struct iv_ctx *cx, struct iv_thread *th) {}

static inline IV_OBJ_TEXT void iv_biased_thread_stop(struct iv_ctx *cx, struct iv_thread *th)
{
#if IV_COUNT_ATOMIC
    iv_brc_drain(cx, th);
#endif
}

static IV_OBJ_TEXT void iv_biased_teardown_stacks(struct iv_ctx *cx)
{
    for (int t = 0; t < cx->nthreads; t++)
        iv_counted_drop_stack(cx, &cx->th[t], iv_biased_decref);
}

static IV_OBJ_TEXT void iv_biased_teardown_global(const struct iv_ctx *cx, struct iv_thread *th,
                                                  iv_val w, bool container)
{
    if (container)
        iv_biased_release(cx, th, w);
    else
        iv_biased_decref(cx, th, &th->vm[th->cur], w);
}

static inline IV_OBJ_TEXT void iv_biased_teardown(struct iv_ctx *cx)
{
#if IV_COUNT_ATOMIC
    /* What the teardown's drops queued (a global's box that another thread owns,
     * dropped as thread 0) is merged and freed first; a drain can queue to another
     * inbox, so until every inbox is empty. */
    for (bool again = true; again;) {
        again = false;
        for (int t = 0; t < cx->nthreads; t++)
            if (IV_BIASED(&cx->th[t].mem)->ninbox) {
                iv_brc_drain(cx, &cx->th[t]);
                again = true;
            }
    }
#endif
    for (int t = 0; t < cx->nthreads; t++) {
        struct iv_biased_thread *m = IV_BIASED(&cx->th[t].mem);
        free(m->inbox);
        pthread_mutex_destroy(&m->inbox_mu);
    }
#if IV_BOX_FREELIST
    iv_boxes_teardown(cx);
#endif
}

/* The final check: every counted object the heap holds has, owner's and others'
 * counts together, the count of its holders (immortal objects have none). */
static IV_OBJ_TEXT int iv_biased_agrees(void *arg, iv_val w, int64_t refs, int64_t *theirs)
{
    iv_oref o = iv_vref(w);
#if IV_COUNT_ATOMIC
    if (o->owner == IV_IMMORTAL)
        return 1;
    /* relaxed: no thread runs; the shared count is in units of 4 above its flags */
    *theirs = o->rc + (__atomic_load_n(&o->rcs, __ATOMIC_RELAXED) >> IV_BRC_SHIFT);
#else
    SYNC_READ(o);
    if (o->owner == IV_IMMORTAL)
        return 1;
    *theirs = o->rc + o->rcs;
#endif
    return *theirs == refs;
}

static IV_OBJ_TEXT int iv_biased_check(const struct iv_ctx *cx, char *msg, size_t len)
{
    return iv_census_check(cx, "count", iv_biased_agrees, NULL, msg, len);
}

#endif
