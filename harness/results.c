/*
 * harness/results.c - CSV rows, the conflict log and the context JSON (results.h).
 *
 * The columns are harness/columns.h's lists: a row's values are formatted here in that
 * order (tests/test_csv.c checks that every row has as many fields as the header).
 *
 * Invariant: a results file only ever grows by whole lines. Each row (or, for the
 * conflict log, each chunk of whole rows) is formatted into memory first and handed
 * to a single write() on an O_APPEND descriptor; the "is the file empty, then write
 * the header" decision is taken under an exclusive flock held across that write.
 */
#include "harness/results.h"
#include "harness/columns.h"
#include "harness/pin.h"
#include "runtime/htm/htm_cpu.h"
#include "runtime/plain_heap.h"
#include "runtime/timeacct.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef STMBENCH_GIT_REV
#define STMBENCH_GIT_REV "unknown"
#endif
#ifndef STMBENCH_CFLAGS
#define STMBENCH_CFLAGS "unknown"
#endif
#ifndef STMBENCH_BUILD_CONFIG
#define STMBENCH_BUILD_CONFIG "unknown"
#endif

/* The headers: harness/columns.h's lists, each without its first comma. */
static const char results_header_list[] = RESULTS_COLUMNS(COLUMNS_HEADER_ITEM, ~);
static const char results_cheader_list[] = CONFLICT_COLUMNS(COLUMNS_HEADER_ITEM, ~);
static const char *const results_header = results_header_list + 1;
static const char *const results_cheader = results_cheader_list + 1;

const char *results_csv_header(void) { return results_header; }
const char *results_conflicts_header(void) { return results_cheader; }

/* A growable string. */
struct results_buf {
    char *p;
    size_t len, cap;
    int oom;
};

static void results_bprintf(struct results_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void results_bprintf(struct results_buf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 1024;
        while (cap - b->len <= (size_t)n)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

/* write() all of buf; a regular file takes it in one call, the loop only covers
 * the theoretical short write. */
static int results_write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int results_check_path(const char *path, const char *header, char *err, size_t errlen)
{
    struct stat st;
    if (path[0] == '\0') {
        snprintf(err, errlen, "empty results file name");
        return -1;
    }
    if (stat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
            snprintf(err, errlen, "'%s' is not a regular file", path);
            return -1;
        }
        int fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);   /* no O_CREAT, no O_TRUNC */
        if (fd < 0) {
            snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
            return -1;
        }
        /* An existing header must be ours, or the new row would not fit its columns. */
        size_t hl = strlen(header);
        char *first = malloc(hl + 2);
        ssize_t n = first ? pread(fd, first, hl + 1, 0) : -1;
        close(fd);
        int bad = 0;
        if (n > 0) {
            first[n] = '\0';
            char *nl = strchr(first, '\n');
            if (nl)
                *nl = '\0';
            bad = strcmp(first, header) != 0;
        }
        free(first);
        if (n < 0) {
            snprintf(err, errlen, "cannot read '%s'", path);
            return -1;
        }
        if (bad) {
            snprintf(err, errlen, "'%s' has a different header from this version's columns "
                     "(use a new file)", path);
            return -1;
        }
        return 0;
    }
    if (errno != ENOENT) {
        snprintf(err, errlen, "cannot use '%s': %s", path, strerror(errno));
        return -1;
    }
    /* A new file: its directory must exist and be writable. */
    char *dir = strdup(path);
    if (!dir) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char *slash = strrchr(dir, '/');
    const char *d = ".";
    if (slash) {
        if (slash == dir)
            slash[1] = '\0';
        else
            *slash = '\0';
        d = dir;
    }
    int ok = stat(d, &st) == 0 && S_ISDIR(st.st_mode) && access(d, W_OK | X_OK) == 0;
    if (!ok)
        snprintf(err, errlen, "cannot create '%s': directory '%s' %s", path, d,
                 stat(d, &st) != 0 ? "does not exist" : "is not a writable directory");
    free(dir);
    return ok ? 0 : -1;
}

