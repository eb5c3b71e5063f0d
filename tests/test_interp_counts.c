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
 *  - the same, after the count left 0 and came back to it while the cell stayed in
 *    its limbo entry (issue 44): the reader's second reference was made after the
 *    entry's tag, and the object is not freed before it is applied;
 *  - a count that goes below 0 (a copy dropped before its increment is applied)
 *    under the flag and back: freed once, not leaked;
 *  - it reaches 0 for good: freed once, only after every running thread has passed a
 *    later epoch;
 *  - an object a block allocated and dropped is freed inside the block (no limbo);
 *  - a block that re-runs forgets the counts of its thrown-away run;
 *  - one thread makes every object and the other frees them all (issue 44's
 *    memcheck finding): the freer's spare cells go to the shared pool and the maker
 *    takes them there, so neither one's cells grow with the run, and no cell is lost
 *    or listed twice, a re-run's included.
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
/* A hook in iv_buf_reclaim, between its LIMBO -> DEAD CAS and its read of the stamp:
 * a test runs another thread's apply there (nothing at all elsewhere). */
struct iv_count;
static void (*after_dead)(struct iv_count *c);
#define IV_TEST_AFTER_DEAD(c) (after_dead ? after_dead(c) : (void)0)
#include "workloads/interp/vm.h"

#include "tests/stmbench_testutil.h"

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

struct world {
    struct iv_ctx *cx;
    struct iv_thread *a, *b;
    iv_olist_ref list;                  /* the program's shared list L */
};

/* nthreads VM threads, the first `started` of them running (their first epoch
 * published, as iv_thread_run_obj does); the others not started yet. */
static struct world setup_started(int nthreads, int started)
{
    const char *prog = tu_path(0, "counts.stm");
    tu_write(prog, ".global list L\n.expect len(L) = 0\nHALT\n");
    struct wl_args args = { .nthreads = nthreads };
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
    for (int t = 0; t < started; t++)
        atomic_store(&IV_BUFFERED(&w.cx->th[t].mem)->seen, atomic_load(&IV_BUFFERED_CTX(w.cx)->epoch));
    w.list = (iv_olist_ref)w.cx->objs[0];
    return w;
}

static struct world setup_world_n(int nthreads) { return setup_started(nthreads, nthreads); }
static struct world setup_world(void) { return setup_world_n(2); }

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

/* Applies and reclaims on both threads, in turn, `rounds` times. */
static void pass_epochs(struct world *w, int rounds)
{
    for (int r = 0; r < rounds; r++)
        for (int t = 0; t < 2; t++) {
            struct iv_thread *th = t ? w->b : w->a;
            iv_buf_apply(w->cx, th);
            iv_buf_reclaim(w->cx, th, false);
        }
}

/* Issue 44: the count leaves limbo's 0 and comes back to it while the cell is still
 * in A's limbo, under a tag older than B's second reference. Six steps; x in L, n 1. */
