/*
 * workloads/interp/mem_refcount.h - --memory refcount: CPython with its GIL. Every
 * reference copied counts +1 and every one dropped -1, in the object (h.rc); at zero
 * the object is freed and drops its elements' references (a work list: no recursion
 * however deep the nesting). Under stm, htm and itm a count change is a transactional
 * write (SYNC_WRITE): a thread that only reads a shared object writes it. Under locks
 * (no global lock: IV_COUNT_ATOMIC) it is an atomic read-modify-write. The release walk
 * below serves mem_biased.h too.
 *
 * Invariants:
 *  - A value's reference is counted once per place that holds it (stack slot, local,
 *    cell, element, dict value, the code for a constant); the double-buffered VM state
 *    (state.h) holds its slots in one buffer at a time, so the copy at a slice's start
 *    moves the references, it does not count them.
 *  - Under locks, a reference read out of a container or a cell is counted before the
 *    container's lock is released (loop_obj.h), so the count of an object that a
 *    container holds never reaches 0 while another thread can still read it there: an
 *    object whose count is 0 is reachable by nobody and is freed at once.
 *  - An object of the program holds one reference more, the program's (a container:
 *    its declaration's), so it is freed only at teardown.
 *
 * Memory orders (locks only; elsewhere the counts are plain or transactional): at each
 * atomic below.
 */
#ifndef IV_MEM_REFCOUNT_H
#define IV_MEM_REFCOUNT_H

#include "workloads/interp/census.h"
#include "workloads/interp/freelist.h"
#include "workloads/interp/where.h"

#define IV_MEM_COUNTS_refcount 1
#define IV_MEM_BOXES_refcount 1          /* its dead boxes go to freelist.h's lists */

/* ---- the release walk of the counting modes (refcount, biased) ---- */

/* Drops an element's reference; one that reaches 0 goes on the work list. */
static inline __attribute__((always_inline)) void
iv_release_push(const struct iv_ctx *cx, struct iv_thread *th, iv_val w,
                int (*dec)(const struct iv_ctx *, struct iv_thread *, iv_val))
{
    if (iv_vtype(w) != IV_T_INT && dec(cx, th, w)) {
        struct iv_mem *m = &th->mem;
        iv_grow(&m->work, &m->capwork, m->nwork + 1);
        m->work[m->nwork++] = w;
    }
}

/* w's count reached 0 as `dec` decided (the mode's decrement: 1 when it took the count
 * to 0): frees it, drops its elements' references and frees those that reach 0 in
 * turn. Inlined into each mode's iv_<mode>_release, so `dec` is a direct call. */
/* A declared queue's or stmdict's elements (queue.h, sdict.h), pushed for release: out
 * of iv_release_with's loop, since these die only at teardown. */
static IV_OBJ_TEXT SYNC_NOINLINE __attribute__((cold)) void
iv_release_declared(const struct iv_ctx *cx, struct iv_thread *th, iv_val x,
                    int (*dec)(const struct iv_ctx *, struct iv_thread *, iv_val))
{
    iv_val e;
    for (int64_t i = 0, n = iv_declared_n(x); i < n; i++)
        if (iv_declared_at(x, i, &e))
            iv_release_push(cx, th, e, dec);
}

