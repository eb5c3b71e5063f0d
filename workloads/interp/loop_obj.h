/*
 * workloads/interp/loop_obj.h - the object model's loop (every mode but raw): values,
 * boxes, lists and dicts made at run time, references counted or traced as the memory
 * mode says (its hooks, memory.h). One copy of the loop per mode (iv_slice_obj_<name>),
 * the mode a constant in each; the slice's block around it (iv_block_obj) is one
 * function for all modes and dispatches its few per-slice hooks at run time.
 *
 * Global names. A shared `.global int` is found through the module dict (cx->module:
 * the name's hash -> its cell, as PyPy's module dicts keep cells) at every
 * LOAD_GLOBAL and STORE_GLOBAL, with an inline cache per instruction and thread
 * (th->gcache: the cell and the dict's keys version it was found at); a hit reads
 * the dict's header, a miss (a new version) probes. The dict is read by every thread
 * and written by none while a program runs (names are declared), so reading it
 * never conflicts; the cells hold the values, as before. `.per_thread` names are
 * the thread's own (as thread-locals) and need no lookup.
 *
 * Invariants: those of state.h and loop_raw.h (a slice is one block, ends at HALT), and
 * the memory mode's (mem_<name>.h). Under locks, a reference read out of a container
 * or a cell is counted (INCREF) before the container's lock is released.
 */
#ifndef IV_LOOP_OBJ_H
#define IV_LOOP_OBJ_H

#include "workloads/interp/alloc.h"

/* ---- the loop ---- */

#define IV_TYPE_FAULT() iv_fault(vm, IV_FAULT_TYPE, (int32_t)pc - 1)

/* The int of w, or a type fault (and 0). */
static inline int64_t iv_int_of(struct iv_vm *vm, iv_val w, intptr_t pc)
{
    if (SYNC_LIKELY(iv_vtype(w) == IV_T_INT))
        return (int64_t)w >> 4;
    if (iv_vtype(w) == IV_T_BOX) {
        iv_box_ref b = (iv_box_ref)iv_vref(w);
        SYNC_READ(b);
        return b->value;
    }
    IV_TYPE_FAULT();
    return 0;
}

/* The cell of int global g, found through the module dict ("Global names" above). */
static inline iv_cell_ref iv_lookup_cell(const struct iv_ctx *cx, struct iv_thread *th,
                                         intptr_t at, int32_t g)
{
    if (cx->prog->globals[g].per_thread)
        return (iv_cell_ref)th->obj[g];
    iv_odict_ref md = cx->module;
    SYNC_READ(md);
    struct iv_gcache *gc = &th->gcache[at];
    if (SYNC_LIKELY(gc->kver == md->kver))
        return (iv_cell_ref)gc->cell;
    int64_t i = iv_odict_find(md, cx->gkey[g]);   /* every declared name is there */
    gc->cell = (iv_ref)(uintptr_t)md->slots->e[i].val;
    gc->kver = md->kver;
    return (iv_cell_ref)gc->cell;
}

#if IV_COUNT_ATOMIC
/* locks: reads an int global's cell without its lock, as CPython 3.14's LOAD_GLOBAL
 * reads the module dict (_Py_TryIncrefCompare): *r is the value with a reference
 * counted, or false when the caller must take the lock (the cell is locked, it moved,
 * the value is a container, or the mode cannot count it here).
 *
 * A seqlock on the cell's lock word and version: every store of the value is made
 * under the lock, followed by a version move, before the unlock. The reader loads
 * lock (free), version, value, counts the value (try_incref), then lock (free) and
 * version (unchanged). If the value it read was stored by a holder H, its acquire
 * load synchronises with that store, so its second load of the lock sees H's lock or
 * a later word: free means H unlocked, after its version moves, so a value that H
 * (in an atomic section) later replaced shows as a new version. So the value read
 * was the cell's value with the lock free: a section's intermediate stores are never
 * seen, as the locks rule says (docs/interp.md). All loads acquire (each orders the
 * next one after it). A box's memory stays a box with the same owner (freelist.h),
 * so try_incref on one that died is safe and fails; a list or dict is read under the
 * lock. */
