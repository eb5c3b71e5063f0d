/*
 * workloads/interp/thread.h - a thread's body: its own `.per_thread` objects, the loop
 * of slices (WL_LOOP: until the stop request or the operation target), then the run in
 * progress finished, so that the heap holds whole runs only (the check counts them).
 * The raw mode runs loop_raw.h's slices, the others loop_obj.h's, between the memory
 * mode's thread_start and thread_stop hooks.
 */
#ifndef IV_THREAD_H
#define IV_THREAD_H

#include "workloads/interp/loop_obj.h"
#include "workloads/interp/loop_raw.h"
#include "workloads/interp/program.h"

/* A thread's `.per_thread` objects are allocated by the thread itself, as a program's
 * threads allocate their own objects: the setup's placeholders (allocated together by
 * the main thread, side by side with every other thread's) are replaced before the
 * first slice. Under the STM the thread's objects then sit in its own allocation
 * chunks, which no other thread ever touches or imports. */
static void iv_own_objects(struct iv_ctx *cx, struct iv_thread *th)
{
    for (int g = 0; g < cx->prog->nglobals; g++) {
        const struct iv_global *gl = &cx->prog->globals[g];
        if (!gl->per_thread)
            continue;
        size_t k = (size_t)g * (size_t)cx->nthreads + (size_t)th->tid;
        /* Freed at teardown, not now: a freed placeholder would be reused by this
         * thread's next allocation of its size, back among everybody's objects. */
        cx->placeholders[k] = cx->objs[k];
        cx->objs[k] = th->obj[g] = iv_new_object(cx, gl, th->tid);
        if (cx->memory != IV_MEM_RAW && gl->kind != IV_KIND_INT)
            cx->gobj[k] = th->gobj[g] = iv_tagged((iv_oref)th->obj[g], iv_global_type(gl));
    }
}

/* The object model's thread body: as iv_thread_run's below, between the memory mode's
 * thread_start and thread_stop. */
static IV_OBJ_TEXT SYNC_NOINLINE void iv_thread_run_obj(struct iv_ctx *cx, struct wl_thread *t)
{
    struct iv_thread *th = &cx->th[t->tid];
    iv_mem_thread_start(cx->memory, cx, th);
    iv_own_objects(cx, th);
    WL_LOOP(cx, t, iv_block_obj);
    /* Finish the run in progress so the heap holds whole runs only. */
    uint64_t drained = 0;
    while (th->vm[th->cur].in_run && !th->vm[th->cur].stuck) {
        if (drained > IV_DRAIN_MAX) {
            th->unfinished = 1;
            break;
        }
        uint64_t n = iv_block_obj(cx, t);
        t->ops += n;
        t->blocks++;
        if (n)
            lat_add(&t->len_hist, n);
        drained += n;
        sync_tick();
    }
    iv_mem_thread_stop(cx->memory, cx, th);
    t->objects_allocated = th->mem.allocs;
    t->objects_freed = th->mem.frees + th->mem.gc_freed;
}

static void iv_thread_run(void *ctx, struct wl_thread *t)
{
    struct iv_ctx *cx = ctx;
    struct iv_thread *th = &cx->th[t->tid];
    t->priv = th;
    wl_txlen_init(t, cx->interval, IV_TXLEN_START, IV_TXLEN_MAX);
    th->nglob = cx->prog->nglobals;
    th->cx = cx;
    IV_RESUME(th);
#if IV_WHERE_ON || IV_RESUME_ON
    sync_where = (struct sync_where_hook){iv_where, th, iv_where_at};
#endif
    if (cx->memory != IV_MEM_RAW) {
        iv_thread_run_obj(cx, t);
        sync_where = (struct sync_where_hook){0};   /* th is not ours beyond this call */
        return;
    }
    iv_own_objects(cx, th);
    WL_LOOP(cx, t, iv_block);
    /* Finish the run in progress so the heap holds whole runs only. */
    uint64_t drained = 0;
    while (th->vm[th->cur].in_run && !th->vm[th->cur].stuck) {
        if (drained > IV_DRAIN_MAX) {
            th->unfinished = 1;
            break;
        }
        uint64_t n = iv_block(cx, t);
        t->ops += n;
        t->blocks++;
        if (n)
            lat_add(&t->len_hist, n);
        drained += n;
        sync_tick();
    }
    sync_where = (struct sync_where_hook){0};
}

#endif
