/*
 * workloads/interp/mem_buffered.h - --memory buffered: the STM's own scheme for
 * reference counts (runtime/stm/DESIGN.md, "Reference counts that do not conflict").
 * An object's count lives outside the shared heap, in a count cell of plain memory
 * that the object names (h.rcs, written once at its birth), so changing it is never a
 * write to the object. A block records its count changes in a per-thread map (cell ->
 * delta), thrown away if the block re-runs; after the block completes, the thread
 * applies them (atomic adds: increments, then decrements; a decrement first raises
 * the cell's stamp to the epoch it read). A cell that a decrement takes to 0 enters
 * its limbo, tagged with the epoch it read after; it is freed only when every running
 * thread has published an epoch later than the tag and than the cell's stamp, which it
 * does after applying its own deltas, and only if its count is still 0 then (the flag
 * IV_CNT_LIMBO makes that test and the free one CAS, and keeps one limbo entry per
 * cell; the stamp, read after the CAS, undoes it when a decrement came after the tag:
 * issue 44). Objects a block
 * allocated and that no reference holds at its end are freed inside the block (where
 * a slice runs alone: under stm, htm, itm, gil, mutex, seq): they never reach another
 * thread and cost no count work. The program's objects have no cell (h.rcs 0): they
 * are freed at teardown.
 *
 * Invariants (DESIGN.md's section numbers them and argues them): the deltas of a block
 * are applied only after it completed, increments before decrements; a cell enters a
 * limbo once (IV_CNT_LIMBO); the limbo is in tag order; a thread's `seen` only grows
 * while it runs and is UINT64_MAX while it does not; a free cell is DEAD and in one
 * place, a thread's free list or a batch of the shared pool (I7: a thread with too
 * many hands batches over, one out of cells takes one before it mallocs a slab).
 * Memory orders: at each atomic.
 */
#ifndef IV_MEM_BUFFERED_H
#define IV_MEM_BUFFERED_H

#include "workloads/interp/census.h"
#include "workloads/interp/where.h"

#define IV_MEM_COUNTS_buffered 1
#define IV_MEM_BOXES_buffered 0          /* its dead boxes go to freelist.h's lists */

/* An object's count, outside the shared heap (plain memory). */
#define IV_CNT_LIMBO ((int64_t)1 << 61)   /* in a limbo list, waiting for the epochs */
#define IV_CNT_DEAD ((int64_t)1 << 60)    /* freed; the cell goes back to a free list */
struct iv_count {
    _Atomic int64_t n;                   /* references, plus the flags above */
    iv_val obj;                          /* the object (tagged), for the free */
    _Atomic uint64_t stamp;              /* the newest epoch a decrement read before it
                                          * was applied, in this life of the cell */
};
struct iv_limbo {
    struct iv_count *c;
    uint64_t tag;                        /* the epoch read after its count reached 0 */
};

/* A thread's state. */
struct iv_buffered_thread {
    struct iv_count **dkey;              /* the running block's deltas: an open-address */
    int64_t *dval;                       /* map cell -> delta (dcap a power of two) */
    uint32_t *dused;                     /* its used slots, in insertion order */
    size_t dcap, nd;
    iv_val *young;                       /* objects the running block allocated */
    size_t nyoung, capyoung;
    struct iv_count **cfree;             /* free cells; the block takes from the top */
    size_t ncfree, capcfree, ctaken;
    struct iv_count **cret;              /* cells of objects freed in the block */
    size_t nret, capret;
    void **slabs;                        /* the cells' memory */
    size_t nslabs;
    struct iv_limbo *limbo;
    size_t nlimbo, caplimbo;
    _Atomic uint64_t seen;               /* the epoch published after the last apply;
                                          * UINT64_MAX while not running */
};
IV_MODE_FITS(struct iv_buffered_thread, IV_MODE_THREAD_BYTES);
#define IV_BUFFERED(m) IV_MODE_STATE(struct iv_buffered_thread, (m))

