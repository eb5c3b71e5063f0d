/*
 * runtime/itm/sync_itm.h - GCC's libitm (-fgnu-tm): a word-based compiler STM.
 *
 * An atomic block is a GCC transaction statement (`__transaction_relaxed`), so gcc
 * instruments every load and store inside it (and in the functions it calls, which
 * it clones into transactional versions) with calls into libitm; the barriers of
 * sync.h are therefore empty here and references are plain pointers, as in
 * plain_heap.h. Only gcc compiles this: workloads are built for itm with
 * `gcc -fgnu-tm -DSYNC_RT_ITM` (see the Makefile); clang has no -fgnu-tm.
 *
 * Why relaxed and not __transaction_atomic: the checks' blocks call functions gcc
 * cannot prove transaction-safe (snprintf, realloc, the interp's expression
 * evaluator), which __transaction_atomic refuses at compile time. In a relaxed
 * transaction such a call is allowed: libitm switches the transaction to
 * serial-irrevocable mode before it (gcc may hoist the switch to the start of the
 * enclosing basic block). The blocks the threads run call nothing unsafe: no
 * _ITM_changeTransactionMode in their code (objdump -dr of build/obj/itm/...).
 * wl_fail, which bank's audit calls inside its block, is declared SYNC_TM_PURE
 * (transaction_pure): without it gcc switched every audit to serial-irrevocable
 * mode, whether it failed or not. Its record must survive a rollback anyway.
 *
 * The method: ml_wt (per-word ownership records, write-through with an undo log,
 * time-based validation), pinned by runtime/itm/itm.c unless the user set the
 * environment variable ITM_DEFAULT_METHOD (gl_wt, ml_wt, serialirr, htm, ...); left
 * to itself libitm would run serial-irrevocable with one thread registered and its
 * hardware-TM method where the CPU has RTM. After repeated restarts a transaction
 * runs serial-irrevocable, uninstrumented.
 *
 * Allocation: aligned_alloc is not transaction-safe (a block calling it starts
 * serial-irrevocable), but malloc, calloc and free are: gcc maps them to
 * _ITM_malloc (freed if the transaction restarts) and _ITM_free (deferred to the
 * commit). glibc's malloc returns 16-byte aligned blocks on x86-64, the alignment
 * every runtime gives objects, so SYNC_ALLOC uses malloc here.
 *
 * Restarts: libitm rolls back instrumented stores and restarts a block from its
 * beginning, so the rules of sync.h for runtimes that re-run blocks hold as under
 * stm. libitm does not expose how often it restarted: the abort columns read 0.
 * Commits (outermost blocks completed) are counted per thread.
 */
#ifndef SYNC_ITM_H
#define SYNC_ITM_H

#include "runtime/itm/itm_rt.h"
#include "runtime/plain_heap.h"
#include "runtime/common.h"
#include "runtime/timeacct.h"

#include <stdint.h>
#include <stdlib.h>

/* gcc without -fgnu-tm stops at the first __transaction_relaxed on its own. */
#if defined(__clang__) || !defined(__GNUC__)
#error "the itm runtime needs gcc -fgnu-tm (clang has no transactional memory)"
#endif

#define SYNC_RT_NAME "itm"
#define SYNC_RT_ID itm

/* libitm's ABI: how the calling thread executes (0 = outside any transaction).
 * Pure: callable inside a transaction without instrumentation. */
extern int _ITM_inTransaction(void) __attribute__((transaction_pure));

/* Called after a block's transaction statement completed: counts outermost blocks.
 * Inside an enclosing block (nested SYNC_ATOMIC) the thread is still in a transaction
 * and nothing is counted. */
SYNC_INLINE int _itm_end(void)
{
    TA_BLOCK_LEAVE_CALL();
    if (_ITM_inTransaction() == 0)
        itm_self.commits++;
    return 0;
}

/* The time breakdown's block boundaries (runtime/timeacct.h) are outside the
 * transaction statement (a nested block's are inside its outer one: the slow paths
 * are transaction_pure). libitm's restarts are invisible: all of a block is `work`. */
#define SYNC_ATOMIC(site) \
    for (int _sync_once = ((void)(site), TA_BLOCK_ENTER_CALL(), 1); _sync_once; \
         _sync_once = _itm_end()) \
        __transaction_relaxed

/* Zeroed, 16-byte aligned (glibc malloc on x86-64), header initialised. Inside a
 * block gcc turns malloc and the memset into their libitm versions. */
static inline void *_itm_alloc(size_t size)
{
    size_t n = (size + 15) & ~(size_t)15;
    struct sync_hdr *h = malloc(n ? n : 16);
    if (SYNC_UNLIKELY(!h))
        sync_out_of_resources("itm: out of memory allocating a %zu-byte object", size);
    __builtin_memset(h, 0, n);
    h->size = (uint32_t)size;
    return h;
}
#define sync_alloc(size) _itm_alloc(size)

/* Goes serial-irrevocable: itm_inevitable (runtime/itm/itm.c) is not transaction-safe,
 * so gcc switches the transaction's mode before calling it. */
#define sync_inevitable() itm_inevitable()
#define sync_tick() ((void)0)

#endif
