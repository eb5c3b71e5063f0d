/*
 * runtime/stm/log.c - the commit log of the page-based STM: importing (and validating)
 * committed entries, building a commit's entry, and freeing entries every thread has
 * passed. The invariants I1..I7 and the other files are listed in stm_internal.h.
 *
 * Maintains I4 (a thread at revision r has imported exactly the entries <= r; an entry
 * is freed only once every active thread's rev is past it), I5 (an imported entry that
 * wrote an object we read aborts us) and publishes the minimum revision for I7.
 *
 * Memory order: `next` is loaded with acquire (pairs with the committer's release
 * link); a segment's `rev` is stored with release after its import (pairs with the
 * acquire in min_active_rev); G.min_rev is raised by a release CAS (pairs with the
 * acquire in reclaim_limbo, alloc.c).
 */

#include "runtime/stm/sync_stm.h"
#include "runtime/sync.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "runtime/stm/publish.h"
#include "runtime/stm/stm_internal.h"

/* ------------------------------------------------------------ log and import */

/*
 * Imports every committed entry after s->rev into segment s (I4), validating each
 * against the read markers first when `validate` (I5). On a conflict aborts, leaving
 * first the commit lock or window the caller is in (unlock_on_abort says whether).
 */
void stm_import_log(struct stm_seg *s, int validate, int unlock_on_abort)
{
    struct log_entry *e = s->last;
    struct log_entry *n;
    const uint16_t *rm = (const uint16_t *)seg_addr(s->idx, 0);
    uint16_t rv = stm_self.rv;
    STM_ASSERT(s == stm_me, "I2: only the owning thread imports into its segment");
    STM_ASSERT(stm_in_commit(s) == unlock_on_abort,
               "import: unlock_on_abort says whether we are in the commit lock or window");
    STM_ASSERT(atomic_load_explicit(&s->rev, memory_order_relaxed) == e->rev,
               "I4: a segment's rev is its last imported entry's");
    /* acquire: pairs with the release store that linked the entry in commit */
    while ((n = atomic_load_explicit(&e->next, memory_order_acquire)) != NULL) {
        STM_ASSERT(n->rev == e->rev + 1, "I4: the log's revs increase by one, in order");
        STM_ASSERT(n->seg != s->idx, "I4: a thread never imports its own entry");
        chaos_point(s);
        const struct log_run *r = n->runs;
        if (validate) {
            if (SYNC_UNLIKELY(!stm_self.mark)) {
                /* Begun alone, the transaction marked no reads: any commit since its
                 * snapshot may have written what it read (I5, conservatively). Which
                 * object is not known: the conflict names none (object 0). */
                if (unlock_on_abort)
                    stm_commit_leave(s);
                s->conf_other_site = n->site;
                stm_abort(SYNC_ABORT_READ_WRITE, n->seg, 0);
            }
            for (uint32_t i = 0; i < n->nruns; i++)
                if (r[i].validate && rm[r[i].off >> 4] == rv) {
                    if (unlock_on_abort)
                        stm_commit_leave(s);
                    /* the writer's side: its block and its location at its first
                     * write of the object, as its entry recorded them */
                    s->conf_other_site = n->site;
                    s->conf_other_where = r[i].validate >> 1;
                    stm_abort(SYNC_ABORT_READ_WRITE, n->seg, r[i].off);
                }
        }
        /* Copy only into granules this segment has (G_OWN): the others are brought up
         * to date, from segment 0 and the log, if and when the thread touches them. */
        const char *data = (const char *)(r + n->nruns);
        for (uint32_t i = 0; i < n->nruns; i++) {
            s->stats.import_bytes += copy_into_granules(s, r[i].off, r[i].len, data, G_OWN);
            data += r[i].len;
        }
        s->stats.import_entries++;
        e = n;
        s->last = e;
        /* release: after this store GC may free entries before e; we no longer
         * touch them. Pairs with the acquire load in min_active_rev. */
        atomic_store_explicit(&s->rev, e->rev, memory_order_release);
    }
    STM_ASSERT(atomic_load_explicit(&s->rev, memory_order_relaxed) == s->last->rev,
               "I4: after an import, rev is the last imported entry's");
}

/*
 * stm_refresh (sync_stm.h): the import a commit does before its window, with
 * validation (I5), at any point of a transaction, as a fill's extend_snapshot does
 * (pages.c): a snapshot moved on after a validation that found nothing it read changed
 * is one consistent snapshot still (I1). An inevitable transaction imported every
 * entry when it became so and nobody links while it runs: nothing to do.
 */
