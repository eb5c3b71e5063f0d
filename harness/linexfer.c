/*
 * harness/linexfer.c - `stmbench --line-transfer [--pin P]`: how long one cache line
 * takes to move from one core to another on this machine, now.
 *
 * Why: every cross-thread figure of a sitting (a commit that links after another
 * thread's entry, a lock another core took last) is a few of these transfers, and on a
 * virtual machine their cost changes between sittings by a factor of four (50 ns one way
 * on an Intel Xeon VM, 210-240 ns on an AMD EPYC VM, where the two vCPUs may sit on
 * different core complexes). `make scaling` records it before each round, so that a
 * table says which kind of sitting it came from.
 *
 * How: two threads, bound as threads 0 and 1 of a 2-thread run with the same --pin
 * (compact: the first two PUs in hwloc order), hand a counter back and forth in one
 * line: each waits until the counter is its turn's value and stores the next one. A
 * round trip is two transfers; the figure is the trial's time over twice its round
 * trips. TRIALS trials, the median printed with the minimum and maximum.
 *
 * Invariant: only the thread whose turn it is (counter even: thread 0, odd: thread 1)
 * stores, so the counter goes up by one per hand-off and a trial ends at 2 * ROUNDS.
 *
 * `stmbench --log-floor [--threads N] [--pin P] [--work W]`: the floor of any commit
 * protocol in which every commit appends to one shared log that every thread reads
 * (this STM's, and a global version clock's is no cheaper). N threads (default 2), bound
 * as threads 0..N-1 of a run, each repeat for 0.5 s: read every record the others
 * appended since its last (two words of each), do W rounds of a dependent multiply (the
 * transaction's own work), and append a one-line record of its own by compare-and-swap
 * on the last record's `next` (on a failure it reads the winner and tries again). Run
 * at 1 thread, then at N, in the same call. With no work a thread appends many records
 * in a row on a line it already has; with a transaction's worth of work the threads
 * alternate and each record moves at least twice (its link, its reading).
 * Records come from a per-thread pool of 4,096 reused in turn: a reader that far
 * behind skips records but reads only memory that stays allocated until the end.
 *
 * Output (stdout, one line): line_transfer_ns=<median> min_ns=<m> max_ns=<M>
 * trials=<n> round_trips=<r> pus=<a>,<b> (unbound with --pin none) pin=<policy>. Exit 0; 2 on bad usage; 3 when
 * the machine has fewer than two PUs, binding fails, or a trial makes no progress for
 * 10 s (the two threads share one PU).
 */
#include "harness/harness.h"
#include "harness/pin.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRIALS 7
#define ROUNDS 100000L          /* round trips per trial: 40-100 ms here */
#define STALL_NS 10000000000ull /* a trial without progress for 10 s: give up */

struct xfer {
    _Alignas(64) _Atomic long turn; /* alone on its line */
    char pad[64 - sizeof(long)];
    _Atomic int stop;               /* the measuring thread gave up: the other leaves */
    const struct pin_plan *plan;
    int bind_failed;
};

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Waits until the counter is `want`; 0, or -1 when told to stop or stalled (only the
 * measuring thread times out: it then tells the other to stop). */
static int wait_turn(struct xfer *x, long want, int measuring)
{
    unsigned spins = 0;
    uint64_t t0 = 0;
    /* acquire: pairs with the other thread's release store of the counter (nothing
     * else is passed, but the hand-off is then a proper synchronisation) */
    while (atomic_load_explicit(&x->turn, memory_order_acquire) != want) {
        if ((++spins & 0xffff) == 0) {
            /* relaxed: a flag that only ends the loop */
            if (atomic_load_explicit(&x->stop, memory_order_relaxed))
                return -1;
            if (measuring) {
                uint64_t t = now_ns();
                if (!t0)
                    t0 = t;
                else if (t - t0 > STALL_NS)
                    return -1;
            }
        }
    }
    return 0;
}

