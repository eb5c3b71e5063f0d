/*
 * workloads/interp/mem_tracing.h - --memory tracing: PyPy's road as this VM had it
 * first. No per-reference work at all. Each thread keeps a registry of the objects it
 * allocated; when a thread's registry passes its mark (IV_GC_MIN, then twice what the
 * last collection kept), a mark-and-sweep collection, with every other thread stopped
 * between slices, frees what the roots do not reach (every thread's committed VM
 * state, the globals; the program's objects are never in a registry). Objects a slice
 * allocates need no barrier (SYNC_ALLOC in the block), as the STM's new objects never do.
 *
 * Invariants:
 *  - A collection runs only while every other thread is parked at a slice boundary (or
 *    has not started, or has finished): the handshake below. Under gil and seq no
 *    thread can be inside a slice while the collector runs (the GIL is held across the
 *    boundary), so nobody is parked.
 *  - A slice's allocations enter the registry inside its block and are dropped again
 *    when the block re-runs (reg_mark): the registry never names an object an aborted
 *    attempt allocated.
 *
 * The collector's handshake (IV_GC_STOPS_WORLD):
 * The collector's handshake (tracing, IV_GC_STOPS_WORLD):
 *   collector:  CAS gc_req 0 -> 1 (seq_cst); wait until every other thread's safe is 1
 *               (seq_cst loads); collect; store gc_req 0 (release)
 *   a thread:   safe = 0 (seq_cst) then load gc_req (seq_cst) when it starts running
 *               slices and after each park; at each slice boundary, if gc_req: safe = 1
 *               (seq_cst: its VM state and registry are complete before it), wait for
 *               gc_req 0 (acquire: the collection's frees and registry edits before
 *               it), then as at the start
 * Dekker's argument on the seq_cst pair (safe store, gc_req load) against (gc_req
 * store, safe load): a thread that runs a slice has either seen gc_req set (and parks
 * first) or its safe = 0 is seen by the collector, which then waits.
 */
#ifndef IV_MEM_TRACING_H
#define IV_MEM_TRACING_H

#include "workloads/interp/census.h"
#include "workloads/interp/where.h"

#define IV_MEM_COUNTS_tracing 0
#define IV_MEM_BOXES_tracing 0          /* its dead boxes go to freelist.h's lists */
#define IV_GC_MIN 32768              /* registry entries before a thread's first collection */
#if defined(SYNC_RT_GIL) || defined(SYNC_RT_SEQ)
#define IV_GC_STOPS_WORLD 0          /* nobody runs a slice while the collector does */
#else
#define IV_GC_STOPS_WORLD 1
#endif

/* A thread's state: its registry and its side of the handshake. */
struct iv_tracing_thread {
    iv_val *reg;                     /* the objects this thread allocated */
    size_t nreg, capreg;
    size_t reg_mark;                 /* entries before the running block */
    size_t gc_at;                    /* collect when nreg passes it */
    _Atomic int safe;                /* 1 while parked, not started or finished */
};
IV_MODE_FITS(struct iv_tracing_thread, IV_MODE_THREAD_BYTES);
#define IV_TRACING(m) IV_MODE_STATE(struct iv_tracing_thread, (m))

/* The context's: the collection's request. */
struct iv_tracing_ctx {
    _Atomic int gc_req;              /* a collection runs */
};
IV_MODE_FITS(struct iv_tracing_ctx, IV_MODE_CTX_BYTES);
#define IV_TRACING_CTX(cx) IV_MODE_CTX(struct iv_tracing_ctx, (cx))

