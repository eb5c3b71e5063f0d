/*
 * tests/test_itm.c - the itm runtime (GCC's libitm). Compiled by gcc -fgnu-tm (the
 * Makefile's own rule; left out where gcc or libitm is missing).
 *
 *  - Through the harness (stmbench_main): bank, rbtree, hashmap and interp (every
 *    built-in program and tests/programs/) under itm at 1 and 2 threads, by op count
 *    and by duration; each run exits 0 with check=pass, and aborts read 0 (libitm does
 *    not expose its restarts).
 *  - Directly against runtime/sync.h: a shared counter incremented by 4 threads in
 *    atomic blocks loses no update; a pair of words written together is never seen
 *    torn; nested blocks count one commit; SYNC_ALLOC in a block gives zeroed, 16-byte
 *    aligned objects with the header's size set; sync_inevitable keeps the block whole.
 *  - libitm's method: unless the user set ITM_DEFAULT_METHOD, itm.c sets it to ml_wt
 *    before main(); the CSV's params and the context JSON record it and who chose it.
 *    That the method is in effect is observed, not assumed: in a transaction,
 *    _ITM_inTransaction() says 1 (retryable) under ml_wt and 2 (irrevocable) under
 *    serialirr, which is what libitm runs by itself while one thread is registered.
 *    Fresh processes (this program re-run with --itm-mode-probe, and build/stmbench)
 *    check it with the variable unset, set to serialirr and set to gl_wt.
 */
#define SYNC_RT itm
#include "runtime/sync.h"
#include "tests/stmbench_testutil.h"

#include <pthread.h>
#include <setjmp.h>
#include <spawn.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>

#include <cmocka.h>

/* ------------------------------------------------------------ through the harness */

/* Runs workload w under itm with the extra args; asserts exit 0 and a passing row
 * (runtime itm, aborts 0, commits > 0); returns the row's ops. */
static unsigned long long run_itm(const char *w, const char *threads, const char *const *extra)
{
    static int n;
    char name[64];
    snprintf(name, sizeof name, "itm-%d.csv", n++);
    const char *csv = tu_path(0, name);
    const char *args[40] = {"--runtime", "itm", "--workload", w, "--threads", threads,
                            "--csv", csv};
    int k = 8;
    for (int i = 0; extra[i] && k < 38; i++)
        args[k++] = extra[i];
    args[k] = NULL;
    int rc;
    free(tu_capture_stdout(tu_runv, args, &rc));
    if (rc != 0) {
        char all[300] = "";
        for (int i = 0; extra[i]; i++)
            snprintf(all + strlen(all), sizeof all - strlen(all), " %s", extra[i]);
        fail_msg("%s under itm with %s threads,%s: exit %d", w, threads, all, rc);
    }
    char *text = tu_read(csv, NULL);
    assert_non_null(text);
    assert_int_equal(tu_count_lines(text), 2);
    char f[64];
    assert_int_equal(tu_field(text, 0, "check", f, sizeof f), 0);
    assert_string_equal(f, "pass");
    assert_int_equal(tu_field(text, 0, "runtime", f, sizeof f), 0);
    assert_string_equal(f, "itm");
    assert_int_equal(tu_field(text, 0, "threads", f, sizeof f), 0);
    assert_string_equal(f, threads);
    assert_int_equal(tu_field(text, 0, "aborts", f, sizeof f), 0);
    assert_string_equal(f, "0");
    assert_int_equal(tu_field(text, 0, "commits", f, sizeof f), 0);
    assert_true(strtoull(f, NULL, 10) > 0);
    assert_int_equal(tu_field(text, 0, "ops", f, sizeof f), 0);
    free(text);
    return strtoull(f, NULL, 10);
}

static void test_bank(void **state)
{
    (void)state;
    static const char *const ops[] = {"--ops", "20000", NULL};
    static const char *const dur[] = {"--duration", "0.2", NULL};
    static const char *const small[] = {"--ops", "20000", "--accounts", "2", "--transfer-pct",
                                        "50", "--ops-per-tx", "3", NULL};
    static const char *const audits[] = {"--ops", "2000", "--transfer-pct", "0", NULL};
    static const char *const batch[] = {"--duration", "0.2", "--ops-per-tx", "16",
                                        "--accounts", "64", "--pin", "scatter", NULL};
    for (int th = 1; th <= 2; th++) {
        const char *ts = th == 1 ? "1" : "2";
        assert_int_equal(run_itm("bank", ts, ops), 20000);
        assert_true(run_itm("bank", ts, dur) > 0);
        assert_int_equal(run_itm("bank", ts, small), 20000);
        assert_int_equal(run_itm("bank", ts, audits), 2000);
        assert_true(run_itm("bank", ts, batch) > 0);
    }
}

