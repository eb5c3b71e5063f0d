/*
 * tests/test_interp_queue.c - interp's side queue under stm (workloads/interp/queue.h,
 * its invariants Q1-Q4), stepped.
 *
 * queue.h is compiled here as the stm copy of the interpreter compiles it (SYNC_RT stm,
 * SYNC_RT_STM: IV_QUEUE_SIDE 1), without the rest of the VM: the tests call iv_txq_*
 * themselves, as the slice does (iv_txq_attempt at the start of every attempt,
 * iv_txq_put and iv_txq_get inside it, iv_txq_done after the commit: loop_obj.h).
 *
 * The protocol (one OS thread plays the VM threads A and B, each a struct
 * iv_txq_thread; the values are small ints, which take no refresh, so no runtime runs):
 *  - a put is invisible until its attempt's done, then the puts come out in order;
 *  - an attempt's get that aborts gives the value back to the ring's head once, in
 *    order, however many times the attempt restarts;
 *  - a get from an empty ring takes the attempt's own oldest put to that queue (not a
 *    put to another queue), which done then does not publish; a restart drops puts;
 *  - a get racing the putter's commit: empty before done, the puts in order after.
 * The refresh (the real stm runtime, two OS threads stepped with semaphores): B's
 * transaction, with a snapshot older than A's commit of a new box, takes the box from
 * the ring and reads what A committed; when A's commit also wrote what B had read, the
 * get's refresh aborts B, and the box goes back to the ring for B's retry.
 *
 * Mutations of queue.h, each run once against this file (a mutated copy of queue.h,
 * built, run, failed as listed):
 *  - iv_txq_done appends with iv_txq_push_front: put_invisible_until_done,
 *    give_back_exactly_once and get_racing_the_commit fail (newest first);
 *  - iv_txq_put pushes onto the ring at once (iv_txq_push_back(q, w) for its record):
 *    put_invisible_until_done, own_put_taken_not_published and get_racing_the_commit
 *    fail (B sees the put before A's done);
 *  - iv_txq_attempt gives back with iv_txq_push_back: give_back_exactly_once fails
 *    (the ring comes back 2, 1);
 *  - iv_txq_attempt without `tq->ngot = 0`: give_back_exactly_once fails (the second
 *    restart gives 1 and 2 back again: each in two places);
 *  - iv_txq_get without its record in `got`: put_invisible_until_done,
 *    give_back_exactly_once and both refresh tests fail (refresh_conflict: the value
 *    is lost with the aborted attempt);
 *  - iv_txq_get's fallback without `tq->put[i].q = NULL`: own_put_taken_not_published
 *    fails (done publishes the put the get took);
 *  - iv_txq_get's fallback matching any put (`if (tq->put[i].q)`):
 *    own_put_taken_not_published fails (the get takes the put to the other queue);
 *  - iv_txq_done without `if (!q) continue;`: own_put_taken_not_published crashes
 *    (a taken put's NULL queue is locked);
 *  - iv_txq_get's stm_refresh() replaced by (void)0: refresh_shows_the_putters_commit
 *    fails (B reads N as 0, its snapshot's bytes) and
 *    refresh_conflict_gives_the_value_back fails (no abort: B commits read-only, having
 *    read M = 1).
 */
#define SYNC_RT stm
#define SYNC_RT_STM 1
#include "runtime/sync.h"
#include "runtime/stm/stm_internal.h"

/* Run inside iv_txq_get between its take and its refresh, when set. */
static void (*taken_hook)(uint64_t w_taken);   /* w_taken: an iv_val */
#define IV_TEST_TXQ_TAKEN(q, w) (taken_hook ? taken_hook(w) : (void)0)

/* base.h's static helpers that queue.h does not call are unused here */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "workloads/interp/box.h"
#include "workloads/interp/queue.h"
#pragma GCC diagnostic pop

#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

/* ---- the protocol, one OS thread ---- */

static struct iv_txq *Q, *R;               /* two declared queues */
static struct iv_txq_thread ta, tb;        /* VM threads A and B */

static iv_val V(int64_t k) { return iv_small(k); }