/* Marks what w reaches (a work list in th->mem.work). */
static IV_OBJ_TEXT void iv_mark_from(struct iv_markset *ms, struct iv_mem *m, iv_val w)
{
    if (iv_vtype(w) == IV_T_INT || !iv_mark_add(ms, w))
        return;
    m->nwork = 0;
    iv_grow(&m->work, &m->capwork, 1);
    m->work[m->nwork++] = w;
    while (m->nwork > 0) {
        iv_val x = m->work[--m->nwork];
        int64_t n = 0;
        iv_olist_ref l = SYNC_NULL;
        iv_slots_ref s = SYNC_NULL;
        bool declared = iv_vtype(x) >= IV_T_QUEUE;     /* object.h */
        if (iv_vtype(x) == IV_T_LIST) {
            l = (iv_olist_ref)iv_vref(x);
            n = iv_olist_len(l);
        } else if (declared) {
            n = iv_declared_n(x);
        } else if (iv_vtype(x) == IV_T_DICT) {
            iv_odict_ref d = (iv_odict_ref)iv_vref(x);
            SYNC_READ(d);
            s = d->slots;
            SYNC_READ(s);
            n = d->cap;
        }
        for (int64_t i = 0; i < n; i++) {
            iv_val e = 0;
            if (l != SYNC_NULL)
                e = iv_olist_get(l, i);
            else if (declared)
                iv_declared_at(x, i, &e);
            else if (s->e[i].used)
                e = (iv_val)s->e[i].val;
            if (iv_vtype(e) != IV_T_INT && iv_mark_add(ms, e)) {
                iv_grow(&m->work, &m->capwork, m->nwork + 1);
                m->work[m->nwork++] = e;
            }
        }
    }
}

/* A collection (the caller made sure no other thread runs a slice). Marks from every
 * thread's committed VM state and the program's objects, frees every registry entry
 * left unmarked, and compacts the registries after the block (a re-run of the block
 * frees the same set again, from the same registries). */
static IV_OBJ_TEXT SYNC_NOINLINE void iv_gc_collect(struct iv_ctx *cx, struct iv_thread *self)
{
    size_t total = 64;
    for (int t = 0; t < cx->nthreads; t++)
        total += IV_TRACING(&cx->th[t].mem)->nreg;
    size_t cap = 1;
    while (cap < 2 * total)
        cap *= 2;
    struct iv_markset ms = { .slot = malloc(cap * sizeof(iv_val)), .mask = cap - 1 };
    if (!ms.slot)
        sync_out_of_resources("interp: out of memory for a collection of %zu objects", total);
    const struct iv_program *pr = cx->prog;
    uint64_t freed = 0;
    SYNC_ATOMIC("interp.gc") {
        memset(ms.slot, 0, cap * sizeof(iv_val));
        for (int t = 0; t < cx->nthreads; t++) {
            const struct iv_vm *v = &cx->th[t].vm[cx->th[t].cur];
            for (int32_t i = 0; i < v->sp; i++)
                iv_mark_from(&ms, &self->mem, (iv_val)v->vals[i]);
        }
        for (int g = 0; g < pr->nglobals; g++)
            for (int t = 0; t < (pr->globals[g].per_thread ? cx->nthreads : 1); t++) {
                iv_ref r = iv_obj_of(cx, g, t);
                if (pr->globals[g].kind == IV_KIND_INT) {
                    iv_cell_ref c = (iv_cell_ref)r;
                    SYNC_READ(c);
                    iv_mark_from(&ms, &self->mem, (iv_val)c->value);
                } else {
                    iv_mark_from(&ms, &self->mem, cx->gobj[(size_t)g * (size_t)cx->nthreads +
                                                           (size_t)t]);
                }
            }
        uint64_t n = 0;
        for (int t = 0; t < cx->nthreads; t++) {
            const struct iv_tracing_thread *m = IV_TRACING(&cx->th[t].mem);
            for (size_t i = 0; i < m->nreg; i++)
                if (!iv_mark_has(&ms, m->reg[i])) {
                    iv_free_obj(m->reg[i]);
                    n++;
                }
        }
        freed = n;
    }
    size_t live = 0;
    for (int t = 0; t < cx->nthreads; t++) {
        struct iv_tracing_thread *m = IV_TRACING(&cx->th[t].mem);
        size_t k = 0;
        for (size_t i = 0; i < m->nreg; i++)
            if (iv_mark_has(&ms, m->reg[i]))
                m->reg[k++] = m->reg[i];
        m->nreg = m->reg_mark = k;
        m->gc_at = 2 * k + IV_GC_MIN;
        live += k;
    }
    free(ms.slot);
    self->mem.gc_freed += freed;
    self->mem.gcs++;
    (void)live;
}

