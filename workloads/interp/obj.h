/*
 * workloads/interp/obj.h - the interpreter's object model (--memory tracing, refcount,
 * biased): values, boxed integers, lists and dicts made at run time, and the three
 * ways of finding garbage. Included by workloads/interp/vm.h only; written once
 * against runtime/sync.h, so every runtime runs the same code.
 *
 * Values. A stack slot, a local, a cell of a `.global int`, a list element and a dict
 * value hold an iv_val: a small integer in IV_SMALL_MIN..IV_SMALL_MAX inline (v << 4:
 * the cached, immortal small ints of CPython; 0 is the int 0), or a reference to an
 * object with its type in the low 4 bits (objects are 16-byte aligned everywhere:
 * runtime/plain_heap.h, the STM's granules). Every other integer is a box, allocated
 * when an operation produces it, as CPython's results outside -5..256 are. Dict keys
 * are integers kept by value (a key holds no reference).
 *
 * Memory modes (enum iv_memory):
 *  - tracing (PyPy's road): no per-reference work at all. Each thread keeps a registry
 *    of the objects it allocated; a mark-and-sweep collection, with every other thread
 *    stopped between slices, frees what the roots do not reach (every thread's
 *    committed VM state, the globals, the constants). Objects a slice allocates need
 *    no barrier (SYNC_ALLOC in the block), as the STM's new objects never do.
 *  - refcount (CPython with its GIL): every reference copied counts +1 and every one
 *    dropped -1, in the object (h.rc); at zero the object is freed and drops its
 *    elements' references. Under stm, htm and itm a count change is a transactional
 *    write (SYNC_WRITE): a thread that only reads a shared object writes it. Under
 *    locks (no global lock) it is an atomic read-modify-write (IV_COUNT_ATOMIC).
 *  - biased (PEP 703): the owner (the allocating thread) counts in h.rc plainly, the
 *    others in h.rcs; constants and the program's declared containers are immortal
 *    (owner IV_IMMORTAL: no count). Under locks, h.rcs is atomic and holds the count
 *    in units of 4 with two flags (merged, queued), as biased reference counting
 *    (Choi et al., PACT 2018): when the owner's count reaches 0 it merges and the
 *    shared count decides from then on; a non-owner that takes the shared count below
 *    0 queues the object to its owner, which merges it at its next slice boundary.
 *    Elsewhere both fields are plain or transactional and their sum decides at once.
 *  - buffered (the STM's own scheme; runtime/stm/DESIGN.md, "Reference counts that
 *    do not conflict"): an object's count lives outside the shared heap, in a count
 *    cell of plain memory that the object names (h.rcs, written once at its birth),
 *    so changing it is never a write to the object. A block records its count
 *    changes in a per-thread map (cell -> delta), thrown away if the block re-runs;
 *    after the block completes, the thread applies them (atomic adds: increments,
 *    then decrements). A cell that a decrement takes to 0 enters its limbo, tagged
 *    with the epoch it read after; it is freed only when every running thread has
 *    published a later epoch, which it does after applying its own deltas, and only
 *    if its count is still 0 then (the flag IV_CNT_LIMBO makes that test and the
 *    free one CAS, and keeps one limbo entry per cell). Objects a block allocated
 *    and that no reference holds at its end are freed inside the block (where a
 *    slice runs alone: under stm, htm, itm, gil, mutex, seq): they never reach
 *    another thread and cost no count work.
 *
 * Global names. A shared `.global int` is found through the module dict (cx->module:
 * the name's hash -> its cell, as PyPy's module dicts keep cells) at every
 * LOAD_GLOBAL and STORE_GLOBAL, with an inline cache per instruction and thread
 * (th->gcache: the cell and the dict's keys version it was found at); a hit reads
 * the dict's header, a miss (a new version) probes. The dict is read by every thread
 * and written by none while a program runs (names are declared), so reading it
 * never conflicts; the cells hold the values, as before. `.per_thread` names are
 * the thread's own (as thread-locals) and need no lookup.
 *
 * Invariants:
 *  - A value's reference is counted once per place that holds it (stack slot, local,
 *    cell, element, dict value, the code for a constant) in refcount and biased; the
 *    double-buffered VM state (vm.h) holds its slots in one buffer at a time, so the
 *    copy at a slice's start moves the references, it does not count them.
 *  - Under locks, a reference read out of a container or a cell is counted before the
 *    container's lock is released, so the count of an object that a container holds
 *    never reaches 0 while another thread can still read it there: an object whose
 *    count is 0 is reachable by nobody and is freed at once.
 *  - tracing: a collection runs only while every other thread is parked at a slice
 *    boundary (or has not started, or has finished): iv_gc_park's seq_cst handshake.
 *    Under gil and seq no thread can be inside a slice while the collector runs (the
 *    GIL is held across the boundary), so nobody is parked.
 *  - A slice's allocations enter the registry inside its block and are dropped again
 *    when the block re-runs (reg_mark): the registry never names an object an aborted
 *    attempt allocated.
 */
