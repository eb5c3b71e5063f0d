/*
 * tests/test_interp_brc.c - interp's counts under the `locks` runtime, stepped: the
 * biased owner's death without a read-modify-write and its merge
 * (workloads/interp/mem_biased.h), try_incref (mem_biased.h, mem_refcount.h), the
 * lock-free read of an int global's cell (iv_cell_read, loop_obj.h) and the free
 * boxes (freelist.h). The locks copy of the VM is compiled here (IV_COUNT_ATOMIC 1,
 * workloads/interp_locks.c's lock macros), and one OS thread plays the VM threads 0
 * and 1, calling the functions one step at a time; a hook inside iv_cell_read
 * (IV_TEST_CELL_READ) runs other threads' steps between the value's load and its
 * count.
 *
 * The interleavings:
 *  - the owner's count reaches 0 with nobody else counted: dead, the shared word left
 *    0 (no flag written); with another thread's count outstanding the owner merges
 *    and the object dies at the other's decrement;
 *  - a non-owner's increment marks the object SHARED (a flag, once), and from then
 *    on the owner's death goes through the merge;
 *  - try_incref on live, dead, unshared and merged objects, owner and not;
 *  - a reader loads a box from a cell; the box dies, goes back to its owner's free
 *    boxes and is allocated again (a new object) before the reader counts it: the
 *    count fails, or lands on the new object and the version's recheck gives it back;
 *  - iv_cell_read refuses a locked cell, a moved version, a list; reads a small int
 *    and a live box with one count;
 *  - free boxes: the owner's own list, another thread's pushes onto its remote stack,
 *    the teardown.
 * Then a randomized run of the real VM loop: one thread stores fresh boxes into a
 * global that the others read (LOAD_GLOBAL) in a loop, at 2 and 4 threads, a bounded
 * number of bytecodes, and the VM's check (its census of the counts) passes.
 */
#define SYNC_RT locks
#define SYNC_RT_LOCKS 1
#include "runtime/sync.h"
#undef SYNC_RT_ID
#define SYNC_RT_ID brctest             /* this copy's descriptor: interp__brctest */

struct world;
static void (*between)(struct world *w);   /* run inside iv_cell_read, once */
static struct world *between_world;
#define IV_TEST_CELL_READ(c, w) (between ? between(between_world) : (void)0)
#include "workloads/interp_locks.c"

#include "tests/stmbench_testutil.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "tests/wl_testutil.h"

#define VM WL_CAT(interp, SYNC_RT_ID)    /* this copy's descriptor */

enum { GX, GY, GL };                   /* the program's globals, in declaration order */

struct world {
    struct iv_ctx *cx;
    int mode;
    struct iv_thread *t0, *t1;
};

/* The program `text` (written to the test's file `slot`) set up through the copy's
 * descriptor: nthreads threads, --memory memory, slices of sw bytecodes, ITER iter. */
static struct iv_ctx *setup_vm(int slot, const char *text, const char *memory, int nthreads,
                               long sw, long iter)
{
    const char *prog = tu_path(slot, "brc.stm");
    tu_write(prog, text);
    struct wl_args args = { .nthreads = nthreads,
                            .sval = { [IV_K_PROGRAM] = prog, [IV_K_MEMORY] = memory },
                            .ival = { [IV_K_SWITCH] = sw, [IV_K_ITER] = iter } };
    return setup_ok(&VM, &args);
}

static struct world setup_world(const char *memory)
{
    struct world w = { .cx = setup_vm(0, ".global int x\n.global int y\n.global list L\n"
                                         ".expect x = 3\nPUSH 3\nSTORE_GLOBAL x\nHALT\n",
                                      memory, 2, 100, 1) };
    w.mode = w.cx->memory;
    w.t0 = &w.cx->th[0];
    w.t1 = &w.cx->th[1];
    return w;
}

static struct iv_vm *vm_of(struct iv_thread *th) { return &th->vm[th->cur]; }
static iv_cell_ref cell(const struct world *w, int g) { return (iv_cell_ref)iv_obj_of(w->cx, g, 0); }
static iv_box_ref box_of(iv_val v) { return (iv_box_ref)iv_vref(v); }

