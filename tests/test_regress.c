/*
 * tests/test_regress.c - the results scripts on fixture CSVs: scripts/regress (the
 * fallback comparison with the committed CSV: exit 0 on the baseline's own figures, 1
 * when the STM's throughput is halved or instructions per op grow, or a check failed;
 * 2 on bad input), scripts/stmbench_report.py (the overhead table has a row per
 * workload x runtime x threads, the conflict report is written), and the A/B verdict of
 * make regress, scripts/regress-ab, on synthetic samples: equal samples pass, a shifted
 * distribution fails, noise within the tolerance passes, a rise in deterministic counts
 * fails, and results files are read by column name.
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
#include <math.h>
#include <spawn.h>
#include <stdint.h>
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

/* ------------------------------------------------------------ scripts/regress-ab */

/* A deterministic generator (xorshift64*) for the synthetic samples. */
static double rg_uniform(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return (double)((*x * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* A roughly normal deviate (sum of 12 uniforms), mean 0 and deviation 1. */
static double rg_gauss(uint64_t *x)
{
    double s = 0;
    for (int i = 0; i < 12; i++)
        s += rg_uniform(x);
    return s - 6.0;
}

/* n comma-separated samples base * factor * exp(sigma * N(0,1)) into out. */
static void rg_samples(char *out, size_t cap, int n, double factor, double sigma, uint64_t *x)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        double v = 1e6 * factor * exp(sigma * rg_gauss(x));
        len += (size_t)snprintf(out + len, cap - len, "%s%.1f", i ? "," : "", v);
        assert_true(len < cap);
    }
}

/* The verdict word scripts/regress-ab judge prints for samples a, b at tolerance tol
 * (into verdict, 32 bytes); returns p as printed. */
static double rg_judge(const struct rg_ctx *c, const char *a, const char *b, double tol,
                       char *verdict)
{
    char script[PATH_MAX], tolbuf[32], log[PATH_MAX];
    snprintf(script, sizeof script, "%s/scripts/regress-ab", rg_root);
    snprintf(tolbuf, sizeof tolbuf, "%.4f", tol);
    char *argv[] = {script, "judge", "--tol", tolbuf, (char *)a, (char *)b, NULL};
    assert_int_equal(rg_run(c, argv, 0), 0);
    rg_path(log, c, "log");
    char *out = rg_read(log);
    assert_non_null(out);
    double p = -1;
    char *q = strstr(out, "p=");
    assert_non_null(q);
    p = strtod(q + 2, NULL);
    q = strstr(out, "verdict=");
    assert_non_null(q);
    snprintf(verdict, 32, "%.*s", (int)strcspn(q + 8, "\n "), q + 8);
    free(out);
    return p;
}

/* `draws` times: n samples of A (factor 1) and of B (factor f), both with noise sigma,
 * judged at tolerance tol; each verdict must be `want`, or with want "!REGRESSION"
 * anything but a regression. */
static void rg_draws(const struct rg_ctx *c, uint64_t *x, int draws, int n, double f,
                     double sigma, double tol, const char *want)
{
    char v[32], a[512], b[512];
    for (int i = 0; i < draws; i++) {
        rg_samples(a, sizeof a, n, 1.0, sigma, x);
        rg_samples(b, sizeof b, n, f, sigma, x);
        rg_judge(c, a, b, tol, v);
        if (want[0] == '!')
            assert_string_not_equal(v, want + 1);
        else
            assert_string_equal(v, want);
    }
}

static void test_ab_equal_samples_pass(void **state)
{
    struct rg_ctx *c = *state;
    char v[32];
    rg_judge(c, "5,5,5,5,5", "5,5,5,5,5", 0.05, v);
    assert_string_equal(v, "ok");
    /* Twenty draws of two samples from one distribution (2% noise): never a regression
     * at a 5% tolerance. */
    uint64_t x = 42;
    rg_draws(c, &x, 20, 7, 1.0, 0.02, 0.05, "!REGRESSION");
}

static void test_ab_shifted_distribution_fails(void **state)
{
    struct rg_ctx *c = *state;
    char v[32];
    uint64_t x = 7;
    /* 15% slower with 2% noise, and 10% slower with 1% noise: caught every time. */
    rg_draws(c, &x, 10, 7, 0.85, 0.02, 0.05, "REGRESSION");
    rg_draws(c, &x, 10, 5, 0.90, 0.01, 0.05, "REGRESSION");
    /* Every pair of five lower: the exact one-sided signed-rank test gives 1/2^5. */
    double p = rg_judge(c, "10,11,12,13,14", "1,2,3,4,5", 0.05, v);
    assert_true(p > 0.031 && p < 0.032);
    assert_string_equal(v, "REGRESSION");
    /* Four of five lower, the one higher pair the smallest difference: W+ = 1, so
     * P(W+ <= 1) = 2/32. Not significant at 0.05, whatever the interval. */
    p = rg_judge(c, "100,100,100,100,100", "101.8,97,96,95,94", 0.05, v);
    assert_true(p > 0.062 && p < 0.063);
    /* 20% faster: better, not a regression. */
    rg_judge(c, "10,10.1,9.9,10,10.2", "12,12.1,11.9,12,12.2", 0.05, v);
    assert_string_equal(v, "better");
}

static void test_ab_noise_within_tolerance_passes(void **state)
{
    struct rg_ctx *c = *state;
    char v[32];
    uint64_t x = 99;
    /* 3% slower is within a 5% tolerance, however clear the shift. */
    rg_draws(c, &x, 10, 7, 0.97, 0.01, 0.05, "ok");
    /* One disturbed run among five (a neighbour's compile): not a regression. */
    rg_judge(c, "100,101,99,100,102", "100,50,99,101,101", 0.05, v);
    assert_string_equal(v, "ok");
    /* A wide spread around 0.9 whose interval reaches above 0.95: not proven. */
    rg_judge(c, "100,100,100,100,100", "70,110,90,105,80", 0.05, v);
    assert_string_equal(v, "ok");
}

/* The count verdict (deterministic callgrind figures). */
static void rg_count(const struct rg_ctx *c, const char *kind, const char *a, const char *b,
                     const char *cycles, const char *want)
{
    char script[PATH_MAX], log[PATH_MAX], expect[64];
    snprintf(script, sizeof script, "%s/scripts/regress-ab", rg_root);
    char *argv[] = {script, "judge-count", (char *)kind, (char *)a, (char *)b, (char *)cycles,
                    "--tol-count", "0.03", "--tol-miss", "0.10", NULL};
    assert_int_equal(rg_run(c, argv, 0), 0);
    rg_path(log, c, "log");
    char *out = rg_read(log);
    assert_non_null(out);
    snprintf(expect, sizeof expect, "verdict=%s\n", want);
    assert_string_equal(out, expect);
    free(out);
}

static void test_ab_counts(void **state)
{
    struct rg_ctx *c = *state;
    rg_count(c, "instr", "1000", "1010", "1200", "ok");          /* +1% */
    rg_count(c, "instr", "1000", "1050", "1200", "REGRESSION");  /* +5% */
    rg_count(c, "cycles", "1200", "1100", "1200", "better");
    /* Twice the misses, but 0.01 more per operation weighs nothing. */
    rg_count(c, "d1", "0.01", "0.02", "300", "ok");
    /* 2 more D1 misses (20 cycles) on 300 estimated cycles: a regression. */
    rg_count(c, "d1", "2", "4", "300", "REGRESSION");
    /* 0.1 more LL misses weigh 10 cycles = 3.3% of 300. */
    rg_count(c, "ll", "0.1", "0.2", "300", "REGRESSION");
    /* Bad input. */
    char script[PATH_MAX];
    snprintf(script, sizeof script, "%s/scripts/regress-ab", rg_root);
    char *argv[] = {script, "judge-count", "speed", "1", "2", "3", NULL};
    assert_int_equal(rg_run(c, argv, 2), 2);
}

/* A results file: the given header order, rows "runtime,workload,threads,seed,ops,check"
 * placed into it (other columns filled with x). */
static void rg_runs_file(const char *path, const char *header, const char *const *rows)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%s\n", header);
    const char *names[] = {"runtime", "workload", "threads", "seed", "ops_per_s", "check"};
    int col[6];
    for (int k = 0; k < 6; k++) {
        col[k] = rg_col(header, names[k]);
        assert_true(col[k] >= 0);
    }
    int ncols = 1;
    for (const char *q = header; *q; q++)
        ncols += *q == ',';
    for (int r = 0; rows[r]; r++) {
        char buf[256], *fields[6], *save = NULL;
        snprintf(buf, sizeof buf, "%s", rows[r]);
        for (int k = 0; k < 6; k++) {
            fields[k] = strtok_r(k ? NULL : buf, ",", &save);
            assert_non_null(fields[k]);
        }
        for (int i = 0; i < ncols; i++) {
            const char *v = "x";
            for (int k = 0; k < 6; k++)
                if (col[k] == i)
                    v = fields[k];
            fprintf(f, "%s%s", i ? "," : "", v);
        }
        fputc('\n', f);
    }
    assert_int_equal(fclose(f), 0);
}

