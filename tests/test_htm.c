/*
 * tests/test_htm.c - the htm runtime (the GIL elided with Intel RTM).
 *
 * Three groups, named by what they need:
 *  - *_anycpu: run everywhere. The retry policy as pure functions; `--list` names htm;
 *    --htm-retries is checked; the context JSON's CPU and TM keys agree with CPUID.
 *  - *_forced_aborts: run everywhere, through the test hook htm_test_force_aborts(),
 *    which replaces every hardware attempt by an abort with a chosen RTM status
 *    WITHOUT executing xbegin. No hardware transaction runs in them: they test the
 *    retry policy, the fallback to the GIL (its exclusion: a lost-update counter and
 *    every workload's checks), and the counters and CSV columns, exactly.
 *  - *_rtm: need RTM that commits (htm_cpu()->rtm_works); they skip with a message
 *    elsewhere. Bank under htm at 1, 2 and 4 threads with audits checked inside the
 *    transactions; a lost-update counter in hardware; a forced fallback (audits of
 *    100,000 accounts exceed the hardware's capacity), counted; the mix of hardware
 *    commits and fallbacks printed.
 *  - test_no_rtm_exits_3 is the converse: where RTM does not work, --runtime htm exits
 *    3 with "htm: no working RTM on this CPU" and leaves the CSV as it was; it skips
 *    where RTM works. test_bench_skips_htm_without_rtm_anycpu runs scripts/bench.sh:
 *    without RTM one skip line and no failure, with RTM htm's rows.
 *
 * Worker threads never call cmocka's asserts: they count, the main thread asserts.
 */
#define SYNC_RT htm
#include "runtime/sync.h"
#include "runtime/htm/htm_cpu.h"
#include "tests/stmbench_testutil.h"

#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define STATUS_CONFLICT (HTM_ABORT_CONFLICT | HTM_ABORT_RETRY)
#define STATUS_CAPACITY HTM_ABORT_CAPACITY
#define STATUS_GIL_HELD (HTM_ABORT_EXPLICIT | (HTM_XA_GIL_HELD << 24))
#define STATUS_INEVITABLE (HTM_ABORT_EXPLICIT | (HTM_XA_INEVITABLE << 24))
#define STATUS_OTHER 0u    /* what an interrupt or a system call gives */

static int rtm_works(void)
{
    return htm_cpu()->rtm_works;
}

#define NEED_RTM()                                                                   \
    do {                                                                             \
        if (!rtm_works()) {                                                          \
            print_message("skipped: no working RTM on this CPU (CPUID rtm=%d, "      \
                          "probe %d/%d committed)\n", htm_cpu()->rtm,                \
                          htm_cpu()->probe_commits, htm_cpu()->probe_attempts);      \
            skip();                                                                  \
        }                                                                            \
    } while (0)

/* ------------------------------------------------------------ helpers: harness */

/* Runs stmbench_main with stdout and stderr captured; returns stderr's text. */
static char *run_capture(const char *const *args, int *rc)
{
    const char *path = tu_path(6, "stderr.txt");
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    close(fd);
    free(tu_capture_stdout(tu_runv, args, rc));
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    return tu_read(path, NULL);
}

static unsigned long long field_u64(const char *csv, const char *col)
{
    char f[64];
    if (tu_field(csv, 0, col, f, sizeof f) != 0)
        fail_msg("no column %s", col);
    return strtoull(f, NULL, 10);
}

struct row {
    unsigned long long commits, aborts, inevitable, htm_commits, conflict, capacity, explicit_,
        other, ww, rw, ops;
    char params[256];
};

/* Runs workload wl under htm with the extra args into a new CSV; asserts exit 0 and
 * check=pass; returns the row's counters. */
