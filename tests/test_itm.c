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
 */
#define SYNC_RT itm
#include "runtime/sync.h"
#include "tests/stmbench_testutil.h"

#include <pthread.h>
#include <setjmp.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listed),
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
