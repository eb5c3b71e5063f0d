/*
 * tests/test_txlen.c - transaction lengths: --ops-per-tx auto, --switch-interval auto
 * (workloads/workload.h) and the CSV columns tx_len_mean, tx_len_p50, tx_len_p99.
 *  - The policy itself (wl_txlen_next): grows after clean commits up to the maximum,
 *    halves after a re-run, never below 1.
 *  - Through the harness: under stm the length grows to the maximum without aborts
 *    and stays short when STM_CHAOS injects aborts; gil and locks run the fixed default
 *    and say so in params; fixed lengths are reported as run.
 *  - A slice boundary never falls inside ATOMIC_BEGIN..END: a program whose
 *    read-modify-write of a shared global spans many bytecodes inside a section loses
 *    updates (its check fails) when the section is split; it passes under stm with
 *    `auto` at 2 threads with chaos (short slices), and the same program without the
 *    section fails under --switch-interval 1 (the check does detect a split).
 */
#define SYNC_RT_SEQ
#include "runtime/sync.h"
#include "workloads/workload.h"
#include "tests/stmbench_testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

static void test_policy_grows_and_shrinks(void **state)
{
    (void)state;
    long len = 1;
    int steps = 0;
    while (len < 10000 && steps < 1000) {
        long n = wl_txlen_next(len, 10000, 0);
        assert_true(n > len);                       /* every clean commit grows it */
        len = n;
        steps++;
    }
    assert_int_equal(len, 10000);
    assert_true(steps < 400);                      /* geometric: reaches the max fast */
    assert_int_equal(wl_txlen_next(len, 10000, 0), 10000);   /* capped */
    assert_int_equal(wl_txlen_next(len, 10000, 1), 5000);    /* an abort halves */
    assert_int_equal(wl_txlen_next(len, 10000, 7), 5000);    /* once per block */
    assert_int_equal(wl_txlen_next(1, 10000, 3), 1);         /* never below 1 */
    /* Abort every other block: the length does not run away. */
    len = 64;
    for (int i = 0; i < 200; i++)
        len = wl_txlen_next(len, 10000, (uint64_t)(i & 1));
    assert_true(len < 64);
}

static double field_d(const char *csv, int row, const char *col)
{
    char v[256];
    assert_int_equal(tu_field(csv, row, col, v, sizeof v), 0);
    return atof(v);
}

static void field_s(const char *csv, int row, const char *col, char *out, size_t n)
{
    assert_int_equal(tu_field(csv, row, col, out, n), 0);
}

/* stm at 1 thread: no conflicts, so without chaos every block commits at once and the
 * length reaches the maximum; with STM_CHAOS (spontaneous aborts, 1 in 256 first
 * writes) it stays short. */
static void test_stm_auto_grows_and_shrinks(void **state)
{
    (void)state;
    const char *csv = tu_path(0, "auto.csv");
    const char *extra[] = {"--ops", "10000000", "--ops-per-tx", "auto", "--transfer-pct",
                           "100", NULL};
    unsetenv("STM_CHAOS");
    assert_int_equal(tu_run_workload("bank", "stm", "1", csv, extra), 0);
    setenv("STM_CHAOS", "7", 1);
    assert_int_equal(tu_run_workload("bank", "stm", "1", csv, extra), 0);
    unsetenv("STM_CHAOS");
    char *s = tu_read(csv, NULL);
    char p[512];
    field_s(s, 0, "params", p, sizeof p);
    assert_non_null(strstr(p, "ops_per_tx=auto;txlen=adaptive"));
    double clean = field_d(s, 0, "tx_len_mean"), chaos = field_d(s, 1, "tx_len_mean");
    assert_true(field_d(s, 0, "tx_len_p99") >= 9000);    /* bucket of 10,000 */
    assert_true(clean > 5000);
    assert_true(field_d(s, 1, "aborts") > 0);
    assert_true(chaos < 200);
    assert_true(field_d(s, 1, "tx_len_p50") < 200);
    free(s);
}

