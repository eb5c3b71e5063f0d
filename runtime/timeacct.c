/*
 * runtime/timeacct.c - the time breakdown's slow paths, calibration and the final
 * split (runtime/timeacct.h says what is measured how, and its invariants).
 *
 * Shared state: ta_npt, ta_cost and ta_outlier, written once by ta_calibrate under
 * pthread_once (which orders them before every caller of ta_thread_start returns) and
 * read-only afterwards. Everything else is the calling thread's own ta_self.
 */
#include "runtime/timeacct.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

__thread struct ta_thread ta_self;

static pthread_once_t ta_once = PTHREAD_ONCE_INIT;
static double ta_npt = 1.0;     /* nanoseconds per tick */
uint64_t ta_cost;               /* ticks one sampled phase boundary costs (its reading) */
uint64_t ta_outlier = UINT64_MAX; /* ticks: a sampled interval this long spoils its window */
uint64_t ta_stall_ticks = UINT64_MAX; /* ticks: TA_STALL_NS */

static const char *const ta_names[TA_NCAT] = {
    [TA_OUTSIDE] = "outside",
    [TA_WORK] = "work",
    [TA_WASTED] = "wasted",
    [TA_BEGIN] = "begin",
    [TA_VALIDATE] = "validate",
    [TA_WAIT_LOCK] = "wait_lock",
    [TA_PUBLISH] = "publish",
    [TA_UNSHARE] = "unshare",
    [TA_WAIT_OWNER] = "wait_owner",
    [TA_WAIT_INEVITABLE] = "wait_inevitable",
    [TA_WAIT_GIL] = "wait_gil",
    [TA_HANDOFF] = "handoff",
};

const char *ta_cat_name(int cat)
{
    return cat >= 0 && cat < TA_NCAT ? ta_names[cat] : "?";
}

double ta_ns_per_tick(void)
{
    return ta_npt;
}

static uint64_t ta_ns(uint64_t ticks)
{
    return (uint64_t)((double)ticks * ta_npt);
}

/* Ends the running sampled interval at `now` into win[cur], less one reading. An
 * interval of TA_OUTLIER_NS or more outside any timed wait means the thread was
 * descheduled (or interrupted) there: that window is left out of the proportions (one
 * 10 ms preemption would outweigh thousands of windows). */
static inline void ta_close(struct ta_thread *t, uint64_t now)
{
    uint64_t d = now - t->mark;
    if (d >= ta_outlier)
        t->win_spoiled = 1;
    t->win[t->cur] += d > ta_cost ? d - ta_cost : 0;
    t->mark = now;
}

void ta_phase_slow(int cat)
{
    ta_phase_inline(&ta_self, cat);
}

void ta_attempt_slow(void)
{
    ta_phase_slow(TA_BEGIN);
    memcpy(ta_self.win_at_attempt, ta_self.win, sizeof ta_self.win);
}

void ta_block_enter_slow(void)
{
    ta_block_enter_inline(&ta_self);
}

void ta_block_leave_slow(void)
{
    ta_block_leave_inline(&ta_self);
}

/* Adds the open timed interval, ending at `now`, to its category. */
static void ta_timed_add(struct ta_thread *t, uint64_t now)
{
    uint64_t d = now - t->timed_t0;
    t->timed[t->timed_cat] += d;
    t->timed_total += d;
}

/* The gathered iteration with long stalls becomes one sample of the exact stratum. */
static void ta_stall_flush(struct ta_thread *t)
{
    if (t->stall_pending) {
        lat_add(&t->stall_hist, ta_ns(t->stall_t1 - t->stall_t0));
        t->stall_pending = 0;
    }
}

/* A stall (a chain of timed intervals, or an aborted attempt) of d ticks ended at
 * `now`. A long one makes its iteration one of the exact stratum, gathered with the
 * iteration's other long stalls (an abort's span holds its inner waits: the span from
 * first start to last end counts each once). */
