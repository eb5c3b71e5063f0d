/*
 * runtime/common.h - helpers shared by every runtime, the workloads and the harness:
 * branch hints, cache-line padding, the monotonic clock, a log-linear latency
 * histogram, and the per-thread statistics record every runtime fills in.
 *
 * Nothing here synchronises: a `struct sync_stats` belongs to one thread while it
 * runs and is handed to the harness (by copy) when the thread leaves the runtime.
 */
#ifndef SYNC_COMMON_H
#define SYNC_COMMON_H

#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <time.h>

/* Conflict analysis's locations (sync_where below; the interp VM's store of its pc):
 * on unless the build says WHERE=0 (the Makefile defines STMBENCH_WHERE=0 then). */
#ifndef STMBENCH_WHERE
#define STMBENCH_WHERE 1
#endif

#define SYNC_LIKELY(x) __builtin_expect(!!(x), 1)
#define SYNC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SYNC_CACHELINE 64
#define SYNC_CL_ALIGNED __attribute__((aligned(SYNC_CACHELINE)))

/* Zeroed memory for one thread's private use, on cache lines of its own: starts on a
 * line and is padded to whole lines, so no other thread's data shares a line with it
 * (two small mallocs of different threads are often neighbours: every write of one
 * thread would then take the line from the other). NULL when memory runs out; free
 * with free(). */
void *sync_private_alloc(size_t n);
#define SYNC_NOINLINE __attribute__((noinline))
#define SYNC_INLINE static inline __attribute__((always_inline))
/* On a function called inside atomic blocks whose effects must not be rolled back
 * (a thread's failure record): under gcc -fgnu-tm (the itm runtime) it declares the
 * function transaction_pure, so gcc calls it as is, without instrumenting it and
 * without first making the transaction serial-irrevocable. gcc accepts the attribute
 * without -fgnu-tm too, where it means nothing; clang does not know it. Keyed on the
 * compiler, not the runtime, so that every file's declaration of a function agrees. */
#if defined(__GNUC__) && !defined(__clang__)
#define SYNC_TM_PURE __attribute__((transaction_pure))
#else
#define SYNC_TM_PURE
#endif
/* A compiler barrier: no memory access moves across it at compile time. */
#define SYNC_COMPILER_BARRIER() __asm__ __volatile__("" ::: "memory")

/* The header every shared object starts with (SYNC_OBJECT_HEADER), the same 8 bytes
 * in every runtime so that all of them run one object layout. Only the STM uses the
 * fields (write-barrier flag, object size); elsewhere `size` is informational. */
struct sync_hdr {
    uint32_t flags;
    uint32_t size;
};

/* Monotonic nanoseconds (vDSO clock_gettime: no system call). */
static inline uint64_t sync_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Log-linear histogram of nanosecond latencies: values below 16 get a bucket each;
 * above, each power of two is split into 16 sub-buckets (relative error < 6.25%).
 * Fixed size, no allocation, mergeable by addition.
 */
#define LAT_SUB_BITS 4
#define LAT_SUB (1u << LAT_SUB_BITS)
#define LAT_NBUCKETS ((64 - LAT_SUB_BITS + 1) * LAT_SUB)

struct lat_hist {
    uint64_t count;
    uint64_t sum_ns;
    uint64_t max_ns;
    uint32_t bucket[LAT_NBUCKETS];
};

static inline unsigned lat_bucket(uint64_t ns)
{
    if (ns < LAT_SUB)
        return (unsigned)ns;
    unsigned msb = 63u - (unsigned)__builtin_clzll(ns);           /* >= LAT_SUB_BITS */
    unsigned sub = (unsigned)(ns >> (msb - LAT_SUB_BITS)) & (LAT_SUB - 1);
    return (msb - LAT_SUB_BITS + 1) * LAT_SUB + sub;
}

static inline void lat_add(struct lat_hist *h, uint64_t ns)
{
    h->count++;
    h->sum_ns += ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
    h->bucket[lat_bucket(ns)]++;
}

void lat_merge(struct lat_hist *into, const struct lat_hist *from);
/* The value at quantile q (0 < q <= 1): the lower bound of the bucket holding it,
 * 0 when the histogram is empty. */
uint64_t lat_quantile(const struct lat_hist *h, double q);
/* The same over the union of two histograms whose samples weigh wa and wb (b may be
 * NULL: a alone; lat_quantile is lat_quantile2(h, 1, NULL, 0, q)). */
