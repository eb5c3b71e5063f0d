/*
 * workloads/bank_locks.c - the bank workload with its own fine-grained locks (the
 * `locks` runtime: plain heap, SYNC_ATOMIC gives no exclusion here).
 *
 * Each account carries a versioned lock word `ver`: even = free, odd = held. Taking
 * the lock turns v into v+1 (CAS), releasing stores v+2; so the word also counts
 * the account's changes, like a seqlock.
 *
 * Invariants:
 *  - a balance is written only by the holder of its account's lock;
 *  - a block (--ops-per-tx operations) that writes first works out every account its
 *    ops touch and takes those locks in increasing account index, runs its ops, then
 *    releases them: every thread acquires in one global order, so no deadlock;
 *    a block mixing audits and transfers takes every lock (0..n-1), so its audits see
 *    the state with no transfer half-done but its own (each of which conserves);
 *  - a block made only of audits takes no lock: it reads every (version, balance)
 *    pair, then re-reads the versions; if every version was even and is unchanged,
 *    each balance held its value over an interval that includes the moment between
 *    the last read and the first re-read, so all of them were the account states at
 *    that one moment, when no transfer held any of them: the sum is exact. After
 *    BANK_OPTIMISTIC_TRIES failed attempts an audit takes every lock in order instead,
 *    so it cannot starve.
 *
 * Memory ordering (Boehm's seqlock recipe):
 *  - lock: CAS even->odd with acquire (pairs with the release store of the previous
 *    holder's unlock), then a release fence so that the balance stores below cannot
 *    become visible before the odd version (pairs with the audit's acquire fence);
 *  - unlock: release store of v+2 (pairs with the next locker's acquire CAS and the
 *    audit's acquire load of the version);
 *  - audit: acquire load of each version before its balance, relaxed balance loads,
 *    an acquire fence, relaxed re-loads of the versions.
 *
 * Why a spin lock here: transfers hold two locks for a few nanoseconds and audits
 * usually hold none, so waits are short; the wait loop yields the CPU after a
 * bounded spin so a preempted holder (more threads than cores) gets to run.
 */
#include "runtime/sync.h"
#include "workloads/lib/bank_common.h"
#include "workloads/workload.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define BANK_OPTIMISTIC_TRIES 4
#define BANK_SPIN_BEFORE_YIELD 128

struct bank_laccount {
    SYNC_OBJECT_HEADER;
    atomic_ulong ver;            /* even: free; odd: held */
    atomic_long balance;         /* relaxed accesses; ordered by ver (see top) */
};

struct bank_lctx {
    long naccounts;
    long transfer_pct;
    long ops_per_tx;
    long total;
    struct bank_laccount **acc;  /* immutable after setup */
};

/* Per-thread scratch: the sorted account indexes a block locks; versions an audit saw. */
struct bank_lscratch {
    long *idx;
    unsigned long *ver;
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
        atomic_init(&r->ver, 0);
        atomic_init(&r->balance, BANK_INITIAL_BALANCE);
        c->acc[i] = r;
    }
    return c;   /* published to the workers by pthread_create */
}

static void bank_lock(struct bank_laccount *a)
{
    unsigned spins = 0;
    for (;;) {
        unsigned long v = atomic_load_explicit(&a->ver, memory_order_relaxed);
        /* acquire: pairs with the release store in bank_unlock of the previous holder */
        if (!(v & 1) && atomic_compare_exchange_weak_explicit(&a->ver, &v, v + 1,
                                                              memory_order_acquire,
                                                              memory_order_relaxed))
            break;
        if (spins == 0)   /* the time breakdown's wait_lock: only a taken lock is timed */
            TA_TIMED_BEGIN(TA_WAIT_LOCK);
        if (++spins % BANK_SPIN_BEFORE_YIELD == 0)
            sched_yield();
        else
            __builtin_ia32_pause();
    }
    if (spins)
        TA_TIMED_END();
    /* release: the balance stores that follow are not visible before the odd version;
     * pairs with the acquire fence in bank_audit_optimistic. */
    atomic_thread_fence(memory_order_release);
}

static void bank_unlock(struct bank_laccount *a)
{
    unsigned long v = atomic_load_explicit(&a->ver, memory_order_relaxed);
    /* release: publishes the balance stores; pairs with bank_lock's acquire CAS and the
     * audit's acquire version loads. */
    atomic_store_explicit(&a->ver, v + 1, memory_order_release);
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
 * the snapshot validated, else 0. */
static int bank_audit_optimistic(const struct bank_lctx *c, unsigned long *ver, long *out)
{
    long sum = 0;
    for (long i = 0; i < c->naccounts; i++) {
        /* acquire: pairs with bank_unlock's release store */
        unsigned long v = atomic_load_explicit(&c->acc[i]->ver, memory_order_acquire);
        if (v & 1)
            return 0;
        ver[i] = v;
        sum += atomic_load_explicit(&c->acc[i]->balance, memory_order_relaxed);
    }
    /* acquire: pairs with the release fence in bank_lock: a balance read from a
     * transfer's store makes the re-read below see that transfer's odd version. */
    atomic_thread_fence(memory_order_acquire);
    for (long i = 0; i < c->naccounts; i++)
        if (atomic_load_explicit(&c->acc[i]->ver, memory_order_relaxed) != ver[i])
            return 0;
    *out = sum;
    return 1;
}

static void bank_laudit(const struct bank_lctx *c, struct wl_thread *t, unsigned long *ver)
{
    long sum;
    int ok = 0;
    for (int a = 0; a < BANK_OPTIMISTIC_TRIES && !ok; a++)
        ok = bank_audit_optimistic(c, ver, &sum);
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
            bank_laudit(c, t, sc->ver);
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
    sc.idx = malloc((size_t)(2 * c->ops_per_tx) * sizeof *sc.idx);
    sc.ver = malloc((size_t)c->naccounts * sizeof *sc.ver);
    if (!sc.idx || !sc.ver) {
        wl_fail(t, "bank: out of memory for the per-thread lock lists");
    } else {
        t->priv = &sc;
        WL_LOOP(c, t, bank_lblock);
        t->priv = NULL;
    }
    free(sc.idx);
    free(sc.ver);
}

static int bank_lcheck(void *ctx, struct wl_thread *threads, int nthreads, char *msg,
                       size_t msglen)
{
    (void)threads; (void)nthreads;
    const struct bank_lctx *c = ctx;
    long sum = bank_lsum_locked(c);     /* no worker runs now (joined) */
    for (long i = 0; i < c->naccounts; i++)
        if (atomic_load_explicit(&c->acc[i]->ver, memory_order_relaxed) & 1) {
            snprintf(msg, msglen, "bank: account %ld still locked after the run", i);
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
