/*
 * workloads/interp/alloc.h - allocation in the object model: a box, a list, a dict.
 * Each new object is the running block's (SYNC_ALLOC inside it: no barrier), owned by
 * the allocating thread, counted in its allocations, and handed to the memory mode's
 * `allocated` hook; the creator holds its one reference. `mode` is a constant where
 * the loops call these (loop_obj.h), so the hook's dispatch folds away.
 */
#ifndef IV_ALLOC_H
#define IV_ALLOC_H

#include "workloads/interp/memory_dispatch.h"

/* A new object's owner, its allocation count and the mode's record; w is it tagged. */
static inline IV_OBJ_TEXT void iv_born(int mode, const struct iv_ctx *cx, struct iv_thread *th, iv_oref o,
                           iv_val w)
{
    th->mem.allocs++;
    o->owner = th->tid;
    iv_mem_allocated(mode, cx, th, o, w);
}

#if IV_BOX_FREELIST
/* A box of th's own again (freelist.h): its owner field is th's already and is not
 * written (a reader without a lock may be reading it: try_incref). release: a reader
 * whose try_incref reads the reset shared word sees everything th did before, the
 * store that replaced the dead box where the reader found it included (loop_obj.h's
 * recheck then refuses it). */
static inline IV_OBJ_TEXT void iv_reborn(int mode, const struct iv_ctx *cx, struct iv_thread *th,
                                         iv_box_ref b, iv_val w)
{
    th->mem.allocs++;
    __atomic_store_n(&b->h.rcs, 0, __ATOMIC_RELEASE);
    iv_mem_allocated(mode, cx, th, (iv_oref)b, w);
}
#endif

static inline IV_OBJ_TEXT iv_val iv_new_box(int mode, const struct iv_ctx *cx, struct iv_thread *th, int64_t v)
{
    iv_box_ref b;
#if IV_BOX_FREELIST
    if (iv_mem_boxes(mode) && (b = iv_box_take(th)) != NULL) {
        b->value = v;
        iv_val w = iv_tagged((iv_oref)b, IV_T_BOX);
        iv_reborn(mode, cx, th, b, w);
        return w;
    }
#endif
    b = SYNC_ALLOC(struct iv_box);
    b->value = v;
    iv_val w = iv_tagged((iv_oref)b, IV_T_BOX);
    iv_born(mode, cx, th, (iv_oref)b, w);
    return w;
}

/* The value of int v: inline when small, else a new box. */
static inline IV_OBJ_TEXT iv_val iv_make_int(int mode, const struct iv_ctx *cx, struct iv_thread *th, int64_t v)
{
    return iv_fits_small(v) ? iv_small(v) : iv_new_box(mode, cx, th, v);
}

/* A new list or dict (type IV_T_LIST or IV_T_DICT). */
static inline IV_OBJ_TEXT iv_val iv_new_container(int mode, const struct iv_ctx *cx, struct iv_thread *th,
                                      int type)
{
    size_t sz = type == IV_T_LIST ? sizeof(struct iv_olist) : sizeof(struct iv_odict);
    iv_oref o = (iv_oref)sync_alloc(sz);
    if (type == IV_T_DICT) {
        iv_odict_ref d = (iv_odict_ref)o;
        d->cap = 8;
        d->slots = iv_slots_new(8);
    }
    iv_val w = iv_tagged(o, type);
    iv_born(mode, cx, th, o, w);
    return w;
}

#endif
