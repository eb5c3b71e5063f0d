/*
 * workloads/hashmap_locks.c - the hashmap workload with fine-grained locks: one spin
 * lock per bucket, in the bucket beside the chain head, taken by inserts
 * and deletes only. Lookups take no lock: they walk the chain while it may change,
 * and deleted nodes are freed only after every worker has passed a quiescent state
 * (workloads/lib/wl_qsbr.h). (Costs and figures: docs/locks-schemes.md.)
 *
 * Invariants:
 *   B1 A bucket's head and the `next` links of its nodes are written only by a thread
 *      holding that bucket's lock; they are atomics because lookups read them without
 *      the lock. A node's key is written once, before the node is published, and
 *      never again.
 *   B2 An update takes exactly one lock (its key's bucket), so there is no lock order
 *      to respect and no deadlock; a lookup takes none.
 *   B3 Inserts link the new node at the head of the chain; deletes unlink a node by
 *      pointing its predecessor past it and leave the node's own `next` unchanged.
 *      Nodes are never moved, so along `next` nodes only get older.
 *   B4 A node is retired by the deleter that unlinked it (under the bucket lock), and
 *      freed by the reclaimer only when no lookup can still hold it (wl_qsbr.h).
 *      Every worker passes a quiescent state between two operations.
 *
 * Why a lock-free lookup is right (linearisable): let the lookup read the head at
 * time t0. Every node it then reaches was in the chain at some moment in [t0, now]:
 * a node reached from a node still in the chain was its successor then, and a
 * node reached from an unlinked node N was N's successor when N was unlinked (B3: N's
 * `next` is frozen), which is after the lookup reached N. So a key found was present
 * at some moment of the lookup. Conversely, if the key was present in node K for the
 * whole lookup, the lookup cannot step past K: a frozen `next` of a node unlinked at
 * td points to its successor at td, and K, still in the chain at td and older (B3),
 * is that successor or further along. So "not found" means absent at some moment.
 *
 * Memory order: an insert fills the new node, then stores the head with release; a
 * delete stores its predecessor's link with release (the successor it publishes was
 * itself published with release and is ordered after it by the bucket lock); lookups
 * load every link with acquire, so the key of each node they reach is visible.
 *
 * --ops-per-tx K: a thread runs K operations per loop step, each its own critical
 * section (per-bucket locking gives no atomicity across operations).
 */
#include "workloads/hashmap.h"

#include "runtime/sync.h"
#include "workloads/lib/oplog.h"
#include "workloads/lib/wl_keys.h"
#include "workloads/lib/wl_qsbr.h"
#include "workloads/lib/wl_spin.h"
#include "workloads/workload.h"

#include <stdlib.h>
#include <string.h>

struct hml_node;
typedef struct hml_node *_Atomic hml_link;

struct hml_node {
    SYNC_OBJECT_HEADER;
    int64_t key;                     /* written before publication, then read-only */
    hml_link next;
};

/* Buckets sit in one array (16 bytes each), not one heap object apiece as in the
 * generic version (which the STM needs to keep chains' conflicts apart): one cache
 * miss fewer per operation when the table outgrows the caches. */
struct hml_bucket {
    hml_link head;
    wl_spin_t lock;
};

struct hml_ctx {
    struct hml_bucket *buckets;      /* [nbuckets]; the array is never reallocated */
    uint64_t nbuckets;
    long size, range, update, ops_per_tx;
    int nthreads;
    struct oplog **logs;             /* [nthreads] */
    struct wl_qsbr *qsbr;            /* deleted nodes wait here until no lookup holds them */
    int initialised;                 /* the buckets are (teardown walks them) */
    int64_t *initial;
    size_t ninitial;
};

static void hml_free_node(void *p)
{
    SYNC_FREE((struct hml_node *)p);
}

/* acquire: pairs with the release store that published the link's target (insert's
 * head store, or a delete's unlink), so the target's key is visible. */
static inline struct hml_node *hml_load(hml_link *l)
{
    return atomic_load_explicit(l, memory_order_acquire);
}

/* No lock: safe while the caller is between quiescent states (B4). */
static int hml_lookup(struct hml_bucket *b, int64_t key)
{
    for (struct hml_node *n = hml_load(&b->head); n; n = hml_load(&n->next))
        if (n->key == key)
            return 1;
    return 0;
}