#ifndef IV_OBJ_H
#define IV_OBJ_H

#include <stdatomic.h>
#include <pthread.h>
#include <sched.h>

/* The object model's functions go to a text section of their own, after the raw VM's
 * code: its layout, and so its speed, stays as it was measured before they existed
 * (the raw loop ran much slower under some runtimes, with equal instruction counts,
 * when they were placed among its functions: commit 63ff5c9). */
#define IV_OBJ_TEXT __attribute__((section(".text.interp_obj")))

#ifndef IV_COUNT_ATOMIC
#define IV_COUNT_ATOMIC 0            /* locks sets it: counts without a global lock */
#endif
#if defined(SYNC_RT_GIL) || defined(SYNC_RT_SEQ)
#define IV_GC_STOPS_WORLD 0          /* nobody runs a slice while the collector does */
#else
#define IV_GC_STOPS_WORLD 1
#endif

#define IV_SMALL_MIN (-5)
#define IV_SMALL_MAX 256
enum { IV_T_INT, IV_T_BOX, IV_T_LIST, IV_T_DICT };
#define IV_TAG 15u
#define IV_IMMORTAL (-1)
#define IV_GC_MIN 32768              /* registry entries before a thread's first collection */
#define IV_BRC_MERGED 1
#define IV_BRC_QUEUED 2

typedef uint64_t iv_val;

/* The head of every object of the object model: the lock (locks runtime; at the same
 * place as in struct iv_obj), the owner and the two counts. */
struct iv_ohdr {
    SYNC_OBJECT_HEADER;
    wl_spin_t lock;
    int32_t owner;
    int64_t rc, rcs;
};
struct iv_box {
    struct iv_ohdr h;
    int64_t value;
};
struct iv_items {
    SYNC_OBJECT_HEADER;
    int64_t v[];
};
struct iv_olist {
    struct iv_ohdr h;
    int64_t len, cap;
    SYNC_REF(struct iv_items) items;
};
struct iv_odict {
    struct iv_ohdr h;
    int64_t count, cap;              /* cap: a power of two */
    SYNC_REF(struct iv_slots) slots;
    int64_t kver;                    /* keys version: moves when a key is added (the
                                      * slots may move); values do not move it */
};
typedef SYNC_REF(struct iv_ohdr) iv_oref;
typedef SYNC_REF(struct iv_box) iv_box_ref;
typedef SYNC_REF(struct iv_items) iv_items_ref;
typedef SYNC_REF(struct iv_olist) iv_olist_ref;
typedef SYNC_REF(struct iv_odict) iv_odict_ref;

_Static_assert(offsetof(struct iv_ohdr, lock) == offsetof(struct iv_obj, lock),
               "the locks variant finds every object's lock at one offset");

