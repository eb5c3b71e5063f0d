/*
 * harness/run.c - one run of stmbench (the command line is checked: cli.c): the
 * runtime's and the workload's setup, the worker threads and their start gate, the
 * timing, the check and the teardown; what the run records is in record.c.
 *
 * Order of events in a run (each step only when every earlier one succeeded):
 *   1. (cli.c) parse and check every flag and knob, the results paths (without creating
 *      or changing anything), then the workload's own validate: any problem -> exit 2;
 *   2. rt->init; main enters as tid 0, builds the workload (setup), leaves -> exit 3;
 *   3. N workers are created; each binds itself to its PU, reports ready and waits at
 *      the start gate; the gate opens when all are ready; only then does a worker
 *      enter the runtime (the GIL blocks in enter) and run its loop;
 *   4. main times the run (--duration) or waits for the op targets (--ops); SIGINT
 *      sets the stop flag either way; join. Each worker accounts its own time from the
 *      gate to the end of its loop (runtime/timeacct.h) into its statistics;
 *   5. main enters as tid 0 again: check, teardown, leave; rt->fini;
 *   6. (record.c) the CSV row, the conflict log, the context JSON, the summary line.
 *
 * Concurrency invariants: the wl_thread array is written only by its own worker
 * between the gate and the join, and read by main only after pthread_join (which
 * orders them). The stop flag is a hint read relaxed by workers (WL_LOOP); a late view
 * costs one more block. The start gate is a mutex + condition variable rather than a
 * pthread barrier so that a failed pthread_create can still release the threads
 * already started.
 */
#include "harness/cli.h"
#include "harness/conflicts.h"
#include "runtime/timeacct.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_int cli_stop;

static void cli_on_sigint(int sig)
{
    (void)sig;
    /* relaxed: a hint for WL_LOOP and the timer; nothing is published with it. */
    atomic_store_explicit(&cli_stop, 1, memory_order_relaxed);
}

struct cli_worker {
    pthread_t th;
    struct cli_run *run;
    int tid;
    int bind_failed;
    int enter_failed;
    char err[200];
};

static void *cli_worker_main(void *arg)
{
    struct cli_worker *w = arg;
    struct cli_run *r = w->run;
    w->bind_failed = pin_bind_self(&r->plan, w->tid) != 0;
    pthread_mutex_lock(&r->gate_mu);
    r->ready++;
    pthread_cond_broadcast(&r->gate_cv);
    while (!r->open)
        pthread_cond_wait(&r->gate_cv, &r->gate_mu);
    pthread_mutex_unlock(&r->gate_mu);
    if (w->bind_failed)
        return NULL;
    /* The thread's time (runtime/timeacct.h) runs from here, the gate, to the stop:
     * a GIL thread's wait in thread_enter is in it. */
    ta_thread_start();
    if (r->rt->thread_enter(w->tid, w->err, sizeof w->err) != 0) {
        w->enter_failed = 1;
        return NULL;
    }
    r->wl->thread_run(r->ctx, &r->threads[w->tid]);
    ta_thread_stop(&r->threads[w->tid].stats);
    r->rt->thread_exit(&r->threads[w->tid].stats);
    return NULL;
}

static uint64_t cli_splitmix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void cli_sleep_until(uint64_t deadline)
{
    for (;;) {
        /* relaxed: SIGINT hint */
        if (atomic_load_explicit(&cli_stop, memory_order_relaxed))
            return;
        uint64_t now = sync_now_ns();
        if (now >= deadline)
            return;
        uint64_t d = deadline - now;
        if (d > 20000000u)
            d = 20000000u;   /* wake every 20 ms to notice SIGINT */
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)d};
        nanosleep(&ts, NULL);
    }
}

/* Step 2: the placement, the runtime, the workload's data. 0, or 3 with nothing left
 * to undo. */
