/*
 * tests/test_stm_stress.c - randomized stress of the STM with invariant checks, with
 * and without chaos mode (STM_CHAOS), at 2 threads and at more threads than cores:
 *  - bank: transfers between random accounts and audits whose total is checked
 *    inside every audit transaction (aborted attempts included: opacity);
 *  - lost update: every thread increments one shared counter and its own counter;
 *  - churn: a shared linked list with inserts and deletes (allocation and freeing
 *    under contention), its length and sum checked inside every traversal.
 *  - private: each thread increments its own pair of records (in its own chunks, so
 *    commits go without a log entry while nobody else holds the granules), with an
 *    object allocated and freed in the same transaction; now and then another thread
 *    reads a pair (checking that both records agree, inside: a fill that takes a
 *    granule from its holder must show one snapshot) or increments it (a logged
 *    commit, racing the owner's private ones); every 32 increments the owner moves
 *    its pair to new records, so fresh private granules keep appearing. The owner's
 *    writes there are unbacked (no ownership, no backup): its aborts (chaos forces
 *    some) restore them from segment 0, or refill a granule another thread took
 *    meanwhile, and its commits that meet a taker back them late. At the end
 *    each pair must hold exactly the increments counted outside the blocks.
 * The reenter cases make threads leave and enter again all the time, so that threads
 * run alone (marking no reads) while others come back and commit; at their middle
 * iteration all threads but one leave together, so that one surely runs alone a while.
 * STRESS_SCALE (environment) multiplies the iteration counts (make stress uses it);
 * STRESS_CHAOS (environment, a non-zero integer) replaces the fixed chaos seeds of the
 * chaos cases, so that repeated stress runs see other interleavings.
 */
#define SYNC_RT stm
#include "runtime/sync.h"
#include "runtime/stm/stm_internal.h"

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

typedef struct acct {
    SYNC_OBJECT_HEADER;
    long balance;
} acct_t;
typedef SYNC_REF(acct_t) acct_ref;

typedef struct node {
    SYNC_OBJECT_HEADER;
    long key;
    SYNC_REF(struct node) next;
} node_t;
typedef SYNC_REF(node_t) node_ref;

typedef struct list {
    SYNC_OBJECT_HEADER;
    long len, sum;
    node_ref head;
} list_t;
typedef SYNC_REF(list_t) list_ref;

#define NACCTS 64
#define INITIAL 1000
static acct_ref accts[NACCTS];
static acct_ref counter;
static acct_ref own[64];
static list_ref list;
typedef struct rec {
    SYNC_OBJECT_HEADER;
    long n;                      /* increments (both records of a pair agree) */
    long seen;                   /* the shared counter as the last writer read it */
} rec_t;
typedef SYNC_REF(rec_t) rec_ref;
typedef struct dirobj {
    SYNC_OBJECT_HEADER;
    rec_ref cur[64], cur2[64];   /* each thread's pair of private records */
} dir_t;
static SYNC_REF(dir_t) dir;
static atomic_long priv_done[64]; /* increments of thread t's pair, counted outside */
static atomic_long violations;
static atomic_long counter_blocks; /* counter blocks that completed, counted outside them */
static long iters;
static struct sync_stats total;
static pthread_mutex_t total_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t gate;
/* > 0: each thread leaves the runtime and enters it again every about this many
 * iterations, so threads often run alone (their transactions then mark no reads) while
 * others come back and commit: the alone-mode validation is stressed too. */
static long reenter_every;
static atomic_long alone_attempts; /* attempts begun with no other thread entered */
/* The reenter cases' solo window, at every thread's middle iteration: all threads but
 * thread 0 leave (counted in `solo_out`) and wait for `solo_back`; thread 0 waits until
 * they are out, runs SOLO_OPS more iterations alone, then lets them enter again while it
 * goes on. So some attempts surely begin alone (asserted: the alone mode must engage
 * when nobody else is entered), and the others enter while thread 0's alone-begun
 * transactions are in flight, whatever the scheduling. */
#define SOLO_OPS 64
static atomic_int solo_out, solo_back;
static int nthreads_running;

static long scale(void)
{
    const char *s = getenv("STRESS_SCALE");
    long v = s ? atol(s) : 1;
    return v > 0 ? v : 1;
}

