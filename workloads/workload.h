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
    long ops_per_tx;        /* --ops-per-tx, >= 1, or WL_LEN_AUTO */
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
    struct lat_hist len_hist;       /* ops (bytecodes) of the sampled committed blocks
                                     * (one in WL_BLOCK_SAMPLE, as block_hist) */
    uint64_t tx_attempts;           /* block bodies entered (WL_TX_ATTEMPT) */
    long tx_len;                    /* adaptive length: the next block's ops */
    long tx_len_max;                /* 0: fixed length; else adaptive in 1..tx_len_max */
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
    /* Nonzero in the copies of transactional runtimes (stm, itm, htm): `auto` lengths
     * adapt there; elsewhere the harness runs the fixed default instead (WL_TX_ADAPTIVE). */
    int tx_adaptive;
    /* 1 + the index of the INT knob that also accepts `auto` (stored as WL_LEN_AUTO):
     * interp's --switch-interval; 0 = none. */
    int auto_knob;
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
            if (SYNC_UNLIKELY(_mode) && _n)                                             \
                lat_add(&_t->len_hist, _n); /* tx_len_*: the sampled blocks' lengths */ \
            if (_n == 0)                                                                \
                break;                                                                  \
            _t->ops += _n;                                                              \
            _t->blocks++;                                                               \
        }                                                                               \
    } while (0)

/* ---- transaction length: fixed (--ops-per-tx K, --switch-interval N) or `auto` ----
 *
 * `auto` is stored as WL_LEN_AUTO. In the copies of the transactional runtimes (stm,
 * itm, htm: WL_TX_ADAPTIVE is 1) each thread then adapts its own length between 1 and
 * the workload's maximum (WL_TXLEN_MAX_OPS operations; interp: IV_TXLEN_MAX bytecodes)
 * with the policy of wl_txlen_next: after a block that committed at its first attempt
 * the length grows by a 32nd (+1), after a block that was aborted and re-run it is
 * halved. The growth is slow and the cut fast, as in PyPy stmgc's adaptive transaction
 * length (branch c8-adaptive-trx-length: longer after a clean validation, shorter after
 * an abort); with these factors the length settles where about one block in 23 is
 * re-run (ln 1.031 / (ln 1.031 + ln 2)), and where no block conflicts it reaches the
 * maximum (1 to 10,000 in about 250 blocks). In seq, mutex, gil and locks nothing is re-run: the harness gives those
 * copies the fixed default instead and says so in the CSV's params.
 *
 * How a copy sees that its block was re-run, without runtime internals: each block body
 * starts with WL_TX_ATTEMPT(t), which counts entries into the body. stm re-enters the
 * body after an abort (the counter is plain memory, which the STM does not roll back);
 * under itm the count goes through a transaction_pure function (libitm would roll back
 * an instrumented store); under htm the hardware rolls back every store of an aborted
 * attempt, so the count is the runtime's own per-thread abort counters instead. */
#define WL_LEN_AUTO 0
#define WL_TXLEN_MAX_OPS 10000L

#if defined(SYNC_RT_STM) || defined(SYNC_RT_ITM) || defined(SYNC_RT_HTM)
#define WL_TX_ADAPTIVE 1
#else
#define WL_TX_ADAPTIVE 0
#endif

/* Counts one entry into a block body (not rolled back). Declared for every runtime;
 * only the itm copies call it. */
void wl_tx_attempt(struct wl_thread *t) SYNC_TM_PURE;
#if defined(SYNC_RT_ITM)
#define WL_TX_ATTEMPT(t) wl_tx_attempt(t)
#else
#define WL_TX_ATTEMPT(t) ((void)((t)->tx_attempts++))
#endif

/* A mark taken before a block; WL_TX_RETRIES(t, mark) after it: the attempts of the
 * block that were thrown away (0 in runtimes that never re-run a block). */
#if defined(SYNC_RT_HTM)
static inline uint64_t wl_htm_aborts_(void)
{
    uint64_t n = 0;
    for (int k = 0; k < SYNC_ABORT_NKINDS; k++)
        n += htm_self.stats.aborts[k];
    return n;
}
#define WL_TX_MARK(t) ((void)(t), wl_htm_aborts_())
#define WL_TX_RETRIES(t, mark) (wl_htm_aborts_() - (mark))
#else
#define WL_TX_MARK(t) ((t)->tx_attempts)
#define WL_TX_RETRIES(t, mark) ((t)->tx_attempts > (mark) + 1 ? (t)->tx_attempts - (mark) - 1 : 0)
#endif

/* The policy (see above): pure, so tests drive it directly. */
static inline long wl_txlen_next(long len, long max, uint64_t retries)
{
    if (retries)
        return len > 1 ? len / 2 : 1;
    long n = len + len / 32 + 1;
    return n < max ? n : max;
}

/* Sets up a thread's length: fixed `len`, or (len == WL_LEN_AUTO in a transactional
 * copy) adaptive from `start` up to `max`. Returns the first block's length. */
static inline long wl_txlen_init(struct wl_thread *t, long len, long start, long max)
{
    if (len != WL_LEN_AUTO) {
        t->tx_len_max = 0;
        t->tx_len = len;
    } else {
        t->tx_len_max = max;
        t->tx_len = start < max ? start : max;
    }
    return t->tx_len;
}

/* After a committed block of n ops whose attempts began at `mark`: when adaptive,
 * chooses the next length (WL_LOOP records every block's length for the CSV). */
#define WL_TXLEN_AFTER(t, n, mark)                                                      \
    do {                                                                                \
        struct wl_thread *_tl = (t);                                                    \
        (void)(n);                                                                      \
        if (_tl->tx_len_max)                                                            \
            _tl->tx_len = wl_txlen_next(_tl->tx_len, _tl->tx_len_max,                  \
                                        WL_TX_RETRIES(_tl, (mark)));                    \
    } while (0)

/* How many ops the next block should do with --ops-per-tx k, never passing the target. */
static inline long wl_batch(const struct wl_thread *t, long k)
{
    if (t->ops_target && t->ops + (uint64_t)k > t->ops_target)
        return (long)(t->ops_target - t->ops);
    return k;
}

#endif
