/*
 * tests/test_interp_sdict.c - interp's stmdict under stm (workloads/interp/sdict.h, its
 * invariants S1-S3), stepped through the real stm runtime.
 *
 * sdict.h is compiled here as the stm copy of the interpreter compiles it (SYNC_RT stm,
 * SYNC_RT_STM: IV_SDICT_ON 1), without the rest of the VM. A dict is built as
 * iv_new_object (program.h) builds one: the main thread enters as thread 0, allocates
 * the head and the IV_DICT_MAX entries in one block, and leaves, as the harness's setup
 * does. Its granules are then thread 0's own (GS_PRIV), and thread 0's writes to them
 * are unbacked until thread 1 first touches them (runtime/stm/DESIGN.md, "Private
 * commits", "Unbacked writes"): layout `own`. Layout `shared` marks them shared first,
 * as test_stm.c's setup does, so that every write takes the object's ownership. Each
 * two-thread test runs in both.
 *
 * Two OS threads, A (thread 0) and B (thread 1), each run one transaction made of
 * steps (a set, a get, len), taking turns on semaphores: A's first step, B's first,
 * A's second, ... A thread commits after its last step. A thread whose attempt aborted
 * lets the other run to its end, then refreshes its snapshot (stm_refresh, nothing read
 * yet: as if its retry had begun after that commit) and runs alone, so a conflict never
 * deadlocks the two and each loser aborts exactly once. The assertions are the
 * runtime's own counts (commits, aborts by kind, the object of the conflict) and the
 * values each attempt saw and a new transaction sees.
 *
 * What the conflicts are (commit.c's write slow path and back_unbacked, validation):
 *  - sets of one key, layout own: A's write is unbacked (no ownership), B's first
 *    access closes the granule, B owns the entry and commits; A's commit backs its
 *    write late, finds the entry committed after its snapshot and aborts read-write;
 *    its retry writes on top of B's value;
 *  - sets of one key, layout shared: A owns the entry; B's write barrier meets the owner
 *    and aborts write-write (then waits, bounded, for the owner to let go); B's retry,
 *    after A's commit, writes on top of A's value;
 *  - a get of a key, then the other's commit of that key: the reader's validation finds
 *    its marker on the entry (read-write);
 *  - the plain dict (dict.h) the same way, on the dict's head, for two different keys.
 * With STM_PAGES=eager (or valgrind) nothing is private and layout own runs as shared.
 *
 * Two tests are write skews that sdict.h as first committed (7ac79df) let through,
 * both transactions committing without an abort: A gets 7, B gets 8 (both absent, and
 * neither key had an entry, so neither get read anything); A sets 8 and commits, B
 * sets 7 and commits (absent_reads_conflict). And A and B each read len 0 (entries
 * 0 .. nent - 1: none), then set a new key each (len_conflicts_with_new_keys).
 *
 * Mutations of sdict.h, each run once against this file (a mutated copy of sdict.h
 * first on the include path, built, run, failed as listed; "both": both layouts):
 *  - every key's entry 0 (`s->ent = n < IV_DICT_MAX ? 0 : -1`): insert_different_keys
 *    and update_different_keys fail with an abort (both); read_then_write_conflicts,
 *    absent_reads_conflict and len_conflicts_with_new_keys (both: a new transaction
 *    reads one key's value for the other's); and the three index tests;
 *  - iv_sdict_set without SYNC_WRITE(e): neither a crash nor an STM assertion (also
 *    with MODE=debug's STM_ASSERTs): the store lands in the writer's segment only, the
 *    block commits read-only and the value is lost: every two-thread stmdict test fails
 *    (both), insert_different_keys on a new transaction reading key 1 absent;
 *  - iv_sd_index without claim claims (`if (!claim) return -1;` removed):
 *    index_claims (nent 1 after the first lookup);
 *  - iv_sdict_get's present check swapped (`e->present == 0`): every two-thread
 *    stmdict test (both) and index_full;
 *  - iv_sdict_get without claim (7ac79df's): absent_reads_conflict (no abort: the write
 *    skew above) and read_then_write_conflicts (A commits without an abort) (both);
 *  - iv_sdict_len over entries 0 .. nent - 1 (7ac79df's): len_conflicts_with_new_keys
 *    (both; no abort: the write skew);
 *  - iv_sdict_get without SYNC_READ(e): read_then_write_conflicts and
 *    absent_reads_conflict (both: no abort);
 *  - iv_sdict_set without `e->present = 1`: every two-thread stmdict test (both) and
 *    index_full;
 *  - iv_sdict_nent without its clamp: index_full (IV_DICT_MAX + 2);
 *  - a claim that meets a slot in state 1 does not wait (`while (0)`):
 *    index_claim_waits_for_a_claim (it probes on and takes a new entry);
 *  - a claim past the last entry numbered `n % IV_DICT_MAX`: index_full (the 1,025th
 *    set is not refused);
 *  - the probe returns a ready slot's entry without comparing its key: index_claims,
 *    index_claim_waits_for_a_claim and index_full.
 */
