/*
 * runtime/seq/sync_seq.h - no synchronisation at all: the baseline of every
 * "n% slower" figure. Atomic blocks compile to the bare block (and the time breakdown's
 * two checks of a thread-local flag), barriers to nothing.
 * One thread only (the harness refuses more: max_threads = 1).
 */
#ifndef SYNC_SEQ_H
#define SYNC_SEQ_H

#include "runtime/plain_heap.h"
#include "runtime/timeacct.h"

#define SYNC_RT_NAME "seq"
#define SYNC_RT_ID seq
/* The time breakdown's block boundaries (runtime/timeacct.h): a load and a branch. */
#define SYNC_ATOMIC(site)                                                     \
    for (int _sync_once = ((void)(site), TA_BLOCK_ENTER(), 1); _sync_once;   \
         _sync_once = (TA_BLOCK_LEAVE(), 0))
#define sync_tick() ((void)0)
#define sync_inevitable() ((void)0)

#endif
