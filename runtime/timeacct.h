/*
 * runtime/timeacct.h - where a thread's time goes: the time breakdown every runtime
 * reports (the CSV's thread_time_ns and time_<category>_ns columns, and the op_*
 * latency percentiles).
 *
 * A thread's time, from the start gate (ta_thread_start) to the stop (ta_thread_stop),
 * is split into the categories of enum ta_cat in two ways:
 *
 *   timed    waits and other rare, long phases (waiting for a lock, the GIL, an
 *            inevitable transaction, a write owner; unsharing a page; an aborted
 *            attempt): the clock is read at their start and end, every time
 *            (TA_TIMED_BEGIN / TA_TIMED_END, TA_ABORT). Exact.
 *   sampled  the frequent, short phases (outside blocks, the block's work, an STM's
 *            begin, validation, publication): their clock readings are taken only in
 *            one loop iteration in TA_WINDOW_EVERY (a "window", opened and closed by
 *            the thread loop WL_LOOP), at each phase boundary (TA_PHASE and friends).
 *            Elsewhere a boundary costs one thread-local load and a branch.
 *
 * At the stop, what the timed categories did not take (busy = thread time - timed) is
 * shared among the sampled categories in the proportions measured in the windows, so
 * the categories add up to the thread's time; a window's phases are measured less the
 * calibrated cost of the clock readings themselves. Timed intervals met inside a
 * window leave it (they are counted once, as timed); an aborted attempt's share of the
 * window is dropped (it is counted as timed `wasted`). A window with a sampled
 * interval of TA_OUTLIER_NS or more (the thread was descheduled) is left out of the
 * proportions unless most windows are (huge transactions).
 *
 * Operation latency: the loop iterations (each a block, every retry of it, and the
 * tick after it, so a GIL hand-off met at the tick is in it) in two strata. A long
 * stall (a chain of timed intervals, or an aborted attempt, of TA_STALL_NS or more) is
 * timed whatever iteration it falls in, so every iteration with one is counted exactly,
 * once, with the span from the start of its first long stall to the end of its last as
 * its latency (op_stall_hist; the iteration is told by the loop's block counter, which
 * WL_LOOP hands over with ta_loop_begin, or by the window). Every other iteration is
 * represented by the windows without a long stall, each standing for TA_WINDOW_EVERY
 * iterations (op_hist); a window with a long stall is left out of op_hist, since its
 * iteration is already in the exact stratum. The op_* percentiles come from the two
 * weighted alike (sync_op_quantile). So rare stalls (a GIL hand-off every switch
 * interval: one iteration in 50,000) reach the high percentiles in proportion to how
 * often they happen, not to whether a window met them; an iteration with a long stall
 * reads only the stall (its short, wait-free rest is not timed), so the exact stratum
 * is a lower bound by that much. op_max_ns is the larger of the longest window and the
 * longest single stall.
 *
 * Clock: the TSC (rdtsc), converted with a factor calibrated once per process against
 * CLOCK_MONOTONIC; the thread time itself is read with CLOCK_MONOTONIC.
 *
 * Build with -DSTMBENCH_TIMEACCT=0 (make TIMEACCT=0) to compile every hook to nothing
 * (the overhead check): thread_time_ns is still measured, the categories and op_*
 * read 0.
 *
 * Invariants: ta_self belongs to its thread; nothing here is shared between threads
 * except the calibration (written once under pthread_once, read-only afterwards).
 * While a window is open (sampling != 0) exactly one sampled category runs (cur) from
 * `mark` on, unless a timed interval is open (timed_cat >= 0), which owns the time
 * until it ends. The out-of-line functions are transaction_pure under itm (called from
 * blocks' boundaries, their effects must not be rolled back).
 */
#ifndef SYNC_TIMEACCT_H
#define SYNC_TIMEACCT_H

#include "runtime/common.h"

#include <stdint.h>
#include <x86intrin.h>

#ifndef STMBENCH_TIMEACCT
#define STMBENCH_TIMEACCT 1
#endif

/* The categories; names (ta_cat_name) are the CSV's time_<name>_ns. Shared where the
 * meaning is shared: wait_lock is the mutex, the fine-grained locks and the STM's
 * commit lock alike; work is the inside of atomic blocks in every runtime. */
