/*
 * runtime/stm/stm_internal.h - the STM's data structures, shared helpers and the
 * declarations its files call across (private to the .c files of runtime/stm and the STM's tests;
 * workloads include only runtime/stm/sync_stm.h). Field comments say who may touch
 * what; the protocol, with its reasoning and cost model, is in DESIGN.md.
 *
 * The files (after PyPy's stmgc runtime):
 *   setjmp.c  stm_setjmp / stm_longjmp, the atomic block's restart point
 *   pages.c   lazy pages: granule fills, the SIGSEGV handler (I1, I2)
 *   log.c     the commit log: import and validation, entries, their reclamation (I4, I5)
 *   alloc.c   allocation and freeing, memory reuse (I7)
 *   publish.c the commit lock, the commit windows (their inline entry and exit:
 *             publish.h) and the lazy publication of the log's tail (I2, I4)
 *   commit.c  begin, commit, abort, the write barrier's slow path, inevitability, the
 *             read markers' wrap (I2, I3, I5, I6)
 *   setup.c   init, fini, thread enter and exit, the runtime descriptor, fatal errors
 *   debug.c   introspection for the tests
 *
 * Memory. One reservation holds nseg+1 segments of SEG bytes each. A segment is a
 * read-marker area (RM bytes, private anonymous memory, one 16-bit marker per 16 heap
 * bytes, at %gs:2*(offset >> 4)) followed by the heap (HEAP bytes) backed by a memfd.
 * Segment 0's heap is the committed state (file range 0). Segment s >= 1 belongs to
 * thread tid s-1, maps its own file range, and its %gs base is the segment's start, so
 * a reference (an offset) reaches the thread's own copy. Each 64 KiB granule of a
 * segment's heap is either
 *   G_NONE  inaccessible (PROT_NONE): not used since the thread entered; stale bytes, or
 *   G_OWN   read-write, the segment's copy, up to date at its revision.
 * (G_FILL is G_NONE becoming G_OWN: copied outside the commit lock, made exact under
 * it.) A commit validates and links in a window that other commits share (its
 * segment's `committing` flag); the commit lock excludes the windows (its holder waits
 * until no flag is up) and is taken only by fills (for their undo), enters, exits,
 * becoming inevitable and commits of unowned objects. Under valgrind or with
 * STM_PAGES=eager every granule is G_OWN from entering.
 *
 * Invariants (each file's head says which it maintains):
 *  I1 (own hand) A thread's view of the heap changes only by its own actions: its
 *     writes, its imports of the commit log, and the filling of a G_NONE granule on its
 *     first access, which shows exactly its revision. So a transaction reads one
 *     consistent snapshot (revision me->rev): opacity, with no fence in the read barrier.
 *  I2 (granules) Only the owning thread changes its segment, its granule states and its
 *     counters. A G_OWN granule of s holds segment 0's bytes as of s->rev plus s's own
 *     uncommitted writes: imports copy an entry's runs into G_OWN granules and skip
 *     G_NONE ones. Filling a granule waits (without the lock) until every copy into
 *     segment 0 of an entry <= s->rev has ended, copies segment 0 (without the lock,
 *     while later entries may be copied in) and then, under commit_lock (which waits
 *     out the commit windows, so the log tail stands still), undoes, newest first,
 *     every entry after s->rev with the old bytes the entry carries. Committers touch
 *     segment 0 and nothing of any other segment. A committer copies the objects it
 *     owns (written or claimed) into segment 0 after leaving its window (or the lock),
 *     with its `publishing` flag set from before it leaves until the copies are done;
 *     an eager enter waits, under the lock, until no flag is set, so it copies
 *     segment 0 exactly at G.rev.
 *  I3 (ownership) At most one transaction owns an object for writing: wlocks[o>>4]
 *     holds owner (segment index, 0 = none) | rev << 16, where rev is the revision of
 *     the last commit that wrote the object. A writer acquires ownership with a CAS
 *     and keeps it until its commit published the object, or its abort restored it.
 *     A commit with others entered also owns its new and recycled objects (a claim,
 *     stored before the link, when nobody else can reach them) until it has copied
 *     them into segment 0 after its link; an abort gives the claim back.
 *     A thread alone (nactive == 1) takes no ownership and appends no log entry:
 *     ownership only detects conflicts early, serialisability rests on I5. Nor does
 *     a write, with others entered, to a granule its segment alone holds (an unbacked
 *     write, commit.c): a commit that is not private takes that ownership late, before
 *     its entry or window (back_unbacked), and an abort restores the object from
 *     segment 0 (or refills its granule, if taken since: restore_unbacked).
 *  I4 (log) Entries are appended in revision order, by CAS on the tail's `next` (in a
 *     window or under commit_lock). Commits do not publish (the lazy publication): the
 *     published tail (G.log_tail) and G.rev (its rev) move only under commit_lock, once
 *     no window is open, to the newest of the entered segments' newest linked entries
 *     (publish.c, publish_under_lock), so a holder of the lock sees the last entry as
 *     the tail; a committer more than PUBLISH_LAG past G.rev takes a free lock for it.
 *     A segment's newest linked entry is never freed (its collection keeps it). A thread at
 *     revision r has imported exactly the entries <= r. An entry is freed only when
 *     every active thread's rev is past it (the entry equal to the minimum is kept,
 *     for its `next`).
 *  I5 (validation) A commit, and becoming inevitable, import every entry after
 *     me->rev first; an entry that wrote an object whose read marker holds the
 *     running read version aborts the transaction (read-write conflict). A write
 *     implies a read, so a written object is always validated.
 *  I6 (inevitable) At most one inevitable transaction; while it runs no other
 *     transaction commits (they wait at commit, abortable), so it never needs to abort.
 *     It takes ownership from others by asking them to abort (abort_request).
 *  I7 (memory reuse) An object freed by a commit at revision R is reused only once
 *     every active thread's rev >= R: no running transaction can still reach it.
 *     A ready list (and the depot, which any segment takes from) holds only objects
 *     past that point, or freed by a private commit (reachable by nobody outside the
 *     granule's holder, and a filler's snapshot includes the free): reusable by any
 *     thread.
 *  Private commits (DESIGN.md, "Private commits"): a commit that wrote, allocated and
 *     freed only in granules its segment alone holds (G.gshare, GS_PRIV) links no
 *     entry (I4), validates nothing (it serialises at its snapshot, as a read-only one
 *     does: I5), copies into segment 0 with its `privseq` odd, and frees for reuse at
 *     once (I7). Another segment's first fill of such a granule closes it (waits out
 *     that commit: a Dekker pair on privseq and the granule's word) and first brings
 *     its own snapshot to the holder's rev, the granule's floor (I1).
 */
