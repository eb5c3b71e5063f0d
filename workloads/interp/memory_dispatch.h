/*
 * workloads/interp/memory_dispatch.h - the memory modes' code, and each hook of
 * memory.h as iv_mem_<hook>(mode, ...): a switch on the mode over modes.h's list. The
 * loops are compiled once per mode with the mode a constant (loop_obj.h), so there the
 * switch folds into a direct, inlined call; setup, teardown and the check switch at
 * run time.
 */
#ifndef IV_MEMORY_DISPATCH_H
#define IV_MEMORY_DISPATCH_H

#include "workloads/interp/mem_raw.h"
#include "workloads/interp/mem_tracing.h"
#include "workloads/interp/mem_refcount.h"
#include "workloads/interp/mem_biased.h"
#include "workloads/interp/mem_buffered.h"

/* Each dispatcher is a switch whose cases modes.h's list makes, one per mode, from a
 * case macro of its own (IV_MEM_<HOOK>_) that pastes the mode's name into the hook's
 * (scripts/stmbench/sync_cost.py follows such pasted calls). */
#define IV_MEM_SETUP_(NAME, name)                                                       \
    case IV_MEM_##NAME:                                                                 \
        iv_##name##_setup(cx);                                                          \
        break;
static inline void iv_mem_setup(int mode, struct iv_ctx *cx)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_SETUP_)
    default:
        break;
    }
}

#define IV_MEM_PROGRAM_OBJECT_(NAME, name)                                              \
    case IV_MEM_##NAME:                                                                 \
        iv_##name##_program_object(cx, o, tid, container);                              \
        break;
static inline void iv_mem_program_object(int mode, const struct iv_ctx *cx, iv_oref o, int tid, bool container)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_PROGRAM_OBJECT_)
    default:
        break;
    }
}

#define IV_MEM_ALLOCATED_(NAME, name)                                                   \
    case IV_MEM_##NAME:                                                                 \
        iv_##name##_allocated(cx, th, o, w);                                            \
        break;
static inline void iv_mem_allocated(int mode, const struct iv_ctx *cx, struct iv_thread *th, iv_oref o, iv_val w)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_ALLOCATED_)
    default:
        break;
    }
}

#define IV_MEM_INCREF_(NAME, name)                                                      \
    case IV_MEM_##NAME:                                                                 \
        iv_##name##_incref(cx, th, w);                                                  \
        break;
static inline void iv_mem_incref(int mode, const struct iv_ctx *cx, struct iv_thread *th, iv_val w)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_INCREF_)
    default:
        break;
    }
}

#define IV_MEM_TRY_INCREF_(NAME, name)                                                  \
    case IV_MEM_##NAME:                                                                 \
        return iv_##name##_try_incref(cx, th, w);
static inline bool iv_mem_try_incref(int mode, const struct iv_ctx *cx, struct iv_thread *th, iv_val w)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_TRY_INCREF_)
    default:
        return false;
    }
}

#define IV_MEM_DECREF_(NAME, name)                                                      \
    case IV_MEM_##NAME:                                                                 \
        iv_##name##_decref(cx, th, vm, w);                                              \
        break;
static inline void iv_mem_decref(int mode, const struct iv_ctx *cx, struct iv_thread *th, struct iv_vm *vm, iv_val w)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_DECREF_)
    default:
        break;
    }
}

#define IV_MEM_SAFEPOINT_(NAME, name)                                                   \
    case IV_MEM_##NAME:                                                                 \
        iv_##name##_safepoint(cx, th);                                                  \
        break;
static inline void iv_mem_safepoint(int mode, struct iv_ctx *cx, struct iv_thread *th)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_SAFEPOINT_)
    default:
        break;
    }
}

#define IV_MEM_BLOCK_BEGIN_(NAME, name)                                                 \
    case IV_MEM_##NAME:                                                                 \
        iv_##name##_block_begin(cx, th);                                                \
        break;
