/*
 * tests/test_waits.c - contention analysis's rows (docs/contract.md "Conflict log",
 * kind lock-wait) under the mutex runtime and the locks runtime's spin lock
 * (workloads/lib/wl_spin.h), driven directly (no harness); the GIL's are in
 * tests/test_gil.c.
 *
 * Two threads, ordered with semaphores: a holder takes the lock, lets the waiter
 * start, and lets go only once the waiter waits (the mutex: mutex_waiting says so; the
 * spin lock: the waiter's location hook, which its slow path calls, says so), so each
 * waiter meets a held lock whatever the timing. Worker threads never call cmocka's asserts; the main
 * thread checks what they recorded after the join.
 */
#define SYNC_RT mutex
#include "runtime/sync.h"
#include "workloads/lib/wl_spin.h"

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

static sem_t held;                 /* the holder holds: the waiter may go */
static sem_t waited;               /* the waiter left the runtime: `after` may run */
static struct sync_stats st[2];
static int enter_rc[2];

static void pause_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* The two threads of a case: each enters `rt` (thread 1 only once thread 0 holds the
 * lock), plays its part and leaves into st[tid]; `after` runs on thread 0 once it left. */
static struct {
    const struct sync_runtime *rt;
    void (*part[2])(void);
    void (*after)(void);
} cs;

static void *case_thread(void *arg)
{
    int tid = (int)(long)arg;
    char err[200];
    if (tid == 1)
        sem_wait(&held);
    enter_rc[tid] = cs.rt->thread_enter(tid, err, sizeof err);
    cs.part[tid]();
    cs.rt->thread_exit(&st[tid]);
    if (tid == 1)
        sem_post(&waited);
    if (tid == 0 && cs.after) {
        sem_wait(&waited);      /* the waiter is done: `after` must not make it wait */
        cs.after();
    }
    return NULL;
}

static void run_case(const struct sync_runtime *rt, void (*holder)(void), void (*waiter)(void),
                     void (*after)(void))
{
    struct sync_config cfg = {.nthreads = 2};
    char err[200];
    pthread_t th[2];
#if !STMBENCH_WHERE
    skip();                        /* make WHERE=0: no row is logged */
#endif
    cs.rt = rt;
    cs.part[0] = holder;
    cs.part[1] = waiter;
    cs.after = after;
    memset(st, 0, sizeof st);
    sem_init(&held, 0, 0);
    sem_init(&waited, 0, 0);
    assert_int_equal(rt->init(&cfg, err, sizeof err), 0);
    for (long i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, case_thread, (void *)i), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    rt->fini();
    sem_destroy(&held);
    sem_destroy(&waited);
    assert_int_equal(enter_rc[0], 0);
    assert_int_equal(enter_rc[1], 0);
    /* one row, the waiter's: a wait, not an abort */
    assert_int_equal(st[0].nconflicts, 0);
    assert_int_equal(st[1].nconflicts, 1);
    assert_int_equal(sync_stats_aborts(&st[1]), 0);
    assert_int_equal(st[1].conflicts[0].kind, SYNC_KIND_LOCK_WAIT);
    assert_int_equal(st[1].conflicts[0].thread, 1);
    assert_int_equal(st[1].conflicts[0].other, 0);
    assert_true(st[1].conflicts[0].wasted_ns >= 5000000);   /* the holder's last pause */
}

/* The holder's part: once `waiting` says the waiter waits (bounded: 2 s, in case it
 * never does), 5 ms more. relaxed: a signal that orders nothing else. */
static void hold_until(const atomic_int *waiting)
{
    for (int i = 0; i < 2000 && !atomic_load_explicit(waiting, memory_order_relaxed); i++)
        pause_ms(1);
    pause_ms(5);
}

/* ---- names: the kind column ---- */

static void test_kind_names(void **state)
{
    (void)state;
    assert_string_equal(sync_conflict_kind_name(SYNC_KIND_LOCK_WAIT), "lock-wait");
    assert_string_equal(sync_conflict_kind_name(SYNC_ABORT_WRITE_WRITE), "write-write");
    assert_string_equal(sync_conflict_kind_name(SYNC_ABORT_HTM_EXPLICIT), "htm-explicit");
    assert_string_equal(wl_spin_site_label(WL_AT_BANK_TRANSFER), "bank.transfer");
    assert_string_equal(wl_spin_site_label(WL_AT_HASHMAP + 2), "hashmap.delete");
    assert_null(wl_spin_site_label(WL_AT_NONE));
    assert_null(wl_spin_site_label(WL_AT_NSITES));
}

