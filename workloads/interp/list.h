/*
 * workloads/interp/list.h - lists: the raw mode's (a list of machine words, in chunks of
 * IV_CHUNK elements reached through a directory: a write touches one chunk) and the
 * object model's (a vector of values that grows by doubling). Their operations take the
 * barriers they need; the caller holds what the variant needs (the `locks` variant:
 * the list's lock). Out-of-range indexes read 0 and are ignored on write; a full list
 * (IV_LIST_MAX elements) refuses an append.
 */
#ifndef IV_LIST_H
#define IV_LIST_H

#include "workloads/interp/value.h"

/* ---- raw: chunked lists of words ---- */
struct iv_chunk {
    SYNC_OBJECT_HEADER;
    int64_t v[IV_CHUNK];
};
struct iv_dir {
    SYNC_OBJECT_HEADER;
    SYNC_REF(struct iv_chunk) c[IV_NCHUNKS];
};
struct iv_list {
    SYNC_OBJECT_HEADER;
    wl_spin_t lock;
    int64_t len;
    SYNC_REF(struct iv_dir) dir;
    char pad[128 - 32];
};
typedef SYNC_REF(struct iv_list) iv_list_ref;
typedef SYNC_REF(struct iv_dir) iv_dir_ref;
typedef SYNC_REF(struct iv_chunk) iv_chunk_ref;

static inline int64_t iv_list_len(iv_list_ref l)
{
    SYNC_READ(l);
    return l->len;
}

static inline int iv_list_append(iv_list_ref l, int64_t v)
{
    SYNC_WRITE(l);
    int64_t n = l->len;
    if (SYNC_UNLIKELY(n >= IV_LIST_MAX))
        return -1;
    iv_dir_ref d = l->dir;
    SYNC_READ(d);
    iv_chunk_ref c = d->c[n / IV_CHUNK];
    if (c == SYNC_NULL) {
        c = SYNC_ALLOC(struct iv_chunk);             /* new in this block: no barrier */
        SYNC_WRITE(d);
        d->c[n / IV_CHUNK] = c;
    } else {
        SYNC_WRITE(c);
    }
    c->v[n % IV_CHUNK] = v;
    l->len = n + 1;
    return 0;
}

static inline int64_t iv_list_get(iv_list_ref l, int64_t i)
{
    SYNC_READ(l);
    if ((uint64_t)i >= (uint64_t)l->len)
        return 0;
    iv_dir_ref d = l->dir;
    SYNC_READ(d);
    iv_chunk_ref c = d->c[i / IV_CHUNK];
    SYNC_READ(c);
    return c->v[i % IV_CHUNK];
}

static inline void iv_list_set(iv_list_ref l, int64_t i, int64_t v)
{
    SYNC_READ(l);
    if ((uint64_t)i >= (uint64_t)l->len)
        return;
    iv_dir_ref d = l->dir;
    SYNC_READ(d);
    iv_chunk_ref c = d->c[i / IV_CHUNK];
    SYNC_WRITE(c);
    c->v[i % IV_CHUNK] = v;
}

/* Keeps the chunks for reuse: memory is bounded by the longest the list ever was. */
static inline void iv_list_clear(iv_list_ref l)
{
    SYNC_WRITE(l);
    l->len = 0;
}

static inline int64_t iv_list_sum(iv_list_ref l)
{
    int64_t s = 0, n = iv_list_len(l);
    for (int64_t i = 0; i < n; i++)
        s = iv_add(s, iv_list_get(l, i));
    return s;
}

/* ---- the object model's lists ---- */


struct iv_items {
    SYNC_OBJECT_HEADER;
    int64_t v[];
};
struct iv_olist {
    struct iv_ohdr h;
    int64_t len, cap;
    SYNC_REF(struct iv_items) items;
    struct iv_retired *retired;      /* locks: items replaced (value.h) */
};
typedef SYNC_REF(struct iv_items) iv_items_ref;
typedef SYNC_REF(struct iv_olist) iv_olist_ref;

static inline int64_t iv_olist_len(iv_olist_ref l)
{
    SYNC_READ(l);
    return l->len;
}

static inline iv_val iv_olist_get(iv_olist_ref l, int64_t i)
{
    SYNC_READ(l);
    if ((uint64_t)i >= (uint64_t)l->len)
        return 0;
    iv_items_ref it = l->items;
    SYNC_READ(it);
    return (iv_val)it->v[i];
}

/* Appends w (the list takes the reference); -1 when the list is full. */
static inline int iv_olist_append(iv_olist_ref l, iv_val w)
{
    SYNC_WRITE(l);
    int64_t n = l->len;
    if (n >= IV_LIST_MAX)
        return -1;
    iv_items_ref it = l->items;
    if (n == l->cap) {
        int64_t ncap = l->cap ? l->cap * 2 : 4;
        iv_items_ref ni = (iv_items_ref)sync_alloc(sizeof(struct iv_items) +
                                                   (size_t)ncap * sizeof(int64_t));
        if (it != SYNC_NULL) {
            SYNC_READ(it);
            for (int64_t i = 0; i < n; i++)      /* element by element: no memcpy */
                ni->v[i] = it->v[i];             /* through a %gs reference */
#if IV_COUNT_ATOMIC
            iv_retire(&l->retired, it);
#else
            SYNC_FREE(it);
#endif
        }
        IV_STORE_REL(l->items, ni);              /* its elements before it */
        it = ni;
        l->cap = ncap;
    } else {
        SYNC_WRITE(it);
    }
    IV_STORE_REL(it->v[n], (int64_t)w);
    IV_STORE_REL(l->len, n + 1);                 /* the items before it */
    return 0;
}

/* Replaces element i (in range) and returns the old value (its reference, the
 * caller's to drop); out of range: returns w itself, which was not stored. */
static inline iv_val iv_olist_set(iv_olist_ref l, int64_t i, iv_val w)
{
    SYNC_READ(l);
    if ((uint64_t)i >= (uint64_t)l->len)
        return w;
    iv_items_ref it = l->items;
    SYNC_WRITE(it);
    iv_val old = (iv_val)it->v[i];
    IV_STORE_REL(it->v[i], (int64_t)w);
    return old;
}

/* Removes the last element and returns it (the reference moves to the caller); an
 * empty list gives 0. */
static inline iv_val iv_olist_pop(iv_olist_ref l)
{
    SYNC_READ(l);
    if (l->len == 0)
        return 0;
    SYNC_WRITE(l);
    iv_items_ref it = l->items;
    SYNC_READ(it);
    int64_t n = l->len - 1;
    IV_STORE_REL(l->len, n);
    return (iv_val)it->v[n];
}

/* Frees a list's memory (the caller drops what its elements hold first). */
static inline void iv_olist_free(iv_olist_ref l)
{
    SYNC_READ(l);
    if (l->items != SYNC_NULL)
        SYNC_FREE(l->items);
#if IV_COUNT_ATOMIC
    iv_retired_free(l->retired);
#endif
    SYNC_FREE(l);
}

#endif