static void test_republished_reference_keeps_it(void **state)
{
    (void)state;
    struct world w = setup_world();
    iv_val x = a_publishes(&w);
    uint64_t e = atomic_load(&IV_BUFFERED_CTX(w.cx)->epoch);

    /* 1. B's block reads L[0] (+1 pending) and completes; B has not applied */
    iv_buf_begin(IV_BUFFERED(&w.b->mem));
    iv_val got = iv_olist_get(w.list, 0);
    assert_true(got == x);
    iv_buf_add(w.b, got, 1);

    /* 2. A pops x and applies -1: 0 -> LIMBO, tag e. A's reclaim moves the epoch to
     *    e+1 and frees nothing: B is still at e */
    iv_buf_begin(IV_BUFFERED(&w.a->mem));
    iv_buffered_decref(w.cx, w.a, vm_of(w.a), iv_olist_pop(w.list));
    iv_buf_apply(w.cx, w.a);
    assert_int_equal(count_of(x), IV_CNT_LIMBO);
    assert_int_equal(IV_BUFFERED(&w.a->mem)->nlimbo, 1);
    assert_int_equal(IV_BUFFERED(&w.a->mem)->limbo[0].tag, e);
    iv_buf_reclaim(w.cx, w.a, false);
    assert_int_equal(atomic_load(&IV_BUFFERED_CTX(w.cx)->epoch), e + 1);
    assert_int_equal(w.a->mem.gc_freed, 0);

    /* 3. B applies (LIMBO|1) and publishes e+1; B's next block puts x back into L
     *    (its stack's reference moves there: no count) */
    iv_buf_apply(w.cx, w.b);
    assert_int_equal(count_of(x), IV_CNT_LIMBO | 1);
    assert_int_equal(atomic_load(&IV_BUFFERED(&w.b->mem)->seen), e + 1);
    iv_buf_begin(IV_BUFFERED(&w.b->mem));
    assert_int_equal(iv_olist_append(w.list, got), 0);
    iv_buf_apply(w.cx, w.b);

    /* 4. B's next block reads L[0] again (+1 pending) and completes; not applied */
    iv_buf_begin(IV_BUFFERED(&w.b->mem));
    iv_val again = iv_olist_get(w.list, 0);
    assert_true(again == x);
    iv_buf_add(w.b, again, 1);

    /* 5. A pops x and applies -1: n is LIMBO again, no new entry. Every `seen` is past
     *    the entry's tag, but B's second reference was made after it: not freed */
    iv_buf_begin(IV_BUFFERED(&w.a->mem));
    iv_buffered_decref(w.cx, w.a, vm_of(w.a), iv_olist_pop(w.list));
    iv_buf_apply(w.cx, w.a);
    assert_int_equal(count_of(x), IV_CNT_LIMBO);
    iv_buf_reclaim(w.cx, w.a, false);
    assert_int_equal(w.a->mem.gc_freed, 0);
    assert_false(count_of(x) & IV_CNT_DEAD);
    assert_int_equal(((struct iv_box *)iv_vref(again))->value, 100000);

    /* 6. B applies its +1: on x's live cell; B's stack holds x (1) */
    iv_buf_apply(w.cx, w.b);
    assert_int_equal(count_of(x) & ~IV_CNT_LIMBO, 1);
    pass_epochs(&w, 3);
    assert_int_equal(count_of(x), 1);
    assert_int_equal(IV_BUFFERED(&w.a->mem)->nlimbo + IV_BUFFERED(&w.b->mem)->nlimbo, 0);
    assert_int_equal(((struct iv_box *)iv_vref(again))->value, 100000);

    /* B drops it at last: freed once, after the epochs */
    iv_buf_begin(IV_BUFFERED(&w.b->mem));
    iv_buffered_decref(w.cx, w.b, vm_of(w.b), again);
    pass_epochs(&w, 3);
    assert_int_equal(w.a->mem.gc_freed + w.b->mem.gc_freed, 1);
    assert_int_equal(IV_BUFFERED(&w.a->mem)->nlimbo + IV_BUFFERED(&w.b->mem)->nlimbo, 0);
    iv_teardown(w.cx);
}

/* The DEAD that the stamp undoes, stepped inside A's reclaim: issue 44's steps 1-5,
 * and B's pending +1 lands after A's CAS (on DEAD) and before A reads the stamp. The
 * undo is an addition, so the +1 stays: x is alive with B's count, out of limbo. */
static struct world *hook_world;
static void b_applies(struct iv_count *c)
{
    assert_int_equal(atomic_load(&c->n), IV_CNT_DEAD);
    iv_buf_apply(hook_world->cx, hook_world->b);
    assert_int_equal(atomic_load(&c->n), IV_CNT_DEAD | 1);
}

static void test_increment_lands_on_undone_dead(void **state)
{
    (void)state;
    struct world w = setup_world();
    iv_val x = a_publishes(&w);

    /* steps 1-4 of test_republished_reference_keeps_it */
    iv_buf_begin(IV_BUFFERED(&w.b->mem));
    iv_val got = iv_olist_get(w.list, 0);
    iv_buf_add(w.b, got, 1);
    iv_buf_begin(IV_BUFFERED(&w.a->mem));
    iv_buffered_decref(w.cx, w.a, vm_of(w.a), iv_olist_pop(w.list));
    iv_buf_apply(w.cx, w.a);
    iv_buf_reclaim(w.cx, w.a, false);
    iv_buf_apply(w.cx, w.b);
    iv_buf_begin(IV_BUFFERED(&w.b->mem));
    assert_int_equal(iv_olist_append(w.list, got), 0);
    iv_buf_apply(w.cx, w.b);
    iv_buf_begin(IV_BUFFERED(&w.b->mem));
    iv_buf_add(w.b, iv_olist_get(w.list, 0), 1);

    /* 5. A pops x and applies -1 (LIMBO); its reclaim's CAS takes x to DEAD, B applies
     *    in between, and the stamp undoes the DEAD */
    iv_buf_begin(IV_BUFFERED(&w.a->mem));
    iv_buffered_decref(w.cx, w.a, vm_of(w.a), iv_olist_pop(w.list));
    iv_buf_apply(w.cx, w.a);
    assert_int_equal(count_of(x), IV_CNT_LIMBO);
    hook_world = &w;
    after_dead = b_applies;
    iv_buf_reclaim(w.cx, w.a, false);
    after_dead = NULL;
    assert_int_equal(w.a->mem.gc_freed, 0);
    assert_int_equal(count_of(x), 1);                /* B's stack; out of limbo */
    assert_int_equal(IV_BUFFERED(&w.a->mem)->nlimbo, 0);
    pass_epochs(&w, 3);
    assert_int_equal(count_of(x), 1);
    assert_int_equal(w.a->mem.gc_freed + w.b->mem.gc_freed, 0);
    iv_teardown(w.cx);
}

