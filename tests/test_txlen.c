/*
 * tests/test_txlen.c - transaction lengths: --ops-per-tx auto, --switch-interval auto
 * (workloads/workload.h) and the CSV columns tx_len_mean, tx_len_p50, tx_len_p99.
 *  - The policy itself (wl_txlen_epoch: the best measured rung of a ladder of lengths)
 *    on synthetic rates, with and without noise: climbs to the maximum where longer is
 *    better, stays near the best length where forced aborts make long blocks lose,
 *    keeps long blocks where they win despite their retries; lengths stay in 1..max.
 *  - One length per run: thread 0 publishes, the others run what it published; a
 *    thread without the run's shared controller adapts alone.
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
#include <string.h>

#include <cmocka.h>

/* Drives the controller with a synthetic rate function (optionally with a repeatable
 * +-10% noise, as measured on short epochs) for `epochs` epochs from length 1; returns
 * the mean length over the last half. */
static double climb(double (*rate)(long), long max, int epochs, int noisy, int *reached)
{
    struct wl_txlen_ctl c;
    wl_txlen_ctl_init(&c, 1, max);
    long len = wl_txlen_rung_len(&c, c.cur);
    uint64_t x = 88172645463325252ull;
    double sum = 0;
    *reached = -1;
    for (int e = 0; e < epochs; e++) {
        double r = rate(len);
        if (noisy) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            r *= 0.9 + 0.2 * (double)(x >> 11) / 9007199254740992.0;
        }
        len = wl_txlen_epoch(&c, r);
        assert_true(len >= 1 && len <= max);
        if (len == max && *reached < 0)
            *reached = e;
        if (e >= epochs / 2)
            sum += (double)len;
    }
    return sum / (epochs - epochs / 2);
}
/* No conflicts: a fixed cost per block, so longer is always better (bank at 1 thread). */
static double rate_clean(long len) { return (double)len / (100.0 + 10.0 * (double)len); }
/* Forced aborts: every op of a block is thrown away with a chance that grows with the
 * length; the best length is near 16. */
static double rate_aborts(long len)
{
    double p_ok = 1.0;
    for (long i = 0; i < len; i++)
        p_ok *= 1.0 - 1.0 / 64;
    return rate_clean(len) * p_ok;
}
/* Conflicts that cost more the longer the block, but many retries still win: the rate
 * keeps rising with the length although most long blocks are re-run (bank at 2
 * threads), which a policy that shortens after every abort gets wrong. */
static double rate_long_wins(long len) { return (double)len / (1000.0 + 30.0 * (double)len); }

static void test_policy_finds_the_best_rate(void **state)
{
    (void)state;
    int reached;
    /* Clean: one rung per epoch up to the maximum (15 rungs for 1..10,000), and there. */
    double m = climb(rate_clean, 10000, 200, 0, &reached);
    assert_true(reached >= 0 && reached <= 16);
    assert_true(m > 8000);
    /* The same under +-10% noise per epoch: still mostly at the top. */
    m = climb(rate_clean, 10000, 400, 1, &reached);
    assert_true(reached >= 0 && m > 4000);
    /* Forced aborts: near the best length, far below the maximum. */
    m = climb(rate_aborts, 10000, 400, 0, &reached);
    assert_true(m >= 8 && m <= 40);
    m = climb(rate_aborts, 10000, 400, 1, &reached);
    assert_true(m >= 4 && m <= 80);
    /* Long blocks win despite their retries. */
    m = climb(rate_long_wins, 10000, 400, 1, &reached);
    assert_true(m > 2000);
    /* The ladder: powers of two, then the maximum; the start rounds down. */
    struct wl_txlen_ctl c;
    wl_txlen_ctl_init(&c, 100, 100000);
    assert_int_equal(wl_txlen_rung_len(&c, c.cur), 64);
    assert_int_equal(wl_txlen_rung_len(&c, c.nrungs - 1), 100000);
    assert_int_equal(wl_txlen_rung_len(&c, c.nrungs - 2), 65536);
    wl_txlen_ctl_init(&c, 1, 1);
    assert_int_equal(c.nrungs, 2);
    assert_int_equal(wl_txlen_epoch(&c, 1.0), 1);
}

