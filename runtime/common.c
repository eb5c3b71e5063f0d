/* runtime/common.c - the histogram, statistics and exit helpers of common.h. */
#include "runtime/common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void lat_merge(struct lat_hist *into, const struct lat_hist *from)
{
    into->count += from->count;
    into->sum_ns += from->sum_ns;
    if (from->max_ns > into->max_ns)
        into->max_ns = from->max_ns;
    for (unsigned i = 0; i < LAT_NBUCKETS; i++)
        into->bucket[i] += from->bucket[i];
}

uint64_t lat_bucket_low(unsigned b)
{
    if (b < LAT_SUB)
        return b;
    unsigned msb = b / LAT_SUB + LAT_SUB_BITS - 1;
    uint64_t sub = b % LAT_SUB;
    return (1ull << msb) | (sub << (msb - LAT_SUB_BITS));
}

uint64_t lat_quantile2(const struct lat_hist *a, uint64_t wa, const struct lat_hist *b,
                       uint64_t wb, double q)
{
    uint64_t total = a->count * wa + (b ? b->count * wb : 0);
    if (total == 0)
        return 0;
    if (q <= 0)
        q = 1e-9;
    if (q > 1)
        q = 1;
    uint64_t rank = (uint64_t)(q * (double)total + 0.999999);
    if (rank == 0)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < LAT_NBUCKETS; i++) {
        seen += a->bucket[i] * wa + (b ? b->bucket[i] * wb : 0);
        if (seen >= rank)
            return lat_bucket_low(i);
    }
    return b && b->max_ns > a->max_ns ? b->max_ns : a->max_ns;
}

uint64_t lat_quantile(const struct lat_hist *h, double q)
{
    return lat_quantile2(h, 1, NULL, 0, q);
}

uint64_t sync_op_quantile(const struct sync_stats *s, uint64_t weight, double q)
{
    return lat_quantile2(&s->op_hist, weight, &s->op_stall_hist, 1, q);
}

const char *sync_abort_kind_name(enum sync_abort_kind k)
{
    switch (k) {
    case SYNC_ABORT_WRITE_WRITE: return "write-write";
    case SYNC_ABORT_READ_WRITE: return "read-write";
    case SYNC_ABORT_INEVITABLE: return "inevitable";
    case SYNC_ABORT_HTM_CONFLICT: return "htm-conflict";
    case SYNC_ABORT_HTM_CAPACITY: return "htm-capacity";
    case SYNC_ABORT_HTM_EXPLICIT: return "htm-explicit";
    default: return "other";
    }
}

const char *sync_conflict_kind_name(uint32_t kind)
{
    if (kind == SYNC_KIND_LOCK_WAIT)
        return "lock-wait";
    return sync_abort_kind_name(kind < SYNC_ABORT_NKINDS ? (enum sync_abort_kind)kind
                                                         : SYNC_ABORT_OTHER);
}

void sync_stats_reset(struct sync_stats *s)
{
    free(s->conflicts);
    free(s->waits_open);
    memset(s, 0, sizeof *s);
}

void sync_stats_free(struct sync_stats *s)
{
    free(s->conflicts);
    s->conflicts = NULL;
    s->nconflicts = s->conflicts_cap = 0;
    free(s->waits_open);
    s->waits_open = NULL;
}

__thread struct sync_where_hook sync_where;
__thread struct sync_wait_log sync_waits;
int sync_waits_wanted = 1;
#define SYNC_LW(i) (SYNC_LOCK_ID_NONE | (uint32_t)(i) << SYNC_LOCK_SITE_SHIFT)
#define SYNC_LW4(i) SYNC_LW(i), SYNC_LW(i + 1), SYNC_LW(i + 2), SYNC_LW(i + 3)
#define SYNC_LW16(i) SYNC_LW4(i), SYNC_LW4(i + 4), SYNC_LW4(i + 8), SYNC_LW4(i + 12)
__thread uint32_t sync_lock_word[SYNC_LOCK_SITES] = {SYNC_LW16(0), SYNC_LW16(16)};
_Static_assert(SYNC_LOCK_SITES == 32, "sync_lock_word's initialiser lists 32 words");