uint64_t lat_quantile2(const struct lat_hist *a, uint64_t wa, const struct lat_hist *b,
                       uint64_t wb, double q);
/* Lower bound of bucket b (exposed for tests). */
uint64_t lat_bucket_low(unsigned b);

/* Why an atomic block attempt was thrown away (the CSV's abort columns). */
enum sync_abort_kind {
    SYNC_ABORT_WRITE_WRITE = 0, /* another transaction owns an object we want to write */
    SYNC_ABORT_READ_WRITE,      /* something we read was changed by a commit */
    SYNC_ABORT_INEVITABLE,      /* an inevitable transaction needed what we held */
    SYNC_ABORT_OTHER,           /* explicit retry, chaos, anything else; htm: an RTM abort
                                   with none of the bits below (interrupt, fault, system
                                   call, debug, nesting) */
    /* The htm runtime's RTM abort reasons (the status bits of _xbegin): the hardware
     * does not say whether a conflict was write-write or read-write. */
    SYNC_ABORT_HTM_CONFLICT,    /* _XABORT_CONFLICT: another core touched our read/write set */
    SYNC_ABORT_HTM_CAPACITY,    /* _XABORT_CAPACITY: the transaction outgrew the hardware */
    SYNC_ABORT_HTM_EXPLICIT,    /* _XABORT_EXPLICIT: xabort (the GIL was held; sync_inevitable) */
    SYNC_ABORT_NKINDS
};
const char *sync_abort_kind_name(enum sync_abort_kind k);

/* The conflict log's rows that are not aborts: a thread had to wait for a lock that
 * another thread held (gil, mutex, locks: contention analysis, docs/contract.md
 * "Conflict log", kind `lock-wait`). Past the abort kinds, so never an index of
 * aborts[]: the runs CSV's abort columns count aborts only. */
#define SYNC_KIND_LOCK_WAIT ((uint32_t)SYNC_ABORT_NKINDS)
/* A row's kind as the CSV writes it: an abort kind's name, or "lock-wait". */
const char *sync_conflict_kind_name(uint32_t kind);

/*
 * Where a thread is in the workload's code (conflict analysis, docs/contract.md
 * "Conflict log"): a 32-bit code only the workload interprets (interp: 1 + the index
 * of the bytecode that last touched the object), 0 = unknown. A workload's thread sets
 * `sync_where` once before its loop; a runtime calls sync_where_of(obj) only on slow
 * paths (a first write that takes ownership while others run, an abort), never on a
 * fast path, and the hook must not touch the shared heap (it may run inside an abort).
 * The C workloads set none: their location is the block's site label.
 */
typedef uint32_t (*sync_where_fn)(void *arg, uintptr_t obj);
/* Contention analysis's question about any thread, the caller included (`at` below):
 * thread tid's last access to obj, or with obj 0 the place where it resumes between
 * blocks (interp: the bytecode its next slice starts at, published once per slice).
 * It reads what thread tid publishes (relaxed atomic loads of fields that thread
 * stores relaxed): a hint that may already be stale, never a data race. */
typedef uint32_t (*sync_where_at_fn)(void *arg, int tid, uintptr_t obj);
struct sync_where_hook {
    sync_where_fn fn;
    void *arg;
    sync_where_at_fn at;     /* NULL: the workload publishes nothing for others */
};
extern __thread struct sync_where_hook sync_where;
static inline uint32_t sync_where_of(uintptr_t obj)
{
    return sync_where.fn ? sync_where.fn(sync_where.arg, obj) : 0;
}
/* Only on slow paths (a wait): the caller's hook answers for thread tid. */
static inline uint32_t sync_where_at(int tid, uintptr_t obj)
{
    return sync_where.at && tid >= 0 ? sync_where.at(sync_where.arg, tid, obj) : 0;
}

/* One row of the conflict log (`--conflicts`, docs/contract.md): an aborted attempt,
 * or a contended wait (kind SYNC_KIND_LOCK_WAIT: the waiter's side is `thread`, site
 * and where; the holder's is other, other_site and other_where; wasted_ns the wait). */
