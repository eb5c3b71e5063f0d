/*
 * runtime/stm/commit.c - begin, commit and abort of the page-based STM, with the write
 * barrier's slow path, inevitability and the read markers' wrap (the commit lock, the
 * windows and the lazy publication are in publish.c). The invariants I1..I7 and the
 * other files are listed in stm_internal.h.
 *
 * Maintains I2 (a committer writes segment 0 and nothing of another segment; owned
 * objects are copied after the link with `publishing` set), I3 (ownership taken by a
 * CAS in the write slow path, or by a commit's claim of its new and recycled objects,
 * given back at commit or abort), I4 (entries linked by CAS in revision order, in a
 * commit window or under the lock; the published tail and G.rev moved only under the
 * lock, to the newest linked entry: publish.c), I5 (commit and becoming inevitable
 * import, and so validate, every newer entry first, and a link that loses its CAS
 * validates the winner) and I6 (one inevitable transaction; others wait at commit,
 * abortable).
 *
 * Memory order: the window's and the lock's handshake is in publish.c; the link of an
 * entry (CAS on `next`) is seq_cst and releases the entry to importers (their acquire
 * loads of `next`); a segment's newest linked entry is a release store in its window,
 * acquired by the lock's holder (publish.c); a segment's rev is a release store (paired
 * with the acquire loads in min_active_rev);
 * the ownership word is released at commit and abort
 * and acquired by the next writer's CAS; G.inevitable, abort_request and publishing are
 * release/acquire pairs, each commented where it is stored. A private commit
 * (commit_private) stores its privseq odd (seq_cst) before loading its granules' words
 * (seq_cst): a Dekker pair with a filler's compare-and-swap of a word and its load of
 * privseq (pages.c); it stores privseq even with release after its copies.
 */

#include "runtime/stm/sync_stm.h"
#include "runtime/sync.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdlib.h>

#include "runtime/stm/publish.h"
#include "runtime/stm/stm_internal.h"
#include "runtime/timeacct.h"

#define INEVITABLE_AFTER 8            /* consecutive aborts before going inevitable */
#define LOG_GC_EVERY 32               /* commits between log garbage collections */

#ifdef STM_TEST_HOOKS
void (*stm_test_after_link)(void); /* tests only: stm_internal.h */
void (*stm_test_before_link)(void);
void (*stm_test_before_release)(void);
void (*stm_test_before_ask)(void);
void (*stm_test_linked_in_window)(void);
void (*stm_test_private_prechecked)(void);
void (*stm_test_private_checked)(void);
void (*stm_test_restore_checked)(void);
_Atomic unsigned long stm_test_private_commits;
_Atomic unsigned long stm_test_unbacked_commits;
_Atomic unsigned long stm_test_unbacked_fallbacks;
_Atomic unsigned long stm_test_unbacked_restores;
#endif

static uint64_t ticks_to_ns(uint64_t t)
{
    return (uint64_t)((double)t * G.ns_per_tick);
}

/* --------------------------------------------------------------- chaos mode */