void sync_lock_words_set(int tid)
{
    uint32_t id = tid >= 0 && tid + 1 < (int)SYNC_LOCK_ID_NONE ? (uint32_t)tid + 1
                                                                : SYNC_LOCK_ID_NONE;
    for (uint32_t i = 0; i < SYNC_LOCK_SITES; i++)
        sync_lock_word[i] = id | i << SYNC_LOCK_SITE_SHIFT;
}

void sync_log_wait(struct sync_conflict *c)
{
    struct sync_wait_log *w = &sync_waits;
    if (!w->stats || !sync_waits_wanted)
        return;
    c->t_ns = sync_now_ns() - w->t0_ns;
    c->thread = w->tid;
    sync_stats_add_wait(w->stats, c);
}

/* Keeps rows 0, 2, 4... with twice their weight and time: the record halves. */
static void conflicts_thin(struct sync_stats *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->nconflicts; i += 2) {
        s->conflicts[k] = s->conflicts[i];
        s->conflicts[k].wasted_ns *= 2;
        s->conflicts[k++].weight *= 2;
    }
    s->nconflicts = k;
    s->conflicts_stride = s->conflicts_stride ? s->conflicts_stride * 2 : 2;
    s->conflicts_skip = 0;
}

static void conflict_append(struct sync_stats *s, const struct sync_conflict *c)
{
    if (s->nconflicts == s->conflicts_cap) {
        size_t cap = s->conflicts_cap ? s->conflicts_cap * 2 : 256;
        struct sync_conflict *n = realloc(s->conflicts, cap * sizeof *n);
        if (!n)
            return;
        s->conflicts = n;
        s->conflicts_cap = cap;
    }
    s->conflicts[s->nconflicts++] = *c;
}

/* One row standing for `weight` events of total time c->wasted_ns, through the
 * sampling above: a kept row stands for `stride` rows like it. */
static void conflict_record(struct sync_stats *s, const struct sync_conflict *c,
                            uint32_t weight)
{
    s->conflicts_seen += weight;
    if (s->conflicts_stride > 1 && ++s->conflicts_skip < s->conflicts_stride)
        return;
    if (s->nconflicts >= SYNC_CONFLICTS_CAP) {
        conflicts_thin(s);
        if (++s->conflicts_skip < s->conflicts_stride)
            return;
    }
    s->conflicts_skip = 0;
    struct sync_conflict r = *c;
    uint32_t stride = s->conflicts_stride > 1 ? s->conflicts_stride : 1;
    r.weight = weight * stride;
    r.wasted_ns = c->wasted_ns * stride;
    conflict_append(s, &r);
}

void sync_stats_add_conflict(struct sync_stats *s, const struct sync_conflict *c)
{
    conflict_record(s, c, 1);
}

/* ---- waits, aggregated by pair and window (common.h) ---- */

static int wait_same_pair(const struct sync_conflict *a, const struct sync_conflict *b)
{
    return a->kind == b->kind && a->thread == b->thread && a->other == b->other &&
           a->object == b->object && a->object_s == b->object_s && a->site == b->site &&
           a->where == b->where && a->other_site == b->other_site &&
           a->other_where == b->other_where;
}

static size_t wait_slot(const struct sync_conflict *c)
{
    uint64_t h = c->object ^ (uint64_t)(uintptr_t)c->site * 31 ^
                 (uint64_t)(uintptr_t)c->other_site * 131 ^
                 ((uint64_t)c->where << 32 | c->other_where) ^ (uint64_t)(c->other + 1) << 48;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (size_t)h & (SYNC_WAIT_SLOTS - 1);
}

