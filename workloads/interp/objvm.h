/*
 * workloads/interp/objvm.h - the interpreter's loop for the object model (--memory
 * tracing, refcount, biased), its allocation, freeing and collector. Included by
 * workloads/interp/vm.h after its structures; the model and its invariants are in
 * workloads/interp/obj.h. The raw mode keeps vm.h's own loop (iv_run), unchanged.
 *
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
#ifndef IV_OBJVM_H
#define IV_OBJVM_H

/* ---- buffered: counts outside the shared heap (obj.h; runtime/stm/DESIGN.md) ---- */

#if IV_COUNT_ATOMIC
#define IV_SLICE_ALONE 0       /* locks: other threads run while a slice does */
#else
#define IV_SLICE_ALONE 1       /* a slice's objects reach nobody before it completes */
#endif
#define IV_CELL_SLAB 1024

static IV_OBJ_TEXT void iv_vgrow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    void *n = realloc(*v, c * elem);
    if (!n)
        sync_out_of_resources("interp: out of memory (%zu entries of %zu bytes)", c, elem);
    *v = n;
    *cap = c;
}

/* The count cell of w's object; NULL for a small int or an object of the program
 * (immortal here). A read of the object, never a write. */
static inline struct iv_count *iv_count_of(iv_val w)
{
    if (iv_vtype(w) == IV_T_INT)
        return NULL;
    iv_oref o = iv_vref(w);
    SYNC_READ(o);
    return (struct iv_count *)(uintptr_t)o->rcs;
}

static IV_OBJ_TEXT void iv_dmap_resize(struct iv_mem *m, size_t cap)
{
    struct iv_count **ok = m->dkey;
    int64_t *ov = m->dval;
    uint32_t *ou = m->dused;
    size_t on = m->nd;
    m->dkey = calloc(cap, sizeof *m->dkey);
    m->dval = malloc(cap * sizeof *m->dval);
    m->dused = malloc(cap * sizeof *m->dused);
    if (!m->dkey || !m->dval || !m->dused)
        sync_out_of_resources("interp: out of memory for %zu count changes", cap);
    m->dcap = cap;
    m->nd = 0;
    for (size_t i = 0; i < on; i++) {
        struct iv_count *c = ok[ou[i]];
        size_t j = (size_t)(iv_hash((int64_t)(uintptr_t)c) & (cap - 1));
        while (m->dkey[j])
            j = (j + 1) & (cap - 1);
        m->dkey[j] = c;
        m->dval[j] = ov[ou[i]];
        m->dused[m->nd++] = (uint32_t)j;
    }
    free(ok);
    free(ov);
    free(ou);
}

/* The delta slot of cell c in the running block's map (added at 0). */
static inline int64_t *iv_delta(struct iv_mem *m, struct iv_count *c)
{
    if (SYNC_UNLIKELY(2 * (m->nd + 1) > m->dcap))
        iv_dmap_resize(m, m->dcap ? 2 * m->dcap : 256);
    size_t j = (size_t)(iv_hash((int64_t)(uintptr_t)c) & (m->dcap - 1));
    for (;; j = (j + 1) & (m->dcap - 1)) {
        if (m->dkey[j] == c)
            return &m->dval[j];
        if (!m->dkey[j]) {
            m->dkey[j] = c;
            m->dval[j] = 0;
            m->dused[m->nd++] = (uint32_t)j;
            return &m->dval[j];
        }
    }
}

static inline void iv_buf_add(struct iv_thread *th, iv_val w, int64_t d)
{
    struct iv_count *c = iv_count_of(w);
    if (c)
        *iv_delta(&th->mem, c) += d;
}

/* A free cell for an object born in the running block (taken for good only when the
 * block completes: iv_buf_after). */
static IV_OBJ_TEXT struct iv_count *iv_cell_take(struct iv_mem *m)
{
    if (m->ncfree == m->ctaken) {
        /* new cells go below the taken ones: the top stays where it is */
        struct iv_count *slab = malloc(IV_CELL_SLAB * sizeof *slab);
        iv_vgrow((void **)&m->slabs, &(size_t){ m->nslabs }, m->nslabs + 1, sizeof *m->slabs);
        iv_vgrow((void **)&m->cfree, &m->capcfree, m->ncfree + IV_CELL_SLAB, sizeof *m->cfree);
        if (!slab)
            sync_out_of_resources("interp: out of memory for count cells");
        m->slabs[m->nslabs++] = slab;
        memmove(m->cfree + IV_CELL_SLAB, m->cfree, m->ncfree * sizeof *m->cfree);
        for (size_t i = 0; i < IV_CELL_SLAB; i++) {
            /* relaxed: the slab is this thread's until a cell is taken */
            atomic_init(&slab[i].n, IV_CNT_DEAD);     /* free: the teardown's test */
            m->cfree[i] = &slab[i];
        }
        m->ncfree += IV_CELL_SLAB;
    }
    struct iv_count *c = m->cfree[m->ncfree - 1 - m->ctaken++];
    /* relaxed: nobody else knows the cell until the block that made the object ends */
    atomic_store_explicit(&c->n, 0, memory_order_relaxed);
    return c;
}

