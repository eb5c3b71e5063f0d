/*
 * harness/registry.c - the workload registry (see registry.h): weak references to
 * every `<w>__<rt>` descriptor, in SPEC.md order. The binary and the tests link the
 * library with --whole-archive, so every built copy resolves.
 */
#include "harness/registry.h"

#include <stddef.h>
#include <string.h>

#define REGISTRY_DECLARE(w)                                                       \
    extern const struct workload w##__seq __attribute__((weak));                  \
    extern const struct workload w##__mutex __attribute__((weak));                \
    extern const struct workload w##__gil __attribute__((weak));                  \
    extern const struct workload w##__stm __attribute__((weak));                  \
    extern const struct workload w##__locks __attribute__((weak));               \
    extern const struct workload w##__itm __attribute__((weak));                  \
    extern const struct workload w##__htm __attribute__((weak));

REGISTRY_DECLARE(bank)
REGISTRY_DECLARE(rbtree)
REGISTRY_DECLARE(hashmap)
REGISTRY_DECLARE(interp)

enum { REGISTRY_NRT = 7 };
static const char *const registry_rt_names[REGISTRY_NRT] = {
    "seq", "mutex", "gil", "locks", "stm", "itm", "htm",
};

struct registry_entry {
    const char *name;
    const struct workload *copy[REGISTRY_NRT];   /* indexed like registry_rt_names */
};

#define REGISTRY_ENTRY(w) \
    { #w, { &w##__seq, &w##__mutex, &w##__gil, &w##__locks, &w##__stm, &w##__itm, \
            &w##__htm } }

static const struct registry_entry registry_table[] = {
    REGISTRY_ENTRY(bank),
    REGISTRY_ENTRY(rbtree),
    REGISTRY_ENTRY(hashmap),
    REGISTRY_ENTRY(interp),
};

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