#ifndef STM_INTERNAL_H
#define STM_INTERNAL_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <x86intrin.h>

#include "runtime/common.h"
#include "runtime/stm/sync_stm.h"

#define PAGE 4096ul
#define CHUNK (64 * 1024ul)           /* bump-allocation chunk per thread */
#define NOT_OWNED UINT64_MAX          /* ws_entry.saved: ownership was not taken */
#define NO_BACKUP SIZE_MAX            /* ws_entry.backup_at: an unbacked write */
/* Lazy pages: a segment's heap is brought in by granules (pages.c). */
#define GRANULE CHUNK
#define GRANULE_PAGES (GRANULE / PAGE)
enum { G_NONE = 0, G_OWN = 1, G_FILL = 2 /* being filled (pages.c) */ };

/*
 * Who holds a granule (G.gshare[g], one word per granule, for every segment at once;
 * DESIGN.md, "Private commits"): the kind in the low 2 bits, a segment in the next 16,
 * and, for GS_SHARED, the floor: a revision every filler's snapshot must reach first.
 *   GS_FREE     nobody holds it yet (a chunk taken from the heap cursor, not yet marked)
 *   GS_PRIV     only segment `seg` holds it (it took the chunk fresh, or filled it first):
 *               its commits that touch nothing else append no log entry
 *   GS_CLOSING  another segment is taking it from `seg` (waits out seg's private commit)
 *   GS_SHARED   two segments hold or held it; floor = seg's rev once it was closed
 * Moves only FREE -> PRIV (the allocating thread), FREE -> SHARED (a fill-all that
 * overtook the allocator), PRIV -> CLOSING -> SHARED (the first other filler), each by
 * compare-and-swap (seq_cst), and never back.
 */
enum { GS_FREE = 0, GS_PRIV = 1, GS_CLOSING = 2, GS_SHARED = 3 };
#define GS_KIND(w) ((int)((w) & 3))
#define GS_SEG(w) ((int)(((w) >> 2) & 0xffff))
#define GS_FLOOR(w) ((w) >> 18)
static inline uint64_t gs_word(int kind, int seg, uint64_t floor)
{
    return (uint64_t)kind | (uint64_t)seg << 2 | floor << 18;
}

/*
 * STM_ASSERT(cond, what): a check of the protocol's invariants (I1..I7 above) where
 * they must hold, compiled in only by MODE=debug (the Makefile defines STMBENCH_DEBUG
 * there). A failure prints what broke, the condition and file:line, then aborts. No
 * condition has a side effect: the release build does not evaluate it (sizeof keeps
 * its variables used).
 */
#ifdef STMBENCH_DEBUG
void stm_assert_failed(const char *what, const char *cond, const char *file, int line)
    __attribute__((noreturn, cold));
