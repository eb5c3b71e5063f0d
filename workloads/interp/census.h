/*
 * workloads/interp/census.h - the final check's census of references: after a run,
 * with no thread running, how many references each object of the object model gets
 * from what the program holds: the globals' cells, the elements and values of every
 * container reachable from them, the constants' slots, and the program's own hold on
 * its objects (memory.h's program_object: one more reference on a constant and on a
 * global's first value, the declaration's on a declared container). The threads'
 * stacks are empty then: every run ended at HALT, which drops them (the check fails
 * on a thread that did not). A memory mode's check hook compares the census with its
 * own accounting: the counting modes with their counts, tracing with its registries.
 */
#ifndef IV_CENSUS_H
#define IV_CENSUS_H

#include "workloads/interp/state.h"

/* The census: an open-address map from a tagged value to its references (mask + 1
 * slots, a power of two, at least twice the entries). */
struct iv_census {
    iv_val *key;
    int64_t *refs;
    size_t mask, n;
    iv_val *todo;                    /* containers still to walk */
    size_t ntodo, captodo;
};

static IV_OBJ_TEXT size_t iv_census_slot(const struct iv_census *c, iv_val w)
{
    size_t i = (size_t)(iv_hash((int64_t)w) & c->mask);
    while (c->key[i] != 0 && c->key[i] != w)
        i = (i + 1) & c->mask;
    return i;
}

static IV_OBJ_TEXT void iv_census_grow(struct iv_census *c)
{
    struct iv_census o = *c;
    size_t cap = o.key ? 2 * (o.mask + 1) : 256;
    c->key = calloc(cap, sizeof *c->key);
    c->refs = calloc(cap, sizeof *c->refs);
    if (!c->key || !c->refs)
        sync_out_of_resources("interp: out of memory for the census of %zu objects", cap);
    c->mask = cap - 1;
    for (size_t i = 0; o.key && i <= o.mask; i++)
        if (o.key[i]) {
            size_t j = iv_census_slot(c, o.key[i]);
            c->key[j] = o.key[i];
            c->refs[j] = o.refs[i];
        }
    free(o.key);
    free(o.refs);
}

/* k more references to w (nothing for a small int); a container seen for the first
 * time is walked later. */
static IV_OBJ_TEXT void iv_census_add(struct iv_census *c, iv_val w, int64_t k)
{
    if (iv_vtype(w) == IV_T_INT)
        return;
    if (2 * (c->n + 1) > c->mask + 1 || !c->key)
        iv_census_grow(c);
    size_t i = iv_census_slot(c, w);
    if (c->key[i] == 0) {
        c->key[i] = w;
        c->n++;
        if (iv_vtype(w) >= IV_T_LIST) {                /* a container */
            iv_grow(&c->todo, &c->captodo, c->ntodo + 1);
            c->todo[c->ntodo++] = w;
        }
    }
    c->refs[i] += k;
}

/* Takes the census (c zeroed by the caller). Inside the caller's block. */
static IV_OBJ_TEXT void iv_census_take(const struct iv_ctx *cx, struct iv_census *c)
{
    const struct iv_program *pr = cx->prog;
    {
        free(c->key);                            /* a re-run starts again */
        free(c->refs);
        c->key = NULL;
        c->refs = NULL;
        c->n = c->mask = c->ntodo = 0;
        iv_census_grow(c);
        for (int g = 0; g < pr->nglobals; g++)
            for (int t = 0; t < (pr->globals[g].per_thread ? cx->nthreads : 1); t++) {
                size_t k = (size_t)g * (size_t)cx->nthreads + (size_t)t;
                if (pr->globals[g].kind == IV_KIND_INT) {
                    iv_cell_ref cell = (iv_cell_ref)cx->objs[k];
                    SYNC_READ(cell);
                    iv_census_add(c, (iv_val)cell->value, 1);
                    /* a `.per_thread` int's setup cell (thread.h) holds its first value */
                    iv_cell_ref ph = (iv_cell_ref)cx->placeholders[k];
                    if (ph != SYNC_NULL) {
                        SYNC_READ(ph);
                        iv_census_add(c, (iv_val)ph->value, 1);
                    }
                } else {
                    iv_census_add(c, cx->gobj[k], 1);   /* the declaration's */
                }
            }
        for (int i = 0; i < pr->ncode; i++)
            iv_census_add(c, (iv_val)cx->konst[i], 2);   /* the slot's, the program's */
        for (size_t i = 0; i < cx->npobj; i++)
            iv_census_add(c, cx->pobj[i], 1);            /* the program's */
        while (c->ntodo > 0) {
            iv_val x = c->todo[--c->ntodo];
            if (iv_vtype(x) == IV_T_LIST) {
                iv_olist_ref l = (iv_olist_ref)iv_vref(x);
                for (int64_t i = 0, n = iv_olist_len(l); i < n; i++)
                    iv_census_add(c, iv_olist_get(l, i), 1);
            } else if (iv_vtype(x) >= IV_T_QUEUE) {   /* object.h */
                iv_val e;
                for (int64_t i = 0, n = iv_declared_n(x); i < n; i++)
                    if (iv_declared_at(x, i, &e))
                        iv_census_add(c, e, 1);
            } else {
                iv_odict_ref d = (iv_odict_ref)iv_vref(x);
                SYNC_READ(d);
                iv_slots_ref s = d->slots;
                SYNC_READ(s);
                for (int64_t j = 0; j < d->cap; j++)
                    if (s->e[j].used)
                        iv_census_add(c, (iv_val)s->e[j].val, 1);
            }
        }
    }
}

static IV_OBJ_TEXT void iv_census_free(struct iv_census *c)
{
    free(c->key);
    free(c->refs);
    free(c->todo);
}

static IV_OBJ_TEXT const char *iv_census_type(iv_val w)
{
    static const char *const names[] = {"int", "box", "list", "dict"};
    return names[iv_vtype(w) & 3];
}

/* What a mode says of object w, which the heap holds `refs` references to: 1 when its
 * own accounting agrees, with its figure in *theirs for the message. Called inside a
 * block, with no thread running. */
typedef int (*iv_census_agrees)(void *arg, iv_val w, int64_t refs, int64_t *theirs);

/* The check hooks' verdict: every object of the census against the mode's `agrees`.
 * The first disagreement goes into msg ("`what` 3" names the mode's figure); -1 then.
 * A block of its own. */
static IV_OBJ_TEXT SYNC_NOINLINE int iv_census_check(const struct iv_ctx *cx, const char *what,
                                                     iv_census_agrees agrees, void *arg,
                                                     char *msg, size_t len)
{
    struct iv_census c = {0};
    int bad = 0;
    SYNC_ATOMIC("interp.census") {
        iv_census_take(cx, &c);
        bad = 0;
        for (size_t i = 0; i <= c.mask && !bad; i++) {
            int64_t theirs = 0;
            if (c.key[i] && !agrees(arg, c.key[i], c.refs[i], &theirs)) {
                snprintf(msg, len, "interp %s: --memory %s: the heap holds %lld reference%s "
                         "to a %s, whose %s is %lld", cx->prog->name,
                         iv_memory_names[cx->memory], (long long)c.refs[i],
                         c.refs[i] == 1 ? "" : "s", iv_census_type(c.key[i]), what,
                         (long long)theirs);
                bad = 1;
            }
        }
    }
    iv_census_free(&c);
    return bad ? -1 : 0;
}

#endif
