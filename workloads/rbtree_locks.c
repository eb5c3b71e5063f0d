/*
 * workloads/rbtree_locks.c - the rbtree workload with fine-grained locks: one spin
 * lock per node, lock coupling, and a top-down red-black tree that rebalances on the
 * way down, so an update holds a bounded window of locks and never walks back up.
 * (Why this scheme: docs/locks-schemes.md.)
 *
 * Structure. A head node H (never removed, no key) whose right link is the root;
 * nodes carry key, two child links, a colour and a lock; no parent links (a top-down
 * algorithm needs none, and a parent link would be a field that a rotation changes
 * in a node outside the window).
 *
 * Lock protocol (invariants):
 *   L1 A node's links, colour and key are read and written only by a thread that
 *      holds the node's lock (after the run, the check reads them single-threaded).
 *   L2 A thread locks H with nothing held, and otherwise locks only a child of a node
 *      it holds. (Tree locking, as in Silberschatz-Kedem.) Every thread's held nodes
 *      are a connected window of the tree, plus, for delete, the node f whose key it
 *      found, an ancestor of the window.
 *   L3 An update changes only links and colours of nodes it holds; rotations move
 *      subtrees between held nodes, so a child link read under L1 stays valid while
 *      its parent is held.
 *   L4 A node is freed only by the deleter that unlinked it while holding its parent
 *      and the node: any other thread that could reach it would have to hold the
 *      parent first (L2), so nobody holds, waits for, or later finds it.
 * Deadlock freedom: a waiter T holds parent(N) and waits for N, held by T'. T' does
 * not hold parent(N), so N is the top of T'’s window or T'’s f, and T'’s window lies
 * in N's subtree, strictly below T's window top. Along any chain of waits the window
 * tops get strictly deeper (the tree cannot change while they all wait), so there is
 * no cycle.
 *
 * Window sizes. Lookup: hand over hand, at most 2 locks. Insert (at node x): the
 * path t, g, p, x, x's child toward the key and, when that child is red, x's other
 * child (colour flip) - at most 6. Delete (at node q): g, p, q, q's two children,
 * q's sibling and its two children, and f - at most 9 (RBL_MAXHELD leaves spare).
 *
 * The top-down algorithms:
 *   insert: at each node x with two red children, flip colours (x red, children
 *     black); if x's parent is red, one single or double rotation at the grandparent
 *     fixes it (the parent's sibling is black: had both been red, the flip at the
 *     grandparent would have made them black). The new key goes in as a red leaf,
 *     fixed the same way. A red root is made black at once (H holds its lock).
 *   delete: keep the current node q red, or q's next node red, on the way down, by a
 *     rotation at q (a red child on the other side), a colour flip with q's sibling
 *     (both of the sibling's children black), or a single/double rotation at q's
 *     parent through the sibling (a red nephew). The key found on the way (f) takes
 *     the key of the last node on the path (its in-order predecessor), and that red
 *     (or lone) last node is unlinked.
 *
 * --ops-per-tx K: a thread still runs K operations per loop step, but each operation
 * is its own critical section: per-node locking gives no atomicity across operations.
 */
#include "workloads/rbtree.h"

#include "runtime/sync.h"
#include "workloads/lib/oplog.h"
#include "workloads/lib/wl_keys.h"
#include "workloads/lib/wl_spin.h"
#include "workloads/workload.h"

#include <stdlib.h>
#include <string.h>

struct rbl_node {
    SYNC_OBJECT_HEADER;
    int64_t key;
    struct rbl_node *link[2];
    wl_spin_t lock;
    int32_t red;
};

struct rbl_ctx {
    struct rbl_node *head;       /* H: head->link[1] is the root; head->link[0] stays null */
    long size, range, update, ops_per_tx;
    int nthreads;
    struct rb_tls *tls;          /* res/key/kind unused beyond one op; log used */
    int64_t *initial;
    size_t ninitial;
};

/* ------------------------------------------------------------ held locks and path */

#define RBL_MAXHELD 12
#define RBL_MAXPATH 6

struct rbl_held {
    struct rbl_node *n[RBL_MAXHELD];
    int cnt;
};