/* The owner's plain count and the shared word (biased); rc is also refcount's count.
 * relaxed: read by the one OS thread that made every step, or after the threads'
 * joins. */
static int64_t rc(iv_val v) { return __atomic_load_n(&iv_vref(v)->rc, __ATOMIC_RELAXED); }
static int64_t word(iv_val v) { return __atomic_load_n(&iv_vref(v)->rcs, __ATOMIC_RELAXED); }

static iv_val new_box(struct world *w, struct iv_thread *th, int64_t v)
{
    return iv_new_box(w->mode, w->cx, th, v);
}

static void incref(struct world *w, struct iv_thread *th, iv_val v)
{
    iv_mem_incref(w->mode, w->cx, th, v);
}

static void decref(struct world *w, struct iv_thread *th, iv_val v)
{
    iv_mem_decref(w->mode, w->cx, th, vm_of(th), v);
}

static bool try_incref(struct world *w, struct iv_thread *th, iv_val v)
{
    return iv_mem_try_incref(w->mode, w->cx, th, v);
}

static bool cell_read(struct world *w, struct iv_thread *th, int g, iv_val *r)
{
    return iv_cell_read(w->mode, w->cx, th, vm_of(th), cell(w, g), r);
}

/* STORE_GLOBAL g by th, as loop_obj.h makes it under locks: v's reference moves into
 * the cell; under the cell's lock the value (release) and then the version move; the
 * old value's reference goes after the unlock. */
static void store(struct world *w, struct iv_thread *th, int g, iv_val v)
{
    iv_cell_ref c = cell(w, g);
    ivl_lock(th, g);
    iv_val old = (iv_val)c->value;
    __atomic_store_n(&c->value, v, __ATOMIC_RELEASE);
    __atomic_store_n(&c->ver, c->ver + 1, __ATOMIC_RELAXED);
    ivl_unlock(th, g);
    decref(w, th, old);
}

/* LOAD_GLOBAL g's fallback: the value, counted under the cell's lock. */
static iv_val load_locked(struct world *w, struct iv_thread *th, int g)
{
    iv_cell_ref c = cell(w, g);
    ivl_lock(th, g);
    iv_val v = (iv_val)c->value;
    incref(w, th, v);
    ivl_unlock(th, g);
    return v;
}

/* ---- biased: the owner's death ---- */

static void test_owner_death_without_rmw(void **state)
{
    (void)state;
    struct world w = setup_world("biased");
    iv_val b = new_box(&w, w.t0, 5000);
    assert_int_equal(rc(b), 1);
    assert_int_equal(word(b), 0);
    assert_int_equal(iv_biased_dec(w.cx, w.t0, b), 1);     /* dead at once */
    assert_int_equal(rc(b), 0);
    assert_int_equal(word(b), 0);                           /* no MERGED written */
    iv_box_free(w.cx, w.t0, box_of(b));                     /* as its release does */

    /* the same through decref: the release puts the box on t0's own list */
    iv_val b2 = new_box(&w, w.t0, 6000);
    assert_true(b2 == b);                                   /* b's memory again */
    uint64_t frees = w.t0->mem.frees;
    decref(&w, w.t0, b2);
    assert_int_equal(w.t0->mem.frees, frees + 1);
    assert_true(w.t0->mem.boxes == box_of(b2));
    assert_int_equal(word(b2), 0);
    iv_teardown(w.cx);
}