/* A count below 0: B's copy of x is pending when A drops it, so A's decrements take
 * the count past 0 while the cell is in A's limbo (LIMBO - 1 borrows the flag's bit).
 * A's reclaim takes the flag off by subtraction (the count is then -1), and B's
 * increment, landing on 0, enters the cell in B's limbo: freed once, not leaked. */
static void test_count_below_zero_comes_back(void **state)
{
    (void)state;
    struct world w = setup_world();
    iv_val x = a_publishes(&w);

    /* x's first limbo, as in issue 44's steps 1-3: A's entry, tag e; B holds x */
    iv_buf_begin(IV_BUFFERED(&w.b->mem));
    iv_buf_add(w.b, iv_olist_get(w.list, 0), 1);
    iv_buf_begin(IV_BUFFERED(&w.a->mem));
    iv_buffered_decref(w.cx, w.a, vm_of(w.a), iv_olist_pop(w.list));
    iv_buf_apply(w.cx, w.a);
    iv_buf_reclaim(w.cx, w.a, false);
    iv_buf_apply(w.cx, w.b);
    iv_buf_apply(w.cx, w.a);
    assert_int_equal(count_of(x), IV_CNT_LIMBO | 1);

    /* B's block puts x back and a copy after it: L = [x, x], the copy's +1 pending */
    iv_buf_begin(IV_BUFFERED(&w.b->mem));
    assert_int_equal(iv_olist_append(w.list, x), 0);
    assert_int_equal(iv_olist_append(w.list, iv_olist_get(w.list, 0)), 0);
    iv_buf_add(w.b, x, 1);

    /* A pops and drops both: LIMBO, then LIMBO - 1 */
    iv_buf_begin(IV_BUFFERED(&w.a->mem));
    iv_buffered_decref(w.cx, w.a, vm_of(w.a), iv_olist_pop(w.list));
    iv_buffered_decref(w.cx, w.a, vm_of(w.a), iv_olist_pop(w.list));
    iv_buf_apply(w.cx, w.a);
    assert_int_equal(count_of(x), IV_CNT_LIMBO - 1);

    /* A's reclaim: the CAS fails (not LIMBO); the flag goes, the count is -1 */
    iv_buf_reclaim(w.cx, w.a, false);
    assert_int_equal(count_of(x), -1);
    assert_int_equal(IV_BUFFERED(&w.a->mem)->nlimbo, 0);
    assert_int_equal(w.a->mem.gc_freed, 0);

    /* B applies: 0, and x enters B's limbo; freed once the epochs pass */
    iv_buf_apply(w.cx, w.b);
    assert_int_equal(count_of(x), IV_CNT_LIMBO);
    assert_int_equal(IV_BUFFERED(&w.b->mem)->nlimbo, 1);
    pass_epochs(&w, 3);
    assert_int_equal(w.a->mem.gc_freed + w.b->mem.gc_freed, 1);
    assert_int_equal(IV_BUFFERED(&w.a->mem)->nlimbo + IV_BUFFERED(&w.b->mem)->nlimbo, 0);
    iv_teardown(w.cx);
}

/* ---- randomized: real threads through the scheme's functions ----
 *
 * 2, then 4 threads share L. A block runs under st_block (a slice alone, as under
 * gil or mutex) and does random reads of L (+1, the copy held by the thread), pops
 * (the reference moves to the thread), pushes of a held reference (it moves into L),
 * drops, and new boxes; some blocks first do a run that is thrown away (deltas
 * recorded, then forgotten). The apply runs outside st_block, as after a real block,
 * after a random pause (longer after a read: issue 44's window); the reclaim runs in
 * a block of its own (after a drop, as issue 44's A, and after one other block in
 * four), so its decisions race the other threads' applies, and a DEAD it undoes is
 * never seen by a check. Checked at every block, for each reference a thread holds:
 * its cell still names it and is not DEAD, and its box still holds the value it was
 * made with (under ASan a freed box is a report). At the end, with every thread done
 * and every limbo
 * drained: each object's count is the number of places in L that hold it, and the
 * objects alive (allocated less freed) are exactly the distinct ones in L. */
#define ST_THREADS 4                    /* at most; run with 2, then 4 */
#define ST_HELD 6
#define ST_BLOCKS 20000
#define ST_LEN 2

struct st_held {
    iv_val w;
    int64_t v;                          /* the box's value */
};
struct st_arg {
    struct world *w;
    struct iv_thread *th;
    unsigned seed;
    int role;                           /* 0: every operation; 1: makes and pushes
                                         * only; 2: reads, pops and drops only */
    int64_t maxlen;                     /* L's length at most (pushes stop there) */
    int blocks;
    struct st_held held[ST_HELD];
    int nheld;
};
static pthread_mutex_t st_block = PTHREAD_MUTEX_INITIALIZER;
static _Atomic long st_bad;

