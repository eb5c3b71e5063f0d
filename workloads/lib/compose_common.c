/*
 * workloads/lib/compose_common.c - the compose workload's knobs, logs and checks
 * (compose_common.h). Runtime-independent: touches thread-private memory, and in the
 * checks what the workload's copy gathered after the join.
 */
#include "workloads/lib/compose_common.h"
#include "runtime/common.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct wl_knob cm_knobs[CM_NKNOBS] = {
    [CM_K_KEYS] = {.name = "keys", .type = WL_KNOB_INT, .def = 1024, .min = 2,
                   .max = CM_MAX_KEYS,
                   .help = "keys 0..keys-1, each in exactly one of the hash map and the tree"},
    /* the range of hashmap's --buckets (HM_MAX_BUCKETS, workloads/hashmap.h) */
    [CM_K_BUCKETS] = {.name = "buckets", .type = WL_KNOB_INT, .def = 1024, .min = 1,
                      .max = 1L << 22, .help = "the hash map's buckets (chains)"},
    [CM_K_ACCOUNTS] = {.name = "accounts", .type = WL_KNOB_INT, .def = 256, .min = 2,
                       .max = CM_MAX_ACCOUNTS, .help = "bank accounts"},
    [CM_K_MOVE_PCT] = {.name = "move-pct", .type = WL_KNOB_INT, .def = 20, .min = 0, .max = 100,
                       .help = "% of key operations that move the key to the other "
                               "structure (the rest find it, looking in both)"},
    [CM_K_TRANSFER_PCT] = {.name = "transfer-pct", .type = WL_KNOB_INT, .def = 90, .min = 0,
                           .max = 100,
                           .help = "% of bank operations that transfer and record it in the "
                                   "ledger (the rest audit every account against the ledger)"},
    [CM_K_BANK_PCT] = {.name = "bank-pct", .type = WL_KNOB_INT, .def = 50, .min = 0, .max = 100,
                       .help = "% of operations on the accounts and the ledger (the rest on "
                               "the keys)"},
    [CM_K_LEDGER] = {.name = "ledger", .type = WL_KNOB_INT, .def = 256, .min = 1,
                     .max = CM_MAX_LEDGER,
                     .help = "ledger records kept in full (a ring; every record's effect "
                             "stays in the ledger's running sum)"},
    [CM_K_ATOMIC] = {.name = "compose-atomic", .type = WL_KNOB_INT, .def = 1, .min = 0, .max = 1,
                     .help = "1: each move and transfer is one atomic operation; 0: each "
                             "structure's own operation, one after the other (broken on "
                             "purpose: the checks must catch it)"},
};

int cm_validate(const struct wl_args *a, char *err, size_t errlen)
{
    (void)a; (void)err; (void)errlen;
    return 0;   /* every knob is checked by its range alone */
}

