/*
 * workloads/interp/dict.h - dicts of int keys: open addressing with linear probing in a
 * power-of-two array of slots (struct iv_slots), grown by doubling at 3/4 full. The raw
 * mode's dict holds words; the object model's holds values and a keys version (kver),
 * which moves when a key is added, for the inline caches of LOAD_GLOBAL (state.h).
 * Operations take their barriers; the caller holds what the variant needs. A full dict
 * (IV_DICT_MAX keys) refuses a new key.
 */
#ifndef IV_DICT_H
#define IV_DICT_H

#include "workloads/interp/value.h"

struct iv_entry {
    int64_t key, val, used;
};
struct iv_slots {
    SYNC_OBJECT_HEADER;
    struct iv_entry e[];
};
struct iv_dict {
    SYNC_OBJECT_HEADER;
    wl_spin_t lock;
    int64_t count, cap;                          /* cap: a power of two */
    SYNC_REF(struct iv_slots) slots;
    char pad[128 - 40];
};
typedef SYNC_REF(struct iv_dict) iv_dict_ref;
typedef SYNC_REF(struct iv_slots) iv_slots_ref;

/* Index of key in s (cap slots), or of the empty slot where it would go. */
static inline int64_t iv_dict_probe(iv_slots_ref s, int64_t cap, int64_t key)
{
    int64_t i = (int64_t)(iv_hash(key) & (uint64_t)(cap - 1));
    for (;;) {
        if (!s->e[i].used || s->e[i].key == key)
            return i;
        i = (i + 1) & (cap - 1);
    }
}

static inline int64_t iv_dict_len(iv_dict_ref d)
{
    SYNC_READ(d);
    return d->count;
}

static inline int64_t iv_dict_get(iv_dict_ref d, int64_t key)
{
    SYNC_READ(d);
    iv_slots_ref s = d->slots;
    SYNC_READ(s);
    int64_t i = iv_dict_probe(s, d->cap, key);
    return s->e[i].used ? s->e[i].val : 0;
}

static inline iv_slots_ref iv_slots_new(int64_t cap)
{
    return (iv_slots_ref)sync_alloc(sizeof(struct iv_slots) +
                                    (size_t)cap * sizeof(struct iv_entry));
}

/* A copy of s (cap slots, read) with twice the slots, new in this block (no barrier). */
static iv_slots_ref iv_slots_grow(iv_slots_ref s, int64_t cap)
{
    int64_t ncap = cap * 2;
    iv_slots_ref ns = iv_slots_new(ncap);
    for (int64_t j = 0; j < cap; j++)
        if (s->e[j].used) {
            int64_t k = iv_dict_probe(ns, ncap, s->e[j].key);
            ns->e[k].key = s->e[j].key;             /* field by field: no memcpy */
            ns->e[k].val = s->e[j].val;             /* through a %gs reference */
            ns->e[k].used = 1;
        }
    return ns;
}

static int iv_dict_set(iv_dict_ref d, int64_t key, int64_t val)
{
    SYNC_READ(d);
    iv_slots_ref s = d->slots;
    int64_t cap = d->cap;
    SYNC_READ(s);
    int64_t i = iv_dict_probe(s, cap, key);
    if (s->e[i].used) {
        SYNC_WRITE(s);
        s->e[i].val = val;
        return 0;
    }
    int64_t count = d->count;
    if (count >= IV_DICT_MAX)
        return -1;
    SYNC_WRITE(d);
    if ((count + 1) * 4 > cap * 3) {                 /* grow to keep probes short */
        /* written out, not iv_slots_grow: the raw VM's code stays as it was measured
         * (a call here changed what the compiler inlined into iv_run, and the raw loop
         * ran much slower under mutex, locks and stm with equal instruction counts:
         * commit 63ff5c9) */
        int64_t ncap = cap * 2;
        iv_slots_ref ns = iv_slots_new(ncap);        /* new in this block: no barrier */
        for (int64_t j = 0; j < cap; j++)
            if (s->e[j].used) {
                int64_t k = iv_dict_probe(ns, ncap, s->e[j].key);
                ns->e[k].key = s->e[j].key;             /* field by field: no memcpy */
                ns->e[k].val = s->e[j].val;             /* through a %gs reference */
                ns->e[k].used = 1;
            }
        SYNC_FREE(s);
        d->slots = s = ns;
        d->cap = cap = ncap;
        i = iv_dict_probe(s, cap, key);
    } else {
        SYNC_WRITE(s);
    }
    s->e[i].key = key;
    s->e[i].val = val;
    s->e[i].used = 1;
    d->count = count + 1;
    return 0;
}