void results_identify(struct results_row *r)
{
    static atomic_uint counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    /* relaxed: only uniqueness of the value matters, nothing is published with it. */
    unsigned c = atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    snprintf(r->run_id, sizeof r->run_id, "%llx-%x-%x",
             (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec,
             (unsigned)getpid(), c);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    snprintf(r->timestamp, sizeof r->timestamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (int)(ts.tv_nsec / 1000000));
    if (gethostname(r->host, sizeof r->host) != 0)
        snprintf(r->host, sizeof r->host, "unknown");
    r->host[sizeof r->host - 1] = '\0';
    for (char *p = r->host; *p; p++)
        if (*p == ',' || *p == '\n')
            *p = '_';
}

/* Opens path for appending and, under an exclusive flock, writes the header when the
 * file is empty, then buf. */
static int results_append(const char *path, const char *header, const char *buf, size_t len,
                          char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    flock(fd, LOCK_EX);   /* best effort: without it only the one-header rule could slip */
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) == 0 && st.st_size == 0) {
        size_t hl = strlen(header);
        char *h = malloc(hl + 1);
        if (!h || (memcpy(h, header, hl), h[hl] = '\n', results_write_all(fd, h, hl + 1) != 0))
            rc = -1;
        free(h);
    }
    if (rc == 0 && len > 0 && results_write_all(fd, buf, len) != 0)
        rc = -1;
    if (rc != 0)
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
    flock(fd, LOCK_UN);
    if (close(fd) != 0 && rc == 0) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        rc = -1;
    }
    return rc;
}

