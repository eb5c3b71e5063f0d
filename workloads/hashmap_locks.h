/*
 * workloads/hashmap_locks.h - the `locks` hash map: one spin lock per bucket, in the
 * bucket beside the chain head, taken by inserts and deletes only. Lookups take no
 * lock: they walk the chain while it may change, and deleted nodes are freed only
 * after every worker has passed a quiescent state (workloads/lib/wl_qsbr.h). Used by
 * workloads/hashmap_locks.c (the hashmap workload) and workloads/compose_locks.c
 * (which adds its own protocol on top to move keys between this map and the tree).
 * (Costs and figures: docs/locks-schemes.md.)
 *
 * Invariants:
 *   B1 A bucket's head and the `next` links of its nodes are written only by a thread
 *      holding that bucket's lock; they are atomics because lookups read them without
 *      the lock. A node's key is written once, before the node is published, and
 *      never again.
 *   B2 An update takes exactly one lock (its key's bucket) and takes no other lock
 *      while holding it, so it adds nothing to any lock order; a lookup takes none.
 *   B3 Inserts link the new node at the head of the chain; deletes unlink a node by
 *      pointing its predecessor past it and leave the node's own `next` unchanged.
 *      Nodes are never moved, so along `next` nodes only get older.
 *   B4 A node is retired by the deleter that unlinked it (under the bucket lock), and
 *      freed by the reclaimer only when no lookup can still hold it (wl_qsbr.h).
 *      Every worker passes a quiescent state between two operations.
 *
 * Why a lock-free lookup is right (linearisable): let the lookup read the head at
 * time t0. Every node it then reaches was in the chain at some moment in [t0, now]:
 * a node reached from a node still in the chain was its successor then, and a
 * node reached from an unlinked node N was N's successor when N was unlinked (B3: N's
 * `next` is frozen), which is after the lookup reached N. So a key found was present
 * at some moment of the lookup. Conversely, if the key was present in node K for the
 * whole lookup, the lookup cannot step past K: a frozen `next` of a node unlinked at
 * td points to its successor at td, and K, still in the chain at td and older (B3),
 * is that successor or further along. So "not found" means absent at some moment.
 *
 * Memory order: an insert fills the new node, then stores the head with release; a
 * delete stores its predecessor's link with release (the successor it publishes was
 * itself published with release and is ordered after it by the bucket lock); lookups
 * load every link with acquire, so the key of each node they reach is visible.
 *
 * Include after runtime/sync.h in a file compiled for the locks runtime.
 */
#ifndef WL_HASHMAP_LOCKS_H
#define WL_HASHMAP_LOCKS_H

#include "workloads/hashmap.h"

#include "runtime/sync.h"
#include "workloads/lib/wl_keys.h"
#include "workloads/lib/wl_qsbr.h"
#include "workloads/lib/wl_spin.h"

#include <stdatomic.h>
#include <stdlib.h>

/* Not every includer calls every function. */
#define HML_FN static __attribute__((unused))

struct hml_node;
typedef struct hml_node *_Atomic hml_link;

struct hml_node {
    SYNC_OBJECT_HEADER;
    int64_t key;                     /* written before publication, then read-only */
    hml_link next;
};

/* Buckets sit in one array (16 bytes each), not one heap object apiece as in the
 * generic version (which the STM needs to keep chains' conflicts apart): one cache
 * miss fewer per operation when the table outgrows the caches. */
struct hml_bucket {
    hml_link head;
    wl_spin_t lock;
};

/* A map: its bucket array and the reclaimer its deleted nodes go to. */
struct hml_map {
    struct hml_bucket *buckets;      /* [nbuckets]; the array is never reallocated */
    uint64_t nbuckets;
    struct wl_qsbr *qsbr;            /* deleted nodes wait here until no lookup holds them */
};

HML_FN void hml_free_node(void *p)
{
    SYNC_FREE((struct hml_node *)p);
}

/* acquire: pairs with the release store that published the link's target (insert's
 * head store, or a delete's unlink), so the target's key is visible. */
static inline struct hml_node *hml_load(hml_link *l)
{
    return atomic_load_explicit(l, memory_order_acquire);
}

/* No lock: safe while the caller is between quiescent states (B4). */
HML_FN int hml_lookup(struct hml_bucket *b, int64_t key)
{
    for (struct hml_node *n = hml_load(&b->head); n; n = hml_load(&n->next))
        if (n->key == key)
            return 1;
    return 0;
}

/* With b's lock held. */
HML_FN int hml_insert_locked(struct hml_bucket *b, int64_t key)
{
    if (hml_lookup(b, key))
        return 0;
    struct hml_node *z = SYNC_ALLOC(struct hml_node);
    z->key = key;
    /* relaxed: z is not yet reachable; the head store below publishes it */
    atomic_store_explicit(&z->next, hml_load(&b->head), memory_order_relaxed);
    /* release: publishes z's key and link to lookups (their acquire loads) */
    atomic_store_explicit(&b->head, z, memory_order_release);
    return 1;
}

