/*
 * workloads/workload.h - what a workload gives the harness, and the thread loop every
 * workload shares.
 *
 * A workload file (`workloads/<name>.c`) includes runtime/sync.h and is compiled once
 * per runtime of build cc or gnutm in runtime/runtimes.h's list (gnutm where gcc
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

/* The adaptive transaction length (see "transaction length" below): one length for all
 * the threads of a run, chosen by thread 0 (the leader) from the rate all of them
 * commit at. */
#define WL_TXLEN_RUNGS 40
struct wl_txlen_ctl {                 /* the leader's controller (wl_txlen_epoch) */
    double rate[WL_TXLEN_RUNGS];      /* average committed ops per ns of each rung */
    uint64_t seen;                    /* bit r: rung r has been measured */
    int nrungs, cur, best;
    uint32_t epoch;
    long max;
    uint64_t t0_ns;                   /* the running epoch's start */
    uint64_t ops0;                    /* the threads' committed ops at that start */
};
struct wl_txlen_slot {                /* one thread's committed ops (its own line) */
    _Atomic uint64_t ops;
} SYNC_CL_ALIGNED;
struct wl_txlen_shared {              /* one per run (wl_txlen_shared_new) */
    _Atomic long len SYNC_CL_ALIGNED; /* the length every thread runs next; 0: not yet */
    struct wl_txlen_ctl ctl SYNC_CL_ALIGNED; /* the leader's alone */
    int nslots;
    struct wl_txlen_slot *slots;      /* [nslots], one per thread */
};
/* Zeroed, for n threads; NULL without memory. Freed with wl_txlen_shared_free. */
struct wl_txlen_shared *wl_txlen_shared_new(int n);
void wl_txlen_shared_free(struct wl_txlen_shared *s);

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
    uint64_t sample_t0;             /* a sampled iteration's start, ns (WL_LOOP) */
    struct lat_hist block_hist;     /* sampled latency of whole blocks, retries included */
    struct lat_hist len_hist;       /* ops (bytecodes) of the sampled committed blocks
                                     * (one in WL_BLOCK_SAMPLE, as block_hist) */
    long tx_len;                    /* adaptive length: the next block's ops */
    long tx_len_max;                /* 0: fixed length; else adaptive in 1..tx_len_max */
    struct wl_txlen_shared *txs;    /* the run's shared length (set by the harness; NULL:
                                     * the thread adapts alone, with txs_own) */
    int txs_slot;                   /* this thread's slot; 0 is the leader */
    uint32_t txs_blocks;            /* the leader: blocks since it last read the clock */
    uint64_t txs_ops;               /* the leader: ops since it last read the clock */
    struct wl_txlen_shared txs_own; /* for a thread without a shared one (tests) */
    struct wl_txlen_slot txs_own_slot;
    struct sync_stats stats;        /* the runtime's counters, filled at thread exit */
    uint64_t objects_allocated;     /* objects the workload allocated and freed while it */
    uint64_t objects_freed;         /* ran (interp's object model), for the CSV */
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
    /* Conflict analysis (docs/contract.md "Conflict log"; NULL: none). After the run, on
     * the main thread entered as tid 0, before teardown: writes into buf (n bytes) what
     * a programmer finds in the code for a location (a sync_where code, runtime/common.h:
     * "file:line in function") or for an object (its SYNC_REF_ID: "account 17"), or
     * leaves buf empty when it does not know. */
    void (*describe_where)(void *ctx, uint32_t where, char *buf, size_t n);
    void (*describe_object)(void *ctx, uint64_t obj, char *buf, size_t n);
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
/* Conflict analysis's describe_object hooks: which element of a workload's array of
 * references is the object `ref` (a SYNC_REF_ID)? A sorted copy of the array's ids,
 * built once (n log n), then a binary search per object. */
struct wl_refidx {
    uint64_t ref;
    long i;
};
/* refs[i] = SYNC_REF_ID of element i; NULL when out of memory. Free with free(). */
struct wl_refidx *wl_refidx_new(const uint64_t *refs, long n);
/* The index i of ref, or -1 when no element has it. */
long wl_refidx_find(const struct wl_refidx *ix, long n, uint64_t ref);

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
#define WL_LOOP_BEGIN_(_t) ta_loop_begin(&_t->blocks)
#else
#define WL_LOOP_WINDOW_DUE_(_t) 0
#define WL_LOOP_BEGIN_(_t) ((void)0)
#endif
/* The sampled iteration's parts (one in WL_BLOCK_SAMPLE), out of line so that the
 * loop keeps no value of theirs live across the block: 0 instructions of theirs on the
 * other iterations beyond one test of t->blocks (which changes only at the end of an
 * iteration) before and after the block and after the tick. */
