/*
 * workloads/bank_locks.c - the bank workload with its own fine-grained locks (the
 * `locks` runtime: plain heap, SYNC_ATOMIC gives no exclusion here): the accounts of
 * workloads/bank_locks.h, a spin lock each, and a writer sequence number per thread
 * that lets audits read every balance without a lock. The accounts' invariants, the
 * snapshot's argument and its memory orders are at the top of that header.
 *
 * Invariants of the workload:
 *  - a block (--ops-per-tx operations) that writes first works out every account its
 *    ops touch and takes those locks in increasing account index, runs its ops inside
 *    its odd seq, then releases them: every thread acquires in one global order, so no
 *    deadlock; a block mixing audits and transfers takes every lock (0..n-1), so its
 *    audits see the state with no transfer half-done but its own (each of which
 *    conserves);
 *  - a block made only of audits takes no lock: each audit is a snapshot
 *    (bank_seq_snapshot, one pass summing the balances, bank_seq_unchanged), exact
 *    when it validates. After BANK_OPTIMISTIC_TRIES failed attempts an audit takes
 *    every lock in order instead, so it cannot starve. Common case: each account is
 *    read once (the version-per-account scheme this replaces read every account's
 *    version twice).
 */
#include "runtime/sync.h"
#include "workloads/bank_locks.h"
#include "workloads/lib/bank_common.h"
#include "workloads/lib/wl_spin.h"
#include "workloads/workload.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BANK_OPTIMISTIC_TRIES 4

struct bank_lctx {
    long naccounts;
    long transfer_pct;
    long ops_per_tx;
    long total;
    int nthreads;
    struct bank_laccount **acc;  /* immutable after setup */
    struct bank_lseq *seq;       /* [nthreads] */
    struct wl_refidx *byref;     /* contention analysis: acc sorted by address (lazily) */
};

/* Per-thread scratch: the sorted account indexes a block locks; the seqs an audit saw. */
struct bank_lscratch {
    long *idx;
    unsigned long *seq;
};

static void *bank_lsetup(const struct wl_args *a, char *err, size_t errlen)
{
    struct bank_lctx *c = calloc(1, sizeof *c);
    long n = a->ival[BANK_K_ACCOUNTS];
    int nt = a->nthreads > 0 ? a->nthreads : 1;
    if (c) {
        c->acc = malloc((size_t)n * sizeof *c->acc);
        c->seq = aligned_alloc(SYNC_CACHELINE, (size_t)nt * sizeof *c->seq);
    }
    if (!c || !c->acc || !c->seq) {
        snprintf(err, errlen, "out of memory for %ld accounts", n);
        if (c) {
            free(c->acc);
            free(c->seq);
        }
        free(c);
        return NULL;
    }
    c->nthreads = nt;
    for (int i = 0; i < nt; i++)
        atomic_init(&c->seq[i].v, 0);
    c->naccounts = n;
    c->transfer_pct = a->ival[BANK_K_TRANSFER_PCT];
    c->ops_per_tx = a->ops_per_tx;
    c->total = n * BANK_INITIAL_BALANCE;
    for (long i = 0; i < n; i++) {
        struct bank_laccount *r = SYNC_ALLOC(struct bank_laccount);
        wl_spin_init(&r->lock);
        atomic_init(&r->balance, BANK_INITIAL_BALANCE);
        c->acc[i] = r;
    }
    return c;   /* published to the workers by pthread_create */
}

/* One lock-free audit attempt (see the top of the file): 1 and the sum in *out when
 * the snapshot validated, else 0. seen: scratch for the nthreads seqs. */
static int bank_audit_optimistic(const struct bank_lctx *c, unsigned long *seen, long *out)
{
    if (!bank_seq_snapshot(c->seq, c->nthreads, seen))
        return 0;
    long sum = bank_lsum(c->acc, c->naccounts);
    if (!bank_seq_unchanged(c->seq, c->nthreads, seen))
        return 0;
    *out = sum;
    return 1;
}

static void bank_laudit(const struct bank_lctx *c, struct wl_thread *t, unsigned long *seen)
{
    long sum;
    int ok = 0;
    for (int a = 0; a < BANK_OPTIMISTIC_TRIES && !ok; a++)
        ok = bank_audit_optimistic(c, seen, &sum);
    if (!ok) {
        bank_lock_all(c->acc, c->naccounts);
        sum = bank_lsum(c->acc, c->naccounts);
        bank_unlock_all(c->acc, c->naccounts);
    }
    if (SYNC_UNLIKELY(sum != c->total))
        wl_fail(t, "bank: an audit saw total %ld, expected %ld", sum, c->total);
}

