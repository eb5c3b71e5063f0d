/*
 * runtime/stm/sync_stm.h - the inline fast paths of the page-based STM
 * (protocol: runtime/stm/DESIGN.md; slow paths: the .c files beside it, listed in
 * stm_internal.h).
 *
 * Object references are offsets into a segment, used through %gs: each thread's %gs
 * base points at its own segment, so one reference reads the thread's own copy.
 *
 *   read barrier   one 16-bit store of the transaction's read version into the
 *                  thread's read-marker array at %gs:2*(ref >> 4), when the
 *                  transaction marks its reads (another thread was entered at its
 *                  begin). No fence: the segment changes only by its owner's hand.
 *   write barrier  test the STM_WB flag in the object's header; if set (first write of
 *                  this object in the transaction), the out-of-line slow path brings
 *                  its pages in, takes write ownership and saves a backup (neither in
 *                  a granule its segment alone holds: commit.c), clears the flag.
 *   atomic block   stm_setjmp at the outermost level (an abort stm_longjmps back there
 *                  and the block runs again), begin, the block, commit. A setjmp that
 *                  is a real returns_twice function, not __builtin_setjmp: clang does not
 *                  treat the latter as returning twice and reused the stack slots of
 *                  locals live across it. A read-only commit is inline.
 */
#ifndef SYNC_STM_H
#define SYNC_STM_H

#include "runtime/common.h"
#include "runtime/timeacct.h"

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

/* The restart point of a block: callee-saved registers, stack pointer, return address. */
struct stm_jmpbuf {
    void *regs[8];
};
/* Like _setjmp/_longjmp, a third of the work (setjmp.c). */
int stm_setjmp(struct stm_jmpbuf *jb) __attribute__((returns_twice));
void stm_longjmp(struct stm_jmpbuf *jb) __attribute__((noreturn));

/* The hot per-thread state, first fields first. */
struct stm_tls {
    uint16_t rv;             /* read version of the running transaction (never 0) */
    uint16_t mark;           /* the running transaction marks its reads: another thread
                              * was entered at its begin (DESIGN.md, "A thread alone") */
    int depth;               /* atomic-block nesting; 0 = not in a transaction */
    int dirty;               /* what the transaction did besides reading: 0 nothing, else
                              * STM_DIRTY_UNBACKED or STM_DIRTY_OTHER (below) */
    int aborts_in_row;       /* consecutive aborts of the current block */
    uint64_t ro_commits;     /* read-only commits, counted inline */
    struct stm_jmpbuf jb;        /* restart point of the outermost block */
    struct stm_jmpbuf nested_jb; /* scratch for nested blocks (never jumped to) */
};
extern __thread struct stm_tls stm_self;

/* stm_self.dirty's values. UNBACKED: every write was unbacked (the write barrier found
 * the granule ours, DESIGN.md "Unbacked writes") and nothing else happened, so the
 * commit can take the short private path (commit.c, commit_unbacked) on this one test.
 * OTHER: a write with a backup, an allocation, a free or inevitability; it dominates:
 * whatever came before, the commit takes the general path. So each of those stores
 * OTHER, a plain store with no read of the word (a read-modify-write there read back, a
 * few hundred instructions later, what the previous write's store wrote: issue 48), and
 * an unbacked write stores UNBACKED only over 0. A thread-local word no other thread
 * reads: plain accesses, no atomics. */
#define STM_DIRTY_UNBACKED 1
#define STM_DIRTY_OTHER 2

int _stm_begin(const char *site);      /* starts (or restarts) the outermost block */
void _stm_commit(void);                /* commits; on conflict aborts and longjmps */
void _stm_write_slowpath(void __seg_gs *obj);
void __seg_gs *_stm_alloc(size_t size);
void _stm_free(void __seg_gs *obj);
void _stm_become_inevitable(void);
/* Inside a transaction: moves its snapshot to the newest commit, validating what it
 * read against every commit it imports (a conflict aborts it), as a commit's
 * validation does. For a structure outside the shared heap that hands the transaction
 * a reference committed after its snapshot (interp's side queue: queue.h). */
void stm_refresh(void);
void _stm_left_open(const char *site) __attribute__((noreturn, cold));

/* A read marker, as a struct of its own: type-based alias analysis then knows that a
 * marker store cannot change stm_self.rv or stm_self.mark (a plain uint16_t store
 * could, as far as the compiler knows, %gs and %fs being the same address space to
 * it), so a loop of reads loads them once instead of once per object, and can test
 * `mark` outside the loop. A transaction that began with no other thread entered does
 * not mark (its commit aborts instead if anything was committed since its begin). */