static struct row run_htm(const char *wl, const char *threads, const char *const *extra)
{
    static int n;
    char name[64];
    snprintf(name, sizeof name, "htm-%d.csv", n++);
    const char *csv = tu_path(0, name);
    int rc = tu_run_workload(wl, "htm", threads, csv, extra);
    if (rc != 0)
        fail_msg("%s under htm with %s threads: exit %d", wl, threads, rc);
    char *text = tu_read(csv, NULL);
    assert_non_null(text);
    assert_int_equal(tu_count_lines(text), 2);
    char f[256];
    assert_int_equal(tu_field(text, 0, "check", f, sizeof f), 0);
    assert_string_equal(f, "pass");
    assert_int_equal(tu_field(text, 0, "runtime", f, sizeof f), 0);
    assert_string_equal(f, "htm");
    struct row r;
    r.commits = field_u64(text, "commits");
    r.aborts = field_u64(text, "aborts");
    r.inevitable = field_u64(text, "inevitable");
    r.htm_commits = field_u64(text, "htm_commits");
    r.conflict = field_u64(text, "htm_aborts_conflict");
    r.capacity = field_u64(text, "htm_aborts_capacity");
    r.explicit_ = field_u64(text, "htm_aborts_explicit");
    r.other = field_u64(text, "aborts_other");
    r.ww = field_u64(text, "aborts_write_write");
    r.rw = field_u64(text, "aborts_read_write");
    r.ops = field_u64(text, "ops");
    assert_int_equal(tu_field(text, 0, "params", r.params, sizeof r.params), 0);
    free(text);
    /* The hardware says nothing of write-write or read-write. */
    assert_int_equal(r.ww, 0);
    assert_int_equal(r.rw, 0);
    /* Every abort is counted under exactly one RTM reason. */
    assert_int_equal(r.aborts, r.conflict + r.capacity + r.explicit_ + r.other);
    /* Every block committed either in hardware or under the GIL. */
    assert_int_equal(r.commits, r.htm_commits + r.inevitable);
    return r;
}

/* ------------------------------------------------------------ the policy, anycpu */

static void test_policy_anycpu(void **state)
{
    (void)state;
    assert_int_equal(htm_abort_kind(STATUS_CONFLICT), SYNC_ABORT_HTM_CONFLICT);
    assert_int_equal(htm_abort_kind(HTM_ABORT_CONFLICT), SYNC_ABORT_HTM_CONFLICT);
    assert_int_equal(htm_abort_kind(STATUS_CAPACITY), SYNC_ABORT_HTM_CAPACITY);
    assert_int_equal(htm_abort_kind(HTM_ABORT_CAPACITY | HTM_ABORT_CONFLICT),
                     SYNC_ABORT_HTM_CAPACITY);
    assert_int_equal(htm_abort_kind(STATUS_GIL_HELD), SYNC_ABORT_HTM_EXPLICIT);
    assert_int_equal(htm_abort_kind(STATUS_INEVITABLE), SYNC_ABORT_HTM_EXPLICIT);
    assert_int_equal(htm_abort_kind(STATUS_OTHER), SYNC_ABORT_OTHER);
    assert_int_equal(htm_abort_kind(HTM_ABORT_RETRY), SYNC_ABORT_OTHER);
    assert_int_equal(htm_abort_kind(HTM_ABORT_DEBUG), SYNC_ABORT_OTHER);
    assert_int_equal(htm_abort_kind(HTM_ABORT_NESTED), SYNC_ABORT_OTHER);
    assert_string_equal(sync_abort_kind_name(SYNC_ABORT_HTM_CONFLICT), "htm-conflict");
    assert_string_equal(sync_abort_kind_name(SYNC_ABORT_HTM_CAPACITY), "htm-capacity");
    assert_string_equal(sync_abort_kind_name(SYNC_ABORT_HTM_EXPLICIT), "htm-explicit");

    /* conflicts, GIL-held and other aborts retry while fewer than R attempts failed */
    static const unsigned retrying[] = {STATUS_CONFLICT, HTM_ABORT_CONFLICT, STATUS_GIL_HELD,
                                        STATUS_OTHER, HTM_ABORT_RETRY, HTM_ABORT_DEBUG};
    for (size_t i = 0; i < sizeof retrying / sizeof retrying[0]; i++) {
        for (int failed = 1; failed < 5; failed++)
            assert_true(htm_should_retry(retrying[i], failed, 5));
        assert_false(htm_should_retry(retrying[i], 5, 5));
        assert_false(htm_should_retry(retrying[i], 1, 1));
    }
    /* capacity and explicit aborts with another code go to the GIL at once */
    assert_false(htm_should_retry(STATUS_CAPACITY, 1, 5));
    assert_false(htm_should_retry(HTM_ABORT_CAPACITY | HTM_ABORT_CONFLICT | HTM_ABORT_RETRY,
                                  1, 1000));
    assert_false(htm_should_retry(STATUS_INEVITABLE, 1, 5));
    assert_false(htm_should_retry(HTM_ABORT_EXPLICIT | (0x12u << 24), 1, 5));
    /* only conflicts back off */
    assert_true(htm_backs_off(STATUS_CONFLICT));
    assert_false(htm_backs_off(STATUS_GIL_HELD));
    assert_false(htm_backs_off(STATUS_OTHER));
    assert_false(htm_backs_off(STATUS_CAPACITY | HTM_ABORT_CONFLICT));
}