static void st_check(const struct st_held *h, const char *when)
{
    struct iv_count *c = iv_count_of(h->w);
    int64_t v = ((struct iv_box *)iv_vref(h->w))->value;
    int64_t n = atomic_load(&c->n);
    /* DEAD, give or take the deltas that landed on it (a count in limbo that went
     * below 0 is LIMBO less a little, far from DEAD) */
    bool dead = n > IV_CNT_DEAD - (1 << 20) && n < IV_CNT_DEAD + (1 << 20);
    if (c->obj != h->w || v != h->v || dead) {
        fprintf(stderr, "stress: %s: held %#llx: cell %#llx names %#llx, value %lld (made %lld)\n",
                when, (unsigned long long)h->w, (unsigned long long)n,
                (unsigned long long)c->obj, (long long)v, (long long)h->v);
        atomic_fetch_add(&st_bad, 1);
    }
}

/* One block's operations (under st_block). */
static unsigned st_ops(struct st_arg *a)
{
    unsigned did = 0;                     /* 1: read, 2: dropped */
    struct iv_thread *th = a->th;
    struct iv_vm *vm = vm_of(th);
    int nops = 1 + (int)(rand_r(&a->seed) % 4);
    for (int k = 0; k < nops; k++) {
        int64_t len = iv_olist_len(a->w->list);
        /* weights: read 4, pop 2, push 3, drop 1, new 1, pop and drop 2; L stays short
         * (ST_LEN), so that the same objects go back and forth */
        static const int op[3][13] = {
            { 0, 0, 0, 0, 1, 1, 2, 2, 2, 3, 4, 5, 5 },
            { 4, 4, 4, 4, 4, 4, 2, 2, 2, 2, 2, 2, 2 },   /* the maker */
            { 0, 0, 1, 1, 3, 3, 3, 5, 5, 5, 5, 5, 5 },   /* the freer */
        };
        switch (op[a->role][rand_r(&a->seed) % 13]) {
        case 0:                                   /* read L[i]: a copy, counted */
            if (len > 0 && a->nheld < ST_HELD) {
                iv_val x = iv_olist_get(a->w->list, (int64_t)(rand_r(&a->seed) % (unsigned)len));
                iv_buf_add(th, x, 1);
                a->held[a->nheld++] = (struct st_held){ x, ((struct iv_box *)iv_vref(x))->value };
                did |= 1;
            }
            break;
        case 1:                                   /* pop: L's reference moves here */
            if (len > 0 && a->nheld < ST_HELD) {
                iv_val x = iv_olist_pop(a->w->list);
                a->held[a->nheld++] = (struct st_held){ x, ((struct iv_box *)iv_vref(x))->value };
            }
            break;
        case 2:                                   /* push a held reference into L */
            if (a->nheld > 0 && len < a->maxlen) {
                int i = (int)(rand_r(&a->seed) % (unsigned)a->nheld);
                if (iv_olist_append(a->w->list, a->held[i].w) != 0)
                    atomic_fetch_add(&st_bad, 1);     /* not full: no assert here */
                a->held[i] = a->held[--a->nheld];
            }
            break;
        case 3:                                   /* drop a held reference */
            if (a->nheld > 0) {
                int i = (int)(rand_r(&a->seed) % (unsigned)a->nheld);
                iv_buffered_decref(a->w->cx, th, vm, a->held[i].w);
                a->held[i] = a->held[--a->nheld];
                did |= 2;
            }
            break;
        case 5:                                   /* pop and drop: L's reference goes */
            if (len > 0) {
                iv_buffered_decref(a->w->cx, th, vm, iv_olist_pop(a->w->list));
                did |= 2;
            }
            break;
        case 4:                                   /* a new box, held */
            if (a->nheld < ST_HELD) {
                int64_t v = 1000000 + (int64_t)rand_r(&a->seed);
                a->held[a->nheld++] = (struct st_held){ iv_new_box(IV_MEM_BUFFERED, a->w->cx, th, v), v };
            }
            break;
        }
    }
    return did;
}

static void *st_thread(void *p)
{
    struct st_arg *a = p;
    struct iv_thread *th = a->th;
    for (int b = 0; b < a->blocks; b++) {
        pthread_mutex_lock(&st_block);
        for (int i = 0; i < a->nheld; i++)
            st_check(&a->held[i], "block start");
        iv_buf_begin(IV_BUFFERED(&th->mem));
        if (rand_r(&a->seed) % 8 == 0) {          /* a run thrown away: counts only */
            int64_t len = iv_olist_len(a->w->list);
            for (int64_t i = 0; i < len; i += 2)
                iv_buf_add(th, iv_olist_get(a->w->list, i), 1);
            for (int i = 0; i < a->nheld; i++)
                iv_buf_add(th, a->held[i].w, -1);
            iv_buf_begin(IV_BUFFERED(&th->mem));
        }
        unsigned did = st_ops(a);
        iv_buf_settle(th, vm_of(th));
        pthread_mutex_unlock(&st_block);
        /* the gap between a block's end and its apply: none, a few yields, or a sleep,
         * more often after a read (an increment pending: issue 44's window) */
        unsigned gap = rand_r(&a->seed) % 8;
        if (gap == 0 || ((did & 1) && gap < 4))
            usleep(rand_r(&a->seed) % 128);
        for (; gap > 4; gap--)
            sched_yield();
        /* the apply; a reclaim after a drop and after one other block in four */
        iv_buf_apply(a->w->cx, th);
        if ((did & 2) || rand_r(&a->seed) % 4 == 0) {
            pthread_mutex_lock(&st_block);
            iv_buf_reclaim(a->w->cx, th, false);
            pthread_mutex_unlock(&st_block);
        }
    }
    pthread_mutex_lock(&st_block);                /* the last block drops what it holds */
    iv_buf_begin(IV_BUFFERED(&th->mem));
    for (int i = 0; i < a->nheld; i++) {
        st_check(&a->held[i], "last block");
        iv_buffered_decref(a->w->cx, th, vm_of(th), a->held[i].w);
    }
    a->nheld = 0;
    pthread_mutex_unlock(&st_block);
    iv_buf_after(a->w->cx, th);
    return NULL;
}

