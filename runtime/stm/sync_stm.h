/*
 * runtime/stm/sync_stm.h - the inline fast paths of the page-based STM
 * (protocol: runtime/stm/DESIGN.md; slow paths: runtime/stm/stm.c).
 *
 * Object references are offsets into a segment, used through %gs: each thread's %gs
 * base points at its own segment, so one reference reads the thread's own copy.
 *
 *   read barrier   one 16-bit store of the transaction's read version into the
 *                  thread's read-marker array at %gs:2*(ref >> 4). No fence: the
 *                  segment changes only by its owner's hand.
 *   write barrier  test the STM_WB flag in the object's header; if set (first write of
 *                  this object in the transaction), the out-of-line slow path takes
 *                  write ownership, unshares the pages, saves a backup, clears the flag.
 *   atomic block   _setjmp at the outermost level (abort _longjmps back there and
 *                  the block runs again), begin, the block, commit. libc's _setjmp, not
 *                  __builtin_setjmp: clang does not treat the latter as returning
 *                  twice and reused the stack slots of locals live across it.
 */
#ifndef SYNC_STM_H
#define SYNC_STM_H

#include "runtime/common.h"

#include <setjmp.h>
#include <stdint.h>

#define SYNC_RT_NAME "stm"
#define SYNC_RT_ID stm

/* Header flag: "this object has not been written by the running transaction of the
 * thread whose segment this copy lives in". Set on every committed copy. */
#define STM_WB 1u

#define SYNC_OBJECT_HEADER struct sync_hdr _sync_hdr
#define SYNC_REF(T) T __seg_gs *
#define SYNC_NULL ((void __seg_gs *)0)
#define SYNC_REF_ID(r) ((uintptr_t)(r))

/* The hot per-thread state, first fields first. */
struct stm_tls {
    uint16_t rv;             /* read version of the running transaction (never 0) */
    int depth;               /* atomic-block nesting; 0 = not in a transaction */
    jmp_buf jb;              /* _setjmp buffer of the outermost block */
    jmp_buf nested_jb;       /* scratch buffer for nested blocks (never jumped to) */
};
extern __thread struct stm_tls stm_self;

int _stm_begin(const char *site);      /* starts (or restarts) the outermost block */
void _stm_commit(void);                /* commits; on conflict aborts and longjmps */
void _stm_write_slowpath(void __seg_gs *obj);
void __seg_gs *_stm_alloc(size_t size);
void _stm_free(void __seg_gs *obj);
void _stm_become_inevitable(void);

SYNC_INLINE void stm_read_barrier(const void __seg_gs *obj)
{
    uint16_t __seg_gs *markers = (uint16_t __seg_gs *)0;
    markers[(uintptr_t)obj >> 4] = stm_self.rv;
}

SYNC_INLINE void stm_write_barrier(void __seg_gs *obj)
{
    if (SYNC_UNLIKELY(((const struct sync_hdr __seg_gs *)obj)->flags & STM_WB))
        _stm_write_slowpath(obj);
}

/* The buffer the block's _setjmp fills: the real one only at the outermost level. */
SYNC_INLINE struct __jmp_buf_tag *_stm_jmpbuf(void)
{
    return SYNC_LIKELY(stm_self.depth == 0) ? stm_self.jb : stm_self.nested_jb;
}

SYNC_INLINE void _stm_start(const char *site)
{
    if (SYNC_LIKELY(stm_self.depth == 0))
        _stm_begin(site);
    else
        stm_self.depth++;
}

SYNC_INLINE int _stm_end(void)
{
    if (stm_self.depth == 1)
        _stm_commit();           /* sets depth to 0, or aborts and re-runs the block */
    else
        stm_self.depth--;
    return 0;
}

#define SYNC_READ(r) stm_read_barrier((const void __seg_gs *)(r))
#define SYNC_WRITE(r) stm_write_barrier((void __seg_gs *)(r))
/* The _setjmp call stands as one operand of a comparison with a constant that is the
 * whole controlling expression of an `if`, as C11 7.13.1.1 requires. Both its first
 * return and a return by _longjmp after an abort continue with _stm_start. */
#define SYNC_ATOMIC(site)                                                                 \
    for (int _sync_once = 1; _sync_once; _sync_once = _stm_end())                         \
        for (int _sync_go = 1; _sync_go; _sync_go = 0)                                    \
            if (_setjmp(_stm_jmpbuf()) < 0) {                                             \
            } else                                                                        \
                for (_stm_start(site); _sync_go; _sync_go = 0)
#define sync_alloc(size) _stm_alloc(size)
#define SYNC_FREE(r) _stm_free((void __seg_gs *)(r))
#define sync_tick() ((void)0)
#define sync_inevitable() _stm_become_inevitable()

#endif