/* Parks this thread while a collection runs (see the head of the file). */
static IV_OBJ_TEXT SYNC_NOINLINE void iv_gc_park(struct iv_ctx *cx, struct iv_thread *th)
{
    for (;;) {
        /* seq_cst: the other half of the handshake's Dekker pair */
        if (!atomic_load_explicit(&IV_TRACING_CTX(cx)->gc_req, memory_order_seq_cst))
            return;
        atomic_store_explicit(&IV_TRACING(&th->mem)->safe, 1, memory_order_seq_cst);
        unsigned spins = 0;
        /* acquire: pairs with the collector's release store of 0 */
        while (atomic_load_explicit(&IV_TRACING_CTX(cx)->gc_req, memory_order_acquire))
            wl_spin_backoff(&spins);
        atomic_store_explicit(&IV_TRACING(&th->mem)->safe, 0, memory_order_seq_cst);
    }
}

/* This thread's registry passed its mark: collect, or park while another does. */
static IV_OBJ_TEXT SYNC_NOINLINE void iv_gc(struct iv_ctx *cx, struct iv_thread *th)
{
#if IV_GC_STOPS_WORLD
    int zero = 0;
    /* seq_cst: the handshake's store of gc_req (its Dekker pair with `safe`) */
    if (!atomic_compare_exchange_strong_explicit(&IV_TRACING_CTX(cx)->gc_req, &zero, 1, memory_order_seq_cst,
                                                 memory_order_seq_cst)) {
        iv_gc_park(cx, th);               /* another thread collects */
        return;
    }
    for (int t = 0; t < cx->nthreads; t++) {
        unsigned spins = 0;
        /* seq_cst: the handshake's load (see the head of the file) */
        while (t != th->tid && !atomic_load_explicit(&IV_TRACING(&cx->th[t].mem)->safe, memory_order_seq_cst))
            wl_spin_backoff(&spins);
    }
    iv_gc_collect(cx, th);
    /* release: the frees and registry edits before the parked threads go on */
    atomic_store_explicit(&IV_TRACING_CTX(cx)->gc_req, 0, memory_order_release);
#else
    iv_gc_collect(cx, th);
#endif
}

static inline IV_OBJ_TEXT void iv_tracing_setup(struct iv_ctx *cx)
{
    atomic_init(&IV_TRACING_CTX(cx)->gc_req, 0);
    for (int t = 0; t < cx->nthreads; t++) {
        struct iv_tracing_thread *m = IV_TRACING(&cx->th[t].mem);
        atomic_init(&m->safe, 1);         /* not started: never holds a collection */
        m->gc_at = IV_GC_MIN;
    }
}

static inline IV_OBJ_TEXT void iv_tracing_program_object(const struct iv_ctx *cx, iv_oref o, int tid,
                                             bool container) {}

static inline IV_OBJ_TEXT void iv_tracing_allocated(const struct iv_ctx *cx, struct iv_thread *th,
                                        iv_oref o, iv_val w)
{
    struct iv_tracing_thread *m = IV_TRACING(&th->mem);
    iv_grow(&m->reg, &m->capreg, m->nreg + 1);
    m->reg[m->nreg++] = w;
}

static inline IV_OBJ_TEXT bool iv_tracing_try_incref(const struct iv_ctx *cx, struct iv_thread *th,
                                                 iv_val w)
{
    return true;                     /* nothing counted; freed only by a collection, with
                                      * every thread stopped between slices */
}

static inline IV_OBJ_TEXT void iv_tracing_incref(const struct iv_ctx *cx, struct iv_thread *th, iv_val w) {}
static inline IV_OBJ_TEXT void iv_tracing_decref(const struct iv_ctx *cx, struct iv_thread *th,
                                     struct iv_vm *vm, iv_val w) {}

static inline IV_OBJ_TEXT void iv_tracing_safepoint(struct iv_ctx *cx, struct iv_thread *th)
{
#if IV_GC_STOPS_WORLD
    /* relaxed: a hint; iv_gc_park's seq_cst loads decide (the handshake) */
    if (atomic_load_explicit(&IV_TRACING_CTX(cx)->gc_req,
                             memory_order_relaxed))
        iv_gc_park(cx, th);
#endif
}