static void proto_up(void)
{
    Q = iv_txq_new();
    R = iv_txq_new();
    memset(&ta, 0, sizeof ta);
    memset(&tb, 0, sizeof tb);
}

static void proto_down(void)
{
    iv_txq_free(Q);
    iv_txq_free(R);
    free(ta.put);
    free(ta.got);
    free(tb.put);
    free(tb.got);
}

/* Q4's view of a ring: its values from the head (no other thread runs). */
static int64_t ring_len(const struct iv_txq *q)
{
    return atomic_load_explicit(&q->n, memory_order_relaxed);
}

static iv_val ring_at(const struct iv_txq *q, int64_t i)
{
    return q->ring[(q->head + i) & (q->cap - 1)];
}

/* The ring holds exactly the n values of want, head first. */
static void assert_ring(const struct iv_txq *q, const int64_t *want, int64_t n)
{
    assert_int_equal(ring_len(q), n);
    for (int64_t i = 0; i < n; i++)
        assert_int_equal(ring_at(q, i), V(want[i]));
}

/* Q1: the places value v is in: q's ring, either thread's taken list, either thread's
 * live puts (a put a get took back is the getter's now, counted by the caller). */
static int places(const struct iv_txq *q, iv_val v)
{
    int c = 0;
    for (int64_t i = 0; i < ring_len(q); i++)
        c += ring_at(q, i) == v;
    const struct iv_txq_thread *ts[2] = { &ta, &tb };
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < ts[t]->ngot; i++)
            c += ts[t]->got[i].v == v;
        for (size_t i = 0; i < ts[t]->nput; i++)
            c += ts[t]->put[i].q != NULL && ts[t]->put[i].v == v;
    }
    return c;
}

/* Values committed into the ring by a third VM thread P: an attempt, the puts, done. */
static void committed_puts(struct iv_txq *q, const int64_t *vals, int n)
{
    struct iv_txq_thread tp;
    memset(&tp, 0, sizeof tp);
    iv_txq_attempt(&tp);
    for (int i = 0; i < n; i++)
        assert_int_equal(iv_txq_put(&tp, q, V(vals[i])), 0);
    iv_txq_done(&tp);
    free(tp.put);
    free(tp.got);
}

/* 1a: A's puts are A's until its done; then B gets them, oldest first. */
static void test_put_invisible_until_done(void **state)
{
    (void)state;
    proto_up();
    iv_txq_attempt(&ta);
    iv_txq_attempt(&tb);
    for (int64_t k = 1; k <= 3; k++)
        assert_int_equal(iv_txq_put(&ta, Q, V(k)), 0);
    assert_int_equal(ring_len(Q), 0);
    assert_int_equal(iv_txq_get(&tb, Q), 0);        /* not B's to see yet */
    assert_int_equal(tb.ngot, 0);
    iv_txq_done(&ta);                               /* A committed */
    assert_int_equal(ta.nput, 0);
    assert_ring(Q, (const int64_t[]){ 1, 2, 3 }, 3);
    assert_ring(R, NULL, 0);
    for (int64_t k = 1; k <= 3; k++)
        assert_int_equal(iv_txq_get(&tb, Q), V(k));
    assert_int_equal(iv_txq_get(&tb, Q), 0);
    assert_int_equal(tb.ngot, 3);
    assert_int_equal(tb.gets, 3);
    iv_txq_done(&tb);                               /* B committed: its takes stay taken */
    assert_int_equal(tb.ngot, 0);
    assert_int_equal(ring_len(Q), 0);
    assert_int_equal(tb.given_back, 0);
    proto_down();
}

/* 1b: ring [1, 2, 3]; A takes 1 and 2, B takes 3; A restarts: 1 and 2 go back to the
 * head, in order; A restarts again before any get: nothing more goes back. B commits,
 * A's retry takes 1 and 2 again and commits: each value was in one place throughout,
 * and each committed transaction got distinct values. */
