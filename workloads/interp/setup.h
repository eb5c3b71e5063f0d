/*
 * workloads/interp/setup.h - the workload's knobs, the program's load, and the run's
 * setup and teardown (struct workload's validate, setup and teardown).
 */
#ifndef IV_SETUP_H
#define IV_SETUP_H

#include "workloads/interp/thread.h"

enum { IV_K_PROGRAM, IV_K_SWITCH, IV_K_ITER, IV_K_MEMORY, IV_NKNOBS };

static const struct wl_knob iv_knobs[IV_NKNOBS] = {
    [IV_K_PROGRAM] = { "program", WL_KNOB_STR, 0, 0, 0, "counters",
                       "a built-in program (counters, shared-counter, list-append, mixed, read-mostly; with "
                       "--memory other than raw also work-queue, parallel-map, memo-cache, arith) "
                       "or a program file (format: docs/interp.md)" },
    [IV_K_SWITCH] = { "switch-interval", WL_KNOB_INT, 100, 1, 1000000000, NULL,
                      "bytecodes per slice: between GIL releases / transaction boundaries; "
                      "auto: adaptive per thread in 1..100000 under stm, itm and htm "
                      "(the default 100 elsewhere)" },
    [IV_K_ITER] = { "iterations", WL_KNOB_INT, 1000, 1, 1000000000, NULL,
                    "the constant ITER of the program (loop count of one run)" },
    [IV_K_MEMORY] = { "memory", WL_KNOB_STR, 0, 0, 0, "raw",
                      "raw (ints are words, nothing allocated), tracing (objects, a "
                      "collector), refcount (objects, CPython's counts), biased (PEP 703's "
                      "counts) or buffered (counts outside the shared heap, changed after "
                      "each block): docs/interp.md" },
};

static int iv_load(const struct wl_args *a, struct iv_program **out, char *err, size_t errlen)
{
    const char *mem = a->sval[IV_K_MEMORY] ? a->sval[IV_K_MEMORY] : "raw";
    struct iv_params p = { .iterations = a->ival[IV_K_ITER], .threads = a->nthreads,
                           .memory = iv_memory_find(mem) };
    if (p.memory < 0) {
#define IV_MEM_NAME_(NAME, name) " " #name
        snprintf(err, errlen, "--memory: unknown mode '%s' (one of:" IV_MEMORY_MODES(IV_MEM_NAME_) ")",
                 mem);
#undef IV_MEM_NAME_
        return -1;
    }
    const char *spec = a->sval[IV_K_PROGRAM] ? a->sval[IV_K_PROGRAM] : "counters";
    char msg[400];
    if (iv_asm_load(spec, &p, out, msg, sizeof msg) < 0) {
        snprintf(err, errlen, "--program: %s", msg);
        return -1;
    }
    return 0;
}

static int iv_validate(const struct wl_args *a, char *err, size_t errlen)
{
    struct iv_program *p;
    if (iv_load(a, &p, err, errlen) < 0)
        return -1;
    iv_program_free(p);
    return 0;
}

/* The object model's own teardown: what the memory mode still holds (its teardown
 * hook), the threads' work lists, the constants and the globals' first values. */
static IV_OBJ_TEXT void iv_free_model(struct iv_ctx *cx)
{
    iv_mem_teardown(cx->memory, cx);
    for (int t = 0; t < cx->nthreads; t++) {
        struct iv_mem *m = &cx->th[t].mem;
        free(m->work);
        free(m->drop);
    }
    if (cx->konst)
        iv_free_all((const iv_val *)cx->konst, (size_t)cx->prog->ncode);
    iv_free_all(cx->pobj, cx->npobj);
    free(cx->pobj);
    pthread_mutex_destroy(&cx->pobj_mu);
}