enum ta_cat {
    TA_OUTSIDE = 0,     /* outside atomic blocks: workload code, keys, the loop (sampled) */
    TA_WORK,            /* inside blocks: committed STM attempts, mutex/locks/GIL held (sampled) */
    TA_WASTED,          /* STM: attempts that aborted (timed) */
    TA_BEGIN,           /* STM: begin and import of others' commits (sampled) */
    TA_VALIDATE,        /* STM: commit validation (import + read-marker check) (sampled) */
    TA_WAIT_LOCK,       /* waiting for a lock: mutex, locks, STM commit lock (timed) */
    TA_PUBLISH,         /* STM: commit copies into segment 0, log entry, link (sampled) */
    TA_UNSHARE,         /* STM: page unsharing (copy + remap) (timed) */
    TA_WAIT_OWNER,      /* STM: waiting for an object's write owner to let go (timed) */
    TA_WAIT_INEVITABLE, /* STM: waiting for / behind an inevitable transaction (timed) */
    TA_WAIT_GIL,        /* GIL: waiting to take it (timed) */
    TA_HANDOFF,         /* GIL: a dropper's release until another thread holds it (timed) */
    TA_NCAT
};
_Static_assert(TA_NCAT == SYNC_TA_NCAT, "common.h's SYNC_TA_NCAT must match enum ta_cat");

const char *ta_cat_name(int cat);

/* Loop iterations per window (a multiple of WL_BLOCK_SAMPLE, a power of two). */
#define TA_WINDOW_EVERY 128
/* A sampled interval this long (not a timed wait) means the thread was descheduled:
 * its window is left out of the proportions (still a latency sample). */
#define TA_OUTLIER_NS 200000
/* A stall this long is a latency sample of its own, always (see "Operation latency").
 * Any threshold gives the same estimate; a lower one costs more histogram adds, a
 * higher one leaves more of the tail to the 1-in-TA_WINDOW_EVERY sample. */
#define TA_STALL_NS 10000

struct ta_thread {
    int sampling;           /* a window is open (the only field the fast paths read) */
    int depth;              /* block nesting, counted only while sampling */
    int cur;                /* the sampled category running since `mark` */
    int timed_cat;          /* the open timed interval's category, -1 when none */
    uint64_t mark;          /* ticks: start of the current sampled interval */
    uint64_t timed_t0;      /* ticks: start of the open timed interval */
    uint64_t chain_t0;      /* ticks: start of the chain of timed intervals it belongs to */
    uint64_t timed_total;   /* ticks in every timed interval so far */
    uint64_t timed_max;     /* ticks: the longest single timed interval */
    uint64_t attempt_timed0;/* timed_total when the running (timed) STM attempt began */
    uint64_t win_t0;        /* ticks: the window's start */
    uint64_t win_reads;     /* phase readings in the window (their cost is subtracted) */
    uint64_t win_block;     /* ticks: the window's block (start to ta_window_block_done) */
    uint64_t timed[TA_NCAT];   /* ticks, exact */
    uint64_t sampled[TA_NCAT];         /* ticks measured in clean windows */
    uint64_t sampled_spoiled[TA_NCAT]; /* ticks measured in spoiled windows */
    uint64_t windows, windows_clean;
    uint64_t win[TA_NCAT];             /* ticks of the open window */
    uint64_t win_at_attempt[TA_NCAT];  /* win when the running STM attempt began */
    int win_spoiled;           /* an interval of the window was an outlier (preemption) */
    int win_stalled;           /* the window met a long stall (it is in stall_hist) */
    const uint64_t *iter;      /* the loop's block counter (ta_loop_begin), or NULL */
    int stall_pending;         /* an iteration's long stalls are being gathered: */
    int stall_by_iter;         /* ... told apart by `iter` or by the window */
    uint64_t stall_key;        /* ... that iteration (*iter, or windows) */
    uint64_t stall_t0, stall_t1; /* ticks: from its first long stall's start to its
                                  * last one's end */
    uint64_t start_ns, stop_ns;
    uint64_t win_max;          /* ticks: the longest window */
    struct lat_hist op_hist;   /* ns, one sample per window without a long stall */
    struct lat_hist stall_hist;/* ns, every long stall */
};
extern __thread struct ta_thread ta_self;

static inline uint64_t ta_ticks(void)
{
    return __rdtsc();
}

/* The thread's window of accounting: called by the thread itself, after the start
 * gate and before thread_enter, and after its loop (before thread_exit). stop adds the
 * thread's time, categories and op latencies into *out. */
void ta_thread_start(void);
void ta_thread_stop(struct sync_stats *out);
/* The thread loop (WL_LOOP) starts: `blocks` counts its iterations (it changes only
 * between them), so long stalls of one iteration are counted as one. */
void ta_loop_begin(const uint64_t *blocks);

/* The thread loop's window (WL_LOOP): start before the block, block_done after it,
 * stop after the tick; stop returns the block's latency in ns (for block_hist). */
void ta_window_start(void) SYNC_TM_PURE;
void ta_window_block_done(void) SYNC_TM_PURE;
uint64_t ta_window_stop(void) SYNC_TM_PURE;

