/*
 * workloads/bank_locks.c - the bank workload with its own fine-grained locks (the
 * `locks` runtime: plain heap, SYNC_ATOMIC gives no exclusion here).
 *
 * Each account carries a spin lock (workloads/lib/wl_spin.h). Each worker thread has
 * a writer sequence number `seq` on a cache line of its own: odd while the thread
 * writes balances, even otherwise, +2 per writing block (a seqlock per writer, not
 * per account, so a writer touches only its own line and the two accounts it moves
 * money between).
 *
 * Invariants:
 *  - a balance is written only by the holder of its account's lock, while the
 *    holder's seq is odd;
 *  - a block (--ops-per-tx operations) that writes first works out every account its
 *    ops touch and takes those locks in increasing account index, runs its ops, then
 *    releases them: every thread acquires in one global order, so no deadlock;
 *    a block mixing audits and transfers takes every lock (0..n-1), so its audits see
 *    the state with no transfer half-done but its own (each of which conserves);
 *  - a block made only of audits takes no lock: it reads every writer's seq, sums the
 *    balances in one pass, and reads the seqs again. If every seq was even and is
 *    unchanged, no thread wrote a balance at any moment of the pass (a writer that
 *    started after the first read or was still writing at the second is seen), so the
 *    sum is the total at one moment, with no transfer half-done: exact. After
 *    BANK_OPTIMISTIC_TRIES failed attempts an audit takes every lock in order
 *    instead, so it cannot starve. Common case: each account is read once (the
 *    version-per-account scheme this replaces read every account's version twice).
 *
 * Memory ordering (Boehm's seqlock recipe, one sequence per writer):
 *  - writer: lock the accounts (acquire CAS, wl_spin.h); seq = odd (relaxed store of
 *    its own word) then a release fence, so the balance stores that follow are not
 *    visible before the odd seq (pairs with the audit's acquire fence); balance
 *    stores (relaxed); seq = even with a release store (pairs with the audit's
 *    acquire load of seq); unlock;
 *  - audit: acquire load of every seq, relaxed balance loads, an acquire fence,
 *    relaxed re-loads of the seqs.
 */
#include "runtime/sync.h"
#include "workloads/lib/bank_common.h"
#include "workloads/lib/wl_spin.h"
#include "workloads/workload.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BANK_OPTIMISTIC_TRIES 4

struct bank_laccount {
    SYNC_OBJECT_HEADER;
    wl_spin_t lock;
    atomic_long balance;         /* relaxed accesses; ordered by the writers' seqs */
};

/* A writer's sequence number, alone on its cache line. */
struct bank_lseq {
    atomic_ulong v;              /* odd: the owner is writing balances */
} SYNC_CL_ALIGNED;

