/*
 * tests/test_stm.c - deterministic protocol tests of the STM: two threads stepped one
 * at a time with semaphores, asserting which transaction aborts, why, and what every
 * thread saw. Each test initialises a fresh runtime.
 */
#define SYNC_RT stm
#include "runtime/sync.h"
#include "runtime/stm/stm_internal.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

typedef struct cell {
    SYNC_OBJECT_HEADER;
    long v;
    SYNC_REF(struct cell) next;
} cell_t;
typedef SYNC_REF(cell_t) cell_ref;

static cell_ref X, Y, ROOT;
static sem_t s_a, s_b, s_main;
static struct sync_stats st_a, st_b;

static void share_heap(void);

static void rt_up(int nthreads)
{
    char err[256] = "";
    struct sync_config cfg = {.nthreads = nthreads, .heap_bytes = 64u << 20};
    assert_int_equal(sync_runtime_stm.init(&cfg, err, sizeof err), 0);
    memset(&st_a, 0, sizeof st_a);
    memset(&st_b, 0, sizeof st_b);
    sem_init(&s_a, 0, 0);
    sem_init(&s_b, 0, 0);
    sem_init(&s_main, 0, 0);
    /* the main thread builds the data as thread 0, then leaves */
    assert_int_equal(sync_runtime_stm.thread_enter(0, err, sizeof err), 0);
    SYNC_ATOMIC("test.setup") {
        X = SYNC_ALLOC(cell_t);
        Y = SYNC_ALLOC(cell_t);
        ROOT = SYNC_ALLOC(cell_t);
        ROOT->next = SYNC_ALLOC(cell_t);
        ROOT->next->v = 7;
    }
    sync_runtime_stm.thread_exit(NULL);
    share_heap();
}

/* The setup's objects start shared: the granules allocated so far (by a thread that has
 * left) are marked GS_SHARED, as if another segment had brought them in too. The tests
 * of the logged protocol race on such data; a thread's commits that touch only granules
 * it alone holds go without a log entry ("Private commits", DESIGN.md), and the tests of
 * that path allocate their own. No thread is entered here. */
static void share_heap(void)
{
    uintptr_t end = stm_debug_heap_cursor();
    for (size_t g = 0; g < G.ngranules && granule_off(g) < end; g++)
        atomic_store(&G.gshare[g], gs_word(GS_SHARED, 0, 0));
}

static void rt_down(void)
{
    sync_stats_free(&st_a);
    sync_stats_free(&st_b);
    sync_runtime_stm.fini();
}

static long committed_v(cell_ref c)
{
    return ((const cell_t *)stm_debug_committed(c))->v;
}

static struct stm_seg *seg_of(int tid) { return &G.segs[tid + 1]; }

static pthread_barrier_t entered;
static int stepping; /* run2 is running: enter() waits until both threads entered */

/* Enters the runtime; inside run2 both threads are entered before either goes on, so
 * each sees the other as active (a thread alone skips write ownership). */
static void enter(int tid)
{
    char err[256];
    if (sync_runtime_stm.thread_enter(tid, err, sizeof err) != 0)
        fail_msg("%s", err);
    if (stepping)
        pthread_barrier_wait(&entered);
}

static void run2(void *(*a)(void *), void *(*b)(void *))
{
    pthread_t ta, tb;
    pthread_barrier_init(&entered, NULL, 2);
    stepping = 1;
    pthread_create(&ta, NULL, a, NULL);
    pthread_create(&tb, NULL, b, NULL);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    stepping = 0;
    pthread_barrier_destroy(&entered);
}

/* ---- read-write: A reads X, B commits X, A's commit aborts and the retry wins ---- */
static int rw_attempts_a;
static void *rw_a(void *arg)
{
    (void)arg;
    enter(0);
    SYNC_ATOMIC("test.rw.a") {
        rw_attempts_a++;
        SYNC_READ(X);
        long x = X->v;
        if (rw_attempts_a == 1) {
            sem_post(&s_b);  /* B: commit your write to X now */
            sem_wait(&s_a);  /* ... done */
        }
        SYNC_WRITE(Y);
        Y->v = x + 1;
    }
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *rw_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.rw.b") {
        SYNC_WRITE(X);
        X->v = 100;
    }
    sem_post(&s_a);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_read_write_conflict(void **state)
{
    (void)state;
    rt_up(2);
    rw_attempts_a = 0;
    run2(rw_a, rw_b);
    assert_int_equal(rw_attempts_a, 2);
    assert_int_equal(st_a.aborts[SYNC_ABORT_READ_WRITE], 1);
    assert_int_equal(sync_stats_aborts(&st_b), 0);
    assert_int_equal(committed_v(X), 100);
    assert_int_equal(committed_v(Y), 101); /* the retry read B's value */
    assert_int_equal(st_a.nconflicts, 1);
    assert_int_equal(st_a.conflicts[0].other, 1);
    assert_int_equal(st_a.conflicts[0].object, (uintptr_t)X);
    assert_string_equal(st_a.conflicts[0].site, "test.rw.a");
    if (!stm_debug_eager_pages())
        assert_true(st_a.unshared_pages > 0); /* X's granule was faulted in */
    rt_down();
}

/* ---- read-write, A begun alone: A reads X without marking it (no other thread was
 * entered at its begin); B enters and commits X; A's commit finds B's entry, has no
 * markers to validate by, and aborts; the retry marks, reads B's value and wins ---- */
