/*
 * runtime/mutex/mutex.c - the coarse-mutex runtime. Invariant: a thread holds
 * mutex_global exactly while mutex_self.depth > 0; all shared data is accessed only
 * inside atomic blocks, so the mutex orders every access (its lock/unlock are the
 * acquire/release pair).
 */
#include "runtime/mutex/sync_mutex.h"
#include "runtime/sync.h"

#include <string.h>

pthread_mutex_t mutex_global = PTHREAD_MUTEX_INITIALIZER;
__thread struct mutex_tls mutex_self;

void _mutex_unlock_timed(void)
{
    uint64_t t0 = sync_now_ns();
    pthread_mutex_unlock(&mutex_global);
    lat_add(&mutex_self.stats.commit_hist, sync_now_ns() - t0);
}

/* The mutex was taken: wait for it, timed (runtime/timeacct.h). */
void _mutex_lock_wait(void)
{
    TA_TIMED_BEGIN(TA_WAIT_LOCK);
    pthread_mutex_lock(&mutex_global);
    TA_TIMED_END();
}

static int mutex_init(const struct sync_config *cfg, char *err, size_t errlen)
{
    (void)cfg; (void)err; (void)errlen;
    return 0;
}
static void mutex_fini(void) {}
static int mutex_enter(int tid, char *err, size_t errlen)
{
    (void)tid; (void)err; (void)errlen;
    memset(&mutex_self, 0, sizeof mutex_self);
    return 0;
}
static void mutex_exit(struct sync_stats *out)
{
    if (out)
        sync_stats_merge(out, &mutex_self.stats);
    else
        sync_stats_free(&mutex_self.stats);
}

const struct sync_runtime sync_runtime_mutex = {
    .name = "mutex",
    .summary = "one global pthread mutex around each atomic block",
    .max_threads = 0,
    .init = mutex_init, .fini = mutex_fini,
    .thread_enter = mutex_enter, .thread_exit = mutex_exit,
};
