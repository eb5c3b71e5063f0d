/*
 * runtime/mutex/sync_mutex.h - one global pthread mutex taken around each outermost
 * atomic block. Nested blocks only count depth. Commit latency is the unlock step.
 *
 * Contention analysis (docs/contract.md "Conflict log", kind lock-wait): a block that
 * finds the mutex taken logs one row once it holds it (_mutex_lock_wait): the wait,
 * its site and location, and the holder that released the mutex to it, with that
 * holder's site and location. A waiter counts itself in mutex_waiting while it waits;
 * a block that ends while the count is not 0 leaves its thread, site and location
 * beside the mutex before it lets go (MUTEX_NOTE_SITE). So what it costs a block
 * outside those waits is that test at its end, one load and a branch (STMBENCH_WHERE;
 * the count has a line of its own, which only waiters write); the site labels are
 * evaluated only on those paths.
 */
#ifndef SYNC_MUTEX_H
#define SYNC_MUTEX_H

#include "runtime/plain_heap.h"
#include "runtime/common.h"
#include "runtime/timeacct.h"

#include <pthread.h>
#include <stdatomic.h>

#define SYNC_RT_NAME "mutex"
#define SYNC_RT_ID mutex

struct mutex_tls {
    int depth;
    struct sync_stats stats;
};
/* The mutex, and what the last holder that saw a waiter left (written by that holder
 * with the mutex held, read by the next holder: the mutex orders them). */
struct mutex_global {
    pthread_mutex_t mu;
    int tid;                     /* the holder that left the note */
    uint32_t where;              /* its location (sync_where_at: where it took the mutex) */
    const char *site;            /* its block's label */
    uint64_t t_ns;               /* when it left it (a waiter older than that reads it) */
} SYNC_CL_ALIGNED;
extern struct mutex_global mutex_global;
/* Threads in _mutex_lock_wait (relaxed: a hint). */
extern _Atomic int mutex_waiting;
extern __thread struct mutex_tls mutex_self;
void _mutex_unlock_timed(void);
void _mutex_lock_wait(const char *site);
void _mutex_note(const char *site);

/* Only a lock that looks taken costs the clock readings of a timed wait (wait_lock)
 * and a row of the wait log: a peek at glibc's lock word (relaxed: a hint; the lock
 * call decides; a lock taken between the peek and the call is an untimed, unlogged
 * wait). A trylock instead cost 10 more instructions per block than the plain lock.
 * Returns 0 when the caller must wait (SYNC_ATOMIC then calls _mutex_lock_wait). */
#define MUTEX_PEEK (STMBENCH_TIMEACCT || STMBENCH_WHERE)
SYNC_INLINE int _mutex_begin(void)
{
    TA_BLOCK_ENTER();   /* taking and releasing the mutex are part of the block */
    if (mutex_self.depth++ == 0) {
#if MUTEX_PEEK
        if (SYNC_UNLIKELY(__atomic_load_n(&mutex_global.mu.__data.__lock, __ATOMIC_RELAXED)))
            return 0;
#endif
        pthread_mutex_lock(&mutex_global.mu);
    }
    return 1;
}

SYNC_INLINE int _mutex_end(void)
{
    if (--mutex_self.depth == 0) {
        if (SYNC_UNLIKELY((++mutex_self.stats.commits & (SYNC_COMMIT_SAMPLE - 1)) == 0))
            _mutex_unlock_timed();
        else
            pthread_mutex_unlock(&mutex_global.mu);
    }
    TA_BLOCK_LEAVE();
    return 0;
}

/* A block ends while a thread waits: leave the note (a macro, so that the label is
 * evaluated only then; a nested block's note is overwritten by its outermost's).
 * relaxed: a hint; a waiter that counted itself too late to be seen finds an older
 * note and names no holder. */
#if STMBENCH_WHERE
#define MUTEX_NOTE_SITE(site)                                                              \
    ((void)(SYNC_UNLIKELY(atomic_load_explicit(&mutex_waiting, memory_order_relaxed))       \
                ? _mutex_note(site) : (void)0))
#else
#define MUTEX_NOTE_SITE(site) ((void)0)
#endif

#define SYNC_ATOMIC(site)                                                                   \
    for (int _sync_once = SYNC_LIKELY(_mutex_begin()) ? 1 : (_mutex_lock_wait(site), 1);   \
         _sync_once; _sync_once = (MUTEX_NOTE_SITE(site), _mutex_end()))
#define sync_tick() ((void)0)
#define sync_inevitable() ((void)0)

#endif
