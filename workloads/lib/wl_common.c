/* workloads/lib/wl_common.c - runtime-independent helpers for workloads. */
#include "workloads/workload.h"

#include <stdarg.h>
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

void wl_tx_attempt(struct wl_thread *t)
{
    t->tx_attempts++;
}