#define SYNC_RT stm
#define SYNC_RT_STM 1
#include "runtime/sync.h"
#include "runtime/stm/stm_internal.h"

/* base.h's and dict.h's static helpers that this file does not call are unused here */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "workloads/interp/sdict.h"
#pragma GCC diagnostic pop

#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

enum { LAYOUT_OWN, LAYOUT_SHARED };
static int layout_own = LAYOUT_OWN, layout_shared = LAYOUT_SHARED;

static iv_sdict_ref D;               /* the stmdict */
static struct iv_sdside *SD;         /* its key index */
static iv_odict_ref OD;              /* a plain dict, for comparison */

/* ---- steps: one operation each; what it returns, as a number ---- */

enum { NOP, SET, GET, LEN, OSET };
#define ABSENT (-1)                  /* a get of a key not present */
#define FULL (-2)                    /* a set refused: no entry left */

struct op {
    int kind;
    int64_t key, val;                /* values are small ints (iv_small) */
};

static int64_t num(iv_val w) { return (int64_t)w >> 4; }

/* Inside a transaction. SET and OSET return the old value (0: the key was new), GET the
 * value or ABSENT, LEN the length. */
static int64_t run_op(const struct op *o)
{
    bool present;
    int full;
    iv_val w;
    switch (o->kind) {
    case SET:
        w = iv_sdict_set(D, o->key, iv_small(o->val), &full);
        return full ? FULL : num(w);
    case GET:
        w = iv_sdict_get(D, o->key, &present);
        return present ? num(w) : ABSENT;
    case LEN:
        return iv_sdict_len(D);
    case OSET:
        w = iv_odict_set(OD, o->key, iv_small(o->val), &full);
        return full ? FULL : num(w);
    }
    return 0;
}

/* ---- the two threads' state (stepped below) ---- */

#define NSTEP 2
#define NATT 4
struct actor {
    int tid, nstep;
    struct op step[NSTEP];
    sem_t turn;                      /* posted when it may go on */
    atomic_int done;                 /* committed */
    atomic_int alone;                /* aborted: the other runs to its end first */
    int attempts;
    int64_t saw[NATT][NSTEP];        /* what each attempt's steps returned */
    struct sync_stats st;
};
static struct actor act[2];
static pthread_barrier_t entered;

/* ---- the runtime and the dicts ---- */

