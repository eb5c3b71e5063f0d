/*
 * harness/cli_parse.c - stmbench's flags (docs/contract.md): the general ones, checked
 * one by one as they come, and the workload knobs, resolved against the workload's
 * table once the workload is known (cli.c checks what depends on several flags). Every
 * error is printed here, in the words the contract gives; the caller exits 2.
 */
#include "harness/cli.h"
#include "harness/registry.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_err(const char *fmt, ...)
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

static const char *const cli_general[] = {
    "runtime", "workload", "threads", "duration", "ops", "seed", "pin", "ops-per-tx",
    "csv", "conflicts", "heap-mb", "gil-interval-us", "htm-retries", NULL,
};

/* --ops-per-tx's value: K or auto. 0 ok, -1 error (printed). */
static int cli_ops_per_tx(const char *v, long *out)
{
    long l;
    if (strcmp(v, "auto") == 0) {
        *out = WL_LEN_AUTO;
    } else if (cli_parse_long(v, &l) == -1) {
        cli_err("--ops-per-tx '%s' is neither an integer nor auto (allowed: 1..%ld, "
                "auto)", v, CLI_MAX_OPS_PER_TX);
        return -1;
    } else if (cli_int_flag("--ops-per-tx", v, 1, CLI_MAX_OPS_PER_TX, out) != 0) {
        return -1;
    }
    return 0;
}

/* The value v of general flag g into o. 0 ok, -1 error (printed). */
static int cli_general_flag(struct cli_opts *o, enum cli_flag g, const char *v)
{
    switch (g) {
    case CLI_RUNTIME: o->runtime = v; return 0;
    case CLI_WORKLOAD: o->workload = v; return 0;
    case CLI_THREADS: return cli_int_flag("--threads", v, 1, CLI_MAX_THREADS, &o->threads);
    case CLI_DURATION: return cli_duration(v, &o->duration);
    case CLI_OPS: return cli_u64_flag("--ops", v, 1, &o->ops);
    case CLI_SEED: return cli_u64_flag("--seed", v, 0, &o->seed);
    case CLI_PIN:
        if ((o->pin = pin_parse(v)) < 0) {
            cli_err("--pin '%s' is not a placement (allowed: compact, scatter, none)", v);
            return -1;
        }
        return 0;
    case CLI_OPS_PER_TX: return cli_ops_per_tx(v, &o->ops_per_tx);
    case CLI_CSV: o->csv = v; return 0;
    case CLI_CONFLICTS: o->conflicts = v; return 0;
    case CLI_HEAP_MB: return cli_int_flag("--heap-mb", v, 1, CLI_MAX_HEAP_MB, &o->heap_mb);
    case CLI_GIL_US: return cli_int_flag("--gil-interval-us", v, 1, CLI_MAX_GIL_US, &o->gil_us);
    case CLI_HTM_RETRIES:
        return cli_int_flag("--htm-retries", v, 1, CLI_MAX_HTM_RETRIES, &o->htm_retries);
    }
    return 0;
}

/* Flag a (name: after its `--`) with value v: a general one, or a knob kept for
 * cli_knobs. 0 ok, -1 error (printed). */
static int cli_flag(struct cli_opts *o, const char *a, const char *name, const char *v)
{
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
        return 0;
    }
    if (o->seen[g]++) {
        cli_err("option %s given twice", a);
        return -1;
    }
    return cli_general_flag(o, (enum cli_flag)g, v);
}

int cli_parse(int argc, char **argv, struct cli_opts *o)
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
        if (cli_flag(o, a, name, v) != 0)
            return -1;
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

int cli_knobs(const struct cli_opts *o, const struct workload *w, struct wl_args *a)
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