/* The chaos seed of a chaos case: STRESS_CHAOS when set, else the case's own. */
static const char *chaos_seed(const char *dflt)
{
    const char *s = getenv("STRESS_CHAOS");
    return s && *s ? s : dflt;
}

static void setup(int nthreads, const char *chaos)
{
    if (chaos)
        setenv("STM_CHAOS", chaos, 1);
    else
        unsetenv("STM_CHAOS");
    char err[256] = "";
    struct sync_config cfg = {.nthreads = nthreads, .heap_bytes = 256u << 20};
    assert_int_equal(sync_runtime_stm.init(&cfg, err, sizeof err), 0);
    assert_int_equal(sync_runtime_stm.thread_enter(0, err, sizeof err), 0);
    SYNC_ATOMIC("stress.setup") {
        for (int i = 0; i < NACCTS; i++) {
            accts[i] = SYNC_ALLOC(acct_t);
            accts[i]->balance = INITIAL;
        }
        counter = SYNC_ALLOC(acct_t);
        for (int i = 0; i < 64; i++)
            own[i] = SYNC_ALLOC(acct_t);
        list = SYNC_ALLOC(list_t);
        dir = SYNC_ALLOC(dir_t);
    }
    sync_runtime_stm.thread_exit(NULL);
    for (int t = 0; t < 64; t++)
        atomic_store(&priv_done[t], 0);
    atomic_store(&violations, 0);
    atomic_store(&counter_blocks, 0);
    sync_stats_free(&total);
    memset(&total, 0, sizeof total);
}

static void teardown(void)
{
    sync_runtime_stm.fini();
    unsetenv("STM_CHAOS");
}

