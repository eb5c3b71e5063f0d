/*
 * tests/test_interp_census.c - the memory modes' final check (workloads/interp/census.h,
 * the `check` hook of workloads/interp/memory.h): after a run, each mode's accounting
 * agrees with the census of references the heap holds, and a count (or a registry
 * entry) made wrong by one is caught, with a message naming the mode, then agrees
 * again once restored. One thread of the seq copy of the VM, compiled here.
 */
#define SYNC_RT seq
#include "runtime/sync.h"
#undef SYNC_RT_ID
#define SYNC_RT_ID censustest          /* this copy's descriptor: interp__censustest */
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

/* Each run appends a constant's box and a new list holding another constant's box. */
static const char census_prog[] =
    ".global list L\n"
    ".global int x = 100000\n"
    ".expect len(L) = RUNS * 2\n"
    "        PUSH 5000\n"
    "        LIST_APPEND L\n"
    "        NEW_LIST\n"
    "        DUP\n"
    "        PUSH 7000\n"
    "        APPEND\n"
    "        LIST_APPEND L\n"
    "        HALT\n";

/* Runs the program twice on one thread under `mode`; the context, its check passed. */
static struct iv_ctx *run_twice(const char *mode)
{
    const char *prog = tu_path(0, "census.stm");
    tu_write(prog, census_prog);
    struct wl_args args = { .nthreads = 1 };
    args.sval[IV_K_PROGRAM] = prog;
    args.sval[IV_K_MEMORY] = mode;
    args.ival[IV_K_SWITCH] = 3;
    args.ival[IV_K_ITER] = 1;
    char err[256];
    struct iv_ctx *cx = iv_setup(&args, err, sizeof err);
    if (!cx)
        fail_msg("setup: %s", err);
    struct iv_thread *th = &cx->th[0];
    struct wl_thread wt = { .tid = 0, .nthreads = 1, .priv = th };
    wl_txlen_init(&wt, 3, IV_TXLEN_START, IV_TXLEN_MAX);
    iv_mem_thread_start(cx->memory, cx, th);
    while (th->vm[th->cur].runs < 2 || th->vm[th->cur].in_run)
        iv_block_obj(cx, &wt);
    iv_mem_thread_stop(cx->memory, cx, th);
    char msg[512] = "";
    assert_int_equal(iv_check(cx, &wt, 1, msg, sizeof msg), 0);
    return cx;
}

/* L[i], a value of the declared list. */
static iv_val elem(struct iv_ctx *cx, int64_t i)
{
    return iv_olist_get((iv_olist_ref)cx->objs[0], i);
}

/* The check fails, naming the mode. */
static void check_fails(struct iv_ctx *cx, const char *mode)
{
    char msg[512] = "";
    struct wl_thread wt = { .tid = 0, .nthreads = 1 };
    assert_int_equal(iv_check(cx, &wt, 1, msg, sizeof msg), -1);
    char want[64];
    snprintf(want, sizeof want, "--memory %s", mode);
    if (!strstr(msg, want))
        fail_msg("the message '%s' does not name %s", msg, want);
}

static void check_passes(struct iv_ctx *cx)
{
    char msg[512] = "";
    struct wl_thread wt = { .tid = 0, .nthreads = 1 };
    if (iv_check(cx, &wt, 1, msg, sizeof msg) != 0)
        fail_msg("check: %s", msg);
}

/* refcount and biased: one count too many on a list the heap holds once, and on a
 * constant's box (biased: immortal, so not counted: a wrong count there is unseen). */
static void counted(const char *mode, bool immortal_constants)
{
    struct iv_ctx *cx = run_twice(mode);
    iv_val inner = elem(cx, 1), box = elem(cx, 0);
    assert_int_equal(iv_vtype(inner), IV_T_LIST);
    assert_int_equal(iv_vtype(box), IV_T_BOX);
    iv_vref(inner)->rc++;
    check_fails(cx, mode);
    iv_vref(inner)->rc--;
    check_passes(cx);
    iv_vref(box)->rc--;
    if (immortal_constants)
        check_passes(cx);
    else
        check_fails(cx, mode);
    iv_vref(box)->rc++;
    check_passes(cx);
    iv_teardown(cx);
}

static void test_refcount_counts_checked(void **state)
{
    (void)state;
    counted("refcount", false);
}

static void test_biased_counts_checked(void **state)
{
    (void)state;
    counted("biased", true);
}

/* buffered: the cell of a list the heap holds; a freed cell reads as wrong too. */
static void test_buffered_cells_checked(void **state)
{
    (void)state;
    struct iv_ctx *cx = run_twice("buffered");
    struct iv_count *c = iv_count_of(elem(cx, 1));
    assert_non_null(c);
    assert_int_equal(atomic_load(&c->n), 1);
    atomic_fetch_add(&c->n, 1);
    check_fails(cx, "buffered");
    atomic_fetch_sub(&c->n, 1);
    check_passes(cx);
    atomic_fetch_or(&c->n, IV_CNT_DEAD);
    check_fails(cx, "buffered");
    atomic_fetch_and(&c->n, ~IV_CNT_DEAD);
    check_passes(cx);
    assert_null(iv_count_of(elem(cx, 0)));          /* a constant: no cell */
    iv_teardown(cx);
}

/* tracing: an object the heap holds that no registry names (as if freed). */
static void test_tracing_registries_checked(void **state)
{
    (void)state;
    struct iv_ctx *cx = run_twice("tracing");
    iv_val inner = elem(cx, 1);
    struct iv_tracing_thread *m = IV_TRACING(&cx->th[0].mem);
    size_t at = m->nreg;
    for (size_t i = 0; i < m->nreg; i++)
        if (m->reg[i] == inner)
            at = i;
    assert_true(at < m->nreg);
    m->reg[at] = 0;
    check_fails(cx, "tracing");
    m->reg[at] = inner;
    check_passes(cx);
    iv_teardown(cx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refcount_counts_checked),
        cmocka_unit_test(test_biased_counts_checked),
        cmocka_unit_test(test_buffered_cells_checked),
        cmocka_unit_test(test_tracing_registries_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