#define STM_ASSERT(cond, what)                                                     \
    do {                                                                           \
        if (!(cond))                                                               \
            stm_assert_failed((what), #cond, __FILE__, __LINE__);                  \
    } while (0)
#else
#define STM_ASSERT(cond, what) ((void)sizeof((cond) ? 1 : 0))
#endif

/* One run of bytes a commit published: [off, off+len) of the heap. The entry's data area
 * holds every run's new bytes, in run order (`new_bytes` in all), then the old bytes of
 * the written objects' runs (validate = 1), in the same order: a segment that brings a
 * granule up to date at an older revision undoes this commit with them (the fault
 * path); importers read only the new bytes. */
struct log_run {
    uintptr_t off;
    uint32_t len;
    uint32_t validate;     /* nonzero: a written object (importers check their read
                            * marker); then 1 | where << 1, the committer's location at
                            * its first write of it (sync_where_of: a read-write
                            * conflict names the writer's line, conflict analysis) */
};

/* A commit log entry; immutable once linked, except `next`. */
struct log_entry {
    _Atomic(struct log_entry *) next;
    uint64_t rev;
    int seg;               /* the committer's segment */
    const char *site;      /* the committer's block label (conflict analysis) */
    uint32_t nruns;
    size_t new_bytes;      /* the runs' new bytes; the old ones follow */
    size_t cap;            /* bytes allocated for the entry */
    struct log_run runs[]; /* followed by the runs' bytes, in order */
};

/* Small log entries come in STM_ENTRY_CLASSES sizes, STM_ENTRY_MIN << c bytes (256, 512,
 * 1024: bank's transfer needs about 180, rbtree's commits about 400); bigger ones are
 * allocated at their size and freed when collected. A thread keeps at most
 * STM_ENTRY_KEEP freed entries of each class for reuse and frees the rest, so what a
 * burst of outstanding entries took (a thread off its core holds back the collection
 * of everybody's entries) goes back to the allocator (log.c). */
#define STM_ENTRY_CLASSES 3
#define STM_ENTRY_MIN 256
#define STM_ENTRY_KEEP 1024
/* The class of an entry of capacity cap; -1 for a big one. */
static inline int stm_entry_class(size_t cap)
{
    for (int c = 0; c < STM_ENTRY_CLASSES; c++)
        if (cap == (size_t)STM_ENTRY_MIN << c)
            return c;
    return -1;
}

/* The class an entry of `need` bytes is built in; -1: too big for any, built at its size. */
static inline int stm_entry_class_for(size_t need)
{
    for (int c = 0; c < STM_ENTRY_CLASSES; c++)
        if (need <= (size_t)STM_ENTRY_MIN << c)
            return c;
    return -1;
}

/* The committer's record of one of its published entries (its own ring, log.c): the
 * garbage collection of its entries reads these, not the entries, whose first line the
 * next linker has written (a cache miss per entry when the list ran through them). */
struct own_entry {
    struct log_entry *e;
    uint64_t rev;
    int cls;               /* its size class (stm_entry_class); -1: freed, never kept */
};

struct ws_entry {          /* an object written by the running transaction */
    uintptr_t off;
    uint32_t size;
    uint32_t where;        /* our location at the first write (at the commit, for an
                            * unbacked write backed late: commit.c, back_unbacked); set
                            * only where saved != NOT_OWNED (read only there: ws_where) */
    uint64_t saved;        /* its ownership word before we took it */
    size_t backup_at;      /* where its old bytes are in `backup`; NO_BACKUP: none (a
                            * write to a granule we alone hold: its old bytes are
                            * segment 0's, commit.c, "unbacked writes") */
};
struct range { uintptr_t a, b; };
struct chunk { uintptr_t off, size; };
struct recycled { uintptr_t off; uint32_t size; int cls; uint64_t saved; /* its word before a claim */ };
struct freed { uintptr_t off; uint32_t size; };
struct limbo_entry { uintptr_t off; uint64_t rev; int cls; };
struct freelist { uintptr_t *v; size_t n, cap; };

/* Freed objects are reused by size class: 16-byte steps up to 512 bytes. */
#define STM_NCLASSES 33
static inline int stm_size_class(size_t rounded)
{
    return rounded / 16 < STM_NCLASSES ? (int)(rounded / 16) : -1;
}

/* Per segment (= per thread slot). Only the owning thread touches the private part;
 * the shared part is read by others as noted. */
struct stm_seg {
    /* shared */
    _Atomic uint64_t rev;        /* snapshot revision; read by min_active_rev (acquire) */
    _Atomic int abort_request;   /* set by an inevitable transaction wanting our object */
    /* The object the inevitable transaction wants and its location there, stored
     * (relaxed) before the request's release store: the conflict log's other side. */
    _Atomic uint64_t abort_obj;
    _Atomic uint32_t abort_where;
    _Atomic int active;          /* a thread is entered; written under the commit lock */
    _Atomic int publishing;      /* 1 from the link of our entry (in the commit window or
                                  * under the lock) until our owned objects are copied
                                  * into segment 0 (after it) */
    _Atomic int committing;      /* 1 while our commit is in its window (a shared
                                  * critical section: the commit lock's holder waits
                                  * until no segment has it; seq_cst, publish.c) */
    _Atomic(struct log_entry *) newest; /* our newest linked entry (never freed) */
    _Atomic(const char *) wsite; /* the site of our transaction when it last took an
                                  * object's ownership (relaxed; read by a writer that
                                  * conflicts with it: conflict analysis, the other side) */
    _Atomic uint64_t privseq;    /* odd while our private commit copies into segment 0,
                                  * or an abort copies its unbacked writes back from it
                                  * (commit.c, commit_private): a filler taking one of our
                                  * granules waits for it to change (pages.c) */
    int idx;                     /* segment number, >= 1 for threads */
    /* private */
    char *base;                  /* seg_addr(idx, 0), kept for the hot paths */
    struct log_entry *last;      /* last imported entry (its rev == rev, except in a
                                  * commit between its link and its publication, where
                                  * rev is still the predecessor's: commit.c) */
    const char *site;
    /* The other side of the conflict about to be recorded (set just before stm_abort,
     * consumed by it): its location and block label (conflict analysis). */
    uint32_t conf_other_where;
    const char *conf_other_site;
    uint32_t conf_self_where;    /* our own side, when better known than sync_where_of */
    uint64_t attempt_ticks;
    uint64_t commit_counter;
    int marked;                  /* a transaction marked its reads since the markers were
                                  * last cleared (commit.c, forget_marks) */
    int inevitable;
    struct log_entry *building;  /* the entry of the commit in progress */
    int claimed;                 /* the commit in progress owns its new and recycled
                                  * objects (their words name us): set before the
                                  * window or lock,
                                  * undone by an abort, given up after the late copies */
    struct own_entry *own; size_t own_head, nown, own_cap; /* our published entries:
                                  * a ring, oldest at own_head */
    struct log_entry **free_entries[STM_ENTRY_CLASSES]; /* our small entries, free for */
    size_t nfree_entries[STM_ENTRY_CLASSES];             /* reuse: a stack per size class */
    size_t free_entries_cap[STM_ENTRY_CLASSES];
    int commits_since_gc;
    struct ws_entry *ws; size_t nws, ws_cap;
    size_t nowned;               /* how many of ws took ownership (0 when alone) */
    size_t nunbacked;            /* how many of ws are unbacked (NO_BACKUP) */
    int backup_shuffled;         /* `backup` is not in ws order (a late backup) */
    char *backup; size_t backup_len, backup_cap;
    uintptr_t bump, bump_end, chunk_start, range_start;
    uintptr_t tx_bump, tx_bump_end, tx_chunk_start; /* the allocator at the attempt's start */
    struct chunk *tx_chunks; size_t ntx_chunks, tx_chunks_cap; /* opened by this attempt */
    struct chunk *spares; size_t nspares, spares_cap; /* opened by aborted attempts: reused first */
    uint8_t *gstate;             /* [granule]: G_NONE / G_OWN; only this thread touches it */
    size_t nprotect;             /* mprotect calls since the last fill-all (mapping budget) */
    size_t nfills;               /* fills since the last fill-all */
    int holds_lock;              /* this thread holds commit_lock (a fault then is a bug) */
    int in_window;               /* this thread's commit is in its window (likewise) */
    struct range *ranges; size_t nranges, ranges_cap;
    struct recycled *recycled; size_t nrecycled, recycled_cap;
    struct freed *frees; size_t nfrees, frees_cap;
    struct limbo_entry *limbo; size_t nlimbo, limbo_head, limbo_cap;
    struct freelist ready[STM_NCLASSES];
    uint64_t depot_spills, depot_takes;  /* D1 (alloc.c): moves to and from the depot */
    uint64_t chaos_rng;
    struct sync_stats stats;
} SYNC_CL_ALIGNED;

struct stm_global {
    int initialised;
    int nseg;                    /* thread segments; segment 0 is the committed state */
    int fd;                      /* the memfd backing every heap page */
    int use_wrgsbase;
    int eager;                   /* every granule G_OWN from entering (STM_PAGES=eager) */
    char *base;                  /* the reservation: nseg+1 segments */
    size_t reserved, seg_size, rm_size, heap_size;
    size_t ngranules;            /* heap granules (GRANULE bytes each) */
    size_t map_budget;           /* mprotect calls a segment may make before it makes its
                                  * whole used heap accessible at once (mapping bound) */
    _Atomic uint64_t *wlocks;    /* [heap offset / 16]: owner | rev << 16 */
    /* [heap offset / 16]: who last took the object's ownership, for conflict analysis:
     * segment | where << 16 (sync_where_of at that first write). Written (relaxed) by
     * the new owner right after its CAS, read (relaxed) by a writer that finds the
     * object owned or newer than its snapshot; a hint that may name a later owner. */
    _Atomic uint64_t *wwhere;
    _Atomic uint64_t *gshare;    /* [granule]: who holds it (GS_*, above) */
    /* Read on every begin, write and commit, changed only when a thread enters or
     * leaves: kept off the lines commits write, so reading it costs no cache miss after
     * another thread's commit. */
    _Atomic int nactive;         /* entered threads; changed under the lock */
    /* Read by every commit's window, written only by the rare lock holders (and
     * G.inevitable by the inevitable commit): off the line every commit writes. */
    _Atomic int lock SYNC_CL_ALIGNED; /* the commit lock (spinlock) */
    _Atomic int inevitable;      /* segment of the inevitable transaction, 0 = none */
    /* The publication line: moved forward only by a holder of the lock (the lazy
     * publication, publish.c: publish_under_lock), read by the collection. */
    _Atomic uint64_t rev SYNC_CL_ALIGNED; /* the published tail's rev */
    /* The published tail: exact for a holder of the lock, which waits out every commit
     * window and then publishes; behind the last entry otherwise, by at most about
     * PUBLISH_LAG plus a collection period; never freed (its rev is G.rev). */
    _Atomic(struct log_entry *) log_tail;
    struct log_entry *log_first; /* the sentinel entry (rev 0); freed at fini */
    _Atomic uint64_t min_rev SYNC_CL_ALIGNED; /* all active threads are at least here (I7) */
    _Atomic uintptr_t heap_cursor SYNC_CL_ALIGNED;
    /* The depot (alloc.c): ready objects handed between segments, so that the thread that
     * frees (a collector, a consumer) does not hoard what the thread that allocates then
     * takes from fresh heap. On a line of its own: written only by spills and takes. */
    struct stm_depot {
        _Atomic int lock;                       /* a spinlock over cls[] */
        _Atomic uint32_t n[STM_NCLASSES];       /* cls[c].n, read without the lock */
        struct freelist cls[STM_NCLASSES];
    } depot SYNC_CL_ALIGNED;
    struct stm_seg *segs;        /* [0..nseg] */
    uint64_t chaos;              /* STM_CHAOS seed, 0 = off */
    uint64_t t0_ns;
    double ns_per_tick;
};
/* The runtime's globals, defined in setup.c. The executable holds them (the runtime is a
 * static archive), so the runtime's files reach them directly: hidden visibility (no
 * GOT load for G) and the local-exec TLS model (one %fs access, no offset load), as
 * when they were defined in the same file as their users. */
extern struct stm_global G __attribute__((visibility("hidden")));
extern __thread struct stm_tls stm_self __attribute__((tls_model("local-exec")));

/* Running out of memory (or mappings, or heap): exit 3 with the reason, leaving every
 * results file untouched, like any runtime that cannot go on (setup.c). */
void stm_out_of_resources(const char *fmt, const char *arg) __attribute__((noreturn));
#define out_of_resources stm_out_of_resources

/* Growable arrays; running out of memory ends the run (a transaction cannot continue). */
#define STM_GROW(ptr, n, cap)                                                    \
    do {                                                                         \
        if ((n) == (cap)) {                                                      \
            size_t c_ = (cap) ? (cap) * 2 : 64;                                  \
            void *p_ = realloc((ptr), c_ * sizeof *(ptr));                       \
            if (!p_)                                                             \
                stm_out_of_resources("out of memory for %s", "transaction logs"); \
            (ptr) = p_;                                                          \
            (cap) = c_;                                                          \
        }                                                                        \
    } while (0)

static inline void freelist_push(struct freelist *f, uintptr_t off)
{
    STM_GROW(f->v, f->n, f->cap);
    f->v[f->n++] = off;
}
static inline uintptr_t freelist_pop(struct freelist *f)
{
    return f->v[--f->n];
}
static inline void push_range(struct stm_seg *s, uintptr_t a, uintptr_t b)
{
    STM_GROW(s->ranges, s->nranges, s->ranges_cap);
    s->ranges[s->nranges++] = (struct range){a, b};
}
static inline void push_recycled(struct stm_seg *s, uintptr_t off, uint32_t size, int cls)
{
    STM_GROW(s->recycled, s->nrecycled, s->recycled_cap);
    s->recycled[s->nrecycled++] = (struct recycled){off, size, cls, 0};
}
static inline void push_free(struct stm_seg *s, uintptr_t off, uint32_t size)
{
    STM_GROW(s->frees, s->nfrees, s->frees_cap);
    s->frees[s->nfrees++] = (struct freed){off, size};
}
static inline void push_limbo(struct stm_seg *s, uintptr_t off, uint32_t size, uint64_t rev)
{
    int cls = stm_size_class(size);
    if (cls < 0)
        return; /* large objects are not reused */
    STM_GROW(s->limbo, s->nlimbo, s->limbo_cap);
    s->limbo[s->nlimbo++] = (struct limbo_entry){off, rev, cls};
}
/* Makes room for one more write-set entry and `size` more backup bytes (commit.c). */
void stm_grow_backup(struct stm_seg *s, uint32_t size) __attribute__((cold, noinline));
/* alloc.c, D1: moves the oldest of s->ready[cls] to the depot (the list is long) */
void stm_depot_spill(struct stm_seg *s, int cls) __attribute__((cold, noinline));
/* A ready list this long spills (alloc.c, D1); the test builds spill early, so that
 * the stress tests' few hundred objects per thread go through the depot. */
#ifdef STM_TEST_HOOKS
#define STM_DEPOT_HIGH 64
#else
#define STM_DEPOT_HIGH 4096
#endif
/* The location recorded with a write-set entry, 0 where none was (not taken). */
static inline uint32_t ws_where(const struct ws_entry *e)
{
    return e->saved != NOT_OWNED ? e->where : 0;
}

/* Makes off (of size class cls) ready for reuse; a list that reaches STM_DEPOT_HIGH
 * spills to the depot (D1). */
static inline void ready_push(struct stm_seg *s, int cls, uintptr_t off)
{
    freelist_push(&s->ready[cls], off);
    if (SYNC_UNLIKELY(s->ready[cls].n >= STM_DEPOT_HIGH))
        stm_depot_spill(s, cls);
}

/* The entry's `where` is left unset: only an entry whose object we took from others'
 * reach (saved != NOT_OWNED) has one, filled in out of line (commit.c, record_taker),
 * and only such entries' `where` is read. The path of a thread alone stays as short as
 * without conflict analysis. */
static inline void push_backup(struct stm_seg *s, uintptr_t off, uint32_t size, uint64_t saved)
{
    if (SYNC_UNLIKELY(s->nws == s->ws_cap || s->backup_len + size > s->backup_cap))
        stm_grow_backup(s, size);
    const char *src = s->base + off;
    char *dst = s->backup + s->backup_len;
    if (size <= 32 && size % 8 == 0)
        for (uint32_t i = 0; i < size; i += 8)
            __builtin_memcpy(dst + i, src + i, 8);
    else
        memcpy(dst, src, size);
    struct ws_entry *e = &s->ws[s->nws++];
    e->off = off;
    e->size = size;
    e->saved = saved;
    e->backup_at = s->backup_len;
    s->backup_len += size;
}

/* A write to an object in granules we alone hold, with others entered (commit.c,
 * "unbacked writes"): no ownership, no backup; its old bytes are segment 0's. */
static inline void push_unbacked(struct stm_seg *s, uintptr_t off, uint32_t size)
{
    if (SYNC_UNLIKELY(s->nws == s->ws_cap))
        stm_grow_backup(s, 0);
    struct ws_entry *e = &s->ws[s->nws++];
    e->off = off;
    e->size = size;
    e->saved = NOT_OWNED;
    e->backup_at = NO_BACKUP;
    s->nunbacked++;
}

static inline void push_chunk(struct chunk **v, size_t *n, size_t *cap, uintptr_t off, uintptr_t size)
{
    STM_GROW(*v, *n, *cap);
    (*v)[(*n)++] = (struct chunk){off, size};
}

/* ---- across the files (the function comments are at their definitions) */

/* the running thread's segment (setup.c; hidden, local-exec: see G above) */
extern __thread struct stm_seg *stm_me __attribute__((tls_model("local-exec"), visibility("hidden")));

/* publish.c (stm_commit_leave, which log.c also calls, is inline: publish.h) */
void stm_commit_lock(void);
void stm_commit_unlock(void);
void stm_wait_publishers(void);
/* commit.c */
void stm_chaos_step(struct stm_seg *s);
void stm_abort(enum sync_abort_kind kind, int other, uintptr_t obj) __attribute__((noreturn));
/* log.c */
void stm_import_log(struct stm_seg *s, int validate, int unlock_on_abort);
void stm_entry_keep(struct stm_seg *s, struct log_entry *e);
void stm_own_push(struct stm_seg *s, struct log_entry *e);
/* The lazy publication (publish.c): a committer more than PUBLISH_LAG revisions past
 * G.rev publishes the tail under the lock if the lock is free. */
#define PUBLISH_LAG 64u
void stm_publish_if_behind(struct stm_seg *s);
void stm_own_free_below(struct stm_seg *s, uint64_t min);
#define STM_ENTRY_SMALL (STM_ENTRY_MIN << (STM_ENTRY_CLASSES - 1)) /* 1024 */
/* Asks for the line of p for writing (prefetchw: on AMD since K6, on Intel since
 * Broadwell; a no-op on older Intel cores). A hint: it changes no value. Used for lines a
 * commit will write that another core wrote last, so that their transfers overlap the
 * transaction instead of stalling the commit (a cross-core transfer is one of the
 * dearest things a commit does: `stmbench --line-transfer` measures it, docs/harness.md;
 * the figures of the VMs here are in docs/figures.md). */
static inline void stm_prefetchw(const void *p)
{
    __asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
}

/* The oldest and the newest entry of a segment's ring (NULL when empty): for tests. */
static inline struct log_entry *stm_test_own_oldest(const struct stm_seg *s)
{
    return s->nown ? s->own[s->own_head].e : NULL;
}
static inline struct log_entry *stm_test_own_newest(const struct stm_seg *s)
{
    return s->nown ? s->own[(s->own_head + s->nown - 1) % s->own_cap].e : NULL;
}
void stm_gc_own_entries(struct stm_seg *s);
struct log_entry *stm_entry_build(struct stm_seg *s);
/* pages.c */
void stm_materialize(struct stm_seg *s, size_t g0, size_t g1, int fresh);
void stm_refill_granules(struct stm_seg *s, size_t g0, size_t g1);
void stm_install_segv_handler(void);
/* setup.c */
void stm_fatal(const char *fmt, const char *arg) __attribute__((noreturn));

/* ---- hot helpers, inline in every file as they were in one */

static inline char *seg_addr(int s, uintptr_t off)
{
    return G.base + (size_t)s * G.seg_size + off;
}

static inline off_t file_off(int s, size_t page)
{
    return (off_t)((size_t)s * G.heap_size + page * PAGE);
}

static inline _Atomic uint64_t *wlock_slot(uintptr_t off)
{
    return &G.wlocks[(off - G.rm_size) >> 4];
}
static inline _Atomic uint64_t *wwhere_slot(uintptr_t off)
{
    return &G.wwhere[(off - G.rm_size) >> 4];
}

/* Cheap timestamps for wasted-time accounting: the TSC, converted at abort time. */
static inline uint64_t ticks(void)
{
    return __rdtsc();
}

/* Copies small objects word by word (most are a few words), big ones with memcpy. */
static inline void copy_bytes(void *dst, const void *src, size_t n)
{
    if (n <= 64) {
        char *d = dst;
        const char *sr = src;
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            uint64_t w;
            __builtin_memcpy(&w, sr + i, 8);
            __builtin_memcpy(d + i, &w, 8);
        }
        for (; i < n; i++)
            d[i] = sr[i];
    } else {
        memcpy(dst, src, n);
    }
}

