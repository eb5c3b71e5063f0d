/* workloads/lib/wl_common.c - runtime-independent helpers for workloads. */
#include "workloads/workload.h"

#include <stdarg.h>
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
