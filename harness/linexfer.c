/*
 * harness/linexfer.c - `stmbench --line-transfer [--pin P]`: how long one cache line
 * takes to move from one core to another on this machine, now.
 *
 * Why: every cross-thread figure of a sitting (a commit that links after another
 * thread's entry, a lock another core took last) is a few of these transfers, and on a
 * virtual machine their cost changes between sittings several times over (the two vCPUs
 * may sit on one core complex or on two; the figures of the sittings are in
 * docs/figures.md and results/). `make scaling` records it before each round, so that a
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
 * Output (stdout, one line): line_transfer_ns=<median> min_ns=<m> max_ns=<M>
 * trials=<n> round_trips=<r> pus=<a>,<b> (unbound with --pin none) pin=<policy>. Exit 0; 2 on bad usage; 3 when
 * the machine has fewer than two PUs, binding fails, or a trial makes no progress for
 * 10 s (the two threads share one PU).
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

#define TRIALS 7
#define ROUNDS 100000L          /* round trips per trial: a fraction of a second */
#define STALL_NS 10000000000ull /* a trial without progress for 10 s: give up */

struct xfer {
    _Alignas(64) _Atomic long turn; /* alone on its line */
    char pad[64 - sizeof(long)];
    _Atomic int stop;               /* the measuring thread gave up: the other leaves */
    const struct pin_plan *plan;
    int bind_failed;
};

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
                uint64_t t = probe_now_ns();
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The flags of --line-transfer into *pol: 0, or the exit status 2. */
static int xfer_args(int argc, char **argv, int *pol)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--line-transfer") == 0)
            continue;
        int took = probe_take_pin(argc, argv, &i, pol);
        if (took < 0)
            return 2;
        if (took)
            continue;
        fprintf(stderr, "stmbench: --line-transfer takes only --pin P, not '%s'\n", argv[i]);
        return 2;
    }
    return 0;
}

/* The placement of the two threads on two PUs: 0, or the exit status 3 (the plan
 * freed). */
static int xfer_plan(struct pin_plan *plan, int pol)
{
    char err[256];
    if (pin_plan_make(plan, (enum pin_policy)pol, 2, err, sizeof err) != 0) {
        fprintf(stderr, "stmbench: --line-transfer: %s\n", err);
        return 3;
    }
    int npu = hwloc_get_nbobjs_by_type(plan->topo, HWLOC_OBJ_PU);
    if (npu < 2) {
        fprintf(stderr, "stmbench: --line-transfer needs two processing units; hwloc sees %d\n",
                npu);
        pin_plan_free(plan);
        return 3;
    }
    if (pol != PIN_NONE && plan->os_index[0] == plan->os_index[1]) {
        fprintf(stderr, "stmbench: --line-transfer: --pin %s puts both threads on PU %d\n",
                pin_name((enum pin_policy)pol), plan->os_index[0]);
        pin_plan_free(plan);
        return 3;
    }
    return 0;
}

/* The measuring thread's TRIALS trials (ns: each one's time per transfer), then the
 * partner's last hand-off. 1, or 0 when a hand-off stalled (the partner told to stop). */
static int xfer_trials(struct xfer *x, double *ns)
{
    int ok = 1;
    long turn = 0;
    for (int k = 0; k < TRIALS && ok; k++) {
        uint64_t t0 = probe_now_ns();
        for (long i = 0; i < ROUNDS; i++, turn += 2) {
            if (wait_turn(x, turn, 1) != 0) {
                ok = 0;
                break;
            }
            /* release: pairs with the acquire load in wait_turn */
            atomic_store_explicit(&x->turn, turn + 1, memory_order_release);
        }
        ns[k] = (double)(probe_now_ns() - t0) / (2.0 * ROUNDS);
    }
    if (ok && wait_turn(x, turn, 1) != 0) /* the partner's last hand-off */
        ok = 0;
    if (!ok)
        /* relaxed: see partner */
        atomic_store_explicit(&x->stop, 1, memory_order_relaxed);
    return ok;
}

int line_transfer_main(int argc, char **argv)
{
    int pol = PIN_COMPACT;
    if (xfer_args(argc, argv, &pol) != 0)
        return 2;
    struct pin_plan plan;
    if (xfer_plan(&plan, pol) != 0)
        return 3;
    struct xfer *x = probe_alloc(sizeof *x, "--line-transfer", &plan);
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
    int ok = xfer_trials(x, ns);
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
