/* workloads/lib/wl_qsbr.c - the slow paths of quiescent-state-based reclamation
 * (the scheme, its invariants and its memory orders: wl_qsbr.h). */
#include "workloads/lib/wl_qsbr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct wl_qsbr *wl_qsbr_new(int nthreads, void (*free_fn)(void *))
{
    struct wl_qsbr *q = aligned_alloc(SYNC_CACHELINE, sizeof *q);
    if (!q)
        return NULL;
    memset(q, 0, sizeof *q);
    size_t n = (size_t)(nthreads > 0 ? nthreads : 1);
    q->slots = aligned_alloc(SYNC_CACHELINE, n * sizeof *q->slots);
    if (!q->slots) {
        free(q);
        return NULL;
    }
    memset(q->slots, 0, n * sizeof *q->slots);
    atomic_init(&q->epoch, 0);
    for (size_t i = 0; i < n; i++)
        atomic_init(&q->slots[i].seen, WL_QSBR_OFFLINE);
    q->nthreads = (int)n;
    q->free_fn = free_fn;
    return q;
}

void wl_qsbr_free(struct wl_qsbr *q)
{
    if (!q)
        return;
    for (int i = 0; i < q->nthreads; i++) {
        struct wl_qsbr_slot *s = &q->slots[i];
        for (size_t j = s->head; j < s->n; j++)
            q->free_fn(s->ptr[j]);
        free(s->ptr);
        free(s->tag);
    }
    free(q->slots);
    free(q);
}

void wl_qsbr_online(struct wl_qsbr *q, int tid)
{
    /* acquire: as in wl_qsbr_quiescent; the thread's operations start after this */
    uint64_t e = atomic_load_explicit(&q->epoch, memory_order_acquire);
    /* release: as in wl_qsbr_quiescent (an advancer may read the slot at once) */
    atomic_store_explicit(&q->slots[tid].seen, e, memory_order_release);
}

void wl_qsbr_offline(struct wl_qsbr *q, int tid)
{
    /* release: the thread's last reads happen before an advancer's acquire load that
     * finds it offline and moves E on without it */
    atomic_store_explicit(&q->slots[tid].seen, WL_QSBR_OFFLINE, memory_order_release);
}

void wl_qsbr_retire(struct wl_qsbr *q, int tid, void *p)
{
    struct wl_qsbr_slot *s = &q->slots[tid];
    if (s->n == s->cap) {
        if (s->head > 0) {           /* slide the live entries down first */
            memmove(s->ptr, s->ptr + s->head, (s->n - s->head) * sizeof *s->ptr);
            memmove(s->tag, s->tag + s->head, (s->n - s->head) * sizeof *s->tag);
            s->n -= s->head;
            s->head = 0;
        }
        if (s->n == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 4 * WL_QSBR_BATCH;
            void **np = realloc(s->ptr, cap * sizeof *np);
            if (np)
                s->ptr = np;
            uint64_t *nt = np ? realloc(s->tag, cap * sizeof *nt) : NULL;
            if (!nt) {
                fprintf(stderr, "stmbench: out of memory for retired nodes\n");
                abort();
            }
            s->tag = nt;
            s->cap = cap;
        }
    }
    s->ptr[s->n] = p;
    /* acquire: any E is a valid tag (the argument in wl_qsbr.h needs only that this
     * load follows the unlink in program order); acquire keeps it there */
    s->tag[s->n] = atomic_load_explicit(&q->epoch, memory_order_acquire);
    s->n++;
}

void wl_qsbr_reclaim(struct wl_qsbr *q, int tid)
{
    struct wl_qsbr_slot *s = &q->slots[tid];
    /* acquire: pairs with the acq_rel CAS of the last advance (see wl_qsbr.h) */
    uint64_t e = atomic_load_explicit(&q->epoch, memory_order_acquire);
    int all = 1;
    for (int i = 0; i < q->nthreads && all; i++) {
        /* acquire: pairs with the slot owner's release store in wl_qsbr_quiescent,
         * so its reads before that quiescent state happen before any free below */
        uint64_t v = atomic_load_explicit(&q->slots[i].seen, memory_order_acquire);
        all = v == WL_QSBR_OFFLINE || v == e;
    }
    /* acq_rel: acquire keeps the slot loads above it; release passes what they saw on
     * to the workers that read the new E (their frees) */
    if (all && atomic_compare_exchange_strong_explicit(&q->epoch, &e, e + 1,
                                                       memory_order_acq_rel,
                                                       memory_order_acquire))
        e++;
    while (s->head < s->n && s->tag[s->head] + 3 <= e)
        q->free_fn(s->ptr[s->head++]);
    if (s->head == s->n)
        s->head = s->n = 0;
}