static void enter_main(void)
{
    char err[256];
    if (sync_runtime_stm.thread_enter(0, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* The dicts as iv_new_object makes them; with LAYOUT_SHARED, the heap marked shared.
 * Called by the test itself (*state: its layout), not as cmocka's setup, whose signal
 * handlers, restored after a setup, would replace the STM's page fault handler. */
static void sd_up(void **state)
{
    char err[256] = "";
    struct sync_config cfg = { .nthreads = 2, .heap_bytes = 64u << 20 };
    assert_int_equal(sync_runtime_stm.init(&cfg, err, sizeof err), 0);
    SD = calloc(1, sizeof *SD);
    assert_non_null(SD);
    enter_main();
    SYNC_ATOMIC("test.sdict.setup") {
        D = (iv_sdict_ref)sync_alloc(128);
        D->side = SD;
        for (int i = 0; i < IV_DICT_MAX; i++)
            SD->ent[i] = SYNC_ALLOC(struct iv_sdent);
        OD = (iv_odict_ref)sync_alloc(128);
        OD->cap = 8;
        OD->slots = iv_slots_new(8);
        OD->kver = 1;
    }
    sync_runtime_stm.thread_exit(NULL);
    if (*(const int *)*state == LAYOUT_SHARED) {
        uintptr_t end = stm_debug_heap_cursor();
        for (size_t g = 0; g < G.ngranules && granule_off(g) < end; g++)
            atomic_store(&G.gshare[g], gs_word(GS_SHARED, 0, 0));
    }
}

/* The teardown of every test that sd_up set up, also after a failed assertion. */
static int sd_down(void **state)
{
    (void)state;
    if (SD) {
        for (int t = 0; t < 2; t++)
            sync_stats_free(&act[t].st);
        sync_runtime_stm.fini();
        free(SD);
        SD = NULL;
    }
    return 0;
}

/* The writes' unbacked path is taken: layout own (the test's state), lazy pages. */
static bool unbacked(void **state)
{
    return *(const int *)*state == LAYOUT_OWN && !stm_debug_eager_pages();
}

/* The entry object of key (it must have one). */
static uintptr_t entry_of(int64_t key)
{
    int32_t i = iv_sd_index(SD, key, false);
    assert_true(i >= 0);
    return (uintptr_t)SD->ent[i];
}

/* A new transaction sees exactly the n keys kv[2i] with values kv[2i + 1]. */
static void assert_committed(const int64_t *kv, int n)
{
    static int64_t seen[4], len;
    assert_true(n <= 4);
    enter_main();
    SYNC_ATOMIC("test.sdict.view") {
        for (int i = 0; i < n; i++)
            seen[i] = run_op(&(struct op){ GET, kv[2 * i], 0 });
        len = iv_sdict_len(D);
    }
    sync_runtime_stm.thread_exit(NULL);
    for (int i = 0; i < n; i++)
        assert_int_equal(seen[i], kv[2 * i + 1]);
    assert_int_equal(len, n);
}

/* ---- two threads, stepped ---- */

static bool finished_or_waiting(struct actor *o)
{
    return atomic_load(&o->done) || atomic_load(&o->alone);
}

static void *actor_main(void *arg)
{
    struct actor *me = arg, *other = &act[1 - me->tid];
    char err[256];
    if (sync_runtime_stm.thread_enter(me->tid, err, sizeof err) != 0)
        fail_msg("%s", err);
    pthread_barrier_wait(&entered);  /* both entered: each transaction marks its reads */
    if (me->tid == 1)
        sem_wait(&me->turn);         /* A's first step first */
    SYNC_ATOMIC("test.sdict.step") {
        int k = me->attempts++;
        if (k > 0 && !finished_or_waiting(other)) {
            atomic_store(&me->alone, 1);
            sem_post(&other->turn);
            sem_wait(&me->turn);     /* the other committed */
            stm_refresh();           /* as a retry begun after that commit: nothing read */
        }
        for (int i = 0; i < me->nstep; i++) {
            if (i > 0 && !finished_or_waiting(other)) {
                sem_post(&other->turn);
                sem_wait(&me->turn);
            }
            me->saw[k < NATT ? k : NATT - 1][i] = run_op(&me->step[i]);
        }
    }
    atomic_store(&me->done, 1);
    sem_post(&other->turn);
    sync_runtime_stm.thread_exit(&me->st);
    return NULL;
}

/* A runs steps a[0..na), B b[0..nb), alternately from A's first; each commits after its
 * last. */
static void run_ab(const struct op *a, int na, const struct op *b, int nb)
{
    const struct op *steps[2] = { a, b };
    int n[2] = { na, nb };
    pthread_barrier_init(&entered, NULL, 2);
    for (int t = 0; t < 2; t++) {
        struct actor *x = &act[t];
        memset(x, 0, sizeof *x);
        x->tid = t;
        x->nstep = n[t];
        memcpy(x->step, steps[t], (size_t)n[t] * sizeof *steps[t]);
        sem_init(&x->turn, 0, 0);
    }
    pthread_t th[2];
    for (int t = 0; t < 2; t++)
        pthread_create(&th[t], NULL, actor_main, &act[t]);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&entered);
    for (int t = 0; t < 2; t++) {
        sem_destroy(&act[t].turn);
        assert_int_equal(act[t].st.commits, 1);
    }
}

/* x aborted exactly once, of kind `kind`, on the object at obj, and ran twice. */
static void assert_one_abort(const struct actor *x, int kind, uintptr_t obj)
{
    assert_int_equal(sync_stats_aborts(&x->st), 1);
    assert_int_equal(x->st.aborts[kind], 1);
    assert_int_equal(x->st.nconflicts, 1);
    assert_int_equal(x->st.conflicts[0].object, obj);
    assert_int_equal(x->attempts, 2);
}

static void assert_no_abort(const struct actor *x)
{
    assert_int_equal(sync_stats_aborts(&x->st), 0);
    assert_int_equal(x->attempts, 1);
}

/* 1: A sets key 1 (new), B sets key 2 (new) and commits, A commits: different entries,
 * no abort in either layout. */
static void test_insert_different_keys(void **state)
{
    sd_up(state);
    run_ab((const struct op[]){ { SET, 1, 11 }, { NOP, 0, 0 } }, 2,
           (const struct op[]){ { SET, 2, 22 } }, 1);
    assert_no_abort(&act[0]);
    assert_no_abort(&act[1]);
    assert_int_equal(act[0].saw[0][0], 0);   /* both keys new */
    assert_int_equal(act[1].saw[0][0], 0);
    assert_int_not_equal(entry_of(1), entry_of(2));
    assert_committed((const int64_t[]){ 1, 11, 2, 22 }, 2);
}

/* 1b: both keys set first; A and B update one each, concurrently: no abort. */
static void test_update_different_keys(void **state)
{
    sd_up(state);
    enter_main();                    /* both keys set first, by thread 0 alone */
    SYNC_ATOMIC("test.sdict.pre") {
        run_op(&(struct op){ SET, 1, 11 });
        run_op(&(struct op){ SET, 2, 22 });
    }
    sync_runtime_stm.thread_exit(NULL);
    run_ab((const struct op[]){ { SET, 1, 111 }, { NOP, 0, 0 } }, 2,
           (const struct op[]){ { SET, 2, 222 } }, 1);
    assert_no_abort(&act[0]);
    assert_no_abort(&act[1]);
    assert_int_equal(act[0].saw[0][0], 11);  /* the old values */
    assert_int_equal(act[1].saw[0][0], 22);
    assert_committed((const int64_t[]){ 1, 111, 2, 222 }, 2);
}

/* 2: A sets key 5, B sets key 5 and commits (or tries), A commits. Layout own: B
 * commits, A aborts read-write at its commit and re-runs on top of B's value. Layout
 * shared: B aborts write-write at its write and re-runs on top of A's value. */
static void test_same_key_conflicts(void **state)
{
    sd_up(state);
    run_ab((const struct op[]){ { SET, 5, 55 }, { NOP, 0, 0 } }, 2,
           (const struct op[]){ { SET, 5, 66 } }, 1);
    uintptr_t e5 = entry_of(5);
    if (unbacked(state)) {
        assert_no_abort(&act[1]);
        assert_int_equal(act[1].saw[0][0], 0);
        assert_one_abort(&act[0], SYNC_ABORT_READ_WRITE, e5);
        assert_int_equal(act[0].saw[1][0], 66);   /* the retry replaced B's value */
        assert_committed((const int64_t[]){ 5, 55 }, 1);
    } else {
        assert_no_abort(&act[0]);
        assert_int_equal(act[0].saw[0][0], 0);
        assert_one_abort(&act[1], SYNC_ABORT_WRITE_WRITE, e5);
        assert_int_equal(act[1].saw[1][0], 55);   /* the retry replaced A's value */
        assert_committed((const int64_t[]){ 5, 66 }, 1);
    }
}

/* 2b: A reads key 7 (never set: absent; the get gives it an entry); B sets it and
 * commits; A sets key 8 and commits: A read the entry B wrote, so it aborts read-write,
 * and its retry sees B's value. */
static void test_read_then_write_conflicts(void **state)
{
    sd_up(state);
    run_ab((const struct op[]){ { GET, 7, 0 }, { SET, 8, 88 } }, 2,
           (const struct op[]){ { SET, 7, 77 } }, 1);
    assert_no_abort(&act[1]);
    assert_one_abort(&act[0], SYNC_ABORT_READ_WRITE, entry_of(7));
    assert_int_equal(act[0].saw[0][0], ABSENT);
    assert_int_equal(act[0].saw[1][0], 77);
    assert_committed((const int64_t[]){ 7, 77, 8, 88 }, 2);
}

/* 3: the plain dict (dict.h's iv_odict_*) in scenario 1: two new keys conflict (the
 * count, the keys version and the slots are shared). Layout own: A aborts read-write
 * at its commit; shared: B aborts write-write at its write. Both keys land. */
static void test_plain_dict_conflicts(void **state)
{
    sd_up(state);
    run_ab((const struct op[]){ { OSET, 1, 11 }, { NOP, 0, 0 } }, 2,
           (const struct op[]){ { OSET, 2, 22 } }, 1);
    struct actor *lost = unbacked(state) ? &act[0] : &act[1];
    assert_no_abort(&act[lost == &act[0]]);
    assert_one_abort(lost, unbacked(state) ? SYNC_ABORT_READ_WRITE : SYNC_ABORT_WRITE_WRITE,
                     (uintptr_t)OD);
    enter_main();
    static int64_t v1, v2, n;
    SYNC_ATOMIC("test.sdict.oview") {
        v1 = num(iv_odict_get(OD, 1));
        v2 = num(iv_odict_get(OD, 2));
        n = iv_odict_len(OD);
    }
    sync_runtime_stm.thread_exit(NULL);
    assert_int_equal(v1, 11);
    assert_int_equal(v2, 22);
    assert_int_equal(n, 2);
}

/* 2c: A reads key 7, B reads key 8 (neither ever set), A sets 8 and commits, B sets 7
 * and commits. Serially, one of them would see the other's key: B must abort (it read
 * key 8, which A's commit set) and its retry see A's 88. */
static void test_absent_reads_conflict(void **state)
{
    sd_up(state);
    run_ab((const struct op[]){ { GET, 7, 0 }, { SET, 8, 88 } }, 2,
           (const struct op[]){ { GET, 8, 0 }, { SET, 7, 77 } }, 2);
    assert_no_abort(&act[0]);
    assert_int_equal(act[0].saw[0][0], ABSENT);
    assert_one_abort(&act[1], SYNC_ABORT_READ_WRITE, entry_of(8));
    assert_int_equal(act[1].saw[0][0], ABSENT);
    assert_int_equal(act[1].saw[1][0], 88);
    assert_committed((const int64_t[]){ 7, 77, 8, 88 }, 2);
}

/* 2d: the same with len: A and B each read len (0), then set a new key each: B must
 * abort and its retry count A's key. */
static void test_len_conflicts_with_new_keys(void **state)
{
    sd_up(state);
    run_ab((const struct op[]){ { LEN, 0, 0 }, { SET, 1, 11 } }, 2,
           (const struct op[]){ { LEN, 0, 0 }, { SET, 2, 22 } }, 2);
    assert_no_abort(&act[0]);
    assert_int_equal(act[0].saw[0][0], 0);
    assert_one_abort(&act[1], SYNC_ABORT_READ_WRITE, entry_of(1));
    assert_int_equal(act[1].saw[0][0], 0);
    assert_int_equal(act[1].saw[1][0], 1);
    assert_committed((const int64_t[]){ 1, 11, 2, 22 }, 2);
}

/* ---- the index alone (S1, S2), one thread ---- */

/* Two keys whose probes start at the same slot. */
static void colliding_keys(int64_t *k1, int64_t *k2)
{
    size_t mask = 2 * IV_DICT_MAX - 1;
    *k1 = 1000;
    for (int64_t k = *k1 + 1;; k++)
        if ((iv_hash(k) & mask) == (iv_hash(*k1) & mask)) {
            *k2 = k;
            return;
        }
}

static int64_t nent(const struct iv_sdside *sd)
{
    return atomic_load_explicit(&sd->nent, memory_order_relaxed);
}

/* S1/S2: a key claimed twice has one entry; different keys (also colliding ones)
 * different entries; a lookup without claim finds what was claimed and, for a key
 * never claimed, answers -1 and changes nothing. */
static void test_index_claims(void **state)
{
    (void)state;
    struct iv_sdside *sd = calloc(1, sizeof *sd);
    assert_non_null(sd);
    int64_t k1, k2;
    colliding_keys(&k1, &k2);
    assert_int_equal(iv_sd_index(sd, 3, false), -1);
    assert_int_equal(nent(sd), 0);
    for (size_t i = 0; i < 2 * IV_DICT_MAX; i++)
        assert_int_equal(atomic_load(&sd->slot[i].state), 0);
    assert_int_equal(iv_sd_index(sd, 3, true), 0);
    assert_int_equal(iv_sd_index(sd, 3, true), 0);
    assert_int_equal(iv_sd_index(sd, 4, true), 1);
    assert_int_equal(iv_sd_index(sd, k1, true), 2);
    assert_int_equal(iv_sd_index(sd, k2, true), 3);
    assert_int_equal(iv_sd_index(sd, k1, true), 2);
    assert_int_equal(nent(sd), 4);
    assert_int_equal(iv_sd_index(sd, 3, false), 0);
    assert_int_equal(iv_sd_index(sd, 4, false), 1);
    assert_int_equal(iv_sd_index(sd, k1, false), 2);
    assert_int_equal(iv_sd_index(sd, k2, false), 3);
    assert_int_equal(iv_sd_index(sd, 5, false), -1);
    assert_int_equal(nent(sd), 4);
    int claimed = 0;
    for (size_t i = 0; i < 2 * IV_DICT_MAX; i++)
        claimed += atomic_load(&sd->slot[i].state) == 2;
    assert_int_equal(claimed, 4);
    free(sd);
}

/* A claim that meets a slot being claimed (state 1) waits for it to be ready, then
 * takes the winner's entry if the key is its own, or goes on probing if not. */
static struct iv_sdside *race_sd;
static int64_t race_key;
static atomic_int race_ret;
static atomic_int race_back;
static void *race_claimer(void *arg)
{
    (void)arg;
    atomic_store(&race_ret, iv_sd_index(race_sd, race_key, true));
    atomic_store(&race_back, 1);
    return NULL;
}

static int32_t claim_meeting_a_claim(int64_t winner_key)
{
    race_sd = calloc(1, sizeof *race_sd);
    assert_non_null(race_sd);
    race_key = 42;
    atomic_store(&race_back, 0);
    struct iv_sdslot *s = &race_sd->slot[iv_hash(race_key) & (2 * IV_DICT_MAX - 1)];
    atomic_store(&s->state, 1);                 /* the winner's CAS, before its number */
    atomic_store(&race_sd->nent, 1);            /* ... and its fetch-add */
    pthread_t t;
    pthread_create(&t, NULL, race_claimer, NULL);
    usleep(20 * 1000);
    assert_int_equal(atomic_load(&race_back), 0);   /* it waits for the winner */
    s->key = winner_key;
    s->ent = 0;
    atomic_store_explicit(&s->state, 2, memory_order_release);
    pthread_join(t, NULL);
    int32_t r = (int32_t)atomic_load(&race_ret);
    free(race_sd);
    return r;
}

static void test_index_claim_waits_for_a_claim(void **state)
{
    (void)state;
    assert_int_equal(claim_meeting_a_claim(42), 0);   /* the winner's entry */
    assert_int_equal(claim_meeting_a_claim(43), 1);   /* another key: the next slot */
}

/* After IV_DICT_MAX keys a new key gets no entry (a set says full, the index -1),
 * iv_sdict_nent stays IV_DICT_MAX and every key set keeps its value. */
static void test_index_full(void **state)
{
    sd_up(state);
    enter_main();
    static int64_t fulls, last, len, ne, got0, gotmax;
    SYNC_ATOMIC("test.sdict.fill") {
        fulls = 0;
        for (int64_t k = 0; k < IV_DICT_MAX; k++)
            fulls += run_op(&(struct op){ SET, k, k % 200 + 1 }) == FULL;
        last = run_op(&(struct op){ SET, IV_DICT_MAX, 7 });
        ne = iv_sdict_nent(D);
        len = iv_sdict_len(D);
        got0 = run_op(&(struct op){ GET, 0, 0 });
        gotmax = run_op(&(struct op){ GET, IV_DICT_MAX, 0 });
    }
    sync_runtime_stm.thread_exit(NULL);
    assert_int_equal(fulls, 0);
    assert_int_equal(last, FULL);
    assert_int_equal(iv_sd_index(SD, IV_DICT_MAX + 1, true), -1);
    assert_int_equal(nent(SD), IV_DICT_MAX + 2);   /* the counter goes on */
    assert_int_equal(ne, IV_DICT_MAX);
    assert_int_equal(len, IV_DICT_MAX);
    assert_int_equal(got0, 1);
    assert_int_equal(gotmax, ABSENT);
    assert_int_equal(iv_sd_index(SD, IV_DICT_MAX, false), -1);
}

#define BOTH(f) { #f "/own", f, NULL, sd_down, &layout_own }, \
                { #f "/shared", f, NULL, sd_down, &layout_shared }

int main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH(test_insert_different_keys),
        BOTH(test_update_different_keys),
        BOTH(test_same_key_conflicts),
        BOTH(test_read_then_write_conflicts),
        BOTH(test_plain_dict_conflicts),
        BOTH(test_absent_reads_conflict),
        BOTH(test_len_conflicts_with_new_keys),
        cmocka_unit_test(test_index_claims),
        cmocka_unit_test(test_index_claim_waits_for_a_claim),
        { "test_index_full", test_index_full, NULL, sd_down, &layout_own },
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
