/*
 * runtime/htm/htm.c - the htm runtime: a GIL elided with Intel RTM (sync_htm.h says
 * what a block is). Compiled with -mrtm; the only file besides htm_cpu.c that
 * executes RTM instructions, and only after init found RTM working (htm_cpu.h).
 *
 * State:
 *   htm_gil.word   the GIL: 0 free, 1 held, 2 held and a thread may sleep on it
 *                  (futex). Alone in its cache line: every hardware transaction reads
 *                  it, and a write to it aborts them all.
 *   cfg            R (retries) and the test hook's forced status; written by init and
 *                  the hook while no thread is entered, read-only during a run.
 *   htm_self       per thread: block depth, whether the running block holds the GIL,
 *                  the counters.
 *   htm_holder     who holds the GIL (thread, block label, location), for contention
 *                  analysis's waits: stored by the holder after taking it, on a line
 *                  of its own that no hardware transaction reads (so storing it
 *                  aborts nothing); read by a waiter as a hint (relaxed).
 *
 * Invariants:
 *   H1 (subscription) a hardware transaction reads htm_gil.word right after xbegin,
 *      before touching anything else, and aborts (xabort HTM_XA_GIL_HELD) unless it
 *      is 0. The word stays in its read set to the end, so any later write to it
 *      (a thread taking the GIL) aborts the transaction before that thread's next
 *      instruction runs: no transaction commits across a GIL holding, and none sees
 *      a holder's partial writes.
 *   H2 (exclusion) the GIL is taken only with an atomic exchange or compare-exchange
 *      from 0 and released by its holder alone: at most one thread holds it.
 *   H3 (atomic blocks) a block in hardware is atomic by RTM (all of it commits at
 *      xend, or nothing); a block under the GIL is atomic by H1+H2 (no transaction
 *      runs while it holds, no other holder). So blocks are serialisable, as under a
 *      GIL; nested blocks only count depth and belong to the outermost.
 *   H4 (progress) a block makes at most R hardware attempts (fewer on capacity or
 *      explicit aborts), then takes the GIL, which a holder keeps only for one block:
 *      every block completes.
 *   H5 (no RTM instruction without RTM) xbegin, xend and xabort run only in blocks,
 *      blocks only after init succeeded, and init succeeds only when htm_cpu() found
 *      RTM working, or under the test hook, which replaces xbegin by an abort and so
 *      never enters a transaction (so never reaches xend or xabort either).
 *
 *   H6 (contention analysis) a wait for the GIL, before an attempt (htm_gil_wait_free)
 *      or to take it (htm_gil_lock), is one lock-wait row (aggregated in the thread,
 *      common.h) when the run asks for rows; with the abort rows a thread keeps at
 *      most HTM_LOG_MAX rows, the open aggregates counted, so the log is never thinned.
 *
 * Memory order: inside a transaction ordering is the hardware's: a committed RTM
 * region has the ordering of a locked instruction (Intel SDM vol. 1, 16.3.6), and
 * _xbegin/_xend are compiler barriers. The GIL's own accesses are commented where
 * they are.
 */
#include "runtime/htm/sync_htm.h"
#include "runtime/htm/htm_cpu.h"
#include "runtime/sync.h"

#include <immintrin.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

_Static_assert(HTM_ABORT_EXPLICIT == _XABORT_EXPLICIT, "RTM status layout");
_Static_assert(HTM_ABORT_RETRY == _XABORT_RETRY, "RTM status layout");
_Static_assert(HTM_ABORT_CONFLICT == _XABORT_CONFLICT, "RTM status layout");
_Static_assert(HTM_ABORT_CAPACITY == _XABORT_CAPACITY, "RTM status layout");
_Static_assert(HTM_ABORT_DEBUG == _XABORT_DEBUG, "RTM status layout");
_Static_assert(HTM_ABORT_NESTED == _XABORT_NESTED, "RTM status layout");

__thread struct htm_tls htm_self;

static struct {
    _Atomic uint32_t word;
    char pad[SYNC_CACHELINE - sizeof(uint32_t)];
} htm_gil SYNC_CL_ALIGNED;

#if STMBENCH_WHERE
static struct {
    _Atomic int tid;                 /* -1: none seen */
    _Atomic(const char *) site;
    _Atomic uint32_t where;
    char pad[SYNC_CACHELINE - sizeof(int) - sizeof(const char *) - sizeof(uint32_t)];
} htm_holder SYNC_CL_ALIGNED = {.tid = -1};
#endif

