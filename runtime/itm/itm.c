/*
 * runtime/itm/itm.c - the descriptor of the itm runtime (GCC's libitm; the blocks
 * themselves are in sync_itm.h). libitm needs no set-up: it creates its per-thread
 * state at a thread's first transaction and chooses its own method (by default a
 * global-lock write-through STM, serial-irrevocable for unsafe code).
 *
 * Invariant: itm_self belongs to its thread; the harness reads it only through
 * thread_exit, on that thread. Nothing here is shared between threads.
 *
 * This file is plain C (no transactions) and is compiled like every other runtime
 * file; the Makefile leaves it out when gcc or libitm is missing.
 */
#include "runtime/itm/itm_rt.h"
#include "runtime/sync.h"

#include <string.h>

__thread struct itm_tls itm_self;

/* Deliberately not transaction-safe and kept out of line: a call inside a block makes
 * gcc switch the transaction to serial-irrevocable mode first (sync_inevitable). */
__attribute__((noinline)) void itm_inevitable(void)
{
    SYNC_COMPILER_BARRIER();
}

static int itm_init(const struct sync_config *cfg, char *err, size_t errlen)
{
    (void)cfg; (void)err; (void)errlen;
    return 0;
}
static void itm_fini(void) {}
static int itm_enter(int tid, char *err, size_t errlen)
{
    (void)tid; (void)err; (void)errlen;
    memset(&itm_self, 0, sizeof itm_self);
    return 0;
}
static void itm_exit(struct sync_stats *out)
{
    if (out)
        out->commits += itm_self.commits;
    itm_self.commits = 0;
}

const struct sync_runtime sync_runtime_itm = {
    .name = "itm",
    .summary = "GCC's libitm (gcc -fgnu-tm), a word-based STM; aborts read 0: libitm "
               "does not expose its restarts",
    .max_threads = 0,
    .init = itm_init, .fini = itm_fini,
    .thread_enter = itm_enter, .thread_exit = itm_exit,
};