static int alone_attempts_a, alone_marked[3];
static void *alone_a(void *arg)
{
    (void)arg;
    enter(0);               /* alone: B enters only after A's first read */
    SYNC_ATOMIC("test.alone.a") {
        int k = alone_attempts_a++;
        if (k < 3)
            alone_marked[k] = stm_self.mark;
        SYNC_READ(X);
        long x = X->v;
        if (k == 0) {
            sem_post(&s_b);  /* B: enter and commit your write to X now */
            sem_wait(&s_a);  /* ... done */
        }
        SYNC_WRITE(Y);
        Y->v = x + 1;
    }
    sem_post(&s_b);         /* B may leave */
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *alone_b(void *arg)
{
    (void)arg;
    sem_wait(&s_b);
    char err[256];
    if (sync_runtime_stm.thread_enter(1, err, sizeof err) != 0)
        fail_msg("%s", err);
    SYNC_ATOMIC("test.alone.b") {
        SYNC_WRITE(X);
        X->v = 100;
    }
    sem_post(&s_a);
    sem_wait(&s_b);         /* stay entered until A committed: its retry marks */
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_read_write_conflict_begun_alone(void **state)
{
    (void)state;
    rt_up(2);
    alone_attempts_a = 0;
    memset(alone_marked, 0xff, sizeof alone_marked);
    pthread_t ta, tb;
    pthread_create(&ta, NULL, alone_a, NULL);
    pthread_create(&tb, NULL, alone_b, NULL);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_int_equal(alone_attempts_a, 2);
    assert_int_equal(alone_marked[0], 0);  /* begun alone: no read markers */
    assert_int_equal(alone_marked[1], 1);  /* B entered: the retry marks */
    assert_int_equal(st_a.aborts[SYNC_ABORT_READ_WRITE], 1);
    assert_int_equal(sync_stats_aborts(&st_b), 0);
    assert_int_equal(committed_v(X), 100);
    assert_int_equal(committed_v(Y), 101); /* no lost update: the retry read B's value */
    assert_int_equal(st_a.nconflicts, 1);
    assert_int_equal(st_a.conflicts[0].other, 1);
    assert_int_equal(st_a.conflicts[0].object, 0);   /* unknown: nothing was marked */
    rt_down();
}

/* ---- read-write found by the write barrier names the commit, not the last taker:
 * A's snapshot predates B's commit of X; C then takes X and aborts (its word goes back
 * to B's revision, but C stays X's last taker); A's write of X finds X committed after
 * its snapshot and aborts read-write. The other side must be B, from B's log entry
 * (its thread, block and location), not C, which never committed X ---- */
static sem_t s_c, s_go_c, s_b2;
static int rwn_attempts_a, rwn_phase_c;
static struct sync_stats st_c;
static pthread_barrier_t entered3;

static void enter3(int tid)
{
    char err[256];
    if (sync_runtime_stm.thread_enter(tid, err, sizeof err) != 0)
        fail_msg("%s", err);
    pthread_barrier_wait(&entered3);   /* all three entered: ownership is taken */
}

static void *rwn_a(void *arg)
{
    (void)arg;
    enter3(0);
    SYNC_ATOMIC("test.rwn.a") {
        int k = rwn_attempts_a++;
        SYNC_READ(Y);
        long y = Y->v;
        if (k == 0) {
            sem_post(&s_b);   /* B: commit X */
            sem_wait(&s_a);   /* ... and C took X and aborted */
        }
        SYNC_WRITE(X);
        X->v = y + 1;
    }
    sem_post(&s_go_c);        /* C may finish */
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}

static void *rwn_b(void *arg)
{
    (void)arg;
    enter3(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.rwn.b.x") {
        SYNC_WRITE(X);
        X->v = 100;
    }
    sem_post(&s_c);           /* C: take X */
    sem_wait(&s_b2);          /* C holds X */
    SYNC_ATOMIC("test.rwn.b.w") {
        SYNC_WRITE(ROOT->next);
        ROOT->next->v = 8;
    }
    sem_post(&s_c);           /* C: commit (and abort: it read the old W) */
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}

static void *rwn_c(void *arg)
{
    (void)arg;
    enter3(2);
    sem_wait(&s_c);
    SYNC_ATOMIC("test.rwn.c") {
        if (rwn_phase_c == 1) {
            rwn_phase_c = 2;
            sem_post(&s_a);   /* A: write X now */
            sem_wait(&s_go_c);
        }
        SYNC_READ(ROOT);
        cell_ref w = ROOT->next;
        SYNC_READ(w);
        long v = w->v;
        SYNC_WRITE(X);
        if (rwn_phase_c == 0) {
            rwn_phase_c = 1;
            sem_post(&s_b2);  /* B: commit W, which we read */
            sem_wait(&s_c);
        }
        X->v = v;
    }
    sync_runtime_stm.thread_exit(&st_c);
    return NULL;
}

static void test_read_write_names_the_committer(void **state)
{
    (void)state;
    rt_up(3);
    memset(&st_c, 0, sizeof st_c);
    sem_init(&s_c, 0, 0);
    sem_init(&s_go_c, 0, 0);
    sem_init(&s_b2, 0, 0);
    rwn_attempts_a = rwn_phase_c = 0;
    pthread_barrier_init(&entered3, NULL, 3);
    pthread_t t[3];
    void *(*fn[3])(void *) = {rwn_a, rwn_b, rwn_c};
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, fn[i], NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&entered3);
    /* C aborted read-write on its commit (it read W before B's commit of W), and
     * maybe at its writes of X (a snapshot behind B's or A's commit of X) */
    assert_true(st_c.aborts[SYNC_ABORT_READ_WRITE] >= 1);
    assert_int_equal(rwn_phase_c, 2);
    /* A aborted once, read-write, at its write of X: the other side is B's commit */
    assert_int_equal(rwn_attempts_a, 2);
    assert_int_equal(st_a.aborts[SYNC_ABORT_READ_WRITE], 1);
    assert_int_equal(st_a.nconflicts, 1);
    const struct sync_conflict *c = &st_a.conflicts[0];
    assert_int_equal(c->object, (uintptr_t)X);
    assert_int_equal(c->other, 1);
    assert_non_null(c->other_site);
    assert_string_equal(c->other_site, "test.rwn.b.x");
    assert_int_equal(committed_v(X), 8);   /* C's retry wrote W's new value last */
    sync_stats_free(&st_c);
    sem_destroy(&s_c);
    sem_destroy(&s_go_c);
    sem_destroy(&s_b2);
    rt_down();
}

/* ---- write-write: A owns X, B's write aborts (write-write), no update is lost ---- */
static int ww_attempts_b;
static void *ww_a(void *arg)
{
    (void)arg;
    enter(0);
    SYNC_ATOMIC("test.ww.a") {
        SYNC_WRITE(X);
        X->v += 10;
        sem_post(&s_b); /* B: try to write X */
        sem_wait(&s_a); /* B has aborted once */
    }
    sem_post(&s_b);     /* committed */
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *ww_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.ww.b") {
        ww_attempts_b++;
        if (ww_attempts_b == 2) {
            sem_post(&s_a); /* A: commit */
            sem_wait(&s_b);
        }
        SYNC_WRITE(X);
        X->v += 1;
    }
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_write_write_conflict(void **state)
{
    (void)state;
    rt_up(2);
    ww_attempts_b = 0;
    run2(ww_a, ww_b);
    assert_int_equal(sync_stats_aborts(&st_a), 0);
    assert_int_equal(st_b.aborts[SYNC_ABORT_WRITE_WRITE], 1);
    assert_int_equal(st_b.conflicts[0].kind, SYNC_ABORT_WRITE_WRITE);
    assert_int_equal(st_b.conflicts[0].other, 0);
    assert_true(ww_attempts_b >= 2);
    assert_int_equal(committed_v(X), 11); /* both increments, none lost */
    rt_down();
}

/* ---- an inevitable transaction is never aborted; others' commits wait for it ---- */
static int inev_attempts_a;
static long inev_seen;
static void *inev_a(void *arg)
{
    (void)arg;
    enter(0);
    SYNC_ATOMIC("test.inev.a") {
        inev_attempts_a++;
        sync_inevitable();
        SYNC_READ(X);
        long x = X->v;
        sem_post(&s_b); /* B: write X and try to commit */
        sem_wait(&s_a); /* main saw that B could not commit */
        SYNC_READ(X);
        inev_seen = X->v;   /* still our snapshot */
        SYNC_WRITE(Y);
        Y->v = x + 1;
    }
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static sem_t s_b_done;
static void *inev_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.inev.b") {
        SYNC_WRITE(X);
        X->v = 100;
    }
    sem_post(&s_b_done);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_inevitable_never_aborts(void **state)
{
    (void)state;
    rt_up(2);
    sem_init(&s_b_done, 0, 0);
    inev_attempts_a = 0;
    pthread_t ta, tb;
    pthread_barrier_init(&entered, NULL, 2);
    stepping = 1;
    pthread_create(&ta, NULL, inev_a, NULL);
    pthread_create(&tb, NULL, inev_b, NULL);
    for (int i = 0; i < 50; i++) {
        sched_yield();
        /* B cannot have committed while A is inevitable and running */
        assert_int_equal(sem_trywait(&s_b_done), -1);
        assert_int_equal(committed_v(X), 0);
    }
    sem_post(&s_a);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    stepping = 0;
    pthread_barrier_destroy(&entered);
    assert_int_equal(inev_attempts_a, 1);
    assert_int_equal(sync_stats_aborts(&st_a), 0);
    assert_int_equal(inev_seen, 0);
    assert_int_equal(committed_v(Y), 1);
    assert_int_equal(committed_v(X), 100);
    assert_int_equal(st_a.inevitable, 1);
    rt_down();
}

/* ---- an aborted transaction's writes and allocations are gone ---- */
static int ab_attempts;
static uintptr_t ab_alloc[3];
static long ab_seen_before_write[3];
static long ab_committed_during;
static void *ab_a(void *arg)
{
    (void)arg;
    enter(0);
    SYNC_ATOMIC("test.abort.a") {
        int k = ab_attempts++;
        SYNC_READ(Y);
        long y = Y->v;
        SYNC_READ(X);
        ab_seen_before_write[k] = X->v;
        SYNC_WRITE(X);
        X->v = 555 + y;
        cell_ref n = SYNC_ALLOC(cell_t);
        n->v = 42;
        X->next = n;
        ab_alloc[k] = (uintptr_t)n;
        if (k == 0) {
            sem_post(&s_b); /* B: change Y and commit */
            sem_wait(&s_a);
            ab_committed_during = committed_v(X);
        }
    }
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *ab_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.abort.b") {
        SYNC_WRITE(Y);
        Y->v = 1;
    }
    sem_post(&s_a);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_abort_discards_writes_and_allocations(void **state)
{
    (void)state;
    rt_up(2);
    ab_attempts = 0;
    run2(ab_a, ab_b);
    assert_int_equal(ab_attempts, 2);
    assert_int_equal(ab_committed_during, 0);      /* nothing of A escaped before commit */
    assert_int_equal(ab_seen_before_write[1], 0);  /* the retry saw the restored X */
    assert_int_equal(ab_alloc[1], ab_alloc[0]);    /* the first attempt's object is gone */
    assert_int_equal(committed_v(X), 556);
    enter(0);
    long v = -1, nv = -1;
    SYNC_ATOMIC("test.abort.check") {
        SYNC_READ(X);
        cell_ref n = X->next;
        SYNC_READ(n);
        v = X->v;
        nv = n->v;
    }
    sync_runtime_stm.thread_exit(NULL);
    assert_int_equal(v, 556);
    assert_int_equal(nv, 42);
    rt_down();
}

/* ---- opacity: a transaction that read a stale X never sees a newer Y beside it ---- */
static long op_x, op_y;
static int op_attempts;
static void *op_a(void *arg)
{
    (void)arg;
    enter(0);
    SYNC_ATOMIC("test.opacity.a") {
        op_attempts++;
        SYNC_READ(X);
        long x = X->v;
        if (op_attempts == 1) {
            sem_post(&s_b); /* B: set X = Y = 1 and commit */
            sem_wait(&s_a);
        }
        SYNC_READ(Y);
        op_x = x;
        op_y = Y->v;
    }
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *op_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.opacity.b") {
        SYNC_WRITE(X);
        X->v = 1;
        SYNC_WRITE(Y);
        Y->v = 1;
    }
    sem_post(&s_a);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_opacity_snapshot(void **state)
{
    (void)state;
    rt_up(2);
    op_attempts = 0;
    run2(op_a, op_b);
    assert_int_equal(op_x, op_y);   /* never (0, 1) */
    assert_int_equal(op_x, 0);      /* read-only: serialised before B, no abort */
    assert_int_equal(op_attempts, 1);
    assert_int_equal(committed_v(Y), 1);
    rt_down();
}

/* ---- a freed object is not reused while a reader can still see it ---- */
static uintptr_t fr_obj;
static int fr_reused_while_reader;
static long fr_reader_saw;
static void *fr_a(void *arg)
{
    (void)arg;
    enter(0);
    SYNC_ATOMIC("test.free.reader") {
        SYNC_READ(ROOT);
        cell_ref o = ROOT->next;
        sem_post(&s_b); /* B: unlink and free o, then allocate a lot */
        sem_wait(&s_a);
        SYNC_READ(o);
        fr_reader_saw = o->v; /* still our snapshot's object */
    }
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *fr_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.free.unlink") {
        SYNC_READ(ROOT);
        cell_ref o = ROOT->next;
        fr_obj = (uintptr_t)o;
        SYNC_WRITE(ROOT);
        ROOT->next = SYNC_NULL;
        SYNC_FREE(o);
    }
    for (int i = 0; i < 200; i++)
        SYNC_ATOMIC("test.free.alloc") {
            cell_ref n = SYNC_ALLOC(cell_t);
            n->v = 99;
            if ((uintptr_t)n == fr_obj)
                fr_reused_while_reader = 1;
        }
    sem_post(&s_a);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_free_not_reused_while_visible(void **state)
{
    (void)state;
    rt_up(2);
    fr_reused_while_reader = 0;
    run2(fr_a, fr_b);
    assert_int_equal(fr_reused_while_reader, 0);
    assert_int_equal(fr_reader_saw, 7);
    /* once no transaction can see it, the memory is reused */
    enter(1);
    int reused = 0;
    for (int i = 0; i < 200 && !reused; i++)
        SYNC_ATOMIC("test.free.later") {
            cell_ref n = SYNC_ALLOC(cell_t);
            reused = (uintptr_t)n == fr_obj;
        }
    sync_runtime_stm.thread_exit(NULL);
    assert_true(reused);
    rt_down();
}

/* ---- lazy pages: a granule is inaccessible until first used, then up to date ---- */
static cell_ref FAR; /* a cell in another granule than X, Y and ROOT */

static void alloc_far(void)
{
    char err[256] = "";
    assert_int_equal(sync_runtime_stm.thread_enter(0, err, sizeof err), 0);
    SYNC_ATOMIC("test.far") {
        (void)sync_alloc(100 * 1024); /* a chunk of its own: FAR lands past X's granule */
        FAR = SYNC_ALLOC(cell_t);
        FAR->v = 5;
    }
    sync_runtime_stm.thread_exit(NULL);
    share_heap();
}

/* Lazy pages only: under valgrind or STM_PAGES=eager every granule is the segment's
 * own from the start (the other tests check the protocol in both modes). */
#define LAZY_ONLY()                                                                     \
    do {                                                                                \
        if (stm_debug_eager_pages()) {                                                  \
            rt_down();                                                                  \
            skip();                                                                     \
        }                                                                               \
    } while (0)

static void test_pages_lazy(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    enter(0);
    assert_false(stm_debug_page_accessible(0, X));
    SYNC_ATOMIC("test.page.read") {
        SYNC_READ(X);
        assert_int_equal(X->v, 0); /* the first access faults the granule in */
    }
    assert_true(stm_debug_page_accessible(0, X));
    SYNC_ATOMIC("test.page.write") {
        SYNC_WRITE(X);
        X->v = 5;
    }
    struct sync_stats st = {0};
    sync_runtime_stm.thread_exit(&st);
    assert_int_equal(committed_v(X), 5);
    assert_int_equal(st.pages_faulted, 16); /* one granule of 16 pages */
    assert_int_equal(st.unshared_pages, 16);
    sync_stats_free(&st);
    rt_down();
}

/* A fault on an inaccessible granule while another thread commits into it: the granule
 * shows the faulting transaction's snapshot (the other commit undone), validation then
 * aborts it, and the retry sees the new value. */
static int fault_attempts;
static long fault_seen[4];
static void *fault_a(void *arg)
{
    (void)arg;
    enter(0);
    SYNC_ATOMIC("test.fault.a") {
        int k = fault_attempts++;
        SYNC_READ(X);
        long x = X->v;
        if (k == 0) {
            sem_post(&s_b);  /* B: commit FAR now */
            sem_wait(&s_a);
        }
        SYNC_READ(FAR);
        fault_seen[k] = FAR->v; /* first attempt: faults FAR's granule in here */
        SYNC_WRITE(Y);
        Y->v = FAR->v + x;
    }
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *fault_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.fault.b") {
        SYNC_WRITE(FAR);
        FAR->v = 42;
    }
    sem_post(&s_a);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_fault_while_other_commits(void **state)
{
    (void)state;
    rt_up(2);
    alloc_far();
    fault_attempts = 0;
    run2(fault_a, fault_b);
    assert_int_equal(fault_attempts, 2);
    assert_int_equal(fault_seen[0], 5);   /* the snapshot's value, not B's */
    assert_int_equal(fault_seen[1], 42);  /* the retry imported B's commit */
    assert_int_equal(st_a.aborts[SYNC_ABORT_READ_WRITE], 1);
    assert_int_equal(committed_v(Y), 42);
    assert_int_equal(committed_v(FAR), 42);
    if (!stm_debug_eager_pages())
        assert_true(st_a.pages_faulted >= 32); /* X's granule and FAR's */
    rt_down();
}

/* A committer copies its owned objects into segment 0 after releasing the commit lock;
 * a fill that meanwhile brings the object's granule into another segment must wait for
 * those copies (it would otherwise see segment 0 without them, at a revision that
 * includes them). A parks after its link; B's first access to FAR's granule faults. */
static atomic_int late_b_done;
static long late_seen;
static void late_park(void)
{
    sem_post(&s_main); /* main: A is linked, not yet copied */
    sem_wait(&s_a);
}
static void *late_a(void *arg)
{
    (void)arg;
    enter(0);
    stm_test_after_link = late_park;
    SYNC_ATOMIC("test.late.a") {
        SYNC_WRITE(FAR);
        FAR->v = 77;
    }
    stm_test_after_link = NULL;
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *late_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.late.b") {
        SYNC_READ(FAR);
        late_seen = FAR->v; /* faults FAR's granule in: waits for A's copies */
    }
    atomic_store(&late_b_done, 1);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void *late_main(void *arg)
{
    (void)arg;
    sem_wait(&s_main);          /* A linked its entry and parks before copying */
    assert_int_equal(committed_v(FAR), 5); /* segment 0 does not have it yet */
    sem_post(&s_b);             /* B: read FAR */
    usleep(50 * 1000);
    if (!stm_debug_eager_pages())
        assert_int_equal(atomic_load(&late_b_done), 0); /* B waits in its fill */
    sem_post(&s_a);             /* A: copy */
    return NULL;
}
static void test_fill_waits_for_late_publish(void)
{
    rt_up(2);
    alloc_far();
    atomic_store(&late_b_done, 0);
    late_seen = 0;
    pthread_t tm;
    pthread_create(&tm, NULL, late_main, NULL);
    run2(late_a, late_b);
    pthread_join(tm, NULL);
    assert_int_equal(late_seen, 77);
    assert_int_equal(committed_v(FAR), 77);
    if (!stm_debug_eager_pages())
        assert_true(st_b.pages_faulted >= 16);
    rt_down();
}
static void test_fill_waits_for_late_publish_(void **state)
{
    (void)state;
    test_fill_waits_for_late_publish();
}

/* A committer copies its new objects into segment 0 after releasing the commit lock,
 * as it does the objects it owns, so it owns them too (a claim) until those copies are
 * done. Otherwise a thread that imports the entry at once could write a new object and
 * copy its own version into segment 0 first, and the creator's late copy would then
 * overwrite it with the older bytes: a lost update. A allocates NEW in a granule that
 * B already has, links it from ROOT, and parks between its link and its copies; B
 * imports the entry (no fault: the granule is B's), follows ROOT->next and writes NEW:
 * it must wait for A (write-write) and its update must be what segment 0 ends with. */
static cell_ref NEW0, NEW;
static atomic_int claim_b_done;
static int claim_b_attempts, claim_b_accessible, claim_owner_seen, claim_b_early;
static volatile long claim_sink;
static _Thread_local int claim_parks;   /* the hook is global: only A parks, once */
static void claim_park(void)
{
    if (!claim_parks)
        return;
    claim_parks = 0;
    sem_post(&s_main);          /* main: A is linked, its copies not done */
    sem_wait(&s_a);
}
static void *claim_a(void *arg)
{
    (void)arg;
    enter(0);
    SYNC_ATOMIC("test.claim.a0") {  /* opens A's chunk: NEW lands in NEW0's granule */
        NEW0 = SYNC_ALLOC(cell_t);
        NEW0->v = 1;
        SYNC_WRITE(Y);
        Y->next = NEW0;
    }
    sem_post(&s_b);             /* B: bring NEW0's and ROOT's granules in */
    sem_wait(&s_a);
    claim_parks = 1;
    stm_test_after_link = claim_park;
    SYNC_ATOMIC("test.claim.a1") {
        NEW = SYNC_ALLOC(cell_t);
        NEW->v = 11;
        SYNC_WRITE(ROOT);
        ROOT->next = NEW;
    }
    stm_test_after_link = NULL;
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *claim_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.claim.b0") {
        SYNC_READ(Y);
        SYNC_READ(Y->next);
        SYNC_READ(ROOT);
        claim_sink = Y->next->v + ROOT->v;   /* the reads fault both granules in */
    }
    sem_post(&s_a);             /* A: allocate NEW, link it, park */
    sem_wait(&s_b);             /* main: A is parked */
    SYNC_ATOMIC("test.claim.b1") {
        cell_ref n;
        claim_b_attempts++;
        SYNC_READ(ROOT);
        n = ROOT->next;         /* A's entry is imported: NEW */
        if (claim_b_attempts == 1)
            claim_b_accessible = n == NEW && stm_debug_page_accessible(1, n);
        SYNC_WRITE(n);          /* owned by A until its copies are done */
        n->v = 22;
    }
    atomic_store(&claim_b_done, 1);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void *claim_main(void *arg)
{
    (void)arg;
    sem_wait(&s_main);          /* A linked NEW and parks before copying it */
    claim_owner_seen = stm_debug_owner(NEW);
    sem_post(&s_b);             /* B: write NEW */
    usleep(50 * 1000);
    claim_b_early = atomic_load(&claim_b_done); /* 0: B waits for A's claim */
    sem_post(&s_a);             /* A: copy NEW into segment 0, then let it go */
    return NULL;
}
static void test_new_object_claimed_until_copied(void **state)
{
    (void)state;
    rt_up(2);
    atomic_store(&claim_b_done, 0);
    claim_b_attempts = claim_b_accessible = 0;
    claim_owner_seen = -2;
    claim_b_early = -1;
    pthread_t tm;
    pthread_create(&tm, NULL, claim_main, NULL);
    run2(claim_a, claim_b);
    pthread_join(tm, NULL);
    assert_int_equal((uintptr_t)NEW / GRANULE, (uintptr_t)NEW0 / GRANULE);
    assert_int_equal(claim_b_early, 0);       /* B waited while A was parked */
    assert_int_equal(claim_b_accessible, 1);  /* B reached NEW without a fill */
    assert_int_equal(claim_owner_seen, 0);    /* A (thread 0) owned NEW after its link */
    assert_true(claim_b_attempts >= 2);
    assert_true(st_b.aborts[SYNC_ABORT_WRITE_WRITE] >= 1);
    assert_int_equal(stm_debug_owner(NEW), -1);  /* let go after the commits */
    assert_int_equal(committed_v(NEW), 22);   /* B's update, not A's late copy */
    assert_true(((const cell_t *)stm_debug_committed(ROOT))->next == NEW);
    rt_down();
}

/* Commits with others entered validate and link in a window that other commits share:
 * they link by compare-and-swap, and the loser imports and validates the entry that won
 * before it tries again. A commits and parks in its window just before its link; B
 * commits meanwhile (its window is not held up by A's: the main thread checks that B is
 * done while A is still parked) and links first; A's compare-and-swap then fails. With
 * `race_conflict` A had read X, which B wrote: A must abort and its retry see B's X;
 * without, A read nothing B wrote: it must link after B at B's revision + 1, once. */
static int race_conflict, race_attempts_a, race_b_during;
static atomic_int race_b_done;
static uint64_t race_rev0, race_rev_b, race_rev_end;
static volatile long race_sink;
static _Thread_local int race_parks;     /* the hook is global: only A parks, once */
static void race_park(void)
{
    if (!race_parks)
        return;
    race_parks = 0;
    sem_post(&s_main);          /* main: A is in its window, validated, not linked */
    sem_wait(&s_a);
}
static void *race_a(void *arg)
{
    (void)arg;
    enter(0);
    SYNC_ATOMIC("test.race.warm.a") {  /* X's granule in: no fill in the window */
        SYNC_READ(X);
        SYNC_READ(Y);
        race_sink = X->v + Y->v;
    }
    sem_post(&s_b);
    sem_wait(&s_a);             /* B warmed up too */
    race_rev0 = stm_debug_rev();
    race_parks = 1;
    stm_test_before_link = race_park;
    SYNC_ATOMIC("test.race.a") {
        race_attempts_a++;
        long x = 0;
        if (race_conflict) {
            SYNC_READ(X);
            x = X->v;
        }
        SYNC_WRITE(Y);
        Y->v = x + 100;
    }
    stm_test_before_link = NULL;
    race_rev_end = stm_debug_rev();
    sem_post(&s_b);             /* B may leave now: our retry, if any, was not alone */
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *race_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.race.warm.b") {
        SYNC_READ(X);
        SYNC_READ(Y);
        race_sink = X->v + Y->v;
    }
    sem_post(&s_a);
    sem_wait(&s_b);             /* main: A is parked in its window */
    SYNC_ATOMIC("test.race.b") {
        SYNC_WRITE(X);
        X->v = 5;
    }
    race_rev_b = stm_debug_rev();
    atomic_store(&race_b_done, 1);
    sem_wait(&s_b);             /* A committed */
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void *race_main(void *arg)
{
    (void)arg;
    sem_wait(&s_main);          /* A parks before its compare-and-swap */
    sem_post(&s_b);             /* B: commit X */
    for (int i = 0; i < 2000 && !atomic_load(&race_b_done); i++)
        usleep(1000);
    race_b_during = atomic_load(&race_b_done); /* 1: B committed while A was parked */
    sem_post(&s_a);             /* A: link (the CAS fails: B's entry is there) */
    return NULL;
}
static void link_race(int conflict)
{
    rt_up(2);
    race_conflict = conflict;
    race_attempts_a = race_b_during = 0;
    atomic_store(&race_b_done, 0);
    pthread_t tm;
    pthread_create(&tm, NULL, race_main, NULL);
    run2(race_a, race_b);
    pthread_join(tm, NULL);
    assert_int_equal(race_b_during, 1);            /* windows are shared */
    assert_int_equal(race_rev_b, race_rev0 + 1);   /* B linked first */
    assert_int_equal(race_rev_end, race_rev0 + 2); /* then A, once */
    assert_int_equal(committed_v(X), 5);
    if (conflict) {
        assert_int_equal(race_attempts_a, 2);      /* A's validation of B's entry aborts */
        assert_int_equal(st_a.aborts[SYNC_ABORT_READ_WRITE], 1);
        assert_int_equal(committed_v(Y), 105);     /* the retry read B's X */
    } else {
        assert_int_equal(race_attempts_a, 1);      /* linked after B without an abort */
        assert_int_equal(sync_stats_aborts(&st_a), 0);
        assert_int_equal(committed_v(Y), 100);
    }
    assert_int_equal(stm_debug_owner(X), -1);
    assert_int_equal(stm_debug_owner(Y), -1);
    rt_down();
}
static void test_link_race_conflict_aborts(void **state)
{
    (void)state;
    link_race(1);
}
static void test_link_race_disjoint_links_after(void **state)
{
    (void)state;
    link_race(0);
}

/* The lazy publication: commits link and never move the published tail (G.log_tail,
 * G.rev); the lock's holder does, once no window is open. A commits a write of X and
 * parks in its window just after its link; B then commits two writes of Y, each linked
 * after the one before (the first after A's entry): B must finish while A is parked
 * (nobody waits for A), G.rev must not move (no commit publishes), and the newest
 * revision reached (stm_debug_rev) is 3 past the start. When A goes on and both leave
 * (each exit takes the lock), the tail is B's last entry and G.rev its revision. */
static atomic_int pub_b_done;
static uint64_t pub_rev0, pub_grev0, pub_rev_parked, pub_grev_parked, pub_grev_end, pub_rev_end;
static int pub_b_during;
static _Thread_local int pub_parks;
static void pub_park(void)
{
    if (!pub_parks)
        return;
    pub_parks = 0;
    sem_post(&s_main);          /* main: A linked (and maybe published) its entry */
    sem_wait(&s_a);
}
static void *pub_a(void *arg)
{
    (void)arg;
    enter(0);
    SYNC_ATOMIC("test.pub.warm.a") {
        SYNC_READ(X);
        SYNC_READ(Y);
        race_sink = X->v + Y->v;
    }
    sem_post(&s_b);
    sem_wait(&s_a);             /* B warmed up too */
    pub_rev0 = stm_debug_rev();
    pub_grev0 = atomic_load(&G.rev);
    pub_parks = 1;
    stm_test_linked_in_window = pub_park;
    SYNC_ATOMIC("test.pub.a") {
        SYNC_WRITE(X);
        X->v = 11;
    }
    stm_test_linked_in_window = NULL;
    pub_rev_end = stm_debug_rev();
    pub_grev_end = atomic_load(&G.rev);
    sem_post(&s_b);             /* B may leave */
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *pub_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.pub.warm.b") {
        SYNC_READ(X);
        SYNC_READ(Y);
        race_sink = X->v + Y->v;
    }
    sem_post(&s_a);
    sem_wait(&s_b);             /* main: A is parked after its link */
    for (int k = 0; k < 2; k++)
        SYNC_ATOMIC("test.pub.b") {
            SYNC_WRITE(Y);
            Y->v = 22 + k;
        }
    atomic_store(&pub_b_done, 1);
    sem_wait(&s_b);             /* A committed */
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
/* Waits for a parked thread's post; a protocol that never reaches the hook fails the
 * test (the process aborts) instead of hanging it. */
static void wait_main(const char *what)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 30;
    while (sem_timedwait(&s_main, &ts) != 0)
        if (errno != EINTR) {
            fprintf(stderr, "test_stm: no thread reached %s within 30 s\n", what);
            abort();
        }
}
static void *pub_main(void *arg)
{
    (void)arg;
    wait_main("its publication hook"); /* A parks */
    sem_post(&s_b);             /* B: commit Y */
    for (int i = 0; i < 2000 && !atomic_load(&pub_b_done); i++)
        usleep(1000);
    pub_b_during = atomic_load(&pub_b_done);
    pub_rev_parked = stm_debug_rev();
    pub_grev_parked = atomic_load(&G.rev);
    sem_post(&s_a);             /* A: go on */
    return NULL;
}
static void test_publication_lazy(void **state)
{
    (void)state;
    rt_up(2);
    pub_b_during = 0;
    atomic_store(&pub_b_done, 0);
    pthread_t tm;
    pthread_create(&tm, NULL, pub_main, NULL);
    run2(pub_a, pub_b);
    pthread_join(tm, NULL);
    assert_int_equal(pub_b_during, 1);              /* B did not wait for A */
    assert_int_equal(pub_rev_parked, pub_rev0 + 3); /* B's two commits after A's link */
    assert_int_equal(pub_grev_parked, pub_grev0);   /* no commit published */
    assert_int_equal(pub_rev_end, pub_rev0 + 3);
    assert_int_equal(pub_grev_end, pub_grev0);      /* nor A's, going on */
    /* both exits took the lock, which published the tail: B's last entry */
    struct log_entry *tail = atomic_load(&G.log_tail);
    assert_int_equal(atomic_load(&G.rev), pub_rev0 + 3);
    assert_int_equal(tail->rev, pub_rev0 + 3);
    assert_int_equal(tail->seg, 2);                 /* B's entry (segment tid + 1) */
    assert_null(atomic_load(&tail->next));
    assert_int_equal(sync_stats_aborts(&st_a), 0);
    assert_int_equal(sync_stats_aborts(&st_b), 0);
    assert_int_equal(committed_v(X), 11);
    assert_int_equal(committed_v(Y), 23);
    rt_down();
}

