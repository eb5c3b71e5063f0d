/*
 * workloads/rbtree.c - a red-black tree of integer keys (lookup, insert, delete),
 * written once against runtime/sync.h and compiled for seq, mutex, gil and stm.
 * The fine-grained `locks` variant is rbtree_locks.c.
 *
 * Shared state: one tree object (the root reference) and the nodes; nothing else is
 * shared. Every access to them happens inside a SYNC_ATOMIC block, with SYNC_READ
 * before reading an object's fields and SYNC_WRITE before writing them. The tree is
 * the textbook bottom-up red-black tree with parent references (insert and delete
 * fix-ups by recolouring and rotation); the root colour is written only when it has
 * to change, so a block writes nothing it does not need to.
 *
 * Invariants (checked after the run by rbtree_check):
 *   R1 the root is black;            R2 no red node has a red child;
 *   R3 every root-to-null path has the same number of black nodes;
 *   R4 keys strictly increase in order (a BST, no duplicates);
 *   R5 every child's parent reference names its parent, the root's is null;
 *   R6 the key set equals the initial set plus the committed successful inserts minus
 *      the committed successful deletes (workloads/lib/oplog.c).
 *
 * Blocks under stm may run several times. A block reads its operations from the
 * thread's buffers (filled before the block) and writes each result into them;
 * every run overwrites all results, so the values read after the block are those of
 * the run that committed, and only then are they appended to the thread's log.
 */
#include "workloads/rbtree.h"

#include "runtime/sync.h"
#include "workloads/lib/oplog.h"
#include "workloads/lib/wl_keys.h"
#include "workloads/workload.h"

#include <stdlib.h>
#include <string.h>

static const char *const rb_site[] = {
    [RB_OP_LOOKUP] = "rbtree.lookup",
    [RB_OP_INSERT] = "rbtree.insert",
    [RB_OP_DELETE] = "rbtree.delete",
};

/* ------------------------------------------------------------ the tree (in blocks) */

static inline int rb_is_red(rb_ref n)
{
    if (n == SYNC_NULL)
        return 0;
    SYNC_READ(n);
    return n->red;
}

/* Rotates x down to side d: its child on side !d takes its place. */
static void rb_rotate(rb_tree_ref tree, rb_ref x, int d)
{
    SYNC_WRITE(x);
    rb_ref y = x->link[!d];
    SYNC_WRITE(y);
    rb_ref b = y->link[d];
    x->link[!d] = b;
    if (b != SYNC_NULL) {
        SYNC_WRITE(b);
        b->parent = x;
    }
    rb_ref xp = x->parent;
    y->parent = xp;
    if (xp == SYNC_NULL) {
        SYNC_WRITE(tree);
        tree->root = y;
    } else {
        SYNC_WRITE(xp);
        xp->link[xp->link[1] == x] = y;
    }
    y->link[d] = x;
    x->parent = y;
}

static int rb_lookup(rb_tree_ref tree, int64_t key)
{
    SYNC_READ(tree);
    rb_ref n = tree->root;
    while (n != SYNC_NULL) {
        SYNC_READ(n);
        if (key == n->key)
            return 1;
        n = n->link[n->key < key];
    }
    return 0;
}

static void rb_blacken_root(rb_tree_ref tree)
{
    SYNC_READ(tree);
    rb_ref r = tree->root;
    if (rb_is_red(r)) {
        SYNC_WRITE(r);
        r->red = 0;
    }
}

static int rb_insert(rb_tree_ref tree, int64_t key)
{
    SYNC_READ(tree);
    rb_ref p = SYNC_NULL, n = tree->root;
    int d = 0;
    while (n != SYNC_NULL) {
        SYNC_READ(n);
        if (key == n->key)
            return 0;
        d = n->key < key;
        p = n;
        n = n->link[d];
    }
    rb_ref z = SYNC_ALLOC(struct rb_node);   /* zeroed; new in this block: no barrier */
    z->key = key;
    z->parent = p;
    z->red = 1;
    if (p == SYNC_NULL) {
        SYNC_WRITE(tree);
        tree->root = z;
    } else {
        SYNC_WRITE(p);
        p->link[d] = z;
    }
    /* Fix-up: z is red; while its parent is red too, recolour or rotate. */
    for (;;) {
        SYNC_READ(z);
        p = z->parent;
        if (!rb_is_red(p))
            break;
        rb_ref g = p->parent;          /* p is red, so not the root: g exists */
        SYNC_READ(g);
        d = g->link[1] == p;           /* p is g's child on side d */
        rb_ref u = g->link[!d];
        if (rb_is_red(u)) {
            SYNC_WRITE(p);
            p->red = 0;
            SYNC_WRITE(u);
            u->red = 0;
            SYNC_WRITE(g);
            g->red = 1;
            z = g;
            continue;
        }
        if (p->link[!d] == z) {        /* inner grandchild: make it outer */
            rb_rotate(tree, p, d);
            z = p;
            SYNC_READ(z);
            p = z->parent;
        }
        SYNC_WRITE(p);
        p->red = 0;
        SYNC_WRITE(g);
        g->red = 1;
        rb_rotate(tree, g, !d);
        break;
    }
    rb_blacken_root(tree);
    return 1;
}

