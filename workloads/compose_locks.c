/*
 * workloads/compose_locks.c - the compose workload (workloads/lib/compose_common.h:
 * what it does, its invariants K1, L1, L2 and its checks) with fine-grained locks: the
 * `locks` structures as they are (workloads/hashmap_locks.h, rbtree_locks.h,
 * bank_locks.h), their own locks taken by their own operations, and a protocol on top
 * that makes each move and each transfer atomic while finds and audits take no lock.
 * (The protocol, and why it is deadlock-free: docs/locks-schemes.md, "compose".)
 *
 * Keys. Each key k belongs to a stripe, k mod nstripes; a stripe has a spin lock and a
 * version (a seqlock).
 *   S1 A move of k holds its stripe's lock for the whole move, and the stripe's
 *      version is odd from before the move's first change of either structure to
 *      after its last (cm_stripe_begin / cm_stripe_end, the writer side of a seqlock).
 *      The move itself is two operations of the structures, each taking and releasing
 *      its own lock (a bucket lock, the tree's writer lock): hml_op, then rbl_op, or
 *      the reverse.
 *   S2 Only moves change which structure holds a key, so while a stripe's version is
 *      even and unchanged, none of its keys changes place.
 *   S3 A find reads the version (even), looks the key up in both structures without a
 *      lock (each structure's own lock-free lookup), then reads the version again. If
 *      it is unchanged, no move of the key overlapped the two lookups (S1, with the
 *      memory orders below), so they saw the key's place at one moment: exactly one
 *      structure (K1) unless the structures themselves are broken. Otherwise the find
 *      tries again; after CM_FIND_TRIES tries it takes the stripe's lock (no move of
 *      the key can run) and looks up under it, so it cannot starve.
 *   S4 Nodes a move unlinks go to the one reclaimer both structures share; every
 *      worker passes a quiescent state after each operation (wl_qsbr.h).
 * Bank. The accounts' locks and the per-writer seqs of bank_locks.h, and the ledger's
 * own lock.
 *   B1 A transfer locks its two accounts in increasing index, makes its writer seq
 *      odd, moves the money, locks the ledger, appends the record and adds its term to
 *      the ledger's sum, unlocks the ledger, makes its seq even, and unlocks the
 *      accounts. The ledger lock is held only for the append, so transfers between
 *      other accounts run in parallel but for it.
 *   B2 An audit is a seqlock snapshot of every writer's seq (bank_seq_snapshot ...
 *      bank_seq_unchanged) around its reads of the balances and of the ledger's sum:
 *      since a transfer's balances and its record change inside one odd seq (B1), a
 *      validated snapshot sees every transfer whole or not at all. After
 *      CM_AUDIT_TRIES failed tries it locks every account in increasing index, then
 *      the ledger, and reads under them.
 * Deadlock freedom. Lock classes, in the one order a thread may hold them: accounts
 * (by increasing index) < the ledger, and stripes < buckets, stripes < the tree's
 * writer lock. A thread holds at most one stripe, never an account together with a
 * stripe, a bucket lock or the tree's lock only alone or inside one stripe (the
 * structures' operations take one lock and release it before returning: B2 of
 * hashmap_locks.h, "Deadlock freedom" of rbtree_locks.h), and the ledger lock only
 * last. Every thread that waits holds only locks earlier in the order than the one it
 * waits for: no cycle.
 * --compose-atomic 0: the same operations without the protocol (no stripe lock or
 * version, the ledger appended after the accounts are unlocked, in its own odd seq):
 * each structure's own operation, one after the other. Finds and audits are unchanged.
 *
 * Memory orders. A stripe's lock and the bank's locks are wl_spin.h's (acquire CAS,
 * release store). cm_stripe_begin stores the odd version (relaxed: only the lock holder
 * writes it) then a release fence, so no store of the move is visible before the odd
 * version (pairs with the find's acquire fence: a lookup that read a store of the move
 * makes the find's re-read see the odd version or a later one); cm_stripe_end stores
 * the even version with release (pairs with the find's acquire load of the version:
 * a find that starts from it sees the whole move). The bank's seqs: bank_locks.h. The
 * ledger's sum is written under the ledger lock inside the writer's odd seq and read
 * by audits without the lock (relaxed: the seqs order it); its count and records are
 * read only under the lock or after the run.
 *
 * --ops-per-tx K: K operations per loop step, each its own critical section.
 */
