/*
 * runtime/stm/pages.c - lazy pages of the page-based STM: a segment's granules brought up to
 * date on first access (the fill), and the SIGSEGV handler that serves workload faults.
 * The invariants I1..I7 and the other files are listed in stm_internal.h.
 *
 * Maintains I1 (a fill shows exactly the segment's revision: segment 0 at G.rev, then
 * every newer entry undone) and I2 (only the owning thread changes its granule states;
 * a fill runs under the commit lock, after waiting out the publishers, so segment 0
 * and the log tail stand still). Relies on I4 (entries after s->last stay allocated).
 *
 * Memory order: the log's `next` links are read with acquire (pairing with the
 * committer's release link); segment 0's bytes are ordered by the commit lock's
 * acquire CAS, its acquire loads of the windows' flags (a window's copies end before
 * its release store that lowers the flag) and wait_publishers' acquire loads of the
 * late copies' flags (commit.c).
 */

#include "runtime/stm/sync_stm.h"
#include "runtime/sync.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "runtime/stm/stm_internal.h"
#include "runtime/timeacct.h"

/* ---------------------------------------------------------- page handling */

/*
 * Lazy pages (the design of PyPy's stmgc c8). Segment s >= 1 maps its own file range
 * of the heap, and each GRANULE of it (16 pages, one allocation chunk) is either
 *   G_NONE  inaccessible (PROT_NONE): s has not used it since entering; its bytes are
 *           stale and no import copies into it;
 *   G_OWN   read-write, s's own copy, up to date at s's revision plus s's own writes.
 * A first access (by the workload: a fault; by the runtime: ensure_accessible) brings
 * the granule up to date: under commit_lock, segment 0's bytes (revision G.rev) are
 * copied in, then every entry newer than s->rev that wrote inside it is undone with
 * the old bytes the entry carries, newest first, so the granule shows exactly s's
 * snapshot (I1). Only the owning thread changes its granules' states; a committer
 * touches segment 0 and nothing of any other segment (I2).
 */

/* Undoes the entries from `e` on, newest first, in blocks of UNDO_BLOCK walked forward
 * and applied backward (the later blocks first, by recursion): no allocation, since a
 * fill may run in the fault handler. */
#define UNDO_BLOCK 64
static void undo_from(struct stm_seg *s, const struct log_entry *e)
{
    const struct log_entry *blk[UNDO_BLOCK];
    int n = 0;
    for (; e && n < UNDO_BLOCK; n++) {
        blk[n] = e;
        /* acquire: pairs with the release store that linked the entry */
        e = atomic_load_explicit(&e->next, memory_order_acquire);
    }
    if (e)
        undo_from(s, e);
    while (n-- > 0) {
        const struct log_entry *x = blk[n];
        STM_ASSERT(x->rev > atomic_load_explicit(&s->rev, memory_order_relaxed),
                   "I1: a fill undoes only entries newer than the snapshot");
        const struct log_run *r = x->runs;
        const char *old = (const char *)(r + x->nruns) + x->new_bytes;
        for (uint32_t i = 0; i < x->nruns; i++) {
            if (!r[i].validate)
                continue; /* new or recycled objects: unreachable in s's snapshot (I7) */
            copy_into_granules(s, r[i].off, r[i].len, old, G_FILL);
            old += r[i].len;
        }
    }
}

/* Undo, in s's granules marked G_FILL (already readable and writable, just copied from
 * segment 0), every logged write of an entry newer than s->rev, newest first. Caller
 * holds commit_lock, so the log's tail and segment 0 stand still; the entries after
 * s->last stay allocated (I4). One pass over the log for all the granules filled. */
static void undo_newer(struct stm_seg *s)
{
    STM_ASSERT(s->holds_lock, "I2: a fill undoes under the commit lock");
    /* acquire: pairs with the release store that linked the entry */
    undo_from(s, atomic_load_explicit(&s->last->next, memory_order_acquire));
}

static void protect_rw(struct stm_seg *s, size_t g0, size_t g1)
{
    if (mprotect(seg_addr(s->idx, granule_off(g0)), (g1 - g0) * GRANULE,
                 PROT_READ | PROT_WRITE) != 0)
        out_of_resources("mprotect while making a heap page accessible: %s (too many "
                         "mappings? raise vm.max_map_count)", strerror(errno));
    s->nprotect++;
}

