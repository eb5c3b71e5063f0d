/*
 * workloads/bank.h - the generic bank's accounts and what a block does with them, for
 * the files that run these inside their own atomic blocks: workloads/bank.c and
 * workloads/compose.c (a transfer and the ledger record of it in one block). Include
 * in a file compiled per runtime (SYNC_RT defined). Every function here must be called
 * inside a SYNC_ATOMIC block and opens none: the caller's block is what makes a
 * sequence of them atomic.
 */
#ifndef WL_BANK_H
#define WL_BANK_H

#include "runtime/sync.h"
#include "workloads/lib/bank_common.h"

struct bank_account {
    SYNC_OBJECT_HEADER;
    long balance;
};
typedef SYNC_REF(struct bank_account) bank_ref;

/* Moves amount from one account to another (balances may go negative). */
static inline void bank_transfer(bank_ref from, bank_ref to, long amount)
{
    SYNC_WRITE(from);
    from->balance -= amount;
    SYNC_WRITE(to);
    to->balance += amount;
}

/* The sum of the n balances. */
static inline long bank_sum(const bank_ref *acc, long n)
{
    long sum = 0;
    for (long i = 0; i < n; i++) {
        bank_ref r = acc[i];
        SYNC_READ(r);
        sum += r->balance;
    }
    return sum;
}

/* Allocates the accounts [from, to) with the initial balance (re-running the block
 * re-allocates and re-stores the same slots). */
static inline void bank_new_accounts(bank_ref *acc, long from, long to)
{
    for (long i = from; i < to; i++) {
        bank_ref r = SYNC_ALLOC(struct bank_account);
        r->balance = BANK_INITIAL_BALANCE;     /* new in this block: no barrier */
        acc[i] = r;
    }
}

static inline void bank_free_accounts(const bank_ref *acc, long from, long to)
{
    for (long i = from; i < to; i++)
        SYNC_FREE(acc[i]);
}

#endif
