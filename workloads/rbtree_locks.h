/*
 * workloads/rbtree_locks.h - the `locks` red-black tree, with the locking a
 * practitioner would use for one: lookups take no lock (optimistic, validated by per-node
 * versions, as in Bronson et al., "A Practical Concurrent Binary Search Tree", PPoPP
 * 2010, and Linux's seqcount-validated tree lookups); updates are serialised by one
 * writer lock and run the ordinary bottom-up red-black algorithms (CLRS), which
 * change O(1) nodes per update (amortised). Lookups are 80% of the default mix and
 * run in parallel with each other and with the one writer.
 * Used by workloads/rbtree_locks.c (the rbtree workload) and workloads/compose_locks.c
 * (which adds its own protocol on top to move keys between this tree and the map).
 * (Schemes, the per-node lock coupling this replaces, costs and figures:
 * docs/locks-schemes.md.)
 *
 * Structure. A head node H (never removed, no key, black) whose right link is the
 * root; nodes carry key, two child links, a parent link (H for the root), a version
 * and a colour.
 *
 * Invariants:
 *   W1 Links, keys, parents and colours are written only by the holder of the writer
 *      lock `wlock`. Parents and colours are read only by it; links and keys are
 *      atomics, because lookups read them without any lock.
 *   V1 A node's version is odd exactly while the writer is changing its links or key:
 *      the writer makes it odd before its first such store (then a release fence),
 *      records the node, and at the end of the update makes every recorded version
 *      even again, one higher, with a release store. Colour and parent changes leave
 *      it alone: lookups never read them.
 *   V2 So if a node's version reads v (even) before and after some reads of its links
 *      and key, those reads saw the node's state of version v.
 *   R1 A node the writer unlinks has its version changed too, and is retired to the
 *      reclaimer (workloads/lib/wl_qsbr.h): a lookup may still stand on it, so it is
 *      freed only after every worker has passed a quiescent state (between
 *      operations).
 * Deadlock freedom: the writer lock is the tree's only lock; a thread holds it for
 * one update (or one fallback lookup) and takes no other lock meanwhile, so it adds
 * nothing to any lock order a caller keeps.
 *
 * Optimistic lookup (rbl_lookup_optimistic): walk from H, recording each node and
 * the version read (acquire) before its key and link; then an acquire fence and a
 * re-read of every recorded version. If all are unchanged, every node on the path
 * held, over one common interval (from the last first read to the first re-read),
 * exactly the key and links the walk read (V2): the path was then a real search
 * path from H, so "found" or "not found" was true at that moment (linearisable).
 * Any odd or changed version, or a path longer than RBL_OPT_PATH, makes the attempt
 * fail; after RBL_OPT_TRIES failures the lookup takes the writer lock and walks with
 * no writer running, which always succeeds (no starvation). A walk may step onto a
 * node that was unlinked meanwhile: R1 keeps its memory valid, validation rejects it.
 * Whole-path validation (rather than Bronson's parent-child validation alone) is what
 * keeps "not found" right when a delete moves a node up past a walker: deleting a node
 * with two children moves its successor into its place, above a walker that may be
 * on the way down to the successor; the moved-from links fail the re-read.
 *
 * Memory order: link stores are release (a new node's fields are written before the
 * link that publishes it); lookups load links with acquire; versions as in V1 and
 * the lookup above; the writer lock (wl_spin.h) orders the writers' plain fields.
 *
 * Include after runtime/sync.h in a file compiled for the locks runtime.
 */
#ifndef WL_RBTREE_LOCKS_H
#define WL_RBTREE_LOCKS_H

#include "workloads/rbtree.h"

#include "runtime/sync.h"
#include "workloads/lib/wl_qsbr.h"
#include "workloads/lib/wl_spin.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* Not every includer calls every function. */
#define RBL_FN static __attribute__((unused))

struct rbl_node;
typedef struct rbl_node *_Atomic rbl_link_t;

