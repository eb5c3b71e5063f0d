/*
 * workloads/lib/compose_common.h - what the compose workload's copies share, with no
 * runtime in it (as bank_common.h for bank): the knobs, the operation mix, the
 * per-thread logs of committed operations and the checks after the run. The copies
 * are workloads/compose.c (every runtime with atomic blocks) and
 * workloads/compose_locks.c (`locks`); each gathers its structures' contents into
 * plain arrays and the functions here judge them, so both are judged alike.
 *
 * The workload (docs/compose.md, "The workload"): two pairs of structures, each with an
 * invariant across the pair.
 *   keys    the keys 0..keys-1 live in a hash map (workloads/hashmap_ops.h or
 *           hashmap_locks.h) and a red-black tree (rbtree_ops.h, rbtree_locks.h).
 *           K1: every key is in exactly one of the two. A move takes a key out of the
 *           structure that holds it and puts it into the other; a find looks the key
 *           up in both and fails the run (wl_fail) when it is in neither or both.
 *   bank    accounts (bank.h, bank_locks.h) and a ledger. A transfer moves an amount
 *           between two accounts and appends a record of it to the ledger; an audit
 *           reads every balance and the ledger's running sum and fails the run when
 *           L1: the balances total what they started with, and
 *           L2: sum over accounts of weight(a) x balance(a) equals base + the ledger's
 *               sum, base = sum of weight(a) x the initial balance and the ledger's
 *               sum = sum over its records of amount x (weight(to) - weight(from))
 *           do not hold. weight(a) is a fixed odd 64-bit hash of a, the arithmetic is
 *           modulo 2^64: L2 is a checksum of "every balance equals its opening balance
 *           plus the ledger's records for it", which one audit can test in
 *           O(accounts); a transfer whose record is missing (or a record whose
 *           transfer is) breaks it unless its weights collide.
 *           The ledger keeps every record's effect in its running count and sum, and
 *           the last --ledger records in full (a ring: slot seq % nledger).
 * --compose-atomic 1 runs each move and each transfer as one atomic operation; 0 runs
 * each structure's own operation, one after the other (a broken composition: a find
 * or an audit between the two halves sees the invariant broken, and the test checks
 * that it does).
 *
 * The checks after the run (cm_check_keys, cm_check_bank, cm_check_ledger): K1 over
 * the final contents; each structure's key set against its initial set and the
 * committed moves of every thread (workloads/lib/oplog.c); every balance against its
 * opening balance and every thread's committed transfers; the ledger's count against
 * the committed transfers; L1 and L2; and the ring's records (consecutive sequence
 * numbers in their slots, well-formed transfers).
 */
#ifndef COMPOSE_COMMON_H
#define COMPOSE_COMMON_H

#include "workloads/lib/bank_common.h"
#include "workloads/lib/oplog.h"
#include "workloads/lib/wl_keys.h"
#include "workloads/workload.h"

#include <stddef.h>
#include <stdint.h>

enum {
    CM_K_KEYS, CM_K_BUCKETS, CM_K_ACCOUNTS, CM_K_MOVE_PCT, CM_K_TRANSFER_PCT, CM_K_BANK_PCT,
    CM_K_LEDGER, CM_K_ATOMIC, CM_NKNOBS
};
extern const struct wl_knob cm_knobs[CM_NKNOBS];
#define CM_SUMMARY "moves keys between a hash map and a red-black tree and records transfers " \
                   "in a ledger, each in one operation; finds and audits check both sides"
#define CM_MAX_KEYS (1L << 22)
#define CM_MAX_ACCOUNTS (1L << 20)
#define CM_MAX_LEDGER (1L << 20)

int cm_validate(const struct wl_args *a, char *err, size_t errlen);

/* Operation kinds; a block's site is its first operation's. */
enum { CM_OP_FIND, CM_OP_MOVE, CM_OP_AUDIT, CM_OP_TRANSFER };
/* Where a move took its key (cm_op.res). */
enum { CM_MOVED_NOT = 0, CM_MOVED_TO_TREE = 1, CM_MOVED_TO_MAP = 2 };

/* One operation of a block, and the result its committed run left. */
struct cm_op {
    int64_t key;                 /* FIND, MOVE: the key; TRANSFER: the account debited */
    int32_t to;                  /* TRANSFER: the account credited */
    int32_t amount;              /* TRANSFER: 1..BANK_MAX_AMOUNT */
    uint8_t kind;
    uint8_t res;                 /* MOVE: CM_MOVED_*, written by every run of the block */
};

/* A thread's buffers and logs: owned by the thread while it runs, read by the checks
 * after the join. */