static int run_setup(struct cli_run *r, const struct wl_args *args)
{
    const struct cli_opts *o = r->o;
    const struct sync_runtime *rt = r->rt;
    char err[CLI_ERR] = "";
    if (pin_plan_make(&r->plan, (enum pin_policy)o->pin, r->n, err, sizeof err) != 0) {
        cli_err("cannot place %d threads: %s", r->n, err);
        return 3;
    }
    struct sync_config cfg = {
        .nthreads = r->n, .seed = o->seed,
        .heap_bytes = (uint64_t)o->heap_mb << 20, .gil_interval_us = (uint64_t)o->gil_us,
        .htm_retries = (int)o->htm_retries,
    };
    if (rt->init(&cfg, err, sizeof err) != 0) {
        cli_err("runtime %s could not be set up: %s", rt->name, err);
        pin_plan_free(&r->plan);
        return 3;
    }
    if (rt->thread_enter(0, err, sizeof err) != 0) {
        cli_err("runtime %s: the main thread could not enter: %s", rt->name, err);
        rt->fini();
        pin_plan_free(&r->plan);
        return 3;
    }
    r->ctx = r->wl->setup(args, err, sizeof err);
    rt->thread_exit(NULL);
    if (!r->ctx) {
        cli_err("workload %s could not be set up under %s: %s", r->wl->name, rt->name, err);
        rt->fini();
        pin_plan_free(&r->plan);
        return 3;
    }
    return 0;
}

/* The threads' records, each with its seed, stop flag and op target. 0, or 3 (out of
 * memory). */
static int run_alloc(struct cli_run *r)
{
    const struct cli_opts *o = r->o;
    int n = r->n;
    r->threads = aligned_alloc(SYNC_CACHELINE, (size_t)n * sizeof *r->threads);
    r->workers = calloc((size_t)n, sizeof *r->workers);
    r->block_hist = calloc(1, sizeof *r->block_hist);
    r->len_hist = calloc(1, sizeof *r->len_hist);
    if (r->threads)   /* zeroed first: run_free frees their statistics whatever fails */
        memset(r->threads, 0, (size_t)n * sizeof *r->threads);
    if (!r->threads || !r->workers || !r->block_hist || !r->len_hist) {
        cli_err("out of memory for %d threads", n);
        return 3;
    }
    r->txlen_shared = wl_txlen_shared_new(n);   /* --ops-per-tx / --switch-interval auto */
    if (!r->txlen_shared) {
        cli_err("out of memory for %d threads", n);
        return 3;
    }
    atomic_store_explicit(&cli_stop, 0, memory_order_relaxed);   /* before any thread exists */
    for (int i = 0; i < n; i++) {
        struct wl_thread *t = &r->threads[i];
        t->tid = i;
        t->nthreads = n;
        t->rng = cli_splitmix(o->seed ^ cli_splitmix((uint64_t)i + 1));
        if (t->rng == 0)
            t->rng = 0x2545F4914F6CDD1Dull;
        t->stop = &cli_stop;
        t->txs = r->txlen_shared;
        if (o->ops)
            t->ops_target = o->ops / (uint64_t)n + ((uint64_t)i < o->ops % (uint64_t)n);
    }
    return 0;
}

/* Step 3: creates the workers (err: why one could not be; *created: how many were),
 * waits until each is at the gate, and opens it at r->t0; a failed creation or binding
 * abandons the run. Returns the first worker that could not bind, or -1. */
static int run_start(struct cli_run *r, int *created, char *err, size_t errlen)
{
    pthread_mutex_init(&r->gate_mu, NULL);
    pthread_cond_init(&r->gate_cv, NULL);
    for (; *created < r->n; ++*created) {
        struct cli_worker *w = &r->workers[*created];
        w->run = r;
        w->tid = *created;
        int e = pthread_create(&w->th, NULL, cli_worker_main, w);
        if (e != 0) {
            snprintf(err, errlen, "cannot create thread %d: %s", *created, strerror(e));
            break;
        }
    }
    pthread_mutex_lock(&r->gate_mu);
    while (r->ready < *created)
        pthread_cond_wait(&r->gate_cv, &r->gate_mu);
    int bind_failed = -1;
    for (int i = 0; i < *created; i++)
        if (r->workers[i].bind_failed && bind_failed < 0)
            bind_failed = i;
    if (*created < r->n || bind_failed >= 0)
        atomic_store_explicit(&cli_stop, 1, memory_order_relaxed);   /* abandon the run */
    /* The run starts as the gate opens (read before: a worker may run before main
     * is scheduled again, and its time must lie within the run's). */
    r->t0 = sync_now_ns();
    r->open = 1;
    pthread_cond_broadcast(&r->gate_cv);
    pthread_mutex_unlock(&r->gate_mu);
    return bind_failed;
}