static struct {
    int retries;             /* R */
    int forced;              /* the test hook is on */
    unsigned forced_status;  /* ... and every attempt ends with this status */
    uint64_t t0_ns;          /* init time, for the conflict log */
} cfg SYNC_CL_ALIGNED = {.retries = HTM_DEFAULT_RETRIES};

enum { HTM_SPIN = 256 };   /* pause loops before sleeping on the GIL word */
/* Conflict-log rows a thread keeps per run (56 bytes each): hardware transactions are
 * short and many, and an abort-heavy second of them would otherwise log hundreds of
 * MB. The counters count every abort; the log holds the first HTM_LOG_MAX. */
enum { HTM_LOG_MAX = SYNC_CONFLICTS_CAP };

/* Rows this thread holds or will hold: its log and its open waits (H6). */
static size_t htm_rows(void)
{
    const struct sync_stats *st = &htm_self.stats;
    return st->nconflicts + (st->waits_open ? st->waits_open->n : 0);
}

/* ------------------------------------------------------------ the retry policy */

enum sync_abort_kind htm_abort_kind(unsigned status)
{
    if (status & HTM_ABORT_EXPLICIT)
        return SYNC_ABORT_HTM_EXPLICIT;
    if (status & HTM_ABORT_CAPACITY)
        return SYNC_ABORT_HTM_CAPACITY;
    if (status & HTM_ABORT_CONFLICT)
        return SYNC_ABORT_HTM_CONFLICT;
    return SYNC_ABORT_OTHER;
}

int htm_should_retry(unsigned status, int failed, int retries)
{
    if (status & HTM_ABORT_EXPLICIT) {
        if (HTM_ABORT_CODE(status) != HTM_XA_GIL_HELD)
            return 0;   /* sync_inevitable, or an xabort we do not know: run locked */
    } else if (status & HTM_ABORT_CAPACITY) {
        return 0;       /* it would not fit the next time either */
    }
    return failed < retries;
}

int htm_backs_off(unsigned status)
{
    return !(status & (HTM_ABORT_EXPLICIT | HTM_ABORT_CAPACITY)) &&
           (status & HTM_ABORT_CONFLICT) != 0;
}

void htm_test_force_aborts(int on, unsigned status)
{
    cfg.forced = on != 0;
    cfg.forced_status = status;
}

/* ------------------------------------------------------------------- the GIL */

static long htm_futex(_Atomic uint32_t *addr, int op, uint32_t val)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, NULL, NULL, 0);
}

/* A wait for the GIL (H6): begun when the thread first found it held, with the holder
 * as it then was; logged when it ends. A hint like the other runtimes' (docs/contract.md
 * "Conflict log"): the holder may have changed meanwhile. */
struct htm_wait {
    uint64_t t0;
    struct sync_conflict c;
};

static void htm_wait_begin(struct htm_wait *w)
{
    w->t0 = 0;
#if STMBENCH_WHERE
    if (!sync_waits_wanted || htm_rows() + 1 >= HTM_LOG_MAX)
        return;
    w->t0 = sync_now_ns();
    /* relaxed: hints the holder stored after taking the GIL (see htm_holder) */
    int holder = atomic_load_explicit(&htm_holder.tid, memory_order_relaxed);
    w->c = (struct sync_conflict){
        .thread = htm_self.tid,
        .other = holder,
        .kind = SYNC_KIND_LOCK_WAIT,
        .site = htm_self.site,
        .where = sync_where_at(htm_self.tid, 0),
        .other_site = holder >= 0 ? atomic_load_explicit(&htm_holder.site, memory_order_relaxed)
                                  : NULL,
        .other_where = holder >= 0 ? atomic_load_explicit(&htm_holder.where,
                                                          memory_order_relaxed)
                                   : 0,
        .object_s = "the GIL",
    };
#else
    (void)w;
#endif
}

static void htm_wait_end(struct htm_wait *w)
{
#if STMBENCH_WHERE
    if (!w->t0)
        return;
    uint64_t now = sync_now_ns();
    w->c.t_ns = now - cfg.t0_ns;
    w->c.wasted_ns = now - w->t0;
    if (htm_rows() + 1 < HTM_LOG_MAX)
        sync_stats_add_wait(&htm_self.stats, &w->c);
#else
    (void)w;
#endif
}

/* Waits until the GIL is free, without taking it (before a hardware attempt: starting
 * one while the GIL is held would only abort). */
