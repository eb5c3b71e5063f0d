/*
 * workloads/hashmap.c - a chained hash map of integer keys (lookup, insert, delete),
 * written once against runtime/sync.h and compiled for every runtime of build cc or
 * gnutm in runtime/runtimes.h's list.
 * The `locks` variant (per-bucket locks) is hashmap_locks.c.
 *
 * Shared state: one heap object per bucket (the chain head) and the chain nodes. The
 * array of bucket references is plain memory written once in setup and only read
 * afterwards. Every access to buckets and nodes is inside a SYNC_ATOMIC block, with
 * SYNC_READ before reading and SYNC_WRITE before writing an object. The map's
 * operations and its walks are in workloads/hashmap_ops.h (workloads/compose.c runs
 * them too); this file is the workload around them.
 *
 * Invariants (checked after the run by hashmap_check):
 *   H1 every node sits in the chain of its key's bucket;
 *   H2 no key appears twice;
 *   H3 the key set equals the initial set plus the committed successful inserts minus
 *      the committed successful deletes (workloads/lib/oplog.c).
 *
 * Blocks may re-run under stm: a block reads its operations from the thread's buffers
 * and overwrites every result each run; the thread logs results after the block.
 */
#include "workloads/hashmap.h"
#include "workloads/hashmap_ops.h"

#include "runtime/sync.h"
#include "workloads/lib/oplog.h"
#include "workloads/lib/wl_keys.h"
#include "workloads/workload.h"

#include <stdlib.h>
#include <string.h>

static const char *const hm_site[] = {
    [HM_OP_LOOKUP] = "hashmap.lookup",
    [HM_OP_INSERT] = "hashmap.insert",
    [HM_OP_DELETE] = "hashmap.delete",
};

static SYNC_NOINLINE int hm_op(struct hm_ctx *c, int kind, int64_t key)
{
    hm_bucket_ref b = c->buckets[hm_bucket_of(key, c->nbuckets)];
    switch (kind) {
    case HM_OP_INSERT:
        return hm_insert(b, key);
    case HM_OP_DELETE:
        return hm_delete(b, key);
    default:
        return hm_lookup(b, key);
    }
}

/* ------------------------------------------------------------ the workload */

static int hashmap_validate(const struct wl_args *a, char *err, size_t errlen)
{
    return hm_validate_args(a, err, errlen);
}

static void hashmap_teardown(void *vctx);

static void *hashmap_setup(const struct wl_args *a, char *err, size_t errlen)
{
    struct hm_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory for the hashmap context");
        return NULL;
    }
    c->size = a->ival[HM_KNOB_SIZE];
    c->range = hm_range(a);
    c->update = a->ival[HM_KNOB_UPDATE];
    c->nbuckets = (uint64_t)a->ival[HM_KNOB_BUCKETS];
    c->ops_per_tx = a->ops_per_tx;            /* WL_LEN_AUTO: adaptive */
    long bufn = a->ops_per_tx > 0 ? a->ops_per_tx : WL_TXLEN_MAX_OPS;
    c->nthreads = a->nthreads;
    c->tls = aligned_alloc(SYNC_CACHELINE, (size_t)c->nthreads * sizeof *c->tls);
    c->initial = malloc(((size_t)c->size + 1) * sizeof *c->initial);
    c->buckets = calloc(c->nbuckets, sizeof *c->buckets);
    if (!c->tls || !c->initial || !c->buckets) {
        free(c->tls);
        free(c->initial);
        free(c->buckets);
        free(c);
        snprintf(err, errlen, "out of memory for %ld keys and %ld buckets",
                 a->ival[HM_KNOB_SIZE], a->ival[HM_KNOB_BUCKETS]);
        return NULL;
    }
    memset(c->tls, 0, (size_t)c->nthreads * sizeof *c->tls);
    for (int i = 0; i < c->nthreads; i++) {
        struct hm_tls *b = &c->tls[i];
        b->key = sync_private_alloc((size_t)bufn * sizeof *b->key);
        b->kind = sync_private_alloc((size_t)bufn);
        b->res = sync_private_alloc((size_t)bufn);
        b->log = oplog_new((uint64_t)c->range);
        if (!b->key || !b->kind || !b->res || !b->log) {
            hashmap_teardown(c);
            snprintf(err, errlen, "out of memory for thread %d's buffers", i);
            return NULL;
        }
    }
    if (wl_sample_keys(a->seed, (size_t)c->size, (uint64_t)c->range, c->initial) != 0) {
        hashmap_teardown(c);
        snprintf(err, errlen, "out of memory sampling %ld initial keys", c->size);
        return NULL;
    }
    /* Buckets, then keys, in blocks of bounded size. */
    for (uint64_t i = 0; i < c->nbuckets; i += 256) {
        uint64_t end = i + 256 < c->nbuckets ? i + 256 : c->nbuckets;
        SYNC_ATOMIC("hashmap.setup") {
            for (uint64_t j = i; j < end; j++)
                c->buckets[j] = SYNC_ALLOC(struct hm_bucket);
        }
    }
    for (long i = 0; i < c->size; i += 64) {
        long end = i + 64 < c->size ? i + 64 : c->size;
        SYNC_ATOMIC("hashmap.setup") {
            for (long j = i; j < end; j++)
                hm_op(c, HM_OP_INSERT, c->initial[j]);
        }
    }
    c->ninitial = (size_t)c->size;
    oplog_sort_keys(c->initial, c->ninitial);
    return c;
}