/* The actual chain of ancestors ending at the current node (a suffix of the path
 * from H), all held. */
struct rbl_path {
    struct rbl_node *n[RBL_MAXPATH];
    int cnt;
};

static inline int rbl_held_has(const struct rbl_held *h, const struct rbl_node *n)
{
    for (int i = 0; i < h->cnt; i++)
        if (h->n[i] == n)
            return 1;
    return 0;
}

static inline void rbl_hold(struct rbl_held *h, struct rbl_node *n)
{
    if (rbl_held_has(h, n))
        return;
    if (SYNC_UNLIKELY(h->cnt == RBL_MAXHELD))
        abort();                 /* the window bound above is broken: a bug */
    wl_spin_lock(&n->lock);
    h->n[h->cnt++] = n;
}

static inline void rbl_release_all(struct rbl_held *h)
{
    for (int i = 0; i < h->cnt; i++)
        wl_spin_unlock(&h->n[i]->lock);
    h->cnt = 0;
}

/* Keeps the last `keep` path entries; releases every held node not among them and not
 * `also` (delete's found node). */
static void rbl_trim(struct rbl_held *h, struct rbl_path *s, int keep, const struct rbl_node *also)
{
    if (s->cnt > keep) {
        memmove(s->n, s->n + (s->cnt - keep), (size_t)keep * sizeof s->n[0]);
        s->cnt = keep;
    }
    int out = 0;
    for (int i = 0; i < h->cnt; i++) {
        struct rbl_node *n = h->n[i];
        int kept = n == also;
        for (int j = 0; j < s->cnt && !kept; j++)
            kept = s->n[j] == n;
        if (kept)
            h->n[out++] = n;
        else
            wl_spin_unlock(&n->lock);
    }
    h->cnt = out;
}

static inline void rbl_push(struct rbl_path *s, struct rbl_node *n)
{
    if (s->cnt == RBL_MAXPATH) {
        memmove(s->n, s->n + 1, (RBL_MAXPATH - 1) * sizeof s->n[0]);
        s->cnt--;
    }
    s->n[s->cnt++] = n;
}

/* i-th entry from the top (0 = the current node); NULL past the bottom. */
static inline struct rbl_node *rbl_at(const struct rbl_path *s, int i)
{
    return i < s->cnt ? s->n[s->cnt - 1 - i] : NULL;
}

static inline int rbl_red(const struct rbl_node *n)
{
    return n && n->red;
}

/* ------------------------------------------------------------ operations */

static int rbl_lookup(struct rbl_ctx *c, int64_t key)
{
    struct rbl_node *cur = c->head;
    wl_spin_lock(&cur->lock);
    struct rbl_node *n = cur->link[1];
    int found = 0;
    while (n) {
        wl_spin_lock(&n->lock);      /* child of the held cur (L2) */
        wl_spin_unlock(&cur->lock);
        cur = n;
        if (n->key == key) {
            found = 1;
            break;
        }
        n = n->link[n->key < key];
    }
    wl_spin_unlock(&cur->lock);
    return found;
}

/* Path [.., t, g, p, x], x and p red (p is not the root, so g is a node and t exists):
 * one rotation at g fixes the red-red pair. Rewrites the path to the new chain. */
static void rbl_fix_red_red(struct rbl_path *s)
{
    struct rbl_node *x = rbl_at(s, 0), *p = rbl_at(s, 1), *g = rbl_at(s, 2), *t = rbl_at(s, 3);
    if (SYNC_UNLIKELY(!t))
        abort();                 /* window too short: a bug */
    int d = g->link[1] == p;
    int td = t->link[1] == g;
    s->cnt -= 3;                 /* pop g, p, x; t stays on top */
    if (p->link[d] == x) {       /* outer grandchild: single rotation, p comes up */
        g->link[d] = p->link[!d];
        p->link[!d] = g;
        t->link[td] = p;
        p->red = 0;
        g->red = 1;
        rbl_push(s, p);
        rbl_push(s, x);
    } else {                     /* inner grandchild: double rotation, x comes up */
        p->link[!d] = x->link[d];
        x->link[d] = p;
        g->link[d] = x->link[!d];
        x->link[!d] = g;
        t->link[td] = x;
        x->red = 0;
        g->red = 1;
        rbl_push(s, x);
    }
}