#ifdef SYNC_LOOP_BLOCK_ENTER /* runtime/sync.h came first: a workload's copy */
static SYNC_NOINLINE __attribute__((unused)) void wl_sample_start_(struct wl_thread *t)
{
    if (WL_LOOP_WINDOW_DUE_(t)) {
        ta_window_start();
        SYNC_LOOP_WINDOW(1);
        SYNC_LOOP_BLOCK_ENTER();
    } else {
        t->sample_t0 = sync_now_ns();
    }
}
static SYNC_NOINLINE __attribute__((unused)) void wl_sample_block_done_(struct wl_thread *t)
{
    if (WL_LOOP_WINDOW_DUE_(t)) {
        SYNC_LOOP_BLOCK_LEAVE();
        ta_window_block_done();
    } else {
        lat_add(&t->block_hist, sync_now_ns() - t->sample_t0);
    }
}
static SYNC_NOINLINE __attribute__((unused)) void wl_sample_end_(struct wl_thread *t, uint64_t n)
{
    if (WL_LOOP_WINDOW_DUE_(t)) {
        lat_add(&t->block_hist, ta_window_stop());
        SYNC_LOOP_WINDOW(0);
    }
    if (n)
        lat_add(&t->len_hist, n);   /* tx_len_*: the sampled blocks' lengths */
}
#endif
#define WL_LOOP_SAMPLED_(_t) ((_t->blocks & (WL_BLOCK_SAMPLE - 1)) == 0)
#define WL_LOOP(ctx, t, block)                                                          \
    do {                                                                                \
        struct wl_thread *_t = (t);                                                     \
        WL_LOOP_BEGIN_(_t); /* long stalls are told apart by _t->blocks */              \
        for (;;) {                                                                      \
            /* relaxed: the stop flag is a hint; a late view only runs one more block */ \
            if (atomic_load_explicit(_t->stop, memory_order_relaxed))                   \
                break;                                                                  \
            if (_t->ops_target && _t->ops >= _t->ops_target)                            \
                break;                                                                  \
            /* One call site of block: with two, compilers stopped inlining it into    \
             * this loop. A sampled iteration is a block latency sample, and one in    \
             * TA_WINDOW_EVERY / WL_BLOCK_SAMPLE of those a window. */                  \
            const int _s = WL_LOOP_SAMPLED_(_t);                                        \
            if (SYNC_UNLIKELY(_s))                                                      \
                wl_sample_start_(_t);                                                   \
            uint64_t _n = block((ctx), _t);                                             \
            if (SYNC_UNLIKELY(_s))                                                      \
                wl_sample_block_done_(_t);                                              \
            if (_n)                                                                     \
                sync_tick();                                                            \
            if (SYNC_UNLIKELY(_s))                                                      \
                wl_sample_end_(_t, _n);                                                 \
            if (_n == 0)                                                                \
                break;                                                                  \
            _t->ops += _n;                                                              \
            _t->blocks++;                                                               \
        }                                                                               \
    } while (0)

