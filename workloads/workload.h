/*
 * workloads/workload.h - what a workload gives the harness, and the thread loop every
 * workload shares.
 *
 * A workload file (`workloads/<name>.c`) includes runtime/sync.h and is compiled once
 * per runtime of runtime/runtimes.h (seq, mutex, gil, stm, and itm where gcc
 * -fgnu-tm is); for a runtime of build `variant` (locks) its variant
 * `workloads/<name>_<runtime>.c` is compiled instead.
 * Each compiled copy exports one descriptor named `<name>__<runtime>` with
 * WORKLOAD_EXPORT(name, ...), e.g. bank__stm. The harness finds it in its registry
 * (harness/registry.c).
 *
 * The thread loop (WL_LOOP below) is inlined into each copy, so the call from the
 * loop to the workload's block function is direct and the runtime's barriers inline.
 */
#ifndef WORKLOAD_H
#define WORKLOAD_H

#include "runtime/common.h"
#include "runtime/timeacct.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define WL_MAX_KNOBS 8

enum wl_knob_type { WL_KNOB_INT, WL_KNOB_STR };

/* One workload knob: `--name VALUE` on the command line. */
struct wl_knob {
    const char *name;       /* without the leading dashes, e.g. "accounts" */
    enum wl_knob_type type;
    long def;               /* default for INT */
    long min, max;          /* allowed range for INT (inclusive) */
    const char *def_str;    /* default for STR */
    const char *help;
};

/* Parsed values of a run's knobs, in the order of the workload's knob table. */
struct wl_args {
    int nthreads;
    uint64_t seed;
    long ops_per_tx;        /* --ops-per-tx, >= 1 */
    long ival[WL_MAX_KNOBS];
    const char *sval[WL_MAX_KNOBS];
};

/* Per-thread state of a run: owned by its thread while it runs, read by the harness
 * after the join. Cache-line aligned so threads never share a line. */
struct wl_thread {
    int tid;
    int nthreads;
    uint64_t rng;                   /* xorshift state, seeded from --seed and tid */
    const atomic_int *stop;         /* set by the harness (timer or SIGINT) */
    uint64_t ops_target;            /* 0: run until *stop; else stop after this many ops */
    uint64_t ops;                   /* workload operations completed */
    uint64_t blocks;                /* atomic blocks completed (committed) */
    struct lat_hist block_hist;     /* sampled latency of whole blocks, retries included */
    struct sync_stats stats;        /* the runtime's counters, filled at thread exit */
    int failed;                     /* an invariant failed during the run */
    char fail_msg[200];
    void *priv;                     /* the workload's per-thread data (op logs...) */
} SYNC_CL_ALIGNED;

struct workload {
    const char *name;
    const char *runtime;            /* the runtime this copy was compiled for */
    const char *summary;
    const struct wl_knob *knobs;
    int nknobs;
    /* Checks knob values together (e.g. range >= size) and loads inputs (programs);
     * on bad input writes a message naming the value to err and returns -1 (exit 2). */
    int (*validate)(const struct wl_args *a, char *err, size_t errlen);
    /* Builds the shared data; runs on the main thread after it entered the runtime
     * as tid 0. Returns the workload context, or NULL with a reason (exit 3). */
    void *(*setup)(const struct wl_args *a, char *err, size_t errlen);
    /* The worker thread body: runs blocks until the target or *stop (use WL_LOOP). */
    void (*thread_run)(void *ctx, struct wl_thread *t);
    /* After the run, on the main thread entered as tid 0: 0 if every invariant holds,
     * else -1 with the failed invariant in msg. Sees every thread's wl_thread. */
    int (*check)(void *ctx, struct wl_thread *threads, int nthreads, char *msg, size_t msglen);
    void (*teardown)(void *ctx);
};

#define WL_CAT_(a, b) a##__##b
#define WL_CAT(a, b) WL_CAT_(a, b)
/* Declares `const struct workload <name>__<runtime>`: in a workload file write
 *   WORKLOAD_EXPORT(bank, SYNC_RT_ID) = { .name = "bank", .runtime = SYNC_RT_NAME, ... };
 * SYNC_RT_ID is the runtime's name as a token (seq, mutex, gil, locks, stm, itm). */
