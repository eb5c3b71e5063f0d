/*
 * runtime/stm/pages.c - lazy pages of the page-based STM: a segment's granules brought up to
 * date on first access (the fill), and the SIGSEGV handler that serves workload faults.
 * The invariants I1..I7 and the other files are listed in stm_internal.h.
 *
 * Maintains I1 (a fill shows exactly the segment's revision: segment 0 copied once the
 * copies of every entry up to it have ended, then every newer entry undone) and I2
 * (only the owning thread changes its granule states; a fill copies outside the commit
 * lock and undoes under it, where the log tail stands still). Relies on I4 (entries
 * after s->last stay allocated).
 *
 * Memory order: the log's `next` links are read with acquire (pairing with the
 * committer's release link); segment 0's bytes are ordered by wait_imported_copies'
 * acquire loads of each segment's rev (seg_past), of G.lock and of each segment's
 * `committing` and `publishing` (the argument is at that function), or, when the lock
 * is taken instead, by its acquire CAS, its loads of the windows' flags and
 * wait_publishers' loads (commit.c). Taking a granule from its private holder:
 * compare-and-swap of its word (seq_cst), then the holder's privseq (seq_cst, then
 * acquire while odd) and rev (acquire); GS_SHARED stored with release, loaded with
 * acquire (close_private, hold_granules).
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
 * the granule up to date: once the copies into segment 0 of the entries s imported
 * have ended, segment 0's bytes are copied in without the lock, then, under
 * commit_lock, every entry newer than s->rev that wrote inside it is undone with the
 * old bytes the entry carries, newest first, so the granule shows exactly s's
 * snapshot (I1). Only the owning thread changes its granules' states; a committer
 * touches segment 0 and nothing of any other segment (I2).
 */

