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
 *  - a get racing the putter's commit: empty before done, the puts in order after;
 *  - Q2's "empty": a get answers empty while another attempt holds the value, which
 *    that attempt gives back when it aborts; a later get takes it, once; and a value
 *    given back goes ahead of one put before it (a bag, not a FIFO).
 * The refresh (the real stm runtime, two OS threads stepped with semaphores): B's
 * transaction, with a snapshot older than A's commit of a new box, takes the box from
 * the ring and reads what A committed; when A's commit also wrote what B had read, the
 * get's refresh aborts B, and the box goes back to the ring for B's retry. And:
 *  - with an unbacked write of B's own (runtime/stm/DESIGN.md, "Unbacked writes")
 *    pending, the refresh keeps it and B commits it by the short private path; when
 *    the refresh aborts, the write is undone (from segment 0) and the box given back;
 *  - in a transaction begun alone (no read markers: "A thread alone"), the refresh
 *    that finds A's entry aborts B; the retry gets the box again and commits the
 *    serial outcome;
 *  - a box whose putter committed privately ("Private commits": no entry) is read as
 *    committed (B's first access takes the granule) and taken once, through an abort.
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
 *
 * Mutations for the four tests added after those (empty_while_another_attempt_holds,
 * refresh_keeps_an_unbacked_write, refresh_begun_alone_aborts, get_of_a_private_put),
 * each a temporary edit of queue.h or runtime/stm/, built, run against all ten tests,
 * and reverted:
 *  - stm_refresh clears stm_self.dirty after its import (forgets the pending write):
 *    refresh_keeps_an_unbacked_write fails (P committed 5, not 7: B commits as if
 *    read-only);
 *  - stm_refresh imports without validation (stm_import_log(s, 0, 0)):
 *    refresh_keeps_an_unbacked_write (its conflict round commits at once, having read
 *    M = 1), refresh_begun_alone_aborts (K = 43: A's update lost) and
 *    refresh_conflict_gives_the_value_back fail;
 *  - stm_import_log without the abort of a transaction begun alone (`!stm_self.mark`):
 *    refresh_begun_alone_aborts fails (K = 43);
 *  - restore_unbacked (commit.c) without its copy from segment 0:
 *    refresh_keeps_an_unbacked_write fails (the retry reads the aborted write's 7 back
 *    and writes 9);
 *  - commit_private without its copy of the new objects into segment 0:
 *    get_of_a_private_put fails (B reads N as 0), as do the three refresh tests whose M
 *    is A's private box (B reads M as 0); refresh_begun_alone_aborts does not (K was
 *    made by a thread alone, N in a logged commit);
 *  - iv_txq_get without its record in `got`: all four fail (the value is lost with the
 *    aborted attempt: the later get finds nothing);
 *  - iv_txq_pop_front as a peek (head and n left as they were): every test fails,
 *    empty_while_another_attempt_holds at B's get (5 while A holds it);
 *  - iv_txq_attempt giving nothing back: empty_while_another_attempt_holds,
 *    refresh_keeps_an_unbacked_write, refresh_begun_alone_aborts and
 *    get_of_a_private_put fail (the retry or the later get finds the ring empty);
 *  - iv_txq_get's stm_refresh() replaced by (void)0: refresh_keeps_an_unbacked_write
 *    fails (B reads N as 0); refresh_begun_alone_aborts and get_of_a_private_put do
 *    not: there B does not hold N's granule, and its first read of N takes it from A
 *    with a move of its snapshot to A's (pages.c, extend_snapshot), which aborts the
 *    transaction begun alone as the refresh would, and has nothing to import after a
 *    private commit (no entry). Those two pin the refresh's outcome, not its call.
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

/* 1e: Q2's "empty". Ring [5]: A takes 5; B's get answers empty, though 5 is out of the
 * ring only in A's attempt, which then aborts and gives it back; B's next get, in the
 * same attempt, takes 5 (no serial order has B see the queue empty and then 5, which
 * was put before B began), and A's retry finds the ring empty: 5 was taken by one
 * committed transaction, once. Nor FIFO: ring [1, 2, 3]; A takes 1, B takes 2 and
 * commits; A aborts, and 1 goes back to the head, ahead of 3; B's next transaction
 * takes 1, then 3. A bag whose values are each taken once. */
static void test_empty_while_another_attempt_holds(void **state)
{
    (void)state;
    proto_up();
    committed_puts(Q, (const int64_t[]){ 5 }, 1);
    iv_txq_attempt(&ta);
    iv_txq_attempt(&tb);
    assert_int_equal(iv_txq_get(&ta, Q), V(5));
    assert_int_equal(iv_txq_get(&tb, Q), 0);        /* "empty": 5 is A's attempt's */
    assert_int_equal(tb.ngot, 0);
    assert_int_equal(places(Q, V(5)), 1);
    iv_txq_attempt(&ta);                            /* A aborted: 5 back */
    assert_ring(Q, (const int64_t[]){ 5 }, 1);
    assert_int_equal(places(Q, V(5)), 1);
    assert_int_equal(iv_txq_get(&tb, Q), V(5));     /* B's same attempt, later */
    assert_int_equal(iv_txq_get(&ta, Q), 0);        /* A's retry: empty */
    assert_int_equal(iv_txq_get(&tb, Q), 0);
    assert_int_equal(places(Q, V(5)), 1);
    iv_txq_done(&ta);
    iv_txq_done(&tb);                               /* B committed with 5 */
    assert_int_equal(places(Q, V(5)), 0);
    assert_int_equal(ring_len(Q), 0);
    assert_int_equal(ta.gets, 1);
    assert_int_equal(tb.gets, 1);
    assert_int_equal(ta.given_back, 1);
    assert_int_equal(tb.given_back, 0);

    committed_puts(Q, (const int64_t[]){ 1, 2, 3 }, 3);
    iv_txq_attempt(&ta);
    iv_txq_attempt(&tb);
    assert_int_equal(iv_txq_get(&ta, Q), V(1));
    assert_int_equal(iv_txq_get(&tb, Q), V(2));
    iv_txq_done(&tb);                               /* B committed with 2 */
    iv_txq_attempt(&ta);                            /* A aborted: 1 back, at the head */
    assert_ring(Q, (const int64_t[]){ 1, 3 }, 2);
    iv_txq_attempt(&tb);
    assert_int_equal(iv_txq_get(&tb, Q), V(1));
    assert_int_equal(iv_txq_get(&tb, Q), V(3));
    assert_int_equal(iv_txq_get(&ta, Q), 0);
    iv_txq_done(&tb);                               /* B committed with 1 and 3 */
    iv_txq_done(&ta);
    for (int64_t k = 1; k <= 3; k++)
        assert_int_equal(places(Q, V(k)), 0);
    assert_int_equal(ring_len(Q), 0);
    assert_int_equal(ta.given_back, 2);
    assert_int_equal(ta.gets + tb.gets, 6);         /* 5 and 1 twice, 2 and 3 once */
    proto_down();
}

/* ---- the refresh: the stm runtime, two OS threads ---- */

static sem_t s_a, s_b;
static pthread_barrier_t entered;
static struct sync_stats st_a, st_b;
static iv_box_ref M, N;         /* M: a box B reads; N: the new box A puts */
static int conflict;            /* A's commit of N also writes M */
static int a_stays;             /* A leaves only after B's commit (B posts s_a) */
/* what the threads saw, asserted by the main thread */
static int b_attempts;
static int64_t b_m[3], b_n[3], b_ring_after_attempt[3];
static uint64_t b_given_back[3];
static int same_granule, n_granule_shared, n_page_in_b;
static int64_t hook_ring, hook_places;
static struct iv_txq_thread tc;         /* VM thread C: gets on B's OS thread */
#define NOT_REACHED (-2)                /* b_n[k]: the attempt aborted before its read */

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
    for (int k = 0; k < 3; k++)
        b_n[k] = NOT_REACHED;
    memset(&tc, 0, sizeof tc);
    memset(b_ring_after_attempt, 0, sizeof b_ring_after_attempt);
    memset(b_given_back, 0, sizeof b_given_back);
    same_granule = n_granule_shared = n_page_in_b = 0;
    a_stays = 0;
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
    free(tc.put);
    free(tc.got);
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
    if (a_stays)
        sem_wait(&s_a);             /* B committed: A was entered throughout */
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

static void run_two(void *(*fa)(void *), void *(*fb)(void *))
{
    pthread_t a, b;
    pthread_create(&a, NULL, fa, NULL);
    pthread_create(&b, NULL, fb, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
}

static void run_ab(void) { run_two(thread_a, thread_b); }

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
    assert_int_equal(b_n[0], NOT_REACHED);      /* the refresh aborted before the read */
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

/* ---- the refresh with an unbacked write, begun alone, of a private put ---- */

static iv_box_ref P, K;         /* P: B's own box (unbacked writes); K: the setup's */
static int64_t u_p_read[3], u_p_after_get[3];
static size_t u_unbacked_at_take, u_unbacked_after_get[3];
static int u_dirty_at_take, u_dirty_after_get[3], u_p_kind;
static uint64_t u_rev_at_take, u_rev_after_get[3];

static struct stm_seg *seg_of(int tid) { return &G.segs[tid + 1]; }

/* Under eager pages (valgrind, STM_PAGES=eager) every granule is everybody's: nothing
 * is private, no write unbacked. The test is skipped there. */
static void lazy_only(void)
{
    if (stm_debug_eager_pages()) {
        rt_down();
        skip();
    }
}

/* The take, as at_take; and B's attempt as the refresh finds it: P written unbacked. */
static void at_take_unbacked(uint64_t w)
{
    at_take(w);
    u_unbacked_at_take = seg_of(1)->nunbacked;
    u_dirty_at_take = stm_self.dirty;
    u_rev_at_take = atomic_load(&seg_of(1)->rev);
}

/* VM thread B for 2c: P in a fresh chunk of B's own (GS_PRIV of B's segment); then one
 * transaction that reads M and P, writes P = P + 2 (unbacked: no ownership, no backup),
 * lets A commit N (and M = 2 when `conflict`), takes N (the refresh), reads P and N. */
static void *thread_b_unbacked(void *arg)
{
    (void)arg;
    enter(1);
    SYNC_ATOMIC("test.queue.u.p") {
        P = SYNC_ALLOC(struct iv_box);
        P->value = 5;
    }
    u_p_kind = GS_KIND(stm_debug_gshare(P));
    sem_wait(&s_b);                 /* M exists */
    SYNC_ATOMIC("test.queue.u.b") {
        int k = b_attempts++;
        iv_txq_attempt(&tb);
        b_ring_after_attempt[k] = ring_len(Q);
        b_given_back[k] = tb.given_back;
        SYNC_READ(M);
        b_m[k] = M->value;
        SYNC_READ(P);
        int64_t p = P->value;
        u_p_read[k] = p;
        SYNC_WRITE(P);
        P->value = p + 2;
        if (k == 0) {
            sem_post(&s_a);
            sem_wait(&s_b);         /* A committed N and put it into Q's ring */
        }
        iv_val w = iv_txq_get(&tb, Q);
        u_unbacked_after_get[k] = seg_of(1)->nunbacked;
        u_dirty_after_get[k] = stm_self.dirty;
        u_rev_after_get[k] = atomic_load(&seg_of(1)->rev);
        SYNC_READ(P);
        u_p_after_get[k] = P->value;
        b_n[k] = iv_vtype(w) == IV_T_BOX ? iv_box_value(w) : -1;
    }
    iv_txq_done(&tb);
    sem_post(&s_a);                 /* A may leave */
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}

/* One round of 2c: conflict 0, the refresh imports A's entry; 1, it aborts B. */
static void refresh_over_unbacked(int conflict_)
{
    rt_up();
    lazy_only();
    conflict = conflict_;
    a_stays = 1;                        /* B commits with A entered: privately */
    taken_hook = at_take_unbacked;
    memset(u_p_read, 0, sizeof u_p_read);
    memset(u_p_after_get, 0, sizeof u_p_after_get);
    unsigned long short0 = atomic_load(&stm_test_unbacked_commits);
    unsigned long restores0 = atomic_load(&stm_test_unbacked_restores);
    run_two(thread_a, thread_b_unbacked);
    int last = conflict_;               /* the attempt that committed */
    /* what B saw and committed */
    assert_int_equal(b_attempts, last + 1);
    assert_int_equal(u_p_read[0], 5);
    assert_int_equal(b_m[last], conflict_ ? 2 : 1);
    assert_int_equal(u_p_after_get[last], 7);   /* its own write, after the refresh */
    assert_int_equal(b_n[last], 42);            /* and A's commit */
    assert_int_equal(((const struct iv_box *)stm_debug_committed(P))->value, 7);
    assert_int_equal(tb.gets, (uint64_t)last + 1);
    assert_int_equal(ring_len(Q), 0);
    assert_int_equal(tb.ngot, 0);
    if (!conflict_) {
        assert_int_equal(sync_stats_aborts(&st_b), 0);
    } else {
        /* the refresh found M, which B read, written by A: abort before B read N; P
         * restored (the retry reads 5 again, and commits 7, not 9), N back once */
        assert_int_equal(b_n[0], NOT_REACHED);
        assert_int_equal(u_p_read[1], 5);
        assert_int_equal(st_b.aborts[SYNC_ABORT_READ_WRITE], 1);
        assert_int_equal(sync_stats_aborts(&st_b), 1);
        assert_int_equal(st_b.nconflicts, 1);
        assert_int_equal(st_b.conflicts[0].object, (uintptr_t)M);
        assert_int_equal(b_ring_after_attempt[1], 1);
        assert_int_equal(b_given_back[1], 1);
    }
    /* the setting and the mechanism: P B's alone, N beside M (A's commit is logged); at
     * the first take P's write pending, unbacked; after the refresh (no conflict: the
     * snapshot moved on) the same; the commit by the short private path */
    assert_int_equal(u_p_kind, GS_PRIV);
    assert_true(same_granule);
    assert_int_equal(hook_ring, 0);
    assert_int_equal(hook_places, 1);
    assert_int_equal(u_unbacked_at_take, 1);
    assert_int_equal(u_dirty_at_take, STM_DIRTY_UNBACKED);
    if (!conflict_)
        assert_true(u_rev_after_get[0] > u_rev_at_take);
    assert_int_equal(u_unbacked_after_get[last], 1);
    assert_int_equal(u_dirty_after_get[last], STM_DIRTY_UNBACKED);
    assert_int_equal(atomic_load(&stm_test_unbacked_restores) - restores0,
                     (unsigned long)conflict_);
    assert_int_equal(atomic_load(&stm_test_unbacked_commits) - short0, 1);
    assert_int_equal(stm_debug_owner(P), -1);
    assert_int_equal(GS_KIND(stm_debug_gshare(P)), GS_PRIV);
    rt_down();
}

/* 2c: B's transaction has an unbacked write of its own box P pending (P's granule is
 * B's alone: no ownership, no backup, stm_self.dirty UNBACKED) when its get's refresh
 * imports A's commit of N. Without a conflict the refresh keeps the write (still
 * unbacked, still pending: B reads P = 7 back) and B reads N = 42; B then commits by
 * the short private path, at its new snapshot, and P = 7 is committed. With A's commit
 * also writing M, which B read, the refresh aborts B: the abort restores P from segment
 * 0 (the retry reads 5, not 7, and commits 7, not 9) and gives N back. */
static void test_refresh_keeps_an_unbacked_write(void **state)
{
    (void)state;
    refresh_over_unbacked(0);
    refresh_over_unbacked(1);
}

/* The data of 2d, made before any thread runs: K = 1, by VM thread A's segment, which
 * then leaves (as test_stm.c's setup). */
static void make_k(void)
{
    char err[256];
    if (sync_runtime_stm.thread_enter(0, err, sizeof err) != 0)
        fail_msg("%s", err);
    SYNC_ATOMIC("test.queue.alone.k") {
        K = SYNC_ALLOC(struct iv_box);
        K->value = 1;
    }
    sync_runtime_stm.thread_exit(NULL);
}

static int alone_marked[3];
static int64_t alone_k[3];
static int alone_a_linked;

/* VM thread A for 2d (tid 0): enters while B's transaction, begun alone, is open; writes
 * K = 2 (a granule B holds: a logged commit), puts a new box N = 42, commits and
 * publishes; stays entered until B is done (so B's retry marks its reads). */
static void *thread_a_enters(void *arg)
{
    (void)arg;
    sem_wait(&s_a);                 /* B's transaction, begun alone, read K */
    char err[256];
    if (sync_runtime_stm.thread_enter(0, err, sizeof err) != 0)
        fail_msg("%s", err);
    uint64_t rev0 = stm_debug_rev();
    SYNC_ATOMIC("test.queue.alone.a") {
        iv_txq_attempt(&ta);
        SYNC_WRITE(K);
        K->value = 2;
        N = SYNC_ALLOC(struct iv_box);
        N->value = 42;
        iv_txq_put(&ta, Q, iv_tagged((iv_oref)N, IV_T_BOX));
    }
    iv_txq_done(&ta);
    alone_a_linked = stm_debug_rev() > rev0;
    sem_post(&s_b);
    sem_wait(&s_a);                 /* B committed */
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}

/* VM thread B for 2d (tid 1): enters alone; one transaction that reads K, lets A enter
 * and commit, takes N from Q, reads it, and writes K = K + N. */
static void *thread_b_alone(void *arg)
{
    (void)arg;
    char err[256];
    if (sync_runtime_stm.thread_enter(1, err, sizeof err) != 0)
        fail_msg("%s", err);
    SYNC_ATOMIC("test.queue.alone.b") {
        int k = b_attempts++;
        iv_txq_attempt(&tb);
        b_ring_after_attempt[k] = ring_len(Q);
        b_given_back[k] = tb.given_back;
        alone_marked[k] = stm_self.mark;
        SYNC_READ(K);
        int64_t kv = K->value;
        alone_k[k] = kv;
        if (k == 0) {
            sem_post(&s_a);
            sem_wait(&s_b);         /* A entered, committed K = 2 and N, published N */
        }
        iv_val w = iv_txq_get(&tb, Q);
        b_n[k] = iv_vtype(w) == IV_T_BOX ? iv_box_value(w) : -1;
        SYNC_WRITE(K);
        K->value = kv + b_n[k];
    }
    iv_txq_done(&tb);
    sem_post(&s_a);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}

/* 2d: B's transaction began alone (no other thread entered: it marks no reads, "A
 * thread alone", DESIGN.md). A enters, commits K = 2 and a new box N, and publishes N.
 * B's get takes N and its refresh finds A's entry: with no markers to validate by, it
 * aborts B (read-write, naming no object), before B reads N; the retry, which marks
 * (A is entered), gets N back from the ring, reads K = 2 and N = 42 and commits
 * K = 44, the serial outcome (A, then B). Had the refresh imported without the abort,
 * B would commit K = 1 + 42 = 43 from its stale read: A's update lost. */
static void test_refresh_begun_alone_aborts(void **state)
{
    (void)state;
    rt_up();
    make_k();
    memset(alone_marked, 0xff, sizeof alone_marked);
    memset(alone_k, 0, sizeof alone_k);
    alone_a_linked = 0;
    taken_hook = at_take;
    run_two(thread_a_enters, thread_b_alone);
    /* the serial outcome (A, then B), no lost update; N taken by B once */
    assert_int_equal(((const struct iv_box *)stm_debug_committed(K))->value, 44);
    assert_int_equal(b_attempts, 2);
    assert_int_equal(alone_marked[0], 0);       /* begun alone */
    assert_int_equal(alone_marked[1], 1);       /* A entered: the retry marks */
    assert_int_equal(alone_k[0], 1);
    assert_int_equal(b_n[0], NOT_REACHED);      /* the refresh aborted before the read */
    assert_int_equal(st_b.aborts[SYNC_ABORT_READ_WRITE], 1);
    assert_int_equal(sync_stats_aborts(&st_b), 1);
    assert_int_equal(st_b.nconflicts, 1);
    assert_int_equal(st_b.conflicts[0].other, 0);
    assert_int_equal(st_b.conflicts[0].object, 0);  /* unknown: nothing was marked */
    assert_int_equal(hook_places, 1);           /* (the retry's take) */
    assert_int_equal(b_ring_after_attempt[1], 1);   /* N back in the ring, once */
    assert_int_equal(b_given_back[1], 1);
    assert_int_equal(alone_k[1], 2);
    assert_int_equal(b_n[1], 42);
    assert_int_equal(tb.gets, 2);
    assert_int_equal(ring_len(Q), 0);
    assert_int_equal(tb.ngot, 0);
    assert_int_equal(sync_stats_aborts(&st_a), 0);
    assert_int_equal(alone_a_linked, 1);        /* A's commit linked an entry */
    rt_down();
}

static int p_kind_at_put, p_page_in_b, p_rev_moved, p_kind_after;
static unsigned long p_private;
static iv_val p_c_get[3], p_b_again[3];

/* VM thread A for 2e: once B's transaction has begun, one transaction that allocates N
 * in a fresh chunk of its own and puts it (a private commit: no entry), then done. */
static void *thread_a_private(void *arg)
{
    (void)arg;
    enter(0);
    sem_wait(&s_a);                 /* B's transaction has begun */
    unsigned long priv0 = atomic_load(&stm_test_private_commits);
    uint64_t rev0 = stm_debug_rev();
    SYNC_ATOMIC("test.queue.p.put") {
        iv_txq_attempt(&ta);
        N = SYNC_ALLOC(struct iv_box);
        N->value = 42;
        iv_txq_put(&ta, Q, iv_tagged((iv_oref)N, IV_T_BOX));
    }
    iv_txq_done(&ta);
    p_private = atomic_load(&stm_test_private_commits) - priv0;
    p_rev_moved = stm_debug_rev() != rev0;
    p_kind_at_put = GS_KIND(stm_debug_gshare(N));
    p_page_in_b = stm_debug_page_accessible(1, N);
    sem_post(&s_b);
    sem_wait(&s_a);                 /* B committed: A stays entered till then */
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}

/* VM thread B for 2e: a transaction begun before A's commit takes N (its first access
 * takes the granule from A), reads it; C's get meanwhile and B's own second get find
 * nothing; the first attempt then aborts (as a conflict would), the retry does it
 * again and commits. */
static void *thread_b_private(void *arg)
{
    (void)arg;
    enter(1);
    SYNC_ATOMIC("test.queue.p.b") {
        int k = b_attempts++;
        iv_txq_attempt(&tb);
        b_ring_after_attempt[k] = ring_len(Q);
        b_given_back[k] = tb.given_back;
        if (k == 0) {
            sem_post(&s_a);
            sem_wait(&s_b);         /* A committed N privately and put it into Q's ring */
        }
        iv_val w = iv_txq_get(&tb, Q);
        b_n[k] = iv_vtype(w) == IV_T_BOX ? iv_box_value(w) : -1;
        p_c_get[k] = iv_txq_get(&tc, Q);
        p_b_again[k] = iv_txq_get(&tb, Q);
        if (k == 0)
            stm_debug_abort_self();
    }
    iv_txq_done(&tb);
    p_kind_after = GS_KIND(stm_debug_gshare(N));
    sem_post(&s_a);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}

/* 2e: A's put of a new box N is committed privately (N's granule is A's alone: no log
 * entry, no revision moved, B does not hold the granule). B's get takes N; its refresh
 * has no entry to import, and its read of N takes the granule from A, so it reads N
 * as A committed it (42: segment 0 holds the private commit). While B holds N, C's get
 * and B's second get answer empty; B's attempt aborts and gives N back once; the retry
 * takes it again and commits: N was taken by one committed transaction, once. */
static void test_get_of_a_private_put(void **state)
{
    (void)state;
    rt_up();
    lazy_only();
    memset(p_c_get, 0xff, sizeof p_c_get);
    memset(p_b_again, 0xff, sizeof p_b_again);
    taken_hook = at_take;
    run_two(thread_a_private, thread_b_private);
    assert_int_equal(b_attempts, 2);
    assert_int_equal(st_b.aborts[SYNC_ABORT_OTHER], 1);
    assert_int_equal(sync_stats_aborts(&st_b), 1);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(b_n[k], 42);
        assert_int_equal(p_c_get[k], 0);        /* N is B's attempt's: empty */
        assert_int_equal(p_b_again[k], 0);
    }
    assert_int_equal(b_ring_after_attempt[1], 1);   /* given back, once */
    assert_int_equal(b_given_back[1], 1);
    assert_int_equal(tb.gets, 2);
    assert_int_equal(tc.gets, 0);
    assert_int_equal(ring_len(Q), 0);
    assert_int_equal(tb.ngot, 0);
    assert_int_equal(iv_txq_get(&tc, Q), 0);    /* and nobody takes it after */
    assert_int_equal(((const struct iv_box *)stm_debug_committed(N))->value, 42);
    /* the setting: a private commit, N in a granule B did not hold */
    assert_int_equal(p_private, 1);
    assert_int_equal(p_rev_moved, 0);
    assert_int_equal(p_kind_at_put, GS_PRIV);
    assert_int_equal(p_page_in_b, 0);
    assert_int_equal(p_kind_after, GS_SHARED);  /* B's read took the granule */
    assert_int_equal(st_b.import_entries, 0);   /* nothing to import: no entry */
    rt_down();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_invisible_until_done),
        cmocka_unit_test(test_give_back_exactly_once),
        cmocka_unit_test(test_own_put_taken_not_published),
        cmocka_unit_test(test_get_racing_the_commit),
        cmocka_unit_test(test_empty_while_another_attempt_holds),
        cmocka_unit_test(test_refresh_shows_the_putters_commit),
        cmocka_unit_test(test_refresh_conflict_gives_the_value_back),
        cmocka_unit_test(test_refresh_keeps_an_unbacked_write),
        cmocka_unit_test(test_refresh_begun_alone_aborts),
        cmocka_unit_test(test_get_of_a_private_put),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