/* The context's: the epoch. */
struct iv_cell_batch {
    struct iv_cell_batch *next;
    struct iv_count *c[1024];        /* IV_CELL_SLAB free cells, each marked DEAD */
};
struct iv_buffered_ctx {
    _Atomic uint64_t epoch;          /* moves when a limbo waits */
    _Atomic int pool_lock;           /* guards pool: a spinlock, taken once a batch */
    struct iv_cell_batch *_Atomic pool;  /* free cells handed over by threads with too
                                          * many; changed only under pool_lock */
};
IV_MODE_FITS(struct iv_buffered_ctx, IV_MODE_CTX_BYTES);
#define IV_BUFFERED_CTX(cx) IV_MODE_CTX(struct iv_buffered_ctx, (cx))

#define IV_CELL_SLAB 1024
#define IV_CELL_KEEP (4 * IV_CELL_SLAB)  /* free cells a thread keeps; the rest go to the pool */
_Static_assert(sizeof ((struct iv_cell_batch *)0)->c == IV_CELL_SLAB * sizeof(struct iv_count *),
               "a batch holds one slab's worth of cells");

/* The shared pool of free cells (issue 44's memcheck finding: a reclaim puts a cell on
 * the reclaiming thread's list, so when one thread frees more of the other's objects
 * than the reverse, the other mallocs slabs for good and the first one's list grows).
 * A thread whose list passes IV_CELL_KEEP after an apply hands a batch to the pool; a
 * thread out of cells takes a batch before it mallocs a slab. Slabs stay their
 * maker's (the teardown walks them), so a cell may serve any thread: it is DEAD while
 * in a list or the pool, and the reclaim's epoch argument (DESIGN.md, I3) holds for
 * whichever thread reuses it. The lock's acquire/release orders the giver's DEAD stores
 * before the taker's reuse. */
static inline IV_OBJ_TEXT void iv_pool_lock(struct iv_buffered_ctx *p)
{
    /* acquire: the previous holder's pool edits (and the cells' stores) before ours */
    while (atomic_exchange_explicit(&p->pool_lock, 1, memory_order_acquire))
        while (atomic_load_explicit(&p->pool_lock, memory_order_relaxed))
            sched_yield();           /* more threads than cores: let the holder run */
}
static inline IV_OBJ_TEXT void iv_pool_unlock(struct iv_buffered_ctx *p)
{
    atomic_store_explicit(&p->pool_lock, 0, memory_order_release);   /* our edits first */
}

/* Hands free cells past IV_CELL_KEEP to the pool, a batch at a time (none taken). */
static IV_OBJ_TEXT void iv_cells_give(const struct iv_ctx *cx, struct iv_buffered_thread *m)
{
    while (m->ctaken == 0 && m->ncfree > IV_CELL_KEEP + IV_CELL_SLAB) {
        struct iv_cell_batch *b = malloc(sizeof *b);
        if (!b)
            return;                  /* keep them: a list that grows, not a failure */
        m->ncfree -= IV_CELL_SLAB;
        memcpy(b->c, m->cfree + m->ncfree, sizeof b->c);
        struct iv_buffered_ctx *p = IV_BUFFERED_CTX((struct iv_ctx *)cx);
        iv_pool_lock(p);
        /* relaxed, both: under the lock; the unlocked peek below needs no order */
        b->next = atomic_load_explicit(&p->pool, memory_order_relaxed);
        atomic_store_explicit(&p->pool, b, memory_order_relaxed);
        iv_pool_unlock(p);
    }
}

/* A batch from the pool, or NULL when it is empty. */
static IV_OBJ_TEXT struct iv_cell_batch *iv_cells_from_pool(const struct iv_ctx *cx)
{
    struct iv_buffered_ctx *p = IV_BUFFERED_CTX((struct iv_ctx *)cx);
    /* relaxed peek: an empty pool costs no lock; a batch missed is taken next time */
    if (!atomic_load_explicit(&p->pool, memory_order_relaxed))
        return NULL;
    iv_pool_lock(p);
    struct iv_cell_batch *b = atomic_load_explicit(&p->pool, memory_order_relaxed);
    if (b)
        atomic_store_explicit(&p->pool, b->next, memory_order_relaxed);
    iv_pool_unlock(p);
    return b;
}