static inline __attribute__((always_inline)) bool
iv_cell_read(int mode, const struct iv_ctx *cx, struct iv_thread *th, struct iv_vm *vm,
             iv_cell_ref c, iv_val *r)
{
    if (atomic_load_explicit(&c->lock.v, memory_order_acquire) != 0)
        return false;
    uint64_t ver = __atomic_load_n(&c->ver, __ATOMIC_ACQUIRE);
    iv_val w = (iv_val)__atomic_load_n(&c->value, __ATOMIC_ACQUIRE);
#ifndef IV_TEST_CELL_READ
#define IV_TEST_CELL_READ(c, w) ((void)0) /* tests/test_interp_brc.c: other threads' steps
                                           * between the value's load and its count */
#endif
    IV_TEST_CELL_READ(c, w);
    if (iv_vtype(w) != IV_T_INT) {
        if (iv_vtype(w) != IV_T_BOX || !iv_mem_try_incref(mode, cx, th, w))
            return false;
    }
    if (SYNC_UNLIKELY(atomic_load_explicit(&c->lock.v, memory_order_acquire) != 0 ||
                      __atomic_load_n(&c->ver, __ATOMIC_ACQUIRE) != ver)) {
        iv_mem_decref(mode, cx, th, vm, w);   /* gives it back */
        return false;
    }
    *r = w;
    return true;
}
#endif

#if IV_COUNT_ATOMIC
/* locks: a container's change, made under its lock, moves its version before the
 * unlock (release: as the stores it follows) for the readers below. */
#define IV_WROTE(x)                                                                     \
    do {                                                                                \
        iv_oref o_ = iv_vref(x);                                                        \
        __atomic_store_n(&o_->ver, o_->ver + 1, __ATOMIC_RELEASE);                      \
    } while (0)

/* Checks a read without the lock (iv_obj_read, iv_obj_len): the lock free and the
 * version what it was. */
static inline __attribute__((always_inline)) bool iv_obj_still(iv_oref o, uint64_t ver)
{
    return atomic_load_explicit(&o->lock.v, memory_order_acquire) == 0 &&
           __atomic_load_n(&o->ver, __ATOMIC_ACQUIRE) == ver;
}

/* locks: GETITEM or CONTAINS (op) on list or dict c without its lock, as CPython
 * 3.14 reads lists and dicts (_Py_dict_lookup_threadsafe, _Py_TryXGetRef): *r is the
 * result with its reference counted, or false when the caller must take the lock
 * (the container is locked or changed meanwhile, the element is a container, or the
 * mode cannot count it here). The same seqlock as iv_cell_read: every change of a
 * container is made under its lock, its reader-visible stores release (list.h,
 * dict.h: IV_STORE_REL), its version moved before the unlock (IV_WROTE). Storage a
 * change replaces is kept until the container is freed (value.h: iv_retired), and a
 * reader holds the container (its stack, or the declaration), so no load below
 * reads freed memory; a list's length is loaded before its items (a new length comes
 * with the items it fits in), a dict's cap before its slots (likewise). */