struct sync_conflict {
    uint64_t t_ns;       /* when, since the runtime was initialised */
    int32_t thread;      /* the thread whose attempt was thrown away (or that waited) */
    int32_t other;       /* the thread it conflicted with (held the lock), -1 unknown */
    uint32_t kind;       /* enum sync_abort_kind, or SYNC_KIND_LOCK_WAIT */
    uint64_t object;     /* segment offset of the object (a lock's: the object that
                          * holds it), 0 when none (the GIL, the mutex) */
    uint64_t page;       /* object / 4096 */
    const char *site;    /* the atomic block's label (static string) */
    uint64_t wasted_ns;  /* time of the events the row stands for: one attempt thrown
                          * away (or one wait), times the row's weight once sampled; a
                          * row of aggregated waits: their sum */
    /* Both sides (issue 30): */
    uint32_t where;      /* the aborted side's location (sync_where_of), 0 unknown */
    uint32_t other_where;/* the other side's location at its first write of the object */
    const char *other_site; /* the other transaction's block label, NULL unknown */
    uint32_t weight;     /* aborts this row stands for (1; more once sampling began) */
    /* Filled by the harness after the run (the workload's descriptions, interned),
     * except object_s of a runtime's own lock ("the GIL"), which the runtime sets: */
    const char *where_s, *other_where_s, *object_s;
};

/* A thread keeps at most SYNC_CONFLICTS_CAP rows; beyond, every other row is dropped
 * (the kept ones weigh twice as much, their wasted_ns doubled too) and one row in
 * `stride` is recorded, weighing `stride` times its own: memory stays bounded whatever
 * the run's length, and weights and times still sum to about the events' (exactly
 * until the first thinning). */
#define SYNC_CONFLICTS_CAP 100000 /* htm stops at it (HTM_LOG_MAX): never thinned */

/* Waits (kind lock-wait) are aggregated in their thread before they become rows: the
 * waits of one SYNC_WAIT_WINDOW_NS window with the same pair (object, both sides' site,
 * location and thread) make one row, its t_ns the first wait's, its weight their count,
 * its wasted_ns their sum. A run under locks or the GIL meets millions of waits, few
 * pairs: rows per thread are about pairs x windows, not waits, so the log rarely
 * samples (docs/contract.md "Conflict log" has the counts). A window is short
 * against a run (the report's timelines cut a run in twentieths). At most
 * SYNC_WAIT_SLOTS pairs are open at once: one more closes the window early. */
#define SYNC_WAIT_WINDOW_NS 10000000ull
#define SYNC_WAIT_SLOTS 64
struct sync_wait_agg {
    uint64_t window;                           /* t_ns / SYNC_WAIT_WINDOW_NS */
    unsigned n;                                /* slots in use */
    struct sync_conflict row[SYNC_WAIT_SLOTS]; /* weight 0: free */
};

/* Categories of the time breakdown (enum ta_cat in runtime/timeacct.h). */
#define SYNC_TA_NCAT 12

/* Counters a runtime keeps per thread; harness merges them after the run. */
struct sync_stats {
    uint64_t commits;                     /* outermost atomic blocks completed */
    uint64_t aborts[SYNC_ABORT_NKINDS];   /* attempts thrown away, by reason */
    uint64_t unshared_pages;              /* STM: pages a segment gave its own copy */
    uint64_t pages_faulted;               /* STM: of those, brought up to date from segment
                                           * 0 and the log (first access, not a new chunk) */
    uint64_t import_entries;              /* STM: commit log entries imported */
    uint64_t import_bytes;                /* STM: bytes copied into the segment by imports */
    uint64_t inevitable;                  /* STM transactions that became inevitable;
                                             htm: blocks that fell back to the GIL */
    uint64_t htm_commits;                 /* htm: blocks committed in hardware (RTM) */
    uint64_t gil_handoffs;                /* GIL: times this thread took the GIL from a dropper */
    uint64_t gil_wait_ns;                 /* GIL: time spent waiting to take it */
    struct lat_hist commit_hist;          /* sampled commit-step latency */
    struct sync_conflict *conflicts;      /* malloc'ed; owner frees with sync_stats_free */
    size_t nconflicts, conflicts_cap;
    uint32_t conflicts_stride;            /* 0/1: every abort recorded; else 1 in stride */
    uint32_t conflicts_skip;              /* aborts since the last recorded one */
    uint64_t conflicts_seen;              /* aborts and waits offered to the log */
    struct sync_wait_agg *waits_open;     /* waits not yet rows (malloc'ed, or NULL) */
    /* The time breakdown (runtime/timeacct.h), filled by ta_thread_stop: */
    uint64_t thread_time_ns;              /* the thread's time, start gate to stop */
    uint64_t time_ns[SYNC_TA_NCAT];       /* by category (enum ta_cat); sums to it */
    struct lat_hist op_hist;              /* latency of loop iterations without a long
                                             stall, one sampled in op_weight */
    struct lat_hist op_stall_hist;        /* every long stall (timeacct.h), exactly */
    uint64_t op_max_ns;                   /* see timeacct.h: exact waits bound it */
};
/* The operation latency at quantile q from its two strata (timeacct.h, "Operation
 * latency"): each op_hist sample stands for `weight` iterations, each op_stall_hist
 * entry for itself. The lower bound of the bucket holding it; 0 when both are empty. */
