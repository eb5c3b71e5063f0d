/*
 * tests/fuzz/fuzz_asm.c - libFuzzer target for the interp assembler (scripts/fuzz.sh,
 * `make fuzz`). Feeds the bytes to iv_asm_parse; every input must end either in a
 * message naming a line, or in a program that then runs without a crash: the target
 * also builds the program's objects (seq runtime, two threads' worth), runs a bounded
 * number of slices of each thread, evaluates its `.expect` lines and frees it all.
 */
#define SYNC_RT seq
#define IV_ATOMIC_CAP ((int64_t)20000)
#define IV_LOCK(th, g, adepth) ((void)0)
#define IV_UNLOCK(th, g, adepth) ((void)0)
#define IV_ATOMIC_ENTER(th, set) ((void)0)
#define IV_ATOMIC_EXIT(th) ((void)0)
#define IV_LOCK_OBJ(th, g, o, adepth, dyn) 0
#define IV_UNLOCK_OBJ(th, g, o, adepth, k) ((void)(k))
#include "workloads/interp/vm.h"

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct iv_params p = { .iterations = 7, .threads = 2 };
    struct iv_program *prog = NULL;
    char err[512];
    err[0] = 0;
    if (iv_asm_parse((const char *)data, size, "fuzz", &p, &prog, err, sizeof err) < 0) {
        assert(prog == NULL);
        assert(strncmp(err, "fuzz", 4) == 0);            /* every error names its source */
        return 0;
    }
    iv_program_free(prog);

    /* Run it: the loader promised that nothing can go wrong at run time. */
    char tmp[sizeof(struct wl_args)] = { 0 };
    struct wl_args *a = (struct wl_args *)tmp;
    a->nthreads = 2;
    a->ival[IV_K_SWITCH] = 13;
    a->ival[IV_K_ITER] = 7;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    struct iv_ctx *cx = calloc(1, sizeof *cx);
    if (!cx || iv_asm_parse(text, size, "fuzz", &p, &cx->prog, err, sizeof err) < 0)
        abort();                                          /* parsed once, must parse again */
    cx->nthreads = 2;
    cx->interval = 13;
    cx->objs = calloc((size_t)(cx->prog->nglobals + 1) * 2, sizeof *cx->objs);
    cx->th = aligned_alloc(SYNC_CACHELINE, 2 * sizeof *cx->th);
    if (!cx->objs || !cx->th)
        abort();
    memset(cx->th, 0, 2 * sizeof *cx->th);
    for (int g = 0; g < cx->prog->nglobals; g++) {
        const struct iv_global *gl = &cx->prog->globals[g];
        for (int t = 0; t < (gl->per_thread ? 2 : 1); t++)
            cx->objs[(size_t)g * 2 + (size_t)t] = iv_new_object(gl);
    }
    static struct wl_thread wt[2];
    static atomic_int stop;
    for (int t = 0; t < 2; t++) {
        struct iv_thread *th = &cx->th[t];
        th->tid = t;
        for (int g = 0; g < cx->prog->nglobals; g++)
            th->obj[g] = iv_obj_of(cx, g, t);
        iv_vm_reset(&th->vm[0], cx->prog->main_nlocals);
        memset(&wt[t], 0, sizeof wt[t]);
        wt[t].tid = t;
        wt[t].nthreads = 2;
        wt[t].stop = &stop;
        wt[t].priv = th;
    }
    for (int s = 0; s < 400; s++) {
        struct iv_thread *th = &cx->th[s & 1];
        if (th->vm[th->cur].stuck)
            continue;
        iv_block(cx, &wt[s & 1]);
    }
    char msg[512];
    (void)iv_check(cx, wt, 2, msg, sizeof msg);
    free(text);
    iv_teardown(cx);
    return 0;
}