/* Chaos mode (STM_CHAOS=seed): at protocol steps, maybe yield, spin or sleep
 * (stm_chaos_step), so two cores see many interleavings. */
static inline uint64_t chaos_rand(struct stm_seg *s)
{
    uint64_t x = s->chaos_rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s->chaos_rng = x;
    return x;
}

static inline void chaos_point(struct stm_seg *s)
{
    if (SYNC_UNLIKELY(G.chaos))
        stm_chaos_step(s);
}

static inline size_t granule_of(uintptr_t off)
{
    return (off - G.rm_size) / GRANULE;
}
static inline uintptr_t granule_off(size_t g)
{
    return G.rm_size + g * GRANULE;
}
/* The next run of s's granules in `state` within [g, g1): returns its first granule (g1
 * if there is none) and sets *end past its last. */
static inline size_t granule_run(const struct stm_seg *s, size_t g, size_t g1, uint8_t state,
                                 size_t *end)
{
    while (g < g1 && s->gstate[g] != state)
        g++;
    size_t e = g;
    while (e < g1 && s->gstate[e] == state)
        e++;
    *end = e;
    return g;
}

/* Copies the bytes of run [off, off+len) from src into s's granules whose state is
 * `state`, skipping the others; returns the bytes copied. */
static inline size_t copy_into_granules(struct stm_seg *s, uintptr_t off, size_t len,
                                        const char *src, uint8_t state)
{
    size_t copied = 0;
    STM_ASSERT(s == stm_me, "I2: only the owning thread writes its segment");
    STM_ASSERT(state != G_FILL || s->holds_lock, "I2: a fill undoes under the commit lock");
    for (uintptr_t a = off, end = off + len; a < end;) {
        size_t g = granule_of(a);
        uintptr_t b = granule_off(g + 1) < end ? granule_off(g + 1) : end;
        STM_ASSERT(g < G.ngranules, "a run lies inside the heap");
        if (s->gstate[g] == state) {
            memcpy(seg_addr(s->idx, a), src + (a - off), b - a);
            copied += b - a;
        }
        a = b;
    }
    return copied;
}

