/*
 * workloads/rbtree_locks.c - the rbtree workload with fine-grained locks: lookups take
 * no lock (optimistic, validated by per-node versions, as in Bronson et al., "A
 * Practical Concurrent Binary Search Tree", PPoPP 2010); updates lock one spin lock
 * per node with lock coupling, in a top-down red-black tree that rebalances on the
 * way down, so an update holds a bounded window of locks and never walks back up.
 * (Schemes, costs and figures: docs/locks-schemes.md.)
 *
 * Structure. A head node H (never removed, no key) whose right link is the root;
 * nodes carry key, two child links, a version, a colour and a lock; no parent links
 * (a top-down algorithm needs none, and a parent link would be a field that a
 * rotation changes in a node outside the window).
 *
 * Lock protocol (invariants):
 *   L1 A node's links, colour and key are written only by a thread that holds the
 *      node's lock; its colour is also read only under the lock. Links and key are
 *      atomics, because optimistic lookups read them without any lock.
 *   L2 A thread locks H with nothing held, and otherwise locks only a child of a node
 *      it holds. (Tree locking, as in Silberschatz-Kedem.) Every thread's held nodes
 *      are a connected window of the tree, plus, for delete, the node f whose key it
 *      found, an ancestor of the window.
 *   L3 An update changes only links and colours of nodes it holds; rotations move
 *      subtrees between held nodes, so a child link read under L1 stays valid while
 *      its parent is held.
 *   L4 A node is unlinked only by the deleter holding its parent and the node. Any
 *      thread taking locks that could reach it would have to hold the parent first
 *      (L2), so no locker holds, waits for, or later finds it; optimistic lookups may
 *      still stand on it, so it is retired to the reclaimer (workloads/lib/wl_qsbr.h)
 *      and freed once every worker has passed a quiescent state (between operations).
 * Deadlock freedom (only updates and fallback lookups lock): a waiter T holds
 * parent(N) and waits for N, held by T'. T' does not hold parent(N), so N is the top
 * of T'’s window or T'’s f, and T'’s window lies in N's subtree, strictly below T's
 * window top. Along any chain of waits the window tops get strictly deeper (the tree
 * cannot change while they all wait), so there is no cycle. Optimistic lookups hold
 * and wait for nothing.
 *
 * Versions (a seqlock per node):
 *   V1 A node's version is odd exactly while a holder of its lock is changing its
 *      links or key: the holder makes it odd before its first such store (then a
 *      release fence) and even again, one higher, with a release store when it
 *      unlocks the node (rbl_unlock). Colour changes leave it alone: lookups never
 *      read colours.
 *   V2 So if a node's version reads v (even) before and after some reads of its
 *      links and key, those reads saw the node's state of version v.
 *
 * Optimistic lookup (rbl_lookup_optimistic): walk from H, recording each node and
 * the version read (acquire) before its key and link; then an acquire fence and a
 * re-read of every recorded version. If all are unchanged, every node on the path
 * held, over one common interval (from the last first read to the first re-read),
 * exactly the key and links the walk read (V2): the path was then a real search
 * path from H, so "found" or "not found" was true at that moment (linearisable).
 * Any odd or changed version, or a path longer than RBL_OPT_PATH, makes the attempt
 * fail; after RBL_OPT_TRIES failures the lookup couples locks hand over hand as
 * updates do, which always succeeds (no starvation). A walk may step onto a node
 * that was unlinked meanwhile: L4 keeps its memory valid, validation rejects it.
 * Whole-path validation (rather than Bronson's parent-child validation alone) is
 * what keeps "not found" right across a delete that moves a key up: deleting the
 * key of f copies its predecessor's key into f (above the walker) and unlinks the
 * predecessor below it; f's new version fails the re-read.
 *
 * Window sizes. Fallback lookup: hand over hand, at most 2 locks. Insert (at node x):
 * the path t, g, p, x, x's child toward the key and, when that child is red, x's
 * other child (colour flip) - at most 6. Delete (at node q): g, p, q, q's two
 * children, q's sibling and its two children, and f - at most 9 (RBL_MAXHELD leaves
 * spare).
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
 * Memory order: link stores are release (a new node's fields are written before the
 * link that publishes it); lookups load links with acquire; versions as in V1 and
 * the lookup above; the spin lock orders everything else (wl_spin.h).
 *
 * --ops-per-tx K: a thread still runs K operations per loop step, but each operation
 * is its own critical section: per-node locking gives no atomicity across operations.
 */
