/*
 * workloads/rbtree_ops.h - the generic red-black tree's operations and its walk, for
 * the files that run them inside their own atomic blocks: workloads/rbtree.c (one
 * operation kind per call) and workloads/compose.c (a move between the hash map and
 * this tree in one block). Include after workloads/rbtree.h, in a file compiled per
 * runtime (SYNC_RT defined). Every function here must be called inside a SYNC_ATOMIC
 * block; none opens one, so a caller's block is what makes a sequence of them atomic.
 *
 * The tree is the textbook bottom-up red-black tree with parent references (insert and
 * delete fix-ups by recolouring and rotation); the root colour is written only when it
 * has to change, so a block writes nothing it does not need to. Invariants (what
 * rb_check_tree verifies):
 *   R1 the root is black;            R2 no red node has a red child;
 *   R3 every root-to-null path has the same number of black nodes;
 *   R4 keys strictly increase in order (a BST, no duplicates);
 *   R5 every child's parent reference names its parent, the root's is null.
 */
#ifndef WL_RBTREE_OPS_H
#define WL_RBTREE_OPS_H

#include "workloads/rbtree.h"

#include "runtime/sync.h"

#include <stdlib.h>

/* Not every includer calls every function. */
#define RB_FN static __attribute__((unused))

/* ------------------------------------------------------------ the tree (in blocks) */

static inline int rb_is_red(rb_ref n)
{
    if (n == SYNC_NULL)
        return 0;
    SYNC_READ(n);
    return n->red;
}

/* Rotates x down to side d: its child on side !d takes its place. */
RB_FN void rb_rotate(rb_tree_ref tree, rb_ref x, int d)
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

RB_FN int rb_lookup(rb_tree_ref tree, int64_t key)
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

RB_FN void rb_blacken_root(rb_tree_ref tree)
{
    SYNC_READ(tree);
    rb_ref r = tree->root;
    if (rb_is_red(r)) {
        SYNC_WRITE(r);
        r->red = 0;
    }
}

RB_FN int rb_insert(rb_tree_ref tree, int64_t key)
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
RB_FN void rb_delete_fixup(rb_tree_ref tree, rb_ref x, rb_ref xp, int d)
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

RB_FN int rb_delete(rb_tree_ref tree, int64_t key)
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

/* Frees every node of the subtree (teardown: no other thread runs). */
RB_FN void rb_free_subtree(rb_ref n)
{
    while (n != SYNC_NULL) {
        SYNC_READ(n);
        rb_free_subtree(n->link[0]);
        rb_ref r = n->link[1];
        SYNC_FREE(n);
        n = r;
    }
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
RB_FN long rb_check_node(rb_ref n, rb_ref parent, int parent_red, struct rb_walk *w)
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


/* The walk of a whole tree (inside a block): R1, then R2-R5 from the root, the keys
 * in order into w->keys. w->bad is 1 (and w->msg says why) when one does not hold. */
RB_FN void rb_check_tree(rb_tree_ref tree, struct rb_walk *w)
{
    w->n = 0;
    w->bad = 0;
    SYNC_READ(tree);
    rb_ref root = tree->root;
    if (rb_is_red(root)) {
        snprintf(w->msg, w->msglen, "the root is red");
        w->bad = 1;
    } else if (rb_check_node(root, SYNC_NULL, 0, w) < 0) {
        w->bad = 1;
    }
}

#endif