/* The running thread's granules covering [off, off+len) become G_OWN (write barrier,
 * allocation): the runtime reads and writes objects through the flat address, where
 * an inaccessible page must not fault. */
static inline void ensure_accessible(uintptr_t off, size_t len, int fresh)
{
    size_t g0 = granule_of(off), g1 = granule_of(off + (len ? len : 1) - 1) + 1;
    for (size_t g = g0; g < g1; g++)
        if (SYNC_UNLIKELY(stm_me->gstate[g] != G_OWN)) {
            stm_materialize(stm_me, g, g1, fresh);
            return;
        }
}

/* One round of a spin wait (round counts from 0 or 1): a pause for the first 64 rounds,
 * then a yield, since threads may outnumber cores. */
static inline void stm_spin_round(int round)
{
    if (round > 64)
        sched_yield();
    else
        __builtin_ia32_pause();
}

/* Is this thread in a commit's critical section, the lock or the window (where a page
 * fault, a write barrier or an abort would be a bug)? */
static inline int stm_in_commit(const struct stm_seg *s)
{
    return s->holds_lock || s->in_window;
}

/* The running attempt's logs emptied (commit, abort, enter). */
static inline void tx_reset(struct stm_seg *s)
{
    s->nws = 0;
    s->nowned = 0;
    s->nunbacked = 0;
    s->backup_shuffled = 0;
    s->backup_len = 0;
    s->nranges = 0;
    s->nrecycled = 0;
    s->nfrees = 0;
    s->ntx_chunks = 0;
    stm_self.dirty = 0;
}

