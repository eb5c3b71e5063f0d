/*
 * runtime/stm/stm.c - the page-based STM: segments, lazy pages, write ownership,
 * commit log, validation, abort and retry, inevitability, allocation.
 * The protocol, with its reasoning and cost model, is in runtime/stm/DESIGN.md; this is
 * the summary.
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
 * (G_FILL is G_NONE becoming G_OWN, under the commit lock.) Under valgrind or with
 * STM_PAGES=eager every granule is G_OWN from entering.
 *
 * Invariants:
 *  I1 (own hand) A thread's view of the heap changes only by its own actions: its
 *     writes, its imports of the commit log, and the filling of a G_NONE granule on its
 *     first access, which shows exactly its revision. So a transaction reads one
 *     consistent snapshot (revision me->rev): opacity, with no fence in the read barrier.
 *  I2 (granules) Only the owning thread changes its segment, its granule states and its
 *     counters. A G_OWN granule of s holds segment 0's bytes as of s->rev plus s's own
 *     uncommitted writes: imports copy an entry's runs into G_OWN granules and skip
 *     G_NONE ones. Filling a granule (under commit_lock, so segment 0 and the log tail
 *     stand still) copies segment 0 (revision G.rev) and undoes, newest first, every
 *     entry after s->rev with the old bytes the entry carries. Committers touch
 *     segment 0 and nothing of any other segment. A committer copies the objects it
 *     owns into segment 0 after releasing the lock, with its `publishing` flag set from
 *     before the release until the copies are done; a fill (and an eager enter) waits,
 *     under the lock, until no flag is set, so it copies segment 0 exactly at G.rev.
 *  I3 (ownership) At most one transaction owns an object for writing: wlocks[o>>4]
 *     holds owner (segment index, 0 = none) | rev << 16, where rev is the revision of
 *     the last commit that wrote the object. A writer acquires ownership with a CAS
 *     and keeps it until its commit published the object, or its abort restored it.
 *     A thread alone (nactive == 1) takes no ownership and appends no log entry:
 *     ownership only detects conflicts early, serialisability rests on I5.
 *  I4 (log) Entries are appended under commit_lock in revision order; a thread at
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
 */
#include "runtime/stm/sync_stm.h"
#include "runtime/sync.h"

#include <asm/prctl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

#include "runtime/stm/stm_internal.h"
#include "runtime/timeacct.h"

/* Under valgrind's memcheck an inaccessible granule must look addressable: the real
 * access then faults and the handler brings the granule in, as natively; memcheck
 * would otherwise report every first access as an invalid read. */
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define STM_VG_ADDRESSABLE(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))
#define STM_ON_VALGRIND (RUNNING_ON_VALGRIND != 0)
#else
#define STM_VG_ADDRESSABLE(p, n) ((void)(p), (void)(n))
#define STM_ON_VALGRIND 0
#endif

#define PAGE 4096ul
#define CHUNK (64 * 1024ul)           /* bump-allocation chunk per thread */
#define INEVITABLE_AFTER 8            /* consecutive aborts before going inevitable */
#define LOG_GC_EVERY 32               /* commits between log garbage collections */
#define MAX_SEGMENTS 4096
#define NOT_OWNED UINT64_MAX          /* ws_entry.saved: ownership was not taken */

__thread struct stm_tls stm_self;
void (*stm_test_after_link)(void);
static __thread struct stm_seg *me;

struct stm_global G;

/* ------------------------------------------------------------------ setjmp */

/*
 * stm_setjmp / stm_longjmp: the atomic block's restart point. Saves only what the
 * x86-64 System V ABI says a callee keeps (rbx, rbp, r12-r15, rsp) and the return
 * address: about a third of glibc's _setjmp, which also mangles pointers and handles
 * the signal mask (neither is needed here: aborts never cross a signal handler).
 * The C declaration carries returns_twice, so compilers treat it like setjmp.
 */
__asm__(".text\n"
        ".globl stm_setjmp\n"
        ".type stm_setjmp, @function\n"
        "stm_setjmp:\n"
        "    mov %rbx, 0(%rdi)\n"
        "    mov %rbp, 8(%rdi)\n"
        "    mov %r12, 16(%rdi)\n"
        "    mov %r13, 24(%rdi)\n"
        "    mov %r14, 32(%rdi)\n"
        "    mov %r15, 40(%rdi)\n"
        "    lea 8(%rsp), %rdx\n"        /* the caller's stack pointer after return */
        "    mov %rdx, 48(%rdi)\n"
        "    mov (%rsp), %rdx\n"         /* the return address */
        "    mov %rdx, 56(%rdi)\n"
        "    xor %eax, %eax\n"
        "    ret\n"
        ".size stm_setjmp, .-stm_setjmp\n"
        ".globl stm_longjmp\n"
        ".type stm_longjmp, @function\n"
        "stm_longjmp:\n"
        "    mov 0(%rdi), %rbx\n"
        "    mov 8(%rdi), %rbp\n"
        "    mov 16(%rdi), %r12\n"
        "    mov 24(%rdi), %r13\n"
        "    mov 32(%rdi), %r14\n"
        "    mov 40(%rdi), %r15\n"
        "    mov 48(%rdi), %rsp\n"
        "    mov $1, %eax\n"
        "    jmp *56(%rdi)\n"
        ".size stm_longjmp, .-stm_longjmp\n");

/* ------------------------------------------------------------------ helpers */

/*
 * The commit lock: a test-and-test-and-set spinlock that yields the CPU after a few
 * rounds (threads may outnumber cores). Held briefly: a commit's last validation, its
 * link and the copies of objects it does not own (new and recycled ones; all of them
 * for a thread alone), or a granule fill.
 */
static void commit_lock(void)
{
    for (int spins = 0;; spins++) {
        int z = 0;
        /* acquire: pairs with the release in commit_unlock; everything the previous
         * holder did under the lock (segment 0, page states, log tail) is visible. */
        if (atomic_compare_exchange_weak_explicit(&G.lock, &z, 1, memory_order_acquire,
                                                  memory_order_relaxed)) {
            if (me)
                me->holds_lock = 1;
            if (spins)
                TA_TIMED_END();
            return;
        }
        if (!spins)
            TA_TIMED_BEGIN(TA_WAIT_LOCK);   /* time breakdown: only a taken lock is timed */
        /* relaxed: only waits for the lock to look free before trying again */
        while (atomic_load_explicit(&G.lock, memory_order_relaxed)) {
            if (++spins > 64)
                sched_yield();
            else
                __builtin_ia32_pause();
        }
    }
}

