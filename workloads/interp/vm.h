/*
 * workloads/interp/vm.h - the interp workload's VM, objects, thread loop and check,
 * written once against runtime/sync.h. Included by exactly two files:
 *   workloads/interp.c        (compiled per runtime: seq, mutex, gil, stm, itm): no locks
 *   workloads/interp_locks.c  (SYNC_RT=locks): per-object locks as in PEP 703
 * Each defines four hooks before including this file (empty in interp.c):
 *   IV_LOCK(th, g, adepth)    before a bytecode touches object g (int, list or dict)
 *   IV_UNLOCK(th, g, adepth)  after it
 *   IV_ATOMIC_ENTER(th, set)  an outermost ATOMIC_BEGIN; set = the objects (bits) its
 *                             section may touch, callees included (from the loader)
 *   IV_ATOMIC_EXIT(th)        the matching ATOMIC_END (or HALT/abandon inside one)
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
 *    block except `last_n` (assigned, never accumulated).
 *  - A slice is one SYNC_ATOMIC("interp.slice") block of --switch-interval bytecodes,
 *    extended to the ATOMIC_END when the boundary falls inside an atomic section; the
 *    thread loop passes sync_tick() between slices. So a GIL is released only between
 *    slices, never inside `with atomic:`, and under stm each slice is one transaction.
 *  - A slice also ends at HALT: runs are counted at slice boundaries, and after the
 *    stop request a thread finishes the run in progress, so the final heap is the
 *    effect of exactly `runs` complete runs per thread (what `.expect` is evaluated on).
 *  - The loader proved stack depths and call depth bounded, so the VM indexes its
 *    stack without checks; container operations bound their own indexes at run time
 *    (out of range -> 0 or ignored; a full container -> a counted fault, check fails).
 */
#ifndef INTERP_VM_H
#define INTERP_VM_H

#include "runtime/sync.h"
#include "workloads/interp/asm.h"
#include "workloads/lib/wl_spin.h"
#include "workloads/workload.h"

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

enum { IV_K_PROGRAM, IV_K_SWITCH, IV_K_ITER, IV_K_MEMORY, IV_NKNOBS };

static const struct wl_knob iv_knobs[IV_NKNOBS] = {
    [IV_K_PROGRAM] = { "program", WL_KNOB_STR, 0, 0, 0, "counters",
                       "a built-in program (counters, shared-counter, list-append, mixed, read-mostly; with "
                       "--memory other than raw also work-queue, parallel-map, memo-cache, arith) "
                       "or a program file (format: docs/interp.md)" },
    [IV_K_SWITCH] = { "switch-interval", WL_KNOB_INT, 100, 1, 1000000000, NULL,
                      "bytecodes per slice: between GIL releases / transaction boundaries; "
                      "auto: adaptive per thread in 1..100000 under stm, itm and htm "
                      "(the default 100 elsewhere)" },
    [IV_K_ITER] = { "iterations", WL_KNOB_INT, 1000, 1, 1000000000, NULL,
                    "the constant ITER of the program (loop count of one run)" },
    [IV_K_MEMORY] = { "memory", WL_KNOB_STR, 0, 0, 0, "raw",
                      "raw (ints are words, nothing allocated), tracing (objects, a "
                      "collector), refcount (objects, CPython's counts), biased (PEP 703's "
                      "counts) or buffered (counts outside the shared heap, changed after "
                      "each block): docs/interp.md" },
};

/* ---- shared-heap objects; every one starts with the header and a lock word (used
 *      by the locks variant only), and is padded so threads' objects never share a
 *      cache line ---- */
struct iv_obj {
    SYNC_OBJECT_HEADER;
    wl_spin_t lock;
};
struct iv_cell {
    SYNC_OBJECT_HEADER;
    wl_spin_t lock;
    int64_t value;
    char pad[128 - 24];
};
struct iv_chunk {
    SYNC_OBJECT_HEADER;
    int64_t v[IV_CHUNK];
};
struct iv_dir {
    SYNC_OBJECT_HEADER;
    SYNC_REF(struct iv_chunk) c[IV_NCHUNKS];
};
struct iv_list {
    SYNC_OBJECT_HEADER;
    wl_spin_t lock;
    int64_t len;
    SYNC_REF(struct iv_dir) dir;
    char pad[128 - 32];
};
struct iv_entry {
    int64_t key, val, used;
};
struct iv_slots {
    SYNC_OBJECT_HEADER;
    struct iv_entry e[];
};
struct iv_dict {
    SYNC_OBJECT_HEADER;
    wl_spin_t lock;
    int64_t count, cap;                          /* cap: a power of two */
    SYNC_REF(struct iv_slots) slots;
    char pad[128 - 40];
};
typedef SYNC_REF(void) iv_ref;
typedef SYNC_REF(struct iv_cell) iv_cell_ref;
typedef SYNC_REF(struct iv_list) iv_list_ref;
typedef SYNC_REF(struct iv_dict) iv_dict_ref;
typedef SYNC_REF(struct iv_dir) iv_dir_ref;
typedef SYNC_REF(struct iv_chunk) iv_chunk_ref;
typedef SYNC_REF(struct iv_slots) iv_slots_ref;

/* ---- containers (callers hold what the variant needs; barriers inside) ---- */

static inline int64_t iv_list_len(iv_list_ref l)
{
    SYNC_READ(l);
    return l->len;
}

static inline int iv_list_append(iv_list_ref l, int64_t v)
{
    SYNC_WRITE(l);
    int64_t n = l->len;
    if (SYNC_UNLIKELY(n >= IV_LIST_MAX))
        return -1;
    iv_dir_ref d = l->dir;
    SYNC_READ(d);
    iv_chunk_ref c = d->c[n / IV_CHUNK];
    if (c == SYNC_NULL) {
        c = SYNC_ALLOC(struct iv_chunk);             /* new in this block: no barrier */
        SYNC_WRITE(d);
        d->c[n / IV_CHUNK] = c;
    } else {
        SYNC_WRITE(c);
    }
    c->v[n % IV_CHUNK] = v;
    l->len = n + 1;
    return 0;
}

static inline int64_t iv_list_get(iv_list_ref l, int64_t i)
{
    SYNC_READ(l);
    if ((uint64_t)i >= (uint64_t)l->len)
        return 0;
    iv_dir_ref d = l->dir;
    SYNC_READ(d);
    iv_chunk_ref c = d->c[i / IV_CHUNK];
    SYNC_READ(c);
    return c->v[i % IV_CHUNK];
}

static inline void iv_list_set(iv_list_ref l, int64_t i, int64_t v)
{
    SYNC_READ(l);
    if ((uint64_t)i >= (uint64_t)l->len)
        return;
    iv_dir_ref d = l->dir;
    SYNC_READ(d);
    iv_chunk_ref c = d->c[i / IV_CHUNK];
    SYNC_WRITE(c);
    c->v[i % IV_CHUNK] = v;
}

/* Keeps the chunks for reuse: memory is bounded by the longest the list ever was. */
static inline void iv_list_clear(iv_list_ref l)
{
    SYNC_WRITE(l);
    l->len = 0;
}

