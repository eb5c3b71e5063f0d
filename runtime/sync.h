/*
 * runtime/sync.h - the one synchronisation interface every workload is written against.
 *
 * A workload file is compiled once per runtime of runtime/runtimes.h with SYNC_RT
 * defined to the runtime's name (the Makefile passes -DSYNC_RT=<name>, and
 * -DSYNC_RT_<NAME> for code that differs per runtime under #if; a test that needs a
 * runtime's barriers writes `#define SYNC_RT <name>` before including this header).
 * This header then includes that runtime's inline fast paths,
 * runtime/<name>/sync_<name>.h, so barriers inline and `seq` compiles to plain loads
 * and stores. There is no function pointer on the hot path.
 *
 * What a runtime header defines (the contract; names are the same everywhere):
 *
 *   SYNC_OBJECT_HEADER        first member of every object that lives in the shared heap
 *                             (8 bytes in every runtime, so layouts are identical; the
 *                             STM keeps its write-barrier flag and the object size there)
 *   SYNC_REF(T)               a reference to a shared object of type T: a %gs-relative
 *                             pointer under stm, a plain pointer elsewhere. `->` works.
 *   SYNC_NULL                 the null reference (compare refs with == and !=)
 *   SYNC_REF_ID(r)            the reference as an integer (hashing, conflict log)
 *   SYNC_READ(r)              read barrier: call before reading fields of *r in a block
 *   SYNC_WRITE(r)             write barrier: call before writing fields of *r (implies a
 *                             read); objects allocated in the running block need none
 *   SYNC_ATOMIC(site) { ... } an atomic block, lexically scoped. `site` is a static
 *                             string naming the block in the conflict log: an expression
 *                             without side effects, which a runtime may evaluate more
 *                             than once or only on a slow path (gil, mutex: when a
 *                             thread waits, for the contention rows). Blocks nest
 *                             (an inner block joins the outer one). Under stm the block
 *                             may run several times: a local declared outside it may be
 *                             assigned inside it but never updated (x = ..., not x++ or
 *                             x += ...: after an abort its value is indeterminate, as
 *                             after longjmp), and `return`, `goto` or `break` out of the
 *                             block are forbidden. Keep long loops in a function of their
 *                             own (SYNC_NOINLINE): the block's function calls setjmp, and
 *                             compilers keep fewer values in registers around it.
 *   SYNC_ALLOC(T)             a new zeroed object of type T (header initialised), as SYNC_REF(T);
 *                             inside a block under stm it disappears if the block aborts
 *   SYNC_FREE(r)              frees an object (inside a block): takes effect when the block
 *                             commits; under stm reused only when no transaction can still
 *                             read it
 *   sync_tick()               a safe point between blocks: where a GIL holder lets a
 *                             waiting thread in; a no-op elsewhere
 *   sync_inevitable()         inside a block: from here on the block cannot be rolled back
 *                             (for I/O); a no-op in runtimes that never roll back
 *
 * And, from runtime/common.h, for every runtime:
 *   SYNC_TM_PURE              on the declaration of an out-of-line function that blocks
 *                             call and whose effects must survive a rollback (wl_fail):
 *                             transaction_pure under itm (gcc neither instruments it nor
 *                             makes the block serial-irrevocable to call it), else nothing
 *
 * Each runtime also exports a `struct sync_runtime` descriptor for the harness
 * (initialisation, thread enter/exit, statistics): called once per thread, never per op.
 */
#ifndef SYNC_H
#define SYNC_H

#include "runtime/common.h"
#include "runtime/runtimes.h"

#include <stdbool.h>

/* Configuration the harness passes to a runtime's init. */
struct sync_config {
    int nthreads;          /* worker threads that will enter (each gets its own slot/segment) */
    uint64_t seed;         /* for runtimes with randomness (STM chaos mode) */
    uint64_t heap_bytes;   /* STM: size of the shared heap per segment (0 = default) */
    uint64_t gil_interval_us; /* GIL: switch interval (0 = default 5000 us, as CPython) */
    int htm_retries;       /* htm: hardware attempts before taking the GIL (0 = default) */
};

/* The per-runtime descriptor the harness drives (cold path only). */
struct sync_runtime {
    const char *name;
    const char *summary;
    int max_threads;       /* 1 for seq; 0 = no limit beyond the runtime's own checks */
    /* 0 on success; otherwise writes the reason to err and returns -1 (exit status 3). */
    int (*init)(const struct sync_config *cfg, char *err, size_t errlen);
    void (*fini)(void);
    /* Called by each thread before it touches shared data; tid in [0, nthreads). The
     * harness's main thread enters as tid 0 for setup and checks, while no worker runs. */
    int (*thread_enter)(int tid, char *err, size_t errlen);
    /* Called when the thread is done; moves its statistics into *out (may be NULL). */
    void (*thread_exit)(struct sync_stats *out);
    /* Optional (NULL: none): the runtime's own settings as "key=value;..." (no comma),
     * appended to the CSV row's params after init (e.g. libitm's method). */
    const char *(*params)(void);
};

/* Every runtime's descriptor, `sync_runtime_<name>`, from the list. A runtime of
 * build gnutm is optional (built only where gcc and libitm are; see the Makefile):
 * its descriptor is weak, NULL when it is not built. */
#define SYNC_RT_DECL_cc(name) extern const struct sync_runtime sync_runtime_##name;
#define SYNC_RT_DECL_variant(name) extern const struct sync_runtime sync_runtime_##name;
#define SYNC_RT_DECL_gnutm(name) \
    extern const struct sync_runtime sync_runtime_##name __attribute__((weak));
#define SYNC_RT_DECL(a, name, build) SYNC_RT_DECL_##build(name)
SYNC_RUNTIMES(SYNC_RT_DECL, )

/* The runtimes built into this binary, in the list's order: the i-th for i from 0,
 * NULL past the last. And lookup by name (NULL when unknown or not built). */
const struct sync_runtime *sync_runtime_nth(int i);
const struct sync_runtime *sync_runtime_find(const char *name);

#ifdef SYNC_RT
#define SYNC_RT_STR_(x) #x
#define SYNC_RT_STR(x) SYNC_RT_STR_(x)
#define SYNC_RT_HEADER_(name) SYNC_RT_STR(runtime/name/sync_##name.h)
#define SYNC_RT_HEADER(name) SYNC_RT_HEADER_(name)
#include SYNC_RT_HEADER(SYNC_RT)
#endif
/* Without SYNC_RT: harness and runtime-independent code, descriptors only. */

/* The thread loop's marks around a sampled block call (workloads/workload.h): only
 * runtimes whose blocks have no boundary hooks of their own define them (locks). */
#ifndef SYNC_LOOP_BLOCK_ENTER
#define SYNC_LOOP_BLOCK_ENTER() ((void)0)
#define SYNC_LOOP_BLOCK_LEAVE() ((void)0)
#endif
/* The thread loop opens (1) and closes (0) a window of the time breakdown: a runtime
 * may mirror it in its own thread-local state, which its block hooks then test (gil). */
#ifndef SYNC_LOOP_WINDOW
#define SYNC_LOOP_WINDOW(on) ((void)0)
#endif

#ifdef SYNC_RT_NAME
#ifndef SYNC_ALLOC
#define SYNC_ALLOC(T) ((SYNC_REF(T))sync_alloc(sizeof(T)))
#endif
#endif

#endif