static void commit_unlock(void)
{
    if (me)
        me->holds_lock = 0;
    /* release: pairs with the acquire CAS in commit_lock */
    atomic_store_explicit(&G.lock, 0, memory_order_release);
}

/*
 * Waits, holding commit_lock, until no committer is still copying its owned objects into
 * segment 0 after its link (publishing). New copies start only under the lock, so once
 * this returns, segment 0 is exactly the state at G.rev until the lock is released:
 * what a granule fill and an eager enter copy from.
 */
static void wait_publishers(void)
{
    for (int i = 1; i <= G.nseg; i++)
        /* acquire: pairs with the release store that ended the copies; their bytes in
         * segment 0 are visible after it */
        for (int spins = 0; atomic_load_explicit(&G.segs[i].publishing, memory_order_acquire);
             spins++) {
            if (spins > 64)
                sched_yield();
            else
                __builtin_ia32_pause();
        }
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

/* The machine ran out of something (memory, mappings, heap): exit 3 with the reason,
 * as the harness does for a runtime that cannot be set up; results files stay untouched.
 * Every resource failure of the runtime, STM_GROW's included, ends here. */
void stm_out_of_resources(const char *fmt, const char *arg)
{
    fprintf(stderr, "stmbench: stm: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    fflush(stderr);
    _exit(3);
}
#define out_of_resources stm_out_of_resources

/* A broken rule of the protocol or of the interface: a bug; abort for a core dump. */
static void fatal(const char *fmt, const char *arg)
{
    fprintf(stderr, "stm: fatal: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    abort();
}

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

/* Cheap timestamps for wasted-time accounting: the TSC, converted at abort time. */
static inline uint64_t ticks(void)
{
    return __rdtsc();
}
static uint64_t ticks_to_ns(uint64_t t)
{
    return (uint64_t)((double)t * G.ns_per_tick);
}

/* --------------------------------------------------------------- chaos mode */

static inline uint64_t chaos_rand(struct stm_seg *s)
{
    uint64_t x = s->chaos_rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s->chaos_rng = x;
    return x;
}

/* At a protocol step: maybe yield, spin or sleep, so two cores see many interleavings. */
static SYNC_NOINLINE void chaos_step(struct stm_seg *s)
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

static inline void chaos_point(struct stm_seg *s)
{
    if (SYNC_UNLIKELY(G.chaos))
        chaos_step(s);
}

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
#define GRANULE CHUNK
#define GRANULE_PAGES (GRANULE / PAGE)
enum { G_NONE = 0, G_OWN = 1, G_FILL = 2 /* being filled, under commit_lock */ };

static inline size_t granule_of(uintptr_t off)
{
    return (off - G.rm_size) / GRANULE;
}
static inline uintptr_t granule_off(size_t g)
{
    return G.rm_size + g * GRANULE;
}

/* Undo, in s's granules marked G_FILL (already readable and writable, just copied from
 * segment 0), every logged write of an entry newer than s->rev, newest first. Caller
 * holds commit_lock, so the log's tail and segment 0 stand still; the entries after
 * s->last stay allocated (I4). One pass over the log for all the granules filled. */
/* Copies the bytes of run [off, off+len) from src into s's granules whose state is
 * `state`, skipping the others; returns the bytes copied. */
static size_t copy_into_granules(struct stm_seg *s, uintptr_t off, size_t len, const char *src,
                                 uint8_t state)
{
    size_t copied = 0;
    for (uintptr_t a = off, end = off + len; a < end;) {
        size_t g = granule_of(a);
        uintptr_t b = granule_off(g + 1) < end ? granule_off(g + 1) : end;
        if (s->gstate[g] == state) {
            memcpy(seg_addr(s->idx, a), src + (a - off), b - a);
            copied += b - a;
        }
        a = b;
    }
    return copied;
}

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

static void undo_newer(struct stm_seg *s)
{
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
static void materialize(struct stm_seg *s, size_t g0, size_t g1, int fresh)
{
    if (s->holds_lock)
        fatal("%s: a heap page was touched under the commit lock", "stm");
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
        commit_lock();
        TA_TIMED_BEGIN(TA_UNSHARE);
        wait_publishers();
        for (size_t g = first; g < last; g++)
            if (s->gstate[g] == G_NONE) {
                memcpy(seg_addr(s->idx, granule_off(g)), seg_addr(0, granule_off(g)), GRANULE);
                s->gstate[g] = G_FILL;
                s->stats.pages_faulted += GRANULE_PAGES;
            }
        undo_newer(s);
        TA_TIMED_END();
        commit_unlock();
    }
    for (size_t g = first; g < last; g++)
        if (s->gstate[g] != G_OWN) {
            s->gstate[g] = G_OWN;
            s->stats.unshared_pages += GRANULE_PAGES;
        }
}

/* The running thread's granules covering [off, off+len) become G_OWN (write barrier,
 * allocation): the runtime reads and writes objects through the flat address, where
 * an inaccessible page must not fault. */
static inline void ensure_accessible(uintptr_t off, size_t len, int fresh)
{
    size_t g0 = granule_of(off), g1 = granule_of(off + (len ? len : 1) - 1) + 1;
    for (size_t g = g0; g < g1; g++)
        if (SYNC_UNLIKELY(me->gstate[g] != G_OWN)) {
            materialize(me, g, g1, fresh);
            return;
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
    struct stm_seg *s = me;
    char *a = si->si_addr;
    if (s && G.base) {
        char *lo = seg_addr(s->idx, G.rm_size), *hi = lo + G.heap_size;
        if (a >= lo && a < hi) {
            size_t g = (size_t)(a - lo) / GRANULE;
            if (s->gstate[g] == G_NONE) {
                int e = errno;
                materialize(s, g, g + 1, 0);
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
static void install_segv_handler(void)
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

/* ------------------------------------------------------------------ aborts */

static void entry_keep(struct stm_seg *s, struct log_entry *e);

static void release_ownership_restore(struct stm_seg *s)
{
    /* Undo in reverse order: the oldest backup of an object wins. */
    for (size_t i = s->nws; i-- > 0;) {
        struct ws_entry *w = &s->ws[i];
        memcpy(seg_addr(s->idx, w->off), s->backup + w->backup_at, w->size);
        /* release: pairs with the acquire CAS/load of the next owner; the restored
         * bytes are in our own segment only, so the order matters for I3 alone. */
        if (w->saved != NOT_OWNED)
            atomic_store_explicit(wlock_slot(w->off), w->saved, memory_order_release);
    }
}

static void tx_reset(struct stm_seg *s)
{
    s->nws = 0;
    s->nowned = 0;
    s->backup_len = 0;
    s->nranges = 0;
    s->nrecycled = 0;
    s->nfrees = 0;
    s->ntx_chunks = 0;
    stm_self.dirty = 0;
}

/* Throws the running attempt away and jumps back to the block's start. */
static void __attribute__((noreturn)) stm_abort(enum sync_abort_kind kind, int other,
                                                uintptr_t obj)
{
    struct stm_seg *s = me;
    if (s->inevitable)
        fatal("an inevitable transaction tried to abort (%s)", sync_abort_kind_name(kind));
    SYNC_COMPILER_BARRIER();
    if (s->building) {
        entry_keep(s, s->building);
        s->building = NULL;
    }
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

    uint64_t now = sync_now_ns();
    s->stats.aborts[kind]++;
    struct sync_conflict c = {
        .t_ns = now - G.t0_ns,
        .thread = s->idx - 1,
        .other = other >= 1 ? other - 1 : -1,
        .kind = (uint32_t)kind,
        .object = obj,
        .page = obj / PAGE,
        .site = s->site,
        .wasted_ns = s->attempt_ticks ? ticks_to_ns(ticks() - s->attempt_ticks) : 0,
    };
    sync_stats_add_conflict(&s->stats, &c);
    stm_self.aborts_in_row++;
    TA_ABORT(s->attempt_ticks); /* time breakdown: the attempt and its rollback are wasted */

    /* Contention management: after a write-write conflict, wait (without holding
     * anything) until the owner let go, so the retry does not hit it again. */
    if (kind == SYNC_ABORT_WRITE_WRITE && obj) {
        _Atomic uint64_t *slot = wlock_slot(obj);
        TA_TIMED_BEGIN(TA_WAIT_OWNER);
        /* The owner is usually running and lets go within its commit (a microsecond or
         * so): spin with `pause` first; yield only after that (it may be descheduled:
         * threads may outnumber cores). A yield at every round from the 65th cost bank
         * transfers a fifth of their 2-thread time in this wait on a busy VM. */
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
    stm_self.depth = 0;
    stm_longjmp(&stm_self.jb);
}

/* Checked at slow paths: an inevitable transaction wants something we own. */
static inline void check_abort_request(struct stm_seg *s)
{
    /* acquire: pairs with the release store of the inevitable requester */
    if (SYNC_UNLIKELY(atomic_load_explicit(&s->abort_request, memory_order_acquire)) &&
        !s->inevitable) {
        atomic_store_explicit(&s->abort_request, 0, memory_order_relaxed);
        stm_abort(SYNC_ABORT_INEVITABLE, atomic_load_explicit(&G.inevitable, memory_order_relaxed), 0);
    }
}

/* ------------------------------------------------------------ log and import */

/*
 * Imports every committed entry after s->rev into segment s (I4), validating each
 * against the read markers first when `validate` (I5). On a conflict aborts (the
 * caller must not hold commit_lock then: unlock_on_abort says whether it does).
 */
static void import_log(struct stm_seg *s, int validate, int unlock_on_abort)
{
    struct log_entry *e = s->last;
    struct log_entry *n;
    const uint16_t *rm = (const uint16_t *)seg_addr(s->idx, 0);
    uint16_t rv = stm_self.rv;
    /* acquire: pairs with the release store that linked the entry in commit */
    while ((n = atomic_load_explicit(&e->next, memory_order_acquire)) != NULL) {
        chaos_point(s);
        const struct log_run *r = n->runs;
        if (validate) {
            for (uint32_t i = 0; i < n->nruns; i++)
                if (r[i].validate && rm[r[i].off >> 4] == rv) {
                    if (unlock_on_abort)
                        commit_unlock();
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
}

/*
 * Log entries belong to the thread that built them: it keeps its published entries in
 * its own FIFO (linked by `own_next`, in revision order) and frees the old ones itself
 * (gc_own_entries), so the entries it reuses are in its own cache and the commit lock
 * never walks the log. Small entries go to the thread's free list for reuse.
 */
#define ENTRY_SMALL 1024 /* most commits of the workloads fit (rbtree: ~400 bytes) */

static void entry_keep(struct stm_seg *s, struct log_entry *e)
{
    if (e->cap == ENTRY_SMALL) {
        e->own_next = s->free_entries;
        s->free_entries = e;
    } else {
        free(e);
    }
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
 * memory reuse (I7). No lock: only we touch our FIFO; nobody reads those entries. */
static void gc_own_entries(struct stm_seg *s)
{
    uint64_t min = min_active_rev();
    while (s->own_head && s->own_head->rev < min) {
        struct log_entry *e = s->own_head;
        s->own_head = e->own_next;
        if (!s->own_head)
            s->own_tail = NULL;
        entry_keep(s, e);
    }
    /* Only ever raise it (release: pairs with the acquire in reclaim_limbo). */
    uint64_t cur = atomic_load_explicit(&G.min_rev, memory_order_relaxed);
    while (cur < min && !atomic_compare_exchange_weak_explicit(&G.min_rev, &cur, min,
                                                               memory_order_release,
                                                               memory_order_relaxed))
        ;
}

/* The running transaction's log entry: its runs (written objects, then new ranges,
 * then recycled objects) and their bytes, copied from our segment. Needs no lock: we
 * own every object it copies. */
static struct log_entry *entry_build(struct stm_seg *s)
{
    size_t nruns = s->nws + s->nranges + s->nrecycled;
    size_t bytes = 2 * s->backup_len; /* the written objects, new and old bytes */
    for (size_t i = 0; i < s->nranges; i++)
        bytes += s->ranges[i].b - s->ranges[i].a;
    for (size_t i = 0; i < s->nrecycled; i++)
        bytes += s->recycled[i].size;
    size_t need = sizeof(struct log_entry) + nruns * sizeof(struct log_run) + bytes;
    struct log_entry *e;
    if (need <= ENTRY_SMALL && s->free_entries) {
        e = s->free_entries;
        s->free_entries = e->own_next;
    } else {
        size_t cap = need <= ENTRY_SMALL ? ENTRY_SMALL : need;
        e = malloc(cap);
        if (!e)
            out_of_resources("out of memory for a commit log entry%s", "");
        e->cap = cap;
    }
    atomic_init(&e->next, NULL);
    e->seg = s->idx;
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
        ENTRY_RUN(s->ws[i].off, s->ws[i].size, 1);
    for (size_t i = 0; i < s->nranges; i++)
        ENTRY_RUN(s->ranges[i].a, s->ranges[i].b - s->ranges[i].a, 0);
    for (size_t i = 0; i < s->nrecycled; i++)
        ENTRY_RUN(s->recycled[i].off, s->recycled[i].size, 0);
#undef ENTRY_RUN
    /* The written objects' old bytes, after every new byte: importers never touch them. */
    e->new_bytes = (size_t)(data - (char *)(e->runs + nruns));
    copy_bytes(data, s->backup, s->backup_len);
    return e;
}

/* ------------------------------------------------------------ allocation */

/* Moves limbo entries whose grace period is over to the ready lists (I7). */
static void reclaim_limbo(struct stm_seg *s)
{
    /* acquire: pairs with the release CAS in gc_own_entries */
    uint64_t min = atomic_load_explicit(&G.min_rev, memory_order_acquire);
    /* A thread alone can reuse everything it freed: its own snapshot has the frees
     * committed, and a thread entering now starts from segment 0, which has them too
     * (relaxed: nactive only grows under the lock, by entering threads). */
    if (atomic_load_explicit(&G.nactive, memory_order_relaxed) == 1)
        min = UINT64_MAX;
    while (s->limbo_head < s->nlimbo && s->limbo[s->limbo_head].rev <= min) {
        struct limbo_entry *l = &s->limbo[s->limbo_head++];
        freelist_push(&s->ready[l->cls], l->off);
    }
    if (s->limbo_head == s->nlimbo)
        s->limbo_head = s->nlimbo = 0;
}

static void new_chunk(struct stm_seg *s, size_t need)
{
    if (s->bump != s->range_start)
        push_range(s, s->range_start, s->bump);
    /* Whole granules, so a chunk (and each granule) has one allocating thread. */
    size_t sz = (need + CHUNK - 1) & ~(CHUNK - 1);
    uintptr_t off = 0;
    for (size_t i = 0; i < s->nspares; i++)
        if (s->spares[i].size >= sz) { /* a chunk of an aborted attempt, ours already */
            off = s->spares[i].off;
            sz = s->spares[i].size;
            s->spares[i] = s->spares[--s->nspares];
            break;
        }
    /* relaxed: only atomicity matters; the chunk is ours alone */
    if (!off)
        off = atomic_fetch_add_explicit(&G.heap_cursor, sz, memory_order_relaxed);
    if (off + sz > G.rm_size + G.heap_size) {
        /* Not a protocol failure but a resource one: say so and exit 3 (the runtime
         * could not go on), leaving every results file untouched. */
        fprintf(stderr, "stmbench: stm: the shared heap (%zu MiB per segment) is exhausted; "
                "run with a larger --heap-mb\n", G.heap_size >> 20);
        fflush(stderr);
        _exit(3);
    }
    ensure_accessible(off, sz, 1);
    push_chunk(&s->tx_chunks, &s->ntx_chunks, &s->tx_chunks_cap, off, sz);
    s->chunk_start = s->bump = s->range_start = off;
    s->bump_end = off + sz;
}

void __seg_gs *_stm_alloc(size_t size)
{
    struct stm_seg *s = me;
    if (SYNC_UNLIKELY(stm_self.depth == 0))
        fatal("%s outside an atomic block", "sync_alloc");
    size_t n = (size + 15) & ~(size_t)15;
    if (n == 0)
        n = 16;
    if (size > UINT32_MAX)
        fatal("object too large (%s)", "size > 4 GiB");
    uintptr_t off;
    int cls = stm_size_class(n);
    if (cls >= 0 && s->nlimbo)
        reclaim_limbo(s);
    if (cls >= 0 && s->ready[cls].n) {
        off = freelist_pop(&s->ready[cls]);
        ensure_accessible(off, n, 0);
        push_recycled(s, off, (uint32_t)n, cls);
    } else {
        if (s->bump + n > s->bump_end)
            new_chunk(s, n);
        off = s->bump;
        s->bump += n;
    }
    char *p = seg_addr(s->idx, off);
    memset(p, 0, n);
    struct sync_hdr *h = (struct sync_hdr *)p;
    h->flags = 0; /* new in this transaction: no write barrier needed */
    h->size = (uint32_t)size;
    stm_self.dirty = 1;
    SYNC_COMPILER_BARRIER(); /* the caller reads it back through %gs */
    return (void __seg_gs *)off;
}

void _stm_free(void __seg_gs *obj)
{
    struct stm_seg *s = me;
    if (SYNC_UNLIKELY(stm_self.depth == 0))
        fatal("%s outside an atomic block", "SYNC_FREE");
    if (!obj)
        return;
    stm_write_barrier(obj); /* a free is a write: concurrent readers must abort */
    uintptr_t off = (uintptr_t)obj;
    uint32_t size = ((const struct sync_hdr __seg_gs *)obj)->size;
    push_free(s, off, (size + 15) & ~15u);
    stm_self.dirty = 1;
}

/* ------------------------------------------------------------ barriers */

void _stm_write_slowpath(void __seg_gs *obj)
{
    struct stm_seg *s = me;
    uintptr_t off = (uintptr_t)obj;
    if (SYNC_UNLIKELY(stm_self.depth == 0))
        fatal("%s outside an atomic block", "SYNC_WRITE");
    check_abort_request(s);
    chaos_point(s);
    if (G.chaos && !s->inevitable && (chaos_rand(s) & 255) == 0)
        stm_abort(SYNC_ABORT_OTHER, -1, off); /* chaos: exercise the abort path */

    _Atomic uint64_t *slot = wlock_slot(off);
    uint64_t mine = (uint64_t)s->idx;
    uint64_t w = NOT_OWNED;
    /* Ownership detects write-write conflicts early; serialisability rests on
     * validation alone (a write implies a read, I5). A thread alone has nobody to
     * conflict with, so it skips the CAS and never touches the word (relaxed: a
     * thread entering meanwhile is caught by validation). */
    if (atomic_load_explicit(&G.nactive, memory_order_relaxed) > 1 || G.chaos ||
        s->inevitable)
        /* acquire: pairs with the release store that gave the object up */
        w = atomic_load_explicit(slot, memory_order_acquire);
    while (w != NOT_OWNED) {
        uint64_t owner = w & 0xffff;
        if (owner == 0) {
            if ((w >> 16) > s->rev) /* committed after our snapshot: we read it stale */
                stm_abort(SYNC_ABORT_READ_WRITE, -1, off);
            /* acquire on success: as above; the failure reloads w */
            if (atomic_compare_exchange_weak_explicit(slot, &w, w | mine,
                                                      memory_order_acquire,
                                                      memory_order_acquire))
                break;
            continue;
        }
        if (owner == mine)
            fatal("%s: object owned but its write flag is set", "write barrier");
        if (!s->inevitable)
            stm_abort(SYNC_ABORT_WRITE_WRITE, (int)owner, off);
        /* We are inevitable (I6): ask the owner to abort and wait for the object.
         * release: pairs with the acquire in check_abort_request. */
        atomic_store_explicit(&G.segs[owner].abort_request, 1, memory_order_release);
        TA_TIMED_BEGIN(TA_WAIT_OWNER);
        sched_yield();
        w = atomic_load_explicit(slot, memory_order_acquire);
    }
    TA_TIMED_END();

    uint32_t size = ((const struct sync_hdr __seg_gs *)obj)->size;
    ensure_accessible(off, size, 0);
    push_backup(s, off, size, w); /* w = the word before we owned it */
    s->nowned += w != NOT_OWNED;
    stm_read_barrier(obj);        /* a write implies a read (I5) */
    ((struct sync_hdr __seg_gs *)obj)->flags &= ~STM_WB;
    stm_self.dirty = 1;
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
    struct stm_seg *s = me;
    if (s->inevitable)
        return;
    if (stm_self.depth == 0)
        fatal("%s outside an atomic block", "sync_inevitable");
    for (;;) {
        wait_inevitable_gone(s);
        commit_lock();
        if (atomic_load_explicit(&G.inevitable, memory_order_relaxed) == 0)
            break;
        commit_unlock();
    }
    import_log(s, 1, 1);
    /* release: pairs with the acquire in wait_inevitable_gone / commit */
    atomic_store_explicit(&G.inevitable, s->idx, memory_order_release);
    s->inevitable = 1;
    stm_self.dirty = 1; /* its commit must clear the inevitability: out of line */
    s->stats.inevitable++;
    commit_unlock();
}

/* ------------------------------------------------------------ begin / commit */

int _stm_begin(const char *site)
{
    struct stm_seg *s = me;
    if (SYNC_UNLIKELY(!s))
        fatal("%s: thread has not entered the stm runtime", site);
    TA_TX_BEGIN();
    stm_self.depth = 1;
    if (SYNC_UNLIKELY(++stm_self.rv == 0)) {
        /* Read versions wrapped: forget every marker of the heap in use (relaxed:
         * the cursor only grows; a chunk taken meanwhile has no markers yet). */
        uintptr_t end = atomic_load_explicit(&G.heap_cursor, memory_order_relaxed);
        size_t first = (G.rm_size >> 4) * 2, used = (end >> 4) * 2 - first;
        if (used <= 4 * 1024 * 1024)
            memset(seg_addr(s->idx, first), 0, used);
        else
            madvise(seg_addr(s->idx, 0), G.rm_size, MADV_DONTNEED);
        stm_self.rv = 1;
    }
    s->site = site;
    /* The attempt's start, for the wasted time of an abort. A thread alone cannot
     * conflict, so it skips the clock (relaxed: a thread entering meanwhile only
     * makes one abort report 0 ns). */
    s->attempt_ticks =
        (atomic_load_explicit(&G.nactive, memory_order_relaxed) > 1 || G.chaos) ? ticks() : 0;
    TA_ATTEMPT(s->attempt_ticks);
    s->tx_bump = s->bump;
    s->tx_bump_end = s->bump_end;
    s->tx_chunk_start = s->chunk_start;
    s->range_start = s->bump;
    chaos_point(s);
    /* Anything committed since our snapshot? Asked of the last entry we imported, not
     * of G.rev: that line changes only when the next entry is linked, while the
     * commit line changes at every commit (acquire: pairs with the release store that
     * linked the entry). */
    if (atomic_load_explicit(&s->last->next, memory_order_acquire))
        import_log(s, 0, 0); /* nothing read yet: refresh the snapshot */
    if (SYNC_UNLIKELY(stm_self.aborts_in_row >= INEVITABLE_AFTER))
        _stm_become_inevitable();
    TA_PHASE(TA_WORK);
    return 1;
}

/* Sets the write flag on every object of a run of new objects (bump order). */
static void flag_new_range(struct stm_seg *s, uintptr_t a, uintptr_t b)
{
    while (a < b) {
        struct sync_hdr *h = (struct sync_hdr *)seg_addr(s->idx, a);
        h->flags |= STM_WB;
        uintptr_t n = ((uintptr_t)h->size + 15) & ~(uintptr_t)15;
        a += n ? n : 16;
    }
}

/* Copies one run of the commit into segment 0, under the commit lock or (an owned
 * object, I3) after it with `publishing` set. No other segment is touched: they import
 * the entry, or undo it at a fault (I2). */
static inline void publish_run(struct stm_seg *s, uintptr_t off, size_t len)
{
    copy_bytes(seg_addr(0, off), seg_addr(s->idx, off), len);
}

void _stm_commit(void)
{
    struct stm_seg *s = me;
    SYNC_COMPILER_BARRIER();
    int timed = (++s->commit_counter & (SYNC_COMMIT_SAMPLE - 1)) == 0;
    uint64_t t0 = timed ? sync_now_ns() : 0;

    if (!stm_self.dirty) {
        /* Read-only: it read one consistent snapshot (I1), so it serialises at
         * s->rev without validation. */
        if (s->inevitable) {
            /* release: pairs with the acquire in wait_inevitable_gone */
            atomic_store_explicit(&G.inevitable, 0, memory_order_release);
            s->inevitable = 0;
        }
        goto done;
    }

    chaos_point(s);
    /* acquire: pairs with the release store that linked the entry */
    if (atomic_load_explicit(&s->last->next, memory_order_acquire)) {
        TA_PHASE(TA_VALIDATE);
        import_log(s, 1, 0); /* most of the validation, outside the lock */
    }
    TA_PHASE(TA_PUBLISH);
    if (s->bump != s->range_start)
        push_range(s, s->range_start, s->bump);
    /* Every committed copy carries STM_WB: set it in our copy first (an abort restores
     * written objects from their backups, which have it too; new ones vanish). */
    for (size_t i = 0; i < s->nws; i++)
        ((struct sync_hdr *)seg_addr(s->idx, s->ws[i].off))->flags |= STM_WB;
    for (size_t i = 0; i < s->nranges; i++)
        flag_new_range(s, s->ranges[i].a, s->ranges[i].b);
    for (size_t i = 0; i < s->nrecycled; i++)
        ((struct sync_hdr *)seg_addr(s->idx, s->recycled[i].off))->flags |= STM_WB;
    /* A log entry only matters to other active threads; build it before taking the
     * lock, so the lock covers only validation of the last entries, the copies into
     * segment 0 and the link (relaxed: re-checked under the lock). */
    if (atomic_load_explicit(&G.nactive, memory_order_relaxed) > 1)
        s->building = entry_build(s);

    for (;;) {
        commit_lock();
        int ie = atomic_load_explicit(&G.inevitable, memory_order_relaxed);
        if (ie == 0 || ie == s->idx)
            break;
        commit_unlock();
        wait_inevitable_gone(s);
    }
    /* the rest, under the lock: nothing can slip in now (acquire: pairs with the
     * release that linked the entry) */
    if (atomic_load_explicit(&s->last->next, memory_order_acquire)) {
        TA_PHASE(TA_VALIDATE);
        import_log(s, 1, 1);
        TA_PHASE(TA_PUBLISH);
    }
    chaos_point(s);

    /* A thread alone writes segment 0 and nothing else: a thread entering later starts
     * from segment 0 (nactive changes only under the lock). */
    int others = atomic_load_explicit(&G.nactive, memory_order_relaxed) > 1;
    struct log_entry *e = s->building;
    s->building = NULL;
    if (others && !e)
        e = entry_build(s);          /* a thread entered since we looked */
    else if (!others && e) {
        entry_keep(s, e);
        e = NULL;
    }
    uint64_t rev = atomic_load_explicit(&G.rev, memory_order_relaxed);
    /* Written objects that we own (I3) are copied into segment 0 after the lock: no
     * other committer writes them before we let go, importers read the entry, and
     * fills and eager enters wait for our `publishing` flag (wait_publishers). New and
     * recycled objects have no owner (another thread could write them as soon as it
     * imported our entry), and a thread alone owns nothing: those are copied here. */
    int late = e && s->nws && s->nowned == s->nws;
    if (!late)
        for (size_t i = 0; i < s->nws; i++)
            publish_run(s, s->ws[i].off, s->ws[i].size);
    for (size_t i = 0; i < s->nranges; i++)
        publish_run(s, s->ranges[i].a, s->ranges[i].b - s->ranges[i].a);
    for (size_t i = 0; i < s->nrecycled; i++)
        publish_run(s, s->recycled[i].off, s->recycled[i].size);
    chaos_point(s);
    if (e) {
        e->rev = ++rev;
        /* release: publishes the entry's contents and segment 0's new bytes; pairs
         * with the acquire load of `next` in import_log. */
        atomic_store_explicit(&G.log_tail->next, e, memory_order_release);
        G.log_tail = e;
        /* release: pairs with the acquire loads of G.rev in begin and commit */
        atomic_store_explicit(&G.rev, rev, memory_order_release);
        s->last = e;
        /* release: pairs with the acquire load in min_active_rev */
        atomic_store_explicit(&s->rev, rev, memory_order_release);
        e->own_next = NULL;
        if (s->own_tail)
            s->own_tail->own_next = e;
        else
            s->own_head = e;
        s->own_tail = e;
    }
    if (s->inevitable) {
        /* release: pairs with the acquire in wait_inevitable_gone */
        atomic_store_explicit(&G.inevitable, 0, memory_order_release);
        s->inevitable = 0;
    }
    /* Recycled objects get the new revision in their word while nobody else can
     * reach them yet (release: pairs with the acquire load in the write slow path). */
    for (size_t i = 0; i < s->nrecycled; i++)
        atomic_store_explicit(wlock_slot(s->recycled[i].off), rev << 16, memory_order_release);
    if (late)
        /* relaxed: under the lock; a waiter reads it under the lock too */
        atomic_store_explicit(&s->publishing, 1, memory_order_relaxed);
    commit_unlock();
    if (late) {
        if (stm_test_after_link)
            stm_test_after_link();
        chaos_point(s);
        for (size_t i = 0; i < s->nws; i++)
            publish_run(s, s->ws[i].off, s->ws[i].size);
        /* release: pairs with the acquire in wait_publishers */
        atomic_store_explicit(&s->publishing, 0, memory_order_release);
    }

    /* Give up ownership (I3) with the new revision; release: pairs with the next
     * owner's acquire CAS. */
    if (s->nowned)
        for (size_t i = 0; i < s->nws; i++)
            if (s->ws[i].saved != NOT_OWNED)
                atomic_store_explicit(wlock_slot(s->ws[i].off), rev << 16, memory_order_release);
    for (size_t i = 0; i < s->nfrees; i++)
        push_limbo(s, s->frees[i].off, s->frees[i].size, rev);
    tx_reset(s);
    if (e && ++s->commits_since_gc >= LOG_GC_EVERY) {
        s->commits_since_gc = 0;
        gc_own_entries(s);
    }

done:
    stm_self.aborts_in_row = 0;
    s->stats.commits++;
    stm_self.depth = 0;
    TA_TX_END();
    if (timed)
        lat_add(&s->stats.commit_hist, sync_now_ns() - t0);
    SYNC_COMPILER_BARRIER();
}

/* -------------------------------------------------------- runtime descriptor */

static void set_gs_base(char *addr)
{
    if (G.use_wrgsbase)
        __asm__ __volatile__("wrgsbase %0" ::"r"(addr) : "memory");
    else if (syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)addr) != 0)
        out_of_resources("arch_prctl(ARCH_SET_GS): %s", strerror(errno));
}

static sigjmp_buf probe_jb;
static void probe_sigill(int sig)
{
    (void)sig;
    siglongjmp(probe_jb, 1);
}

/* Is wrgsbase usable? The CPU and kernel say so in HWCAP2; valgrind does not run it
 * (SIGILL), so try it once under a handler. */
static int probe_wrgsbase(void)
{
    if (getenv("STM_NO_WRGSBASE"))
        return 0;
    if (!(getauxval(AT_HWCAP2) & 2 /* HWCAP2_FSGSBASE */))
        return 0;
    struct sigaction sa = {0}, old;
    sa.sa_handler = probe_sigill;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGILL, &sa, &old);
    int ok = 0;
    if (sigsetjmp(probe_jb, 1) == 0) {
        unsigned long cur;
        __asm__ __volatile__("rdgsbase %0" : "=r"(cur));
        __asm__ __volatile__("wrgsbase %0" ::"r"(cur) : "memory");
        ok = 1;
    }
    sigaction(SIGILL, &old, NULL);
    return ok;
}

static void calibrate_ticks(void)
{
    uint64_t n0 = sync_now_ns(), t0 = ticks();
    struct timespec d = {0, 2000000};
    nanosleep(&d, NULL);
    uint64_t n1 = sync_now_ns(), t1 = ticks();
    G.ns_per_tick = t1 > t0 ? (double)(n1 - n0) / (double)(t1 - t0) : 1.0;
}

static void stm_fini(void);

static int stm_init(const struct sync_config *cfg, char *err, size_t errlen)
{
    stm_fini();
    memset(&G, 0, sizeof G);
    G.fd = -1;
    int n = cfg->nthreads < 1 ? 1 : cfg->nthreads;
    if (n > MAX_SEGMENTS) {
        snprintf(err, errlen, "stm: %d threads but at most %d segments", n, MAX_SEGMENTS);
        return -1;
    }
    G.nseg = n;
    uint64_t heap = cfg->heap_bytes ? cfg->heap_bytes : (1ull << 30);
    heap = (heap + CHUNK - 1) & ~(uint64_t)(CHUNK - 1);
    G.heap_size = heap;
    /* markers of the whole segment must fit in the area: RM >= (RM + HEAP) / 8 */
    G.rm_size = ((heap / 7 + PAGE) + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
    G.seg_size = G.rm_size + G.heap_size;
    size_t total = G.seg_size * (size_t)(n + 1);
    const char *chaos = getenv("STM_CHAOS");
    if (chaos && *chaos) {
        char *end;
        unsigned long long v = strtoull(chaos, &end, 0);
        if (*end || v == 0) {
            snprintf(err, errlen, "stm: STM_CHAOS must be a non-zero integer seed, not '%s'", chaos);
            return -1;
        }
        G.chaos = v;
    }

    G.fd = (int)syscall(SYS_memfd_create, "stmbench-heap", 0u);
    if (G.fd < 0) {
        snprintf(err, errlen, "stm: memfd_create: %s", strerror(errno));
        return -1;
    }
    if (ftruncate(G.fd, (off_t)(heap * (uint64_t)(n + 1))) != 0) {
        snprintf(err, errlen, "stm: ftruncate of the heap file to %llu bytes: %s",
                 (unsigned long long)(heap * (uint64_t)(n + 1)), strerror(errno));
        goto fail;
    }
    G.base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (G.base == MAP_FAILED) {
        G.base = NULL;
        snprintf(err, errlen, "stm: reserving %zu bytes of address space for %d segments: %s",
                 total, n + 1, strerror(errno));
        goto fail;
    }
    G.reserved = total;
    if (mmap(seg_addr(0, G.rm_size), heap, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
             G.fd, 0) == MAP_FAILED) {
        snprintf(err, errlen, "stm: mapping segment 0: %s", strerror(errno));
        goto fail;
    }
    for (int s = 1; s <= n; s++) {
        if (mmap(seg_addr(s, 0), G.rm_size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED ||
            mmap(seg_addr(s, G.rm_size), heap, PROT_NONE, MAP_SHARED | MAP_FIXED, G.fd,
                 file_off(s, 0)) == MAP_FAILED) {
            snprintf(err, errlen, "stm: mapping segment %d: %s", s, strerror(errno));
            goto fail;
        }
    }
    G.ngranules = heap / GRANULE;
    /* The mapping bound: each segment keeps at most 2 * map_budget + 3 mappings, and all
     * of them together at most half of vm.max_map_count (the rest is the process's). */
    long maxmap = 65530;
    FILE *mf = fopen("/proc/sys/vm/max_map_count", "r");
    if (mf) {
        if (fscanf(mf, "%ld", &maxmap) != 1)
            maxmap = 65530;
        fclose(mf);
    }
    G.map_budget = (size_t)(maxmap / 2) / (size_t)(n + 1) / 2;
    if (G.map_budget < 4)
        G.map_budget = 4;
    G.wlocks = mmap(NULL, heap / 16 * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    /* On cache lines of their own: calloc only aligns to 16 bytes, and the end of one
     * segment's struct (its counters, written at every commit) would share a line with
     * the start of the next (its rev and log position, written at every import). */
    G.segs = sync_private_alloc(((size_t)n + 1) * sizeof *G.segs);
    if (G.wlocks == MAP_FAILED || !G.segs) {
        if (G.wlocks == MAP_FAILED)
            G.wlocks = NULL;
        snprintf(err, errlen, "stm: out of memory for %d segments' metadata", n);
        goto fail;
    }
    for (int s = 0; s <= n; s++) {
        G.segs[s].gstate = calloc(G.ngranules, 1);
        if (!G.segs[s].gstate) {
            snprintf(err, errlen, "stm: out of memory for page tables");
            goto fail;
        }
        G.segs[s].idx = s;
        G.segs[s].chaos_rng = (G.chaos ? G.chaos : 1) * 0x9E3779B97F4A7C15ull + (uint64_t)s;
    }
    G.log_first = G.log_tail = calloc(1, sizeof(struct log_entry)); /* the sentinel, rev 0 */
    if (!G.log_first) {
        snprintf(err, errlen, "stm: out of memory");
        goto fail;
    }
    atomic_init(&G.lock, 0);
    atomic_init(&G.rev, 0);
    atomic_init(&G.heap_cursor, G.rm_size);
    G.use_wrgsbase = probe_wrgsbase();
    /* Lazy pages rest on precise faults of %gs-relative accesses; valgrind does not
     * deliver those reliably (callgrind reported unrelated addresses and lost the %gs
     * base), so under valgrind, or with STM_PAGES=eager, every granule is a segment's
     * own from the start and every import copies. */
    const char *pages = getenv("STM_PAGES");
    if (pages && *pages && strcmp(pages, "lazy") != 0 && strcmp(pages, "eager") != 0) {
        snprintf(err, errlen, "stm: STM_PAGES must be lazy or eager, not '%s'", pages);
        goto fail;
    }
    G.eager = (pages && strcmp(pages, "eager") == 0) || STM_ON_VALGRIND;
    install_segv_handler();
    G.t0_ns = sync_now_ns();
    calibrate_ticks();
    G.initialised = 1;
    return 0;
fail:
    stm_fini();
    return -1;
}

static void seg_free_lists(struct stm_seg *s)
{
    for (struct log_entry *e = s->own_head; e;) {
        struct log_entry *n = e->own_next;
        free(e);
        e = n;
    }
    for (struct log_entry *e = s->free_entries; e;) {
        struct log_entry *n = e->own_next;
        free(e);
        e = n;
    }
    free(s->ws);
    free(s->backup);
    free(s->ranges);
    free(s->recycled);
    free(s->frees);
    free(s->limbo);
    free(s->tx_chunks);
    free(s->spares);
    free(s->gstate);
    for (int c = 0; c < STM_NCLASSES; c++)
        free(s->ready[c].v);
    sync_stats_free(&s->stats);
}

static void stm_fini(void)
{
    if (G.segs)
        for (int s = 0; s <= G.nseg; s++)
            seg_free_lists(&G.segs[s]);
    free(G.segs);
    if (G.wlocks)
        munmap(G.wlocks, G.heap_size / 16 * sizeof(uint64_t));
    free(G.log_first);
    if (G.base)
        munmap(G.base, G.reserved);
    if (G.fd >= 0)
        close(G.fd);
    memset(&G, 0, sizeof G);
    G.fd = -1;
}

static int stm_enter(int tid, char *err, size_t errlen)
{
    if (!G.initialised) {
        snprintf(err, errlen, "stm: runtime not initialised");
        return -1;
    }
    if (tid < 0 || tid >= G.nseg) {
        snprintf(err, errlen, "stm: thread %d but only %d segments", tid, G.nseg);
        return -1;
    }
    struct stm_seg *s = &G.segs[tid + 1];
    commit_lock();
    if (atomic_load_explicit(&s->active, memory_order_relaxed)) {
        commit_unlock();
        snprintf(err, errlen, "stm: segment %d already in use", tid + 1);
        return -1;
    }
    /* Reset the segment to "all inaccessible": its view is segment 0 at the current
     * revision, brought in granule by granule on first access. */
    if (mmap(seg_addr(s->idx, G.rm_size), G.heap_size, PROT_NONE, MAP_SHARED | MAP_FIXED,
             G.fd, file_off(s->idx, 0)) == MAP_FAILED) {
        commit_unlock();
        snprintf(err, errlen, "stm: remapping segment %d: %s", s->idx, strerror(errno));
        return -1;
    }
    fallocate(G.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, file_off(s->idx, 0),
              (off_t)G.heap_size); /* frees the old private pages; failure only costs memory */
    madvise(seg_addr(s->idx, 0), G.rm_size, MADV_DONTNEED);
    STM_VG_ADDRESSABLE(seg_addr(s->idx, G.rm_size), G.heap_size);
    memset(s->gstate, G_NONE, G.ngranules);
    s->nprotect = 0;
    s->nfills = 0;
    s->nspares = 0; /* chunks of a previous run of this segment: left behind */
    if (G.eager) {
        /* Eager pages: the whole heap is this segment's own from the start, up to date
         * now (we hold the lock), so no access ever faults and every import copies. */
        uintptr_t used = atomic_load_explicit(&G.heap_cursor, memory_order_relaxed) - G.rm_size;
        if (mprotect(seg_addr(s->idx, G.rm_size), G.heap_size, PROT_READ | PROT_WRITE) != 0) {
            commit_unlock();
            snprintf(err, errlen, "stm: mprotect of segment %d: %s", s->idx, strerror(errno));
            return -1;
        }
        wait_publishers();
        memcpy(seg_addr(s->idx, G.rm_size), seg_addr(0, G.rm_size), used);
        memset(s->gstate, G_OWN, G.ngranules);
    }
    s->last = G.log_tail;
    atomic_store_explicit(&s->rev, atomic_load_explicit(&G.rev, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(&s->active, 1, memory_order_relaxed); /* under the lock */
    /* relaxed: changed under the lock; readers outside it only take hints */
    atomic_fetch_add_explicit(&G.nactive, 1, memory_order_relaxed);
    commit_unlock();

    sync_stats_free(&s->stats);
    memset(&s->stats, 0, sizeof s->stats);
    s->bump = s->bump_end = s->chunk_start = s->range_start = 0;
    s->inevitable = 0;
    atomic_store_explicit(&s->abort_request, 0, memory_order_relaxed); /* not yet shared */
    tx_reset(s);
    stm_self.aborts_in_row = 0;
    stm_self.ro_commits = 0;
    me = s;
    stm_self.rv = 1;
    stm_self.depth = 0;
    set_gs_base(seg_addr(s->idx, 0));
    return 0;
}

void _stm_left_open(const char *site)
{
    const char *open_site = me && me->site ? me->site : site;
    fprintf(stderr, "stm: fatal: the atomic block at %s was left by break, return or goto "
            "with its transaction open (its writes would be lost; caught at the block at "
            "%s); leave a block only by reaching its end\n", open_site, site);
    abort();
}

static void stm_exit(struct sync_stats *out)
{
    struct stm_seg *s = me;
    if (!s)
        return;
    if (stm_self.depth != 0)
        _stm_left_open("thread exit");
    commit_lock();
    atomic_store_explicit(&s->active, 0, memory_order_relaxed); /* under the lock */
    atomic_fetch_sub_explicit(&G.nactive, 1, memory_order_relaxed);
    commit_unlock();
    s->stats.commits += stm_self.ro_commits; /* read-only commits, counted inline */
    stm_self.ro_commits = 0;
    if (out)
        sync_stats_merge(out, &s->stats);
    else
        sync_stats_free(&s->stats);
    me = NULL;
}

const struct sync_runtime sync_runtime_stm = {
    .name = "stm",
    .summary = "the page-based software transactional memory of this project",
    .max_threads = 0,
    .init = stm_init, .fini = stm_fini,
    .thread_enter = stm_enter, .thread_exit = stm_exit,
};

/* ------------------------------------------------------------ introspection */

int stm_debug_eager_pages(void)
{
    return G.eager;
}

int stm_debug_page_accessible(int tid, const void __seg_gs *obj)
{
    return G.segs[tid + 1].gstate[granule_of((uintptr_t)obj)] == G_OWN;
}

void stm_debug_abort_self(void)
{
    stm_abort(SYNC_ABORT_OTHER, -1, 0);
}

uintptr_t stm_debug_heap_cursor(void)
{
    return atomic_load_explicit(&G.heap_cursor, memory_order_relaxed);
}

uint64_t stm_debug_rev(void)
{
    return atomic_load_explicit(&G.rev, memory_order_acquire);
}

const void *stm_debug_committed(const void __seg_gs *obj)
{
    return seg_addr(0, (uintptr_t)obj);
}

int stm_debug_owner(const void __seg_gs *obj)
{
    uint64_t w = atomic_load_explicit(wlock_slot((uintptr_t)obj), memory_order_acquire);
    return (int)(w & 0xffff) - 1;
}