static void test_listed_and_flag_checked_anycpu(void **state)
{
    (void)state;
    static const char *const list[] = {"--list", NULL};
    int rc;
    char *out = tu_capture_stdout(tu_runv, list, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "runtime htm\n"));
    free(out);
    static const char *const bad[][12] = {
        {"--runtime", "htm", "--workload", "bank", "--htm-retries", "0", NULL},
        {"--runtime", "htm", "--workload", "bank", "--htm-retries", "1001", NULL},
        {"--runtime", "htm", "--workload", "bank", "--htm-retries", "x", NULL},
        {"--runtime", "htm", "--workload", "bank", "--htm-retries", "2", "--htm-retries", "3",
         NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *err = run_capture(bad[i], &rc);
        assert_int_equal(rc, 2);
        assert_non_null(strstr(err, "--htm-retries"));
        free(err);
    }
}

/* The context JSON names the CPU's TM flags as CPUID reports them. */
static void test_context_json_anycpu(void **state)
{
    (void)state;
    const char *csv = tu_path(1, "ctx.csv");
    static const char *const extra[] = {"--ops", "100", NULL};
    assert_int_equal(tu_run_workload("bank", "gil", "1", csv, extra), 0);
    char *j = tu_read(tu_path(1, "ctx.context.json"), NULL);
    assert_non_null(j);
    const struct htm_cpu *c = htm_cpu();
    char want[256];
    snprintf(want, sizeof want,
             "\"cpu_flags\": {\"rtm\": %s, \"hle\": %s, \"fsgsbase\": %s, "
             "\"rtm_always_abort\": %s}",
             c->rtm ? "true" : "false", c->hle ? "true" : "false", c->fsgsbase ? "true" : "false",
             c->rtm_always_abort ? "true" : "false");
    assert_non_null(strstr(j, want));
    snprintf(want, sizeof want, "\"rtm_works\": %s", c->rtm_works ? "true" : "false");
    assert_non_null(strstr(j, want));
    snprintf(want, sizeof want, "\"hypervisor\": %s", c->hypervisor ? "true" : "false");
    assert_non_null(strstr(j, want));
    /* No probe where CPUID has no RTM (xbegin would fault) */
    if (!c->rtm)
        assert_non_null(strstr(j, "\"rtm_probe\": {\"attempts\": 0, \"commits\": 0}"));
    assert_non_null(strstr(j, "\"threads_per_core\": "));
    assert_non_null(strstr(j, "\"hypervisor_vendor\": "));
    assert_non_null(strstr(j, "\"cpufreq_governor\": "));
    assert_non_null(strstr(j, "\"itm_method\": "));
    print_message("context: rtm=%d hle=%d fsgsbase=%d hypervisor=%d (%s) rtm_works=%d\n",
                  c->rtm, c->hle, c->fsgsbase, c->hypervisor, c->hypervisor_vendor,
                  c->rtm_works);
    free(j);
}

static void test_no_rtm_exits_3(void **state)
{
    (void)state;
    if (rtm_works()) {
        print_message("skipped: this CPU has working RTM, so htm does not refuse to start\n");
        skip();
    }
    const char *csv = tu_path(0, "kept.csv");
    /* an existing results file with one row of another runtime */
    static const char *const extra[] = {"--ops", "50", NULL};
    assert_int_equal(tu_run_workload("bank", "mutex", "1", csv, extra), 0);
    size_t len0;
    char *before = tu_read(csv, &len0);
    const char *args[] = {"--runtime", "htm", "--workload", "bank", "--ops", "100", "--csv", csv,
                          NULL};
    int rc;
    char *err = run_capture(args, &rc);
    assert_int_equal(rc, 3);
    assert_non_null(strstr(err, "htm: no working RTM on this CPU"));
    size_t len1;
    char *after = tu_read(csv, &len1);
    assert_int_equal(len0, len1);
    assert_memory_equal(before, after, len0);
    free(err);
    free(before);
    free(after);
}