static void *partner(void *arg)
{
    struct xfer *x = arg;
    if (pin_bind_self(x->plan, 1) != 0) {
        x->bind_failed = 1;
        /* relaxed: the flag only ends the measuring thread's wait */
        atomic_store_explicit(&x->stop, 1, memory_order_relaxed);
        return NULL;
    }
    for (long i = 1;; i += 2) {
        if (wait_turn(x, i, 0) != 0)
            return NULL;
        /* release: pairs with the acquire load in wait_turn */
        atomic_store_explicit(&x->turn, i + 1, memory_order_release);
        if (i + 1 >= 2 * ROUNDS * TRIALS)
            return NULL;
    }
}

/* `--pin P` at argv[*i]: 1 when taken (*i moves past P, *pol is set), 0 when argv[*i]
 * is something else, -1 (with the message) when P is not a policy. */
static int take_pin(int argc, char **argv, int *i, int *pol)
{
    if (strcmp(argv[*i], "--pin") != 0 || *i + 1 >= argc)
        return 0;
    *pol = pin_parse(argv[++*i]);
    if (*pol < 0) {
        fprintf(stderr, "stmbench: --pin '%s' is not a policy (allowed: compact, scatter, "
                        "none)\n", argv[*i]);
        return -1;
    }
    return 1;
}

/* A zeroed, line-aligned block of `size` (a multiple of 64), or NULL after the message
 * and freeing the plan. */
static void *setup_alloc(size_t size, const char *mode, struct pin_plan *plan)
{
    void *p = aligned_alloc(64, size);
    if (!p) {
        fprintf(stderr, "stmbench: %s: out of memory\n", mode);
        pin_plan_free(plan);
        return NULL;
    }
    return memset(p, 0, size);
}

/* ------------------------------------------------------------------ log floor */

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
    uint64_t ops = 0, sink = 0, x = (uint64_t)a->idx + 3, end = now_ns() + FLOOR_NS;
    for (;; ops++) {
        if ((ops & 63) == 0 && now_ns() >= end)
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
    uint64_t t0 = now_ns();
    /* release: pairs with the threads' acquire loads */
    atomic_store_explicit(&run->go, 1, memory_order_release);
    for (int i = 0; i < started; i++)
        pthread_join(args[i].tid, NULL);
    double secs = (double)(now_ns() - t0) / 1e9;
    free(args);
    if (started < n || atomic_load_explicit(&run->failed, memory_order_relaxed))
        return -1;
    return (double)atomic_load_explicit(&run->ops, memory_order_relaxed) / secs;
}

