/*
 * harness/cli.c - stmbench_main: the command line (docs/contract.md), the run, the results.
 *
 * Order of events in a run (each step only when every earlier one succeeded):
 *   1. parse and check every flag and knob, the results paths (without creating or
 *      changing anything), then the workload's own validate: any problem -> exit 2;
 *   2. rt->init; main enters as tid 0, builds the workload (setup), leaves -> exit 3;
 *   3. N workers are created; each binds itself to its PU, reports ready and waits at
 *      the start gate; the gate opens when all are ready; only then does a worker
 *      enter the runtime (the GIL blocks in enter) and run its loop;
 *   4. main times the run (--duration) or waits for the op targets (--ops); SIGINT
 *      sets the stop flag either way; join. Each worker accounts its own time from the
 *      gate to the end of its loop (runtime/timeacct.h) into its statistics;
 *   5. main enters as tid 0 again: check, teardown, leave; rt->fini;
 *   6. the CSV row, the conflict log, the context JSON, the summary line.
 *
 * Concurrency invariants: the wl_thread array is written only by its own worker
 * between the gate and the join, and read by main only after pthread_join (which
 * orders them). The stop flag is a hint read relaxed by workers (WL_LOOP); a late view
 * costs one more block. The start gate is a mutex + condition variable rather than a
 * pthread barrier so that a failed pthread_create can still release the threads
 * already started.
 */
#include "harness/conflicts.h"
#include "harness/harness.h"
#include "harness/pin.h"
#include "harness/registry.h"
#include "harness/results.h"
#include "runtime/sync.h"
#include "runtime/timeacct.h"
#include "workloads/workload.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef STMBENCH_GIT_REV
#define STMBENCH_GIT_REV "unknown"
#endif

enum { CLI_MAX_THREADS = 4096, CLI_MAX_PENDING = 64, CLI_ERR = 512 };
#define CLI_MAX_DURATION 31536000.0      /* one year, in seconds */
#define CLI_MAX_OPS_PER_TX 1000000L
#define CLI_MAX_HEAP_MB (1L << 20)        /* 1 TiB per segment */
#define CLI_MAX_GIL_US 60000000L          /* one minute */
#define CLI_MAX_HTM_RETRIES 1000L         /* HTM_MAX_RETRIES */

struct cli_opts {
    const char *runtime, *workload;
    long threads;
    double duration;
    uint64_t ops;
    uint64_t seed;
    int pin;
    long ops_per_tx;                  /* WL_LEN_AUTO for `auto` */
    const char *csv, *conflicts;
    long heap_mb, gil_us, htm_retries;
    int report;                       /* --report: the conflict summary at the end */
    int seen[16];                     /* which general flags were given (duplicates) */
    struct { const char *name, *value; } pending[CLI_MAX_PENDING];
    int npending;
};

static void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void cli_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sync_vmessage(fmt, ap);
    va_end(ap);
}

/* Strict base-10 integer: optional '-', digits, nothing else. 0 or -1. */
static int cli_parse_long(const char *s, long *out)
{
    if (!s || !*s || !(*s == '-' || (*s >= '0' && *s <= '9')))
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || end == s)
        return -1;
    if (errno == ERANGE)
        return -2;   /* all digits, but beyond a long */
    *out = v;
    return 0;
}

