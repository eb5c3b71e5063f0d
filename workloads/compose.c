/*
 * workloads/compose.c - the compose workload (workloads/lib/compose_common.h: what it
 * does, its invariants K1, L1, L2 and its checks), written once against
 * runtime/sync.h and compiled for every runtime of build cc or gnutm in
 * runtime/runtimes.h's list. Its `locks` variant is compose_locks.c.
 *
 * What composing asks here: nothing but the block. A move is the hash map's delete
 * and the red-black tree's insert (or the tree's delete and the map's insert), a
 * transfer is the bank's transfer and the ledger's append: the structures' own
 * operations (workloads/hashmap_ops.h, rbtree_ops.h, bank.h), unchanged, called one
 * after the other inside one outer SYNC_ATOMIC block. A find and an audit are one
 * block each, and check K1, L1 and L2 inside it on what they read.
 * --compose-atomic 0 runs each structure's own operation in a block of its own, with a
 * safe point (sync_tick) between the two, where a GIL may pass to another thread: the
 * composition a programmer gets by calling two thread-safe operations in a row.
 *
 * Shared state: the tree, the buckets and their nodes, the accounts, the ledger's head
 * and its record objects, all heap objects accessed inside blocks with SYNC_READ and
 * SYNC_WRITE. The arrays of references to buckets, accounts and records, and the
 * accounts' weights, are plain memory written in setup and only read afterwards.
 *
 * Blocks under stm (and htm, itm) may run several times: a block reads its operations
 * from the thread's buffer (drawn before the block) and overwrites each move's result
 * in every run; the thread logs the results after the block (cm_log).
 */
#include "runtime/sync.h"
/* after runtime/sync.h: workload.h's thread loop needs the runtime's hooks */
#include "workloads/lib/compose_common.h"

#include "workloads/bank.h"
#include "workloads/hashmap.h"
#include "workloads/hashmap_ops.h"
#include "workloads/rbtree.h"
#include "workloads/rbtree_ops.h"
#include "workloads/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ledger: its running count and sum (L2), and its last records in full. */
struct cm_ledger {
    SYNC_OBJECT_HEADER;
    uint64_t count;              /* records ever appended */
    uint64_t sum;                /* of cm_record_term over every record (mod 2^64) */
};
typedef SYNC_REF(struct cm_ledger) cm_ledger_ref;

struct cm_lrec {
    SYNC_OBJECT_HEADER;
    uint64_t seq;
    long from, to, amount;
};
typedef SYNC_REF(struct cm_lrec) cm_lrec_ref;

struct cm_ctx {
    struct cm_common m;
    rb_tree_ref tree;
    hm_bucket_ref *buckets;      /* [m.nbuckets] */
    bank_ref *acc;               /* [m.accounts] */
    cm_ledger_ref ledger;
    cm_lrec_ref *ring;           /* [m.nledger] */
};

static const char *const cm_site[] = {
    [CM_OP_FIND] = "compose.find",
    [CM_OP_MOVE] = "compose.move",
    [CM_OP_AUDIT] = "compose.audit",
    [CM_OP_TRANSFER] = "compose.transfer",
};

/* ------------------------------------------------------------ in blocks */

static inline hm_bucket_ref cm_bucket(const struct cm_ctx *c, int64_t key)
{
    return c->buckets[hm_bucket_of(key, c->m.nbuckets)];
}

/* The ledger's append: one record, and its term in the running sum. */
static void cm_ledger_append(struct cm_ctx *c, long from, long to, long amount)
{
    cm_ledger_ref h = c->ledger;
    SYNC_WRITE(h);
    uint64_t n = h->count;
    cm_lrec_ref r = c->ring[n % c->m.nledger];
    SYNC_WRITE(r);
    r->seq = n;
    r->from = from;
    r->to = to;
    r->amount = amount;
    h->count = n + 1;
    h->sum += cm_record_term(&c->m, from, to, amount);
}

static void cm_find(struct cm_ctx *c, struct wl_thread *t, int64_t key)
{
    int in_map = hm_lookup(cm_bucket(c, key), key);
    int in_tree = rb_lookup(c->tree, key);
    cm_find_judge(t, key, in_map, in_tree);
}

/* A move: the key leaves the structure that holds it for the other. Returns where it
 * went; a key in neither, or already in the structure it goes to, fails the run. */