static void test_give_back_exactly_once(void **state)
{
    (void)state;
    proto_up();
    committed_puts(Q, (const int64_t[]){ 1, 2, 3 }, 3);
    iv_txq_attempt(&ta);
    iv_txq_attempt(&tb);
    assert_int_equal(iv_txq_get(&ta, Q), V(1));
    assert_int_equal(iv_txq_get(&ta, Q), V(2));
    assert_int_equal(iv_txq_get(&tb, Q), V(3));
    assert_int_equal(ring_len(Q), 0);
    for (int64_t k = 1; k <= 3; k++)
        assert_int_equal(places(Q, V(k)), 1);

    iv_txq_attempt(&ta);                            /* A aborted */
    assert_ring(Q, (const int64_t[]){ 1, 2 }, 2);
    assert_int_equal(ta.ngot, 0);
    assert_int_equal(ta.given_back, 2);
    iv_txq_attempt(&ta);                            /* and again, before any get */
    assert_ring(Q, (const int64_t[]){ 1, 2 }, 2);
    assert_int_equal(ta.given_back, 2);
    for (int64_t k = 1; k <= 3; k++)
        assert_int_equal(places(Q, V(k)), 1);

    iv_txq_done(&tb);                               /* B committed with 3 */
    assert_int_equal(places(Q, V(3)), 0);
    assert_int_equal(iv_txq_get(&ta, Q), V(1));
    assert_int_equal(iv_txq_get(&ta, Q), V(2));
    assert_int_equal(iv_txq_get(&ta, Q), 0);
    iv_txq_done(&ta);                               /* A committed with 1 and 2 */
    for (int64_t k = 1; k <= 3; k++)
        assert_int_equal(places(Q, V(k)), 0);
    assert_int_equal(ring_len(Q), 0);
    assert_int_equal(ta.gets + tb.gets, 5);         /* 3 values, 2 of them twice */
    proto_down();
}

/* 1c: with Q's ring empty, A's get takes A's oldest put to Q (not its put to R, made
 * before it) and done publishes only what was not taken; with Q's ring not empty the
 * ring comes first; a restart drops the puts. */
static void test_own_put_taken_not_published(void **state)
{
    (void)state;
    proto_up();
    iv_txq_attempt(&ta);
    assert_int_equal(iv_txq_put(&ta, R, V(7)), 0);
    assert_int_equal(iv_txq_put(&ta, Q, V(1)), 0);
    assert_int_equal(iv_txq_put(&ta, Q, V(2)), 0);
    assert_int_equal(iv_txq_get(&ta, Q), V(1));
    assert_int_equal(ta.ngot, 0);                   /* not from a ring: nothing to give back */
    assert_int_equal(ta.gets, 0);
    iv_txq_done(&ta);
    assert_ring(Q, (const int64_t[]){ 2 }, 1);
    assert_ring(R, (const int64_t[]){ 7 }, 1);

    iv_txq_attempt(&ta);                            /* Q's ring is [2] */
    assert_int_equal(iv_txq_put(&ta, Q, V(3)), 0);
    assert_int_equal(iv_txq_get(&ta, Q), V(2));     /* the ring's head first */
    assert_int_equal(iv_txq_get(&ta, Q), V(3));     /* then the own put */
    assert_int_equal(iv_txq_get(&ta, Q), 0);
    iv_txq_done(&ta);
    assert_ring(Q, NULL, 0);

    iv_txq_attempt(&ta);
    assert_int_equal(iv_txq_put(&ta, Q, V(5)), 0);
    assert_int_equal(iv_txq_put(&ta, R, V(6)), 0);
    iv_txq_attempt(&ta);                            /* A aborted: its puts are gone */
    assert_int_equal(ta.nput, 0);
    assert_int_equal(iv_txq_get(&ta, Q), 0);
    iv_txq_done(&ta);
    assert_ring(Q, NULL, 0);
    assert_ring(R, (const int64_t[]){ 7 }, 1);
    assert_int_equal(ta.given_back, 0);
    proto_down();
}

/* 1d: A puts x and y; B's get runs before A's done and finds nothing; after it, B's
 * next gets take x, then y. */
