/*
 * workloads/interp/loop_raw.h - the raw mode's loop (iv_run) and its slice (iv_block):
 * ints are words, the declared objects are the only ones, nothing is allocated. Its
 * code and its place in .text are as they were measured before the object model
 * existed (the object model's functions go to a section of their own: IV_OBJ_TEXT).
 *
 * Invariants (with state.h's):
 *  - A slice is one SYNC_ATOMIC("interp.slice") block of --switch-interval bytecodes,
 *    extended to the ATOMIC_END when the boundary falls inside an atomic section; the
 *    thread loop passes sync_tick() between slices. So a GIL is released only between
 *    slices, never inside `with atomic:`, and under stm each slice is one transaction.
 *  - A slice also ends at HALT: runs are counted at slice boundaries, and after the
 *    stop request a thread finishes the run in progress, so the final heap is the
 *    effect of exactly `runs` complete runs per thread (what `.expect` is evaluated on).
 */
#ifndef IV_LOOP_RAW_H
#define IV_LOOP_RAW_H

#include "workloads/interp/where.h"

#define IV_CELL(g) ((iv_cell_ref)th->obj[g])
#define IV_LIST(g) ((iv_list_ref)th->obj[g])
#define IV_DICT(g) ((iv_dict_ref)th->obj[g])

/* -DIV_LAYOUT_PAD=N puts N bytes of padding in .text before this file's functions:
 * scripts/dispatch-layout.sh moves the interpreter's loop with it, to measure how much
 * its speed depends on where the link places it. Normal builds leave it out. */
#ifdef IV_LAYOUT_PAD
__asm__(".text\n.p2align 6\n.skip " IV_STR(IV_LAYOUT_PAD) ", 0x90\n");
#endif

/* ---- dispatch ----
 * iv_run dispatches with one indirect jump per handler (labels as values, the GNU C
 * extension gcc and clang share, as CPython's ceval does): each handler ends with its
 * own fetch and jump, so the branch predictor learns each bytecode's successor at its
 * own jump. A single `switch` funnels every bytecode through one indirect jump; on the
 * AMD EPYC VMs this project runs on, that loop's speed moved a lot with where the link
 * placed it (results/dispatch-layout-20261206), which no A/B comparison of
 * two builds could tell from a real change. -DIV_SWITCH_DISPATCH builds the switch,
 * for that comparison. The itm copy is always the switch: gcc's TM pass makes no
 * transactional clone of a function with computed gotos, so a block calling such an
 * iv_run ran serial-irrevocable, every slice alone (tests/test_dispatch.sh checks the
 * clone is there).
 * Invariant: every instruction's op is < IV_NOPS (the assembler emits no other;
 * tests/fuzz/fuzz_asm.c checks it), so the table needs no bounds check. */
#if defined(IV_SWITCH_DISPATCH) || defined(SYNC_RT_ITM)
#define IV_DISPATCH_TABLE ((void)0)
#define IV_DISPATCH(op) switch (op)
#define IV_CASE(op) case op:
#define IV_DEFAULT default:
#define IV_NEXT continue
#else
/* in IV_OPS order; every op after IV_HALT (the object model's) is not raw's: HALT */
#define IV_DISPATCH_TABLE                                                               \
    static const void *const iv_tbl[] = {                                              \
        &&iv_op_IV_NOP, &&iv_op_IV_PUSH, &&iv_op_IV_POP, &&iv_op_IV_DUP, &&iv_op_IV_SWAP, \
        &&iv_op_IV_LOAD_GLOBAL, &&iv_op_IV_STORE_GLOBAL, &&iv_op_IV_LOAD_LOCAL,         \
        &&iv_op_IV_STORE_LOCAL, &&iv_op_IV_ADD, &&iv_op_IV_SUB, &&iv_op_IV_MUL,         \
        &&iv_op_IV_DIV, &&iv_op_IV_MOD, &&iv_op_IV_LT, &&iv_op_IV_GT, &&iv_op_IV_EQ,    \
        &&iv_op_IV_NOT, &&iv_op_IV_JUMP, &&iv_op_IV_JUMP_IF_FALSE,                      \
        &&iv_op_IV_JUMP_IF_TRUE, &&iv_op_IV_CALL, &&iv_op_IV_RET,                       \
        &&iv_op_IV_LIST_APPEND, &&iv_op_IV_LIST_GET, &&iv_op_IV_LIST_SET,               \
        &&iv_op_IV_LIST_LEN, &&iv_op_IV_LIST_CLEAR, &&iv_op_IV_DICT_GET,                \
        &&iv_op_IV_DICT_SET, &&iv_op_IV_DICT_LEN, &&iv_op_IV_THREAD_ID,                 \
        &&iv_op_IV_ATOMIC_BEGIN, &&iv_op_IV_ATOMIC_END, &&iv_op_IV_HALT,                \
        [IV_HALT + 1 ... IV_NOPS - 1] = &&iv_op_default,                                \
    };                                                                                  \
    _Static_assert(sizeof iv_tbl / sizeof iv_tbl[0] == IV_NOPS &&                       \
                   IV_HALT == 34, "iv_tbl: one entry per op, in enum iv_op's order")