/* With b's lock held. */
static int hml_insert_locked(struct hml_bucket *b, int64_t key)
{
    if (hml_lookup(b, key))
        return 0;
    struct hml_node *z = SYNC_ALLOC(struct hml_node);
    z->key = key;
    /* relaxed: z is not yet reachable; the head store below publishes it */
    atomic_store_explicit(&z->next, hml_load(&b->head), memory_order_relaxed);
    /* release: publishes z's key and link to lookups (their acquire loads) */
    atomic_store_explicit(&b->head, z, memory_order_release);
    return 1;
}

/* With b's lock held; the unlinked node is returned for retirement (NULL: absent). */
static struct hml_node *hml_delete_locked(struct hml_bucket *b, int64_t key)
{
    hml_link *prev = &b->head;
    struct hml_node *n = hml_load(prev);
    while (n && n->key != key) {
        prev = &n->next;
        n = hml_load(prev);
    }
    if (!n)
        return NULL;
    /* release: the successor published here was written before it (B3 and the lock);
     * n->next itself is left as it is (B3), for lookups standing on n */
    atomic_store_explicit(prev, hml_load(&n->next), memory_order_release);
    return n;
}

/* One operation by thread tid (-1: setup, single-threaded, frees at once). */
static int hml_op(struct hml_ctx *c, int tid, int kind, int64_t key)
{
    struct hml_bucket *b = &c->buckets[hm_bucket_of(key, c->nbuckets)];
    if (kind == HM_OP_LOOKUP)
        return hml_lookup(b, key);
    int r;
    wl_spin_lock(&b->lock);
    if (kind == HM_OP_INSERT) {
        r = hml_insert_locked(b, key);
    } else {
        struct hml_node *n = hml_delete_locked(b, key);
        r = n != NULL;
        if (n && tid >= 0)
            wl_qsbr_retire(c->qsbr, tid, n);
        else if (n)
            hml_free_node(n);
    }
    wl_spin_unlock(&b->lock);
    return r;
}

static int hashmap_locks_validate(const struct wl_args *a, char *err, size_t errlen)
{
    return hm_validate_args(a, err, errlen);
}

static void hashmap_locks_teardown(void *vctx);

static void *hashmap_locks_setup(const struct wl_args *a, char *err, size_t errlen)
{
    struct hml_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory for the hashmap context");
        return NULL;
    }
    c->size = a->ival[HM_KNOB_SIZE];
    c->range = hm_range(a);
    c->update = a->ival[HM_KNOB_UPDATE];
    c->nbuckets = (uint64_t)a->ival[HM_KNOB_BUCKETS];
    c->ops_per_tx = a->ops_per_tx > 0 ? a->ops_per_tx : 1;
    c->nthreads = a->nthreads;
    c->logs = calloc((size_t)c->nthreads, sizeof *c->logs);
    c->initial = malloc(((size_t)c->size + 1) * sizeof *c->initial);
    c->buckets = aligned_alloc(SYNC_CACHELINE, (c->nbuckets * sizeof *c->buckets +
                                                SYNC_CACHELINE - 1) & ~(size_t)(SYNC_CACHELINE - 1));
    c->qsbr = wl_qsbr_new(c->nthreads, hml_free_node);
    if (!c->logs || !c->initial || !c->buckets || !c->qsbr) {
        hashmap_locks_teardown(c);
        snprintf(err, errlen, "out of memory for %ld keys and %ld buckets",
                 a->ival[HM_KNOB_SIZE], a->ival[HM_KNOB_BUCKETS]);
        return NULL;
    }
    for (int i = 0; i < c->nthreads; i++)
        if (!(c->logs[i] = oplog_new((uint64_t)c->range))) {
            hashmap_locks_teardown(c);
            snprintf(err, errlen, "out of memory for thread %d's log", i);
            return NULL;
        }
    if (wl_sample_keys(a->seed, (size_t)c->size, (uint64_t)c->range, c->initial) != 0) {
        hashmap_locks_teardown(c);
        snprintf(err, errlen, "out of memory sampling %ld initial keys", c->size);
        return NULL;
    }
    for (uint64_t i = 0; i < c->nbuckets; i++) {
        atomic_init(&c->buckets[i].head, NULL);
        wl_spin_init(&c->buckets[i].lock);
    }
    c->initialised = 1;
    for (long i = 0; i < c->size; i++)
        hml_op(c, -1, HM_OP_INSERT, c->initial[i]);
    c->ninitial = (size_t)c->size;
    oplog_sort_keys(c->initial, c->ninitial);
    return c;
}