int results_append_csv(const char *path, const struct results_row *r, char *err, size_t errlen)
{
    const struct sync_stats *s = r->stats;
    struct results_buf b = {0};
    uint64_t aborts = sync_stats_aborts(s);
    results_bprintf(&b, "%s,%s,%s,%s,%s,%s,%s,%d,%s,%llu,%.6f,%llu,%.1f,%llu,%llu,%llu,%llu,%llu,"
                        "%llu,%llu,%llu,%llu,%llu,%s,%s,%llu,%llu,%ld,%llu,%llu,%llu",
                    r->run_id, r->timestamp, r->git_rev, r->host, r->runtime, r->workload,
                    r->params, r->threads, r->pin, (unsigned long long)r->seed, r->duration_s,
                    (unsigned long long)r->ops, r->ops_per_s, (unsigned long long)r->commits,
                    (unsigned long long)aborts,
                    (unsigned long long)s->aborts[SYNC_ABORT_WRITE_WRITE],
                    (unsigned long long)s->aborts[SYNC_ABORT_READ_WRITE],
                    (unsigned long long)s->aborts[SYNC_ABORT_OTHER],
                    (unsigned long long)s->unshared_pages,
                    (unsigned long long)lat_quantile(&s->commit_hist, 0.5),
                    (unsigned long long)lat_quantile(&s->commit_hist, 0.99),
                    (unsigned long long)lat_quantile(r->block_hist, 0.5),
                    (unsigned long long)lat_quantile(r->block_hist, 0.99),
                    r->check_pass ? "pass" : "fail", r->cpus,
                    (unsigned long long)s->aborts[SYNC_ABORT_INEVITABLE],
                    (unsigned long long)s->inevitable, r->ops_per_tx,
                    (unsigned long long)s->gil_handoffs, (unsigned long long)s->gil_wait_ns,
                    (unsigned long long)(r->block_hist->count
                                             ? r->block_hist->sum_ns / r->block_hist->count
                                             : 0));
    results_bprintf(&b, ",%llu,%llu,%llu", (unsigned long long)s->import_entries,
                    (unsigned long long)s->import_bytes, (unsigned long long)s->pages_faulted);
    /* htm's counters (docs/contract.md, "Runs CSV": what each counts) */
    results_bprintf(&b, ",%llu,%llu,%llu,%llu", (unsigned long long)s->htm_commits,
                    (unsigned long long)s->aborts[SYNC_ABORT_HTM_CONFLICT],
                    (unsigned long long)s->aborts[SYNC_ABORT_HTM_CAPACITY],
                    (unsigned long long)s->aborts[SYNC_ABORT_HTM_EXPLICIT]);
    results_bprintf(&b, ",%llu", (unsigned long long)s->thread_time_ns);
    for (int c = 0; c < SYNC_TA_NCAT; c++)
        results_bprintf(&b, ",%llu", (unsigned long long)s->time_ns[c]);
    results_bprintf(&b, ",%llu,%llu,%llu,%llu,%llu",
                    (unsigned long long)sync_op_quantile(s, TA_WINDOW_EVERY, 0.5),
                    (unsigned long long)sync_op_quantile(s, TA_WINDOW_EVERY, 0.99),
                    (unsigned long long)sync_op_quantile(s, TA_WINDOW_EVERY, 0.999),
                    (unsigned long long)sync_op_quantile(s, TA_WINDOW_EVERY, 0.9999),
                    (unsigned long long)s->op_max_ns);
    /* transaction length actually run: ops (interp: bytecodes) per committed block;
     * the mean is exact (ops / blocks), p50/p99 come from the sampled blocks (one in
     * WL_BLOCK_SAMPLE, as block_*) and are histogram bucket bounds (exact below 16,
     * within 6.25% above) */
    const struct lat_hist *lh = r->len_hist;
    results_bprintf(&b, ",%.1f,%llu,%llu",
                    r->commits ? (double)r->ops / (double)r->commits : 0.0,
                    (unsigned long long)(lh ? lat_quantile(lh, 0.5) : 0),
                    (unsigned long long)(lh ? lat_quantile(lh, 0.99) : 0));
    /* the far tail of the operation latency, and the iterations counted exactly in it
     * (a long stall each: runtime/timeacct.h) */
    results_bprintf(&b, ",%llu,%llu",
                    (unsigned long long)sync_op_quantile(s, TA_WINDOW_EVERY, 0.99999),
                    (unsigned long long)s->op_stall_hist.count);
    results_bprintf(&b, ",%llu,%llu\n", (unsigned long long)r->objects_allocated,
                    (unsigned long long)r->objects_freed);
    if (b.oom) {
        free(b.p);
        snprintf(err, errlen, "out of memory formatting the CSV row");
        return -1;
    }
    int rc = results_append(path, results_header, b.p, b.len, err, errlen);
    free(b.p);
    return rc;
}

int results_append_conflicts(const char *path, const char *run_id, const struct sync_stats *s,
                             char *err, size_t errlen)
{
    /* Chunks of whole rows: a chunk is flushed before it passes 64 KiB. */
    enum { CHUNK = 64 * 1024 };
    struct results_buf b = {0};
    int rc = 0;
    size_t i = 0;
    do {
        b.len = 0;
        for (; i < s->nconflicts && b.len < CHUNK; i++) {
            const struct sync_conflict *c = &s->conflicts[i];
            results_bprintf(&b, "%s,%llu,%d,%d,%s,0x%llx,%llu,%s,%llu,%s,%s,%s,%s,%u\n",
                            run_id, (unsigned long long)c->t_ns, c->thread, c->other,
                            sync_conflict_kind_name(c->kind),
                            (unsigned long long)c->object, (unsigned long long)c->page,
                            c->site ? c->site : "", (unsigned long long)c->wasted_ns,
                            c->where_s ? c->where_s : "",
                            c->other_site ? c->other_site : "",
                            c->other_where_s ? c->other_where_s : "",
                            c->object_s ? c->object_s : "", c->weight ? c->weight : 1);
        }
        if (b.oom) {
            snprintf(err, errlen, "out of memory formatting the conflict log");
            rc = -1;
            break;
        }
        /* The first call also creates the file and writes its header, even with no rows. */
        rc = results_append(path, results_cheader, b.p ? b.p : "", b.len, err, errlen);
    } while (rc == 0 && i < s->nconflicts);
    free(b.p);
    return rc;
}

