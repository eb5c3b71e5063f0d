/*
 * workloads/lib/oplog.c - operation logs and the replay check (see oplog.h).
 * Runtime-independent: touches only thread-private memory and, in the check, the
 * logs of threads that have been joined.
 */
#include "workloads/lib/oplog.h"
#include "runtime/common.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPLOG_SPARSE_INIT 4096

struct oplog *oplog_new(uint64_t range)
{
    /* Written at every committed update: on lines of its own (see sync_private_alloc) */
    struct oplog *l = sync_private_alloc(sizeof *l);
    if (!l)
        return NULL;
    l->range = range;
    if (range <= OPLOG_DENSE_MAX) {
        l->net = sync_private_alloc((range ? range : 1) * sizeof *l->net);
        if (!l->net) {
            free(l);
            return NULL;
        }
    } else {
        l->cap = OPLOG_SPARSE_INIT;
        l->ent = sync_private_alloc(l->cap * sizeof *l->ent);
        if (!l->ent) {
            free(l);
            return NULL;
        }
    }
    return l;
}

void oplog_free(struct oplog *l)
{
    if (!l)
        return;
    free(l->net);
    free(l->ent);
    free(l);
}

static int oplog_ent_cmp(const void *a, const void *b)
{
    uint64_t x = ((const struct oplog_ent *)a)->key, y = ((const struct oplog_ent *)b)->key;
    return (x > y) - (x < y);
}

/* Sorts ent[0..n) by key and merges equal keys, dropping zero nets; returns the new n. */
static size_t oplog_compact(struct oplog_ent *ent, size_t n)
{
    if (n == 0)
        return 0;
    qsort(ent, n, sizeof *ent, oplog_ent_cmp);
    size_t out = 0;
    for (size_t i = 0; i < n;) {
        uint64_t k = ent[i].key;
        int64_t net = 0;
        for (; i < n && ent[i].key == k; i++)
            net += ent[i].net;
        if (net != 0) {
            ent[out].key = k;
            ent[out].net = net;
            out++;
        }
    }
    return out;
}

void _oplog_append_slow(struct oplog *l, uint64_t key, int delta)
{
    l->n = oplog_compact(l->ent, l->n);
    if (l->n > l->cap / 2) {
        /* Still more than half full after merging: grow, so compaction stays amortised. */
        struct oplog_ent *e = sync_private_alloc(2 * l->cap * sizeof *e);
        if (!e)
            sync_out_of_resources("oplog: out of memory for %zu log entries", 2 * l->cap);
        memcpy(e, l->ent, l->n * sizeof *e);
        free(l->ent);
        l->ent = e;
        l->cap *= 2;
    }
    l->ent[l->n].key = key;
    l->ent[l->n].net = delta;
    l->n++;
}

static int oplog_i64_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void oplog_sort_keys(int64_t *keys, size_t n)
{
    if (n > 1)
        qsort(keys, n, sizeof *keys, oplog_i64_cmp);
}

static int oplog_check_sorted(const int64_t *k, size_t n, uint64_t range, const char *which,
                              const char *what, char *msg, size_t msglen)
{
    for (size_t i = 0; i < n; i++) {
        if (k[i] < 0 || (uint64_t)k[i] >= range) {
            snprintf(msg, msglen, "%s key %" PRId64 " of the %s is outside [0, %" PRIu64 ")",
                     which, k[i], what, range);
            return -1;
        }
        if (i > 0 && k[i] <= k[i - 1]) {
            snprintf(msg, msglen, "%s keys of the %s are not strictly increasing at %" PRId64
                     " after %" PRId64 " (duplicate or misordered key)", which, what, k[i], k[i - 1]);
            return -1;
        }
    }
    return 0;
}

/* Gathers every log's nonzero per-key totals into one sorted, merged array. */
static struct oplog_ent *oplog_gather(struct oplog *const *logs, int nlogs, uint64_t range,
                                      size_t *nout)
{
    size_t total = 0;
    int dense = range <= OPLOG_DENSE_MAX;
    struct oplog_ent *all;
    if (dense) {
        size_t nz = 0;
        for (uint64_t k = 0; k < range; k++) {
            int64_t s = 0;
            for (int i = 0; i < nlogs; i++)
                s += logs[i]->net[k];
            nz += s != 0;
        }
        all = malloc((nz ? nz : 1) * sizeof *all);
        if (!all)
            return NULL;
        for (uint64_t k = 0; k < range; k++) {
            int64_t s = 0;
            for (int i = 0; i < nlogs; i++)
                s += logs[i]->net[k];
            if (s != 0) {
                all[total].key = k;
                all[total].net = s;
                total++;
            }
        }
        *nout = total;
        return all;
    }
    for (int i = 0; i < nlogs; i++)
        total += logs[i]->n;
    all = malloc((total ? total : 1) * sizeof *all);
    if (!all)
        return NULL;
    size_t at = 0;
    for (int i = 0; i < nlogs; i++) {
        memcpy(all + at, logs[i]->ent, logs[i]->n * sizeof *all);
        at += logs[i]->n;
    }
    *nout = oplog_compact(all, at);
    return all;
}

int oplog_replay_check(struct oplog *const *logs, int nlogs, uint64_t range,
                       const int64_t *initial, size_t ninitial,
                       const int64_t *final, size_t nfinal,
                       const char *what, char *msg, size_t msglen)
{
    if (oplog_check_sorted(initial, ninitial, range, "initial", what, msg, msglen) != 0 ||
        oplog_check_sorted(final, nfinal, range, "final", what, msg, msglen) != 0)
        return -1;
    size_t nd = 0;
    struct oplog_ent *d = oplog_gather(logs, nlogs, range, &nd);
    if (!d) {
        snprintf(msg, msglen, "out of memory replaying the operation logs");
        return -1;
    }
    /* Merge-walk the three sorted sequences; every key that appears in one is judged. */
    size_t i = 0, f = 0, j = 0;
    int rc = 0;
    while (i < ninitial || f < nfinal || j < nd) {
        uint64_t k = UINT64_MAX;
        if (i < ninitial && (uint64_t)initial[i] < k)
            k = (uint64_t)initial[i];
        if (f < nfinal && (uint64_t)final[f] < k)
            k = (uint64_t)final[f];
        if (j < nd && d[j].key < k)
            k = d[j].key;
        int init = i < ninitial && (uint64_t)initial[i] == k;
        int fin = f < nfinal && (uint64_t)final[f] == k;
        int64_t net = (j < nd && d[j].key == k) ? d[j].net : 0;
        i += init;
        f += fin;
        j += j < nd && d[j].key == k;
        int64_t implied = init + net;
        if (implied != 0 && implied != 1) {
            snprintf(msg, msglen, "key %" PRIu64 ": initially %s, committed successful inserts "
                     "minus deletes = %+" PRId64 ", which no serial order of the operations can give",
                     k, init ? "present" : "absent", net);
            rc = -1;
            break;
        }
        if (implied != fin) {
            snprintf(msg, msglen, "key %" PRIu64 " is %s the %s, but the committed operations "
                     "imply it is %s (initially %s, inserts minus deletes %+" PRId64 ")",
                     k, fin ? "in" : "missing from", what, implied ? "present" : "absent",
                     init ? "present" : "absent", net);
            rc = -1;
            break;
        }
    }
    free(d);
    return rc;
}
