/*
 * workloads/interp/object.h - what every type of the object model answers, whatever
 * the memory mode: freeing an object's memory, its truth, and a set of objects (the
 * tracing collector's marks, the final check's walk).
 */
#ifndef IV_OBJECT_H
#define IV_OBJECT_H

#include "workloads/interp/box.h"
#include "workloads/interp/dict.h"
#include "workloads/interp/list.h"
#include "workloads/interp/queue.h"
#include "workloads/interp/sdict.h"

/* The type of declared global gl's object (not an int): a stmdict is a dict but under
 * stm (sdict.h). */
static inline int iv_global_type(const struct iv_global *gl)
{
    if (gl->kind == IV_KIND_DICT && gl->per_entry && IV_SDICT_ON)
        return IV_T_SDICT;
    return iv_kind_type(gl->kind);
}

/* Frees the memory of w's object (not a small int): a container's storage with it.
 * What its elements hold is the memory mode's to drop first. */
static IV_OBJ_TEXT void iv_free_obj(iv_val w)
{
    switch (iv_vtype(w)) {
    case IV_T_LIST: iv_olist_free((iv_olist_ref)iv_vref(w)); break;
    case IV_T_DICT: iv_odict_free((iv_odict_ref)iv_vref(w)); break;
    case IV_T_QUEUE: iv_oqueue_free((iv_oqueue_ref)iv_vref(w)); break;
    case IV_T_SDICT: iv_sdict_free((iv_sdict_ref)iv_vref(w)); break;
    default: SYNC_FREE(iv_vref(w)); break;
    }
}

/* Frees the objects of n tagged values (small ints skipped) in one block; a block of
 * its own function, so that no loop around it keeps values across its setjmp. */
static IV_OBJ_TEXT SYNC_NOINLINE void iv_free_all(const iv_val *v, size_t n)
{
    SYNC_ATOMIC("interp.teardown") {
        for (size_t i = 0; i < n; i++)
            if (iv_vtype(v[i]) != IV_T_INT)
                iv_free_obj(v[i]);
    }
}

/* The values a declared queue or stmdict (a type from IV_T_QUEUE on) holds, for the
 * walkers (census, collection, release, drop), which run while no slice does
 * (queue.h's Q4): slots 0 .. iv_declared_n - 1, each holding a value or not. */
static inline int64_t iv_declared_n(iv_val x)
{
    return iv_vtype(x) == IV_T_QUEUE ? iv_oqueue_len((iv_oqueue_ref)iv_vref(x))
                                     : iv_sdict_nent((iv_sdict_ref)iv_vref(x));
}

static inline bool iv_declared_at(iv_val x, int64_t i, iv_val *w)
{
    if (iv_vtype(x) == IV_T_QUEUE) {
        *w = iv_oqueue_at((iv_oqueue_ref)iv_vref(x), i);
        return true;
    }
    return iv_sdict_at((iv_sdict_ref)iv_vref(x), i, w);
}

/* The truth of a queue (an object: queues are named only by QUEUE_*) or a stmdict: out
 * of line, so that iv_truth's switch stays the four cases of the common types. */
static IV_OBJ_TEXT SYNC_NOINLINE bool iv_truth_declared(iv_val w)
{
    return iv_vtype(w) == IV_T_QUEUE || iv_sdict_len((iv_sdict_ref)iv_vref(w)) != 0;
}

static inline bool iv_truth(iv_val w)
{
    switch (iv_vtype(w)) {
    case IV_T_INT: return w != 0;
    case IV_T_BOX: return iv_box_value(w) != 0;
    case IV_T_LIST: return iv_olist_len((iv_olist_ref)iv_vref(w)) != 0;
    case IV_T_DICT: return iv_odict_len((iv_odict_ref)iv_vref(w)) != 0;
    default: return iv_truth_declared(w);
    }
}

/* ---- a set of objects (open addressing on the tagged values; mask + 1 slots, a
 *      power of two, at least twice the members) ---- */

struct iv_markset {
    iv_val *slot;
    size_t mask;
};

static IV_OBJ_TEXT bool iv_mark_has(const struct iv_markset *ms, iv_val w)
{
    for (size_t i = (size_t)(iv_hash((int64_t)w) & ms->mask);; i = (i + 1) & ms->mask) {
        if (ms->slot[i] == w)
            return true;
        if (ms->slot[i] == 0)
            return false;
    }
}

/* Marks w; 1 if it was not marked before. */
static IV_OBJ_TEXT int iv_mark_add(struct iv_markset *ms, iv_val w)
{
    for (size_t i = (size_t)(iv_hash((int64_t)w) & ms->mask);; i = (i + 1) & ms->mask) {
        if (ms->slot[i] == w)
            return 0;
        if (ms->slot[i] == 0) {
            ms->slot[i] = w;
            return 1;
        }
    }
}

#endif