#include "workloads/rbtree.h"

#include "runtime/sync.h"
#include "workloads/lib/oplog.h"
#include "workloads/lib/wl_keys.h"
#include "workloads/lib/wl_qsbr.h"
#include "workloads/lib/wl_spin.h"
#include "workloads/workload.h"

#include <stdlib.h>
#include <string.h>

struct rbl_node;
typedef struct rbl_node *_Atomic rbl_link_t;

struct rbl_node {
    SYNC_OBJECT_HEADER;
    _Atomic int64_t key;
    rbl_link_t link[2];
    atomic_uint ver;             /* V1: odd while its holder changes links or key */
    wl_spin_t lock;
    int32_t red;                 /* only under the lock */
};

struct rbl_ctx {
    struct rbl_node *head;       /* H: head->link[1] is the root; head->link[0] stays null */
    long size, range, update, ops_per_tx;
    int nthreads;
    struct rb_tls *tls;          /* res/key/kind unused beyond one op; log used */
    struct wl_qsbr *qsbr;        /* unlinked nodes wait here until no lookup holds them */
    int64_t *initial;
    size_t ninitial;
};

/* Optimistic lookup attempts before a lookup couples locks. */
#define RBL_OPT_TRIES 4
/* Longest path an optimistic lookup records (a red-black tree of 2^40 keys is at
 * most 80 deep); a longer walk fails the attempt. */
#define RBL_OPT_PATH 88

/* ------------------------------------------------------------ field access */

/* relaxed: the caller holds n's lock, or n's parent's (L1/L3: no one else writes it);
 * optimistic lookups use rbl_link_acq */
static inline struct rbl_node *rbl_link(const struct rbl_node *n, int d)
{
    return atomic_load_explicit((rbl_link_t *)&n->link[d], memory_order_relaxed);
}

static inline int64_t rbl_key(const struct rbl_node *n)
{
    /* relaxed: as rbl_link; in a lookup the version re-read orders it (V2) */
    return atomic_load_explicit((_Atomic int64_t *)&n->key, memory_order_relaxed);
}

/* Makes n's version odd before the first change of its links or key (V1). */
static inline void rbl_dirty(struct rbl_node *n)
{
    /* relaxed: only the lock holder writes the version */
    unsigned v = atomic_load_explicit(&n->ver, memory_order_relaxed);
    if (!(v & 1)) {
        atomic_store_explicit(&n->ver, v + 1, memory_order_relaxed);
        /* release: the link and key stores that follow are not visible before the odd
         * version; pairs with the acquire fence in rbl_lookup_optimistic */
        atomic_thread_fence(memory_order_release);
    }
}

static inline void rbl_set_link(struct rbl_node *n, int d, struct rbl_node *x)
{
    rbl_dirty(n);
    /* release: x's fields (a new node's key and links) are visible to a lookup that
     * reads this link with acquire */
    atomic_store_explicit(&n->link[d], x, memory_order_release);
}

static inline void rbl_set_key(struct rbl_node *n, int64_t key)
{
    rbl_dirty(n);
    /* relaxed: ordered for lookups by the version (V1) */
    atomic_store_explicit(&n->key, key, memory_order_relaxed);
}

static inline void rbl_lock(struct rbl_node *n)
{
    wl_spin_lock(&n->lock);
}

/* Ends n's change, if any (V1), and unlocks it. */
static inline void rbl_unlock(struct rbl_node *n)
{
    /* relaxed: only the lock holder writes the version */
    unsigned v = atomic_load_explicit(&n->ver, memory_order_relaxed);
    if (v & 1)
        /* release: the changed links and key happen before a lookup's acquire load
         * that reads the new even version */
        atomic_store_explicit(&n->ver, v + 1, memory_order_release);
    wl_spin_unlock(&n->lock);
}

/* A node that no thread can reach yet: plain initialisation, no version change. */
static struct rbl_node *rbl_new(int64_t key, int red)
{
    struct rbl_node *n = SYNC_ALLOC(struct rbl_node);
    atomic_init(&n->key, key);
    atomic_init(&n->link[0], NULL);
    atomic_init(&n->link[1], NULL);
    atomic_init(&n->ver, 0);
    wl_spin_init(&n->lock);
    n->red = red;
    return n;
}