#include "runtime/sync.h"
/* after runtime/sync.h: workload.h's thread loop needs the runtime's hooks */
#include "workloads/lib/compose_common.h"

#include "workloads/bank_locks.h"
#include "workloads/hashmap.h"
#include "workloads/hashmap_locks.h"
#include "workloads/rbtree.h"
#include "workloads/rbtree_locks.h"
#include "workloads/lib/wl_qsbr.h"
#include "workloads/lib/wl_spin.h"
#include "workloads/workload.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Find and audit attempts without a lock before they take the lock(s). */
#define CM_FIND_TRIES 4
#define CM_AUDIT_TRIES 4
/* At most this many stripes (fewer when there are fewer keys). */
#define CM_MAX_STRIPES 1024

struct cm_stripe {
    wl_spin_t lock;              /* held by a move of one of its keys (S1) */
    atomic_uint ver;             /* odd while that move changes the structures (S1) */
} SYNC_CL_ALIGNED;

struct cm_lledger {
    wl_spin_t lock;              /* held for one append (B1) */
    uint64_t count;              /* under the lock */
    atomic_uint_least64_t sum;   /* written under the lock, read by audits (B2) */
    struct cm_record *ring;      /* [nledger], under the lock */
} SYNC_CL_ALIGNED;

struct cml_ctx {
    struct cm_common m;
    struct rbl_tree tree;        /* its writer lock on a line of its own */
    struct hml_map map;
    struct cm_stripe *stripe;    /* [nstripes] */
    uint64_t nstripes;
    struct cm_lledger ledger;
    struct bank_laccount **acc;  /* [m.accounts], immutable after setup */
    struct bank_lseq *seq;       /* [m.nthreads]: the writers' seqs */
    struct wl_qsbr *qsbr;        /* the reclaimer of both structures (S4) */
    struct wl_refidx *byref;     /* contention analysis: acc sorted by address (lazily) */
};

/* Per-thread scratch: the seqs an audit saw. */
struct cml_scratch {
    unsigned long *seen;
};

/* Both structures' nodes are plain-heap objects: one free serves them (S4). */
static void cml_free_node(void *p)
{
    SYNC_FREE(p);
}

/* ------------------------------------------------------------ keys */

static inline struct cm_stripe *cm_stripe_of(struct cml_ctx *c, int64_t key)
{
    return &c->stripe[(uint64_t)key % c->nstripes];
}

/* S1: the holder of s's lock is about to change the structures. */
static inline void cm_stripe_begin(struct cm_stripe *s)
{
    /* relaxed: only the lock holder writes the version */
    unsigned v = atomic_load_explicit(&s->ver, memory_order_relaxed);
    atomic_store_explicit(&s->ver, v + 1, memory_order_relaxed);
    /* release: the move's stores that follow are not visible before the odd version;
     * pairs with the acquire fence in cml_find */
    atomic_thread_fence(memory_order_release);
}

static inline void cm_stripe_end(struct cm_stripe *s)
{
    /* relaxed: only the lock holder writes the version */
    unsigned v = atomic_load_explicit(&s->ver, memory_order_relaxed);
    /* release: the move's stores happen before a find's acquire load of the new version */
    atomic_store_explicit(&s->ver, v + 1, memory_order_release);
}

/* The key's place now: in the map, in the tree (each 0 or 1). No lock: each
 * structure's lookup is lock-free. */
static inline void cml_lookup_both(struct cml_ctx *c, int64_t key, int *in_map, int *in_tree)
{
    *in_map = hml_op(&c->map, -1, HM_OP_LOOKUP, key);
    *in_tree = rbl_lookup(&c->tree, key);
}

