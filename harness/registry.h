/*
 * harness/registry.h - the workloads the harness knows, by name and runtime.
 *
 * Each workload is compiled once per runtime and exports `<w>__<rt>` descriptors
 * (WORKLOAD_EXPORT in workloads/workload.h). The registry refers to them by weak
 * symbols, so a workload (or one runtime's copy of it) that is not built is simply
 * absent instead of a link error.
 */
#ifndef HARNESS_REGISTRY_H
#define HARNESS_REGISTRY_H

#include "workloads/workload.h"

/* Number of workload names in the registry (present or not), in the order of the
 * list (runtime/runtimes.h). */
int registry_count(void);
/* Name of workload i (0 <= i < registry_count()). */
const char *registry_name(int i);
/* The copy of workload `name` compiled for runtime `rt`, NULL when absent. */
const struct workload *registry_find(const char *name, const char *rt);
/* Any present copy of workload i (for its knob table and summary), NULL when the
 * workload is not built at all. */
const struct workload *registry_any(int i);
/* Index of workload `name`, -1 when unknown. */
int registry_index(const char *name);

#endif