/* The cells of the first nthreads threads' slabs, each found in exactly one place: a
 * thread's free list (DEAD, none taken), the shared pool (DEAD), or a live object's
 * header (not DEAD, naming it). Fails on a cell listed twice, a free one not DEAD or
 * a listed cell of no slab. Returns the live cells. */
static size_t check_cells(struct world *w, int nthreads)
{
    size_t nslabs = 0;
    for (int t = 0; t < nthreads; t++)
        nslabs += IV_BUFFERED(&w->cx->th[t].mem)->nslabs;
    struct iv_count **slab = calloc(nslabs + 1, sizeof *slab);
    unsigned char *seen = calloc(nslabs * IV_CELL_SLAB + 1, 1);
    assert_non_null(slab);
    assert_non_null(seen);
    size_t k = 0;
    for (int t = 0; t < nthreads; t++) {
        struct iv_buffered_thread *m = IV_BUFFERED(&w->cx->th[t].mem);
        for (size_t s = 0; s < m->nslabs; s++)
            slab[k++] = m->slabs[s];
    }
#define CELL_LISTED(c)                                                                  \
    do {                                                                                \
        struct iv_count *c_ = (c);                                                      \
        size_t s_ = 0;                                                                  \
        while (s_ < nslabs && !(c_ >= slab[s_] && c_ < slab[s_] + IV_CELL_SLAB))        \
            s_++;                                                                       \
        if (s_ == nslabs)                                                               \
            fail_msg("a free cell %p of no slab", (void *)c_);                         \
        size_t at_ = s_ * IV_CELL_SLAB + (size_t)(c_ - slab[s_]);                       \
        if (seen[at_]++)                                                                \
            fail_msg("cell %p listed twice", (void *)c_);                              \
        assert_int_equal(atomic_load(&c_->n), IV_CNT_DEAD);                             \
    } while (0)
    for (int t = 0; t < nthreads; t++) {
        struct iv_buffered_thread *m = IV_BUFFERED(&w->cx->th[t].mem);
        assert_int_equal(m->ctaken, 0);
        for (size_t i = 0; i < m->ncfree; i++)
            CELL_LISTED(m->cfree[i]);
    }
    for (struct iv_cell_batch *b = atomic_load(&IV_BUFFERED_CTX(w->cx)->pool); b; b = b->next)
        for (size_t i = 0; i < IV_CELL_SLAB; i++)
            CELL_LISTED(b->c[i]);
#undef CELL_LISTED
    size_t live = 0;
    for (size_t s = 0; s < nslabs; s++)
        for (size_t i = 0; i < IV_CELL_SLAB; i++)
            if (!seen[s * IV_CELL_SLAB + i]) {
                struct iv_count *c = &slab[s][i];
                assert_false(atomic_load(&c->n) & IV_CNT_DEAD);
                assert_true(iv_count_of(c->obj) == c);
                live++;
            }
    free(slab);
    free(seen);
    return live;
}

static size_t pool_batches(struct world *w)
{
    size_t n = 0;
    for (struct iv_cell_batch *b = atomic_load(&IV_BUFFERED_CTX(w->cx)->pool); b; b = b->next)
        n++;
    return n;
}

/* Issue 44's memcheck finding, stepped: A's blocks make every object (600 boxes into
 * L), B's pop and drop them all, and B's reclaims free them, so A's cells land on
 * B's free list. B keeps at most IV_CELL_KEEP and a batch; the rest goes to the pool,
 * and A takes from there before it mallocs: A stops making slabs. Every round also
 * checks that each cell is in one place only; some of A's blocks take 1,000 cells
 * (from the pool) in a run that is thrown away and 600 in its re-run, and the 400
 * left over are free again (I4). */