/* S3. */
static void cml_find(struct cml_ctx *c, struct wl_thread *t, int64_t key)
{
    struct cm_stripe *s = cm_stripe_of(c, key);
    int in_map, in_tree;
    for (int i = 0; i < CM_FIND_TRIES; i++) {
        /* acquire: pairs with cm_stripe_end's release store */
        unsigned v = atomic_load_explicit(&s->ver, memory_order_acquire);
        if (v & 1)
            continue;            /* a move of a key of the stripe is under way */
        cml_lookup_both(c, key, &in_map, &in_tree);
        /* acquire: pairs with the release fence in cm_stripe_begin */
        atomic_thread_fence(memory_order_acquire);
        /* relaxed: ordered after the lookups by the fence */
        if (atomic_load_explicit(&s->ver, memory_order_relaxed) == v) {
            cm_find_judge(t, key, in_map, in_tree);
            return;
        }
    }
    /* no move of the key can run now */
    wl_spin_lock_at(&s->lock, (uintptr_t)s, WL_AT_COMPOSE_FIND);
    cml_lookup_both(c, key, &in_map, &in_tree);
    wl_spin_unlock(&s->lock);
    cm_find_judge(t, key, in_map, in_tree);
}

/* The move itself: the structures' own operations, one after the other. */
static int cml_move_ops(struct cml_ctx *c, struct wl_thread *t, int64_t key)
{
    if (hml_op(&c->map, t->tid, HM_OP_DELETE, key)) {
        if (!rbl_op(&c->tree, t->tid, RB_OP_INSERT, key))
            cm_find_judge(t, key, 1, 1);
        return CM_MOVED_TO_TREE;
    }
    if (rbl_op(&c->tree, t->tid, RB_OP_DELETE, key)) {
        if (!hml_op(&c->map, t->tid, HM_OP_INSERT, key))
            cm_find_judge(t, key, 1, 1);
        return CM_MOVED_TO_MAP;
    }
    cm_find_judge(t, key, 0, 0);
    return CM_MOVED_NOT;
}

/* S1. (--compose-atomic 0 calls cml_move_ops alone.) */
static int cml_move(struct cml_ctx *c, struct wl_thread *t, int64_t key)
{
    struct cm_stripe *s = cm_stripe_of(c, key);
    wl_spin_lock_at(&s->lock, (uintptr_t)s, WL_AT_COMPOSE_MOVE);
    cm_stripe_begin(s);
    int r = cml_move_ops(c, t, key);
    cm_stripe_end(s);
    wl_spin_unlock(&s->lock);
    return r;
}

/* ------------------------------------------------------------ bank */

/* With the ledger's lock held, inside the caller's odd seq (B1). */
static void cml_append(struct cml_ctx *c, long from, long to, long amount)
{
    struct cm_lledger *l = &c->ledger;
    uint64_t n = l->count;
    l->ring[n % c->m.nledger] = (struct cm_record){n, from, to, amount};
    l->count = n + 1;
    /* relaxed: read by audits without the lock, ordered by the writers' seqs (B2) */
    uint64_t sum = atomic_load_explicit(&l->sum, memory_order_relaxed);
    atomic_store_explicit(&l->sum, sum + cm_record_term(&c->m, from, to, amount),
                          memory_order_relaxed);
}

/* B1. */
static void cml_transfer(struct cml_ctx *c, struct wl_thread *t, const struct cm_op *op)
{
    struct bank_laccount *from = c->acc[op->key], *to = c->acc[op->to];
    struct bank_laccount *lo = op->key < op->to ? from : to, *hi = lo == from ? to : from;
    struct bank_lseq *myseq = &c->seq[t->tid];
    bank_lock(lo, WL_AT_COMPOSE_TRANSFER);  /* the bank's order: increasing index */
    bank_lock(hi, WL_AT_COMPOSE_TRANSFER);
    bank_write_begin(myseq);
    bank_ltransfer(from, to, op->amount);
    /* after the accounts */
    wl_spin_lock_at(&c->ledger.lock, (uintptr_t)&c->ledger, WL_AT_COMPOSE_TRANSFER);
    cml_append(c, (long)op->key, op->to, op->amount);
    wl_spin_unlock(&c->ledger.lock);
    bank_write_end(myseq);
    bank_unlock(hi);
    bank_unlock(lo);
}

/* --compose-atomic 0: the bank's transfer, then the ledger's append, each its own
 * critical section in its own odd seq. The composition broken on purpose for the
 * tests, not part of the program (sync_cost: not counted). */