static inline int64_t iv_list_sum(iv_list_ref l)
{
    int64_t s = 0, n = iv_list_len(l);
    for (int64_t i = 0; i < n; i++)
        s = iv_add(s, iv_list_get(l, i));
    return s;
}

static inline uint64_t iv_hash(int64_t key)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

/* Index of key in s (cap slots), or of the empty slot where it would go. */
static inline int64_t iv_dict_probe(iv_slots_ref s, int64_t cap, int64_t key)
{
    int64_t i = (int64_t)(iv_hash(key) & (uint64_t)(cap - 1));
    for (;;) {
        if (!s->e[i].used || s->e[i].key == key)
            return i;
        i = (i + 1) & (cap - 1);
    }
}

static inline int64_t iv_dict_len(iv_dict_ref d)
{
    SYNC_READ(d);
    return d->count;
}

static inline int64_t iv_dict_get(iv_dict_ref d, int64_t key)
{
    SYNC_READ(d);
    iv_slots_ref s = d->slots;
    SYNC_READ(s);
    int64_t i = iv_dict_probe(s, d->cap, key);
    return s->e[i].used ? s->e[i].val : 0;
}

static inline iv_slots_ref iv_slots_new(int64_t cap)
{
    return (iv_slots_ref)sync_alloc(sizeof(struct iv_slots) +
                                    (size_t)cap * sizeof(struct iv_entry));
}

/* A copy of s (cap slots, read) with twice the slots, new in this block (no barrier). */
static iv_slots_ref iv_slots_grow(iv_slots_ref s, int64_t cap)
{
    int64_t ncap = cap * 2;
    iv_slots_ref ns = iv_slots_new(ncap);
    for (int64_t j = 0; j < cap; j++)
        if (s->e[j].used) {
            int64_t k = iv_dict_probe(ns, ncap, s->e[j].key);
            ns->e[k].key = s->e[j].key;             /* field by field: no memcpy */
            ns->e[k].val = s->e[j].val;             /* through a %gs reference */
            ns->e[k].used = 1;
        }
    return ns;
}

static int iv_dict_set(iv_dict_ref d, int64_t key, int64_t val)
{
    SYNC_READ(d);
    iv_slots_ref s = d->slots;
    int64_t cap = d->cap;
    SYNC_READ(s);
    int64_t i = iv_dict_probe(s, cap, key);
    if (s->e[i].used) {
        SYNC_WRITE(s);
        s->e[i].val = val;
        return 0;
    }
    int64_t count = d->count;
    if (count >= IV_DICT_MAX)
        return -1;
    SYNC_WRITE(d);
    if ((count + 1) * 4 > cap * 3) {                 /* grow to keep probes short */
        /* written out, not iv_slots_grow: the raw VM's code stays as it was measured
         * (a call here changed what the compiler inlined into iv_run, and the raw loop
         * ran much slower under mutex, locks and stm with equal instruction counts:
         * commit 63ff5c9) */
        int64_t ncap = cap * 2;
        iv_slots_ref ns = iv_slots_new(ncap);        /* new in this block: no barrier */
        for (int64_t j = 0; j < cap; j++)
            if (s->e[j].used) {
                int64_t k = iv_dict_probe(ns, ncap, s->e[j].key);
                ns->e[k].key = s->e[j].key;             /* field by field: no memcpy */
                ns->e[k].val = s->e[j].val;             /* through a %gs reference */
                ns->e[k].used = 1;
            }
        SYNC_FREE(s);
        d->slots = s = ns;
        d->cap = cap = ncap;
        i = iv_dict_probe(s, cap, key);
    } else {
        SYNC_WRITE(s);
    }
    s->e[i].key = key;
    s->e[i].val = val;
    s->e[i].used = 1;
    d->count = count + 1;
    return 0;
}

static inline int64_t iv_dict_sum(iv_dict_ref d)
{
    SYNC_READ(d);
    iv_slots_ref s = d->slots;
    SYNC_READ(s);
    int64_t t = 0;
    for (int64_t j = 0; j < d->cap; j++)
        if (s->e[j].used)
            t = iv_add(t, s->e[j].val);
    return t;
}

#include "workloads/interp/obj.h"

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
    struct iv_mem mem;               /* object model: allocation, counts, collector */
    struct iv_gcache *gcache;        /* object model: per instruction, obj.h "Global names" */
} SYNC_CL_ALIGNED;