/* scripts/bench.sh with gil and htm, bank, 1 thread: without working RTM it skips htm
 * with exactly one line and no failure; with RTM htm runs like any runtime. */
static void test_bench_skips_htm_without_rtm_anycpu(void **state)
{
    (void)state;
    char exe[4096];
    ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(l > 0);
    exe[l] = '\0';
    char *slash = strrchr(exe, '/');   /* BUILD/tests/test_htm */
    assert_non_null(slash);
    *slash = '\0';
    char root[4096], bin[4200], script[4200];
    snprintf(bin, sizeof bin, "%s/../stmbench", exe);
    snprintf(root, sizeof root, "%s", exe);
    for (int up = 0; up < 2 && (slash = strrchr(root, '/')); up++)
        *slash = '\0';
    snprintf(script, sizeof script, "%s/scripts/bench.sh", root);
    if (access(script, X_OK) != 0 || access("/usr/bin/python3", X_OK) != 0) {
        print_message("skipped: no %s (or no /usr/bin/python3) beside this test\n", script);
        skip();
    }
    const char *out = tu_path(2, "bench");
    const char *log = tu_path(3, "bench.out");
    char cmd[16384];
    snprintf(cmd, sizeof cmd,
             "env STMBENCH='%s' BENCH_OUT='%s' BENCH_RUNTIMES='gil htm' BENCH_WORKLOADS=bank "
             "BENCH_THREADS=1 BENCH_DURATION=0.05 BENCH_REPEAT=1 BENCH_PLOTS=0 BENCH_ARGS= "
             "BENCH_PIN= BENCH_SEED= BENCH_TIMEOUT= '%s' >'%s' 2>&1",
             bin, out, script, log);
    int rc = system(cmd);
    char *text = tu_read(log, NULL);
    assert_non_null(text);
    if (rc != 0)
        fail_msg("bench.sh exited with status %d:\n%s", rc, text);
    int nskip = 0;
    for (const char *p = text; (p = strstr(p, "bench: skipped htm on this machine: ")); p++)
        nskip++;
    char csvp[600];
    snprintf(csvp, sizeof csvp, "%s/runs.csv", out);
    char *csv = tu_read(csvp, NULL);
    assert_non_null(csv);
    int gil_rows = strstr(csv, ",gil,bank,") != NULL, htm_rows = strstr(csv, ",htm,bank,") != NULL;
    if (rtm_works()) {
        assert_int_equal(nskip, 0);
        assert_true(htm_rows);
    } else {
        assert_int_equal(nskip, 1);
        assert_non_null(strstr(text, "bench: skipped htm on this machine: htm: no working RTM "
                                     "on this CPU"));
        assert_false(htm_rows);
        assert_null(strstr(text, "FAILED"));
    }
    assert_true(gil_rows);
    free(csv);
    free(text);
}

/* ---------------------------------------------- the fallback path, forced aborts */

/* Bank with audits checked inside the blocks at 1, 2 and 4 threads, each attempt forced
 * to abort with `status`: every block must end under the GIL after `per_block` aborts. */
static void forced_bank(unsigned status, const char *retries, unsigned long long per_block,
                        enum sync_abort_kind kind)
{
    htm_test_force_aborts(1, status);
    static const char *const th[] = {"1", "2", "4"};
    for (int i = 0; i < 3; i++) {
        const char *extra[] = {"--ops", "3000", "--transfer-pct", "50", "--accounts", "64",
                               "--htm-retries", retries, NULL};
        struct row r = run_htm("bank", th[i], extra);
        assert_int_equal(r.ops, 3000);
        assert_int_equal(r.htm_commits, 0);             /* nothing ran in hardware */
        assert_int_equal(r.inevitable, r.commits);     /* every block took the GIL */
        assert_true(r.commits > 0);
        assert_int_equal(r.aborts, per_block * r.commits);
        unsigned long long by_kind = kind == SYNC_ABORT_HTM_CONFLICT   ? r.conflict
                                     : kind == SYNC_ABORT_HTM_CAPACITY ? r.capacity
                                     : kind == SYNC_ABORT_HTM_EXPLICIT ? r.explicit_
                                                                        : r.other;
        assert_int_equal(by_kind, r.aborts);
        char want[96];
        snprintf(want, sizeof want, "htm_retries=%s;htm_forced_abort=0x%x", retries, status);
        assert_non_null(strstr(r.params, want));
    }
    htm_test_force_aborts(0, 0);
}

