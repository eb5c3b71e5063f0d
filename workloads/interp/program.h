/*
 * workloads/interp/program.h - the program's own objects: the declared globals (a cell
 * per int, a list or a dict; one per thread for `.per_thread`), the constants and the
 * globals' first values, and the module dict of the shared int globals (loop_obj.h,
 * "Global names"). Made at setup (or by the thread itself: thread.h), freed at
 * teardown; the memory mode knows them through its program_object hook.
 */
#ifndef IV_PROGRAM_H
#define IV_PROGRAM_H

#include "workloads/interp/memory_dispatch.h"

/* An object of the program (a constant, a global's first value, a declared list or
 * dict) in the object model: never in a registry, never freed before the teardown
 * (refcount: one reference more, the program's; biased: immortal, or counted by its
 * owner for a container). Called inside a block. */
static IV_OBJ_TEXT void iv_program_obj(const struct iv_ctx *cx, iv_oref o, int tid, bool container)
{
    iv_mem_program_object(cx->memory, cx, o, tid, container);
}

static IV_OBJ_TEXT iv_val iv_program_int(const struct iv_ctx *cx, int64_t v)
{
    if (iv_fits_small(v))
        return iv_small(v);
    iv_box_ref b = SYNC_ALLOC(struct iv_box);
    b->value = v;
    iv_program_obj(cx, (iv_oref)b, 0, false);
    return iv_tagged((iv_oref)b, IV_T_BOX);
}

/* Records a program's object for the teardown (threads make their own objects). */
static IV_OBJ_TEXT void iv_program_keep(const struct iv_ctx *cx0, iv_val w)
{
    struct iv_ctx *cx = (struct iv_ctx *)cx0;
    pthread_mutex_lock(&cx->pobj_mu);
    iv_grow(&cx->pobj, &cx->cappobj, cx->npobj + 1);
    cx->pobj[cx->npobj++] = w;
    pthread_mutex_unlock(&cx->pobj_mu);
}

/* The name's hash: the module dict's key (FNV-1a, 64 bits). */
static IV_OBJ_TEXT int64_t iv_name_hash(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *p = name; *p; p++)
        h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
    return (int64_t)h;
}

/* The module dict of the shared int globals (loop_obj.h "Global names"), and every
 * thread's inline caches. -1 and err when two names hash alike or memory runs out. */
static IV_OBJ_TEXT int iv_module_new(struct iv_ctx *cx, char *err, size_t errlen)
{
    const struct iv_program *pr = cx->prog;
    for (int g = 0; g < pr->nglobals; g++) {
        cx->gkey[g] = iv_name_hash(pr->globals[g].name);
        for (int h = 0; h < g; h++)
            if (cx->gkey[h] == cx->gkey[g]) {
                snprintf(err, errlen, "interp: the names '%s' and '%s' hash alike",
                         pr->globals[h].name, pr->globals[g].name);
                return -1;
            }
    }
    for (int t = 0; t < cx->nthreads; t++) {
        cx->th[t].gcache = calloc((size_t)pr->ncode, sizeof *cx->th[t].gcache);
        if (!cx->th[t].gcache) {
            snprintf(err, errlen, "interp: out of memory for the inline caches");
            return -1;
        }
    }
    iv_odict_ref md = SYNC_NULL;
    SYNC_ATOMIC("interp.setup") {
        md = (iv_odict_ref)sync_alloc(128);           /* a line of its own */
        iv_program_obj(cx, (iv_oref)md, 0, true);
        md->cap = 8;
        md->slots = iv_slots_new(8);
        md->kver = 1;
        for (int g = 0; g < pr->nglobals; g++) {
            int full;
            if (pr->globals[g].kind == IV_KIND_INT && !pr->globals[g].per_thread)
                iv_odict_set(md, cx->gkey[g], (iv_val)(uintptr_t)cx->objs[(size_t)g *
                                                                          (size_t)cx->nthreads],
                             &full);
        }
    }
    cx->module = md;
    return 0;
}

