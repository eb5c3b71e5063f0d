/*
 * tests/test_interp_counts.c - the buffered reference counts of interp's object model
 * (workloads/interp/mem_buffered.h; runtime/stm/DESIGN.md, "Reference counts that do
 * not conflict"), stepped one thread at a time: two VM threads of one run (the seq
 * copy of the VM, compiled here), and each step is one part of a block or of what
 * follows it (the block's counting, its settle, the apply after it, a reclaim).
 *
 * The interleavings:
 *  - a reader's increment is still pending (its block committed, its apply not yet
 *    run) when the last holder's decrement takes the count to 0: the object waits in
 *    limbo until the reader has applied, and is not freed, since the reader holds it;
 *  - it reaches 0 for good: freed once, only after every running thread has passed a
 *    later epoch;
 *  - an object a block allocated and dropped is freed inside the block (no limbo);
 *  - a block that re-runs forgets the counts of its thrown-away run.
 * And the inline cache of global names (loop_obj.h "Global names").
 */
#define SYNC_RT seq
#include "runtime/sync.h"
#undef SYNC_RT_ID
#define SYNC_RT_ID countstest          /* this copy's descriptor: interp__countstest */
#define IV_LOCK(th, g, adepth) ((void)0)
#define IV_UNLOCK(th, g, adepth) ((void)0)
#define IV_ATOMIC_ENTER(th, set) ((void)0)
#define IV_ATOMIC_EXIT(th) ((void)0)
#define IV_LOCK_OBJ(th, g, o, adepth, dyn) 0
#define IV_UNLOCK_OBJ(th, g, o, adepth, k) ((void)(k))
#include "workloads/interp/vm.h"

#include "tests/stmbench_testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

struct world {
    struct iv_ctx *cx;
    struct iv_thread *a, *b;
    iv_olist_ref list;                  /* the program's shared list L */
};

static struct world setup_world(void)
{
    const char *prog = tu_path(0, "counts.stm");
    tu_write(prog, ".global list L\n.expect len(L) = 0\nHALT\n");
    struct wl_args args = { .nthreads = 2 };
    args.sval[IV_K_PROGRAM] = prog;
    args.sval[IV_K_MEMORY] = "buffered";
    args.ival[IV_K_SWITCH] = 100;
    args.ival[IV_K_ITER] = 1;
    char err[256];
    struct world w = { .cx = iv_setup(&args, err, sizeof err) };
    if (!w.cx)
        fail_msg("setup: %s", err);
    w.a = &w.cx->th[0];
    w.b = &w.cx->th[1];
    for (int t = 0; t < 2; t++)   /* both running: their first epoch published */
        atomic_store(&IV_BUFFERED(&w.cx->th[t].mem)->seen, atomic_load(&IV_BUFFERED_CTX(w.cx)->epoch));
    w.list = (iv_olist_ref)w.cx->objs[0];
    return w;
}

static int64_t count_of(iv_val x)
{
    return atomic_load(&iv_count_of(x)->n);
}

static struct iv_vm *vm_of(struct iv_thread *th) { return &th->vm[th->cur]; }

/* A's block makes a box and appends it to L (the stack's reference moves into L). */
static iv_val a_publishes(struct world *w)
{
    iv_buf_begin(IV_BUFFERED(&w->a->mem));
    iv_val x = iv_new_box(IV_MEM_BUFFERED, w->cx, w->a, 100000);
    assert_int_equal(iv_olist_append(w->list, x), 0);
    iv_buf_settle(w->a, vm_of(w->a));
    iv_buf_apply(w->cx, w->a);
    assert_int_equal(count_of(x), 1);                   /* L's reference */
    return x;
}