static void test_conflicts_retry_R_times_forced_aborts(void **state)
{
    (void)state;
    forced_bank(STATUS_CONFLICT, "5", 5, SYNC_ABORT_HTM_CONFLICT);
    forced_bank(STATUS_CONFLICT, "3", 3, SYNC_ABORT_HTM_CONFLICT);
    forced_bank(STATUS_CONFLICT, "1", 1, SYNC_ABORT_HTM_CONFLICT);
}

static void test_capacity_falls_back_at_once_forced_aborts(void **state)
{
    (void)state;
    forced_bank(STATUS_CAPACITY, "5", 1, SYNC_ABORT_HTM_CAPACITY);
}

static void test_explicit_and_other_forced_aborts(void **state)
{
    (void)state;
    forced_bank(STATUS_GIL_HELD, "4", 4, SYNC_ABORT_HTM_EXPLICIT);      /* GIL held: retry */
    forced_bank(STATUS_INEVITABLE, "4", 1, SYNC_ABORT_HTM_EXPLICIT);    /* irrevocable */
    forced_bank(STATUS_OTHER, "2", 2, SYNC_ABORT_OTHER);
}

/* Every workload's checks pass when every block runs under the fallback GIL, at 2 and
 * 4 threads (allocation and free inside blocks included). */
static void test_all_workloads_under_fallback_gil_forced_aborts(void **state)
{
    (void)state;
    htm_test_force_aborts(1, STATUS_CONFLICT);
    static const char *const wls[] = {"rbtree", "hashmap", "interp"};
    static const char *const th[] = {"2", "4"};
    for (int w = 0; w < 3; w++)
        for (int i = 0; i < 2; i++) {
            static const char *const interp_extra[] = {"--ops", "20000", "--program",
                                                       "shared-counter", "--htm-retries", "2",
                                                       NULL};
            static const char *const other_extra[] = {"--ops", "4000", "--update", "50",
                                                      "--htm-retries", "2", NULL};
            struct row r = run_htm(wls[w], th[i], w == 2 ? interp_extra : other_extra);
            assert_int_equal(r.htm_commits, 0);
            assert_int_equal(r.inevitable, r.commits);
            assert_int_equal(r.conflict, 2 * r.commits);
        }
    htm_test_force_aborts(0, 0);
}

/* ------------------------------------------------------- direct: lost updates */

struct counter {
    SYNC_OBJECT_HEADER;
    long value;
    long pair[2];   /* always written together: a reader must never see them differ */
};

enum { NTHREADS = 4 };

static struct {
    SYNC_REF(struct counter) c;
    long per_thread;
    atomic_int torn, enter_failed;
    struct sync_stats stats[NTHREADS];
} lu;

static void *lu_worker(void *arg)
{
    int tid = (int)(intptr_t)arg;
    char err[200];
    if (sync_runtime_htm.thread_enter(tid, err, sizeof err) != 0) {
        /* relaxed: read by the main thread after pthread_join */
        atomic_store_explicit(&lu.enter_failed, 1, memory_order_relaxed);
        return NULL;
    }
    for (long i = 0; i < lu.per_thread; i++) {
        SYNC_ATOMIC("test.increment") {
            SYNC_WRITE(lu.c);
            lu.c->value = lu.c->value + 1;
            long v = lu.c->pair[0] + 1;
            lu.c->pair[0] = v;
            SYNC_ATOMIC("test.nested") {   /* joins the outer block */
                lu.c->pair[1] = v;
            }
        }
        int bad = 0;
        SYNC_ATOMIC("test.read") {
            SYNC_READ(lu.c);
            bad = lu.c->pair[0] != lu.c->pair[1];
        }
        if (bad)   /* relaxed: read after join */
            atomic_fetch_add_explicit(&lu.torn, 1, memory_order_relaxed);
    }
    sync_runtime_htm.thread_exit(&lu.stats[tid]);
    return NULL;
}

