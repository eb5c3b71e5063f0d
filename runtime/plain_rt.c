/*
 * runtime/plain_rt.c - descriptors of the runtimes with nothing to set up per thread
 * (seq and locks).
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

static int plain_init(const struct sync_config *cfg, char *err, size_t errlen)
{
    (void)cfg; (void)err; (void)errlen;
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
    .thread_enter = plain_enter, .thread_exit = plain_exit,
};