int cm_common_init(struct cm_common *m, const struct wl_args *a, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->keys = a->ival[CM_K_KEYS];
    m->nbuckets = (uint64_t)a->ival[CM_K_BUCKETS];
    m->accounts = a->ival[CM_K_ACCOUNTS];
    m->move_pct = a->ival[CM_K_MOVE_PCT];
    m->transfer_pct = a->ival[CM_K_TRANSFER_PCT];
    m->bank_pct = a->ival[CM_K_BANK_PCT];
    m->nledger = (uint64_t)a->ival[CM_K_LEDGER];
    m->atomic = (int)a->ival[CM_K_ATOMIC];
    m->ops_per_tx = a->ops_per_tx;            /* WL_LEN_AUTO: adaptive */
    m->seed = a->seed;
    m->nthreads = a->nthreads > 0 ? a->nthreads : 1;
    m->total = m->accounts * BANK_INITIAL_BALANCE;
    long bufn = a->ops_per_tx > 0 ? a->ops_per_tx : WL_TXLEN_MAX_OPS;
    m->tls = aligned_alloc(SYNC_CACHELINE, (size_t)m->nthreads * sizeof *m->tls);
    if (m->tls)
        memset(m->tls, 0, (size_t)m->nthreads * sizeof *m->tls);
    m->weight = malloc((size_t)m->accounts * sizeof *m->weight);
    m->init_tree = malloc((size_t)m->keys * sizeof *m->init_tree);
    m->init_map = malloc((size_t)m->keys * sizeof *m->init_map);
    if (!m->tls || !m->weight || !m->init_tree || !m->init_map) {
        snprintf(err, errlen, "out of memory for %ld keys and %ld accounts", m->keys,
                 m->accounts);
        return -1;
    }
    for (int i = 0; i < m->nthreads; i++) {
        struct cm_tls *b = &m->tls[i];
        b->op = sync_private_alloc((size_t)bufn * sizeof *b->op);
        b->tree_log = oplog_new((uint64_t)m->keys);
        b->map_log = oplog_new((uint64_t)m->keys);
        b->net = sync_private_alloc((size_t)m->accounts * sizeof *b->net);
        if (!b->op || !b->tree_log || !b->map_log || !b->net) {
            snprintf(err, errlen, "out of memory for thread %d's buffers", i);
            return -1;
        }
        memset(b->net, 0, (size_t)m->accounts * sizeof *b->net);
    }
    for (long i = 0; i < m->accounts; i++) {
        m->weight[i] = wl_key_hash((uint64_t)i) | 1;
        m->base += m->weight[i] * (uint64_t)BANK_INITIAL_BALANCE;
    }
    for (long k = 0; k < m->keys; k++) {       /* in increasing order: sorted */
        if (cm_starts_in_map(m->seed, k))
            m->init_map[m->ninit_map++] = k;
        else
            m->init_tree[m->ninit_tree++] = k;
    }
    return 0;
}

void cm_common_free(struct cm_common *m)
{
    if (m->tls)
        for (int i = 0; i < m->nthreads; i++) {
            free(m->tls[i].op);
            oplog_free(m->tls[i].tree_log);
            oplog_free(m->tls[i].map_log);
            free(m->tls[i].net);
        }
    free(m->tls);
    free(m->weight);
    free(m->init_tree);
    free(m->init_map);
    memset(m, 0, sizeof *m);
}

void cm_log(const struct cm_common *m, struct cm_tls *b, const struct cm_op *op, long k)
{
    (void)m;
    for (long i = 0; i < k; i++) {
        if (op[i].kind == CM_OP_MOVE && op[i].res != CM_MOVED_NOT) {
            int d = op[i].res == CM_MOVED_TO_TREE ? 1 : -1;
            oplog_record(b->tree_log, (uint64_t)op[i].key, d);
            oplog_record(b->map_log, (uint64_t)op[i].key, -d);
        } else if (op[i].kind == CM_OP_TRANSFER) {
            b->net[op[i].key] -= op[i].amount;
            b->net[op[i].to] += op[i].amount;
            b->transfers++;
        }
    }
}

int cm_find_judge(struct wl_thread *t, int64_t key, int in_map, int in_tree)
{
    if (SYNC_UNLIKELY(in_map + in_tree != 1)) {
        wl_fail(t, "compose: a find saw key %lld in %s", (long long)key,
                in_map ? "both the map and the tree" : "neither the map nor the tree");
        return -1;
    }
    return 0;
}

int cm_audit_judge(const struct cm_common *m, struct wl_thread *t, long sum, uint64_t wsum,
                   uint64_t ledger_sum)
{
    if (SYNC_UNLIKELY(sum != m->total)) {
        wl_fail(t, "compose: an audit saw total %ld, expected %ld", sum, m->total);
        return -1;
    }
    if (SYNC_UNLIKELY(wsum != m->base + ledger_sum)) {
        wl_fail(t, "compose: an audit saw balances that the ledger's sum does not account "
                "for (a transfer without its record, or a record without its transfer)");
        return -1;
    }
    return 0;
}