/* 4 threads increment one counter in blocks; returns the merged stats of the workers. */
static struct sync_stats lost_update_run(long per_thread)
{
    struct sync_config cfg = {.nthreads = NTHREADS, .seed = 1};
    char err[200];
    if (sync_runtime_htm.init(&cfg, err, sizeof err) != 0)
        fail_msg("htm init: %s", err);
    memset(&lu, 0, sizeof lu);
    lu.per_thread = per_thread;
    assert_int_equal(sync_runtime_htm.thread_enter(0, err, sizeof err), 0);
    SYNC_ATOMIC("test.setup") {
        lu.c = SYNC_ALLOC(struct counter);
    }
    sync_runtime_htm.thread_exit(NULL);
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, lu_worker, (void *)(intptr_t)i), 0);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&lu.enter_failed), 0);
    assert_int_equal(atomic_load(&lu.torn), 0);
    assert_int_equal(sync_runtime_htm.thread_enter(0, err, sizeof err), 0);
    long value = 0, p0 = 0;
    SYNC_ATOMIC("test.check") {
        SYNC_READ(lu.c);
        value = lu.c->value;
        p0 = lu.c->pair[0];
    }
    SYNC_ATOMIC("test.free") {
        SYNC_FREE(lu.c);
    }
    sync_runtime_htm.thread_exit(NULL);
    sync_runtime_htm.fini();
    assert_int_equal(value, NTHREADS * per_thread);
    assert_int_equal(p0, NTHREADS * per_thread);
    struct sync_stats total;
    memset(&total, 0, sizeof total);
    for (int i = 0; i < NTHREADS; i++)
        sync_stats_merge(&total, &lu.stats[i]);
    /* two outermost blocks per iteration; the nested one is not counted */
    assert_int_equal(total.commits, 2 * NTHREADS * per_thread);
    assert_int_equal(total.commits, total.htm_commits + total.inevitable);
    return total;
}

static void test_lost_update_counter_fallback_gil_forced_aborts(void **state)
{
    (void)state;
    htm_test_force_aborts(1, STATUS_CONFLICT);
    sync_waits_wanted = 1;   /* GIL waits logged too, as with --conflicts (H6 of htm.c) */
    struct sync_stats s = lost_update_run(12000);   /* 120,000 aborts a thread: past the log cap */
    htm_test_force_aborts(0, 0);
    assert_int_equal(s.htm_commits, 0);
    assert_int_equal(s.inevitable, s.commits);
    assert_int_equal(s.aborts[SYNC_ABORT_HTM_CONFLICT], HTM_DEFAULT_RETRIES * s.commits);
    /* one conflict-log row per abort, with its block's label, up to 100,000 rows per
     * thread with its waits' rows (H6): never thinned, every abort row weighs 1 */
    unsigned long long per_thread = HTM_DEFAULT_RETRIES * s.commits / NTHREADS;
    assert_true(per_thread > 100000);
    assert_int_equal(s.nconflicts, NTHREADS * 100000);
    size_t waits = 0;
    for (size_t i = 0; i < s.nconflicts; i++) {
        if (s.conflicts[i].kind == SYNC_KIND_LOCK_WAIT) {
            waits++;
            continue;
        }
        assert_int_equal(s.conflicts[i].weight, 1);
    }
    assert_true(waits > 0);   /* 4 threads took one GIL 24,000 times each */
    assert_int_equal(s.conflicts[0].kind, SYNC_ABORT_HTM_CONFLICT);
    assert_true(strcmp(s.conflicts[0].site, "test.increment") == 0 ||
                strcmp(s.conflicts[0].site, "test.read") == 0);
    sync_stats_free(&s);
}

/* Contention analysis under the fallback (H6 of htm.c): a block that finds the GIL
 * held by another's fallback block waits, and that wait is one lock-wait row naming
 * the GIL, both threads, both blocks' labels and both locations (the workload's hook:
 * here fixed codes). The holder lets go only once the waiter's hook has been asked
 * where it waits (the wait has begun), then 5 ms more: a wait whatever the timing. */
static struct {
    sem_t held;
    atomic_int waiting;
    struct sync_stats st[2];
    int enter_rc[2];
} hw;

static uint32_t hw_where_holder(void *arg, int tid, uintptr_t obj)
{
    (void)arg; (void)obj;
    return tid == 0 ? 55 : 0;
}

static uint32_t hw_where_waiter(void *arg, int tid, uintptr_t obj)
{
    (void)arg; (void)obj;
    /* relaxed: a signal that orders nothing else */
    atomic_store_explicit(&hw.waiting, 1, memory_order_relaxed);
    return tid == 1 ? 77 : 0;
}