static inline void iv_mem_block_begin(int mode, const struct iv_ctx *cx, struct iv_thread *th)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_BLOCK_BEGIN_)
    default:
        break;
    }
}

#define IV_MEM_BLOCK_END_(NAME, name)                                                   \
    case IV_MEM_##NAME:                                                                 \
        iv_##name##_block_end(cx, th, vm);                                              \
        break;
static inline void iv_mem_block_end(int mode, const struct iv_ctx *cx, struct iv_thread *th, struct iv_vm *vm)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_BLOCK_END_)
    default:
        break;
    }
}

#define IV_MEM_BLOCK_DONE_(NAME, name)                                                  \
    case IV_MEM_##NAME:                                                                 \
        iv_##name##_block_done(cx, th);                                                 \
        break;
static inline void iv_mem_block_done(int mode, struct iv_ctx *cx, struct iv_thread *th)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_BLOCK_DONE_)
    default:
        break;
    }
}

#define IV_MEM_THREAD_START_(NAME, name)                                                \
    case IV_MEM_##NAME:                                                                 \
        iv_##name##_thread_start(cx, th);                                               \
        break;
static inline void iv_mem_thread_start(int mode, struct iv_ctx *cx, struct iv_thread *th)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_THREAD_START_)
    default:
        break;
    }
}

#define IV_MEM_THREAD_STOP_(NAME, name)                                                 \
    case IV_MEM_##NAME:                                                                 \
        iv_##name##_thread_stop(cx, th);                                                \
        break;
static inline void iv_mem_thread_stop(int mode, struct iv_ctx *cx, struct iv_thread *th)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_THREAD_STOP_)
    default:
        break;
    }
}

#define IV_MEM_TEARDOWN_STACKS_(NAME, name)                                             \
    case IV_MEM_##NAME:                                                                 \
        iv_##name##_teardown_stacks(cx);                                                \
        break;
static inline void iv_mem_teardown_stacks(int mode, struct iv_ctx *cx)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_TEARDOWN_STACKS_)
    default:
        break;
    }
}

#define IV_MEM_TEARDOWN_GLOBAL_(NAME, name)                                             \
    case IV_MEM_##NAME:                                                                 \
        iv_##name##_teardown_global(cx, th, w, container);                              \
        break;
static inline void iv_mem_teardown_global(int mode, const struct iv_ctx *cx, struct iv_thread *th, iv_val w, bool container)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_TEARDOWN_GLOBAL_)
    default:
        break;
    }
}

#define IV_MEM_TEARDOWN_(NAME, name)                                                    \
    case IV_MEM_##NAME:                                                                 \
        iv_##name##_teardown(cx);                                                       \
        break;
static inline void iv_mem_teardown(int mode, struct iv_ctx *cx)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_TEARDOWN_)
    default:
        break;
    }
}

#define IV_MEM_CHECK_(NAME, name)                                                       \
    case IV_MEM_##NAME:                                                                 \
        return iv_##name##_check(cx, msg, len);
static inline int iv_mem_check(int mode, const struct iv_ctx *cx, char *msg, size_t len)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_CHECK_)
    default:
        return 0;
    }
}

/* 1 when the mode's decref does anything (IV_MEM_COUNTS_<name>, memory.h). */
#define IV_MEM_COUNTS_CASE_(NAME, name)                                                 \
    case IV_MEM_##NAME:                                                                 \
        return IV_MEM_COUNTS_##name;
static inline bool iv_mem_counts(int mode)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_COUNTS_CASE_)
    default:
        return false;
    }
}

/* 1 when the mode's dead boxes go back to the thread's free boxes (IV_MEM_BOXES_<name>,
 * memory.h; freelist.h), so its allocations take them from there. */
#define IV_MEM_BOXES_CASE_(NAME, name)                                                  \
    case IV_MEM_##NAME:                                                                 \
        return IV_MEM_BOXES_##name;
static inline bool iv_mem_boxes(int mode)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_MEM_BOXES_CASE_)
    default:
        return false;
    }
}

#endif