static void iv_teardown(void *ctx)
{
    struct iv_ctx *cx = ctx;
    if (!cx)
        return;
    if (cx->memory != IV_MEM_RAW && cx->th && cx->prog)
        iv_mem_teardown_stacks(cx->memory, cx);
    if (cx->objs && cx->prog)
        for (int g = 0; g < cx->prog->nglobals; g++) {
            const struct iv_global *gl = &cx->prog->globals[g];
            for (int t = 0; t < (gl->per_thread ? cx->nthreads : 1); t++) {
                size_t k = (size_t)g * (size_t)cx->nthreads + (size_t)t;
                if (cx->objs[k] != SYNC_NULL)
                    iv_free_object(cx, gl, cx->objs[k]);
                if (cx->placeholders && cx->placeholders[k] != SYNC_NULL)
                    iv_free_object(cx, gl, cx->placeholders[k]);
            }
        }
    if (cx->memory != IV_MEM_RAW && cx->th && cx->prog)
        iv_free_model(cx);
    if (cx->module != SYNC_NULL) {
        iv_odict_ref md = cx->module;
        SYNC_ATOMIC("interp.teardown") {
            SYNC_READ(md);
            SYNC_FREE(md->slots);
            SYNC_FREE(md);
        }
    }
    for (int t = 0; cx->th && cx->prog && t < cx->nthreads; t++) {
        free(cx->th[t].gcache);
        free(cx->th[t].txq.put);
        free(cx->th[t].txq.got);
    }
    free(cx->konst);
    free(cx->gobj);
    free(cx->mems);
    free(cx->objs);
    free(cx->placeholders);
    free(cx->th);
    iv_program_free(cx->prog);
    free(cx);
}

static void *iv_setup(const struct wl_args *a, char *err, size_t errlen)
{
    struct iv_ctx *cx = calloc(1, sizeof *cx);
    if (!cx) {
        snprintf(err, errlen, "interp: out of memory");
        return NULL;
    }
    if (iv_load(a, &cx->prog, err, errlen) < 0) {
        free(cx);
        return NULL;
    }
    int n = a->nthreads;
    cx->nthreads = n;
    cx->memory = cx->prog->params.memory;
    cx->interval = a->ival[IV_K_SWITCH];          /* WL_LEN_AUTO: adaptive */
    pthread_mutex_init(&cx->pobj_mu, NULL);
    size_t nobjs = (size_t)(cx->prog->nglobals ? cx->prog->nglobals : 1) * (size_t)n;
    cx->objs = calloc(nobjs, sizeof *cx->objs);
    cx->placeholders = calloc(nobjs, sizeof *cx->placeholders);
    cx->gobj = calloc(nobjs, sizeof *cx->gobj);
    cx->konst = calloc((size_t)cx->prog->ncode, sizeof *cx->konst);
    cx->mems = calloc((size_t)n, sizeof *cx->mems);
    size_t thsz = ((size_t)n * sizeof *cx->th + SYNC_CACHELINE - 1) & ~(size_t)(SYNC_CACHELINE - 1);
    cx->th = aligned_alloc(SYNC_CACHELINE, thsz);
    if (!cx->objs || !cx->placeholders || !cx->th || !cx->gobj || !cx->konst || !cx->mems) {
        snprintf(err, errlen, "interp: out of memory for %d threads", n);
        free(cx->th);
        cx->th = NULL;
        iv_teardown(cx);
        return NULL;
    }
    memset(cx->th, 0, thsz);
    for (int t = 0; t < n; t++)
        cx->mems[t] = &cx->th[t].mem;
    iv_mem_setup(cx->memory, cx);
    for (int g = 0; g < cx->prog->nglobals; g++) {
        const struct iv_global *gl = &cx->prog->globals[g];
        for (int t = 0; t < (gl->per_thread ? n : 1); t++) {
            size_t k = (size_t)g * (size_t)n + (size_t)t;
            cx->objs[k] = iv_new_object(cx, gl, t);
            if (cx->memory != IV_MEM_RAW && gl->kind != IV_KIND_INT)
                cx->gobj[k] = iv_tagged((iv_oref)cx->objs[k], iv_global_type(gl));
        }
    }
    if (cx->memory != IV_MEM_RAW && iv_module_new(cx, err, errlen) < 0) {
        iv_teardown(cx);
        return NULL;
    }
    if (cx->memory != IV_MEM_RAW) {
        const struct iv_program *pr = cx->prog;
        SYNC_ATOMIC("interp.setup") {
            for (int i = 0; i < pr->ncode; i++)
                cx->konst[i] = pr->code[i].op == IV_PUSH ? (int64_t)iv_program_int(cx, pr->code[i].v)
                                                         : 0;
        }
    }
    for (int t = 0; t < n; t++) {
        struct iv_thread *th = &cx->th[t];
        th->tid = t;
        for (int g = 0; g < cx->prog->nglobals; g++) {
            th->obj[g] = iv_obj_of(cx, g, t);
            th->gobj[g] = cx->gobj[(size_t)g * (size_t)n +
                                   (size_t)(cx->prog->globals[g].per_thread ? t : 0)];
        }
        iv_vm_reset(&th->vm[0], cx->prog->main_nlocals);
    }
    return cx;
}

#endif