/* JSON string body: escapes quotes, backslashes and control characters. */
static void results_json_str(struct results_buf *b, const char *key, const char *v, int last)
{
    results_bprintf(b, "  \"%s\": \"", key);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\')
            results_bprintf(b, "\\%c", *p);
        else if (*p < 0x20)
            results_bprintf(b, "\\u%04x", *p);
        else
            results_bprintf(b, "%c", *p);
    }
    results_bprintf(b, "\"%s\n", last ? "" : ",");
}

static void results_cpu_model(char *out, size_t n)
{
    snprintf(out, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t')
                    c++;
                c[strcspn(c, "\n")] = '\0';
                snprintf(out, n, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

/* Size in bytes of the first cache of that type, 0 when hwloc reports none. */
static unsigned long long results_cache(hwloc_topology_t t, hwloc_obj_type_t type, int *count)
{
    int n = hwloc_get_nbobjs_by_type(t, type);
    *count = n > 0 ? n : 0;
    if (n <= 0)
        return 0;
    hwloc_obj_t o = hwloc_get_obj_by_type(t, type, 0);
    return (unsigned long long)o->attr->cache.size;
}

/* libitm's method (runtime/itm/itm.c, declared in itm_rt.h); weak: absent when the
 * itm runtime is not built. */
extern const char *itm_method(void) __attribute__((weak));
extern int itm_method_user(void) __attribute__((weak));

/* What decides how the transactional runtimes behave on this machine: the CPU's TM and
 * segment-base flags (CPUID), whether RTM transactions commit (probed only where CPUID
 * lists RTM), whether it runs under a hypervisor, the frequency governor (null where
 * cpufreq is not exposed, as in most VMs) and libitm's method. */
static void results_context_tm(struct results_buf *b)
{
    const struct htm_cpu *c = htm_cpu();
    results_bprintf(b, "  \"cpu_flags\": {\"rtm\": %s, \"hle\": %s, \"fsgsbase\": %s, "
                       "\"rtm_always_abort\": %s},\n",
                    c->rtm ? "true" : "false", c->hle ? "true" : "false",
                    c->fsgsbase ? "true" : "false", c->rtm_always_abort ? "true" : "false");
    results_bprintf(b, "  \"rtm_probe\": {\"attempts\": %d, \"commits\": %d},\n",
                    c->probe_attempts, c->probe_commits);
    results_bprintf(b, "  \"rtm_works\": %s,\n", c->rtm_works ? "true" : "false");
    results_bprintf(b, "  \"hypervisor\": %s,\n", c->hypervisor ? "true" : "false");
    results_json_str(b, "hypervisor_vendor", c->hypervisor_vendor, 0);
    char gov[64] = "";
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "r");
    if (f) {
        if (!fgets(gov, sizeof gov, f))
            gov[0] = '\0';
        gov[strcspn(gov, "\n")] = '\0';
        fclose(f);
    }
    if (gov[0])
        results_json_str(b, "cpufreq_governor", gov, 0);
    else
        results_bprintf(b, "  \"cpufreq_governor\": null,\n");
    if (itm_method && itm_method_user) {
        results_json_str(b, "itm_method", itm_method(), 0);
        results_json_str(b, "itm_method_by", itm_method_user() ? "user" : "stmbench", 0);
    } else {
        results_bprintf(b, "  \"itm_method\": null,\n  \"itm_method_by\": null,\n");
    }
}

/* The machine's shape from hwloc: packages, cores, PUs, NUMA nodes, hardware threads
 * per core and the caches; nothing when hwloc cannot load the topology. */
static void results_context_topology(struct results_buf *b)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0)
        return;
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return;
    }
    static const struct { const char *name; hwloc_obj_type_t type; } caches[] = {
        {"l1d", HWLOC_OBJ_L1CACHE}, {"l2", HWLOC_OBJ_L2CACHE}, {"l3", HWLOC_OBJ_L3CACHE},
    };
    results_bprintf(b, "  \"packages\": %d,\n  \"cores\": %d,\n  \"pus\": %d,\n"
                       "  \"numa_nodes\": %d,\n",
                    hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE),
                    hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE),
                    hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU),
                    hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE));
    /* SMT: hardware threads per core (1 without SMT; the most any core has, for CPUs
     * whose cores differ), from hwloc's core objects. */
    int smt = 0;
    for (int i = 0; i < hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE); i++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, i);
        int w = core && core->cpuset ? hwloc_bitmap_weight(core->cpuset) : 0;
        if (w > smt)
            smt = w;
    }
    results_bprintf(b, "  \"threads_per_core\": %d,\n", smt);
    for (size_t i = 0; i < sizeof caches / sizeof caches[0]; i++) {
        int n;
        unsigned long long sz = results_cache(t, caches[i].type, &n);
        results_bprintf(b, "  \"%s_bytes\": %llu,\n  \"%s_count\": %d,\n", caches[i].name, sz,
                        caches[i].name, n);
    }
    hwloc_topology_destroy(t);
}

