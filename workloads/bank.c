/*
 * workloads/bank.c - the bank workload, written once against runtime/sync.h and
 * compiled for every runtime of build cc or gnutm in runtime/runtimes.h's list (its
 * fine-grained locks variant is bank_locks.c).
 *
 * Accounts are shared-heap objects; the array of references to them is plain memory
 * written only in setup and read-only afterwards. An atomic block runs --ops-per-tx
 * operations, each a transfer (from != to, amount 1..100, balances may go negative)
 * or an audit that reads every account and compares the sum with the invariant total
 * inside the block, so a torn snapshot is reported even by an attempt that the STM
 * later throws away.
 *
 * Rules kept for runtimes that re-run blocks (stm): the ops of a block are drawn from
 * a seed taken before the block; every variable changed inside a block is declared
 * inside it (or is only assigned, never accumulated, like `sum` in bank_check); the
 * only thing outside a block changed from inside is the thread's failure record
 * (wl_fail), which must survive an abort.
 */
#include "runtime/sync.h"
#include "workloads/bank.h"
#include "workloads/lib/bank_common.h"
#include "workloads/workload.h"

#include <stdio.h>
#include <stdlib.h>

struct bank_ctx {
    long naccounts;
    long transfer_pct;
    long ops_per_tx;
    long total;               /* the conserved sum of all balances */
    bank_ref *acc;            /* immutable after setup */
    struct wl_refidx *byref;  /* conflict analysis: acc sorted by reference (lazily) */
};

/* ---- conflict analysis: "account 17" for an object (struct workload) ---- */
static uint64_t bank_ref_of(const void *arg, long i)
{
    const struct bank_ctx *c = arg;
    return (uint64_t)SYNC_REF_ID(c->acc[i]);
}
static void bank_describe_object(void *ctx, uint64_t obj, char *buf, size_t n)
{
    struct bank_ctx *c = ctx;
    bank_describe_account(&c->byref, c->naccounts, bank_ref_of, c, obj, buf, n);
}

static void *bank_setup(const struct wl_args *a, char *err, size_t errlen)
{
    struct bank_ctx *c = calloc(1, sizeof *c);
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
    for (long base = 0; base < n; base += BANK_SETUP_CHUNK) {
        long end = base + BANK_SETUP_CHUNK < n ? base + BANK_SETUP_CHUNK : n;
        SYNC_ATOMIC("bank.setup") {
            bank_new_accounts(c->acc, base, end);
        }
    }
    return c;
}

/* The body of one block: k ops drawn from seed. Kept out of line: under stm the block's
 * function calls _setjmp, and compilers keep fewer values in registers in a function
 * that contains a call returning twice (the audit loop ran several times the
 * instructions inline: commit d8b6712 has the counts). */
static SYNC_NOINLINE void
bank_ops(const struct bank_ctx *c, struct wl_thread *t, uint64_t seed, long k)
{
    uint64_t s = seed;
    for (long j = 0; j < k; j++) {
        struct bank_op op;
        bank_draw(&s, c->naccounts, c->transfer_pct, &op);
        if (op.audit) {
            long sum = bank_sum(c->acc, c->naccounts);
            if (SYNC_UNLIKELY(sum != c->total))
                wl_fail(t, "bank: an audit saw total %ld, expected %ld", sum, c->total);
        } else {
            bank_transfer(c->acc[op.from], c->acc[op.to], op.amount);
        }
    }
}

/* The site of the block whose ops seed draws: its first op's. A function of the seed
 * alone, so that runtimes which name a block only on a slow path (gil, mutex) draw it
 * only there. */
static inline const char *bank_site(const struct bank_ctx *c, uint64_t seed)
{
    struct bank_op first;
    bank_draw(&seed, c->naccounts, c->transfer_pct, &first);
    return first.audit ? "bank.audit" : "bank.transfer";
}

static uint64_t bank_block(struct bank_ctx *c, struct wl_thread *t)
{
    long k = wl_batch(t, t->tx_len);
    uint64_t seed = bank_block_seed(t);
    SYNC_ATOMIC(bank_site(c, seed)) {
        bank_ops(c, t, seed, k);
    }
    WL_TXLEN_AFTER(t, (uint64_t)k);
    return (uint64_t)k;
}

static void bank_thread_run(void *ctx, struct wl_thread *t)
{
    struct bank_ctx *c = ctx;
    wl_txlen_init(t, c->ops_per_tx, 1, WL_TXLEN_MAX_OPS);
    WL_LOOP(c, t, bank_block);
}

static int bank_check(void *ctx, struct wl_thread *threads, int nthreads, char *msg,
                      size_t msglen)
{
    (void)threads; (void)nthreads;
    const struct bank_ctx *c = ctx;
    long sum = 0;
    SYNC_ATOMIC("bank.check") {
        sum = bank_sum(c->acc, c->naccounts);
    }
    if (sum != c->total) {
        snprintf(msg, msglen, "bank: total not conserved: %ld after the run, expected %ld", sum,
                 c->total);
        return -1;
    }
    return 0;
}

static void bank_teardown(void *ctx)
{
    struct bank_ctx *c = ctx;
    for (long base = 0; base < c->naccounts; base += BANK_SETUP_CHUNK) {
        long end = base + BANK_SETUP_CHUNK < c->naccounts ? base + BANK_SETUP_CHUNK : c->naccounts;
        SYNC_ATOMIC("bank.teardown") {
            bank_free_accounts(c->acc, base, end);
        }
    }
    free(c->acc);
    free(c->byref);
    free(c);
}

WORKLOAD_EXPORT(bank, SYNC_RT_ID) = {
    .name = "bank",
    .runtime = SYNC_RT_NAME,
    .summary = BANK_SUMMARY,
    .knobs = bank_knobs,
    .nknobs = BANK_NKNOBS,
    .validate = bank_validate,
    .setup = bank_setup,
    .thread_run = bank_thread_run,
    .check = bank_check,
    .teardown = bank_teardown,
    .tx_adaptive = WL_TX_ADAPTIVE,
    .describe_object = bank_describe_object,
};