struct rbl_node {
    SYNC_OBJECT_HEADER;
    _Atomic int64_t key;
    rbl_link_t link[2];
    struct rbl_node *parent;     /* writer only (W1); H for the root */
    atomic_uint ver;             /* V1: odd while the writer changes links or key */
    int32_t red;                 /* writer only (W1) */
};

/* A tree: its writer lock, its head node and the reclaimer its unlinked nodes go to. */
struct rbl_tree {
    wl_spin_t wlock;             /* the writer lock, on a line of its own */
    char pad[SYNC_CACHELINE - sizeof(wl_spin_t)];
    struct rbl_node *head;       /* H: head->link[1] is the root; head->link[0] stays null */
    struct wl_qsbr *qsbr;        /* unlinked nodes wait here until no lookup holds them */
};

#define RBL_OPT_TRIES 4
/* Longest path an optimistic lookup records (a red-black tree of 2^40 keys is at
 * most 80 deep); a longer walk fails the attempt. */
#define RBL_OPT_PATH 88
/* Nodes one update can change the links or key of: 3 per rotation (at most 3 in a
 * delete), 4 for a delete's unlinking, 1 for an insert's new link. */
#define RBL_MAXDIRTY 24

/* The writer's record of the nodes whose version it made odd (V1). */
struct rbl_dirty {
    struct rbl_node *n[RBL_MAXDIRTY];
    int cnt;
};

/* ------------------------------------------------------------ field access */

static inline struct rbl_node *rbl_link(const struct rbl_node *n, int d)
{
    /* relaxed: the writer reads what only it writes (W1); lookups use acquire */
    return atomic_load_explicit((rbl_link_t *)&n->link[d], memory_order_relaxed);
}

static inline int64_t rbl_key(const struct rbl_node *n)
{
    /* relaxed: as rbl_link; in a lookup the version re-read orders it (V2) */
    return atomic_load_explicit((_Atomic int64_t *)&n->key, memory_order_relaxed);
}

static inline int rbl_red(const struct rbl_node *n)
{
    return n && n->red;
}

/* Makes n's version odd before the first change of its links or key (V1). */
static inline void rbl_mark(struct rbl_dirty *w, struct rbl_node *n)
{
    /* relaxed: only the writer writes versions */
    unsigned v = atomic_load_explicit(&n->ver, memory_order_relaxed);
    if (v & 1)
        return;
    if (SYNC_UNLIKELY(w->cnt == RBL_MAXDIRTY))
        abort();                 /* the bound above is broken: a bug */
    w->n[w->cnt++] = n;
    atomic_store_explicit(&n->ver, v + 1, memory_order_relaxed);
    /* release: the link and key stores that follow are not visible before the odd
     * version; pairs with the acquire fence in rbl_lookup_optimistic */
    atomic_thread_fence(memory_order_release);
}

/* Ends the update's changes (V1): every marked version even again. */
RBL_FN void rbl_publish(struct rbl_dirty *w)
{
    for (int i = 0; i < w->cnt; i++) {
        struct rbl_node *n = w->n[i];
        /* relaxed: only the writer writes versions */
        unsigned v = atomic_load_explicit(&n->ver, memory_order_relaxed);
        /* release: the changed links and key happen before a lookup's acquire load
         * that reads the new even version */
        atomic_store_explicit(&n->ver, v + 1, memory_order_release);
    }
    w->cnt = 0;
}

/* n->link[d] = x, and x's parent is n. */
static inline void rbl_set_link(struct rbl_dirty *w, struct rbl_node *n, int d,
                                struct rbl_node *x)
{
    rbl_mark(w, n);
    /* release: x's fields (a new node's key and links) are visible to a lookup that
     * reads this link with acquire */
    atomic_store_explicit(&n->link[d], x, memory_order_release);
    if (x)
        x->parent = n;
}

