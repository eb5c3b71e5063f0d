/*
 * harness/logfloor.c - `stmbench --log-floor [--threads N] [--pin P] [--work W]`: the
 * floor of any commit protocol in which every commit appends to one shared log that
 * every thread reads (this STM's, and a global version clock's is no cheaper). N threads
 * (default 2), bound as threads 0..N-1 of a run, each repeat for 0.5 s: read every
 * record the others appended since its last (two words of each), do W rounds of a
 * dependent multiply (the transaction's own work), and append a one-line record of its
 * own by compare-and-swap on the last record's `next` (on a failure it reads the winner
 * and tries again). Run at 1 thread, then at N, in the same call. With no work a thread
 * appends many records in a row on a line it already has; with a transaction's worth of
 * work the threads alternate and each record moves at least twice (its link, its
 * reading). Records come from a per-thread pool of 4,096 reused in turn: a reader that
 * far behind skips records but reads only memory that stays allocated until the end.
 *
 * Invariant: a record is linked once, by the CAS that finds its predecessor's `next`
 * empty, so the log is one list in append order; a thread reads only records linked
 * after the sentinel of the running phase.
 *
 * Output (stdout, one line): log_floor threads=<N> work=<W> ops_per_s_1=<a>
 * ops_per_s_<N>=<b> ratio=<b/a> ns_per_op_1=<ns> pin=<policy>. Exit 0; 2 on bad usage;
 * 3 when a thread could not start, bind or allocate.
 */
#include "harness/harness.h"
#include "harness/pin.h"
#include "harness/probe.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLOOR_NS 500000000ull /* each phase */
#define FLOOR_POOL 4096

struct rec {
    _Alignas(64) _Atomic(struct rec *) next;
    uint64_t seq, who;
};

struct floor_run {
    struct rec sentinel;
    const struct pin_plan *plan;
    int work;
    _Atomic int go;
    _Atomic uint64_t ops;   /* every thread's appends, added at its end */
    _Atomic int failed;     /* a thread could not bind or allocate */
};

struct floor_arg {
    struct floor_run *run;
    int idx;
    pthread_t tid;
};

static void *floor_thread(void *p)
{
    struct floor_arg *a = p;
    struct floor_run *run = a->run;
    struct rec *pool = aligned_alloc(64, FLOOR_POOL * sizeof *pool);
    if (!pool || pin_bind_self(run->plan, a->idx) != 0) {
        /* relaxed: read after the join */
        atomic_store_explicit(&run->failed, 1, memory_order_relaxed);
        free(pool);
        return NULL;
    }
    memset(pool, 0, FLOOR_POOL * sizeof *pool);
    /* acquire: pairs with the release that started the phase (the sentinel's reset) */
    while (!atomic_load_explicit(&run->go, memory_order_acquire))
        ;
    struct rec *last = &run->sentinel, *n;
    uint64_t ops = 0, sink = 0, x = (uint64_t)a->idx + 3, end = probe_now_ns() + FLOOR_NS;
    for (;; ops++) {
        if ((ops & 63) == 0 && probe_now_ns() >= end)
            break;
        /* acquire: pairs with the appender's seq_cst CAS (a release) of `next` */
        while ((n = atomic_load_explicit(&last->next, memory_order_acquire)) != NULL) {
            sink += n->seq ^ n->who;
            last = n;
        }
        for (int w = 0; w < run->work; w++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            __asm__ volatile("" : "+r"(x)); /* a dependent chain the compiler keeps */
        }
        struct rec *r = &pool[ops % FLOOR_POOL];
        /* relaxed: published by the CAS below */
        atomic_store_explicit(&r->next, NULL, memory_order_relaxed);
        r->seq = ops;
        r->who = (uint64_t)a->idx;
        for (;;) {
            struct rec *none = NULL;
            /* seq_cst on success (a release of the record), acquire on failure (we
             * read the winner's record next) */
            if (atomic_compare_exchange_strong_explicit(&last->next, &none, r,
                                                        memory_order_seq_cst,
                                                        memory_order_acquire))
                break;
            sink += none->seq ^ none->who;
            last = none;
        }
        last = r;
    }
    /* relaxed: read after the join */
    atomic_fetch_add_explicit(&run->ops, ops + (sink == 42 && x == 42), memory_order_relaxed);
    free(pool);
    return NULL;
}

