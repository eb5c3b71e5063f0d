/*
 * harness/pin.h - thread placement with hwloc (--pin compact|scatter|none) and the
 * machine facts the context JSON records.
 */
#ifndef HARNESS_PIN_H
#define HARNESS_PIN_H

#include <hwloc.h>

enum pin_policy { PIN_NONE, PIN_COMPACT, PIN_SCATTER };

/* "compact", "scatter", "none" -> policy; -1 when unknown. */
int pin_parse(const char *s);
const char *pin_name(enum pin_policy p);

/* A plan: one cpuset per thread (NULL everywhere for PIN_NONE) and the OS index of
 * the PU each thread is bound to (-1 for PIN_NONE). */
struct pin_plan {
    int n;
    hwloc_topology_t topo;
    hwloc_cpuset_t *sets;
    int *os_index;
};

/* Loads the topology and computes the placement of n threads. 0 on success, else
 * -1 with the reason in err. */
int pin_plan_make(struct pin_plan *p, enum pin_policy pol, int n, char *err, size_t errlen);
/* Binds the calling thread to thread i's set; 0 on success (also for PIN_NONE). */
int pin_bind_self(const struct pin_plan *p, int i);
void pin_plan_free(struct pin_plan *p);

#endif