static int cm_move(struct cm_ctx *c, struct wl_thread *t, int64_t key)
{
    hm_bucket_ref b = cm_bucket(c, key);
    if (hm_delete(b, key)) {
        if (!rb_insert(c->tree, key))
            cm_find_judge(t, key, 1, 1);
        return CM_MOVED_TO_TREE;
    }
    if (rb_delete(c->tree, key)) {
        if (!hm_insert(b, key))
            cm_find_judge(t, key, 1, 1);
        return CM_MOVED_TO_MAP;
    }
    cm_find_judge(t, key, 0, 0);
    return CM_MOVED_NOT;
}

static void cm_audit(struct cm_ctx *c, struct wl_thread *t)
{
    long sum = 0;
    uint64_t wsum = 0;
    for (long a = 0; a < c->m.accounts; a++) {
        bank_ref r = c->acc[a];
        SYNC_READ(r);
        sum += r->balance;
        wsum += c->m.weight[a] * (uint64_t)r->balance;
    }
    SYNC_READ(c->ledger);
    cm_audit_judge(&c->m, t, sum, wsum, c->ledger->sum);
}

/* The body of one atomic block: k operations. Out of line, as bank_ops (the block's
 * function calls setjmp under stm). */
static SYNC_NOINLINE void cm_ops(struct cm_ctx *c, struct wl_thread *t, struct cm_op *op, long k)
{
    for (long i = 0; i < k; i++) {
        switch (op[i].kind) {
        case CM_OP_MOVE:
            op[i].res = (uint8_t)cm_move(c, t, op[i].key);
            break;
        case CM_OP_TRANSFER:
            bank_transfer(c->acc[op[i].key], c->acc[op[i].to], op[i].amount);
            cm_ledger_append(c, (long)op[i].key, op[i].to, op[i].amount);
            break;
        case CM_OP_AUDIT:
            cm_audit(c, t);
            break;
        default:
            cm_find(c, t, op[i].key);
            break;
        }
    }
}

/* --compose-atomic 0: each operation's parts in blocks of their own, with a safe point
 * between them. A find and an audit stay one block each: they are the observers. The
 * composition broken on purpose for the tests, not part of the program (sync_cost: not
 * counted). */
static SYNC_NOINLINE void cm_ops_apart(struct cm_ctx *c, struct wl_thread *t, struct cm_op *op,
                                       long k)
{
    for (long i = 0; i < k; i++) {
        const int64_t key = op[i].key;
        const hm_bucket_ref b = cm_bucket(c, key);
        int got = 0, put = 0;
        switch (op[i].kind) {
        case CM_OP_MOVE:
            SYNC_ATOMIC("compose.move.map") {
                got = hm_delete(b, key);
            }
            if (got) {
                sync_tick();
                SYNC_ATOMIC("compose.move.tree") {
                    put = rb_insert(c->tree, key);
                }
                op[i].res = CM_MOVED_TO_TREE;
            } else {
                SYNC_ATOMIC("compose.move.tree") {
                    got = rb_delete(c->tree, key);
                }
                if (got) {
                    sync_tick();
                    SYNC_ATOMIC("compose.move.map") {
                        put = hm_insert(b, key);
                    }
                    op[i].res = CM_MOVED_TO_MAP;
                }
            }
            if (!put)          /* taken out of one but already in the other, or in neither */
                cm_find_judge(t, key, got, got);
            break;
        case CM_OP_TRANSFER:
            SYNC_ATOMIC("compose.transfer.bank") {
                bank_transfer(c->acc[key], c->acc[op[i].to], op[i].amount);
            }
            sync_tick();
            SYNC_ATOMIC("compose.transfer.ledger") {
                cm_ledger_append(c, (long)key, op[i].to, op[i].amount);
            }
            break;
        default:
            SYNC_ATOMIC(cm_site[op[i].kind]) {
                cm_ops(c, t, &op[i], 1);
            }
            break;
        }
        sync_tick();
    }
}

/* ------------------------------------------------------------ the workload */

static void compose_teardown(void *vctx);