/* At the start of each run of a block: forget what a thrown-away run recorded. */
static inline void iv_buf_begin(struct iv_mem *m)
{
    for (size_t i = 0; i < m->nd; i++)
        m->dkey[m->dused[i]] = NULL;
    m->nd = 0;
    m->nyoung = 0;
    m->ctaken = 0;
    m->nret = 0;
}

/* ---- allocation ---- */

/* A new object's counts and registry entry; w is its tagged value. */
static inline void iv_born(const struct iv_ctx *cx, struct iv_thread *th, struct iv_vm *vm,
                           iv_oref o, iv_val w)
{
    th->mem.allocs++;
    o->owner = th->tid;
    if (cx->memory == IV_MEM_TRACING) {
        struct iv_mem *m = &th->mem;
        iv_grow(&m->reg, &m->capreg, m->nreg + 1);
        m->reg[m->nreg++] = w;
    } else if (cx->memory == IV_MEM_BUFFERED) {
        struct iv_mem *m = &th->mem;
        struct iv_count *c = iv_cell_take(m);
        c->obj = w;
        o->rcs = (int64_t)(uintptr_t)c;
        iv_vgrow((void **)&m->young, &m->capyoung, m->nyoung + 1, sizeof *m->young);
        m->young[m->nyoung++] = w;
        *iv_delta(m, c) += 1;             /* the reference the creator pushes */
    } else {
        o->rc = 1;                        /* the reference the creator pushes */
    }
}

static IV_OBJ_TEXT iv_val iv_new_box(const struct iv_ctx *cx, struct iv_thread *th, struct iv_vm *vm,
                         int64_t v)
{
    iv_box_ref b = SYNC_ALLOC(struct iv_box);
    b->value = v;
    iv_val w = iv_tagged((iv_oref)b, IV_T_BOX);
    iv_born(cx, th, vm, (iv_oref)b, w);
    return w;
}

static inline iv_val iv_make_int(const struct iv_ctx *cx, struct iv_thread *th,
                                 struct iv_vm *vm, int64_t v)
{
    return iv_fits_small(v) ? iv_small(v) : iv_new_box(cx, th, vm, v);
}

/* A list or dict; `padded` (the program's declared ones) on cache lines of its own. */
static IV_OBJ_TEXT iv_val iv_new_container(const struct iv_ctx *cx, struct iv_thread *th,
                               struct iv_vm *vm, int type, bool padded)
{
    size_t sz = type == IV_T_LIST ? sizeof(struct iv_olist) : sizeof(struct iv_odict);
    iv_oref o = (iv_oref)sync_alloc(padded && sz < 128 ? 128 : sz);
    if (type == IV_T_DICT) {
        iv_odict_ref d = (iv_odict_ref)o;
        d->cap = 8;
        d->slots = iv_slots_new(8);
    }
    iv_val w = iv_tagged(o, type);
    iv_born(cx, th, vm, o, w);
    return w;
}

/* Frees the object of w and what it holds: the memory of a container and, in the
 * counting modes, one reference of each element (freeing those that reach 0 in turn,
 * from a work list: no recursion however deep the nesting). */
static IV_OBJ_TEXT void iv_free_obj(iv_val w)
{
    iv_oref o = iv_vref(w);
    if (iv_vtype(w) == IV_T_LIST) {
        iv_olist_ref l = (iv_olist_ref)o;
        SYNC_READ(l);
        if (l->items != SYNC_NULL)
            SYNC_FREE(l->items);
    } else if (iv_vtype(w) == IV_T_DICT) {
        iv_odict_ref d = (iv_odict_ref)o;
        SYNC_READ(d);
        SYNC_FREE(d->slots);
    }
    SYNC_FREE(o);
}

static IV_OBJ_TEXT void iv_drop_into(const struct iv_ctx *cx, struct iv_thread *th, iv_val w)
{
    if (iv_vtype(w) != IV_T_INT && iv_decref_(cx->memory, th->tid, w, cx->mems)) {
        struct iv_mem *m = &th->mem;
        iv_grow(&m->work, &m->capwork, m->nwork + 1);
        m->work[m->nwork++] = w;
    }
}

static IV_OBJ_TEXT SYNC_NOINLINE void iv_release(const struct iv_ctx *cx, struct iv_thread *th,
                                     struct iv_vm *vm, iv_val w)
{
    struct iv_mem *m = &th->mem;
    m->nwork = 0;
    iv_grow(&m->work, &m->capwork, 1);
    m->work[m->nwork++] = w;
    while (m->nwork > 0) {
        iv_val x = m->work[--m->nwork];
        if (iv_vtype(x) == IV_T_LIST) {
            iv_olist_ref l = (iv_olist_ref)iv_vref(x);
            int64_t n = iv_olist_len(l);
            for (int64_t i = 0; i < n; i++)
                iv_drop_into(cx, th, iv_olist_get(l, i));
        } else if (iv_vtype(x) == IV_T_DICT) {
            iv_odict_ref d = (iv_odict_ref)iv_vref(x);
            SYNC_READ(d);
            iv_slots_ref s = d->slots;
            SYNC_READ(s);
            for (int64_t j = 0; j < d->cap; j++)
                if (s->e[j].used)
                    iv_drop_into(cx, th, (iv_val)s->e[j].val);
        }
        iv_free_obj(x);
        th->mem.frees++;
    }
}