static iv_ref iv_new_object(const struct iv_ctx *cx, const struct iv_global *gl, int tid)
{
    iv_ref r = SYNC_NULL;
    iv_val first = 0;
    bool objects = cx->memory != IV_MEM_RAW;
    /* a queue's side (queue.h), made outside the block: a re-run must not make two */
    struct iv_txq *side = IV_QUEUE_SIDE && gl->kind == IV_KIND_QUEUE ? iv_txq_new() : NULL;
    bool sdict = objects && iv_global_type(gl) == IV_T_SDICT;
    struct iv_sdside *sd = sdict ? calloc(1, sizeof *sd) : NULL;   /* sdict.h */
    if (sdict && !sd)
        sync_out_of_resources("interp: out of memory for a stmdict's key index");
    SYNC_ATOMIC("interp.setup") {
        /* A re-run re-allocates: only `r` and `first` (assigned) survive the block. */
        if (gl->kind == IV_KIND_INT) {
            iv_cell_ref c = SYNC_ALLOC(struct iv_cell);
            first = objects ? iv_program_int(cx, gl->init) : 0;
            c->value = objects ? (int64_t)first : gl->init;
            r = (iv_ref)c;
        } else if (objects) {
            size_t sz = gl->kind == IV_KIND_LIST   ? sizeof(struct iv_olist)
                      : gl->kind == IV_KIND_QUEUE ? sizeof(struct iv_oqueue)
                      : sdict                     ? sizeof(struct iv_sdict)
                                                  : sizeof(struct iv_odict);
            iv_oref o = (iv_oref)sync_alloc(sz < 128 ? 128 : sz);   /* a line of its own */
            iv_program_obj(cx, o, tid, true);
            if (gl->kind == IV_KIND_QUEUE)
                ((iv_oqueue_ref)o)->side = side;
            if (sdict) {
                ((iv_sdict_ref)o)->side = sd;
                for (int i = 0; i < IV_DICT_MAX; i++)   /* committed, absent (S3) */
                    sd->ent[i] = SYNC_ALLOC(struct iv_sdent);
            } else if (gl->kind == IV_KIND_DICT) {
                ((iv_odict_ref)o)->cap = 8;
                ((iv_odict_ref)o)->slots = iv_slots_new(8);
            }
            r = (iv_ref)o;
        } else if (gl->kind == IV_KIND_LIST) {
            iv_list_ref l = SYNC_ALLOC(struct iv_list);
            l->dir = SYNC_ALLOC(struct iv_dir);
            r = (iv_ref)l;
        } else {
            iv_dict_ref d = SYNC_ALLOC(struct iv_dict);
            d->cap = 8;
            d->slots = iv_slots_new(8);
            r = (iv_ref)d;
        }
    }
    if (iv_vtype(first) == IV_T_BOX)
        iv_program_keep(cx, first);
    return r;
}

static void iv_free_object(const struct iv_ctx *cx, const struct iv_global *gl, iv_ref r)
{
    bool objects = cx->memory != IV_MEM_RAW;
    struct iv_thread *th = &cx->th[0];
    struct iv_txq *side = NULL;
    struct iv_sdside *sd = NULL;
    if (objects && gl->kind == IV_KIND_QUEUE) {
        SYNC_ATOMIC("interp.teardown") {
            iv_oqueue_ref q = (iv_oqueue_ref)r;
            SYNC_READ(q);
            side = q->side;
        }
    } else if (objects && iv_global_type(gl) == IV_T_SDICT) {
        SYNC_ATOMIC("interp.teardown") {
            sd = iv_sd_side((iv_sdict_ref)r);
        }
    }
    SYNC_ATOMIC("interp.teardown") {
        if (objects && gl->kind == IV_KIND_INT) {
            iv_cell_ref c = (iv_cell_ref)r;
            SYNC_READ(c);
            iv_mem_teardown_global(cx->memory, cx, th, (iv_val)c->value, false);
        } else if (objects) {
            iv_val w = iv_tagged((iv_oref)r, iv_global_type(gl));
            iv_mem_teardown_global(cx->memory, cx, th, w, true);   /* with what it holds */
            r = SYNC_NULL;
        } else if (gl->kind == IV_KIND_LIST) {
            iv_list_ref l = (iv_list_ref)r;
            SYNC_READ(l);
            iv_dir_ref d = l->dir;
            SYNC_READ(d);
            for (int i = 0; i < IV_NCHUNKS; i++)
                if (d->c[i] != SYNC_NULL)
                    SYNC_FREE(d->c[i]);
            SYNC_FREE(d);
        } else if (gl->kind == IV_KIND_DICT) {
            iv_dict_ref d = (iv_dict_ref)r;
            SYNC_READ(d);
            SYNC_FREE(d->slots);
        }
        if (r != SYNC_NULL)
            SYNC_FREE(r);
    }
    iv_txq_free(side);        /* after the block that freed what it held (queue.h) */
    free(sd);                 /* likewise (sdict.h) */
}

#endif