/* The same under interp: slices grow towards 100,000 bytecodes (a run of `counters`
 * with --iterations 10000 is 170,000 bytecodes, so slices end at the maximum). */
static void test_stm_interp_auto_grows(void **state)
{
    (void)state;
    const char *csv = tu_path(0, "iauto.csv");
    const char *extra[] = {"--ops", "20000000", "--switch-interval", "auto", "--iterations",
                           "10000", NULL};
    assert_int_equal(tu_run_workload("interp", "stm", "1", csv, extra), 0);
    char *s = tu_read(csv, NULL);
    char p[512];
    field_s(s, 0, "params", p, sizeof p);
    assert_non_null(strstr(p, "switch-interval=auto"));
    assert_non_null(strstr(p, "txlen=adaptive"));
    assert_true(field_d(s, 0, "tx_len_p99") >= 90000);
    assert_true(field_d(s, 0, "tx_len_mean") > 20000);
    free(s);
}

/* gil and locks: `auto` runs the fixed default, and params say so; fixed lengths are
 * reported as run (K ops per block; a --switch-interval N slice of `counters` runs N
 * bytecodes, less at HALT). */
static void test_fixed_and_default_lengths(void **state)
{
    (void)state;
    const char *csv = tu_path(0, "fixed.csv");
    const char *a1[] = {"--ops", "20000", "--ops-per-tx", "auto", NULL};
    const char *a2[] = {"--ops", "20000", "--ops-per-tx", "8", NULL};
    const char *a3[] = {"--ops", "200000", "--switch-interval", "auto", NULL};
    const char *a4[] = {"--ops", "200000", "--switch-interval", "1000", NULL};
    assert_int_equal(tu_run_workload("hashmap", "gil", "2", csv, a1), 0);
    assert_int_equal(tu_run_workload("rbtree", "locks", "2", csv, a1), 0);
    assert_int_equal(tu_run_workload("rbtree", "stm", "1", csv, a2), 0);
    assert_int_equal(tu_run_workload("interp", "locks", "2", csv, a3), 0);
    assert_int_equal(tu_run_workload("interp", "gil", "1", csv, a4), 0);
    char *s = tu_read(csv, NULL);
    char p[512];
    for (int r = 0; r < 2; r++) {
        field_s(s, r, "params", p, sizeof p);
        assert_non_null(strstr(p, "ops_per_tx=auto;txlen=fixed_default"));
        assert_true(field_d(s, r, "tx_len_mean") == 1.0);
        assert_true(field_d(s, r, "tx_len_p99") == 1.0);
        assert_true(field_d(s, r, "ops_per_tx") == 1.0);
    }
    assert_true(field_d(s, 2, "tx_len_mean") == 8.0);
    assert_true(field_d(s, 2, "tx_len_p50") == 8.0);
    field_s(s, 3, "params", p, sizeof p);
    assert_non_null(strstr(p, "switch-interval=auto"));
    assert_non_null(strstr(p, "txlen=fixed_default"));
    assert_true(field_d(s, 3, "tx_len_p50") >= 96 && field_d(s, 3, "tx_len_p50") <= 100);
    assert_true(field_d(s, 3, "tx_len_mean") <= 100.0);
    assert_true(field_d(s, 4, "tx_len_p50") >= 960 && field_d(s, 4, "tx_len_p50") <= 1000);
    assert_true(field_d(s, 4, "tx_len_mean") <= 1000.0 && field_d(s, 4, "tx_len_mean") > 900);
    free(s);
}

static void test_bad_auto_values(void **state)
{
    (void)state;
    const char *csv = tu_path(0, "bad.csv");
    const char *a1[] = {"--ops-per-tx", "Auto", NULL};
    const char *a2[] = {"--switch-interval", "0", NULL};
    const char *a3[] = {"--size", "auto", NULL};
    assert_int_equal(tu_run_workload("bank", "stm", "1", csv, a1), 2);
    assert_int_equal(tu_run_workload("interp", "stm", "1", csv, a2), 2);
    assert_int_equal(tu_run_workload("rbtree", "stm", "1", csv, a3), 2);
    assert_false(tu_exists(csv));
}