struct bank_lctx {
    long naccounts;
    long transfer_pct;
    long ops_per_tx;
    long total;
    int nthreads;
    struct bank_laccount **acc;  /* immutable after setup */
    struct bank_lseq *seq;       /* [nthreads] */
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

static void bank_lock(struct bank_laccount *a)
{
    wl_spin_lock(&a->lock);
}

static void bank_unlock(struct bank_laccount *a)
{
    wl_spin_unlock(&a->lock);
}

/* The calling thread starts writing balances (it holds their locks). */
static void bank_write_begin(struct bank_lseq *s)
{
    /* relaxed: only this thread writes its seq */
    unsigned long v = atomic_load_explicit(&s->v, memory_order_relaxed);
    atomic_store_explicit(&s->v, v + 1, memory_order_relaxed);
    /* release: the balance stores that follow are not visible before the odd seq;
     * pairs with the acquire fence in bank_audit_optimistic */
    atomic_thread_fence(memory_order_release);
}

static void bank_write_end(struct bank_lseq *s)
{
    /* relaxed: only this thread writes its seq */
    unsigned long v = atomic_load_explicit(&s->v, memory_order_relaxed);
    /* release: publishes the balance stores; pairs with the audit's acquire seq loads */
    atomic_store_explicit(&s->v, v + 1, memory_order_release);
}

static int bank_lcmp(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Sorts and de-duplicates idx[0..n); returns the new count. */
static long bank_lsort_unique(long *idx, long n)
{
    if (n <= 16) {
        for (long i = 1; i < n; i++) {
            long v = idx[i], j = i;
            for (; j > 0 && idx[j - 1] > v; j--)
                idx[j] = idx[j - 1];
            idx[j] = v;
        }
    } else {
        qsort(idx, (size_t)n, sizeof *idx, bank_lcmp);
    }
    long m = 0;
    for (long i = 0; i < n; i++)
        if (m == 0 || idx[m - 1] != idx[i])
            idx[m++] = idx[i];
    return m;
}

/* Sum of all balances; the caller holds every lock (or no worker runs). */
static long bank_lsum_locked(const struct bank_lctx *c)
{
    long sum = 0;
    for (long i = 0; i < c->naccounts; i++)
        sum += atomic_load_explicit(&c->acc[i]->balance, memory_order_relaxed);
    return sum;
}

static void bank_lock_all(const struct bank_lctx *c)
{
    for (long i = 0; i < c->naccounts; i++)
        bank_lock(c->acc[i]);
}

static void bank_unlock_all(const struct bank_lctx *c)
{
    for (long i = c->naccounts - 1; i >= 0; i--)
        bank_unlock(c->acc[i]);
}

/* One lock-free audit attempt (see the top of the file): 1 and the sum in *out when
 * the snapshot validated, else 0. seen: scratch for the nthreads seqs. */
static int bank_audit_optimistic(const struct bank_lctx *c, unsigned long *seen, long *out)
{
    for (int i = 0; i < c->nthreads; i++) {
        /* acquire: pairs with bank_write_end's release store */
        seen[i] = atomic_load_explicit(&c->seq[i].v, memory_order_acquire);
        if (seen[i] & 1)
            return 0;
    }
    long sum = 0;
    for (long i = 0; i < c->naccounts; i++)
        sum += atomic_load_explicit(&c->acc[i]->balance, memory_order_relaxed);
    /* acquire: pairs with the release fence in bank_write_begin: a balance read from a
     * writer's store makes the re-read below see that writer's odd (or later) seq. */
    atomic_thread_fence(memory_order_acquire);
    for (int i = 0; i < c->nthreads; i++)
        if (atomic_load_explicit(&c->seq[i].v, memory_order_relaxed) != seen[i])
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
        bank_lock_all(c);
        sum = bank_lsum_locked(c);
        bank_unlock_all(c);
    }
    if (SYNC_UNLIKELY(sum != c->total))
        wl_fail(t, "bank: an audit saw total %ld, expected %ld", sum, c->total);
}

static void bank_ltransfer(const struct bank_lctx *c, const struct bank_op *op)
{
    struct bank_laccount *from = c->acc[op->from], *to = c->acc[op->to];
    long f = atomic_load_explicit(&from->balance, memory_order_relaxed);
    atomic_store_explicit(&from->balance, f - op->amount, memory_order_relaxed);
    long g = atomic_load_explicit(&to->balance, memory_order_relaxed);
    atomic_store_explicit(&to->balance, g + op->amount, memory_order_relaxed);
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
        bank_lock_all(c);
    } else {
        m = bank_lsort_unique(sc->idx, m);
        for (long i = 0; i < m; i++)            /* the global order: increasing index */
            bank_lock(c->acc[sc->idx[i]]);
    }
    struct bank_lseq *myseq = &c->seq[t->tid];
    bank_write_begin(myseq);
    s = seed;
    for (long j = 0; j < k; j++) {
        struct bank_op op;
        bank_draw(&s, c->naccounts, c->transfer_pct, &op);
        if (op.audit) {
            long sum = bank_lsum_locked(c);
            if (SYNC_UNLIKELY(sum != c->total))
                wl_fail(t, "bank: an audit saw total %ld, expected %ld", sum, c->total);
        } else {
            bank_ltransfer(c, &op);
        }
    }
    bank_write_end(myseq);
    if (timed)
        t0 = sync_now_ns();
    if (all) {
        bank_unlock_all(c);
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
    long sum = bank_lsum_locked(c);     /* no worker runs now (joined) */
    for (long i = 0; i < c->naccounts; i++)
        if (wl_spin_is_held(&c->acc[i]->lock)) {
            snprintf(msg, msglen, "bank: account %ld still locked after the run", i);
            return -1;
        }
    for (int i = 0; i < c->nthreads; i++)
        /* relaxed: no worker runs (joined) */
        if (atomic_load_explicit(&c->seq[i].v, memory_order_relaxed) & 1) {
            snprintf(msg, msglen, "bank: thread %d still marked as writing after the run", i);
            return -1;
        }
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
    free(c);
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
};