static inline int64_t iv_dict_sum(iv_dict_ref d)
{
    SYNC_READ(d);
    iv_slots_ref s = d->slots;
    SYNC_READ(s);
    int64_t t = 0;
    for (int64_t j = 0; j < d->cap; j++)
        if (s->e[j].used)
            t = iv_add(t, s->e[j].val);
    return t;
}

/* ---- the object model's dicts ---- */

struct iv_odict {
    struct iv_ohdr h;
    int64_t count, cap;              /* cap: a power of two */
    SYNC_REF(struct iv_slots) slots;
    int64_t kver;                    /* keys version: moves when a key is added (the
                                      * slots may move); values do not move it */
    struct iv_retired *retired;      /* locks: slots replaced (value.h) */
};
typedef SYNC_REF(struct iv_odict) iv_odict_ref;

static inline int64_t iv_odict_len(iv_odict_ref d)
{
    SYNC_READ(d);
    return d->count;
}

/* The slot of key in d, or -1. */
static inline int64_t iv_odict_find(iv_odict_ref d, int64_t key)
{
    SYNC_READ(d);
    iv_slots_ref s = d->slots;
    SYNC_READ(s);
    int64_t i = iv_dict_probe(s, d->cap, key);
    return s->e[i].used ? i : -1;
}

static inline iv_val iv_odict_get(iv_odict_ref d, int64_t key)
{
    int64_t i = iv_odict_find(d, key);
    return i < 0 ? 0 : (iv_val)d->slots->e[i].val;
}

/* Sets d[key] = w (the dict takes the reference). Returns the old value of the key
 * (the caller drops it), 0 for a new key; *full when the dict is full (w not stored,
 * still the caller's). */
static IV_OBJ_TEXT iv_val iv_odict_set(iv_odict_ref d, int64_t key, iv_val w, int *full)
{
    *full = 0;
    int64_t i = iv_odict_find(d, key);
    iv_slots_ref s = d->slots;
    if (i >= 0) {
        SYNC_WRITE(s);
        iv_val old = (iv_val)s->e[i].val;
        IV_STORE_REL(s->e[i].val, (int64_t)w);
        return old;
    }
    int64_t count = d->count, cap = d->cap;
    if (count >= IV_DICT_MAX) {
        *full = 1;
        return 0;
    }
    SYNC_WRITE(d);
    if ((count + 1) * 4 > cap * 3) {
        iv_slots_ref ns = iv_slots_grow(s, cap);
#if IV_COUNT_ATOMIC
        iv_retire(&d->retired, s);
#else
        SYNC_FREE(s);
#endif
        IV_STORE_REL(d->slots, ns);            /* its entries before it */
        s = ns;
        cap *= 2;
        IV_STORE_REL(d->cap, cap);             /* the slots before it: a reader that
                                                * sees the new cap sees them */
    } else {
        SYNC_WRITE(s);
    }
    i = iv_dict_probe(s, cap, key);
    s->e[i].key = key;
    IV_STORE_REL(s->e[i].val, (int64_t)w);
    IV_STORE_REL(s->e[i].used, 1);             /* the key and the value before it */
    IV_STORE_REL(d->count, count + 1);
    d->kver++;
    return 0;
}

/* Frees a dict's memory (the caller drops what its values hold first). */
static inline void iv_odict_free(iv_odict_ref d)
{
    SYNC_READ(d);
    SYNC_FREE(d->slots);
#if IV_COUNT_ATOMIC
    iv_retired_free(d->retired);
#endif
    SYNC_FREE(d);
}

#endif