static void test_get_racing_the_commit(void **state)
{
    (void)state;
    proto_up();
    iv_txq_attempt(&ta);
    iv_txq_attempt(&tb);
    assert_int_equal(iv_txq_put(&ta, Q, V(11)), 0);
    assert_int_equal(iv_txq_put(&ta, Q, V(12)), 0);
    assert_int_equal(iv_txq_get(&tb, Q), 0);        /* A has not committed */
    iv_txq_done(&ta);
    assert_int_equal(iv_txq_get(&tb, Q), V(11));
    assert_int_equal(iv_txq_get(&tb, Q), V(12));
    assert_int_equal(iv_txq_get(&tb, Q), 0);
    iv_txq_done(&tb);
    assert_int_equal(ring_len(Q), 0);
    proto_down();
}

/* ---- the refresh: the stm runtime, two OS threads ---- */

static sem_t s_a, s_b;
static pthread_barrier_t entered;
static struct sync_stats st_a, st_b;
static iv_box_ref M, N;         /* M: a box B reads; N: the new box A puts */
static int conflict;            /* A's commit of N also writes M */
/* what the threads saw, asserted by the main thread */
static int b_attempts;
static int64_t b_m[3], b_n[3], b_ring_after_attempt[3];
static uint64_t b_given_back[3];
static int same_granule, n_granule_shared, n_page_in_b;
static int64_t hook_ring, hook_places;

static void rt_up(void)
{
    char err[256] = "";
    struct sync_config cfg = { .nthreads = 2, .heap_bytes = 64u << 20 };
    assert_int_equal(sync_runtime_stm.init(&cfg, err, sizeof err), 0);
    memset(&st_a, 0, sizeof st_a);
    memset(&st_b, 0, sizeof st_b);
    sem_init(&s_a, 0, 0);
    sem_init(&s_b, 0, 0);
    pthread_barrier_init(&entered, NULL, 2);
    Q = iv_txq_new();
    memset(&ta, 0, sizeof ta);
    memset(&tb, 0, sizeof tb);
    b_attempts = 0;
    memset(b_m, 0, sizeof b_m);
    memset(b_n, 0, sizeof b_n);
    memset(b_ring_after_attempt, 0, sizeof b_ring_after_attempt);
    memset(b_given_back, 0, sizeof b_given_back);
    same_granule = n_granule_shared = n_page_in_b = 0;
    hook_ring = hook_places = -1;
    taken_hook = NULL;
}

static void rt_down(void)
{
    taken_hook = NULL;
    iv_txq_free(Q);
    free(ta.put);
    free(ta.got);
    free(tb.put);
    free(tb.got);
    pthread_barrier_destroy(&entered);
    sem_destroy(&s_a);
    sem_destroy(&s_b);
    sync_stats_free(&st_a);
    sync_stats_free(&st_b);
    sync_runtime_stm.fini();
}

/* Both threads entered before either begins: each transaction marks its reads. */
static void enter(int tid)
{
    char err[256];
    if (sync_runtime_stm.thread_enter(tid, err, sizeof err) != 0)
        fail_msg("%s", err);
    pthread_barrier_wait(&entered);
}

/* VM thread A (tid 0): M in a fresh chunk of its own; once B read M (B now holds M's
 * granule, at a snapshot before what follows), N beside M, put into Q, committed
 * (with M = 2 when `conflict`), and N published as iv_txq_done does. */
static void *thread_a(void *arg)
{
    (void)arg;
    enter(0);
    SYNC_ATOMIC("test.queue.a.m") {
        M = SYNC_ALLOC(struct iv_box);
        M->value = 1;
    }
    sem_post(&s_b);
    sem_wait(&s_a);                 /* B's transaction has read M */
    SYNC_ATOMIC("test.queue.a.put") {
        iv_txq_attempt(&ta);
        N = SYNC_ALLOC(struct iv_box);
        N->value = 42;
        if (conflict) {
            SYNC_WRITE(M);
            M->value = 2;
        }
        iv_txq_put(&ta, Q, iv_tagged((iv_oref)N, IV_T_BOX));
    }
    iv_txq_done(&ta);
    same_granule = (uintptr_t)N >> 16 == (uintptr_t)M >> 16;
    n_granule_shared = (stm_debug_gshare(N) & 3) == GS_SHARED;
    n_page_in_b = stm_debug_page_accessible(1, N);
    sem_post(&s_b);
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}