/* A long in [min, max] for flag `flag`; prints the error. */
static int cli_int_flag(const char *flag, const char *s, long min, long max, long *out)
{
    long v = 0;
    int rc = cli_parse_long(s, &v);
    if (rc == -1) {
        cli_err("%s '%s' is not an integer (allowed: %ld..%ld)", flag, s, min, max);
        return -1;
    }
    if (rc == -2 || v < min || v > max) {
        cli_err("%s %s is out of range (allowed: %ld..%ld)", flag, s, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

static int cli_u64_flag(const char *flag, const char *s, uint64_t min, uint64_t *out)
{
    if (!s || !*s || *s < '0' || *s > '9') {
        cli_err("%s '%s' is not a non-negative integer (allowed: %llu..%llu)", flag, s,
                (unsigned long long)min, (unsigned long long)UINT64_MAX);
        return -1;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0') {
        cli_err("%s '%s' is not an integer in %llu..%llu", flag, s, (unsigned long long)min,
                (unsigned long long)UINT64_MAX);
        return -1;
    }
    if (v < min) {
        cli_err("%s %s is out of range (allowed: %llu..%llu)", flag, s, (unsigned long long)min,
                (unsigned long long)UINT64_MAX);
        return -1;
    }
    *out = v;
    return 0;
}

static int cli_duration(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = (s && *s && (*s == '.' || *s == '-' || (*s >= '0' && *s <= '9')))
                   ? strtod(s, &end) : NAN;
    if (isnan(v) || errno != 0 || *end != '\0') {
        cli_err("--duration '%s' is not a number of seconds (allowed: > 0 and <= %.0f)", s,
                CLI_MAX_DURATION);
        return -1;
    }
    if (!(v > 0) || v > CLI_MAX_DURATION) {
        cli_err("--duration %s is out of range (allowed: > 0 and <= %.0f seconds)", s,
                CLI_MAX_DURATION);
        return -1;
    }
    *out = v;
    return 0;
}

static void cli_list(void)
{
    const struct sync_runtime *rt;
    for (int i = 0; (rt = sync_runtime_nth(i)); i++)
        printf("runtime %s\n", rt->name);
    for (int i = 0; i < registry_count(); i++)
        if (registry_any(i))
            printf("workload %s\n", registry_name(i));
}

static void cli_help(void)
{
    printf(
        "usage: stmbench --runtime R --workload W [--threads N] [--duration SECONDS | --ops N]\n"
        "                [--seed S] [--pin compact|scatter|none] [--ops-per-tx K]\n"
        "                [--csv FILE] [--conflicts FILE] [--heap-mb N] [--gil-interval-us N]\n"
        "                [--htm-retries R] [--report] [workload knobs...]\n"
        "       stmbench --list      runtimes and workloads, one per line\n"
        "       stmbench --line-transfer [--pin P]\n"
        "                            the one-way time of a cache line between the PUs of\n"
        "                            threads 0 and 1 (median of 7 trials), one line\n"
        "       stmbench --log-floor [--threads N] [--pin P] [--work W]\n"
        "                            appends per second to one shared log that every\n"
        "                            thread reads, W multiplies of work each (default\n"
        "                            40), at 1 and at N threads (default 2): the floor of\n"
        "                            a commit that appends to one log, one line\n"
        "       stmbench --help\n\n"
        "options:\n"
        "  --runtime R           the synchronisation runtime (below)\n"
        "  --workload W          the workload (below)\n"
        "  --threads N           worker threads, 1..%d (default 1; seq allows 1)\n"
        "  --duration SECONDS    run time, > 0 (default 1; not with --ops)\n"
        "  --ops N               run exactly N workload operations in all, split evenly\n"
        "                        across the threads (N >= threads; not with --duration)\n"
        "  --seed S              random seed, 0..2^64-1 (default 1)\n"
        "  --pin P               compact: thread i on the i-th PU in hwloc order;\n"
        "                        scatter: across packages, caches, cores first;\n"
        "                        none: no binding (default compact)\n"
        "  --ops-per-tx K        workload operations per atomic block, 1..%ld (default 1),\n"
        "                        or auto: adaptive per thread in 1..%ld under stm, itm\n"
        "                        and htm (grows after commits, halves after aborts);\n"
        "                        other runtimes run the default (params say so)\n"
        "  --csv FILE            append one result row (header if the file is new or\n"
        "                        empty); machine context goes to FILE's .context.json\n"
        "  --conflicts FILE      append one row per aborted attempt and per wait for a\n"
        "                        lock another thread held (gil, mutex, locks)\n"
        "  --report              print the top %d conflict pairs by time lost and the top\n"
        "                        contended locks by time waited at the end (both sides'\n"
        "                        locations, the object or lock, advice)\n"
        "  --heap-mb N           stm: shared heap per segment in MiB, 1..%ld\n"
        "                        (default: the runtime's own)\n"
        "  --gil-interval-us N   gil: switch interval in microseconds, 1..%ld\n"
        "                        (default 5000, as CPython)\n"
        "  --htm-retries R       htm: hardware attempts of a block before it takes the\n"
        "                        GIL, 1..%ld (default 5; a capacity abort takes it at once)\n\n"
        "exit status: 0 ok, 1 a check failed, 2 bad usage or input, 3 runtime setup failed\n\n"
        "runtimes:\n",
        CLI_MAX_THREADS, CLI_MAX_OPS_PER_TX, WL_TXLEN_MAX_OPS, CONFLICTS_REPORT_TOP,
        CLI_MAX_HEAP_MB, CLI_MAX_GIL_US,
        CLI_MAX_HTM_RETRIES);
    const struct sync_runtime *rt;
    for (int i = 0; (rt = sync_runtime_nth(i)); i++)
        printf("  %-8s %s\n", rt->name, rt->summary);
    printf("\nworkloads and their knobs:\n");
    for (int i = 0; i < registry_count(); i++) {
        const struct workload *w = registry_any(i);
        if (!w)
            continue;
        printf("  %-8s %s\n", w->name, w->summary ? w->summary : "");
        for (int k = 0; k < w->nknobs; k++) {
            const struct wl_knob *kn = &w->knobs[k];
            if (kn->type == WL_KNOB_INT)
                printf("    --%-18s %s (default %ld, %ld..%ld%s)\n", kn->name,
                       kn->help ? kn->help : "", kn->def, kn->min, kn->max,
                       w->auto_knob == k + 1 ? " or auto" : "");
            else
                printf("    --%-18s %s (default '%s')\n", kn->name, kn->help ? kn->help : "",
                       kn->def_str ? kn->def_str : "");
        }
    }
}

static const char *const cli_general[] = {
    "runtime", "workload", "threads", "duration", "ops", "seed", "pin", "ops-per-tx",
    "csv", "conflicts", "heap-mb", "gil-interval-us", "htm-retries", NULL,
};

/* Parses argv into o. 0 ok, -1 error (already printed). */
static int cli_parse(int argc, char **argv, struct cli_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
            cli_err("unexpected argument '%s' (options start with --; see --help)", a);
            return -1;
        }
        const char *name = a + 2;
        if (strcmp(name, "report") == 0) {    /* the one flag without a value */
            if (o->report++) {
                cli_err("option %s given twice", a);
                return -1;
            }
            continue;
        }
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v || (v[0] == '-' && v[1] == '-')) {
            cli_err("option %s needs a value%s", a, v ? " (got another option)" : "");
            return -1;
        }
        i++;
        int g = -1;
        for (int k = 0; cli_general[k]; k++)
            if (strcmp(cli_general[k], name) == 0)
                g = k;
        if (g < 0) {
            if (o->npending == CLI_MAX_PENDING) {
                cli_err("too many workload options (at most %d)", CLI_MAX_PENDING);
                return -1;
            }
            o->pending[o->npending].name = name;
            o->pending[o->npending].value = v;
            o->npending++;
            continue;
        }
        if (o->seen[g]++) {
            cli_err("option %s given twice", a);
            return -1;
        }
        long l;
        switch (g) {
        case 0: o->runtime = v; break;
        case 1: o->workload = v; break;
        case 2:
            if (cli_int_flag("--threads", v, 1, CLI_MAX_THREADS, &o->threads) != 0)
                return -1;
            break;
        case 3:
            if (cli_duration(v, &o->duration) != 0)
                return -1;
            break;
        case 4:
            if (cli_u64_flag("--ops", v, 1, &o->ops) != 0)
                return -1;
            break;
        case 5:
            if (cli_u64_flag("--seed", v, 0, &o->seed) != 0)
                return -1;
            break;
        case 6:
            if ((o->pin = pin_parse(v)) < 0) {
                cli_err("--pin '%s' is not a placement (allowed: compact, scatter, none)", v);
                return -1;
            }
            break;
        case 7:
            if (strcmp(v, "auto") == 0) {
                o->ops_per_tx = WL_LEN_AUTO;
            } else if (cli_parse_long(v, &l) == -1) {
                cli_err("--ops-per-tx '%s' is neither an integer nor auto (allowed: 1..%ld, "
                        "auto)", v, CLI_MAX_OPS_PER_TX);
                return -1;
            } else if (cli_int_flag("--ops-per-tx", v, 1, CLI_MAX_OPS_PER_TX, &o->ops_per_tx) != 0) {
                return -1;
            }
            break;
        case 8: o->csv = v; break;
        case 9: o->conflicts = v; break;
        case 10:
            if (cli_int_flag("--heap-mb", v, 1, CLI_MAX_HEAP_MB, &l) != 0)
                return -1;
            o->heap_mb = l;
            break;
        case 11:
            if (cli_int_flag("--gil-interval-us", v, 1, CLI_MAX_GIL_US, &l) != 0)
                return -1;
            o->gil_us = l;
            break;
        case 12:
            if (cli_int_flag("--htm-retries", v, 1, CLI_MAX_HTM_RETRIES, &l) != 0)
                return -1;
            o->htm_retries = l;
            break;
        }
    }
    return 0;
}