/* Which side of p is n on (p = H: the right). */
static inline int rbl_side(const struct rbl_node *p, const struct rbl_node *n)
{
    return rbl_link(p, 1) == n;
}

/* Puts v where u hangs from u's parent. */
static inline void rbl_transplant(struct rbl_dirty *w, struct rbl_node *u, struct rbl_node *v)
{
    struct rbl_node *p = u->parent;
    rbl_set_link(w, p, rbl_side(p, u), v);
}

/* x goes down to side d; its child on side !d comes up into its place. */
RBL_FN void rbl_rotate(struct rbl_dirty *w, struct rbl_node *x, int d)
{
    struct rbl_node *y = rbl_link(x, !d);
    rbl_set_link(w, x, !d, rbl_link(y, d));
    rbl_transplant(w, x, y);
    rbl_set_link(w, y, d, x);
}

/* A node that no thread can reach yet: plain initialisation, no version change. */
RBL_FN struct rbl_node *rbl_new(int64_t key, int red)
{
    struct rbl_node *n = SYNC_ALLOC(struct rbl_node);
    atomic_init(&n->key, key);
    atomic_init(&n->link[0], NULL);
    atomic_init(&n->link[1], NULL);
    atomic_init(&n->ver, 0);
    n->parent = NULL;
    n->red = red;
    return n;
}

RBL_FN void rbl_free_node(void *p)
{
    SYNC_FREE((struct rbl_node *)p);
}

/* ------------------------------------------------------------ operations */

/* One optimistic attempt (see the top of the file): 1 with the answer in *found when
 * the walk validated, 0 when it must be tried again. */