/* Drops one reference (refcount, biased); nothing for small ints and under tracing. */
static inline void iv_decref(const struct iv_ctx *cx, struct iv_thread *th, struct iv_vm *vm,
                             iv_val w)
{
    if (iv_vtype(w) == IV_T_INT || cx->memory == IV_MEM_TRACING)
        return;
    if (cx->memory == IV_MEM_BUFFERED) {
        iv_buf_add(th, w, -1);
        return;
    }
    if (iv_decref_(cx->memory, th->tid, w, cx->mems))
        iv_release(cx, th, vm, w);
}

#if IV_COUNT_ATOMIC
/* biased under locks, at a slice boundary: merge the objects others queued to this
 * owner (their shared count went below 0), freeing those whose total is 0. */
static IV_OBJ_TEXT SYNC_NOINLINE void iv_brc_drain(const struct iv_ctx *cx, struct iv_thread *th,
                                       struct iv_vm *vm)
{
    struct iv_mem *m = &th->mem;
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
         * acq_rel: as the decrements of obj.h */
        old = __atomic_load_n(&o->rcs, __ATOMIC_RELAXED);
        do {
            now = ((old & ~(int64_t)3) + local * 4) | IV_BRC_MERGED;
        } while (!__atomic_compare_exchange_n(&o->rcs, &old, now, false, __ATOMIC_ACQ_REL,
                                              __ATOMIC_RELAXED));
        if ((now >> 2) == 0)
            iv_release(cx, th, vm, q[i]);
    }
    free(q);
}
#endif

/* Drops the references a dead container's elements held (into the map). */
static IV_OBJ_TEXT void iv_buf_drop_elements(struct iv_thread *th, iv_val w)
{
    if (iv_vtype(w) == IV_T_LIST) {
        iv_olist_ref l = (iv_olist_ref)iv_vref(w);
        for (int64_t i = 0, n = iv_olist_len(l); i < n; i++)
            iv_buf_add(th, iv_olist_get(l, i), -1);
    } else if (iv_vtype(w) == IV_T_DICT) {
        iv_odict_ref d = (iv_odict_ref)iv_vref(w);
        SYNC_READ(d);
        iv_slots_ref s = d->slots;
        SYNC_READ(s);
        for (int64_t j = 0; j < d->cap; j++)
            if (s->e[j].used)
                iv_buf_add(th, (iv_val)s->e[j].val, -1);
    }
}

/* At the end of a block, inside it (IV_SLICE_ALONE): the objects it allocated that
 * nothing holds any more are freed now, with their cells, until none is left. */
static IV_OBJ_TEXT SYNC_NOINLINE __attribute__((unused)) void iv_buf_settle(struct iv_thread *th,
                                                                struct iv_vm *vm)
{
    struct iv_mem *m = &th->mem;
    for (bool more = true; more;) {
        more = false;
        for (size_t i = m->nyoung; i-- > 0;) {
            iv_val y = m->young[i];
            if (!y)
                continue;
            struct iv_count *c = iv_count_of(y);
            int64_t *d = iv_delta(m, c);
            if (*d != 0)
                continue;
            m->young[i] = 0;
            more = true;
            iv_buf_drop_elements(th, y);
            iv_free_obj(y);
            th->mem.frees++;
            /* relaxed: the cell never left this thread */
            atomic_store_explicit(&c->n, IV_CNT_DEAD, memory_order_relaxed);
            iv_vgrow((void **)&m->cret, &m->capret, m->nret + 1, sizeof *m->cret);
            m->cret[m->nret++] = c;
        }
    }
}

static IV_OBJ_TEXT void iv_limbo_push(const struct iv_ctx *cx, struct iv_mem *m, struct iv_count *c)
{
    iv_vgrow((void **)&m->limbo, &m->caplimbo, m->nlimbo + 1, sizeof *m->limbo);
    /* acquire: pairs with the release increments of the epoch; read after the
     * decrement that took the count to 0 (its tag is at least every epoch read
     * before that) */
    m->limbo[m->nlimbo].tag = atomic_load_explicit(&cx->epoch, memory_order_acquire);
    m->limbo[m->nlimbo++].c = c;
}

/* A count went to 0 (no flag): it enters this thread's limbo, once. */
static IV_OBJ_TEXT void iv_count_zero(const struct iv_ctx *cx, struct iv_mem *m, struct iv_count *c)
{
    int64_t zero = 0;
    /* acq_rel: as the decrements; only one thread moves 0 to LIMBO */
    if (atomic_compare_exchange_strong_explicit(&c->n, &zero, IV_CNT_LIMBO,
                                                memory_order_acq_rel, memory_order_relaxed))
        iv_limbo_push(cx, m, c);
}

