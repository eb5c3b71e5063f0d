/*
 * runtime/locks/sync_locks.h - the fine-grained-locks runtime. Each workload brings
 * its own `<name>_locks.c` variant that takes its own locks (per account, per bucket,
 * per node, per object); this header only gives those files the plain heap, so the
 * shared data structures and checks can be reused. SYNC_ATOMIC here adds nothing:
 * a locks variant must not rely on it for mutual exclusion.
 */
#ifndef SYNC_LOCKS_H
#define SYNC_LOCKS_H

#include "runtime/plain_heap.h"
#include "runtime/timeacct.h"

#define SYNC_RT_NAME "locks"
#define SYNC_RT_ID locks
#define SYNC_ATOMIC(site) for (int _sync_once = ((void)(site), 1); _sync_once; _sync_once = 0)
/* Time breakdown (runtime/timeacct.h): the variants take their locks in their own
 * code, so the whole block call is `work` (holding locks, or the lock-free part of an
 * operation) less its lock waits, which wl_spin.h and bank_locks.c time as wait_lock. */
#define SYNC_LOOP_BLOCK_ENTER() TA_BLOCK_ENTER()
#define SYNC_LOOP_BLOCK_LEAVE() TA_BLOCK_LEAVE()
#define sync_tick() ((void)0)
#define sync_inevitable() ((void)0)

#endif