struct iv_ctx {
    struct iv_program *prog;
    int nthreads;
    int memory;                      /* enum iv_memory */
    _Atomic int gc_req;              /* tracing: a collection runs (objvm.h's handshake) */
    _Atomic uint64_t epoch;          /* buffered: moves when a limbo waits (objvm.h) */
    int64_t *konst;                  /* object model: PUSH's value per instruction */
    uint64_t *gobj;                  /* object model: like objs, tagged (lists, dicts) */
    struct iv_mem **mems;            /* [tid]: &th[tid].mem */
    iv_odict_ref module;             /* object model: name hash -> cell (obj.h) */
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


/* ---- the interpreter ---- */

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

#define IV_CELL(g) ((iv_cell_ref)th->obj[g])
#define IV_LIST(g) ((iv_list_ref)th->obj[g])
#define IV_DICT(g) ((iv_dict_ref)th->obj[g])

/* -DIV_LAYOUT_PAD=N puts N bytes of padding in .text before this file's functions:
 * scripts/dispatch-layout.sh moves the interpreter's loop with it, to measure how much
 * its speed depends on where the link places it. Normal builds leave it out. */
#define IV_STR_(x) #x
#define IV_STR(x) IV_STR_(x)
#ifdef IV_LAYOUT_PAD
__asm__(".text\n.p2align 6\n.skip " IV_STR(IV_LAYOUT_PAD) ", 0x90\n");
#endif

/* ---- dispatch ----
 * iv_run dispatches with one indirect jump per handler (labels as values, the GNU C
 * extension gcc and clang share, as CPython's ceval does): each handler ends with its
 * own fetch and jump, so the branch predictor learns each bytecode's successor at its
 * own jump. A single `switch` funnels every bytecode through one indirect jump; on the
 * AMD EPYC VMs this project runs on, that loop's speed moved a lot with where the link
 * placed it (results/dispatch-layout-20261206), which no A/B comparison of
 * two builds could tell from a real change. -DIV_SWITCH_DISPATCH builds the switch,
 * for that comparison. The itm copy is always the switch: gcc's TM pass makes no
 * transactional clone of a function with computed gotos, so a block calling such an
 * iv_run ran serial-irrevocable, every slice alone (tests/test_dispatch.sh checks the
 * clone is there).
 * Invariant: every instruction's op is < IV_NOPS (the assembler emits no other;
 * tests/fuzz/fuzz_asm.c checks it), so the table needs no bounds check. */
#if defined(IV_SWITCH_DISPATCH) || defined(SYNC_RT_ITM)
#define IV_DISPATCH_TABLE ((void)0)
#define IV_DISPATCH(op) switch (op)
#define IV_CASE(op) case op:
#define IV_DEFAULT default:
#define IV_NEXT continue
#else
/* in IV_OPS order; every op after IV_HALT (the object model's) is not raw's: HALT */
#define IV_DISPATCH_TABLE                                                               \
    static const void *const iv_tbl[] = {                                              \
        &&iv_op_IV_NOP, &&iv_op_IV_PUSH, &&iv_op_IV_POP, &&iv_op_IV_DUP, &&iv_op_IV_SWAP, \
        &&iv_op_IV_LOAD_GLOBAL, &&iv_op_IV_STORE_GLOBAL, &&iv_op_IV_LOAD_LOCAL,         \
        &&iv_op_IV_STORE_LOCAL, &&iv_op_IV_ADD, &&iv_op_IV_SUB, &&iv_op_IV_MUL,         \
        &&iv_op_IV_DIV, &&iv_op_IV_MOD, &&iv_op_IV_LT, &&iv_op_IV_GT, &&iv_op_IV_EQ,    \
        &&iv_op_IV_NOT, &&iv_op_IV_JUMP, &&iv_op_IV_JUMP_IF_FALSE,                      \
        &&iv_op_IV_JUMP_IF_TRUE, &&iv_op_IV_CALL, &&iv_op_IV_RET,                       \
        &&iv_op_IV_LIST_APPEND, &&iv_op_IV_LIST_GET, &&iv_op_IV_LIST_SET,               \
        &&iv_op_IV_LIST_LEN, &&iv_op_IV_LIST_CLEAR, &&iv_op_IV_DICT_GET,                \
        &&iv_op_IV_DICT_SET, &&iv_op_IV_DICT_LEN, &&iv_op_IV_THREAD_ID,                 \
        &&iv_op_IV_ATOMIC_BEGIN, &&iv_op_IV_ATOMIC_END, &&iv_op_IV_HALT,                \
        [IV_HALT + 1 ... IV_NOPS - 1] = &&iv_op_default,                                \
    };                                                                                  \
    _Static_assert(sizeof iv_tbl / sizeof iv_tbl[0] == IV_NOPS &&                       \
                   IV_HALT == 34, "iv_tbl: one entry per op, in enum iv_op's order")
#define IV_DISPATCH(op) goto *iv_tbl[op];
#define IV_CASE(op) iv_op_##op:
#define IV_DEFAULT iv_op_default:
/* Compilers merge the handlers' identical fetches into one block ending in one jump
 * (clang sinks them, gcc tail-merges them); an empty asm that differs per line keeps
 * them apart. tests/test_dispatch.sh checks that each build has one jump per handler. */
#define IV_NO_MERGE() __asm__ volatile("# iv_next " IV_STR(__LINE__))
/* the loop head's budget check and fetch, at the end of each handler; an exhausted
 * budget goes round the loop head, which decides */
#define IV_NEXT                                                                         \
    if (SYNC_LIKELY(left > 0)) {                                                        \
        left--;                                                                         \
        in = &code[pc++];                                                               \
        g = in->a;                                                                      \
        IV_NO_MERGE();                                                                  \
        goto *iv_tbl[in->op];                                                           \
    } else                                                                              \
        continue
#endif

/* Runs one slice on vm: `budget` bytecodes, more to finish an atomic section, less at
 * HALT. Returns the bytecodes executed. Kept out of line: the slice's block calls
 * _setjmp under stm, and a compiler keeps fewer values in registers in a function
 * that contains a call returning twice. */
static SYNC_NOINLINE uint64_t iv_run(const struct iv_ctx *cx, struct iv_thread *th, struct iv_vm *vm,
                       int64_t budget)
{
    const struct iv_insn *code = cx->prog->code;
    int64_t *vals = vm->vals;
    struct iv_frame *frames = vm->frames;
    /* registers as full-width integers: no sign extension on every stack index */
    intptr_t pc = vm->pc, sp = vm->sp, base = vm->base, nframes = vm->nframes;
    intptr_t adepth = vm->adepth;
    int64_t left = budget;
    vm->in_run = 1;
    const struct iv_insn *in;
    int64_t b;
    int32_t g;
    IV_DISPATCH_TABLE;
    for (;;) {
        if (SYNC_UNLIKELY(left <= 0)) {
            if (adepth == 0)
                break;
            if (left <= -IV_ATOMIC_CAP) {            /* never reaches its ATOMIC_END */
                vm->stuck = 1;
                iv_fault(vm, IV_FAULT_STUCK, (int32_t)pc);
                IV_ATOMIC_EXIT(th);
                break;
            }
        }
        left--;
        in = &code[pc++];
        g = in->a;
        IV_DISPATCH(in->op) {
        IV_CASE(IV_NOP)
            IV_NEXT;
        IV_CASE(IV_PUSH)
            vals[sp++] = in->v;
            IV_NEXT;
        IV_CASE(IV_POP)
            sp--;
            IV_NEXT;
        IV_CASE(IV_DUP)
            vals[sp] = vals[sp - 1];
            sp++;
            IV_NEXT;
        IV_CASE(IV_SWAP)
            b = vals[sp - 1];
            vals[sp - 1] = vals[sp - 2];
            vals[sp - 2] = b;
            IV_NEXT;
        IV_CASE(IV_LOAD_GLOBAL) {
            iv_cell_ref c = IV_CELL(g);
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            SYNC_READ(c);
            vals[sp++] = c->value;
            IV_UNLOCK(th, g, adepth);
            IV_NEXT;
        }
        IV_CASE(IV_STORE_GLOBAL) {
            iv_cell_ref c = IV_CELL(g);
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            SYNC_WRITE(c);
            c->value = vals[--sp];
            IV_UNLOCK(th, g, adepth);
            IV_NEXT;
        }
        IV_CASE(IV_LOAD_LOCAL)
            vals[sp++] = vals[base + g];
            IV_NEXT;
        IV_CASE(IV_STORE_LOCAL)
            vals[base + g] = vals[--sp];
            IV_NEXT;
        IV_CASE(IV_ADD) b = vals[--sp]; vals[sp - 1] = iv_add(vals[sp - 1], b); IV_NEXT;
        IV_CASE(IV_SUB) b = vals[--sp]; vals[sp - 1] = iv_sub(vals[sp - 1], b); IV_NEXT;
        IV_CASE(IV_MUL) b = vals[--sp]; vals[sp - 1] = iv_mul(vals[sp - 1], b); IV_NEXT;
        IV_CASE(IV_DIV) b = vals[--sp]; vals[sp - 1] = iv_div(vals[sp - 1], b); IV_NEXT;
        IV_CASE(IV_MOD) b = vals[--sp]; vals[sp - 1] = iv_mod(vals[sp - 1], b); IV_NEXT;
        IV_CASE(IV_LT) b = vals[--sp]; vals[sp - 1] = vals[sp - 1] < b; IV_NEXT;
        IV_CASE(IV_GT) b = vals[--sp]; vals[sp - 1] = vals[sp - 1] > b; IV_NEXT;
        IV_CASE(IV_EQ) b = vals[--sp]; vals[sp - 1] = vals[sp - 1] == b; IV_NEXT;
        IV_CASE(IV_NOT) vals[sp - 1] = !vals[sp - 1]; IV_NEXT;
        IV_CASE(IV_JUMP)
            pc = g;
            IV_NEXT;
        IV_CASE(IV_JUMP_IF_FALSE)
            if (!vals[--sp])
                pc = g;
            IV_NEXT;
        IV_CASE(IV_JUMP_IF_TRUE)
            if (vals[--sp])
                pc = g;
            IV_NEXT;
        IV_CASE(IV_CALL) {
            frames[nframes].ret_pc = (int32_t)pc;
            frames[nframes].base = (int32_t)base;
            nframes++;
            base = sp - in->b;
            for (intptr_t i = base + in->b; i < base + (intptr_t)in->v; i++)
                vals[i] = 0;
            sp = base + (intptr_t)in->v;
            pc = g;
            IV_NEXT;
        }
        IV_CASE(IV_RET)
            b = vals[sp - 1];
            sp = base;
            nframes--;
            base = frames[nframes].base;
            pc = frames[nframes].ret_pc;
            vals[sp++] = b;
            IV_NEXT;
        IV_CASE(IV_LIST_APPEND)
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            if (iv_list_append(IV_LIST(g), vals[--sp]) < 0)
                iv_fault(vm, IV_FAULT_LIST_FULL, (int32_t)pc - 1);
            IV_UNLOCK(th, g, adepth);
            IV_NEXT;
        IV_CASE(IV_LIST_GET)
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            vals[sp - 1] = iv_list_get(IV_LIST(g), vals[sp - 1]);
            IV_UNLOCK(th, g, adepth);
            IV_NEXT;
        IV_CASE(IV_LIST_SET)
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            iv_list_set(IV_LIST(g), vals[sp - 2], vals[sp - 1]);
            IV_UNLOCK(th, g, adepth);
            sp -= 2;
            IV_NEXT;
        IV_CASE(IV_LIST_LEN)
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            vals[sp++] = iv_list_len(IV_LIST(g));
            IV_UNLOCK(th, g, adepth);
            IV_NEXT;
        IV_CASE(IV_LIST_CLEAR)
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            iv_list_clear(IV_LIST(g));
            IV_UNLOCK(th, g, adepth);
            IV_NEXT;
        IV_CASE(IV_DICT_GET)
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            vals[sp - 1] = iv_dict_get(IV_DICT(g), vals[sp - 1]);
            IV_UNLOCK(th, g, adepth);
            IV_NEXT;
        IV_CASE(IV_DICT_SET)
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            if (iv_dict_set(IV_DICT(g), vals[sp - 2], vals[sp - 1]) < 0)
                iv_fault(vm, IV_FAULT_DICT_FULL, (int32_t)pc - 1);
            IV_UNLOCK(th, g, adepth);
            sp -= 2;
            IV_NEXT;
        IV_CASE(IV_DICT_LEN)
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            vals[sp++] = iv_dict_len(IV_DICT(g));
            IV_UNLOCK(th, g, adepth);
            IV_NEXT;
        IV_CASE(IV_THREAD_ID)
            vals[sp++] = th->tid;
            IV_NEXT;
        IV_CASE(IV_ATOMIC_BEGIN)
            if (adepth++ == 0)
                IV_ATOMIC_ENTER(th, cx->prog->atomic_set[pc - 1]);
            IV_NEXT;
        IV_CASE(IV_ATOMIC_END)
            if (--adepth == 0)
                IV_ATOMIC_EXIT(th);
            IV_NEXT;
        IV_CASE(IV_HALT)
        IV_DEFAULT
            if (adepth > 0)                  /* HALT in a function called in a section */
                IV_ATOMIC_EXIT(th);
            vm->runs++;
            iv_vm_reset(vm, cx->prog->main_nlocals);
            return (uint64_t)(budget - left);
        }
    }
    vm->pc = (int32_t)pc;
    vm->sp = (int32_t)sp;
    vm->base = (int32_t)base;
    vm->nframes = (int32_t)nframes;
    vm->adepth = (int32_t)adepth;
    return (uint64_t)(budget - left);
}

/* One slice as one atomic block (see the invariants above). Its budget is the thread's
 * transaction length (workload.h: --switch-interval N, or adaptive with `auto`); the
 * slice may run longer to reach an ATOMIC_END (iv_run), so wherever the length lands,
 * a slice boundary never falls inside an atomic section. */
static uint64_t iv_block(struct iv_ctx *cx, struct wl_thread *t)
{
    struct iv_thread *th = t->priv;
    int64_t budget = t->tx_len;
    SYNC_ATOMIC("interp.slice") {
        struct iv_vm *w = &th->vm[th->cur ^ 1];
        iv_vm_copy(w, &th->vm[th->cur]);
        th->last_n = iv_run(cx, th, w, budget);
    }
    WL_TXLEN_AFTER(t, th->last_n);
    th->cur ^= 1;
    IV_RESUME(th);
    return th->vm[th->cur].stuck ? 0 : th->last_n;
}

#include "workloads/interp/objvm.h"

/* The same for the object model: the slice's allocations enter the registry inside
 * the block (dropped again if it re-runs); at the boundary the thread parks while
 * another collects, merges what others queued to it (biased under locks), and
 * collects when its registry passed its mark. */
static IV_OBJ_TEXT uint64_t iv_block_obj(struct iv_ctx *cx, struct wl_thread *t)
{
    struct iv_thread *th = t->priv;
    int64_t budget = t->tx_len;
#if IV_GC_STOPS_WORLD
    /* relaxed: a hint; iv_gc_park's seq_cst loads decide (objvm.h's handshake) */
    if (atomic_load_explicit(&cx->gc_req, memory_order_relaxed))
        iv_gc_park(cx, th);
#endif
#if IV_COUNT_ATOMIC
    /* relaxed: a hint; the drain takes the inbox under its mutex */
    if (__atomic_load_n(&th->mem.ninbox, __ATOMIC_RELAXED)) {
        iv_brc_drain(cx, th, &th->vm[th->cur]);
        th->mem.frees_mark = th->mem.frees;
    }
#endif
    bool buffered = cx->memory == IV_MEM_BUFFERED;
    SYNC_ATOMIC("interp.slice") {
        struct iv_vm *w = &th->vm[th->cur ^ 1];
        th->mem.nreg = th->mem.reg_mark;
        if (buffered)
            iv_buf_begin(&th->mem);
        th->mem.allocs = th->mem.allocs_mark;     /* a re-run forgets the thrown-away */
        th->mem.frees = th->mem.frees_mark;
        iv_vm_copy(w, &th->vm[th->cur]);
        th->last_n = iv_run_obj(cx, th, w, budget);
#if IV_SLICE_ALONE
        if (buffered)
            iv_buf_settle(th, w);
#endif
    }
    th->mem.reg_mark = th->mem.nreg;
    th->mem.allocs_mark = th->mem.allocs;
    th->mem.frees_mark = th->mem.frees;
    if (buffered)
        iv_buf_after(cx, th);
    WL_TXLEN_AFTER(t, th->last_n);
    th->cur ^= 1;
    IV_RESUME(th);
    if (SYNC_UNLIKELY(th->mem.nreg > th->mem.gc_at))
        iv_gc(cx, th);
    return th->vm[th->cur].stuck ? 0 : th->last_n;
}

static iv_ref iv_new_object(const struct iv_ctx *cx, const struct iv_global *gl, int tid);

/* A thread's `.per_thread` objects are allocated by the thread itself, as a program's
 * threads allocate their own objects: the setup's placeholders (allocated together by
 * the main thread, side by side with every other thread's) are replaced before the
 * first slice. Under the STM the thread's objects then sit in its own allocation
 * chunks, which no other thread ever touches or imports. */
static void iv_own_objects(struct iv_ctx *cx, struct iv_thread *th)
{
    for (int g = 0; g < cx->prog->nglobals; g++) {
        const struct iv_global *gl = &cx->prog->globals[g];
        if (!gl->per_thread)
            continue;
        size_t k = (size_t)g * (size_t)cx->nthreads + (size_t)th->tid;
        /* Freed at teardown, not now: a freed placeholder would be reused by this
         * thread's next allocation of its size, back among everybody's objects. */
        cx->placeholders[k] = cx->objs[k];
        cx->objs[k] = th->obj[g] = iv_new_object(cx, gl, th->tid);
        if (cx->memory != IV_MEM_RAW && gl->kind != IV_KIND_INT)
            cx->gobj[k] = th->gobj[g] = iv_tagged((iv_oref)th->obj[g], gl->kind == IV_KIND_LIST
                                                                          ? IV_T_LIST : IV_T_DICT);
    }
}

/* The object model's thread body: as iv_thread_run's below, with the handshakes of the
 * collector and of the buffered counts around it. */
static IV_OBJ_TEXT SYNC_NOINLINE void iv_thread_run_obj(struct iv_ctx *cx, struct wl_thread *t)
{
    struct iv_thread *th = &cx->th[t->tid];
    /* seq_cst: the buffered scheme's first epoch (a running thread from now on) */
    atomic_store_explicit(&th->mem.seen, atomic_load(&cx->epoch), memory_order_seq_cst);
    /* seq_cst: the handshake's store (objvm.h); then park if a collection runs */
    atomic_store_explicit(&th->mem.safe, 0, memory_order_seq_cst);
    iv_gc_park(cx, th);
    iv_own_objects(cx, th);
    WL_LOOP(cx, t, iv_block_obj);
    /* Finish the run in progress so the heap holds whole runs only. */
    uint64_t drained = 0;
    while (th->vm[th->cur].in_run && !th->vm[th->cur].stuck) {
        if (drained > IV_DRAIN_MAX) {
            th->unfinished = 1;
            break;
        }
        uint64_t n = iv_block_obj(cx, t);
        t->ops += n;
        t->blocks++;
        if (n)
            lat_add(&t->len_hist, n);
        drained += n;
        sync_tick();
    }
#if IV_COUNT_ATOMIC
    iv_brc_drain(cx, th, &th->vm[th->cur]);
#endif
    if (cx->memory == IV_MEM_BUFFERED) {
        iv_buf_reclaim(cx, th, false);
        /* release: its deltas are applied; it holds no limbo back any more */
        atomic_store_explicit(&th->mem.seen, UINT64_MAX, memory_order_release);
    }
    t->objects_allocated = th->mem.allocs;
    t->objects_freed = th->mem.frees + th->mem.gc_freed;
    /* seq_cst: the handshake's store: a finished thread never holds a collection */
    atomic_store_explicit(&th->mem.safe, 1, memory_order_seq_cst);
}

static void iv_thread_run(void *ctx, struct wl_thread *t)
{
    struct iv_ctx *cx = ctx;
    struct iv_thread *th = &cx->th[t->tid];
    t->priv = th;
    wl_txlen_init(t, cx->interval, IV_TXLEN_START, IV_TXLEN_MAX);
    th->nglob = cx->prog->nglobals;
    th->cx = cx;
    IV_RESUME(th);
#if IV_WHERE_ON || IV_RESUME_ON
    sync_where = (struct sync_where_hook){iv_where, th, iv_where_at};
#endif
    if (cx->memory != IV_MEM_RAW) {
        iv_thread_run_obj(cx, t);
        sync_where = (struct sync_where_hook){0};   /* th is not ours beyond this call */
        return;
    }
    iv_own_objects(cx, th);
    WL_LOOP(cx, t, iv_block);
    /* Finish the run in progress so the heap holds whole runs only. */
    uint64_t drained = 0;
    while (th->vm[th->cur].in_run && !th->vm[th->cur].stuck) {
        if (drained > IV_DRAIN_MAX) {
            th->unfinished = 1;
            break;
        }
        uint64_t n = iv_block(cx, t);
        t->ops += n;
        t->blocks++;
        if (n)
            lat_add(&t->len_hist, n);
        drained += n;
        sync_tick();
    }
    sync_where = (struct sync_where_hook){0};
}

/* ---- load, setup, check ---- */

static int iv_load(const struct wl_args *a, struct iv_program **out, char *err, size_t errlen)
{
    const char *mem = a->sval[IV_K_MEMORY] ? a->sval[IV_K_MEMORY] : "raw";
    struct iv_params p = { .iterations = a->ival[IV_K_ITER], .threads = a->nthreads,
                           .memory = iv_memory_find(mem) };
    if (p.memory < 0) {
        snprintf(err, errlen, "--memory: unknown mode '%s' (raw, tracing, refcount, biased or buffered)",
                 mem);
        return -1;
    }
    const char *spec = a->sval[IV_K_PROGRAM] ? a->sval[IV_K_PROGRAM] : "counters";
    char msg[400];
    if (iv_asm_load(spec, &p, out, msg, sizeof msg) < 0) {
        snprintf(err, errlen, "--program: %s", msg);
        return -1;
    }
    return 0;
}

static int iv_validate(const struct wl_args *a, char *err, size_t errlen)
{
    struct iv_program *p;
    if (iv_load(a, &p, err, errlen) < 0)
        return -1;
    iv_program_free(p);
    return 0;
}

/* An object of the program (a constant, a global's first value, a declared list or
 * dict) in the object model: never in a registry, never freed before the teardown
 * (refcount: one reference more, the program's; biased: immortal, or counted by its
 * owner for a container). Called inside a block. */
static IV_OBJ_TEXT void iv_program_obj(const struct iv_ctx *cx, iv_oref o, int tid, bool container)
{
    o->owner = cx->memory == IV_MEM_BIASED && !container ? IV_IMMORTAL : tid;
    o->rc = container ? 1 : 2;
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

/* The module dict of the shared int globals (obj.h "Global names"), and every
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
    SYNC_ATOMIC("interp.setup") {
        /* A re-run re-allocates: only `r` and `first` (assigned) survive the block. */
        if (gl->kind == IV_KIND_INT) {
            iv_cell_ref c = SYNC_ALLOC(struct iv_cell);
            first = objects ? iv_program_int(cx, gl->init) : 0;
            c->value = objects ? (int64_t)first : gl->init;
            r = (iv_ref)c;
        } else if (objects) {
            size_t sz = gl->kind == IV_KIND_LIST ? sizeof(struct iv_olist) : sizeof(struct iv_odict);
            iv_oref o = (iv_oref)sync_alloc(sz < 128 ? 128 : sz);   /* a line of its own */
            iv_program_obj(cx, o, tid, true);
            if (gl->kind == IV_KIND_DICT) {
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
    SYNC_ATOMIC("interp.teardown") {
        if (objects && gl->kind == IV_KIND_INT) {
            iv_cell_ref c = (iv_cell_ref)r;
            SYNC_READ(c);
            iv_val v = (iv_val)c->value;
            /* tracing, buffered: a registry's or a cell's object, freed with them, or
             * the program's (freed with the constants) */
            if (cx->memory != IV_MEM_TRACING && cx->memory != IV_MEM_BUFFERED &&
                iv_vtype(v) != IV_T_INT)
                iv_decref(cx, th, &th->vm[th->cur], v);
        } else if (objects) {
            iv_val w = iv_tagged((iv_oref)r, gl->kind == IV_KIND_LIST ? IV_T_LIST : IV_T_DICT);
            if (cx->memory == IV_MEM_TRACING || cx->memory == IV_MEM_BUFFERED)
                iv_free_obj(w);
            else
                iv_release(cx, th, &th->vm[th->cur], w);  /* its elements' references */
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
}

/* Frees the objects of n tagged values (small ints skipped) in one block; a block of
 * its own function, so that no loop around it keeps values across its setjmp. */
static IV_OBJ_TEXT SYNC_NOINLINE void iv_free_all(const iv_val *v, size_t n)
{
    SYNC_ATOMIC("interp.teardown") {
        for (size_t i = 0; i < n; i++)
            if (iv_vtype(v[i]) != IV_T_INT)
                iv_free_obj(v[i]);
    }
}

/* refcount, biased: what a run left on a thread's stack (a run abandoned by the stuck
 * guard or the drain bound) holds references too; dropped before the globals go. */
static IV_OBJ_TEXT SYNC_NOINLINE void iv_drop_stack(struct iv_ctx *cx, struct iv_thread *th)
{
    struct iv_vm *vm = &th->vm[th->cur];
    SYNC_ATOMIC("interp.teardown") {
        for (int32_t i = 0; i < vm->sp; i++)
            iv_decref(cx, th, vm, (iv_val)vm->vals[i]);
    }
    vm->sp = 0;
}

static IV_OBJ_TEXT void iv_drop_stacks(struct iv_ctx *cx)
{
    if (cx->memory != IV_MEM_REFCOUNT && cx->memory != IV_MEM_BIASED)
        return;
    for (int t = 0; t < cx->nthreads; t++)
        iv_drop_stack(cx, &cx->th[t]);
}

/* The object model's own teardown: what the registries (tracing) and the count cells
 * (buffered) still name, the constants and the globals' first values. */
static IV_OBJ_TEXT void iv_free_model(struct iv_ctx *cx)
{
    for (int t = 0; t < cx->nthreads; t++) {
        struct iv_mem *m = &cx->th[t].mem;
        if (cx->memory == IV_MEM_TRACING)
            iv_free_all(m->reg, m->nreg);
        /* buffered: every cell not marked free names a live object (limbo included) */
        for (size_t s = 0; s < m->nslabs && cx->memory == IV_MEM_BUFFERED; s++) {
            struct iv_count *slab = m->slabs[s];
            iv_val live[IV_CELL_SLAB];
            size_t n = 0;
            for (size_t i = 0; i < IV_CELL_SLAB; i++)
                if (!(atomic_load_explicit(&slab[i].n, memory_order_relaxed) & IV_CNT_DEAD))
                    live[n++] = slab[i].obj;
            iv_free_all(live, n);
        }
    }
    for (int t = 0; t < cx->nthreads; t++) {
        struct iv_mem *m = &cx->th[t].mem;
        for (size_t s = 0; s < m->nslabs; s++)
            free(m->slabs[s]);
        free(m->slabs);
        free(m->dkey);
        free(m->dval);
        free(m->dused);
        free(m->young);
        free(m->cfree);
        free(m->cret);
        free(m->limbo);
        free(m->reg);
        free(m->work);
        free(m->drop);
        free(m->inbox);
        pthread_mutex_destroy(&m->inbox_mu);
    }
    if (cx->konst)
        iv_free_all((const iv_val *)cx->konst, (size_t)cx->prog->ncode);
    iv_free_all(cx->pobj, cx->npobj);
    free(cx->pobj);
    pthread_mutex_destroy(&cx->pobj_mu);
}

static void iv_teardown(void *ctx)
{
    struct iv_ctx *cx = ctx;
    if (!cx)
        return;
    if (cx->memory != IV_MEM_RAW && cx->th && cx->prog)
        iv_drop_stacks(cx);
    if (cx->objs && cx->prog)
        for (int g = 0; g < cx->prog->nglobals; g++) {
            const struct iv_global *gl = &cx->prog->globals[g];
            for (int t = 0; t < (gl->per_thread ? cx->nthreads : 1); t++) {
                size_t k = (size_t)g * (size_t)cx->nthreads + (size_t)t;
                if (cx->objs[k] != SYNC_NULL)
                    iv_free_object(cx, gl, cx->objs[k]);
                if (cx->placeholders && cx->placeholders[k] != SYNC_NULL)
                    iv_free_object(cx, gl, cx->placeholders[k]);
            }
        }
    if (cx->memory != IV_MEM_RAW && cx->th && cx->prog)
        iv_free_model(cx);
    if (cx->module != SYNC_NULL) {
        iv_odict_ref md = cx->module;
        SYNC_ATOMIC("interp.teardown") {
            SYNC_READ(md);
            SYNC_FREE(md->slots);
            SYNC_FREE(md);
        }
    }
    for (int t = 0; cx->th && cx->prog && t < cx->nthreads; t++)
        free(cx->th[t].gcache);
    free(cx->konst);
    free(cx->gobj);
    free(cx->mems);
    free(cx->objs);
    free(cx->placeholders);
    free(cx->th);
    iv_program_free(cx->prog);
    free(cx);
}

static void *iv_setup(const struct wl_args *a, char *err, size_t errlen)
{
    struct iv_ctx *cx = calloc(1, sizeof *cx);
    if (!cx) {
        snprintf(err, errlen, "interp: out of memory");
        return NULL;
    }
    if (iv_load(a, &cx->prog, err, errlen) < 0) {
        free(cx);
        return NULL;
    }
    int n = a->nthreads;
    cx->nthreads = n;
    cx->memory = cx->prog->params.memory;
    cx->interval = a->ival[IV_K_SWITCH];          /* WL_LEN_AUTO: adaptive */
    pthread_mutex_init(&cx->pobj_mu, NULL);
    size_t nobjs = (size_t)(cx->prog->nglobals ? cx->prog->nglobals : 1) * (size_t)n;
    cx->objs = calloc(nobjs, sizeof *cx->objs);
    cx->placeholders = calloc(nobjs, sizeof *cx->placeholders);
    cx->gobj = calloc(nobjs, sizeof *cx->gobj);
    cx->konst = calloc((size_t)cx->prog->ncode, sizeof *cx->konst);
    cx->mems = calloc((size_t)n, sizeof *cx->mems);
    size_t thsz = ((size_t)n * sizeof *cx->th + SYNC_CACHELINE - 1) & ~(size_t)(SYNC_CACHELINE - 1);
    cx->th = aligned_alloc(SYNC_CACHELINE, thsz);
    if (!cx->objs || !cx->placeholders || !cx->th || !cx->gobj || !cx->konst || !cx->mems) {
        snprintf(err, errlen, "interp: out of memory for %d threads", n);
        free(cx->th);
        cx->th = NULL;
        iv_teardown(cx);
        return NULL;
    }
    memset(cx->th, 0, thsz);
    for (int t = 0; t < n; t++) {
        struct iv_mem *m = &cx->th[t].mem;
        pthread_mutex_init(&m->inbox_mu, NULL);
        atomic_init(&m->safe, 1);                 /* not started: never holds a collection */
        atomic_init(&m->seen, UINT64_MAX);        /* nor a limbo */
        m->gc_at = IV_GC_MIN;
        cx->mems[t] = m;
    }
    atomic_init(&cx->gc_req, 0);
    atomic_init(&cx->epoch, 1);
    for (int g = 0; g < cx->prog->nglobals; g++) {
        const struct iv_global *gl = &cx->prog->globals[g];
        for (int t = 0; t < (gl->per_thread ? n : 1); t++) {
            size_t k = (size_t)g * (size_t)n + (size_t)t;
            cx->objs[k] = iv_new_object(cx, gl, t);
            if (cx->memory != IV_MEM_RAW && gl->kind != IV_KIND_INT)
                cx->gobj[k] = iv_tagged((iv_oref)cx->objs[k], gl->kind == IV_KIND_LIST
                                                                  ? IV_T_LIST : IV_T_DICT);
        }
    }
    if (cx->memory != IV_MEM_RAW && iv_module_new(cx, err, errlen) < 0) {
        iv_teardown(cx);
        return NULL;
    }
    if (cx->memory != IV_MEM_RAW) {
        const struct iv_program *pr = cx->prog;
        SYNC_ATOMIC("interp.setup") {
            for (int i = 0; i < pr->ncode; i++)
                cx->konst[i] = pr->code[i].op == IV_PUSH ? (int64_t)iv_program_int(cx, pr->code[i].v)
                                                         : 0;
        }
    }
    for (int t = 0; t < n; t++) {
        struct iv_thread *th = &cx->th[t];
        th->tid = t;
        for (int g = 0; g < cx->prog->nglobals; g++) {
            th->obj[g] = iv_obj_of(cx, g, t);
            th->gobj[g] = cx->gobj[(size_t)g * (size_t)n +
                                   (size_t)(cx->prog->globals[g].per_thread ? t : 0)];
        }
        iv_vm_reset(&th->vm[0], cx->prog->main_nlocals);
    }
    return cx;
}

struct iv_check_env {
    const struct iv_ctx *cx;
    int not_int;                     /* object model: an expectation read a list or dict
                                      * where it needs an int (assigned in the block) */
};

/* An element or cell value as the expectations see it: an int, or 0 and not_int. */
static IV_OBJ_TEXT int64_t iv_check_int(struct iv_check_env *ce, iv_val w)
{
    if (iv_vtype(w) == IV_T_INT)
        return (int64_t)w >> 4;
    if (iv_vtype(w) == IV_T_BOX) {
        iv_box_ref b = (iv_box_ref)iv_vref(w);
        SYNC_READ(b);
        return b->value;
    }
    ce->not_int = 1;
    return 0;
}

static IV_OBJ_TEXT int64_t iv_check_model(struct iv_check_env *ce, int what, iv_ref r, int kind,
                              int64_t key)
{
    if (kind == IV_KIND_INT) {
        iv_cell_ref c = (iv_cell_ref)r;
        SYNC_READ(c);
        return iv_check_int(ce, (iv_val)c->value);
    }
    iv_olist_ref l = (iv_olist_ref)r;
    iv_odict_ref d = (iv_odict_ref)r;
    bool list = kind == IV_KIND_LIST;
    switch (what) {
    case IV_E_LEN:
        return list ? iv_olist_len(l) : iv_odict_len(d);
    case IV_E_SUM: {
        int64_t t = 0;
        if (list) {
            for (int64_t i = 0, n = iv_olist_len(l); i < n; i++)
                t = iv_add(t, iv_check_int(ce, iv_olist_get(l, i)));
        } else {
            SYNC_READ(d);
            iv_slots_ref s = d->slots;
            SYNC_READ(s);
            for (int64_t j = 0; j < d->cap; j++)
                if (s->e[j].used)
                    t = iv_add(t, iv_check_int(ce, (iv_val)s->e[j].val));
        }
        return t;
    }
    default:
        return iv_check_int(ce, list ? iv_olist_get(l, key) : iv_odict_get(d, key));
    }
}

static int64_t iv_check_obj(void *u, int what, int g, int64_t tid, int64_t key)
{
    const struct iv_ctx *cx = ((struct iv_check_env *)u)->cx;
    iv_ref r = iv_obj_of(cx, g, (int)tid);
    int kind = cx->prog->globals[g].kind;
    if (cx->memory != IV_MEM_RAW)
        return iv_check_model(u, what, r, kind, key);
    switch (what) {
    case IV_E_GVAL: {
        iv_cell_ref c = (iv_cell_ref)r;
        SYNC_READ(c);
        return c->value;
    }
    case IV_E_LEN:
        return kind == IV_KIND_LIST ? iv_list_len((iv_list_ref)r) : iv_dict_len((iv_dict_ref)r);
    case IV_E_SUM:
        return kind == IV_KIND_LIST ? iv_list_sum((iv_list_ref)r) : iv_dict_sum((iv_dict_ref)r);
    default:
        return kind == IV_KIND_LIST ? iv_list_get((iv_list_ref)r, key)
                                    : iv_dict_get((iv_dict_ref)r, key);
    }
}

static const char *iv_fault_name(int k)
{
    switch (k) {
    case IV_FAULT_LIST_FULL: return "list full (" "max 65536 elements)";
    case IV_FAULT_DICT_FULL: return "dict full (max 1024 keys)";
    case IV_FAULT_STUCK: return "an atomic section never reached its ATOMIC_END";
    case IV_FAULT_TYPE: return "a value of the wrong type (a list or dict where an int is "
                               "expected, or an int or dict where a list is)";
    default: return "?";
    }
}

static int iv_check(void *ctx, struct wl_thread *threads, int nthreads, char *msg,
                    size_t msglen)
{
    (void)threads;
    const struct iv_ctx *cx = ctx;
    const struct iv_program *pr = cx->prog;
    int64_t total = 0;
    for (int t = 0; t < nthreads && t < cx->nthreads; t++) {
        const struct iv_thread *th = &cx->th[t];
        const struct iv_vm *vm = &th->vm[th->cur];
        if (vm->faults) {
            snprintf(msg, msglen, "interp %s: thread %d: %llu run-time fault%s, the first at "
                     "line %d: %s", pr->name, t, (unsigned long long)vm->faults,
                     vm->faults == 1 ? "" : "s", pr->line[vm->fault_pc],
                     iv_fault_name(vm->fault_kind));
            return -1;
        }
        if (th->unfinished) {
            snprintf(msg, msglen, "interp %s: thread %d did not reach HALT within %llu "
                     "bytecodes after the stop (lower --iterations?)", pr->name, t,
                     (unsigned long long)IV_DRAIN_MAX);
            return -1;
        }
        total += (int64_t)vm->runs;
    }
    int bad = -1, bad_tid = 0;
    int64_t bad_l = 0, bad_r = 0, bad_runs = 0;
    struct iv_check_env ce = { .cx = cx };
    int bad_type = 0;
    SYNC_ATOMIC("interp.check") {
        bad = -1;
        ce.not_int = 0;
        for (int e = 0; e < pr->nexpects && bad < 0; e++) {
            const struct iv_expect *ex = &pr->expects[e];
            int nt = ex->per_thread ? cx->nthreads : 1;
            for (int t = 0; t < nt && bad < 0; t++) {
                const struct iv_thread *th = &cx->th[t];
                struct iv_env env = {
                    .runs = ex->per_thread ? (int64_t)th->vm[th->cur].runs : total,
                    .threads = cx->nthreads, .iter = pr->params.iterations, .tid = t,
                    .obj = iv_check_obj, .u = &ce,
                };
                int64_t l = iv_expr_eval(&ex->lhs, &env), r = iv_expr_eval(&ex->rhs, &env);
                bad_type = ce.not_int;
                if (l != r || bad_type) {
                    bad = e;
                    bad_tid = t;
                    bad_l = l;
                    bad_r = r;
                    bad_runs = env.runs;
                }
            }
        }
    }
    if (bad >= 0) {
        const struct iv_expect *ex = &pr->expects[bad];
        char who[32] = "";
        if (ex->per_thread)
            snprintf(who, sizeof who, " for thread %d", bad_tid);
        if (bad_type) {
            snprintf(msg, msglen, "interp %s: line %d: `.expect %s` reads a list or dict "
                     "where it needs an int%s", pr->name, ex->line, ex->text, who);
            return -1;
        }
        snprintf(msg, msglen, "interp %s: line %d: `.expect %s` fails%s: %lld != %lld "
                 "(RUNS=%lld, THREADS=%d, ITER=%lld)", pr->name, ex->line, ex->text, who,
                 (long long)bad_l, (long long)bad_r, (long long)bad_runs, cx->nthreads,
                 (long long)pr->params.iterations);
        return -1;
    }
    return 0;
}

/* ---- conflict analysis: descriptions (struct workload, describe_*) ---- */

/* "shared-counter:14 in main (STORE_GLOBAL counter)": the program, the source line,
 * the function and the instruction of location `where` (1 + a bytecode index). */
static void iv_describe_where(void *ctx, uint32_t where, char *buf, size_t n)
{
    const struct iv_ctx *cx = ctx;
    const struct iv_program *pr = cx->prog;
    buf[0] = '\0';
    if (where == 0 || where > (uint32_t)pr->ncode)
        return;
    int i = (int)where - 1;
    const struct iv_insn *in = &pr->code[i];
    const char *arg = "";
    switch (in->op) {
    case IV_LOAD_GLOBAL: case IV_STORE_GLOBAL: case IV_LIST_APPEND: case IV_LIST_GET:
    case IV_LIST_SET: case IV_LIST_LEN: case IV_LIST_CLEAR: case IV_DICT_GET:
    case IV_DICT_SET: case IV_DICT_LEN: case IV_LIST_POP:
        if (in->a >= 0 && in->a < pr->nglobals)
            arg = pr->globals[in->a].name;
        break;
    default:
        break;
    }
    snprintf(buf, n, "%s:%d in %s (%s%s%s)", pr->name, pr->line[i], iv_func_of(pr, i),
             iv_op_name(in->op), *arg ? " " : "", arg);
}

/* "int counter", "list log", "list log[64..127]" (a chunk of its elements), "dict
 * by_slot (thread 1)" for a per-thread object; empty when obj is none of them. Reads
 * the heap as the check does (main thread, after the run). */
static void iv_describe_object(void *ctx, uint64_t obj, char *buf, size_t n)
{
    const struct iv_ctx *cx = ctx;
    const struct iv_program *pr = cx->prog;
    static const char *const kinds[] = {"int", "list", "dict"};
    buf[0] = '\0';
    if (!obj)
        return;
    for (int g = 0; g < pr->nglobals; g++) {
        const struct iv_global *gl = &pr->globals[g];
        int ninst = gl->per_thread ? cx->nthreads : 1;
        for (int t = 0; t < ninst; t++) {
            iv_ref r = cx->objs[(size_t)g * (size_t)cx->nthreads + (size_t)t];
            char who[24] = "";
            if (gl->per_thread)
                snprintf(who, sizeof who, " (thread %d)", t);
            if (SYNC_REF_ID(r) == obj) {
                snprintf(buf, n, "%s %s%s", kinds[gl->kind], gl->name, who);
                return;
            }
            if (gl->kind != IV_KIND_LIST || cx->memory != IV_MEM_RAW || r == SYNC_NULL)
                continue;
            iv_list_ref l = (iv_list_ref)r;
            iv_dir_ref d = l->dir;
            if (d == SYNC_NULL)
                continue;
            if (SYNC_REF_ID(d) == obj) {
                snprintf(buf, n, "list %s (its directory)%s", gl->name, who);
                return;
            }
            for (int k = 0; k < IV_NCHUNKS; k++)
                if (d->c[k] != SYNC_NULL && SYNC_REF_ID(d->c[k]) == obj) {
                    snprintf(buf, n, "list %s[%d..%d]%s", gl->name, k * IV_CHUNK,
                             k * IV_CHUNK + IV_CHUNK - 1, who);
                    return;
                }
        }
    }
}

#define IV_SUMMARY "a stack bytecode interpreter whose objects live in the shared heap"

WORKLOAD_EXPORT(interp, SYNC_RT_ID) = {
    .name = "interp",
    .runtime = SYNC_RT_NAME,
    .summary = IV_SUMMARY,
    .knobs = iv_knobs,
    .nknobs = IV_NKNOBS,
    .validate = iv_validate,
    .setup = iv_setup,
    .thread_run = iv_thread_run,
    .check = iv_check,
    .teardown = iv_teardown,
    .tx_adaptive = WL_TX_ADAPTIVE,
    .auto_knob = 1 + IV_K_SWITCH,
    .describe_where = iv_describe_where,
    .describe_object = iv_describe_object,
};

#endif
