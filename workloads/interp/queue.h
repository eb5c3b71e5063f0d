/*
 * workloads/interp/queue.h - a declared queue (`.global queue q`; QUEUE_PUT q pops a
 * value and puts it at the tail, QUEUE_GET q pushes the head's value, or 0 when the
 * queue is empty), as pypy-stm's `pypystm.queue` and CPython's `queue.Queue` are used:
 * producers and consumers share one queue object.
 *
 * Two representations:
 *  - The heap queue (every runtime but stm): a ring of values in the shared heap
 *    (struct iv_oqueue: head, len, cap and the items), grown by doubling. gil and
 *    mutex run it as a plain queue; locks takes the queue's own lock around each
 *    operation, as queue.Queue takes its one mutex; itm and htm run it in their
 *    transactions, where a put and a get conflict on head, len and the slots.
 *  - The side queue (stm): the values live in a ring outside the shared heap (struct
 *    iv_txq, one per declared queue, its pointer set in the heap object at setup and
 *    never changed), which a transaction changes only around its commit, so that put
 *    and get never conflict (runtime/stm/DESIGN.md, "A queue whose put and get do not
 *    conflict"; stmgc's queue.c is the design it follows):
 *      put   appends to the thread's own list of the attempt's puts (struct
 *            iv_txq_thread); nothing shared is touched.
 *      get   takes the ring's head under the ring's lock and records it in the
 *            attempt's list of taken values; only if the ring is empty, the oldest of
 *            the attempt's own puts to that queue; else 0. A value that names an
 *            object was put by a committed transaction that may be newer than the
 *            attempt's snapshot: the attempt moves its snapshot forward first
 *            (stm_refresh: an import with validation, as a commit's; a conflict aborts
 *            it, and the value goes back as below).
 *      commit (iv_txq_done, after the block): the attempt's puts are appended to
 *            their rings, in order; the taken values are forgotten (the attempt's
 *            stack or heap holds them now).
 *      abort (iv_txq_attempt, at the start of every attempt of a slice): the taken
 *            values go back to the heads of their rings, newest first, so the ring's
 *            order is as before; the puts are dropped (their references were the
 *            attempt's, rolled back with it).
 *
 * Invariants (side queue):
 *  Q1 A value is in exactly one place: a ring, one thread's taken list, one thread's
 *     put list, or the committed state of the program (a stack, a container, a cell).
 *     A get moves it from a ring to the taken list; the end of the attempt moves it on
 *     (commit: to what the block made of it; abort: back to the ring, once).
 *  Q2 A ring changes only under its lock; `n` is stored under it (relaxed) and read
 *     without it only as a hint. A get that sees 0 and finds its own puts empty says
 *     "empty", though a value may be out of the ring in an attempt that will abort and
 *     give it back: no serial order explains that answer, nor the order of values an
 *     aborted attempt gives back. The queue is a bag whose values are each taken
 *     exactly once, as stmgc's is, not a linearizable FIFO.
 *  Q3 A value reaches a ring only after the transaction that put it committed, and a
 *     get that takes a value naming an object imports every committed entry before
 *     it touches the object, so it reads the object as its putter committed it.
 *  Q4 The walkers (collection, census, teardown, check) read the rings while no
 *     thread runs a slice (the world stopped between slices, or the run over): every
 *     thread's lists are then empty.
 *
 * Memory orders: the ring's lock is wl_spin (acquire on lock, release on unlock); a
 * putter appends after its commit returned, so a getter that takes the value under
 * the lock sees the log entry linked (the acquire load of `next` in stm_refresh).
 */
#ifndef IV_QUEUE_H
#define IV_QUEUE_H

#include "workloads/interp/list.h"

/* The ring outside the shared heap (stm); a line of its own. */
struct iv_txq {
    wl_spin_t lock;
    _Atomic int64_t n;               /* values in the ring (Q2) */
    int64_t head, cap;               /* cap: a power of two, or 0 */
    iv_val *ring;
} SYNC_CL_ALIGNED;

struct iv_oqueue {
    struct iv_ohdr h;
    int64_t head, len, cap;          /* heap queue: a ring of cap slots (power of two) */
    SYNC_REF(struct iv_items) items;
    struct iv_txq *side;             /* stm: the side queue (NULL elsewhere) */
};
typedef SYNC_REF(struct iv_oqueue) iv_oqueue_ref;

#if defined(SYNC_RT_STM)
#define IV_QUEUE_SIDE 1
#else
#define IV_QUEUE_SIDE 0
#endif

/* ---- the side queue's ring (callers hold the lock, but for new and free) ---- */

static inline struct iv_txq *iv_txq_new(void)
{
    struct iv_txq *q = aligned_alloc(SYNC_CACHELINE, sizeof *q);
    if (!q)
        sync_out_of_resources("interp: out of memory for a queue");
    memset(q, 0, sizeof *q);
    wl_spin_init(&q->lock);
    atomic_init(&q->n, 0);
    return q;
}