static int rbl_insert(struct rbl_ctx *c, int64_t key)
{
    struct rbl_held h = { .cnt = 0 };
    struct rbl_path s = { .cnt = 0 };
    struct rbl_node *head = c->head;
    int ret = 0;
    rbl_hold(&h, head);
    rbl_push(&s, head);
    for (;;) {
        struct rbl_node *x = rbl_at(&s, 0);
        int dir = 1;
        if (x != head) {
            if (x->key == key)
                break;           /* already present: ret = 0 */
            dir = x->key < key;
        }
        struct rbl_node *ch = x->link[dir];
        if (!ch) {
            struct rbl_node *n = SYNC_ALLOC(struct rbl_node);
            wl_spin_init(&n->lock);
            n->key = key;
            n->red = x != head;  /* the root is black */
            rbl_hold(&h, n);     /* unreachable until linked: never waits */
            x->link[dir] = n;
            rbl_push(&s, n);
            if (n->red && x->red)
                rbl_fix_red_red(&s);
            ret = 1;
            break;
        }
        rbl_hold(&h, ch);
        if (x != head && ch->red) {
            struct rbl_node *o = x->link[!dir];
            if (o) {
                rbl_hold(&h, o);
                if (o->red) {    /* colour flip */
                    x->red = 1;
                    ch->red = 0;
                    o->red = 0;
                    if (rbl_at(&s, 1) == head)
                        x->red = 0;                  /* x is the root */
                    else if (rbl_at(&s, 1)->red)
                        rbl_fix_red_red(&s);         /* may move x's children */
                    ch = x->link[dir];               /* held: ch, o or a rotated node */
                }
            }
        }
        rbl_push(&s, ch);
        rbl_trim(&h, &s, 4, NULL);
    }
    rbl_release_all(&h);
    return ret;
}

static int rbl_delete(struct rbl_ctx *c, int64_t key)
{
    struct rbl_held h = { .cnt = 0 };
    struct rbl_path s = { .cnt = 0 };
    struct rbl_node *head = c->head, *f = NULL;
    int dir = 1;
    rbl_hold(&h, head);
    rbl_push(&s, head);
    for (;;) {
        struct rbl_node *q = rbl_at(&s, 0);
        struct rbl_node *ch = q->link[dir];
        if (!ch)
            break;
        rbl_hold(&h, ch);
        rbl_push(&s, ch);
        rbl_trim(&h, &s, 3, f);
        int last = dir;
        q = ch;
        struct rbl_node *p = rbl_at(&s, 1);
        if (q->key == key)
            f = q;
        dir = q->key < key;      /* equal: go left, towards the predecessor */
        if (q->red)
            continue;
        struct rbl_node *cd = q->link[dir];
        if (cd) {
            rbl_hold(&h, cd);
            if (cd->red)
                continue;        /* the next node is red */
        }
        struct rbl_node *co = q->link[!dir];
        if (co)
            rbl_hold(&h, co);
        if (rbl_red(co)) {
            /* Rotate the red child up: q goes down on side dir and turns red. */
            q->link[!dir] = co->link[dir];
            co->link[dir] = q;
            p->link[last] = co;
            q->red = 1;
            co->red = 0;
            s.cnt--;
            rbl_push(&s, co);
            rbl_push(&s, q);
        } else if (p != head) {
            /* q and both its children black; p is red or the root. */
            struct rbl_node *sib = p->link[!last];
            if (SYNC_UNLIKELY(!sib))
                abort();         /* q black means its sibling's side has black nodes */
            rbl_hold(&h, sib);
            if (sib->link[0])
                rbl_hold(&h, sib->link[0]);
            if (sib->link[1])
                rbl_hold(&h, sib->link[1]);
            if (!rbl_red(sib->link[0]) && !rbl_red(sib->link[1])) {
                p->red = 0;      /* colour flip */
                sib->red = 1;
                q->red = 1;
            } else {
                struct rbl_node *g = rbl_at(&s, 2), *top;
                int d2 = g->link[1] == p;
                if (rbl_red(sib->link[last])) {      /* inner nephew: double rotation */
                    struct rbl_node *x = sib->link[last];
                    sib->link[last] = x->link[!last];
                    x->link[!last] = sib;
                    p->link[!last] = x->link[last];
                    x->link[last] = p;
                    top = x;
                } else {                             /* outer nephew: single rotation */
                    p->link[!last] = sib->link[last];
                    sib->link[last] = p;
                    top = sib;
                }
                g->link[d2] = top;
                q->red = 1;
                top->red = g != head;                /* a new root stays black */
                top->link[0]->red = 0;
                top->link[1]->red = 0;
                s.cnt -= 2;                          /* [.., g, p, q] -> [.., g, top, p, q] */
                rbl_push(&s, top);
                rbl_push(&s, p);
                rbl_push(&s, q);
            }
        }
    }
    int found = f != NULL;
    if (found) {
        struct rbl_node *q = rbl_at(&s, 0), *p = rbl_at(&s, 1);
        f->key = q->key;
        p->link[p->link[1] == q] = q->link[q->link[0] == NULL];
        /* Unlock and forget q, then free it (L4). */
        for (int i = 0; i < h.cnt; i++)
            if (h.n[i] == q) {
                wl_spin_unlock(&q->lock);
                h.n[i] = h.n[--h.cnt];
                break;
            }
        SYNC_FREE(q);
    }
    rbl_release_all(&h);
    return found;
}

