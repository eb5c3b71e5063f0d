/*
 * tests/test_cli.c - the command line: every bad input exits 2 and leaves an existing
 * results file byte-for-byte unchanged (and creates none); --list and --help exit 0.
 */
#include "tests/stmbench_testutil.h"

#include <setjmp.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

static const char *csv_path;
static const char *const SENTINEL_ROW = "r0,sentinel,row,that,must,not,change\n";
static char *csv_before;

static int setup(void **state)
{
    (void)state;
    tu_mkdir();
    csv_path = tu_path(0, "existing.csv");
    /* A valid existing file: the current header plus a row. */
    int rc;
    const char *args[] = {"--runtime", "seq", "--workload", "bank", "--ops", "10",
                          "--pin", "none", "--csv", csv_path, NULL};
    free(tu_capture_stdout(tu_runv, args, &rc));
    if (rc != 0)
        return -1;
    size_t len;
    char *s = tu_read(csv_path, &len);
    char *nl = strchr(s, '\n');
    nl[1] = '\0';
    csv_before = malloc(strlen(s) + strlen(SENTINEL_ROW) + 1);
    strcpy(csv_before, s);
    strcat(csv_before, SENTINEL_ROW);
    free(s);
    tu_write(csv_path, csv_before);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(csv_before);
    tu_rmdir();
    return 0;
}

/* Every bad command line, with --csv pointing at the existing file appended. */
static const char *const bad_cases[][24] = {
    {"--runtime", "nosuch", "--workload", "bank", NULL},
    {"--runtime", "seq", "--workload", "nosuch", NULL},
    {"--workload", "bank", NULL},                                   /* no runtime */
    {"--runtime", "seq", NULL},                                     /* no workload */
    {"--runtime", "mutex", "--workload", "bank", "--threads", "0", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--threads", "-1", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--threads", "two", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--threads", "2x", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--threads", "", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--threads", "99999999999999999999", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--threads", "100000", NULL},
    {"--runtime", "seq", "--workload", "bank", "--threads", "2", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--duration", "0", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--duration", "-1", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--duration", "abc", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--duration", "nan", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--duration", "1", "--ops", "100", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--ops", "0", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--ops", "-5", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--ops", "1", "--threads", "2", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--seed", "-1", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--seed", "x", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--pin", "diagonal", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--ops-per-tx", "0", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--heap-mb", "0", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--gil-interval-us", "fast", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--accounts", "1", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--accounts", "-5", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--accounts", "many", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--accounts", "1e3", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--transfer-pct", "101", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--transfer-pct", "-1", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--size", "10", NULL},  /* rbtree's knob */
    {"--runtime", "mutex", "--workload", "bank", "--program", "x", NULL}, /* interp's knob */
    {"--runtime", "mutex", "--workload", "bank", "--bogus", "1", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--accounts", "8", "--accounts", "9", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--threads", "1", "--threads", "1", NULL},
    {"--runtime", "mutex", "--workload", "bank", "stray", NULL},
    {"--runtime", "mutex", "--workload", "bank", "-t", "1", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--threads", "--ops", "5", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--conflicts", "/nonexistent-dir/c.csv", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--conflicts", "/tmp", NULL},
    {"--runtime", "mutex", "--workload", "bank", "--ops", NULL},          /* missing value */
};

static void run_bad(const char *const *c, const char *csv)
{
    const char *args[32];
    int n = 0;
    for (; c[n]; n++)
        args[n] = c[n];
    args[n++] = "--csv";
    args[n++] = csv;
    args[n] = NULL;
    int rc = tu_runv(args);
    if (rc != 2) {
        char line[512] = "";
        for (int i = 0; args[i]; i++) {
            strcat(line, args[i]);
            strcat(line, " ");
        }
        fail_msg("expected exit 2, got %d for: %s", rc, line);
    }
}

static void test_bad_inputs_exit_2_and_leave_csv(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const char *const *c = bad_cases[i];
        int n = 0;
        while (c[n])
            n++;
        if (strcmp(c[n - 1], "--ops") == 0) {
            /* missing value: the flag must be last, so the csv goes first */
            const char *args[32] = {"--csv", csv_path};
            for (int j = 0; j < n; j++)
                args[2 + j] = c[j];
            args[2 + n] = NULL;
            assert_int_equal(tu_runv(args), 2);
        } else {
            run_bad(c, csv_path);
        }
        size_t len;
        char *now = tu_read(csv_path, &len);
        assert_non_null(now);
        assert_string_equal(now, csv_before);
        free(now);
    }
}

static void test_bad_inputs_create_no_file(void **state)
{
    (void)state;
    const char *fresh = tu_path(1, "fresh.csv");
    const char *conf = tu_path(2, "fresh-conflicts.csv");
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const char *const *c = bad_cases[i];
        int n = 0;
        while (c[n])
            n++;
        const char *args[40];
        int k = 0;
        args[k++] = "--csv";
        args[k++] = fresh;
        if (strcmp(c[n - 1], "--ops") != 0 && !(n >= 2 && strcmp(c[n - 2], "--conflicts") == 0)) {
            args[k++] = "--conflicts";
            args[k++] = conf;
        }
        for (int j = 0; j < n; j++)
            args[k++] = c[j];
        args[k] = NULL;
        assert_int_equal(tu_runv(args), 2);
        assert_false(tu_exists(fresh));
        assert_false(tu_exists(conf));
        assert_false(tu_exists(tu_path(3, "fresh.context.json")));
    }
}