uint64_t sync_op_quantile(const struct sync_stats *s, uint64_t weight, double q);

void sync_stats_reset(struct sync_stats *s);
/* Adds counters and histograms of `from` into `into`; moves the conflict rows. */
void sync_stats_merge(struct sync_stats *into, struct sync_stats *from);
void sync_stats_free(struct sync_stats *s);
/* Appends one conflict row (drops it silently if memory runs out: statistics only);
 * beyond SYNC_CONFLICTS_CAP rows, samples (above). sync_stats_merge moves rows as they
 * are (weights kept), so a merged record holds at most threads x the cap. */
void sync_stats_add_conflict(struct sync_stats *s, const struct sync_conflict *c);
/* A wait (kind SYNC_KIND_LOCK_WAIT, t_ns set): added to the thread's open aggregate
 * (above); sync_stats_close_waits turns the open ones into rows. sync_stats_merge
 * closes `from`'s first, so rows read after a thread's exit are complete. */
void sync_stats_add_wait(struct sync_stats *s, const struct sync_conflict *c);
void sync_stats_close_waits(struct sync_stats *s);
uint64_t sync_stats_aborts(const struct sync_stats *s);

/*
 * Waits in workload code (contention analysis): the locks runtime's waits happen in
 * the workloads' own locks (workloads/lib/wl_spin.h), which log them here. A runtime
 * that keeps such a log points `sync_waits` at the calling thread's statistics in its
 * thread_enter and clears it in thread_exit; sync_log_wait appends one row there,
 * stamping t_ns (since t0_ns) and thread, and drops it when no log is set.
 * sync_lock_word[site] is what a lock word holds when the calling thread takes a lock
 * at `site` (a code of the workload's, below SYNC_LOCK_SITES): its index + 1 while it
 * is entered in such a runtime, SYNC_LOCK_ID_NONE otherwise (never 0, so a held lock
 * word is never 0 either), with the site in bits 16 and up. Local-exec TLS: one load
 * from %fs, as cheap as the constant 1 it replaces in the lock's compare-and-swap.
 */
#define SYNC_LOCK_ID_NONE 0xffffu
#define SYNC_LOCK_SITES 32
#define SYNC_LOCK_SITE_SHIFT 16
struct sync_wait_log {
    struct sync_stats *stats;    /* NULL: waits are not logged */
    uint64_t t0_ns;              /* the runtime's init time */
    int tid;
};
extern __thread struct sync_wait_log sync_waits;
/* 0: the run asks for no conflict rows (neither --conflicts nor --report), so the
 * runtimes that wait log no `lock-wait` rows: a thread's rows fill up to the cap
 * (SYNC_CONFLICTS_CAP) in seconds under locks or mutex, memory nobody reads (it failed
 * make memcheck's bound on RSS growth). Set by the harness before the threads start,
 * read only after: plain. Default 1 (the unit tests, which read the rows). */
extern int sync_waits_wanted;
extern __thread uint32_t sync_lock_word[SYNC_LOCK_SITES] __attribute__((tls_model("local-exec")));
/* Sets the calling thread's lock words for thread index tid (-1: none). */
void sync_lock_words_set(int tid);
void sync_log_wait(struct sync_conflict *c);

/* Prints "stmbench: <message>\n" to stderr: the one format of the program's messages. */
void sync_vmessage(const char *fmt, va_list ap);

/* The machine ran out of something a run needs (memory, mappings): prints
 * "stmbench: <reason>" and exits with status 3, as for a runtime that cannot be set
 * up, without touching any results file. Pure under itm: callable inside a block on
 * the failing path without making it irrevocable beforehand. */
void sync_out_of_resources(const char *fmt, ...) SYNC_TM_PURE
    __attribute__((noreturn, format(printf, 1, 2)));

/* Commit latency is timed on one commit in SYNC_COMMIT_SAMPLE (a power of two). */
#define SYNC_COMMIT_SAMPLE 16

#endif