static inline __attribute__((always_inline)) bool
iv_obj_read(int mode, const struct iv_ctx *cx, struct iv_thread *th, struct iv_vm *vm, int op,
            iv_val c, int64_t key, iv_val *r)
{
    iv_oref o = iv_vref(c);
    if (atomic_load_explicit(&o->lock.v, memory_order_acquire) != 0)
        return false;
    uint64_t ver = __atomic_load_n(&o->ver, __ATOMIC_ACQUIRE);
    iv_val w = 0;
    if (iv_vtype(c) == IV_T_LIST) {
        iv_olist_ref l = (iv_olist_ref)o;
        int64_t n = __atomic_load_n(&l->len, __ATOMIC_ACQUIRE);
        if (op == IV_CONTAINS) {
            w = iv_small((uint64_t)key < (uint64_t)n);
        } else if ((uint64_t)key < (uint64_t)n) {
            iv_items_ref it = __atomic_load_n(&l->items, __ATOMIC_ACQUIRE);
            w = (iv_val)__atomic_load_n(&it->v[key], __ATOMIC_ACQUIRE);
        }
    } else {
        iv_odict_ref d = (iv_odict_ref)o;
        int64_t cap = __atomic_load_n(&d->cap, __ATOMIC_ACQUIRE);
        iv_slots_ref s = __atomic_load_n(&d->slots, __ATOMIC_ACQUIRE);
        int64_t i = (int64_t)(iv_hash(key) & (uint64_t)(cap - 1)), found = -1;
        /* at most cap probes: a torn view cannot loop (the check below throws it away) */
        for (int64_t k = 0; k < cap; k++, i = (i + 1) & (cap - 1)) {
            if (!__atomic_load_n(&s->e[i].used, __ATOMIC_ACQUIRE))
                break;
            if (__atomic_load_n(&s->e[i].key, __ATOMIC_RELAXED) == key) {
                found = i;
                break;
            }
        }
        if (op == IV_CONTAINS)
            w = iv_small(found >= 0);
        else if (found >= 0)
            w = (iv_val)__atomic_load_n(&s->e[found].val, __ATOMIC_ACQUIRE);
    }
    if (iv_vtype(w) != IV_T_INT &&
        (iv_vtype(w) != IV_T_BOX || !iv_mem_try_incref(mode, cx, th, w)))
        return false;
    if (SYNC_UNLIKELY(!iv_obj_still(o, ver))) {
        if (iv_vtype(w) != IV_T_INT)
            iv_mem_decref(mode, cx, th, vm, w);   /* gives it back */
        return false;
    }
    *r = w;
    return true;
}

/* locks: LEN of list or dict c without its lock (as iv_obj_read). */
static inline __attribute__((always_inline)) bool iv_obj_len(iv_val c, int64_t *n)
{
    iv_oref o = iv_vref(c);
    if (atomic_load_explicit(&o->lock.v, memory_order_acquire) != 0)
        return false;
    uint64_t ver = __atomic_load_n(&o->ver, __ATOMIC_ACQUIRE);
    *n = iv_vtype(c) == IV_T_LIST ? __atomic_load_n(&((iv_olist_ref)o)->len, __ATOMIC_ACQUIRE)
                                  : __atomic_load_n(&((iv_odict_ref)o)->count, __ATOMIC_ACQUIRE);
    return iv_obj_still(o, ver);
}
#else
#define IV_WROTE(x) ((void)0)
#endif

/* The list or dict a global names (its object: the declared container). */
#define IV_GOBJ(g) (th->gobj[g])

/* QUEUE_PUT and QUEUE_GET on declared queue g (queue.h), out of the loop: the loop's
 * code (and its registers) stays as it is for programs without queues. The put takes
 * v's reference (-1: the queue is full, v still the caller's); the get gives one. */
static IV_OBJ_TEXT SYNC_NOINLINE int iv_queue_put_op(struct iv_thread *th, int32_t g,
                                                     intptr_t adepth, iv_val v)
{
    iv_oqueue_ref q = (iv_oqueue_ref)iv_vref(IV_GOBJ(g));
#if IV_QUEUE_SIDE
    (void)adepth;
    SYNC_READ(q);
    return iv_txq_put(&th->txq, q->side, v);
#else
    int k = IV_LOCK_OBJ(th, g, IV_GOBJ(g), adepth, 0);
    int full = iv_oqueue_put(q, v);
    IV_UNLOCK_OBJ(th, g, IV_GOBJ(g), adepth, k);
    return full;
#endif
}

static IV_OBJ_TEXT SYNC_NOINLINE iv_val iv_queue_get_op(struct iv_thread *th, int32_t g,
                                                        intptr_t adepth)
{
    iv_oqueue_ref q = (iv_oqueue_ref)iv_vref(IV_GOBJ(g));
#if IV_QUEUE_SIDE
    (void)adepth;
    SYNC_READ(q);
    return iv_txq_get(&th->txq, q->side);
#else
    int k = IV_LOCK_OBJ(th, g, IV_GOBJ(g), adepth, 0);
    iv_val r = iv_oqueue_get(q);
    IV_UNLOCK_OBJ(th, g, IV_GOBJ(g), adepth, k);
    return r;
#endif
}