/* Between B's take and its refresh: the value is in B's taken list, nowhere else. */
static void at_take(iv_val w)
{
    hook_ring = ring_len(Q);
    hook_places = tb.ngot == 1 && tb.got[0].v == w && tb.got[0].q == Q;
}

/* VM thread B (tid 1): one transaction that reads M, lets A commit and publish N, takes
 * N from Q and reads it; a retry starts with iv_txq_attempt, as a slice does. */
static void *thread_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);                 /* M exists */
    SYNC_ATOMIC("test.queue.b") {
        int k = b_attempts++;
        iv_txq_attempt(&tb);
        b_ring_after_attempt[k] = ring_len(Q);
        b_given_back[k] = tb.given_back;
        SYNC_READ(M);
        b_m[k] = M->value;          /* fills M's granule: B holds it from here */
        if (k == 0) {
            sem_post(&s_a);
            sem_wait(&s_b);         /* A committed N and put it into Q's ring */
        }
        iv_val w = iv_txq_get(&tb, Q);
        b_n[k] = iv_vtype(w) == IV_T_BOX ? iv_box_value(w) : -1;
    }
    iv_txq_done(&tb);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}

static void run_ab(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, thread_a, NULL);
    pthread_create(&b, NULL, thread_b, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
}

/* 2: B's snapshot is older than A's commit of N; the get's refresh brings it forward,
 * so B reads N as A committed it, without an abort (A wrote nothing B read). Without
 * the refresh B reads its own stale copy of N's bytes (0). */
static void test_refresh_shows_the_putters_commit(void **state)
{
    (void)state;
    rt_up();
    conflict = 0;
    taken_hook = at_take;
    run_ab();
    /* the setting: N lies in M's granule, which B held since before A's commit */
    assert_true(same_granule);
    if (!stm_debug_eager_pages())           /* eager: every granule everybody's */
        assert_true(n_granule_shared);
    assert_true(n_page_in_b);
    assert_int_equal(hook_ring, 0);
    assert_int_equal(hook_places, 1);
    assert_int_equal(b_attempts, 1);
    assert_int_equal(b_m[0], 1);
    assert_int_equal(b_n[0], 42);
    assert_int_equal(sync_stats_aborts(&st_b), 0);
    assert_int_equal(tb.gets, 1);
    assert_int_equal(ring_len(Q), 0);
    assert_int_equal(tb.ngot, 0);
    rt_down();
}

/* 2b: A's commit of N also wrote M, which B had read: the get's refresh finds it and
 * aborts B after the take; the retry's iv_txq_attempt gives N back to the ring, reads
 * M = 2 and takes N again (Q1 through an abort inside the get). */
static void test_refresh_conflict_gives_the_value_back(void **state)
{
    (void)state;
    rt_up();
    conflict = 1;
    taken_hook = at_take;
    run_ab();
    assert_true(same_granule);
    assert_int_equal(b_attempts, 2);
    assert_int_equal(b_m[0], 1);
    assert_int_equal(b_n[0], 0);                /* never reached: the refresh aborted */
    assert_int_equal(st_b.aborts[SYNC_ABORT_READ_WRITE], 1);
    assert_int_equal(st_b.nconflicts, 1);
    assert_int_equal(st_b.conflicts[0].object, (uintptr_t)M);
    assert_int_equal(b_ring_after_attempt[1], 1); /* N is back */
    assert_int_equal(b_given_back[1], 1);
    assert_int_equal(b_m[1], 2);
    assert_int_equal(b_n[1], 42);
    assert_int_equal(tb.gets, 2);
    assert_int_equal(ring_len(Q), 0);
    rt_down();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_invisible_until_done),
        cmocka_unit_test(test_give_back_exactly_once),
        cmocka_unit_test(test_own_put_taken_not_published),
        cmocka_unit_test(test_get_racing_the_commit),
        cmocka_unit_test(test_refresh_shows_the_putters_commit),
        cmocka_unit_test(test_refresh_conflict_gives_the_value_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
