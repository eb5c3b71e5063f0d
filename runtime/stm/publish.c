/*
 * runtime/stm/publish.c - the commit lock, the commit windows and the lazy publication
 * of the log's tail (the windows' entry and exit are inline: publish.h). The invariants
 * I1..I7 and the other files are listed in stm_internal.h.
 *
 * Maintains I2 (segment 0 stands still for a holder of the lock once it waited out the
 * publishers: stm_wait_publishers) and I4 (the published tail and G.rev move only under
 * the lock, once no window is open, to the newest linked entry: publish_under_lock).
 *
 * The commit lock and the commit windows. A commit that owns everything it will copy
 * (or finds itself alone) runs its validation and link in a *window*: a shared critical
 * section, entered by raising its own segment's `committing` flag and finding the lock
 * free; several windows run at once and link by compare-and-swap. The lock, a
 * test-and-test-and-set spinlock that yields after a few rounds (threads may outnumber
 * cores), excludes the windows: its holder waits until no flag is up. It is taken by
 * what must see the log and segment 0 stand still, and is rare: granule fills (for
 * their undo), enters and exits, becoming inevitable, and the commits that wrote
 * objects they do not own.
 *
 * Memory order: the flag's store and the lock's load in stm_window_enter, and the lock's
 * CAS and the flags' loads in stm_commit_lock, are seq_cst: of a window and a lock taken
 * at the same time, at least one sees the other (a store-load order that
 * acquire/release does not give). Leaving a window and the unlock are release stores
 * (paired with the lock's CAS and flag loads). A segment's newest linked entry is a
 * release store in its window, acquired by the lock's holder (publish_under_lock, which
 * also acquired the window's release); G.rev is a release store (paired with the
 * acquire loads in min_active_rev); `publishing` is cleared with release after the late
 * copies and acquired by stm_wait_publishers.
 */

#include "runtime/stm/sync_stm.h"
#include "runtime/sync.h"

#include <stdatomic.h>

#include "runtime/stm/publish.h"
#include "runtime/stm/stm_internal.h"
#include "runtime/timeacct.h"

static void lock_taken(int timed);

void stm_commit_lock(void)
{
    STM_ASSERT(!(stm_me && stm_in_commit(stm_me)), "commit lock: never taken twice by a thread");
    int timed = 0; /* time breakdown: only a taken lock, or a window waited for, is timed */
    for (int spins = 0;; spins++) {
        int z = 0;
        /* seq_cst (an acquire at least: pairs with the release in stm_commit_unlock, so
         * what the previous holder did under the lock is visible): see above */
        if (atomic_compare_exchange_weak_explicit(&G.lock, &z, 1, memory_order_seq_cst,
                                                  memory_order_relaxed))
            break;
        if (!timed++)
            TA_TIMED_BEGIN(TA_WAIT_LOCK);
        /* relaxed: only waits for the lock to look free before trying again */
        while (atomic_load_explicit(&G.lock, memory_order_relaxed))
            stm_spin_round(++spins);
    }
    lock_taken(timed);
}

/*
 * The lazy publication (I4): commits link their entries and never move the published
 * tail; the holder of the lock, once no window is open (so no link is in flight),
 * publishes the last entry: the newest of the published tail and every entered
 * segment's newest linked entry (each stored in its linker's window, and never freed by
 * its owner's collection), which is O(N) lines and no walk along the log (a walk read
 * up to PUBLISH_LAG entries the other cores wrote, and cost far more: DESIGN.md, "the
 * lazy publication", and docs/stm-measured.md). Every lock holder does it, so a fill,
 * an enter or an exit sees the exact tail; a committer far past G.rev takes a free lock
 * for it (stm_publish_if_behind), which bounds the log nobody may free.
 */