#if IV_SDICT_ON
/* A stmdict's get (or CONTAINS), set and len (sdict.h), out of the loop likewise. */
static IV_OBJ_TEXT SYNC_NOINLINE iv_val iv_sdict_get_op(iv_val c, int64_t key, bool contains)
{
    bool present;
    iv_val r = iv_sdict_get((iv_sdict_ref)iv_vref(c), key, &present);
    return contains ? iv_small(present) : r;
}

static IV_OBJ_TEXT SYNC_NOINLINE iv_val iv_sdict_set_op(iv_val c, int64_t key, iv_val w, int *full)
{
    return iv_sdict_set((iv_sdict_ref)iv_vref(c), key, w, full);
}

static IV_OBJ_TEXT SYNC_NOINLINE int64_t iv_sdict_len_op(iv_val c)
{
    return iv_sdict_len((iv_sdict_ref)iv_vref(c));
}
#else
#define iv_sdict_get_op(c, key, contains) ((void)(c), (void)(key), (void)(contains), (iv_val)0)
#define iv_sdict_set_op(c, key, w, full) ((void)(c), (void)(key), (void)(w), *(full) = 0, (iv_val)0)
#define iv_sdict_len_op(c) ((void)(c), (int64_t)0)
#endif

/* The object model's loop: one slice on vm, as iv_run (loop_raw.h) with values, counts
 * and the object model's bytecodes. `mode` is a constant in each copy (below), so
 * every hook call is direct and inlined. */