#define WORKLOAD_EXPORT(wname, rtname) const struct workload WL_CAT(wname, rtname)

/* xorshift64*: fast per-thread randomness for op mixes. */
static inline uint64_t wl_rand(struct wl_thread *t)
{
    uint64_t x = t->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    t->rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}
/* Uniform in [0, n). */
static inline uint64_t wl_rand_below(struct wl_thread *t, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)wl_rand(t) * n) >> 64);
}

/* Records an invariant failure seen during the run (first one wins). Callable inside
 * a block; the record survives the block's rollback (SYNC_TM_PURE under itm). */
void wl_fail(struct wl_thread *t, const char *fmt, ...) SYNC_TM_PURE
    __attribute__((format(printf, 2, 3)));

/* One block latency sample in WL_BLOCK_SAMPLE blocks (a power of two). */
#define WL_BLOCK_SAMPLE 16

/*
 * The thread loop: calls block(ctx, t) until *stop or ops_target, counting ops and
 * blocks, sampling block latency, and passing a sync_tick() between blocks. `block`
 * returns the number of workload operations it completed (0 = nothing left to do).
 * One sampled block in TA_WINDOW_EVERY / WL_BLOCK_SAMPLE is also a window of the time
 * breakdown (runtime/timeacct.h): its iteration, tick included, is measured phase by
 * phase and is one sample of the operation latency. SYNC_LOOP_BLOCK_ENTER/LEAVE mark
 * the block call for runtimes whose blocks have no boundary hooks of their own (locks).
 * Must be expanded in a file that included runtime/sync.h (for sync_tick).
 */
#if STMBENCH_TIMEACCT
#define WL_LOOP_WINDOW_DUE_(_t) ((_t->blocks & (TA_WINDOW_EVERY - 1)) == 0)
#else
#define WL_LOOP_WINDOW_DUE_(_t) 0
#endif
#define WL_LOOP(ctx, t, block)                                                          \
    do {                                                                                \
        struct wl_thread *_t = (t);                                                     \
        for (;;) {                                                                      \
            /* relaxed: the stop flag is a hint; a late view only runs one more block */ \
            if (atomic_load_explicit(_t->stop, memory_order_relaxed))                   \
                break;                                                                  \
            if (_t->ops_target && _t->ops >= _t->ops_target)                            \
                break;                                                                  \
            /* 0: plain; 1: a block latency sample; 2: also a window. One call site \
             * of block: with two, compilers stopped inlining it into this loop. */     \
            int _mode = SYNC_LIKELY((_t->blocks & (WL_BLOCK_SAMPLE - 1)) != 0) ? 0       \
                        : WL_LOOP_WINDOW_DUE_(_t) ? 2 : 1;                              \
            uint64_t _t0 = 0;                                                           \
            if (SYNC_UNLIKELY(_mode)) {                                                 \
                if (_mode == 2) {                                                       \
                    ta_window_start();                                                  \
                    SYNC_LOOP_BLOCK_ENTER();                                            \
                } else {                                                                \
                    _t0 = sync_now_ns();                                                \
                }                                                                       \
            }                                                                           \
            uint64_t _n = block((ctx), _t);                                             \
            if (SYNC_UNLIKELY(_mode)) {                                                 \
                if (_mode == 2) {                                                       \
                    SYNC_LOOP_BLOCK_LEAVE();                                            \
                    ta_window_block_done();                                             \
                } else {                                                                \
                    lat_add(&_t->block_hist, sync_now_ns() - _t0);                      \
                }                                                                       \
            }                                                                           \
            if (_n)                                                                     \
                sync_tick();                                                            \
            if (SYNC_UNLIKELY(_mode == 2))                                              \
                lat_add(&_t->block_hist, ta_window_stop());                             \
            if (_n == 0)                                                                \
                break;                                                                  \
            _t->ops += _n;                                                              \
            _t->blocks++;                                                               \
        }                                                                               \
    } while (0)

/* How many ops the next block should do with --ops-per-tx k, never passing the target. */
static inline long wl_batch(const struct wl_thread *t, long k)
{
    if (t->ops_target && t->ops + (uint64_t)k > t->ops_target)
        return (long)(t->ops_target - t->ops);
    return k;
}

#endif