/* Slow paths of the hooks below. */
void ta_phase_slow(int cat) SYNC_TM_PURE;
void ta_attempt_slow(void) SYNC_TM_PURE;
void ta_block_enter_slow(void) SYNC_TM_PURE;
void ta_block_leave_slow(void) SYNC_TM_PURE;
void ta_timed_begin(int cat) SYNC_TM_PURE;
void ta_timed_end(void) SYNC_TM_PURE;
void ta_abort(uint64_t attempt_t0) SYNC_TM_PURE;

/* Nanoseconds per tick (calibrated once per process; 1.0 before any thread started). */
double ta_ns_per_tick(void);

/* Calibration, read-only once a thread started (timeacct.c): ticks one sampled phase
 * boundary costs, and the length of a sampled interval that spoils its window. */
extern uint64_t ta_cost, ta_outlier, ta_stall_ticks;

/* A sampled phase boundary, inline: a call in a block's cold path would make the
 * compiler keep fewer values in registers across it on the hot path. Only ta_self is
 * written. */
static inline void ta_phase_inline(struct ta_thread *t, int cat)
{
    if (t->timed_cat < 0) {
        uint64_t now = ta_ticks(), d = now - t->mark;
        if (d >= ta_outlier)
            t->win_spoiled = 1;
        t->win[t->cur] += d > ta_cost ? d - ta_cost : 0;
        t->mark = now;
        t->win_reads++;
    }
    t->cur = cat;   /* inside a timed interval: what resumes when it ends */
}
static inline void ta_block_enter_inline(struct ta_thread *t)
{
    if (t->depth++ == 0)
        ta_phase_inline(t, TA_WORK);
}
static inline void ta_block_leave_inline(struct ta_thread *t)
{
    if (t->depth > 0 && --t->depth == 0)
        ta_phase_inline(t, TA_OUTSIDE);
}

#if STMBENCH_TIMEACCT
/* A sampled phase boundary: from here on the thread is in `cat`. */
#define TA_PHASE(cat)                                    \
    do {                                                 \
        if (SYNC_UNLIKELY(ta_self.sampling))             \
            ta_phase_inline(&ta_self, (cat));            \
    } while (0)
/* An STM attempt begins (BEGIN from here; an abort later drops the window's time
 * from here on) / a transaction ended (OUTSIDE from here). */
#define TA_TX_BEGIN()                                    \
    do {                                                 \
        if (SYNC_UNLIKELY(ta_self.sampling))             \
            ta_attempt_slow();                           \
    } while (0)
#define TA_TX_END() TA_PHASE(TA_OUTSIDE)
/* An atomic block's boundaries in runtimes without phases of their own (nesting is
 * counted: only the outermost block switches between OUTSIDE and WORK). Expressions.
 * The _CALL forms call out of line (itm: inside a transaction, a nested block's hook
 * must be a transaction_pure call, not instrumented inline code). */
#define TA_BLOCK_ENTER() \
    ((void)(SYNC_UNLIKELY(ta_self.sampling) ? ta_block_enter_inline(&ta_self) : (void)0))
#define TA_BLOCK_LEAVE() \
    ((void)(SYNC_UNLIKELY(ta_self.sampling) ? ta_block_leave_inline(&ta_self) : (void)0))
#define TA_BLOCK_ENTER_CALL() \
    ((void)(SYNC_UNLIKELY(ta_self.sampling) ? ta_block_enter_slow() : (void)0))
#define TA_BLOCK_LEAVE_CALL() \
    ((void)(SYNC_UNLIKELY(ta_self.sampling) ? ta_block_leave_slow() : (void)0))
/* A timed interval (always measured): a wait, a page unsharing. A begin while another
 * interval is open ends that one at the same reading. */
#define TA_TIMED_BEGIN(cat) ta_timed_begin(cat)
#define TA_TIMED_END() ta_timed_end()
/* An STM attempt started at tick t0 (0: not timed, the thread was alone). */
#define TA_ATTEMPT(t0)                                   \
    do {                                                 \
        if (t0)                                          \
            ta_self.attempt_timed0 = ta_self.timed_total; \
    } while (0)
/* The running attempt, started at tick t0 (0: untimed), aborted: its time (less the
 * timed intervals inside it) is wasted; its share of an open window is dropped. */
#define TA_ABORT(t0) ta_abort(t0)
#else
#define TA_PHASE(cat) ((void)0)
#define TA_TX_BEGIN() ((void)0)
#define TA_TX_END() ((void)0)
#define TA_BLOCK_ENTER() ((void)0)
#define TA_BLOCK_LEAVE() ((void)0)
#define TA_BLOCK_ENTER_CALL() ((void)0)
#define TA_BLOCK_LEAVE_CALL() ((void)0)
#define TA_TIMED_BEGIN(cat) ((void)0)
#define TA_TIMED_END() ((void)0)
#define TA_ATTEMPT(t0) ((void)(t0))
#define TA_ABORT(t0) ((void)(t0))
#endif

#endif