static void cml_transfer_apart(struct cml_ctx *c, struct wl_thread *t, const struct cm_op *op)
{
    struct bank_laccount *from = c->acc[op->key], *to = c->acc[op->to];
    struct bank_laccount *lo = op->key < op->to ? from : to, *hi = lo == from ? to : from;
    struct bank_lseq *myseq = &c->seq[t->tid];
    bank_lock(lo, WL_AT_COMPOSE_TRANSFER);
    bank_lock(hi, WL_AT_COMPOSE_TRANSFER);
    bank_write_begin(myseq);
    bank_ltransfer(from, to, op->amount);
    bank_write_end(myseq);
    bank_unlock(hi);
    bank_unlock(lo);
    wl_spin_lock(&c->ledger.lock);
    bank_write_begin(myseq);
    cml_append(c, (long)op->key, op->to, op->amount);
    bank_write_end(myseq);
    wl_spin_unlock(&c->ledger.lock);
}

/* The balances' sum and weighted sum, and the ledger's sum: under the locks, or
 * validated by the caller (B2). */
static void cml_read_bank(const struct cml_ctx *c, long *sum, uint64_t *wsum, uint64_t *lsum)
{
    long s = 0;
    uint64_t w = 0;
    for (long a = 0; a < c->m.accounts; a++) {
        long b = atomic_load_explicit(&c->acc[a]->balance, memory_order_relaxed);
        s += b;
        w += c->m.weight[a] * (uint64_t)b;
    }
    *sum = s;
    *wsum = w;
    /* relaxed: ordered by the seqs (B2) or the locks */
    *lsum = atomic_load_explicit((atomic_uint_least64_t *)&c->ledger.sum, memory_order_relaxed);
}

/* B2. */
static void cml_audit(struct cml_ctx *c, struct wl_thread *t, unsigned long *seen)
{
    long sum;
    uint64_t wsum, lsum;
    for (int i = 0; i < CM_AUDIT_TRIES; i++) {
        if (!bank_seq_snapshot(c->seq, c->m.nthreads, seen))
            continue;
        cml_read_bank(c, &sum, &wsum, &lsum);
        if (bank_seq_unchanged(c->seq, c->m.nthreads, seen)) {
            cm_audit_judge(&c->m, t, sum, wsum, lsum);
            return;
        }
    }
    bank_lock_all(c->acc, c->m.accounts);
    wl_spin_lock_at(&c->ledger.lock, (uintptr_t)&c->ledger, WL_AT_COMPOSE_AUDIT);
    cml_read_bank(c, &sum, &wsum, &lsum);
    wl_spin_unlock(&c->ledger.lock);
    bank_unlock_all(c->acc, c->m.accounts);
    cm_audit_judge(&c->m, t, sum, wsum, lsum);
}

/* ------------------------------------------------------------ the workload */

static void compose_locks_teardown(void *vctx);