static void ta_stall(struct ta_thread *t, uint64_t d, uint64_t now)
{
    if (d > t->timed_max)
        t->timed_max = d;
    if (d < ta_stall_ticks)
        return;
    int by_iter = t->iter != NULL;
    if (!by_iter && !t->sampling) {     /* nothing tells its iteration: a sample alone */
        ta_stall_flush(t);
        lat_add(&t->stall_hist, ta_ns(d));
        return;
    }
    uint64_t key = by_iter ? *t->iter : t->windows, t0 = now - d;
    if (t->stall_pending && t->stall_by_iter == by_iter && t->stall_key == key) {
        if (t0 < t->stall_t0)
            t->stall_t0 = t0;
        if (now > t->stall_t1)
            t->stall_t1 = now;
    } else {
        ta_stall_flush(t);
        t->stall_pending = 1;
        t->stall_by_iter = by_iter;
        t->stall_key = key;
        t->stall_t0 = t0;
        t->stall_t1 = now;
    }
    t->win_stalled |= t->sampling;
}

void ta_loop_begin(const uint64_t *blocks)
{
    ta_stall_flush(&ta_self);
    ta_self.iter = blocks;
}

void ta_timed_begin(int cat)
{
    struct ta_thread *t = &ta_self;
    if (t->timed_cat == cat)
        return;
    uint64_t now = ta_ticks();
    if (t->timed_cat >= 0) {
        ta_timed_add(t, now);          /* a chain: the previous interval ends here */
    } else {
        t->chain_t0 = now;
        if (t->sampling)
            ta_close(t, now);
    }
    t->timed_cat = cat;
    t->timed_t0 = now;
}

void ta_timed_end(void)
{
    struct ta_thread *t = &ta_self;
    if (t->timed_cat < 0)
        return;
    uint64_t now = ta_ticks();
    ta_timed_add(t, now);
    ta_stall(t, now - t->chain_t0, now);
    t->timed_cat = -1;
    if (t->sampling)
        t->mark = now;
}

void ta_abort(uint64_t attempt_t0)
{
    struct ta_thread *t = &ta_self;
    uint64_t now = ta_ticks();
    if (t->timed_cat >= 0) {           /* aborted while waiting */
        ta_timed_add(t, now);
        ta_stall(t, now - t->chain_t0, now);
        t->timed_cat = -1;
    }
    if (attempt_t0) {
        uint64_t span = now > attempt_t0 ? now - attempt_t0 : 0;
        uint64_t inner = t->timed_total - t->attempt_timed0;  /* waits inside: their own */
        uint64_t w = span > inner ? span - inner : 0;
        t->timed[TA_WASTED] += w;
        t->timed_total += w;
        ta_stall(t, span, now);
    }
    if (t->sampling) {
        /* the attempt's share of the window goes (win as at the attempt's begin) */
        memcpy(t->win, t->win_at_attempt, sizeof t->win);
        t->mark = now;
        t->cur = TA_BEGIN;                          /* until the retry's begin */
    }
}

void ta_window_start(void)
{
    struct ta_thread *t = &ta_self;
    t->depth = 0;
    t->cur = TA_OUTSIDE;
    t->win_reads = 0;
    t->win_block = 0;
    t->win_spoiled = 0;
    t->win_stalled = 0;
    memset(t->win, 0, sizeof t->win);
    memset(t->win_at_attempt, 0, sizeof t->win_at_attempt);
    t->win_t0 = t->mark = ta_ticks();
    t->sampling = 1;
}

void ta_window_block_done(void)
{
    struct ta_thread *t = &ta_self;
    uint64_t d = ta_ticks() - t->win_t0, cost = t->win_reads * ta_cost;
    t->win_block = d > cost ? d - cost : 0;
}