static inline void iv_txq_free(struct iv_txq *q)
{
    if (q) {
        free(q->ring);
        free(q);
    }
}

static inline void iv_txq_reserve(struct iv_txq *q)
{
    int64_t n = atomic_load_explicit(&q->n, memory_order_relaxed);   /* under the lock */
    if (n < q->cap)
        return;
    int64_t ncap = q->cap ? 2 * q->cap : 64;
    iv_val *r = malloc((size_t)ncap * sizeof *r);
    if (!r)
        sync_out_of_resources("interp: out of memory for a queue of %lld values", (long long)ncap);
    for (int64_t i = 0; i < n; i++)
        r[i] = q->ring[(q->head + i) & (q->cap - 1)];
    free(q->ring);
    q->ring = r;
    q->head = 0;
    q->cap = ncap;
}

static inline void iv_txq_push_back(struct iv_txq *q, iv_val w)
{
    iv_txq_reserve(q);
    int64_t n = atomic_load_explicit(&q->n, memory_order_relaxed);
    q->ring[(q->head + n) & (q->cap - 1)] = w;
    /* relaxed: read by others only as a hint (Q2); the lock's release publishes */
    atomic_store_explicit(&q->n, n + 1, memory_order_relaxed);
}

static inline void iv_txq_push_front(struct iv_txq *q, iv_val w)
{
    iv_txq_reserve(q);
    int64_t n = atomic_load_explicit(&q->n, memory_order_relaxed);
    q->head = (q->head - 1) & (q->cap - 1);
    q->ring[q->head] = w;
    atomic_store_explicit(&q->n, n + 1, memory_order_relaxed);   /* relaxed: as above */
}

/* The head's value into *w; false when the ring is empty. */
static inline bool iv_txq_pop_front(struct iv_txq *q, iv_val *w)
{
    int64_t n = atomic_load_explicit(&q->n, memory_order_relaxed);
    if (n == 0)
        return false;
    *w = q->ring[q->head];
    q->head = (q->head + 1) & (q->cap - 1);
    atomic_store_explicit(&q->n, n - 1, memory_order_relaxed);   /* relaxed: as above */
    return true;
}

/* ---- a thread's side of the side queues ---- */

struct iv_txq_op {
    struct iv_txq *q;                /* NULL: a put that a get of the attempt took back */
    iv_val v;
};
struct iv_txq_thread {
    struct iv_txq_op *put;           /* the attempt's puts, oldest first */
    size_t nput, capput;
    struct iv_txq_op *got;           /* what the attempt took from rings, oldest first */
    size_t ngot, capgot;
    uint64_t gets, given_back;       /* statistics: values taken from rings, and given
                                      * back by an aborted attempt */
};

#ifndef IV_TEST_TXQ_TAKEN
#define IV_TEST_TXQ_TAKEN(q, w) ((void)0)  /* tests: other threads' steps between a get's
                                            * take and its refresh */
#endif

/* At the start of every attempt of a slice: what an aborted attempt took goes back to
 * the heads of the rings, newest first (Q1), and its puts are dropped. */
static inline void iv_txq_attempt(struct iv_txq_thread *tq)
{
    for (size_t i = tq->ngot; i-- > 0;) {
        struct iv_txq *q = tq->got[i].q;
        wl_spin_lock(&q->lock);
        iv_txq_push_front(q, tq->got[i].v);
        wl_spin_unlock(&q->lock);
        tq->given_back++;
    }
    tq->ngot = 0;
    tq->nput = 0;
}

/* After the slice's block committed: the puts reach their rings, in order (Q3); what
 * was taken stays taken. */
static inline void iv_txq_done(struct iv_txq_thread *tq)
{
    struct iv_txq *held = NULL;
    for (size_t i = 0; i < tq->nput; i++) {
        struct iv_txq *q = tq->put[i].q;
        if (!q)
            continue;
        if (q != held) {                 /* one lock for each run of puts to one queue */
            if (held)
                wl_spin_unlock(&held->lock);
            wl_spin_lock(&q->lock);
            held = q;
        }
        iv_txq_push_back(q, tq->put[i].v);
    }
    if (held)
        wl_spin_unlock(&held->lock);
    tq->nput = 0;
    tq->ngot = 0;
}

/* A put inside the attempt; -1 when the queue is full (IV_LIST_MAX values, counting
 * the ring's as a hint). */
static inline int iv_txq_put(struct iv_txq_thread *tq, struct iv_txq *q, iv_val w)
{
    /* relaxed: a hint (Q2); the limit is a guard against a runaway program */
    if (SYNC_UNLIKELY(atomic_load_explicit(&q->n, memory_order_relaxed) + (int64_t)tq->nput >=
                      IV_LIST_MAX))
        return -1;
    iv_vgrow((void **)&tq->put, &tq->capput, tq->nput + 1, sizeof *tq->put);
    tq->put[tq->nput++] = (struct iv_txq_op){ .q = q, .v = w };
    return 0;
}