/* At a protocol step: maybe yield, spin or sleep, so two cores see many interleavings. */
SYNC_NOINLINE void stm_chaos_step(struct stm_seg *s)
{
    uint64_t r = chaos_rand(s);
    switch (r & 15) {
    case 0:
    case 1:
        sched_yield();
        break;
    case 2: {
        unsigned n = (unsigned)(r >> 8) & 2047;
        for (volatile unsigned i = 0; i < n; i++)
            ;
        break;
    }
    case 3:
        if (((r >> 8) & 7) == 0)
            usleep((unsigned)(r >> 16) % 50 + 1);
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------------ aborts */

/* Do the granules of [off, off+len) belong to s alone (GS_PRIV)? */
static inline int run_private(const struct stm_seg *s, uintptr_t off, size_t len,
                              memory_order mo)
{
    uint64_t mine = gs_word(GS_PRIV, s->idx, 0);
    size_t g1 = granule_of(off + (len ? len : 1) - 1);
    for (size_t g = granule_of(off); g <= g1; g++)
        if (atomic_load_explicit(&G.gshare[g], mo) != mine)
            return 0;
    return 1;
}


static void stm_unclaim(struct stm_seg *s);

/*
 * An aborting attempt's unbacked writes (_stm_write_slowpath) back to its snapshot. Their
 * granules were ours alone when written. While one still is, nobody else writes its
 * bytes in segment 0, which hold our last commit of them: our snapshot (every commit of
 * ours is at or before our rev). The Dekker pair of commit_private keeps it so during
 * the copies: privseq odd (seq_cst store), then the granules' words again (seq_cst
 * loads); a filler that closes one after that sees privseq odd and waits until it
 * changes (pages.c, close_private), and one that closed it before is seen here. The
 * granules taken from us since are marked G_FILL and brought back whole, as a fill
 * would bring them in (stm_refill_granules), once privseq is even again: the refill
 * waits for others' copies and takes the lock, and nothing may wait with privseq odd.
 */
static void restore_unbacked(struct stm_seg *s)
{
    uint64_t v = atomic_load_explicit(&s->privseq, memory_order_relaxed); /* our own */
    STM_ASSERT(!(v & 1), "privseq is even outside our handshakes");
    /* seq_cst: our half of the Dekker pair (as in commit_private) */
    atomic_store_explicit(&s->privseq, v + 1, memory_order_seq_cst);
    size_t g0 = SIZE_MAX, g1 = 0; /* the granules to refill, marked G_FILL, within */
    for (size_t i = 0; i < s->nws; i++) {
        const struct ws_entry *w = &s->ws[i];
        if (w->backup_at != NO_BACKUP)
            continue;
        if (run_private(s, w->off, w->size, memory_order_seq_cst)) {
            STM_TEST_HOOK(restore_checked);
            copy_bytes(s->base + w->off, G.base + w->off, w->size); /* segment 0 */
#ifdef STM_TEST_HOOKS
            /* relaxed: a count read after the threads are joined */
            atomic_fetch_add_explicit(&stm_test_unbacked_restores, 1, memory_order_relaxed);
#endif
            continue;
        }
        size_t a = granule_of(w->off), b = granule_of(w->off + w->size - 1);
        for (size_t g = a; g <= b; g++)
            s->gstate[g] = G_FILL;
        g0 = a < g0 ? a : g0;
        g1 = b + 1 > g1 ? b + 1 : g1;
    }
    /* release: our copies above read segment 0 before this store; a filler that saw
     * privseq odd acquires it (or a later value) before it can commit into the granule,
     * so its stores into segment 0 come after our loads */
    atomic_store_explicit(&s->privseq, v + 2, memory_order_release);
    if (g1)
        stm_refill_granules(s, g0, g1);
}

static void release_ownership_restore(struct stm_seg *s)
{
    /* Undo in reverse order: the oldest backup of an object wins. */
    for (size_t i = s->nws; i-- > 0;) {
        struct ws_entry *w = &s->ws[i];
        if (w->backup_at == NO_BACKUP)
            continue;   /* unbacked: restore_unbacked, below */
        memcpy(s->base + w->off, s->backup + w->backup_at, w->size);
        /* release: pairs with the acquire CAS/load of the next owner; the restored
         * bytes are in our own segment only, so the order matters for I3 alone. */
        STM_ASSERT(w->saved == NOT_OWNED ||
                       (atomic_load_explicit(wlock_slot(w->off), memory_order_relaxed) &
                        0xffff) == (uint64_t)s->idx,
                   "I3: an aborting writer owns every object it gives back");
        if (w->saved != NOT_OWNED)
            atomic_store_explicit(wlock_slot(w->off), w->saved, memory_order_release);
    }
    if (s->nunbacked)
        restore_unbacked(s);
}

/* An aborting attempt's rollback: its entry, claims and writes given back, its
 * allocations undone, its logs emptied. */
static void abort_rollback(struct stm_seg *s)
{
    if (s->building) {
        stm_entry_keep(s, s->building);
        s->building = NULL;
    }
    if (s->claimed)
        stm_unclaim(s);
    release_ownership_restore(s);
    /* An inevitable transaction's request is answered by this abort, whatever caused
     * it: a flag left set would abort our next transaction for nothing (relaxed: the
     * requester only waits for the objects, which the restore above released). */
    atomic_store_explicit(&s->abort_request, 0, memory_order_relaxed);
    /* Allocations of the attempt vanish: the allocator returns to where the attempt
     * started, and chunks the attempt opened become spares that the next chunk request
     * takes first (a retry that allocates as much opens none); recycled objects go back
     * to their lists. */
    s->bump = s->tx_bump;
    s->bump_end = s->tx_bump_end;
    s->chunk_start = s->tx_chunk_start;
    for (size_t i = 0; i < s->ntx_chunks; i++)
        push_chunk(&s->spares, &s->nspares, &s->spares_cap, s->tx_chunks[i].off,
                   s->tx_chunks[i].size);
    for (size_t i = 0; i < s->nrecycled; i++)
        freelist_push(&s->ready[s->recycled[i].cls], s->recycled[i].off);
    tx_reset(s);
}

/* The abort counted, and its row in the conflict log. */
static void abort_record(struct stm_seg *s, enum sync_abort_kind kind, int other, uintptr_t obj)
{
    uint64_t now = sync_now_ns();
    s->stats.aborts[kind]++;
    /* Conflict analysis: our side's location where the conflict was found (for the
     * object it names; the workload's hook reads no shared memory), and the other
     * side as the detecting path left it in conf_other_*. */
    uint32_t where = s->conf_self_where ? s->conf_self_where : sync_where_of(obj);
    s->conf_self_where = 0;
    struct sync_conflict c = {
        .t_ns = now - G.t0_ns,
        .thread = s->idx - 1,
        .other = other >= 1 ? other - 1 : -1,
        .kind = (uint32_t)kind,
        .object = obj,
        .page = obj / PAGE,
        .site = s->site,
        .wasted_ns = s->attempt_ticks ? ticks_to_ns(ticks() - s->attempt_ticks) : 0,
        .where = where,
        .other_where = s->conf_other_where,
        .other_site = s->conf_other_site,
    };
    s->conf_other_where = 0;
    s->conf_other_site = NULL;
    sync_stats_add_conflict(&s->stats, &c);
    stm_self.aborts_in_row++;
    TA_ABORT(s->attempt_ticks); /* time breakdown: the attempt and its rollback are wasted */
}

/* After a write-write conflict on obj with owner `other`: the wait described below. */
static void abort_wait_owner(enum sync_abort_kind kind, int other, uintptr_t obj)
{
    /* Contention management: after a write-write conflict, wait (without holding
     * anything) until the owner let go, so the retry does not hit it again. */
    if (kind == SYNC_ABORT_WRITE_WRITE && obj) {
        _Atomic uint64_t *slot = wlock_slot(obj);
        TA_TIMED_BEGIN(TA_WAIT_OWNER);
        /* The owner is usually running and lets go within its commit (a microsecond or
         * so): spin with `pause` first; yield only after that (it may be descheduled:
         * threads may outnumber cores). Yielding much earlier made bank's transfers
         * spend a large share of their 2-thread time in this wait on a busy VM (the
         * measurement is in the message of commit 89400fd, which chose 2,048). */
        for (int spins = 0; spins < 100000; spins++) {
            /* relaxed: only a hint for when to retry */
            if ((atomic_load_explicit(slot, memory_order_relaxed) & 0xffff) != (uint64_t)other)
                break;
            if (spins > 2048)
                sched_yield();
            else
                __builtin_ia32_pause();
        }
        TA_TIMED_END();
    }
}

/* Throws the running attempt away and jumps back to the block's start. */
void __attribute__((noreturn)) stm_abort(enum sync_abort_kind kind, int other,
                                                uintptr_t obj)
{
    struct stm_seg *s = stm_me;
    if (s->inevitable)
        stm_fatal("an inevitable transaction tried to abort (%s)", sync_abort_kind_name(kind));
    STM_ASSERT(stm_self.depth >= 1, "abort: inside a transaction");
    STM_ASSERT(!stm_in_commit(s), "abort: never in the commit lock or window");
    STM_ASSERT(!atomic_load_explicit(&s->publishing, memory_order_relaxed),
               "I2: abort: not while publishing (the commit is past its link)");
    STM_ASSERT(s->nowned <= s->nws, "I3: owned objects are among the written ones");
    SYNC_COMPILER_BARRIER();
    abort_rollback(s);
    abort_record(s, kind, other, obj);
    abort_wait_owner(kind, other, obj);
    stm_self.depth = 0;
    stm_longjmp(&stm_self.jb);
}

/* Checked at slow paths: an inevitable transaction wants something we own. */
/* An inevitable transaction asked us to let go of an object (check_abort_request):
 * abort, recording both sides. Out of line and cold: the barriers that inline the check
 * keep their registers for the common path. */
static SYNC_NOINLINE __attribute__((cold, noreturn)) void abort_for_inevitable(struct stm_seg *s)
{
    atomic_store_explicit(&s->abort_request, 0, memory_order_relaxed);
    int ie = atomic_load_explicit(&G.inevitable, memory_order_relaxed);
    /* relaxed: stored before the request, which the caller's acquire read (a hint) */
    uintptr_t obj = (uintptr_t)atomic_load_explicit(&s->abort_obj, memory_order_relaxed);
    s->conf_other_where = atomic_load_explicit(&s->abort_where, memory_order_relaxed);
    if (ie >= 1 && ie <= G.nseg)
        s->conf_other_site = atomic_load_explicit(&G.segs[ie].wsite, memory_order_relaxed);
    /* our side: where we first wrote the object it wants (we own it) */
    for (size_t i = 0; obj && i < s->nws; i++)
        if (s->ws[i].off == obj) {
            s->conf_self_where = ws_where(&s->ws[i]);
            break;
        }
    stm_abort(SYNC_ABORT_INEVITABLE, ie, obj);
}

static inline void check_abort_request(struct stm_seg *s)
{
    /* acquire: pairs with the release store of the inevitable requester */
    if (SYNC_UNLIKELY(atomic_load_explicit(&s->abort_request, memory_order_acquire)) &&
        !s->inevitable)
        abort_for_inevitable(s);
}

/* ------------------------------------------------------------ barriers */

/* The other side of a conflict on obj found by our write barrier: who last took its
 * ownership and from where (wwhere, relaxed: a hint that may already name a later
 * owner), left in conf_other_* for stm_abort. Returns that segment, -1 if none. */
static SYNC_NOINLINE int conflict_other_side(struct stm_seg *s, uintptr_t obj, int owner)
{
    uint64_t ww = atomic_load_explicit(wwhere_slot(obj), memory_order_relaxed);
    /* An owner stores its wwhere just after its CAS: give it a moment to do so. */
    for (int i = 0; owner && (int)(ww & 0xffff) != owner && i < 64; i++) {
        __builtin_ia32_pause();
        ww = atomic_load_explicit(wwhere_slot(obj), memory_order_relaxed);
    }
    int seg = (int)(ww & 0xffff);
    if (seg < 1 || seg > G.nseg || seg == s->idx)
        return -1;
    s->conf_other_where = (uint32_t)(ww >> 16);
    s->conf_other_site = atomic_load_explicit(&G.segs[seg].wsite, memory_order_relaxed);
    return seg;
}

/* The write barrier's aborts: the other side as conflict_other_side finds it, then the
 * abort. One cold call, so that the barrier keeps its registers for the common path. */
static SYNC_NOINLINE __attribute__((cold, noreturn)) void
abort_naming_other(struct stm_seg *s, uintptr_t off, int owner, enum sync_abort_kind kind)
{
    int other = conflict_other_side(s, off, owner);
    stm_abort(kind, owner ? owner : other, off);
}

/* The commit that wrote obj at revision rev, after our snapshot: its log entry says who
 * (its segment and block) and from where (the run's validate field: its location at its
 * first write of the object), as validation names a writer (log.c). Left in conf_other_*
 * for stm_abort; returns that segment, or -1 when no linked entry of that revision
 * writes obj, or none is linked yet. A written object's word names its rev only after
 * the link (the release in commit_release); an unclaimed recycled object's word gets it
 * before, but that object is nobody's yet (I7) and its run does not validate; a private
 * commit's word names its snapshot, so the entry there, if it wrote obj too, is named
 * instead (a commit after our snapshot all the same). Entries after our rev are not
 * freed while we are active at our rev (I4): the walk reads immutable entries, reached
 * through acquire loads of `next`. */
static int committed_writer(struct stm_seg *s, uintptr_t obj, uint64_t rev)
{
    const struct log_entry *e = s->last;
    /* acquire: pairs with the release store that linked each entry */
    while (e && e->rev < rev)
        e = atomic_load_explicit(&e->next, memory_order_acquire);
    if (!e || e->rev != rev)
        return -1;
    for (uint32_t i = 0; i < e->nruns; i++)
        if (e->runs[i].off == obj && e->runs[i].validate) {
            s->conf_other_site = e->site;
            s->conf_other_where = e->runs[i].validate >> 1;
            return e->seg;
        }
    return -1;
}

/* The write barrier found obj committed after our snapshot (its word's rev, `rev`): a
 * read-write abort. The other side is that commit, from its entry; only when there is
 * none, the last taker of the object (which may be a transaction that aborted since). */
static SYNC_NOINLINE __attribute__((cold, noreturn)) void
abort_read_stale(struct stm_seg *s, uintptr_t off, uint64_t rev)
{
    int other = committed_writer(s, off, rev);
    if (other < 0)
        other = conflict_other_side(s, off, 0);
    stm_abort(SYNC_ABORT_READ_WRITE, other, off);
}

/* An object we took from others' reach (its word was not NOT_OWNED): counts it owned
 * and records who took it and from where, in its write-set entry (ws[i]) and in wwhere, for the conflicts a later writer (wwhere) or a validating reader
 * (our entry's run) may have with us. Out of line: a thread alone takes nothing and keeps
 * its path as short as without conflict analysis. Relaxed: hints for the conflict log,
 * ordered by nothing. */
static SYNC_NOINLINE void record_taker(struct stm_seg *s, size_t i, uintptr_t off)
{
    uint64_t mine = (uint64_t)s->idx;
    uint32_t where = sync_where_of(off);
    s->ws[i].where = where;
    s->nowned++;
    atomic_store_explicit(wwhere_slot(off), mine | (uint64_t)where << 16, memory_order_relaxed);
    if (atomic_load_explicit(&s->wsite, memory_order_relaxed) != s->site)
        atomic_store_explicit(&s->wsite, s->site, memory_order_relaxed);
}

/* We are inevitable (I6) and `owner` has the object at off: asks it to abort (the
 * owner asked before, *asked, if another, is told it need not) and starts the wait. */
SYNC_INLINE void ask_owner(struct stm_seg *s, uintptr_t off, uint64_t owner, int *asked)
{
    /* The object changed hands meanwhile: the last owner we asked let it go (relaxed:
     * as the clear after the wait, in take_ownership). */
    if (*asked && *asked != (int)owner)
        atomic_store_explicit(&G.segs[*asked].abort_request, 0, memory_order_relaxed);
    STM_TEST_HOOK(before_ask);
    /* relaxed: published by the release store below (conflict analysis) */
    atomic_store_explicit(&G.segs[owner].abort_obj, off, memory_order_relaxed);
    atomic_store_explicit(&G.segs[owner].abort_where, sync_where_of(off),
                          memory_order_relaxed);
    if (atomic_load_explicit(&s->wsite, memory_order_relaxed) != s->site)
        atomic_store_explicit(&s->wsite, s->site, memory_order_relaxed);
    /* release: pairs with the acquire in check_abort_request */
    atomic_store_explicit(&G.segs[owner].abort_request, 1, memory_order_release);
    *asked = (int)owner;
    TA_TIMED_BEGIN(TA_WAIT_OWNER);
    sched_yield();
}

/* Takes the ownership of the object at off (I3) where others may write it, aborting on
 * a conflict (an inevitable transaction waits for the owner instead). Returns the
 * ownership word before (NOT_OWNED: not taken, nobody to conflict with). `force`: take
 * it even when alone (a late backup, below). */
SYNC_INLINE uint64_t take_ownership(struct stm_seg *s, uintptr_t off, int force)
{
    _Atomic uint64_t *slot = wlock_slot(off);
    uint64_t mine = (uint64_t)s->idx;
    uint64_t w = NOT_OWNED;
    int asked = 0;   /* the owner we asked to let go (segment >= 1); 0: none */
    /* Ownership detects write-write conflicts early; serialisability rests on
     * validation alone (a write implies a read, I5). A thread alone has nobody to
     * conflict with, so it skips the CAS and never touches the word (relaxed: a
     * thread entering meanwhile is caught by validation). */
    if (force || atomic_load_explicit(&G.nactive, memory_order_relaxed) > 1 || G.chaos ||
        s->inevitable)
        /* acquire: pairs with the release store that gave the object up */
        w = atomic_load_explicit(slot, memory_order_acquire);
    while (w != NOT_OWNED) {
        uint64_t owner = w & 0xffff;
        if (owner == 0) {
            if ((w >> 16) > s->rev) { /* committed after our snapshot: we read it stale */
                abort_read_stale(s, off, w >> 16);
            }
            /* acquire on success: as above; the failure reloads w */
            if (atomic_compare_exchange_weak_explicit(slot, &w, w | mine,
                                                      memory_order_acquire,
                                                      memory_order_acquire))
                break;
            continue;
        }
        if (owner == mine)
            stm_fatal("%s: object owned but its write flag is set", "write barrier");
        if (!s->inevitable) {
            abort_naming_other(s, off, (int)owner, SYNC_ABORT_WRITE_WRITE);
        }
        ask_owner(s, off, owner, &asked);
        w = atomic_load_explicit(slot, memory_order_acquire);
    }
    if (SYNC_UNLIKELY(asked)) {
        /* The owner let the object go, which answers our request whenever it came:
         * a flag left set (our store may have landed after the owner's commit had
         * cleared it) would abort the owner's next transaction for nothing. Only the
         * inevitable transaction sets these flags, and it sets one again for any
         * object it waits for next (relaxed: the flag is a hint to abort; an owner
         * that read it before this store aborts once for nothing, as before). */
        atomic_store_explicit(&G.segs[asked].abort_request, 0, memory_order_relaxed);
        TA_TIMED_END();   /* only a wait opened an interval: no call on the fast path */
    }
    STM_ASSERT(w == NOT_OWNED ||
                   (atomic_load_explicit(slot, memory_order_relaxed) & 0xffff) == mine,
               "I3: the writer owns the object after its CAS");
    return w;
}

/*
 * Unbacked writes. With others entered, the first write of an object whose granules we
 * alone hold (GS_PRIV of ours; a relaxed look, a hint) takes no ownership and saves no
 * backup: nobody else reads or writes those bytes before taking the granule, which
 * every path below looks at again, and segment 0 holds them at our snapshot. A private
 * commit needs neither (commit_private); an abort copies the object back from segment 0
 * (restore_unbacked); a commit that is not private (it wrote shared data too, or a
 * filler took a granule meanwhile) and a transaction about to become inevitable back
 * them late (back_unbacked). The read marker is stored as for any write (I5): a filler
 * that takes the granule and commits the object is then found by our validation. Not
 * when alone (a backup is the cheaper undo there: nothing is looked at) nor inevitable.
 */
void _stm_write_slowpath(void __seg_gs *obj)
{
    struct stm_seg *s = stm_me;
    uintptr_t off = (uintptr_t)obj;
    if (SYNC_UNLIKELY(stm_self.depth == 0))
        stm_fatal("%s outside an atomic block", "SYNC_WRITE");
    STM_ASSERT(!stm_in_commit(s), "no write barrier in the commit lock or window");
    STM_ASSERT(off >= G.rm_size && off < G.rm_size + G.heap_size, "a written object is in the heap");
    check_abort_request(s);
    chaos_point(s);
    if (G.chaos && !s->inevitable && (chaos_rand(s) & 255) == 0)
        stm_abort(SYNC_ABORT_OTHER, -1, off); /* chaos: exercise the abort path */

    /* Bring the object's granules in before taking it: a fill may take a granule from
     * its private holder and move our snapshot on (pages.c), which can abort, and an
     * abort must find nothing half done (an ownership taken but not yet logged). The
     * size is read through %gs: a first access faults and fills there. */
    uint32_t size = ((const struct sync_hdr __seg_gs *)obj)->size;
    ensure_accessible(off, size, 0);
    int unbacked = 0;

    /* relaxed: a hint (above); G.eager: nothing is private */
    if (atomic_load_explicit(&G.nactive, memory_order_relaxed) > 1 && !s->inevitable &&
        !G.eager && run_private(s, off, size, memory_order_relaxed)) {
        push_unbacked(s, off, size);
        unbacked = 1;
    } else {
        uint64_t w = take_ownership(s, off, 0);
        push_backup(s, off, size, w); /* w = the word before we owned it */
        if (w != NOT_OWNED)
            record_taker(s, s->nws - 1, off);
    }
    STM_ASSERT(s->nowned <= s->nws, "I3: owned objects are among the written ones");
    stm_read_barrier(obj);        /* a write implies a read (I5) */
    ((struct sync_hdr __seg_gs *)obj)->flags &= ~STM_WB;
    /* Stores only on the backed path (sync_stm.h, "stm_self.dirty"): no read of the
     * word a store of the previous write wrote. An unbacked write reads it and stores
     * only the first time: OTHER, once there, stays. */
    if (!unbacked)
        stm_self.dirty = STM_DIRTY_OTHER;
    else if (!stm_self.dirty)
        stm_self.dirty = STM_DIRTY_UNBACKED;
}

/*
 * Makes the running attempt's unbacked writes ordinary ones, before a commit that is not
 * private (its entry carries old bytes; its window wants every written object owned) or
 * the inevitability (which never aborts, and whose granules others may take meanwhile).
 * Each object's ownership is taken as the write barrier takes it, even alone: its word
 * tells whether a filler committed it after our snapshot (a read-write abort) or holds
 * it (a write-write one). Owned, with a word at or before our rev, its last commit is in
 * our snapshot and that commit's copies into segment 0 have ended (an owner gives the
 * word up after its late copies, with release, which our CAS acquires; a granule still
 * ours was written by nobody else), and nobody else commits it until we let go: segment
 * 0 holds it at our snapshot, and we copy it from there as its backup. The late backups
 * land after the others: `backup` is then out of write-set order (stm_entry_build).
 */
static SYNC_NOINLINE void back_unbacked(struct stm_seg *s)
{
    for (size_t i = 0; s->nunbacked && i < s->nws; i++) {
        if (s->ws[i].backup_at != NO_BACKUP)
            continue;
        uintptr_t off = s->ws[i].off;
        uint32_t size = s->ws[i].size;
        uint64_t w = take_ownership(s, off, 1);
        chaos_point(s);
        if (SYNC_UNLIKELY(s->backup_len + size > s->backup_cap))
            stm_grow_backup(s, size);
        copy_bytes(s->backup + s->backup_len, G.base + off, size); /* segment 0 */
        s->ws[i].backup_at = s->backup_len;
        s->ws[i].saved = w;
        s->backup_len += size;
        s->backup_shuffled = 1;
        s->nunbacked--;
        if (w != NOT_OWNED)
            record_taker(s, i, off);
    }
}
/* --------------------------------------------------------- inevitability */

/* Waits until no other transaction is inevitable, staying abortable. */
static void wait_inevitable_gone(struct stm_seg *s)
{
    for (int spins = 0;; spins++) {
        /* acquire: pairs with the release store that cleared G.inevitable */
        int ie = atomic_load_explicit(&G.inevitable, memory_order_acquire);
        if (ie == 0 || ie == s->idx) {
            if (spins)
                TA_TIMED_END();
            return;
        }
        if (!spins)
            TA_TIMED_BEGIN(TA_WAIT_INEVITABLE);
        check_abort_request(s);
        if (spins > 32)
            sched_yield();
    }
}

void _stm_become_inevitable(void)
{
    struct stm_seg *s = stm_me;
    if (s->inevitable)
        return;
    if (stm_self.depth == 0)
        stm_fatal("%s outside an atomic block", "sync_inevitable");
    if (s->nunbacked)
        back_unbacked(s); /* while we can still abort */
    for (;;) {
        wait_inevitable_gone(s);
        stm_commit_lock();
        if (atomic_load_explicit(&G.inevitable, memory_order_relaxed) == 0)
            break;
        stm_commit_unlock();
    }
    stm_import_log(s, 1, 1);
    STM_ASSERT(s->holds_lock, "I6: inevitability is taken under the commit lock");
    STM_ASSERT(!atomic_load_explicit(&s->last->next, memory_order_relaxed) &&
                   s->last == atomic_load_explicit(&G.log_tail, memory_order_relaxed),
               "I5: an inevitable transaction has imported (validated) every entry");
    STM_ASSERT(atomic_load_explicit(&G.inevitable, memory_order_relaxed) == 0,
               "I6: at most one inevitable transaction");
    /* release: pairs with the acquire in wait_inevitable_gone / commit */
    atomic_store_explicit(&G.inevitable, s->idx, memory_order_release);
    s->inevitable = 1;
    stm_self.dirty = STM_DIRTY_OTHER; /* its commit must clear the inevitability */
    s->stats.inevitable++;
    stm_commit_unlock();
}

/* ------------------------------------------------------------ read markers */

/* Read versions wrapped (every 65,535 transactions): forget the markers, so that no old
 * marker equals a new version (a stale one would only cost a needless abort). Nothing
 * to forget if no transaction marked since the last time (a thread alone marks
 * nothing). A marker is stored when an object is read, and the read makes its granule
 * the thread's own (G_OWN), so the markers of its own granules are zeroed in place, up
 * to MARKS_IN_PLACE bytes of them (512 MiB of granules), which keeps its marker memory
 * at 1/8 of the granules it holds; beyond, all of them go back to the kernel
 * (MADV_DONTNEED), and each page the next reads touch faults in again. (A marker left
 * on a granule it does not hold, read by SYNC_READ without an access, can only cost a
 * needless abort.) A page given back and touched again costs a fault and a TLB
 * shootdown, far more than zeroing it in place, and a transaction that reads a big
 * structure at random touches most of them again before the next wrap: zeroing in
 * place wins (the figures: DESIGN.md, "Memory layout", read markers).
 * Relaxed: the cursor only grows; a chunk taken meanwhile has no markers yet. */
#define MARKS_IN_PLACE ((size_t)64 << 20)
#ifdef STM_TEST_HOOKS
size_t stm_test_marks_in_place = MARKS_IN_PLACE; /* tests only: stm_internal.h */
_Atomic unsigned long stm_test_marks_cleared;
#define MARKS_LIMIT stm_test_marks_in_place
#else
#define MARKS_LIMIT MARKS_IN_PLACE
#endif
static void forget_marks(struct stm_seg *s)
{
    if (!s->marked)
        return;
    s->marked = 0;
#ifdef STM_TEST_HOOKS
    /* relaxed: a count the test reads after joining the threads */
    atomic_fetch_add_explicit(&stm_test_marks_cleared, 1, memory_order_relaxed);
#endif
    uintptr_t end = atomic_load_explicit(&G.heap_cursor, memory_order_relaxed);
    size_t gend = end > G.rm_size ? granule_of(end - 1) + 1 : 0, owned = 0;
    if (gend > G.ngranules)
        gend = G.ngranules;
    for (size_t g = 0; g < gend; g++)
        owned += s->gstate[g] == G_OWN;
    if (owned * (GRANULE / 8) > MARKS_LIMIT) {
        madvise(seg_addr(s->idx, 0), G.rm_size, MADV_DONTNEED);
        return;
    }
    size_t e;
    for (size_t g = granule_run(s, 0, gend, G_OWN, &e); g < gend;
         g = granule_run(s, e, gend, G_OWN, &e))
        memset(seg_addr(s->idx, granule_off(g) / 8), 0, (e - g) * (GRANULE / 8));
}
/* ------------------------------------------------------------ begin / commit */

int _stm_begin(const char *site)
{
    struct stm_seg *s = stm_me;
    if (SYNC_UNLIKELY(!s))
        stm_fatal("%s: thread has not entered the stm runtime", site);
    STM_ASSERT(stm_self.depth == 0, "begin: no transaction open");
    STM_ASSERT(!stm_in_commit(s) && !s->inevitable && !s->building && !s->claimed,
               "begin: nothing left of the last one");
    STM_ASSERT(s->nws == 0 && s->nowned == 0 && s->nranges == 0 && s->nrecycled == 0 &&
                   s->nfrees == 0 && s->ntx_chunks == 0 && s->backup_len == 0 &&
                   s->nunbacked == 0,
               "begin: the attempt's logs are empty");
    STM_ASSERT(!atomic_load_explicit(&s->publishing, memory_order_relaxed),
               "I2: publishing is 0 between transactions");
    STM_ASSERT(atomic_load_explicit(&s->active, memory_order_relaxed), "begin: the segment is entered");
    TA_TX_BEGIN();
    stm_self.depth = 1;
    if (SYNC_UNLIKELY(++stm_self.rv == 0)) {
        forget_marks(s);
        stm_self.rv = 1;
    }
    s->site = site;
    /* A thread alone (relaxed: a thread entering meanwhile is caught at our commit,
     * which then finds its entry) neither marks its reads nor reads the clock: nobody
     * can conflict with it. If somebody commits before this transaction does, its
     * validation has no markers to go by and aborts it (stm_import_log); the retry
     * marks. The clock is for the wasted time of an abort: without it one abort
     * reports 0 ns. */
    int others = atomic_load_explicit(&G.nactive, memory_order_relaxed) > 1;
    stm_self.mark = (uint16_t)others;
    s->attempt_ticks = others || G.chaos ? ticks() : 0;
    TA_ATTEMPT(s->attempt_ticks);
    s->tx_bump = s->bump;
    s->tx_bump_end = s->bump_end;
    s->tx_chunk_start = s->chunk_start;
    s->range_start = s->bump;
    chaos_point(s);
    /* Anything committed since our snapshot? Asked of the last entry we imported, not
     * of G.rev: that line changes only when the next entry is linked, while the
     * publication line changes at every commit (acquire: pairs with the release store that
     * linked the entry). */
    if (atomic_load_explicit(&s->last->next, memory_order_acquire))
        stm_import_log(s, 0, 0); /* nothing read yet: refresh the snapshot */
    STM_ASSERT(atomic_load_explicit(&s->rev, memory_order_relaxed) == s->last->rev,
               "I4: a segment's rev is its last imported entry's");
    if (SYNC_UNLIKELY(stm_self.aborts_in_row >= INEVITABLE_AFTER)) {
        /* Nothing read yet: becoming inevitable aborts only on a marker left from
         * before the last wrap on a granule we do not hold (forget_marks), at most once
         * per such marker per 65,535 versions; the retry starts inevitable again. */
        stm_self.mark = 1;
        _stm_become_inevitable();
    }
    s->marked |= stm_self.mark;
    TA_PHASE(TA_WORK);
    return 1;
}

/* Sets the write flag on every object of a run of new objects (bump order) and, when
 * claiming, makes us their owner (I3): nobody else can reach them before our link, so a
 * plain store will do (relaxed: the link's release store publishes it with the entry;
 * a thread reaches a new object only through an entry it imported with acquire). */
static void flag_new_range(struct stm_seg *s, uintptr_t a, uintptr_t b, int claim)
{
    while (a < b) {
        struct sync_hdr *h = (struct sync_hdr *)(s->base + a);
        h->flags |= STM_WB;
        if (claim) {
            STM_ASSERT(atomic_load_explicit(wlock_slot(a), memory_order_relaxed) == 0,
                       "I3: a new object's word is 0 until its creator commits it");
            atomic_store_explicit(wlock_slot(a), (uint64_t)s->idx, memory_order_relaxed);
        }
        uintptr_t n = ((uintptr_t)h->size + 15) & ~(uintptr_t)15;
        a += n ? n : 16;
    }
}

/* Stores `word` into the ownership word of every object of a run of new objects: 0 when
 * an abort gives back a claim (relaxed: the objects vanish with the attempt, nobody else
 * ever saw them), the new revision when the commit gives them up after its late copies
 * (release: pairs with the next writer's acquire load and CAS, which must find our
 * copies in segment 0 done before its own). */
static void new_range_words(struct stm_seg *s, uintptr_t a, uintptr_t b, uint64_t word,
                            memory_order mo)
{
    while (a < b) {
        const struct sync_hdr *h = (const struct sync_hdr *)(s->base + a);
        STM_ASSERT((atomic_load_explicit(wlock_slot(a), memory_order_relaxed) & 0xffff) ==
                       (uint64_t)s->idx,
                   "I3: a claimed new object is owned by its creator until it lets go");
        atomic_store_explicit(wlock_slot(a), word, mo);
        uintptr_t n = ((uintptr_t)h->size + 15) & ~(uintptr_t)15;
        a += n ? n : 16;
    }
}

/* An abort of a commit that claimed its new and recycled objects gives them back: new
 * ones to 0, recycled ones to the word they had (relaxed, as above). */
static void stm_unclaim(struct stm_seg *s)
{
    STM_ASSERT(s->claimed, "I3: only a claim is given back");
    for (size_t i = 0; i < s->nranges; i++)
        new_range_words(s, s->ranges[i].a, s->ranges[i].b, 0, memory_order_relaxed);
    for (size_t i = 0; i < s->nrecycled; i++)
        atomic_store_explicit(wlock_slot(s->recycled[i].off), s->recycled[i].saved,
                              memory_order_relaxed);
    s->claimed = 0;
}

/* Copies one run of the commit into segment 0: before the link (under the commit lock,
 * or by a thread alone) or, an owned object (I3), after it with `publishing` set. No other segment is touched: they import
 * the entry, or undo it at a fault (I2). */
static inline void publish_run(struct stm_seg *s, uintptr_t off, size_t len)
{
    copy_bytes(G.base + off, s->base + off, len);    /* segment 0 is at G.base */
}

/* ---------------------------------------------------------- private commits */

/* Did the running transaction write only in granules s alone holds? */
SYNC_INLINE int ws_private(const struct stm_seg *s, memory_order mo)
{
    for (size_t i = 0; i < s->nws; i++)
        if (!run_private(s, s->ws[i].off, s->ws[i].size, mo))
            return 0;
    return 1;
}

/* Did the running transaction write, allocate and free only in granules s alone holds? */
static int tx_private(const struct stm_seg *s, memory_order mo)
{
    if (!ws_private(s, mo))
        return 0;
    for (size_t i = 0; i < s->nranges; i++)
        if (!run_private(s, s->ranges[i].a, s->ranges[i].b - s->ranges[i].a, mo))
            return 0;
    for (size_t i = 0; i < s->nrecycled; i++)
        if (!run_private(s, s->recycled[i].off, s->recycled[i].size, mo))
            return 0;
    return 1;
}

/* The private commit's steps that commit_unbacked shares. Our half of the Dekker pair
 * with a filler that closes one of our granules (pages.c, close_private) opens: privseq
 * odd (seq_cst store; the caller's seq_cst loads of the granules' words follow).
 * Returns the even value it had. */
SYNC_INLINE uint64_t private_open(struct stm_seg *s)
{
    STM_TEST_HOOK(private_prechecked);
    chaos_point(s);
    uint64_t v = atomic_load_explicit(&s->privseq, memory_order_relaxed); /* our own */
    STM_ASSERT(!(v & 1), "privseq is even between private commits");
    /* seq_cst, store and loads: our half of the Dekker pair (pages.c, close_private) */
    atomic_store_explicit(&s->privseq, v + 1, memory_order_seq_cst);
    return v;
}

/* ... and closes (release: pairs with the acquire loads of a filler waiting in
 * close_private: whatever we copied and released before is visible to it). */
SYNC_INLINE void private_close(struct stm_seg *s, uint64_t v)
{
    atomic_store_explicit(&s->privseq, v + 2, memory_order_release);
}

/* The written objects into segment 0, each with STM_WB (every committed copy carries
 * it, as in _stm_commit). */
SYNC_INLINE void private_publish_ws(struct stm_seg *s)
{
    for (size_t i = 0; i < s->nws; i++) {
        ((struct sync_hdr *)(s->base + s->ws[i].off))->flags |= STM_WB;
        publish_run(s, s->ws[i].off, s->ws[i].size);
    }
}

/*
 * A private commit (DESIGN.md, "Private commits"): the transaction wrote, allocated and
 * freed only in granules that no other segment holds (GS_PRIV of ours). Nobody else can
 * read or write those bytes until a filler takes the granule (pages.c, close_private),
 * so the commit serialises at our snapshot, s->rev, as a read-only one does (its reads
 * are that snapshot, I1; its writes are seen by nobody before it): no validation, no
 * log entry, no window, no lock, and no line another thread reads is written. It copies
 * the objects into segment 0 (lines only we touch) with `privseq` odd, and gives the
 * written objects up with s->rev in their words. The Dekker pair with a filler that
 * closes one of the granules: privseq odd (seq_cst store), then every granule's state
 * again (seq_cst loads); one found closing sends the commit down the logged path.
 * Returns 0 (nothing done) when the transaction is not private.
 */
static int commit_private(struct stm_seg *s)
{
    /* relaxed: a first look, which costs a shared commit only these loads */
    if (!tx_private(s, memory_order_relaxed))
        return 0;
    uint64_t v = private_open(s);
    if (!tx_private(s, memory_order_seq_cst)) {
        private_close(s, v); /* nothing was copied */
        return 0;
    }
    STM_TEST_HOOK(private_checked);
    chaos_point(s);
    uint64_t rev = atomic_load_explicit(&s->rev, memory_order_relaxed); /* our own */
    private_publish_ws(s);
    for (size_t i = 0; i < s->nranges; i++) {
        flag_new_range(s, s->ranges[i].a, s->ranges[i].b, 0);
        publish_run(s, s->ranges[i].a, s->ranges[i].b - s->ranges[i].a);
    }
    for (size_t i = 0; i < s->nrecycled; i++) {
        ((struct sync_hdr *)(s->base + s->recycled[i].off))->flags |= STM_WB;
        publish_run(s, s->recycled[i].off, s->recycled[i].size);
    }
    chaos_point(s);
    /* Give up ownership (I3) with our snapshot's revision, the commit's place in the
     * order (release: pairs with the next owner's acquire CAS; before privseq's release,
     * which a filler that closes the granule acquires first). */
    for (size_t i = 0; i < s->nws; i++)
        if (s->ws[i].saved != NOT_OWNED) {
            STM_ASSERT((atomic_load_explicit(wlock_slot(s->ws[i].off), memory_order_relaxed) &
                        0xffff) == (uint64_t)s->idx,
                       "I3: the committer owns every object it releases");
            atomic_store_explicit(wlock_slot(s->ws[i].off), rev << 16, memory_order_release);
        }
    private_close(s, v);
    /* A stale request of an inevitable transaction (as at the end of _stm_commit;
     * relaxed likewise). */
    if (s->nowned && SYNC_UNLIKELY(atomic_load_explicit(&s->abort_request, memory_order_relaxed)))
        atomic_store_explicit(&s->abort_request, 0, memory_order_relaxed);
    /* What we freed is unreachable in every snapshot that can see these granules (ours
     * from now on; a filler's reaches at least this commit, its floor): reusable at once
     * (I7), with no grace period. */
    for (size_t i = 0; i < s->nfrees; i++) {
        int cls = stm_size_class(s->frees[i].size);
        if (cls >= 0)
            ready_push(s, cls, s->frees[i].off);
    }
    tx_reset(s);
#ifdef STM_TEST_HOOKS
    /* relaxed: a count read after the threads are joined */
    atomic_fetch_add_explicit(&stm_test_private_commits, 1, memory_order_relaxed);
#endif
    return 1;
}

void stm_grow_backup(struct stm_seg *s, uint32_t size)
{
    STM_GROW(s->ws, s->nws, s->ws_cap);
    while (s->backup_len + size > s->backup_cap) {
        size_t c = s->backup_cap ? s->backup_cap * 2 : 4096;
        char *p = realloc(s->backup, c);
        if (!p)
            stm_out_of_resources("out of memory for %s", "write backups");
        s->backup = p;
        s->backup_cap = c;
    }
}

/* ------------------------------------------------------------ commit, in steps */

/*
 * _stm_commit's steps, in their order: prepare (a private commit, or the validation
 * outside the lock), claim, enter (the window or the lock), validate, the entry, early
 * copies, link, late copies, release and collection. Each is always inlined: the commit
 * of a thread alone runs most of them at every transaction, and a step is a name, not a
 * call.
 */

/* Ends the inevitability of the committing transaction, if it was inevitable. */
SYNC_INLINE void end_inevitability(struct stm_seg *s)
{
    if (s->inevitable) {
        /* release: pairs with the acquire in wait_inevitable_gone */
        atomic_store_explicit(&G.inevitable, 0, memory_order_release);
        s->inevitable = 0;
    }
}

/* Before the window: the new objects' last run, the private commit when it applies, and
 * most of the validation (outside the lock). Returns 1 when the commit is done (a
 * private one). */
/* Chaos at the start of a writing commit: a step, and an abort of one attempt in four
 * with unbacked writes, for their restore (restore_unbacked), which the barrier's chaos
 * aborts seldom reach. */
SYNC_INLINE void chaos_commit_point(struct stm_seg *s)
{
    chaos_point(s);
    if (G.chaos && s->nunbacked && !s->inevitable && (chaos_rand(s) & 3) == 0)
        stm_abort(SYNC_ABORT_OTHER, -1, s->ws[0].off);
}

SYNC_INLINE int commit_prepare(struct stm_seg *s)
{
    chaos_commit_point(s);
    if (s->bump != s->range_start)
        push_range(s, s->range_start, s->bump);
    /* With others entered, a transaction that touched only granules we alone hold
     * commits privately (commit_private): no entry, no shared line. Not when alone (the
     * window below is the same work), inevitable (its commit ends the inevitability
     * under the window's rules) or with eager pages (every segment holds every
     * granule). relaxed: a hint; a thread entering meanwhile holds none of our
     * granules. */
    if (atomic_load_explicit(&G.nactive, memory_order_relaxed) > 1 && !s->inevitable &&
        !G.eager && commit_private(s)) {
        TA_PHASE(TA_PUBLISH);
        return 1;
    }
    if (s->nunbacked)
        back_unbacked(s);
    /* acquire: pairs with the release store that linked the entry */
    if (atomic_load_explicit(&s->last->next, memory_order_acquire)) {
        TA_PHASE(TA_VALIDATE);
        stm_import_log(s, 1, 0); /* most of the validation, outside the lock */
    }
    TA_PHASE(TA_PUBLISH);
    return 0;
}

/* Flags every object the commit copies and, with others active, claims the new and
 * recycled ones and builds the entry. Returns whether it claimed. */
SYNC_INLINE int commit_claim(struct stm_seg *s)
{
    /* Every committed copy carries STM_WB: set it in our copy first (an abort restores
     * written objects from their backups, which have it too; new ones vanish). */
    for (size_t i = 0; i < s->nws; i++)
        ((struct sync_hdr *)(s->base + s->ws[i].off))->flags |= STM_WB;
    /* A log entry only matters to other active threads; build it before the window (or
     * the lock), which then covers only validation of the last entries and the link
     * (relaxed: re-checked in the window or under the lock, where nactive stands
     * still). With others active the commit also owns
     * its new and recycled objects from here to after its late copies (a claim), as it
     * owns the objects it wrote: another thread that imports the entry and writes one
     * of them waits for us, so its copy into segment 0 cannot come before ours. */
    int claim = atomic_load_explicit(&G.nactive, memory_order_relaxed) > 1;
    for (size_t i = 0; i < s->nranges; i++)
        flag_new_range(s, s->ranges[i].a, s->ranges[i].b, claim);
    for (size_t i = 0; i < s->nrecycled; i++) {
        struct recycled *r = &s->recycled[i];
        ((struct sync_hdr *)(s->base + r->off))->flags |= STM_WB;
        if (claim) {
            /* relaxed: as in flag_new_range; a recycled object is unreachable (I7) */
            r->saved = atomic_load_explicit(wlock_slot(r->off), memory_order_relaxed);
            STM_ASSERT((r->saved & 0xffff) == 0, "I3, I7: a reused object has no owner");
            atomic_store_explicit(wlock_slot(r->off), (uint64_t)s->idx, memory_order_relaxed);
        }
    }
    if (claim) {
        s->claimed = 1;
        s->building = stm_entry_build(s);
    }
    return claim;
}

/* Enters the window or takes the lock, whichever the commit needs, once no other
 * transaction is inevitable. */
SYNC_INLINE void commit_enter(struct stm_seg *s, int claim)
{
    /* The window (publish.c's head) serves a commit that will copy only what it
     * owns after its link, or that finds itself alone; the rest take the lock. In the
     * window nactive stands still (enters and exits take the lock), so `others` below is
     * exact: a commit that claimed nothing (it looked alone) but finds others entered
     * leaves for the lock. */
    int window = claim ? s->nowned == s->nws : 1;
    for (;;) {
        if (!window)
            stm_commit_lock();
        else {
            stm_window_enter(s);
            if (!claim && atomic_load_explicit(&G.nactive, memory_order_relaxed) > 1) {
                stm_window_leave(s);
                window = 0;
                continue;
            }
        }
        /* relaxed: set by the lock's holder, whose release of the lock we acquired (or
         * which waited for our window); cleared by the inevitable commit itself */
        int ie = atomic_load_explicit(&G.inevitable, memory_order_relaxed);
        if (ie == 0 || ie == s->idx)
            break;
        stm_commit_leave(s);
        wait_inevitable_gone(s);
    }
}

/* The rest of the validation, in the lock or the window. */
SYNC_INLINE void commit_validate(struct stm_seg *s)
{
    /* acquire: pairs with the release that linked the entry */
    if (atomic_load_explicit(&s->last->next, memory_order_acquire)) {
        TA_PHASE(TA_VALIDATE);
        stm_import_log(s, 1, 1);
        TA_PHASE(TA_PUBLISH);
    }
    STM_ASSERT(stm_in_commit(s), "I4: a commit links in the commit lock or window");
    STM_ASSERT(!s->holds_lock || !atomic_load_explicit(&s->last->next, memory_order_relaxed),
               "I5: under the lock, the committer has validated every entry (in a window, "
               "entries linked since are validated when the link's CAS fails)");
    STM_ASSERT(!s->holds_lock ||
                   (s->last == atomic_load_explicit(&G.log_tail, memory_order_relaxed) &&
                    s->last->rev == atomic_load_explicit(&G.rev, memory_order_relaxed)),
               "I4: under the lock, the tail is published: its rev is G.rev");
    STM_ASSERT(atomic_load_explicit(&s->rev, memory_order_relaxed) == s->last->rev,
               "I4: the committer is at its last imported entry");
    chaos_point(s);
}

/* The entry to link, or NULL for a thread alone, which writes segment 0 and nothing else:
 * a thread entering later starts from segment 0 (nactive changes only under the lock). */
SYNC_INLINE struct log_entry *commit_entry(struct stm_seg *s)
{
    int others = atomic_load_explicit(&G.nactive, memory_order_relaxed) > 1;
    struct log_entry *e = s->building;
    s->building = NULL;
    if (others && !e)
        e = stm_entry_build(s);          /* a thread entered since we looked (the lock) */
    else if (!others && e) {
        stm_entry_keep(s, e);
        e = NULL;
    }
    STM_ASSERT(!(s->in_window && e) || (s->claimed && s->nowned == s->nws),
               "I2, I3: a window links only a commit that owns all it copies late");
    return e;
}

/* Copies runs of the commit into segment 0 (publish_run): the written objects if `ws`,
 * the new and recycled ones if `fresh`. Early (before the link) the ones the commit does
 * not copy late, late (after it, `publishing` set) the others. */
SYNC_INLINE void copy_runs(struct stm_seg *s, int ws, int fresh)
{
    if (ws)
        for (size_t i = 0; i < s->nws; i++)
            publish_run(s, s->ws[i].off, s->ws[i].size);
    if (fresh) {
        for (size_t i = 0; i < s->nranges; i++)
            publish_run(s, s->ranges[i].a, s->ranges[i].b - s->ranges[i].a);
        for (size_t i = 0; i < s->nrecycled; i++)
            publish_run(s, s->recycled[i].off, s->recycled[i].size);
    }
}

/* The copies before the link (see below), and the unclaimed recycled objects' words. */
SYNC_INLINE void commit_early_copies(struct stm_seg *s, struct log_entry *e, int late_ws,
                                     int late_new, uint64_t rev)
{
    /* Objects that we own (I3: the written ones we took, the new and recycled ones we
     * claimed) are copied into segment 0 after the link: no other committer writes them
     * before we let go, importers read the entry, and fills and eager enters wait for
     * our `publishing` flag (wait_imported_copies in pages.c, wait_publishers). What we
     * do not own is copied here, before the link and under the lock: the objects of a
     * transaction begun alone (it took no ownership), and new and recycled objects of a
     * commit that found another thread entered only under the lock. A thread alone (in its window or under the lock;
     * nobody else is entered, and an enter waits for our window) copies everything
     * here. */
    copy_runs(s, !late_ws, !late_new);
    /* Unclaimed recycled objects get the new revision in their word before the link,
     * while nobody else can reach them (relaxed: published by the link's release). A
     * store after the link could overwrite the ownership of a thread that imported the
     * entry meanwhile and took the object. */
    if (e && !s->claimed)
        for (size_t i = 0; i < s->nrecycled; i++) {
            STM_ASSERT((atomic_load_explicit(wlock_slot(s->recycled[i].off), memory_order_relaxed) &
                        0xffff) == 0,
                       "I3, I7: a reused object has no owner");
            atomic_store_explicit(wlock_slot(s->recycled[i].off), (rev + 1) << 16,
                                  memory_order_relaxed);
        }
    chaos_point(s);
}

/* The entry our next commit will reuse: its first line was last written by the thread
 * that linked after it, the rest read by the importers. Ask for its lines now, for
 * writing, so that the transfers overlap our next transaction instead of stalling the
 * next commit's fence (stm_window_enter). A hint only. */
SYNC_INLINE void prefetch_next_entry(struct stm_seg *s, const struct log_entry *e)
{
    int cls = stm_entry_class(e->cap); /* the next commit is likely of its size */
    if (cls >= 0 && s->nfree_entries[cls]) {
        const char *p = (const char *)s->free_entries[cls][s->nfree_entries[cls] - 1];
        for (int l = 0; l < 4; l++)
            stm_prefetchw(p + 64 * l);
    }
}

/* Links entry e after the last one (rev: its revision), validating the entries that win
 * the race first. Returns the new revision, e's. */
SYNC_INLINE uint64_t commit_link(struct stm_seg *s, struct log_entry *e, uint64_t rev)
{
    STM_ASSERT(e->seg == s->idx, "I4: a commit links its own entry");
    /* Link at the tail by compare-and-swap (in the window another commit may link
     * first; under the lock nobody can). seq_cst on success: a release that
     * publishes the entry's contents (and, under the lock, segment 0's new bytes);
     * pairs with the acquire load of `next` in import_log. acquire on failure: we import the entry that
     * won, validating it (an abort if it wrote what we read), and try again. */
    s->building = e;                 /* an abort in the validation keeps it */
    for (;;) {
        e->rev = rev + 1;
        STM_TEST_HOOK(before_link);
        chaos_point(s);
        struct log_entry *none = NULL;
        if (atomic_compare_exchange_strong_explicit(&s->last->next, &none, e,
                                                    memory_order_seq_cst,
                                                    memory_order_acquire))
            break;
        STM_ASSERT(s->in_window, "I4: under the lock nobody else links");
        TA_PHASE(TA_VALIDATE);
        stm_import_log(s, 1, 1);
        TA_PHASE(TA_PUBLISH);
        rev = s->last->rev;
    }
    s->building = NULL;
    rev++;
    STM_ASSERT(e->rev == rev, "I4: a linked entry's rev is the previous + 1");
    s->last = e;
    STM_TEST_HOOK(linked_in_window);
    chaos_point(s);
    /* No publication here (the lazy publication, publish.c). release: pairs
     * with the acquire load in min_active_rev. */
    atomic_store_explicit(&s->rev, rev, memory_order_release);
    stm_own_push(s, e);
    /* release, in our window (or under the lock): pairs with the acquire load in
     * publish_under_lock, whose holder waited our window out */
    atomic_store_explicit(&s->newest, e, memory_order_release);
    prefetch_next_entry(s, e);
    return rev;
}

/* Ends the inevitability, leaves the window or the lock, and copies what we own after
 * the link, with `publishing` set. */
SYNC_INLINE void commit_late_copies(struct stm_seg *s, int late_ws, int late_new)
{
    end_inevitability(s);
    STM_ASSERT(!late_ws || s->nowned == s->nws, "I3: late copies only of owned objects");
    STM_ASSERT(!atomic_load_explicit(&s->publishing, memory_order_relaxed),
               "I2: publishing is 0 before the link's flag");
    int late = late_ws || late_new;
    if (late)
        /* relaxed: a lock's holder, or a filler (pages.c, wait_imported_copies), reads
         * it after acquiring our window's (or lock's) release that follows */
        atomic_store_explicit(&s->publishing, 1, memory_order_relaxed);
    stm_commit_leave(s);
    if (late) {
        STM_TEST_HOOK(after_link);
        chaos_point(s);
        copy_runs(s, late_ws, late_new);
        /* release: pairs with the acquire in wait_publishers */
        atomic_store_explicit(&s->publishing, 0, memory_order_release);
    }
}

/* Gives up what the commit owned, with its revision rev. */
SYNC_INLINE void commit_release(struct stm_seg *s, uint64_t rev)
{
    /* Give up the claimed new and recycled objects with the new revision, after their
     * copies (release: pairs with the next owner's acquire load and CAS). Claimed but
     * found alone at the link (the others left): copied before it, given up the same
     * way. */
    if (s->claimed) {
        STM_TEST_HOOK(before_release);
        for (size_t i = 0; i < s->nranges; i++)
            new_range_words(s, s->ranges[i].a, s->ranges[i].b, rev << 16, memory_order_release);
        for (size_t i = 0; i < s->nrecycled; i++) {
            STM_ASSERT((atomic_load_explicit(wlock_slot(s->recycled[i].off), memory_order_relaxed) &
                        0xffff) == (uint64_t)s->idx,
                       "I3: a claimed recycled object is owned by the committer");
            atomic_store_explicit(wlock_slot(s->recycled[i].off), rev << 16, memory_order_release);
        }
    }
    /* Give up ownership (I3) with the new revision; release: pairs with the next
     * owner's acquire CAS. */
    if (s->nowned || s->claimed) {
        if (!s->claimed)
            STM_TEST_HOOK(before_release);
        for (size_t i = 0; i < s->nws; i++)
            if (s->ws[i].saved != NOT_OWNED) {
                STM_ASSERT((atomic_load_explicit(wlock_slot(s->ws[i].off), memory_order_relaxed) &
                            0xffff) == (uint64_t)s->idx,
                           "I3: the committer owns every object it releases");
                atomic_store_explicit(wlock_slot(s->ws[i].off), rev << 16, memory_order_release);
            }
        /* An inevitable transaction that asked for one of these objects after we could
         * no longer abort is answered by the release above; a flag left set would abort
         * our next transaction for nothing. We own nothing now, so any request still
         * set is stale (relaxed: the requester waits for the objects' words, not for
         * the flag). The requester clears its request too when its wait ends (the
         * write slow path), which covers a request stored after this clear; this one
         * covers a requester slow to resume. */
        if (SYNC_UNLIKELY(atomic_load_explicit(&s->abort_request, memory_order_relaxed)))
            atomic_store_explicit(&s->abort_request, 0, memory_order_relaxed);
    }
    s->claimed = 0;
}

/* The frees wait out their grace period (limbo), the logs empty, and every
 * LOG_GC_EVERY linking commits the own entries are collected. */
SYNC_INLINE void commit_collect(struct stm_seg *s, const struct log_entry *e, uint64_t rev)
{
    for (size_t i = 0; i < s->nfrees; i++)
        push_limbo(s, s->frees[i].off, s->frees[i].size, rev);
    tx_reset(s);
    if (e && ++s->commits_since_gc >= LOG_GC_EVERY) {
        s->commits_since_gc = 0;
        stm_publish_if_behind(s);
        stm_gc_own_entries(s);
    }
}

/* A writing commit that is not private: validated and linked in the window or under the
 * lock, its copies before or after the link. */
SYNC_INLINE void commit_logged(struct stm_seg *s)
{
    commit_enter(s, commit_claim(s));
    commit_validate(s);
    struct log_entry *e = commit_entry(s);
    uint64_t rev = s->last->rev;
    int late_ws = e && s->nws && s->nowned == s->nws;
    int late_new = e && s->claimed;
    commit_early_copies(s, e, late_ws, late_new, rev);
    if (e)
        rev = commit_link(s, e, rev);
    commit_late_copies(s, late_ws, late_new);
    commit_release(s, rev);
    commit_collect(s, e, rev);
}

#ifdef STMBENCH_DEBUG
/* Only unbacked writes in the attempt's logs: what STM_DIRTY_UNBACKED alone says. */
static int only_unbacked(const struct stm_seg *s)
{
    return s->nws && s->nunbacked == s->nws && s->bump == s->range_start && !s->nranges &&
           !s->nrecycled && !s->nfrees && !s->inevitable;
}
#endif

/*
 * The commonest private commit, a slice of an interpreter over its own objects: every
 * write unbacked and nothing else done (stm_self.dirty is STM_DIRTY_UNBACKED: no backed
 * write, allocation, free or inevitability). It is commit_private without what such a
 * commit never has (new and recycled objects, owned objects to give up, frees) and
 * without its first look at the granules, which the write barrier took: the same Dekker
 * pair on privseq, the same copies, the same hooks. The same rules as commit_prepare's:
 * chaos aborts one attempt in four, and no private commit alone or with eager pages.
 * About 3-5% of a 100-bytecode slice of interp `counters` at 2 threads
 * (docs/stm-measured.md, "The short path"). Returns 0 (nothing done) where
 * commit_prepare must decide; in chaos mode commit_prepare then rolls its abort again
 * (a fallback attempt aborts 7 times in 16 instead of 4).
 */
SYNC_INLINE int commit_unbacked(struct stm_seg *s)
{
#ifdef STMBENCH_DEBUG
    STM_ASSERT(only_unbacked(s), "dirty is STM_DIRTY_UNBACKED: unbacked writes only");
#endif
    STM_ASSERT(s->nowned == 0 && !s->claimed, "I3: unbacked writes own nothing");
    /* relaxed: a hint, as in commit_prepare */
    if (atomic_load_explicit(&G.nactive, memory_order_relaxed) <= 1 || G.eager)
        return 0;
    chaos_commit_point(s);
    uint64_t v = private_open(s);
    if (!ws_private(s, memory_order_seq_cst)) {
        private_close(s, v); /* nothing was copied: commit_prepare decides */
#ifdef STM_TEST_HOOKS
        /* relaxed: a count read after the threads are joined */
        atomic_fetch_add_explicit(&stm_test_unbacked_fallbacks, 1, memory_order_relaxed);
#endif
        return 0;
    }
    STM_TEST_HOOK(private_checked);
    chaos_point(s);
    private_publish_ws(s);
    chaos_point(s);
    private_close(s, v);
    tx_reset(s);
#ifdef STM_TEST_HOOKS
    /* relaxed: counts read after the threads are joined */
    atomic_fetch_add_explicit(&stm_test_private_commits, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&stm_test_unbacked_commits, 1, memory_order_relaxed);
#endif
    TA_PHASE(TA_PUBLISH);
    return 1;
}

void _stm_commit(void)
{
    struct stm_seg *s = stm_me;
    SYNC_COMPILER_BARRIER();
    int timed = (++s->commit_counter & (SYNC_COMMIT_SAMPLE - 1)) == 0;
    uint64_t t0 = timed ? ticks() : 0;    /* the TSC: cheaper than clock_gettime */
    STM_ASSERT(stm_self.depth == 1, "commit: the outermost block ends");
    STM_ASSERT(!stm_in_commit(s), "commit: starts outside the commit lock and window");
    STM_ASSERT(!atomic_load_explicit(&s->publishing, memory_order_relaxed),
               "I2: publishing is 0 when a commit starts");
    STM_ASSERT(!s->inevitable ||
                   atomic_load_explicit(&G.inevitable, memory_order_relaxed) == s->idx,
               "I6: an inevitable transaction is G.inevitable");

    if (!stm_self.dirty)
        /* Read-only: it read one consistent snapshot (I1), so it serialises at
         * s->rev without validation. */
        end_inevitability(s);
    else if (!(stm_self.dirty == STM_DIRTY_UNBACKED && commit_unbacked(s)) &&
             !commit_prepare(s))
        commit_logged(s);

    STM_ASSERT(!s->inevitable &&
                   atomic_load_explicit(&G.inevitable, memory_order_relaxed) != s->idx,
               "I6: a commit ends inevitability");
    STM_ASSERT(!stm_in_commit(s) && !atomic_load_explicit(&s->publishing, memory_order_relaxed),
               "a commit ends without the lock and with its copies done");
    stm_self.aborts_in_row = 0;
    s->stats.commits++;
    stm_self.depth = 0;
    TA_TX_END();
    if (timed)
        lat_add(&s->stats.commit_hist, (uint64_t)((double)(ticks() - t0) * G.ns_per_tick));
    SYNC_COMPILER_BARRIER();
}
