/*
 * tests/test_qsbr.c - the reclaimer of the lock-free lookups (workloads/lib/wl_qsbr.h),
 * driven slot by slot from one thread: a retired node is not freed while some online
 * worker has not passed a quiescent state since it was retired, is freed once all
 * have, an offline worker holds nothing up, and wl_qsbr_free frees what is left.
 */
#include "workloads/lib/wl_qsbr.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

static int nfreed;
static void *freed[16];

static void count_free(void *p)
{
    if (nfreed < 16)
        freed[nfreed] = p;
    nfreed++;
}

/* A reclaimer for n workers with workers [0, online) online; the free count reset. */
static struct wl_qsbr *fresh(int n, int online)
{
    nfreed = 0;
    struct wl_qsbr *q = wl_qsbr_new(n, count_free);
    assert_non_null(q);
    for (int i = 0; i < online; i++)
        wl_qsbr_online(q, i);
    return q;
}

static void test_waits_for_every_online_worker(void **state)
{
    (void)state;
    struct wl_qsbr *q = fresh(2, 2);
    int node;
    wl_qsbr_retire(q, 0, &node);
    /* Worker 1 never passes a quiescent state: nothing is freed, however often worker
     * 0 does. */
    for (int i = 0; i < 50; i++) {
        wl_qsbr_quiescent(q, 0);
        wl_qsbr_reclaim(q, 0);
    }
    assert_int_equal(nfreed, 0);
    /* Both pass quiescent states: freed within a few rounds. */
    int rounds = 0;
    while (nfreed == 0 && rounds < 10) {
        wl_qsbr_quiescent(q, 1);
        wl_qsbr_quiescent(q, 0);
        wl_qsbr_reclaim(q, 0);
        rounds++;
    }
    assert_int_equal(nfreed, 1);
    assert_ptr_equal(freed[0], &node);
    assert_true(rounds >= 2);    /* not before a full round of both workers */
    wl_qsbr_free(q);
    assert_int_equal(nfreed, 1);
}

static void test_offline_worker_holds_nothing(void **state)
{
    (void)state;
    struct wl_qsbr *q = fresh(3, 1);
    wl_qsbr_online(q, 2);
    wl_qsbr_offline(q, 2);       /* slot 1 never came online */
    int a, b;
    wl_qsbr_retire(q, 0, &a);
    wl_qsbr_retire(q, 0, &b);
    for (int i = 0; i < 10 && nfreed < 2; i++) {
        wl_qsbr_quiescent(q, 0);
        wl_qsbr_reclaim(q, 0);
    }
    assert_int_equal(nfreed, 2);
    assert_ptr_equal(freed[0], &a);       /* in retirement order */
    assert_ptr_equal(freed[1], &b);
    wl_qsbr_free(q);
}

static void test_free_releases_the_rest(void **state)
{
    (void)state;
    struct wl_qsbr *q = fresh(2, 2);
    int nodes[1000];             /* more than the first limbo capacity: it grows */
    for (int i = 0; i < 1000; i++)
        wl_qsbr_retire(q, 1, &nodes[i]);
    wl_qsbr_quiescent(q, 1);     /* worker 0 never quiescent: none can go yet */
    wl_qsbr_reclaim(q, 1);
    assert_int_equal(nfreed, 0);
    wl_qsbr_offline(q, 0);
    wl_qsbr_offline(q, 1);
    wl_qsbr_free(q);
    assert_int_equal(nfreed, 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_waits_for_every_online_worker),
        cmocka_unit_test(test_offline_worker_holds_nothing),
        cmocka_unit_test(test_free_releases_the_rest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