static void test_pending_increment_keeps_it(void **state)
{
    (void)state;
    struct world w = setup_world();
    iv_val x = a_publishes(&w);

    /* B's block reads L[0] and counts its reference; it completes, not yet applied */
    iv_buf_begin(IV_BUFFERED(&w.b->mem));
    iv_val got = iv_olist_get(w.list, 0);
    assert_true(got == x);
    iv_buf_add(w.b, got, 1);

    /* A's block pops it and drops the reference; A applies: 0, into A's limbo */
    iv_buf_begin(IV_BUFFERED(&w.a->mem));
    iv_val popped = iv_olist_pop(w.list);
    iv_buffered_decref(w.cx, w.a, vm_of(w.a), popped);
    iv_buf_apply(w.cx, w.a);
    assert_int_equal(count_of(x), IV_CNT_LIMBO);
    assert_int_equal(IV_BUFFERED(&w.a->mem)->nlimbo, 1);

    /* A reclaims now: B has not passed a later epoch, so nothing is freed */
    iv_buf_reclaim(w.cx, w.a, false);
    assert_int_equal(count_of(x), IV_CNT_LIMBO);
    assert_int_equal(w.a->mem.gc_freed, 0);

    /* B applies (+1) and publishes; A's next reclaim finds it alive: out of limbo */
    iv_buf_apply(w.cx, w.b);
    assert_int_equal(count_of(x), IV_CNT_LIMBO | 1);
    iv_buf_apply(w.cx, w.a);
    iv_buf_reclaim(w.cx, w.a, false);
    assert_int_equal(count_of(x), 1);
    assert_int_equal(IV_BUFFERED(&w.a->mem)->nlimbo, 0);
    assert_int_equal(w.a->mem.gc_freed, 0);

    /* B drops it: 0, into B's limbo; freed once both threads passed a later epoch */
    iv_buf_begin(IV_BUFFERED(&w.b->mem));
    iv_buffered_decref(w.cx, w.b, vm_of(w.b), got);
    iv_buf_apply(w.cx, w.b);
    assert_int_equal(IV_BUFFERED(&w.b->mem)->nlimbo, 1);
    iv_buf_reclaim(w.cx, w.b, false);             /* moves the epoch; A is behind it */
    assert_int_equal(w.b->mem.gc_freed, 0);
    iv_buf_apply(w.cx, w.a);                      /* A passes the new epoch */
    iv_buf_apply(w.cx, w.b);
    iv_buf_reclaim(w.cx, w.b, false);
    assert_int_equal(w.b->mem.gc_freed, 1);
    assert_int_equal(IV_BUFFERED(&w.b->mem)->nlimbo, 0);
    assert_true(atomic_load(&((struct iv_count *)IV_BUFFERED(&w.b->mem)->cfree[IV_BUFFERED(&w.b->mem)->ncfree - 1])->n) ==
                IV_CNT_DEAD);
    iv_buf_reclaim(w.cx, w.b, false);             /* nothing left: freed once */
    assert_int_equal(w.b->mem.gc_freed, 1);
    iv_teardown(w.cx);
}

/* A finished thread (seen = UINT64_MAX) holds no limbo back; a running one does. */
static void test_finished_thread_does_not_hold(void **state)
{
    (void)state;
    struct world w = setup_world();
    iv_val x = a_publishes(&w);
    iv_buf_begin(IV_BUFFERED(&w.a->mem));
    iv_buffered_decref(w.cx, w.a, vm_of(w.a), iv_olist_pop(w.list));
    iv_buf_apply(w.cx, w.a);
    iv_buf_reclaim(w.cx, w.a, false);
    iv_buf_apply(w.cx, w.a);
    iv_buf_reclaim(w.cx, w.a, false);
    assert_int_equal(w.a->mem.gc_freed, 0);           /* B still runs, behind */
    atomic_store(&IV_BUFFERED(&w.b->mem)->seen, UINT64_MAX);          /* B finished */
    iv_buf_reclaim(w.cx, w.a, false);
    assert_int_equal(w.a->mem.gc_freed, 1);
    (void)x;
    iv_teardown(w.cx);
}

/* A block's own garbage: freed in the block, its cell back, nothing in limbo. */
static void test_dead_at_end_freed_in_block(void **state)
{
    (void)state;
    struct world w = setup_world();
    struct iv_vm *vm = vm_of(w.a);
    uint64_t frees = w.a->mem.frees;
    iv_buf_begin(IV_BUFFERED(&w.a->mem));
    iv_val l = iv_new_container(IV_MEM_BUFFERED, w.cx, w.a, IV_T_LIST);
    iv_val x = iv_new_box(IV_MEM_BUFFERED, w.cx, w.a, 5000);
    assert_int_equal(iv_olist_append((iv_olist_ref)iv_vref(l), x), 0);  /* x moves in */
    iv_buffered_decref(w.cx, w.a, vm, l);                        /* the list is dropped */
    iv_buf_settle(w.a, vm);
    assert_int_equal(w.a->mem.frees - frees, 2);             /* the list, then its element */
    iv_buf_apply(w.cx, w.a);
    assert_int_equal(IV_BUFFERED(&w.a->mem)->nlimbo, 0);
    /* and one that survives (published in L) is not */
    iv_val y = a_publishes(&w);
    assert_int_equal(count_of(y), 1);
    iv_teardown(w.cx);
}

