/*
 * harness/registry.c - the workload registry (see registry.h): weak references to
 * every `<w>__<rt>` descriptor, generated from the lists of runtime/runtimes.h, in
 * their order. The binary and the tests link the library with --whole-archive, so
 * every built copy resolves.
 */
#include "harness/registry.h"
#include "runtime/runtimes.h"

#include <stddef.h>
#include <string.h>

/* extern const struct workload <w>__<rt> __attribute__((weak)); for every pair. */
#define REGISTRY_DECLARE_ONE(w, rt, build) \
    extern const struct workload w##__##rt __attribute__((weak));
#define REGISTRY_DECLARE(a, w) SYNC_RUNTIMES(REGISTRY_DECLARE_ONE, w)
SYNC_WORKLOADS(REGISTRY_DECLARE, )

#define REGISTRY_RT_NAME(a, rt, build) #rt,
static const char *const registry_rt_names[] = {SYNC_RUNTIMES(REGISTRY_RT_NAME, )};
enum { REGISTRY_NRT = sizeof registry_rt_names / sizeof registry_rt_names[0] };

struct registry_entry {
    const char *name;
    const struct workload *copy[REGISTRY_NRT];   /* indexed like registry_rt_names */
};

#define REGISTRY_COPY(w, rt, build) &w##__##rt,
#define REGISTRY_ENTRY(a, w) {#w, {SYNC_RUNTIMES(REGISTRY_COPY, w)}},
static const struct registry_entry registry_table[] = {SYNC_WORKLOADS(REGISTRY_ENTRY, )};

int registry_count(void)
{
    return (int)(sizeof registry_table / sizeof registry_table[0]);
}

const char *registry_name(int i)
{
    return registry_table[i].name;
}

int registry_index(const char *name)
{
    for (int i = 0; i < registry_count(); i++)
        if (strcmp(registry_table[i].name, name) == 0)
            return i;
    return -1;
}

const struct workload *registry_find(const char *name, const char *rt)
{
    int i = registry_index(name);
    if (i < 0)
        return NULL;
    for (int r = 0; r < REGISTRY_NRT; r++)
        if (strcmp(registry_rt_names[r], rt) == 0)
            return registry_table[i].copy[r];
    return NULL;
}

const struct workload *registry_any(int i)
{
    for (int r = 0; r < REGISTRY_NRT; r++)
        if (registry_table[i].copy[r])
            return registry_table[i].copy[r];
    return NULL;
}