/* The count cell of w's object; NULL for a small int or an object of the program
 * (immortal here). A read of the object, never a write. */
static inline IV_OBJ_TEXT struct iv_count *iv_count_of(iv_val w)
{
    if (iv_vtype(w) == IV_T_INT)
        return NULL;
    iv_oref o = iv_vref(w);
    SYNC_READ(o);
    return (struct iv_count *)(uintptr_t)o->rcs;
}

static IV_OBJ_TEXT void iv_dmap_resize(struct iv_buffered_thread *m, size_t cap)
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
static inline IV_OBJ_TEXT int64_t *iv_delta(struct iv_buffered_thread *m, struct iv_count *c)
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

static inline IV_OBJ_TEXT void iv_buf_add(struct iv_thread *th, iv_val w, int64_t d)
{
    struct iv_count *c = iv_count_of(w);
    if (c)
        *iv_delta(IV_BUFFERED(&th->mem), c) += d;
}

/* Room for IV_CELL_SLAB more free cells (a batch's or a new slab's), below the ones
 * the running block took: the top, where it takes from, stays where it is. */
static IV_OBJ_TEXT struct iv_count **iv_cells_room(struct iv_buffered_thread *m)
{
    iv_vgrow((void **)&m->cfree, &m->capcfree, m->ncfree + IV_CELL_SLAB, sizeof *m->cfree);
    memmove(m->cfree + IV_CELL_SLAB, m->cfree, m->ncfree * sizeof *m->cfree);
    m->ncfree += IV_CELL_SLAB;
    return m->cfree;
}

/* A free cell for an object born in the running block (taken for good only when the
 * block completes: iv_buf_after). It runs inside the block: under stm a re-run keeps
 * what the thread's lists gained (plain memory, not rolled back; I4 marks the cells
 * free again); under htm the hardware rolls back the pool's pop with the rest; under
 * itm gcc makes the block irrevocable before the pop (the atomics are not
 * transaction-safe), so no restart follows it. Were this function made
 * transaction-safe, a restart would roll back the list's edits but not the pop, and
 * lose a batch. */
static IV_OBJ_TEXT struct iv_count *iv_cell_take(const struct iv_ctx *cx, struct iv_buffered_thread *m)
{
    if (m->ncfree == m->ctaken) {
        struct iv_cell_batch *b = iv_cells_from_pool(cx);
        if (b) {
            memcpy(iv_cells_room(m), b->c, sizeof b->c);
            free(b);
        }
    }
    if (m->ncfree == m->ctaken) {
        struct iv_count *slab = malloc(IV_CELL_SLAB * sizeof *slab);
        iv_vgrow((void **)&m->slabs, &(size_t){ m->nslabs }, m->nslabs + 1, sizeof *m->slabs);
        if (!slab)
            sync_out_of_resources("interp: out of memory for count cells");
        m->slabs[m->nslabs++] = slab;
        struct iv_count **room = iv_cells_room(m);
        for (size_t i = 0; i < IV_CELL_SLAB; i++) {
            /* relaxed: the slab is this thread's until a cell is taken */
            atomic_init(&slab[i].n, IV_CNT_DEAD);     /* free: the teardown's test */
            room[i] = &slab[i];
        }
    }
    struct iv_count *c = m->cfree[m->ncfree - 1 - m->ctaken++];
    /* relaxed: nobody else knows the cell until the block that made the object ends */
    atomic_store_explicit(&c->n, 0, memory_order_relaxed);
    atomic_store_explicit(&c->stamp, 0, memory_order_relaxed);   /* as n's */
    return c;
}

/* At the start of each run of a block: forget what a thrown-away run recorded. */
static inline IV_OBJ_TEXT void iv_buf_begin(struct iv_buffered_thread *m)
{
    for (size_t i = 0; i < m->nd; i++)
        m->dkey[m->dused[i]] = NULL;
    m->nd = 0;
    /* The cells a thrown-away run took are free again: marked so (the teardown frees
     * the objects of the cells not marked; a cell left at 0 naming what the abort
     * rolled back would be freed twice). Relaxed: no other thread knew them. */
    for (size_t k = 0; k < m->ctaken; k++)
        atomic_store_explicit(&m->cfree[m->ncfree - 1 - k]->n, IV_CNT_DEAD, memory_order_relaxed);
    m->nyoung = 0;
    m->ctaken = 0;
    m->nret = 0;
}