/* Brings granules [g0, g1) of s up to date (see above). `fresh`: they belong to a chunk
 * nobody has committed into, so there is nothing to copy. Only s's thread calls this.
 * A segment that keeps faulting (more than FAULTS_BEFORE_ALL calls) is touching most
 * of the heap: it then brings in everything used so far at once, which also keeps its
 * heap one accessible mapping (plus one inaccessible one after it). */
#define FAULTS_BEFORE_ALL 64
void stm_materialize(struct stm_seg *s, size_t g0, size_t g1, int fresh)
{
    if (stm_in_commit(s))
        stm_fatal("%s: a heap page was touched in the commit lock or window", "stm");
    STM_ASSERT(s == stm_me, "I2: only the owning thread fills its granules");
    STM_ASSERT(g0 < g1 && g1 <= G.ngranules, "a fill covers granules of the heap");
    if ((!fresh && s->nfills >= FAULTS_BEFORE_ALL) || s->nprotect >= G.map_budget) {
        uintptr_t end = atomic_load_explicit(&G.heap_cursor, memory_order_relaxed);
        size_t gend = granule_of(end + GRANULE - 1);
        if (gend > G.ngranules)
            gend = G.ngranules;
        if (g1 > gend)
            gend = g1;
        g0 = 0;
        g1 = gend;
        fresh = 0;    /* the range holds other threads' granules too */
        s->nprotect = 0;
        s->nfills = 0;
    }
    size_t first = g0;
    while (first < g1 && s->gstate[first] == G_OWN)
        first++;
    if (first == g1)
        return;
    size_t last = g1;
    while (s->gstate[last - 1] == G_OWN)
        last--;
    chaos_point(s);
    TA_TIMED_BEGIN(TA_UNSHARE);
    protect_rw(s, first, last); /* also re-protects G_OWN granules between: a no-op */
    TA_TIMED_END();
    if (!fresh) {
        s->nfills++;
        stm_commit_lock();
        TA_TIMED_BEGIN(TA_UNSHARE);
        stm_wait_publishers();
        STM_ASSERT(stm_publishers_idle(), "I2: a fill copies segment 0 at G.rev, no copies under way");
        for (size_t g = first; g < last; g++)
            if (s->gstate[g] == G_NONE) {
                memcpy(seg_addr(s->idx, granule_off(g)), seg_addr(0, granule_off(g)), GRANULE);
                s->gstate[g] = G_FILL;
                s->stats.pages_faulted += GRANULE_PAGES;
            }
        undo_newer(s);
        TA_TIMED_END();
        stm_commit_unlock();
    }
    for (size_t g = first; g < last; g++)
        if (s->gstate[g] != G_OWN) {
            s->gstate[g] = G_OWN;
            s->stats.unshared_pages += GRANULE_PAGES;
        }
}

/* A workload's first access to an inaccessible granule of its own segment (through
 * %gs, or a runtime access that skipped ensure_accessible: that would fault under the
 * lock and is caught in materialize). Anything else is a real crash: the previous
 * disposition runs. */
static struct sigaction prev_segv;

/* Safe as a signal handler because the faults it serves are synchronous and come only
 * from workload code dereferencing a %gs reference (never from inside libc, which cannot
 * take such a pointer): the fill it runs allocates nothing and takes only the commit
 * lock, which this thread cannot hold then (materialize checks). */
static void segv_handler(int sig, siginfo_t *si, void *uctx)
{
    struct stm_seg *s = stm_me;
    char *a = si->si_addr;
    if (s && G.base) {
        char *lo = seg_addr(s->idx, G.rm_size), *hi = lo + G.heap_size;
        if (a >= lo && a < hi) {
            size_t g = (size_t)(a - lo) / GRANULE;
            if (s->gstate[g] == G_NONE) {
                int e = errno;
                stm_materialize(s, g, g + 1, 0);
                errno = e;
                return;
            }
        }
    }
    if (prev_segv.sa_flags & SA_SIGINFO) {
        prev_segv.sa_sigaction(sig, si, uctx);
    } else if (prev_segv.sa_handler != SIG_IGN && prev_segv.sa_handler != SIG_DFL) {
        prev_segv.sa_handler(sig);
    } else {
        signal(SIGSEGV, SIG_DFL); /* returning re-runs the access: a plain crash */
    }
}

/* At every init: a test framework (cmocka) installs its own handlers per test. */
void stm_install_segv_handler(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = segv_handler;
    sigemptyset(&sa.sa_mask);
    /* SA_NODEFER: an abort never leaves the handler by a jump, but a fault inside it
     * (a bug) should crash rather than hang with SIGSEGV blocked. */
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, &old);
    if (!((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == segv_handler))
        prev_segv = old;
}
