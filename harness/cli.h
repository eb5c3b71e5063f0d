/*
 * harness/cli.h - what the files of stmbench's command line and run share (not a public
 * header: harness/harness.h is). The command line (docs/contract.md) in cli.c, its
 * flags and workload knobs parsed in cli_parse.c, the run (setup, threads, timing,
 * check) in run.c, and what a finished run records (CSV row, conflict log, summary
 * line) in record.c.
 */
#ifndef HARNESS_CLI_H
#define HARNESS_CLI_H

#include "harness/pin.h"
#include "runtime/sync.h"
#include "workloads/workload.h"

#include <pthread.h>
#include <stdint.h>

enum { CLI_MAX_THREADS = 4096, CLI_MAX_PENDING = 64, CLI_ERR = 512 };
#define CLI_MAX_DURATION 31536000.0      /* one year, in seconds */
#define CLI_MAX_OPS_PER_TX 1000000L
#define CLI_MAX_HEAP_MB (1L << 20)        /* 1 TiB per segment */
#define CLI_MAX_GIL_US 60000000L          /* one minute */
#define CLI_MAX_HTM_RETRIES 1000L         /* HTM_MAX_RETRIES */

/* The general flags, in the order of cli_general (cli_parse.c): cli_opts.seen's index. */
enum cli_flag {
    CLI_RUNTIME, CLI_WORKLOAD, CLI_THREADS, CLI_DURATION, CLI_OPS, CLI_SEED, CLI_PIN,
    CLI_OPS_PER_TX, CLI_CSV, CLI_CONFLICTS, CLI_HEAP_MB, CLI_GIL_US, CLI_HTM_RETRIES,
};

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

/* cli_parse.c */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Parses argv into o. 0 ok, -1 error (already printed). */
int cli_parse(int argc, char **argv, struct cli_opts *o);
/* Resolves the workload knobs of o against w's table into a. 0 ok, -1 error (printed). */
int cli_knobs(const struct cli_opts *o, const struct workload *w, struct wl_args *a);

/* One run, from the runtime's setup to the freeing (run.c; record.c reads it). */
struct cli_run {
    const struct cli_opts *o;
    const struct sync_runtime *rt;
    const struct workload *wl;
    int n;                            /* threads */
    void *ctx;
    struct wl_thread *threads;
    struct cli_worker *workers;
    struct lat_hist *block_hist, *len_hist;
    struct wl_txlen_shared *txlen_shared;
    struct pin_plan plan;
    pthread_mutex_t gate_mu;
    pthread_cond_t gate_cv;
    int ready, open;
    uint64_t t0, t1;                  /* the gate's opening, the last join */
};

/* run.c: the run of a checked command line, its results recorded; the exit status. */
int cli_run(const struct cli_opts *o, const struct sync_runtime *rt,
            const struct workload *wl, const struct wl_args *args, unsigned autos);
/* record.c: the run's row (CSV), conflict log, summary line and report, after a run
 * whose threads all ran (check_pass: the workload's check passed); the exit status. */
int cli_record(struct cli_run *r, const struct wl_args *args, unsigned autos,
               int check_pass);

#endif