/* The workload that declares knob `name`, other than `self`; NULL if none. */
static const struct workload *cli_knob_owner(const char *name, const struct workload *self)
{
    for (int i = 0; i < registry_count(); i++) {
        const struct workload *w = registry_any(i);
        if (!w || (self && strcmp(w->name, self->name) == 0))
            continue;
        for (int k = 0; k < w->nknobs; k++)
            if (strcmp(w->knobs[k].name, name) == 0)
                return w;
    }
    return NULL;
}

static void cli_knob_names(const struct workload *w, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < w->nknobs && len < n; k++)
        len += (size_t)snprintf(buf + len, n - len, "%s--%s", k ? ", " : "", w->knobs[k].name);
    if (w->nknobs == 0)
        snprintf(buf, n, "none");
}

/* Resolves the workload knobs of o against w's table into a. */
static int cli_knobs(const struct cli_opts *o, const struct workload *w, struct wl_args *a)
{
    int set[WL_MAX_KNOBS] = {0};
    char names[256];
    for (int k = 0; k < w->nknobs && k < WL_MAX_KNOBS; k++) {
        a->ival[k] = w->knobs[k].def;
        a->sval[k] = w->knobs[k].def_str;
    }
    for (int p = 0; p < o->npending; p++) {
        const char *name = o->pending[p].name, *v = o->pending[p].value;
        int k = -1;
        for (int j = 0; j < w->nknobs && j < WL_MAX_KNOBS; j++)
            if (strcmp(w->knobs[j].name, name) == 0)
                k = j;
        if (k < 0) {
            const struct workload *other = cli_knob_owner(name, w);
            cli_knob_names(w, names, sizeof names);
            if (other)
                cli_err("--%s is a knob of workload %s, not of %s (%s's knobs: %s)", name,
                        other->name, w->name, w->name, names);
            else
                cli_err("unknown option --%s (see --help; %s's knobs: %s)", name, w->name, names);
            return -1;
        }
        if (set[k]++) {
            cli_err("option --%s given twice", name);
            return -1;
        }
        const struct wl_knob *kn = &w->knobs[k];
        char flag[80];
        snprintf(flag, sizeof flag, "--%s", kn->name);
        if (kn->type == WL_KNOB_INT) {
            long tmp;
            if (w->auto_knob == k + 1 && strcmp(v, "auto") == 0) {
                a->ival[k] = WL_LEN_AUTO;
            } else if (w->auto_knob == k + 1 && cli_parse_long(v, &tmp) == -1) {
                cli_err("%s '%s' is neither an integer nor auto (allowed: %ld..%ld, auto)",
                        flag, v, kn->min, kn->max);
                return -1;
            } else if (cli_int_flag(flag, v, kn->min, kn->max, &a->ival[k]) != 0)
                return -1;
        } else {
            if (strpbrk(v, ",;\n\r\"") || *v == '\0') {
                cli_err("%s '%s' is not allowed: the value must be non-empty and contain no "
                        "comma, semicolon, quote or newline", flag, v);
                return -1;
            }
            a->sval[k] = v;
        }
    }
    return 0;
}