static uint64_t xs(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* A worker leaves the runtime, its statistics added to *st ... */
static void leave(struct sync_stats *st)
{
    struct sync_stats part = {0};
    sync_runtime_stm.thread_exit(&part);
    sync_stats_merge(st, &part);
    sync_stats_free(&part);
}
/* ... and enters it (0; a failed enter is counted as a violation: -1). */
static int join(int tid)
{
    char err[256];
    if (sync_runtime_stm.thread_enter(tid, err, sizeof err) == 0)
        return 0;
    atomic_fetch_add(&violations, 1000000);
    return -1;
}

/* Allocates what is left of the thread's allocation chunk, so that the next object
 * opens a chunk (a private granule) of its own. */
static void fill_chunk(void)
{
    size_t room = stm_me->bump_end - stm_me->bump;
    if (room >= 16)
        (void)sync_alloc(room);
}

static void *worker(void *arg)
{
    int tid = (int)(intptr_t)arg;
    if (join(tid) != 0)
        return NULL;
    uint64_t rng = 0x1234567ull * (uint64_t)(tid + 1);
    SYNC_ATOMIC("stress.private.new") {  /* the thread's pair, in its own chunk */
        rec_ref a = SYNC_ALLOC(rec_t), b = SYNC_ALLOC(rec_t);
        SYNC_WRITE(dir);
        dir->cur[tid] = a;
        dir->cur2[tid] = b;
    }
    long own_ops = 0, rotations = 0;
    pthread_barrier_wait(&gate); /* all threads start together, so they overlap */
    struct sync_stats st = {0};
    long alone = 0;
    volatile int inc_done = 0;   /* assigned in a block, read after it */
    long next_leave = reenter_every ? reenter_every / 2 + tid * 7 : -1;
    long solo_end = -1;
    for (long i = 0; i < iters; i++) {
        if (reenter_every && i == iters / 2) {
            if (tid != 0) {
                leave(&st);
                atomic_fetch_add(&solo_out, 1); /* seq_cst: after our exit */
                while (!atomic_load(&solo_back))
                    sched_yield();
                if (join(tid) != 0)
                    return NULL;
            } else {
                /* the others' exits happen before their count: our next begins see
                 * nobody else entered */
                while (atomic_load(&solo_out) < nthreads_running - 1)
                    sched_yield();
                solo_end = i + SOLO_OPS;
            }
        }
        if (i == solo_end)
            atomic_store(&solo_back, 1);
        if (i == next_leave) {      /* leave, let the others run alone a while, enter */
            leave(&st);
            for (int y = 0; y < 1 + (int)(xs(&rng) % 50); y++)
                sched_yield();
            if (join(tid) != 0)
                return NULL;
            next_leave = i + reenter_every / 2 + (long)(xs(&rng) % (uint64_t)reenter_every);
        }
        uint64_t r = xs(&rng);
        int op = (int)(r % 13);
        if (op >= 10 && (op < 12 || (r >> 44) % 4 != 0)) { /* own pair, private */
            if (++own_ops % 32 == 0) {  /* move the pair to new records */
                /* chunks of their own, at first (bounded: 48 MiB of heap in all) */
                int junk = rotations++ < 256 / nthreads_running;
                SYNC_ATOMIC("stress.private.move") {
                    SYNC_READ(dir);
                    rec_ref a = dir->cur[tid], b = dir->cur2[tid];
                    SYNC_READ(a);
                    SYNC_READ(b);
                    if (junk)
                        fill_chunk();
                    rec_ref na = SYNC_ALLOC(rec_t);
                    if (junk)
                        fill_chunk();
                    rec_ref nb = SYNC_ALLOC(rec_t);
                    if (junk)
                        fill_chunk();
                    na->n = a->n;
                    nb->n = b->n;
                    na->seen = a->seen;
                    SYNC_WRITE(dir);
                    dir->cur[tid] = na;
                    dir->cur2[tid] = nb;
                    SYNC_FREE(a);
                    SYNC_FREE(b);
                }
            } else {
                SYNC_ATOMIC("stress.private") {
                    SYNC_READ(dir);
                    rec_ref a = dir->cur[tid], b = dir->cur2[tid];
                    node_ref tmp = SYNC_ALLOC(node_t); /* dead at the end */
                    tmp->key = 1;
                    SYNC_WRITE(a);
                    SYNC_WRITE(b);
                    SYNC_READ(a);
                    SYNC_READ(b);
                    if (a->n != b->n)
                        atomic_fetch_add(&violations, 1);
                    a->n++;
                    b->n++;
                    SYNC_READ(counter); /* shared: the commit stays private */
                    a->seen = counter->balance;
                    SYNC_FREE(tmp);
                }
                atomic_fetch_add_explicit(&priv_done[tid], 1, memory_order_relaxed);
            }
            continue;
        }
        if (op == 12) {             /* another thread's pair: read or increment it */
            int u = (int)((r >> 16) % (uint64_t)nthreads_running);
            int inc = (r >> 40) & 1;
            SYNC_ATOMIC("stress.private.other") {
                SYNC_READ(dir);
                rec_ref a = dir->cur[u], b = dir->cur2[u];
                if (a && b) {       /* u may not have made its pair yet */
                    SYNC_READ(a);
                    SYNC_READ(b);
                    if (a->n != b->n)
                        atomic_fetch_add(&violations, 1);
                    /* a's writer read the counter in a snapshot ours includes: a fill
                     * that took a's granule reached that writer's snapshot first */
                    SYNC_READ(counter);
                    if (a->seen > counter->balance)
                        atomic_fetch_add(&violations, 1);
                    if (inc) {
                        SYNC_WRITE(a);
                        SYNC_WRITE(b);
                        a->n++;
                        b->n++;
                    }
                }
                inc_done = inc && a && b;
            }
            if (inc_done)
                atomic_fetch_add_explicit(&priv_done[u], 1, memory_order_relaxed);
            continue;
        }
        if (op < 5) {               /* transfer */
            int a = (int)((r >> 8) % NACCTS), b = (int)((r >> 20) % NACCTS);
            if (a == b)
                b = (b + 1) % NACCTS;
            long amt = (long)((r >> 32) % 50);
            SYNC_ATOMIC("stress.transfer") {
                alone += !stm_self.mark;
                SYNC_WRITE(accts[a]);
                SYNC_WRITE(accts[b]);
                accts[a]->balance -= amt;
                accts[b]->balance += amt;
            }
        } else if (op < 6) {        /* audit, checked inside the transaction */
            SYNC_ATOMIC("stress.audit") {
                long sum = 0;
                for (int k = 0; k < NACCTS; k++) {
                    SYNC_READ(accts[k]);
                    sum += accts[k]->balance;
                }
                if (sum != (long)NACCTS * INITIAL)
                    atomic_fetch_add(&violations, 1);
            }
        } else if (op < 8) {        /* lost-update counters */
            SYNC_ATOMIC("stress.counter") {
                alone += !stm_self.mark;
                SYNC_WRITE(counter);
                counter->balance++;
                SYNC_WRITE(own[tid]);
                own[tid]->balance++;
            }
            /* after the block: it committed exactly once (a skipped re-run after an
             * abort would lose both increments together; this count catches it) */
            atomic_fetch_add_explicit(&counter_blocks, 1, memory_order_relaxed);
        } else if (op < 9) {        /* list insert at head or delete the head */
            long key = (long)(r >> 16) % 1000;
            int del = (r >> 40) & 1;
            SYNC_ATOMIC("stress.list") {
                alone += !stm_self.mark;
                SYNC_READ(list);
                if (del && list->head) {
                    node_ref h = list->head;
                    SYNC_READ(h);
                    SYNC_WRITE(list);
                    list->head = h->next;
                    list->len--;
                    list->sum -= h->key;
                    SYNC_FREE(h);
                } else {
                    node_ref n = SYNC_ALLOC(node_t);
                    n->key = key;
                    SYNC_WRITE(list);
                    n->next = list->head;
                    list->head = n;
                    list->len++;
                    list->sum += key;
                }
            }
        } else {                    /* list traversal, checked inside */
            SYNC_ATOMIC("stress.walk") {
                SYNC_READ(list);
                long len = 0, sum = 0;
                for (node_ref n = list->head; n && len <= list->len; n = n->next) {
                    SYNC_READ(n);
                    len++;
                    sum += n->key;
                }
                if (len != list->len || sum != list->sum)
                    atomic_fetch_add(&violations, 1);
            }
        }
    }
    if (tid == 0)
        atomic_store(&solo_back, 1); /* in case the loop ended inside the solo window */
    leave(&st);
    atomic_fetch_add(&alone_attempts, alone);
    pthread_mutex_lock(&total_lock);
    sync_stats_merge(&total, &st);
    pthread_mutex_unlock(&total_lock);
    sync_stats_free(&st);
    return NULL;
}

static void run_reenter(int nthreads, const char *chaos, long n, long every)
{
    setup(nthreads, chaos);
    atomic_store(&stm_test_private_commits, 0);
    atomic_store(&stm_test_unbacked_commits, 0);
    atomic_store(&stm_test_closings, 0);
    atomic_store(&stm_test_unbacked_restores, 0);
    atomic_store(&stm_test_refills, 0);
    atomic_store(&stm_test_depot_spills, 0);
    atomic_store(&stm_test_depot_takes, 0);
    reenter_every = every;
    atomic_store(&alone_attempts, 0);
    atomic_store(&solo_out, 0);
    atomic_store(&solo_back, 0);
    nthreads_running = nthreads;
    iters = n * scale();
    pthread_t th[64];
    pthread_barrier_init(&gate, NULL, (unsigned)nthreads);
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&gate);

    assert_int_equal(atomic_load(&violations), 0);
    char err[256];
    assert_int_equal(sync_runtime_stm.thread_enter(0, err, sizeof err), 0);
    long sum = 0, cnt = 0, owns = 0, len = 0, lsum = 0, llen = 0, lstored = 0, priv_bad = 0;
    SYNC_ATOMIC("stress.check") {
        sum = 0;
        for (int k = 0; k < NACCTS; k++) {
            SYNC_READ(accts[k]);
            sum += accts[k]->balance;
        }
        SYNC_READ(counter);
        cnt = counter->balance;
        owns = 0;
        for (int t = 0; t < nthreads; t++) {
            SYNC_READ(own[t]);
            owns += own[t]->balance;
        }
        SYNC_READ(list);
        len = lsum = 0;
        for (node_ref p = list->head; p; p = p->next) {
            SYNC_READ(p);
            len++;
            lsum += p->key;
        }
        llen = list->len;
        lstored = list->sum;
        SYNC_READ(dir);
        priv_bad = 0;
        for (int t = 0; t < nthreads; t++) {
            rec_ref a = dir->cur[t], b = dir->cur2[t];
            SYNC_READ(a);
            SYNC_READ(b);
            if (a->n != b->n || a->n != atomic_load(&priv_done[t]))
                priv_bad++;
        }
    }
    sync_runtime_stm.thread_exit(NULL);
    assert_int_equal(sum, (long)NACCTS * INITIAL);
    assert_int_equal(cnt, owns);          /* no lost update on the shared counter */
    assert_int_equal(cnt, atomic_load(&counter_blocks)); /* every block took effect once */
    assert_true(cnt > 0);
    assert_int_equal(len, llen);
    assert_int_equal(lsum, lstored);
    assert_int_equal(priv_bad, 0);        /* every pair: both records, every increment */
    assert_int_equal(total.commits, (unsigned long long)nthreads * (iters + 1)); /* + the pair */
    if (chaos)
        assert_true(sync_stats_aborts(&total) > 0); /* chaos forces the abort paths */
    if (every)   /* the alone mode was exercised: writing attempts begun alone */
        assert_true(atomic_load(&alone_attempts) > 0);
    print_message("threads=%d chaos=%s iters=%ld reenter=%ld alone=%ld commits=%llu "
                  "aborts=%llu (ww %llu rw %llu inev %llu other %llu) inevitable=%llu "
                  "unshared=%llu private=%lu (unbacked only %lu) taken=%lu unbacked "
                  "restores=%lu refills=%lu "
                  "depot spills=%lu takes=%lu\n",
                  nthreads, chaos ? chaos : "off", iters, every, atomic_load(&alone_attempts),
                  (unsigned long long)total.commits,
                  (unsigned long long)sync_stats_aborts(&total),
                  (unsigned long long)total.aborts[SYNC_ABORT_WRITE_WRITE],
                  (unsigned long long)total.aborts[SYNC_ABORT_READ_WRITE],
                  (unsigned long long)total.aborts[SYNC_ABORT_INEVITABLE],
                  (unsigned long long)total.aborts[SYNC_ABORT_OTHER],
                  (unsigned long long)total.inevitable, (unsigned long long)total.unshared_pages,
                  atomic_load(&stm_test_private_commits), atomic_load(&stm_test_unbacked_commits),
                  atomic_load(&stm_test_closings),
                  atomic_load(&stm_test_unbacked_restores), atomic_load(&stm_test_refills),
                  atomic_load(&stm_test_depot_spills), atomic_load(&stm_test_depot_takes));
    if (nthreads > 1 && !stm_debug_eager_pages()) /* the private path and its transitions ran */
        assert_true(atomic_load(&stm_test_private_commits) > 0 &&
                    atomic_load(&stm_test_closings) > 0);
    /* aborts of unbacked writes: chaos aborts a quarter of the attempts that reach
     * their commit with some (commit.c, commit_unbacked and commit_prepare) */
    if (nthreads > 1 && chaos && atomic_load(&stm_test_private_commits) >= 50)
        assert_true(atomic_load(&stm_test_unbacked_restores) > 0);
    sync_stats_free(&total);
    teardown();
}