static void *compose_locks_setup(const struct wl_args *a, char *err, size_t errlen)
{
    /* aligned: the stripes' and the ledger's lines are the context's own */
    size_t csize = (sizeof(struct cml_ctx) + SYNC_CACHELINE - 1) & ~(size_t)(SYNC_CACHELINE - 1);
    struct cml_ctx *c = aligned_alloc(SYNC_CACHELINE, csize);
    if (!c) {
        snprintf(err, errlen, "out of memory for the compose context");
        return NULL;
    }
    memset(c, 0, csize);
    if (cm_common_init(&c->m, a, err, errlen) != 0) {
        compose_locks_teardown(c);
        return NULL;
    }
    struct cm_common *m = &c->m;
    m->ops_per_tx = a->ops_per_tx > 0 ? a->ops_per_tx : 1;   /* `auto`: the fixed default */
    c->nstripes = (uint64_t)(m->keys < CM_MAX_STRIPES ? m->keys : CM_MAX_STRIPES);
    c->stripe = aligned_alloc(SYNC_CACHELINE, c->nstripes * sizeof *c->stripe);
    c->acc = calloc((size_t)m->accounts, sizeof *c->acc);
    c->seq = aligned_alloc(SYNC_CACHELINE, (size_t)m->nthreads * sizeof *c->seq);
    c->ledger.ring = calloc(m->nledger, sizeof *c->ledger.ring);
    c->qsbr = wl_qsbr_new(m->nthreads, cml_free_node);
    if (!c->stripe || !c->acc || !c->seq || !c->ledger.ring || !c->qsbr ||
        hml_map_init(&c->map, m->nbuckets) != 0) {
        compose_locks_teardown(c);
        snprintf(err, errlen, "out of memory for %ld keys, %llu buckets, %ld accounts and "
                 "%llu records", m->keys, (unsigned long long)m->nbuckets, m->accounts,
                 (unsigned long long)m->nledger);
        return NULL;
    }
    for (uint64_t i = 0; i < c->nstripes; i++) {
        wl_spin_init(&c->stripe[i].lock);
        atomic_init(&c->stripe[i].ver, 0);
    }
    for (int i = 0; i < m->nthreads; i++)
        atomic_init(&c->seq[i].v, 0);
    wl_spin_init(&c->ledger.lock);
    atomic_init(&c->ledger.sum, 0);
    c->map.qsbr = c->tree.qsbr = c->qsbr;
    rbl_tree_init(&c->tree);
    for (long k = 0; k < m->keys; k++) {
        if (cm_starts_in_map(m->seed, k))
            hml_op(&c->map, -1, HM_OP_INSERT, k);
        else
            rbl_op(&c->tree, -1, RB_OP_INSERT, k);
    }
    for (long i = 0; i < m->accounts; i++) {
        struct bank_laccount *r = SYNC_ALLOC(struct bank_laccount);
        wl_spin_init(&r->lock);
        atomic_init(&r->balance, BANK_INITIAL_BALANCE);
        c->acc[i] = r;
    }
    return c;   /* published to the workers by pthread_create */
}

static uint64_t cml_block(struct cml_ctx *c, struct wl_thread *t)
{
    long k = wl_batch(t, c->m.ops_per_tx);
    if (k <= 0)
        return 0;
    struct cm_tls *b = &c->m.tls[t->tid];
    struct cml_scratch *sc = t->priv;
    struct cm_op *op = b->op;
    cm_draw(&c->m, t, op, k);
    for (long i = 0; i < k; i++) {
        switch (op[i].kind) {
        case CM_OP_MOVE:
            op[i].res = (uint8_t)(c->m.atomic ? cml_move(c, t, op[i].key)
                                              : cml_move_ops(c, t, op[i].key));
            break;
        case CM_OP_TRANSFER:
            if (c->m.atomic)
                cml_transfer(c, t, &op[i]);
            else
                cml_transfer_apart(c, t, &op[i]);
            break;
        case CM_OP_AUDIT:
            cml_audit(c, t, sc->seen);
            break;
        default:
            cml_find(c, t, op[i].key);
            break;
        }
        wl_qsbr_quiescent(c->qsbr, t->tid);     /* holds no node between operations */
    }
    /* Each operation's result was final when it returned. */
    cm_log(&c->m, b, op, k);
    return (uint64_t)k;
}

static void compose_locks_thread_run(void *vctx, struct wl_thread *t)
{
    struct cml_ctx *c = vctx;
    struct cml_scratch sc = {.seen = sync_private_alloc((size_t)c->m.nthreads *
                                                        sizeof *sc.seen)};
    if (!sc.seen) {
        wl_fail(t, "compose: out of memory for the per-thread snapshot");
        return;
    }
    t->priv = &sc;
    wl_qsbr_online(c->qsbr, t->tid);
    WL_LOOP(c, t, cml_block);
    wl_qsbr_offline(c->qsbr, t->tid);
    t->priv = NULL;
    free(sc.seen);
}