/* x += 1 as a read, a loop of 50 iterations (about 450 bytecodes), and a write: split
 * between two transactions, another thread's increment in between is lost and
 * `.expect` fails. */
static const char split_prog[] =
    ".global int x\n"
    ".expect x = RUNS * ITER\n"
    "        PUSH 0\n"
    "        STORE_LOCAL 0\n"
    "loop:   LOAD_LOCAL 0\n"
    "        PUSH ITER\n"
    "        LT\n"
    "        JUMP_IF_FALSE done\n"
    "%s"
    "        LOAD_GLOBAL x\n"
    "        STORE_LOCAL 1\n"
    "        PUSH 0\n"
    "        STORE_LOCAL 2\n"
    "inner:  LOAD_LOCAL 2\n"
    "        PUSH 50\n"
    "        LT\n"
    "        JUMP_IF_FALSE out\n"
    "        LOAD_LOCAL 2\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_LOCAL 2\n"
    "        JUMP inner\n"
    "out:    LOAD_LOCAL 1\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_GLOBAL x\n"
    "%s"
    "        LOAD_LOCAL 0\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_LOCAL 0\n"
    "        JUMP loop\n"
    "done:   HALT\n";

static void write_split(const char *path, int atomic)
{
    char text[2048];
    snprintf(text, sizeof text, split_prog, atomic ? "        ATOMIC_BEGIN\n" : "",
             atomic ? "        ATOMIC_END\n" : "");
    tu_write(path, text);
}

static void test_no_boundary_inside_atomic(void **state)
{
    (void)state;
    const char *prog = tu_path(1, "split_atomic.stm");
    const char *bare = tu_path(2, "split_bare.stm");
    const char *csv = tu_path(0, "split.csv");
    write_split(prog, 1);
    write_split(bare, 0);
    /* Adaptive slices start at 100 bytecodes and are halved after every conflict on x
     * (and every chaos abort): without the extension to ATOMIC_END many would end
     * inside the 450-bytecode section. */
    setenv("STM_CHAOS", "11", 1);
    const char *a1[] = {"--program", prog, "--switch-interval", "auto", "--duration", "0.4",
                        "--iterations", "100", NULL};
    assert_int_equal(tu_run_workload("interp", "stm", "2", csv, a1), 0);
    unsetenv("STM_CHAOS");
    const char *a2[] = {"--program", prog, "--switch-interval", "auto", "--duration", "0.3",
                        "--iterations", "100", NULL};
    assert_int_equal(tu_run_workload("interp", "stm", "2", csv, a2), 0);
    assert_int_equal(tu_run_workload("interp", "gil", "2", csv, a2), 0);
    char *s = tu_read(csv, NULL);
    assert_true(field_d(s, 0, "aborts") > 0);             /* the length was cut */
    free(s);
    /* Control: the same read-modify-write without the section, split at every bytecode,
     * does lose updates: the check fails (exit 1). */
    setenv("STM_CHAOS", "11", 1);
    const char *a3[] = {"--program", bare, "--switch-interval", "1", "--duration", "0.4",
                        "--iterations", "100", NULL};
    assert_int_equal(tu_run_workload("interp", "stm", "2", csv, a3), 1);
    unsetenv("STM_CHAOS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_grows_and_shrinks),
        cmocka_unit_test_setup_teardown(test_stm_auto_grows_and_shrinks, tu_setup_dir,
                                        tu_teardown_dir),
        cmocka_unit_test_setup_teardown(test_stm_interp_auto_grows, tu_setup_dir,
                                        tu_teardown_dir),
        cmocka_unit_test_setup_teardown(test_fixed_and_default_lengths, tu_setup_dir,
                                        tu_teardown_dir),
        cmocka_unit_test_setup_teardown(test_bad_auto_values, tu_setup_dir, tu_teardown_dir),
        cmocka_unit_test_setup_teardown(test_no_boundary_inside_atomic, tu_setup_dir,
                                        tu_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