/* ---- the run ---- */

static atomic_int cli_stop;

static void cli_on_sigint(int sig)
{
    (void)sig;
    /* relaxed: a hint for WL_LOOP and the timer; nothing is published with it. */
    atomic_store_explicit(&cli_stop, 1, memory_order_relaxed);
}

struct cli_run {
    const struct sync_runtime *rt;
    const struct workload *wl;
    void *ctx;
    struct wl_thread *threads;
    struct pin_plan plan;
    pthread_mutex_t gate_mu;
    pthread_cond_t gate_cv;
    int ready, open;
};

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

/* Builds "key=value;...;ops_per_tx=K", then, when a length was `auto`, how it ran
 * (txlen=adaptive, or txlen=fixed_default in a runtime that never re-runs a block),
 * then the runtime's own settings (rt_params, may be NULL or empty). `autos` has a
 * bit per knob given as auto, and bit WL_MAX_KNOBS for --ops-per-tx auto. */
static char *cli_params(const struct workload *w, const struct wl_args *a,
                        const char *rt_params, unsigned autos)
{
    size_t cap = 96 + (rt_params ? strlen(rt_params) + 1 : 0);
    for (int k = 0; k < w->nknobs; k++)
        cap += strlen(w->knobs[k].name) + 32 +
               (w->knobs[k].type == WL_KNOB_STR && a->sval[k] ? strlen(a->sval[k]) : 0);
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t len = 0;
    for (int k = 0; k < w->nknobs && k < WL_MAX_KNOBS; k++) {
        if (w->knobs[k].type == WL_KNOB_INT && (autos & (1u << k)))
            len += (size_t)snprintf(s + len, cap - len, "%s=auto;", w->knobs[k].name);
        else if (w->knobs[k].type == WL_KNOB_INT)
            len += (size_t)snprintf(s + len, cap - len, "%s=%ld;", w->knobs[k].name, a->ival[k]);
        else
            len += (size_t)snprintf(s + len, cap - len, "%s=%s;", w->knobs[k].name,
                                    a->sval[k] ? a->sval[k] : "");
    }
    if (autos & (1u << WL_MAX_KNOBS))
        len += (size_t)snprintf(s + len, cap - len, "ops_per_tx=auto");
    else
        len += (size_t)snprintf(s + len, cap - len, "ops_per_tx=%ld", a->ops_per_tx);
    if (autos)
        len += (size_t)snprintf(s + len, cap - len, ";txlen=%s",
                                w->tx_adaptive ? "adaptive" : "fixed_default");
    if (rt_params && *rt_params)
        snprintf(s + len, cap - len, ";%s", rt_params);
    return s;
}

