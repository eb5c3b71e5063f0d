/*
 * runtime/stm/setup.c - init, fini, thread enter and exit of the page-based STM, its runtime
 * descriptor, and its fatal-error paths. The invariants I1..I7 and the other files are
 * listed in stm_internal.h.
 *
 * Maintains the start of I1/I2 (a segment enters with every granule inaccessible, or
 * with all of segment 0 copied at G.rev under the lock when pages are eager) and I4
 * (an entering thread starts at the log tail). `active` and `nactive` change only
 * under the commit lock.
 *
 * Memory order: enter and exit work under the commit lock (its acquire CAS and release
 * store order them); the stores of `active` and `nactive` are relaxed for that reason,
 * each commented; the enter's store of `rev` is a release, for fillers that read it
 * without the lock (pages.c, seg_past).
 */

#include "runtime/stm/sync_stm.h"
#include "runtime/sync.h"

#include <asm/prctl.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime/stm/stm_internal.h"

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

#define MAX_SEGMENTS 4096

__thread struct stm_tls stm_self;
__thread struct stm_seg *stm_me;

struct stm_global G;

/* ------------------------------------------------------------------ errors */

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
#ifdef STMBENCH_DEBUG
/* A failed STM_ASSERT (stm_internal.h): a bug; abort for a core dump. */
void stm_assert_failed(const char *what, const char *cond, const char *file, int line)
{
    fprintf(stderr, "stm: assertion failed: %s (%s) at %s:%d\n", what, cond, file, line);
    abort();
}
#endif