static void *compose_setup(const struct wl_args *a, char *err, size_t errlen)
{
    struct cm_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory for the compose context");
        return NULL;
    }
    if (cm_common_init(&c->m, a, err, errlen) != 0) {
        compose_teardown(c);
        return NULL;
    }
    const struct cm_common *m = &c->m;
    c->buckets = calloc(m->nbuckets, sizeof *c->buckets);
    c->acc = calloc((size_t)m->accounts, sizeof *c->acc);
    c->ring = calloc(m->nledger, sizeof *c->ring);
    if (!c->buckets || !c->acc || !c->ring) {
        compose_teardown(c);
        snprintf(err, errlen, "out of memory for %llu buckets, %ld accounts and %llu records",
                 (unsigned long long)m->nbuckets, m->accounts, (unsigned long long)m->nledger);
        return NULL;
    }
    /* Every structure is built in blocks of bounded size, as the other workloads'. */
    SYNC_ATOMIC("compose.setup") {
        c->tree = SYNC_ALLOC(struct rb_tree);
        c->ledger = SYNC_ALLOC(struct cm_ledger);
    }
    for (uint64_t i = 0; i < m->nbuckets; i += 256) {
        uint64_t end = i + 256 < m->nbuckets ? i + 256 : m->nbuckets;
        SYNC_ATOMIC("compose.setup") {
            for (uint64_t j = i; j < end; j++)
                c->buckets[j] = SYNC_ALLOC(struct hm_bucket);
        }
    }
    for (long i = 0; i < m->keys; i += 64) {
        long end = i + 64 < m->keys ? i + 64 : m->keys;
        SYNC_ATOMIC("compose.setup") {
            for (long k = i; k < end; k++) {
                if (cm_starts_in_map(m->seed, k))
                    hm_insert(cm_bucket(c, k), k);
                else
                    rb_insert(c->tree, k);
            }
        }
    }
    for (long i = 0; i < m->accounts; i += BANK_SETUP_CHUNK) {
        long end = i + BANK_SETUP_CHUNK < m->accounts ? i + BANK_SETUP_CHUNK : m->accounts;
        SYNC_ATOMIC("compose.setup") {
            bank_new_accounts(c->acc, i, end);
        }
    }
    for (uint64_t i = 0; i < m->nledger; i += 256) {
        uint64_t end = i + 256 < m->nledger ? i + 256 : m->nledger;
        SYNC_ATOMIC("compose.setup") {
            for (uint64_t j = i; j < end; j++)
                c->ring[j] = SYNC_ALLOC(struct cm_lrec);
        }
    }
    return c;
}

static uint64_t cm_block(struct cm_ctx *c, struct wl_thread *t)
{
    long k = wl_batch(t, t->tx_len);
    if (k <= 0)
        return 0;
    struct cm_tls *b = &c->m.tls[t->tid];
    struct cm_op *op = b->op;
    cm_draw(&c->m, t, op, k);
    if (c->m.atomic) {
        SYNC_ATOMIC(cm_site[op[0].kind]) {
            cm_ops(c, t, op, k);
        }
    } else {
        cm_ops_apart(c, t, op, k);
    }
    /* The block committed: its results are final; log the moves and transfers. */
    cm_log(&c->m, b, op, k);
    WL_TXLEN_AFTER(t, (uint64_t)k);
    return (uint64_t)k;
}

static void compose_thread_run(void *vctx, struct wl_thread *t)
{
    struct cm_ctx *c = vctx;
    wl_txlen_init(t, c->m.ops_per_tx, 1, WL_TXLEN_MAX_OPS);
    WL_LOOP(c, t, cm_block);
}

/* Everything the check needs, read in blocks (no worker runs) into plain memory. */
struct cm_gather {
    struct rb_walk tree;
    struct hm_walk map;
    long *balance;
    struct cm_record *rec;
    uint64_t count, sum;
};

