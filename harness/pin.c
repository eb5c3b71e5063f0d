/*
 * harness/pin.c - thread placement with hwloc.
 *
 * compact: thread i on the i-th PU in hwloc's logical order (PUs of one core, then
 *          the next core, ...), wrapping around when there are more threads than PUs.
 * scatter: hwloc_distrib over the whole machine: threads are spread across packages,
 *          then caches, then cores, then PUs; each resulting set is reduced to a
 *          single PU. More threads than PUs wrap around as well.
 * none:    no binding.
 * The topology is loaded once per run; the plan is read-only while threads bind
 * themselves with it (hwloc allows concurrent binding calls on one topology).
 */
#include "harness/pin.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pin_parse(const char *s)
{
    if (strcmp(s, "compact") == 0)
        return PIN_COMPACT;
    if (strcmp(s, "scatter") == 0)
        return PIN_SCATTER;
    if (strcmp(s, "none") == 0)
        return PIN_NONE;
    return -1;
}

const char *pin_name(enum pin_policy p)
{
    switch (p) {
    case PIN_COMPACT: return "compact";
    case PIN_SCATTER: return "scatter";
    default: return "none";
    }
}

int pin_plan_make(struct pin_plan *p, enum pin_policy pol, int n, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->sets = calloc((size_t)n, sizeof *p->sets);
    p->os_index = malloc((size_t)n * sizeof *p->os_index);
    if (!p->sets || !p->os_index) {
        snprintf(err, errlen, "out of memory for the placement of %d threads", n);
        goto fail;
    }
    for (int i = 0; i < n; i++)
        p->os_index[i] = -1;
    if (hwloc_topology_init(&p->topo) != 0 || hwloc_topology_load(p->topo) != 0) {
        snprintf(err, errlen, "hwloc could not load the machine topology");
        if (p->topo) {
            hwloc_topology_destroy(p->topo);
            p->topo = NULL;
        }
        goto fail;
    }
    if (pol == PIN_NONE)
        return 0;
    int npu = hwloc_get_nbobjs_by_type(p->topo, HWLOC_OBJ_PU);
    if (npu <= 0) {
        snprintf(err, errlen, "hwloc found no processing unit to bind to");
        goto fail;
    }
    if (pol == PIN_COMPACT) {
        for (int i = 0; i < n; i++) {
            hwloc_obj_t pu = hwloc_get_obj_by_type(p->topo, HWLOC_OBJ_PU, (unsigned)(i % npu));
            p->sets[i] = hwloc_bitmap_dup(pu->cpuset);
            if (!p->sets[i]) {
                snprintf(err, errlen, "out of memory for cpusets");
                goto fail;
            }
        }
    } else {
        /* Distribute over min(n, npu) sets, then wrap: hwloc_distrib would otherwise
         * hand out overlapping multi-PU sets once n exceeds the leaves. */
        int m = n < npu ? n : npu;
        hwloc_obj_t root = hwloc_get_root_obj(p->topo);
        /* hwloc_distrib allocates the m sets itself (hwloc_bitmap_dup). */
        if (hwloc_distrib(p->topo, &root, 1, p->sets, (unsigned)m, INT_MAX, 0) != 0) {
            snprintf(err, errlen, "hwloc_distrib failed for %d threads", m);
            goto fail;
        }
        for (int i = 0; i < m; i++) {
            if (!p->sets[i]) {
                snprintf(err, errlen, "out of memory for cpusets");
                goto fail;
            }
            hwloc_bitmap_singlify(p->sets[i]);
        }
        for (int i = m; i < n; i++) {
            p->sets[i] = hwloc_bitmap_dup(p->sets[i % m]);
            if (!p->sets[i]) {
                snprintf(err, errlen, "out of memory for cpusets");
                goto fail;
            }
        }
    }
    for (int i = 0; i < n; i++)
        p->os_index[i] = hwloc_bitmap_first(p->sets[i]);
    return 0;
fail:
    pin_plan_free(p);
    return -1;
}

int pin_bind_self(const struct pin_plan *p, int i)
{
    if (!p->sets || !p->sets[i])
        return 0;
    return hwloc_set_cpubind(p->topo, p->sets[i], HWLOC_CPUBIND_THREAD);
}

void pin_plan_free(struct pin_plan *p)
{
    if (p->sets) {
        for (int i = 0; i < p->n; i++)
            if (p->sets[i])
                hwloc_bitmap_free(p->sets[i]);
        free(p->sets);
    }
    free(p->os_index);
    if (p->topo)
        hwloc_topology_destroy(p->topo);
    memset(p, 0, sizeof *p);
}
