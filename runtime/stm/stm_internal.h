/*
 * runtime/stm/stm_internal.h - the STM's data structures (private to stm.c and its
 * tests). Field comments say who may touch what; the protocol is in DESIGN.md.
 */
#ifndef STM_INTERNAL_H
#define STM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/common.h"

/* One run of bytes a commit published: [off, off+len) of the heap. The entry's data area
 * holds every run's new bytes, in run order (`new_bytes` in all), then the old bytes of
 * the written objects' runs (validate = 1), in the same order: a segment that brings a
 * granule up to date at an older revision undoes this commit with them (the fault
 * path); importers read only the new bytes. */
struct log_run {
    uintptr_t off;
    uint32_t len;
    uint32_t validate;     /* 1: a written object (importers check their read marker) */
};

/* A commit log entry; immutable once linked, except `next`. */
struct log_entry {
    _Atomic(struct log_entry *) next;
    uint64_t rev;
    int seg;               /* the committer's segment */
    uint32_t nruns;
    size_t new_bytes;      /* the runs' new bytes; the old ones follow */
    size_t cap;            /* bytes allocated for the entry */
    struct log_entry *own_next; /* the committer's own list (FIFO, or free list) */
    struct log_run runs[]; /* followed by the runs' bytes, in order */
};

struct ws_entry {          /* an object written by the running transaction */
    uintptr_t off;
    uint32_t size;
    uint64_t saved;        /* its ownership word before we took it */
    size_t backup_at;      /* where its old bytes are in `backup` */
};
struct range { uintptr_t a, b; };
struct chunk { uintptr_t off, size; };
struct recycled { uintptr_t off; uint32_t size; int cls; };
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
    _Atomic int active;          /* a thread is entered; written under the commit lock */
    _Atomic int publishing;      /* 1 from the link of our entry (under the lock) until
                                  * our owned objects are copied into segment 0 (after it) */
    int idx;                     /* segment number, >= 1 for threads */
    /* private */
    struct log_entry *last;      /* last imported entry (its rev == rev) */
    const char *site;
    uint64_t attempt_ticks;
    uint64_t commit_counter;
    int inevitable;
    struct log_entry *building;  /* the entry of the commit in progress */
    struct log_entry *own_head, *own_tail; /* our published entries, oldest first */
    struct log_entry *free_entries; /* our small entries, free for reuse */
    int commits_since_gc;
    struct ws_entry *ws; size_t nws, ws_cap;
    size_t nowned;               /* how many of ws took ownership (0 when alone) */
    char *backup; size_t backup_len, backup_cap;
    uintptr_t bump, bump_end, chunk_start, range_start;
    uintptr_t tx_bump, tx_bump_end, tx_chunk_start; /* the allocator at the attempt's start */
    struct chunk *tx_chunks; size_t ntx_chunks, tx_chunks_cap; /* opened by this attempt */
    struct chunk *spares; size_t nspares, spares_cap; /* opened by aborted attempts: reused first */
    uint8_t *gstate;             /* [granule]: G_NONE / G_OWN; only this thread touches it */
    size_t nprotect;             /* mprotect calls since the last fill-all (mapping budget) */
    size_t nfills;               /* fills since the last fill-all */
    int holds_lock;              /* this thread holds commit_lock (a fault then is a bug) */
    struct range *ranges; size_t nranges, ranges_cap;
    struct recycled *recycled; size_t nrecycled, recycled_cap;
    struct freed *frees; size_t nfrees, frees_cap;
    struct limbo_entry *limbo; size_t nlimbo, limbo_head, limbo_cap;
    struct freelist ready[STM_NCLASSES];
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
    /* Read on every begin, write and commit, changed only when a thread enters or
     * leaves: kept off the commit line, so reading it costs no cache miss after
     * another thread's commit. */
    _Atomic int nactive;         /* entered threads; changed under the lock */
    /* The commit line: what every commit touches, together. */
    _Atomic int lock SYNC_CL_ALIGNED; /* the commit lock (spinlock) */
    _Atomic uint64_t rev;        /* latest committed revision */
    _Atomic int inevitable;      /* segment of the inevitable transaction, 0 = none */
    struct log_entry *log_tail;  /* newest; under the lock */
    struct log_entry *log_first; /* the sentinel entry (rev 0); freed at fini */
    _Atomic uint64_t min_rev SYNC_CL_ALIGNED; /* all active threads are at least here (I7) */
    _Atomic uintptr_t heap_cursor SYNC_CL_ALIGNED;
    struct stm_seg *segs;        /* [0..nseg] */
    uint64_t chaos;              /* STM_CHAOS seed, 0 = off */
    uint64_t t0_ns;
    double ns_per_tick;
};
extern struct stm_global G;

/* Running out of memory (or mappings, or heap): exit 3 with the reason, leaving every
 * results file untouched, like any runtime that cannot go on (stm.c). */
void stm_out_of_resources(const char *fmt, const char *arg) __attribute__((noreturn));

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
    s->recycled[s->nrecycled++] = (struct recycled){off, size, cls};
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
static inline void push_backup(struct stm_seg *s, uintptr_t off, uint32_t size, uint64_t saved)
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
    const char *src = G.base + (size_t)s->idx * G.seg_size + off;
    char *dst = s->backup + s->backup_len;
    if (size <= 32 && size % 8 == 0)
        for (uint32_t i = 0; i < size; i += 8)
            __builtin_memcpy(dst + i, src + i, 8);
    else
        memcpy(dst, src, size);
    s->ws[s->nws++] = (struct ws_entry){off, size, saved, s->backup_len};
    s->backup_len += size;
}

static inline void push_chunk(struct chunk **v, size_t *n, size_t *cap, uintptr_t off, uintptr_t size)
{
    STM_GROW(*v, *n, *cap);
    (*v)[(*n)++] = (struct chunk){off, size};
}

/* Test and debugging hooks (stm.c). tid is the harness thread id (segment tid+1). */
/* Called, when set, by a committer between releasing the commit lock and copying its
 * owned objects into segment 0 (the stepped tests park a thread there). */
extern void (*stm_test_after_link)(void);
int stm_debug_page_accessible(int tid, const void __seg_gs *obj);
int stm_debug_eager_pages(void);  /* 1 under valgrind or STM_PAGES=eager */
uintptr_t stm_debug_heap_cursor(void);
void stm_debug_abort_self(void) __attribute__((noreturn)); /* aborts the running attempt */
uint64_t stm_debug_rev(void);
const void *stm_debug_committed(const void __seg_gs *obj);
int stm_debug_owner(const void __seg_gs *obj);

#endif
