/*
 * workloads/interp_locks.c - the interp workload's `locks` variant, in the manner of
 * free-threaded CPython (PEP 703): every object (int cell, list, dict) carries its
 * own lock, and each bytecode that touches an object holds that object's lock for the
 * bytecode's duration. The VM itself is workloads/interp/vm.h.
 *
 * Atomic sections (ATOMIC_BEGIN .. ATOMIC_END) must be atomic with respect to other
 * sections AND to single bytecodes of other threads. The loader computes, for each
 * ATOMIC_BEGIN, the set of objects its section can touch (the code reachable up to its
 * ATOMIC_END, callees included; at most 64 objects, one bit each). The outermost
 * ATOMIC_BEGIN takes the locks of that set in increasing object order and the matching
 * ATOMIC_END releases them (conservative two-phase locking); inside a section the
 * bytecodes take no further locks (the set covers everything they can touch).
 *
 * Invariants:
 *  - A thread holds object locks only (a) for the duration of one bytecode outside any
 *    section, one lock at a time, never waiting for another lock while holding it; or
 *    (b) inside a section, the locks of its set, acquired in increasing object index.
 *    So every waiter that holds locks holds only lower-numbered ones than it waits
 *    for: no cycle, no deadlock. Per-thread objects are one per thread with the same
 *    index, and a thread only ever locks its own instance.
 *  - th->held is the set locked by the running section (0 outside), so an abandoned
 *    section (HALT inside, or the stuck guard) can release exactly what it took.
 *  - Each lock is wl_spin_t (workloads/lib/wl_spin.h): its acquire CAS pairs with the
 *    release store of the previous holder, so an object's contents written under its
 *    lock are visible to the next holder.
 *
 * Contention analysis: a wait names the object (iv_describe_object: "int counter"),
 * the waiter's location (its IV_WHERE of the object: the bytecode that waits, or the
 * ATOMIC_BEGIN of a section, which ivl_enter stores for each object of its set) and
 * the holder's (the same slot of the holder's, iv_where_at). The locks carry no site
 * code (WL_AT_NONE: the locations say it), so taking one costs what it did.
 */
#include "runtime/sync.h"
#include "workloads/lib/wl_spin.h"

struct iv_thread;
static inline void ivl_lock(struct iv_thread *th, int g);
static inline void ivl_unlock(struct iv_thread *th, int g);
static inline void ivl_enter(struct iv_thread *th, unsigned long long set, uint32_t where);
static inline void ivl_exit(struct iv_thread *th);
static inline int ivl_lock_obj(struct iv_thread *th, int g, uint64_t o, intptr_t adepth,
                               int dyn);

#define IV_LOCK(th, g, adepth)     \
    do {                           \
        if ((adepth) == 0)         \
            ivl_lock((th), (g));   \
    } while (0)
#define IV_UNLOCK(th, g, adepth)   \
    do {                           \
        if ((adepth) == 0)         \
            ivl_unlock((th), (g)); \
    } while (0)
#define IV_ATOMIC_ENTER(th, set) ivl_enter((th), (set), (uint32_t)pc)
#define IV_ATOMIC_EXIT(th) ivl_exit(th)
/* The object model's container operations: on a declared global (dyn 0) as IV_LOCK; on
 * a container from the stack (dyn 1) its own lock for the bytecode, unless a running
 * section already holds it (a declared container pushed by LOAD_GLOBAL). Returns
 * whether it locked; IV_UNLOCK_OBJ releases what it took. */
#define IV_LOCK_OBJ(th, g, o, adepth, dyn) ivl_lock_obj((th), (g), (o), (adepth), (dyn))
#define IV_UNLOCK_OBJ(th, g, o, adepth, k)                              \
    do {                                                                \
        if (k)                                                          \
            wl_spin_unlock(&((struct iv_obj *)(uintptr_t)((o) & ~15ull))->lock); \
    } while (0)
/* The object model's counts are atomic here: no global lock orders them (mem_refcount.h, mem_biased.h). */
#define IV_COUNT_ATOMIC 1

#include "workloads/interp/vm.h"

static inline void ivl_lock(struct iv_thread *th, int g)
{
    struct iv_obj *obj = (struct iv_obj *)th->obj[g];
    wl_spin_lock_at(&obj->lock, (uintptr_t)obj, WL_AT_NONE);
}

static inline void ivl_unlock(struct iv_thread *th, int g)
{
    wl_spin_unlock(&((struct iv_obj *)th->obj[g])->lock);
}

static inline int ivl_lock_obj(struct iv_thread *th, int g, uint64_t o, intptr_t adepth,
                               int dyn)
{
    struct iv_obj *obj = (struct iv_obj *)(uintptr_t)(o & ~15ull);
    if (adepth > 0) {
        if (!dyn)
            return 0;                                /* in the section's set */
        for (uint64_t s = th->held; s; s &= s - 1)
            if ((struct iv_obj *)th->obj[__builtin_ctzll(s)] == obj)
                return 0;                            /* the section holds it */
    }
    (void)g;
    /* Leaf lock: nothing else is taken while it is held (one bytecode's access), so a
     * section waiting for it cannot be part of a cycle. */
    wl_spin_lock_at(&obj->lock, (uintptr_t)obj, WL_AT_NONE);
    return 1;
}

static inline void ivl_enter(struct iv_thread *th, unsigned long long set, uint32_t where)
{
    th->held = set;
    for (uint64_t s = set; s; s &= s - 1) {          /* increasing object index */
        int g = __builtin_ctzll(s);
        IV_WHERE_SET(th, g, where);                  /* the section waits here */
        ivl_lock(th, g);
    }
}

static inline void ivl_exit(struct iv_thread *th)
{
    for (uint64_t s = th->held; s; s &= s - 1)
        ivl_unlock(th, __builtin_ctzll(s));
    th->held = 0;
}