static void run(int nthreads, const char *chaos, long n)
{
    run_reenter(nthreads, chaos, n, 0);
}

static void test_2_threads(void **s) { (void)s; run(2, NULL, 300000); }
static void test_2_threads_reenter(void **s) { (void)s; run_reenter(2, NULL, 200000, 2000); }
static void test_2_threads_reenter_chaos(void **s)
{
    (void)s;
    run_reenter(2, chaos_seed("13"), 20000, 200);
}
static void test_8_threads_reenter_chaos(void **s)
{
    (void)s;
    run_reenter(8, chaos_seed("17"), 3000, 100);
}
static void test_2_threads_chaos(void **s) { (void)s; run(2, chaos_seed("7"), 20000); }
static void test_8_threads(void **s) { (void)s; run(8, NULL, 60000); }
static void test_8_threads_chaos(void **s) { (void)s; run(8, chaos_seed("11"), 3000); }
static void test_1_thread(void **s) { (void)s; run(1, NULL, 20000); }
static void test_64_threads_chaos(void **s) { (void)s; run(64, chaos_seed("19"), 300); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_1_thread),
        cmocka_unit_test(test_2_threads),
        cmocka_unit_test(test_2_threads_chaos),
        cmocka_unit_test(test_8_threads),
        cmocka_unit_test(test_8_threads_chaos),
        cmocka_unit_test(test_2_threads_reenter),
        cmocka_unit_test(test_2_threads_reenter_chaos),
        cmocka_unit_test(test_8_threads_reenter_chaos),
        cmocka_unit_test(test_64_threads_chaos),
    };
    return cmocka_run_group_tests_name("stm stress", tests, NULL, NULL);
}