/* rbtree and hashmap take the same knobs (hashmap adds --buckets). */
static void run_set(const char *w)
{
    static const char *const small[] = {"--ops", "20000", "--size", "256", NULL};
    static const char *const hot[] = {"--ops", "20000", "--size", "32", "--range", "64",
                                      "--update", "100", "--ops-per-tx", "4", NULL};
    static const char *const dur[] = {"--duration", "0.2", NULL};
    for (int th = 1; th <= 2; th++) {
        const char *ts = th == 1 ? "1" : "2";
        assert_int_equal(run_itm(w, ts, small), 20000);
        assert_int_equal(run_itm(w, ts, hot), 20000);
        assert_true(run_itm(w, ts, dur) > 0);
    }
}

static void test_rbtree(void **state) { (void)state; run_set("rbtree"); }

static void test_hashmap(void **state)
{
    (void)state;
    run_set("hashmap");
    static const char *const chain[] = {"--ops", "20000", "--size", "64", "--buckets", "1",
                                        "--update", "50", NULL};
    assert_int_equal(run_itm("hashmap", "2", chain), 20000);
}

static void test_interp(void **state)
{
    (void)state;
    static const char *const programs[] = {
        "counters", "shared-counter", "list-append", "mixed",
        "tests/programs/fib.stm", "tests/programs/bank.stm", "tests/programs/matrix.stm",
        "tests/programs/atomicity.stm", NULL,
    };
    for (int th = 1; th <= 2; th++) {
        const char *ts = th == 1 ? "1" : "2";
        for (int p = 0; programs[p]; p++) {
            const char *ops[] = {"--program", programs[p], "--ops", "30000", NULL};
            const char *dur[] = {"--program", programs[p], "--duration", "0.1",
                                 "--switch-interval", "7", "--iterations", "300", NULL};
            assert_true(run_itm("interp", ts, ops) > 0);
            assert_true(run_itm("interp", ts, dur) > 0);
        }
    }
}

/* The harness lists itm; its summary says aborts are not reported. */
static void test_listed(void **state)
{
    (void)state;
    const struct sync_runtime *rt = sync_runtime_find("itm");
    assert_non_null(rt);
    assert_ptr_equal(rt, &sync_runtime_itm);
    assert_non_null(strstr(rt->summary, "aborts"));
    static const char *const list[] = {"--list", NULL};
    int rc;
    char *out = tu_capture_stdout(tu_runv, list, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "runtime itm\n"));
    free(out);
}

/* ------------------------------------------------------------ libitm's method */

extern char **environ;

/* Runs argv[0] with this process's environment, except ITM_DEFAULT_METHOD, which is
 * `method` (NULL: unset); its stdout into out. Returns the exit status (-1: no start). */
static int spawn_with_method(const char *method, char *const argv[], char *out, size_t outlen)
{
    char *envp[512];
    int n = 0;
    static char var[128];
    for (char **e = environ; *e && n < 500; e++)
        if (strncmp(*e, "ITM_DEFAULT_METHOD=", 19) != 0)
            envp[n++] = *e;
    if (method) {
        snprintf(var, sizeof var, "ITM_DEFAULT_METHOD=%s", method);
        envp[n++] = var;
    }
    envp[n] = NULL;
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return -1;
    }
    size_t len = 0;
    ssize_t r;
    while (len + 1 < outlen && (r = read(fds[0], out + len, outlen - 1 - len)) > 0)
        len += (size_t)r;
    out[len] = '\0';
    close(fds[0]);
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* What _ITM_inTransaction() says inside a transaction of this thread. The store to a
 * global keeps gcc from dropping the transaction (it removes one that touches nothing). */
static long itm_probe_word;
static SYNC_NOINLINE int itm_mode_in_transaction(void)
{
    int mode = -1;
    __transaction_relaxed {
        itm_probe_word++;
        mode = _ITM_inTransaction();
    }
    return mode;
}

