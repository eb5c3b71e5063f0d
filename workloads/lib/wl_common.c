/* workloads/lib/wl_common.c - runtime-independent helpers for workloads. */
#include "workloads/workload.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>

void wl_fail(struct wl_thread *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    t->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->fail_msg, sizeof t->fail_msg, fmt, ap);
    va_end(ap);
}

struct wl_txlen_shared *wl_txlen_shared_new(int n)
{
    if (n < 1)
        n = 1;
    struct wl_txlen_shared *s = sync_private_alloc(sizeof *s);
    if (!s)
        return NULL;
    s->slots = sync_private_alloc((size_t)n * sizeof *s->slots);
    if (!s->slots) {
        free(s);
        return NULL;
    }
    s->nslots = n;
    return s;
}

void wl_txlen_shared_free(struct wl_txlen_shared *s)
{
    if (!s)
        return;
    free(s->slots);
    free(s);
}

static int wl_refidx_cmp(const void *a, const void *b)
{
    uint64_t x = ((const struct wl_refidx *)a)->ref, y = ((const struct wl_refidx *)b)->ref;
    return x < y ? -1 : x > y;
}

struct wl_refidx *wl_refidx_new(const uint64_t *refs, long n)
{
    struct wl_refidx *ix = malloc((size_t)(n > 0 ? n : 1) * sizeof *ix);
    if (!ix)
        return NULL;
    for (long i = 0; i < n; i++)
        ix[i] = (struct wl_refidx){refs[i], i};
    qsort(ix, (size_t)n, sizeof *ix, wl_refidx_cmp);
    return ix;
}

long wl_refidx_find(const struct wl_refidx *ix, long n, uint64_t ref)
{
    struct wl_refidx key = {ref, 0};
    const struct wl_refidx *f = bsearch(&key, ix, (size_t)n, sizeof *ix, wl_refidx_cmp);
    return f ? f->i : -1;
}
