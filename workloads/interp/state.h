/*
 * workloads/interp/state.h - a thread's VM state, the thread and the run's context.
 *
 * Invariants (every runtime):
 *  - Shared heap: one object per declared global (one per thread for `.per_thread`),
 *    reached only through SYNC_REF refs with SYNC_READ/SYNC_WRITE before the access.
 *    The table of refs (ctx->objs, thread->obj) is plain memory written in setup only.
 *  - A thread's VM state (pc, stack, frames) is plain thread-local memory in two
 *    buffers: vm[cur] is the state after the last completed slice. A slice copies it
 *    into vm[cur ^ 1] INSIDE the atomic block and runs there; only after the block
 *    has completed (committed) does the thread flip `cur`. So a slice the STM rolls
 *    back and re-runs starts again from the same state, and heap writes are rolled
 *    back by the STM itself. Nothing else outside the VM buffers is changed inside a
 *    block except `last_n` (assigned, never accumulated), what the memory mode
 *    records there, which its block_begin hook forgets when the block re-runs, and
 *    under stm the side queues' lists (`txq`, queue.h), which the start of each
 *    attempt resets, giving back what an aborted attempt took.
 *  - The loader proved stack depths and call depth bounded, so the VM indexes its
 *    stack without checks; container operations bound their own indexes at run time
 *    (out of range -> 0 or ignored; a full container -> a counted fault, check fails).
 */
#ifndef IV_STATE_H
#define IV_STATE_H

#include "workloads/interp/memory.h"

/* ---- thread-local VM state ---- */
struct iv_frame {
    int32_t ret_pc, base;
};
enum { IV_FAULT_NONE, IV_FAULT_LIST_FULL, IV_FAULT_DICT_FULL, IV_FAULT_STUCK, IV_FAULT_TYPE };
struct iv_vm {
    int32_t pc, sp, base, nframes, adepth;
    int32_t in_run;                  /* a run has started and not reached HALT */
    int32_t stuck;                   /* an atomic section exceeded IV_ATOMIC_CAP */
    int32_t fault_kind, fault_pc;    /* the first fault */
    uint64_t faults;
    uint64_t runs;                   /* completed runs (HALTs) */
    struct iv_frame frames[IV_FRAMES_MAX];
    int64_t vals[IV_VALS_MAX];
};
struct iv_gcache {
    int64_t kver;                    /* the module dict's keys version when filled; 0: empty */
    iv_ref cell;
};
/* A thread's location slot (at[] below): under locks a lock's waiter reads its
 * holder's (iv_where_at), so it is atomic, accessed relaxed; elsewhere only the thread
 * itself reads it (stm's conflict rows), so it is plain memory: a relaxed atomic there
 * cost stm's interpreter loop registers and instructions per bytecode (commit 68e2568
 * has the counts). */
#ifdef SYNC_RT_LOCKS
#define IV_AT_SHARED 1
typedef _Atomic uint32_t iv_at_t;
#else
#define IV_AT_SHARED 0
typedef uint32_t iv_at_t;
#endif

struct iv_thread {
    struct iv_vm vm[2];
    int cur;                         /* vm[cur]: state after the last completed slice */
    int tid;
    int unfinished;                  /* the run in progress did not end after stop */
    uint64_t last_n;                 /* bytecodes of the last slice */
    uint64_t held;                   /* locks variant: objects locked by an atomic section */
    int nglob;                       /* the program's globals (iv_where) */
    const struct iv_ctx *cx;         /* the run's (iv_where_at finds the others) */
    /* 1 + the bytecode that last touched each object (IV_WHERE): the thread's location
     * for conflict analysis, read by iv_where and, under locks, for a lock's holder, by
     * another thread's iv_where_at (iv_at_t); outside the shared heap, so an abort
     * leaves it as is. */
    iv_at_t at[IV_MAX_GLOBALS];
    /* 1 + the bytecode the next slice starts at, stored (relaxed) after each slice
     * under gil and mutex (IV_RESUME): where the thread waits for the lock between
     * slices, and where a holder took it (iv_where_at with obj 0). */
    _Atomic uint32_t resume;
    iv_ref obj[IV_MAX_GLOBALS];      /* this thread's instance of each object */
    uint64_t gobj[IV_MAX_GLOBALS];   /* object model: the tagged value of each declared
                                      * list or dict (obj[g] with its type) */
    struct iv_mem mem;               /* object model: the memory mode's (memory.h) */
    struct iv_gcache *gcache;        /* object model: per instruction (loop_obj.h) */
    struct iv_txq_thread txq;        /* stm: the attempt's puts and gets of side queues
                                      * (queue.h), outside the shared heap: the start of
                                      * each attempt gives back what an aborted one took */
} SYNC_CL_ALIGNED;

struct iv_ctx {
    struct iv_program *prog;
    int nthreads;
    int memory;                      /* enum iv_memory */
    _Alignas(16) unsigned char mode[IV_MODE_CTX_BYTES];   /* the memory mode's own */
    int64_t *konst;                  /* object model: PUSH's value per instruction */
    uint64_t *gobj;                  /* object model: like objs, tagged (lists, dicts) */
    struct iv_mem **mems;            /* [tid]: &th[tid].mem */
    iv_odict_ref module;             /* object model: name hash -> cell (loop_obj.h) */
    int64_t gkey[IV_MAX_GLOBALS];    /* each global's name hash */
    iv_val *pobj;                    /* object model: the globals' first values (boxes) */
    size_t npobj, cappobj;
    pthread_mutex_t pobj_mu;
    int64_t interval;
    iv_ref *objs;                    /* [g * nthreads + tid] (tid 0 for shared objects) */
    iv_ref *placeholders;            /* like objs: the setup's per-thread objects, freed
                                      * at teardown (see iv_own_objects) */
    struct iv_thread *th;
};

static inline iv_ref iv_obj_of(const struct iv_ctx *cx, int g, int tid)
{
    return cx->objs[(size_t)g * (size_t)cx->nthreads +
                    (size_t)(cx->prog->globals[g].per_thread ? tid : 0)];
}

static inline void iv_vm_reset(struct iv_vm *vm, int nlocals)
{
    vm->pc = 0;
    vm->base = 0;
    vm->nframes = 0;
    vm->adepth = 0;
    vm->in_run = 0;
    vm->sp = nlocals;
    for (int i = 0; i < nlocals; i++)
        vm->vals[i] = 0;
}

static inline void iv_vm_copy(struct iv_vm *dst, const struct iv_vm *src)
{
    memcpy(dst, src, offsetof(struct iv_vm, frames));
    memcpy(dst->frames, src->frames, (size_t)src->nframes * sizeof src->frames[0]);
    memcpy(dst->vals, src->vals, (size_t)src->sp * sizeof src->vals[0]);
}

static inline void iv_fault(struct iv_vm *vm, int kind, int32_t pc)
{
    if (vm->faults++ == 0) {
        vm->fault_kind = kind;
        vm->fault_pc = pc;
    }
}

/* The memory mode's own state in the context, as the type T its file defines. */
#define IV_MODE_CTX(T, cx) ((T *)(void *)((struct iv_ctx *)(cx))->mode)

#endif
