/*
 * workloads/interp/sdict.h - a dict whose conflicts are per key (`.global stmdict d`),
 * as pypy-stm's `stmdict` over stmgc's hashtable: under stm, two transactions that
 * insert or update different keys do not conflict. Everywhere else a stmdict is a
 * plain dict (dict.h), which is what CPython's programmer has; itm and htm run it as a
 * plain dict too (a put into the key index below would be instrumented or rolled
 * back by their transactions).
 *
 * Under stm (IV_SDICT_ON) a stmdict is
 *  - a key index outside the shared heap (struct iv_sdside): key -> entry number, an
 *    open-addressed table of 2 * IV_DICT_MAX slots that only grows (a key once given
 *    an entry keeps it), filled by compare-and-swap, outside any transaction;
 *  - IV_DICT_MAX entry objects in the shared heap, made at setup (committed, absent),
 *    each an object of its own: its value and whether the key is present.
 * A get and a set give the key an entry if it has none, as stmgc's lookup does
 * (harmless if the transaction aborts: the entry stays absent), and read it in the
 * transaction; a set then writes it. So a transaction reads and writes only the
 * entries of its keys: two that touch different keys share no object, and a get that
 * found a key absent conflicts with a later commit that sets it. A get that gave no
 * entry would read nothing: A reads key 7, B key 8, both absent; A sets 8 and commits,
 * B sets 7 and commits, and each read absent what the other committed, which no serial
 * order gives (tests/test_interp_sdict.c, absent_reads_conflict). The price: a key
 * looked up takes an entry as a set does, so IV_DICT_MAX distinct keys looked up or
 * set fill the dict (stmgc's major collection drops entries left empty; here none is
 * dropped). With none left, a get of a key without one answers absent, rightly at
 * every snapshot: no set of it can succeed. len() reads all IV_DICT_MAX entries, given
 * out or not (one given out after a read of `nent` would escape it, the same write
 * skew: len_conflicts_with_new_keys), so it conflicts with any set, as pypy-stm's len
 * of a hashtable does.
 *
 * Invariants:
 *  S1 A slot's state goes 0 (empty) -> 1 (claimed) -> 2 (ready), never back; key and
 *     entry number are written between 1 and 2, and read only after 2 is seen.
 *  S2 A key has at most one slot (the claim's probe stops at the first slot with that
 *     key, waiting for a claimed slot to become ready), so at most one entry.
 *  S3 Entry objects are made at setup and freed at teardown; an entry number names the
 *     same entry object for the run.
 * Memory orders: the claim's CAS 0 -> 1 is acquire-release (its loser waits for the
 * winner's 2); the store of 2 is release (key and entry number before it); readers load
 * the state with acquire. `nent` is a relaxed counter of entries given out (fetch-add:
 * each number once); the walkers read it when no thread runs.
 */
#ifndef IV_SDICT_H
#define IV_SDICT_H

#include "workloads/interp/dict.h"

#if defined(SYNC_RT_STM)
#define IV_SDICT_ON 1
#else
#define IV_SDICT_ON 0
#endif

struct iv_sdslot {
    _Atomic uint32_t state;          /* S1 */
    int32_t ent;                     /* the entry's number; -1: none left */
    int64_t key;
};

struct iv_sdent {
    SYNC_OBJECT_HEADER;
    int64_t val;                     /* an iv_val when present */
    int64_t present;
};
typedef SYNC_REF(struct iv_sdent) iv_sdent_ref;

struct iv_sdside {
    struct iv_sdslot slot[2 * IV_DICT_MAX];
    _Atomic int64_t nent;            /* entries given out */
    iv_sdent_ref ent[IV_DICT_MAX];   /* S3 */
};

struct iv_sdict {
    struct iv_ohdr h;
    struct iv_sdside *side;          /* set at setup, never changed */
};
typedef SYNC_REF(struct iv_sdict) iv_sdict_ref;

static inline struct iv_sdside *iv_sd_side(iv_sdict_ref d)
{
    SYNC_READ(d);
    return d->side;
}

/* The entry number of key, or -1 when it has none; with `claim`, gives it one (-1
 * when none is left). */