/* After the block completed: the taken cells are the objects', the freed ones go
 * back, the deltas are applied (increments first) and the epoch is published. */
static IV_OBJ_TEXT void iv_buf_apply(const struct iv_ctx *cx, struct iv_thread *th)
{
    struct iv_mem *m = &th->mem;
    m->ncfree -= m->ctaken;
    m->ctaken = 0;
    for (size_t i = 0; i < m->nret; i++) {
        iv_vgrow((void **)&m->cfree, &m->capcfree, m->ncfree + 1, sizeof *m->cfree);
        m->cfree[m->ncfree++] = m->cret[i];
    }
    m->nret = 0;
    for (size_t i = 0; i < m->nd; i++) {
        size_t j = m->dused[i];
        if (m->dval[j] > 0)
            /* relaxed: an increment needs no order; the holder keeps it alive */
            atomic_fetch_add_explicit(&m->dkey[j]->n, m->dval[j], memory_order_relaxed);
    }
    for (size_t i = 0; i < m->nd; i++) {
        size_t j = m->dused[i];
        if (m->dval[j] < 0) {
            /* acq_rel: the release orders this thread's uses of the object before a
             * free by whoever sees 0; the acquire, the others' uses before ours */
            int64_t now = atomic_fetch_add_explicit(&m->dkey[j]->n, m->dval[j],
                                                    memory_order_acq_rel) + m->dval[j];
            if (now == 0)
                iv_count_zero(cx, m, m->dkey[j]);
        }
    }
    /* an object born here that nothing counted (where slices do not run alone) */
    for (size_t i = 0; i < m->nyoung; i++)
        if (m->young[i] && atomic_load_explicit(&iv_count_of(m->young[i])->n,
                                                memory_order_acquire) == 0)
            iv_count_zero(cx, m, iv_count_of(m->young[i]));
    iv_buf_begin(m);
    /* release: every delta above before the epoch it publishes (the reclaimers'
     * acquire loads of `seen`); acquire: pairs with the epoch's increments */
    atomic_store_explicit(&m->seen, atomic_load_explicit(&cx->epoch, memory_order_acquire),
                          memory_order_release);
}

/* Frees what this thread's limbo holds and every running thread has passed (all of
 * it with `force`: the teardown, nobody running), with its elements' references in
 * a block of its own, and applies those in turn. */
static IV_OBJ_TEXT SYNC_NOINLINE void iv_buf_reclaim(const struct iv_ctx *cx0, struct iv_thread *th,
                                         bool force)
{
    struct iv_ctx *cx = (struct iv_ctx *)cx0;   /* the epoch moves */
    struct iv_mem *m = &th->mem;
    if (m->nlimbo == 0)
        return;
    uint64_t lo = UINT64_MAX;
    if (!force) {
        /* acq_rel: move the epoch past this limbo's entries so the others can pass it */
        uint64_t e = atomic_load_explicit(&cx->epoch, memory_order_acquire);
        if (m->limbo[m->nlimbo - 1].tag >= e)
            atomic_fetch_add_explicit(&cx->epoch, 1, memory_order_acq_rel);
        for (int t = 0; t < cx->nthreads; t++) {
            /* acquire: pairs with the release store after that thread's deltas */
            uint64_t s = atomic_load_explicit(&cx->th[t].mem.seen, memory_order_acquire);
            lo = s < lo ? s : lo;
        }
    }
    /* The limbo is in tag order (I5 of DESIGN.md's section: tags are epochs read by
     * this thread, which only grow, and entries go at the end), so the entries old
     * enough to decide are a prefix: a reclaim that can free nothing costs the scan of
     * the threads' `seen`, not of the limbo. Under the GIL a waiting thread's `seen`
     * stands still for a whole switch, and scanning the limbo at every block end then
     * took most of the holder's time (gil buffered ran 0.28-0.30 of 1 thread). */
    if (m->limbo[0].tag >= lo)
        return;
    size_t i = 0, nfree = 0;
    iv_val *dead = NULL;
    struct iv_count **cells = NULL;
    size_t capdead = 0, capcells = 0;
    for (; i < m->nlimbo && m->limbo[i].tag < lo; i++) {
        struct iv_limbo e = m->limbo[i];
        int64_t want = IV_CNT_LIMBO;
        /* acq_rel: the free's decision: every use counted before it is visible */
        if (atomic_compare_exchange_strong_explicit(&e.c->n, &want, IV_CNT_DEAD,
                                                    memory_order_acq_rel, memory_order_acquire)) {
            iv_vgrow((void **)&dead, &capdead, nfree + 1, sizeof *dead);
            iv_vgrow((void **)&cells, &capcells, nfree + 1, sizeof *cells);
            dead[nfree] = e.c->obj;
            cells[nfree++] = e.c;
            continue;
        }
        /* alive again: leave the limbo; if it fell to 0 meanwhile (its decrement saw
         * the flag and left it to us), enter again with a new tag */
        int64_t old = atomic_fetch_and_explicit(&e.c->n, ~IV_CNT_LIMBO, memory_order_acq_rel);
        if ((old & ~IV_CNT_LIMBO) == 0)
            iv_count_zero(cx, m, e.c);   /* at the end, with a tag >= lo: after i */
    }
    memmove(m->limbo, m->limbo + i, (m->nlimbo - i) * sizeof *m->limbo);
    m->nlimbo -= i;
    if (nfree) {
        SYNC_ATOMIC("interp.reclaim") {
            iv_buf_begin(m);
            for (size_t i = 0; i < nfree; i++) {
                iv_buf_drop_elements(th, dead[i]);
                iv_free_obj(dead[i]);
            }
        }
        for (size_t i = 0; i < nfree; i++) {
            iv_vgrow((void **)&m->cfree, &m->capcfree, m->ncfree + 1, sizeof *m->cfree);
            m->cfree[m->ncfree++] = cells[i];
        }
        m->gc_freed += nfree;
        iv_buf_apply(cx, th);
    }
    free(dead);
    free(cells);
}

