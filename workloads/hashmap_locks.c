/*
 * workloads/hashmap_locks.c - the hashmap workload with fine-grained locks: one spin
 * lock per bucket, inside the bucket object beside the chain head.
 *
 * Invariants:
 *   B1 A bucket's head and the `next` links and keys of the nodes in its chain are
 *      read and written only by a thread holding that bucket's lock (the check reads
 *      them single-threaded after the join).
 *   B2 An operation takes exactly one lock (its key's bucket), so there is no lock
 *      order to respect and no deadlock.
 *   B3 A node is freed by the deleter that unlinked it, under the bucket lock; no
 *      other thread can reach it afterwards (B1).
 *
 * --ops-per-tx K: a thread runs K operations per loop step, each its own critical
 * section (per-bucket locking gives no atomicity across operations).
 */
#include "workloads/hashmap.h"

#include "runtime/sync.h"
#include "workloads/lib/oplog.h"
#include "workloads/lib/wl_keys.h"
#include "workloads/lib/wl_spin.h"
#include "workloads/workload.h"

#include <stdlib.h>
#include <string.h>

struct hml_node {
    SYNC_OBJECT_HEADER;
    int64_t key;
    struct hml_node *next;
};

struct hml_bucket {
    SYNC_OBJECT_HEADER;
    struct hml_node *head;
    wl_spin_t lock;
};

struct hml_ctx {
    struct hml_bucket **buckets;     /* written in setup, then read-only */
    uint64_t nbuckets;
    long size, range, update, ops_per_tx;
    int nthreads;
    struct oplog **logs;             /* [nthreads] */
    int64_t *initial;
    size_t ninitial;
};

/* The three operations, each with b's lock held by the caller. */
static int hml_lookup_locked(struct hml_bucket *b, int64_t key)
{
    for (struct hml_node *n = b->head; n; n = n->next)
        if (n->key == key)
            return 1;
    return 0;
}

static int hml_insert_locked(struct hml_bucket *b, int64_t key)
{
    if (hml_lookup_locked(b, key))
        return 0;
    struct hml_node *z = SYNC_ALLOC(struct hml_node);
    z->key = key;
    z->next = b->head;
    b->head = z;
    return 1;
}

static int hml_delete_locked(struct hml_bucket *b, int64_t key)
{
    struct hml_node *prev = NULL, *n = b->head;
    while (n && n->key != key) {
        prev = n;
        n = n->next;
    }
    if (!n)
        return 0;
    if (prev)
        prev->next = n->next;
    else
        b->head = n->next;
    SYNC_FREE(n);
    return 1;
}

static int hml_op(struct hml_ctx *c, int kind, int64_t key)
{
    struct hml_bucket *b = c->buckets[hm_bucket_of(key, c->nbuckets)];
    int r;
    wl_spin_lock(&b->lock);
    switch (kind) {
    case HM_OP_INSERT:
        r = hml_insert_locked(b, key);
        break;
    case HM_OP_DELETE:
        r = hml_delete_locked(b, key);
        break;
    default:
        r = hml_lookup_locked(b, key);
        break;
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
    c->buckets = calloc(c->nbuckets, sizeof *c->buckets);
    if (!c->logs || !c->initial || !c->buckets) {
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
        c->buckets[i] = SYNC_ALLOC(struct hml_bucket);
        wl_spin_init(&c->buckets[i]->lock);
    }
    for (long i = 0; i < c->size; i++)
        hml_op(c, HM_OP_INSERT, c->initial[i]);
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
        if (hml_op(c, kind, key) && kind != HM_OP_LOOKUP)
            oplog_record(log, (uint64_t)key, kind == HM_OP_INSERT ? 1 : -1);
    }
    return (uint64_t)k;
}

static void hashmap_locks_thread_run(void *vctx, struct wl_thread *t)
{
    struct hml_ctx *c = vctx;
    WL_LOOP(c, t, hml_block);
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
        const struct hml_bucket *b = c->buckets[i];
        if (atomic_load_explicit(&b->lock.v, memory_order_relaxed) != 0) {
            snprintf(msg, msglen, "bucket %llu is still locked after the run",
                     (unsigned long long)i);
            rc = -1;
            break;
        }
        for (const struct hml_node *p = b->head; p; p = p->next) {
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
    if (c->buckets)
        for (uint64_t i = 0; i < c->nbuckets; i++) {
            struct hml_bucket *b = c->buckets[i];
            if (!b)
                continue;
            for (struct hml_node *p = b->head; p;) {
                struct hml_node *next = p->next;
                SYNC_FREE(p);
                p = next;
            }
            SYNC_FREE(b);
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
    .summary = "chained hash map with one lock per bucket",
    .knobs = hm_knobs,
    .nknobs = HM_NKNOBS,
    .validate = hashmap_locks_validate,
    .setup = hashmap_locks_setup,
    .thread_run = hashmap_locks_thread_run,
    .check = hashmap_locks_check,
    .teardown = hashmap_locks_teardown,
};
