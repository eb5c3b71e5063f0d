/*
 * workloads/bank_locks.c - the bank workload with its own fine-grained locks (the
 * `locks` runtime: plain heap, SYNC_ATOMIC gives no exclusion here).
 *
 * Invariants:
 *  - every account has its own lock, and its balance is read or written only while
 *    that lock is held (setup and the final check run while no worker exists);
 *  - a block (--ops-per-tx operations) first works out every account its ops touch,
 *    then takes those locks in increasing account index, runs the ops, and releases
 *    them: every thread acquires in one global order, so no cycle, no deadlock;
 *  - a block holding any audit takes every lock (0..n-1): while it holds them no
 *    transfer is half-done, so its sum is exactly the invariant total.
 * The locks' acquire/release give the ordering; no other synchronisation is needed.
 *
 * Why pthread mutexes rather than spinlocks: an audit holds every lock for the time
 * it takes to sum all accounts (microseconds at 1024), and a run may put more
 * threads than cores; spinning waiters would burn a preempted holder's core. Glibc's
 * default mutex costs one atomic op to lock and one to unlock when uncontended, about
 * the price of a spinlock, and sleeps in the kernel when contended.
 */
#include "runtime/sync.h"
#include "workloads/lib/bank_common.h"
#include "workloads/workload.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct bank_laccount {
    SYNC_OBJECT_HEADER;
    long balance;
    pthread_mutex_t lock;
};

struct bank_lctx {
    long naccounts;
    long transfer_pct;
    long ops_per_tx;
    long total;
    struct bank_laccount **acc;     /* immutable after setup */
};

/* Per-thread scratch: the sorted account indexes one block locks. */
struct bank_lscratch {
    long *idx;
    long cap;
};

static void *bank_lsetup(const struct wl_args *a, char *err, size_t errlen)
{
    struct bank_lctx *c = calloc(1, sizeof *c);
    long n = a->ival[BANK_K_ACCOUNTS];
    if (c)
        c->acc = malloc((size_t)n * sizeof *c->acc);
    if (!c || !c->acc) {
        snprintf(err, errlen, "out of memory for %ld accounts", n);
        free(c);
        return NULL;
    }
    c->naccounts = n;
    c->transfer_pct = a->ival[BANK_K_TRANSFER_PCT];
    c->ops_per_tx = a->ops_per_tx;
    c->total = n * BANK_INITIAL_BALANCE;
    for (long i = 0; i < n; i++) {
        struct bank_laccount *r = SYNC_ALLOC(struct bank_laccount);
        r->balance = BANK_INITIAL_BALANCE;
        pthread_mutex_init(&r->lock, NULL);
        c->acc[i] = r;
    }
    return c;
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

static void bank_lrun_ops(const struct bank_lctx *c, struct wl_thread *t, uint64_t seed, long k)
{
    uint64_t s = seed;
    for (long j = 0; j < k; j++) {
        struct bank_op op;
        bank_draw(&s, c->naccounts, c->transfer_pct, &op);
        if (op.audit) {
            long sum = 0;
            for (long i = 0; i < c->naccounts; i++)
                sum += c->acc[i]->balance;
            if (SYNC_UNLIKELY(sum != c->total))
                wl_fail(t, "bank: an audit saw total %ld, expected %ld", sum, c->total);
        } else {
            c->acc[op.from]->balance -= op.amount;
            c->acc[op.to]->balance += op.amount;
        }
    }
}

static uint64_t bank_lblock(struct bank_lctx *c, struct wl_thread *t)
{
    struct bank_lscratch *sc = t->priv;
    long k = wl_batch(t, c->ops_per_tx);
    uint64_t seed = bank_block_seed(t);

    /* Which accounts will the k ops touch? */
    uint64_t s = seed;
    long m = 0;
    int all = 0;
    for (long j = 0; j < k && !all; j++) {
        struct bank_op op;
        bank_draw(&s, c->naccounts, c->transfer_pct, &op);
        if (op.audit) {
            all = 1;
        } else {
            sc->idx[m++] = op.from;
            sc->idx[m++] = op.to;
        }
    }
    if (!all)
        m = bank_lsort_unique(sc->idx, m);

    /* Lock in increasing index order (the global order), run, unlock. */
    if (all) {
        for (long i = 0; i < c->naccounts; i++)
            pthread_mutex_lock(&c->acc[i]->lock);
    } else {
        for (long i = 0; i < m; i++)
            pthread_mutex_lock(&c->acc[sc->idx[i]]->lock);
    }
    bank_lrun_ops(c, t, seed, k);
    int timed = (++t->stats.commits & (SYNC_COMMIT_SAMPLE - 1)) == 0;
    uint64_t t0 = timed ? sync_now_ns() : 0;
    if (all) {
        for (long i = c->naccounts - 1; i >= 0; i--)
            pthread_mutex_unlock(&c->acc[i]->lock);
    } else {
        for (long i = m - 1; i >= 0; i--)
            pthread_mutex_unlock(&c->acc[sc->idx[i]]->lock);
    }
    if (timed)   /* the commit step of a lock-based block is its lock release */
        lat_add(&t->stats.commit_hist, sync_now_ns() - t0);
    return (uint64_t)k;
}

static void bank_lthread_run(void *ctx, struct wl_thread *t)
{
    struct bank_lctx *c = ctx;
    struct bank_lscratch sc = {.cap = 2 * c->ops_per_tx};
    sc.idx = malloc((size_t)sc.cap * sizeof *sc.idx);
    if (!sc.idx) {
        wl_fail(t, "bank: out of memory for the lock list of %ld ops", c->ops_per_tx);
        return;
    }
    t->priv = &sc;
    WL_LOOP(c, t, bank_lblock);
    t->priv = NULL;
    free(sc.idx);
}

static int bank_lcheck(void *ctx, struct wl_thread *threads, int nthreads, char *msg,
                       size_t msglen)
{
    (void)threads; (void)nthreads;
    const struct bank_lctx *c = ctx;
    long sum = 0;
    for (long i = 0; i < c->naccounts; i++) {   /* no worker runs now: no locks needed */
        sum += c->acc[i]->balance;
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
    for (long i = 0; i < c->naccounts; i++) {
        pthread_mutex_destroy(&c->acc[i]->lock);
        SYNC_FREE(c->acc[i]);
    }
    free(c->acc);
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
