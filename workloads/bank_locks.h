/*
 * workloads/bank_locks.h - the `locks` bank's accounts: a spin lock per account, and
 * per-writer sequence numbers that let a reader take a consistent snapshot of every
 * balance without a lock. Used by workloads/bank_locks.c (the bank workload) and
 * workloads/compose_locks.c (transfers that also append to a ledger).
 *
 * Each worker thread has a writer sequence number `seq` on a cache line of its own:
 * odd while the thread writes balances, even otherwise, +2 per writing section (a
 * seqlock per writer, not per account, so a writer touches only its own line and the
 * accounts it moves money between).
 *
 * Invariants:
 *  - a balance is written only by the holder of its account's lock, while the
 *    holder's seq is odd;
 *  - a thread that holds several account locks took them in increasing account index
 *    (bank_lock_all, or a caller's sorted list): one global order, so no deadlock;
 *  - a snapshot (bank_seq_snapshot ... bank_seq_unchanged) reads every writer's seq,
 *    then the data, then the seqs again. If every seq was even and is unchanged, no
 *    thread wrote a balance at any moment of the pass (a writer that started after the
 *    first read or was still writing at the second is seen), so what it read is the
 *    state at one moment, with no writing section half-done. Data a writer changes
 *    only while its seq is odd (a caller's ledger, say) is covered the same way.
 *
 * Memory ordering (Boehm's seqlock recipe, one sequence per writer):
 *  - writer: lock the accounts (acquire CAS, wl_spin.h); seq = odd (relaxed store of
 *    its own word) then a release fence, so the stores that follow are not visible
 *    before the odd seq (pairs with the snapshot's acquire fence); balance stores
 *    (relaxed); seq = even with a release store (pairs with the snapshot's acquire
 *    load of seq); unlock;
 *  - snapshot: acquire load of every seq, relaxed data loads, an acquire fence,
 *    relaxed re-loads of the seqs.
 *
 * Include after runtime/sync.h in a file compiled for the locks runtime.
 */
#ifndef WL_BANK_LOCKS_H
#define WL_BANK_LOCKS_H

#include "runtime/sync.h"
#include "workloads/lib/bank_common.h"
#include "workloads/lib/wl_spin.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* Not every includer calls every function. */
#define BANKL_FN static __attribute__((unused))

struct bank_laccount {
    SYNC_OBJECT_HEADER;
    wl_spin_t lock;
    atomic_long balance;         /* relaxed accesses; ordered by the writers' seqs */
};

/* A writer's sequence number, alone on its cache line. */
struct bank_lseq {
    atomic_ulong v;              /* odd: the owner is writing balances */
} SYNC_CL_ALIGNED;

/* Takes an account's lock at `site` (enum wl_spin_site: a transfer's, an audit's):
 * a wait names the account (bank's describe_object) and the site. */
static inline void bank_lock(struct bank_laccount *a, unsigned site)
{
    wl_spin_lock_at(&a->lock, (uintptr_t)a, site);
}

static inline void bank_unlock(struct bank_laccount *a)
{
    wl_spin_unlock(&a->lock);
}

/* The calling thread starts writing balances (it holds their locks). */
static inline void bank_write_begin(struct bank_lseq *s)
{
    /* relaxed: only this thread writes its seq */
    unsigned long v = atomic_load_explicit(&s->v, memory_order_relaxed);
    atomic_store_explicit(&s->v, v + 1, memory_order_relaxed);
    /* release: the balance stores that follow are not visible before the odd seq;
     * pairs with the acquire fence in bank_seq_unchanged */
    atomic_thread_fence(memory_order_release);
}

static inline void bank_write_end(struct bank_lseq *s)
{
    /* relaxed: only this thread writes its seq */
    unsigned long v = atomic_load_explicit(&s->v, memory_order_relaxed);
    /* release: publishes the balance stores; pairs with bank_seq_snapshot's acquire
     * loads */
    atomic_store_explicit(&s->v, v + 1, memory_order_release);
}

/* The first half of a snapshot: every writer's seq into seen[0..n). 0 when one is
 * odd (a writer is in the middle of a section: try again later). */
static inline int bank_seq_snapshot(const struct bank_lseq *seq, int n, unsigned long *seen)
{
    for (int i = 0; i < n; i++) {
        /* acquire: pairs with bank_write_end's release store */
        seen[i] = atomic_load_explicit(&seq[i].v, memory_order_acquire);
        if (seen[i] & 1)
            return 0;
    }
    return 1;
}

/* The second half, after the data loads: 1 when no seq changed, so the loads saw the
 * state of one moment. */
static inline int bank_seq_unchanged(const struct bank_lseq *seq, int n,
                                     const unsigned long *seen)
{
    /* acquire: pairs with the release fence in bank_write_begin: a data load that read
     * a writer's store makes the re-read below see that writer's odd (or later) seq. */
    atomic_thread_fence(memory_order_acquire);
    for (int i = 0; i < n; i++)
        /* relaxed: ordered after the data loads by the fence */
        if (atomic_load_explicit(&seq[i].v, memory_order_relaxed) != seen[i])
            return 0;
    return 1;
}

/* Moves amount between two accounts whose locks the caller holds, inside its odd seq. */
static inline void bank_ltransfer(struct bank_laccount *from, struct bank_laccount *to,
                                  long amount)
{
    long f = atomic_load_explicit(&from->balance, memory_order_relaxed);
    atomic_store_explicit(&from->balance, f - amount, memory_order_relaxed);
    long g = atomic_load_explicit(&to->balance, memory_order_relaxed);
    atomic_store_explicit(&to->balance, g + amount, memory_order_relaxed);
}

/* Sum of the n balances: the caller holds every lock, or no worker runs, or the caller
 * validates the sum with bank_seq_unchanged. */
static inline long bank_lsum(struct bank_laccount *const *acc, long n)
{
    long sum = 0;
    for (long i = 0; i < n; i++)
        sum += atomic_load_explicit(&acc[i]->balance, memory_order_relaxed);
    return sum;
}

BANKL_FN void bank_lock_all(struct bank_laccount *const *acc, long n)
{
    for (long i = 0; i < n; i++)         /* the global order: increasing index */
        bank_lock(acc[i], WL_AT_BANK_AUDIT);
}

BANKL_FN void bank_unlock_all(struct bank_laccount *const *acc, long n)
{
    for (long i = n - 1; i >= 0; i--)
        bank_unlock(acc[i]);
}

static inline int bank_lcmp(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Sorts and de-duplicates idx[0..n) (a lock list in the global order); returns the
 * new count. */
BANKL_FN long bank_lsort_unique(long *idx, long n)
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

/* The check after the run (no worker runs): no account lock held, no writer's seq
 * odd. 0, or -1 with the first offender in msg. */
BANKL_FN int bank_locks_released(struct bank_laccount *const *acc, long n,
                                 const struct bank_lseq *seq, int nseq, char *msg,
                                 size_t msglen)
{
    for (long i = 0; i < n; i++)
        if (wl_spin_is_held(&acc[i]->lock)) {
            snprintf(msg, msglen, "bank: account %ld still locked after the run", i);
            return -1;
        }
    for (int i = 0; i < nseq; i++)
        /* relaxed: no worker runs (joined) */
        if (atomic_load_explicit(&seq[i].v, memory_order_relaxed) & 1) {
            snprintf(msg, msglen, "bank: thread %d still marked as writing after the run", i);
            return -1;
        }
    return 0;
}

#endif