/* With b's lock held; the unlinked node is returned for retirement (NULL: absent). */
HML_FN struct hml_node *hml_delete_locked(struct hml_bucket *b, int64_t key)
{
    hml_link *prev = &b->head;
    struct hml_node *n = hml_load(prev);
    while (n && n->key != key) {
        prev = &n->next;
        n = hml_load(prev);
    }
    if (!n)
        return NULL;
    /* release: the successor published here was written before it (B3 and the lock);
     * n->next itself is left as it is (B3), for lookups standing on n */
    atomic_store_explicit(prev, hml_load(&n->next), memory_order_release);
    return n;
}


/* One operation by thread tid (-1: setup, single-threaded, frees at once). */
HML_FN int hml_op(struct hml_map *m, int tid, int kind, int64_t key)
{
    struct hml_bucket *b = &m->buckets[hm_bucket_of(key, m->nbuckets)];
    if (kind == HM_OP_LOOKUP)
        return hml_lookup(b, key);
    int r;
    wl_spin_lock_at(&b->lock, (uintptr_t)b, WL_AT_HASHMAP + (unsigned)kind);  /* the bucket */
    if (kind == HM_OP_INSERT) {
        r = hml_insert_locked(b, key);
    } else {
        struct hml_node *n = hml_delete_locked(b, key);
        r = n != NULL;
        if (n && tid >= 0)
            wl_qsbr_retire(m->qsbr, tid, n);
        else if (n)
            hml_free_node(n);
    }
    wl_spin_unlock(&b->lock);
    return r;
}

/* "hashmap bucket 93" in buf (n bytes) when obj is a bucket's address (the object a
 * wait for its lock names), else empty. */
HML_FN void hml_describe_bucket(const struct hml_map *m, uint64_t obj, char *buf, size_t n)
{
    uint64_t b = (uint64_t)(uintptr_t)m->buckets;
    buf[0] = '\0';
    if (obj >= b && obj < b + m->nbuckets * sizeof *m->buckets &&
        (obj - b) % sizeof *m->buckets == 0)
        snprintf(buf, n, "hashmap bucket %llu",
                 (unsigned long long)((obj - b) / sizeof *m->buckets));
}

/* Allocates nbuckets empty buckets, each with a free lock: 0, or -1 out of memory
 * (m->buckets stays NULL). m->qsbr is the caller's. */
HML_FN int hml_map_init(struct hml_map *m, uint64_t nbuckets)
{
    m->nbuckets = nbuckets;
    m->buckets = aligned_alloc(SYNC_CACHELINE, (nbuckets * sizeof *m->buckets +
                                                SYNC_CACHELINE - 1) & ~(size_t)(SYNC_CACHELINE - 1));
    if (!m->buckets)
        return -1;
    for (uint64_t i = 0; i < nbuckets; i++) {
        atomic_init(&m->buckets[i].head, NULL);
        wl_spin_init(&m->buckets[i].lock);
    }
    return 0;
}

/* Frees every node still linked and the bucket array (no worker runs; the retired
 * nodes are the reclaimer's to free). */
HML_FN void hml_map_free(struct hml_map *m)
{
    if (!m->buckets)
        return;
    for (uint64_t i = 0; i < m->nbuckets; i++)
        for (struct hml_node *p = hml_load(&m->buckets[i].head); p;) {
            struct hml_node *next = hml_load(&p->next);
            SYNC_FREE(p);
            p = next;
        }
    free(m->buckets);
    m->buckets = NULL;
}

/* The check after the run (no worker runs): no bucket lock held, every node in its
 * key's bucket (H1 of hashmap.h), no key twice (H2). 0 with the keys, sorted, in
 * *keys_out (malloc'ed, *n_out of them), or -1 with the broken invariant in msg. */
HML_FN int hml_map_keys(const struct hml_map *m, int64_t **keys_out, size_t *n_out, char *msg,
                        size_t msglen)
{
    size_t n = 0, cap = 1024;
    int64_t *keys = malloc(cap * sizeof *keys);
    int rc = keys ? 0 : -1;
    if (!keys)
        snprintf(msg, msglen, "out of memory collecting the map's keys");
    for (uint64_t i = 0; i < m->nbuckets && rc == 0; i++) {
        struct hml_bucket *b = &m->buckets[i];
        if (wl_spin_is_held(&b->lock)) {
            snprintf(msg, msglen, "bucket %llu is still locked after the run",
                     (unsigned long long)i);
            rc = -1;
            break;
        }
        for (struct hml_node *p = hml_load(&b->head); p; p = hml_load(&p->next)) {
            uint64_t want = hm_bucket_of(p->key, m->nbuckets);
            if (want != i) {
                snprintf(msg, msglen, "key %lld is in bucket %llu, but hashes to bucket %llu",
                         (long long)p->key, (unsigned long long)i, (unsigned long long)want);
                rc = -1;
                break;
            }
            if (n == cap) {
                int64_t *k = realloc(keys, 2 * cap * sizeof *k);
                if (!k) {
                    snprintf(msg, msglen, "out of memory collecting the map's keys");
                    rc = -1;
                    break;
                }
                keys = k;
                cap *= 2;
            }
            keys[n++] = p->key;
        }
    }
    if (rc == 0)
        rc = hm_keys_sort_unique(keys, n, msg, msglen);
    *keys_out = keys;
    *n_out = n;
    return rc;
}

#endif