static uint64_t hm_block(struct hm_ctx *c, struct wl_thread *t)
{
    long k = wl_batch(t, t->tx_len);
    if (k <= 0)
        return 0;
    struct hm_tls *b = &c->tls[t->tid];
    for (long i = 0; i < k; i++) {
        uint64_t r = wl_rand_below(t, 200);
        b->kind[i] = r < (uint64_t)c->update ? HM_OP_INSERT
                   : r < 2 * (uint64_t)c->update ? HM_OP_DELETE : HM_OP_LOOKUP;
        b->key[i] = (int64_t)wl_rand_below(t, (uint64_t)c->range);
    }
    SYNC_ATOMIC(hm_site[b->kind[0]]) {
        for (long i = 0; i < k; i++)
            b->res[i] = (uint8_t)hm_op(c, b->kind[i], b->key[i]);
    }
    /* The block committed: its results are final; log the successful updates. */
    for (long i = 0; i < k; i++)
        if (b->res[i] && b->kind[i] != HM_OP_LOOKUP)
            oplog_record(b->log, (uint64_t)b->key[i], b->kind[i] == HM_OP_INSERT ? 1 : -1);
    WL_TXLEN_AFTER(t, (uint64_t)k);
    return (uint64_t)k;
}

static void hashmap_thread_run(void *vctx, struct wl_thread *t)
{
    struct hm_ctx *c = vctx;
    wl_txlen_init(t, c->ops_per_tx, 1, WL_TXLEN_MAX_OPS);
    WL_LOOP(c, t, hm_block);
}

static int hashmap_check(void *vctx, struct wl_thread *threads, int nthreads, char *msg,
                         size_t msglen)
{
    struct hm_ctx *c = vctx;
    struct hm_walk walk = { .keys = NULL, .msg = msg, .msglen = msglen }, *w = &walk;
    (void)threads;
    SYNC_ATOMIC("hashmap.check") {
        hm_walk_buckets(c->buckets, c->nbuckets, w);
    }
    int rc = walk.bad ? -1 : hm_keys_sort_unique(walk.keys, walk.n, msg, msglen);
    if (rc == 0) {
        struct oplog *logs[nthreads > 0 ? nthreads : 1];
        int nl = nthreads < c->nthreads ? nthreads : c->nthreads;
        for (int i = 0; i < nl; i++)
            logs[i] = c->tls[i].log;
        rc = oplog_replay_check(logs, nl, (uint64_t)c->range, c->initial, c->ninitial,
                                walk.keys, walk.n, "map", msg, msglen);
    }
    free(walk.keys);
    return rc;
}

static void hashmap_teardown(void *vctx)
{
    struct hm_ctx *c = vctx;
    if (!c)
        return;
    for (uint64_t i = 0; i < c->nbuckets; i += 256) {
        uint64_t end = i + 256 < c->nbuckets ? i + 256 : c->nbuckets;
        SYNC_ATOMIC("hashmap.teardown") {
            hm_free_buckets(c->buckets, i, end);
        }
    }
    for (int i = 0; i < c->nthreads; i++) {
        free(c->tls[i].key);
        free(c->tls[i].kind);
        free(c->tls[i].res);
        oplog_free(c->tls[i].log);
    }
    free(c->tls);
    free(c->initial);
    free(c->buckets);
    free(c->byref);
    free(c);
}

/* Conflict analysis: "hashmap bucket 93" (a chain head), or "hashmap node key=412
 * (bucket 93)" (its key at the end of the run). Only the STM names objects; a node is
 * read through the main thread's segment, where a freed one is still memory. */
static void hashmap_describe_object(void *vctx, uint64_t obj, char *buf, size_t n)
{
    struct hm_ctx *c = vctx;
    buf[0] = '\0';
    if (!c->byref) {                  /* once per run: n log n, then a search per object */
        uint64_t *refs = malloc((size_t)c->nbuckets * sizeof *refs);
        if (refs) {
            for (uint64_t b = 0; b < c->nbuckets; b++)
                refs[b] = (uint64_t)SYNC_REF_ID(c->buckets[b]);
            c->byref = wl_refidx_new(refs, (long)c->nbuckets);
            free(refs);
        }
    }
    long b = c->byref ? wl_refidx_find(c->byref, (long)c->nbuckets, obj) : -1;
    if (b >= 0) {
        snprintf(buf, n, "hashmap bucket %ld", b);
        return;
    }
#ifdef SYNC_RT_STM
    hm_ref node = (hm_ref)(uintptr_t)obj;
    int64_t key = node->key;
    snprintf(buf, n, "hashmap node key=%lld (bucket %llu)", (long long)key,
             (unsigned long long)hm_bucket_of(key, c->nbuckets));
#endif
}

WORKLOAD_EXPORT(hashmap, SYNC_RT_ID) = {
    .name = "hashmap",
    .runtime = SYNC_RT_NAME,
    .summary = "chained hash map of integer keys: lookup, insert, delete",
    .knobs = hm_knobs,
    .nknobs = HM_NKNOBS,
    .validate = hashmap_validate,
    .setup = hashmap_setup,
    .thread_run = hashmap_thread_run,
    .check = hashmap_check,
    .teardown = hashmap_teardown,
    .tx_adaptive = WL_TX_ADAPTIVE,
    .describe_object = hashmap_describe_object,
};
