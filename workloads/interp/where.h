/*
 * workloads/interp/where.h - conflict analysis's locations: which bytecode of a thread
 * last touched each declared object (stm's conflicts and locks' waits name it), and
 * where a thread resumes between slices (gil, mutex). docs/contract.md, "Conflict log".
 */
#ifndef IV_WHERE_H
#define IV_WHERE_H

#include "workloads/interp/state.h"

/* Conflict analysis (docs/contract.md "Conflict log"): each bytecode that touches a
 * declared object first stores its own index + 1 (pc, already advanced) as the thread's
 * last access to that object: one store, no load. Under the runtimes whose conflicts
 * or waits name a location (stm, locks); compiled out with WHERE=0 (STMBENCH_WHERE) to
 * measure its cost. */
#if STMBENCH_WHERE && (defined(SYNC_RT_STM) || defined(SYNC_RT_LOCKS))
#define IV_WHERE_ON 1
#if IV_AT_SHARED
/* relaxed: a location for analysis (iv_where_at), ordered with nothing (sync_cost: not
 * counted: the analysis's, not the program's synchronisation; nor are the other
 * macros and functions of conflict analysis below) */
#define IV_WHERE_SET(th, g, where)                                                          \
    atomic_store_explicit(&(th)->at[(g)], (uint32_t)(where), memory_order_relaxed)
/* relaxed: as above (sync_cost: not counted) */
#define IV_WHERE_GET(th, g) atomic_load_explicit(&(th)->at[(g)], memory_order_relaxed)
#else
/* (sync_cost: not counted) */
#define IV_WHERE_SET(th, g, where) ((th)->at[(g)] = (uint32_t)(where))
#define IV_WHERE_GET(th, g) ((th)->at[(g)])
#endif
#else
#define IV_WHERE_ON 0
/* (sync_cost: not counted) */
#define IV_WHERE_SET(th, g, where) ((void)(where))
#define IV_WHERE_GET(th, g) ((void)(th), 0u)
#endif
#define IV_WHERE(g) IV_WHERE_SET(th, (g), pc)
/* Contention analysis under the runtimes whose lock is taken between slices (gil,
 * mutex): after each slice the thread publishes where the next one starts, one store
 * per slice. */
#if STMBENCH_WHERE && (defined(SYNC_RT_GIL) || defined(SYNC_RT_MUTEX))
#define IV_RESUME_ON 1
/* relaxed: a location for analysis (iv_where_at), ordered with nothing (sync_cost: not
 * counted) */
#define IV_RESUME(th)                                                                   \
    atomic_store_explicit(&(th)->resume, (uint32_t)(th)->vm[(th)->cur].pc + 1,          \
                          memory_order_relaxed)
#else
#define IV_RESUME_ON 0
#define IV_RESUME(th) ((void)0)
#endif

/* The runtime's sync_where hook (runtime/common.h): the thread's last access to obj
 * if obj is one of its declared objects, else 0. Reads only the thread's own tables.
 * (sync_cost: not counted) */
static __attribute__((unused)) uint32_t iv_where(void *arg, uintptr_t obj)
{
    const struct iv_thread *th = arg;
    if (!obj)
        return 0;
    for (int g = 0; g < th->nglob; g++)
        if (SYNC_REF_ID(th->obj[g]) == obj)
            return IV_WHERE_GET(th, g);    /* our own: the other threads only read it */
    return 0;
}

/* The hook's question about any thread (sync_where_at): under locks thread tid's last
 * access to obj, found by the caller's own table (a shared object has the same index
 * in every thread's; a thread's own objects are no other's); with obj 0 where it
 * resumes between slices (gil, mutex). (sync_cost: not counted) */
static __attribute__((unused)) uint32_t iv_where_at(void *arg, int tid, uintptr_t obj)
{
    const struct iv_thread *me = arg;
    if (tid < 0 || tid >= me->cx->nthreads)
        return 0;
    const struct iv_thread *th = &me->cx->th[tid];
    if (!obj)
        /* relaxed: a hint (IV_RESUME); it may already name a later slice */
        return atomic_load_explicit(&th->resume, memory_order_relaxed);
#if IV_AT_SHARED && IV_WHERE_ON
    for (int g = 0; g < me->nglob; g++)
        if (SYNC_REF_ID(me->obj[g]) == obj)
            return IV_WHERE_GET(th, g);    /* a hint: it may name a later access */
#endif
    return 0;
}

#endif