static void htm_gil_wait_free(void)
{
    struct htm_wait wt;
    wt.t0 = 0;
    for (int i = 0;; i++) {
        /* relaxed: a hint; the decision is the transaction's own read (H1). */
        uint32_t v = atomic_load_explicit(&htm_gil.word, memory_order_relaxed);
        if (v == 0) {
            if (i)
                htm_wait_end(&wt);
            return;
        }
        if (i == 0)
            htm_wait_begin(&wt);
        if (i < HTM_SPIN) {
            _mm_pause();
            continue;
        }
        /* Announce a sleeper (1 -> 2) so that the holder's release wakes us.
         * relaxed: only the value matters, the futex call re-checks it. */
        if (v == 1 && !atomic_compare_exchange_strong_explicit(&htm_gil.word, &v, 2,
                                                               memory_order_relaxed,
                                                               memory_order_relaxed))
            continue;
        htm_futex(&htm_gil.word, FUTEX_WAIT_PRIVATE, 2);
    }
}

/* The GIL is ours: say who holds it (htm_holder; relaxed: hints for waiters). */
static void htm_gil_taken(void)
{
#if STMBENCH_WHERE
    atomic_store_explicit(&htm_holder.tid, htm_self.tid, memory_order_relaxed);
    atomic_store_explicit(&htm_holder.site, htm_self.site, memory_order_relaxed);
    atomic_store_explicit(&htm_holder.where, sync_where_at(htm_self.tid, 0),
                          memory_order_relaxed);
#endif
}

/* Takes the GIL (a three-state futex lock: Drepper, "Futexes Are Tricky", mutex 2).
 * A taker that finds it held logs a wait (H6). */
