/*
 * tests/test_bank.c - the bank workload through the harness under seq, mutex, gil,
 * locks and stm, at 1 and 2 threads, with a fixed op count and with a short duration; the run
 * must exit 0 and its CSV row say check=pass. stm runs the same cases. The locks
 * variant also runs a randomized stress at 4 and 8 threads.
 */
#include "tests/stmbench_testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

/* Runs bank with the given extra args, then asserts exit 0 and check=pass in the new
 * last row of the CSV; returns the row's ops. */
static unsigned long long run_bank(const char *rt, const char *threads, const char *const *extra)
{
    static int n;
    char name[64];
    snprintf(name, sizeof name, "bank-%d.csv", n++);
    const char *csv = tu_path(0, name);
    const char *args[32] = {"--runtime", rt, "--workload", "bank", "--threads", threads,
                            "--csv", csv};
    int k = 8;
    for (int i = 0; extra[i]; i++)
        args[k++] = extra[i];
    args[k] = NULL;
    int rc;
    free(tu_capture_stdout(tu_runv, args, &rc));
    if (rc != 0)
        fail_msg("bank under %s with %s threads exited %d", rt, threads, rc);
    char *text = tu_read(csv, NULL);
    assert_non_null(text);
    assert_int_equal(tu_count_lines(text), 2);
    char f[64];
    assert_int_equal(tu_field(text, 0, "check", f, sizeof f), 0);
    assert_string_equal(f, "pass");
    assert_int_equal(tu_field(text, 0, "runtime", f, sizeof f), 0);
    assert_string_equal(f, rt);
    assert_int_equal(tu_field(text, 0, "threads", f, sizeof f), 0);
    assert_string_equal(f, threads);
    assert_int_equal(tu_field(text, 0, "aborts", f, sizeof f), 0);
    if (strcmp(rt, "stm") != 0)
        assert_string_equal(f, "0");    /* only the STM ever aborts */
    else if (strcmp(threads, "1") == 0)
        assert_string_equal(f, "0");    /* a thread alone never conflicts */
    assert_int_equal(tu_field(text, 0, "ops", f, sizeof f), 0);
    free(text);
    return strtoull(f, NULL, 10);
}

static void run_all(const char *rt, int max_threads)
{
    static const char *const ops[] = {"--ops", "20000", NULL};
    static const char *const dur[] = {"--duration", "0.2", NULL};
    static const char *const small[] = {"--ops", "20000", "--accounts", "2", "--transfer-pct",
                                        "50", "--ops-per-tx", "3", NULL};
    static const char *const audits[] = {"--ops", "2000", "--transfer-pct", "0", NULL};
    static const char *const batch[] = {"--duration", "0.2", "--ops-per-tx", "16",
                                        "--accounts", "64", "--pin", "scatter", NULL};
    for (int th = 1; th <= max_threads; th++) {
        const char *ts = th == 1 ? "1" : "2";
        assert_int_equal(run_bank(rt, ts, ops), 20000);
        assert_true(run_bank(rt, ts, dur) > 0);
        assert_int_equal(run_bank(rt, ts, small), 20000);
        assert_int_equal(run_bank(rt, ts, audits), 2000);
        assert_true(run_bank(rt, ts, batch) > 0);
    }
}

static void test_bank_seq(void **state) { (void)state; run_all("seq", 1); }
static void test_bank_mutex(void **state) { (void)state; run_all("mutex", 2); }
static void test_bank_gil(void **state) { (void)state; run_all("gil", 2); }
static void test_bank_locks(void **state) { (void)state; run_all("locks", 2); }
static void test_bank_stm(void **state) { (void)state; run_all("stm", 2); }

/* Randomized stress of the locks variant at 4 and 8 threads (more threads than this
 * machine's cores): lock-free audits race with transfers on few accounts, so a wrong
 * snapshot validation shows up as an audit total that is off (check=fail, exit 1). */
static void test_bank_locks_stress(void **state)
{
    (void)state;
    static const char *const seeds[] = {"1", "7", "12345"};
    for (int s = 0; s < 3; s++) {
        const char *const few[] = {"--ops", "200000", "--accounts", "8", "--transfer-pct",
                                   "50", "--seed", seeds[s], NULL};
        const char *const many[] = {"--duration", "0.3", "--accounts", "1024",
                                    "--seed", seeds[s], NULL};
        const char *const mixed[] = {"--ops", "100000", "--accounts", "16", "--transfer-pct",
                                     "80", "--ops-per-tx", "4", "--seed", seeds[s], NULL};
        for (int th = 4; th <= 8; th += 4) {
            const char *ts = th == 4 ? "4" : "8";
            assert_int_equal(run_bank("locks", ts, few), 200000);
            assert_true(run_bank("locks", ts, many) > 0);
            assert_int_equal(run_bank("locks", ts, mixed), 100000);
        }
    }
}

/* An op count that does not divide by the thread count: the targets still add up. */
static void test_bank_ops_split_odd(void **state)
{
    (void)state;
    static const char *const odd[] = {"--ops", "20001", NULL};
    assert_int_equal(run_bank("mutex", "2", odd), 20001);
    assert_int_equal(run_bank("locks", "2", odd), 20001);
    assert_int_equal(run_bank("stm", "2", odd), 20001);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bank_seq),
        cmocka_unit_test(test_bank_mutex),
        cmocka_unit_test(test_bank_gil),
        cmocka_unit_test(test_bank_locks),
        cmocka_unit_test(test_bank_stm),
        cmocka_unit_test(test_bank_ops_split_odd),
        cmocka_unit_test(test_bank_locks_stress),
    };
    return cmocka_run_group_tests(tests, tu_setup_dir, tu_teardown_dir);
}