static uint64_t hml_block(struct hml_ctx *c, struct wl_thread *t)
{
    long k = wl_batch(t, c->ops_per_tx);
    if (k <= 0)
        return 0;
    struct oplog *log = c->logs[t->tid];
    for (long i = 0; i < k; i++) {
        uint64_t r = wl_rand_below(t, 200);
        int kind = r < (uint64_t)c->update ? HM_OP_INSERT
                 : r < 2 * (uint64_t)c->update ? HM_OP_DELETE : HM_OP_LOOKUP;
        int64_t key = (int64_t)wl_rand_below(t, (uint64_t)c->range);
        if (hml_op(c, t->tid, kind, key) && kind != HM_OP_LOOKUP)
            oplog_record(log, (uint64_t)key, kind == HM_OP_INSERT ? 1 : -1);
        wl_qsbr_quiescent(c->qsbr, t->tid);     /* holds no node between operations */
    }
    return (uint64_t)k;
}

static void hashmap_locks_thread_run(void *vctx, struct wl_thread *t)
{
    struct hml_ctx *c = vctx;
    wl_qsbr_online(c->qsbr, t->tid);
    WL_LOOP(c, t, hml_block);
    wl_qsbr_offline(c->qsbr, t->tid);
}

static int hashmap_locks_check(void *vctx, struct wl_thread *threads, int nthreads, char *msg,
                               size_t msglen)
{
    struct hml_ctx *c = vctx;
    (void)threads;
    size_t n = 0, cap = 1024;
    int64_t *keys = malloc(cap * sizeof *keys);
    int rc = keys ? 0 : -1;
    if (!keys)
        snprintf(msg, msglen, "out of memory collecting the map's keys");
    for (uint64_t i = 0; i < c->nbuckets && rc == 0; i++) {
        struct hml_bucket *b = &c->buckets[i];
        if (wl_spin_is_held(&b->lock)) {
            snprintf(msg, msglen, "bucket %llu is still locked after the run",
                     (unsigned long long)i);
            rc = -1;
            break;
        }
        for (struct hml_node *p = hml_load(&b->head); p; p = hml_load(&p->next)) {
            uint64_t want = hm_bucket_of(p->key, c->nbuckets);
            if (want != i) {
                snprintf(msg, msglen, "key %lld is in bucket %llu, but hashes to bucket %llu",
                         (long long)p->key, (unsigned long long)i, (unsigned long long)want);
                rc = -1;
                break;
            }
            if (n == cap) {
                int64_t *k = realloc(keys, 2 * cap * sizeof *k);
                if (!k) {
                    snprintf(msg, msglen, "out of memory collecting the map's keys");
                    rc = -1;
                    break;
                }
                keys = k;
                cap *= 2;
            }
            keys[n++] = p->key;
        }
    }
    if (rc == 0) {
        oplog_sort_keys(keys, n);
        for (size_t i = 1; i < n; i++)
            if (keys[i] == keys[i - 1]) {
                snprintf(msg, msglen, "key %lld is in the map twice", (long long)keys[i]);
                rc = -1;
                break;
            }
    }
    if (rc == 0) {
        int nl = nthreads < c->nthreads ? nthreads : c->nthreads;
        rc = oplog_replay_check(c->logs, nl, (uint64_t)c->range, c->initial, c->ninitial,
                                keys, n, "map", msg, msglen);
    }
    free(keys);
    return rc;
}

static void hashmap_locks_teardown(void *vctx)
{
    struct hml_ctx *c = vctx;
    if (!c)
        return;
    wl_qsbr_free(c->qsbr);           /* no worker runs: frees every retired node */
    if (c->buckets && c->initialised)
        for (uint64_t i = 0; i < c->nbuckets; i++)
            for (struct hml_node *p = hml_load(&c->buckets[i].head); p;) {
                struct hml_node *next = hml_load(&p->next);
                SYNC_FREE(p);
                p = next;
            }
    if (c->logs)
        for (int i = 0; i < c->nthreads; i++)
            oplog_free(c->logs[i]);
    free(c->logs);
    free(c->buckets);
    free(c->initial);
    free(c);
}

WORKLOAD_EXPORT(hashmap, SYNC_RT_ID) = {
    .name = "hashmap",
    .runtime = SYNC_RT_NAME,
    .summary = "chained hash map: one lock per bucket for updates, lock-free lookups",
    .knobs = hm_knobs,
    .nknobs = HM_NKNOBS,
    .validate = hashmap_locks_validate,
    .setup = hashmap_locks_setup,
    .thread_run = hashmap_locks_thread_run,
    .check = hashmap_locks_check,
    .teardown = hashmap_locks_teardown,
};