/* ---- transaction length: fixed (--ops-per-tx K, --switch-interval N) or `auto` ----
 *
 * `auto` is stored as WL_LEN_AUTO. In the copies of the transactional runtimes (stm,
 * itm, htm: WL_TX_ADAPTIVE is 1) the length then adapts, between 1 and the workload's
 * maximum (WL_TXLEN_MAX_OPS operations; interp: IV_TXLEN_MAX bytecodes), to what the
 * program commits per second. One length serves all the threads of a run: thread 0
 * (the leader) chooses it, from the ops all threads committed, and publishes it; every
 * thread runs its next block at the published length. (Each thread choosing its own
 * length from its own rate was tried and fails where long blocks only pay when all
 * threads run them: a thread that goes long alone is aborted by the others' short
 * commits and comes back, so bank and interp `shared-counter` stayed at short lengths
 * with a half or less of the best fixed length's throughput.)
 * The lengths tried are the powers of two up to the maximum, and the maximum (a ladder
 * of rungs). The leader groups time into epochs (at least WL_TXLEN_EPOCH_NS, measured
 * after its own blocks); at the end of one, the threads' rate (committed ops per ns,
 * aborted attempts, rollbacks and waits included in the time) goes into the running
 * rung's average, which a faster epoch moves halfway and a slower one an eighth of the
 * way: interference (another process, an interrupt, a page fault) only ever slows an
 * epoch down, and single epochs vary by far more than the tie below on a busy machine
 * (docs/txlen.md has the method and its runs). The next
 * epoch runs the best rung measured so far, except that a rung next to the best that
 * was never measured is tried at once (so a clean run climbs one rung per epoch), and
 * to follow a rate that changes, every 4th epoch tries the rung above the best and
 * every 16th the rung below. A lower rung must beat a higher one by WL_TXLEN_TIE (3%)
 * to be preferred: ties go to longer blocks, which pay fewer commits.
 * The policy sees what aborts cost, not only that they happen: a length whose blocks are
 * often re-run is still chosen when the program commits more ops per second with it
 * (bank at 2 threads), and left when it commits fewer. An earlier policy that halved
 * each thread's length at every re-run of its block (as PyPy stmgc's adaptive
 * transaction length does) settled bank at 7 ops, about a quarter of the best fixed
 * length's throughput.
 * In seq, mutex, gil and locks nothing is re-run: the harness gives those
 * copies the fixed default instead and says so in the CSV's params.
 *
 * The policy needs only the time: it does not count re-runs. */
#define WL_LEN_AUTO 0
#define WL_TXLEN_MAX_OPS 10000L

#if defined(SYNC_RT_STM) || defined(SYNC_RT_ITM) || defined(SYNC_RT_HTM)
#define WL_TX_ADAPTIVE 1
#else
#define WL_TX_ADAPTIVE 0
#endif



/* The policy (see above). */
#define WL_TXLEN_EPOCH_NS 200000u     /* an epoch lasts at least 200 us */
#define WL_TXLEN_TIE 0.03             /* a shorter rung must be 3% faster to win */

/* The length of rung r: 2^r, the last rung is the maximum. */
static inline long wl_txlen_rung_len(const struct wl_txlen_ctl *c, int r)
{
    return r >= c->nrungs - 1 ? c->max : 1L << r;
}

/* Sets the ladder up for lengths 1..max, starting at the rung nearest `start` from
 * below. */
static inline void wl_txlen_ctl_init(struct wl_txlen_ctl *c, long start, long max)
{
    *c = (struct wl_txlen_ctl){.max = max < 1 ? 1 : max};
    int n = 1;
    while (n < WL_TXLEN_RUNGS - 1 && (1L << n) < c->max)
        n++;
    c->nrungs = n + 1;                /* 1, 2, ..., 2^(n-1) (< max), max */
    int r = 0;
    while (r + 1 < c->nrungs && wl_txlen_rung_len(c, r + 1) <= start)
        r++;
    c->cur = c->best = r;
}

/* The end of an epoch of the running rung, in which the threads committed at `rate`
 * (ops per ns): chooses the next rung and returns its length. Pure apart from the
 * controller's own state, so tests drive it with synthetic rates. */
static inline long wl_txlen_epoch(struct wl_txlen_ctl *c, double rate)
{
    int r = c->cur;
    if (c->epoch++ == 0)
        return wl_txlen_rung_len(c, r); /* the first epoch pays the start-up: not a rate */
    double old = c->rate[r];
    c->rate[r] = !(c->seen >> r & 1) ? rate
                 : rate > old        ? 0.5 * old + 0.5 * rate
                                     : 0.875 * old + 0.125 * rate;
    c->seen |= 1ull << r;
    /* the best measured rung; from the top down, a lower one must beat it by the tie */
    int best = -1;
    for (int k = c->nrungs - 1; k >= 0; k--)
        if ((c->seen >> k & 1) && (best < 0 || c->rate[k] > c->rate[best] * (1 + WL_TXLEN_TIE)))
            best = k;
    c->best = best;
    int up = best + 1 < c->nrungs ? best + 1 : -1, down = best > 0 ? best - 1 : -1;
    int next = best;
    if (up >= 0 && !(c->seen >> up & 1))
        next = up;                    /* never measured: climb at once */
    else if (down >= 0 && !(c->seen >> down & 1))
        next = down;
    else if ((c->epoch & 3) == 0 && up >= 0)
        next = up;                    /* follow a changing rate: above, every 4th epoch */
    else if ((c->epoch & 15) == 2 && down >= 0)
        next = down;                  /* and below, every 16th */
    c->cur = next;
    return wl_txlen_rung_len(c, next);
}

