/*
 * harness/conflicts.c - conflict analysis after a run (conflicts.h).
 *
 * Runs on the main thread only, after the workers were joined: nothing here is shared.
 * Descriptions are interned by (what, value) in one table (a location code or an
 * object described once, however many rows name it); the report groups rows by their
 * pair: kind, object, and both sides' site and location, compared as strings.
 */
#include "harness/conflicts.h"

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

static int cf_same(const struct sync_conflict *a, const struct sync_conflict *b)
{
    return a->kind == b->kind && strcmp(cf_str(a->object_s), cf_str(b->object_s)) == 0 &&
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

/* Ranks by time lost, then by count, then by the strings (a total order, so the report
 * is one deterministic function of the rows; the test sorts the same way). */
static int cf_cmp(const void *pa, const void *pb)
{
    const struct cf_pair *a = pa, *b = pb;
    if (a->wasted_ns != b->wasted_ns)
        return a->wasted_ns > b->wasted_ns ? -1 : 1;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    const struct sync_conflict *x = a->first, *y = b->first;
    int r = strcmp(sync_abort_kind_name((enum sync_abort_kind)x->kind),
                   sync_abort_kind_name((enum sync_abort_kind)y->kind));
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

static void cf_side(FILE *f, const char *label, const char *site, const char *where)
{
    if (!site && !where) {
        fprintf(f, "    %s unknown\n", label);
        return;
    }
    fprintf(f, "    %s %s", label, site ? site : "?");
    if (where)
        fprintf(f, " at %s", where);
    fprintf(f, "\n");
}

void conflicts_report(FILE *f, const struct sync_stats *s, const char *runtime,
                      const char *workload, int threads, int top)
{
    uint64_t rows_w = 0, lost = 0;
    for (size_t i = 0; i < s->nconflicts; i++) {
        rows_w += s->conflicts[i].weight ? s->conflicts[i].weight : 1;
        lost += s->conflicts[i].wasted_ns;
    }
    fprintf(f, "conflicts: %s %s, %d thread%s: %llu aborts in %zu rows, %.3f ms lost",
            runtime, workload, threads, threads == 1 ? "" : "s", (unsigned long long)rows_w,
            s->nconflicts, (double)lost / 1e6);
    if (s->conflicts_stride > 1)
        fprintf(f, " (sampled: beyond %d rows a thread records one abort in %u, "
                "weighing %u; %llu aborts seen)", SYNC_CONFLICTS_CAP, s->conflicts_stride,
                s->conflicts_stride, (unsigned long long)s->conflicts_seen);
    fprintf(f, "\n");
    if (s->nconflicts == 0) {
        fprintf(f, "conflicts: none recorded\n");
        return;
    }
    size_t cap = 16;
    while (cap < 2 * s->nconflicts)
        cap *= 2;
    struct cf_pair *tab = calloc(cap, sizeof *tab);
    if (!tab) {
        fprintf(f, "conflicts: out of memory for the report\n");
        return;
    }
    size_t npairs = 0;
    for (size_t i = 0; i < s->nconflicts; i++) {
        const struct sync_conflict *c = &s->conflicts[i];
        size_t k = (size_t)cf_hash(c) & (cap - 1);
        while (tab[k].first && !cf_same(tab[k].first, c))
            k = (k + 1) & (cap - 1);
        if (!tab[k].first) {
            tab[k].first = c;
            npairs++;
        }
        tab[k].count += c->weight ? c->weight : 1;
        tab[k].wasted_ns += c->wasted_ns;
    }
    size_t n = 0;
    for (size_t k = 0; k < cap; k++)
        if (tab[k].first)
            tab[n++] = tab[k];
    qsort(tab, n, sizeof *tab, cf_cmp);
    fprintf(f, "conflicts: top %d of %zu pairs by time lost (aborted side first; the "
            "reader's location of a read-write pair is its last access to the object)\n",
            top < (int)n ? top : (int)n, npairs);
    for (size_t i = 0; i < n && (int)i < top; i++) {
        const struct sync_conflict *c = tab[i].first;
        fprintf(f, " #%zu %s x%llu, %.3f ms lost (%llu ns, %.1f%%)\n", i + 1,
                sync_abort_kind_name((enum sync_abort_kind)c->kind),
                (unsigned long long)tab[i].count, (double)tab[i].wasted_ns / 1e6,
                (unsigned long long)tab[i].wasted_ns,
                lost ? 100.0 * (double)tab[i].wasted_ns / (double)lost : 0.0);
        if (c->object_s)
            fprintf(f, "    object:  %s\n", c->object_s);
        else if (c->object)
            fprintf(f, "    object:  0x%llx (not described by the workload)\n",
                    (unsigned long long)c->object);
        else
            fprintf(f, "    object:  unknown\n");
        cf_side(f, "aborted:", c->site, c->where_s);
        cf_side(f, "other:  ", c->other_site, c->other_where_s);
        fprintf(f, "    advice:  %s\n", cf_advice(c));
    }
    free(tab);
}