static void rbl_free_node(void *p)
{
    SYNC_FREE((struct rbl_node *)p);
}

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
    rbl_lock(n);
    h->n[h->cnt++] = n;
}

static inline void rbl_release_all(struct rbl_held *h)
{
    for (int i = 0; i < h->cnt; i++)
        rbl_unlock(h->n[i]);
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
            rbl_unlock(n);
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

/* One optimistic attempt (see the top of the file): 1 with the answer in *found when
 * the walk validated, 0 when it must be tried again. */
static int rbl_lookup_optimistic(const struct rbl_ctx *c, int64_t key, int *found)
{
    const struct rbl_node *path[RBL_OPT_PATH];
    unsigned ver[RBL_OPT_PATH];
    int depth = 0, hit = 0;
    const struct rbl_node *n = c->head;
    int dir = 1;
    for (;;) {
        /* acquire: pairs with rbl_unlock's release store of an even version, so the
         * links and key of that version are visible to the loads below */
        unsigned v = atomic_load_explicit(&n->ver, memory_order_acquire);
        if ((v & 1) || depth == RBL_OPT_PATH)
            return 0;
        path[depth] = n;
        ver[depth++] = v;
        if (n != c->head) {
            int64_t k = rbl_key(n);
            if (k == key) {
                hit = 1;
                break;
            }
            dir = k < key;
        }
        /* acquire: pairs with rbl_set_link's release store (a new node's fields) */
        const struct rbl_node *ch = atomic_load_explicit(&n->link[dir], memory_order_acquire);
        if (!ch)
            break;
        n = ch;
    }
    /* acquire: pairs with the release fence in rbl_dirty: if a load above saw a store
     * made after a version turned odd, the re-read below sees that odd (or a later)
     * version */
    atomic_thread_fence(memory_order_acquire);
    for (int i = 0; i < depth; i++)
        /* relaxed: ordered after the loads above by the fence */
        if (atomic_load_explicit(&path[i]->ver, memory_order_relaxed) != ver[i])
            return 0;
    *found = hit;
    return 1;
}

/* The fallback: hand over hand with locks (at most 2 held). */
static int rbl_lookup_locked(struct rbl_ctx *c, int64_t key)
{
    struct rbl_node *cur = c->head;
    rbl_lock(cur);
    struct rbl_node *n = rbl_link(cur, 1);
    int found = 0;
    while (n) {
        rbl_lock(n);                 /* child of the held cur (L2) */
        rbl_unlock(cur);
        cur = n;
        int64_t k = rbl_key(n);
        if (k == key) {
            found = 1;
            break;
        }
        n = rbl_link(n, k < key);
    }
    rbl_unlock(cur);
    return found;
}

static int rbl_lookup(struct rbl_ctx *c, int64_t key)
{
    int found;
    for (int i = 0; i < RBL_OPT_TRIES; i++)
        if (rbl_lookup_optimistic(c, key, &found))
            return found;
    return rbl_lookup_locked(c, key);
}

/* Path [.., t, g, p, x], x and p red (p is not the root, so g is a node and t exists):
 * one rotation at g fixes the red-red pair. Rewrites the path to the new chain. */
static void rbl_fix_red_red(struct rbl_path *s)
{
    struct rbl_node *x = rbl_at(s, 0), *p = rbl_at(s, 1), *g = rbl_at(s, 2), *t = rbl_at(s, 3);
    if (SYNC_UNLIKELY(!t))
        abort();                 /* window too short: a bug */
    int d = rbl_link(g, 1) == p;
    int td = rbl_link(t, 1) == g;
    s->cnt -= 3;                 /* pop g, p, x; t stays on top */
    if (rbl_link(p, d) == x) {   /* outer grandchild: single rotation, p comes up */
        rbl_set_link(g, d, rbl_link(p, !d));
        rbl_set_link(p, !d, g);
        rbl_set_link(t, td, p);
        p->red = 0;
        g->red = 1;
        rbl_push(s, p);
        rbl_push(s, x);
    } else {                     /* inner grandchild: double rotation, x comes up */
        rbl_set_link(p, !d, rbl_link(x, d));
        rbl_set_link(x, d, p);
        rbl_set_link(g, d, rbl_link(x, !d));
        rbl_set_link(x, !d, g);
        rbl_set_link(t, td, x);
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
            int64_t k = rbl_key(x);
            if (k == key)
                break;           /* already present: ret = 0 */
            dir = k < key;
        }
        struct rbl_node *ch = rbl_link(x, dir);
        if (!ch) {
            struct rbl_node *n = rbl_new(key, x != head);    /* the root is black */
            rbl_hold(&h, n);     /* unreachable until linked: never waits */
            rbl_set_link(x, dir, n);
            rbl_push(&s, n);
            if (n->red && x->red)
                rbl_fix_red_red(&s);
            ret = 1;
            break;
        }
        rbl_hold(&h, ch);
        if (x != head && ch->red) {
            struct rbl_node *o = rbl_link(x, !dir);
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
                    ch = rbl_link(x, dir);           /* held: ch, o or a rotated node */
                }
            }
        }
        rbl_push(&s, ch);
        rbl_trim(&h, &s, 4, NULL);
    }
    rbl_release_all(&h);
    return ret;
}

