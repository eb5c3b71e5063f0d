/*
 * runtime/htm/sync_htm.h - the GIL elided with Intel RTM (hardware transactional
 * memory), as Odaira et al. did for Ruby's GIL ("Eliminating Global Interpreter Locks
 * in Ruby through Hardware Transactional Memory", PPoPP 2014).
 *
 * An outermost atomic block (so also one slice of the interpreter) runs as a hardware
 * transaction that reads the GIL word first and aborts if it is taken; since every
 * running transaction has that word in its read set, a thread that takes the GIL
 * aborts them all, and no transaction runs while a thread holds it. After R failed
 * hardware attempts (--htm-retries, default 5; a capacity abort at once) the block
 * takes the GIL for real and runs under it, unrolled. Between blocks no GIL is held
 * (nothing shared is touched there). The semantics of `with atomic` are the GIL's:
 * a block, nested blocks included, runs whole and isolated from every other block,
 * in hardware or under the GIL; a block is never re-run after it has had an effect
 * (RTM rolls an aborted attempt back completely: memory and registers).
 *
 * The instructions that start and end a transaction are in htm.c, out of line (as
 * glibc's lock elision does: xbegin in one call, xend in a later one). RTM restores
 * the registers and every memory write, the stack included, to their state at xbegin,
 * so an abort resumes inside _htm_begin_outer as if xbegin had returned the abort
 * status, whatever the block had done. So only htm.c is compiled with -mrtm and the
 * workloads' htm copies contain no RTM instruction.
 *
 * References are plain pointers and barriers empty (plain_heap.h): the hardware
 * tracks every load and store of the transaction. Allocation and free inside a block
 * are malloc/free (thread-local caches in glibc; an abort undoes them like any store;
 * a system call aborts the attempt and the block ends up under the GIL).
 */
#ifndef SYNC_HTM_H
#define SYNC_HTM_H

#include "runtime/htm/htm_rt.h"
#include "runtime/plain_heap.h"
#include "runtime/common.h"
#include "runtime/timeacct.h"

#define SYNC_RT_NAME "htm"
#define SYNC_RT_ID htm

struct htm_tls {
    int depth;           /* atomic-block nesting (inside a transaction, rolled back with it) */
    int locked;          /* the running outermost block holds the GIL (the fallback) */
    int tid;
    const char *site;    /* the outermost block's label (conflict log) */
    uint64_t rng;        /* backoff jitter */
    struct sync_stats stats;
};
extern __thread struct htm_tls htm_self;

/* Out of line, in htm.c (compiled with -mrtm): start the outermost block in hardware
 * or, after the retry policy gave up, under the GIL; end it; make it irrevocable. */
void _htm_begin_outer(const char *site);
void _htm_end_outer(void);
void _htm_inevitable(void);

/* The time breakdown's block hooks (runtime/timeacct.h) run outside the hardware
 * transaction: before xbegin and after xend (every attempt and a fallback under the
 * GIL are `work`). */
SYNC_INLINE int _htm_begin(const char *site)
{
    /* The increment happens before xbegin: an abort restores depth == 1. */
    if (htm_self.depth++ == 0) {
        TA_PHASE(TA_WORK);
        _htm_begin_outer(site);
    }
    return 1;
}

SYNC_INLINE int _htm_end(void)
{
    if (--htm_self.depth == 0) {
        _htm_end_outer();
        TA_PHASE(TA_OUTSIDE);
    }
    return 0;
}

#define SYNC_ATOMIC(site) \
    for (int _sync_once = _htm_begin(site); _sync_once; _sync_once = _htm_end())
/* No GIL is held between blocks: nothing to hand over. */
#define sync_tick() ((void)0)
/* In hardware: abort and re-run the block under the GIL (it runs irrevocably there). */
#define sync_inevitable()                                 \
    do {                                                  \
        if (htm_self.depth > 0 && !htm_self.locked)       \
            _htm_inevitable();                            \
    } while (0)

#endif