/* Drops the references a dead container's elements held (into the map). */
static IV_OBJ_TEXT void iv_buf_drop_elements(struct iv_thread *th, iv_val w)
{
    if (iv_vtype(w) == IV_T_LIST) {
        iv_olist_ref l = (iv_olist_ref)iv_vref(w);
        for (int64_t i = 0, n = iv_olist_len(l); i < n; i++)
            iv_buf_add(th, iv_olist_get(l, i), -1);
    } else if (iv_vtype(w) >= IV_T_QUEUE) {        /* object.h */
        iv_val e;
        for (int64_t i = 0, n = iv_declared_n(w); i < n; i++)
            if (iv_declared_at(w, i, &e))
                iv_buf_add(th, e, -1);
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
    struct iv_buffered_thread *m = IV_BUFFERED(&th->mem);
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

static IV_OBJ_TEXT void iv_limbo_push(const struct iv_ctx *cx, struct iv_buffered_thread *m, struct iv_count *c)
{
    iv_vgrow((void **)&m->limbo, &m->caplimbo, m->nlimbo + 1, sizeof *m->limbo);
    /* acquire: pairs with the release increments of the epoch; read after the
     * decrement that took the count to 0 (its tag is at least every epoch read
     * before that) */
    m->limbo[m->nlimbo].tag = atomic_load_explicit(&IV_BUFFERED_CTX(cx)->epoch, memory_order_acquire);
    m->limbo[m->nlimbo++].c = c;
}

/* A count went to 0 (no flag): it enters this thread's limbo, once. */
static IV_OBJ_TEXT void iv_count_zero(const struct iv_ctx *cx, struct iv_buffered_thread *m, struct iv_count *c)
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
    struct iv_buffered_thread *m = IV_BUFFERED(&th->mem);
    m->ncfree -= m->ctaken;
    m->ctaken = 0;
    for (size_t i = 0; i < m->nret; i++) {
        iv_vgrow((void **)&m->cfree, &m->capcfree, m->ncfree + 1, sizeof *m->cfree);
        m->cfree[m->ncfree++] = m->cret[i];
    }
    m->nret = 0;
    for (size_t i = 0; i < m->nd; i++) {
        size_t j = m->dused[i];
        /* relaxed: an increment needs no order; the holder keeps it alive. It lands
         * on exactly 0 when another thread dropped the copy it counts before this
         * apply (the count was below 0): that 0 enters a limbo as a decrement's
         * does (the CAS there releases this thread's uses) */
        if (m->dval[j] > 0 && atomic_fetch_add_explicit(&m->dkey[j]->n, m->dval[j],
                                                        memory_order_relaxed) == -m->dval[j])
            iv_count_zero(cx, m, m->dkey[j]);
    }
    /* acquire: pairs with the epoch's increments. Read after the block completed, so
     * it is at least the `seen` of every thread whose block began before that
     * (DESIGN.md, I3) */
    uint64_t epoch = atomic_load_explicit(&IV_BUFFERED_CTX(cx)->epoch, memory_order_acquire);
    for (size_t i = 0; i < m->nd; i++) {
        size_t j = m->dused[i];
        if (m->dval[j] < 0) {
            struct iv_count *c = m->dkey[j];
            /* the stamp rises to `epoch` before the decrement: relaxed, since the
             * decrement's release orders it before every later RMW of n, and the
             * reclaimer reads it after its acquire CAS of n */
            uint64_t st = atomic_load_explicit(&c->stamp, memory_order_relaxed);
            while (st < epoch && !atomic_compare_exchange_weak_explicit(
                                     &c->stamp, &st, epoch, memory_order_relaxed,
                                     memory_order_relaxed))
                ;
            /* acq_rel: the release orders this thread's uses of the object (and the
             * stamp) before a free by whoever sees 0; the acquire, the others' uses
             * before ours */
            int64_t now = atomic_fetch_add_explicit(&c->n, m->dval[j],
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
    /* Spare cells to the pool after this thread's deltas are applied, not before: a
     * stray delta on a cell it freed (none, by I1-I3) would then land before another
     * thread could take the cell, as when the thread reuses its own. */
    iv_cells_give(cx, m);
    iv_buf_begin(m);
    /* release: every delta above before the epoch it publishes (the reclaimers'
     * acquire loads of `seen`); acquire: pairs with the epoch's increments */
    atomic_store_explicit(&m->seen, atomic_load_explicit(&IV_BUFFERED_CTX(cx)->epoch, memory_order_acquire),
                          memory_order_release);
}

/* Frees what this thread's limbo holds and every running thread has passed (all of
 * it with `force`: the teardown, nobody running), with its elements' references in
 * a block of its own, and applies those in turn. */
static IV_OBJ_TEXT SYNC_NOINLINE void iv_buf_reclaim(const struct iv_ctx *cx0, struct iv_thread *th,
                                         bool force)
{
    struct iv_ctx *cx = (struct iv_ctx *)cx0;   /* the epoch moves */
    struct iv_buffered_thread *m = IV_BUFFERED(&th->mem);
    if (m->nlimbo == 0)
        return;
    uint64_t lo = UINT64_MAX;
    if (!force) {
        /* acq_rel: move the epoch past this limbo's entries so the others can pass it */
        uint64_t e = atomic_load_explicit(&IV_BUFFERED_CTX(cx)->epoch, memory_order_acquire);
        if (m->limbo[m->nlimbo - 1].tag >= e)
            atomic_fetch_add_explicit(&IV_BUFFERED_CTX(cx)->epoch, 1, memory_order_acq_rel);
        for (int t = 0; t < cx->nthreads; t++) {
            /* acquire: pairs with the release store after that thread's deltas */
            uint64_t s = atomic_load_explicit(&IV_BUFFERED(&cx->th[t].mem)->seen, memory_order_acquire);
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
    /* At most 4096 entries and two per bytecode of the last slice (a bytecode makes
     * at most one object) per call: the thread goes back to its blocks (and publishes
     * its epoch) soon, and
     * the objects it frees are still in its cache. Freeing a whole backlog at once
     * made both threads' backlogs grow under locks: while one freed millions of
     * cold objects its epoch stood still, so the other's limbo grew, and the next
     * batch was larger and colder still (make memcheck: locks buffered arith went
     * from 241 MB to 1.8 GB in 12 s). The budget stays above the allocation rate, so
     * the limbo drains. */
    size_t budget = force ? SIZE_MAX : 4096 + 2 * (size_t)th->last_n;
    size_t i = 0, nfree = 0;
    iv_val *dead = NULL;
    struct iv_count **cells = NULL;
    size_t capdead = 0, capcells = 0;
    for (; i < m->nlimbo && m->limbo[i].tag < lo && i < budget; i++) {
        struct iv_limbo e = m->limbo[i];
        int64_t want = IV_CNT_LIMBO;
        /* acq_rel: the free's decision: every use counted before it is visible, and
         * the stamp of every decrement before it (their release) */
        bool won = atomic_compare_exchange_strong_explicit(&e.c->n, &want, IV_CNT_DEAD,
                                                           memory_order_acq_rel,
                                                           memory_order_acquire);
#ifndef IV_TEST_AFTER_DEAD
#define IV_TEST_AFTER_DEAD(c) ((void)0) /* tests/test_interp_counts.c: another thread's
                                         * apply between the CAS and the stamp's read */
#endif
        if (won)
            IV_TEST_AFTER_DEAD(e.c);
        /* relaxed: read after the acquire CAS, as the stamps' comment in apply says */
        if (won && atomic_load_explicit(&e.c->stamp, memory_order_relaxed) < lo) {
            iv_vgrow((void **)&dead, &capdead, nfree + 1, sizeof *dead);
            iv_vgrow((void **)&cells, &capcells, nfree + 1, sizeof *cells);
            dead[nfree] = e.c->obj;
            cells[nfree++] = e.c;
            continue;
        }
        /* A decrement since the tag read an epoch that some thread has not passed: a
         * reference made after the tag may still be pending (issue 44). Undo the DEAD
         * (acq_rel, as the decrements; deltas that landed on it meanwhile stay) and
         * go on as when the CAS failed. */
        if (won)
            atomic_fetch_add_explicit(&e.c->n, IV_CNT_LIMBO - IV_CNT_DEAD, memory_order_acq_rel);
        /* alive again: leave the limbo; if it fell to 0 meanwhile (its decrement saw
         * the flag and left it to us), or the stamp held it, enter again with a new
         * tag (read after the stamp: at least it). The flag goes by a subtraction,
         * not a mask: a count below 0 under the flag borrowed from it (LIMBO - 1 has
         * the bit clear), and only the sum is right (acq_rel: as the decrements) */
        int64_t old = atomic_fetch_sub_explicit(&e.c->n, IV_CNT_LIMBO, memory_order_acq_rel);
        if (old == IV_CNT_LIMBO)
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
        th->mem.gc_freed += nfree;
        iv_buf_apply(cx, th);
    }
    free(dead);
    free(cells);
}

/* The thread's state of the scheme at a block's end, outside it. */
static inline IV_OBJ_TEXT void iv_buf_after(const struct iv_ctx *cx, struct iv_thread *th)
{
    iv_buf_apply(cx, th);
    if (IV_BUFFERED(&th->mem)->nlimbo)
        iv_buf_reclaim(cx, th, false);
}

static inline IV_OBJ_TEXT void iv_buffered_setup(struct iv_ctx *cx)
{
    atomic_init(&IV_BUFFERED_CTX(cx)->epoch, 1);
    atomic_init(&IV_BUFFERED_CTX(cx)->pool_lock, 0);
    atomic_init(&IV_BUFFERED_CTX(cx)->pool, NULL);
    for (int t = 0; t < cx->nthreads; t++)
        /* 0 until the thread publishes its first epoch (thread_start): a thread that
         * has not started holds every limbo back, or a reclaim that read UINT64_MAX
         * just before it started could free what its first block reads (DESIGN.md,
         * I3, step 2) */
        atomic_init(&IV_BUFFERED(&cx->th[t].mem)->seen, 0);
}

/* The program's objects have no cell (h.rcs stays 0): iv_count_of gives NULL. */
static inline IV_OBJ_TEXT void iv_buffered_program_object(const struct iv_ctx *cx, iv_oref o, int tid,
                                              bool container) {}

static inline IV_OBJ_TEXT void iv_buffered_allocated(const struct iv_ctx *cx, struct iv_thread *th,
                                         iv_oref o, iv_val w)
{
    struct iv_buffered_thread *m = IV_BUFFERED(&th->mem);
    struct iv_count *c = iv_cell_take(cx, m);
    c->obj = w;
    o->rcs = (int64_t)(uintptr_t)c;
    iv_vgrow((void **)&m->young, &m->capyoung, m->nyoung + 1, sizeof *m->young);
    m->young[m->nyoung++] = w;
    *iv_delta(m, c) += 1;             /* the reference the creator pushes */
}

static inline IV_OBJ_TEXT bool iv_buffered_try_incref(const struct iv_ctx *cx, struct iv_thread *th,
                                                 iv_val w)
{
    return false;                    /* read under the lock, as before */
}

static inline IV_OBJ_TEXT void iv_buffered_incref(const struct iv_ctx *cx, struct iv_thread *th, iv_val w)
{
    iv_buf_add(th, w, 1);
}

static inline IV_OBJ_TEXT void iv_buffered_decref(const struct iv_ctx *cx, struct iv_thread *th,
                                      struct iv_vm *vm, iv_val w)
{
    if (iv_vtype(w) != IV_T_INT)
        iv_buf_add(th, w, -1);
}

static inline IV_OBJ_TEXT void iv_buffered_safepoint(struct iv_ctx *cx, struct iv_thread *th) {}

static inline IV_OBJ_TEXT void iv_buffered_block_begin(const struct iv_ctx *cx, struct iv_thread *th)
{
    iv_buf_begin(IV_BUFFERED(&th->mem));
}

static inline IV_OBJ_TEXT void iv_buffered_block_end(const struct iv_ctx *cx, struct iv_thread *th,
                                         struct iv_vm *vm)
{
#if IV_SLICE_ALONE
    iv_buf_settle(th, vm);
#endif
}

static inline IV_OBJ_TEXT void iv_buffered_block_done(struct iv_ctx *cx, struct iv_thread *th)
{
    iv_buf_after(cx, th);
}

static inline IV_OBJ_TEXT void iv_buffered_thread_start(struct iv_ctx *cx, struct iv_thread *th)
{
    /* seq_cst: the scheme's first epoch (a running thread from now on) */
    atomic_store_explicit(&IV_BUFFERED(&th->mem)->seen, atomic_load(&IV_BUFFERED_CTX(cx)->epoch),
                          memory_order_seq_cst);
}

static inline IV_OBJ_TEXT void iv_buffered_thread_stop(struct iv_ctx *cx, struct iv_thread *th)
{
    iv_buf_reclaim(cx, th, false);
    /* release: its deltas are applied; it holds no limbo back any more */
    atomic_store_explicit(&IV_BUFFERED(&th->mem)->seen, UINT64_MAX, memory_order_release);
}

static inline IV_OBJ_TEXT void iv_buffered_teardown_stacks(struct iv_ctx *cx) { (void)cx; }

/* A global's value is a cell's object (freed with the cells) or the program's; a
 * declared container has no cell. */
static IV_OBJ_TEXT void iv_buffered_teardown_global(const struct iv_ctx *cx, struct iv_thread *th,
                                                    iv_val w, bool container)
{
    if (container)
        iv_free_obj(w);
}

/* Every cell not marked free names a live object (limbo included). */
static IV_OBJ_TEXT void iv_buffered_teardown(struct iv_ctx *cx)
{
    for (int t = 0; t < cx->nthreads; t++) {
        struct iv_buffered_thread *m = IV_BUFFERED(&cx->th[t].mem);
        for (size_t s = 0; s < m->nslabs; s++) {
            struct iv_count *slab = m->slabs[s];
            iv_val live[IV_CELL_SLAB];
            size_t n = 0;
            for (size_t i = 0; i < IV_CELL_SLAB; i++)
                /* relaxed: no thread runs */
                if (!(atomic_load_explicit(&slab[i].n, memory_order_relaxed) & IV_CNT_DEAD))
                    live[n++] = slab[i].obj;
            iv_free_all(live, n);
        }
    }
    struct iv_buffered_ctx *p = IV_BUFFERED_CTX(cx);
    /* relaxed: no thread runs */
    for (struct iv_cell_batch *b = atomic_load_explicit(&p->pool, memory_order_relaxed), *nx; b; b = nx) {
        nx = b->next;
        free(b);
    }
    atomic_store_explicit(&p->pool, NULL, memory_order_relaxed);
    for (int t = 0; t < cx->nthreads; t++) {
        struct iv_buffered_thread *m = IV_BUFFERED(&cx->th[t].mem);
        for (size_t s = 0; s < m->nslabs; s++)
            free(m->slabs[s]);
        free(m->slabs);
        free(m->dkey);
        free(m->dval);
        free(m->dused);
        free(m->young);
        free(m->cfree);
        free(m->cret);
        free(m->limbo);
    }
}

/* The final check: every object the heap holds has a live cell whose count is that of
 * its holders (the program's objects have no cell). A freed cell reads -1. */
static IV_OBJ_TEXT int iv_buffered_agrees(void *arg, iv_val w, int64_t refs, int64_t *theirs)
{
    struct iv_count *c = iv_count_of(w);
    if (!c)
        return 1;
    int64_t n = atomic_load_explicit(&c->n, memory_order_relaxed);   /* no thread runs */
    *theirs = n & IV_CNT_DEAD ? -1 : n & ~IV_CNT_LIMBO;
    return *theirs == refs;
}

static IV_OBJ_TEXT int iv_buffered_check(const struct iv_ctx *cx, char *msg, size_t len)
{
    return iv_census_check(cx, "count", iv_buffered_agrees, NULL, msg, len);
}

#endif