/* A block that re-runs: the thrown-away run's counts never reach the cells. */
static void test_rerun_forgets_counts(void **state)
{
    (void)state;
    struct world w = setup_world();
    iv_val x = a_publishes(&w);
    iv_buf_begin(IV_BUFFERED(&w.b->mem));
    iv_buf_add(w.b, iv_olist_get(w.list, 0), 1);       /* the run that aborts */
    iv_buf_add(w.b, iv_olist_get(w.list, 0), 1);
    iv_buf_begin(IV_BUFFERED(&w.b->mem));                           /* the re-run: reads nothing */
    iv_buf_apply(w.cx, w.b);
    assert_int_equal(count_of(x), 1);
    iv_teardown(w.cx);
}

/* Global names through the module dict: the inline cache hits while the dict's keys
 * version stands and finds the name again when it moves (a key added: the slots may
 * have moved). */
static void test_module_lookup_cache(void **state)
{
    (void)state;
    const char *prog = tu_path(0, "names.stm");
    tu_write(prog, ".global int a = 1\n.global int b = 2\n.per_thread int c\n"
                   ".expect a = 1\nLOAD_GLOBAL a\nLOAD_GLOBAL b\nADD\nSTORE_GLOBAL c\nHALT\n");
    struct wl_args args = { .nthreads = 2 };
    args.sval[IV_K_PROGRAM] = prog;
    args.sval[IV_K_MEMORY] = "buffered";
    args.ival[IV_K_SWITCH] = 100;
    args.ival[IV_K_ITER] = 1;
    char err[256];
    struct iv_ctx *cx = iv_setup(&args, err, sizeof err);
    if (!cx)
        fail_msg("setup: %s", err);
    struct iv_thread *th = &cx->th[1];
    iv_cell_ref a = iv_lookup_cell(cx, th, 0, 0), b = iv_lookup_cell(cx, th, 1, 1);
    assert_true(a == (iv_cell_ref)cx->objs[0]);
    assert_true(b == (iv_cell_ref)cx->objs[2]);
    assert_true(iv_lookup_cell(cx, th, 3, 2) == (iv_cell_ref)th->obj[2]);  /* its own */
    assert_int_equal(th->gcache[0].kver, cx->module->kver);
    /* a stale entry (another version) is not believed */
    th->gcache[0].cell = (iv_ref)cx->objs[2];
    th->gcache[0].kver = cx->module->kver - 1;
    assert_true(iv_lookup_cell(cx, th, 0, 0) == a);
    /* a key added moves the version: every cache finds its name again */
    int full;
    iv_odict_set(cx->module, 12345, 0, &full);
    assert_true(th->gcache[1].kver != cx->module->kver);
    assert_true(iv_lookup_cell(cx, th, 1, 1) == b);
    assert_int_equal(th->gcache[1].kver, cx->module->kver);
    iv_teardown(cx);
}

/* refcount: a run the stuck guard abandoned leaves references on its stack; the
 * teardown drops them (found by fuzz_run's leak check). */
static void test_abandoned_stack_dropped(void **state)
{
    (void)state;
    const char *prog = tu_path(0, "stuck.stm");
    tu_write(prog, ".global int x\n.expect x = 0\nATOMIC_BEGIN\n"
                   "spin: LOAD_GLOBAL x\nPUSH 1000\nADD\nDUP\nSTORE_GLOBAL x\nPUSH 0\nEQ\n"
                   "JUMP_IF_FALSE spin\nATOMIC_END\nHALT\n");
    struct wl_args args = { .nthreads = 1 };
    args.sval[IV_K_PROGRAM] = prog;
    args.sval[IV_K_MEMORY] = "refcount";
    args.ival[IV_K_SWITCH] = 10;
    args.ival[IV_K_ITER] = 1;
    char err[256];
    struct iv_ctx *cx = iv_setup(&args, err, sizeof err);
    if (!cx)
        fail_msg("setup: %s", err);
    struct iv_thread *th = &cx->th[0];
    struct wl_thread wt = { .tid = 0, .nthreads = 1, .priv = th };
    wl_txlen_init(&wt, 10, IV_TXLEN_START, IV_TXLEN_MAX);
    iv_block_obj(cx, &wt);                          /* runs into the stuck guard */
    struct iv_vm *vm = &th->vm[th->cur];
    assert_true(vm->stuck);
    assert_true(vm->sp > 0);
    iv_mem_teardown_stacks(cx->memory, cx);
    /* what is left is x's value alone: the stack's boxes are freed */
    assert_int_equal(th->mem.allocs - th->mem.frees, 1);
    iv_teardown(cx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pending_increment_keeps_it),
        cmocka_unit_test(test_finished_thread_does_not_hold),
        cmocka_unit_test(test_dead_at_end_freed_in_block),
        cmocka_unit_test(test_rerun_forgets_counts),
        cmocka_unit_test(test_module_lookup_cache),
        cmocka_unit_test(test_abandoned_stack_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