static void test_owner_zero_merges_while_another_counts(void **state)
{
    (void)state;
    struct world w = setup_world("biased");
    iv_val b = new_box(&w, w.t0, 5000);
    incref(&w, w.t1, b);                                    /* t1's reference */
    assert_int_equal(word(b), IV_BRC_SHARED | IV_BRC_ONE);
    assert_int_equal(iv_biased_dec(w.cx, w.t0, b), 0);     /* the owner's 0: merged */
    assert_int_equal(rc(b), 0);
    assert_int_equal(word(b), IV_BRC_MERGED | IV_BRC_SHARED | IV_BRC_ONE);
    assert_int_equal(w.t0->mem.frees + w.t1->mem.frees, 0);

    /* t1's decrement frees it: to its owner's remote stack */
    decref(&w, w.t1, b);
    assert_int_equal(w.t1->mem.frees, 1);
    assert_int_equal(word(b), IV_BRC_MERGED | IV_BRC_SHARED);
    assert_true(w.t0->mem.remote == (uintptr_t)box_of(b));
    assert_null(w.t0->mem.boxes);
    iv_teardown(w.cx);
}

static void test_shared_flag_then_merge(void **state)
{
    (void)state;
    struct world w = setup_world("biased");
    iv_val b = new_box(&w, w.t0, 5000);
    incref(&w, w.t1, b);
    incref(&w, w.t1, b);
    assert_int_equal(word(b), IV_BRC_SHARED | 2 * IV_BRC_ONE);   /* the flag once */
    assert_int_equal(iv_biased_dec(w.cx, w.t1, b), 0);
    assert_int_equal(iv_biased_dec(w.cx, w.t1, b), 0);
    assert_int_equal(word(b), IV_BRC_SHARED);               /* the flag stays */
    assert_int_equal(rc(b), 1);

    /* the owner's 0 now goes through the merge: dead, MERGED written */
    assert_int_equal(iv_biased_dec(w.cx, w.t0, b), 1);
    assert_int_equal(word(b), IV_BRC_SHARED | IV_BRC_MERGED);
    iv_box_free(w.cx, w.t0, box_of(b));

    /* a box taken again starts unshared: its owner's 0 is the fast one */
    iv_val b2 = new_box(&w, w.t0, 6000);
    assert_true(b2 == b);
    assert_int_equal(word(b2), 0);
    assert_int_equal(iv_biased_dec(w.cx, w.t0, b2), 1);
    assert_int_equal(word(b2), 0);
    iv_box_free(w.cx, w.t0, box_of(b2));
    iv_teardown(w.cx);
}

/* ---- try_incref ---- */

static void test_biased_try_incref(void **state)
{
    (void)state;
    struct world w = setup_world("biased");
    iv_val b = new_box(&w, w.t0, 5000);

    assert_true(try_incref(&w, w.t0, b));                   /* owner, alive */
    assert_int_equal(rc(b), 2);
    assert_false(try_incref(&w, w.t1, b));                  /* shared word 0 */
    assert_int_equal(word(b), 0);

    /* t1 counted it once (under a lock) and dropped it: SHARED, count 0, alive */
    incref(&w, w.t1, b);
    assert_int_equal(iv_biased_dec(w.cx, w.t1, b), 0);
    assert_int_equal(word(b), IV_BRC_SHARED);
    assert_true(try_incref(&w, w.t1, b));
    assert_int_equal(word(b), IV_BRC_SHARED | IV_BRC_ONE);

    /* the owner drops its two: merged, alive with t1's count */
    assert_int_equal(iv_biased_dec(w.cx, w.t0, b), 0);
    assert_int_equal(iv_biased_dec(w.cx, w.t0, b), 0);
    assert_int_equal(word(b), IV_BRC_MERGED | IV_BRC_SHARED | IV_BRC_ONE);
    assert_true(try_incref(&w, w.t1, b));                   /* merged, count 1 */
    assert_true(try_incref(&w, w.t0, b));                   /* the owner, merged: shared */
    assert_int_equal(rc(b), 0);
    assert_int_equal(word(b), IV_BRC_MERGED | IV_BRC_SHARED | 3 * IV_BRC_ONE);
    assert_int_equal(iv_biased_dec(w.cx, w.t0, b), 0);
    assert_int_equal(iv_biased_dec(w.cx, w.t1, b), 0);
    assert_int_equal(iv_biased_dec(w.cx, w.t1, b), 1);     /* dead */

    /* merged with a count of 0: nobody counts it */
    assert_false(try_incref(&w, w.t1, b));
    assert_false(try_incref(&w, w.t0, b));
    assert_int_equal(word(b), IV_BRC_MERGED | IV_BRC_SHARED);
    iv_box_free(w.cx, w.t1, box_of(b));                     /* t0's remote stack */

    /* the owner on its own dead box (count 0, on its free list): b's memory again,
     * from the remote stack */
    iv_val d = new_box(&w, w.t0, 7000);
    assert_true(d == b);
    assert_int_equal(word(d), 0);
    decref(&w, w.t0, d);
    assert_true(w.t0->mem.boxes == box_of(d));
    assert_false(try_incref(&w, w.t0, d));
    assert_int_equal(rc(d), 0);
    assert_false(try_incref(&w, w.t1, d));
    assert_int_equal(word(d), 0);
    iv_teardown(w.cx);
}