static void self_path(char *buf, size_t n)
{
    ssize_t l = readlink("/proc/self/exe", buf, n - 1);
    assert_true(l > 0);
    buf[l] = '\0';
}

/* This process: the method and who chose it, as recorded, and in effect. */
static void test_method_recorded(void **state)
{
    (void)state;
    const char *env = getenv("ITM_DEFAULT_METHOD");
    assert_non_null(env);
    if (!itm_method_user()) {
        assert_string_equal(env, "ml_wt");        /* set by itm.c before main() */
        assert_string_equal(itm_method(), "ml_wt");
        assert_int_equal(itm_mode_in_transaction(), 1);   /* ml_wt: retryable */
    } else {
        print_message("ITM_DEFAULT_METHOD=%s was set by the user: expecting it recorded as "
                      "such\n", env);
    }
    char want[160];
    snprintf(want, sizeof want, "itm_method=%s;itm_method_by=%s", itm_method(),
             itm_method_user() ? "user" : "stmbench");
    const char *csv = tu_path(0, "method.csv");
    static const char *const extra[] = {"--ops", "200", NULL};
    assert_int_equal(tu_run_workload("bank", "itm", "1", csv, extra), 0);
    char *text = tu_read(csv, NULL);
    char params[256];
    assert_int_equal(tu_field(text, 0, "params", params, sizeof params), 0);
    assert_non_null(strstr(params, want));
    free(text);
    char *ctx = tu_read(tu_path(0, "method.context.json"), NULL);
    assert_non_null(ctx);
    snprintf(want, sizeof want, "\"itm_method\": \"%s\",\n  \"itm_method_by\": \"%s\"",
             itm_method(), itm_method_user() ? "user" : "stmbench");
    assert_non_null(strstr(ctx, want));
    free(ctx);
}

/* Fresh processes: without the variable the pin makes even a lone thread's transaction
 * retryable (ml_wt); a user's serialirr is respected (irrevocable), as is gl_wt. */
static void test_method_in_fresh_processes(void **state)
{
    (void)state;
    char self[4096], out[256];
    self_path(self, sizeof self);
    char *const argv[] = {self, "--itm-mode-probe", NULL};
    assert_int_equal(spawn_with_method(NULL, argv, out, sizeof out), 0);
    assert_string_equal(out, "1 ml_wt stmbench\n");
    assert_int_equal(spawn_with_method("serialirr", argv, out, sizeof out), 0);
    assert_string_equal(out, "2 serialirr user\n");
    assert_int_equal(spawn_with_method("gl_wt", argv, out, sizeof out), 0);
    assert_string_equal(out, "1 gl_wt user\n");
}

/* build/stmbench with ITM_DEFAULT_METHOD=gl_wt from the user: params and context say so. */
static void test_user_method_through_stmbench(void **state)
{
    (void)state;
    char self[4096], bin[4200], out[4096];
    self_path(self, sizeof self);
    char *slash = strrchr(self, '/');
    assert_non_null(slash);
    *slash = '\0';   /* BUILD/tests */
    snprintf(bin, sizeof bin, "%s/../stmbench", self);
    const char *csv = tu_path(0, "user.csv");
    char *const argv[] = {bin, "--runtime", "itm", "--workload", "bank", "--ops", "500",
                          "--threads", "2", "--csv", (char *)csv, NULL};
    assert_int_equal(spawn_with_method(" gl_wt ", argv, out, sizeof out), 0);
    char *text = tu_read(csv, NULL);
    assert_non_null(text);
    char params[256];
    assert_int_equal(tu_field(text, 0, "params", params, sizeof params), 0);
    assert_non_null(strstr(params, "itm_method=gl_wt;itm_method_by=user"));
    free(text);
    char *ctx = tu_read(tu_path(0, "user.context.json"), NULL);
    assert_non_null(ctx);
    assert_non_null(strstr(ctx, "\"itm_method\": \"gl_wt\",\n  \"itm_method_by\": \"user\""));
    free(ctx);
    /* and without the variable, the same binary pins ml_wt */
    char *const argv2[] = {bin, "--runtime", "itm", "--workload", "bank", "--ops", "500",
                           "--csv", (char *)tu_path(1, "pinned.csv"), NULL};
    assert_int_equal(spawn_with_method(NULL, argv2, out, sizeof out), 0);
    text = tu_read(tu_path(1, "pinned.csv"), NULL);
    assert_non_null(text);
    assert_int_equal(tu_field(text, 0, "params", params, sizeof params), 0);
    assert_non_null(strstr(params, "itm_method=ml_wt;itm_method_by=stmbench"));
    free(text);
}