static inline __attribute__((always_inline)) uint64_t
iv_run_obj_(const struct iv_ctx *cx, struct iv_thread *th, struct iv_vm *vm, int64_t budget,
            const int mode)
{
    const struct iv_insn *code = cx->prog->code;
    int64_t *vals = vm->vals;
    struct iv_frame *frames = vm->frames;
    intptr_t pc = vm->pc, sp = vm->sp, base = vm->base, nframes = vm->nframes;
    intptr_t adepth = vm->adepth;
    int64_t left = budget;
    vm->in_run = 1;
#define INCREF(w) iv_mem_incref(mode, cx, th, (w))
#define DECREF(w) iv_mem_decref(mode, cx, th, vm, (w))
#define MKINT(v) iv_make_int(mode, cx, th, (v))
    for (;;) {
        if (SYNC_UNLIKELY(left <= 0)) {
            if (adepth == 0)
                break;
            if (left <= -IV_ATOMIC_CAP) {
                vm->stuck = 1;
                iv_fault(vm, IV_FAULT_STUCK, (int32_t)pc);
                IV_ATOMIC_EXIT(th);
                break;
            }
        }
        left--;
        const struct iv_insn *in = &code[pc++];
        iv_val a, b, r;
        int32_t g = in->a;
        switch (in->op) {
        case IV_NOP:
            break;
        case IV_PUSH:
            r = (iv_val)cx->konst[pc - 1];
            INCREF(r);
            vals[sp++] = (int64_t)r;
            break;
        case IV_POP:
            DECREF((iv_val)vals[--sp]);
            break;
        case IV_DUP:
            INCREF((iv_val)vals[sp - 1]);
            vals[sp] = vals[sp - 1];
            sp++;
            break;
        case IV_SWAP: {
            int64_t t = vals[sp - 1];
            vals[sp - 1] = vals[sp - 2];
            vals[sp - 2] = t;
            break;
        }
        case IV_LOAD_GLOBAL:
            IV_WHERE(g);
            if (cx->prog->globals[g].kind != IV_KIND_INT) {
                r = IV_GOBJ(g);                 /* held by its declaration: no lock */
                INCREF(r);
            } else {
                iv_cell_ref c = iv_lookup_cell(cx, th, pc - 1, g);
#if IV_COUNT_ATOMIC
                if (!iv_cell_read(mode, cx, th, vm, c, &r))
#endif
                {
                    IV_LOCK(th, g, adepth);
                    SYNC_READ(c);
                    r = (iv_val)c->value;
                    INCREF(r);                  /* under the cell's lock (mem_refcount.h) */
                    IV_UNLOCK(th, g, adepth);
                }
            }
            vals[sp++] = (int64_t)r;
            break;
        case IV_STORE_GLOBAL: {
            iv_cell_ref c = iv_lookup_cell(cx, th, pc - 1, g);
            IV_WHERE(g);
            IV_LOCK(th, g, adepth);
            SYNC_WRITE(c);
            r = (iv_val)c->value;
#if IV_COUNT_ATOMIC
            /* release: a reader without the lock that loads the value (acquire) sees
             * the object it names made; the version moves after it, before the
             * unlock (iv_cell_read) */
            __atomic_store_n(&c->value, vals[--sp], __ATOMIC_RELEASE);
            __atomic_store_n(&c->ver, c->ver + 1, __ATOMIC_RELEASE);
#else
            c->value = vals[--sp];
#endif
            IV_UNLOCK(th, g, adepth);
            DECREF(r);
            break;
        }
        case IV_LOAD_LOCAL:
            INCREF((iv_val)vals[base + g]);
            vals[sp++] = vals[base + g];
            break;
        case IV_STORE_LOCAL:
            r = (iv_val)vals[base + g];
            vals[base + g] = vals[--sp];
            DECREF(r);
            break;
        case IV_ADD: case IV_SUB: case IV_MUL: case IV_DIV: case IV_MOD: case IV_LT:
        case IV_GT: {
            b = (iv_val)vals[--sp];
            a = (iv_val)vals[sp - 1];
            int64_t x = iv_int_of(vm, a, pc), y = iv_int_of(vm, b, pc), z;
            switch (in->op) {
            case IV_ADD: z = iv_add(x, y); break;
            case IV_SUB: z = iv_sub(x, y); break;
            case IV_MUL: z = iv_mul(x, y); break;
            case IV_DIV: z = iv_div(x, y); break;
            case IV_MOD: z = iv_mod(x, y); break;
            case IV_LT: z = x < y; break;
            default: z = x > y; break;
            }
            vals[sp - 1] = (int64_t)MKINT(z);
            DECREF(a);
            DECREF(b);
            break;
        }
        case IV_EQ: {
            b = (iv_val)vals[--sp];
            a = (iv_val)vals[sp - 1];
            bool ints = iv_vtype(a) <= IV_T_BOX && iv_vtype(b) <= IV_T_BOX;
            vals[sp - 1] = (int64_t)iv_small(ints ? iv_int_of(vm, a, pc) == iv_int_of(vm, b, pc)
                                                  : a == b);
            DECREF(a);
            DECREF(b);
            break;
        }
        case IV_NOT:
            a = (iv_val)vals[sp - 1];
            vals[sp - 1] = (int64_t)iv_small(!iv_truth(a));
            DECREF(a);
            break;
        case IV_JUMP:
            pc = g;
            break;
        case IV_JUMP_IF_FALSE: case IV_JUMP_IF_TRUE:
            a = (iv_val)vals[--sp];
            if (iv_truth(a) == (in->op == IV_JUMP_IF_TRUE))
                pc = g;
            DECREF(a);
            break;
        case IV_CALL:
            frames[nframes].ret_pc = (int32_t)pc;
            frames[nframes].base = (int32_t)base;
            nframes++;
            base = sp - in->b;
            for (intptr_t i = base + in->b; i < base + (intptr_t)in->v; i++)
                vals[i] = 0;
            sp = base + (intptr_t)in->v;
            pc = g;
            break;
        case IV_RET:
            r = (iv_val)vals[sp - 1];
            for (intptr_t i = base; i < sp - 1; i++)
                DECREF((iv_val)vals[i]);
            sp = base;
            nframes--;
            base = frames[nframes].base;
            pc = frames[nframes].ret_pc;
            vals[sp++] = (int64_t)r;
            break;
        case IV_THREAD_ID:
            vals[sp++] = (int64_t)iv_small(th->tid);   /* tids above 256 are boxed */
            if (!iv_fits_small(th->tid))
                vals[sp - 1] = (int64_t)MKINT(th->tid);
            break;
        case IV_ATOMIC_BEGIN:
            if (adepth++ == 0)
                IV_ATOMIC_ENTER(th, cx->prog->atomic_set[pc - 1]);
            break;
        case IV_ATOMIC_END:
            if (--adepth == 0)
                IV_ATOMIC_EXIT(th);
            break;
        case IV_NEW_LIST: case IV_NEW_DICT:
            vals[sp++] = (int64_t)iv_new_container(mode, cx, th, in->op == IV_NEW_LIST ? IV_T_LIST
                                                                                   : IV_T_DICT);
            break;
        /* The container operations: a global's (operand g) or the stack's. Each takes
         * the container, the index or key, the value from the stack, then shares one
         * body per kind of access. */
        case IV_LIST_APPEND: case IV_APPEND: {
            iv_val l = in->op == IV_APPEND ? (iv_val)vals[sp - 2] : IV_GOBJ(g);
            b = (iv_val)vals[--sp];
            if (iv_vtype(l) != IV_T_LIST) {
                IV_TYPE_FAULT();
                DECREF(b);
            } else {
                int k = IV_LOCK_OBJ(th, g, l, adepth, in->op == IV_APPEND);
                int full = iv_olist_append((iv_olist_ref)iv_vref(l), b) < 0;
                IV_WROTE(l);
                IV_UNLOCK_OBJ(th, g, l, adepth, k);
                if (full) {
                    iv_fault(vm, IV_FAULT_LIST_FULL, (int32_t)pc - 1);
                    DECREF(b);
                }
            }
            if (in->op == IV_APPEND)
                DECREF((iv_val)vals[--sp]);
            break;
        }
        case IV_LIST_GET: case IV_DICT_GET: case IV_GETITEM: case IV_CONTAINS: {
            bool st = in->op == IV_GETITEM || in->op == IV_CONTAINS;
            iv_val c = st ? (iv_val)vals[sp - 2] : IV_GOBJ(g);
            a = (iv_val)vals[sp - 1];
            int64_t key = iv_int_of(vm, a, pc);
            r = 0;
            if (iv_vtype(c) == IV_T_LIST || iv_vtype(c) == IV_T_DICT) {
#if IV_COUNT_ATOMIC
                if (iv_obj_read(mode, cx, th, vm, in->op == IV_CONTAINS ? IV_CONTAINS : IV_GETITEM,
                                c, key, &r))
                    goto got;
#endif
                int k = IV_LOCK_OBJ(th, g, c, adepth, st);
                if (in->op == IV_CONTAINS)
                    r = iv_small(iv_vtype(c) == IV_T_LIST
                                     ? (uint64_t)key < (uint64_t)iv_olist_len((iv_olist_ref)iv_vref(c))
                                     : iv_odict_find((iv_odict_ref)iv_vref(c), key) >= 0);
                else
                    r = iv_vtype(c) == IV_T_LIST ? iv_olist_get((iv_olist_ref)iv_vref(c), key)
                                                 : iv_odict_get((iv_odict_ref)iv_vref(c), key);
                INCREF(r);                      /* under the container's lock (mem_refcount.h) */
                IV_UNLOCK_OBJ(th, g, c, adepth, k);
            } else if (IV_SDICT_ON && iv_vtype(c) == IV_T_SDICT) {
                r = iv_sdict_get_op(c, key, in->op == IV_CONTAINS);
                INCREF(r);
            } else {
                IV_TYPE_FAULT();
            }
#if IV_COUNT_ATOMIC
        got:
#endif
            DECREF(a);
            if (st) {
                sp--;
                DECREF(c);
            }
            vals[sp - 1] = (int64_t)r;
            break;
        }
        case IV_LIST_SET: case IV_DICT_SET: case IV_SETITEM: {
            bool st = in->op == IV_SETITEM;
            iv_val c = st ? (iv_val)vals[sp - 3] : IV_GOBJ(g);
            b = (iv_val)vals[--sp];
            a = (iv_val)vals[--sp];
            int64_t key = iv_int_of(vm, a, pc);
            r = b;                              /* what to drop: the old value, or b */
            if (iv_vtype(c) == IV_T_LIST) {
                int k = IV_LOCK_OBJ(th, g, c, adepth, st);
                r = iv_olist_set((iv_olist_ref)iv_vref(c), key, b);
                IV_WROTE(c);
                IV_UNLOCK_OBJ(th, g, c, adepth, k);
            } else if (iv_vtype(c) == IV_T_DICT) {
                int full, k = IV_LOCK_OBJ(th, g, c, adepth, st);
                r = iv_odict_set((iv_odict_ref)iv_vref(c), key, b, &full);
                IV_WROTE(c);
                IV_UNLOCK_OBJ(th, g, c, adepth, k);
                if (full) {
                    iv_fault(vm, IV_FAULT_DICT_FULL, (int32_t)pc - 1);
                    r = b;
                }
            } else if (IV_SDICT_ON && iv_vtype(c) == IV_T_SDICT) {
                int full;
                r = iv_sdict_set_op(c, key, b, &full);
                if (full) {
                    iv_fault(vm, IV_FAULT_DICT_FULL, (int32_t)pc - 1);
                    r = b;
                }
            } else {
                IV_TYPE_FAULT();
            }
            DECREF(r);
            DECREF(a);
            if (st)
                DECREF((iv_val)vals[--sp]);
            break;
        }
        case IV_LIST_LEN: case IV_DICT_LEN: case IV_LEN: {
            iv_val c = in->op == IV_LEN ? (iv_val)vals[--sp] : IV_GOBJ(g);
            int64_t n = 0;
            if (iv_vtype(c) == IV_T_LIST || iv_vtype(c) == IV_T_DICT) {
#if IV_COUNT_ATOMIC
                if (!iv_obj_len(c, &n))
#endif
                {
                    int k = IV_LOCK_OBJ(th, g, c, adepth, in->op == IV_LEN);
                    n = iv_vtype(c) == IV_T_LIST ? iv_olist_len((iv_olist_ref)iv_vref(c))
                                                 : iv_odict_len((iv_odict_ref)iv_vref(c));
                    IV_UNLOCK_OBJ(th, g, c, adepth, k);
                }
            } else if (IV_SDICT_ON && iv_vtype(c) == IV_T_SDICT) {
                n = iv_sdict_len_op(c);
            } else {
                IV_TYPE_FAULT();
            }
            if (in->op == IV_LEN)
                DECREF(c);
            vals[sp++] = (int64_t)MKINT(n);
            break;
        }
        case IV_LIST_POP: case IV_POPITEM: {
            iv_val l = in->op == IV_POPITEM ? (iv_val)vals[--sp] : IV_GOBJ(g);
            r = 0;
            if (iv_vtype(l) == IV_T_LIST) {
                int k = IV_LOCK_OBJ(th, g, l, adepth, in->op == IV_POPITEM);
                r = iv_olist_pop((iv_olist_ref)iv_vref(l));   /* the reference moves */
                IV_WROTE(l);
                IV_UNLOCK_OBJ(th, g, l, adepth, k);
            } else {
                IV_TYPE_FAULT();
            }
            if (in->op == IV_POPITEM)
                DECREF(l);
            vals[sp++] = (int64_t)r;
            break;
        }
        case IV_LIST_CLEAR: {
            iv_olist_ref l = (iv_olist_ref)iv_vref(IV_GOBJ(g));
            struct iv_mem *m = &th->mem;
            IV_LOCK(th, g, adepth);
            int64_t n = iv_mem_counts(mode) ? iv_olist_len(l) : 0;
            iv_grow(&m->drop, &m->capdrop, (size_t)n + 1);
            for (int64_t i = 0; i < n; i++)    /* dropped after the lock is released */
                m->drop[i] = iv_olist_get(l, i);
            SYNC_WRITE(l);
            IV_STORE_REL(l->len, 0);
            IV_WROTE(IV_GOBJ(g));
            IV_UNLOCK(th, g, adepth);
            for (int64_t i = 0; i < n; i++)
                DECREF(m->drop[i]);
            break;
        }
        case IV_QUEUE_PUT:
            b = (iv_val)vals[--sp];
            if (SYNC_UNLIKELY(iv_queue_put_op(th, g, adepth, b) < 0)) {
                iv_fault(vm, IV_FAULT_LIST_FULL, (int32_t)pc - 1);
                DECREF(b);
            }
            break;
        case IV_QUEUE_GET:
            vals[sp++] = (int64_t)iv_queue_get_op(th, g, adepth);
            break;
        case IV_HALT:
        default:
            if (adepth > 0)
                IV_ATOMIC_EXIT(th);
            for (intptr_t i = 0; i < sp; i++)
                DECREF((iv_val)vals[i]);
            vm->runs++;
            iv_vm_reset(vm, cx->prog->main_nlocals);
            return (uint64_t)(budget - left);
        }
    }
#undef INCREF
#undef DECREF
#undef MKINT
    vm->pc = (int32_t)pc;
    vm->sp = (int32_t)sp;
    vm->base = (int32_t)base;
    vm->nframes = (int32_t)nframes;
    vm->adepth = (int32_t)adepth;
    return (uint64_t)(budget - left);
}

