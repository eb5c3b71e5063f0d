/*
 * workloads/hashmap_ops.h - the generic hash map's operations and walks, for the files
 * that run them inside their own atomic blocks: workloads/hashmap.c and
 * workloads/compose.c (a move between this map and the red-black tree in one block).
 * Include after workloads/hashmap.h, in a file compiled per runtime (SYNC_RT defined).
 * Every function here must be called inside a SYNC_ATOMIC block and opens none, so the
 * caller's block is what makes a sequence of them atomic.
 *
 * Invariants of a map (what hm_walk_buckets and hm_keys_sort_unique verify):
 *   H1 every node sits in the chain of its key's bucket;
 *   H2 no key appears twice.
 */
#ifndef WL_HASHMAP_OPS_H
#define WL_HASHMAP_OPS_H

#include "workloads/hashmap.h"

#include "runtime/sync.h"

#include <stdlib.h>

/* Not every includer calls every function. */
#define HM_FN static __attribute__((unused))

HM_FN int hm_lookup(hm_bucket_ref b, int64_t key)
{
    SYNC_READ(b);
    for (hm_ref n = b->head; n != SYNC_NULL;) {
        SYNC_READ(n);
        if (n->key == key)
            return 1;
        n = n->next;
    }
    return 0;
}

HM_FN int hm_insert(hm_bucket_ref b, int64_t key)
{
    if (hm_lookup(b, key))
        return 0;
    hm_ref z = SYNC_ALLOC(struct hm_node);    /* new in this block: no barrier */
    z->key = key;
    z->next = b->head;
    SYNC_WRITE(b);
    b->head = z;
    return 1;
}

HM_FN int hm_delete(hm_bucket_ref b, int64_t key)
{
    SYNC_READ(b);
    hm_ref prev = SYNC_NULL, n = b->head;
    while (n != SYNC_NULL) {
        SYNC_READ(n);
        if (n->key == key)
            break;
        prev = n;
        n = n->next;
    }
    if (n == SYNC_NULL)
        return 0;
    hm_ref next = n->next;
    if (prev == SYNC_NULL) {
        SYNC_WRITE(b);
        b->head = next;
    } else {
        SYNC_WRITE(prev);
        prev->next = next;
    }
    SYNC_FREE(n);
    return 1;
}


/* What a walk of the buckets learns: every key, in bucket order. */
struct hm_walk {
    int64_t *keys;
    size_t n, cap;
    char *msg;
    size_t msglen;
    int bad;                     /* 1: H1 failed or memory ran out (msg says which) */
};

/* Walks every chain (inside a block): checks H1 and collects the keys into w. */
HM_FN void hm_walk_buckets(const hm_bucket_ref *buckets, uint64_t nbuckets, struct hm_walk *w)
{
    w->n = 0;
    w->bad = 0;
    for (uint64_t i = 0; i < nbuckets && !w->bad; i++) {
        hm_bucket_ref b = buckets[i];
        SYNC_READ(b);
        for (hm_ref n = b->head; n != SYNC_NULL && !w->bad; n = n->next) {
            SYNC_READ(n);
            uint64_t want = hm_bucket_of(n->key, nbuckets);
            if (want != i) {
                snprintf(w->msg, w->msglen, "key %lld is in bucket %llu, but hashes to bucket %llu",
                         (long long)n->key, (unsigned long long)i, (unsigned long long)want);
                w->bad = 1;
                break;
            }
            if (w->n == w->cap) {
                size_t cap = w->cap ? 2 * w->cap : 1024;
                int64_t *k = realloc(w->keys, cap * sizeof *k);
                if (!k) {
                    snprintf(w->msg, w->msglen, "out of memory collecting the map's keys");
                    w->bad = 1;
                    break;
                }
                w->keys = k;
                w->cap = cap;
            }
            w->keys[w->n++] = n->key;
        }
    }
}

/* Frees the buckets [from, to) and their chains (inside a block; teardown: no other
 * thread runs). A bucket reference still null (setup failed part-way) is skipped. */
HM_FN void hm_free_buckets(const hm_bucket_ref *buckets, uint64_t from, uint64_t to)
{
    for (uint64_t j = from; j < to; j++) {
        hm_bucket_ref b = buckets[j];
        if (b == SYNC_NULL)
            continue;
        SYNC_READ(b);
        for (hm_ref n = b->head; n != SYNC_NULL;) {
            SYNC_READ(n);
            hm_ref next = n->next;
            SYNC_FREE(n);
            n = next;
        }
        SYNC_FREE(b);
    }
}

#endif