static void test_one_sided_frees_share_cells(void **state)
{
    (void)state;
    struct world w = setup_world();
    struct iv_buffered_thread *ma = IV_BUFFERED(&w.a->mem), *mb = IV_BUFFERED(&w.b->mem);
    size_t slabs_at_half = 0, most_in_pool = 0;
    int rounds = 48, per = 600;                    /* not a batch's divisor: takes mid-block */
    for (int r = 0; r < rounds; r++) {
        iv_buf_begin(ma);
        if (r >= 16 && r % 8 == 5) {                /* a run that aborts, with more */
            enum { MORE = 1000 };                   /* cells than its re-run takes */
            iv_val x[MORE];
            for (int i = 0; i < MORE; i++) {
                x[i] = iv_new_box(IV_MEM_BUFFERED, w.cx, w.a, 200000 + i);
                assert_int_equal(iv_olist_append(w.list, x[i]), 0);
            }
            for (int i = 0; i < MORE; i++)          /* the rollback, by hand */
                iv_olist_pop(w.list);
            for (int i = 0; i < MORE; i++)
                SYNC_FREE(iv_vref(x[i]));
            w.a->mem.allocs -= MORE;
            iv_buf_begin(ma);                      /* the re-run: its 400 left over are free */
        }
        for (int i = 0; i < per; i++)
            assert_int_equal(iv_olist_append(w.list, iv_new_box(IV_MEM_BUFFERED, w.cx, w.a, 100000 + i)), 0);
        iv_buf_settle(w.a, vm_of(w.a));
        iv_buf_apply(w.cx, w.a);
        assert_int_equal(check_cells(&w, 2), (size_t)per);

        iv_buf_begin(mb);
        while (iv_olist_len(w.list) > 0)
            iv_buffered_decref(w.cx, w.b, vm_of(w.b), iv_olist_pop(w.list));
        iv_buf_apply(w.cx, w.b);
        assert_int_equal(mb->nlimbo, (size_t)per);
        pass_epochs(&w, 3);
        assert_int_equal(ma->nlimbo + mb->nlimbo, 0);
        assert_int_equal(w.b->mem.gc_freed, (uint64_t)(r + 1) * (uint64_t)per);

        assert_int_equal(check_cells(&w, 2), 0);
        assert_true(mb->ncfree <= IV_CELL_KEEP + IV_CELL_SLAB);
        assert_int_equal(mb->nslabs, 0);
        size_t pooled = pool_batches(&w);
        most_in_pool = pooled > most_in_pool ? pooled : most_in_pool;
        if (r == rounds / 2 - 1)
            slabs_at_half = ma->nslabs;
    }
    assert_true(most_in_pool > 0);
    /* A's slabs: what B keeps, one batch and A's one round; none after the first half */
    assert_int_equal(ma->nslabs, slabs_at_half);
    assert_true(ma->nslabs <= (IV_CELL_KEEP + 2 * IV_CELL_SLAB) / IV_CELL_SLAB + 1);
    assert_int_equal(w.a->mem.allocs, (uint64_t)rounds * (uint64_t)per);
    iv_teardown(w.cx);
}

/* The pool's lock, raced: 4 threads with 7 slabs' worth of free cells each, each
 * taking a batch from the pool onto its list and handing its spare cells back, 100,000
 * times, with no other lock (in the tests above blocks run one at a time). Then every
 * cell is in one place: a batch pushed twice, lost, or popped by two threads at once
 * shows as a cell listed twice or missing. */
#define POOL_THREADS 4
#define POOL_ROUNDS 100000
struct pool_arg {
    struct world *w;
    struct iv_thread *th;
    unsigned long takes;
};
static void *pool_thread(void *p)
{
    struct pool_arg *a = p;
    struct iv_buffered_thread *m = IV_BUFFERED(&a->th->mem);
    for (int r = 0; r < POOL_ROUNDS; r++) {
        struct iv_cell_batch *b = iv_cells_from_pool(a->w->cx);
        if (b) {
            iv_vgrow((void **)&m->cfree, &m->capcfree, m->ncfree + IV_CELL_SLAB, sizeof *m->cfree);
            memcpy(m->cfree + m->ncfree, b->c, sizeof b->c);
            m->ncfree += IV_CELL_SLAB;
            free(b);
            a->takes++;
        }
        iv_cells_give(a->w->cx, m);
    }
    return NULL;
}
static void test_pool_lock_raced(void **state)
{
    (void)state;
    struct world w = setup_world_n(POOL_THREADS);
    for (int t = 0; t < POOL_THREADS; t++) {          /* 7 slabs each, all free */
        struct iv_buffered_thread *m = IV_BUFFERED(&w.cx->th[t].mem);
        iv_buf_begin(m);
        for (int i = 0; i < 7 * IV_CELL_SLAB; i++)
            iv_cell_take(w.cx, m);
        iv_buf_begin(m);                              /* thrown away: free again */
        assert_int_equal(m->nslabs, 7);
    }
    struct pool_arg args[POOL_THREADS];
    pthread_t tids[POOL_THREADS];
    for (int t = 0; t < POOL_THREADS; t++) {
        args[t] = (struct pool_arg){ .w = &w, .th = &w.cx->th[t] };
        assert_int_equal(pthread_create(&tids[t], NULL, pool_thread, &args[t]), 0);
    }
    /* A batch popped twice is freed twice, and the allocator can then spin for good:
     * a liveness guard (the runs take a second or two), not a speed goal. */
    for (int t = 0; t < POOL_THREADS; t++) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 60;
        if (pthread_timedjoin_np(tids[t], NULL, &until) != 0) {
            fprintf(stderr, "test_pool_lock_raced: thread %d still running after 60 s "
                            "(the pool's lists are broken)\n", t);
            _exit(1);
        }
    }
    unsigned long takes = 0;
    for (int t = 0; t < POOL_THREADS; t++)
        takes += args[t].takes;
    assert_true(takes >= POOL_ROUNDS);                /* the pool was in use */
    assert_int_equal(check_cells(&w, POOL_THREADS), 0);
    size_t cells = 0;
    for (int t = 0; t < POOL_THREADS; t++)
        cells += IV_BUFFERED(&w.cx->th[t].mem)->ncfree;
    assert_int_equal(cells + pool_batches(&w) * IV_CELL_SLAB, (size_t)POOL_THREADS * 7 * IV_CELL_SLAB);
    iv_teardown(w.cx);
}

