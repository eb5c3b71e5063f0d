/*
 * workloads/rbtree.c - a red-black tree of integer keys (lookup, insert, delete),
 * written once against runtime/sync.h and compiled for every runtime of build cc or
 * gnutm in runtime/runtimes.h's list.
 * The fine-grained `locks` variant is rbtree_locks.c.
 *
 * Shared state: one tree object (the root reference) and the nodes; nothing else is
 * shared. Every access to them happens inside a SYNC_ATOMIC block, with SYNC_READ
 * before reading an object's fields and SYNC_WRITE before writing them. The tree's
 * operations and its walk are in workloads/rbtree_ops.h (workloads/compose.c runs
 * them too); this file is the workload around them.
 *
 * Invariants (checked after the run by rbtree_check):
 *   R1 the root is black;            R2 no red node has a red child;
 *   R3 every root-to-null path has the same number of black nodes;
 *   R4 keys strictly increase in order (a BST, no duplicates);
 *   R5 every child's parent reference names its parent, the root's is null;
 *   R6 the key set equals the initial set plus the committed successful inserts minus
 *      the committed successful deletes (workloads/lib/oplog.c).
 *
 * Blocks under stm may run several times. A block reads its operations from the
 * thread's buffers (filled before the block) and writes each result into them;
 * every run overwrites all results, so the values read after the block are those of
 * the run that committed, and only then are they appended to the thread's log.
 */
#include "workloads/rbtree.h"
#include "workloads/rbtree_ops.h"

#include "runtime/sync.h"
#include "workloads/lib/oplog.h"
#include "workloads/lib/wl_keys.h"
#include "workloads/workload.h"

#include <stdlib.h>
#include <string.h>

static const char *const rb_site[] = {
    [RB_OP_LOOKUP] = "rbtree.lookup",
    [RB_OP_INSERT] = "rbtree.insert",
    [RB_OP_DELETE] = "rbtree.delete",
};

static SYNC_NOINLINE int rb_op(rb_tree_ref tree, int kind, int64_t key)
{
    switch (kind) {
    case RB_OP_INSERT:
        return rb_insert(tree, key);
    case RB_OP_DELETE:
        return rb_delete(tree, key);
    default:
        return rb_lookup(tree, key);
    }
}

/* ------------------------------------------------------------ the workload */

static int rbtree_validate(const struct wl_args *a, char *err, size_t errlen)
{
    return rb_validate_args(a, err, errlen);
}

static void rbtree_teardown(void *vctx);

static void *rbtree_setup(const struct wl_args *a, char *err, size_t errlen)
{
    struct rb_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory for the rbtree context");
        return NULL;
    }
    c->size = a->ival[RB_KNOB_SIZE];
    c->range = rb_range(a);
    c->update = a->ival[RB_KNOB_UPDATE];
    c->ops_per_tx = a->ops_per_tx;            /* WL_LEN_AUTO: adaptive */
    long bufn = a->ops_per_tx > 0 ? a->ops_per_tx : WL_TXLEN_MAX_OPS;
    c->nthreads = a->nthreads;
    c->tls = aligned_alloc(SYNC_CACHELINE, (size_t)c->nthreads * sizeof *c->tls);
    c->initial = malloc(((size_t)c->size + 1) * sizeof *c->initial);
    if (!c->tls || !c->initial) {
        free(c->tls);
        free(c->initial);
        free(c);
        snprintf(err, errlen, "out of memory for %ld initial keys", a->ival[RB_KNOB_SIZE]);
        return NULL;
    }
    memset(c->tls, 0, (size_t)c->nthreads * sizeof *c->tls);
    for (int i = 0; i < c->nthreads; i++) {
        struct rb_tls *b = &c->tls[i];
        b->key = sync_private_alloc((size_t)bufn * sizeof *b->key);
        b->kind = sync_private_alloc((size_t)bufn);
        b->res = sync_private_alloc((size_t)bufn);
        b->log = oplog_new((uint64_t)c->range);
        if (!b->key || !b->kind || !b->res || !b->log) {
            rbtree_teardown(c);
            snprintf(err, errlen, "out of memory for thread %d's buffers", i);
            return NULL;
        }
    }
    if (wl_sample_keys(a->seed, (size_t)c->size, (uint64_t)c->range, c->initial) != 0) {
        rbtree_teardown(c);
        snprintf(err, errlen, "out of memory sampling %ld initial keys", c->size);
        return NULL;
    }
    SYNC_ATOMIC("rbtree.setup") {
        c->tree = SYNC_ALLOC(struct rb_tree);
    }
    /* Insert in blocks of 64 keys, so no transaction grows with --size. */
    for (long i = 0; i < c->size; i += 64) {
        long end = i + 64 < c->size ? i + 64 : c->size;
        SYNC_ATOMIC("rbtree.setup") {
            for (long j = i; j < end; j++)
                rb_insert(c->tree, c->initial[j]);
        }
    }
    c->ninitial = (size_t)c->size;
    oplog_sort_keys(c->initial, c->ninitial);
    return c;
}

