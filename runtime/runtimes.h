/*
 * runtime/runtimes.h - the one list of runtimes and the one list of workloads.
 *
 * Everything that enumerates them is generated from here: the runtime descriptors'
 * declarations (runtime/sync.h) and table (runtime/runtimes.c), the workload registry
 * (harness/registry.c), the micro-benchmark driver (harness/micro/micro.cc) and the
 * Makefile's copies of the workloads (it reads these two macros with awk: keep one
 * entry per line, in this form). Scripts ask `stmbench --list`.
 *
 * SYNC_RUNTIMES(X, a) expands X(a, name, build) per runtime, in the order reports
 * list them (a is passed through, for nesting one list in the other):
 *   name   the --runtime name. The runtime lives in runtime/<name>/: its inline fast
 *          paths in runtime/<name>/sync_<name>.h, its descriptor
 *          `const struct sync_runtime sync_runtime_<name>` in a .c file there. Code
 *          compiled for it gets -DSYNC_RT=<name> -DSYNC_RT_<NAME>.
 *   build  how its copies of the workloads are made:
 *          cc       workloads/<w>.c compiled by CC (with RT_CFLAGS_<name> from the
 *                   Makefile, where a runtime needs flags of its own); the
 *                   micro-benchmark shim harness/micro/shim.c too
 *          variant  workloads/<w>_<name>.c, a variant of each workload written for it
 *                   (locks: the workload's own fine-grained locks); no shim
 *          gnutm    workloads/<w>.c and the shim compiled by ITM_CC -fgnu-tm; optional:
 *                   its descriptor and copies are weak symbols, absent where gcc or
 *                   libitm is not (see the Makefile)
 *
 * SYNC_WORKLOADS(X, a) expands X(a, name) per workload, in the order reports list
 * them: workloads/<name>.c (and its variants) exporting `<name>__<runtime>`
 * descriptors (WORKLOAD_EXPORT, workloads/workload.h).
 *
 * Adding a runtime: its folder runtime/<name>/ and one line in SYNC_RUNTIMES.
 */
#ifndef SYNC_RUNTIMES_H
#define SYNC_RUNTIMES_H

#define SYNC_RUNTIMES(X, a) \
    X(a, seq, cc) \
    X(a, mutex, cc) \
    X(a, gil, cc) \
    X(a, locks, variant) \
    X(a, stm, cc) \
    X(a, htm, cc) \
    X(a, itm, gnutm)

#define SYNC_WORKLOADS(X, a) \
    X(a, bank) \
    X(a, rbtree) \
    X(a, hashmap) \
    X(a, interp) \
    X(a, compose)

#endif
