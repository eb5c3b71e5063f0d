/*
 * runtime/plain_heap.h - object header, references and allocation shared by the
 * runtimes whose shared heap is ordinary process memory (seq, mutex, gil, locks).
 * References are plain pointers and barriers are empty, so code compiled against
 * them is the sequential code a person would write.
 *
 * Allocator: seq, mutex, gil and locks all allocate objects with mimalloc (Debian's
 * libmimalloc-dev, the allocator free-threaded CPython uses) when the Makefile defines
 * SYNC_PLAIN_MIMALLOC (every build without a sanitizer). One allocator for the four
 * keeps their n% comparable, and it is the one a practitioner would pick: with glibc's
 * malloc `locks` hashmap updates barely scaled at 2 threads, where mimalloc gives the
 * expected speed-up (the measurement is in docs/locks-schemes.md). Sanitizer
 * builds use the C library's functions, which the sanitizer replaces with its own
 * checked allocator (mimalloc's memory would be invisible to ASan and TSan).
 * The itm runtime includes this header for the references only: it allocates with
 * malloc (libitm makes malloc and free transactional), so SYNC_FREE stays free there.
 * sync_plain_allocator() (runtime/plain_rt.c) names the allocator for the results.
 */
#ifndef SYNC_PLAIN_HEAP_H
#define SYNC_PLAIN_HEAP_H

#include <stdint.h>
#include <stdlib.h>

#include "runtime/common.h"

#if defined(SYNC_PLAIN_MIMALLOC) && !defined(SYNC_RT_ITM)
#include <mimalloc.h>
#define SYNC_PLAIN_USE_MIMALLOC 1
#endif

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
#ifdef SYNC_PLAIN_USE_MIMALLOC
    struct sync_hdr *h = mi_zalloc_aligned(n ? n : 16, 16);
    if (!h)
        abort();
#else
    struct sync_hdr *h = aligned_alloc(16, n ? n : 16);
    if (!h)
        sync_out_of_resources("out of memory allocating a %zu-byte object", size);
    __builtin_memset(h, 0, n);
#endif
    h->size = (uint32_t)size;
    return h;
}
#ifdef SYNC_PLAIN_USE_MIMALLOC
#define SYNC_FREE(r) mi_free((void *)(r))
#else
#define SYNC_FREE(r) free((void *)(r))
#endif

/* The allocator the plain runtimes were built with, for the results' context
 * (e.g. "mimalloc 2.0.9"). */
const char *sync_plain_allocator(void);

#endif