static void *hw_thread(void *arg)
{
    int tid = (int)(intptr_t)arg;
    char err[200];
    if (tid == 1)
        sem_wait(&hw.held);
    sync_where = (struct sync_where_hook){.at = tid == 0 ? hw_where_holder : hw_where_waiter};
    hw.enter_rc[tid] = sync_runtime_htm.thread_enter(tid, err, sizeof err);
    if (tid == 0) {
        SYNC_ATOMIC("test.hold") {
            sem_post(&hw.held);
            struct timespec ms = {0, 1000000L};
            for (int i = 0; i < 2000 && !atomic_load_explicit(&hw.waiting, memory_order_relaxed); i++)
                nanosleep(&ms, NULL);
            struct timespec five = {0, 5000000L};
            nanosleep(&five, NULL);
        }
    } else {
        SYNC_ATOMIC("test.wait") {
            /* empty: its begin waited */
        }
        SYNC_ATOMIC("test.alone") {
            /* nobody holds the GIL now: no wait */
        }
    }
    sync_runtime_htm.thread_exit(&hw.st[tid]);
    sync_where = (struct sync_where_hook){0};
    return NULL;
}

static size_t hw_waits(const struct sync_stats *s, const struct sync_conflict **last)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nconflicts; i++)
        if (s->conflicts[i].kind == SYNC_KIND_LOCK_WAIT) {
            n += s->conflicts[i].weight;
            *last = &s->conflicts[i];
        }
    return n;
}

static void test_fallback_wait_names_holder_forced_aborts(void **state)
{
    (void)state;
#if !STMBENCH_WHERE
    skip();                        /* make WHERE=0: no row is logged */
#endif
    struct sync_config cfg = {.nthreads = 2, .seed = 1};
    char err[200];
    htm_test_force_aborts(1, STATUS_CONFLICT);   /* every block falls back to the GIL */
    sync_waits_wanted = 1;         /* as with --conflicts (a run before may have cleared it) */
    if (sync_runtime_htm.init(&cfg, err, sizeof err) != 0)
        fail_msg("htm init: %s", err);
    memset(&hw, 0, sizeof hw);
    sem_init(&hw.held, 0, 0);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, hw_thread, (void *)(intptr_t)i), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    sync_runtime_htm.fini();
    htm_test_force_aborts(0, 0);
    sem_destroy(&hw.held);
    assert_int_equal(hw.enter_rc[0], 0);
    assert_int_equal(hw.enter_rc[1], 0);
    const struct sync_conflict *c = NULL;
    assert_int_equal(hw_waits(&hw.st[0], &c), 0);
    assert_int_equal(hw_waits(&hw.st[1], &c), 1);
    assert_int_equal(c->thread, 1);
    assert_int_equal(c->other, 0);
    assert_string_equal(c->object_s, "the GIL");
    assert_string_equal(c->site, "test.wait");
    assert_non_null(c->other_site);
    assert_string_equal(c->other_site, "test.hold");
    assert_int_equal(c->where, 77);
    assert_int_equal(c->other_where, 55);
    assert_true(c->wasted_ns >= 5000000);   /* the holder's last pause */
    /* the aborts are still counted and logged, one row each */
    assert_int_equal(hw.st[1].aborts[SYNC_ABORT_HTM_CONFLICT], 2 * HTM_DEFAULT_RETRIES);
    assert_int_equal(hw.st[1].nconflicts, 2 * HTM_DEFAULT_RETRIES + 1);
    sync_stats_free(&hw.st[0]);
    sync_stats_free(&hw.st[1]);
}

/* ----------------------------------------------------------------- with RTM */

static void test_lost_update_counter_rtm(void **state)
{
    (void)state;
    NEED_RTM();
    struct sync_stats s = lost_update_run(20000);
    print_message("lost-update counter, 4 threads: %llu blocks, %llu in hardware, %llu "
                  "under the GIL; aborts: %llu conflict, %llu capacity, %llu explicit, "
                  "%llu other\n",
                  (unsigned long long)s.commits, (unsigned long long)s.htm_commits,
                  (unsigned long long)s.inevitable,
                  (unsigned long long)s.aborts[SYNC_ABORT_HTM_CONFLICT],
                  (unsigned long long)s.aborts[SYNC_ABORT_HTM_CAPACITY],
                  (unsigned long long)s.aborts[SYNC_ABORT_HTM_EXPLICIT],
                  (unsigned long long)s.aborts[SYNC_ABORT_OTHER]);
    assert_true(s.htm_commits > 0);
    sync_stats_free(&s);
}