static int rbl_op(struct rbl_ctx *c, int kind, int64_t key)
{
    switch (kind) {
    case RB_OP_INSERT:
        return rbl_insert(c, key);
    case RB_OP_DELETE:
        return rbl_delete(c, key);
    default:
        return rbl_lookup(c, key);
    }
}

/* ------------------------------------------------------------ the workload */

static int rbtree_locks_validate(const struct wl_args *a, char *err, size_t errlen)
{
    return rb_validate_args(a, err, errlen);
}

static void rbtree_locks_teardown(void *vctx);

static void *rbtree_locks_setup(const struct wl_args *a, char *err, size_t errlen)
{
    struct rbl_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory for the rbtree context");
        return NULL;
    }
    c->size = a->ival[RB_KNOB_SIZE];
    c->range = rb_range(a);
    c->update = a->ival[RB_KNOB_UPDATE];
    c->ops_per_tx = a->ops_per_tx > 0 ? a->ops_per_tx : 1;
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
        c->tls[i].log = oplog_new((uint64_t)c->range);
        if (!c->tls[i].log) {
            rbtree_locks_teardown(c);
            snprintf(err, errlen, "out of memory for thread %d's log", i);
            return NULL;
        }
    }
    if (wl_sample_keys(a->seed, (size_t)c->size, (uint64_t)c->range, c->initial) != 0) {
        rbtree_locks_teardown(c);
        snprintf(err, errlen, "out of memory sampling %ld initial keys", c->size);
        return NULL;
    }
    c->head = SYNC_ALLOC(struct rbl_node);
    wl_spin_init(&c->head->lock);
    for (long i = 0; i < c->size; i++)
        rbl_insert(c, c->initial[i]);
    c->ninitial = (size_t)c->size;
    oplog_sort_keys(c->initial, c->ninitial);
    return c;
}

static uint64_t rbl_block(struct rbl_ctx *c, struct wl_thread *t)
{
    long k = wl_batch(t, c->ops_per_tx);
    if (k <= 0)
        return 0;
    struct oplog *log = c->tls[t->tid].log;
    for (long i = 0; i < k; i++) {
        uint64_t r = wl_rand_below(t, 200);
        int kind = r < (uint64_t)c->update ? RB_OP_INSERT
                 : r < 2 * (uint64_t)c->update ? RB_OP_DELETE : RB_OP_LOOKUP;
        int64_t key = (int64_t)wl_rand_below(t, (uint64_t)c->range);
        /* Each operation is its own critical section; its result is final on return. */
        if (rbl_op(c, kind, key) && kind != RB_OP_LOOKUP)
            oplog_record(log, (uint64_t)key, kind == RB_OP_INSERT ? 1 : -1);
    }
    return (uint64_t)k;
}