/* The thread's state of the scheme at a block's end, outside it. */
static inline void iv_buf_after(const struct iv_ctx *cx, struct iv_thread *th)
{
    iv_buf_apply(cx, th);
    if (th->mem.nlimbo)
        iv_buf_reclaim(cx, th, false);
}

/* ---- the tracing collector ---- */

struct iv_markset {
    iv_val *slot;
    size_t mask;
};

static IV_OBJ_TEXT bool iv_mark_has(const struct iv_markset *ms, iv_val w)
{
    for (size_t i = (size_t)(iv_hash((int64_t)w) & ms->mask);; i = (i + 1) & ms->mask) {
        if (ms->slot[i] == w)
            return true;
        if (ms->slot[i] == 0)
            return false;
    }
}

/* Marks w; 1 if it was not marked before. */
static IV_OBJ_TEXT int iv_mark_add(struct iv_markset *ms, iv_val w)
{
    for (size_t i = (size_t)(iv_hash((int64_t)w) & ms->mask);; i = (i + 1) & ms->mask) {
        if (ms->slot[i] == w)
            return 0;
        if (ms->slot[i] == 0) {
            ms->slot[i] = w;
            return 1;
        }
    }
}

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
        if (iv_vtype(x) == IV_T_LIST) {
            l = (iv_olist_ref)iv_vref(x);
            n = iv_olist_len(l);
        } else if (iv_vtype(x) == IV_T_DICT) {
            iv_odict_ref d = (iv_odict_ref)iv_vref(x);
            SYNC_READ(d);
            s = d->slots;
            SYNC_READ(s);
            n = d->cap;
        }
        for (int64_t i = 0; i < n; i++) {
            iv_val e = l != SYNC_NULL ? iv_olist_get(l, i)
                                      : s->e[i].used ? (iv_val)s->e[i].val : 0;
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
        total += cx->th[t].mem.nreg;
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
            const struct iv_mem *m = &cx->th[t].mem;
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
        struct iv_mem *m = &cx->th[t].mem;
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
        if (!atomic_load_explicit(&cx->gc_req, memory_order_seq_cst))
            return;
        atomic_store_explicit(&th->mem.safe, 1, memory_order_seq_cst);
        unsigned spins = 0;
        /* acquire: pairs with the collector's release store of 0 */
        while (atomic_load_explicit(&cx->gc_req, memory_order_acquire))
            wl_spin_backoff(&spins);
        atomic_store_explicit(&th->mem.safe, 0, memory_order_seq_cst);
    }
}

/* This thread's registry passed its mark: collect, or park while another does. */
static IV_OBJ_TEXT SYNC_NOINLINE void iv_gc(struct iv_ctx *cx, struct iv_thread *th)
{
#if IV_GC_STOPS_WORLD
    int zero = 0;
    /* seq_cst: the handshake's store of gc_req (its Dekker pair with `safe`) */
    if (!atomic_compare_exchange_strong_explicit(&cx->gc_req, &zero, 1, memory_order_seq_cst,
                                                 memory_order_seq_cst)) {
        iv_gc_park(cx, th);               /* another thread collects */
        return;
    }
    for (int t = 0; t < cx->nthreads; t++) {
        unsigned spins = 0;
        /* seq_cst: the handshake's load (see the head of the file) */
        while (t != th->tid && !atomic_load_explicit(&cx->th[t].mem.safe, memory_order_seq_cst))
            wl_spin_backoff(&spins);
    }
    iv_gc_collect(cx, th);
    /* release: the frees and registry edits before the parked threads go on */
    atomic_store_explicit(&cx->gc_req, 0, memory_order_release);
#else
    iv_gc_collect(cx, th);
#endif
}

/* ---- the loop ---- */

#define IV_TYPE_FAULT() iv_fault(vm, IV_FAULT_TYPE, (int32_t)pc - 1)

/* The int of w, or a type fault (and 0). */
static inline int64_t iv_int_of(struct iv_vm *vm, iv_val w, intptr_t pc)
{
    if (SYNC_LIKELY(iv_vtype(w) == IV_T_INT))
        return (int64_t)w >> 4;
    if (iv_vtype(w) == IV_T_BOX) {
        iv_box_ref b = (iv_box_ref)iv_vref(w);
        SYNC_READ(b);
        return b->value;
    }
    IV_TYPE_FAULT();
    return 0;
}