/* A get inside the attempt: the ring's head, else the attempt's oldest own put to q,
 * else 0. */
static inline iv_val iv_txq_get(struct iv_txq_thread *tq, struct iv_txq *q)
{
    iv_val w;
    /* relaxed: a hint (Q2); the lock decides */
    if (atomic_load_explicit(&q->n, memory_order_relaxed) != 0) {
        wl_spin_lock(&q->lock);
        bool got = iv_txq_pop_front(q, &w);
        wl_spin_unlock(&q->lock);
        if (got) {
            iv_vgrow((void **)&tq->got, &tq->capgot, tq->ngot + 1, sizeof *tq->got);
            tq->got[tq->ngot++] = (struct iv_txq_op){ .q = q, .v = w };   /* Q1 */
            tq->gets++;
            IV_TEST_TXQ_TAKEN(q, w);
#if IV_QUEUE_SIDE
            if ((w & IV_TAG) != IV_T_INT)
                stm_refresh();       /* Q3: may abort; the value is in `got` */
#endif
            return w;
        }
    }
    for (size_t i = 0; i < tq->nput; i++)
        if (tq->put[i].q == q) {
            tq->put[i].q = NULL;
            return tq->put[i].v;
        }
    return 0;
}

/* ---- the heap queue ---- */

/* Appends w (the queue takes the reference); -1 when the queue is full. */
static inline int iv_oqueue_put(iv_oqueue_ref q, iv_val w)
{
    SYNC_WRITE(q);
    int64_t n = q->len, cap = q->cap;
    if (SYNC_UNLIKELY(n >= IV_LIST_MAX))
        return -1;
    iv_items_ref it = q->items;
    if (n == cap) {
        int64_t ncap = cap ? 2 * cap : 8;
        iv_items_ref ni = (iv_items_ref)sync_alloc(sizeof(struct iv_items) +
                                                   (size_t)ncap * sizeof(int64_t));
        if (it != SYNC_NULL) {
            SYNC_READ(it);
            for (int64_t i = 0; i < n; i++)      /* in order, from the head */
                ni->v[i] = it->v[(q->head + i) & (cap - 1)];
            SYNC_FREE(it);                       /* no reader without the lock */
        }
        ni->v[n] = (int64_t)w;                   /* new in this block: no barrier */
        q->items = ni;
        q->head = 0;
        q->cap = ncap;
    } else {
        SYNC_WRITE(it);
        it->v[(q->head + n) & (cap - 1)] = (int64_t)w;
    }
    q->len = n + 1;
    return 0;
}

/* The head's value (its reference moves to the caller), or 0 when empty. */
static inline iv_val iv_oqueue_get(iv_oqueue_ref q)
{
    SYNC_READ(q);
    if (q->len == 0)
        return 0;
    SYNC_WRITE(q);
    iv_items_ref it = q->items;
    SYNC_READ(it);
    iv_val w = (iv_val)it->v[q->head];
    q->head = (q->head + 1) & (q->cap - 1);
    q->len--;
    return w;
}

/* The walkers' view (Q4): the number of values and the i-th from the head. */
static inline int64_t iv_oqueue_len(iv_oqueue_ref q)
{
    SYNC_READ(q);
#if IV_QUEUE_SIDE
    /* relaxed: no thread runs a slice (Q4) */
    return atomic_load_explicit(&q->side->n, memory_order_relaxed);
#else
    return q->len;
#endif
}

static inline iv_val iv_oqueue_at(iv_oqueue_ref q, int64_t i)
{
    SYNC_READ(q);
#if IV_QUEUE_SIDE
    struct iv_txq *s = q->side;
    /* relaxed: no thread runs a slice (Q4) */
    if ((uint64_t)i >= (uint64_t)atomic_load_explicit(&s->n, memory_order_relaxed))
        return 0;
    return s->ring[(s->head + i) & (s->cap - 1)];
#else
    if ((uint64_t)i >= (uint64_t)q->len)
        return 0;
    iv_items_ref it = q->items;
    SYNC_READ(it);
    return (iv_val)it->v[(q->head + i) & (q->cap - 1)];
#endif
}

/* Frees the queue's storage and the queue (what its values hold is the mode's). The
 * side queue is freed after the teardown's block (iv_free_object), not here: a block
 * may run twice. */
static inline void iv_oqueue_free(iv_oqueue_ref q)
{
    SYNC_READ(q);
    if (q->items != SYNC_NULL)
        SYNC_FREE(q->items);
    SYNC_FREE(q);
}

#endif