static inline __attribute__((always_inline)) void
iv_release_with(const struct iv_ctx *cx, struct iv_thread *th, iv_val w,
                int (*dec)(const struct iv_ctx *, struct iv_thread *, iv_val))
{
    struct iv_mem *m = &th->mem;
    m->nwork = 0;
    iv_grow(&m->work, &m->capwork, 1);
    m->work[m->nwork++] = w;
    while (m->nwork > 0) {
        iv_val x = m->work[--m->nwork];
        if (iv_vtype(x) == IV_T_BOX) {
#if IV_BOX_FREELIST
            iv_box_free(cx, th, (iv_box_ref)iv_vref(x));
#else
            iv_free_obj(x);
#endif
            m->frees++;
            continue;                   /* the common case first: one test */
        }
        if (iv_vtype(x) == IV_T_LIST) {
            iv_olist_ref l = (iv_olist_ref)iv_vref(x);
            int64_t n = iv_olist_len(l);
            for (int64_t i = 0; i < n; i++)
                iv_release_push(cx, th, iv_olist_get(l, i), dec);
        } else if (SYNC_UNLIKELY(iv_vtype(x) >= IV_T_QUEUE)) {
            iv_release_declared(cx, th, x, dec);  /* a queue or stmdict: at teardown */
        } else if (iv_vtype(x) == IV_T_DICT) {
            iv_odict_ref d = (iv_odict_ref)iv_vref(x);
            SYNC_READ(d);
            iv_slots_ref s = d->slots;
            SYNC_READ(s);
            for (int64_t j = 0; j < d->cap; j++)
                if (s->e[j].used)
                    iv_release_push(cx, th, (iv_val)s->e[j].val, dec);
        }
        iv_free_obj(x);
        m->frees++;
    }
}

/* ---- refcount ---- */

/* -1 on w's object (not a small int); 1 when it reached 0. */
static inline IV_OBJ_TEXT int iv_refcount_dec(const struct iv_ctx *cx, struct iv_thread *th, iv_val w)
{
    iv_oref o = iv_vref(w);
#if IV_COUNT_ATOMIC
    /* acq_rel: the release orders this holder's accesses before the free; the acquire
     * makes the other holders' accesses visible to the freeing thread */
    return __atomic_sub_fetch(&o->rc, 1, __ATOMIC_ACQ_REL) == 0;
#else
    SYNC_READ(o);
    SYNC_WRITE(o);
    o->rc--;
    return o->rc + o->rcs == 0;
#endif
}

static IV_OBJ_TEXT SYNC_NOINLINE void iv_refcount_release(const struct iv_ctx *cx,
                                                          struct iv_thread *th, iv_val w)
{
    iv_release_with(cx, th, w, iv_refcount_dec);
}

static inline IV_OBJ_TEXT void iv_refcount_setup(struct iv_ctx *cx) { (void)cx; }

static inline IV_OBJ_TEXT void iv_refcount_program_object(const struct iv_ctx *cx, iv_oref o, int tid,
                                              bool container)
{
    o->owner = tid;
    o->rc = container ? 1 : 2;
}

static inline IV_OBJ_TEXT void iv_refcount_allocated(const struct iv_ctx *cx, struct iv_thread *th,
                                         iv_oref o, iv_val w)
{
#if IV_COUNT_ATOMIC
    /* release: a reader that found this box dead may still try its count; if its CAS
     * (acquire) reads this store, it sees what this thread did before, so its recheck
     * refuses the new object (try_incref, loop_obj.h) */
    __atomic_store_n(&o->rc, 1, __ATOMIC_RELEASE);
#else
    o->rc = 1;                        /* the reference the creator pushes */
#endif
}

static inline IV_OBJ_TEXT void iv_refcount_incref(const struct iv_ctx *cx, struct iv_thread *th, iv_val w)
{
    if (iv_vtype(w) == IV_T_INT)
        return;
    iv_oref o = iv_vref(w);
#if IV_COUNT_ATOMIC
    /* relaxed: an increment only needs to be counted; the holder it comes from keeps
     * the object alive until then (the invariants above) */
    __atomic_fetch_add(&o->rc, 1, __ATOMIC_RELAXED);
#else
    SYNC_READ(o);
    SYNC_WRITE(o);
    o->rc++;
#endif
}

/* locks: w, read from a cell with no lock held, may have died (its box is still a box:
 * freelist.h); counts it only while its count is above 0. */
static inline IV_OBJ_TEXT bool iv_refcount_try_incref(const struct iv_ctx *cx, struct iv_thread *th,
                                                  iv_val w)
{
#if IV_COUNT_ATOMIC
    iv_oref o = iv_vref(w);
    /* seq_cst on success (as CPython's _Py_TryIncRefShared): acquire, so that the
     * caller's recheck comes after it and sees what the thread that gave the box its
     * new life did before (its release store of the count); no cost on x86, where
     * every CAS is a full barrier. relaxed loads: a failure only reads again. */
    int64_t n = __atomic_load_n(&o->rc, __ATOMIC_RELAXED);
    do {
        if (n <= 0)
            return false;                /* dead, or dying: the caller takes the lock */
    } while (!__atomic_compare_exchange_n(&o->rc, &n, n + 1, true, __ATOMIC_SEQ_CST,
                                          __ATOMIC_RELAXED));
    return true;
#else
    iv_refcount_incref(cx, th, w);
    return true;
#endif
}

