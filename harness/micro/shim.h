/*
 * harness/micro/shim.h - the C side of `make micro`.
 *
 * harness/micro/shim.c is compiled once per runtime (-DSYNC_RT=<rt>), so its loops
 * inline that runtime's barriers exactly as a workload does. Each copy exports one
 * function, micro_rt_<rt>(), returning a table of operations; the C++ driver
 * (micro.cc) wraps each operation in a google-benchmark loop.
 *
 * Timing is manual: an operation runs n iterations and returns the nanoseconds of the
 * part it measures (e.g. only the barriers inside a running transaction, not its
 * commit; or an abort and its retry without the wait for the conflicting thread).
 * The driver reports them with UseManualTime, so a row's time is per iteration.
 */
#ifndef MICRO_SHIM_H
#define MICRO_SHIM_H

#include "runtime/runtimes.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct micro_op {
    const char *name;      /* benchmark name, e.g. "read_barrier" */
    const char *what;      /* one line: what one iteration is */
    uint64_t batch;        /* iterations per call of run */
    /* Runs n iterations; returns the measured nanoseconds, or -1 with the reason in
     * the runtime's error() (the driver then skips the benchmark). */
    int64_t (*run)(uint64_t n);
};

struct micro_rt {
    const char *name;      /* runtime name, as in --runtime */
    /* Initialises the runtime and enters the calling thread as tid 0, once (later
     * calls return the first result). 0 on success, else -1 and the reason in error(). */
    int (*setup)(void);
    const char *(*error)(void);
    const struct micro_op *ops;
    int nops;
};

/* micro_rt_<name>() for every runtime of the list; weak, so that a runtime without a
 * shim (build variant) or not built (optional) is a null function. */
#define MICRO_RT_DECL(a, name, build) \
    const struct micro_rt *micro_rt_##name(void) __attribute__((weak));
SYNC_RUNTIMES(MICRO_RT_DECL, )
#undef MICRO_RT_DECL

#ifdef __cplusplus
}
#endif

#endif