static void test_bank_1_2_4_threads_rtm(void **state)
{
    (void)state;
    NEED_RTM();
    static const char *const th[] = {"1", "2", "4"};
    for (int i = 0; i < 3; i++) {
        static const char *const extra[] = {"--duration", "0.3", "--transfer-pct", "90", NULL};
        struct row r = run_htm("bank", th[i], extra);
        print_message("bank, 1024 accounts, %s threads: %llu blocks, %llu in hardware, %llu "
                      "under the GIL; aborts: %llu conflict, %llu capacity, %llu explicit, "
                      "%llu other\n",
                      th[i], r.commits, r.htm_commits, r.inevitable, r.conflict, r.capacity,
                      r.explicit_, r.other);
        assert_true(r.htm_commits > 0);
        assert_non_null(strstr(r.params, "htm_retries=5"));
        assert_null(strstr(r.params, "forced"));
    }
}

/* Audits of 100,000 accounts (several MiB of reads) do not fit any RTM read set: they
 * abort for capacity and complete under the GIL, and the counts say so. */
static void test_capacity_fallback_100k_accounts_rtm(void **state)
{
    (void)state;
    NEED_RTM();
    static const char *const extra[] = {"--ops", "60", "--transfer-pct", "0", "--accounts",
                                        "100000", NULL};
    struct row r = run_htm("bank", "2", extra);
    print_message("bank, 100,000 accounts, audits only, 2 threads: %llu blocks, %llu in "
                  "hardware, %llu under the GIL; aborts: %llu capacity, %llu conflict, "
                  "%llu explicit, %llu other\n",
                  r.commits, r.htm_commits, r.inevitable, r.capacity, r.conflict, r.explicit_,
                  r.other);
    assert_true(r.capacity > 0);
    assert_true(r.inevitable > 0);
}

/* sync_inevitable in a hardware block: the block re-runs under the GIL. */
static void test_inevitable_runs_under_gil_rtm(void **state)
{
    (void)state;
    NEED_RTM();
    struct sync_config cfg = {.nthreads = 1, .seed = 1};
    char err[200];
    assert_int_equal(sync_runtime_htm.init(&cfg, err, sizeof err), 0);
    assert_int_equal(sync_runtime_htm.thread_enter(0, err, sizeof err), 0);
    int locked_after = -1;
    SYNC_ATOMIC("test.inevitable") {
        sync_inevitable();
        locked_after = htm_self.locked;
    }
    struct sync_stats s;
    memset(&s, 0, sizeof s);
    sync_runtime_htm.thread_exit(&s);
    sync_runtime_htm.fini();
    assert_int_equal(locked_after, 1);
    assert_int_equal(s.commits, 1);
    assert_int_equal(s.inevitable, 1);
    assert_true(s.aborts[SYNC_ABORT_HTM_EXPLICIT] >= 1);
    sync_stats_free(&s);
}

/* Whatever a test did, the next one starts with real RTM attempts. */
static int hook_off(void **state)
{
    (void)state;
    htm_test_force_aborts(0, 0);
    return 0;
}

#define T(f) cmocka_unit_test_teardown(f, hook_off)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_policy_anycpu),
        T(test_listed_and_flag_checked_anycpu),
        T(test_context_json_anycpu),
        T(test_no_rtm_exits_3),
        T(test_bench_skips_htm_without_rtm_anycpu),
        T(test_conflicts_retry_R_times_forced_aborts),
        T(test_capacity_falls_back_at_once_forced_aborts),
        T(test_explicit_and_other_forced_aborts),
        T(test_all_workloads_under_fallback_gil_forced_aborts),
        T(test_lost_update_counter_fallback_gil_forced_aborts),
        T(test_fallback_wait_names_holder_forced_aborts),
        T(test_lost_update_counter_rtm),
        T(test_bank_1_2_4_threads_rtm),
        T(test_capacity_fallback_100k_accounts_rtm),
        T(test_inevitable_runs_under_gil_rtm),
    };
    return cmocka_run_group_tests(tests, tu_setup_dir, tu_teardown_dir);
}