void stm_refresh(void)
{
    struct stm_seg *s = stm_me;
    STM_ASSERT(stm_self.depth >= 1, "refresh: inside a transaction");
    /* acquire: pairs with the release store that linked the entry in commit */
    if (atomic_load_explicit(&s->last->next, memory_order_acquire)) {
        STM_ASSERT(!s->inevitable, "I6: an inevitable transaction's snapshot is the newest");
        stm_import_log(s, 1, 0);
    }
}

/*
 * Log entries belong to the thread that built them: it records its published entries in
 * its own ring (struct own_entry, in revision order) and frees the old ones itself
 * (gc_own_entries), so the entries it reuses are in its own cache and the commit lock
 * never walks the log. The ring and the free list are arrays of the segment's: the
 * collection touches no entry (the first line of each was last written by the thread
 * that linked after it: reading it there cost a cache miss per entry, a visible share
 * of bank's time at 2 threads: the profile is in the message of commit 568d693). Small
 * entries go to the thread's free stack of their size
 * class for reuse (at most STM_ENTRY_KEEP each: the rest are freed, so a burst of
 * outstanding entries does not stay with the thread), and the one to be reused next
 * is prefetched for writing (at the end of _stm_commit).
 */

static void entry_keep_class(struct stm_seg *s, struct log_entry *e, int cls)
{
    if (cls >= 0 && s->nfree_entries[cls] < STM_ENTRY_KEEP) {
        STM_GROW(s->free_entries[cls], s->nfree_entries[cls], s->free_entries_cap[cls]);
        s->free_entries[cls][s->nfree_entries[cls]++] = e;
    } else {
        free(e);
    }
}

void stm_entry_keep(struct stm_seg *s, struct log_entry *e)
{
    STM_ASSERT(e != G.log_first && e != atomic_load_explicit(&G.log_tail, memory_order_relaxed),
               "I4: the sentinel and the published tail are never freed");
    entry_keep_class(s, e, stm_entry_class(e->cap));
}

/* Records our entry e, just published, as the newest of our ring. */
void stm_own_push(struct stm_seg *s, struct log_entry *e)
{
    if (s->nown == s->own_cap) {
        size_t c = s->own_cap ? s->own_cap * 2 : 64;
        struct own_entry *v = malloc(c * sizeof *v);
        if (!v)
            out_of_resources("out of memory for %s", "the commit log");
        for (size_t i = 0; i < s->nown; i++)
            v[i] = s->own[(s->own_head + i) % s->own_cap];
        free(s->own);
        s->own = v;
        s->own_cap = c;
        s->own_head = 0;
    }
    s->own[(s->own_head + s->nown) % s->own_cap] =
        (struct own_entry){.e = e, .rev = e->rev, .cls = stm_entry_class(e->cap)};
    s->nown++;
}

/* Minimum revision over active threads (I4, I7). Reads other segments without the
 * lock: a thread entering meanwhile starts at the newest revision and never reads
 * older entries; one leaving only makes the minimum smaller (safe). */
static uint64_t min_active_rev(void)
{
    uint64_t min = atomic_load_explicit(&G.rev, memory_order_acquire);
    for (int i = 1; i <= G.nseg; i++)
        /* relaxed: see above */
        if (atomic_load_explicit(&G.segs[i].active, memory_order_relaxed)) {
            /* acquire: pairs with the release store of rev in import_log/commit:
             * that thread no longer reads entries before it */
            uint64_t r = atomic_load_explicit(&G.segs[i].rev, memory_order_acquire);
            if (r < min)
                min = r;
        }
    return min;
}

/* Frees this thread's entries that every active thread has passed (rev < min: the
 * entry equal to the minimum is kept for its `next`), and publishes the minimum for
 * memory reuse (I7). No lock: only we touch our ring; nobody reads those entries. */
void stm_gc_own_entries(struct stm_seg *s)
{
    uint64_t min = min_active_rev();
    STM_ASSERT(min <= atomic_load_explicit(&s->rev, memory_order_relaxed),
               "I4, I7: the minimum is at most every active rev (ours included)");
    stm_own_free_below(s, min);
    /* Only ever raise it (release: pairs with the acquire in reclaim_limbo). */
    uint64_t cur = atomic_load_explicit(&G.min_rev, memory_order_relaxed);
    while (cur < min && !atomic_compare_exchange_weak_explicit(&G.min_rev, &cur, min,
                                                               memory_order_release,
                                                               memory_order_relaxed))
        ;
}