static inline int iv_vtype(iv_val w) { return (int)(w & IV_TAG); }
static inline iv_oref iv_vref(iv_val w) { return (iv_oref)(uintptr_t)(w & ~(uint64_t)IV_TAG); }
static inline iv_val iv_small(int64_t v) { return (uint64_t)v << 4; }
static inline bool iv_fits_small(int64_t v) { return v >= IV_SMALL_MIN && v <= IV_SMALL_MAX; }
static inline iv_val iv_tagged(iv_oref r, int type) { return (iv_val)(uintptr_t)r | (unsigned)type; }

/* buffered: an object's count, outside the shared heap (plain memory). */
#define IV_CNT_LIMBO ((int64_t)1 << 61)   /* in a limbo list, waiting for the epochs */
#define IV_CNT_DEAD ((int64_t)1 << 60)    /* freed; the cell goes back to a free list */
struct iv_count {
    _Atomic int64_t n;                   /* references, plus the flags above */
    iv_val obj;                          /* the object (tagged), for the free */
};
struct iv_limbo {
    struct iv_count *c;
    uint64_t tag;                        /* the epoch read after its count reached 0 */
};

/* The per-thread state of the memory mode (in struct iv_thread). */
struct iv_mem {
    iv_val *reg;                     /* tracing: the objects this thread allocated */
    size_t nreg, capreg;
    size_t reg_mark;                 /* entries before the running block */
    size_t gc_at;                    /* collect when nreg passes it */
    iv_val *work;                    /* objects to free (refcount, biased) or to mark */
    size_t nwork, capwork;
    iv_val *drop;                    /* LIST_CLEAR: the elements whose references go */
    size_t capdrop;
    uint64_t allocs, frees;          /* objects allocated and freed by slices: reset to the
                                      * marks when a block re-runs, the marks moved when
                                      * it completed */
    uint64_t allocs_mark, frees_mark;
    uint64_t gc_freed;               /* tracing: objects this thread's collections freed */
    uint64_t gcs;
    _Atomic int safe;                /* tracing: 1 while parked, not started or finished */
    pthread_mutex_t inbox_mu;        /* biased under locks: objects queued to this owner */
    iv_val *inbox;
    size_t ninbox, capinbox;
    /* buffered: */
    struct iv_count **dkey;              /* the running block's deltas: an open-address */
    int64_t *dval;                       /* map cell -> delta (dcap a power of two) */
    uint32_t *dused;                     /* its used slots, in insertion order */
    size_t dcap, nd;
    iv_val *young;                       /* objects the running block allocated */
    size_t nyoung, capyoung;
    struct iv_count **cfree;             /* free cells; the block takes from the top */
    size_t ncfree, capcfree, ctaken;
    struct iv_count **cret;              /* cells of objects freed in the block */
    size_t nret, capret;
    void **slabs;                        /* the cells' memory */
    size_t nslabs;
    struct iv_limbo *limbo;
    size_t nlimbo, caplimbo;
    _Atomic uint64_t seen;               /* the epoch published after the last apply;
                                          * UINT64_MAX while not running */
};

static IV_OBJ_TEXT void iv_grow(iv_val **v, size_t *cap, size_t need)
{
    if (need <= *cap)
        return;
    size_t c = *cap ? *cap * 2 : 256;
    while (c < need)
        c *= 2;
    iv_val *n = realloc(*v, c * sizeof *n);
    if (!n)
        sync_out_of_resources("interp: out of memory for %zu object references", c);
    *v = n;
    *cap = c;
}

/* ---- counts ---- */

#if IV_COUNT_ATOMIC
static IV_OBJ_TEXT void iv_brc_queue(struct iv_mem *owner, iv_val w)
{
    pthread_mutex_lock(&owner->inbox_mu);
    iv_grow(&owner->inbox, &owner->capinbox, owner->ninbox + 1);
    owner->inbox[owner->ninbox++] = w;
    pthread_mutex_unlock(&owner->inbox_mu);
}
#endif