/* Undoes one entry's logged writes in s's granules marked G_FILL. */
static void undo_entry(struct stm_seg *s, const struct log_entry *x)
{
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

/* Undoes the n linked entries from `e` on, newest first. The log links forward only,
 * and a fill may run in the fault handler, on the workload's stack with no allocation,
 * however far its snapshot is behind (an active snapshot keeps every later entry). So
 * the stack is bounded, not the log: a walk records at most UNDO_FAN entries, the
 * first of each of at most UNDO_FAN equal stretches (n <= UNDO_FAN: every entry), and
 * the stretches are undone last first, each the same way. Depth: ceil(log_UNDO_FAN n)
 * frames of UNDO_FAN pointers (3 for two million entries, 10 at most); walks: n per
 * level. */
#define UNDO_FAN 128
static void undo_span(struct stm_seg *s, const struct log_entry *e, size_t n)
{
    const struct log_entry *at[UNDO_FAN];
    size_t step = n <= UNDO_FAN ? 1 : (n + UNDO_FAN - 1) / UNDO_FAN, k = 0;
    for (size_t i = 0; i < n; i++) {
        STM_ASSERT(e, "I4: the entries counted under the lock stay linked");
        if (i % step == 0)
            at[k++] = e;
        /* acquire: pairs with the release store that linked the entry */
        e = atomic_load_explicit(&e->next, memory_order_acquire);
    }
    while (k-- > 0)
        if (step == 1)
            undo_entry(s, at[k]);
        else
            undo_span(s, at[k], k * step + step <= n ? step : n - k * step);
}

/* Undo, in s's granules marked G_FILL (already readable and writable, just copied from
 * segment 0), every logged write of an entry newer than s->rev, newest first. Caller
 * holds commit_lock, so the log's tail stands still and every entry whose bytes the
 * copy may have caught is linked; the entries after s->last stay allocated (I4). One
 * walk counts them, then undo_span walks them once per level. */
static void undo_newer(struct stm_seg *s)
{
    STM_ASSERT(s->holds_lock, "I2: a fill undoes under the commit lock");
    /* acquire: pairs with the release store that linked the entry (both loads) */
    const struct log_entry *first = atomic_load_explicit(&s->last->next, memory_order_acquire);
    size_t n = 0;
    for (const struct log_entry *e = first; e;
         e = atomic_load_explicit(&e->next, memory_order_acquire))
        n++;
    if (n)
        undo_span(s, first, n);
}

static void protect_rw(struct stm_seg *s, size_t g0, size_t g1)
{
    if (mprotect(seg_addr(s->idx, granule_off(g0)), (g1 - g0) * GRANULE,
                 PROT_READ | PROT_WRITE) != 0)
        out_of_resources("mprotect while making a heap page accessible: %s (too many "
                         "mappings? raise vm.max_map_count)", strerror(errno));
    s->nprotect++;
}

/* Maps, writable, the pages of the inaccessible granules in [g0, g1) before the fill
 * writes them, one call per run of such granules instead of a page fault per page (a
 * fault is dear under some hypervisors). Only a hint: where the kernel lacks
 * MADV_POPULATE_WRITE (before 5.14) or cannot populate, the copy faults them in. */
static void populate(struct stm_seg *s, size_t g0, size_t g1)
{
#ifdef MADV_POPULATE_WRITE
    TA_TIMED_BEGIN(TA_UNSHARE);
    size_t e;
    for (size_t g = granule_run(s, g0, g1, G_NONE, &e); g < g1;
         g = granule_run(s, e, g1, G_NONE, &e)) {
        int saved = errno; /* a failure is only a hint, and a fill must not change errno */
        (void)madvise(seg_addr(s->idx, granule_off(g)), (e - g) * GRANULE, MADV_POPULATE_WRITE);
        errno = saved;
    }
    TA_TIMED_END();
#else
    (void)s; (void)g0; (void)g1;
#endif
}

#ifdef STM_TEST_HOOKS
void (*stm_test_fill_waited)(void); /* tests only: stm_internal.h */
void (*stm_test_fill_copied)(void);
void (*stm_test_closing)(void);
_Atomic unsigned long stm_test_closings;
_Atomic unsigned long stm_test_refills;
#endif

/*
 * Taking a granule from its private holder (DESIGN.md, "Private commits"). Segment o
 * commits transactions that wrote only granules it alone holds (GS_PRIV) without a log
 * entry: it copies them into segment 0 with its `privseq` odd, and they serialise at
 * its snapshot, o->rev. A first other filler of such a granule g has made it
 * GS_CLOSING (seq_cst compare-and-swap); here it waits out o's private commit in
 * flight, if any, reads o->rev as the floor and makes g GS_SHARED with it. From then
 * on o's commits that write g append entries, and every fill of g first brings its
 * snapshot to the floor (extend_snapshot), so that it never shows a private commit
 * whose snapshot is newer than its own.
 *
 * The handshake is a Dekker pair: o stores privseq odd (seq_cst), then loads the
 * states of the granules it wrote (seq_cst); the filler's compare-and-swap (seq_cst)
 * comes before its load of privseq (seq_cst). So either o's load sees GS_CLOSING (it
 * commits with an entry instead) or the filler's load sees the odd value (or a later
 * one) and waits until it changes: o's release store of the next even value follows
 * its copies and ownership releases, which the filler's acquire then sees. An abort of
 * o with unbacked writes takes the same handshake around its copies from segment 0
 * (commit.c, restore_unbacked): it refills a granule it sees closing, and otherwise its
 * loads from segment 0 come before the release that lets the filler go on to commit. A privseq
 * read even and never odd after the compare-and-swap means o's last private commit
 * that saw g private ended before it (the even value is the release that ended it, or
 * a later one). Returns the floor. No wait here is for the filler: a private commit
 * waits for nothing.
 */
static uint64_t close_private(struct stm_seg *s, size_t g, int o)
{
    struct stm_seg *os = &G.segs[o];
    STM_TEST_HOOK(closing);
#ifdef STM_TEST_HOOKS
    /* relaxed: a count read after the threads are joined */
    atomic_fetch_add_explicit(&stm_test_closings, 1, memory_order_relaxed);
#endif
    chaos_point(s);
    /* seq_cst: the filler's half of the Dekker pair above (an acquire too) */
    uint64_t v = atomic_load_explicit(&os->privseq, memory_order_seq_cst);
    if (v & 1) {
        int timed = 0;
        /* acquire: pairs with the release store that ended the private commit */
        for (int spins = 0; atomic_load_explicit(&os->privseq, memory_order_acquire) == v;
             spins++) {
            if (!timed++)
                TA_TIMED_BEGIN(TA_WAIT_LOCK);
            stm_spin_round(spins);
        }
        if (timed)
            TA_TIMED_END();
    }
    /* acquire: pairs with the release stores of o's rev (imports, links, enters): the
     * entries up to it are linked and visible to our import */
    uint64_t floor = atomic_load_explicit(&os->rev, memory_order_acquire);
    /* release: pairs with the acquire loads of other fillers waiting on GS_CLOSING */
    atomic_store_explicit(&G.gshare[g], gs_word(GS_SHARED, 0, floor), memory_order_release);
    return floor;
}

/*
 * Makes s a holder of each granule of [g0, g1) it does not hold yet (G_NONE), before it
 * brings them in; those of [f0, f1) are fresh (a chunk s took for allocation): they
 * become s's private ones when nobody holds them. Returns the highest floor of the
 * granules (0: none), which s's snapshot must reach before the fill copies.
 */
static uint64_t hold_granules(struct stm_seg *s, size_t g0, size_t g1, size_t f0, size_t f1)
{
    uint64_t floor = 0;
    for (size_t g = g0; g < g1; g++) {
        if (s->gstate[g] == G_OWN)
            continue;
        /* acquire: pairs with the release store of GS_SHARED in close_private */
        uint64_t w = atomic_load_explicit(&G.gshare[g], memory_order_acquire);
        for (int spins = 0;; spins++) {
            int kind = GS_KIND(w);
            if (kind == GS_SHARED) {
                if (GS_FLOOR(w) > floor)
                    floor = GS_FLOOR(w);
                break;
            }
            if (kind == GS_PRIV && GS_SEG(w) == s->idx)
                break; /* ours from before we entered again: segment 0 has its commits */
            if (kind == GS_CLOSING) { /* another filler is closing it: wait for it */
                stm_spin_round(spins);
                w = atomic_load_explicit(&G.gshare[g], memory_order_acquire);
                continue;
            }
            uint64_t to = kind == GS_PRIV ? gs_word(GS_CLOSING, GS_SEG(w), 0)
                          : g >= f0 && g < f1 ? gs_word(GS_PRIV, s->idx, 0)
                                              : gs_word(GS_SHARED, 0, 0);
            /* seq_cst: the filler's half of the Dekker pair (close_private); on failure
             * acquire, as the load above */
            if (!atomic_compare_exchange_strong_explicit(&G.gshare[g], &w, to,
                                                         memory_order_seq_cst,
                                                         memory_order_acquire))
                continue;
            if (kind == GS_PRIV) {
                uint64_t f = close_private(s, g, GS_SEG(w));
                if (f > floor)
                    floor = f;
            }
            break;
        }
    }
    return floor;
}

/*
 * Brings s's snapshot up to `floor` before a fill (hold_granules): imports every entry
 * after s->rev, validating the running transaction's reads against them (I5), as a
 * commit does. A conflict aborts it, from the fault handler too (the abort jumps to
 * the block's start; nothing of the fill has been done). A snapshot moved on after a
 * validation that found nothing it read changed is one consistent snapshot still (I1).
 * The floor's entries are linked and visible (close_private's acquire of the holder's
 * rev), so the import reaches it. Outside a transaction nothing was read: no
 * validation. An inevitable transaction imported every entry when it became so, and
 * nobody links while it runs, so it never gets here with work to do.
 */
static void extend_snapshot(struct stm_seg *s, uint64_t floor)
{
    if (floor <= atomic_load_explicit(&s->rev, memory_order_relaxed))
        return;
    STM_ASSERT(!s->inevitable, "I6: an inevitable transaction's snapshot is the newest");
    stm_import_log(s, stm_self.depth > 0, 0);
    STM_ASSERT(atomic_load_explicit(&s->rev, memory_order_relaxed) >= floor,
               "a fill's snapshot reaches the floor of the granules it takes");
}

/* Has segment i moved past revision `mine`? Its rev only grows (imports, including the
 * one after a lost link race, and links raise it; an enter sets it to G.rev, and every
 * linked entry is published by then: its linker's exit or the enter's own lock
 * publishes it), and each of its commits
 * ends its copies before the rev changes again. So a rev above `mine` (acquire: pairs
 * with the release store of it, in an import, a link or an enter) says that every
 * commit of i with an entry at or before `mine` has ended its copies, and makes them
 * visible. */
static int seg_past(int i, uint64_t mine)
{
    return atomic_load_explicit(&G.segs[i].rev, memory_order_acquire) > mine;
}

/* Spins until *flag reads 0 (acquire: pairs with the release store that lowered it) or
 * segment i moves past `mine`, for at most FLAG_SPINS rounds (pauses, then yields);
 * returns 0 if it gave up. `*timed`: a wait is being timed. */
#define FLAG_SPINS 256
static int wait_flag(int i, _Atomic int *flag, uint64_t mine, int *timed)
{
    for (int spins = 0; atomic_load_explicit(flag, memory_order_acquire) && !seg_past(i, mine);
         spins++) {
        if (!(*timed)++)
            TA_TIMED_BEGIN(TA_WAIT_LOCK);
        if (spins >= FLAG_SPINS)
            return 0;
        stm_spin_round(spins);
    }
    return 1;
}

/*
 * Before a fill copies segment 0 without the lock: waits until every copy into segment
 * 0 of an entry at or before s->rev has ended and is visible. Then every byte that no
 * entry after s->rev wrote holds its value at s->rev in segment 0 and keeps it during
 * the copy (only commits of later entries write segment 0 now: a thread alone, which
 * copies without an entry, cannot run while s is entered), and the undo under the lock
 * puts back the bytes that later entries wrote.
 *
 * A segment whose rev is past s->rev is done with such copies (seg_past). For the
 * others it reads flags. Why reading a few flags as 0 is enough: such an entry is
 * linked, and s read its link (its import, acquire, from the committer's seq_cst CAS;
 * or, for entries before s entered, its enter's lock, which waited out that commit's
 * window or lock), so whatever the committer stored before the link happens before
 * these loads: by coherence each load returns that store or a later one. A committer
 * copies into segment 0 either before its link, under the lock (those copies happen
 * before the link: visible already), or after it, with `publishing` set before it
 * leaves its window (`committing` raised before the link, lowered by a release store
 * after `publishing` was set) or unlocks (G.lock taken before the link). So: G.lock
 * read as 0 is that unlock, or a later one by a holder that acquired it; `committing`
 * read as 0 is that window's release or a later one of the same thread; after both,
 * `publishing` reads that 1 or later, and a 0 is the release store that ended the
 * copies (or a later one). G.lock is read first, then each segment's `committing`,
 * then its `publishing`. A flag cannot tell an older commit from a newer one, so the
 * fill may wait for a newer commit of a segment whose rev it read before that segment
 * moved past s->rev; each wait is short, and ends when the rev moves.
 *
 * Bounded: a lock held through 64 spins, or a flag up through FLAG_SPINS (a segment
 * that keeps committing big copies, a thread descheduled in its window), makes the
 * fill take the lock instead: its holder waits out the windows and the publishers
 * (stm_wait_publishers), which proves the same, and no new window or copy starts
 * meanwhile. No wait here can be for us: a window waits for nothing inside (it leaves
 * to wait for an inevitable transaction), late copies never wait, and the filler holds
 * no lock and no window.
 */
static void wait_imported_copies(struct stm_seg *s)
{
    uint64_t mine = atomic_load_explicit(&s->rev, memory_order_relaxed); /* our own */
    int behind = 0;
    for (int i = 1; !behind && i <= G.nseg; i++)
        behind = i != s->idx && !seg_past(i, mine);
    if (!behind)
        return;     /* every other segment is past our snapshot: nothing to wait for */
    int spins = 0, timed = 0, ok = 1;
    /* acquire: see above (pairs with the unlock's release) */
    while (ok && atomic_load_explicit(&G.lock, memory_order_acquire))
        if (++spins > 64)
            ok = 0;
        else
            __builtin_ia32_pause();
    for (int i = 1; ok && i <= G.nseg; i++)
        if (i != s->idx)
            ok = wait_flag(i, &G.segs[i].committing, mine, &timed) &&
                 wait_flag(i, &G.segs[i].publishing, mine, &timed);
    if (timed)
        TA_TIMED_END();
    if (!ok) {
        stm_commit_lock();
        stm_wait_publishers();
        stm_commit_unlock();
    }
}

/* Copies segment 0's bytes while committers of entries newer than the filler's
 * snapshot may write them (wait_imported_copies): the bytes it may catch half-written
 * are exactly those the undo under the lock overwrites, or those of objects new or
 * recycled since the snapshot, which the snapshot cannot reach (I7). A race by the
 * letter of the C memory model, as a seqlock's reader is, so a build with
 * ThreadSanitizer copies without instrumentation. */
#if defined(__SANITIZE_THREAD__)
#define STM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STM_TSAN 1
#endif
#endif
#ifdef STM_TSAN
/* uninstrumented, and no memcpy (which ThreadSanitizer intercepts) */
__attribute__((no_sanitize("thread"))) static void racy_copy(char *dst, const char *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ((volatile char *)dst)[i] = ((const volatile char *)src)[i];
}
#else
static void racy_copy(char *dst, const char *src, size_t n)
{
    memcpy(dst, src, n);
}
#endif

/* The two steps of a fill: segment 0's bytes copied into s's granules of [first,
 * last) that are in state `from` (outside the lock), which become G_FILL, then every
 * entry after our snapshot undone in them (under it). Returns how many it copied. */
static size_t copy_then_undo(struct stm_seg *s, size_t first, size_t last, int from)
{
    /* The copy runs outside the lock (see the comment above wait_imported_copies):
     * first every copy into segment 0 of an entry we imported is waited for, then
     * segment 0 is copied while others may commit, then, under the lock, every entry
     * after our snapshot is undone, which also undoes whatever of theirs the copy
     * caught. */
    wait_imported_copies(s);
    STM_TEST_HOOK(fill_waited);
    TA_TIMED_BEGIN(TA_UNSHARE);
    size_t n = 0;
    for (size_t g = first; g < last; g++)
        if (s->gstate[g] == from) {
            racy_copy(seg_addr(s->idx, granule_off(g)), seg_addr(0, granule_off(g)), GRANULE);
            s->gstate[g] = G_FILL;
            n++;
        }
    TA_TIMED_END();
    STM_TEST_HOOK(fill_copied);
    chaos_point(s);
    stm_commit_lock();
    TA_TIMED_BEGIN(TA_UNSHARE);
    /* Under the lock every entry whose bytes the copy may have caught is linked
     * and visible: a late copy comes after its entry's link, which the lock's wait
     * for the windows (or the previous holder's release) makes visible; a commit
     * that copies before its link does so under the lock, and links before its
     * release. Late copies still running write segment 0 only, which the undo does
     * not read, so there is no wait for them here. */
    undo_newer(s);
    TA_TIMED_END();
    stm_commit_unlock();
    return n;
}

/* A fill's copy of the inaccessible granules of [first, last) from segment 0 and its
 * undo of the entries after our snapshot. */
static void fill_copy(struct stm_seg *s, size_t first, size_t last)
{
    s->nfills++;
    populate(s, first, last);
    s->stats.pages_faulted += copy_then_undo(s, first, last, G_NONE) * GRANULE_PAGES;
}

/* An abort's restore of its unbacked writes in granules another segment took from us
 * after the writes (commit.c, restore_unbacked), which marked them G_FILL in [g0, g1):
 * they are brought back to our snapshot exactly as a fill brings granules in
 * (copy_then_undo), all at once. Both steps are needed: an abort may follow an import
 * whose late copies are still running (a fill's snapshot extension that met a
 * conflict: extend_snapshot), and the racy copy may catch a commit that copies before
 * its link. Segment 0 holds our private commits there, all at or before our rev, and
 * every later change of these granules is an entry. The granules stay accessible.
 * Outside the lock (an abort never holds it); only s's thread calls this. */
void stm_refill_granules(struct stm_seg *s, size_t g0, size_t g1)
{
    STM_ASSERT(s == stm_me && !stm_in_commit(s), "a refill is its thread's, outside the lock");
    size_t n = copy_then_undo(s, g0, g1, G_FILL);
#ifdef STM_TEST_HOOKS
    /* relaxed: a count read after the threads are joined */
    atomic_fetch_add_explicit(&stm_test_refills, n, memory_order_relaxed);
#else
    (void)n;
#endif
    for (size_t g = g0; g < g1; g++)
        if (s->gstate[g] == G_FILL)
            s->gstate[g] = G_OWN;
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
    size_t f0 = fresh ? g0 : 0, f1 = fresh ? g1 : 0; /* the fresh chunk's granules */
    int all = (!fresh && s->nfills >= FAULTS_BEFORE_ALL) || s->nprotect >= G.map_budget;
    if (all) {
        uintptr_t end = atomic_load_explicit(&G.heap_cursor, memory_order_relaxed);
        size_t gend = granule_of(end + GRANULE - 1);
        if (gend > G.ngranules)
            gend = G.ngranules;
        if (g1 > gend)
            gend = g1;
        g0 = 0;
        g1 = gend;
        fresh = 0;    /* the range holds other threads' granules too */
    }
    size_t first = g0;
    while (first < g1 && s->gstate[first] == G_OWN)
        first++;
    if (first == g1)
        return;
    size_t last = g1;
    while (s->gstate[last - 1] == G_OWN)
        last--;
    /* Hold the granules first (taking private ones from their holders), and bring the
     * snapshot to their floor: this may abort, before anything of the fill is done. */
    uint64_t floor = hold_granules(s, first, last, f0, f1);
    if (!fresh)
        extend_snapshot(s, floor);
    if (all) {
        s->nprotect = 0;
        s->nfills = 0;
    }
    chaos_point(s);
    TA_TIMED_BEGIN(TA_UNSHARE);
    protect_rw(s, first, last); /* also re-protects G_OWN granules between: a no-op */
    TA_TIMED_END();
    if (!fresh)
        fill_copy(s, first, last);
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