static int rg_verdict(const struct rg_ctx *c, int expect)
{
    char script[PATH_MAX], a[PATH_MAX], b[PATH_MAX], out[PATH_MAX], hist[PATH_MAX];
    snprintf(script, sizeof script, "%s/scripts/regress-ab", rg_root);
    rg_path(a, c, "A.csv");
    rg_path(b, c, "B.csv");
    rg_path(out, c, "out");
    rg_path(hist, c, "history.csv");
    char *argv[] = {script, "verdict", "--a", a, "--b", b, "--out", out, "--history", hist,
                    NULL};
    return rg_run(c, argv, expect);
}

/* B.csv = rows (header hb), the verdict must exit `expect`; returns verdict.md. */
static char *rg_verdict_b(const struct rg_ctx *c, const char *hb, const char *const *rows,
                          int expect)
{
    char p[PATH_MAX];
    rg_path(p, c, "B.csv");
    rg_runs_file(p, hb, rows);
    assert_int_equal(rg_verdict(c, expect), expect);
    rg_path(p, c, "out/verdict.md");
    char *md = rg_read(p);
    assert_non_null(md);
    return md;
}

static void test_ab_verdict_files(void **state)
{
    struct rg_ctx *c = *state;
    char p[PATH_MAX];
    /* A has the old columns; B has them in another order, an extra column and a runtime
     * A does not have (not judged). */
    const char *ha = "run_id,runtime,workload,params,threads,seed,ops_per_s,check";
    const char *hb = "check,ops_per_s,seed,threads,workload,runtime,new_column";
    const char *ra[] = {"stm,bank,1,1,1000,pass", "stm,bank,1,2,1010,pass",
                        "stm,bank,1,3,990,pass", "stm,bank,1,4,1005,pass",
                        "stm,bank,1,5,995,pass", NULL};
    const char *same[] = {"stm,bank,1,1,1001,pass", "stm,bank,1,2,1008,pass",
                          "stm,bank,1,3,992,pass", "stm,bank,1,4,1003,pass",
                          "stm,bank,1,5,997,pass", "htm,bank,1,1,5000,pass",
                          "htm,bank,1,2,5000,pass", NULL};
    const char *slow[] = {"stm,bank,1,1,801,pass", "stm,bank,1,2,808,pass",
                          "stm,bank,1,3,792,pass", "stm,bank,1,4,803,pass",
                          "stm,bank,1,5,797,pass", NULL};
    const char *failed[] = {"stm,bank,1,1,1001,pass", "stm,bank,1,2,1008,pass",
                            "stm,bank,1,3,992,fail", "stm,bank,1,4,1003,pass",
                            "stm,bank,1,5,997,pass", NULL};
    rg_path(p, c, "A.csv");
    rg_runs_file(p, ha, ra);
    char *md = rg_verdict_b(c, hb, same, 0);
    assert_non_null(strstr(md, "| bank | stm | ops/s, 1 thread |"));
    assert_null(strstr(md, "| bank | htm |"));     /* no A side: not judged */
    free(md);

    md = rg_verdict_b(c, hb, slow, 1);
    assert_non_null(strstr(md, "1 REGRESSION"));
    assert_non_null(strstr(md, "| bank | stm | ops/s, 1 thread |"));
    free(md);

    md = rg_verdict_b(c, hb, failed, 1);
    assert_non_null(strstr(md, "check fail"));
    free(md);

    /* Three comparisons appended to one history file: one header, three rows each
     * (the failed run adds a check row). */
    rg_path(p, c, "history.csv");
    char *h = rg_read(p);
    assert_non_null(h);
    int lines = 0;
    for (char *q = h; *q; q++)
        lines += *q == '\n';
    assert_int_equal(lines, 1 + 1 + 1 + 2);
    assert_int_equal(strncmp(h, "date,a_rev,b_rev,", 17), 0);
    free(h);
    /* A history file of another format is refused, not rewritten. */
    rg_write(p, "something,else\n1,2\n");
    assert_int_equal(rg_verdict(c, 2), 2);
    h = rg_read(p);
    assert_string_equal(h, "something,else\n1,2\n");
    free(h);
    /* Missing columns: bad input. */
    rg_path(p, c, "B.csv");
    rg_write(p, "runtime,workload,ops_per_s\nstm,bank,1\n");
    assert_int_equal(rg_verdict(c, 2), 2);
}