int cm_check_keys(const struct cm_common *m, int nthreads, const int64_t *tree, size_t ntree,
                  const int64_t *map, size_t nmap, char *msg, size_t msglen)
{
    /* K1: merge the two sorted sets; together they must be exactly 0..keys-1. */
    size_t i = 0, j = 0;
    for (long k = 0; k < m->keys; k++) {
        int in_tree = i < ntree && tree[i] == k;
        int in_map = j < nmap && map[j] == k;
        i += in_tree;
        j += in_map;
        if (in_tree + in_map != 1) {
            snprintf(msg, msglen, "compose: after the run key %ld is in %s", k,
                     in_tree ? "both the map and the tree" : "neither the map nor the tree");
            return -1;
        }
    }
    if (i != ntree || j != nmap) {
        snprintf(msg, msglen, "compose: after the run the %s holds a key outside 0..%ld",
                 i != ntree ? "tree" : "map", m->keys - 1);
        return -1;
    }
    int nl = nthreads < m->nthreads ? nthreads : m->nthreads;
    struct oplog *tl[nl > 0 ? nl : 1], *ml[nl > 0 ? nl : 1];
    for (int t = 0; t < nl; t++) {
        tl[t] = m->tls[t].tree_log;
        ml[t] = m->tls[t].map_log;
    }
    if (oplog_replay_check(tl, nl, (uint64_t)m->keys, m->init_tree, m->ninit_tree, tree, ntree,
                           "tree", msg, msglen) != 0)
        return -1;
    return oplog_replay_check(ml, nl, (uint64_t)m->keys, m->init_map, m->ninit_map, map, nmap,
                              "map", msg, msglen);
}

int cm_check_bank(const struct cm_common *m, int nthreads, const long *balance, uint64_t count,
                  uint64_t sum, char *msg, size_t msglen)
{
    int nl = nthreads < m->nthreads ? nthreads : m->nthreads;
    uint64_t transfers = 0;
    for (int t = 0; t < nl; t++)
        transfers += m->tls[t].transfers;
    long total = 0;
    uint64_t wsum = 0;
    for (long a = 0; a < m->accounts; a++) {
        long want = BANK_INITIAL_BALANCE;
        for (int t = 0; t < nl; t++)
            want += m->tls[t].net[a];
        if (balance[a] != want) {
            snprintf(msg, msglen, "compose: account %ld holds %ld after the run; its opening "
                     "balance and the committed transfers make %ld", a, balance[a], want);
            return -1;
        }
        total += balance[a];
        wsum += m->weight[a] * (uint64_t)balance[a];
    }
    if (count != transfers) {
        snprintf(msg, msglen, "compose: the ledger holds %" PRIu64 " records after the run, "
                 "but %" PRIu64 " transfers committed", count, transfers);
        return -1;
    }
    if (total != m->total) {
        snprintf(msg, msglen, "compose: total not conserved: %ld after the run, expected %ld",
                 total, m->total);
        return -1;
    }
    if (wsum != m->base + sum) {
        snprintf(msg, msglen, "compose: after the run the ledger's sum does not account for "
                 "the balances");
        return -1;
    }
    return 0;
}

int cm_check_ledger(const struct cm_common *m, uint64_t count, const struct cm_record *rec,
                    char *msg, size_t msglen)
{
    uint64_t first = count > m->nledger ? count - m->nledger : 0;
    for (uint64_t s = first; s < count; s++) {
        const struct cm_record *r = &rec[s % m->nledger];
        if (r->seq != s) {
            snprintf(msg, msglen, "compose: ledger slot %" PRIu64 " holds record %" PRIu64
                     ", expected %" PRIu64, s % m->nledger, r->seq, s);
            return -1;
        }
        if (r->from < 0 || r->from >= m->accounts || r->to < 0 || r->to >= m->accounts ||
            r->from == r->to || r->amount < 1 || r->amount > (long)BANK_MAX_AMOUNT) {
            snprintf(msg, msglen, "compose: ledger record %" PRIu64 " is not a transfer "
                     "(from %ld to %ld, amount %ld)", s, r->from, r->to, r->amount);
            return -1;
        }
    }
    return 0;
}