/* Test and debugging hooks (commit.c, pages.c, debug.c): only in objects compiled with
 * -DSTM_TEST_HOOKS. The Makefile compiles the STM's files a second time so for the
 * test programs (BUILD/obj/stmtest/, in BUILD/libstmbench-test.a, which the tests link
 * instead of BUILD/libstmbench.a, and the tests themselves with the macro); stmbench
 * and make micro run the STM without them. tid is the harness thread id (segment
 * tid+1). */
#ifdef STM_TEST_HOOKS
/* STM_TEST_HOOK(name): calls stm_test_<name> where it is set; nothing at all in the
 * objects compiled without the hooks (stmbench's). */
#define STM_TEST_HOOK(name)                                                              \
    do {                                                                                 \
        if (stm_test_##name)                                                             \
            stm_test_##name();                                                           \
    } while (0)
/* Called, when set, by a committer between leaving its window (or the commit lock) and
 * copying its owned objects into segment 0 (the stepped tests park a thread there). */
extern void (*stm_test_after_link)(void);
/* Called, when set, by a committer just before each compare-and-swap that links its
 * entry (it has validated every entry linked so far). */
extern void (*stm_test_before_link)(void);
/* Called, when set, by a committer that owned objects after its copies, before it
 * gives the objects up (it can no longer abort there). */
extern void (*stm_test_before_release)(void);
/* Called, when set, by an inevitable transaction just before it asks an object's owner
 * to let go (abort_request). */
extern void (*stm_test_before_ask)(void);
/* Called, when set, by a committer in its window (or under the lock) just after the link
 * of its entry, before its segment's rev names it (commit.c). */
extern void (*stm_test_linked_in_window)(void);
/* Called, when set, by a granule fill after its wait for the copies of the entries it
 * imported, before its copy of segment 0 (both outside the lock) (pages.c). */
extern void (*stm_test_fill_waited)(void);
/* Called, when set, by a granule fill between its copy of segment 0 (outside the lock)
 * and the undo of the newer entries (under it) (pages.c). */
extern void (*stm_test_fill_copied)(void);
/* Called, when set, by a private commit before its Dekker handshake with fillers
 * (commit.c, private_open): in commit_private after a relaxed look found every granule
 * it wrote ours alone, in commit_unbacked after the write barrier's looks. */
extern void (*stm_test_private_prechecked)(void);
/* Called, when set, by a private commit after its handshake, before its copies into
 * segment 0 (privseq is odd there). */
extern void (*stm_test_private_checked)(void);
/* Called, when set, by a filler that has just made another segment's private granule
 * GS_CLOSING, before it waits for that segment's private commit (pages.c). */
extern void (*stm_test_closing)(void);
/* Counts of private commits and of granules taken from their private holders (for the
 * stress test's report; relaxed increments). */
extern _Atomic unsigned long stm_test_private_commits, stm_test_closings;
/* Private commits that took commit_unbacked (commit.c), a subset of the above, and its
 * handshakes that found a granule taken (the commit then went on to commit_prepare). */
extern _Atomic unsigned long stm_test_unbacked_commits, stm_test_unbacked_fallbacks;
/* Counts of granules an abort brought back to its snapshot (pages.c, stm_refill_granules)
 * and of unbacked writes an abort restored from segment 0 (commit.c). */
extern _Atomic unsigned long stm_test_refills, stm_test_unbacked_restores;
/* Called, when set, by an aborting attempt with unbacked writes after its handshake
 * (privseq odd, the granules looked at again), before it copies from segment 0. */
extern void (*stm_test_restore_checked)(void);
/* Counts of depot spills and takes (alloc.c, D1; relaxed increments). */
extern _Atomic unsigned long stm_test_depot_spills, stm_test_depot_takes;
/* Who holds obj's granule: GS_* in the low 2 bits, the segment above (gs_word). */
uint64_t stm_debug_gshare(const void __seg_gs *obj);
/* How many bytes of read markers a wrap of the read versions zeroes in place at most;
 * more are given back to the kernel (commit.c, forget_marks). */
extern size_t stm_test_marks_in_place;
/* How many times forget_marks cleared a segment's markers (in place or given back). */
extern _Atomic unsigned long stm_test_marks_cleared;
int stm_debug_page_accessible(int tid, const void __seg_gs *obj);
int stm_debug_eager_pages(void);  /* 1 under valgrind or STM_PAGES=eager */
uintptr_t stm_debug_heap_cursor(void);
void stm_debug_abort_self(void) __attribute__((noreturn)); /* aborts the running attempt */
uint64_t stm_debug_rev(void);
const void *stm_debug_committed(const void __seg_gs *obj);
int stm_debug_owner(const void __seg_gs *obj);
#else
#define STM_TEST_HOOK(name) \
    do {                    \
    } while (0)
#endif

#endif
