/*
 * tests/test_regress.c - the results scripts on fixture CSVs: scripts/regress (exit 0 on
 * the baseline's own figures, 1 when the STM's throughput is halved or instructions per
 * op grow, or a check failed; 2 on bad input) and scripts/stmbench_report.py (the
 * overhead table has a row per workload x runtime x threads, the conflict report is
 * written).
 *
 * Every case works in its own mkdtemp directory: the fixture (tests/fixtures/runs.csv,
 * required columns plus extras) is copied in as the baseline, and the variants are
 * generated from it here. The scripts are found from the current directory (make test
 * runs from the repository root), $STMBENCH_ROOT, or ../.. from this program.
 * No timing is asserted: the scripts only read files.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Roots are kept well below PATH_MAX so that root + a relative name always fits. */
#define RG_ROOT_MAX 1024

static char rg_root[RG_ROOT_MAX];

struct rg_ctx {
    char dir[RG_ROOT_MAX];
};

static int rg_set_root(const char *dir)
{
    size_t n = strlen(dir);
    if (n >= sizeof rg_root)
        return -1;
    memcpy(rg_root, dir, n + 1);
    return 0;
}

static int rg_exists(const char *root, const char *rel)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    return access(p, R_OK) == 0;
}

/* The repository root: where scripts/regress and the fixture are. */
static int rg_find_root(void)
{
    const char *env = getenv("STMBENCH_ROOT");
    char cand[PATH_MAX];
    if (env && rg_exists(env, "scripts/regress"))
        return rg_set_root(env);
    if (getcwd(cand, sizeof cand) && rg_exists(cand, "scripts/regress"))
        return rg_set_root(cand);
    ssize_t n = readlink("/proc/self/exe", cand, sizeof cand - 1);
    if (n > 0) {
        cand[n] = '\0';
        for (int up = 0; up < 3; up++) {        /* build/tests/test_regress -> . */
            char *slash = strrchr(cand, '/');
            if (!slash)
                break;
            *slash = '\0';
        }
        if (rg_exists(cand, "scripts/regress"))
            return rg_set_root(cand);
    }
    return -1;
}

static int rg_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    return remove(path);
}

static int rg_setup(void **state)
{
    struct rg_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    const char *tmp = getenv("TMPDIR");
    if (!tmp || strlen(tmp) > 512)
        tmp = "/tmp";
    snprintf(c->dir, sizeof c->dir, "%s/stmbench-test-regress.XXXXXX", tmp);
    if (!mkdtemp(c->dir)) {
        free(c);
        return -1;
    }
    *state = c;
    return 0;
}