static void test_unwritable_csv(void **state)
{
    (void)state;
    /* A CSV in a directory that does not exist, or a directory itself. */
    assert_int_equal(tu_run("--runtime", "seq", "--workload", "bank", "--ops", "10", "--csv",
                            "/nonexistent-dir/r.csv", NULL), 2);
    assert_int_equal(tu_run("--runtime", "seq", "--workload", "bank", "--ops", "10", "--csv",
                            tu_dir, NULL), 2);
    /* A good CSV with a bad conflicts path: the CSV is not touched either. */
    assert_int_equal(tu_run("--runtime", "seq", "--workload", "bank", "--ops", "10", "--csv",
                            csv_path, "--conflicts", "/nonexistent-dir/c.csv", NULL), 2);
    /* The same file for both. */
    assert_int_equal(tu_run("--runtime", "seq", "--workload", "bank", "--ops", "10", "--csv",
                            csv_path, "--conflicts", csv_path, NULL), 2);
    char *now = tu_read(csv_path, NULL);
    assert_string_equal(now, csv_before);
    free(now);
}

static void test_foreign_header_refused(void **state)
{
    (void)state;
    const char *other = tu_path(1, "foreign.csv");
    const char *text = "a,b,c\n1,2,3\n";
    tu_write(other, text);
    assert_int_equal(tu_run("--runtime", "seq", "--workload", "bank", "--ops", "10", "--csv",
                            other, NULL), 2);
    char *now = tu_read(other, NULL);
    assert_string_equal(now, text);
    free(now);
}

static void test_list(void **state)
{
    (void)state;
    int rc;
    const char *args[] = {"--list", NULL};
    char *out = tu_capture_stdout(tu_runv, args, &rc);
    assert_int_equal(rc, 0);
    const char *want[] = {"runtime seq\n", "runtime mutex\n", "runtime gil\n",
                          "runtime locks\n", "runtime stm\n", "workload bank\n"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_non_null(strstr(out, want[i]));
    /* runtimes come before workloads */
    assert_true(strstr(out, "runtime stm") < strstr(out, "workload bank"));
    free(out);
}

static void test_help(void **state)
{
    (void)state;
    int rc;
    const char *args[] = {"--help", NULL};
    char *out = tu_capture_stdout(tu_runv, args, &rc);
    assert_int_equal(rc, 0);
    const char *want[] = {"--runtime", "--workload", "--threads", "--duration", "--ops",
                          "--seed", "--pin", "--ops-per-tx", "--csv", "--conflicts",
                          "--heap-mb", "--gil-interval-us", "--accounts", "--transfer-pct",
                          "default 1024", "2..16777216", "seq", "mutex", "gil", "locks", "stm"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(out, want[i]))
            fail_msg("--help does not mention %s", want[i]);
    free(out);
    /* --help wins over anything else on the line, even bad input. */
    const char *args2[] = {"--runtime", "nosuch", "--help", NULL};
    free(tu_capture_stdout(tu_runv, args2, &rc));
    assert_int_equal(rc, 0);
}

static void test_no_args(void **state)
{
    (void)state;
    const char *args[] = {NULL};
    assert_int_equal(tu_runv(args), 2);
}

static void test_good_knobs_accepted(void **state)
{
    (void)state;
    int rc;
    const char *args[] = {"--runtime", "seq", "--workload", "bank", "--ops", "100",
                          "--accounts", "2", "--transfer-pct", "100", "--ops-per-tx", "3",
                          "--seed", "18446744073709551615", "--pin", "scatter", NULL};
    free(tu_capture_stdout(tu_runv, args, &rc));
    assert_int_equal(rc, 0);
}

/* The STM's heap too small for the workload: exit 3 with the reason, and the existing
 * results file is left as it was. Run in a child process: the runtime exits. */
static void test_stm_heap_exhausted_exit_3(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        const char *args[] = {"--runtime", "stm", "--workload", "bank", "--accounts", "1000000",
                              "--heap-mb", "1", "--ops", "10", "--csv", csv_path, NULL};
        _exit(tu_runv(args));
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 3);
    char *after = tu_read(csv_path, NULL);
    assert_string_equal(after, csv_before);
    free(after);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_inputs_exit_2_and_leave_csv),
        cmocka_unit_test(test_bad_inputs_create_no_file),
        cmocka_unit_test(test_unwritable_csv),
        cmocka_unit_test(test_foreign_header_refused),
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_no_args),
        cmocka_unit_test(test_good_knobs_accepted),
        cmocka_unit_test(test_stm_heap_exhausted_exit_3),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
