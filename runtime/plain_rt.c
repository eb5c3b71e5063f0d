/*
 * runtime/plain_rt.c - descriptors of the runtimes with nothing to set up but their
 * wait log: seq, and locks, whose workloads take their own locks (workloads/lib/
 * wl_spin.h) and log the waits they meet in locks_stats through sync_waits
 * (runtime/common.h; contention analysis). locks_stats is the thread's own; its
 * lock words (sync_lock_word) name it while it is entered.
 */
#include "runtime/sync.h"

#include "runtime/plain_heap.h"

#include <stdio.h>
#include <string.h>
#ifdef SYNC_PLAIN_MIMALLOC
#include <mimalloc.h>
#endif

const char *sync_plain_allocator(void)
{
#ifdef SYNC_PLAIN_MIMALLOC
    static char name[32];
    int v = mi_version();        /* e.g. 209 for 2.0.9 */
    snprintf(name, sizeof name, "mimalloc %d.%d.%d", v / 100, v / 10 % 10, v % 10);
    return name;
#else
    return "libc malloc";     /* a sanitizer build: the sanitizer replaces it */
#endif
}

static uint64_t plain_t0_ns;     /* init time: the wait log's clock (set before any
                                  * thread enters; read by the threads it starts) */
static __thread struct sync_stats locks_stats;

static int plain_init(const struct sync_config *cfg, char *err, size_t errlen)
{
    (void)cfg; (void)err; (void)errlen;
    plain_t0_ns = sync_now_ns();
    return 0;
}
static void plain_fini(void) {}
static int plain_enter(int tid, char *err, size_t errlen)
{
    (void)tid; (void)err; (void)errlen;
    return 0;
}
static void plain_exit(struct sync_stats *out)
{
    (void)out;
}

static int locks_enter(int tid, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    sync_stats_reset(&locks_stats);
    sync_waits = (struct sync_wait_log){&locks_stats, plain_t0_ns, tid};
    sync_lock_words_set(tid);
    return 0;
}

static void locks_exit(struct sync_stats *out)
{
    sync_waits = (struct sync_wait_log){0};
    sync_lock_words_set(-1);
    if (out)
        sync_stats_merge(out, &locks_stats);
    else
        sync_stats_free(&locks_stats);
}

const struct sync_runtime sync_runtime_seq = {
    .name = "seq",
    .summary = "no synchronisation: plain loads and stores, 1 thread only (the baseline)",
    .max_threads = 1,
    .init = plain_init, .fini = plain_fini,
    .thread_enter = plain_enter, .thread_exit = plain_exit,
};

const struct sync_runtime sync_runtime_locks = {
    .name = "locks",
    .summary = "the workload's own fine-grained locks (per account, bucket, node, object)",
    .max_threads = 0,
    .init = plain_init, .fini = plain_fini,
    .thread_enter = locks_enter, .thread_exit = locks_exit,
};
