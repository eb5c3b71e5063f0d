/*
 * workloads/interp/mem_raw.h - --memory raw: no object model. Ints are machine words,
 * the declared globals are the only objects (a cell per int, the chunked list and the
 * raw dict of list.h and dict.h), and nothing is allocated or freed while a program
 * runs: the VM as it was before the object model, with its own loop (loop_raw.h). It
 * models no real interpreter's memory; it is the floor: what the runtimes cost when
 * the program touches only its declared objects.
 *
 * Every hook is empty: the object loop never runs under raw (thread.h picks
 * loop_raw.h's), and setup and teardown free the declared objects themselves
 * (setup.h). Nothing shared, so no invariant and no memory order of its own.
 */
#ifndef IV_MEM_RAW_H
#define IV_MEM_RAW_H

#include "workloads/interp/census.h"
#include "workloads/interp/where.h"

#define IV_MEM_COUNTS_raw 0
#define IV_MEM_BOXES_raw 0          /* its dead boxes go to freelist.h's lists */

static inline IV_OBJ_TEXT void iv_raw_setup(struct iv_ctx *cx) { (void)cx; }
static inline IV_OBJ_TEXT void iv_raw_program_object(const struct iv_ctx *cx, iv_oref o, int tid,
                                         bool container) {}
static inline IV_OBJ_TEXT void iv_raw_allocated(const struct iv_ctx *cx, struct iv_thread *th, iv_oref o,
                                    iv_val w) {}
static inline IV_OBJ_TEXT bool iv_raw_try_incref(const struct iv_ctx *cx, struct iv_thread *th,
                                                 iv_val w)
{
    return false;
}

static inline IV_OBJ_TEXT void iv_raw_incref(const struct iv_ctx *cx, struct iv_thread *th, iv_val w) {}
static inline IV_OBJ_TEXT void iv_raw_decref(const struct iv_ctx *cx, struct iv_thread *th,
                                 struct iv_vm *vm, iv_val w) {}
static inline IV_OBJ_TEXT void iv_raw_safepoint(struct iv_ctx *cx, struct iv_thread *th) {}
static inline IV_OBJ_TEXT void iv_raw_block_begin(const struct iv_ctx *cx, struct iv_thread *th) {}
static inline IV_OBJ_TEXT void iv_raw_block_end(const struct iv_ctx *cx, struct iv_thread *th,
                                    struct iv_vm *vm) {}
static inline IV_OBJ_TEXT void iv_raw_block_done(struct iv_ctx *cx, struct iv_thread *th) {}
static inline IV_OBJ_TEXT void iv_raw_thread_start(struct iv_ctx *cx, struct iv_thread *th) {}
static inline IV_OBJ_TEXT void iv_raw_thread_stop(struct iv_ctx *cx, struct iv_thread *th) {}
static inline IV_OBJ_TEXT void iv_raw_teardown_stacks(struct iv_ctx *cx) { (void)cx; }
static inline IV_OBJ_TEXT void iv_raw_teardown_global(const struct iv_ctx *cx, struct iv_thread *th,
                                          iv_val w, bool container) {}
static inline IV_OBJ_TEXT void iv_raw_teardown(struct iv_ctx *cx) { (void)cx; }

/* No objects: nothing to check beyond the program's expectations. */
static inline IV_OBJ_TEXT int iv_raw_check(const struct iv_ctx *cx, char *msg, size_t len)
{
    return 0;
}

#endif