int results_write_context(const char *csv_path, char *err, size_t errlen)
{
    struct results_buf b = {0};
    char model[256], host[256] = "unknown";
    results_cpu_model(model, sizeof model);
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    struct utsname u;
    if (uname(&u) != 0)
        memset(&u, 0, sizeof u);
    char kernel[sizeof u.release + sizeof u.version + 2];
    snprintf(kernel, sizeof kernel, "%s %s", u.release, u.version);

    results_bprintf(&b, "{\n");
    results_json_str(&b, "cpu_model", model, 0);
    results_context_topology(&b);
    results_json_str(&b, "kernel", kernel, 0);
    results_json_str(&b, "machine", u.machine, 0);
    results_json_str(&b, "compiler", __VERSION__, 0);
    results_json_str(&b, "cflags", STMBENCH_CFLAGS, 0);
    results_json_str(&b, "build_config", STMBENCH_BUILD_CONFIG, 0);
    results_json_str(&b, "git_rev", STMBENCH_GIT_REV, 0);
    results_json_str(&b, "plain_allocator", sync_plain_allocator(), 0);
    results_bprintf(&b, "  \"fsgsbase\": %s,\n",
                    (getauxval(AT_HWCAP2) & 2) ? "true" : "false");   /* HWCAP2_FSGSBASE */
    results_context_tm(&b);
    results_json_str(&b, "hostname", host, 1);
    results_bprintf(&b, "}\n");
    if (b.oom) {
        free(b.p);
        snprintf(err, errlen, "out of memory formatting the context");
        return -1;
    }

    size_t pl = strlen(csv_path);
    size_t base = pl >= 4 && strcmp(csv_path + pl - 4, ".csv") == 0 ? pl - 4 : pl;
    char *path = malloc(base + 32), *tmp = malloc(base + 64);
    int rc = -1;
    if (path && tmp) {
        snprintf(path, base + 32, "%.*s.context.json", (int)base, csv_path);
        snprintf(tmp, base + 64, "%s.tmp.%d", path, (int)getpid());
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            int w = results_write_all(fd, b.p, b.len);
            if (close(fd) == 0 && w == 0 && rename(tmp, path) == 0)
                rc = 0;
            else
                unlink(tmp);
        }
        if (rc != 0)
            snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
    } else {
        snprintf(err, errlen, "out of memory");
    }
    free(path);
    free(tmp);
    free(b.p);
    return rc;
}
