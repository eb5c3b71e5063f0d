/*
 * harness/record.c - what a finished run records (docs/contract.md): the threads'
 * results summed, the CSV row (results.c writes it) and its context JSON, the conflict
 * log, the summary line on stdout and, with --report, the conflict report.
 */
#include "harness/cli.h"
#include "harness/conflicts.h"
#include "harness/results.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef STMBENCH_GIT_REV
#define STMBENCH_GIT_REV "unknown"
#endif

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

/* The threads' counts into the row's fields, their histograms into the run's and
 * their statistics into total; a thread whose own check failed fails the run. */
static void record_sum(struct cli_run *r, struct results_row *row, struct sync_stats *total,
                       int *check_pass)
{
    uint64_t ops = 0, blocks = 0, oalloc = 0, ofreed = 0;
    for (int i = 0; i < r->n; i++) {
        struct wl_thread *t = &r->threads[i];
        oalloc += t->objects_allocated;
        ofreed += t->objects_freed;
        if (t->failed) {
            *check_pass = 0;
            cli_err("check failed: %s/%s: thread %d: %s", r->wl->name, r->rt->name, i,
                    t->fail_msg);
        }
        ops += t->ops;
        blocks += t->blocks;
        lat_merge(r->block_hist, &t->block_hist);
        lat_merge(r->len_hist, &t->len_hist);
        sync_stats_merge(total, &t->stats);
    }
    row->ops = ops;
    row->commits = blocks;
    row->objects_allocated = oalloc;
    row->objects_freed = ofreed;
}

/* The PUs of the threads ("3;7;..."; empty with --pin none), or NULL (out of memory). */
static char *record_cpus(const struct cli_run *r)
{
    char *cpus = malloc((size_t)r->n * 12 + 1);
    if (!cpus)
        return NULL;
    size_t cl = 0;
    cpus[0] = '\0';
    if (r->o->pin != PIN_NONE)
        for (int i = 0; i < r->n; i++)
            cl += (size_t)sprintf(cpus + cl, "%s%d", i ? ";" : "", r->plan.os_index[i]);
    return cpus;
}

/* The row into --csv (with its context JSON) and the conflicts into --conflicts.
 * status: the exit status so far; 2 when a file cannot be written. */
static int record_files(const struct cli_opts *o, const struct results_row *row,
                        const struct sync_stats *total, int status)
{
    char err[CLI_ERR] = "";
    if (o->csv) {
        if (results_append_csv(o->csv, row, err, sizeof err) != 0) {
            cli_err("%s", err);
            status = 2;
        } else if (results_write_context(o->csv, err, sizeof err) != 0) {
            cli_err("warning: %s", err);   /* the row is written; context is a side file */
        }
    }
    if (o->conflicts && results_append_conflicts(o->conflicts, row->run_id, total, err,
                                                 sizeof err) != 0) {
        cli_err("%s", err);
        status = 2;
    }
    if (o->conflicts && total->conflicts_stride > 1)
        cli_err("note: past %d rows a thread's conflict log is a sample (up to 1 abort or "
                "wait in %u kept, its `weight` column says how many it stands for): %llu "
                "aborts and waits, %zu rows", SYNC_CONFLICTS_CAP, total->conflicts_stride,
                (unsigned long long)total->conflicts_seen, total->nconflicts);
    return status;
}

int cli_record(struct cli_run *r, const struct wl_args *args, unsigned autos, int check_pass)
{
    const struct cli_opts *o = r->o;
    const struct sync_runtime *rt = r->rt;
    const struct workload *wl = r->wl;
    struct sync_stats total;
    memset(&total, 0, sizeof total);
    struct results_row row = {.git_rev = STMBENCH_GIT_REV};
    record_sum(r, &row, &total, &check_pass);
    double secs = (double)(r->t1 - r->t0) / 1e9;
    char *params = cli_params(wl, args, rt->params ? rt->params() : NULL, autos);
    char *cpus = record_cpus(r);
    int status = 3;
    if (!params || !cpus) {
        cli_err("out of memory");
        goto out;
    }
    row.runtime = rt->name;
    row.workload = wl->name;
    row.params = params;
    row.threads = r->n;
    row.pin = pin_name((enum pin_policy)o->pin);
    row.seed = o->seed;
    row.duration_s = secs;
    row.ops_per_s = secs > 0 ? (double)row.ops / secs : 0;
    row.stats = &total;
    row.block_hist = r->block_hist;
    row.check_pass = check_pass;
    row.cpus = cpus;
    row.ops_per_tx = args->ops_per_tx;
    row.len_hist = r->len_hist;
    results_identify(&row);
    status = record_files(o, &row, &total, check_pass ? 0 : 1);
    printf("%s %s threads=%d ops=%llu time=%.3fs ops/s=%.0f commits=%llu aborts=%llu "
           "check=%s\n",
           rt->name, wl->name, r->n, (unsigned long long)row.ops, secs, row.ops_per_s,
           (unsigned long long)row.commits, (unsigned long long)sync_stats_aborts(&total),
           check_pass ? "pass" : "fail");
    if (o->report)
        conflicts_report(stdout, &total, rt->name, wl->name, r->n, CONFLICTS_REPORT_TOP);
    fflush(stdout);
out:
    sync_stats_free(&total);
    free(params);
    free(cpus);
    return status;
}
