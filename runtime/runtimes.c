/*
 * runtime/runtimes.c - the table of runtime descriptors, generated from the list
 * (runtime/runtimes.h), and lookup by name.
 */
#include "runtime/sync.h"

#include <stddef.h>
#include <string.h>

/* In the list's order; an optional runtime that is not built is a NULL entry (its
 * descriptor is weak), which sync_runtime_nth skips. */
static const struct sync_runtime *const table[] = {
#define RT_ENTRY(a, name, build) &sync_runtime_##name,
    SYNC_RUNTIMES(RT_ENTRY, )
};
enum { NTABLE = sizeof table / sizeof table[0] };

const struct sync_runtime *sync_runtime_nth(int i)
{
    for (int k = 0; k < NTABLE; k++)
        if (table[k] && i-- == 0)
            return table[k];
    return NULL;
}

const struct sync_runtime *sync_runtime_find(const char *name)
{
    for (int k = 0; k < NTABLE; k++)
        if (table[k] && strcmp(table[k]->name, name) == 0)
            return table[k];
    return NULL;
}
