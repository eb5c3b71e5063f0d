/*
 * workloads/interp/base.h - what every part of the interpreter uses: the includes, the
 * limits, the build's switches and the growable arrays.
 *
 * The interp workload is compiled once per runtime (workloads/interp.c, and
 * workloads/interp_locks.c for `locks`), so its code lives in headers, written once
 * against runtime/sync.h and included into that one file in this order (each header
 * includes the ones it needs; no two include each other):
 *   base.h                the includes, limits and switches (this file)
 *   value.h               values, the objects' heads, a global's cell
 *   box.h list.h dict.h   one file per object type
 *   object.h              what every type answers: free an object
 *   memory.h              the memory mode's interface: its hooks and per-thread state
 *   state.h               a thread's VM state, the thread, the run's context
 *   where.h               conflict analysis's locations
 *   freelist.h            the counting modes' free boxes (refcount, biased)
 *   mem_<mode>.h          one file per memory mode (modes.h lists them)
 *   memory_dispatch.h     the hooks, dispatched on the mode (constant in each loop)
 *   alloc.h               allocation of the object model's objects
 *   loop_raw.h            the raw mode's loop (iv_run) and its slice
 *   loop_obj.h            the object model's loop (iv_run_obj), one copy per mode
 *   thread.h              a thread's body
 *   setup.h               load, setup and teardown
 *   check.h               the check and conflict analysis's descriptions
 *   vm.h                  the workload's descriptor
 */
#ifndef IV_BASE_H
#define IV_BASE_H

#include "runtime/sync.h"
#include "workloads/interp/asm.h"
#include "workloads/lib/wl_spin.h"
#include "workloads/workload.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IV_CHUNK 64                              /* list elements per chunk object */
#define IV_NCHUNKS (IV_LIST_MAX / IV_CHUNK)
#ifndef IV_ATOMIC_CAP                            /* the fuzz target lowers it */
#define IV_ATOMIC_CAP ((int64_t)1 << 28)         /* bytecodes one atomic section may run */
#endif
#define IV_DRAIN_MAX ((uint64_t)1 << 28)         /* bytecodes to finish a run after stop */
#define IV_TXLEN_MAX 100000L                     /* --switch-interval auto: the longest slice */
#define IV_TXLEN_START 100L                      /* ... and the first (the default interval) */

/* The object model's functions go to a text section of their own, after the raw VM's
 * code: its layout, and so its speed, stays as it was measured before they existed
 * (the raw loop ran much slower under some runtimes, with equal instruction counts,
 * when they were placed among its functions: commit 63ff5c9). */
#define IV_OBJ_TEXT __attribute__((section(".text.interp_obj")))

#ifndef IV_COUNT_ATOMIC
#define IV_COUNT_ATOMIC 0            /* locks sets it: counts without a global lock */
#endif
#if IV_COUNT_ATOMIC
#define IV_SLICE_ALONE 0             /* locks: other threads run while a slice does */
#else
#define IV_SLICE_ALONE 1             /* a slice's objects reach nobody before it completes */
#endif

/* A value of the object model (value.h): a small int inline, or a tagged reference. */
typedef uint64_t iv_val;

#define IV_STR_(x) #x
#define IV_STR(x) IV_STR_(x)

static IV_OBJ_TEXT void iv_grow(iv_val **v, size_t *cap, size_t need)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap * 2 : 256;
    while (c < need)
        c *= 2;
    iv_val *n = realloc(*v, c * sizeof *n);
    if (!n)
        sync_out_of_resources("interp: out of memory for %zu object references", c);
    *v = n;
    *cap = c;
}

static IV_OBJ_TEXT void iv_vgrow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    void *n = realloc(*v, c * elem);
    if (!n)
        sync_out_of_resources("interp: out of memory (%zu entries of %zu bytes)", c, elem);
    *v = n;
    *cap = c;
}

static inline uint64_t iv_hash(int64_t key)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

#endif