/* ------------------------------------------------------------ directly, by blocks */

struct cell {
    SYNC_OBJECT_HEADER;
    long value;
};
typedef SYNC_REF(struct cell) cell_ref;

/* Two words that every writer changes together: a + b == 0 in every committed state. */
struct pair {
    SYNC_OBJECT_HEADER;
    long a;
    char pad[120];                 /* on another cache line than a */
    long b;
};
typedef SYNC_REF(struct pair) pair_ref;

#define NTHREADS 4
#define INCREMENTS 20000

struct shared {
    cell_ref counter;
    pair_ref pair;
    atomic_int go;                 /* start gate */
    long torn[NTHREADS];           /* per thread: torn pairs seen */
    struct sync_stats stats[NTHREADS];
};

struct targ {
    struct shared *s;
    int tid;
};

/* Widens the window between a block's read and its write, so that without the
 * transaction the test would lose updates and see torn pairs. transaction_pure: gcc
 * calls it as is inside a block (no instrumentation, no switch to serial mode); the
 * asm makes each call a compiler barrier. */
static __attribute__((noinline, transaction_pure)) void dawdle(long n)
{
    for (long k = 0; k < n; k++)
        __asm__ __volatile__("" ::: "memory");
}

static void *worker(void *p)
{
    struct targ *a = p;
    struct shared *s = a->s;
    char err[200];
    if (sync_runtime_itm.thread_enter(a->tid, err, sizeof err) != 0)
        return (void *)1;
    /* acquire: pairs with the main thread's release store of go after set-up */
    while (!atomic_load_explicit(&s->go, memory_order_acquire))
        ;
    cell_ref c = s->counter;
    pair_ref pr = s->pair;
    long torn = 0;
    for (long i = 0; i < INCREMENTS; i++) {
        SYNC_ATOMIC("test.increment") {
            SYNC_WRITE(c);
            long v = c->value;
            dawdle(i & 63);
            c->value = v + 1;
        }
        long sum = 0;
        SYNC_ATOMIC("test.pair") {
            SYNC_WRITE(pr);
            if (i & 1) {
                pr->a += 3;
                dawdle(i & 31);
                pr->b -= 3;
            }
            long a0 = pr->a;
            dawdle(i & 31);
            sum = a0 + pr->b;
        }
        if (sum != 0)
            torn++;
    }
    s->torn[a->tid] = torn;
    sync_runtime_itm.thread_exit(&s->stats[a->tid]);
    return NULL;
}

static void test_no_lost_update(void **state)
{
    (void)state;
    char err[200];
    struct sync_config cfg = {.nthreads = NTHREADS, .seed = 1};
    assert_int_equal(sync_runtime_itm.init(&cfg, err, sizeof err), 0);
    assert_int_equal(sync_runtime_itm.thread_enter(0, err, sizeof err), 0);
    struct shared *s = calloc(1, sizeof *s);
    assert_non_null(s);
    SYNC_ATOMIC("test.tu_setup_dir") {
        s->counter = SYNC_ALLOC(struct cell);
        s->pair = SYNC_ALLOC(struct pair);
    }
    struct sync_stats main_stats;
    memset(&main_stats, 0, sizeof main_stats);
    sync_runtime_itm.thread_exit(&main_stats);
    assert_int_equal(main_stats.commits, 1);

    pthread_t th[NTHREADS];
    struct targ args[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        args[i] = (struct targ){s, i};
        assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
    }
    /* release: pairs with the workers' acquire loads of go */
    atomic_store_explicit(&s->go, 1, memory_order_release);
    for (int i = 0; i < NTHREADS; i++) {
        void *r;
        assert_int_equal(pthread_join(th[i], &r), 0);
        assert_null(r);
    }
    long total = 0;
    SYNC_ATOMIC("test.read") {
        total = s->counter->value;
    }
    assert_int_equal(total, (long)NTHREADS * INCREMENTS);
    for (int i = 0; i < NTHREADS; i++) {
        assert_int_equal(s->torn[i], 0);
        assert_int_equal(s->stats[i].commits, 2 * INCREMENTS);
        assert_int_equal(sync_stats_aborts(&s->stats[i]), 0);
    }
    SYNC_ATOMIC("test.tu_teardown_dir") {
        SYNC_FREE(s->counter);
        SYNC_FREE(s->pair);
    }
    free(s);
    sync_runtime_itm.fini();
}

