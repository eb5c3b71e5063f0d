/*
 * workloads/interp/vm.h - the interp workload (a stack bytecode interpreter whose
 * objects live in the shared heap): its descriptor, over the parts that base.h lists,
 * written once against runtime/sync.h. Included by exactly two files (and the tests):
 *   workloads/interp.c        (compiled per runtime: seq, mutex, gil, stm, itm): no locks
 *   workloads/interp_locks.c  (SYNC_RT=locks): per-object locks as in PEP 703
 * Each defines four hooks before including this file (empty in interp.c):
 *   IV_LOCK(th, g, adepth)    before a bytecode touches object g (int, list or dict)
 *   IV_UNLOCK(th, g, adepth)  after it
 *   IV_ATOMIC_ENTER(th, set)  an outermost ATOMIC_BEGIN; set = the objects (bits) its
 *                             section may touch, callees included (from the loader)
 *   IV_ATOMIC_EXIT(th)        the matching ATOMIC_END (or HALT/abandon inside one)
 *
 * The invariants are at the top of each part: state.h (the shared heap and the VM state),
 * loop_raw.h (slices), memory.h and mem_<mode>.h (the memory modes).
 */
#ifndef INTERP_VM_H
#define INTERP_VM_H

#include "workloads/interp/base.h"
#include "workloads/interp/where.h"
#include "workloads/interp/loop_raw.h"
#include "workloads/interp/check.h"

#define IV_SUMMARY "a stack bytecode interpreter whose objects live in the shared heap"

WORKLOAD_EXPORT(interp, SYNC_RT_ID) = {
    .name = "interp",
    .runtime = SYNC_RT_NAME,
    .summary = IV_SUMMARY,
    .knobs = iv_knobs,
    .nknobs = IV_NKNOBS,
    .validate = iv_validate,
    .setup = iv_setup,
    .thread_run = iv_thread_run,
    .check = iv_check,
    .teardown = iv_teardown,
    .tx_adaptive = WL_TX_ADAPTIVE,
    .auto_knob = 1 + IV_K_SWITCH,
    .describe_where = iv_describe_where,
    .describe_object = iv_describe_object,
};

#endif
