/*
 * workloads/interp/value.h - values and the heads of the shared heap's objects.
 *
 * Every object starts with the runtime's header (SYNC_OBJECT_HEADER) and a lock word,
 * used by the `locks` variant only, at one offset in every object, so that a bytecode
 * finds any object's lock without knowing its type. A declared `.global int` is a cell
 * (struct iv_cell) in every mode; declared objects are padded to a cache line of their
 * own so that threads' objects never share one.
 *
 * Values (the object model: every mode but raw). A stack slot, a local, a cell of a
 * `.global int`, a list element and a dict value hold an iv_val: a small integer in
 * IV_SMALL_MIN..IV_SMALL_MAX inline (v << 4: the cached, immortal small ints of
 * CPython; 0 is the int 0), or a reference to an object with its type in the low 4
 * bits (objects are 16-byte aligned everywhere: runtime/plain_heap.h, the STM's
 * granules). Every other integer is a box (box.h), allocated when an operation
 * produces it, as CPython's results outside -5..256 are. Dict keys are integers kept
 * by value (a key holds no reference). Under raw, ints are machine words and the cells
 * and containers hold them directly.
 *
 * The head of an object of the object model (struct iv_ohdr) has the fields the memory
 * modes count in: the owner (the allocating thread, or IV_IMMORTAL) and two counts,
 * whose meaning each mode gives (mem_<mode>.h).
 */
#ifndef IV_VALUE_H
#define IV_VALUE_H

#include "workloads/interp/base.h"

struct iv_obj {
    SYNC_OBJECT_HEADER;
    wl_spin_t lock;
};
struct iv_cell {
    SYNC_OBJECT_HEADER;
    wl_spin_t lock;
    int64_t value;
    uint64_t ver;                    /* object model under locks: moves at each store of
                                      * the value, under the lock (loop_obj.h) */
    char pad[128 - 32];
};
typedef SYNC_REF(void) iv_ref;
typedef SYNC_REF(struct iv_cell) iv_cell_ref;

#define IV_SMALL_MIN (-5)
#define IV_SMALL_MAX 256
enum { IV_T_INT, IV_T_BOX, IV_T_LIST, IV_T_DICT, IV_T_QUEUE, IV_T_SDICT };
#define IV_TAG 15u
#define IV_IMMORTAL (-1)

/* The head of every object of the object model: the lock (locks runtime; at the same
 * place as in struct iv_obj), the owner and the two counts. */
struct iv_ohdr {
    SYNC_OBJECT_HEADER;
    wl_spin_t lock;
    int32_t owner;
    int64_t rc, rcs;
    uint64_t ver;                    /* containers under locks: moves at each change, under
                                      * the lock (loop_obj.h's reads without it) */
};
typedef SYNC_REF(struct iv_ohdr) iv_oref;

/* Under locks (IV_COUNT_ATOMIC), a store that a reader without the lock may load:
 * release, so that the reader's acquire load sees what it names made; elsewhere a
 * plain store (the STM's references are not plain pointers). */
#if IV_COUNT_ATOMIC
#define IV_STORE_REL(lv, x) __atomic_store_n(&(lv), (x), __ATOMIC_RELEASE)
#else
#define IV_STORE_REL(lv, x) ((lv) = (x))
#endif

/* A container's storage that it replaced (a list's items, a dict's slots) while a
 * reader without the lock may still read it (locks: loop_obj.h): kept on the
 * container's list until the container is freed, when nobody holds it. */
struct iv_retired {
    void *p;
    struct iv_retired *next;
};

#if IV_COUNT_ATOMIC
/* Keeps p (a container's replaced storage) on the container's list (value.h). */
static inline void iv_retire(struct iv_retired **head, void *p)
{
    struct iv_retired *r = malloc(sizeof *r);
    if (!r)
        sync_out_of_resources("out of memory keeping a container's old storage");
    r->p = p;
    r->next = *head;
    *head = r;
}

static inline void iv_retired_free(struct iv_retired *r)
{
    while (r) {
        struct iv_retired *n = r->next;
        SYNC_FREE(r->p);
        free(r);
        r = n;
    }
}
#endif

_Static_assert(offsetof(struct iv_ohdr, lock) == offsetof(struct iv_obj, lock),
               "the locks variant finds every object's lock at one offset");

/* The type of a declared container of kind k (enum iv_kind, not an int). */
static inline int iv_kind_type(int k)
{
    return k == IV_KIND_LIST ? IV_T_LIST : k == IV_KIND_DICT ? IV_T_DICT : IV_T_QUEUE;
}

static inline int iv_vtype(iv_val w) { return (int)(w & IV_TAG); }
static inline iv_oref iv_vref(iv_val w) { return (iv_oref)(uintptr_t)(w & ~(uint64_t)IV_TAG); }
static inline iv_val iv_small(int64_t v) { return (uint64_t)v << 4; }
static inline bool iv_fits_small(int64_t v) { return v >= IV_SMALL_MIN && v <= IV_SMALL_MAX; }
static inline iv_val iv_tagged(iv_oref r, int type) { return (iv_val)(uintptr_t)r | (unsigned)type; }

#endif
