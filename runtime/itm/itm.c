/*
 * runtime/itm/itm.c - the descriptor of the itm runtime (GCC's libitm; the blocks
 * themselves are in sync_itm.h). libitm creates its per-thread state at a thread's
 * first transaction.
 *
 * One method everywhere: left alone, libitm chooses its method by itself when the
 * first thread registers (at the process's first transaction): serial-irrevocable
 * while one thread is registered, then the hardware-TM method where the CPU has RTM,
 * else ml_wt (word-based, per-word ownership records, write-through). So `itm` would
 * be a different runtime on different machines. Unless the user set the environment
 * variable ITM_DEFAULT_METHOD, the constructor below sets it to ml_wt before main()
 * (so before any transaction: libitm reads it once, at that first registration), and
 * itm is the word-based compiler STM on every machine and at every thread count. The
 * method, and who chose it, go into the CSV row's params and the context JSON.
 * (Processes started from this one inherit the variable, and record it as the user's.)
 *
 * Invariant: itm_self belongs to its thread; the harness reads it only through
 * thread_exit, on that thread. itm_method_buf and itm_method_by_user are written once
 * by the constructor, before main() and so before any other thread exists, and are
 * read-only afterwards.
 *
 * This file is plain C (no transactions) and is compiled like every other runtime
 * file; the Makefile leaves it out when gcc or libitm is missing.
 */
#include "runtime/itm/itm_rt.h"
#include "runtime/sync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__thread struct itm_tls itm_self;

#define ITM_PINNED_METHOD "ml_wt"

static char itm_method_buf[64] = ITM_PINNED_METHOD;
static int itm_method_by_user;
static char itm_params_buf[128];

/* Priority 101, the first one available to programs: before any other constructor
 * could run a transaction. */
__attribute__((constructor(101))) static void itm_pin_method(void)
{
    const char *env = getenv("ITM_DEFAULT_METHOD");
    if (env && *env) {
        itm_method_by_user = 1;
        /* As libitm reads it: leading and trailing blanks do not count. */
        while (*env == ' ' || *env == '\t' || *env == '\n')
            env++;
        snprintf(itm_method_buf, sizeof itm_method_buf, "%s", env);
        size_t n = strlen(itm_method_buf);
        while (n > 0 && (itm_method_buf[n - 1] == ' ' || itm_method_buf[n - 1] == '\t' ||
                         itm_method_buf[n - 1] == '\n'))
            itm_method_buf[--n] = '\0';
        /* Keep the CSV's params field parseable. */
        for (char *p = itm_method_buf; *p; p++)
            if (*p == ',' || *p == ';' || *p == '=' || *p == '"' || *p < 0x20)
                *p = '_';
        return;
    }
    setenv("ITM_DEFAULT_METHOD", ITM_PINNED_METHOD, 1);
}

const char *itm_method(void)
{
    return itm_method_buf;
}

int itm_method_user(void)
{
    return itm_method_by_user;
}

/* Deliberately not transaction-safe and kept out of line: a call inside a block makes
 * gcc switch the transaction to serial-irrevocable mode first (sync_inevitable). */
__attribute__((noinline)) void itm_inevitable(void)
{
    SYNC_COMPILER_BARRIER();
}

static int itm_init(const struct sync_config *cfg, char *err, size_t errlen)
{
    (void)cfg; (void)err; (void)errlen;
    snprintf(itm_params_buf, sizeof itm_params_buf, "itm_method=%s;itm_method_by=%s",
             itm_method_buf, itm_method_by_user ? "user" : "stmbench");
    return 0;
}

static const char *itm_params(void)
{
    return itm_params_buf;
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
    .summary = "GCC's libitm (gcc -fgnu-tm), its word-based STM ml_wt unless "
               "ITM_DEFAULT_METHOD says otherwise; aborts read 0: libitm does not expose "
               "its restarts",
    .max_threads = 0,
    .init = itm_init, .fini = itm_fini,
    .thread_enter = itm_enter, .thread_exit = itm_exit,
    .params = itm_params,
};