static int compose_check(void *vctx, struct wl_thread *threads, int nthreads, char *msg,
                         size_t msglen)
{
    struct cm_ctx *c = vctx;
    const struct cm_common *m = &c->m;
    (void)threads;
    struct cm_gather g = {.tree = {.msg = msg, .msglen = msglen},
                          .map = {.msg = msg, .msglen = msglen}},
                     *gp = &g;
    g.balance = malloc((size_t)m->accounts * sizeof *g.balance);
    g.rec = malloc(m->nledger * sizeof *g.rec);
    int rc = -1;
    if (!g.balance || !g.rec) {
        snprintf(msg, msglen, "out of memory gathering the accounts and the ledger");
        goto out;
    }
    SYNC_ATOMIC("compose.check") {
        rb_check_tree(c->tree, &gp->tree);
    }
    if (g.tree.bad)
        goto out;
    SYNC_ATOMIC("compose.check") {
        hm_walk_buckets(c->buckets, m->nbuckets, &gp->map);
    }
    if (g.map.bad || hm_keys_sort_unique(g.map.keys, g.map.n, msg, msglen) != 0)
        goto out;
    SYNC_ATOMIC("compose.check") {
        for (long a = 0; a < m->accounts; a++) {
            SYNC_READ(c->acc[a]);
            gp->balance[a] = c->acc[a]->balance;
        }
        SYNC_READ(c->ledger);
        gp->count = c->ledger->count;
        gp->sum = c->ledger->sum;
        for (uint64_t i = 0; i < m->nledger; i++) {
            cm_lrec_ref r = c->ring[i];
            SYNC_READ(r);
            gp->rec[i] = (struct cm_record){r->seq, r->from, r->to, r->amount};
        }
    }
    if (cm_check_keys(m, nthreads, g.tree.keys, g.tree.n, g.map.keys, g.map.n, msg, msglen) ||
        cm_check_bank(m, nthreads, g.balance, g.count, g.sum, msg, msglen) ||
        cm_check_ledger(m, g.count, g.rec, msg, msglen))
        goto out;
    rc = 0;
out:
    free(g.tree.keys);
    free(g.map.keys);
    free(g.balance);
    free(g.rec);
    return rc;
}

/* Teardown (no other thread runs), in blocks of bounded size, one loop per function:
 * gcc's -Wmaybe-uninitialized loses track of loop variables across several blocks
 * (setjmp points under stm) in one function. A reference still null (setup failed
 * part-way) is skipped. */
static SYNC_NOINLINE void cm_free_buckets(struct cm_ctx *c)
{
    for (uint64_t i = 0; i < c->m.nbuckets; i += 256) {
        uint64_t end = i + 256 < c->m.nbuckets ? i + 256 : c->m.nbuckets;
        SYNC_ATOMIC("compose.teardown") {
            hm_free_buckets(c->buckets, i, end);
        }
    }
}

static SYNC_NOINLINE void cm_free_accounts(struct cm_ctx *c)
{
    for (long i = 0; i < c->m.accounts; i += BANK_SETUP_CHUNK) {
        long end = i + BANK_SETUP_CHUNK < c->m.accounts ? i + BANK_SETUP_CHUNK : c->m.accounts;
        SYNC_ATOMIC("compose.teardown") {
            for (long j = i; j < end; j++)
                if (c->acc[j] != SYNC_NULL)
                    SYNC_FREE(c->acc[j]);
        }
    }
}

static SYNC_NOINLINE void cm_free_ledger(struct cm_ctx *c)
{
    for (uint64_t i = 0; i < c->m.nledger; i += 256) {
        uint64_t end = i + 256 < c->m.nledger ? i + 256 : c->m.nledger;
        SYNC_ATOMIC("compose.teardown") {
            for (uint64_t j = i; j < end; j++)
                if (c->ring[j] != SYNC_NULL)
                    SYNC_FREE(c->ring[j]);
        }
    }
}

static void compose_teardown(void *vctx)
{
    struct cm_ctx *c = vctx;
    if (!c)
        return;
    if (c->tree != SYNC_NULL) {
        SYNC_ATOMIC("compose.teardown") {
            SYNC_READ(c->tree);
            rb_free_subtree(c->tree->root);
            SYNC_FREE(c->tree);
            SYNC_FREE(c->ledger);
        }
    }
    if (c->buckets)
        cm_free_buckets(c);
    if (c->acc)
        cm_free_accounts(c);
    if (c->ring)
        cm_free_ledger(c);
    free(c->buckets);
    free(c->acc);
    free(c->ring);
    cm_common_free(&c->m);
    free(c);
}

WORKLOAD_EXPORT(compose, SYNC_RT_ID) = {
    .name = "compose",
    .runtime = SYNC_RT_NAME,
    .summary = CM_SUMMARY,
    .knobs = cm_knobs,
    .nknobs = CM_NKNOBS,
    .validate = cm_validate,
    .setup = compose_setup,
    .thread_run = compose_thread_run,
    .check = compose_check,
    .teardown = compose_teardown,
    .tx_adaptive = WL_TX_ADAPTIVE,
};
