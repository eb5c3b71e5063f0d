/*
 * workloads/interp/box.h - a boxed integer: an int of the object model outside
 * IV_SMALL_MIN..IV_SMALL_MAX (value.h), immutable once made, as CPython's ints. Made by
 * iv_new_box (alloc.h), when an operation produces such an int.
 */
#ifndef IV_BOX_H
#define IV_BOX_H

#include "workloads/interp/value.h"

struct iv_box {
    struct iv_ohdr h;
    int64_t value;
};
typedef SYNC_REF(struct iv_box) iv_box_ref;

/* The int a box holds (w is a box). */
static inline int64_t iv_box_value(iv_val w)
{
    iv_box_ref b = (iv_box_ref)iv_vref(w);
    SYNC_READ(b);
    return b->value;
}

#endif
