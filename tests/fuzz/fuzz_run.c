/*
 * tests/fuzz/fuzz_run.c - libFuzzer target 2 of `make fuzz` (scripts/fuzz.sh): the
 * interpreter's execution. The bytes are a program text. One that loads is set up as
 * the interp workload sets it up (its objects, two threads, each thread's own
 * objects), run under seq slice by slice, the two threads taking turns, for at most
 * FZ_BYTECODES bytecodes (then each thread's run in progress gets as many more to
 * reach HALT), its `.expect` lines evaluated by the workload's check, and everything
 * freed. All of it under ASan and UBSan (Makefile, FUZZ_LIB), with the VM's own
 * promises checked after every slice (stack and call depth within what the loader
 * computed). Target 1, the loader alone, is tests/fuzz/fuzz_asm.c.
 *
 * Everything this file knows of the interpreter's internals is the include below and
 * fz_run_program(); a program reaches it the way a user's program reaches the
 * workload, as a file named by --program (here a memfd, /proc/self/fd/N). Each input
 * runs once in every memory mode (--memory: raw, and the object model's tracing,
 * refcount, biased and buffered), as a knob value in `a`.
 */
#define SYNC_RT seq
/* An atomic section that never ends runs IV_ATOMIC_CAP bytecodes before the VM gives
 * up on it (2^28 in the workload): lowered so that such a program costs milliseconds. */
#define IV_ATOMIC_CAP ((int64_t)20000)
#define IV_LOCK(th, g, adepth) ((void)0)
#define IV_UNLOCK(th, g, adepth) ((void)0)
#define IV_ATOMIC_ENTER(th, set) ((void)0)
#define IV_ATOMIC_EXIT(th) ((void)0)
#define IV_LOCK_OBJ(th, g, o, adepth, dyn) 0
#define IV_UNLOCK_OBJ(th, g, o, adepth, k) ((void)(k))
#include "workloads/interp/vm.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FZ_THREADS = 2, FZ_ITER = 7 };
#define FZ_BYTECODES ((uint64_t)20000) /* bytecodes of both threads' turns */
#define FZ_SLICES 4000                 /* turns at most (a stuck thread's turn runs none) */

static void fz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz_run: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* The VM's state between slices: what the loader's analysis bounds. */
static void fz_check_vm(const struct iv_ctx *cx, const struct iv_thread *th)
{
    const struct iv_vm *vm = &th->vm[th->cur];
    const struct iv_program *p = cx->prog;
    if (vm->sp < 0 || vm->sp > p->max_vals)
        fz_fail("thread %d: stack at %d slots, the loader allowed %d", th->tid, vm->sp,
                p->max_vals);
    if (vm->nframes < 0 || vm->nframes >= p->max_frames)
        fz_fail("thread %d: %d frames, the loader allowed %d", th->tid, vm->nframes,
                p->max_frames - 1);
    if (vm->adepth < 0 || vm->pc < 0 || vm->pc >= p->ncode)
        fz_fail("thread %d: atomic depth %d, pc %d of %d", th->tid, vm->adepth, vm->pc,
                p->ncode);
}

/* Sets up, runs and checks the program file `path` at switch interval `interval` in
 * memory mode `memory` (see the header). Returns 0 when it did not load, 1 when it ran. */
static int fz_run_program(const char *path, long interval, int memory)
{
    struct wl_args a = { .nthreads = FZ_THREADS, .seed = 1, .ops_per_tx = 1 };
    a.ival[IV_K_SWITCH] = interval;
    a.ival[IV_K_ITER] = FZ_ITER;
    a.sval[IV_K_PROGRAM] = path;
    a.sval[IV_K_MEMORY] = iv_memory_names[memory];
    char err[512] = "";
    struct iv_ctx *cx = iv_setup(&a, err, sizeof err);
    if (!cx) {
        if (strncmp(err, "--program: ", 11) != 0)
            fz_fail("setup failed without naming --program: '%s'", err);
        return 0;
    }
    static struct wl_thread wt[FZ_THREADS];
    static atomic_int stop;
    for (int t = 0; t < FZ_THREADS; t++) {    /* what iv_thread_run does first */
        memset(&wt[t], 0, sizeof wt[t]);
        wt[t].tid = t;
        wt[t].nthreads = FZ_THREADS;
        wt[t].stop = &stop;
        wt[t].priv = &cx->th[t];
        wl_txlen_init(&wt[t], interval, IV_TXLEN_START, IV_TXLEN_MAX);
        iv_mem_thread_start(cx->memory, cx, &cx->th[t]);   /* running */
        iv_own_objects(cx, &cx->th[t]);
    }
    bool objects = memory != IV_MEM_RAW;
    uint64_t ran = 0;
    for (int s = 0; s < FZ_SLICES && ran < FZ_BYTECODES; s++) {
        struct iv_thread *th = &cx->th[s % FZ_THREADS];
        if (!th->vm[th->cur].stuck)
            ran += objects ? iv_block_obj(cx, &wt[s % FZ_THREADS]) : iv_block(cx, &wt[s % FZ_THREADS]);
        fz_check_vm(cx, th);
    }
    /* As after the stop: each thread finishes the run in progress, within a bound. */
    for (int t = 0; t < FZ_THREADS; t++) {
        struct iv_thread *th = &cx->th[t];
        uint64_t drained = 0;
        for (int s = 0; s < FZ_SLICES && drained < FZ_BYTECODES; s++) {
            if (!th->vm[th->cur].in_run || th->vm[th->cur].stuck)
                break;
            drained += objects ? iv_block_obj(cx, &wt[t]) : iv_block(cx, &wt[t]);
            fz_check_vm(cx, th);
        }
    }
    char msg[512] = "";
    if (iv_check(cx, wt, FZ_THREADS, msg, sizeof msg) < 0 && strncmp(msg, "interp ", 7) != 0)
        fz_fail("a failed check without a message naming the program: '%s'", msg);
    iv_teardown(cx);
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz_run", MFD_CLOEXEC);
        if (fd < 0) {
            perror("fuzz_run: memfd_create");
            exit(3);
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (size > IV_MAX_FILE)
        return 0;
    if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
        perror("fuzz_run: writing the program to the memfd");
        exit(3);
    }
    /* The switch interval from the size: slices end at many places of a program. A
     * program that does not load in one mode may in another (the object model's
     * opcodes; its type proofs). */
    for (int m = 0; m < IV_NMEM; m++)
        fz_run_program(path, 1 + (long)(size % 61), m);
    return 0;
}
