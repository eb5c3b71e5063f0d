/*
 * runtime/mutex/mutex.c - the coarse-mutex runtime. Invariant: a thread holds
 * mutex_global.mu exactly while mutex_self.depth > 0; all shared data is accessed only
 * inside atomic blocks, so the mutex orders every access (its lock/unlock are the
 * acquire/release pair), the holder's note for contention analysis included
 * (sync_mutex.h: written and read only with the mutex held).
 */
#include "runtime/mutex/sync_mutex.h"
#include "runtime/sync.h"

#include <string.h>

struct mutex_global mutex_global = {.mu = PTHREAD_MUTEX_INITIALIZER, .tid = -1};
_Atomic int mutex_waiting SYNC_CL_ALIGNED;
__thread struct mutex_tls mutex_self;
static __thread int mutex_tid;
static uint64_t mutex_t0_ns;     /* init time: the conflict log's clock */

void _mutex_unlock_timed(void)
{
    uint64_t t0 = sync_now_ns();
    pthread_mutex_unlock(&mutex_global.mu);
    lat_add(&mutex_self.stats.commit_hist, sync_now_ns() - t0);
}

void _mutex_note(const char *site)
{
    mutex_global.tid = mutex_tid;
    mutex_global.site = site;
    mutex_global.where = sync_where_at(mutex_tid, 0);
    mutex_global.t_ns = sync_now_ns();
}

/* The mutex looked taken at the block's begin: wait for it, timed
 * (runtime/timeacct.h) and logged (the nesting depth is counted already). */
void _mutex_lock_wait(const char *site)
{
#if STMBENCH_WHERE
    uint64_t t0 = sync_now_ns();
    /* relaxed: a hint for the holder's note (see MUTEX_NOTE_SITE) */
    atomic_fetch_add_explicit(&mutex_waiting, 1, memory_order_relaxed);
#else
    (void)site;
#endif
    TA_TIMED_BEGIN(TA_WAIT_LOCK);
    pthread_mutex_lock(&mutex_global.mu);
    TA_TIMED_END();
#if STMBENCH_WHERE
    /* relaxed: as above */
    atomic_fetch_sub_explicit(&mutex_waiting, 1, memory_order_relaxed);
    uint64_t now = sync_now_ns();
    int seen = mutex_global.t_ns >= t0;   /* left for us, not before we waited */
    struct sync_conflict c = {
        .t_ns = now - mutex_t0_ns,
        .thread = mutex_tid,
        .other = seen ? mutex_global.tid : -1,
        .kind = SYNC_KIND_LOCK_WAIT,
        .site = site,
        .wasted_ns = now - t0,
        .where = sync_where_at(mutex_tid, 0),
        .other_site = seen ? mutex_global.site : NULL,
        .other_where = seen ? mutex_global.where : 0,
        .object_s = "the mutex",
    };
    if (sync_waits_wanted)
        sync_stats_add_wait(&mutex_self.stats, &c);
#endif
}

static int mutex_init(const struct sync_config *cfg, char *err, size_t errlen)
{
    (void)cfg; (void)err; (void)errlen;
    mutex_t0_ns = sync_now_ns();
    mutex_global.tid = -1;
    mutex_global.site = NULL;
    mutex_global.t_ns = 0;
    return 0;
}
static void mutex_fini(void) {}
static int mutex_enter(int tid, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    memset(&mutex_self, 0, sizeof mutex_self);
    mutex_tid = tid;
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
