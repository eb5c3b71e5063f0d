/*
 * workloads/interp.c - the interp workload (a stack bytecode interpreter whose objects
 * live in the shared heap) for the runtimes that synchronise through atomic blocks:
 * every runtime of build cc or gnutm in runtime/runtimes.h's list.
 * Everything is in workloads/interp/vm.h; this copy needs no
 * locks of its own, so its hooks are empty: under seq the VM is the plain C loop.
 * The per-object-lock variant is workloads/interp_locks.c.
 */
#define IV_LOCK(th, g, adepth) ((void)0)
#define IV_UNLOCK(th, g, adepth) ((void)0)
#define IV_ATOMIC_ENTER(th, set) ((void)0)
#define IV_ATOMIC_EXIT(th) ((void)0)
#define IV_LOCK_OBJ(th, g, o, adepth, dyn) 0
#define IV_UNLOCK_OBJ(th, g, o, adepth, k) ((void)(k))

#include "workloads/interp/vm.h"