struct stm_marker {
    uint16_t rv;
};
SYNC_INLINE void stm_read_barrier(const void __seg_gs *obj)
{
    struct stm_marker __seg_gs *markers = (struct stm_marker __seg_gs *)0;
    if (stm_self.mark)
        markers[(uintptr_t)obj >> 4].rv = stm_self.rv;
}

SYNC_INLINE void stm_write_barrier(void __seg_gs *obj)
{
    if (SYNC_UNLIKELY(((const struct sync_hdr __seg_gs *)obj)->flags & STM_WB))
        _stm_write_slowpath(obj);
}

/* The buffer the block's stm_setjmp fills: the real one only at the outermost level. */
SYNC_INLINE struct stm_jmpbuf *_stm_jmpbuf(void)
{
    return SYNC_LIKELY(stm_self.depth == 0) ? &stm_self.jb : &stm_self.nested_jb;
}

SYNC_INLINE void _stm_start(const char *site)
{
    if (SYNC_LIKELY(stm_self.depth == 0)) {
        _stm_begin(site);
    } else {
        /* A nested block runs inside the outermost one: at its stack pointer or deeper.
         * Above it, the outermost block's function has returned out of its block with
         * the transaction open, and an abort would jump into its dead frame. */
        void *sp;
        __asm__("mov %%rsp, %0" : "=r"(sp));
        if (SYNC_UNLIKELY((char *)sp > (char *)stm_self.jb.regs[6]))
            _stm_left_open(site);
        stm_self.depth++;
    }
}

SYNC_INLINE int _stm_end(void)
{
    if (stm_self.depth != 1) {
        stm_self.depth--;
    } else if (SYNC_LIKELY(!stm_self.dirty)) {
        /* read-only: it read one consistent snapshot, nothing to publish */
        SYNC_COMPILER_BARRIER();
        stm_self.depth = 0;
        stm_self.aborts_in_row = 0;
        stm_self.ro_commits++;
        TA_TX_END();
    } else {
        _stm_commit();           /* sets depth to 0, or aborts and re-runs the block */
    }
    return 0;
}

/* After the block's statement: the depth must be back where it was before the block. A
 * `break` out of the body skips the commit in the inner loop's increment and lands
 * here with the transaction still open: its writes would be silently lost. */
SYNC_INLINE int _stm_block_left(int depth_before, const char *site)
{
    if (SYNC_UNLIKELY(stm_self.depth != depth_before))
        _stm_left_open(site);
    return 0;
}

#define SYNC_READ(r) stm_read_barrier((const void __seg_gs *)(r))
#define SYNC_WRITE(r) stm_write_barrier((void __seg_gs *)(r))
/*
 * The stm_setjmp call stands as one operand of a comparison with a constant that is
 * the whole controlling expression of an `if` (where C11 7.13.1.1 allows setjmp). Its
 * first return and a return by stm_longjmp after an abort both go on to _stm_start,
 * which (re)initialises `_sync_go`. The commit, which may abort and jump back, runs in
 * the inner loop's increment: no variable of this macro is written between the
 * setjmp and a jump back (an earlier shape wrote one, and gcc, which kept it in
 * memory, then skipped the re-run: a lost update). `_sync_d0` is set before the setjmp
 * and only read after it.
 *
 * Rule: leave a block only by reaching its end. `break` out of the body is caught when
 * the outer loop's increment finds the transaction still open; `return` or `goto` out
 * of it is caught when the thread leaves the runtime (the transaction is still open
 * then); both abort the process naming the block's site.
 */
#define SYNC_ATOMIC(site)                                                                 \
    for (int _sync_once = 1, _sync_d0 = stm_self.depth; _sync_once;                       \
         _sync_once = _stm_block_left(_sync_d0, site))                                    \
        if (stm_setjmp(_stm_jmpbuf()) < 0) {                                              \
        } else                                                                            \
            for (int _sync_go = (_stm_start(site), 1); _sync_go; _sync_go = _stm_end())
#define sync_alloc(size) _stm_alloc(size)
#define SYNC_FREE(r) _stm_free((void __seg_gs *)(r))
#define sync_tick() ((void)0)
#define sync_inevitable() _stm_become_inevitable()

#endif
