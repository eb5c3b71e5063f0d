/*
 * workloads/lib/bank_common.h - what the bank workload's copies share: the knob
 * table, the op mix, and the constants. Runtime-independent (no sync.h here), so
 * workloads/bank.c (every generic runtime) and workloads/bank_locks.c draw exactly
 * the same operations from the same seeds.
 */
#ifndef BANK_COMMON_H
#define BANK_COMMON_H

#include "workloads/workload.h"

#include <stddef.h>
#include <stdint.h>

#define BANK_INITIAL_BALANCE 1000L
#define BANK_MAX_AMOUNT 100u
/* Accounts allocated (or freed) per atomic block in setup and teardown. */
#define BANK_SETUP_CHUNK 4096L

enum { BANK_K_ACCOUNTS, BANK_K_TRANSFER_PCT, BANK_NKNOBS };
extern const struct wl_knob bank_knobs[BANK_NKNOBS];
#define BANK_SUMMARY "transfers between random accounts; audits sum every account in one block"

int bank_validate(const struct wl_args *a, char *err, size_t errlen);

/* One operation of the mix: an audit, or a transfer of `amount` from -> to. */
struct bank_op {
    int audit;
    long from, to;
    long amount;
};

/* xorshift64* over a local state: the ops of one block are a pure function of the
 * seed drawn before the block, so a re-run attempt draws the same ops. */
static inline uint64_t bank_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static inline uint64_t bank_below(uint64_t *s, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)bank_next(s) * n) >> 64);
}

static inline void bank_draw(uint64_t *s, long naccounts, long transfer_pct, struct bank_op *op)
{
    op->audit = (long)bank_below(s, 100) >= transfer_pct;
    if (op->audit) {
        op->from = op->to = op->amount = 0;
        return;
    }
    op->from = (long)bank_below(s, (uint64_t)naccounts);
    op->to = (long)bank_below(s, (uint64_t)naccounts - 1);
    if (op->to >= op->from)
        op->to++;                       /* uniform over the other accounts */
    op->amount = 1 + (long)bank_below(s, BANK_MAX_AMOUNT);
}

/* Conflict analysis: "account 17" in buf (n bytes; empty when obj is no account) for
 * a describe_object hook (workload.h). ref_of(arg, i) is account i's reference id
 * (SYNC_REF_ID, or its address under locks); *idx caches the accounts sorted by it
 * (wl_refidx: built at the first call; NULL out of memory). The caller frees *idx at
 * teardown. */
void bank_describe_account(struct wl_refidx **idx, long naccounts,
                           uint64_t (*ref_of)(const void *arg, long i), const void *arg,
                           uint64_t obj, char *buf, size_t n);

/* A block's op seed: never 0 (xorshift's fixed point). */
static inline uint64_t bank_block_seed(struct wl_thread *t)
{
    return wl_rand(t) | 1;
}

#endif
