/*
 * runtime/seq/sync_seq.h - no synchronisation at all: the baseline of every
 * "n% slower" figure. Atomic blocks compile to the bare block, barriers to nothing.
 * One thread only (the harness refuses more: max_threads = 1).
 */
#ifndef SYNC_SEQ_H
#define SYNC_SEQ_H

#include "runtime/plain_heap.h"

#define SYNC_RT_NAME "seq"
#define SYNC_RT_ID seq
#define SYNC_ATOMIC(site) for (int _sync_once = ((void)(site), 1); _sync_once; _sync_once = 0)
#define sync_tick() ((void)0)
#define sync_inevitable() ((void)0)

#endif
