/* runtime/stm/stm.c - TEMPORARY placeholder while the STM is being written: init fails. */
#include "runtime/stm/sync_stm.h"
#include "runtime/sync.h"
#include <stdio.h>
#include <stdlib.h>
__thread struct stm_tls stm_self;
int _stm_begin(const char *site) { (void)site; stm_self.depth = 1; return 1; }
void _stm_commit(void) { stm_self.depth = 0; }
void _stm_write_slowpath(void __seg_gs *obj) { (void)obj; abort(); }
void __seg_gs *_stm_alloc(size_t size) { (void)size; abort(); }
void _stm_free(void __seg_gs *obj) { (void)obj; abort(); }
void _stm_become_inevitable(void) {}
static int stm_init(const struct sync_config *cfg, char *err, size_t errlen)
{ (void)cfg; snprintf(err, errlen, "stm runtime not built yet"); return -1; }
static void stm_fini(void) {}
static int stm_enter(int tid, char *err, size_t errlen) { (void)tid; (void)err; (void)errlen; return -1; }
static void stm_exit(struct sync_stats *out) { (void)out; }
const struct sync_runtime sync_runtime_stm = {
    .name = "stm", .summary = "the page-based STM of this project", .max_threads = 0,
    .init = stm_init, .fini = stm_fini, .thread_enter = stm_enter, .thread_exit = stm_exit,
};