static uint64_t rb_block(struct rb_ctx *c, struct wl_thread *t)
{
    long k = wl_batch(t, t->tx_len);
    if (k <= 0)
        return 0;
    struct rb_tls *b = &c->tls[t->tid];
    for (long i = 0; i < k; i++) {
        uint64_t r = wl_rand_below(t, 200);
        b->kind[i] = r < (uint64_t)c->update ? RB_OP_INSERT
                   : r < 2 * (uint64_t)c->update ? RB_OP_DELETE : RB_OP_LOOKUP;
        b->key[i] = (int64_t)wl_rand_below(t, (uint64_t)c->range);
    }
    rb_tree_ref tree = c->tree;
    SYNC_ATOMIC(rb_site[b->kind[0]]) {
        for (long i = 0; i < k; i++)
            b->res[i] = (uint8_t)rb_op(tree, b->kind[i], b->key[i]);
    }
    /* The block committed: its results are final; log the successful updates. */
    for (long i = 0; i < k; i++)
        if (b->res[i] && b->kind[i] != RB_OP_LOOKUP)
            oplog_record(b->log, (uint64_t)b->key[i], b->kind[i] == RB_OP_INSERT ? 1 : -1);
    WL_TXLEN_AFTER(t, (uint64_t)k);
    return (uint64_t)k;
}

static void rbtree_thread_run(void *vctx, struct wl_thread *t)
{
    struct rb_ctx *c = vctx;
    wl_txlen_init(t, c->ops_per_tx, 1, WL_TXLEN_MAX_OPS);
    WL_LOOP(c, t, rb_block);
}

static int rbtree_check(void *vctx, struct wl_thread *threads, int nthreads, char *msg,
                        size_t msglen)
{
    struct rb_ctx *c = vctx;
    struct rb_walk walk = { .msg = msg, .msglen = msglen }, *w = &walk;
    (void)threads;
    SYNC_ATOMIC("rbtree.check") {
        rb_check_tree(c->tree, w);
    }
    int rc = -1;
    if (!walk.bad) {
        struct oplog *logs[nthreads > 0 ? nthreads : 1];
        int nl = nthreads < c->nthreads ? nthreads : c->nthreads;
        for (int i = 0; i < nl; i++)
            logs[i] = c->tls[i].log;
        rc = oplog_replay_check(logs, nl, (uint64_t)c->range, c->initial, c->ninitial,
                                walk.keys, walk.n, "tree", msg, msglen);
    }
    free(walk.keys);
    return rc;
}

static void rbtree_teardown(void *vctx)
{
    struct rb_ctx *c = vctx;
    if (!c)
        return;
    if (c->tree != SYNC_NULL) {
        SYNC_ATOMIC("rbtree.teardown") {
            SYNC_READ(c->tree);
            rb_free_subtree(c->tree->root);
            SYNC_FREE(c->tree);
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
    free(c);
}

/* Conflict analysis: "rbtree root" or "rbtree node key=412" (its key at the end of the
 * run: a node freed and reused since may hold another). Only the STM names objects; a
 * node is read through the main thread's segment, where a freed one is still memory. */
static void rbtree_describe_object(void *vctx, uint64_t obj, char *buf, size_t n)
{
    const struct rb_ctx *c = vctx;
    buf[0] = '\0';
    if (obj == (uint64_t)SYNC_REF_ID(c->tree)) {
        snprintf(buf, n, "rbtree root");
        return;
    }
#ifdef SYNC_RT_STM
    rb_ref node = (rb_ref)(uintptr_t)obj;
    snprintf(buf, n, "rbtree node key=%lld", (long long)node->key);
#endif
}

WORKLOAD_EXPORT(rbtree, SYNC_RT_ID) = {
    .name = "rbtree",
    .runtime = SYNC_RT_NAME,
    .summary = "red-black tree of integer keys: lookup, insert, delete",
    .knobs = rb_knobs,
    .nknobs = RB_NKNOBS,
    .validate = rbtree_validate,
    .setup = rbtree_setup,
    .thread_run = rbtree_thread_run,
    .check = rbtree_check,
    .teardown = rbtree_teardown,
    .tx_adaptive = WL_TX_ADAPTIVE,
    .describe_object = rbtree_describe_object,
};