static int cli_run(const struct cli_opts *o, const struct sync_runtime *rt,
                   const struct workload *wl, const struct wl_args *args, unsigned autos)
{
    char err[CLI_ERR] = "";
    int n = (int)o->threads;
    int status = 0;
    struct cli_run r = {.rt = rt, .wl = wl};
    struct cli_worker *workers = NULL;
    struct sync_stats total;
    struct lat_hist *block_hist = NULL, *len_hist = NULL;
    struct wl_txlen_shared *txlen_shared = NULL;
    char *params = NULL, *cpus = NULL;
    int created = 0;
    memset(&total, 0, sizeof total);

    if (pin_plan_make(&r.plan, (enum pin_policy)o->pin, n, err, sizeof err) != 0) {
        cli_err("cannot place %d threads: %s", n, err);
        return 3;
    }
    struct sync_config cfg = {
        .nthreads = n, .seed = o->seed,
        .heap_bytes = (uint64_t)o->heap_mb << 20, .gil_interval_us = (uint64_t)o->gil_us,
        .htm_retries = (int)o->htm_retries,
    };
    if (rt->init(&cfg, err, sizeof err) != 0) {
        cli_err("runtime %s could not be set up: %s", rt->name, err);
        pin_plan_free(&r.plan);
        return 3;
    }
    if (rt->thread_enter(0, err, sizeof err) != 0) {
        cli_err("runtime %s: the main thread could not enter: %s", rt->name, err);
        rt->fini();
        pin_plan_free(&r.plan);
        return 3;
    }
    r.ctx = wl->setup(args, err, sizeof err);
    rt->thread_exit(NULL);
    if (!r.ctx) {
        cli_err("workload %s could not be set up under %s: %s", wl->name, rt->name, err);
        rt->fini();
        pin_plan_free(&r.plan);
        return 3;
    }

    r.threads = aligned_alloc(SYNC_CACHELINE, (size_t)n * sizeof *r.threads);
    workers = calloc((size_t)n, sizeof *workers);
    block_hist = calloc(1, sizeof *block_hist);
    len_hist = calloc(1, sizeof *len_hist);
    if (!r.threads || !workers || !block_hist || !len_hist) {
        cli_err("out of memory for %d threads", n);
        status = 3;
        goto teardown;
    }
    memset(r.threads, 0, (size_t)n * sizeof *r.threads);
    txlen_shared = wl_txlen_shared_new(n);   /* --ops-per-tx / --switch-interval auto */
    if (!txlen_shared) {
        cli_err("out of memory for %d threads", n);
        status = 3;
        goto teardown;
    }
    atomic_store_explicit(&cli_stop, 0, memory_order_relaxed);   /* before any thread exists */
    for (int i = 0; i < n; i++) {
        struct wl_thread *t = &r.threads[i];
        t->tid = i;
        t->nthreads = n;
        t->rng = cli_splitmix(o->seed ^ cli_splitmix((uint64_t)i + 1));
        if (t->rng == 0)
            t->rng = 0x2545F4914F6CDD1Dull;
        t->stop = &cli_stop;
        t->txs = txlen_shared;
        if (o->ops)
            t->ops_target = o->ops / (uint64_t)n + ((uint64_t)i < o->ops % (uint64_t)n);
    }

    struct sigaction sa, old_sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cli_on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_sa);

    pthread_mutex_init(&r.gate_mu, NULL);
    pthread_cond_init(&r.gate_cv, NULL);
    for (; created < n; created++) {
        workers[created].run = &r;
        workers[created].tid = created;
        int e = pthread_create(&workers[created].th, NULL, cli_worker_main, &workers[created]);
        if (e != 0) {
            snprintf(err, sizeof err, "cannot create thread %d: %s", created, strerror(e));
            break;
        }
    }
    pthread_mutex_lock(&r.gate_mu);
    while (r.ready < created)
        pthread_cond_wait(&r.gate_cv, &r.gate_mu);
    int bind_failed = -1;
    for (int i = 0; i < created; i++)
        if (workers[i].bind_failed && bind_failed < 0)
            bind_failed = i;
    if (created < n || bind_failed >= 0)
        atomic_store_explicit(&cli_stop, 1, memory_order_relaxed);   /* abandon the run */
    /* The run starts as the gate opens (read before: a worker may run before main
     * is scheduled again, and its time must lie within the run's). */
    uint64_t t0 = sync_now_ns();
    r.open = 1;
    pthread_cond_broadcast(&r.gate_cv);
    pthread_mutex_unlock(&r.gate_mu);
    if (!o->ops)
        cli_sleep_until(t0 + (uint64_t)(o->duration * 1e9));
    if (!o->ops || created < n || bind_failed >= 0)
        atomic_store_explicit(&cli_stop, 1, memory_order_relaxed);   /* hint, see top */
    for (int i = 0; i < created; i++)
        pthread_join(workers[i].th, NULL);
    uint64_t t1 = sync_now_ns();
    sigaction(SIGINT, &old_sa, NULL);
    pthread_cond_destroy(&r.gate_cv);
    pthread_mutex_destroy(&r.gate_mu);

    if (created < n) {
        cli_err("%s", err);
        status = 3;
    } else if (bind_failed >= 0) {
        cli_err("cannot bind thread %d to PU %d (--pin %s)", bind_failed,
                r.plan.os_index[bind_failed], pin_name((enum pin_policy)o->pin));
        status = 3;
    }
    for (int i = 0; i < created && status == 0; i++)
        if (workers[i].enter_failed) {
            cli_err("runtime %s: thread %d could not enter: %s", rt->name, i, workers[i].err);
            status = 3;
        }