/* nthreads threads; one_sided: thread 0 only makes objects and pushes them, the
 * others only read, pop and drop (the frees are all theirs: issue 44's memcheck). */
static void st_run(int nthreads, bool one_sided)
{
    struct world w = setup_world_n(nthreads);
    struct st_arg args[ST_THREADS];
    pthread_t tids[ST_THREADS];
    atomic_store(&st_bad, 0);
    for (int t = 0; t < nthreads; t++) {
        args[t] = (struct st_arg){ .w = &w, .th = &w.cx->th[t], .seed = 4400u + (unsigned)t,
                                   .role = one_sided ? (t == 0 ? 1 : 2) : 0,
                                   .maxlen = one_sided ? 64 : ST_LEN,
                                   .blocks = one_sided ? 4 * ST_BLOCKS : ST_BLOCKS };
        assert_int_equal(pthread_create(&tids[t], NULL, st_thread, &args[t]), 0);
    }
    for (int t = 0; t < nthreads; t++)
        assert_int_equal(pthread_join(tids[t], NULL), 0);
    assert_int_equal(atomic_load(&st_bad), 0);

    /* drain: every thread applies and reclaims until no limbo is left */
    size_t left = 1;
    for (int r = 0; r < 16 && left; r++) {
        left = 0;
        for (int t = 0; t < nthreads; t++) {
            iv_buf_apply(w.cx, &w.cx->th[t]);
            iv_buf_reclaim(w.cx, &w.cx->th[t], false);
        }
        for (int t = 0; t < nthreads; t++)
            left += IV_BUFFERED(&w.cx->th[t].mem)->nlimbo;
    }
    assert_int_equal(left, 0);

    /* each object's count is its places in L; the live objects are L's distinct ones */
    int64_t len = iv_olist_len(w.list);
    uint64_t alive = 0, distinct = 0;
    for (int t = 0; t < nthreads; t++) {
        struct iv_mem *m = &w.cx->th[t].mem;
        alive += m->allocs - m->frees - m->gc_freed;
    }
    for (int64_t i = 0; i < len; i++) {
        iv_val x = iv_olist_get(w.list, i);
        int64_t places = 0, first = -1;
        for (int64_t j = 0; j < len; j++)
            if (iv_olist_get(w.list, j) == x) {
                places++;
                first = first < 0 ? j : first;
            }
        distinct += first == i;
        assert_int_equal(count_of(x), places);
        assert_true(iv_count_of(x)->obj == x);
    }
    assert_int_equal(alive, distinct);
    /* every cell in one place, the live ones L's objects */
    assert_int_equal(check_cells(&w, nthreads), distinct);
    if (one_sided) {
        /* The maker's slabs are bounded by what the freers may keep (IV_CELL_KEEP and
         * the batch on top, each), the pool, L and the held references, not by the
         * objects made. A freer makes no slab: it reads, pops and drops only. */
        size_t made = IV_BUFFERED(&w.cx->th[0].mem)->nslabs;
        size_t bound = (size_t)(nthreads - 1) * (IV_CELL_KEEP + 2 * IV_CELL_SLAB) / IV_CELL_SLAB + 2;
        uint64_t objects = w.cx->th[0].mem.allocs;
        fprintf(stderr, "one-sided, %d threads: %zu slabs for %llu objects (bound %zu)\n", nthreads, made,
                (unsigned long long)objects, bound);
        if (made > bound || objects < 2 * bound * IV_CELL_SLAB)   /* without the pool: >= 2x */
            fail_msg("one-sided, %d threads: the maker made %zu slabs for %llu objects "
                     "(bound %zu; %zu batches in the pool)", nthreads, made,
                     (unsigned long long)objects, bound, pool_batches(&w));
        for (int t = 1; t < nthreads; t++)
            assert_int_equal(IV_BUFFERED(&w.cx->th[t].mem)->nslabs, 0);
    }
    iv_teardown(w.cx);
}