RBL_FN int rbl_lookup_optimistic(const struct rbl_tree *tr, int64_t key, int *found)
{
    const struct rbl_node *path[RBL_OPT_PATH];
    unsigned ver[RBL_OPT_PATH];
    int depth = 0, hit = 0;
    const struct rbl_node *n = tr->head;
    int dir = 1;
    for (;;) {
        /* acquire: pairs with rbl_publish's release store of an even version, so the
         * links and key of that version are visible to the loads below */
        unsigned v = atomic_load_explicit(&n->ver, memory_order_acquire);
        if ((v & 1) || depth == RBL_OPT_PATH)
            return 0;
        path[depth] = n;
        ver[depth++] = v;
        if (n != tr->head) {
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
    /* acquire: pairs with the release fence in rbl_mark: if a load above saw a store
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

RBL_FN int rbl_lookup(struct rbl_tree *tr, int64_t key)
{
    int found;
    for (int i = 0; i < RBL_OPT_TRIES; i++)
        if (rbl_lookup_optimistic(tr, key, &found))
            return found;
    /* The fallback: with no writer running every version is even and stays so. */
    wl_spin_lock_at(&tr->wlock, (uintptr_t)&tr->wlock, WL_AT_RBTREE + RB_OP_LOOKUP);
    int ok = rbl_lookup_optimistic(tr, key, &found);
    wl_spin_unlock(&tr->wlock);
    if (SYNC_UNLIKELY(!ok))
        abort();                 /* V1 broken (an odd version without a writer): a bug */
    return found;
}

/* With the writer lock held. */
RBL_FN int rbl_insert(struct rbl_tree *tr, struct rbl_dirty *w, int64_t key)
{
    struct rbl_node *head = tr->head, *p = head, *n = rbl_link(head, 1);
    int d = 1;
    while (n) {
        int64_t k = rbl_key(n);
        if (k == key)
            return 0;
        p = n;
        d = k < key;
        n = rbl_link(n, d);
    }
    struct rbl_node *z = rbl_new(key, 1);
    rbl_set_link(w, p, d, z);
    /* Bottom-up repair: z is red; while its parent is red, recolour or rotate. */
    while (z->parent != head && z->parent->red) {
        p = z->parent;
        struct rbl_node *g = p->parent;  /* p red: not the root, so g is a node */
        int pd = rbl_side(g, p);
        struct rbl_node *u = rbl_link(g, !pd);
        if (rbl_red(u)) {                /* red uncle: recolour, go up two levels */
            p->red = 0;
            u->red = 0;
            g->red = 1;
            z = g;
            continue;
        }
        if (rbl_side(p, z) != pd) {      /* inner grandchild: rotate it outward */
            rbl_rotate(w, p, pd);
            z = p;
            p = z->parent;
        }
        p->red = 0;                      /* outer grandchild: rotate at g */
        g->red = 1;
        rbl_rotate(w, g, !pd);
    }
    rbl_link(head, 1)->red = 0;
    return 1;
}

/* After unlinking a black node: x (maybe null) hangs from xp and is short one black. */
RBL_FN void rbl_delete_fixup(struct rbl_tree *tr, struct rbl_dirty *w, struct rbl_node *x,
                             struct rbl_node *xp)
{
    struct rbl_node *head = tr->head;
    while (xp != head && !rbl_red(x)) {
        int d = rbl_link(xp, 1) == x;    /* x's side (x null: its sibling is not) */
        struct rbl_node *s = rbl_link(xp, !d);
        if (rbl_red(s)) {                /* red sibling: rotate it up, recolour */
            s->red = 0;
            xp->red = 1;
            rbl_rotate(w, xp, d);
            s = rbl_link(xp, !d);
        }
        if (!rbl_red(rbl_link(s, 0)) && !rbl_red(rbl_link(s, 1))) {
            s->red = 1;                  /* both nephews black: push the deficit up */
            x = xp;
            xp = x->parent;
            continue;
        }
        if (!rbl_red(rbl_link(s, !d))) { /* only the inner nephew red: turn it outward */
            rbl_link(s, d)->red = 0;
            s->red = 1;
            rbl_rotate(w, s, !d);
            s = rbl_link(xp, !d);
        }
        s->red = xp->red;                /* outer nephew red: rotate at xp, done */
        xp->red = 0;
        rbl_link(s, !d)->red = 0;
        rbl_rotate(w, xp, d);
        x = rbl_link(head, 1);
        break;
    }
    if (x)
        x->red = 0;
}

/* With the writer lock held. tid: the deleting worker, whose reclaimer slot gets the
 * unlinked node; -1 when no worker runs (setup), where the node is freed at once. */
RBL_FN int rbl_delete(struct rbl_tree *tr, struct rbl_dirty *w, int tid, int64_t key)
{
    struct rbl_node *z = rbl_link(tr->head, 1);
    while (z) {
        int64_t k = rbl_key(z);
        if (k == key)
            break;
        z = rbl_link(z, k < key);
    }
    if (!z)
        return 0;
    rbl_mark(w, z);              /* unlinked: lookups standing on z must fail (R1) */
    struct rbl_node *x, *xp, *l = rbl_link(z, 0), *r = rbl_link(z, 1);
    int removed_red;
    if (!l || !r) {              /* at most one child: it takes z's place */
        x = l ? l : r;
        xp = z->parent;
        removed_red = z->red;
        rbl_transplant(w, z, x);
    } else {                     /* two children: the successor y takes z's place */
        struct rbl_node *y = r;
        for (struct rbl_node *m; (m = rbl_link(y, 0));)
            y = m;
        removed_red = y->red;
        x = rbl_link(y, 1);
        if (y->parent == z) {
            xp = y;
        } else {
            xp = y->parent;
            rbl_transplant(w, y, x);
            rbl_set_link(w, y, 1, r);
        }
        rbl_transplant(w, z, y);
        rbl_set_link(w, y, 0, l);
        y->red = z->red;
    }
    if (!removed_red)
        rbl_delete_fixup(tr, w, x, xp);
    if (tid >= 0)
        wl_qsbr_retire(tr->qsbr, tid, z);
    else
        rbl_free_node(z);
    return 1;
}

RBL_FN int rbl_op(struct rbl_tree *tr, int tid, int kind, int64_t key)
{
    if (kind == RB_OP_LOOKUP)
        return rbl_lookup(tr, key);
    struct rbl_dirty w = { .cnt = 0 };
    wl_spin_lock_at(&tr->wlock, (uintptr_t)&tr->wlock, WL_AT_RBTREE + (unsigned)kind);
    int r = kind == RB_OP_INSERT ? rbl_insert(tr, &w, key) : rbl_delete(tr, &w, tid, key);
    rbl_publish(&w);
    wl_spin_unlock(&tr->wlock);
    return r;
}

/* "rbtree writer lock" in buf (n bytes) when obj is its address (the object a wait for
 * it names), else empty. */
RBL_FN void rbl_describe_lock(const struct rbl_tree *tr, uint64_t obj, char *buf, size_t n)
{
    buf[0] = '\0';
    if (obj == (uint64_t)(uintptr_t)&tr->wlock)
        snprintf(buf, n, "rbtree writer lock");
}

/* An empty tree: its head node and a free writer lock (tr->qsbr is the caller's). */
RBL_FN void rbl_tree_init(struct rbl_tree *tr)
{
    wl_spin_init(&tr->wlock);
    tr->head = rbl_new(0, 0);
}

struct rbl_walk {
    int64_t *keys;
    size_t n, cap;
    char *msg;
    size_t msglen;
};

/* Checks parent links, red-red, order, black heights and even versions below n;
 * returns the black height (null counts 1), -1 after recording a violation.
 * Single-threaded. */
RBL_FN long rbl_check_node(const struct rbl_node *n, const struct rbl_node *parent,
                           struct rbl_walk *w)
{
    if (!n)
        return 1;
    int parent_red = parent->red;
    int64_t key = rbl_key(n);
    if (n->parent != parent) {
        snprintf(w->msg, w->msglen, "node with key %lld has a wrong parent link",
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
    long lh = rbl_check_node(rbl_link(n, 0), n, w);
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
    long rh = rbl_check_node(rbl_link(n, 1), n, w);
    if (rh < 0)
        return -1;
    if (lh != rh) {
        snprintf(w->msg, w->msglen, "unequal black heights under key %lld: %ld on the left, "
                 "%ld on the right", (long long)key, lh - 1, rh - 1);
        return -1;
    }
    return lh + !n->red;
}

/* The check after the run (no worker runs): the writer lock free, the head black with
 * no left child, the root black, then rbl_check_node's walk. 0 with the keys in order
 * in w, or -1 with the broken invariant in w->msg. */
RBL_FN int rbl_tree_check(const struct rbl_tree *tr, struct rbl_walk *w)
{
    const struct rbl_node *root = rbl_link(tr->head, 1);
    if (wl_spin_is_held(&tr->wlock))
        snprintf(w->msg, w->msglen, "the writer lock is still held after the run");
    else if (tr->head->red)
        snprintf(w->msg, w->msglen, "the head node is red");
    else if (rbl_link(tr->head, 0))
        snprintf(w->msg, w->msglen, "the head node has a left child");
    else if (rbl_red(root))
        snprintf(w->msg, w->msglen, "the root is red");
    else if (rbl_check_node(root, tr->head, w) >= 0)
        return 0;
    return -1;
}

RBL_FN void rbl_free_subtree(struct rbl_node *n)
{
    while (n) {
        rbl_free_subtree(rbl_link(n, 0));
        struct rbl_node *r = rbl_link(n, 1);
        SYNC_FREE(n);
        n = r;
    }
}

/* Frees every node still linked and the head (no worker runs; the retired nodes are
 * the reclaimer's to free). */
RBL_FN void rbl_tree_free(struct rbl_tree *tr)
{
    if (tr->head) {
        rbl_free_subtree(rbl_link(tr->head, 1));
        SYNC_FREE(tr->head);
        tr->head = NULL;
    }
}

#endif
