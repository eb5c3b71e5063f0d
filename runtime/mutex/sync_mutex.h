/*
 * runtime/mutex/sync_mutex.h - one global pthread mutex taken around each outermost
 * atomic block. Nested blocks only count depth. Commit latency is the unlock step.
 */
#ifndef SYNC_MUTEX_H
#define SYNC_MUTEX_H

#include "runtime/plain_heap.h"
#include "runtime/common.h"
#include "runtime/timeacct.h"

#include <pthread.h>

#define SYNC_RT_NAME "mutex"
#define SYNC_RT_ID mutex

struct mutex_tls {
    int depth;
    struct sync_stats stats;
};
extern pthread_mutex_t mutex_global;
extern __thread struct mutex_tls mutex_self;
void _mutex_unlock_timed(void);
void _mutex_lock_wait(void);

/* With the time breakdown, only a lock that looks taken costs the clock readings of a
 * timed wait (wait_lock): a peek at glibc's lock word (relaxed: a hint; the lock call
 * decides; a lock taken between the peek and the call is an untimed wait). A trylock
 * instead cost 10 more instructions per block than the plain lock. */
SYNC_INLINE int _mutex_begin(void)
{
    TA_BLOCK_ENTER();   /* taking and releasing the mutex are part of the block */
    if (mutex_self.depth++ == 0) {
#if STMBENCH_TIMEACCT
        if (SYNC_UNLIKELY(__atomic_load_n(&mutex_global.__data.__lock, __ATOMIC_RELAXED)))
            _mutex_lock_wait();
        else
            pthread_mutex_lock(&mutex_global);
#else
        pthread_mutex_lock(&mutex_global);
#endif
    }
    return 1;
}

SYNC_INLINE int _mutex_end(void)
{
    if (--mutex_self.depth == 0) {
        if (SYNC_UNLIKELY((++mutex_self.stats.commits & (SYNC_COMMIT_SAMPLE - 1)) == 0))
            _mutex_unlock_timed();
        else
            pthread_mutex_unlock(&mutex_global);
    }
    TA_BLOCK_LEAVE();
    return 0;
}

#define SYNC_ATOMIC(site) \
    for (int _sync_once = ((void)(site), _mutex_begin()); _sync_once; _sync_once = _mutex_end())
#define sync_tick() ((void)0)
#define sync_inevitable() ((void)0)

#endif
