/*
 * harness/probe.h - what the machine probes share (--line-transfer in linexfer.c,
 * --log-floor in logfloor.c): the clock, the --pin flag, the zeroed line-aligned block.
 */
#ifndef HARNESS_PROBE_H
#define HARNESS_PROBE_H

#include "harness/pin.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t probe_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* `--pin P` at argv[*i]: 1 when taken (*i moves past P, *pol is set), 0 when argv[*i]
 * is something else, -1 (with the message) when P is not a policy. */
static inline int probe_take_pin(int argc, char **argv, int *i, int *pol)
{
    if (strcmp(argv[*i], "--pin") != 0 || *i + 1 >= argc)
        return 0;
    *pol = pin_parse(argv[++*i]);
    if (*pol < 0) {
        fprintf(stderr, "stmbench: --pin '%s' is not a policy (allowed: compact, scatter, "
                        "none)\n", argv[*i]);
        return -1;
    }
    return 1;
}

/* A zeroed, line-aligned block of `size` (a multiple of 64), or NULL after the message
 * and freeing the plan. */
static inline void *probe_alloc(size_t size, const char *mode, struct pin_plan *plan)
{
    void *p = aligned_alloc(64, size);
    if (!p) {
        fprintf(stderr, "stmbench: %s: out of memory\n", mode);
        pin_plan_free(plan);
        return NULL;
    }
    return memset(p, 0, size);
}

#endif
