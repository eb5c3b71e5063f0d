/*
 * workloads/interp/memory.h - the interface of a memory mode (--memory): how the
 * object model finds its garbage. One file per mode, workloads/interp/mem_<name>.h,
 * listed in modes.h:
 *   mem_raw.h       no objects: ints are words, nothing is allocated while a program runs
 *   mem_tracing.h   PyPy's road: a registry per thread and a mark-and-sweep collection
 *   mem_refcount.h  CPython with its GIL: a count in every object
 *   mem_biased.h    PEP 703: biased counts, immortal constants
 *   mem_buffered.h  the STM's own scheme: counts outside the shared heap, applied after
 *                   each block (runtime/stm/DESIGN.md)
 *
 * The hooks. Mode `name` defines each of these as iv_<name>_<hook>; the VM calls them
 * through iv_mem_<hook>(mode, ...) (memory_dispatch.h), a switch on the mode that the
 * compiler folds away in the loops, which are compiled once per mode (loop_obj.h):
 * no function pointer on the hot path.
 *   setup(cx)                         once, before any thread runs: the mode's state in
 *                                     the context and in every thread (zeroed before)
 *   program_object(cx, o, tid, container)
 *                                     o is an object of the program (a constant, a
 *                                     global's first value, a declared container or the
 *                                     module dict), freed only at teardown; tid owns it
 *   allocated(cx, th, o, w)           th's running block made o (w: o tagged); the
 *                                     creator holds one reference (it pushes it)
 *   incref(cx, th, w)                 a reference to w was copied (w any value)
 *   decref(cx, th, vm, w)             a reference to w was dropped (w any value)
 *   try_incref(cx, th, w)             locks only: w (a box) was read from a cell with no
 *                                     lock held, and may have died since: counts a
 *                                     reference and returns true if w was alive, else
 *                                     false (the caller reads again under the lock).
 *                                     The caller then checks that the cell still holds
 *                                     w, and drops the reference (decref) if not
 *                                     (CPython's _Py_TryIncrefCompare)
 *   safepoint(cx, th)                 between two slices, outside any block: where a
 *                                     collection may stop the thread
 *   block_begin(cx, th)               each run of a slice's block, inside it, first: a
 *                                     re-run forgets what a thrown-away run recorded
 *   block_end(cx, th, vm)             each run of the block, inside it, last
 *   block_done(cx, th)                after the block completed and the thread's VM
 *                                     state moved to its result (th->vm[th->cur])
 *   thread_start(cx, th)              a thread starts running slices
 *   thread_stop(cx, th)               ... and has run its last
 *   teardown_stacks(cx)               teardown, first, no thread running: what threads'
 *                                     stacks still hold
 *   teardown_global(cx, th, w, container)
 *                                     teardown: w is a global's value (container: w is
 *                                     the declared list or dict itself)
 *   teardown(cx)                      teardown, last: what the mode still holds, and its
 *                                     own memory
 *   check(cx, msg, len)               the final check, after the run and the program's
 *                                     expectations, no thread running: the mode's own
 *                                     accounting against the census of references the
 *                                     heap holds (census.h); 0, or -1 and msg
 * and one constant, IV_MEM_COUNTS_<name>: 1 when the mode's decref does anything (a
 * bytecode that drops many references at once skips the work when it is 0), and
 * IV_MEM_BOXES_<name>: 1 when the mode gives its dead boxes to freelist.h's lists
 * (where the runtime has them), so that allocation takes boxes from there.
 *
 * State. What every mode uses is in struct iv_mem (one per thread, in struct
 * iv_thread): the counters of allocations and frees, and two work lists. What a mode
 * keeps of its own lives in the thread's `mode` bytes (and the context's, state.h), as
 * the struct the mode's file defines (for example struct iv_buffered_thread), reached
 * with a cast that costs nothing; the mode's file asserts that it fits.
 */
#ifndef IV_MEMORY_H
#define IV_MEMORY_H

#include "workloads/interp/object.h"

#define IV_MODE_THREAD_BYTES 256     /* a mode's per-thread state, at most */
#define IV_MODE_CTX_BYTES 64         /* a mode's state in the context, at most */

/* The per-thread state of the memory mode (in struct iv_thread). */
struct iv_mem {
    uint64_t allocs, frees;          /* objects allocated and freed by slices: reset to the
                                      * marks when a block re-runs, the marks moved when
                                      * it completed */
    uint64_t allocs_mark, frees_mark;
    uint64_t gc_freed;               /* objects this thread's collections (tracing) or
                                      * reclaims (buffered) freed */
    uint64_t gcs;                    /* collections this thread ran */
    iv_val *work;                    /* objects to free (the counting modes) or to mark */
    size_t nwork, capwork;
    iv_val *drop;                    /* LIST_CLEAR: the elements whose references go */
    size_t capdrop;
    iv_box_ref boxes;                /* refcount, biased: the free boxes this thread owns
                                      * (freelist.h) */
    /* ... and those other threads freed, pushed here (freelist.h): on a line of its
     * own, away from the fields the owner writes on every bytecode */
    _Alignas(64) uintptr_t remote;
    char remote_pad[64 - sizeof(uintptr_t)];
    _Alignas(16) unsigned char mode[IV_MODE_THREAD_BYTES];   /* the mode's own */
};

/* The mode's own state of a thread's iv_mem, and of the context (state.h), as the type
 * T its file defines. */
#define IV_MODE_STATE(T, m) ((T *)(void *)(m)->mode)
#define IV_MODE_FITS(T, bytes)                                                          \
    _Static_assert(sizeof(T) <= (bytes) && _Alignof(T) <= 16,                           \
                   #T " fits the mode's state bytes (memory.h)")

#endif
