/*
 * workloads/rbtree.h - internals of the rbtree workload shared by its two files
 * (rbtree.c, compiled per runtime, and rbtree_locks.c) and by tests/test_rbtree.c:
 * the knobs, their validation, and the generic version's object layout. Include it
 * after runtime/sync.h (the layout uses SYNC_REF).
 */
#ifndef WL_RBTREE_H
#define WL_RBTREE_H

#include "runtime/sync.h"
#include "workloads/workload.h"
#include "workloads/lib/oplog.h"

#include <stdio.h>

enum { RB_KNOB_SIZE, RB_KNOB_RANGE, RB_KNOB_UPDATE, RB_NKNOBS };

#define RB_MAX_SIZE (1l << 24)
#define RB_MAX_RANGE (1l << 40)

static const struct wl_knob rb_knobs[RB_NKNOBS] __attribute__((unused)) = {
    [RB_KNOB_SIZE] = { "size", WL_KNOB_INT, 1024, 0, RB_MAX_SIZE, NULL,
                       "keys in the tree at the start" },
    [RB_KNOB_RANGE] = { "range", WL_KNOB_INT, 0, 0, RB_MAX_RANGE, NULL,
                        "keys are drawn from [0, range); 0 means 2 x size; must be >= size" },
    [RB_KNOB_UPDATE] = { "update", WL_KNOB_INT, 20, 0, 100, NULL,
                         "percent of operations that update (half insert, half delete); "
                         "the rest are lookups" },
};

/* The effective key range: --range, or 2 x --size when it is 0 (at least 1). */
static inline long rb_range(const struct wl_args *a)
{
    long r = a->ival[RB_KNOB_RANGE];
    if (r == 0)
        r = 2 * a->ival[RB_KNOB_SIZE];
    return r > 0 ? r : 1;
}

static inline int rb_validate_args(const struct wl_args *a, char *err, size_t errlen)
{
    if (rb_range(a) < a->ival[RB_KNOB_SIZE]) {
        snprintf(err, errlen, "--range %ld is smaller than --size %ld: the initial keys must "
                 "be distinct keys of [0, range), so range must be >= size",
                 a->ival[RB_KNOB_RANGE], a->ival[RB_KNOB_SIZE]);
        return -1;
    }
    return 0;
}

/* Operation kinds; the site of a block is its first operation's. */
enum { RB_OP_LOOKUP, RB_OP_INSERT, RB_OP_DELETE };

/* ---- the generic version (rbtree.c) ---- */

struct rb_node;
typedef SYNC_REF(struct rb_node) rb_ref;

/* A node: a standard red-black tree node with a parent reference. link[0] is the left
 * child, link[1] the right one. */
struct rb_node {
    SYNC_OBJECT_HEADER;
    int64_t key;
    rb_ref link[2];
    rb_ref parent;
    int32_t red;
};

/* The tree object: the only shared state besides the nodes. */
struct rb_tree {
    SYNC_OBJECT_HEADER;
    rb_ref root;
};
typedef SYNC_REF(struct rb_tree) rb_tree_ref;

/* A thread's private buffers: the ops of the next block and their results (written
 * by every run of the block, read after it committed), and its operation log. */
struct rb_tls {
    int64_t *key;
    uint8_t *kind;
    uint8_t *res;
    struct oplog *log;
} SYNC_CL_ALIGNED;

struct rb_ctx {
    rb_tree_ref tree;
    long size, range, update, ops_per_tx;
    int nthreads;
    struct rb_tls *tls;          /* [nthreads] */
    int64_t *initial;            /* the keys after setup, sorted */
    size_t ninitial;
};

#endif
