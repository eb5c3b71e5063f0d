/*
 * workloads/hashmap_locks.c - the hashmap workload with fine-grained locks: the map of
 * workloads/hashmap_locks.h, one spin lock per bucket taken by inserts and deletes
 * only, lookups without a lock, deleted nodes freed through the reclaimer
 * (workloads/lib/wl_qsbr.h). Its invariants (B1-B4), why a lock-free lookup is right
 * and its memory orders are at the top of that header; this file is the workload
 * around it. (Costs and figures: docs/locks-schemes.md.)
 *
 * Invariants of the workload: each operation is one call of hml_op, which takes at
 * most one lock (B2: no lock order, no deadlock); every worker passes a quiescent
 * state after each operation (B4); an operation's result is final when hml_op
 * returns, and only then is it logged.
 *
 * --ops-per-tx K: a thread runs K operations per loop step, each its own critical
 * section (per-bucket locking gives no atomicity across operations).
 */
#include "workloads/hashmap.h"
#include "workloads/hashmap_locks.h"

#include "runtime/sync.h"
#include "workloads/lib/oplog.h"
#include "workloads/lib/wl_keys.h"
#include "workloads/lib/wl_qsbr.h"
#include "workloads/lib/wl_spin.h"
#include "workloads/workload.h"

#include <stdlib.h>
#include <string.h>

struct hml_ctx {
    struct hml_map map;              /* the buckets and the reclaimer */
    long size, range, update, ops_per_tx;
    int nthreads;
    struct oplog **logs;             /* [nthreads] */
    int64_t *initial;
    size_t ninitial;
};

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
    c->ops_per_tx = a->ops_per_tx > 0 ? a->ops_per_tx : 1;
    c->nthreads = a->nthreads;
    c->logs = calloc((size_t)c->nthreads, sizeof *c->logs);
    c->initial = malloc(((size_t)c->size + 1) * sizeof *c->initial);
    c->map.qsbr = wl_qsbr_new(c->nthreads, hml_free_node);
    if (!c->logs || !c->initial || !c->map.qsbr ||
        hml_map_init(&c->map, (uint64_t)a->ival[HM_KNOB_BUCKETS]) != 0) {
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
    for (long i = 0; i < c->size; i++)
        hml_op(&c->map, -1, HM_OP_INSERT, c->initial[i]);
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
        if (hml_op(&c->map, t->tid, kind, key) && kind != HM_OP_LOOKUP)
            oplog_record(log, (uint64_t)key, kind == HM_OP_INSERT ? 1 : -1);
        wl_qsbr_quiescent(c->map.qsbr, t->tid);     /* holds no node between operations */
    }
    return (uint64_t)k;
}

static void hashmap_locks_thread_run(void *vctx, struct wl_thread *t)
{
    struct hml_ctx *c = vctx;
    wl_qsbr_online(c->map.qsbr, t->tid);
    WL_LOOP(c, t, hml_block);
    wl_qsbr_offline(c->map.qsbr, t->tid);
}

static int hashmap_locks_check(void *vctx, struct wl_thread *threads, int nthreads, char *msg,
                               size_t msglen)
{
    struct hml_ctx *c = vctx;
    (void)threads;
    int64_t *keys;
    size_t n;
    int rc = hml_map_keys(&c->map, &keys, &n, msg, msglen);
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
    wl_qsbr_free(c->map.qsbr);       /* no worker runs: frees every retired node */
    hml_map_free(&c->map);
    if (c->logs)
        for (int i = 0; i < c->nthreads; i++)
            oplog_free(c->logs[i]);
    free(c->logs);
    free(c->initial);
    free(c);
}

/* Contention analysis: a wait's object is the bucket whose lock it waited for
 * (hml_op): "hashmap bucket 93". */
static void hashmap_locks_describe_object(void *vctx, uint64_t obj, char *buf, size_t n)
{
    const struct hml_ctx *c = vctx;
    hml_describe_bucket(&c->map, obj, buf, n);
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
    .describe_object = hashmap_locks_describe_object,
};