/* +1 on w's object. */
static inline void iv_incref(int mode, int tid, iv_val w)
{
    if (iv_vtype(w) == IV_T_INT || mode <= IV_MEM_TRACING)
        return;
    iv_oref o = iv_vref(w);
#if IV_COUNT_ATOMIC
    if (mode == IV_MEM_REFCOUNT) {
        /* relaxed: an increment only needs to be counted; the holder it comes from
         * keeps the object alive until then (the invariant above) */
        __atomic_fetch_add(&o->rc, 1, __ATOMIC_RELAXED);
        return;
    }
    int owner = o->owner;                /* written once, before the object is shared */
    if (owner == IV_IMMORTAL)
        return;
    /* relaxed: only the owner writes the flags' merged bit, and reads it here */
    if (owner == tid && !(__atomic_load_n(&o->rcs, __ATOMIC_RELAXED) & IV_BRC_MERGED))
        o->rc++;                         /* the owner's own count: plain */
    else
        __atomic_fetch_add(&o->rcs, 4, __ATOMIC_RELAXED); /* as the relaxed add above */
#else
    SYNC_READ(o);
    if (mode == IV_MEM_BIASED && o->owner == IV_IMMORTAL)
        return;
    SYNC_WRITE(o);
    if (mode == IV_MEM_BIASED && o->owner != tid)
        o->rcs++;
    else
        o->rc++;
#endif
}

/* -1 on w's object (not a small int); returns 1 when it reached 0 (the caller frees
 * it: iv_release). mems[tid]: every thread's iv_mem (biased under locks: the inboxes). */
static inline int iv_decref_(int mode, int tid, iv_val w, struct iv_mem *const *mems)
{
    iv_oref o = iv_vref(w);
#if IV_COUNT_ATOMIC
    if (mode == IV_MEM_REFCOUNT)
        /* acq_rel: the release orders this holder's accesses before the free; the
         * acquire makes the other holders' accesses visible to the freeing thread */
        return __atomic_sub_fetch(&o->rc, 1, __ATOMIC_ACQ_REL) == 0;
    int owner = o->owner;
    if (owner == IV_IMMORTAL)
        return 0;
    if (owner == tid && !(__atomic_load_n(&o->rcs, __ATOMIC_RELAXED) & IV_BRC_MERGED)) {
        if (--o->rc > 0)
            return 0;
        /* merge: from now on the shared count decides. acq_rel as the sub below. An
         * object in this owner's inbox is the drain's to decide (iv_brc_drain). */
        int64_t old = __atomic_fetch_or(&o->rcs, IV_BRC_MERGED, __ATOMIC_ACQ_REL);
        return !(old & IV_BRC_QUEUED) && (old >> 2) == 0;
    }
    int64_t now = __atomic_sub_fetch(&o->rcs, 4, __ATOMIC_ACQ_REL); /* as refcount's */
    if (now & IV_BRC_MERGED)
        return !(now & IV_BRC_QUEUED) && (now >> 2) == 0;   /* queued: the drain's */
    if ((now >> 2) < 0 && !(now & IV_BRC_QUEUED) &&
        !(__atomic_fetch_or(&o->rcs, IV_BRC_QUEUED, __ATOMIC_RELAXED) & IV_BRC_QUEUED))
        iv_brc_queue(mems[owner], w);   /* the owner merges it (iv_brc_drain) */
    return 0;
#else
    (void)mems;
    SYNC_READ(o);
    if (mode == IV_MEM_BIASED && o->owner == IV_IMMORTAL)
        return 0;
    SYNC_WRITE(o);
    if (mode == IV_MEM_BIASED && o->owner != tid)
        o->rcs--;
    else
        o->rc--;
    return o->rc + o->rcs == 0;
#endif
}

/* ---- containers of the object model (barriers inside; the caller holds what the
 *      variant needs) ---- */

static inline int64_t iv_olist_len(iv_olist_ref l)
{
    SYNC_READ(l);
    return l->len;
}

static inline iv_val iv_olist_get(iv_olist_ref l, int64_t i)
{
    SYNC_READ(l);
    if ((uint64_t)i >= (uint64_t)l->len)
        return 0;
    iv_items_ref it = l->items;
    SYNC_READ(it);
    return (iv_val)it->v[i];
}