static void test_refcount_try_incref(void **state)
{
    (void)state;
    struct world w = setup_world("refcount");
    iv_val b = new_box(&w, w.t0, 5000);
    assert_true(try_incref(&w, w.t1, b));
    assert_int_equal(rc(b), 2);
    assert_true(try_incref(&w, w.t0, b));
    assert_int_equal(rc(b), 3);
    for (int i = 0; i < 3; i++)
        decref(&w, i == 1 ? w.t0 : w.t1, b);
    assert_int_equal(w.t0->mem.frees + w.t1->mem.frees, 1);
    assert_int_equal(rc(b), 0);
    assert_false(try_incref(&w, w.t1, b));
    assert_false(try_incref(&w, w.t0, b));
    assert_int_equal(rc(b), 0);
    iv_teardown(w.cx);
}

/* ---- a box reused between a reader's load and its count ---- */

static iv_val reuse_old;                 /* the box the reader loaded */
static iv_val reuse_new;                 /* its memory's next object */
static iv_val reuse_held;                /* t1's counted reference to the new one, or 0 */
static bool reuse_shared;                /* t1 counts the new object under y's lock */

/* Between t1's load of x and its count: t0 stores another box into x (the old one's
 * last reference goes: dead, on t0's list), allocates (the old box's memory, a new
 * object) and stores it into y; t1 may then count it from y under y's lock. */
static void reuse_steps(struct world *w)
{
    between = NULL;
    store(w, w->t0, GX, new_box(w, w->t0, 6000));
    assert_true(w->t0->mem.boxes == box_of(reuse_old));
    reuse_new = new_box(w, w->t0, 7000);
    assert_true(reuse_new == reuse_old);
    store(w, w->t0, GY, reuse_new);
    reuse_held = reuse_shared ? load_locked(w, w->t1, GY) : 0;
}

static void reuse(const char *memory, bool shared)
{
    struct world w = setup_world(memory);
    reuse_old = new_box(&w, w.t0, 5000);
    store(&w, w.t0, GX, reuse_old);                         /* x holds it: count 1 */
    reuse_shared = shared;
    between_world = &w;
    between = reuse_steps;
    iv_val r = 0;
    bool ok = cell_read(&w, w.t1, GX, &r);
    assert_null(between);                                   /* the steps ran */
    assert_false(ok);
    assert_int_equal(r, 0);
    assert_int_equal(box_of(reuse_new)->value, 7000);
    /* the new object's count: y's, and t1's when it counted it from y */
    if (w.mode == IV_MEM_BIASED) {
        assert_int_equal(rc(reuse_new), 1);
        assert_int_equal(word(reuse_new), shared ? IV_BRC_SHARED | IV_BRC_ONE : 0);
    } else {
        assert_int_equal(rc(reuse_new), 1 + shared);
    }
    if (shared)
        decref(&w, w.t1, reuse_held);
    /* the reader, again: x's value now, counted */
    assert_true(cell_read(&w, w.t0, GX, &r));
    assert_int_equal(box_of(r)->value, 6000);
    decref(&w, w.t0, r);
    iv_teardown(w.cx);
}