static void publish_under_lock(void)
{
    /* relaxed: the tail changes only under the lock, which we hold */
    struct log_entry *t = atomic_load_explicit(&G.log_tail, memory_order_relaxed);
    for (int i = 1; i <= G.nseg; i++) {
        /* relaxed: `active` changes under the lock, which we hold */
        if (!atomic_load_explicit(&G.segs[i].active, memory_order_relaxed))
            continue;
        /* acquire: pairs with the release store of `newest` after the link, in the
         * window we waited out (its owner never frees it: stm_own_free_below) */
        struct log_entry *n = atomic_load_explicit(&G.segs[i].newest, memory_order_acquire);
        if (n && n->rev > t->rev)
            t = n;
    }
    STM_ASSERT(!atomic_load_explicit(&t->next, memory_order_relaxed),
               "I4: the newest linked entry is the last one");
    /* relaxed: read and written under the lock only (readers outside it assert) */
    atomic_store_explicit(&G.log_tail, t, memory_order_relaxed);
    /* release: pairs with the acquire loads of G.rev in min_active_rev: an entry at or
     * after it is never freed, and the tail's is */
    atomic_store_explicit(&G.rev, t->rev, memory_order_release);
}

/* The lock just taken (timed: a wait for it is being timed): waits out every open window,
 * then publishes the tail (publish_under_lock). */
static void lock_taken(int timed)
{
    for (int i = 1; i <= G.nseg; i++)
        /* seq_cst: see above; it is also an acquire, pairing with the release that
         * closed the window: that commit's link, `newest` and flags are visible */
        for (int spins = 0; atomic_load_explicit(&G.segs[i].committing, memory_order_seq_cst);
             spins++) {
            if (!timed++)
                TA_TIMED_BEGIN(TA_WAIT_LOCK);
            stm_spin_round(spins);
        }
    if (stm_me)
        stm_me->holds_lock = 1;
    if (timed)
        TA_TIMED_END();
    publish_under_lock();
}

/* A committer (outside any window or lock) whose revision is more than PUBLISH_LAG past
 * G.rev publishes the tail under the lock, if the lock is free: a try, never a wait for
 * it (its holder publishes anyway). Bounds the entries nobody may free to PUBLISH_LAG
 * plus a collection period per thread. */
void stm_publish_if_behind(struct stm_seg *s)
{
    /* relaxed: a hint; the lock's CAS below orders what follows */
    uint64_t pub = atomic_load_explicit(&G.rev, memory_order_relaxed);
    uint64_t mine = atomic_load_explicit(&s->rev, memory_order_relaxed);
    if (mine <= pub || mine - pub <= PUBLISH_LAG) /* behind a publication, or close */
        return;
    int z = 0;
    /* relaxed: only a test whether it looks free */
    if (atomic_load_explicit(&G.lock, memory_order_relaxed) ||
        /* seq_cst: as in stm_commit_lock (a Dekker handshake with stm_window_enter) */
        !atomic_compare_exchange_strong_explicit(&G.lock, &z, 1, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return;
    lock_taken(0);
    stm_commit_unlock();
}

void stm_commit_unlock(void)
{
    STM_ASSERT(!stm_me || stm_me->holds_lock, "commit lock: released by its holder");
    STM_ASSERT(atomic_load_explicit(&G.lock, memory_order_relaxed) == 1,
               "commit lock: held when released");
    if (stm_me)
        stm_me->holds_lock = 0;
    /* release: pairs with the CAS in stm_commit_lock and the load in stm_window_enter */
    atomic_store_explicit(&G.lock, 0, memory_order_release);
}

/*
 * Waits, holding the commit lock, until no committer is still copying its owned objects
 * into segment 0 after its link (publishing). New copies start only in a window or under
 * the lock, and the lock's holder has waited out the windows, so once this returns,
 * segment 0 is exactly the state at G.rev until the lock is released: what an eager
 * enter copies from (and what a granule fill that found the lock held waits for:
 * pages.c).
 */
void stm_wait_publishers(void)
{
    STM_ASSERT(atomic_load_explicit(&G.lock, memory_order_relaxed) == 1 &&
                   (!stm_me || stm_me->holds_lock),
               "I2: the publishers are waited out under the commit lock");
    for (int i = 1; i <= G.nseg; i++)
        /* acquire: pairs with the release store that ended the copies; their bytes in
         * segment 0 are visible after it */
        for (int spins = 0; atomic_load_explicit(&G.segs[i].publishing, memory_order_acquire);
             spins++)
            stm_spin_round(spins);
}