static inline int32_t iv_sd_index(struct iv_sdside *sd, int64_t key, bool claim)
{
    size_t mask = 2 * IV_DICT_MAX - 1;
    for (size_t i = (size_t)(iv_hash(key) & mask), k = 0; k <= mask; i = (i + 1) & mask, k++) {
        struct iv_sdslot *s = &sd->slot[i];
        /* acquire: pairs with the release store of 2 (key and ent before it) */
        uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);
        if (st == 0) {
            if (!claim)
                return -1;           /* no slot: nobody ever set the key */
            uint32_t zero = 0;
            /* acq_rel: the winner orders its writes after; a loser acquires the slot's
             * state and waits for the winner's 2 below */
            if (atomic_compare_exchange_strong_explicit(&s->state, &zero, 1,
                                                        memory_order_acq_rel,
                                                        memory_order_acquire)) {
                /* relaxed: each number once; the entries are the setup's (S3) */
                int64_t n = atomic_fetch_add_explicit(&sd->nent, 1, memory_order_relaxed);
                s->key = key;
                s->ent = n < IV_DICT_MAX ? (int32_t)n : -1;
                /* release: key and ent before the state (S1) */
                atomic_store_explicit(&s->state, 2, memory_order_release);
                return s->ent;
            }
            st = zero;
        }
        unsigned spins = 0;
        while (st == 1) {            /* being claimed: its key is not known yet */
            wl_spin_backoff(&spins);
            st = atomic_load_explicit(&s->state, memory_order_acquire);   /* as above */
        }
        if (s->key == key)
            return s->ent;
    }
    return -1;
}

/* d[key] and whether it is present; gives key an entry if it has none (above). */
static inline iv_val iv_sdict_get(iv_sdict_ref d, int64_t key, bool *present)
{
    int32_t i = iv_sd_index(iv_sd_side(d), key, true);
    *present = false;
    if (i < 0)
        return 0;
    iv_sdent_ref e = d->side->ent[i];
    SYNC_READ(e);
    *present = e->present != 0;
    return *present ? (iv_val)e->val : 0;
}

/* Sets d[key] = w (the dict takes the reference). Returns the old value (the caller
 * drops it), 0 for a new key; *full when no entry is left (w still the caller's). */
static inline iv_val iv_sdict_set(iv_sdict_ref d, int64_t key, iv_val w, int *full)
{
    int32_t i = iv_sd_index(iv_sd_side(d), key, true);
    *full = i < 0;
    if (i < 0)
        return 0;
    iv_sdent_ref e = d->side->ent[i];
    SYNC_READ(e);
    iv_val old = e->present ? (iv_val)e->val : 0;
    SYNC_WRITE(e);
    e->val = (int64_t)w;
    e->present = 1;
    return old;
}

/* The walkers' view: entries 0 .. iv_sdict_nent - 1, each present or not. */
static inline int64_t iv_sdict_nent(iv_sdict_ref d)
{
    /* relaxed: a count; an entry given out after it is absent in this snapshot */
    int64_t n = atomic_load_explicit(&iv_sd_side(d)->nent, memory_order_relaxed);
    return n < IV_DICT_MAX ? n : IV_DICT_MAX;  /* claims past the last entry got none */
}

static inline bool iv_sdict_at(iv_sdict_ref d, int64_t i, iv_val *w)
{
    iv_sdent_ref e = iv_sd_side(d)->ent[i];
    SYNC_READ(e);
    *w = e->present ? (iv_val)e->val : 0;
    return e->present != 0;
}

/* Reads every entry, given out or not (above). */
static inline int64_t iv_sdict_len(iv_sdict_ref d)
{
    int64_t n = 0;
    iv_val w;
    for (int64_t i = 0; i < IV_DICT_MAX; i++)
        n += iv_sdict_at(d, i, &w);
    return n;
}

/* Frees the entries and the head (what the values hold is the mode's); the side is
 * freed after the teardown's block (program.h). */
static inline void iv_sdict_free(iv_sdict_ref d)
{
    struct iv_sdside *sd = iv_sd_side(d);
    for (int i = 0; i < IV_DICT_MAX; i++)
        if (sd->ent[i] != SYNC_NULL)
            SYNC_FREE(sd->ent[i]);
    SYNC_FREE(d);
}

#endif
