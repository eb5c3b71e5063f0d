/* runtime/gil/gil.c - TEMPORARY placeholder (being written): never hands off. */
#include "runtime/gil/sync_gil.h"
#include "runtime/sync.h"
#include <string.h>
__thread struct gil_tls gil_self;
atomic_int gil_drop_request;
void _gil_yield(void) {}
static int gil_init(const struct sync_config *cfg, char *err, size_t errlen) { (void)cfg; (void)err; (void)errlen; return 0; }
static void gil_fini(void) {}
static int gil_enter(int tid, char *err, size_t errlen) { (void)tid; (void)err; (void)errlen; memset(&gil_self, 0, sizeof gil_self); return 0; }
static void gil_exit(struct sync_stats *out) { if (out) sync_stats_merge(out, &gil_self.stats); }
const struct sync_runtime sync_runtime_gil = {
    .name = "gil", .summary = "a CPython-style GIL (3.2+ design)", .max_threads = 0,
    .init = gil_init, .fini = gil_fini, .thread_enter = gil_enter, .thread_exit = gil_exit,
};