teardown:;
    int check_pass = 1;
    char msg[CLI_ERR] = "";
    if (rt->thread_enter(0, err, sizeof err) != 0) {
        cli_err("runtime %s: the main thread could not enter for the check: %s", rt->name, err);
        if (status == 0)
            status = 3;
    } else {
        if (status == 0 && wl->check(r.ctx, r.threads, n, msg, sizeof msg) != 0) {
            check_pass = 0;
            cli_err("check failed: %s/%s: %s", wl->name, rt->name, msg);
        }
        /* conflict analysis: the workload names the rows' locations and objects while
         * its data still exists */
        if (status == 0 && (o->conflicts || o->report))
            for (int i = 0; i < n; i++)
                conflicts_describe(wl, r.ctx, &r.threads[i].stats);
        wl->teardown(r.ctx);
        rt->thread_exit(NULL);
    }
    rt->fini();
    if (status != 0)
        goto out;

    uint64_t ops = 0, blocks = 0, oalloc = 0, ofreed = 0;
    for (int i = 0; i < n; i++) {
        struct wl_thread *t = &r.threads[i];
        oalloc += t->objects_allocated;
        ofreed += t->objects_freed;
        if (t->failed) {
            check_pass = 0;
            cli_err("check failed: %s/%s: thread %d: %s", wl->name, rt->name, i, t->fail_msg);
        }
        ops += t->ops;
        blocks += t->blocks;
        lat_merge(block_hist, &t->block_hist);
        lat_merge(len_hist, &t->len_hist);
        sync_stats_merge(&total, &t->stats);
    }
    double secs = (double)(t1 - t0) / 1e9;
    params = cli_params(wl, args, rt->params ? rt->params() : NULL, autos);
    cpus = malloc((size_t)n * 12 + 1);
    if (!params || !cpus) {
        cli_err("out of memory");
        status = 3;
        goto out;
    }
    size_t cl = 0;
    cpus[0] = '\0';
    if (o->pin != PIN_NONE)
        for (int i = 0; i < n; i++)
            cl += (size_t)sprintf(cpus + cl, "%s%d", i ? ";" : "", r.plan.os_index[i]);

    struct results_row row = {
        .git_rev = STMBENCH_GIT_REV, .runtime = rt->name, .workload = wl->name,
        .params = params, .threads = n, .pin = pin_name((enum pin_policy)o->pin),
        .seed = o->seed, .duration_s = secs, .ops = ops,
        .ops_per_s = secs > 0 ? (double)ops / secs : 0, .commits = blocks,
        .stats = &total, .block_hist = block_hist, .check_pass = check_pass, .cpus = cpus,
        .ops_per_tx = args->ops_per_tx, .len_hist = len_hist,
        .objects_allocated = oalloc, .objects_freed = ofreed,
    };
    results_identify(&row);
    status = check_pass ? 0 : 1;
    if (o->csv) {
        if (results_append_csv(o->csv, &row, err, sizeof err) != 0) {
            cli_err("%s", err);
            status = 2;
        } else if (results_write_context(o->csv, err, sizeof err) != 0) {
            cli_err("warning: %s", err);   /* the row is written; context is a side file */
        }
    }
    if (o->conflicts && results_append_conflicts(o->conflicts, row.run_id, &total, err,
                                                 sizeof err) != 0) {
        cli_err("%s", err);
        status = 2;
    }
    if (o->conflicts && total.conflicts_stride > 1)
        cli_err("note: past %d rows a thread's conflict log is a sample (up to 1 abort or "
                "wait in %u kept, its `weight` column says how many it stands for): %llu "
                "aborts and waits, %zu rows", SYNC_CONFLICTS_CAP, total.conflicts_stride,
                (unsigned long long)total.conflicts_seen, total.nconflicts);
    printf("%s %s threads=%d ops=%llu time=%.3fs ops/s=%.0f commits=%llu aborts=%llu "
           "check=%s\n",
           rt->name, wl->name, n, (unsigned long long)ops, secs, row.ops_per_s,
           (unsigned long long)blocks, (unsigned long long)sync_stats_aborts(&total),
           check_pass ? "pass" : "fail");
    if (o->report)
        conflicts_report(stdout, &total, rt->name, wl->name, n, CONFLICTS_REPORT_TOP);
    fflush(stdout);