/* ---- the mutex: the waiter names the holder that let go to it ---- */

static void mutex_holder(void)
{
    SYNC_ATOMIC("test.hold") {
        sem_post(&held);
        hold_until(&mutex_waiting);
    }
}

static void mutex_waiter(void)
{
    SYNC_ATOMIC("test.wait") {
        /* empty: its begin waited */
    }
    SYNC_ATOMIC("test.alone") {
        /* nobody holds the mutex now: no row */
    }
}

static void test_mutex_wait_names_holder(void **state)
{
    (void)state;
    run_case(&sync_runtime_mutex, mutex_holder, mutex_waiter, NULL);
    const struct sync_conflict *c = &st[1].conflicts[0];
    assert_string_equal(c->site, "test.wait");
    assert_non_null(c->other_site);
    assert_string_equal(c->other_site, "test.hold");
    assert_string_equal(c->object_s, "the mutex");
    assert_int_equal(c->object, 0);
    sync_stats_free(&st[0]);
    sync_stats_free(&st[1]);
}

/* ---- the spin lock: its word names the holder and its site ---- */

static wl_spin_t lk;
static int word_held;              /* the word the holder saw while it held the lock */
static int word_outside;           /* ... and a thread outside the runtime's */
static atomic_int spin_waits;      /* the waiter's slow path asked where it is */

/* The waiter's hook: its own location 7, thread t's 100 + t. The slow path asks it
 * as the wait begins, which tells the holder it may let go. */
static uint32_t hook_self(void *arg, uintptr_t obj)
{
    (void)arg; (void)obj;
    /* relaxed: a signal to the holder, which orders nothing else through it */
    atomic_store_explicit(&spin_waits, 1, memory_order_relaxed);
    return 7;
}
static uint32_t hook_at(void *arg, int tid, uintptr_t obj)
{
    (void)arg; (void)obj;
    return 100 + (uint32_t)tid;
}

static void spin_holder(void)
{
    wl_spin_lock_at(&lk, 0x1000, WL_AT_BANK_AUDIT);
    /* relaxed: read by this thread alone */
    word_held = atomic_load_explicit(&lk.v, memory_order_relaxed);
    sem_post(&held);
    hold_until(&spin_waits);
    wl_spin_unlock(&lk);
}

static void spin_waiter(void)
{
    sync_where = (struct sync_where_hook){hook_self, NULL, hook_at};
    wl_spin_lock_at(&lk, 0x1000, WL_AT_BANK_TRANSFER);
    wl_spin_unlock(&lk);
    wl_spin_lock_at(&lk, 0x1000, WL_AT_BANK_TRANSFER);   /* free: no row */
    wl_spin_unlock(&lk);
    sync_where = (struct sync_where_hook){0};
}

/* Thread 0, out of the runtime: an anonymous, nonzero word. */
static void spin_outside(void)
{
    wl_spin_lock(&lk);
    /* relaxed: read by this thread alone */
    word_outside = atomic_load_explicit(&lk.v, memory_order_relaxed);
    wl_spin_unlock(&lk);
}

static void test_spin_wait_names_holder(void **state)
{
    (void)state;
    wl_spin_init(&lk);
    atomic_store_explicit(&spin_waits, 0, memory_order_relaxed);   /* no thread yet */
    run_case(&sync_runtime_locks, spin_holder, spin_waiter, spin_outside);
    assert_int_equal(word_held, 1 | WL_AT_BANK_AUDIT << SYNC_LOCK_SITE_SHIFT);
    assert_int_equal(word_outside, (int)SYNC_LOCK_ID_NONE);
    assert_false(wl_spin_is_held(&lk));
    const struct sync_conflict *c = &st[1].conflicts[0];
    assert_int_equal(c->object, 0x1000);
    assert_string_equal(c->site, "bank.transfer");
    assert_string_equal(c->other_site, "bank.audit");
    assert_int_equal(c->where, 7);
    assert_int_equal(c->other_where, 100);      /* asked about thread 0, the holder */
    assert_null(c->object_s);                   /* the workload names it, after the run */
    sync_stats_free(&st[0]);
    sync_stats_free(&st[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_names),
        cmocka_unit_test(test_mutex_wait_names_holder),
        cmocka_unit_test(test_spin_wait_names_holder),
    };
    return cmocka_run_group_tests_name("waits", tests, NULL, NULL);
}
