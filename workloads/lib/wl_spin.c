/*
 * workloads/lib/wl_spin.c - the spin lock's slow path and its site labels (wl_spin.h):
 * a contended acquisition, timed for the time breakdown (wait_lock) and logged for
 * contention analysis (sync_log_wait: a row of kind lock-wait, when the runtime keeps
 * a wait log).
 */
#include "workloads/lib/wl_spin.h"

#define WL_SPIN_SITE_LABEL(name, label) [WL_AT_##name] = label,
static const char *const wl_spin_labels[WL_AT_NSITES] = {WL_SPIN_SITES(WL_SPIN_SITE_LABEL)};

const char *wl_spin_site_label(unsigned site)
{
    return site < WL_AT_NSITES ? wl_spin_labels[site] : NULL;
}

void wl_spin_wait(wl_spin_t *l, int seen, uintptr_t obj, unsigned site)
{
    uint64_t t0 = sync_now_ns();
    TA_TIMED_BEGIN(TA_WAIT_LOCK);  /* the time breakdown's wait_lock: a taken lock */
    /* The holder as the first try saw it: its id and site from the word, and where it
     * is with the object, from what it publishes (a hint: it may have moved on). */
    unsigned id = (unsigned)seen & WL_SPIN_ID_MASK;
    int holder = id != 0 && id != SYNC_LOCK_ID_NONE ? (int)id - 1 : -1;
    struct sync_conflict c = {
        .other = holder,
        .kind = SYNC_KIND_LOCK_WAIT,
        .object = obj,
        .page = obj / 4096,
        .site = wl_spin_site_label(site),
        .where = sync_where_of(obj),
        .other_site = wl_spin_site_label((unsigned)seen >> SYNC_LOCK_SITE_SHIFT),
        .other_where = sync_where_at(holder, obj),
    };
    unsigned spins = 0;
    int mine = (int)sync_lock_word[site < SYNC_LOCK_SITES ? site : 0];
    for (;;) {
        /* relaxed: only a hint that the lock looks free; the CAS below decides */
        while (atomic_load_explicit(&l->v, memory_order_relaxed))
            wl_spin_backoff(&spins);
        int expect = 0;
        /* acquire: pairs with the release store in wl_spin_unlock of the last holder */
        if (atomic_compare_exchange_weak_explicit(&l->v, &expect, mine, memory_order_acquire,
                                                  memory_order_relaxed))
            break;
    }
    TA_TIMED_END();
    c.wasted_ns = sync_now_ns() - t0;
    sync_log_wait(&c);
}