static void test_ab_baseline_rev(void **state)
{
    struct rg_ctx *c = *state;
    char p[PATH_MAX], script[PATH_MAX], log[PATH_MAX];
    snprintf(script, sizeof script, "%s/scripts/regress-ab", rg_root);
    rg_path(p, c, "runs.csv");
    rg_write(p, "run_id,git_rev,runtime\n1,0123456789ab-dirty,seq\n2,0123456789ab-dirty,stm\n");
    char *argv[] = {script, "baseline-rev", p, NULL};
    assert_int_equal(rg_run(c, argv, 0), 0);
    rg_path(log, c, "log");
    char *out = rg_read(log);
    assert_non_null(out);
    assert_non_null(strstr(out, "0123456789ab\n"));
    assert_null(strstr(out, "0123456789ab-dirty\n"));
    free(out);
    rg_write(p, "run_id,runtime\n1,seq\n");
    assert_int_equal(rg_run(c, argv, 2), 2);
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
        cmocka_unit_test_setup_teardown(test_ab_equal_samples_pass, rg_setup, rg_teardown),
        cmocka_unit_test_setup_teardown(test_ab_shifted_distribution_fails, rg_setup, rg_teardown),
        cmocka_unit_test_setup_teardown(test_ab_noise_within_tolerance_passes, rg_setup, rg_teardown),
        cmocka_unit_test_setup_teardown(test_ab_counts, rg_setup, rg_teardown),
        cmocka_unit_test_setup_teardown(test_ab_verdict_files, rg_setup, rg_teardown),
        cmocka_unit_test_setup_teardown(test_ab_baseline_rev, rg_setup, rg_teardown),
    };
    return cmocka_run_group_tests_name("regress", tests, NULL, NULL);
}