/* The lazy publication's bound: a committer more than PUBLISH_LAG revisions past G.rev
 * at its collection (every 32 linking commits) publishes the tail under the lock when
 * the lock is free, so that the entries nobody may free stay bounded. B commits 300
 * writes of X while A, entered, runs read-only transactions (which take no window and
 * no lock); no other thread takes the lock meanwhile, so B's tries all succeed: G.rev,
 * read by B after its commits, must be within PUBLISH_LAG + 32 of B's revision (without
 * the tries it stays where it was: nothing else publishes). */
static atomic_int lag_stop;
static uint64_t lag_grev0, lag_grev_end, lag_rev_end;
static void *lag_a(void *arg)
{
    (void)arg;
    enter(0);
    sem_post(&s_b);
    while (!atomic_load(&lag_stop))
        SYNC_ATOMIC("test.lag.a") {
            SYNC_READ(X);
            race_sink = X->v;
        }
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *lag_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);             /* A entered */
    lag_grev0 = atomic_load(&G.rev);
    for (int k = 0; k < 300; k++)
        SYNC_ATOMIC("test.lag.b") {
            SYNC_WRITE(X);
            X->v = k;
        }
    lag_grev_end = atomic_load(&G.rev);
    lag_rev_end = atomic_load(&seg_of(1)->rev);
    atomic_store(&lag_stop, 1);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_publication_when_behind(void **state)
{
    (void)state;
    rt_up(2);
    atomic_store(&lag_stop, 0);
    run2(lag_a, lag_b);
    assert_true(lag_rev_end >= lag_grev0 + 300);           /* B's 300 links */
    assert_true(lag_grev_end > lag_grev0);                 /* B published */
    assert_true(lag_rev_end - lag_grev_end <= PUBLISH_LAG + 32);
    assert_int_equal(sync_stats_aborts(&st_b), 0);
    assert_int_equal(committed_v(X), 299);
    rt_down();
}

/* The commit lock excludes the windows: a granule fill (which must see segment 0 and
 * the log stand still) waits while a commit is in its window, and then shows its own
 * snapshot. A parks in its window just before linking a write of FAR; B, whose
 * snapshot is older, reads FAR for the first time (a fault): its fill must not finish
 * while A is parked, must show FAR as of B's snapshot (5) after A linked, and B's
 * validation then aborts it; the retry sees A's 77. */