static void rbtree_locks_thread_run(void *vctx, struct wl_thread *t)
{
    struct rbl_ctx *c = vctx;
    WL_LOOP(c, t, rbl_block);
}

struct rbl_walk {
    int64_t *keys;
    size_t n, cap;
    char *msg;
    size_t msglen;
};

/* Checks red-red, order, black heights and free locks below n; returns the black
 * height (null counts 1), -1 after recording a violation. Single-threaded. */
static long rbl_check_node(const struct rbl_node *n, int parent_red, struct rbl_walk *w)
{
    if (!n)
        return 1;
    if (atomic_load_explicit(&n->lock.v, memory_order_relaxed) != 0) {
        snprintf(w->msg, w->msglen, "node with key %lld is still locked after the run",
                 (long long)n->key);
        return -1;
    }
    if (n->red && parent_red) {
        snprintf(w->msg, w->msglen, "red node with key %lld has a red parent (red-red)",
                 (long long)n->key);
        return -1;
    }
    long lh = rbl_check_node(n->link[0], n->red, w);
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
    long rh = rbl_check_node(n->link[1], n->red, w);
    if (rh < 0)
        return -1;
    if (lh != rh) {
        snprintf(w->msg, w->msglen, "unequal black heights under key %lld: %ld on the left, "
                 "%ld on the right", (long long)n->key, lh - 1, rh - 1);
        return -1;
    }
    return lh + !n->red;
}

static int rbtree_locks_check(void *vctx, struct wl_thread *threads, int nthreads, char *msg,
                              size_t msglen)
{
    struct rbl_ctx *c = vctx;
    struct rbl_walk w = { .msg = msg, .msglen = msglen };
    (void)threads;
    int rc = -1;
    const struct rbl_node *root = c->head->link[1];
    if (atomic_load_explicit(&c->head->lock.v, memory_order_relaxed) != 0)
        snprintf(msg, msglen, "the head node is still locked after the run");
    else if (c->head->link[0])
        snprintf(msg, msglen, "the head node has a left child");
    else if (rbl_red(root))
        snprintf(msg, msglen, "the root is red");
    else if (rbl_check_node(root, 0, &w) >= 0) {
        struct oplog *logs[nthreads > 0 ? nthreads : 1];
        int nl = nthreads < c->nthreads ? nthreads : c->nthreads;
        for (int i = 0; i < nl; i++)
            logs[i] = c->tls[i].log;
        rc = oplog_replay_check(logs, nl, (uint64_t)c->range, c->initial, c->ninitial,
                                w.keys, w.n, "tree", msg, msglen);
    }
    free(w.keys);
    return rc;
}

static void rbl_free_subtree(struct rbl_node *n)
{
    while (n) {
        rbl_free_subtree(n->link[0]);
        struct rbl_node *r = n->link[1];
        SYNC_FREE(n);
        n = r;
    }
}

static void rbtree_locks_teardown(void *vctx)
{
    struct rbl_ctx *c = vctx;
    if (!c)
        return;
    if (c->head) {
        rbl_free_subtree(c->head->link[1]);
        SYNC_FREE(c->head);
    }
    for (int i = 0; i < c->nthreads; i++)
        oplog_free(c->tls[i].log);
    free(c->tls);
    free(c->initial);
    free(c);
}

WORKLOAD_EXPORT(rbtree, SYNC_RT_ID) = {
    .name = "rbtree",
    .runtime = SYNC_RT_NAME,
    .summary = "red-black tree: per-node locks, lock coupling, top-down rebalancing",
    .knobs = rb_knobs,
    .nknobs = RB_NKNOBS,
    .validate = rbtree_locks_validate,
    .setup = rbtree_locks_setup,
    .thread_run = rbtree_locks_thread_run,
    .check = rbtree_locks_check,
    .teardown = rbtree_locks_teardown,
};