#define IV_DISPATCH(op) goto *iv_tbl[op];
#define IV_CASE(op) iv_op_##op:
#define IV_DEFAULT iv_op_default:
/* Compilers merge the handlers' identical fetches into one block ending in one jump
 * (clang sinks them, gcc tail-merges them); an empty asm that differs per line keeps
 * them apart. tests/test_dispatch.sh checks that each build has one jump per handler. */
#define IV_NO_MERGE() __asm__ volatile("# iv_next " IV_STR(__LINE__))
/* the loop head's budget check and fetch, at the end of each handler; an exhausted
 * budget goes round the loop head, which decides */
#define IV_NEXT                                                                         \
    if (SYNC_LIKELY(left > 0)) {                                                        \
        left--;                                                                         \
        in = &code[pc++];                                                               \
        g = in->a;                                                                      \
        IV_NO_MERGE();                                                                  \
        goto *iv_tbl[in->op];                                                           \
    } else                                                                              \
        continue
#endif

/* Runs one slice on vm: `budget` bytecodes, more to finish an atomic section, less at
 * HALT. Returns the bytecodes executed. Kept out of line: the slice's block calls
 * _setjmp under stm, and a compiler keeps fewer values in registers in a function
 * that contains a call returning twice. */
static SYNC_NOINLINE uint64_t iv_run(const struct iv_ctx *cx, struct iv_thread *th, struct iv_vm *vm,
                       int64_t budget)
{
    const struct iv_insn *code = cx->prog->code;
    int64_t *vals = vm->vals;
    struct iv_frame *frames = vm->frames;
    /* registers as full-width integers: no sign extension on every stack index */
    intptr_t pc = vm->pc, sp = vm->sp, base = vm->base, nframes = vm->nframes;
    intptr_t adepth = vm->adepth;
    int64_t left = budget;
    vm->in_run = 1;
    const struct iv_insn *in;
    int64_t b;
    int32_t g;
    IV_DISPATCH_TABLE;
    for (;;) {
        if (SYNC_UNLIKELY(left <= 0)) {
            if (adepth == 0)
                break;
            if (left <= -IV_ATOMIC_CAP) {            /* never reaches its ATOMIC_END */
                vm->stuck = 1;
                iv_fault(vm, IV_FAULT_STUCK, (int32_t)pc);
                IV_ATOMIC_EXIT(th);
                break;
            }
        }
        left--;
        in = &code[pc++];
        g = in->a;
        IV_DISPATCH(in->op) {
        IV_CASE(IV_NOP)
            IV_NEXT;
        IV_CASE(IV_PUSH)
            vals[sp++] = in->v;
            IV_NEXT;
        IV_CASE(IV_POP)
            sp--;
            IV_NEXT;
        IV_CASE(IV_DUP)
            vals[sp] = vals[sp - 1];
            sp++;
            IV_NEXT;
        IV_CASE(IV_SWAP)
            b = vals[sp - 1];
            vals[sp - 1] = vals[sp - 2];
            vals[sp - 2] = b;
            IV_NEXT;
        IV_CASE(IV_LOAD_GLOBAL) {
            iv_cell_ref c = IV_CELL(g);
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            SYNC_READ(c);
            vals[sp++] = c->value;
            IV_UNLOCK(th, g, adepth);
            IV_NEXT;
        }
        IV_CASE(IV_STORE_GLOBAL) {
            iv_cell_ref c = IV_CELL(g);
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            SYNC_WRITE(c);
            c->value = vals[--sp];
            IV_UNLOCK(th, g, adepth);
            IV_NEXT;
        }
        IV_CASE(IV_LOAD_LOCAL)
            vals[sp++] = vals[base + g];
            IV_NEXT;
        IV_CASE(IV_STORE_LOCAL)
            vals[base + g] = vals[--sp];
            IV_NEXT;
        IV_CASE(IV_ADD) b = vals[--sp]; vals[sp - 1] = iv_add(vals[sp - 1], b); IV_NEXT;
        IV_CASE(IV_SUB) b = vals[--sp]; vals[sp - 1] = iv_sub(vals[sp - 1], b); IV_NEXT;
        IV_CASE(IV_MUL) b = vals[--sp]; vals[sp - 1] = iv_mul(vals[sp - 1], b); IV_NEXT;
        IV_CASE(IV_DIV) b = vals[--sp]; vals[sp - 1] = iv_div(vals[sp - 1], b); IV_NEXT;
        IV_CASE(IV_MOD) b = vals[--sp]; vals[sp - 1] = iv_mod(vals[sp - 1], b); IV_NEXT;
        IV_CASE(IV_LT) b = vals[--sp]; vals[sp - 1] = vals[sp - 1] < b; IV_NEXT;
        IV_CASE(IV_GT) b = vals[--sp]; vals[sp - 1] = vals[sp - 1] > b; IV_NEXT;
        IV_CASE(IV_EQ) b = vals[--sp]; vals[sp - 1] = vals[sp - 1] == b; IV_NEXT;
        IV_CASE(IV_NOT) vals[sp - 1] = !vals[sp - 1]; IV_NEXT;
        IV_CASE(IV_JUMP)
            pc = g;
            IV_NEXT;
        IV_CASE(IV_JUMP_IF_FALSE)
            if (!vals[--sp])
                pc = g;
            IV_NEXT;
        IV_CASE(IV_JUMP_IF_TRUE)
            if (vals[--sp])
                pc = g;
            IV_NEXT;
        IV_CASE(IV_CALL) {
            frames[nframes].ret_pc = (int32_t)pc;
            frames[nframes].base = (int32_t)base;
            nframes++;
            base = sp - in->b;
            for (intptr_t i = base + in->b; i < base + (intptr_t)in->v; i++)
                vals[i] = 0;
            sp = base + (intptr_t)in->v;
            pc = g;
            IV_NEXT;
        }
        IV_CASE(IV_RET)
            b = vals[sp - 1];
            sp = base;
            nframes--;
            base = frames[nframes].base;
            pc = frames[nframes].ret_pc;
            vals[sp++] = b;
            IV_NEXT;
        IV_CASE(IV_LIST_APPEND)
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            if (iv_list_append(IV_LIST(g), vals[--sp]) < 0)
                iv_fault(vm, IV_FAULT_LIST_FULL, (int32_t)pc - 1);
            IV_UNLOCK(th, g, adepth);
            IV_NEXT;
        IV_CASE(IV_LIST_GET)
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            vals[sp - 1] = iv_list_get(IV_LIST(g), vals[sp - 1]);
            IV_UNLOCK(th, g, adepth);
            IV_NEXT;
        IV_CASE(IV_LIST_SET)
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            iv_list_set(IV_LIST(g), vals[sp - 2], vals[sp - 1]);
            IV_UNLOCK(th, g, adepth);
            sp -= 2;
            IV_NEXT;
        IV_CASE(IV_LIST_LEN)
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            vals[sp++] = iv_list_len(IV_LIST(g));
            IV_UNLOCK(th, g, adepth);
            IV_NEXT;
        IV_CASE(IV_LIST_CLEAR)
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            iv_list_clear(IV_LIST(g));
            IV_UNLOCK(th, g, adepth);
            IV_NEXT;
        IV_CASE(IV_DICT_GET)
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            vals[sp - 1] = iv_dict_get(IV_DICT(g), vals[sp - 1]);
            IV_UNLOCK(th, g, adepth);
            IV_NEXT;
        IV_CASE(IV_DICT_SET)
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            if (iv_dict_set(IV_DICT(g), vals[sp - 2], vals[sp - 1]) < 0)
                iv_fault(vm, IV_FAULT_DICT_FULL, (int32_t)pc - 1);
            IV_UNLOCK(th, g, adepth);
            sp -= 2;
            IV_NEXT;
        IV_CASE(IV_DICT_LEN)
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            vals[sp++] = iv_dict_len(IV_DICT(g));
            IV_UNLOCK(th, g, adepth);
            IV_NEXT;
        IV_CASE(IV_THREAD_ID)
            vals[sp++] = th->tid;
            IV_NEXT;
        IV_CASE(IV_ATOMIC_BEGIN)
            if (adepth++ == 0)
                IV_ATOMIC_ENTER(th, cx->prog->atomic_set[pc - 1]);
            IV_NEXT;
        IV_CASE(IV_ATOMIC_END)
            if (--adepth == 0)
                IV_ATOMIC_EXIT(th);
            IV_NEXT;
        IV_CASE(IV_HALT)
        IV_DEFAULT
            if (adepth > 0)                  /* HALT in a function called in a section */
                IV_ATOMIC_EXIT(th);
            vm->runs++;
            iv_vm_reset(vm, cx->prog->main_nlocals);
            return (uint64_t)(budget - left);
        }
    }
    vm->pc = (int32_t)pc;
    vm->sp = (int32_t)sp;
    vm->base = (int32_t)base;
    vm->nframes = (int32_t)nframes;
    vm->adepth = (int32_t)adepth;
    return (uint64_t)(budget - left);
}

/* One slice as one atomic block (see the invariants above). Its budget is the thread's
 * transaction length (workload.h: --switch-interval N, or adaptive with `auto`); the
 * slice may run longer to reach an ATOMIC_END (iv_run), so wherever the length lands,
 * a slice boundary never falls inside an atomic section. */
static uint64_t iv_block(struct iv_ctx *cx, struct wl_thread *t)
{
    struct iv_thread *th = t->priv;
    int64_t budget = t->tx_len;
    SYNC_ATOMIC("interp.slice") {
        struct iv_vm *w = &th->vm[th->cur ^ 1];
        iv_vm_copy(w, &th->vm[th->cur]);
        th->last_n = iv_run(cx, th, w, budget);
    }
    WL_TXLEN_AFTER(t, th->last_n);
    th->cur ^= 1;
    IV_RESUME(th);
    return th->vm[th->cur].stuck ? 0 : th->last_n;
}

#endif