static inline IV_OBJ_TEXT void iv_refcount_decref(const struct iv_ctx *cx, struct iv_thread *th,
                                      struct iv_vm *vm, iv_val w)
{
    if (iv_vtype(w) != IV_T_INT && iv_refcount_dec(cx, th, w))
        iv_refcount_release(cx, th, w);
}

static inline IV_OBJ_TEXT void iv_refcount_safepoint(struct iv_ctx *cx, struct iv_thread *th) {}
static inline IV_OBJ_TEXT void iv_refcount_block_begin(const struct iv_ctx *cx, struct iv_thread *th) {}
static inline IV_OBJ_TEXT void iv_refcount_block_end(const struct iv_ctx *cx, struct iv_thread *th,
                                         struct iv_vm *vm) {}
static inline IV_OBJ_TEXT void iv_refcount_block_done(struct iv_ctx *cx, struct iv_thread *th) {}
static inline IV_OBJ_TEXT void iv_refcount_thread_start(struct iv_ctx *cx, struct iv_thread *th) {}
static inline IV_OBJ_TEXT void iv_refcount_thread_stop(struct iv_ctx *cx, struct iv_thread *th) {}

/* What a run left on a thread's stack (a run abandoned by the stuck guard or the drain
 * bound) holds references too: dropped before the globals go. In a block of its own
 * function, so that no loop around it keeps values across its setjmp. */
static IV_OBJ_TEXT SYNC_NOINLINE void iv_counted_drop_stack(struct iv_ctx *cx, struct iv_thread *th,
                                                            void (*decref)(const struct iv_ctx *,
                                                                           struct iv_thread *,
                                                                           struct iv_vm *, iv_val))
{
    struct iv_vm *vm = &th->vm[th->cur];
    SYNC_ATOMIC("interp.teardown") {
        for (int32_t i = 0; i < vm->sp; i++)
            decref(cx, th, vm, (iv_val)vm->vals[i]);
    }
    vm->sp = 0;
}

static IV_OBJ_TEXT void iv_refcount_teardown_stacks(struct iv_ctx *cx)
{
    for (int t = 0; t < cx->nthreads; t++)
        iv_counted_drop_stack(cx, &cx->th[t], iv_refcount_decref);
}

/* Inside the teardown's block: a global's value is dropped; a declared container
 * (holding its declaration's reference) is released with its elements. */
static IV_OBJ_TEXT void iv_refcount_teardown_global(const struct iv_ctx *cx, struct iv_thread *th,
                                                    iv_val w, bool container)
{
    if (container)
        iv_refcount_release(cx, th, w);
    else
        iv_refcount_decref(cx, th, &th->vm[th->cur], w);
}

static inline IV_OBJ_TEXT void iv_refcount_teardown(struct iv_ctx *cx)
{
#if IV_BOX_FREELIST
    iv_boxes_teardown(cx);
#else
    (void)cx;
#endif
}

/* The final check: every object the heap holds has the count of its holders. */
static IV_OBJ_TEXT int iv_refcount_agrees(void *arg, iv_val w, int64_t refs, int64_t *theirs)
{
    iv_oref o = iv_vref(w);
#if IV_COUNT_ATOMIC
    *theirs = __atomic_load_n(&o->rc, __ATOMIC_RELAXED);   /* relaxed: no thread runs */
#else
    SYNC_READ(o);
    *theirs = o->rc + o->rcs;
#endif
    return *theirs == refs;
}

static IV_OBJ_TEXT int iv_refcount_check(const struct iv_ctx *cx, char *msg, size_t len)
{
    return iv_census_check(cx, "count", iv_refcount_agrees, NULL, msg, len);
}

#endif
