/*
 * tests/test_csv.c - the results files: the required columns in order, the header once
 * across runs, whole rows only, the conflict log's header, the context JSON.
 */
#include "tests/stmbench_testutil.h"
#include "harness/results.h"
#include "runtime/timeacct.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

/* docs/contract.md "Results": the required columns, in this order. */
static const char REQUIRED_COLUMNS[] =
    "run_id,timestamp,git_rev,host,runtime,workload,params,threads,pin,seed,duration_s,ops,"
    "ops_per_s,commits,aborts,aborts_write_write,aborts_read_write,aborts_other,"
    "unshared_pages,commit_p50_ns,commit_p99_ns,block_p50_ns,block_p99_ns,check,cpus";

static int count_fields(const char *line, const char *end)
{
    int n = 1;
    for (const char *p = line; p < end; p++)
        n += *p == ',';
    return n;
}

/* Every line ends with '\n' and has as many fields as the header. */
static void assert_whole_rows(const char *text, size_t len)
{
    assert_true(len > 0);
    assert_int_equal(text[len - 1], '\n');
    const char *nl = strchr(text, '\n');
    int want = count_fields(text, nl);
    for (const char *line = nl + 1; *line; line = strchr(line, '\n') + 1) {
        const char *e = strchr(line, '\n');
        assert_non_null(e);
        assert_int_equal(count_fields(line, e), want);
    }
}

static int quiet_run(const char *const *args)
{
    int rc;
    free(tu_capture_stdout(tu_runv, args, &rc));
    return rc;
}

static void test_header_once_exact_columns(void **state)
{
    (void)state;
    const char *csv = tu_path(0, "runs.csv");
    const char *a1[] = {"--runtime", "seq", "--workload", "bank", "--ops", "500", "--csv",
                        csv, NULL};
    const char *a2[] = {"--runtime", "mutex", "--workload", "bank", "--threads", "2", "--ops",
                        "500", "--accounts", "16", "--csv", csv, NULL};
    assert_int_equal(quiet_run(a1), 0);
    assert_int_equal(quiet_run(a2), 0);
    size_t len;
    char *text = tu_read(csv, &len);
    assert_non_null(text);
    assert_int_equal(tu_count_lines(text), 3);
    /* the header starts with exactly the required columns, then only extra columns */
    assert_memory_equal(text, REQUIRED_COLUMNS, strlen(REQUIRED_COLUMNS));
    char c = text[strlen(REQUIRED_COLUMNS)];
    assert_true(c == ',' || c == '\n');
    assert_null(strstr(text + 1, "run_id,"));     /* one header only */
    assert_whole_rows(text, len);

    char f[256], g[256];
    assert_int_equal(tu_field(text, 0, "runtime", f, sizeof f), 0);
    assert_string_equal(f, "seq");
    assert_int_equal(tu_field(text, 1, "runtime", f, sizeof f), 0);
    assert_string_equal(f, "mutex");
    assert_int_equal(tu_field(text, 1, "threads", f, sizeof f), 0);
    assert_string_equal(f, "2");
    assert_int_equal(tu_field(text, 1, "params", f, sizeof f), 0);
    assert_string_equal(f, "accounts=16;transfer-pct=90;ops_per_tx=1");
    assert_int_equal(tu_field(text, 0, "ops", f, sizeof f), 0);
    assert_string_equal(f, "500");
    assert_int_equal(tu_field(text, 0, "commits", f, sizeof f), 0);
    assert_string_equal(f, "500");
    assert_int_equal(tu_field(text, 0, "check", f, sizeof f), 0);
    assert_string_equal(f, "pass");
    assert_int_equal(tu_field(text, 0, "pin", f, sizeof f), 0);
    assert_string_equal(f, "compact");
    /* compact pinning records one PU per thread */
    assert_int_equal(tu_field(text, 1, "cpus", f, sizeof f), 0);
    assert_non_null(strchr(f, ';'));
    /* run ids differ */
    assert_int_equal(tu_field(text, 0, "run_id", f, sizeof f), 0);
    assert_int_equal(tu_field(text, 1, "run_id", g, sizeof g), 0);
    assert_string_not_equal(f, g);
    /* ISO-8601 UTC timestamp */
    assert_int_equal(tu_field(text, 0, "timestamp", f, sizeof f), 0);
    assert_int_equal(strlen(f), 24);
    assert_int_equal(f[10], 'T');
    assert_int_equal(f[23], 'Z');
    free(text);

    /* the machine context lies beside the CSV */
    char *ctx = tu_read(tu_path(1, "runs.context.json"), NULL);
    assert_non_null(ctx);
    assert_non_null(strstr(ctx, "\"cpu_model\""));
    assert_non_null(strstr(ctx, "\"pus\""));
    assert_non_null(strstr(ctx, "\"fsgsbase\""));
    assert_non_null(strstr(ctx, "\"git_rev\""));
    free(ctx);
}