static void test_stress_threads(void **state)
{
    (void)state;
    st_run(2, false);
    st_run(4, false);
}

/* The one-sided stress: threads as above, the maker alone, the frees the others'. */
static void test_stress_one_sided(void **state)
{
    (void)state;
    st_run(2, true);
    st_run(4, true);
}

/* A thread that has not started yet holds every limbo back: its first block may
 * read what a reclaim that ran just before it published would free. */
static void test_unstarted_thread_holds(void **state)
{
    (void)state;
    struct world w = setup_started(2, 1);              /* B not started */
    iv_val x = a_publishes(&w);
    iv_buf_begin(IV_BUFFERED(&w.a->mem));
    iv_buffered_decref(w.cx, w.a, vm_of(w.a), iv_olist_pop(w.list));
    iv_buf_apply(w.cx, w.a);
    for (int r = 0; r < 3; r++) {
        iv_buf_reclaim(w.cx, w.a, false);
        iv_buf_apply(w.cx, w.a);
    }
    assert_int_equal(w.a->mem.gc_freed, 0);
    assert_int_equal(count_of(x), IV_CNT_LIMBO);
    /* B starts (iv_thread_run_obj's store), at an epoch past the entry's (A's
     * reclaims moved it): B's blocks come after x left L, and x goes */
    atomic_store(&IV_BUFFERED(&w.b->mem)->seen, atomic_load(&IV_BUFFERED_CTX(w.cx)->epoch));
    assert_true(atomic_load(&IV_BUFFERED(&w.b->mem)->seen) > IV_BUFFERED(&w.a->mem)->limbo[0].tag);
    iv_buf_reclaim(w.cx, w.a, false);
    assert_int_equal(w.a->mem.gc_freed, 1);
    assert_int_equal(IV_BUFFERED(&w.a->mem)->nlimbo, 0);
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

/* The cells of a thread's slabs not marked free (the teardown frees their objects). */
static size_t live_cells(struct iv_thread *th)
{
    struct iv_buffered_thread *m = IV_BUFFERED(&th->mem);
    size_t n = 0;
    for (size_t s = 0; s < m->nslabs; s++)
        for (size_t i = 0; i < IV_CELL_SLAB; i++)
            if (!(atomic_load(&((struct iv_count *)m->slabs[s])[i].n) & IV_CNT_DEAD))
                n++;
    return n;
}

/* A block takes two cells, aborts (the STM rolls back its append and its allocations),
 * and its re-run takes one: the other is free again, not a cell naming what the abort
 * freed (the teardown would free it a second time). Found by the second reading. */
static void test_rerun_takes_fewer_cells(void **state)
{
    (void)state;
    struct world w = setup_world();
    iv_buf_begin(IV_BUFFERED(&w.a->mem));                 /* the run that aborts */
    iv_val x = iv_new_box(IV_MEM_BUFFERED, w.cx, w.a, 100000);
    iv_val y = iv_new_box(IV_MEM_BUFFERED, w.cx, w.a, 100001);
    assert_int_equal(iv_olist_append(w.list, x), 0);
    iv_olist_pop(w.list);                                 /* the rollback, by hand */
    SYNC_FREE(iv_vref(x));
    SYNC_FREE(iv_vref(y));
    iv_buf_begin(IV_BUFFERED(&w.a->mem));                 /* the re-run: one box */
    iv_val x2 = iv_new_box(IV_MEM_BUFFERED, w.cx, w.a, 100000);
    assert_int_equal(iv_olist_append(w.list, x2), 0);
    iv_buf_settle(w.a, vm_of(w.a));
    iv_buf_apply(w.cx, w.a);
    assert_int_equal(count_of(x2), 1);
    assert_int_equal(live_cells(w.a), 1);
    iv_teardown(w.cx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pending_increment_keeps_it),
        cmocka_unit_test(test_republished_reference_keeps_it),
        cmocka_unit_test(test_increment_lands_on_undone_dead),
        cmocka_unit_test(test_count_below_zero_comes_back),
        cmocka_unit_test(test_stress_threads),
        cmocka_unit_test(test_stress_one_sided),
        cmocka_unit_test(test_one_sided_frees_share_cells),
        cmocka_unit_test(test_pool_lock_raced),
        cmocka_unit_test(test_finished_thread_does_not_hold),
        cmocka_unit_test(test_unstarted_thread_holds),
        cmocka_unit_test(test_dead_at_end_freed_in_block),
        cmocka_unit_test(test_rerun_forgets_counts),
        cmocka_unit_test(test_rerun_takes_fewer_cells),
        cmocka_unit_test(test_module_lookup_cache),
        cmocka_unit_test(test_abandoned_stack_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