static inline bool iv_truth(iv_val w)
{
    switch (iv_vtype(w)) {
    case IV_T_INT: return w != 0;
    case IV_T_BOX: {
        iv_box_ref b = (iv_box_ref)iv_vref(w);
        SYNC_READ(b);
        return b->value != 0;
    }
    case IV_T_LIST: return iv_olist_len((iv_olist_ref)iv_vref(w)) != 0;
    default: return iv_odict_len((iv_odict_ref)iv_vref(w)) != 0;
    }
}

/* The cell of int global g, found through the module dict (obj.h "Global names"). */
static inline iv_cell_ref iv_lookup_cell(const struct iv_ctx *cx, struct iv_thread *th,
                                         intptr_t at, int32_t g)
{
    if (cx->prog->globals[g].per_thread)
        return (iv_cell_ref)th->obj[g];
    iv_odict_ref md = cx->module;
    SYNC_READ(md);
    struct iv_gcache *gc = &th->gcache[at];
    if (SYNC_LIKELY(gc->kver == md->kver))
        return (iv_cell_ref)gc->cell;
    int64_t i = iv_odict_find(md, cx->gkey[g]);   /* every declared name is there */
    gc->cell = (iv_ref)(uintptr_t)md->slots->e[i].val;
    gc->kver = md->kver;
    return (iv_cell_ref)gc->cell;
}

/* The list or dict a global names (its object: the declared container). */
#define IV_GOBJ(g) (th->gobj[g])