struct cm_tls {
    struct cm_op *op;            /* the next block's operations */
    struct oplog *tree_log;      /* committed moves: +1 into the tree, -1 out of it */
    struct oplog *map_log;       /* and the same for the map */
    long *net;                   /* [accounts]: committed transfers' effect on each balance */
    uint64_t transfers;          /* committed transfers, so records appended */
} SYNC_CL_ALIGNED;

/* The run's parameters and the state both copies keep the same way. */
struct cm_common {
    long keys, accounts, move_pct, transfer_pct, bank_pct, ops_per_tx;
    uint64_t nbuckets, nledger, seed;
    int atomic;                  /* --compose-atomic */
    int nthreads;
    struct cm_tls *tls;          /* [nthreads] */
    uint64_t *weight;            /* [accounts], read-only after setup */
    uint64_t base;               /* sum of weight(a) x BANK_INITIAL_BALANCE (L2) */
    long total;                  /* accounts x BANK_INITIAL_BALANCE (L1) */
    int64_t *init_tree, *init_map;  /* the keys each structure holds after setup, sorted */
    size_t ninit_tree, ninit_map;
};

/* Fills m from the arguments and allocates its buffers and logs; 0, or -1 with a
 * reason in err (then cm_common_free frees what was allocated). */
int cm_common_init(struct cm_common *m, const struct wl_args *a, char *err, size_t errlen);
void cm_common_free(struct cm_common *m);

/* Where key starts: 1 in the map, 0 in the tree (a hash of the seed and the key). */
static inline int cm_starts_in_map(uint64_t seed, int64_t key)
{
    return (int)(wl_key_hash((uint64_t)key ^ (seed * 0x9E3779B97F4A7C15ull)) >> 63);
}

/* Draws the k operations of the next block from the thread's generator. */
static inline void cm_draw(const struct cm_common *m, struct wl_thread *t, struct cm_op *op,
                           long k)
{
    for (long i = 0; i < k; i++) {
        op[i].res = CM_MOVED_NOT;
        if ((long)wl_rand_below(t, 100) < m->bank_pct) {
            uint64_t s = wl_rand(t) | 1;
            struct bank_op b;
            bank_draw(&s, m->accounts, m->transfer_pct, &b);
            op[i].kind = b.audit ? CM_OP_AUDIT : CM_OP_TRANSFER;
            op[i].key = b.from;
            op[i].to = (int32_t)b.to;
            op[i].amount = (int32_t)b.amount;
        } else {
            op[i].kind = (long)wl_rand_below(t, 100) < m->move_pct ? CM_OP_MOVE : CM_OP_FIND;
            op[i].key = (int64_t)wl_rand_below(t, (uint64_t)m->keys);
            op[i].to = op[i].amount = 0;
        }
    }
}

/* The term a transfer adds to the ledger's sum (L2), modulo 2^64. */
static inline uint64_t cm_record_term(const struct cm_common *m, long from, long to, long amount)
{
    return (uint64_t)amount * (m->weight[to] - m->weight[from]);
}

/* After the block of ops[0..k) committed: its moves and transfers into the logs. */
void cm_log(const struct cm_common *m, struct cm_tls *b, const struct cm_op *op, long k);

/*
 * The checks after the run, on what the copy gathered (no worker runs):
 *   cm_check_keys:   tree and map keys, each sorted strictly increasing: K1, and each
 *                    set against its initial set and the threads' committed moves;
 *   cm_check_bank:   the balances, the ledger's record count and sum: every balance,
 *                    the count, L1 and L2;
 *   cm_check_ledger: the ring's records, rec[i] the one in slot i (nrec = nledger).
 * Each returns 0, or -1 with the first broken invariant in msg.
 */
int cm_check_keys(const struct cm_common *m, int nthreads, const int64_t *tree, size_t ntree,
                  const int64_t *map, size_t nmap, char *msg, size_t msglen);
int cm_check_bank(const struct cm_common *m, int nthreads, const long *balance, uint64_t count,
                  uint64_t sum, char *msg, size_t msglen);
struct cm_record {
    uint64_t seq;
    long from, to, amount;
};
int cm_check_ledger(const struct cm_common *m, uint64_t count, const struct cm_record *rec,
                    char *msg, size_t msglen);

/* The checks inside blocks, callable there (SYNC_TM_PURE, as wl_fail): they record a
 * failure with wl_fail and return -1 when the invariant does not hold, else 0.
 *   cm_find_judge:  K1 for what a find saw (the key in the map, in the tree: 0 or 1);
 *   cm_audit_judge: L1 and L2 for what an audit read (the balances' sum and weighted
 *                   sum, the ledger's sum). */
int cm_find_judge(struct wl_thread *t, int64_t key, int in_map, int in_tree) SYNC_TM_PURE;
int cm_audit_judge(const struct cm_common *m, struct wl_thread *t, long sum, uint64_t wsum,
                   uint64_t ledger_sum) SYNC_TM_PURE;

#endif