static int rg_teardown(void **state)
{
    struct rg_ctx *c = *state;
    nftw(c->dir, rg_rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(c);
    return 0;
}

/* Runs argv (argv[0] a path) with stdout and stderr into dir/log; returns its exit
 * status, or -1 if it did not exit normally. Prints the log when the status is not
 * `expect`, so a failing case shows what the script said. */
static int rg_run(const struct rg_ctx *c, char *const argv[], int expect)
{
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/log", c->dir);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int err = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (err != 0) {
        print_error("cannot run %s: %s\n", argv[0], strerror(err));
        return -1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (rc != expect) {
        FILE *f = fopen(log, "r");
        char line[512];
        print_message("--- output of %s (exit %d, expected %d):\n", argv[0], rc, expect);
        while (f && fgets(line, sizeof line, f))
            print_message("%s", line);
        if (f)
            fclose(f);
    }
    return rc;
}

static char *rg_read(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

static void rg_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* out (PATH_MAX bytes) = dir/rel; rel is one of this file's short names. */
static void rg_path(char *out, const struct rg_ctx *c, const char *rel)
{
    assert_true(strlen(rel) < 256);
    snprintf(out, PATH_MAX, "%s/%.255s", c->dir, rel);
}

/* Index of column `name` in a CSV header line (no quoting in our files). */
static int rg_col(const char *header, const char *name)
{
    int i = 0;
    size_t len = strlen(name);
    for (const char *p = header;; i++) {
        const char *e = p + strcspn(p, ",\n");
        if ((size_t)(e - p) == len && strncmp(p, name, len) == 0)
            return i;
        if (*e != ',')
            return -1;
        p = e + 1;
    }
}

/*
 * Copies the fixture to `dst`, rewriting rows of `runtime`: ops_per_s multiplied by
 * `factor`, and check set to `check` when not NULL.
 */
static void rg_variant(const char *dst, const char *runtime, double factor, const char *check)
{
    char src[PATH_MAX];
    snprintf(src, sizeof src, "%s/tests/fixtures/runs.csv", rg_root);
    char *text = rg_read(src);
    assert_non_null(text);
    assert_null(strchr(text, '"'));             /* the splitter below does not unquote */
    FILE *out = fopen(dst, "w");
    assert_non_null(out);
    char *save = NULL;
    char *line = strtok_r(text, "\n", &save);
    assert_non_null(line);
    int c_rt = rg_col(line, "runtime"), c_ops = rg_col(line, "ops_per_s"),
        c_check = rg_col(line, "check");
    assert_true(c_rt >= 0 && c_ops >= 0 && c_check >= 0);
    fprintf(out, "%s\n", line);
    int changed = 0;
    while ((line = strtok_r(NULL, "\n", &save))) {
        char *fields[64];
        int n = 0;
        for (char *p = line; n < 64;) {
            fields[n++] = p;
            char *e = strchr(p, ',');
            if (!e)
                break;
            *e = '\0';
            p = e + 1;
        }
        assert_true(n > c_ops && n > c_rt && n > c_check);
        char opsbuf[64];
        int hit = strcmp(fields[c_rt], runtime) == 0;
        if (hit) {
            snprintf(opsbuf, sizeof opsbuf, "%.1f", strtod(fields[c_ops], NULL) * factor);
            fields[c_ops] = opsbuf;
            if (check)
                fields[c_check] = (char *)check;
            changed++;
        }
        for (int i = 0; i < n; i++)
            fprintf(out, "%s%s", i ? "," : "", fields[i]);
        fputc('\n', out);
    }
    assert_true(changed > 0);
    assert_int_equal(fclose(out), 0);
    free(text);
}

/* dir/base/runs.csv = the fixture, unchanged. */
static void rg_make_baseline(const struct rg_ctx *c)
{
    char p[PATH_MAX];
    rg_path(p, c, "base");
    assert_int_equal(mkdir(p, 0755), 0);
    rg_path(p, c, "base/runs.csv");
    rg_variant(p, "stm", 1.0, NULL);
}

static int rg_regress(const struct rg_ctx *c, const char *current, int expect)
{
    char script[PATH_MAX], cur[PATH_MAX], base[PATH_MAX];
    snprintf(script, sizeof script, "%s/scripts/regress", rg_root);
    rg_path(cur, c, current);
    rg_path(base, c, "base");
    char *argv[] = {script, cur, base, NULL};
    return rg_run(c, argv, expect);
}

static void test_own_figures_pass(void **state)
{
    struct rg_ctx *c = *state;
    rg_make_baseline(c);
    char p[PATH_MAX];
    assert_int_equal(mkdir((rg_path(p, c, "cur"), p), 0755), 0);
    rg_path(p, c, "cur/runs.csv");
    rg_variant(p, "stm", 1.0, NULL);
    assert_int_equal(rg_regress(c, "cur/runs.csv", 0), 0);
    /* The baseline's own file against its own directory, too. */
    assert_int_equal(rg_regress(c, "base/runs.csv", 0), 0);
}

static void test_halved_stm_is_a_regression(void **state)
{
    struct rg_ctx *c = *state;
    rg_make_baseline(c);
    char p[PATH_MAX];
    rg_path(p, c, "halved.csv");
    rg_variant(p, "stm", 0.5, NULL);
    assert_int_equal(rg_regress(c, "halved.csv", 1), 1);
    /* A 20% slower STM is within the tolerance stated for a noisy VM. */
    rg_path(p, c, "slower.csv");
    rg_variant(p, "stm", 0.8, NULL);
    assert_int_equal(rg_regress(c, "slower.csv", 0), 0);
}

static void test_failed_check_is_a_regression(void **state)
{
    struct rg_ctx *c = *state;
    rg_make_baseline(c);
    char p[PATH_MAX];
    rg_path(p, c, "failed.csv");
    rg_variant(p, "mutex", 1.0, "fail");
    assert_int_equal(rg_regress(c, "failed.csv", 1), 1);
}

static void test_instruction_counts(void **state)
{
    struct rg_ctx *c = *state;
    rg_make_baseline(c);
    char p[PATH_MAX];
    rg_path(p, c, "base/instructions.csv");
    rg_write(p, "runtime,workload,instr_per_op\nseq,bank,400\nstm,bank,2000\n");
    assert_int_equal(mkdir((rg_path(p, c, "cur"), p), 0755), 0);
    rg_path(p, c, "cur/runs.csv");
    rg_variant(p, "stm", 1.0, NULL);
    /* Within 10%: fine. */
    rg_path(p, c, "cur/instructions.csv");
    rg_write(p, "runtime,workload,instr_per_op\nseq,bank,400\nstm,bank,2150\n");
    assert_int_equal(rg_regress(c, "cur/runs.csv", 0), 0);
    /* 20% more instructions per op in the STM: a regression, timings notwithstanding. */
    rg_write(p, "runtime,workload,instr_per_op\nseq,bank,400\nstm,bank,2400\n");
    assert_int_equal(rg_regress(c, "cur/runs.csv", 1), 1);
    /* Wrong columns in the instruction file: bad input. */
    rg_write(p, "runtime,instructions\nstm,2000\n");
    assert_int_equal(rg_regress(c, "cur/runs.csv", 2), 2);
}

static void test_bad_input(void **state)
{
    struct rg_ctx *c = *state;
    rg_make_baseline(c);
    /* A missing results file. */
    assert_int_equal(rg_regress(c, "no-such-file.csv", 2), 2);
    /* A CSV without the required columns. */
    char p[PATH_MAX];
    rg_path(p, c, "wrong.csv");
    rg_write(p, "runtime,workload,threads,ops_per_s\nseq,bank,1,100\n");
    assert_int_equal(rg_regress(c, "wrong.csv", 2), 2);
    /* A missing baseline directory. */
    char script[PATH_MAX], cur[PATH_MAX], nobase[PATH_MAX];
    snprintf(script, sizeof script, "%s/scripts/regress", rg_root);
    rg_path(cur, c, "base/runs.csv");
    rg_path(nobase, c, "no-such-dir");
    char *argv[] = {script, cur, nobase, NULL};
    assert_int_equal(rg_run(c, argv, 2), 2);
}

/* The overhead table and the conflict report from the fixture. */
static void test_report_tables(void **state)
{
    struct rg_ctx *c = *state;
    char src[PATH_MAX], dst[PATH_MAX], p[PATH_MAX];
    const char *files[] = {"runs.csv", "conflicts.csv", "runs.context.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(src, sizeof src, "%s/tests/fixtures/%s", rg_root, files[i]);
        char *text = rg_read(src);
        assert_non_null(text);
        rg_path(dst, c, files[i]);
        rg_write(dst, text);
        free(text);
    }
    char script[PATH_MAX];
    snprintf(script, sizeof script, "%s/scripts/stmbench_report.py", rg_root);
    char *argv[] = {"/usr/bin/python3", script, "all", c->dir, NULL};
    assert_int_equal(rg_run(c, argv, 0), 0);

    rg_path(p, c, "overhead.csv");
    char *ov = rg_read(p);
    assert_non_null(ov);
    assert_int_equal(strncmp(ov, "workload,runtime,threads,ops_per_s_median,n_pct,"
                                 "speedup_self,speedup_seq,aborts_per_commit", 80), 0);
    /* The fixture: 4 workloads x (seq at 1 thread + 4 runtimes at 1 and 2 threads). */
    int lines = 0;
    for (char *q = ov; *q; q++)
        lines += *q == '\n';
    assert_int_equal(lines, 1 + 4 * 9);
    /* seq against itself: n = 0; every runtime of every workload has a row. */
    assert_non_null(strstr(ov, "\nbank,seq,1,"));
    assert_non_null(strstr(ov, "\ninterp,stm,2,"));
    free(ov);

    rg_path(p, c, "overhead.md");
    char *md = rg_read(p);
    assert_non_null(md);
    assert_non_null(strstr(md, "n% slower than single-thread"));
    assert_non_null(strstr(md, "| hashmap |"));
    free(md);

    rg_path(p, c, "conflicts.md");
    char *cm = rg_read(p);
    assert_non_null(cm);
    assert_non_null(strstr(cm, "## bank — stm"));
    assert_non_null(strstr(cm, "Top objects"));
    free(cm);
}

int main(void)
{
    if (rg_find_root() != 0) {
        fprintf(stderr, "test_regress: cannot find scripts/regress (run from the repository "
                        "root or set STMBENCH_ROOT)\n");
        return 1;
    }
    if (access("/usr/bin/python3", X_OK) != 0) {
        fprintf(stderr, "test_regress: /usr/bin/python3 is missing\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_own_figures_pass, rg_setup, rg_teardown),
        cmocka_unit_test_setup_teardown(test_halved_stm_is_a_regression, rg_setup, rg_teardown),
        cmocka_unit_test_setup_teardown(test_failed_check_is_a_regression, rg_setup, rg_teardown),
        cmocka_unit_test_setup_teardown(test_instruction_counts, rg_setup, rg_teardown),
        cmocka_unit_test_setup_teardown(test_bad_input, rg_setup, rg_teardown),
        cmocka_unit_test_setup_teardown(test_report_tables, rg_setup, rg_teardown),
    };
    return cmocka_run_group_tests_name("regress", tests, NULL, NULL);
}