static IV_OBJ_TEXT SYNC_NOINLINE uint64_t iv_run_obj(const struct iv_ctx *cx, struct iv_thread *th,
                                         struct iv_vm *vm, int64_t budget)
{
    const struct iv_insn *code = cx->prog->code;
    const int mode = cx->memory, tid = th->tid;
    int64_t *vals = vm->vals;
    struct iv_frame *frames = vm->frames;
    intptr_t pc = vm->pc, sp = vm->sp, base = vm->base, nframes = vm->nframes;
    intptr_t adepth = vm->adepth;
    int64_t left = budget;
    vm->in_run = 1;
#define INCREF(w)                                                   \
    do {                                                            \
        if (mode == IV_MEM_BUFFERED)                                \
            iv_buf_add(th, (w), 1);                                 \
        else                                                        \
            iv_incref(mode, tid, (w));                              \
    } while (0)
#define DECREF(w) iv_decref(cx, th, vm, (w))
#define MKINT(v) iv_make_int(cx, th, vm, (v))
    for (;;) {
        if (SYNC_UNLIKELY(left <= 0)) {
            if (adepth == 0)
                break;
            if (left <= -IV_ATOMIC_CAP) {
                vm->stuck = 1;
                iv_fault(vm, IV_FAULT_STUCK, (int32_t)pc);
                IV_ATOMIC_EXIT(th);
                break;
            }
        }
        left--;
        const struct iv_insn *in = &code[pc++];
        iv_val a, b, r;
        int32_t g = in->a;
        switch (in->op) {
        case IV_NOP:
            break;
        case IV_PUSH:
            r = (iv_val)cx->konst[pc - 1];
            INCREF(r);
            vals[sp++] = (int64_t)r;
            break;
        case IV_POP:
            DECREF((iv_val)vals[--sp]);
            break;
        case IV_DUP:
            INCREF((iv_val)vals[sp - 1]);
            vals[sp] = vals[sp - 1];
            sp++;
            break;
        case IV_SWAP: {
            int64_t t = vals[sp - 1];
            vals[sp - 1] = vals[sp - 2];
            vals[sp - 2] = t;
            break;
        }
        case IV_LOAD_GLOBAL:
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            if (cx->prog->globals[g].kind == IV_KIND_INT) {
                iv_cell_ref c = iv_lookup_cell(cx, th, pc - 1, g);
                SYNC_READ(c);
                r = (iv_val)c->value;
            } else {
                r = IV_GOBJ(g);
            }
            INCREF(r);                          /* under the cell's lock (obj.h) */
            IV_UNLOCK(th, g, adepth);
            vals[sp++] = (int64_t)r;
            break;
        case IV_STORE_GLOBAL: {
            iv_cell_ref c = iv_lookup_cell(cx, th, pc - 1, g);
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            SYNC_WRITE(c);
            r = (iv_val)c->value;
            c->value = vals[--sp];
            IV_UNLOCK(th, g, adepth);
            DECREF(r);
            break;
        }
        case IV_LOAD_LOCAL:
            INCREF((iv_val)vals[base + g]);
            vals[sp++] = vals[base + g];
            break;
        case IV_STORE_LOCAL:
            r = (iv_val)vals[base + g];
            vals[base + g] = vals[--sp];
            DECREF(r);
            break;
        case IV_ADD: case IV_SUB: case IV_MUL: case IV_DIV: case IV_MOD: case IV_LT:
        case IV_GT: {
            b = (iv_val)vals[--sp];
            a = (iv_val)vals[sp - 1];
            int64_t x = iv_int_of(vm, a, pc), y = iv_int_of(vm, b, pc), z;
            switch (in->op) {
            case IV_ADD: z = iv_add(x, y); break;
            case IV_SUB: z = iv_sub(x, y); break;
            case IV_MUL: z = iv_mul(x, y); break;
            case IV_DIV: z = iv_div(x, y); break;
            case IV_MOD: z = iv_mod(x, y); break;
            case IV_LT: z = x < y; break;
            default: z = x > y; break;
            }
            vals[sp - 1] = (int64_t)MKINT(z);
            DECREF(a);
            DECREF(b);
            break;
        }
        case IV_EQ: {
            b = (iv_val)vals[--sp];
            a = (iv_val)vals[sp - 1];
            bool ints = iv_vtype(a) <= IV_T_BOX && iv_vtype(b) <= IV_T_BOX;
            vals[sp - 1] = (int64_t)iv_small(ints ? iv_int_of(vm, a, pc) == iv_int_of(vm, b, pc)
                                                  : a == b);
            DECREF(a);
            DECREF(b);
            break;
        }
        case IV_NOT:
            a = (iv_val)vals[sp - 1];
            vals[sp - 1] = (int64_t)iv_small(!iv_truth(a));
            DECREF(a);
            break;
        case IV_JUMP:
            pc = g;
            break;
        case IV_JUMP_IF_FALSE: case IV_JUMP_IF_TRUE:
            a = (iv_val)vals[--sp];
            if (iv_truth(a) == (in->op == IV_JUMP_IF_TRUE))
                pc = g;
            DECREF(a);
            break;
        case IV_CALL:
            frames[nframes].ret_pc = (int32_t)pc;
            frames[nframes].base = (int32_t)base;
            nframes++;
            base = sp - in->b;
            for (intptr_t i = base + in->b; i < base + (intptr_t)in->v; i++)
                vals[i] = 0;
            sp = base + (intptr_t)in->v;
            pc = g;
            break;
        case IV_RET:
            r = (iv_val)vals[sp - 1];
            for (intptr_t i = base; i < sp - 1; i++)
                DECREF((iv_val)vals[i]);
            sp = base;
            nframes--;
            base = frames[nframes].base;
            pc = frames[nframes].ret_pc;
            vals[sp++] = (int64_t)r;
            break;
        case IV_THREAD_ID:
            vals[sp++] = (int64_t)iv_small(th->tid);   /* tids above 256 are boxed */
            if (!iv_fits_small(th->tid))
                vals[sp - 1] = (int64_t)MKINT(th->tid);
            break;
        case IV_ATOMIC_BEGIN:
            if (adepth++ == 0)
                IV_ATOMIC_ENTER(th, cx->prog->atomic_set[pc - 1]);
            break;
        case IV_ATOMIC_END:
            if (--adepth == 0)
                IV_ATOMIC_EXIT(th);
            break;
        case IV_NEW_LIST: case IV_NEW_DICT:
            vals[sp++] = (int64_t)iv_new_container(cx, th, vm, in->op == IV_NEW_LIST ? IV_T_LIST
                                                                                : IV_T_DICT, false);
            break;
        /* The container operations: a global's (operand g) or the stack's. Each takes
         * the container, the index or key, the value from the stack, then shares one
         * body per kind of access. */
        case IV_LIST_APPEND: case IV_APPEND: {
            iv_val l = in->op == IV_APPEND ? (iv_val)vals[sp - 2] : IV_GOBJ(g);
            b = (iv_val)vals[--sp];
            if (iv_vtype(l) != IV_T_LIST) {
                IV_TYPE_FAULT();
                DECREF(b);
            } else {
                int k = IV_LOCK_OBJ(th, g, l, adepth, in->op == IV_APPEND);
                int full = iv_olist_append((iv_olist_ref)iv_vref(l), b) < 0;
                IV_UNLOCK_OBJ(th, g, l, adepth, k);
                if (full) {
                    iv_fault(vm, IV_FAULT_LIST_FULL, (int32_t)pc - 1);
                    DECREF(b);
                }
            }
            if (in->op == IV_APPEND)
                DECREF((iv_val)vals[--sp]);
            break;
        }
        case IV_LIST_GET: case IV_DICT_GET: case IV_GETITEM: case IV_CONTAINS: {
            bool st = in->op == IV_GETITEM || in->op == IV_CONTAINS;
            iv_val c = st ? (iv_val)vals[sp - 2] : IV_GOBJ(g);
            a = (iv_val)vals[sp - 1];
            int64_t key = iv_int_of(vm, a, pc);
            r = 0;
            if (iv_vtype(c) == IV_T_LIST || iv_vtype(c) == IV_T_DICT) {
                int k = IV_LOCK_OBJ(th, g, c, adepth, st);
                if (in->op == IV_CONTAINS)
                    r = iv_small(iv_vtype(c) == IV_T_LIST
                                     ? (uint64_t)key < (uint64_t)iv_olist_len((iv_olist_ref)iv_vref(c))
                                     : iv_odict_find((iv_odict_ref)iv_vref(c), key) >= 0);
                else
                    r = iv_vtype(c) == IV_T_LIST ? iv_olist_get((iv_olist_ref)iv_vref(c), key)
                                                 : iv_odict_get((iv_odict_ref)iv_vref(c), key);
                INCREF(r);                      /* under the container's lock (obj.h) */
                IV_UNLOCK_OBJ(th, g, c, adepth, k);
            } else {
                IV_TYPE_FAULT();
            }
            DECREF(a);
            if (st) {
                sp--;
                DECREF(c);
            }
            vals[sp - 1] = (int64_t)r;
            break;
        }
        case IV_LIST_SET: case IV_DICT_SET: case IV_SETITEM: {
            bool st = in->op == IV_SETITEM;
            iv_val c = st ? (iv_val)vals[sp - 3] : IV_GOBJ(g);
            b = (iv_val)vals[--sp];
            a = (iv_val)vals[--sp];
            int64_t key = iv_int_of(vm, a, pc);
            r = b;                              /* what to drop: the old value, or b */
            if (iv_vtype(c) == IV_T_LIST) {
                int k = IV_LOCK_OBJ(th, g, c, adepth, st);
                r = iv_olist_set((iv_olist_ref)iv_vref(c), key, b);
                IV_UNLOCK_OBJ(th, g, c, adepth, k);
            } else if (iv_vtype(c) == IV_T_DICT) {
                int full, k = IV_LOCK_OBJ(th, g, c, adepth, st);
                r = iv_odict_set((iv_odict_ref)iv_vref(c), key, b, &full);
                IV_UNLOCK_OBJ(th, g, c, adepth, k);
                if (full) {
                    iv_fault(vm, IV_FAULT_DICT_FULL, (int32_t)pc - 1);
                    r = b;
                }
            } else {
                IV_TYPE_FAULT();
            }
            DECREF(r);
            DECREF(a);
            if (st)
                DECREF((iv_val)vals[--sp]);
            break;
        }
        case IV_LIST_LEN: case IV_DICT_LEN: case IV_LEN: {
            iv_val c = in->op == IV_LEN ? (iv_val)vals[--sp] : IV_GOBJ(g);
            int64_t n = 0;
            if (iv_vtype(c) == IV_T_LIST || iv_vtype(c) == IV_T_DICT) {
                int k = IV_LOCK_OBJ(th, g, c, adepth, in->op == IV_LEN);
                n = iv_vtype(c) == IV_T_LIST ? iv_olist_len((iv_olist_ref)iv_vref(c))
                                             : iv_odict_len((iv_odict_ref)iv_vref(c));
                IV_UNLOCK_OBJ(th, g, c, adepth, k);
            } else {
                IV_TYPE_FAULT();
            }
            if (in->op == IV_LEN)
                DECREF(c);
            vals[sp++] = (int64_t)MKINT(n);
            break;
        }
        case IV_LIST_POP: case IV_POPITEM: {
            iv_val l = in->op == IV_POPITEM ? (iv_val)vals[--sp] : IV_GOBJ(g);
            r = 0;
            if (iv_vtype(l) == IV_T_LIST) {
                int k = IV_LOCK_OBJ(th, g, l, adepth, in->op == IV_POPITEM);
                r = iv_olist_pop((iv_olist_ref)iv_vref(l));   /* the reference moves */
                IV_UNLOCK_OBJ(th, g, l, adepth, k);
            } else {
                IV_TYPE_FAULT();
            }
            if (in->op == IV_POPITEM)
                DECREF(l);
            vals[sp++] = (int64_t)r;
            break;
        }
        case IV_LIST_CLEAR: {
            iv_olist_ref l = (iv_olist_ref)iv_vref(IV_GOBJ(g));
            struct iv_mem *m = &th->mem;
            IV_LOCK(th, g, adepth);
            int64_t n = mode == IV_MEM_TRACING ? 0 : iv_olist_len(l);
            iv_grow(&m->drop, &m->capdrop, (size_t)n + 1);
            for (int64_t i = 0; i < n; i++)    /* dropped after the lock is released */
                m->drop[i] = iv_olist_get(l, i);
            SYNC_WRITE(l);
            l->len = 0;
            IV_UNLOCK(th, g, adepth);
            for (int64_t i = 0; i < n; i++)
                DECREF(m->drop[i]);
            break;
        }
        case IV_HALT:
        default:
            if (adepth > 0)
                IV_ATOMIC_EXIT(th);
            for (intptr_t i = 0; i < sp; i++)
                DECREF((iv_val)vals[i]);
            vm->runs++;
            iv_vm_reset(vm, cx->prog->main_nlocals);
            return (uint64_t)(budget - left);
        }
    }
#undef INCREF
#undef DECREF
#undef MKINT
    vm->pc = (int32_t)pc;
    vm->sp = (int32_t)sp;
    vm->base = (int32_t)base;
    vm->nframes = (int32_t)nframes;
    vm->adepth = (int32_t)adepth;
    return (uint64_t)(budget - left);
}

#endif