/* x (maybe null) on side d of xp carries an extra black: push it up or resolve it. */
static void rb_delete_fixup(rb_tree_ref tree, rb_ref x, rb_ref xp, int d)
{
    for (;;) {
        SYNC_READ(tree);
        if (x == tree->root || rb_is_red(x))
            break;
        SYNC_READ(xp);
        rb_ref w = xp->link[!d];       /* non-null: its side has black height >= 1 */
        SYNC_READ(w);
        if (w->red) {
            SYNC_WRITE(w);
            w->red = 0;
            SYNC_WRITE(xp);
            xp->red = 1;
            rb_rotate(tree, xp, d);
            SYNC_READ(xp);
            w = xp->link[!d];
            SYNC_READ(w);
        }
        if (!rb_is_red(w->link[0]) && !rb_is_red(w->link[1])) {
            SYNC_WRITE(w);
            w->red = 1;
            x = xp;
            SYNC_READ(x);
            xp = x->parent;
            if (xp != SYNC_NULL) {
                SYNC_READ(xp);
                d = xp->link[1] == x;
            }
            continue;
        }
        if (!rb_is_red(w->link[!d])) { /* near nephew red, far one black: rotate w */
            rb_ref near = w->link[d];
            SYNC_WRITE(near);
            near->red = 0;
            SYNC_WRITE(w);
            w->red = 1;
            rb_rotate(tree, w, !d);
            SYNC_READ(xp);
            w = xp->link[!d];
            SYNC_READ(w);
        }
        SYNC_WRITE(w);
        w->red = xp->red;
        SYNC_WRITE(xp);
        xp->red = 0;
        rb_ref far = w->link[!d];
        SYNC_WRITE(far);
        far->red = 0;
        rb_rotate(tree, xp, d);
        SYNC_READ(tree);
        x = tree->root;
        break;
    }
    if (rb_is_red(x)) {
        SYNC_WRITE(x);
        x->red = 0;
    }
}

static int rb_delete(rb_tree_ref tree, int64_t key)
{
    SYNC_READ(tree);
    rb_ref z = tree->root;
    while (z != SYNC_NULL) {
        SYNC_READ(z);
        if (key == z->key)
            break;
        z = z->link[z->key < key];
    }
    if (z == SYNC_NULL)
        return 0;
    /* y: the node actually unlinked (z, or z's successor when z has two children). */
    rb_ref y = z;
    if (z->link[0] != SYNC_NULL && z->link[1] != SYNC_NULL) {
        y = z->link[1];
        SYNC_READ(y);
        while (y->link[0] != SYNC_NULL) {
            y = y->link[0];
            SYNC_READ(y);
        }
    }
    rb_ref x = y->link[0] != SYNC_NULL ? y->link[0] : y->link[1];
    rb_ref xp = y->parent;
    int d = 0;
    if (x != SYNC_NULL) {
        SYNC_WRITE(x);
        x->parent = xp;
    }
    if (xp == SYNC_NULL) {
        SYNC_WRITE(tree);
        tree->root = x;
    } else {
        SYNC_WRITE(xp);
        d = xp->link[1] == y;
        xp->link[d] = x;
    }
    if (y != z) {
        SYNC_WRITE(z);
        z->key = y->key;
    }
    int was_black = !y->red;
    SYNC_FREE(y);
    if (was_black)
        rb_delete_fixup(tree, x, xp, d);
    return 1;
}

static SYNC_NOINLINE int rb_op(rb_tree_ref tree, int kind, int64_t key)
{
    switch (kind) {
    case RB_OP_INSERT:
        return rb_insert(tree, key);
    case RB_OP_DELETE:
        return rb_delete(tree, key);
    default:
        return rb_lookup(tree, key);
    }
}

/* ------------------------------------------------------------ the workload */