static void test_reuse_biased_count_fails(void **state) { (void)state; reuse("biased", false); }
static void test_reuse_biased_given_back(void **state) { (void)state; reuse("biased", true); }
static void test_reuse_refcount_given_back(void **state) { (void)state; reuse("refcount", false); }
static void test_reuse_refcount_shared(void **state) { (void)state; reuse("refcount", true); }

/* ---- iv_cell_read ---- */

/* x holds a box of t0's that t0 holds once more; t1 counted it once (SHARED). */
static iv_val held_box(struct world *w)
{
    iv_val b = new_box(w, w->t0, 5000);
    store(w, w->t0, GX, b);
    incref(w, w->t0, b);
    incref(w, w->t1, b);
    decref(w, w->t1, b);
    return b;
}

/* b's counts as {owner's, shared word} (refcount: {count, 0}). */
struct counts {
    int64_t rc, word;
};
static struct counts counts_of(iv_val b) { return (struct counts){ rc(b), word(b) }; }
static void assert_counts(iv_val b, struct counts want)
{
    assert_int_equal(rc(b), want.rc);
    assert_int_equal(word(b), want.word);
}

/* t0 runs the program (x = 3) through the VM's loop: its STORE_GLOBAL moves x's
 * version and drops x's reference to what it held. */
static void moves_version(struct world *w)
{
    between = NULL;
    struct wl_thread t = { .tid = 0, .nthreads = 2, .priv = w->t0 };
    wl_txlen_init(&t, 100, IV_TXLEN_START, IV_TXLEN_MAX);
    uint64_t ver = cell(w, GX)->ver;
    assert_int_equal(iv_block_obj(w->cx, &t), 3);
    assert_int_equal(vm_of(w->t0)->runs, 1);
    assert_int_equal(cell(w, GX)->value, iv_small(3));
    assert_int_equal(cell(w, GX)->ver, ver + 1);
}

static void takes_lock(struct world *w)
{
    between = NULL;
    ivl_lock(w->t0, GX);                                    /* a section begins */
}

/* Under biased and under refcount, t1 reads x while `steps` run: before its read
 * (early) or between its load and its count. False, and b's counts as they were but
 * for what the steps did (what try_incref counted is given back). */
static void refused(void (*steps)(struct world *w), bool early)
{
    static const char *const memory[] = { "biased", "refcount" };
    for (int m = 0; m < 2; m++) {
        struct world w = setup_world(memory[m]);
        iv_val b = held_box(&w);
        struct counts before = counts_of(b);
        between_world = &w;
        between = steps;
        if (early)
            steps(&w);
        iv_val r = 0;
        assert_false(cell_read(&w, w.t1, GX, &r));
        assert_false(early && cell_read(&w, w.t0, GX, &r));     /* the owner too */
        assert_null(between);
        if (steps == moves_version) {
            /* x's reference went in the steps; t1's count (its try_incref succeeded: b
             * is alive, and SHARED under biased) was given back */
            assert_counts(b, (struct counts){ before.rc - 1, before.word });
        } else {
            assert_counts(b, before);
            ivl_unlock(w.t0, GX);
        }
        decref(&w, w.t0, b);
        iv_teardown(w.cx);
    }
}

static void test_read_refused_version_moved(void **state) { (void)state; refused(moves_version, false); }
static void test_read_refused_lock_taken(void **state) { (void)state; refused(takes_lock, false); }
static void test_read_refused_locked(void **state) { (void)state; refused(takes_lock, true); }

static void test_read_refuses_list(void **state)
{
    (void)state;
    /* refcount: biased's declared containers are immortal (no count to check) */
    struct world w = setup_world("refcount");
    iv_val l = w.t0->gobj[GL];
    incref(&w, w.t0, l);                                    /* LOAD_GLOBAL L */
    store(&w, w.t0, GX, l);
    struct counts before = counts_of(l);
    assert_int_equal(before.rc, 2);                         /* the declaration's and x's */
    iv_val r = 0;
    assert_false(cell_read(&w, w.t1, GX, &r));
    assert_false(cell_read(&w, w.t0, GX, &r));
    assert_counts(l, before);
    store(&w, w.t0, GX, iv_small(0));
    iv_teardown(w.cx);
}

