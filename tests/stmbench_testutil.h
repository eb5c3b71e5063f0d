/*
 * tests/stmbench_testutil.h - helpers for the tests that run the harness in-process
 * (every tests/test_*.c that includes it: cli, csv, bank, rbtree, hashmap, interp,
 * itm, ...): run stmbench_main on an argv list, a scratch directory, file reading and
 * CSV field lookup. Included by one source file per test program (all static).
 */
#ifndef STMBENCH_TESTUTIL_H
#define STMBENCH_TESTUTIL_H

#include "harness/harness.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Runs stmbench_main("stmbench", args..., NULL). */
static __attribute__((unused)) int tu_run(const char *first, ...)
{
    char *argv[128];
    int argc = 0;
    argv[argc++] = strdup("stmbench");
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 127; a = va_arg(ap, const char *))
        argv[argc++] = strdup(a);
    va_end(ap);
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    int rc = stmbench_main(argc, argv);
    fflush(stdout);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    return rc;
}

/* Same, with an argv vector (NULL-terminated, without the program name). */
static __attribute__((unused)) int tu_runv(const char *const *args)
{
    char *argv[128];
    int argc = 0;
    argv[argc++] = strdup("stmbench");
    for (int i = 0; args[i] && argc < 127; i++)
        argv[argc++] = strdup(args[i]);
    argv[argc] = NULL;
    fflush(stdout);
    int rc = stmbench_main(argc, argv);
    fflush(stdout);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    return rc;
}

static __attribute__((unused)) char tu_dir[256];

static __attribute__((unused)) void tu_mkdir(void)
{
    snprintf(tu_dir, sizeof tu_dir, "/tmp/stmbench-test-XXXXXX");
    if (!mkdtemp(tu_dir))
        abort();
}

static __attribute__((unused)) void tu_rmdir(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tu_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tu_dir);
}

/* cmocka setup/teardown that make and remove the scratch directory. */
static __attribute__((unused)) int tu_setup_dir(void **state)
{
    (void)state;
    tu_mkdir();
    return 0;
}

static __attribute__((unused)) int tu_teardown_dir(void **state)
{
    (void)state;
    tu_rmdir();
    return 0;
}

/* A path inside the scratch directory (static buffer per slot). */
static __attribute__((unused)) const char *tu_path(int slot, const char *name)
{
    static char buf[8][400];
    snprintf(buf[slot], sizeof buf[slot], "%s/%s", tu_dir, name);
    return buf[slot];
}

/* Whole file, NUL-terminated, length in *len; NULL if it does not exist. */
static __attribute__((unused)) char *tu_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *p = malloc(cap);
    size_t r;
    while ((r = fread(p + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n < 2) {
            cap *= 2;
            p = realloc(p, cap);
        }
    }
    fclose(f);
    p[n] = '\0';
    if (len)
        *len = n;
    return p;
}

static __attribute__((unused)) void tu_write(const char *path, const char *s)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fputs(s, f);
    fclose(f);
}

static __attribute__((unused)) int tu_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static __attribute__((unused)) int tu_count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Field `col` (by header name) of data line `row` (0 = first after the header) of a
 * CSV text, copied into out; -1 when absent. */
static __attribute__((unused)) int tu_field(const char *csv, int row, const char *col, char *out, size_t outlen)
{
    const char *hdr_end = strchr(csv, '\n');
    if (!hdr_end)
        return -1;
    int idx = -1, i = 0;
    size_t cl = strlen(col);
    for (const char *p = csv; p < hdr_end; i++) {
        const char *e = p;
        while (e < hdr_end && *e != ',')
            e++;
        if ((size_t)(e - p) == cl && strncmp(p, col, cl) == 0)
            idx = i;
        p = e + 1;
    }
    if (idx < 0)
        return -1;
    const char *line = hdr_end + 1;
    for (int r = 0; r < row; r++) {
        line = strchr(line, '\n');
        if (!line)
            return -1;
        line++;
    }
    if (!*line)
        return -1;
    const char *p = line;
    for (int f = 0; f < idx; f++) {
        while (*p && *p != ',' && *p != '\n')
            p++;
        if (*p != ',')
            return -1;
        p++;
    }
    size_t n = 0;
    while (p[n] && p[n] != ',' && p[n] != '\n')
        n++;
    if (n >= outlen)
        n = outlen - 1;
    memcpy(out, p, n);
    out[n] = '\0';
    return 0;
}

/* Runs fn with stdout sent to a file; returns what it printed (malloc'ed). */
static __attribute__((unused)) char *tu_capture_stdout(int (*fn)(const char *const *), const char *const *args, int *rc)
{
    const char *path = tu_path(7, "stdout.txt");
    fflush(stdout);
    int saved = dup(1);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    close(fd);
    *rc = fn(args);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    return tu_read(path, NULL);
}

/* Runs `stmbench --runtime rt --workload wl --threads threads --csv csv extra...` in
 * process (stdout captured and dropped); returns its exit status. */
static __attribute__((unused)) int tu_run_workload(const char *wl, const char *rt,
                                                   const char *threads, const char *csv,
                                                   const char *const *extra)
{
    const char *args[40] = {"--runtime", rt, "--workload", wl, "--threads", threads,
                            "--csv", csv};
    int k = 8;
    for (int i = 0; extra[i] && k < 38; i++)
        args[k++] = extra[i];
    args[k] = NULL;
    int rc;
    free(tu_capture_stdout(tu_runv, args, &rc));
    return rc;
}

#endif