static int compose_locks_check(void *vctx, struct wl_thread *threads, int nthreads, char *msg,
                               size_t msglen)
{
    struct cml_ctx *c = vctx;
    const struct cm_common *m = &c->m;
    (void)threads;
    struct rbl_walk w = {.msg = msg, .msglen = msglen};
    int64_t *map_keys = NULL;
    size_t nmap = 0;
    long *balance = malloc((size_t)m->accounts * sizeof *balance);
    int rc = -1;
    if (!balance) {
        snprintf(msg, msglen, "out of memory gathering the accounts");
        goto out;
    }
    for (uint64_t i = 0; i < c->nstripes; i++)
        /* relaxed: no worker runs (joined) */
        if (wl_spin_is_held(&c->stripe[i].lock) ||
            (atomic_load_explicit(&c->stripe[i].ver, memory_order_relaxed) & 1)) {
            snprintf(msg, msglen, "compose: stripe %llu is still locked or marked as moving "
                     "after the run", (unsigned long long)i);
            goto out;
        }
    if (wl_spin_is_held(&c->ledger.lock)) {
        snprintf(msg, msglen, "compose: the ledger is still locked after the run");
        goto out;
    }
    if (rbl_tree_check(&c->tree, &w) != 0 || hml_map_keys(&c->map, &map_keys, &nmap, msg, msglen) != 0 ||
        bank_locks_released(c->acc, m->accounts, c->seq, m->nthreads, msg, msglen) != 0)
        goto out;
    for (long a = 0; a < m->accounts; a++)
        balance[a] = atomic_load_explicit(&c->acc[a]->balance, memory_order_relaxed);
    /* relaxed: no worker runs (joined) */
    uint64_t lsum = atomic_load_explicit(&c->ledger.sum, memory_order_relaxed);
    if (cm_check_keys(m, nthreads, w.keys, w.n, map_keys, nmap, msg, msglen) ||
        cm_check_bank(m, nthreads, balance, c->ledger.count, lsum, msg, msglen) ||
        cm_check_ledger(m, c->ledger.count, c->ledger.ring, msg, msglen))
        goto out;
    rc = 0;
out:
    free(w.keys);
    free(map_keys);
    free(balance);
    return rc;
}

static void compose_locks_teardown(void *vctx)
{
    struct cml_ctx *c = vctx;
    if (!c)
        return;
    wl_qsbr_free(c->qsbr);           /* no worker runs: frees every retired node */
    rbl_tree_free(&c->tree);
    hml_map_free(&c->map);
    if (c->acc)
        for (long i = 0; i < c->m.accounts; i++)
            if (c->acc[i])
                SYNC_FREE(c->acc[i]);
    free(c->acc);
    free(c->seq);
    free(c->stripe);
    free(c->ledger.ring);
    free(c->byref);
    cm_common_free(&c->m);
    free(c);
}

/* Contention analysis: what holds the lock a wait was for (the stripe, the ledger,
 * an account, a bucket of the map, the tree's writer lock). */
static uint64_t cml_addr_of(const void *arg, long i)
{
    const struct cml_ctx *c = arg;
    return (uint64_t)(uintptr_t)c->acc[i];
}
static void compose_locks_describe_object(void *vctx, uint64_t obj, char *buf, size_t n)
{
    struct cml_ctx *c = vctx;
    uint64_t s0 = (uint64_t)(uintptr_t)c->stripe;
    if (obj >= s0 && obj < s0 + c->nstripes * sizeof *c->stripe) {
        snprintf(buf, n, "compose stripe %llu",
                 (unsigned long long)((obj - s0) / sizeof *c->stripe));
        return;
    }
    if (obj == (uint64_t)(uintptr_t)&c->ledger) {
        snprintf(buf, n, "compose ledger");
        return;
    }
    hml_describe_bucket(&c->map, obj, buf, n);
    if (!buf[0])
        rbl_describe_lock(&c->tree, obj, buf, n);
    if (!buf[0])
        bank_describe_account(&c->byref, c->m.accounts, cml_addr_of, c, obj, buf, n);
}

WORKLOAD_EXPORT(compose, SYNC_RT_ID) = {
    .name = "compose",
    .runtime = SYNC_RT_NAME,
    .summary = "compose with locks: stripe seqlocks over the map's and tree's own locks, "
               "a ledger lock after the account locks; lock-free finds and audits",
    .knobs = cm_knobs,
    .nknobs = CM_NKNOBS,
    .validate = cm_validate,
    .setup = compose_locks_setup,
    .thread_run = compose_locks_thread_run,
    .check = compose_locks_check,
    .teardown = compose_locks_teardown,
    .describe_object = compose_locks_describe_object,
};