static void test_read_small_int_and_box(void **state)
{
    (void)state;
    struct world w = setup_world("biased");
    iv_val r = 0;
    store(&w, w.t0, GX, iv_small(7));
    assert_true(cell_read(&w, w.t1, GX, &r));
    assert_int_equal(r, iv_small(7));

    iv_val b = held_box(&w);                                /* rc 2, word SHARED */
    assert_true(cell_read(&w, w.t0, GX, &r));               /* the owner: its count */
    assert_true(r == b);
    assert_counts(b, (struct counts){ 3, IV_BRC_SHARED });
    assert_true(cell_read(&w, w.t1, GX, &r));               /* another: the shared one */
    assert_true(r == b);
    assert_counts(b, (struct counts){ 3, IV_BRC_SHARED | IV_BRC_ONE });
    decref(&w, w.t1, b);
    decref(&w, w.t0, b);
    decref(&w, w.t0, b);
    iv_teardown(w.cx);

    w = setup_world("refcount");
    b = held_box(&w);                                       /* count 2 */
    assert_true(cell_read(&w, w.t1, GX, &r));
    assert_true(r == b);
    assert_int_equal(rc(b), 3);
    decref(&w, w.t1, b);
    decref(&w, w.t0, b);
    iv_teardown(w.cx);
}

/* ---- free boxes ---- */

static void test_freelist(void **state)
{
    (void)state;
    struct world w = setup_world("biased");
    iv_val a = new_box(&w, w.t0, 5000), b = new_box(&w, w.t0, 5001);
    iv_val c = new_box(&w, w.t0, 5002), d = new_box(&w, w.t1, 5003);
    uint64_t allocs = w.t0->mem.allocs;

    /* the owner's own: back on its list, taken again first */
    iv_box_free(w.cx, w.t0, box_of(a));
    assert_true(w.t0->mem.boxes == box_of(a));
    assert_int_equal(w.t0->mem.remote, 0);

    /* another thread's: onto the owner's remote stack, in push order */
    iv_box_free(w.cx, w.t1, box_of(b));
    iv_box_free(w.cx, w.t1, box_of(c));
    assert_true(w.t0->mem.remote == (uintptr_t)box_of(c));
    assert_true(w.t0->mem.boxes == box_of(a));
    assert_null(w.t1->mem.boxes);

    /* taken: the own list first, then the remote stack, whole */
    assert_true(iv_box_take(w.t0) == box_of(a));
    assert_null(w.t0->mem.boxes);
    assert_true(iv_box_take(w.t0) == box_of(c));
    assert_int_equal(w.t0->mem.remote, 0);
    assert_true(w.t0->mem.boxes == box_of(b));
    assert_true(iv_box_take(w.t0) == box_of(b));
    assert_null(iv_box_take(w.t0));
    assert_int_equal(w.t0->mem.allocs, allocs);             /* takes are not allocations */

    /* a new box of t0's comes from there; the owner never changes */
    iv_box_free(w.cx, w.t1, box_of(a));
    iv_val e = new_box(&w, w.t0, 6000);
    assert_true(e == a);
    assert_int_equal(iv_vref(e)->owner, 0);
    assert_int_equal(iv_vref(d)->owner, 1);

    /* teardown: every list, own and remote, of every thread */
    iv_box_free(w.cx, w.t0, box_of(b));
    iv_box_free(w.cx, w.t1, box_of(c));
    iv_box_free(w.cx, w.t0, box_of(d));                    /* t1's: its remote stack */
    iv_box_free(w.cx, w.t0, box_of(e));
    assert_true(w.t1->mem.remote == (uintptr_t)box_of(d));
    iv_boxes_teardown(w.cx);
    for (int t = 0; t < 2; t++) {
        assert_null(w.cx->th[t].mem.boxes);
        assert_int_equal(w.cx->th[t].mem.remote, 0);
    }
    iv_teardown(w.cx);
}

