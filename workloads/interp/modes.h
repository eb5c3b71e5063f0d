/*
 * workloads/interp/modes.h - the interpreter's memory modes (--memory), one line each,
 * in the order of enum iv_memory: X(NAME, name). The enum and iv_memory_names (asm.h,
 * asm.c), the VM's per-mode loops and the dispatch of every hook (memory_dispatch.h)
 * are made from this list; each mode's code is workloads/interp/mem_<name>.h, which
 * memory_dispatch.h includes. docs/interp.md, "Adding a memory mode".
 */
#ifndef IV_MODES_H
#define IV_MODES_H

#define IV_MEMORY_MODES(X)                                                              \
    X(RAW, raw)                                                                         \
    X(TRACING, tracing)                                                                 \
    X(REFCOUNT, refcount)                                                               \
    X(BIASED, biased)                                                                   \
    X(BUFFERED, buffered)

#endif