/* Frees (or keeps for reuse) our recorded entries below `min`, oldest first, except the
 * newest: it is our segment's `newest`, which the lock's holder reads (commit.c,
 * publish_under_lock). */
void stm_own_free_below(struct stm_seg *s, uint64_t min)
{
    while (s->nown > 1 && s->own[s->own_head].rev < min) {
        struct own_entry *o = &s->own[s->own_head];
        STM_ASSERT(o->e->seg == s->idx && o->e->rev == o->rev,
                   "I4: a thread frees only its own entries, as recorded");
        STM_ASSERT(atomic_load_explicit(&o->e->next, memory_order_relaxed) != NULL,
                   "I4: an entry every thread has passed has a successor");
        STM_ASSERT(o->e != atomic_load_explicit(&G.log_tail, memory_order_relaxed),
                   "I4: the published tail is never freed");
        entry_keep_class(s, o->e, o->cls);
        s->own_head = (s->own_head + 1) % s->own_cap;
        s->nown--;
    }
}

/* The running transaction's log entry: its runs (written objects, then new ranges,
 * then recycled objects) and their bytes, copied from our segment. Needs no lock: we
 * own every object it copies. */
struct log_entry *stm_entry_build(struct stm_seg *s)
{
    STM_ASSERT(s->nunbacked == 0, "an entry carries every written object's old bytes");
    size_t nruns = s->nws + s->nranges + s->nrecycled;
    size_t bytes = 2 * s->backup_len; /* the written objects, new and old bytes */
    for (size_t i = 0; i < s->nranges; i++)
        bytes += s->ranges[i].b - s->ranges[i].a;
    for (size_t i = 0; i < s->nrecycled; i++)
        bytes += s->recycled[i].size;
    size_t need = sizeof(struct log_entry) + nruns * sizeof(struct log_run) + bytes;
    struct log_entry *e;
    int cls = stm_entry_class_for(need);
    if (cls >= 0 && s->nfree_entries[cls]) {
        e = s->free_entries[cls][--s->nfree_entries[cls]];
    } else {
        size_t cap = cls >= 0 ? (size_t)STM_ENTRY_MIN << cls : need;
        e = malloc(cap);
        if (!e)
            out_of_resources("out of memory for a commit log entry%s", "");
        e->cap = cap;
    }
    atomic_init(&e->next, NULL);
    e->seg = s->idx;
    e->site = s->site;
    e->nruns = (uint32_t)nruns;
    char *data = (char *)(e->runs + nruns);
    size_t k = 0;
#define ENTRY_RUN(OFF, LEN, VAL)                                                          \
    do {                                                                                  \
        e->runs[k++] = (struct log_run){.off = (OFF), .len = (uint32_t)(LEN), .validate = (VAL)}; \
        copy_bytes(data, seg_addr(s->idx, (OFF)), (LEN));                                 \
        data += (LEN);                                                                    \
    } while (0)
    for (size_t i = 0; i < s->nws; i++)
        ENTRY_RUN(s->ws[i].off, s->ws[i].size, 1u | ws_where(&s->ws[i]) << 1);
    for (size_t i = 0; i < s->nranges; i++)
        ENTRY_RUN(s->ranges[i].a, s->ranges[i].b - s->ranges[i].a, 0);
    for (size_t i = 0; i < s->nrecycled; i++)
        ENTRY_RUN(s->recycled[i].off, s->recycled[i].size, 0);
#undef ENTRY_RUN
    /* The written objects' old bytes, after every new byte: importers never touch them. */
    e->new_bytes = (size_t)(data - (char *)(e->runs + nruns));
    STM_ASSERT(k == nruns && e->new_bytes + s->backup_len == bytes && need <= e->cap,
               "a log entry holds every run and its bytes");
    if (!s->backup_shuffled) {
        copy_bytes(data, s->backup, s->backup_len);
    } else { /* late backups (commit.c, back_unbacked): in write-set order, one by one */
        for (size_t i = 0; i < s->nws; i++) {
            copy_bytes(data, s->backup + s->ws[i].backup_at, s->ws[i].size);
            data += s->ws[i].size;
        }
    }
    return e;
}