/* tid: the deleting worker, whose reclaimer slot gets the unlinked node; -1 when no
 * worker runs (setup), where the node is freed at once. */
static int rbl_delete(struct rbl_ctx *c, int tid, int64_t key)
{
    struct rbl_held h = { .cnt = 0 };
    struct rbl_path s = { .cnt = 0 };
    struct rbl_node *head = c->head, *f = NULL;
    int dir = 1;
    rbl_hold(&h, head);
    rbl_push(&s, head);
    for (;;) {
        struct rbl_node *q = rbl_at(&s, 0);
        struct rbl_node *ch = rbl_link(q, dir);
        if (!ch)
            break;
        rbl_hold(&h, ch);
        rbl_push(&s, ch);
        rbl_trim(&h, &s, 3, f);
        int last = dir;
        q = ch;
        struct rbl_node *p = rbl_at(&s, 1);
        int64_t qk = rbl_key(q);
        if (qk == key)
            f = q;
        dir = qk < key;          /* equal: go left, towards the predecessor */
        if (q->red)
            continue;
        struct rbl_node *cd = rbl_link(q, dir);
        if (cd) {
            rbl_hold(&h, cd);
            if (cd->red)
                continue;        /* the next node is red */
        }
        struct rbl_node *co = rbl_link(q, !dir);
        if (co)
            rbl_hold(&h, co);
        if (rbl_red(co)) {
            /* Rotate the red child up: q goes down on side dir and turns red. */
            rbl_set_link(q, !dir, rbl_link(co, dir));
            rbl_set_link(co, dir, q);
            rbl_set_link(p, last, co);
            q->red = 1;
            co->red = 0;
            s.cnt--;
            rbl_push(&s, co);
            rbl_push(&s, q);
        } else if (p != head) {
            /* q and both its children black; p is red or the root. */
            struct rbl_node *sib = rbl_link(p, !last);
            if (SYNC_UNLIKELY(!sib))
                abort();         /* q black means its sibling's side has black nodes */
            rbl_hold(&h, sib);
            struct rbl_node *s0 = rbl_link(sib, 0), *s1 = rbl_link(sib, 1);
            if (s0)
                rbl_hold(&h, s0);
            if (s1)
                rbl_hold(&h, s1);
            if (!rbl_red(s0) && !rbl_red(s1)) {
                p->red = 0;      /* colour flip */
                sib->red = 1;
                q->red = 1;
            } else {
                struct rbl_node *g = rbl_at(&s, 2), *top;
                int d2 = rbl_link(g, 1) == p;
                struct rbl_node *x = rbl_link(sib, last);
                if (rbl_red(x)) {                    /* inner nephew: double rotation */
                    rbl_set_link(sib, last, rbl_link(x, !last));
                    rbl_set_link(x, !last, sib);
                    rbl_set_link(p, !last, rbl_link(x, last));
                    rbl_set_link(x, last, p);
                    top = x;
                } else {                             /* outer nephew: single rotation */
                    rbl_set_link(p, !last, x);
                    rbl_set_link(sib, last, p);
                    top = sib;
                }
                rbl_set_link(g, d2, top);
                q->red = 1;
                top->red = g != head;                /* a new root stays black */
                rbl_link(top, 0)->red = 0;
                rbl_link(top, 1)->red = 0;
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
        if (f != q)
            rbl_set_key(f, rbl_key(q));
        rbl_dirty(q);            /* unlinked: lookups standing on q must fail (V1) */
        rbl_set_link(p, rbl_link(p, 1) == q, rbl_link(q, rbl_link(q, 0) == NULL));
        /* Unlock and forget q, then retire it (L4). */
        for (int i = 0; i < h.cnt; i++)
            if (h.n[i] == q) {
                rbl_unlock(q);
                h.n[i] = h.n[--h.cnt];
                break;
            }
        if (tid >= 0)
            wl_qsbr_retire(c->qsbr, tid, q);
        else
            rbl_free_node(q);
    }
    rbl_release_all(&h);
    return found;
}

static int rbl_op(struct rbl_ctx *c, int tid, int kind, int64_t key)
{
    switch (kind) {
    case RB_OP_INSERT:
        return rbl_insert(c, key);
    case RB_OP_DELETE:
        return rbl_delete(c, tid, key);
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
    c->qsbr = wl_qsbr_new(c->nthreads, rbl_free_node);
    if (!c->tls || !c->initial || !c->qsbr) {
        free(c->tls);
        free(c->initial);
        wl_qsbr_free(c->qsbr);
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
    c->head = rbl_new(0, 0);
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
        if (rbl_op(c, t->tid, kind, key) && kind != RB_OP_LOOKUP)
            oplog_record(log, (uint64_t)key, kind == RB_OP_INSERT ? 1 : -1);
        wl_qsbr_quiescent(c->qsbr, t->tid);     /* holds no node between operations */
    }
    return (uint64_t)k;
}

static void rbtree_locks_thread_run(void *vctx, struct wl_thread *t)
{
    struct rbl_ctx *c = vctx;
    wl_qsbr_online(c->qsbr, t->tid);
    WL_LOOP(c, t, rbl_block);
    wl_qsbr_offline(c->qsbr, t->tid);
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
    int64_t key = rbl_key(n);
    if (wl_spin_is_held(&n->lock)) {
        snprintf(w->msg, w->msglen, "node with key %lld is still locked after the run",
                 (long long)key);
        return -1;
    }
    /* relaxed: no worker runs (joined) */
    if (atomic_load_explicit((atomic_uint *)&n->ver, memory_order_relaxed) & 1) {
        snprintf(w->msg, w->msglen, "node with key %lld has an odd version after the run",
                 (long long)key);
        return -1;
    }
    if (n->red && parent_red) {
        snprintf(w->msg, w->msglen, "red node with key %lld has a red parent (red-red)",
                 (long long)key);
        return -1;
    }
    long lh = rbl_check_node(rbl_link(n, 0), n->red, w);
    if (lh < 0)
        return -1;
    if (w->n > 0 && w->keys[w->n - 1] >= key) {
        snprintf(w->msg, w->msglen, "keys out of order: %lld comes after %lld in order "
                 "(not a search tree, or a duplicate)", (long long)key,
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
    w->keys[w->n++] = key;
    long rh = rbl_check_node(rbl_link(n, 1), n->red, w);
    if (rh < 0)
        return -1;
    if (lh != rh) {
        snprintf(w->msg, w->msglen, "unequal black heights under key %lld: %ld on the left, "
                 "%ld on the right", (long long)key, lh - 1, rh - 1);
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
    const struct rbl_node *root = rbl_link(c->head, 1);
    if (wl_spin_is_held(&c->head->lock))
        snprintf(msg, msglen, "the head node is still locked after the run");
    else if (rbl_link(c->head, 0))
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
        rbl_free_subtree(rbl_link(n, 0));
        struct rbl_node *r = rbl_link(n, 1);
        SYNC_FREE(n);
        n = r;
    }
}

static void rbtree_locks_teardown(void *vctx)
{
    struct rbl_ctx *c = vctx;
    if (!c)
        return;
    wl_qsbr_free(c->qsbr);           /* no worker runs: frees every retired node */
    if (c->head) {
        rbl_free_subtree(rbl_link(c->head, 1));
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
    .summary = "red-black tree: optimistic versioned lookups; updates couple per-node locks, "
               "top-down rebalancing",
    .knobs = rb_knobs,
    .nknobs = RB_NKNOBS,
    .validate = rbtree_locks_validate,
    .setup = rbtree_locks_setup,
    .thread_run = rbtree_locks_thread_run,
    .check = rbtree_locks_check,
    .teardown = rbtree_locks_teardown,
};
