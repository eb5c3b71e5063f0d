/* workloads/lib/wl_keys.c - the initial key sample of the set workloads (wl_keys.h). */
#include "workloads/lib/wl_keys.h"

#include <stdlib.h>

static uint64_t keys_next(uint64_t *s)
{
    *s += 0x9E3779B97F4A7C15ull;
    return wl_key_hash(*s);
}

int wl_sample_keys(uint64_t seed, size_t size, uint64_t range, int64_t *out)
{
    uint64_t s = seed ^ 0x5DEECE66Dull;
    if (size == 0)
        return 0;
    if (range <= 16 * (uint64_t)size) {
        /* Dense: selection sampling over the whole range (exactly `size` keys, sorted),
         * then a Fisher-Yates shuffle so insertion order is random. */
        size_t got = 0;
        for (uint64_t k = 0; k < range && got < size; k++) {
            uint64_t left = range - k;
            if (wl_reduce(keys_next(&s), left) < size - got)
                out[got++] = (int64_t)k;
        }
        for (size_t i = size - 1; i > 0; i--) {
            size_t j = (size_t)wl_reduce(keys_next(&s), i + 1);
            int64_t tmp = out[i];
            out[i] = out[j];
            out[j] = tmp;
        }
        return 0;
    }
    /* Sparse: rejection sampling, duplicates caught by an open-addressing set. */
    size_t cap = 1;
    while (cap < 2 * size)
        cap <<= 1;
    uint64_t *set = malloc(cap * sizeof *set);
    if (!set)
        return -1;
    for (size_t i = 0; i < cap; i++)
        set[i] = UINT64_MAX;
    size_t got = 0;
    while (got < size) {
        uint64_t k = wl_reduce(keys_next(&s), range);
        size_t h = (size_t)wl_key_hash(k) & (cap - 1);
        while (set[h] != UINT64_MAX && set[h] != k)
            h = (h + 1) & (cap - 1);
        if (set[h] == k)
            continue;
        set[h] = k;
        out[got++] = (int64_t)k;
    }
    free(set);
    return 0;
}
