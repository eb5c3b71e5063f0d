/*
 * harness/conflicts.c - conflict analysis after a run (conflicts.h).
 *
 * Runs on the main thread only, after the workers were joined: nothing here is shared.
 * Descriptions are interned by (what, value) in one table (a location code or an
 * object described once, however many rows name it); the report groups rows by their
 * pair: kind, object, and both sides' site and location, compared as strings. Waits
 * (kind lock-wait) are pairs of their own, grouped again by lock: the report ranks
 * the locks, each shown with its most waited pair.
 */
#include "harness/conflicts.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- interned descriptions ---- */

struct cf_slot {
    uint64_t key;        /* value + 1 (0: empty) */
    int what;            /* 0 location, 1 object */
    char *s;
};
static struct cf_slot *cf_tab;
static size_t cf_cap, cf_n;

static uint64_t cf_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static struct cf_slot *cf_find(struct cf_slot *tab, size_t cap, int what, uint64_t key)
{
    size_t i = (size_t)cf_mix(key * 2 + (uint64_t)what) & (cap - 1);
    while (tab[i].key && !(tab[i].key == key && tab[i].what == what))
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

static int cf_grow(void)
{
    size_t cap = cf_cap ? cf_cap * 2 : 1024;
    struct cf_slot *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < cf_cap; i++)
        if (cf_tab[i].key)
            *cf_find(t, cap, cf_tab[i].what, cf_tab[i].key) = cf_tab[i];
    free(cf_tab);
    cf_tab = t;
    cf_cap = cap;
    return 0;
}

/* A CSV field without commas, quotes or line breaks (they become ';' and ' '). */
static void cf_clean(char *s)
{
    for (; *s; s++)
        if (*s == ',')
            *s = ';';
        else if (*s == '"' || *s == '\n' || *s == '\r')
            *s = ' ';
}

static const char *cf_describe(const struct workload *wl, void *ctx, int what, uint64_t v)
{
    if (what == 0 && (!wl->describe_where || v == 0))
        return NULL;
    if (what == 1 && (!wl->describe_object || v == 0))
        return NULL;
    if (4 * (cf_n + 1) > 3 * cf_cap && cf_grow() != 0)
        return NULL;                      /* out of memory: the row stays undescribed */
    struct cf_slot *sl = cf_find(cf_tab, cf_cap, what, v + 1);
    if (sl->key)
        return sl->s;
    char buf[160] = "";
    if (what == 0)
        wl->describe_where(ctx, (uint32_t)v, buf, sizeof buf);
    else
        wl->describe_object(ctx, v, buf, sizeof buf);
    cf_clean(buf);
    sl->key = v + 1;
    sl->what = what;
    sl->s = buf[0] ? strdup(buf) : NULL;
    cf_n++;
    return sl->s;
}

void conflicts_describe(const struct workload *wl, void *ctx, struct sync_stats *s)
{
    for (size_t i = 0; i < s->nconflicts; i++) {
        struct sync_conflict *c = &s->conflicts[i];
        c->where_s = cf_describe(wl, ctx, 0, c->where);
        c->other_where_s = cf_describe(wl, ctx, 0, c->other_where);
        if (!c->object_s)                 /* else the runtime's own lock: "the GIL" */
            c->object_s = cf_describe(wl, ctx, 1, c->object);
    }
}

void conflicts_release(void)
{
    for (size_t i = 0; i < cf_cap; i++)
        free(cf_tab[i].s);
    free(cf_tab);
    cf_tab = NULL;
    cf_cap = cf_n = 0;
}

/* ---- the report ---- */

struct cf_pair {
    const struct sync_conflict *first;   /* a row of the pair: its strings */
    uint64_t count;                      /* sum of weights */
    uint64_t wasted_ns;
};

static const char *cf_str(const char *s) { return s ? s : ""; }

/* A wait's lock is its object's name, or its address when the workload names none
 * (an abort's object is its name alone, as before). */
static int cf_same_lock(const struct sync_conflict *a, const struct sync_conflict *b)
{
    if (a->kind == SYNC_KIND_LOCK_WAIT && !a->object_s && !b->object_s)
        return a->object == b->object;
    return strcmp(cf_str(a->object_s), cf_str(b->object_s)) == 0;
}

static int cf_same(const struct sync_conflict *a, const struct sync_conflict *b)
{
    return a->kind == b->kind && cf_same_lock(a, b) &&
           strcmp(cf_str(a->site), cf_str(b->site)) == 0 &&
           strcmp(cf_str(a->where_s), cf_str(b->where_s)) == 0 &&
           strcmp(cf_str(a->other_site), cf_str(b->other_site)) == 0 &&
           strcmp(cf_str(a->other_where_s), cf_str(b->other_where_s)) == 0;
}

