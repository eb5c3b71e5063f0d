/*
 * workloads/lib/wl_keys.h - helpers the set workloads (rbtree, hashmap) share and
 * that need no runtime: the initial key sample and key hashing.
 */
#ifndef WL_KEYS_H
#define WL_KEYS_H

#include <stddef.h>
#include <stdint.h>

/* Fills out[0..size) with `size` distinct keys from [0, range), in random order,
 * reproducibly from `seed`. Requires size <= range. Returns 0, or -1 when memory
 * runs out. */
int wl_sample_keys(uint64_t seed, size_t size, uint64_t range, int64_t *out);

/* A 64-bit mix of a key (splitmix64 finaliser): spreads consecutive keys. */
static inline uint64_t wl_key_hash(uint64_t k)
{
    k += 0x9E3779B97F4A7C15ull;
    k = (k ^ (k >> 30)) * 0xBF58476D1CE4E5B9ull;
    k = (k ^ (k >> 27)) * 0x94D049BB133111EBull;
    return k ^ (k >> 31);
}

/* Maps a hash uniformly onto [0, n) without a division. */
static inline uint64_t wl_reduce(uint64_t h, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)h * n) >> 64);
}

#endif
