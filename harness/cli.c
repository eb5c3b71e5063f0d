/*
 * harness/cli.c - stmbench_main: the command line (docs/contract.md): --help, --list,
 * the machine probes (--line-transfer, --log-floor), then a run: its flags parsed
 * (cli_parse.c), checked together here, the run itself (run.c, where the order of its
 * events is) and what it records (record.c).
 */
#include "harness/cli.h"
#include "harness/conflicts.h"
#include "harness/harness.h"
#include "harness/registry.h"
#include "harness/results.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* --help, --list and the probes, which take the whole command line: 1 with *status set
 * when one of them ran (or there are no arguments), else 0. */
static int cli_other_modes(int argc, char **argv, int *status)
{
    *status = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            cli_help();
            return 1;
        }
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0) {
            cli_list();
            return 1;
        }
        if (strcmp(argv[i], "--line-transfer") == 0) {
            *status = line_transfer_main(argc, argv);
            return 1;
        }
        if (strcmp(argv[i], "--log-floor") == 0) {
            *status = log_floor_main(argc, argv);
            return 1;
        }
    }
    if (argc <= 1) {
        cli_err("no arguments: --runtime and --workload are required (see --help)");
        *status = 2;
        return 1;
    }
    return 0;
}

/* The runtime named by --runtime, or NULL (printed). */
static const struct sync_runtime *cli_runtime(const struct cli_opts *o)
{
    char rt_names[256] = "";
    size_t l = 0;
    const struct sync_runtime *r;
    for (int i = 0; (r = sync_runtime_nth(i)) && l < sizeof rt_names; i++)
        l += (size_t)snprintf(rt_names + l, sizeof rt_names - l, "%s%s", i ? ", " : "",
                              r->name);
    if (!o->runtime) {
        cli_err("--runtime is required (allowed: %s)", rt_names);
        return NULL;
    }
    const struct sync_runtime *rt = sync_runtime_find(o->runtime);
    if (!rt)
        cli_err("unknown runtime '%s' (allowed: %s)", o->runtime, rt_names);
    return rt;
}

/* The copy of the workload named by --workload for runtime rt, or NULL (printed). */
static const struct workload *cli_workload(const struct cli_opts *o,
                                           const struct sync_runtime *rt)
{
    if (!o->workload) {
        cli_err("--workload is required (see --list)");
        return NULL;
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
        return NULL;
    }
    const struct workload *wl = registry_find(o->workload, rt->name);
    if (!wl)
        cli_err("workload %s has no copy for runtime %s in this build", o->workload, rt->name);
    return wl;
}

/* What depends on several flags, and the results files (nothing created or changed):
 * 0, or -1 (printed). Sets the default duration. */
static int cli_check(struct cli_opts *o, const struct sync_runtime *rt)
{
    char err[CLI_ERR] = "";
    if (rt->max_threads > 0 && o->threads > rt->max_threads) {
        cli_err("--threads %ld is not allowed with runtime %s (allowed: 1..%d)", o->threads,
                rt->name, rt->max_threads);
        return -1;
    }
    if (o->seen[CLI_DURATION] && o->seen[CLI_OPS]) {
        cli_err("--duration and --ops are exclusive: give one of them");
        return -1;
    }
    if (!o->seen[CLI_DURATION])
        o->duration = 1.0;
    if (o->ops && o->ops < (uint64_t)o->threads) {
        cli_err("--ops %llu is fewer than --threads %ld (allowed: at least one op per thread)",
                (unsigned long long)o->ops, o->threads);
        return -1;
    }
    if (o->csv && o->conflicts && strcmp(o->csv, o->conflicts) == 0) {
        cli_err("--csv and --conflicts name the same file '%s'", o->csv);
        return -1;
    }
    if (o->csv && results_check_path(o->csv, results_csv_header(), err, sizeof err) != 0) {
        cli_err("--csv: %s", err);
        return -1;
    }
    if (o->conflicts &&
        results_check_path(o->conflicts, results_conflicts_header(), err, sizeof err) != 0) {
        cli_err("--conflicts: %s", err);
        return -1;
    }
    return 0;
}

/* The general settings into args, and the `auto` lengths: adaptive in the transactional
 * copies; elsewhere the fixed default (params record txlen=fixed_default). Returns the
 * autos' bits (cli_params, record.c). */
static unsigned cli_autos(const struct cli_opts *o, const struct workload *wl,
                          struct wl_args *args)
{
    args->nthreads = (int)o->threads;
    args->seed = o->seed;
    args->ops_per_tx = o->ops_per_tx;
    unsigned autos = 0;
    if (o->ops_per_tx == WL_LEN_AUTO) {
        autos |= 1u << WL_MAX_KNOBS;
        if (!wl->tx_adaptive)
            args->ops_per_tx = 1;
    }
    for (int k = 0; k < wl->nknobs && k < WL_MAX_KNOBS; k++)
        if (wl->auto_knob == k + 1 && args->ival[k] == WL_LEN_AUTO) {
            autos |= 1u << k;
            if (!wl->tx_adaptive)
                args->ival[k] = wl->knobs[k].def;
        }
    return autos;
}

/* A run's command line, checked, then the run: its exit status. */
static int cli_main(struct cli_opts *o, int argc, char **argv)
{
    char err[CLI_ERR] = "";
    if (cli_parse(argc, argv, o) != 0)
        return 2;
    const struct sync_runtime *rt = cli_runtime(o);
    const struct workload *wl = rt ? cli_workload(o, rt) : NULL;
    if (!wl)
        return 2;
    struct wl_args args;
    memset(&args, 0, sizeof args);
    if (cli_knobs(o, wl, &args) != 0 || cli_check(o, rt) != 0)
        return 2;
    sync_waits_wanted = o->conflicts || o->report;   /* before any thread starts */
    unsigned autos = cli_autos(o, wl, &args);
    if (wl->validate && wl->validate(&args, err, sizeof err) != 0) {
        cli_err("workload %s: %s", wl->name, err);
        return 2;
    }
    return cli_run(o, rt, wl, &args, autos);
}

int stmbench_main(int argc, char **argv)
{
    int status;
    if (cli_other_modes(argc, argv, &status))
        return status;
    struct cli_opts *o = calloc(1, sizeof *o);
    if (!o) {
        cli_err("out of memory");
        return 3;
    }
    o->threads = 1;
    o->seed = 1;
    o->pin = PIN_COMPACT;
    o->ops_per_tx = 1;
    status = cli_main(o, argc, argv);
    free(o);
    return status;
}