/* One length for all threads: the leader (slot 0) publishes, the others follow. */
static void test_threads_follow_the_leader(void **state)
{
    (void)state;
    struct wl_txlen_shared *s = wl_txlen_shared_new(2);
    assert_non_null(s);
    struct wl_thread *t = aligned_alloc(64, 2 * sizeof *t);
    assert_non_null(t);
    memset(t, 0, 2 * sizeof *t);
    for (int i = 0; i < 2; i++) {
        t[i].tid = i;
        t[i].nthreads = 2;
        t[i].txs = s;
    }
    assert_int_equal(wl_txlen_init(&t[1], WL_LEN_AUTO, 1, 10000), 1);
    assert_int_equal(wl_txlen_init(&t[0], WL_LEN_AUTO, 1, 10000), 1);
    /* the leader's epochs climb (nothing conflicts: both threads commit all they run) */
    /* Until the top or 2 s of wall time: the epochs follow the clock (200 us each), so a
     * count of iterations was a time bound that a slow or preempted run could miss (it
     * ended at 200,000 iterations, about 25 epochs, still at length 1 once in six runs). */
    long top = 0;
    uint64_t until = sync_now_ns() + 2000000000u;
    while (top < 10000 && sync_now_ns() < until) {
        wl_txlen_after(&t[0], (uint64_t)t[0].tx_len);
        wl_txlen_after(&t[1], (uint64_t)t[1].tx_len);
        top = t[0].tx_len;
        assert_int_equal(t[1].tx_len, t[0].tx_len); /* the follower runs the same length */
    }
    assert_true(top >= 10000);
    assert_int_equal(atomic_load(&s->slots[0].ops) > 0, 1);
    assert_int_equal(atomic_load(&s->slots[1].ops) > 0, 1);
    /* a thread without a shared controller adapts alone */
    struct wl_thread *u = aligned_alloc(64, sizeof *u);
    memset(u, 0, sizeof *u);
    assert_int_equal(wl_txlen_init(u, WL_LEN_AUTO, 100, 100000), 64);
    assert_true(u->txs == &u->txs_own);
    assert_int_equal(wl_txlen_init(u, 8, 1, 100), 8);      /* fixed */
    assert_int_equal(u->tx_len_max, 0);
    free(u);
    free(t);
    wl_txlen_shared_free(s);
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
 * writes) it stays short. The clean run has 64 accounts, so that the rate rises with the length all the way
 * up (the write set stops growing at 64 objects and each commit is shared by more ops):
 * with the default 1,024 the rate has a plateau on some CPUs (an AMD EPYC VM, 1 thread,
 * fixed lengths: 52.2 M ops/s at 128, 49.9 M at 256, 53.4 M at 1,024, 115 M at 10,000),
 * where the climb rightly stops at a local best, 128-256. The chaos run keeps 1,024:
 * its first writes, and so its aborts, grow with the length (with 64 accounts a block
 * has at most 64 first writes, and long blocks win despite chaos). */
static void test_stm_auto_grows_and_shrinks(void **state)
{
    (void)state;
    const char *csv = tu_path(0, "auto.csv");
    const char *extra[] = {"--ops", "10000000", "--ops-per-tx", "auto", "--transfer-pct",
                           "100", NULL};
    /* The clean run is longer: its climb (a fixed time) then weighs less in the
     * per-block mean, also on a loaded machine, where the climb takes longer. */
    const char *clean_extra[] = {"--ops", "40000000", "--ops-per-tx", "auto",
                                 "--transfer-pct", "100", "--accounts", "64", NULL};
    unsetenv("STM_CHAOS");
    assert_int_equal(tu_run_workload("bank", "stm", "1", csv, clean_extra), 0);
    setenv("STM_CHAOS", "7", 1);
    assert_int_equal(tu_run_workload("bank", "stm", "1", csv, extra), 0);
    unsetenv("STM_CHAOS");
    char *s = tu_read(csv, NULL);
    char p[512];
    field_s(s, 0, "params", p, sizeof p);
    assert_non_null(strstr(p, "ops_per_tx=auto;txlen=adaptive"));
    double clean = field_d(s, 0, "tx_len_mean"), chaos = field_d(s, 1, "tx_len_mean");
    assert_true(field_d(s, 0, "tx_len_p99") >= 9000);    /* bucket of 10,000 */
    /* The mean is per block, so the climb's many short blocks (one rung per 200 us epoch
     * from 1) weigh in it: about 1,200-2,000 in a run of 0.14 s (10 M ops; this run has
     * 40 M), against about 10 when
     * the length stays short (the run with chaos below). */
    assert_true(clean > 600);
    assert_true(field_d(s, 1, "aborts") > 0);
    assert_true(chaos < 200);
    assert_true(field_d(s, 1, "tx_len_p50") < 200);
    free(s);
}

/* The same under interp: slices grow to the top rungs, 65,536 and 100,000 bytecodes (a
 * run of `counters` with --iterations 10000 is 170,000 bytecodes, so slices end at the
 * length chosen). */
static void test_stm_interp_auto_grows(void **state)
{
    (void)state;
    const char *csv = tu_path(0, "iauto.csv");
    /* 200 M bytecodes, about 0.25 s on an AMD EPYC VM: with 20 M (26 ms, about 130
     * epochs of 200 us) the climb from 64 took most of the run and the p99 fell short
     * of 60,000 once in six runs. */
    const char *extra[] = {"--ops", "200000000", "--switch-interval", "auto", "--iterations",
                           "10000", NULL};
    assert_int_equal(tu_run_workload("interp", "stm", "1", csv, extra), 0);
    char *s = tu_read(csv, NULL);
    char p[512];
    field_s(s, 0, "params", p, sizeof p);
    assert_non_null(strstr(p, "switch-interval=auto"));
    assert_non_null(strstr(p, "txlen=adaptive"));
    assert_true(field_d(s, 0, "tx_len_p99") >= 60000);   /* 65,536 or the maximum */
    /* per block, with the climb's short slices (from 64): 20,000-28,000 on a quiet
     * machine (0.23 s runs); the ladder follows measured rates, so a machine busy with
     * other work (a parallel build) holds it lower. A length that never grew stays at 64:
     * the bound is 16 times that. */
    assert_true(field_d(s, 0, "tx_len_mean") > 1000);
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
        cmocka_unit_test(test_policy_finds_the_best_rate),
        cmocka_unit_test(test_threads_follow_the_leader),
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