/* A broken rule of the protocol or of the interface: a bug; abort for a core dump. */
void stm_fatal(const char *fmt, const char *arg)
{
    fprintf(stderr, "stm: fatal: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    abort();
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

/* The sizes of the heap, of the read markers and of a segment, and STM_CHAOS: 0, or -1
 * (err set). */
static int init_sizes(const struct sync_config *cfg, int n, char *err, size_t errlen)
{
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
    return 0;
}

/* The reservation of n + 1 segments and their mappings of the heap file (G.fd): 0, or
 * -1 (err set; stm_fini undoes what was done). */
static int init_segments(int n, char *err, size_t errlen)
{
    uint64_t heap = G.heap_size;
    size_t total = G.seg_size * (size_t)(n + 1);
    if (ftruncate(G.fd, (off_t)(heap * (uint64_t)(n + 1))) != 0) {
        snprintf(err, errlen, "stm: ftruncate of the heap file to %llu bytes: %s",
                 (unsigned long long)(heap * (uint64_t)(n + 1)), strerror(errno));
        return -1;
    }
    G.base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (G.base == MAP_FAILED) {
        G.base = NULL;
        snprintf(err, errlen, "stm: reserving %zu bytes of address space for %d segments: %s",
                 total, n + 1, strerror(errno));
        return -1;
    }
    G.reserved = total;
    if (mmap(seg_addr(0, G.rm_size), heap, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
             G.fd, 0) == MAP_FAILED) {
        snprintf(err, errlen, "stm: mapping segment 0: %s", strerror(errno));
        return -1;
    }
    for (int s = 1; s <= n; s++) {
        if (mmap(seg_addr(s, 0), G.rm_size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED ||
            mmap(seg_addr(s, G.rm_size), heap, PROT_NONE, MAP_SHARED | MAP_FIXED, G.fd,
                 file_off(s, 0)) == MAP_FAILED) {
            snprintf(err, errlen, "stm: mapping segment %d: %s", s, strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* The mapping bound: each segment keeps at most 2 * map_budget + 3 mappings, and all of
 * them together at most half of vm.max_map_count (the rest is the process's). */
static size_t init_map_budget(int n)
{
    long maxmap = 65530;
    FILE *mf = fopen("/proc/sys/vm/max_map_count", "r");
    if (mf) {
        if (fscanf(mf, "%ld", &maxmap) != 1)
            maxmap = 65530;
        fclose(mf);
    }
    size_t budget = (size_t)(maxmap / 2) / (size_t)(n + 1) / 2;
    return budget < 4 ? 4 : budget;
}

/* The ownership words, their conflict hints, the granules' holders, the segments' structs
 * and page tables, and the log's sentinel: 0, or -1 (err set). */
static int init_metadata(int n, char *err, size_t errlen)
{
    uint64_t heap = G.heap_size;
    G.wlocks = mmap(NULL, heap / 16 * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    /* Touched only where objects were owned with others running: as wlocks. */
    G.wwhere = mmap(NULL, heap / 16 * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    /* Who holds each granule (stm_internal.h, GS_*): all GS_FREE (zero) at first. */
    G.gshare = mmap(NULL, heap / GRANULE * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    /* On cache lines of their own: calloc only aligns to 16 bytes, and the end of one
     * segment's struct (its counters, written at every commit) would share a line with
     * the start of the next (its rev and log position, written at every import). */
    G.segs = sync_private_alloc(((size_t)n + 1) * sizeof *G.segs);
    if (G.wlocks == MAP_FAILED || G.wwhere == MAP_FAILED || G.gshare == MAP_FAILED ||
        !G.segs) {
        if (G.wlocks == MAP_FAILED)
            G.wlocks = NULL;
        if (G.wwhere == MAP_FAILED)
            G.wwhere = NULL;
        if (G.gshare == MAP_FAILED)
            G.gshare = NULL;
        snprintf(err, errlen, "stm: out of memory for %d segments' metadata", n);
        return -1;
    }
    for (int s = 0; s <= n; s++) {
        G.segs[s].gstate = calloc(G.ngranules, 1);
        if (!G.segs[s].gstate) {
            snprintf(err, errlen, "stm: out of memory for page tables");
            return -1;
        }
        G.segs[s].idx = s;
        G.segs[s].base = seg_addr(s, 0);
        G.segs[s].chaos_rng = (G.chaos ? G.chaos : 1) * 0x9E3779B97F4A7C15ull + (uint64_t)s;
    }
    G.log_first = calloc(1, sizeof(struct log_entry)); /* the sentinel, rev 0 */
    atomic_init(&G.log_tail, G.log_first);
    if (!G.log_first) {
        snprintf(err, errlen, "stm: out of memory");
        return -1;
    }
    return 0;
}

static int stm_init(const struct sync_config *cfg, char *err, size_t errlen)
{
    stm_fini();
    memset(&G, 0, sizeof G);
    G.fd = -1;
    int n = cfg->nthreads < 1 ? 1 : cfg->nthreads;
    if (init_sizes(cfg, n, err, errlen) != 0)
        return -1;
    G.fd = (int)syscall(SYS_memfd_create, "stmbench-heap", 0u);
    if (G.fd < 0) {
        snprintf(err, errlen, "stm: memfd_create: %s", strerror(errno));
        return -1;
    }
    if (init_segments(n, err, errlen) != 0)
        goto fail;
    G.ngranules = G.heap_size / GRANULE;
    G.map_budget = init_map_budget(n);
    if (init_metadata(n, err, errlen) != 0)
        goto fail;
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
    stm_install_segv_handler();
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
    for (size_t i = 0; i < s->nown; i++)
        free(s->own[(s->own_head + i) % s->own_cap].e);
    free(s->own);
    for (int c = 0; c < STM_ENTRY_CLASSES; c++) {
        for (size_t i = 0; i < s->nfree_entries[c]; i++)
            free(s->free_entries[c][i]);
        free(s->free_entries[c]);
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
    for (int c = 0; c < STM_NCLASSES; c++)
        free(G.depot.cls[c].v);
    free(G.segs);
    if (G.wlocks)
        munmap(G.wlocks, G.heap_size / 16 * sizeof(uint64_t));
    if (G.wwhere)
        munmap(G.wwhere, G.heap_size / 16 * sizeof(uint64_t));
    if (G.gshare)
        munmap(G.gshare, G.heap_size / GRANULE * sizeof(uint64_t));
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
    stm_commit_lock();
    if (atomic_load_explicit(&s->active, memory_order_relaxed)) {
        stm_commit_unlock();
        snprintf(err, errlen, "stm: segment %d already in use", tid + 1);
        return -1;
    }
    /* Reset the segment to "all inaccessible": its view is segment 0 at the current
     * revision, brought in granule by granule on first access. */
    if (mmap(seg_addr(s->idx, G.rm_size), G.heap_size, PROT_NONE, MAP_SHARED | MAP_FIXED,
             G.fd, file_off(s->idx, 0)) == MAP_FAILED) {
        stm_commit_unlock();
        snprintf(err, errlen, "stm: remapping segment %d: %s", s->idx, strerror(errno));
        return -1;
    }
    fallocate(G.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, file_off(s->idx, 0),
              (off_t)G.heap_size); /* frees the old private pages; failure only costs memory */
    madvise(seg_addr(s->idx, 0), G.rm_size, MADV_DONTNEED);
    s->marked = 0;
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
            stm_commit_unlock();
            snprintf(err, errlen, "stm: mprotect of segment %d: %s", s->idx, strerror(errno));
            return -1;
        }
        stm_wait_publishers();
        memcpy(seg_addr(s->idx, G.rm_size), seg_addr(0, G.rm_size), used);
        memset(s->gstate, G_OWN, G.ngranules);
    }
    s->last = atomic_load_explicit(&G.log_tail, memory_order_relaxed); /* exact: we hold the lock */
    /* release: pairs with the acquire load in seg_past (pages.c): a filler that reads
     * this rev sees every copy of this segment's earlier commits */
    atomic_store_explicit(&s->rev, atomic_load_explicit(&G.rev, memory_order_relaxed),
                          memory_order_release);
    STM_ASSERT(s->last->rev == atomic_load_explicit(&s->rev, memory_order_relaxed),
               "I4: an entering thread starts at the log tail");
    STM_ASSERT(!atomic_load_explicit(&s->publishing, memory_order_relaxed),
               "I2: an entering segment publishes nothing");
    atomic_store_explicit(&s->active, 1, memory_order_relaxed); /* under the lock */
    /* relaxed: changed under the lock; readers outside it only take hints */
    atomic_fetch_add_explicit(&G.nactive, 1, memory_order_relaxed);
    stm_commit_unlock();

    sync_stats_free(&s->stats);
    memset(&s->stats, 0, sizeof s->stats);
    s->bump = s->bump_end = s->chunk_start = s->range_start = 0;
    s->inevitable = 0;
    atomic_store_explicit(&s->abort_request, 0, memory_order_relaxed); /* not yet shared */
    tx_reset(s);
    stm_self.aborts_in_row = 0;
    stm_self.ro_commits = 0;
    stm_me = s;
    stm_self.rv = 1;
    stm_self.mark = 1;
    stm_self.depth = 0;
    set_gs_base(seg_addr(s->idx, 0));
    return 0;
}

void _stm_left_open(const char *site)
{
    const char *open_site = stm_me && stm_me->site ? stm_me->site : site;
    fprintf(stderr, "stm: fatal: the atomic block at %s was left by break, return or goto "
            "with its transaction open (its writes would be lost; caught at the block at "
            "%s); leave a block only by reaching its end\n", open_site, site);
    abort();
}

static void stm_exit(struct sync_stats *out)
{
    struct stm_seg *s = stm_me;
    if (!s)
        return;
    if (stm_self.depth != 0)
        _stm_left_open("thread exit");
    STM_ASSERT(!s->inevitable && atomic_load_explicit(&G.inevitable, memory_order_relaxed) != s->idx,
               "I6: a thread leaves without inevitability");
    STM_ASSERT(!stm_in_commit(s) && !s->building, "exit: no commit under way");
    stm_commit_lock();
    STM_ASSERT(atomic_load_explicit(&G.nactive, memory_order_relaxed) >= 1,
               "nactive counts this thread");
    atomic_store_explicit(&s->active, 0, memory_order_relaxed); /* under the lock */
    atomic_fetch_sub_explicit(&G.nactive, 1, memory_order_relaxed);
    stm_commit_unlock();
    s->stats.commits += stm_self.ro_commits; /* read-only commits, counted inline */
    stm_self.ro_commits = 0;
    if (out)
        sync_stats_merge(out, &s->stats);
    else
        sync_stats_free(&s->stats);
    stm_me = NULL;
}

const struct sync_runtime sync_runtime_stm = {
    .name = "stm",
    .summary = "the page-based software transactional memory of this project",
    .max_threads = 0,
    .init = stm_init, .fini = stm_fini,
    .thread_enter = stm_enter, .thread_exit = stm_exit,
};