void sync_stats_close_waits(struct sync_stats *s)
{
    struct sync_wait_agg *a = s->waits_open;
    if (!a || a->n == 0)
        return;
    /* in t_ns order, as the rows of one thread are: the open pairs by their first wait */
    for (unsigned left = a->n; left; left--) {
        struct sync_conflict *first = NULL;
        for (unsigned i = 0; i < SYNC_WAIT_SLOTS; i++)
            if (a->row[i].weight && (!first || a->row[i].t_ns < first->t_ns))
                first = &a->row[i];
        conflict_record(s, first, first->weight);
        first->weight = 0;
    }
    a->n = 0;
}

void sync_stats_add_wait(struct sync_stats *s, const struct sync_conflict *c)
{
    _Static_assert((SYNC_WAIT_SLOTS & (SYNC_WAIT_SLOTS - 1)) == 0, "a power of two");
    struct sync_wait_agg *a = s->waits_open;
    if (!a) {
        a = s->waits_open = calloc(1, sizeof *a);
        if (!a) {                        /* no memory for the aggregate: a row of its own */
            conflict_record(s, c, 1);
            return;
        }
    }
    uint64_t window = c->t_ns / SYNC_WAIT_WINDOW_NS;
    if (a->n && (window != a->window || a->n >= SYNC_WAIT_SLOTS * 3 / 4))
        sync_stats_close_waits(s);
    if (a->n == 0)
        a->window = window;
    size_t i = wait_slot(c);
    while (a->row[i].weight && !wait_same_pair(&a->row[i], c))
        i = (i + 1) & (SYNC_WAIT_SLOTS - 1);
    struct sync_conflict *r = &a->row[i];
    if (r->weight) {
        r->weight++;
        r->wasted_ns += c->wasted_ns;
        return;
    }
    *r = *c;
    r->weight = 1;
    a->n++;
}

void sync_stats_merge(struct sync_stats *into, struct sync_stats *from)
{
    sync_stats_close_waits(from);
    into->commits += from->commits;
    for (int k = 0; k < SYNC_ABORT_NKINDS; k++)
        into->aborts[k] += from->aborts[k];
    into->unshared_pages += from->unshared_pages;
    into->pages_faulted += from->pages_faulted;
    into->import_entries += from->import_entries;
    into->import_bytes += from->import_bytes;
    into->inevitable += from->inevitable;
    into->htm_commits += from->htm_commits;
    into->gil_handoffs += from->gil_handoffs;
    into->gil_wait_ns += from->gil_wait_ns;
    lat_merge(&into->commit_hist, &from->commit_hist);
    into->thread_time_ns += from->thread_time_ns;
    for (int c = 0; c < SYNC_TA_NCAT; c++)
        into->time_ns[c] += from->time_ns[c];
    lat_merge(&into->op_hist, &from->op_hist);
    lat_merge(&into->op_stall_hist, &from->op_stall_hist);
    if (from->op_max_ns > into->op_max_ns)
        into->op_max_ns = from->op_max_ns;
    for (size_t i = 0; i < from->nconflicts; i++)
        conflict_append(into, &from->conflicts[i]);   /* as they are: weights kept */
    into->conflicts_seen += from->conflicts_seen;
    if (from->conflicts_stride > into->conflicts_stride)
        into->conflicts_stride = from->conflicts_stride;
    sync_stats_free(from);
}

uint64_t sync_stats_aborts(const struct sync_stats *s)
{
    uint64_t n = 0;
    for (int k = 0; k < SYNC_ABORT_NKINDS; k++)
        n += s->aborts[k];
    return n;
}

void sync_vmessage(const char *fmt, va_list ap)
{
    fputs("stmbench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void sync_out_of_resources(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sync_vmessage(fmt, ap);
    va_end(ap);
    fflush(stderr);
    /* _exit: no atexit handler may flush a half-written results file */
    _exit(3);
}

void *sync_private_alloc(size_t n)
{
    size_t size = (n + SYNC_CACHELINE - 1) & ~(size_t)(SYNC_CACHELINE - 1);
    if (size == 0)
        size = SYNC_CACHELINE;
    void *p = aligned_alloc(SYNC_CACHELINE, size);
    if (p)
        memset(p, 0, size);
    return p;
}