static inline IV_OBJ_TEXT void iv_tracing_block_begin(const struct iv_ctx *cx, struct iv_thread *th)
{
    struct iv_tracing_thread *m = IV_TRACING(&th->mem);
    m->nreg = m->reg_mark;
}

static inline IV_OBJ_TEXT void iv_tracing_block_end(const struct iv_ctx *cx, struct iv_thread *th,
                                        struct iv_vm *vm) {}

static inline IV_OBJ_TEXT void iv_tracing_block_done(struct iv_ctx *cx, struct iv_thread *th)
{
    struct iv_tracing_thread *m = IV_TRACING(&th->mem);
    m->reg_mark = m->nreg;
    if (SYNC_UNLIKELY(m->nreg > m->gc_at))
        iv_gc(cx, th);
}

static inline IV_OBJ_TEXT void iv_tracing_thread_start(struct iv_ctx *cx, struct iv_thread *th)
{
    /* seq_cst: the handshake's store; then park if a collection runs */
    atomic_store_explicit(&IV_TRACING(&th->mem)->safe, 0, memory_order_seq_cst);
    iv_gc_park(cx, th);
}

static inline IV_OBJ_TEXT void iv_tracing_thread_stop(struct iv_ctx *cx, struct iv_thread *th)
{
    /* seq_cst: the handshake's store: a finished thread never holds a collection */
    atomic_store_explicit(&IV_TRACING(&th->mem)->safe, 1, memory_order_seq_cst);
}

static inline IV_OBJ_TEXT void iv_tracing_teardown_stacks(struct iv_ctx *cx) { (void)cx; }

/* A global's value is a registry's object (freed with the registries) or the
 * program's (freed with the constants); a declared container is in no registry. */
static IV_OBJ_TEXT void iv_tracing_teardown_global(const struct iv_ctx *cx, struct iv_thread *th,
                                                   iv_val w, bool container)
{
    if (container)
        iv_free_obj(w);
}

static IV_OBJ_TEXT void iv_tracing_teardown(struct iv_ctx *cx)
{
    for (int t = 0; t < cx->nthreads; t++) {
        struct iv_tracing_thread *m = IV_TRACING(&cx->th[t].mem);
        iv_free_all(m->reg, m->nreg);
        free(m->reg);
    }
}

/* The final check: every object the heap holds is in a registry (not freed) or is the
 * program's. */
static IV_OBJ_TEXT int iv_tracing_agrees(void *arg, iv_val w, int64_t refs, int64_t *theirs)
{
    *theirs = iv_mark_has(arg, w);
    return *theirs == 1;
}

static IV_OBJ_TEXT int iv_tracing_check(const struct iv_ctx *cx, char *msg, size_t len)
{
    const struct iv_program *pr = cx->prog;
    size_t total = 64 + cx->npobj + (size_t)pr->ncode +
                   (size_t)pr->nglobals * (size_t)cx->nthreads;
    for (int t = 0; t < cx->nthreads; t++)
        total += IV_TRACING(&cx->th[t].mem)->nreg;
    size_t cap = 1;
    while (cap < 2 * total)
        cap *= 2;
    struct iv_markset ms = { .slot = calloc(cap, sizeof(iv_val)), .mask = cap - 1 };
    if (!ms.slot)
        sync_out_of_resources("interp: out of memory for the check of %zu objects", total);
    for (int t = 0; t < cx->nthreads; t++) {
        const struct iv_tracing_thread *m = IV_TRACING(&cx->th[t].mem);
        for (size_t i = 0; i < m->nreg; i++)
            iv_mark_add(&ms, m->reg[i]);
    }
    for (size_t i = 0; i < cx->npobj; i++)
        iv_mark_add(&ms, cx->pobj[i]);
    for (int i = 0; i < pr->ncode; i++)
        if (iv_vtype((iv_val)cx->konst[i]) != IV_T_INT)
            iv_mark_add(&ms, (iv_val)cx->konst[i]);
    for (size_t k = 0; k < (size_t)pr->nglobals * (size_t)cx->nthreads; k++)
        if (cx->gobj[k])
            iv_mark_add(&ms, cx->gobj[k]);
    int r = iv_census_check(cx, "registration", iv_tracing_agrees, &ms, msg, len);
    free(ms.slot);
    return r;
}

#endif