static void test_empty_file_gets_header_and_pin_none(void **state)
{
    (void)state;
    const char *csv = tu_path(0, "empty.csv");
    tu_write(csv, "");
    const char *a[] = {"--runtime", "locks", "--workload", "bank", "--ops", "300", "--pin",
                       "none", "--ops-per-tx", "4", "--csv", csv, NULL};
    assert_int_equal(quiet_run(a), 0);
    size_t len;
    char *text = tu_read(csv, &len);
    assert_int_equal(tu_count_lines(text), 2);
    assert_memory_equal(text, REQUIRED_COLUMNS, strlen(REQUIRED_COLUMNS));
    assert_whole_rows(text, len);
    char f[256];
    assert_int_equal(tu_field(text, 0, "cpus", f, sizeof f), 0);
    assert_string_equal(f, "");
    assert_int_equal(tu_field(text, 0, "pin", f, sizeof f), 0);
    assert_string_equal(f, "none");
    assert_int_equal(tu_field(text, 0, "ops", f, sizeof f), 0);
    assert_string_equal(f, "300");
    assert_int_equal(tu_field(text, 0, "commits", f, sizeof f), 0);
    assert_string_equal(f, "75");      /* 300 ops in blocks of 4 */
    free(text);
}

static void test_conflicts_header(void **state)
{
    (void)state;
    const char *csv = tu_path(0, "c-runs.csv");
    const char *conf = tu_path(1, "conflicts.csv");
    const char *a[] = {"--runtime", "mutex", "--workload", "bank", "--ops", "200", "--csv",
                       csv, "--conflicts", conf, NULL};
    assert_int_equal(quiet_run(a), 0);
    assert_int_equal(quiet_run(a), 0);
    size_t len;
    char *text = tu_read(conf, &len);
    assert_non_null(text);
    /* mutex never aborts: the header alone, written once */
    /* the columns of before, then conflict analysis's, at the end */
    assert_string_equal(text, "run_id,t_ns,thread,other_thread,kind,object,page,site,wasted_ns,"
                              "where,other_site,other_where,object_name,weight\n");
    free(text);
}

/* The time breakdown's columns close the header: thread_time_ns, one time_<name>_ns
 * per category in enum order (ta_cat_name), then the op latency. */
static void test_breakdown_columns(void **state)
{
    (void)state;
    char want[1024];
    size_t n = (size_t)snprintf(want, sizeof want, ",thread_time_ns");
    for (int c = 0; c < TA_NCAT; c++)
        n += (size_t)snprintf(want + n, sizeof want - n, ",time_%s_ns", ta_cat_name(c));
    snprintf(want + n, sizeof want - n, ",op_p50_ns,op_p99_ns,op_p99_9_ns,op_p99_99_ns,op_max_ns");
    /* and, after the transaction lengths, the far tail and the exact stratum */
    assert_non_null(strstr(results_csv_header(), ",tx_len_p99,op_p99_999_ns,op_stalls"));
    /* then the object model's counts, last */
    const char *end = ",op_stalls,objects_allocated,objects_freed";
    assert_string_equal(strstr(results_csv_header(), end), end);
    const char *h = results_csv_header();
    const char *at = strstr(h, ",thread_time_ns");
    assert_non_null(at);
    assert_memory_equal(at, want, strlen(want));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_once_exact_columns),
        cmocka_unit_test(test_empty_file_gets_header_and_pin_none),
        cmocka_unit_test(test_conflicts_header),
        cmocka_unit_test(test_breakdown_columns),
    };
    return cmocka_run_group_tests(tests, tu_setup_dir, tu_teardown_dir);
}
