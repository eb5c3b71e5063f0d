/*
 * harness/results.h - the results files (docs/contract.md): the CSV row, the conflict log
 * and the machine-context JSON beside the CSV.
 *
 * Every row is built in memory and written with one write() on an O_APPEND file
 * descriptor, so an interrupted run never leaves half a row, and the header check
 * and write happen under flock so two runs appending to one new file write one header.
 */
#ifndef HARNESS_RESULTS_H
#define HARNESS_RESULTS_H

#include "runtime/common.h"

#include <stddef.h>
#include <stdint.h>

struct hwloc_topology;

/* Everything one CSV row says. */
struct results_row {
    char run_id[48];
    char timestamp[96];
    const char *git_rev;
    char host[128];
    const char *runtime, *workload;
    const char *params;          /* key=value;key=value */
    int threads;
    const char *pin;
    uint64_t seed;
    double duration_s;
    uint64_t ops;
    double ops_per_s;
    uint64_t commits;            /* atomic blocks completed (sum of wl_thread.blocks) */
    const struct sync_stats *stats;      /* merged runtime statistics */
    const struct lat_hist *block_hist;   /* merged block latencies */
    int check_pass;
    const char *cpus;            /* ;-separated OS indexes, "" for --pin none */
    long ops_per_tx;             /* 0: --ops-per-tx auto (adaptive) */
    const struct lat_hist *len_hist;     /* ops (bytecodes) per committed block; may be NULL */
    uint64_t objects_allocated;  /* interp's object model (sum of wl_thread's); else 0 */
    uint64_t objects_freed;
};

/* The CSV header line, without the newline. */
const char *results_csv_header(void);
const char *results_conflicts_header(void);

/* Checks, without creating or changing anything, that `path` can be appended to:
 * an existing regular file we can open for writing whose header (if any) is ours
 * (`header`), or a new file in an existing writable directory. 0 if so, else -1 with
 * the reason in err. */
int results_check_path(const char *path, const char *header, char *err, size_t errlen);

/* Fills run_id (unique in this process and across processes), timestamp and host. */
void results_identify(struct results_row *r);

/* Appends the row (and the header when the file is new or empty). 0 or -1 (err). */
int results_append_csv(const char *path, const struct results_row *r, char *err, size_t errlen);
/* Appends one row per conflict in stats (header when new or empty). */
int results_append_conflicts(const char *path, const char *run_id, const struct sync_stats *s,
                             char *err, size_t errlen);
/* Writes <csv without .csv>.context.json (temp file + rename). */
int results_write_context(const char *csv_path, char *err, size_t errlen);

#endif
