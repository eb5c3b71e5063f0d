/*
 * workloads/rbtree_locks.c - the rbtree workload with fine-grained locks: the tree of
 * workloads/rbtree_locks.h, whose lookups take no lock (optimistic, validated by
 * per-node versions) and whose updates are serialised by one writer lock and run the
 * ordinary bottom-up red-black algorithms. Its invariants (W1, V1, V2, R1), why the
 * optimistic lookup is right, deadlock freedom and its memory orders are at the top
 * of that header; this file is the workload around it. (Schemes, the per-node lock
 * coupling this replaces, costs and figures: docs/locks-schemes.md.)
 *
 * Invariants of the workload: each operation is one call of rbl_op, which holds at
 * most the writer lock; every worker passes a quiescent state after each operation
 * (R1); an operation's result is final when rbl_op returns, and only then is it
 * logged.
 *
 * --ops-per-tx K: a thread still runs K operations per loop step, but each operation
 * is its own critical section: the locking gives no atomicity across operations.
 */
#include "workloads/rbtree.h"
#include "workloads/rbtree_locks.h"

#include "runtime/sync.h"
#include "workloads/lib/oplog.h"
#include "workloads/lib/wl_keys.h"
#include "workloads/lib/wl_qsbr.h"
#include "workloads/lib/wl_spin.h"
#include "workloads/workload.h"

#include <stdlib.h>
#include <string.h>


struct rbl_ctx {
    struct rbl_tree tr;          /* the writer lock (on its own line), H, the reclaimer */
    long size, range, update, ops_per_tx;
    int nthreads;
    struct rb_tls *tls;          /* res/key/kind unused beyond one op; log used */
    int64_t *initial;
    size_t ninitial;
};

/* ------------------------------------------------------------ the workload */

static int rbtree_locks_validate(const struct wl_args *a, char *err, size_t errlen)
{
    return rb_validate_args(a, err, errlen);
}

static void rbtree_locks_teardown(void *vctx);

static void *rbtree_locks_setup(const struct wl_args *a, char *err, size_t errlen)
{
    struct rbl_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory for the rbtree context");
        return NULL;
    }
    c->size = a->ival[RB_KNOB_SIZE];
    c->range = rb_range(a);
    c->update = a->ival[RB_KNOB_UPDATE];
    c->ops_per_tx = a->ops_per_tx > 0 ? a->ops_per_tx : 1;
    c->nthreads = a->nthreads;
    c->tls = aligned_alloc(SYNC_CACHELINE, (size_t)c->nthreads * sizeof *c->tls);
    c->initial = malloc(((size_t)c->size + 1) * sizeof *c->initial);
    c->tr.qsbr = wl_qsbr_new(c->nthreads, rbl_free_node);
    if (!c->tls || !c->initial || !c->tr.qsbr) {
        free(c->tls);
        free(c->initial);
        wl_qsbr_free(c->tr.qsbr);
        free(c);
        snprintf(err, errlen, "out of memory for %ld initial keys", a->ival[RB_KNOB_SIZE]);
        return NULL;
    }
    memset(c->tls, 0, (size_t)c->nthreads * sizeof *c->tls);
    for (int i = 0; i < c->nthreads; i++) {
        c->tls[i].log = oplog_new((uint64_t)c->range);
        if (!c->tls[i].log) {
            rbtree_locks_teardown(c);
            snprintf(err, errlen, "out of memory for thread %d's log", i);
            return NULL;
        }
    }
    if (wl_sample_keys(a->seed, (size_t)c->size, (uint64_t)c->range, c->initial) != 0) {
        rbtree_locks_teardown(c);
        snprintf(err, errlen, "out of memory sampling %ld initial keys", c->size);
        return NULL;
    }
    rbl_tree_init(&c->tr);
    for (long i = 0; i < c->size; i++)
        rbl_op(&c->tr, -1, RB_OP_INSERT, c->initial[i]);
    c->ninitial = (size_t)c->size;
    oplog_sort_keys(c->initial, c->ninitial);
    return c;
}

static uint64_t rbl_block(struct rbl_ctx *c, struct wl_thread *t)
{
    long k = wl_batch(t, c->ops_per_tx);
    if (k <= 0)
        return 0;
    struct oplog *log = c->tls[t->tid].log;
    for (long i = 0; i < k; i++) {
        uint64_t r = wl_rand_below(t, 200);
        int kind = r < (uint64_t)c->update ? RB_OP_INSERT
                 : r < 2 * (uint64_t)c->update ? RB_OP_DELETE : RB_OP_LOOKUP;
        int64_t key = (int64_t)wl_rand_below(t, (uint64_t)c->range);
        /* Each operation is its own critical section; its result is final on return. */
        if (rbl_op(&c->tr, t->tid, kind, key) && kind != RB_OP_LOOKUP)
            oplog_record(log, (uint64_t)key, kind == RB_OP_INSERT ? 1 : -1);
        wl_qsbr_quiescent(c->tr.qsbr, t->tid);     /* holds no node between operations */
    }
    return (uint64_t)k;
}

static void rbtree_locks_thread_run(void *vctx, struct wl_thread *t)
{
    struct rbl_ctx *c = vctx;
    wl_qsbr_online(c->tr.qsbr, t->tid);
    WL_LOOP(c, t, rbl_block);
    wl_qsbr_offline(c->tr.qsbr, t->tid);
}

static int rbtree_locks_check(void *vctx, struct wl_thread *threads, int nthreads, char *msg,
                              size_t msglen)
{
    struct rbl_ctx *c = vctx;
    struct rbl_walk w = { .msg = msg, .msglen = msglen };
    (void)threads;
    int rc = -1;
    if (rbl_tree_check(&c->tr, &w) == 0) {
        struct oplog *logs[nthreads > 0 ? nthreads : 1];
        int nl = nthreads < c->nthreads ? nthreads : c->nthreads;
        for (int i = 0; i < nl; i++)
            logs[i] = c->tls[i].log;
        rc = oplog_replay_check(logs, nl, (uint64_t)c->range, c->initial, c->ninitial,
                                w.keys, w.n, "tree", msg, msglen);
    }
    free(w.keys);
    return rc;
}


static void rbtree_locks_teardown(void *vctx)
{
    struct rbl_ctx *c = vctx;
    if (!c)
        return;
    wl_qsbr_free(c->tr.qsbr);        /* no worker runs: frees every retired node */
    rbl_tree_free(&c->tr);
    for (int i = 0; i < c->nthreads; i++)
        oplog_free(c->tls[i].log);
    free(c->tls);
    free(c->initial);
    free(c);
}

/* Contention analysis: the tree's one lock. */
static void rbtree_locks_describe_object(void *vctx, uint64_t obj, char *buf, size_t n)
{
    const struct rbl_ctx *c = vctx;
    rbl_describe_lock(&c->tr, obj, buf, n);
}

WORKLOAD_EXPORT(rbtree, SYNC_RT_ID) = {
    .name = "rbtree",
    .runtime = SYNC_RT_NAME,
    .summary = "red-black tree: optimistic versioned lookups, one writer lock for updates",
    .knobs = rb_knobs,
    .nknobs = RB_NKNOBS,
    .validate = rbtree_locks_validate,
    .setup = rbtree_locks_setup,
    .thread_run = rbtree_locks_thread_run,
    .check = rbtree_locks_check,
    .teardown = rbtree_locks_teardown,
    .describe_object = rbtree_locks_describe_object,
};