static int rbtree_validate(const struct wl_args *a, char *err, size_t errlen)
{
    return rb_validate_args(a, err, errlen);
}

static void rbtree_teardown(void *vctx);

/* Frees every node of the subtree (teardown: no other thread runs). */
static void rb_free_subtree(rb_ref n)
{
    while (n != SYNC_NULL) {
        SYNC_READ(n);
        rb_free_subtree(n->link[0]);
        rb_ref r = n->link[1];
        SYNC_FREE(n);
        n = r;
    }
}

static void *rbtree_setup(const struct wl_args *a, char *err, size_t errlen)
{
    struct rb_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory for the rbtree context");
        return NULL;
    }
    c->size = a->ival[RB_KNOB_SIZE];
    c->range = rb_range(a);
    c->update = a->ival[RB_KNOB_UPDATE];
    c->ops_per_tx = a->ops_per_tx;            /* WL_LEN_AUTO: adaptive */
    long bufn = a->ops_per_tx > 0 ? a->ops_per_tx : WL_TXLEN_MAX_OPS;
    c->nthreads = a->nthreads;
    c->tls = aligned_alloc(SYNC_CACHELINE, (size_t)c->nthreads * sizeof *c->tls);
    c->initial = malloc(((size_t)c->size + 1) * sizeof *c->initial);
    if (!c->tls || !c->initial) {
        free(c->tls);
        free(c->initial);
        free(c);
        snprintf(err, errlen, "out of memory for %ld initial keys", a->ival[RB_KNOB_SIZE]);
        return NULL;
    }
    memset(c->tls, 0, (size_t)c->nthreads * sizeof *c->tls);
    for (int i = 0; i < c->nthreads; i++) {
        struct rb_tls *b = &c->tls[i];
        b->key = sync_private_alloc((size_t)bufn * sizeof *b->key);
        b->kind = sync_private_alloc((size_t)bufn);
        b->res = sync_private_alloc((size_t)bufn);
        b->log = oplog_new((uint64_t)c->range);
        if (!b->key || !b->kind || !b->res || !b->log) {
            rbtree_teardown(c);
            snprintf(err, errlen, "out of memory for thread %d's buffers", i);
            return NULL;
        }
    }
    if (wl_sample_keys(a->seed, (size_t)c->size, (uint64_t)c->range, c->initial) != 0) {
        rbtree_teardown(c);
        snprintf(err, errlen, "out of memory sampling %ld initial keys", c->size);
        return NULL;
    }
    SYNC_ATOMIC("rbtree.setup") {
        c->tree = SYNC_ALLOC(struct rb_tree);
    }
    /* Insert in blocks of 64 keys, so no transaction grows with --size. */
    for (long i = 0; i < c->size; i += 64) {
        long end = i + 64 < c->size ? i + 64 : c->size;
        SYNC_ATOMIC("rbtree.setup") {
            for (long j = i; j < end; j++)
                rb_insert(c->tree, c->initial[j]);
        }
    }
    c->ninitial = (size_t)c->size;
    oplog_sort_keys(c->initial, c->ninitial);
    return c;
}

static uint64_t rb_block(struct rb_ctx *c, struct wl_thread *t)
{
    long k = wl_batch(t, t->tx_len);
    if (k <= 0)
        return 0;
    struct rb_tls *b = &c->tls[t->tid];
    for (long i = 0; i < k; i++) {
        uint64_t r = wl_rand_below(t, 200);
        b->kind[i] = r < (uint64_t)c->update ? RB_OP_INSERT
                   : r < 2 * (uint64_t)c->update ? RB_OP_DELETE : RB_OP_LOOKUP;
        b->key[i] = (int64_t)wl_rand_below(t, (uint64_t)c->range);
    }
    rb_tree_ref tree = c->tree;
    SYNC_ATOMIC(rb_site[b->kind[0]]) {
        for (long i = 0; i < k; i++)
            b->res[i] = (uint8_t)rb_op(tree, b->kind[i], b->key[i]);
    }
    /* The block committed: its results are final; log the successful updates. */
    for (long i = 0; i < k; i++)
        if (b->res[i] && b->kind[i] != RB_OP_LOOKUP)
            oplog_record(b->log, (uint64_t)b->key[i], b->kind[i] == RB_OP_INSERT ? 1 : -1);
    WL_TXLEN_AFTER(t, (uint64_t)k);
    return (uint64_t)k;
}

static void rbtree_thread_run(void *vctx, struct wl_thread *t)
{
    struct rb_ctx *c = vctx;
    wl_txlen_init(t, c->ops_per_tx, 1, WL_TXLEN_MAX_OPS);
    WL_LOOP(c, t, rb_block);
}