out:
    if (r.threads)
        for (int i = 0; i < n; i++)
            sync_stats_free(&r.threads[i].stats);
    sync_stats_free(&total);
    conflicts_release();
    free(r.threads);
    wl_txlen_shared_free(txlen_shared);
    free(workers);
    free(block_hist);
    free(len_hist);
    free(params);
    free(cpus);
    pin_plan_free(&r.plan);
    return status;
}

int stmbench_main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            cli_help();
            return 0;
        }
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0) {
            cli_list();
            return 0;
        }
        if (strcmp(argv[i], "--line-transfer") == 0)
            return line_transfer_main(argc, argv);
        if (strcmp(argv[i], "--log-floor") == 0)
            return log_floor_main(argc, argv);
    }
    if (argc <= 1) {
        cli_err("no arguments: --runtime and --workload are required (see --help)");
        return 2;
    }

    struct cli_opts *o = calloc(1, sizeof *o);
    if (!o) {
        cli_err("out of memory");
        return 3;
    }
    o->threads = 1;
    o->seed = 1;
    o->pin = PIN_COMPACT;
    o->ops_per_tx = 1;
    int status = 2;
    char err[CLI_ERR] = "";
    if (cli_parse(argc, argv, o) != 0)
        goto out;

    char rt_names[256] = "";
    {
        size_t l = 0;
        const struct sync_runtime *r;
        for (int i = 0; (r = sync_runtime_nth(i)) && l < sizeof rt_names; i++)
            l += (size_t)snprintf(rt_names + l, sizeof rt_names - l, "%s%s", i ? ", " : "",
                                  r->name);
    }
    if (!o->runtime) {
        cli_err("--runtime is required (allowed: %s)", rt_names);
        goto out;
    }
    const struct sync_runtime *rt = sync_runtime_find(o->runtime);
    if (!rt) {
        cli_err("unknown runtime '%s' (allowed: %s)", o->runtime, rt_names);
        goto out;
    }
    if (!o->workload) {
        cli_err("--workload is required (see --list)");
        goto out;
    }
    int wi = registry_index(o->workload);
    if (wi < 0 || !registry_any(wi)) {
        char names[128] = "";
        size_t l = 0;
        for (int i = 0; i < registry_count(); i++)
            if (registry_any(i))
                l += (size_t)snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "",
                                      registry_name(i));
        cli_err("unknown workload '%s' (allowed: %s)", o->workload, names);
        goto out;
    }
    const struct workload *wl = registry_find(o->workload, rt->name);
    if (!wl) {
        cli_err("workload %s has no copy for runtime %s in this build", o->workload, rt->name);
        goto out;
    }
    struct wl_args args;
    memset(&args, 0, sizeof args);
    if (cli_knobs(o, wl, &args) != 0)
        goto out;
    if (rt->max_threads > 0 && o->threads > rt->max_threads) {
        cli_err("--threads %ld is not allowed with runtime %s (allowed: 1..%d)", o->threads,
                rt->name, rt->max_threads);
        goto out;
    }
    if (o->seen[3] && o->seen[4]) {
        cli_err("--duration and --ops are exclusive: give one of them");
        goto out;
    }
    if (!o->seen[3])
        o->duration = 1.0;
    if (o->ops && o->ops < (uint64_t)o->threads) {
        cli_err("--ops %llu is fewer than --threads %ld (allowed: at least one op per thread)",
                (unsigned long long)o->ops, o->threads);
        goto out;
    }
    if (o->csv && o->conflicts && strcmp(o->csv, o->conflicts) == 0) {
        cli_err("--csv and --conflicts name the same file '%s'", o->csv);
        goto out;
    }
    if (o->csv && results_check_path(o->csv, results_csv_header(), err, sizeof err) != 0) {
        cli_err("--csv: %s", err);
        goto out;
    }
    if (o->conflicts &&
        results_check_path(o->conflicts, results_conflicts_header(), err, sizeof err) != 0) {
        cli_err("--conflicts: %s", err);
        goto out;
    }
    sync_waits_wanted = o->conflicts || o->report;   /* before any thread starts */
    args.nthreads = (int)o->threads;
    args.seed = o->seed;
    args.ops_per_tx = o->ops_per_tx;
    /* `auto` lengths: adaptive in the transactional copies; elsewhere the fixed default
     * (params record txlen=fixed_default). */
    unsigned autos = 0;
    if (o->ops_per_tx == WL_LEN_AUTO) {
        autos |= 1u << WL_MAX_KNOBS;
        if (!wl->tx_adaptive)
            args.ops_per_tx = 1;
    }
    for (int k = 0; k < wl->nknobs && k < WL_MAX_KNOBS; k++)
        if (wl->auto_knob == k + 1 && args.ival[k] == WL_LEN_AUTO) {
            autos |= 1u << k;
            if (!wl->tx_adaptive)
                args.ival[k] = wl->knobs[k].def;
        }
    if (wl->validate && wl->validate(&args, err, sizeof err) != 0) {
        cli_err("workload %s: %s", wl->name, err);
        goto out;
    }
    status = cli_run(o, rt, wl, &args, autos);
out:
    free(o);
    return status;
}