int log_floor_main(int argc, char **argv)
{
    int pol = PIN_COMPACT, threads = 2, work = 40;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--log-floor") == 0)
            continue;
        char *end = NULL;
        long v = 0;
        if (i + 1 < argc && (strcmp(argv[i], "--threads") == 0 || strcmp(argv[i], "--work") == 0)) {
            v = strtol(argv[i + 1], &end, 10);
            long hi = strcmp(argv[i], "--threads") == 0 ? 4096 : 1000000;
            long lo = strcmp(argv[i], "--threads") == 0 ? 1 : 0;
            if (!*argv[i + 1] || *end || v < lo || v > hi) {
                fprintf(stderr, "stmbench: %s '%s' is out of range (allowed: %ld..%ld)\n",
                        argv[i], argv[i + 1], lo, hi);
                return 2;
            }
            if (strcmp(argv[i], "--threads") == 0)
                threads = (int)v;
            else
                work = (int)v;
            i++;
            continue;
        }
        int took = take_pin(argc, argv, &i, &pol);
        if (took < 0)
            return 2;
        if (took)
            continue;
        fprintf(stderr, "stmbench: --log-floor takes only --threads N, --pin P and --work W, "
                        "not '%s'\n", argv[i]);
        return 2;
    }
    struct pin_plan plan;
    char err[256];
    if (pin_plan_make(&plan, (enum pin_policy)pol, threads, err, sizeof err) != 0) {
        fprintf(stderr, "stmbench: --log-floor: %s\n", err);
        return 3;
    }
    struct floor_run *run = setup_alloc(sizeof *run, "--log-floor", &plan);
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int line_transfer_main(int argc, char **argv)
{
    int pol = PIN_COMPACT;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--line-transfer") == 0)
            continue;
        int took = take_pin(argc, argv, &i, &pol);
        if (took < 0)
            return 2;
        if (took)
            continue;
        fprintf(stderr, "stmbench: --line-transfer takes only --pin P, not '%s'\n", argv[i]);
        return 2;
    }
    struct pin_plan plan;
    char err[256];
    if (pin_plan_make(&plan, (enum pin_policy)pol, 2, err, sizeof err) != 0) {
        fprintf(stderr, "stmbench: --line-transfer: %s\n", err);
        return 3;
    }
    int npu = hwloc_get_nbobjs_by_type(plan.topo, HWLOC_OBJ_PU);
    if (npu < 2) {
        fprintf(stderr, "stmbench: --line-transfer needs two processing units; hwloc sees %d\n",
                npu);
        pin_plan_free(&plan);
        return 3;
    }
    if (pol != PIN_NONE && plan.os_index[0] == plan.os_index[1]) {
        fprintf(stderr, "stmbench: --line-transfer: --pin %s puts both threads on PU %d\n",
                pin_name((enum pin_policy)pol), plan.os_index[0]);
        pin_plan_free(&plan);
        return 3;
    }
    struct xfer *x = setup_alloc(sizeof *x, "--line-transfer", &plan);
    if (!x)
        return 3;
    atomic_init(&x->turn, 0);
    atomic_init(&x->stop, 0);
    x->plan = &plan;
    int status = 3;
    pthread_t t;
    if (pin_bind_self(&plan, 0) != 0) {
        fprintf(stderr, "stmbench: --line-transfer: cannot bind to PU %d\n", plan.os_index[0]);
        goto out;
    }
    if (pthread_create(&t, NULL, partner, x) != 0) {
        fprintf(stderr, "stmbench: --line-transfer: cannot start a thread\n");
        goto out;
    }
    double ns[TRIALS];
    int ok = 1;
    long turn = 0;
    for (int k = 0; k < TRIALS && ok; k++) {
        uint64_t t0 = now_ns();
        for (long i = 0; i < ROUNDS; i++, turn += 2) {
            if (wait_turn(x, turn, 1) != 0) {
                ok = 0;
                break;
            }
            /* release: pairs with the acquire load in wait_turn */
            atomic_store_explicit(&x->turn, turn + 1, memory_order_release);
        }
        ns[k] = (double)(now_ns() - t0) / (2.0 * ROUNDS);
    }
    if (ok && wait_turn(x, turn, 1) != 0) /* the partner's last hand-off */
        ok = 0;
    if (!ok)
        /* relaxed: see partner */
        atomic_store_explicit(&x->stop, 1, memory_order_relaxed);
    pthread_join(t, NULL);
    if (x->bind_failed) {
        fprintf(stderr, "stmbench: --line-transfer: cannot bind to PU %d\n", plan.os_index[1]);
        goto out;
    }
    if (!ok) {
        fprintf(stderr, "stmbench: --line-transfer: no hand-off for 10 s (do both threads "
                        "share one PU?)\n");
        goto out;
    }
    qsort(ns, TRIALS, sizeof ns[0], cmp_double);
    char pus[32] = "unbound";
    if (pol != PIN_NONE)
        snprintf(pus, sizeof pus, "%d,%d", plan.os_index[0], plan.os_index[1]);
    printf("line_transfer_ns=%.1f min_ns=%.1f max_ns=%.1f trials=%d round_trips=%ld "
           "pus=%s pin=%s\n",
           ns[TRIALS / 2], ns[0], ns[TRIALS - 1], TRIALS, ROUNDS, pus,
           pin_name((enum pin_policy)pol));
    status = 0;
out:
    free(x);
    pin_plan_free(&plan);
    return status;
}
