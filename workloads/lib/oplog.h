/*
 * workloads/lib/oplog.h - per-thread logs of the committed, successful inserts and
 * deletes of a set workload (rbtree, hashmap), and the replay check that compares
 * the final contents with what those operations imply.
 *
 * A thread records an operation only after the atomic block that did it has ended
 * (committed), so under the STM a re-run block is recorded once, with the result of
 * the run that committed. A log belongs to one thread while the workload runs and is
 * read by the check on the main thread after the join (the join orders the accesses).
 *
 * Two representations, picked by the key range:
 *   dense  (range <= OPLOG_DENSE_MAX): net[key] += +1 / -1; constant memory.
 *   sparse (larger ranges): (key, net) pairs appended; when the buffer fills it is
 *          sorted and equal keys merged, so memory stays O(distinct keys touched).
 *
 * The replay check: for every key,
 *     initially_present + sum over threads (successful inserts - successful deletes)
 * must be 0 or 1, and must equal the key's final membership.
 */
#ifndef WL_OPLOG_H
#define WL_OPLOG_H

#include <stddef.h>
#include <stdint.h>

#define OPLOG_DENSE_MAX (1ul << 20)

struct oplog_ent {
    uint64_t key;
    int64_t net;
};

struct oplog {
    uint64_t range;
    int32_t *net;              /* dense mode: range counters; NULL in sparse mode */
    struct oplog_ent *ent;     /* sparse mode */
    size_t n, cap;
};

/* A log for keys in [0, range); NULL when memory runs out. */
struct oplog *oplog_new(uint64_t range);
void oplog_free(struct oplog *l);
/* Slow path of oplog_record in sparse mode (compacts or grows the buffer). */
void _oplog_append_slow(struct oplog *l, uint64_t key, int delta);

/* Records one committed successful insert (delta +1) or delete (delta -1). */
static inline void oplog_record(struct oplog *l, uint64_t key, int delta)
{
    if (__builtin_expect(l->net != NULL, 1)) {
        l->net[key] += delta;
    } else if (l->n < l->cap) {
        l->ent[l->n].key = key;
        l->ent[l->n].net = delta;
        l->n++;
    } else {
        _oplog_append_slow(l, key, delta);
    }
}

/*
 * The replay check. `initial` and `final` are the key sets before and after the run,
 * each sorted strictly increasing (the caller checks its own structure's order; this
 * function rejects unsorted input too). `what` names the structure in messages
 * ("tree", "map"). Returns 0 when every key's membership is what the logs imply,
 * else -1 with the first offending key described in msg.
 */
int oplog_replay_check(struct oplog *const *logs, int nlogs, uint64_t range,
                       const int64_t *initial, size_t ninitial,
                       const int64_t *final, size_t nfinal,
                       const char *what, char *msg, size_t msglen);

/* Sorts n keys increasingly (a small helper the checks share). */
void oplog_sort_keys(int64_t *keys, size_t n);

#endif