/* Sets up a thread's length: fixed `len`, or (len == WL_LEN_AUTO in a transactional
 * copy) adaptive from `start` up to `max`. Returns the first block's length. */
static inline long wl_txlen_init(struct wl_thread *t, long len, long start, long max)
{
    if (len != WL_LEN_AUTO) {
        t->tx_len_max = 0;
        t->tx_len = len;
        return t->tx_len;
    }
    t->tx_len_max = max;
    if (!t->txs || t->tid >= t->txs->nslots) {
        t->txs_own = (struct wl_txlen_shared){.nslots = 1, .slots = &t->txs_own_slot};
        atomic_init(&t->txs_own_slot.ops, 0);
        t->txs = &t->txs_own;
    }
    t->txs_slot = t->txs == &t->txs_own ? 0 : t->tid;
    t->txs_blocks = 0;
    t->txs_ops = 0;
    struct wl_txlen_ctl c;
    wl_txlen_ctl_init(&c, start, max);
    t->tx_len = wl_txlen_rung_len(&c, c.cur);
    if (t->txs_slot == 0) {
        c.t0_ns = sync_now_ns();
        /* relaxed: the slots only grow; a rate read early is the first epoch's, dropped */
        c.ops0 = 0;
        for (int i = 0; i < t->txs->nslots; i++)
            c.ops0 += atomic_load_explicit(&t->txs->slots[i].ops, memory_order_relaxed);
        t->txs->ctl = c;
        /* relaxed: the length is a hint that every thread follows when it sees it */
        atomic_store_explicit(&t->txs->len, t->tx_len, memory_order_relaxed);
    }
    return t->tx_len;
}

/* After a committed block of n ops:
 * counts them in the thread's slot; the leader, once an epoch is over, chooses the next
 * length from all the slots (reading the clock once per 16 of its blocks, or per block
 * once they hold 4,096 ops); every thread then takes the published length.
 * WL_LOOP records every block's length for the CSV. */
static inline void wl_txlen_after(struct wl_thread *t, uint64_t n)
{
    struct wl_txlen_shared *s = t->txs;
    _Atomic uint64_t *mine = &s->slots[t->txs_slot].ops;
    /* relaxed: only this thread writes its slot; the leader reads sums for a rate */
    atomic_store_explicit(mine, atomic_load_explicit(mine, memory_order_relaxed) + n,
                          memory_order_relaxed);
    if (t->txs_slot == 0) {
        t->txs_ops += n;
        if ((++t->txs_blocks & 15) == 0 || t->txs_ops >= 4096) {
            t->txs_blocks = 0;
            t->txs_ops = 0;
            uint64_t now = sync_now_ns();
            struct wl_txlen_ctl *c = &s->ctl;
            if (now - c->t0_ns >= WL_TXLEN_EPOCH_NS) {
                uint64_t sum = 0;
                for (int i = 0; i < s->nslots; i++)
                    /* relaxed: see above */
                    sum += atomic_load_explicit(&s->slots[i].ops, memory_order_relaxed);
                long len = wl_txlen_epoch(c, (double)(sum - c->ops0) / (double)(now - c->t0_ns));
                c->t0_ns = now;
                c->ops0 = sum;
                /* relaxed: a hint (see wl_txlen_init) */
                atomic_store_explicit(&s->len, len, memory_order_relaxed);
            }
        }
    }
    /* relaxed: a hint; 0 until the leader has chosen */
    long len = atomic_load_explicit(&s->len, memory_order_relaxed);
    if (len > 0)
        t->tx_len = len < t->tx_len_max ? len : t->tx_len_max;
}

#define WL_TXLEN_AFTER(t, n)                                                            \
    do {                                                                                \
        struct wl_thread *_tl = (t);                                                    \
        if (_tl->tx_len_max)                                                            \
            wl_txlen_after(_tl, (uint64_t)(n));                                         \
    } while (0)

/* How many ops the next block should do with --ops-per-tx k, never passing the target. */
static inline long wl_batch(const struct wl_thread *t, long k)
{
    if (t->ops_target && t->ops + (uint64_t)k > t->ops_target)
        return (long)(t->ops_target - t->ops);
    return k;
}

#endif