/* Steps 3 and 4: the workers run from the gate to the stop, timed. 0, or 3 when a worker
 * could not be created, bound or entered. */
static int run_threads(struct cli_run *r)
{
    const struct cli_opts *o = r->o;
    char err[CLI_ERR] = "";
    int created = 0, status = 0;
    struct sigaction sa, old_sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cli_on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_sa);

    int bind_failed = run_start(r, &created, err, sizeof err);
    if (!o->ops)
        cli_sleep_until(r->t0 + (uint64_t)(o->duration * 1e9));
    if (!o->ops || created < r->n || bind_failed >= 0)
        atomic_store_explicit(&cli_stop, 1, memory_order_relaxed);   /* hint, see top */
    for (int i = 0; i < created; i++)
        pthread_join(r->workers[i].th, NULL);
    r->t1 = sync_now_ns();
    sigaction(SIGINT, &old_sa, NULL);
    pthread_cond_destroy(&r->gate_cv);
    pthread_mutex_destroy(&r->gate_mu);

    if (created < r->n) {
        cli_err("%s", err);
        status = 3;
    } else if (bind_failed >= 0) {
        cli_err("cannot bind thread %d to PU %d (--pin %s)", bind_failed,
                r->plan.os_index[bind_failed], pin_name((enum pin_policy)o->pin));
        status = 3;
    }
    for (int i = 0; i < created && status == 0; i++)
        if (r->workers[i].enter_failed) {
            cli_err("runtime %s: thread %d could not enter: %s", r->rt->name, i,
                    r->workers[i].err);
            status = 3;
        }
    return status;
}

/* Step 5, whatever happened since the setup: the check (when *status is 0, the run
 * complete), the conflicts' descriptions, the teardown, rt->fini. *status becomes 3
 * when main cannot enter. Returns whether the check passed (1 when not made). */
static int run_check(struct cli_run *r, int *status)
{
    const struct sync_runtime *rt = r->rt;
    const struct workload *wl = r->wl;
    int check_pass = 1;
    char msg[CLI_ERR] = "", err[CLI_ERR] = "";
    if (rt->thread_enter(0, err, sizeof err) != 0) {
        cli_err("runtime %s: the main thread could not enter for the check: %s", rt->name, err);
        if (*status == 0)
            *status = 3;
    } else {
        if (*status == 0 && wl->check(r->ctx, r->threads, r->n, msg, sizeof msg) != 0) {
            check_pass = 0;
            cli_err("check failed: %s/%s: %s", wl->name, rt->name, msg);
        }
        /* conflict analysis: the workload names the rows' locations and objects while
         * its data still exists */
        if (*status == 0 && (r->o->conflicts || r->o->report))
            for (int i = 0; i < r->n; i++)
                conflicts_describe(wl, r->ctx, &r->threads[i].stats);
        wl->teardown(r->ctx);
        rt->thread_exit(NULL);
    }
    rt->fini();
    return check_pass;
}

static void run_free(struct cli_run *r)
{
    conflicts_release();
    wl_txlen_shared_free(r->txlen_shared);
    free(r->workers);
    free(r->block_hist);
    free(r->len_hist);
    if (r->threads)
        for (int i = 0; i < r->n; i++)
            sync_stats_free(&r->threads[i].stats);
    free(r->threads);
    pin_plan_free(&r->plan);
}

int cli_run(const struct cli_opts *o, const struct sync_runtime *rt,
            const struct workload *wl, const struct wl_args *args, unsigned autos)
{
    struct cli_run r = {.o = o, .rt = rt, .wl = wl, .n = (int)o->threads};
    int status = run_setup(&r, args);
    if (status != 0)
        return status;
    status = run_alloc(&r);
    if (status == 0)
        status = run_threads(&r);
    int check_pass = run_check(&r, &status);
    if (status == 0)
        status = cli_record(&r, args, autos, check_pass);
    run_free(&r);
    return status;
}