/* What the check learns walking the tree. */
struct rb_walk {
    int64_t *keys;
    size_t n, cap;
    char *msg;
    size_t msglen;
    int bad;
};

/* Checks R2-R5 below n (whose parent is `parent`); returns the black height of n's
 * subtree (null counts 1), -1 once a violation has been recorded in w. */
static long rb_check_node(rb_ref n, rb_ref parent, int parent_red, struct rb_walk *w)
{
    if (n == SYNC_NULL)
        return 1;
    SYNC_READ(n);
    if (n->parent != parent) {
        snprintf(w->msg, w->msglen, "node with key %lld has a wrong parent reference",
                 (long long)n->key);
        return -1;
    }
    if (n->red && parent_red) {
        snprintf(w->msg, w->msglen, "red node with key %lld has a red parent (red-red)",
                 (long long)n->key);
        return -1;
    }
    long lh = rb_check_node(n->link[0], n, n->red, w);
    if (lh < 0)
        return -1;
    if (w->n > 0 && w->keys[w->n - 1] >= n->key) {
        snprintf(w->msg, w->msglen, "keys out of order: %lld comes after %lld in order "
                 "(not a search tree, or a duplicate)", (long long)n->key,
                 (long long)w->keys[w->n - 1]);
        return -1;
    }
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 1024;
        int64_t *k = realloc(w->keys, cap * sizeof *k);
        if (!k) {
            snprintf(w->msg, w->msglen, "out of memory collecting the tree's keys");
            return -1;
        }
        w->keys = k;
        w->cap = cap;
    }
    w->keys[w->n++] = n->key;
    long rh = rb_check_node(n->link[1], n, n->red, w);
    if (rh < 0)
        return -1;
    if (lh != rh) {
        snprintf(w->msg, w->msglen, "unequal black heights under key %lld: %ld on the left, "
                 "%ld on the right", (long long)n->key, lh - 1, rh - 1);
        return -1;
    }
    return lh + !n->red;
}

static int rbtree_check(void *vctx, struct wl_thread *threads, int nthreads, char *msg,
                        size_t msglen)
{
    struct rb_ctx *c = vctx;
    struct rb_walk walk = { .msg = msg, .msglen = msglen }, *w = &walk;
    (void)threads;
    SYNC_ATOMIC("rbtree.check") {
        w->n = 0;
        w->bad = 0;
        SYNC_READ(c->tree);
        rb_ref root = c->tree->root;
        if (rb_is_red(root)) {
            snprintf(msg, msglen, "the root is red");
            w->bad = 1;
        } else if (rb_check_node(root, SYNC_NULL, 0, w) < 0) {
            w->bad = 1;
        }
    }
    int rc = -1;
    if (!walk.bad) {
        struct oplog *logs[nthreads > 0 ? nthreads : 1];
        int nl = nthreads < c->nthreads ? nthreads : c->nthreads;
        for (int i = 0; i < nl; i++)
            logs[i] = c->tls[i].log;
        rc = oplog_replay_check(logs, nl, (uint64_t)c->range, c->initial, c->ninitial,
                                walk.keys, walk.n, "tree", msg, msglen);
    }
    free(walk.keys);
    return rc;
}

static void rbtree_teardown(void *vctx)
{
    struct rb_ctx *c = vctx;
    if (!c)
        return;
    if (c->tree != SYNC_NULL) {
        SYNC_ATOMIC("rbtree.teardown") {
            SYNC_READ(c->tree);
            rb_free_subtree(c->tree->root);
            SYNC_FREE(c->tree);
        }
    }
    for (int i = 0; i < c->nthreads; i++) {
        free(c->tls[i].key);
        free(c->tls[i].kind);
        free(c->tls[i].res);
        oplog_free(c->tls[i].log);
    }
    free(c->tls);
    free(c->initial);
    free(c);
}

WORKLOAD_EXPORT(rbtree, SYNC_RT_ID) = {
    .name = "rbtree",
    .runtime = SYNC_RT_NAME,
    .summary = "red-black tree of integer keys: lookup, insert, delete",
    .knobs = rb_knobs,
    .nknobs = RB_NKNOBS,
    .validate = rbtree_validate,
    .setup = rbtree_setup,
    .thread_run = rbtree_thread_run,
    .check = rbtree_check,
    .teardown = rbtree_teardown,
    .tx_adaptive = WL_TX_ADAPTIVE,
};