/* ---- randomized: the VM's loop on real threads ----
 *
 * Thread 0 stores ITER fresh boxes (1001, 1002, ...) into x; every other thread
 * loads x ITER times (the lock-free read, its fallback when x is locked or the box
 * died), keeps the last value in a local (its reference dropped at the next one) and
 * counts the values that went down in its own `back`. Each thread runs the program
 * once (the thread body with an operation target of 1: one block, then the run is
 * finished), so the run is bounded by bytecodes, not time. Then the VM's check: the
 * expectations and the census of the counts; and no box is left but x's. */
#define ST_ITER 200000

static const char st_prog[] =
    ".global int x = 1000\n"
    ".per_thread int back\n"
    ".expect x = 1000 + ITER\n"
    ".expect back = 0\n"
    "        THREAD_ID\n"
    "        JUMP_IF_TRUE read\n"
    "write:  LOAD_LOCAL 0\n"
    "        PUSH ITER\n"
    "        LT\n"
    "        JUMP_IF_FALSE done\n"
    "        LOAD_LOCAL 0\n"
    "        PUSH 1001\n"
    "        ADD\n"
    "        STORE_GLOBAL x\n"
    "        LOAD_LOCAL 0\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_LOCAL 0\n"
    "        JUMP write\n"
    "read:   LOAD_LOCAL 0\n"
    "        PUSH ITER\n"
    "        LT\n"
    "        JUMP_IF_FALSE done\n"
    "        LOAD_GLOBAL x\n"
    "        DUP\n"
    "        LOAD_LOCAL 1\n"
    "        LT\n"
    "        LOAD_GLOBAL back\n"
    "        ADD\n"
    "        STORE_GLOBAL back\n"
    "        STORE_LOCAL 1\n"
    "        LOAD_LOCAL 0\n"
    "        PUSH 1\n"
    "        ADD\n"
    "        STORE_LOCAL 0\n"
    "        JUMP read\n"
    "done:   HALT\n";

static void st_run(const char *memory, int nthreads)
{
    struct iv_ctx *cx = setup_vm(1, st_prog, memory, nthreads, 37, ST_ITER);   /* short slices */
    struct wl_thread ts[4];
    init_threads(ts, nthreads, 46);
    run_threads(&VM, cx, ts, nthreads, 1);
    for (int t = 0; t < nthreads; t++)
        assert_int_equal(cx->th[t].vm[cx->th[t].cur].runs, 1);
    check_ok(&VM, cx, ts, nthreads);
    uint64_t allocs = 0, frees = 0;
    for (int t = 0; t < nthreads; t++) {
        allocs += cx->th[t].mem.allocs;
        frees += cx->th[t].mem.frees;
    }
    assert_true(allocs >= ST_ITER);                         /* the writer's boxes at least */
    assert_int_equal(allocs - frees, 1);                    /* x's value alone */
    VM.teardown(cx);
}

static void test_stress_readers(void **state)
{
    (void)state;
    for (int n = 2; n <= 4; n += 2) {
        st_run("biased", n);
        st_run("refcount", n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_owner_death_without_rmw),
        cmocka_unit_test(test_owner_zero_merges_while_another_counts),
        cmocka_unit_test(test_shared_flag_then_merge),
        cmocka_unit_test(test_biased_try_incref),
        cmocka_unit_test(test_refcount_try_incref),
        cmocka_unit_test(test_reuse_biased_count_fails),
        cmocka_unit_test(test_reuse_biased_given_back),
        cmocka_unit_test(test_reuse_refcount_given_back),
        cmocka_unit_test(test_reuse_refcount_shared),
        cmocka_unit_test(test_read_refused_version_moved),
        cmocka_unit_test(test_read_refused_lock_taken),
        cmocka_unit_test(test_read_refused_locked),
        cmocka_unit_test(test_read_refuses_list),
        cmocka_unit_test(test_read_small_int_and_box),
        cmocka_unit_test(test_freelist),
        cmocka_unit_test(test_stress_readers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