/* An inner block joins the outer one: one commit; sync_inevitable inside still
 * commits the whole block. */
static void test_nested_and_inevitable(void **state)
{
    (void)state;
    char err[200];
    struct sync_config cfg = {.nthreads = 1, .seed = 1};
    assert_int_equal(sync_runtime_itm.init(&cfg, err, sizeof err), 0);
    assert_int_equal(sync_runtime_itm.thread_enter(0, err, sizeof err), 0);
    cell_ref c = SYNC_NULL;
    SYNC_ATOMIC("test.outer") {
        c = SYNC_ALLOC(struct cell);
        c->value = 1;
        SYNC_ATOMIC("test.inner") {
            SYNC_WRITE(c);
            c->value += 10;
        }
        c->value += 100;
    }
    long v = 0;
    SYNC_ATOMIC("test.inevitable") {
        SYNC_WRITE(c);
        c->value += 1000;
        sync_inevitable();
        c->value += 10000;
        v = c->value;
    }
    assert_int_equal(v, 11111);
    struct sync_stats st;
    memset(&st, 0, sizeof st);
    sync_runtime_itm.thread_exit(&st);
    assert_int_equal(st.commits, 2);
    SYNC_ATOMIC("test.free") {
        SYNC_FREE(c);
    }
    sync_runtime_itm.fini();
}

struct odd {
    SYNC_OBJECT_HEADER;
    char bytes[37];
};

/* SYNC_ALLOC inside a block: zeroed, 16-byte aligned, size in the header. */
static void test_alloc(void **state)
{
    (void)state;
    char err[200];
    struct sync_config cfg = {.nthreads = 1, .seed = 1};
    assert_int_equal(sync_runtime_itm.init(&cfg, err, sizeof err), 0);
    assert_int_equal(sync_runtime_itm.thread_enter(0, err, sizeof err), 0);
    enum { N = 64 };
    SYNC_REF(struct odd) objs[N];
    SYNC_ATOMIC("test.alloc") {
        for (int i = 0; i < N; i++)
            objs[i] = SYNC_ALLOC(struct odd);
    }
    for (int i = 0; i < N; i++) {
        assert_int_equal(SYNC_REF_ID(objs[i]) % 16, 0);
        assert_int_equal(objs[i]->_sync_hdr.size, sizeof(struct odd));
        assert_int_equal(objs[i]->_sync_hdr.flags, 0);
        for (size_t b = 0; b < sizeof objs[i]->bytes; b++)
            assert_int_equal(objs[i]->bytes[b], 0);
    }
    SYNC_ATOMIC("test.free") {
        for (int i = 0; i < N; i++)
            SYNC_FREE(objs[i]);
    }
    sync_runtime_itm.thread_exit(NULL);
    sync_runtime_itm.fini();
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--itm-mode-probe") == 0) {
        /* A fresh process: this thread's first transaction registers it with libitm. */
        int mode = itm_mode_in_transaction();
        printf("%d %s %s\n", mode, itm_method(), itm_method_user() ? "user" : "stmbench");
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listed),
        cmocka_unit_test(test_method_recorded),
        cmocka_unit_test(test_method_in_fresh_processes),
        cmocka_unit_test(test_user_method_through_stmbench),
        cmocka_unit_test(test_no_lost_update),
        cmocka_unit_test(test_nested_and_inevitable),
        cmocka_unit_test(test_alloc),
        cmocka_unit_test(test_bank),
        cmocka_unit_test(test_rbtree),
        cmocka_unit_test(test_hashmap),
        cmocka_unit_test(test_interp),
    };
    return cmocka_run_group_tests(tests, tu_setup_dir, tu_teardown_dir);
}