static uint64_t bank_lblock(struct bank_lctx *c, struct wl_thread *t)
{
    struct bank_lscratch *sc = t->priv;
    long k = wl_batch(t, c->ops_per_tx);
    uint64_t seed = bank_block_seed(t);

    /* Which accounts will the k ops touch? */
    uint64_t s = seed;
    long m = 0;
    int audits = 0;
    for (long j = 0; j < k; j++) {
        struct bank_op op;
        bank_draw(&s, c->naccounts, c->transfer_pct, &op);
        if (op.audit) {
            audits++;
        } else {
            sc->idx[m++] = op.from;
            sc->idx[m++] = op.to;
        }
    }
    int timed = (++t->stats.commits & (SYNC_COMMIT_SAMPLE - 1)) == 0;
    uint64_t t0 = 0;
    if (audits == k) {                        /* reads only: no lock held */
        for (long j = 0; j < k; j++)
            bank_laudit(c, t, sc->seq);
        return (uint64_t)k;
    }
    int all = audits > 0;
    if (all) {
        bank_lock_all(c->acc, c->naccounts);
    } else {
        m = bank_lsort_unique(sc->idx, m);
        for (long i = 0; i < m; i++)            /* the global order: increasing index */
            bank_lock(c->acc[sc->idx[i]], WL_AT_BANK_TRANSFER);
    }
    struct bank_lseq *myseq = &c->seq[t->tid];
    bank_write_begin(myseq);
    s = seed;
    for (long j = 0; j < k; j++) {
        struct bank_op op;
        bank_draw(&s, c->naccounts, c->transfer_pct, &op);
        if (op.audit) {
            long sum = bank_lsum(c->acc, c->naccounts);
            if (SYNC_UNLIKELY(sum != c->total))
                wl_fail(t, "bank: an audit saw total %ld, expected %ld", sum, c->total);
        } else {
            bank_ltransfer(c->acc[op.from], c->acc[op.to], op.amount);
        }
    }
    bank_write_end(myseq);
    if (timed)
        t0 = sync_now_ns();
    if (all) {
        bank_unlock_all(c->acc, c->naccounts);
    } else {
        for (long i = m - 1; i >= 0; i--)
            bank_unlock(c->acc[sc->idx[i]]);
    }
    if (timed)   /* the commit step of a lock-based block is its lock release */
        lat_add(&t->stats.commit_hist, sync_now_ns() - t0);
    return (uint64_t)k;
}

static void bank_lthread_run(void *ctx, struct wl_thread *t)
{
    struct bank_lctx *c = ctx;
    struct bank_lscratch sc;
    sc.idx = sync_private_alloc((size_t)(2 * c->ops_per_tx) * sizeof *sc.idx);
    sc.seq = sync_private_alloc((size_t)c->nthreads * sizeof *sc.seq);
    if (!sc.idx || !sc.seq) {
        wl_fail(t, "bank: out of memory for the per-thread lock lists");
    } else {
        t->priv = &sc;
        WL_LOOP(c, t, bank_lblock);
        t->priv = NULL;
    }
    free(sc.idx);
    free(sc.seq);
}

static int bank_lcheck(void *ctx, struct wl_thread *threads, int nthreads, char *msg,
                       size_t msglen)
{
    (void)threads; (void)nthreads;
    const struct bank_lctx *c = ctx;
    long sum = bank_lsum(c->acc, c->naccounts);     /* no worker runs now (joined) */
    if (bank_locks_released(c->acc, c->naccounts, c->seq, c->nthreads, msg, msglen) != 0)
        return -1;
    if (sum != c->total) {
        snprintf(msg, msglen, "bank: total not conserved: %ld after the run, expected %ld", sum,
                 c->total);
        return -1;
    }
    return 0;
}

static void bank_lteardown(void *ctx)
{
    struct bank_lctx *c = ctx;
    for (long i = 0; i < c->naccounts; i++)
        SYNC_FREE(c->acc[i]);
    free(c->acc);
    free(c->seq);
    free(c->byref);
    free(c);
}

/* Contention analysis: a wait's object is the account whose lock it waited for
 * (bank_lock): "account 17". */
static uint64_t bank_laddr_of(const void *arg, long i)
{
    const struct bank_lctx *c = arg;
    return (uint64_t)(uintptr_t)c->acc[i];
}
static void bank_ldescribe_object(void *ctx, uint64_t obj, char *buf, size_t n)
{
    struct bank_lctx *c = ctx;
    bank_describe_account(&c->byref, c->naccounts, bank_laddr_of, c, obj, buf, n);
}

WORKLOAD_EXPORT(bank, SYNC_RT_ID) = {
    .name = "bank",
    .runtime = SYNC_RT_NAME,
    .summary = BANK_SUMMARY,
    .knobs = bank_knobs,
    .nknobs = BANK_NKNOBS,
    .validate = bank_validate,
    .setup = bank_lsetup,
    .thread_run = bank_lthread_run,
    .check = bank_lcheck,
    .teardown = bank_lteardown,
    .describe_object = bank_ldescribe_object,
};
