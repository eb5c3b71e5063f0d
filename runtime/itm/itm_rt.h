/*
 * runtime/itm/itm_rt.h - what the itm runtime's inline part (sync_itm.h, compiled by
 * gcc -fgnu-tm only) and its descriptor (itm.c, compiled by any compiler) share.
 */
#ifndef ITM_RT_H
#define ITM_RT_H

#include <stdint.h>

/* Per-thread counters; owned by the thread (see itm.c). */
struct itm_tls {
    uint64_t commits;       /* outermost blocks completed */
};
extern __thread struct itm_tls itm_self;

/* Not transaction-safe on purpose: called in a block, it makes the block
 * serial-irrevocable first (sync_inevitable). */
void itm_inevitable(void);

/* The libitm method this process uses: ITM_DEFAULT_METHOD as the user set it (blanks
 * trimmed), else "ml_wt", which itm.c sets before main(); and whether the user chose it.
 * Weak references from the harness (harness/results.c): absent without the itm runtime. */
const char *itm_method(void);
int itm_method_user(void);

#endif