uint64_t ta_window_stop(void)
{
    struct ta_thread *t = &ta_self;
    uint64_t now = ta_ticks();
    if (t->timed_cat >= 0)
        ta_timed_end();
    ta_close(t, now);
    t->sampling = 0;
    t->windows++;
    t->windows_clean += !t->win_spoiled;
    uint64_t *into = t->win_spoiled ? t->sampled_spoiled : t->sampled;
    for (int c = 0; c < TA_NCAT; c++)
        into[c] += t->win[c];
    uint64_t d = now - t->win_t0, cost = t->win_reads * ta_cost;
    d = d > cost ? d - cost : 0;
    if (d > t->win_max)
        t->win_max = d;
    if (!t->win_stalled)            /* else its iteration is in stall_hist already */
        lat_add(&t->op_hist, ta_ns(d));
    return ta_ns(t->win_block);
}

/* The tick rate against CLOCK_MONOTONIC over 2 ms, and the cost of one sampled phase
 * boundary (the best of 8 rounds of 64, on this thread's own, then reset, state). */
static void ta_calibrate(void)
{
    uint64_t n0 = sync_now_ns(), c0 = ta_ticks();
    struct timespec d = {0, 2000000};
    nanosleep(&d, NULL);
    uint64_t n1 = sync_now_ns(), c1 = ta_ticks();
    if (c1 > c0 && n1 > n0)
        ta_npt = (double)(n1 - n0) / (double)(c1 - c0);
    ta_outlier = (uint64_t)((double)TA_OUTLIER_NS / ta_npt);
    ta_stall_ticks = (uint64_t)((double)TA_STALL_NS / ta_npt);
    memset(&ta_self, 0, sizeof ta_self);
    ta_self.timed_cat = -1;
    ta_window_start();
    uint64_t best = UINT64_MAX;
    for (int r = 0; r < 8; r++) {
        uint64_t a = ta_ticks();
        for (int i = 0; i < 64; i++)
            ta_phase_inline(&ta_self, i & 1);   /* as the hooks do */
        uint64_t b = ta_ticks();
        if ((b - a) / 64 < best)
            best = (b - a) / 64;
    }
    ta_self.sampling = 0;
    ta_cost = best;
}

void ta_thread_start(void)
{
    pthread_once(&ta_once, ta_calibrate);
    memset(&ta_self, 0, sizeof ta_self);
    ta_self.timed_cat = -1;
    ta_self.start_ns = sync_now_ns();
}

void ta_thread_stop(struct sync_stats *out)
{
    struct ta_thread *t = &ta_self;
    t->stop_ns = sync_now_ns();
    uint64_t total = t->stop_ns > t->start_ns ? t->stop_ns - t->start_ns : 0;
    out->thread_time_ns += total;
#if STMBENCH_TIMEACCT
    if (t->timed_cat >= 0)
        ta_timed_end();
    ta_stall_flush(t);
    /* The clean windows, unless most were spoiled: then the blocks themselves are
     * that long (huge transactions), and every window counts. */
    int all = 2 * t->windows_clean < t->windows;
    double timed_ns[TA_NCAT], sampled[TA_NCAT], timed_sum = 0, sampled_sum = 0;
    for (int c = 0; c < TA_NCAT; c++) {
        timed_ns[c] = (double)t->timed[c] * ta_npt;
        timed_sum += timed_ns[c];
        sampled[c] = (double)t->sampled[c] + (all ? (double)t->sampled_spoiled[c] : 0);
        sampled_sum += sampled[c];
    }
    /* What the timed categories did not take is shared in the windows' proportions;
     * without any window, it was all outside blocks. Never negative: if the timed
     * ones took more than the thread's time (a bug), the sum shows it. */
    double busy = (double)total > timed_sum ? (double)total - timed_sum : 0;
    for (int c = 0; c < TA_NCAT; c++) {
        double share = sampled_sum > 0 ? busy * sampled[c] / sampled_sum
                                       : (c == TA_OUTSIDE ? busy : 0);
        out->time_ns[c] += (uint64_t)(timed_ns[c] + share + 0.5);
    }
    lat_merge(&out->op_hist, &t->op_hist);
    lat_merge(&out->op_stall_hist, &t->stall_hist);
    uint64_t m = ta_ns(t->timed_max > t->win_max ? t->timed_max : t->win_max);
    if (m > out->op_max_ns)
        out->op_max_ns = m;
#endif
}
