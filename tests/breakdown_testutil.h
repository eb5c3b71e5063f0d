/*
 * tests/breakdown_testutil.h - what the time-breakdown tests (test_breakdown.c,
 * test_breakdown_stm.c) share: each thread's accounting record published for the
 * other thread to poll, a bounded wait for "thread tid is in a timed interval of
 * category cat", and the check that a thread's categories add up to its time.
 */
#ifndef BREAKDOWN_TESTUTIL_H
#define BREAKDOWN_TESTUTIL_H

#include "runtime/timeacct.h"

#include <sched.h>
#include <time.h>

#define MS 1000000ull

/* Each thread's own ta_self, published by the thread after ta_thread_start. */
static struct ta_thread *volatile bd_ta[2];
/* Set by bd_await_timed when its watchdog fired; asserted by the main thread (worker
 * threads never call cmocka's asserts). */
static int bd_poll_failed;

static __attribute__((unused)) void bd_sleep_ms(long ms)
{
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&d, &d) != 0)
        ;
}

/* Waits until thread tid is in a timed interval of category cat: it then waits before
 * the caller injects its delay. A watchdog (10 s) turns a missing hook into a failure,
 * not a hang. */
static __attribute__((unused)) void bd_await_timed(int tid, int cat)
{
    uint64_t give_up = sync_now_ns() + 10000000000ull;
    struct ta_thread *t;
    while (!(t = bd_ta[tid]) || __atomic_load_n(&t->timed_cat, __ATOMIC_RELAXED) != cat) {
        if (sync_now_ns() > give_up) {
            bd_poll_failed = 1;
            return;
        }
        sched_yield();
    }
}

/* The categories add up to the thread's time within 2%. */
static __attribute__((unused)) void bd_assert_sum(const struct sync_stats *s)
{
    uint64_t sum = 0;
    for (int c = 0; c < TA_NCAT; c++)
        sum += s->time_ns[c];
    if (sum < s->thread_time_ns * 0.98 || sum > s->thread_time_ns * 1.02)
        fail_msg("categories sum to %llu ns, thread time %llu ns", (unsigned long long)sum,
                 (unsigned long long)s->thread_time_ns);
}

#endif