static atomic_int wfill_b_done;
static int wfill_b_during, wfill_attempts_b;
static long wfill_seen[4];
static void *wfill_a(void *arg)
{
    (void)arg;
    enter(0);
    sem_wait(&s_a);             /* B has begun its transaction */
    race_parks = 1;
    stm_test_before_link = race_park;
    SYNC_ATOMIC("test.wfill.a") {
        SYNC_WRITE(FAR);
        FAR->v = 77;
    }
    stm_test_before_link = NULL;
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *wfill_b(void *arg)
{
    (void)arg;
    enter(1);
    SYNC_ATOMIC("test.wfill.b") {
        int k = wfill_attempts_b++;
        SYNC_READ(X);
        long x = X->v;
        if (k == 0) {
            sem_post(&s_a);     /* A: commit FAR (and park in the window) */
            sem_wait(&s_b);     /* main: A is parked */
        }
        SYNC_READ(FAR);
        wfill_seen[k] = FAR->v; /* the first attempt faults FAR's granule in */
        SYNC_WRITE(Y);
        Y->v = FAR->v + x;
    }
    atomic_store(&wfill_b_done, 1);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void *wfill_main(void *arg)
{
    (void)arg;
    sem_wait(&s_main);          /* A parks in its window */
    sem_post(&s_b);             /* B: read FAR (a fill) */
    usleep(50 * 1000);
    wfill_b_during = atomic_load(&wfill_b_done); /* 0: B's fill waits for A's window */
    sem_post(&s_a);             /* A: link */
    return NULL;
}
static void test_fill_waits_for_commit_window(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    alloc_far();
    atomic_store(&wfill_b_done, 0);
    wfill_b_during = -1;
    wfill_attempts_b = 0;
    pthread_t tm;
    pthread_create(&tm, NULL, wfill_main, NULL);
    run2(wfill_a, wfill_b);
    pthread_join(tm, NULL);
    assert_int_equal(wfill_b_during, 0);
    assert_int_equal(wfill_attempts_b, 2);
    assert_int_equal(wfill_seen[0], 5);   /* B's snapshot, A's entry undone */
    assert_int_equal(wfill_seen[1], 77);  /* the retry imported A's commit */
    assert_int_equal(st_b.aborts[SYNC_ABORT_READ_WRITE], 1);
    assert_int_equal(committed_v(FAR), 77);
    assert_int_equal(committed_v(Y), 77);
    rt_down();
}

/* A fill copies segment 0 outside the commit lock, and undoes the newer entries under
 * it. B begins, A commits FAR = 77; B's first read of FAR faults. B parks after its
 * wait for older copies, before its copy: A commits FAR = 99 (so B's copy catches 99,
 * two entries newer than B's snapshot). B parks again after its copy, before the lock:
 * A commits FAR = 111 and leaves the runtime (an exit takes the lock); that must finish
 * while B is parked, which it could not if the copy held the lock. B then undoes the
 * three entries, newest first, and reads its snapshot's 5; validation aborts it, and
 * the retry reads 111. */
static int fout_attempts;
static long fout_seen[4];
static int fout_a_during;
static _Thread_local int fout_arm;  /* the hooks are global: only B's FAR fill parks */
static void fout_park_waited(void)
{
    if (!fout_arm)
        return;
    sem_post(&s_a);             /* A: commit FAR = 99 */
    sem_wait(&s_b);
}
static void fout_park_copied(void)
{
    if (!fout_arm)
        return;
    fout_arm = 0;
    sem_post(&s_a);             /* A: commit FAR = 111 and leave */
    sem_wait(&s_b);             /* main: A is done (or 10 s passed) */
}
static void *fout_a(void *arg)
{
    (void)arg;
    enter(0);
    sem_wait(&s_a);             /* B has begun */
    SYNC_ATOMIC("test.fout.a1") {
        SYNC_WRITE(FAR);
        FAR->v = 77;
    }
    sem_post(&s_b);             /* B: read FAR (a fill, which parks before its copy) */
    sem_wait(&s_a);
    SYNC_ATOMIC("test.fout.a2") {
        SYNC_WRITE(FAR);
        FAR->v = 99;
    }
    sem_post(&s_b);             /* B: copy, then park before the lock */
    sem_wait(&s_a);
    SYNC_ATOMIC("test.fout.a3") {
        SYNC_WRITE(FAR);
        FAR->v = 111;
    }
    sync_runtime_stm.thread_exit(&st_a);
    sem_post(&s_main);          /* main: A committed and left while B was parked */
    return NULL;
}
static void *fout_b(void *arg)
{
    (void)arg;
    enter(1);
    SYNC_ATOMIC("test.fout.b") {
        int k = fout_attempts++;
        SYNC_READ(X);
        long x = X->v;
        if (k == 0) {
            sem_post(&s_a);     /* A: commit FAR = 77 */
            sem_wait(&s_b);
            fout_arm = 1;
        }
        SYNC_READ(FAR);
        fout_seen[k] = FAR->v;  /* the first attempt faults FAR's granule in */
        SYNC_WRITE(Y);
        Y->v = FAR->v + x;
    }
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
/* Waits up to 10 s for a post on s_main; returns whether it came. */
static int main_waits(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 10;
    int r;
    while ((r = sem_timedwait(&s_main, &t)) != 0 && errno == EINTR)
        ;
    return r == 0;
}
static void *fout_main(void *arg)
{
    (void)arg;
    int done = main_waits();
    fout_a_during = done;       /* 1: A finished while B's fill was parked */
    sem_post(&s_b);             /* B: take the lock and undo */
    if (!done)
        sem_wait(&s_main);      /* A finishes once B let go */
    return NULL;
}
static void test_fill_copies_outside_the_lock(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    alloc_far();
    fout_attempts = 0;
    fout_a_during = -1;
    stm_test_fill_waited = fout_park_waited;
    stm_test_fill_copied = fout_park_copied;
    pthread_t tm;
    pthread_create(&tm, NULL, fout_main, NULL);
    run2(fout_a, fout_b);
    pthread_join(tm, NULL);
    stm_test_fill_waited = NULL;
    stm_test_fill_copied = NULL;
    assert_int_equal(fout_a_during, 1);
    assert_int_equal(fout_attempts, 2);
    assert_int_equal(fout_seen[0], 5);    /* B's snapshot: A's three entries undone */
    assert_int_equal(fout_seen[1], 111);  /* the retry imported them */
    assert_int_equal(st_b.aborts[SYNC_ABORT_READ_WRITE], 1);
    assert_int_equal(committed_v(FAR), 111);
    assert_int_equal(committed_v(Y), 111);
    assert_true(st_b.pages_faulted >= 32); /* X's granule and FAR's */
    rt_down();
}

/* The fill's undo runs under the lock, whose holder waits out the commit windows: that
 * wait is what makes visible the link of every entry whose late copy the fill's copy
 * may have caught. B's fill parks after its copy; A opens its window to commit FAR = 77
 * and parks before its link; B must then wait for A's window (it is not done 50 ms
 * later); A links, and B reads its snapshot's 5 (here its copy came before A's bytes
 * reached segment 0, so the undo of A's entry changes no byte: what this test checks
 * is the wait), its commit aborts, the retry reads 77. */
static atomic_int uwin_b_read;
static int uwin_b_during, uwin_attempts;
static long uwin_seen[4];
static _Thread_local int uwin_arm;
static void uwin_park_copied(void)
{
    if (!uwin_arm)
        return;
    uwin_arm = 0;
    sem_post(&s_a);             /* A: commit FAR, parking in the window */
    sem_wait(&s_b);             /* main: A is parked */
}
static _Thread_local int uwin_link_arm;
static void uwin_park_link(void)
{
    if (!uwin_link_arm)
        return;
    uwin_link_arm = 0;
    sem_post(&s_main);          /* main: A is in its window, before its link */
    sem_wait(&s_a);
}
static void *uwin_a(void *arg)
{
    (void)arg;
    enter(0);
    sem_wait(&s_a);             /* B parked after its copy */
    uwin_link_arm = 1;
    stm_test_before_link = uwin_park_link;
    SYNC_ATOMIC("test.uwin.a") {
        SYNC_WRITE(FAR);
        FAR->v = 77;
    }
    stm_test_before_link = NULL;
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *uwin_b(void *arg)
{
    (void)arg;
    enter(1);
    SYNC_ATOMIC("test.uwin.b") {
        int k = uwin_attempts++;
        SYNC_READ(X);
        long x = X->v;
        if (k == 0)
            uwin_arm = 1;
        SYNC_READ(FAR);
        uwin_seen[k] = FAR->v;  /* the first attempt faults FAR's granule in */
        atomic_store(&uwin_b_read, 1);
        SYNC_WRITE(Y);
        Y->v = FAR->v + x;
    }
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void *uwin_main(void *arg)
{
    (void)arg;
    sem_wait(&s_main);          /* A parks in its window */
    sem_post(&s_b);             /* B: take the lock and undo */
    usleep(50 * 1000);
    uwin_b_during = atomic_load(&uwin_b_read); /* 0: B's lock waits for A's window */
    sem_post(&s_a);             /* A: link */
    return NULL;
}
static void test_fill_undo_waits_for_commit_window(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    alloc_far();
    atomic_store(&uwin_b_read, 0);
    uwin_b_during = -1;
    uwin_attempts = 0;
    stm_test_fill_copied = uwin_park_copied;
    pthread_t tm;
    pthread_create(&tm, NULL, uwin_main, NULL);
    run2(uwin_a, uwin_b);
    pthread_join(tm, NULL);
    stm_test_fill_copied = NULL;
    assert_int_equal(uwin_b_during, 0);
    assert_int_equal(uwin_attempts, 2);
    assert_int_equal(uwin_seen[0], 5);    /* B's snapshot, A's entry undone */
    assert_int_equal(uwin_seen[1], 77);   /* the retry imported A's commit */
    assert_int_equal(st_b.aborts[SYNC_ABORT_READ_WRITE], 1);
    assert_int_equal(committed_v(FAR), 77);
    assert_int_equal(committed_v(Y), 77);
    rt_down();
}

/* A fill waits only for the copies of commits at or before its snapshot: a segment
 * whose rev is past the snapshot has none left. B begins; A commits FAR = 77 and parks
 * between its link and its copies (its rev is past B's snapshot); B's first read of FAR
 * faults: the fill must finish while A is parked (it would wait for A's `publishing`
 * flag, and then for the lock's wait for it, if it did not look at A's rev) and read 5;
 * B's commit aborts, and the retry reads 77. */
static atomic_int newer_b_read;
static int newer_b_during, newer_attempts;
static long newer_seen[4];
static _Thread_local int newer_arm;
static void newer_park(void)
{
    if (!newer_arm)
        return;
    newer_arm = 0;
    sem_post(&s_main);          /* main: A linked, its copies not done */
    sem_wait(&s_a);
}
static void *newer_a(void *arg)
{
    (void)arg;
    enter(0);
    sem_wait(&s_a);             /* B has begun */
    newer_arm = 1;
    stm_test_after_link = newer_park;
    SYNC_ATOMIC("test.newer.a") {
        SYNC_WRITE(FAR);
        FAR->v = 77;
    }
    stm_test_after_link = NULL;
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *newer_b(void *arg)
{
    (void)arg;
    enter(1);
    SYNC_ATOMIC("test.newer.b") {
        int k = newer_attempts++;
        SYNC_READ(X);
        long x = X->v;
        if (k == 0) {
            sem_post(&s_a);     /* A: commit FAR and park before its copies */
            sem_wait(&s_b);     /* main: A is parked */
        }
        SYNC_READ(FAR);
        newer_seen[k] = FAR->v;  /* the first attempt faults FAR's granule in */
        atomic_store(&newer_b_read, 1);
        SYNC_WRITE(Y);
        Y->v = FAR->v + x;
    }
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void *newer_main(void *arg)
{
    (void)arg;
    sem_wait(&s_main);          /* A parks after its link */
    sem_post(&s_b);             /* B: read FAR (a fill) */
    for (int i = 0; i < 2000 && !atomic_load(&newer_b_read); i++)
        usleep(1000);
    newer_b_during = atomic_load(&newer_b_read); /* 1: B's fill did not wait for A */
    sem_post(&s_a);             /* A: copy */
    return NULL;
}
static void test_fill_skips_newer_commits(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    alloc_far();
    atomic_store(&newer_b_read, 0);
    newer_b_during = -1;
    newer_attempts = 0;
    pthread_t tm;
    pthread_create(&tm, NULL, newer_main, NULL);
    run2(newer_a, newer_b);
    pthread_join(tm, NULL);
    assert_int_equal(newer_b_during, 1);
    assert_int_equal(newer_attempts, 2);
    assert_int_equal(newer_seen[0], 5);    /* B's snapshot, A's entry undone */
    assert_int_equal(newer_seen[1], 77);   /* the retry imported A's commit */
    assert_int_equal(st_b.aborts[SYNC_ABORT_READ_WRITE], 1);
    assert_int_equal(committed_v(FAR), 77);
    assert_int_equal(committed_v(Y), 77);
    assert_true(st_b.pages_faulted >= 32); /* X's granule and FAR's: the read faulted */
    rt_down();
}

/* A fill whose snapshot is far behind undoes every later entry, newest first, on the
 * faulting thread's own stack, in the fault handler: its stack use must not grow with
 * the entries (one frame per 64 entries once overflowed a small thread stack). B, on a
 * 256 KiB stack, begins (X read: its snapshot); A commits LONG_UNDO writes to FAR; B
 * then faults FAR's granule in and must read its snapshot's 5 (the oldest entry's old
 * bytes, so the undo went newest first). In a child process: an overflow kills it, and
 * the parent reports that. */
#define LONG_UNDO 100000
static long long_seen;
static void *long_a(void *arg)
{
    (void)arg;
    enter(0);
    sem_wait(&s_a);             /* B has begun */
    for (int i = 0; i < LONG_UNDO; i++)
        SYNC_ATOMIC("test.long.a") {
            SYNC_WRITE(FAR);
            FAR->v = 1000 + i;
        }
    sem_post(&s_b);
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *long_b(void *arg)
{
    (void)arg;
    enter(1);
    int k = 0;
    SYNC_ATOMIC("test.long.b") {
        SYNC_READ(X);
        if (k++ == 0) {
            sem_post(&s_a);     /* A: commit LONG_UNDO times */
            sem_wait(&s_b);
            SYNC_READ(FAR);
            long_seen = FAR->v; /* faults FAR's granule in: undoes LONG_UNDO entries */
        }
    }
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_fill_undoes_a_long_log_on_a_small_stack(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    rt_down();
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        rt_up(2);
        alloc_far();
        long_seen = 0;
        pthread_attr_t small;
        pthread_attr_init(&small);
        pthread_attr_setstacksize(&small, 256 * 1024);
        pthread_t ta, tb;
        pthread_barrier_init(&entered, NULL, 2);
        stepping = 1;
        pthread_create(&ta, NULL, long_a, NULL);
        pthread_create(&tb, &small, long_b, NULL);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        stepping = 0;
        int rc = long_seen == 5 ? 0 : 10;
        if (!rc && st_b.pages_faulted < 16)
            rc = 11;            /* the read did not fault: no fill was tested */
        if (!rc && committed_v(FAR) != 1000 + LONG_UNDO - 1)
            rc = 12;
        if (rc == 10)
            fprintf(stderr, "B read %ld, not its snapshot's 5\n", long_seen);
        _exit(rc);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFSIGNALED(st))
        fail_msg("the child died of signal %d (a stack overflow in the fill's undo?)",
                 WTERMSIG(st));
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* Read versions are 16 bits: after 65,535 transactions a version comes back, and a
 * marker left from its last use would make a transaction that never read the object
 * abort when another thread commits it. The wrap forgets the markers of the granules
 * the thread holds: zeroed in place, or all given back to the kernel beyond
 * stm_test_marks_in_place. A, with B entered (so it
 * marks), reads X at version r0, runs empty transactions until r0 comes back, then,
 * without reading X, lets B commit X and commits a write of Y: it must not abort. */
static int wrap_attempts, wrap_back_at_r0, wrap_x_own;
static volatile long wrap_sink;
static void *wrap_a(void *arg)
{
    (void)arg;
    enter(0);
    uint16_t r0 = 0;
    SYNC_ATOMIC("test.wrap.read") {
        SYNC_READ(X);
        r0 = stm_self.rv;
        wrap_sink = X->v;       /* the read makes X's granule A's own (lazy pages) */
    }
    wrap_x_own = stm_debug_page_accessible(0, X);
    for (int i = 0; i < 65534; i++)
        SYNC_ATOMIC("test.wrap.empty") {
        }
    SYNC_ATOMIC("test.wrap.write") {
        if (wrap_attempts++ == 0) {
            wrap_back_at_r0 = stm_self.rv == r0;
            sem_post(&s_b);     /* B: commit X */
            sem_wait(&s_a);
        }
        SYNC_WRITE(Y);
        Y->v = 1;
    }
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *wrap_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.wrap.b") {
        SYNC_WRITE(X);
        X->v = 9;
    }
    sem_post(&s_a);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void wrap_case(size_t in_place)
{
    rt_up(2);
    stm_test_marks_in_place = in_place;
    stm_test_marks_cleared = 0;
    wrap_attempts = wrap_back_at_r0 = 0;
    run2(wrap_a, wrap_b);
    stm_test_marks_in_place = (size_t)64 << 20;
    assert_int_equal(wrap_back_at_r0, 1);     /* the version did come back */
    assert_int_equal(wrap_x_own, 1);
    assert_int_equal(stm_test_marks_cleared, 1);
    assert_int_equal(wrap_attempts, 1);       /* no abort for the old marker */
    assert_int_equal(sync_stats_aborts(&st_a), 0);
    assert_int_equal(committed_v(X), 9);
    assert_int_equal(committed_v(Y), 1);
    rt_down();
}
static void test_read_version_wrap_forgets_marks(void **state)
{
    (void)state;
    wrap_case((size_t)64 << 20);   /* zeroed in place */
    wrap_case(0);                  /* given back */
}

/* An inevitable transaction that asks a committer for an object after the committer
 * linked its entry (it can no longer abort) is answered by the committer's release of
 * the object; the request must not outlive that commit, or the committer's next
 * transaction aborts for nothing at its first write (found by review). A owns X and
 * parks after its link and copies, before its release; B, inevitable, writes X: it asks
 * A to abort and waits; A then releases X, and its next transaction writes Y. */
static atomic_int req_asked;
static void req_park(void)
{
    sem_post(&s_b); /* B: go inevitable and write X (A still owns it) */
    for (int i = 0; i < 5000 && !atomic_load(&seg_of(0)->abort_request); i++)
        usleep(1000);
    atomic_store(&req_asked, atomic_load(&seg_of(0)->abort_request));
}
static void *req_a(void *arg)
{
    (void)arg;
    enter(0);
    stm_test_before_release = req_park;
    SYNC_ATOMIC("test.req.a1") {
        SYNC_WRITE(X);
        X->v = 1;
    }
    stm_test_before_release = NULL;
    sem_wait(&s_a);             /* B committed */
    SYNC_ATOMIC("test.req.a2") {
        SYNC_WRITE(Y);
        Y->v = 3;
    }
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *req_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.req.b") {
        sync_inevitable();
        SYNC_WRITE(X);          /* owned by A: ask, then wait for its release */
        X->v = 2;
    }
    sem_post(&s_a);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_abort_request_ends_with_the_commit(void **state)
{
    (void)state;
    rt_up(2);
    atomic_store(&req_asked, 0);
    run2(req_a, req_b);
    assert_int_equal(atomic_load(&req_asked), 1);   /* B did ask while A owned X */
    assert_int_equal(committed_v(X), 2);
    assert_int_equal(committed_v(Y), 3);
    assert_true(st_b.inevitable >= 1);
    assert_int_equal(st_a.aborts[SYNC_ABORT_INEVITABLE], 0); /* no abort for nothing */
    assert_int_equal(sync_stats_aborts(&st_a), 0);
    rt_down();
}

/* The same request, stored after A's commit had released X and cleared its flag (the
 * requester read the ownership word just before): the requester clears it when its
 * wait ends, so A's next transaction still commits at once. A parks before its
 * release; B, inevitable, finds A owning X and parks just before its request until A
 * has finished that commit. */
static sem_t s_park;
static atomic_int late_a1_done;
static void late_ask_park(void)
{
    sem_post(&s_b);             /* B: go inevitable and write X */
    sem_wait(&s_park);          /* until B is about to ask */
}
static void late_ask(void)
{
    stm_test_before_ask = NULL;
    sem_post(&s_park);          /* A: release X, clear, finish the commit */
    while (!atomic_load(&late_a1_done))
        usleep(1000);
}
static void *late_req_a(void *arg)
{
    (void)arg;
    enter(0);
    stm_test_before_release = late_ask_park;
    SYNC_ATOMIC("test.latereq.a1") {
        SYNC_WRITE(X);
        X->v = 1;
    }
    stm_test_before_release = NULL;
    atomic_store(&late_a1_done, 1);
    sem_wait(&s_a);             /* B committed */
    SYNC_ATOMIC("test.latereq.a2") {
        SYNC_WRITE(Y);
        Y->v = 3;
    }
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *late_req_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    stm_test_before_ask = late_ask;
    SYNC_ATOMIC("test.latereq.b") {
        sync_inevitable();
        SYNC_WRITE(X);          /* A owns X when B looks; B asks after A let go */
        X->v = 2;
    }
    stm_test_before_ask = NULL;
    sem_post(&s_a);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_abort_request_after_the_commit(void **state)
{
    (void)state;
    rt_up(2);
    sem_init(&s_park, 0, 0);
    atomic_store(&late_a1_done, 0);
    run2(late_req_a, late_req_b);
    assert_int_equal(atomic_load(&late_a1_done), 1);
    assert_int_equal(committed_v(X), 2);
    assert_int_equal(committed_v(Y), 3);
    assert_true(st_b.inevitable >= 1);
    assert_int_equal(atomic_load(&seg_of(0)->abort_request), 0); /* nothing left set */
    assert_int_equal(sync_stats_aborts(&st_a), 0);           /* no abort for nothing */
    sem_destroy(&s_park);
    rt_down();
}

/* Imports copy only into granules the importer has; commits touch no other segment's
 * pages, page states or counters. */
static void *skip_a(void *arg)
{
    (void)arg;
    enter(0);
    SYNC_ATOMIC("test.skip.a1") {
        SYNC_READ(X);
        fault_seen[1] = X->v;
    }
    sem_post(&s_b); /* B: commit FAR three times */
    sem_wait(&s_a);
    assert_false(stm_debug_page_accessible(0, FAR)); /* B's commits left our pages alone */
    assert_true(stm_debug_page_accessible(0, X));
    assert_int_equal(seg_of(0)->stats.unshared_pages, 16);
    uint64_t e0 = seg_of(0)->stats.import_entries;
    SYNC_ATOMIC("test.skip.a2") { /* begin imports B's three entries */
        SYNC_READ(X);
        fault_seen[2] = X->v;
    }
    assert_int_equal(seg_of(0)->stats.import_entries - e0, 3);
    assert_int_equal(seg_of(0)->stats.import_bytes, 0); /* nothing of ours was written */
    SYNC_ATOMIC("test.skip.a3") {
        SYNC_READ(FAR);
        fault_seen[0] = FAR->v; /* never accessed before: faulted in, up to date */
    }
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *skip_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    for (int i = 1; i <= 3; i++)
        SYNC_ATOMIC("test.skip.b") {
            SYNC_WRITE(FAR);
            FAR->v = 100 + i;
        }
    sem_post(&s_a);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_import_skips_untouched_pages(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    alloc_far();
    run2(skip_a, skip_b);
    assert_int_equal(fault_seen[0], 103);
    assert_int_equal(st_a.aborts[SYNC_ABORT_READ_WRITE], 0);
    assert_int_equal(st_a.pages_faulted, 32);
    assert_int_equal(st_b.unshared_pages, 16); /* B touched FAR's granule only */
    rt_down();
}

/* Counters are exact: a thread entering while another commits counts only its own. */
static void *count_a(void *arg)
{
    (void)arg;
    enter(0);
    SYNC_ATOMIC("test.count.a") {
        SYNC_WRITE(X);
        X->v = 1;
        SYNC_WRITE(FAR);
        FAR->v = 2;
        if (fault_attempts++ == 0) {
            sem_post(&s_b); /* B: enter now (it zeroes its counters) */
            sem_wait(&s_a);
        }
    }
    sem_post(&s_b);
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *count_b(void *arg)
{
    (void)arg;
    sem_wait(&s_b);
    char err[256];
    if (sync_runtime_stm.thread_enter(1, err, sizeof err) != 0)
        fail_msg("%s", err);
    sem_post(&s_a);
    sem_wait(&s_b); /* A committed */
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_counters_exact(void **state)
{
    (void)state;
    rt_up(2);
    alloc_far();
    fault_attempts = 0;
    pthread_t ta, tb;
    pthread_create(&ta, NULL, count_a, NULL);
    pthread_create(&tb, NULL, count_b, NULL);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_int_equal(st_b.unshared_pages, 0);
    assert_int_equal(st_b.pages_faulted, 0);
    if (!stm_debug_eager_pages())
        assert_int_equal(st_a.unshared_pages, 32);
    assert_int_equal(committed_v(X), 1);
    assert_int_equal(committed_v(FAR), 2);
    rt_down();
}

/* An aborted attempt that opened chunks gives them back: its retries open none. */
/* The ring in which a thread records its published entries (log.c), stepped on one
 * thread without the runtime: 400 entries pushed in revision order, freed below a
 * minimum that trails the newest by 20, except from 150 to 260 where nothing is freed
 * (the ring grows from 64 to 128 records while its oldest is not at slot 0). After each
 * step the ring holds exactly the revisions from the minimum to the newest, in order;
 * small entries freed wait on the free stack of their size class for reuse, the big
 * ones are freed. */
static size_t ring_cap(uint64_t r)
{
    switch (r % 5) {
    case 0: return 2 * STM_ENTRY_SMALL;   /* big: never kept */
    case 1: return STM_ENTRY_MIN;
    case 2: return 2 * STM_ENTRY_MIN;
    default: return STM_ENTRY_SMALL;
    }
}
static void free_entry_stacks(struct stm_seg *s)
{
    for (int c = 0; c < STM_ENTRY_CLASSES; c++) {
        for (size_t i = 0; i < s->nfree_entries[c]; i++)
            free(s->free_entries[c][i]);
        free(s->free_entries[c]);
    }
}
static void test_own_ring_frees_in_order(void **state)
{
    (void)state;
    enum { N = 400 };
    struct stm_seg *s = aligned_alloc(64, sizeof *s);
    assert_non_null(s);
    memset(s, 0, sizeof *s);
    s->idx = 7;
    static struct log_entry *e[N + 1];
    struct log_entry *after = malloc(STM_ENTRY_SMALL); /* every entry's successor */
    assert_non_null(after);
    uint64_t min = 1;
    size_t freed[STM_ENTRY_CLASSES] = {0}, grown_wrapped = 0;
    for (uint64_t r = 1; r <= N; r++) {
        size_t cap = ring_cap(r);
        e[r] = malloc(cap);
        assert_non_null(e[r]);
        e[r]->cap = cap;
        e[r]->rev = r;
        e[r]->seg = 7;
        atomic_init(&e[r]->next, after);
        size_t cap_before = s->own_cap, head_before = s->own_head;
        stm_own_push(s, e[r]);
        grown_wrapped += s->own_cap > cap_before && cap_before && head_before;
        if (r % 7 == 0 && (r < 150 || r > 260) && r > 20) {
            for (uint64_t k = min; k < r - 20; k++)
                if (stm_entry_class(ring_cap(k)) >= 0)
                    freed[stm_entry_class(ring_cap(k))]++;
            min = r - 20;
            stm_own_free_below(s, min);
        }
        assert_int_equal(s->nown, r - min + 1);
        for (size_t i = 0; i < s->nown; i++)
            assert_ptr_equal(s->own[(s->own_head + i) % s->own_cap].e, e[min + i]);
        assert_ptr_equal(stm_test_own_oldest(s), e[min]);
        assert_ptr_equal(stm_test_own_newest(s), e[r]);
        for (int c = 0; c < STM_ENTRY_CLASSES; c++)
            assert_int_equal(s->nfree_entries[c], freed[c]);
    }
    assert_true(grown_wrapped >= 1); /* the growth met a ring whose oldest was not at 0 */
    for (int c = 0; c < STM_ENTRY_CLASSES; c++) {
        assert_true(freed[c] > 0);
        for (size_t i = 0; i < s->nfree_entries[c]; i++)
            assert_int_equal(s->free_entries[c][i]->cap, (size_t)STM_ENTRY_MIN << c);
    }
    for (size_t i = 0; i < s->nown; i++)
        free(s->own[(s->own_head + i) % s->own_cap].e);
    free_entry_stacks(s);
    free(s->own);
    free(after);
    free(s);
}

/* What a burst of outstanding entries took goes back to the allocator: a thread keeps
 * at most STM_ENTRY_KEEP freed entries of a class. 3 * STM_ENTRY_KEEP small entries are
 * recorded and then all but the newest freed at once: the stack stops at the bound (the
 * rest are freed: valgrind's run of this test would report a leak otherwise), and the
 * entries built next come from it. */
static void test_entry_keep_is_bounded(void **state)
{
    (void)state;
    enum { N = 3 * STM_ENTRY_KEEP };
    /* the class an entry is built in holds it, and is the smallest that does */
    static const size_t need[] = {1, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025, 4096};
    static const int cls[] = {0, 0, 0, 1, 1, 1, 2, 2, 2, -1, -1};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++) {
        assert_int_equal(stm_entry_class_for(need[i]), cls[i]);
        if (cls[i] >= 0)
            assert_int_equal(stm_entry_class((size_t)STM_ENTRY_MIN << cls[i]), cls[i]);
    }
    assert_int_equal(stm_entry_class(STM_ENTRY_SMALL + 1), -1);
    struct stm_seg *s = aligned_alloc(64, sizeof *s);
    assert_non_null(s);
    memset(s, 0, sizeof *s);
    s->idx = 3;
    struct log_entry *after = malloc(STM_ENTRY_MIN);
    assert_non_null(after);
    for (uint64_t r = 1; r <= N; r++) {
        struct log_entry *x = malloc(STM_ENTRY_MIN);
        assert_non_null(x);
        x->cap = STM_ENTRY_MIN;
        x->rev = r;
        x->seg = 3;
        atomic_init(&x->next, after);
        stm_own_push(s, x);
    }
    stm_own_free_below(s, N + 1);
    assert_int_equal(s->nown, 1);                      /* the newest stays */
    assert_int_equal(s->nfree_entries[0], STM_ENTRY_KEEP);
    assert_int_equal(s->nfree_entries[1] + s->nfree_entries[2], 0);
    struct log_entry *top = s->free_entries[0][STM_ENTRY_KEEP - 1];
    struct log_entry *built = stm_entry_build(s);      /* nothing written: the smallest */
    assert_ptr_equal(built, top);
    assert_int_equal(built->cap, STM_ENTRY_MIN);
    free(built);
    free(s->own[s->own_head].e);
    free(s->own);
    free_entry_stacks(s);
    free(after);
    free(s);
}

static void test_abort_keeps_no_chunk(void **state)
{
    (void)state;
    rt_up(1);
    enter(0);
    static int attempts; /* not a local: the block's retries would not see it change */
    attempts = 0;
    uintptr_t c0 = stm_debug_heap_cursor();
    SYNC_ATOMIC("test.chunks") {
        (void)sync_alloc(16);
        (void)sync_alloc(200 * 1024);
        if (++attempts < 7)
            stm_debug_abort_self();
    }
    assert_int_equal(attempts, 7);
    /* one 64 KiB chunk and one of 256 KiB, whatever the number of attempts */
    assert_true(stm_debug_heap_cursor() - c0 <= (64 + 256) * 1024);
    sync_runtime_stm.thread_exit(NULL);
    rt_down();
}

/* Leaving a block by break (or return) with the transaction open is caught and names
 * the block's site. Runs in a child process, which must abort. */
static void leave_by_break(void)
{
    enter(0);
    for (int i = 0; i < 1; i++)
        SYNC_ATOMIC("test.leave.break") {
            SYNC_WRITE(X);
            X->v = 9;
            break;
        }
    sync_runtime_stm.thread_exit(NULL);
}
static long leave_by_return_inner(void)
{
    SYNC_ATOMIC("test.leave.return") {
        SYNC_READ(X);
        return X->v;
    }
    return -1;
}
static void leave_by_return(void)
{
    enter(0);
    (void)leave_by_return_inner();
    sync_runtime_stm.thread_exit(NULL);
}
/* The next block after the return: caught at its start (its stack pointer is above the
 * abandoned block's), before an abort could jump into the dead frame. */
static void leave_by_return_then_block(void)
{
    enter(0);
    (void)leave_by_return_inner();
    SYNC_ATOMIC("test.leave.after") {
        SYNC_WRITE(Y);
        Y->v = 1;
        stm_debug_abort_self();
    }
    sync_runtime_stm.thread_exit(NULL);
}
static void expect_abort_naming(void (*fn)(void), const char *site)
{
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(pfd[1], 2);
        close(pfd[0]);
        signal(SIGABRT, SIG_DFL);
        rt_up(1);
        fn();
        _exit(0); /* not caught: the test fails */
    }
    close(pfd[1]);
    char buf[2048] = "";
    size_t n = 0;
    ssize_t r;
    while (n < sizeof buf - 1 && (r = read(pfd[0], buf + n, sizeof buf - 1 - n)) > 0)
        n += (size_t)r;
    close(pfd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGABRT);
    assert_non_null(strstr(buf, site));
}
static void test_leaving_a_block_open_is_caught(void **state)
{
    (void)state;
    expect_abort_naming(leave_by_break, "test.leave.break");
    expect_abort_naming(leave_by_return, "test.leave.return");
    expect_abort_naming(leave_by_return_then_block, "test.leave.return");
}

/* ==== Private commits (DESIGN.md, "Private commits") ====
 * A thread's own objects (allocated in its chunks, which no other segment holds) are
 * committed without a log entry while they stay its own; another thread's first access
 * takes the granule from it (GS_CLOSING, then GS_SHARED with a floor). The tests below
 * step every transition between the two. In each, A (thread 0) allocates its objects
 * itself after entering: a fresh chunk of its own. Lazy pages only (with eager pages
 * every segment holds every granule, and nothing is private). */
static cell_ref PX, PX2;
static _Thread_local int priv_arm;   /* the hooks are global: only the armed thread parks */
static void priv_park(void)
{
    if (!priv_arm)
        return;
    priv_arm = 0;
    sem_post(&s_main);
    sem_wait(&s_a);
}
static int gs_kind_of(cell_ref c) { return GS_KIND(stm_debug_gshare(c)); }
/* A's own object PX, holding v, allocated in a transaction of its own at `site`. */
static void alloc_px(const char *site, long v)
{
    SYNC_ATOMIC(site) {
        PX = SYNC_ALLOC(cell_t);
        PX->v = v;
    }
}

/* A commits its own object 100 times, allocating and freeing a scratch object in each
 * transaction, while B is entered: no entry is linked (A's `newest` stays unset, the
 * revision does not move), the scratch object is reused at once (no grace period), and
 * segment 0 holds every commit. Then B reads the object: it takes the granule
 * (GS_SHARED), sees the last value, and A's next write of it is logged. */
static int pc_reused, pc_kind_before, pc_kind_after, pc_newest_before, pc_newest_after;
static uint64_t pc_rev_before, pc_rev_after;
static long pc_seen_b, pc_seen_b2;
static void *pc_a(void *arg)
{
    (void)arg;
    enter(0);
    alloc_px("test.priv.alloc", 0);
    pc_rev_before = atomic_load(&seg_of(0)->rev);
    cell_ref first = SYNC_NULL;
    pc_reused = 1;
    for (int i = 0; i < 100; i++)
        SYNC_ATOMIC("test.priv.inc") {
            cell_ref t = SYNC_ALLOC(cell_t);  /* dead at the end: freed in the same block */
            if (i == 0)
                first = t;
            else if (t != first)
                pc_reused = 0;
            SYNC_WRITE(PX);
            PX->v++;
            SYNC_FREE(t);
        }
    pc_kind_before = gs_kind_of(PX);
    pc_newest_before = atomic_load(&seg_of(0)->newest) != NULL;
    pc_rev_after = stm_debug_rev();
    sem_post(&s_b);             /* B: read PX */
    sem_wait(&s_a);
    pc_kind_after = gs_kind_of(PX);
    SYNC_ATOMIC("test.priv.logged") {
        SYNC_WRITE(PX);
        PX->v++;
    }
    pc_newest_after = atomic_load(&seg_of(0)->newest) != NULL;
    sem_post(&s_b);
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *pc_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.priv.read") {
        SYNC_READ(PX);
        pc_seen_b = PX->v;      /* the first access: takes the granule from A */
    }
    sem_post(&s_a);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.priv.read2") {
        SYNC_READ(PX);
        pc_seen_b2 = PX->v;     /* A's logged commit, imported */
    }
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_private_commit_appends_nothing(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    unsigned long lean0 = atomic_load(&stm_test_unbacked_commits);
    run2(pc_a, pc_b);
    /* each of A's transactions allocated and freed: none took the short path */
    assert_int_equal(atomic_load(&stm_test_unbacked_commits) - lean0, 0);
    assert_int_equal(pc_kind_before, GS_PRIV);
    assert_int_equal(pc_newest_before, 0);          /* A linked no entry */
    assert_true(pc_rev_after == pc_rev_before);     /* nobody's revision moved */
    assert_int_equal(pc_reused, 1);                 /* reused at once */
    assert_int_equal(pc_seen_b, 100);
    assert_int_equal(pc_kind_after, GS_SHARED);
    assert_int_equal(pc_newest_after, 1);           /* now logged */
    assert_int_equal(pc_seen_b2, 101);
    assert_true(st_b.import_entries >= 1);
    assert_int_equal(committed_v(PX), 101);
    rt_down();
}

/* The short path of a private commit is for unbacked writes alone (commit_unbacked,
 * stm_self.dirty == STM_DIRTY_UNBACKED). A allocates Q and, in the same transaction,
 * writes PX unbacked and links Q from it (the allocation first: the write must not
 * forget it); then a second transaction writes PX unbacked first and allocates R after
 * it (the allocation's store of OTHER must replace the write's UNBACKED); then a third
 * writes PX alone. The first two must commit by the full private path, which copies
 * the new objects into segment 0 and flags them; the third by the short one. B then
 * reads PX and Q (taking the granule): both committed values, and Q's write flag set
 * in segment 0. */
static long nq_seen_px, nq_seen_q;
static unsigned long nq_lean_after_first, nq_lean_after_second;
static cell_ref nq_r;
static void *nq_a(void *arg)
{
    (void)arg;
    enter(0);
    alloc_px("test.nq.alloc", 1);
    unsigned long lean0 = atomic_load(&stm_test_unbacked_commits);
    SYNC_ATOMIC("test.nq.new") {
        cell_ref q = SYNC_ALLOC(cell_t);
        q->v = 7;
        SYNC_WRITE(PX);
        PX->next = q;
        PX->v = 2;
    }
    nq_lean_after_first = atomic_load(&stm_test_unbacked_commits) - lean0;
    SYNC_ATOMIC("test.nq.late") {
        SYNC_WRITE(PX);
        PX->v = 2;
        cell_ref r = SYNC_ALLOC(cell_t);
        r->v = 8;
        nq_r = r;
    }
    nq_lean_after_second = atomic_load(&stm_test_unbacked_commits) - lean0;
    SYNC_ATOMIC("test.nq.px") {
        SYNC_WRITE(PX);
        PX->v = 3;
    }
    sem_post(&s_b);
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *nq_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.nq.b") {
        SYNC_READ(PX);
        nq_seen_px = PX->v;     /* the first access: takes the granule */
        cell_ref q = PX->next;
        SYNC_READ(q);
        nq_seen_q = q->v;
    }
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_short_path_only_for_unbacked_writes(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    unsigned long lean0 = atomic_load(&stm_test_unbacked_commits);
    unsigned long priv0 = atomic_load(&stm_test_private_commits);
    run2(nq_a, nq_b);
    assert_int_equal(nq_lean_after_first, 0);  /* the allocating ones: the full path */
    assert_int_equal(nq_lean_after_second, 0);
    assert_int_equal(atomic_load(&stm_test_unbacked_commits) - lean0, 1);
    /* the allocation of PX, the two allocating writes, the write alone: all private */
    assert_int_equal(atomic_load(&stm_test_private_commits) - priv0, 4);
    assert_int_equal(committed_v(nq_r), 8);    /* the late allocation was committed */
    assert_true(((const struct sync_hdr *)stm_debug_committed(nq_r))->flags & STM_WB);
    assert_int_equal(nq_seen_px, 3);
    assert_int_equal(nq_seen_q, 7);
    cell_ref q = ((const cell_t *)stm_debug_committed(PX))->next;
    assert_int_equal(committed_v(q), 7);
    assert_true(((const struct sync_hdr *)stm_debug_committed(q))->flags & STM_WB);
    assert_int_equal(st_a.import_entries + st_b.import_entries, 0); /* nothing logged */
    rt_down();
}

/* A first read while the owner commits privately: A parks inside its private commit,
 * after its handshake and before its copies into segment 0; B's first access to PX
 * must wait for those copies, then see them. */
static atomic_int fp_b_done;
static long fp_seen, fp_committed_while_parked;
static int fp_b_early;
static int fp_alloc;            /* A's transaction also allocates: the full private path */
static void *fp_a(void *arg)
{
    (void)arg;
    enter(0);
    alloc_px("test.fp.alloc", 1);
    priv_arm = 1;
    stm_test_private_checked = priv_park;
    SYNC_ATOMIC("test.fp.a") {
        if (fp_alloc)
            PX->next = SYNC_ALLOC(cell_t);
        SYNC_WRITE(PX);
        PX->v = 2;
    }
    stm_test_private_checked = NULL;
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *fp_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.fp.b") {
        SYNC_READ(PX);
        fp_seen = PX->v;        /* faults: takes the granule, waits for A's copies */
    }
    atomic_store(&fp_b_done, 1);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void *fp_main(void *arg)
{
    (void)arg;
    sem_wait(&s_main);          /* A is in its private commit, nothing copied */
    fp_committed_while_parked = committed_v(PX);
    sem_post(&s_b);
    usleep(50 * 1000);
    fp_b_early = atomic_load(&fp_b_done);
    sem_post(&s_a);
    return NULL;
}
static void fill_waits_for_private_commit(int alloc)
{
    rt_up(2);
    LAZY_ONLY();
    atomic_store(&fp_b_done, 0);
    fp_alloc = alloc;
    unsigned long lean0 = atomic_load(&stm_test_unbacked_commits);
    pthread_t tm;
    pthread_create(&tm, NULL, fp_main, NULL);
    run2(fp_a, fp_b);
    pthread_join(tm, NULL);
    /* A's write of PX, unbacked, committed by the short path (commit_unbacked); with an
     * allocation beside it, by commit_private */
    assert_int_equal(atomic_load(&stm_test_unbacked_commits) - lean0, alloc ? 0 : 1);
    assert_int_equal(fp_committed_while_parked, 1);
    assert_int_equal(fp_b_early, 0);      /* B waited in its fill */
    assert_int_equal(fp_seen, 2);
    assert_int_equal(gs_kind_of(PX), GS_SHARED);
    assert_int_equal(committed_v(PX), 2);
    if (alloc)
        assert_true(((const cell_t *)stm_debug_committed(PX))->next != SYNC_NULL);
    assert_int_equal(st_a.import_entries + st_b.import_entries, 0);
    rt_down();
}
static void test_fill_waits_for_private_commit(void **state)
{
    (void)state;
    fill_waits_for_private_commit(0);
}
static void test_fill_waits_for_full_private_commit(void **state)
{
    (void)state;
    fill_waits_for_private_commit(1);
}

/* The owner's commit racing another thread's first access: A reads Y (shared) and
 * writes PX (its own) = Y + 10, and parks in its private commit before its handshake
 * (the short path: the write barrier found PX's granule ours; with an allocation beside
 * the write, commit_private, after its first, relaxed look). B then takes the granule (A is not
 * copying: no wait), reads PX and writes Y = PX + 100, and commits. A's handshake must
 * find the granule taken and commit with an entry, whose validation finds B's write of
 * Y: A aborts and its retry reads B's Y. The outcome must be serialisable: B then A
 * gives Y = 100, PX = 110; both on their snapshots (A private) would give PX = 10. */
static int rc_attempts_a, rc_alloc;
static void *rc_a(void *arg)
{
    (void)arg;
    enter(0);
    alloc_px("test.rc.alloc", 0);
    priv_arm = 1;
    stm_test_private_prechecked = priv_park;
    SYNC_ATOMIC("test.rc.a") {
        rc_attempts_a++;
        if (rc_alloc)
            (void)SYNC_ALLOC(cell_t);
        SYNC_READ(Y);
        long y = Y->v;
        SYNC_WRITE(PX);
        PX->v = y + 10;
    }
    stm_test_private_prechecked = NULL;
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *rc_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.rc.b") {
        SYNC_READ(PX);
        long x = PX->v;         /* the first access: takes PX's granule from A */
        SYNC_WRITE(Y);
        Y->v = x + 100;
    }
    sem_post(&s_main);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void *rc_main(void *arg)
{
    (void)arg;
    sem_wait(&s_main);          /* A looked private and parks */
    sem_post(&s_b);
    sem_wait(&s_main);          /* B committed */
    sem_post(&s_a);
    return NULL;
}
static void private_commit_races_first_access(int alloc)
{
    rt_up(2);
    LAZY_ONLY();
    rc_attempts_a = 0;
    rc_alloc = alloc;
    unsigned long lean0 = atomic_load(&stm_test_unbacked_commits);
    unsigned long back0 = atomic_load(&stm_test_unbacked_fallbacks);
    pthread_t tm;
    pthread_create(&tm, NULL, rc_main, NULL);
    run2(rc_a, rc_b);
    pthread_join(tm, NULL);
    /* A's first attempt (PX unbacked) reached the short path, whose handshake found the
     * granule taken (with an allocation: commit_private's); its retry wrote PX backed
     * (B holds the granule now) */
    assert_int_equal(atomic_load(&stm_test_unbacked_fallbacks) - back0, alloc ? 0 : 1);
    assert_int_equal(atomic_load(&stm_test_unbacked_commits) - lean0, 0);
    assert_int_equal(committed_v(Y), 100);
    assert_int_equal(committed_v(PX), 110);
    assert_int_equal(rc_attempts_a, 2);
    assert_int_equal(st_a.aborts[SYNC_ABORT_READ_WRITE], 1);
    assert_int_equal(gs_kind_of(PX), GS_SHARED);
    rt_down();
}
static void test_private_commit_races_first_access(void **state)
{
    (void)state;
    private_commit_races_first_access(0);
}
static void test_full_private_commit_races_first_access(void **state)
{
    (void)state;
    private_commit_races_first_access(1);
}

/* A fill that takes a granule from a holder whose snapshot is newer: A keeps PX = 2 * Y
 * and PX2 = 3 * Y (PX, PX2 its own, in two granules; Y shared). B begins at revision r
 * and reads X (round 1) or Y (round 2); A then commits Y = 5 (an entry, r + 1) and PX,
 * PX2 privately (serialised at A's snapshot, r + 1). B, still at r, reads PX: the fill
 * must first bring B's snapshot to A's (its floor). Round 1: B had not read Y, so its
 * snapshot moves on and it sees Y = 5 with PX = 10. Round 2: B had read Y, so the
 * validation aborts B from inside the fault handler, and the retry sees Y = 7 with
 * PX2 = 21. Without the floor B would see A's private values with its old Y. */
static int fl_attempts, fl_round_attempts, fl_violations;
static long fl_seen[2][2];
static void *fl_a(void *arg)
{
    (void)arg;
    enter(0);
    SYNC_ATOMIC("test.fl.alloc") {
        PX = SYNC_ALLOC(cell_t);
        (void)sync_alloc(100 * 1024); /* PX2 lands in another granule */
        PX2 = SYNC_ALLOC(cell_t);
    }
    for (int round = 0; round < 2; round++) {
        long y = round == 0 ? 5 : 7;
        sem_post(&s_b);         /* B: begin and read */
        sem_wait(&s_a);
        SYNC_ATOMIC("test.fl.y") {
            SYNC_WRITE(Y);
            Y->v = y;
        }
        SYNC_ATOMIC("test.fl.px") {
            SYNC_WRITE(PX);
            PX->v = 2 * y;
            SYNC_WRITE(PX2);
            PX2->v = 3 * y;
        }
        sem_post(&s_b);         /* B: read PX (round 1) or PX2 (round 2) */
        sem_wait(&s_a);
    }
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *fl_b(void *arg)
{
    (void)arg;
    enter(1);
    for (int round = 0; round < 2; round++) {
        sem_wait(&s_b);
        fl_round_attempts = 0;   /* a global: an abort jumps back over locals */
        SYNC_ATOMIC("test.fl.b") {
            fl_attempts++;
            long y0 = 0;
            if (round == 0) {
                SYNC_READ(X);
                y0 = X->v;      /* X's granule, at B's snapshot */
            } else {
                SYNC_READ(Y);
                y0 = Y->v;
            }
            (void)y0;
            if (fl_round_attempts++ == 0) {
                sem_post(&s_a); /* A: commit Y, then PX and PX2 privately */
                sem_wait(&s_b);
            }
            cell_ref p = round == 0 ? PX : PX2;
            SYNC_READ(p);
            long pv = p->v;     /* faults: takes the granule, reaches A's snapshot */
            SYNC_READ(Y);
            long yv = Y->v;
            if (pv != (round == 0 ? 2 : 3) * yv)
                fl_violations++;
            fl_seen[round][0] = yv;
            fl_seen[round][1] = pv;
        }
        sem_post(&s_a);
    }
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_fill_reaches_the_holders_snapshot(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    fl_attempts = fl_violations = 0;
    run2(fl_a, fl_b);
    assert_int_equal(fl_violations, 0);
    assert_int_equal(fl_seen[0][0], 5);
    assert_int_equal(fl_seen[0][1], 10);
    assert_int_equal(fl_seen[1][0], 7);
    assert_int_equal(fl_seen[1][1], 21);
    assert_int_equal(fl_attempts, 3);       /* round 2 aborted once */
    assert_int_equal(st_b.aborts[SYNC_ABORT_READ_WRITE], 1);
    assert_int_equal(st_b.conflicts[0].object, (uintptr_t)Y);
    rt_down();
}

/* A private commit followed by an abort of the same thread: A commits PX = 2 privately,
 * then writes PX = 3 and aborts; the abort must restore 2 (the private commit left
 * PX's copy with its write flag, so the write went through the barrier: an unbacked
 * one, restored from segment 0), segment 0 must hold 2
 * meanwhile, and the retry reads 2 and commits 12. B's later first access sees 12. */
static long pa_seen[2], pa_committed_at_abort;
static int pa_attempts;
static long pa_seen_b;
static void *pa_a(void *arg)
{
    (void)arg;
    enter(0);
    alloc_px("test.pa.alloc", 1);
    SYNC_ATOMIC("test.pa.commit") {
        SYNC_WRITE(PX);
        PX->v = 2;
    }
    SYNC_ATOMIC("test.pa.abort") {
        int k = pa_attempts++;
        SYNC_READ(PX);
        if (k < 2)
            pa_seen[k] = PX->v;
        SYNC_WRITE(PX);
        PX->v = k == 0 ? 3 : PX->v + 10;
        if (k == 0) {
            pa_committed_at_abort = committed_v(PX);
            stm_debug_abort_self();
        }
    }
    sem_post(&s_b);
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *pa_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.pa.b") {
        SYNC_READ(PX);
        pa_seen_b = PX->v;
    }
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_private_commit_then_abort(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    pa_attempts = 0;
    run2(pa_a, pa_b);
    assert_int_equal(pa_attempts, 2);
    assert_int_equal(pa_seen[0], 2);
    assert_int_equal(pa_seen[1], 2);        /* the abort restored the private commit's */
    assert_int_equal(pa_committed_at_abort, 2);
    assert_int_equal(committed_v(PX), 12);
    assert_int_equal(pa_seen_b, 12);
    assert_int_equal(st_a.import_entries + st_b.import_entries, 0);
    rt_down();
}

/* I7 across a private free: A links PQ (in its own chunk) from Y (shared: a logged
 * commit), B reads Y->next = PQ and parks before following it; A unlinks PQ (logged),
 * frees it (a private commit: straight onto the ready list) and reuses its memory at
 * once for an object = 999 (private). B then follows its pointer: the fill of PQ's
 * granule takes it from A and must bring B's snapshot to A's (the floor), whose
 * validation aborts B (it read Y); the retry finds Y->next NULL. Without the floor B
 * reads 999 through a pointer of its snapshot: memory reused under a reader. */
static cell_ref PQ;
static int ri_attempts, ri_reused;
static long ri_seen[2];
static void *ri_a(void *arg)
{
    (void)arg;
    enter(0);
    SYNC_ATOMIC("test.ri.link") {
        PQ = SYNC_ALLOC(cell_t);
        PQ->v = 5;
        SYNC_WRITE(Y);
        Y->next = PQ;
    }
    sem_post(&s_b);             /* B: read Y->next */
    sem_wait(&s_a);
    SYNC_ATOMIC("test.ri.unlink") {
        SYNC_WRITE(Y);
        Y->next = SYNC_NULL;
    }
    SYNC_ATOMIC("test.ri.free") {
        SYNC_FREE(PQ);
    }
    SYNC_ATOMIC("test.ri.reuse") {
        cell_ref q = SYNC_ALLOC(cell_t);
        ri_reused = q == PQ;
        q->v = 999;
    }
    sem_post(&s_b);             /* B: follow the pointer */
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *ri_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.ri.b") {
        int k = ri_attempts++;
        SYNC_READ(Y);
        cell_ref p = Y->next;
        if (k == 0) {
            sem_post(&s_a);     /* A: unlink, free, reuse */
            sem_wait(&s_b);
        }
        long v = -1;
        if (p) {
            SYNC_READ(p);
            v = p->v;           /* first access to PQ's granule: takes it from A */
        }
        ri_seen[k ? 1 : 0] = v;
    }
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_private_free_not_reused_under_reader(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    ri_attempts = ri_reused = 0;
    ri_seen[0] = ri_seen[1] = -2;
    run2(ri_a, ri_b);
    assert_int_equal(ri_reused, 1);         /* the private free was reusable at once */
    assert_true(ri_seen[0] != 999);         /* never the reused memory */
    assert_int_equal(ri_seen[0], -2);       /* the first attempt aborted in its fill */
    assert_int_equal(ri_attempts, 2);
    assert_int_equal(ri_seen[1], -1);       /* the retry sees the unlink */
    assert_int_equal(st_b.aborts[SYNC_ABORT_READ_WRITE], 1);
    assert_int_equal(gs_kind_of(PQ), GS_SHARED);
    rt_down();
}

/* A first access while the holder's *logged* commit copies late: A writes Y (shared)
 * and PX (its own) in one transaction, so it links an entry and copies both after its
 * link; it parks there. B's first read of PX takes the granule with no private commit
 * in flight (privseq even: no wait there), so the fill's own wait for imported copies
 * must hold it until A's copies are done, and B must see PX = 8 with Y = 8. */
static atomic_int lc_b_done;
static long lc_seen, lc_seen_y, lc_committed_parked;
static int lc_b_early;
static void *lc_a(void *arg)
{
    (void)arg;
    enter(0);
    alloc_px("test.lc.alloc", 1);
    priv_arm = 1;
    stm_test_after_link = priv_park;
    SYNC_ATOMIC("test.lc.a") {
        SYNC_WRITE(Y);
        Y->v = 8;
        SYNC_WRITE(PX);
        PX->v = 8;
    }
    stm_test_after_link = NULL;
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *lc_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.lc.b") {
        SYNC_READ(PX);
        lc_seen = PX->v;        /* faults: takes PX's granule from A */
        SYNC_READ(Y);
        lc_seen_y = Y->v;
    }
    atomic_store(&lc_b_done, 1);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void *lc_main(void *arg)
{
    (void)arg;
    sem_wait(&s_main);          /* A linked its entry, before its late copies */
    lc_committed_parked = committed_v(PX);
    sem_post(&s_b);
    usleep(50 * 1000);
    lc_b_early = atomic_load(&lc_b_done);
    sem_post(&s_a);
    return NULL;
}
static void test_closing_waits_for_logged_late_copies(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    atomic_store(&lc_b_done, 0);
    pthread_t tm;
    pthread_create(&tm, NULL, lc_main, NULL);
    run2(lc_a, lc_b);
    pthread_join(tm, NULL);
    assert_int_equal(lc_committed_parked, 1);
    assert_int_equal(lc_b_early, 0);        /* B waited in its fill */
    assert_int_equal(lc_seen, 8);
    assert_int_equal(lc_seen_y, 8);
    assert_int_equal(gs_kind_of(PX), GS_SHARED);
    assert_int_equal(committed_v(PX), 8);
    rt_down();
}

/* A holder that leaves and enters again keeps its private granule: A commits PX
 * privately, leaves; B commits Y meanwhile (alone); A enters again, its first read
 * of PX fills the granule without taking it (GS_PRIV of A's still) and sees its own
 * last value; its next write of PX is private again (no entry); B's first read then
 * takes the granule and sees it. */
static long re_seen_a, re_seen_b;
static int re_kind_after_fill, re_newest_after;
static void *re_a(void *arg)
{
    (void)arg;
    char err[256];
    enter(0);
    alloc_px("test.re.alloc", 3);
    SYNC_ATOMIC("test.re.w1") {
        SYNC_WRITE(PX);
        PX->v = 4;
    }
    sync_runtime_stm.thread_exit(&st_a);
    sem_post(&s_b);             /* B: commit Y */
    sem_wait(&s_a);
    if (sync_runtime_stm.thread_enter(0, err, sizeof err) != 0)
        fail_msg("%s", err);
    SYNC_ATOMIC("test.re.read") {
        SYNC_READ(PX);
        re_seen_a = PX->v;      /* fills its own granule again */
    }
    re_kind_after_fill = gs_kind_of(PX);
    SYNC_ATOMIC("test.re.w2") {
        SYNC_WRITE(PX);
        PX->v = 5;
    }
    re_newest_after = atomic_load(&seg_of(0)->newest) != NULL;
    sem_post(&s_b);             /* B: read PX */
    sem_wait(&s_a);
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *re_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.re.y") {
        SYNC_WRITE(Y);
        Y->v = 42;
    }
    sem_post(&s_a);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.re.b") {
        SYNC_READ(PX);
        re_seen_b = PX->v;
    }
    sem_post(&s_a);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_holder_enters_again_keeps_its_granule(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    run2(re_a, re_b);
    assert_int_equal(re_seen_a, 4);
    assert_int_equal(re_kind_after_fill, GS_PRIV);
    assert_int_equal(re_newest_after, 0);   /* still private: no entry */
    assert_int_equal(re_seen_b, 5);
    assert_int_equal(gs_kind_of(PX), GS_SHARED);
    assert_int_equal(committed_v(PX), 5);
    rt_down();
}

/* ==== Unbacked writes (commit.c, "Unbacked writes" at _stm_write_slowpath) ====
 * With B entered, A's first write of an object in a granule A alone holds takes no
 * ownership and saves no backup. The tests step each way out of such a write: an abort
 * while the granule is still A's (restored from segment 0), a first read by B while
 * A's abort copies (B waits), an abort after B took the granule (the granule brought
 * back to A's snapshot), a commit after B took the granule and committed the object
 * (A's late backup finds B's commit), and the inevitability taken after such a write
 * (backed and owned first). */

/* An unbacked write, then an abort while the granule is A's alone: no ownership, no
 * backup inside the attempt; the abort restores PX from segment 0 (1, not the 5 it
 * wrote), the retry commits 11 privately. */
static long ub_seen[2];
static int ub_attempts, ub_owner_in_tx, ub_newest;
static size_t ub_unbacked_in_tx, ub_backup_in_tx;
static unsigned long ub_restores;
static void *ub_a(void *arg)
{
    (void)arg;
    enter(0);
    alloc_px("test.ub.alloc", 1);
    unsigned long r0 = atomic_load(&stm_test_unbacked_restores);
    SYNC_ATOMIC("test.ub.w") {
        int k = ub_attempts++;
        SYNC_READ(PX);
        if (k < 2)
            ub_seen[k] = PX->v;
        SYNC_WRITE(PX);
        PX->v = k == 0 ? 5 : PX->v + 10;
        if (k == 0) {
            ub_owner_in_tx = stm_debug_owner(PX);
            ub_unbacked_in_tx = seg_of(0)->nunbacked;
            ub_backup_in_tx = seg_of(0)->backup_len;
            stm_debug_abort_self();
        }
    }
    ub_restores = atomic_load(&stm_test_unbacked_restores) - r0;
    ub_newest = atomic_load(&seg_of(0)->newest) != NULL;
    sem_post(&s_b);
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *ub_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_unbacked_write_then_abort(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    ub_attempts = 0;
    run2(ub_a, ub_b);
    assert_int_equal(ub_attempts, 2);
    assert_int_equal(ub_owner_in_tx, -1);        /* no ownership taken */
    assert_int_equal(ub_unbacked_in_tx, 1);
    assert_int_equal(ub_backup_in_tx, 0);        /* no backup saved */
    assert_int_equal(ub_seen[0], 1);
    assert_int_equal(ub_seen[1], 1);             /* restored from segment 0 */
    assert_int_equal(ub_restores, 1);
    assert_int_equal(committed_v(PX), 11);
    assert_int_equal(ub_newest, 0);              /* both commits private */
    assert_int_equal(gs_kind_of(PX), GS_PRIV);
    rt_down();
}

/* A first read while the owner's abort copies its unbacked write back: A writes PX = 9
 * and aborts; its restore parks after its handshake, before its copy. B's first read of
 * PX must wait until A's privseq changes (a commit of B's to PX could otherwise land in
 * segment 0 under A's copy), then see the committed 1. A's retry writes nothing. */
static atomic_int rs_b_done;
static int rs_attempts, rs_b_early;
static long rs_seen;
static void *rs_a(void *arg)
{
    (void)arg;
    enter(0);
    alloc_px("test.rs.alloc", 1);
    priv_arm = 1;
    stm_test_restore_checked = priv_park;
    SYNC_ATOMIC("test.rs.a") {
        if (rs_attempts++ == 0) {
            SYNC_WRITE(PX);
            PX->v = 9;
            stm_debug_abort_self();
        }
    }
    stm_test_restore_checked = NULL;
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *rs_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.rs.b") {
        SYNC_READ(PX);
        rs_seen = PX->v;        /* takes the granule: waits for A's restore */
    }
    atomic_store(&rs_b_done, 1);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void *rs_main(void *arg)
{
    (void)arg;
    sem_wait(&s_main);          /* A's restore checked its granule and parks */
    sem_post(&s_b);
    usleep(50 * 1000);
    rs_b_early = atomic_load(&rs_b_done);
    sem_post(&s_a);
    return NULL;
}
static void test_fill_waits_for_unbacked_restore(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    rs_attempts = 0;
    atomic_store(&rs_b_done, 0);
    pthread_t tm;
    pthread_create(&tm, NULL, rs_main, NULL);
    run2(rs_a, rs_b);
    pthread_join(tm, NULL);
    assert_int_equal(rs_attempts, 2);
    assert_int_equal(rs_b_early, 0);     /* B waited in its fill */
    assert_int_equal(rs_seen, 1);
    assert_int_equal(committed_v(PX), 1);
    assert_int_equal(gs_kind_of(PX), GS_SHARED);
    rt_down();
}

/* The owner's abort after another thread took the granule: A reads p (its own, = 1),
 * writes 5 there (unbacked) and parks inside its block; B's first read takes p's
 * granule and, in round 2, B commits p = 7 (an entry); then A aborts. Its restore must
 * find the granule taken and bring it back whole to A's snapshot (a refill, which in
 * round 2 undoes B's entry); A's retry then reads 1 (round 1), or 7 after importing
 * B's entry (round 2). Round 1 uses PX, round 2 PX2 (another granule, still A's). */
static int rf_round, rf_k;
static long rf_seen[2], rf_b_seen[2];
static unsigned long rf_refills;
static void *rf_a(void *arg)
{
    (void)arg;
    enter(0);
    SYNC_ATOMIC("test.rf.alloc") {
        PX = SYNC_ALLOC(cell_t);
        PX->v = 1;
        (void)sync_alloc(100 * 1024); /* PX2 lands in another granule */
        PX2 = SYNC_ALLOC(cell_t);
        PX2->v = 1;
    }
    unsigned long r0 = atomic_load(&stm_test_refills);
    for (rf_round = 0; rf_round < 2; rf_round++) {
        rf_k = 0;
        SYNC_ATOMIC("test.rf.a") {
            int k = rf_k++;
            cell_ref p = rf_round ? PX2 : PX;
            SYNC_READ(p);
            long v = p->v;
            if (k == 0) {
                SYNC_WRITE(p);
                p->v = 5;
                sem_post(&s_b);     /* B: take the granule */
                sem_wait(&s_a);
                stm_debug_abort_self();
            }
            rf_seen[rf_round] = v;
        }
    }
    rf_refills = atomic_load(&stm_test_refills) - r0;
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *rf_b(void *arg)
{
    (void)arg;
    enter(1);
    for (int round = 0; round < 2; round++) {
        sem_wait(&s_b);
        SYNC_ATOMIC("test.rf.b") {
            cell_ref p = round ? PX2 : PX;
            SYNC_READ(p);
            rf_b_seen[round] = p->v;
            if (round == 1) {
                SYNC_WRITE(p);
                p->v = 7;
            }
        }
        sem_post(&s_a);
    }
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_unbacked_abort_after_taken_refills(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    run2(rf_a, rf_b);
    assert_int_equal(rf_b_seen[0], 1);
    assert_int_equal(rf_b_seen[1], 1);
    assert_int_equal(rf_refills, 2);
    assert_int_equal(rf_seen[0], 1);     /* not A's 5: the granule was refilled */
    assert_int_equal(rf_seen[1], 7);
    assert_int_equal(st_a.aborts[SYNC_ABORT_OTHER], 2);
    assert_int_equal(committed_v(PX), 1);
    assert_int_equal(committed_v(PX2), 7);
    rt_down();
}

/* The owner's commit after another thread took the granule and committed the object: A
 * reads and writes PX (its own, unbacked, 1 -> 2) and parks; B takes the granule and
 * commits PX = 101 (an entry). A's commit is no longer private: its late backup takes
 * PX's ownership and finds B's revision in the word (its validation would find B's
 * entry too): a read-write abort naming B and PX. The retry reads 101 and commits 102
 * (B, then A). */
static int lb_k;
static void *lb_a(void *arg)
{
    (void)arg;
    enter(0);
    alloc_px("test.lc.alloc", 1);
    lb_k = 0;
    SYNC_ATOMIC("test.lc.a") {
        int k = lb_k++;
        SYNC_READ(PX);
        long v = PX->v;
        SYNC_WRITE(PX);
        PX->v = v + 1;
        if (k == 0) {
            sem_post(&s_b);     /* B: take PX's granule and commit PX */
            sem_wait(&s_a);
        }
    }
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *lb_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.lc.b") {
        SYNC_READ(PX);
        long v = PX->v;
        SYNC_WRITE(PX);
        PX->v = v + 100;
    }
    sem_post(&s_a);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_unbacked_commit_after_taken(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    run2(lb_a, lb_b);
    assert_int_equal(lb_k, 2);
    assert_int_equal(committed_v(PX), 102);
    assert_int_equal(st_a.aborts[SYNC_ABORT_READ_WRITE], 1);
    assert_int_equal(st_a.nconflicts, 1);
    assert_int_equal(st_a.conflicts[0].other, 1);
    assert_int_equal(st_a.conflicts[0].object, (uintptr_t)PX);
    assert_int_equal(gs_kind_of(PX), GS_SHARED);
    rt_down();
}

/* The same with B's transaction still running: B takes the granule, writes PX (it owns
 * it: the granule is shared now) and parks. A's late backup finds PX owned by B: A
 * aborts (write-write, naming B) and waits for B, whose commit then goes through
 * untouched (101); A's retry commits 102. Without the late ownership A would commit 2
 * through the lock, unseen by B until B's validation: B would be the one to abort. */
static int lo_k, lo_bk;
static void *lo_a(void *arg)
{
    (void)arg;
    enter(0);
    alloc_px("test.lo.alloc", 1);
    lo_k = 0;
    SYNC_ATOMIC("test.lo.a") {
        int k = lo_k++;
        SYNC_READ(PX);
        long v = PX->v;
        SYNC_WRITE(PX);
        PX->v = v + 1;
        if (k == 0) {
            sem_post(&s_b);     /* B: take PX's granule, write PX, park */
            sem_wait(&s_a);
        }
    }
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *lo_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    lo_bk = 0;
    SYNC_ATOMIC("test.lo.b") {
        int k = lo_bk++;
        SYNC_READ(PX);
        long v = PX->v;
        SYNC_WRITE(PX);
        PX->v = v + 100;
        if (k == 0) {
            sem_post(&s_a);     /* A: commit while we own PX */
            usleep(50 * 1000);
        }
    }
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_unbacked_commit_meets_the_takers_ownership(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    run2(lo_a, lo_b);
    assert_int_equal(committed_v(PX), 102);
    /* A's wait for B may end before B's commit (it is bounded): then its retry meets
     * B's ownership again, another write-write abort */
    assert_true(lo_k >= 2);
    assert_int_equal(lo_bk, 1);                  /* B never aborted */
    assert_int_equal(st_a.aborts[SYNC_ABORT_WRITE_WRITE], (unsigned long long)(lo_k - 1));
    assert_int_equal(st_a.nconflicts, (size_t)(lo_k - 1));
    for (size_t i = 0; i < st_a.nconflicts; i++) {
        assert_int_equal(st_a.conflicts[i].other, 1);
        assert_int_equal(st_a.conflicts[i].object, (uintptr_t)PX);
    }
    rt_down();
}

/* A logged commit with a late backup: A writes PX (its own, unbacked: first in the
 * write set) and Y (shared: backed at once), so its commit is logged and PX's backup
 * lands after Y's. The entry must still carry each run's old bytes in run order: B,
 * whose snapshot is older than A's entry and who never held Y's granule, reads Y, and
 * its fill undoes A's entry there: Y must read 0 (its value in B's snapshot), not PX's
 * old bytes. */
static long ob_seen_y, ob_seen_x;
static int ob_newest;
static void *ob_a(void *arg)
{
    (void)arg;
    enter(0);
    alloc_px("test.ob.alloc", 111);
    sem_post(&s_b);             /* B: begin, touching nothing */
    sem_wait(&s_a);
    SYNC_ATOMIC("test.ob.a") {
        SYNC_WRITE(PX);
        PX->v = 222;
        SYNC_WRITE(Y);
        Y->v = 333;
    }
    ob_newest = atomic_load(&seg_of(0)->newest) != NULL;
    sem_post(&s_b);             /* B: read Y, then X */
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *ob_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    SYNC_ATOMIC("test.ob.b") {
        sem_post(&s_a);         /* A: commit PX and Y */
        sem_wait(&s_b);
        SYNC_READ(Y);
        ob_seen_y = Y->v;       /* fills Y's granule: A's entry undone there */
        SYNC_READ(X);
        ob_seen_x = X->v;
    }
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_late_backup_keeps_the_undo_in_order(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    run2(ob_a, ob_b);
    assert_int_equal(ob_newest, 1);              /* A's commit was logged */
    assert_int_equal(ob_seen_y, 0);
    assert_int_equal(ob_seen_x, 0);
    assert_int_equal(committed_v(Y), 333);
    assert_int_equal(committed_v(PX), 222);
    rt_down();
}

/* The refill waits for the copies of the entries its thread imported: A reads X and
 * writes PX (its own, unbacked); B takes PX's granule and commits PY = 50 there (entry
 * R) and parks after its link, before its late copies; C commits X = 77 (entry R2)
 * after it. A then reads QC (C's own): the fill first extends A's snapshot to C's rev,
 * which imports R (PY = 50 into A's copy of the granule) and then meets R2 (A read X):
 * A aborts at revision R. Its restore finds PX's granule taken and refills it: segment
 * 0 must be copied only once B's late copies are done (A waits for B), or the granule
 * shows PY = 1 at revision R, which the retry's import (R2 only) never fixes. */
static cell_ref PY3, QC;
static atomic_int r3_a_done;
static int r3_k, r3_a_early;
static long r3_seen;
static volatile long r3_sink; /* loads that fault granules in */
static _Thread_local int r3_arm;
static void r3_park(void)
{
    if (!r3_arm)
        return;
    r3_arm = 0;
    sem_post(&s_main);          /* main: B linked R, its copies wait */
    sem_wait(&s_b);
}
static void *r3_a(void *arg)
{
    (void)arg;
    enter3(0);
    SYNC_ATOMIC("test.r3.alloc") {
        PX = SYNC_ALLOC(cell_t);
        PX->v = 1;
        PY3 = SYNC_ALLOC(cell_t);
        PY3->v = 1;
    }
    sem_post(&s_c);             /* C: allocate QC */
    sem_wait(&s_a);
    r3_k = 0;
    SYNC_ATOMIC("test.r3.a") {
        int k = r3_k++;
        SYNC_READ(X);
        r3_sink = X->v;
        if (k == 0) {
            SYNC_WRITE(PX);
            PX->v = 5;
            sem_post(&s_b);     /* B: take the granule, commit PY, park */
            sem_wait(&s_a);     /* ... and C committed X */
            SYNC_READ(QC);      /* the fill's extension imports R, then aborts on R2 */
            r3_sink = QC->v;
        }
        SYNC_READ(PY3);
        r3_seen = PY3->v;
    }
    atomic_store(&r3_a_done, 1);
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *r3_b(void *arg)
{
    (void)arg;
    enter3(1);
    sem_wait(&s_b);
    r3_arm = 1;
    stm_test_after_link = r3_park;
    SYNC_ATOMIC("test.r3.b") {
        SYNC_READ(PX);          /* takes A's granule */
        r3_sink = PX->v;
        SYNC_WRITE(PY3);
        PY3->v = 50;
    }
    stm_test_after_link = NULL;
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void *r3_c(void *arg)
{
    (void)arg;
    enter3(2);
    sem_wait(&s_c);
    SYNC_ATOMIC("test.r3.qc") {
        QC = SYNC_ALLOC(cell_t);
        QC->v = 9;
        SYNC_READ(X);           /* X's granule in now: no fill (and no wait for B's */
        r3_sink = X->v;         /* late copies) when C writes X later */
    }
    sem_post(&s_a);
    sem_wait(&s_c);
    SYNC_ATOMIC("test.r3.c") {
        SYNC_WRITE(X);
        X->v = 77;
    }
    sem_post(&s_main);          /* main: R2 is linked */
    sem_wait(&s_c);             /* stay entered to the end */
    sync_runtime_stm.thread_exit(&st_c);
    return NULL;
}
static void test_refill_waits_for_imported_copies(void **state)
{
    (void)state;
    rt_up(3);
    LAZY_ONLY();
    memset(&st_c, 0, sizeof st_c);
    sem_init(&s_c, 0, 0);
    atomic_store(&r3_a_done, 0);
    pthread_barrier_init(&entered3, NULL, 3);
    pthread_t t[3];
    void *(*fn[3])(void *) = {r3_a, r3_b, r3_c};
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, fn[i], NULL);
    sem_wait(&s_main);          /* B parked after its link */
    sem_post(&s_c);             /* C: commit X */
    sem_wait(&s_main);
    sem_post(&s_a);             /* A: read QC, abort, refill */
    usleep(50 * 1000);
    r3_a_early = atomic_load(&r3_a_done);
    sem_post(&s_b);             /* B: its late copies */
    pthread_join(t[1], NULL);
    pthread_join(t[0], NULL);
    sem_post(&s_c);
    pthread_join(t[2], NULL);
    pthread_barrier_destroy(&entered3);
    assert_int_equal(r3_k, 2);
    assert_int_equal(r3_a_early, 0);     /* A's refill waited for B's copies */
    assert_int_equal(r3_seen, 50);
    assert_int_equal(st_a.aborts[SYNC_ABORT_READ_WRITE], 1);
    assert_int_equal(committed_v(PY3), 50);
    assert_int_equal(committed_v(X), 77);
    sync_stats_free(&st_c);
    sem_destroy(&s_c);
    rt_down();
}

/* An inevitable transaction whose writes were unbacked until it became inevitable
 * (_stm_become_inevitable backs them) commits by the full path, which ends the
 * inevitability and gives the ownership up, even where its granules stayed private. */
static int ie_owner, ie_inevitable;
static size_t ie_unbacked;
static void *ie_a(void *arg)
{
    (void)arg;
    enter(0);
    alloc_px("test.ie.alloc", 1);
    SYNC_ATOMIC("test.ie.a") {
        SYNC_WRITE(PX);
        PX->v = 4;
        ie_unbacked = seg_of(0)->nunbacked;  /* the write was unbacked */
        sync_inevitable();
    }
    ie_owner = stm_debug_owner(PX);
    ie_inevitable = atomic_load(&G.inevitable);
    sem_post(&s_b);
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *ie_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);             /* entered, idle: A's first write is unbacked */
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_inevitable_after_unbacked_write_ends(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    unsigned long lean0 = atomic_load(&stm_test_unbacked_commits);
    run2(ie_a, ie_b);
    assert_int_equal(ie_unbacked, 1);
    assert_int_equal(ie_inevitable, 0);
    assert_int_equal(ie_owner, -1);
    assert_int_equal(atomic_load(&stm_test_unbacked_commits) - lean0, 0);
    assert_int_equal(committed_v(PX), 4);
    assert_int_equal(st_a.inevitable, 1);
    rt_down();
}

/* The inevitability after an unbacked write: A writes PX (its own, unbacked) and becomes
 * inevitable, which backs the write and takes PX's ownership first (an inevitable
 * transaction cannot abort, and B may take the granule while it runs). B then takes the
 * granule and writes PX: A owns it, so B aborts (write-write) and waits; after A's
 * commit B's retry reads A's 2 and commits 12. */
static int iw_owner, iw_k;
static size_t iw_unbacked;
static void *iw_a(void *arg)
{
    (void)arg;
    enter(0);
    alloc_px("test.iw.alloc", 1);
    SYNC_ATOMIC("test.iw.a") {
        SYNC_WRITE(PX);
        PX->v = 2;
        sync_inevitable();
        iw_owner = stm_debug_owner(PX);
        iw_unbacked = seg_of(0)->nunbacked;
        sem_post(&s_b);         /* B: take the granule and write PX */
        usleep(50 * 1000);
    }
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *iw_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    iw_k = 0;
    SYNC_ATOMIC("test.iw.b") {
        iw_k++;
        SYNC_READ(PX);
        long v = PX->v;
        SYNC_WRITE(PX);
        PX->v = v + 10;
    }
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_unbacked_write_then_inevitable(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    run2(iw_a, iw_b);
    assert_int_equal(iw_owner, 0);               /* A owns PX once inevitable */
    assert_int_equal(iw_unbacked, 0);
    assert_int_equal(committed_v(PX), 12);
    /* B's wait for A is bounded: a retry before A's commit conflicts the same way */
    assert_true(iw_k >= 2);
    assert_int_equal(st_b.aborts[SYNC_ABORT_WRITE_WRITE], (unsigned long long)(iw_k - 1));
    assert_int_equal(st_b.aborts[SYNC_ABORT_INEVITABLE], 0);
    rt_down();
}

/* MODE=debug: the invariant asserts are compiled in and fire (a release build has
 * none: the test then checks nothing and is skipped). */
#ifdef STMBENCH_DEBUG
static void unlock_without_lock(void)
{
    char err[256];
    if (sync_runtime_stm.thread_enter(0, err, sizeof err) != 0)
        return;
    stm_commit_unlock(); /* never taken: the commit lock's assert must fire */
}
#endif
/* ---- the depot (alloc.c, D1): what one thread frees, another allocates ----
 * A frees more objects of one size than STM_DEPOT_HIGH; its ready list spills the
 * oldest into the depot. B, whose list of that size is empty, allocates: it takes
 * from the depot (one of A's objects) instead of taking fresh heap. Without the depot
 * B bump-allocated while A's lists grew without bound (issue 28: 1.9 GB in 20 s).
 * Threads take turns (A leaves before B enters), so it runs the same in every mode. */
enum { DP_N = STM_DEPOT_HIGH + 600 };
static uintptr_t dp_freed[DP_N];
static int dp_cmp(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}
static void test_depot_hands_frees_to_another_thread(void **state)
{
    (void)state;
    rt_up(2);
    static cell_ref cells[DP_N];
    enter(0);
    for (int i = 0; i < DP_N; i += 500)
        SYNC_ATOMIC("test.depot.alloc")
            for (int j = i; j < DP_N && j < i + 500; j++)
                cells[j] = SYNC_ALLOC(cell_t);
    SYNC_ATOMIC("test.depot.free")
        for (int j = 0; j < DP_N; j++)
            SYNC_FREE(cells[j]);
    for (int j = 0; j < DP_N; j++)
        dp_freed[j] = (uintptr_t)cells[j];
    qsort(dp_freed, DP_N, sizeof *dp_freed, dp_cmp);
    /* one more allocation of that size: the frees become ready, the list spills */
    cell_ref again = NULL;
    SYNC_ATOMIC("test.depot.again")
        again = SYNC_ALLOC(cell_t);
    assert_non_null(bsearch(&(uintptr_t){(uintptr_t)again}, dp_freed, DP_N, sizeof *dp_freed,
                            dp_cmp));                  /* A reuses its own first */
    sync_runtime_stm.thread_exit(&st_a);
    assert_true(seg_of(0)->depot_spills >= 1);
    int cls = stm_size_class((sizeof(cell_t) + 15) & ~(size_t)15);
    assert_true(atomic_load(&G.depot.n[cls]) >= DP_N - STM_DEPOT_HIGH);
    assert_int_equal(seg_of(1)->ready[cls].n, 0);

    uintptr_t cursor = stm_debug_heap_cursor();
    enter(1);
    cell_ref got = NULL;
    SYNC_ATOMIC("test.depot.b")
        got = SYNC_ALLOC(cell_t);
    sync_runtime_stm.thread_exit(&st_b);
    assert_non_null(bsearch(&(uintptr_t){(uintptr_t)got}, dp_freed, DP_N, sizeof *dp_freed,
                            dp_cmp));                  /* one of A's, from the depot */
    assert_true(stm_debug_heap_cursor() == cursor);   /* no fresh heap */
    assert_int_equal(seg_of(1)->depot_takes, 1);
    rt_down();
}

/* The same through a private commit (lazy pages): both threads are entered, A's
 * objects sit in granules A alone holds, so its free commits privately and its frees
 * are ready at once (commit.c), spilling there; B's take fills A's granule. */
static uintptr_t dpp_got, dpp_cursor_before, dpp_cursor_after;
static void *dpp_a(void *arg)
{
    (void)arg;
    static cell_ref cells[DP_N];
    enter(0);
    for (int i = 0; i < DP_N; i += 500)
        SYNC_ATOMIC("test.depotp.alloc")
            for (int j = i; j < DP_N && j < i + 500; j++)
                cells[j] = SYNC_ALLOC(cell_t);
    SYNC_ATOMIC("test.depotp.free")
        for (int j = 0; j < DP_N; j++)
            SYNC_FREE(cells[j]);
    for (int j = 0; j < DP_N; j++)
        dp_freed[j] = (uintptr_t)cells[j];
    sem_post(&s_b);
    sem_wait(&s_a);
    sync_runtime_stm.thread_exit(&st_a);
    return NULL;
}
static void *dpp_b(void *arg)
{
    (void)arg;
    enter(1);
    sem_wait(&s_b);
    dpp_cursor_before = stm_debug_heap_cursor();
    cell_ref got = NULL;
    SYNC_ATOMIC("test.depotp.b")
        got = SYNC_ALLOC(cell_t);
    dpp_got = (uintptr_t)got;
    dpp_cursor_after = stm_debug_heap_cursor();
    sem_post(&s_a);
    sync_runtime_stm.thread_exit(&st_b);
    return NULL;
}
static void test_depot_takes_private_frees(void **state)
{
    (void)state;
    rt_up(2);
    LAZY_ONLY();
    run2(dpp_a, dpp_b);
    assert_int_equal(seg_of(0)->nlimbo, 0);            /* nothing waited: private */
    assert_true(seg_of(0)->depot_spills >= 1);
    qsort(dp_freed, DP_N, sizeof *dp_freed, dp_cmp);
    assert_non_null(bsearch(&dpp_got, dp_freed, DP_N, sizeof *dp_freed, dp_cmp));
    assert_true(dpp_cursor_after == dpp_cursor_before);
    assert_int_equal(seg_of(1)->depot_takes, 1);
    rt_down();
}

static void test_debug_asserts_fire(void **state)
{
    (void)state;
#ifdef STMBENCH_DEBUG
    expect_abort_naming(unlock_without_lock, "commit lock: released by its holder");
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_write_conflict),
        cmocka_unit_test(test_read_write_conflict_begun_alone),
        cmocka_unit_test(test_read_write_names_the_committer),
        cmocka_unit_test(test_write_write_conflict),
        cmocka_unit_test(test_inevitable_never_aborts),
        cmocka_unit_test(test_abort_discards_writes_and_allocations),
        cmocka_unit_test(test_opacity_snapshot),
        cmocka_unit_test(test_free_not_reused_while_visible),
        cmocka_unit_test(test_pages_lazy),
        cmocka_unit_test(test_fault_while_other_commits),
        cmocka_unit_test(test_import_skips_untouched_pages),
        cmocka_unit_test(test_fill_waits_for_late_publish_),
        cmocka_unit_test(test_new_object_claimed_until_copied),
        cmocka_unit_test(test_link_race_conflict_aborts),
        cmocka_unit_test(test_link_race_disjoint_links_after),
        cmocka_unit_test(test_publication_lazy),
        cmocka_unit_test(test_publication_when_behind),
        cmocka_unit_test(test_fill_waits_for_commit_window),
        cmocka_unit_test(test_fill_copies_outside_the_lock),
        cmocka_unit_test(test_fill_undo_waits_for_commit_window),
        cmocka_unit_test(test_fill_skips_newer_commits),
        cmocka_unit_test(test_fill_undoes_a_long_log_on_a_small_stack),
        cmocka_unit_test(test_read_version_wrap_forgets_marks),
        cmocka_unit_test(test_abort_request_ends_with_the_commit),
        cmocka_unit_test(test_abort_request_after_the_commit),
        cmocka_unit_test(test_counters_exact),
        cmocka_unit_test(test_abort_keeps_no_chunk),
        cmocka_unit_test(test_own_ring_frees_in_order),
        cmocka_unit_test(test_entry_keep_is_bounded),
        cmocka_unit_test(test_private_commit_appends_nothing),
        cmocka_unit_test(test_short_path_only_for_unbacked_writes),
        cmocka_unit_test(test_inevitable_after_unbacked_write_ends),
        cmocka_unit_test(test_fill_waits_for_private_commit),
        cmocka_unit_test(test_fill_waits_for_full_private_commit),
        cmocka_unit_test(test_private_commit_races_first_access),
        cmocka_unit_test(test_full_private_commit_races_first_access),
        cmocka_unit_test(test_fill_reaches_the_holders_snapshot),
        cmocka_unit_test(test_private_commit_then_abort),
        cmocka_unit_test(test_private_free_not_reused_under_reader),
        cmocka_unit_test(test_closing_waits_for_logged_late_copies),
        cmocka_unit_test(test_holder_enters_again_keeps_its_granule),
        cmocka_unit_test(test_unbacked_write_then_abort),
        cmocka_unit_test(test_fill_waits_for_unbacked_restore),
        cmocka_unit_test(test_unbacked_abort_after_taken_refills),
        cmocka_unit_test(test_unbacked_commit_after_taken),
        cmocka_unit_test(test_unbacked_commit_meets_the_takers_ownership),
        cmocka_unit_test(test_unbacked_write_then_inevitable),
        cmocka_unit_test(test_late_backup_keeps_the_undo_in_order),
        cmocka_unit_test(test_refill_waits_for_imported_copies),
        cmocka_unit_test(test_depot_hands_frees_to_another_thread),
        cmocka_unit_test(test_depot_takes_private_frees),
        cmocka_unit_test(test_leaving_a_block_open_is_caught),
        cmocka_unit_test(test_debug_asserts_fire),
    };
    return cmocka_run_group_tests_name("stm protocol", tests, NULL, NULL);
}