/* One phase of n threads: their appends per second, or -1. */
static double floor_phase(struct floor_run *run, int n)
{
    struct floor_arg *args = calloc((size_t)n, sizeof *args);
    if (!args)
        return -1;
    atomic_store_explicit(&run->sentinel.next, NULL, memory_order_relaxed);
    atomic_store_explicit(&run->ops, 0, memory_order_relaxed);
    atomic_store_explicit(&run->go, 0, memory_order_relaxed);
    int started = 0;
    for (; started < n; started++) {
        args[started] = (struct floor_arg){.run = run, .idx = started};
        if (pthread_create(&args[started].tid, NULL, floor_thread, &args[started]) != 0)
            break;
    }
    uint64_t t0 = probe_now_ns();
    /* release: pairs with the threads' acquire loads */
    atomic_store_explicit(&run->go, 1, memory_order_release);
    for (int i = 0; i < started; i++)
        pthread_join(args[i].tid, NULL);
    double secs = (double)(probe_now_ns() - t0) / 1e9;
    free(args);
    if (started < n || atomic_load_explicit(&run->failed, memory_order_relaxed))
        return -1;
    return (double)atomic_load_explicit(&run->ops, memory_order_relaxed) / secs;
}

/* --threads N or --work W at argv[*i] (with its value): 1 when taken, 0 when argv[*i] is
 * something else, -1 (with the message) when the value is out of range. */
static int take_count(int argc, char **argv, int *i, int *threads, int *work)
{
    if (!(*i + 1 < argc &&
          (strcmp(argv[*i], "--threads") == 0 || strcmp(argv[*i], "--work") == 0)))
        return 0;
    char *end = NULL;
    long v = strtol(argv[*i + 1], &end, 10);
    long hi = strcmp(argv[*i], "--threads") == 0 ? 4096 : 1000000;
    long lo = strcmp(argv[*i], "--threads") == 0 ? 1 : 0;
    if (!*argv[*i + 1] || *end || v < lo || v > hi) {
        fprintf(stderr, "stmbench: %s '%s' is out of range (allowed: %ld..%ld)\n",
                argv[*i], argv[*i + 1], lo, hi);
        return -1;
    }
    if (strcmp(argv[*i], "--threads") == 0)
        *threads = (int)v;
    else
        *work = (int)v;
    ++*i;
    return 1;
}

/* The flags of --log-floor into *pol, *threads, *work: 0, or the exit status 2. */
static int floor_args(int argc, char **argv, int *pol, int *threads, int *work)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--log-floor") == 0)
            continue;
        int took = take_count(argc, argv, &i, threads, work);
        if (took == 0)
            took = probe_take_pin(argc, argv, &i, pol);
        if (took < 0)
            return 2;
        if (took)
            continue;
        fprintf(stderr, "stmbench: --log-floor takes only --threads N, --pin P and --work W, "
                        "not '%s'\n", argv[i]);
        return 2;
    }
    return 0;
}

int log_floor_main(int argc, char **argv)
{
    int pol = PIN_COMPACT, threads = 2, work = 40;
    if (floor_args(argc, argv, &pol, &threads, &work) != 0)
        return 2;
    struct pin_plan plan;
    char err[256];
    if (pin_plan_make(&plan, (enum pin_policy)pol, threads, err, sizeof err) != 0) {
        fprintf(stderr, "stmbench: --log-floor: %s\n", err);
        return 3;
    }
    struct floor_run *run = probe_alloc(sizeof *run, "--log-floor", &plan);
    if (!run)
        return 3;
    run->plan = &plan;
    run->work = work;
    atomic_init(&run->failed, 0);
    double one = floor_phase(run, 1), many = one > 0 ? floor_phase(run, threads) : -1;
    int status = 3;
    if (one <= 0 || many <= 0) {
        fprintf(stderr, "stmbench: --log-floor: a thread could not start, bind or allocate\n");
    } else {
        printf("log_floor threads=%d work=%d ops_per_s_1=%.0f ops_per_s_%d=%.0f ratio=%.2f "
               "ns_per_op_1=%.1f pin=%s\n",
               threads, work, one, threads, many, many / one, 1e9 / one,
               pin_name((enum pin_policy)pol));
        status = 0;
    }
    free(run);
    pin_plan_free(&plan);
    return status;
}