/* Appends w (the list takes the reference); -1 when the list is full. */
static inline int iv_olist_append(iv_olist_ref l, iv_val w)
{
    SYNC_WRITE(l);
    int64_t n = l->len;
    if (n >= IV_LIST_MAX)
        return -1;
    iv_items_ref it = l->items;
    if (n == l->cap) {
        int64_t ncap = l->cap ? l->cap * 2 : 4;
        iv_items_ref ni = (iv_items_ref)sync_alloc(sizeof(struct iv_items) +
                                                   (size_t)ncap * sizeof(int64_t));
        if (it != SYNC_NULL) {
            SYNC_READ(it);
            for (int64_t i = 0; i < n; i++)      /* element by element: no memcpy */
                ni->v[i] = it->v[i];             /* through a %gs reference */
            SYNC_FREE(it);
        }
        l->items = it = ni;
        l->cap = ncap;
    } else {
        SYNC_WRITE(it);
    }
    it->v[n] = (int64_t)w;
    l->len = n + 1;
    return 0;
}

/* Replaces element i (in range) and returns the old value (its reference, the
 * caller's to drop); out of range: returns w itself, which was not stored. */
static inline iv_val iv_olist_set(iv_olist_ref l, int64_t i, iv_val w)
{
    SYNC_READ(l);
    if ((uint64_t)i >= (uint64_t)l->len)
        return w;
    iv_items_ref it = l->items;
    SYNC_WRITE(it);
    iv_val old = (iv_val)it->v[i];
    it->v[i] = (int64_t)w;
    return old;
}

/* Removes the last element and returns it (the reference moves to the caller); an
 * empty list gives 0. */
static inline iv_val iv_olist_pop(iv_olist_ref l)
{
    SYNC_READ(l);
    if (l->len == 0)
        return 0;
    SYNC_WRITE(l);
    iv_items_ref it = l->items;
    SYNC_READ(it);
    l->len--;
    return (iv_val)it->v[l->len];
}

static inline int64_t iv_odict_len(iv_odict_ref d)
{
    SYNC_READ(d);
    return d->count;
}

/* The slot of key in d, or -1. */
static inline int64_t iv_odict_find(iv_odict_ref d, int64_t key)
{
    SYNC_READ(d);
    iv_slots_ref s = d->slots;
    SYNC_READ(s);
    int64_t i = iv_dict_probe(s, d->cap, key);
    return s->e[i].used ? i : -1;
}

static inline iv_val iv_odict_get(iv_odict_ref d, int64_t key)
{
    int64_t i = iv_odict_find(d, key);
    return i < 0 ? 0 : (iv_val)d->slots->e[i].val;
}

/* Sets d[key] = w (the dict takes the reference). Returns the old value of the key
 * (the caller drops it), 0 for a new key; *full when the dict is full (w not stored,
 * still the caller's). */
static IV_OBJ_TEXT iv_val iv_odict_set(iv_odict_ref d, int64_t key, iv_val w, int *full)
{
    *full = 0;
    int64_t i = iv_odict_find(d, key);
    iv_slots_ref s = d->slots;
    if (i >= 0) {
        SYNC_WRITE(s);
        iv_val old = (iv_val)s->e[i].val;
        s->e[i].val = (int64_t)w;
        return old;
    }
    int64_t count = d->count, cap = d->cap;
    if (count >= IV_DICT_MAX) {
        *full = 1;
        return 0;
    }
    SYNC_WRITE(d);
    if ((count + 1) * 4 > cap * 3) {
        iv_slots_ref ns = iv_slots_grow(s, cap);
        SYNC_FREE(s);
        d->slots = s = ns;
        d->cap = cap = cap * 2;
    } else {
        SYNC_WRITE(s);
    }
    i = iv_dict_probe(s, cap, key);
    s->e[i].key = key;
    s->e[i].val = (int64_t)w;
    s->e[i].used = 1;
    d->count = count + 1;
    d->kver++;
    return 0;
}

#endif
