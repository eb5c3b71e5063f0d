/*
 * runtime/htm/htm_rt.h - what the htm runtime's inline part (sync_htm.h), its body
 * (htm.c) and its tests share: the RTM abort status layout, the retry policy as pure
 * functions, and a test hook. Plain C: nothing here executes an RTM instruction.
 */
#ifndef HTM_RT_H
#define HTM_RT_H

#include "runtime/common.h"

#include <stdint.h>

/* The status word _xbegin() returns after an abort (Intel SDM vol. 1, "RTM abort
 * processing": EAX bits). Spelled out here so that code compiled without -mrtm (the
 * tests, the harness) can name them; htm.c checks they equal <immintrin.h>'s. */
#define HTM_ABORT_EXPLICIT (1u << 0)  /* _XABORT_EXPLICIT: xabort; the code is in bits 31:24 */
#define HTM_ABORT_RETRY (1u << 1)     /* _XABORT_RETRY: the hardware thinks a retry may work */
#define HTM_ABORT_CONFLICT (1u << 2)  /* _XABORT_CONFLICT: another core touched our data */
#define HTM_ABORT_CAPACITY (1u << 3)  /* _XABORT_CAPACITY: read or write set overflowed */
#define HTM_ABORT_DEBUG (1u << 4)     /* _XABORT_DEBUG: a debug breakpoint was hit */
#define HTM_ABORT_NESTED (1u << 5)    /* _XABORT_NESTED: in a nested transaction */
#define HTM_ABORT_CODE(st) (((st) >> 24) & 0xffu)   /* _XABORT_CODE */

/* The runtime's own xabort codes. */
#define HTM_XA_GIL_HELD 0xffu   /* the GIL word was non-zero inside the transaction */
#define HTM_XA_INEVITABLE 0xfeu /* sync_inevitable(): the block must run under the GIL */

/* The default number R of hardware attempts of a block before it takes the GIL. */
#define HTM_DEFAULT_RETRIES 5
#define HTM_MAX_RETRIES 1000

/* The reason an abort status is counted under (one per abort, in this order of
 * precedence: explicit, capacity, conflict, other). */
enum sync_abort_kind htm_abort_kind(unsigned status);

/* The retry policy: after the `failed`-th failed hardware attempt (failed >= 1) of a
 * block, ended with `status`, with R = `retries`:
 *   capacity, or an explicit abort other than HTM_XA_GIL_HELD: take the GIL now;
 *   anything else (conflict, GIL held, other): try again while failed < R, then take
 *   the GIL. Returns 1 to try again in hardware, 0 to take the GIL. */
int htm_should_retry(unsigned status, int failed, int retries);

/* Whether a try-again after `status` waits a short randomised backoff first
 * (conflicts only). */
int htm_backs_off(unsigned status);

/*
 * Test hook (tests/test_htm.c only; stmbench never calls it): with on != 0, every
 * hardware attempt of every block is replaced by an abort with `status`, WITHOUT
 * executing xbegin, so the retry policy, the fallback to the GIL and the counters run
 * on any CPU, RTM or not; htm's init then accepts a CPU without RTM, and the CSV
 * row's params say htm_forced_abort=0x<status>. on == 0 restores real RTM. Call it
 * only while no thread is entered.
 */
void htm_test_force_aborts(int on, unsigned status);

#endif