static void htm_gil_lock(void)
{
    uint32_t c = 0;
    /* acquire: pairs with the release in htm_gil_unlock; the holder sees everything
     * the previous holder and every committed transaction wrote. */
    if (atomic_compare_exchange_strong_explicit(&htm_gil.word, &c, 1, memory_order_acquire,
                                                memory_order_relaxed)) {
        htm_gil_taken();
        return;
    }
    struct htm_wait wt;
    htm_wait_begin(&wt);
    for (int i = 0; i < HTM_SPIN; i++) {
        _mm_pause();
        c = 0;
        /* relaxed load: a hint; acquire CAS as above */
        if (atomic_load_explicit(&htm_gil.word, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong_explicit(&htm_gil.word, &c, 1,
                                                    memory_order_acquire,
                                                    memory_order_relaxed)) {
            htm_gil_taken();
            htm_wait_end(&wt);
            return;
        }
    }
    /* acquire: as above. Taking it as 2 keeps the sleepers' wake-up owed. */
    c = atomic_exchange_explicit(&htm_gil.word, 2, memory_order_acquire);
    while (c != 0) {
        htm_futex(&htm_gil.word, FUTEX_WAIT_PRIVATE, 2);
        c = atomic_exchange_explicit(&htm_gil.word, 2, memory_order_acquire);
    }
    htm_gil_taken();
    htm_wait_end(&wt);
}

static void htm_gil_unlock(void)
{
    /* release: pairs with the acquire of the next taker, and orders the holder's
     * writes before the 0 that lets transactions start (H1 reads the word). */
    if (atomic_exchange_explicit(&htm_gil.word, 0, memory_order_release) == 2)
        htm_futex(&htm_gil.word, FUTEX_WAKE_PRIVATE, INT_MAX);   /* takers and waiters */
}

/* ---------------------------------------------------------------- the blocks */

static void htm_backoff(int failed)
{
    uint64_t x = htm_self.rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    htm_self.rng = x;
    unsigned span = 16u << (failed < 6 ? failed : 6);   /* 32 .. 1024 pauses */
    for (unsigned n = (unsigned)(x % span) + span / 2; n; n--)
        _mm_pause();
}

static void htm_record_abort(unsigned status)
{
    enum sync_abort_kind kind = htm_abort_kind(status);
    htm_self.stats.aborts[kind]++;
    if (htm_rows() >= HTM_LOG_MAX)    /* H6: never thinned */
        return;
    struct sync_conflict c = {
        .t_ns = sync_now_ns() - cfg.t0_ns,
        .thread = htm_self.tid,
        .other = -1,           /* RTM does not say who */
        .kind = (uint32_t)kind,
        .object = 0,           /* nor where */
        .page = 0,
        .site = htm_self.site,
        .wasted_ns = 0,        /* not measured: a clock read per attempt would cost as
                                  much as a small transaction */
    };
    sync_stats_add_conflict(&htm_self.stats, &c);
}

void _htm_begin_outer(const char *site)
{
    htm_self.site = site;
    htm_self.locked = 0;
    for (int failed = 0;;) {
        htm_gil_wait_free();
        unsigned status;
        if (SYNC_UNLIKELY(cfg.forced)) {
            status = cfg.forced_status;   /* the test hook: never xbegin (H5) */
        } else {
            /* An abort comes back here, with the registers and memory of this point
             * and status = the abort's (see sync_htm.h). */
            status = _xbegin();
            if (status == _XBEGIN_STARTED) {
                /* H1. acquire: pairs with htm_gil_unlock's release (and within RTM
                 * the hardware orders it anyway). */
                if (atomic_load_explicit(&htm_gil.word, memory_order_acquire) != 0)
                    _xabort(HTM_XA_GIL_HELD);
                return;   /* the block runs in hardware */
            }
        }
        failed++;
        htm_record_abort(status);
        if (!htm_should_retry(status, failed, cfg.retries))
            break;
        if (htm_backs_off(status))
            htm_backoff(failed);
    }
    htm_gil_lock();
    htm_self.locked = 1;
    htm_self.stats.inevitable++;   /* a fallback: the block runs under the GIL */
}

void _htm_end_outer(void)
{
    if (htm_self.locked) {
        htm_self.locked = 0;
        htm_gil_unlock();
    } else {
        _xend();
        htm_self.stats.htm_commits++;
    }
    htm_self.stats.commits++;
}

void _htm_inevitable(void)
{
    /* Reached only inside a hardware transaction (sync_inevitable checks locked). */
    _xabort(HTM_XA_INEVITABLE);
}

/* ------------------------------------------------------------ the descriptor */

static char htm_params_buf[96];

static int htm_init(const struct sync_config *c, char *err, size_t errlen)
{
    int r = c && c->htm_retries ? c->htm_retries : HTM_DEFAULT_RETRIES;
    if (r < 1 || r > HTM_MAX_RETRIES) {
        snprintf(err, errlen, "htm: %d retries is out of range (allowed: 1..%d)", r,
                 HTM_MAX_RETRIES);
        return -1;
    }
    if (!cfg.forced) {
        const struct htm_cpu *cpu = htm_cpu();
        if (!cpu->rtm_works) {
            if (!cpu->rtm)
                snprintf(err, errlen, "htm: no working RTM on this CPU (CPUID reports no RTM)");
            else
                snprintf(err, errlen, "htm: no working RTM on this CPU (CPUID reports RTM, "
                         "but %d of %d probe transactions committed)", cpu->probe_commits,
                         cpu->probe_attempts);
            return -1;
        }
    }
    cfg.retries = r;
    cfg.t0_ns = sync_now_ns();
    /* relaxed: no thread is entered during init; thread creation orders it. */
    atomic_store_explicit(&htm_gil.word, 0, memory_order_relaxed);
#if STMBENCH_WHERE
    atomic_store_explicit(&htm_holder.tid, -1, memory_order_relaxed);   /* as above */
#endif
    if (cfg.forced)
        snprintf(htm_params_buf, sizeof htm_params_buf, "htm_retries=%d;htm_forced_abort=0x%x",
                 r, cfg.forced_status);
    else
        snprintf(htm_params_buf, sizeof htm_params_buf, "htm_retries=%d", r);
    return 0;
}

static void htm_fini(void) {}

static int htm_enter(int tid, char *err, size_t errlen)
{
    if (htm_self.depth != 0) {
        snprintf(err, errlen, "htm: thread %d entered inside an atomic block", tid);
        return -1;
    }
    sync_stats_free(&htm_self.stats);
    memset(&htm_self, 0, sizeof htm_self);
    htm_self.tid = tid;
    htm_self.rng = 0x9E3779B97F4A7C15ull * (uint64_t)(tid + 1);
    return 0;
}

static void htm_exit(struct sync_stats *out)
{
    if (out)
        sync_stats_merge(out, &htm_self.stats);
    else
        sync_stats_free(&htm_self.stats);
}

static const char *htm_params(void)
{
    return htm_params_buf;
}

const struct sync_runtime sync_runtime_htm = {
    .name = "htm",
    .summary = "the GIL elided with Intel RTM: each block a hardware transaction, the GIL "
               "after --htm-retries failed attempts (needs working RTM)",
    .max_threads = 0,
    .init = htm_init, .fini = htm_fini,
    .thread_enter = htm_enter, .thread_exit = htm_exit,
    .params = htm_params,
};
