/*
 * runtime/plain_heap.h - object header, references and allocation shared by the
 * runtimes whose shared heap is ordinary process memory (seq, mutex, gil, locks).
 * References are plain pointers and barriers are empty, so code compiled against
 * them is the sequential code a person would write.
 */
#ifndef SYNC_PLAIN_HEAP_H
#define SYNC_PLAIN_HEAP_H

#include <stdint.h>
#include <stdlib.h>

#include "runtime/common.h"

#define SYNC_OBJECT_HEADER struct sync_hdr _sync_hdr
#define SYNC_REF(T) T *
#define SYNC_NULL ((void *)0)
#define SYNC_REF_ID(r) ((uintptr_t)(r))
#define SYNC_READ(r) ((void)(r))
#define SYNC_WRITE(r) ((void)(r))

/* Objects are 16-byte aligned everywhere (the STM's read-marker granule). */
static inline void *sync_alloc(size_t size)
{
    size_t n = (size + 15) & ~(size_t)15;
    struct sync_hdr *h = aligned_alloc(16, n ? n : 16);
    if (!h)
        sync_out_of_resources("out of memory allocating a %zu-byte object", size);
    __builtin_memset(h, 0, n);
    h->size = (uint32_t)size;
    return h;
}
#define SYNC_FREE(r) free((void *)(r))

#endif