static uint64_t cf_hash_str(uint64_t h, const char *s)
{
    for (s = cf_str(s); *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return (h ^ 0xff) * 0x100000001b3ull;
}

static uint64_t cf_hash(const struct sync_conflict *c)
{
    uint64_t h = 0xcbf29ce484222325ull ^ c->kind;
    h = cf_hash_str(h, c->object_s);
    h = cf_hash_str(h, c->site);
    h = cf_hash_str(h, c->where_s);
    h = cf_hash_str(h, c->other_site);
    return cf_hash_str(h, c->other_where_s);
}

/* The report's order of two entries by their figures: more time first, then more
 * count; 0 when both are equal (the caller then compares strings). */
static int cf_rank(uint64_t a_ns, uint64_t a_count, uint64_t b_ns, uint64_t b_count)
{
    if (a_ns != b_ns)
        return a_ns > b_ns ? -1 : 1;
    if (a_count != b_count)
        return a_count > b_count ? -1 : 1;
    return 0;
}

/* Ranks by time lost, then by count, then by the strings (a total order, so the report
 * is one deterministic function of the rows; the test sorts the same way). */
static int cf_cmp(const void *pa, const void *pb)
{
    const struct cf_pair *a = pa, *b = pb;
    int r = cf_rank(a->wasted_ns, a->count, b->wasted_ns, b->count);
    if (r)
        return r;
    const struct sync_conflict *x = a->first, *y = b->first;
    r = strcmp(sync_conflict_kind_name(x->kind), sync_conflict_kind_name(y->kind));
    if (!r) r = strcmp(cf_str(x->object_s), cf_str(y->object_s));
    if (!r) r = strcmp(cf_str(x->site), cf_str(y->site));
    if (!r) r = strcmp(cf_str(x->where_s), cf_str(y->where_s));
    if (!r) r = strcmp(cf_str(x->other_site), cf_str(y->other_site));
    if (!r) r = strcmp(cf_str(x->other_where_s), cf_str(y->other_where_s));
    return r;
}

/* One line of advice from the pair's kind and shape. */
static const char *cf_advice(const struct sync_conflict *c)
{
    int same = c->where_s && c->other_where_s && strcmp(c->where_s, c->other_where_s) == 0;
    switch ((enum sync_abort_kind)c->kind) {
    case SYNC_ABORT_WRITE_WRITE:
        if (same)
            return "every transaction writes this one object here (a shared counter?): keep "
                   "one per thread and merge them at the end";
        return "two places write this one object: give each writer its own object (or pad "
               "objects that only share it), or write it in a shorter transaction";
    case SYNC_ABORT_READ_WRITE:
        if (!c->object)
            return "the transaction began alone and marked no reads, so any commit meanwhile "
                   "aborts it: harmless once the threads run together";
        if (same)
            return "read, then written by another transaction at the same place: a shared "
                   "counter? keep one per thread and merge them at the end";
        return "this object is read here and written there on every transaction: if it is "
               "read-mostly, write it only when its value changes";
    case SYNC_ABORT_INEVITABLE:
        if (same)
            return "a transaction that kept aborting on this object became inevitable and "
                   "took it: every transaction writes it here (a shared counter?): keep one "
                   "per thread and merge them at the end";
        if (c->object)
            return "a transaction that kept aborting on this object became inevitable and "
                   "took it: give each writer its own object, or write it in a shorter "
                   "transaction";
        return "an inevitable transaction needed what this one held: keep I/O and "
               "sync_inevitable out of hot transactions";
    default:
        return "not a conflict between transactions (chaos mode, a retry, a hardware "
               "abort): nothing to change in the program";
    }
}

/* One line of advice for a lock's waits, from the lock and its top pair. */
static const char *cf_wait_advice(const struct sync_conflict *c)
{
    if (!c->object)
        return "one lock for the whole runtime: a block waits for whichever thread holds "
               "it, whatever either touches; no change to the program's objects removes "
               "these waits, only a runtime that runs blocks in parallel (stm, or the "
               "program's own fine-grained locks)";
    if (c->other < 0)
        return "the holder was not seen (it let go before the waiter looked): hold this "
               "lock for less, or split what it protects";
    int same = c->where_s ? c->other_where_s && strcmp(c->where_s, c->other_where_s) == 0
                          : c->site && c->other_site && strcmp(c->site, c->other_site) == 0;
    if (same)
        return "every thread takes this lock at the same place, one lock for everybody's "
               "operation (a shared counter, a list, a single writer lock): give each "
               "thread its own and merge them at the end, or shard it";
    return "one place waits while another holds this lock: hold it for less there, or "
           "split what it protects so that the two places take different locks";
}

static void cf_side(FILE *f, const char *label, const char *site, const char *where)
{
    if (!site && !where) {
        fprintf(f, "    %s unknown\n", label);
        return;
    }
    fprintf(f, "    %s", label);
    if (site)
        fprintf(f, " %s", site);
    if (where)
        fprintf(f, site ? " at %s" : " %s", where);
    fprintf(f, "\n");
}

static void cf_object(FILE *f, const char *label, const struct sync_conflict *c)
{
    if (c->object_s)
        fprintf(f, "    %s %s\n", label, c->object_s);
    else if (c->object)
        fprintf(f, "    %s 0x%llx (not described by the workload)\n", label,
                (unsigned long long)c->object);
    else
        fprintf(f, "    %s unknown\n", label);
}

/* The pairs of the rows that are waits (waits 1) or aborts (0), merged: an array of n
 * (malloc'ed; NULL with n 0 when there are none or memory ran out). */
static struct cf_pair *cf_pairs(const struct sync_stats *s, int waits, size_t *n)
{
    size_t cap = 16;
    while (cap < 2 * s->nconflicts)
        cap *= 2;
    struct cf_pair *tab = calloc(cap, sizeof *tab);
    *n = 0;
    if (!tab)
        return NULL;
    for (size_t i = 0; i < s->nconflicts; i++) {
        const struct sync_conflict *c = &s->conflicts[i];
        if ((c->kind == SYNC_KIND_LOCK_WAIT) != waits)
            continue;
        uint64_t h = cf_hash(c);
        if (waits && !c->object_s)
            h ^= cf_mix(c->object);
        size_t k = (size_t)h & (cap - 1);
        while (tab[k].first && !cf_same(tab[k].first, c))
            k = (k + 1) & (cap - 1);
        if (!tab[k].first)
            tab[k].first = c;
        tab[k].count += c->weight ? c->weight : 1;
        tab[k].wasted_ns += c->wasted_ns;
    }
    for (size_t k = 0; k < cap; k++)
        if (tab[k].first)
            tab[(*n)++] = tab[k];
    return tab;
}

static void cf_sampled(FILE *f, const struct sync_stats *s)
{
    if (s->conflicts_stride > 1)
        fprintf(f, " (sampled: beyond %d rows a thread records one abort or wait in %u, "
                "weighing %u; %llu seen)", SYNC_CONFLICTS_CAP, s->conflicts_stride,
                s->conflicts_stride, (unsigned long long)s->conflicts_seen);
    fprintf(f, "\n");
}

/* How many of n entries a report of the top `top` shows. */
static size_t cf_shown(int top, size_t n)
{
    return top < 0 ? 0 : (size_t)top < n ? (size_t)top : n;
}

/* An entry's first line: " #1 KIND xCOUNT, T ms VERB (NS ns, SHARE%)", the share of
 * `total`. */
static void cf_entry(FILE *f, size_t i, const char *kind, uint64_t count, uint64_t ns,
                     const char *verb, uint64_t total)
{
    fprintf(f, " #%zu %s x%llu, %.3f ms %s (%llu ns, %.1f%%)\n", i + 1, kind,
            (unsigned long long)count, (double)ns / 1e6, verb, (unsigned long long)ns,
            total ? 100.0 * (double)ns / (double)total : 0.0);
}

static void cf_report_aborts(FILE *f, const struct sync_stats *s, int top, uint64_t lost)
{
    size_t n;
    struct cf_pair *tab = cf_pairs(s, 0, &n);
    if (!tab) {
        fprintf(f, "conflicts: out of memory for the report\n");
        return;
    }
    qsort(tab, n, sizeof *tab, cf_cmp);
    size_t shown = cf_shown(top, n);
    fprintf(f, "conflicts: top %zu of %zu pairs by time lost (aborted side first; the "
            "reader's location of a read-write pair is its last access to the object)\n",
            shown, n);
    for (size_t i = 0; i < shown; i++) {
        const struct sync_conflict *c = tab[i].first;
        cf_entry(f, i, sync_conflict_kind_name(c->kind), tab[i].count, tab[i].wasted_ns,
                 "lost", lost);
        cf_object(f, "object: ", c);
        cf_side(f, "aborted:", c->site, c->where_s);
        cf_side(f, "other:  ", c->other_site, c->other_where_s);
        fprintf(f, "    advice:  %s\n", cf_advice(c));
    }
    free(tab);
}

/* A contended lock: its waits' pairs summed, and the most waited of them. */
struct cf_lock {
    const struct cf_pair *best;
    uint64_t count, wasted_ns;
    size_t npairs;
};

static const char *cf_lock_name(const struct sync_conflict *c, char *buf, size_t n)
{
    if (c->object_s)
        return c->object_s;
    snprintf(buf, n, "0x%llx", (unsigned long long)c->object);
    return buf;
}

/* Locks by time waited, then count, then name (the test sorts the same way). */
static int cf_lock_cmp(const void *pa, const void *pb)
{
    const struct cf_lock *a = pa, *b = pb;
    int r = cf_rank(a->wasted_ns, a->count, b->wasted_ns, b->count);
    if (r)
        return r;
    char x[24], y[24];
    return strcmp(cf_lock_name(a->best->first, x, sizeof x),
                  cf_lock_name(b->best->first, y, sizeof y));
}

static void cf_report_waits(FILE *f, const struct sync_stats *s, int top, uint64_t waited)
{
    size_t n;
    struct cf_pair *pairs = cf_pairs(s, 1, &n);
    struct cf_lock *locks = pairs ? calloc(n, sizeof *locks) : NULL;
    if (!locks) {
        fprintf(f, "contention: out of memory for the report\n");
        free(pairs);
        return;
    }
    /* Sorted, each lock's best pair is its first: one pass groups them, through an
     * open-addressed index of the locks seen (by their name's hash, or address's). */
    qsort(pairs, n, sizeof *pairs, cf_cmp);
    size_t cap = 16, nl = 0;
    while (cap < 2 * n)
        cap *= 2;
    size_t *idx = malloc(cap * sizeof *idx);
    if (!idx) {
        fprintf(f, "contention: out of memory for the report\n");
        free(locks);
        free(pairs);
        return;
    }
    memset(idx, 0xff, cap * sizeof *idx);        /* SIZE_MAX: empty */
    for (size_t i = 0; i < n; i++) {
        const struct sync_conflict *c = pairs[i].first;
        uint64_t h = c->object_s ? cf_hash_str(0xcbf29ce484222325ull, c->object_s)
                                 : cf_mix(c->object + 1);
        size_t k = (size_t)h & (cap - 1);
        while (idx[k] != SIZE_MAX && !cf_same_lock(locks[idx[k]].best->first, c))
            k = (k + 1) & (cap - 1);
        if (idx[k] == SIZE_MAX) {
            idx[k] = nl;
            locks[nl++].best = &pairs[i];
        }
        struct cf_lock *l = &locks[idx[k]];
        l->count += pairs[i].count;
        l->wasted_ns += pairs[i].wasted_ns;
        l->npairs++;
    }
    free(idx);
    qsort(locks, nl, sizeof *locks, cf_lock_cmp);
    fprintf(f, "contention: top %zu of %zu locks by time waited (each with its most waited "
            "pair of places: the waiter's, the holder's when it took the lock)\n",
            cf_shown(top, nl), nl);
    for (size_t i = 0; i < cf_shown(top, nl); i++) {
        const struct cf_pair *p = locks[i].best;
        const struct sync_conflict *c = p->first;
        cf_entry(f, i, "lock-wait", locks[i].count, locks[i].wasted_ns, "waited", waited);
        cf_object(f, "lock:   ", c);
        cf_side(f, "waiter: ", c->site, c->where_s);
        cf_side(f, "holder: ", c->other_site, c->other_where_s);
        fprintf(f, "    pair:    x%llu, %.3f ms waited (%llu ns), the most of the lock's %zu "
                "pair%s\n", (unsigned long long)p->count, (double)p->wasted_ns / 1e6,
                (unsigned long long)p->wasted_ns, locks[i].npairs,
                locks[i].npairs == 1 ? "" : "s");
        fprintf(f, "    advice:  %s\n", cf_wait_advice(c));
    }
    free(locks);
    free(pairs);
}

void conflicts_report(FILE *f, const struct sync_stats *s, const char *runtime,
                      const char *workload, int threads, int top)
{
    uint64_t aborts = 0, lost = 0, waits = 0, waited = 0;
    size_t arows = 0;
    for (size_t i = 0; i < s->nconflicts; i++) {
        const struct sync_conflict *c = &s->conflicts[i];
        uint64_t w = c->weight ? c->weight : 1;
        if (c->kind == SYNC_KIND_LOCK_WAIT) {
            waits += w;
            waited += c->wasted_ns;
        } else {
            aborts += w;
            lost += c->wasted_ns;
            arows++;
        }
    }
    const char *pl = threads == 1 ? "" : "s";
    if (arows || arows == s->nconflicts) {
        fprintf(f, "conflicts: %s %s, %d thread%s: %llu aborts in %zu rows, %.3f ms lost",
                runtime, workload, threads, pl, (unsigned long long)aborts, arows,
                (double)lost / 1e6);
        cf_sampled(f, s);
        if (s->nconflicts == 0)
            fprintf(f, "conflicts: none recorded\n");
        else if (arows)
            cf_report_aborts(f, s, top, lost);
    }
    if (arows < s->nconflicts) {
        fprintf(f, "contention: %s %s, %d thread%s: %llu waits in %zu rows, %.3f ms waited",
                runtime, workload, threads, pl, (unsigned long long)waits,
                s->nconflicts - arows, (double)waited / 1e6);
        cf_sampled(f, s);
        cf_report_waits(f, s, top, waited);
    }
}