/* Everything a slice does inside its block, in one function per mode: the mode's
 * block_begin and block_end around a run of the loop on a copy of the VM state. Kept
 * out of line: the slice's block calls _setjmp under stm, and a compiler keeps fewer
 * values in registers in a function that contains a call returning twice. */
#define IV_SLICE_OBJ_(NAME, name)                                                       \
    static IV_OBJ_TEXT SYNC_NOINLINE uint64_t iv_slice_obj_##name(const struct iv_ctx *cx, \
                                                                  struct iv_thread *th,   \
                                                                  int64_t budget)         \
    {                                                                                   \
        struct iv_vm *w = &th->vm[th->cur ^ 1];                                         \
        iv_mem_block_begin(IV_MEM_##NAME, cx, th);                                      \
        if (IV_QUEUE_SIDE)                                                              \
            iv_txq_attempt(&th->txq);             /* gives back what a re-run's took */ \
        th->mem.allocs = th->mem.allocs_mark;     /* a re-run forgets the thrown-away */ \
        th->mem.frees = th->mem.frees_mark;                                             \
        iv_vm_copy(w, &th->vm[th->cur]);                                                \
        uint64_t n = iv_run_obj_(cx, th, w, budget, IV_MEM_##NAME);                     \
        iv_mem_block_end(IV_MEM_##NAME, cx, th, w);                                     \
        return n;                                                                       \
    }
IV_MEMORY_MODES(IV_SLICE_OBJ_)
#undef IV_SLICE_OBJ_

#define IV_SLICE_OBJ_CASE_(NAME, name)                                                  \
    case IV_MEM_##NAME:                                                                 \
        return iv_slice_obj_##name(cx, th, budget);
static inline uint64_t iv_slice_obj(int mode, const struct iv_ctx *cx, struct iv_thread *th,
                                    int64_t budget)
{
    switch (mode) {
        IV_MEMORY_MODES(IV_SLICE_OBJ_CASE_)
    default:
        return 0;
    }
}

/* One slice of the object model as one atomic block (loop_raw.h's iv_block, with the
 * mode's hooks): a safe point before it, block_done after it completed. */
static IV_OBJ_TEXT uint64_t iv_block_obj(struct iv_ctx *cx, struct wl_thread *t)
{
    struct iv_thread *th = t->priv;
    int64_t budget = t->tx_len;
    const int mode = cx->memory;
    iv_mem_safepoint(mode, cx, th);
    SYNC_ATOMIC("interp.slice") {
        th->last_n = iv_slice_obj(mode, cx, th, budget);
    }
    if (IV_QUEUE_SIDE)
        iv_txq_done(&th->txq);                    /* committed: the puts reach the rings */
    th->mem.allocs_mark = th->mem.allocs;
    th->mem.frees_mark = th->mem.frees;
    WL_TXLEN_AFTER(t, th->last_n);
    th->cur ^= 1;
    IV_RESUME(th);
    iv_mem_block_done(mode, cx, th);
    return th->vm[th->cur].stuck ? 0 : th->last_n;
}

#endif
