/*
 * workloads/hashmap.h - internals of the hashmap workload shared by hashmap.c
 * (compiled per runtime), hashmap_locks.c and tests/test_hashmap.c: knobs, their
 * validation, and the generic version's object layout. Include after runtime/sync.h.
 */
#ifndef WL_HASHMAP_H
#define WL_HASHMAP_H

#include "runtime/sync.h"
#include "workloads/workload.h"
#include "workloads/lib/oplog.h"
#include "workloads/lib/wl_keys.h"

#include <stdio.h>

enum { HM_KNOB_SIZE, HM_KNOB_RANGE, HM_KNOB_UPDATE, HM_KNOB_BUCKETS, HM_NKNOBS };

#define HM_MAX_SIZE (1l << 24)
#define HM_MAX_RANGE (1l << 40)
#define HM_MAX_BUCKETS (1l << 22)

static const struct wl_knob hm_knobs[HM_NKNOBS] __attribute__((unused)) = {
    [HM_KNOB_SIZE] = { "size", WL_KNOB_INT, 1024, 0, HM_MAX_SIZE, NULL,
                       "keys in the map at the start" },
    [HM_KNOB_RANGE] = { "range", WL_KNOB_INT, 0, 0, HM_MAX_RANGE, NULL,
                        "keys are drawn from [0, range); 0 means 2 x size; must be >= size" },
    [HM_KNOB_UPDATE] = { "update", WL_KNOB_INT, 20, 0, 100, NULL,
                         "percent of operations that update (half insert, half delete); "
                         "the rest are lookups" },
    [HM_KNOB_BUCKETS] = { "buckets", WL_KNOB_INT, 1024, 1, HM_MAX_BUCKETS, NULL,
                          "hash buckets (chains); 1 puts every key in one chain" },
};

static inline long hm_range(const struct wl_args *a)
{
    long r = a->ival[HM_KNOB_RANGE];
    if (r == 0)
        r = 2 * a->ival[HM_KNOB_SIZE];
    return r > 0 ? r : 1;
}

static inline int hm_validate_args(const struct wl_args *a, char *err, size_t errlen)
{
    if (hm_range(a) < a->ival[HM_KNOB_SIZE]) {
        snprintf(err, errlen, "--range %ld is smaller than --size %ld: the initial keys must "
                 "be distinct keys of [0, range), so range must be >= size",
                 a->ival[HM_KNOB_RANGE], a->ival[HM_KNOB_SIZE]);
        return -1;
    }
    return 0;
}

/* The bucket of a key: a mixed hash reduced onto [0, nbuckets). */
static inline uint64_t hm_bucket_of(int64_t key, uint64_t nbuckets)
{
    return wl_reduce(wl_key_hash((uint64_t)key), nbuckets);
}

enum { HM_OP_LOOKUP, HM_OP_INSERT, HM_OP_DELETE };

/* Sorts the n keys a walk of a map collected and checks that none is there twice (H2):
 * 0, or -1 with the key in msg. Runtime-independent: every variant's check uses it. */
static inline int hm_keys_sort_unique(int64_t *keys, size_t n, char *msg, size_t msglen)
{
    oplog_sort_keys(keys, n);
    for (size_t i = 1; i < n; i++)
        if (keys[i] == keys[i - 1]) {
            snprintf(msg, msglen, "key %lld is in the map twice", (long long)keys[i]);
            return -1;
        }
    return 0;
}

/* ---- the generic version (hashmap.c) ---- */

struct hm_node;
typedef SYNC_REF(struct hm_node) hm_ref;

struct hm_node {
    SYNC_OBJECT_HEADER;
    int64_t key;
    hm_ref next;
};

/* One chain head per object, so that updates of different chains never touch the
 * same object (under stm: no false conflicts between buckets). */
struct hm_bucket {
    SYNC_OBJECT_HEADER;
    hm_ref head;
};
typedef SYNC_REF(struct hm_bucket) hm_bucket_ref;

struct hm_tls {
    int64_t *key;
    uint8_t *kind;
    uint8_t *res;
    struct oplog *log;
} SYNC_CL_ALIGNED;

struct hm_ctx {
    /* The bucket references: written in setup, then only read (so plain memory
     * needs no barrier); the buckets themselves are shared heap objects. */
    hm_bucket_ref *buckets;
    uint64_t nbuckets;
    long size, range, update, ops_per_tx;
    int nthreads;
    struct hm_tls *tls;
    int64_t *initial;
    size_t ninitial;
    struct wl_refidx *byref;    /* conflict analysis: buckets sorted by reference (lazily) */
};

#endif
